"""A user's modelling data: a table with a target column and, optionally, a study column."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .._compat import dropped, renamed
from .._labels import names_list
from .._validation import check_int, lookalike_labels
from ..errors import DataError, ParameterError
from .io import _read

__all__ = ["Dataset", "dataset_from_frame", "load_dataset", "infer_task"]


TASKS = ("regression", "classification")
MAX_ABS = 1e150  # larger magnitudes overflow when squared (sums of squares, Gram matrices)
_ID_MIN_LEVELS = 50  # a text column with more distinct values than this and than half the rows
_DECIMAL_COMMA = r"^\s*[-+]?\d*,\d+\s*$"  # a number written with a decimal comma: '-0,25'
MIN_SPREAD = 1e-150  # smaller differences between target values underflow when squared
_NUMERIC_SHARE = 0.8  # text column whose values are numbers but for a few: stray entries
_MAX_CLASS_LEVELS = 10  # an integer target with at most this many values is classes
#: Why a table needs rows enough (``min_rows``), in the messages that refuse one.
_ROWS_WHY = " (models are fitted on some rows and tested on others)"


@dataclass(frozen=True)
class Dataset:
    """Features, target and study labels ready for modelling (complete cases only).

    ``classes`` holds the original labels of a classification target, whose values in ``y``
    are the codes ``0..K-1`` (labels in sorted order). ``notes`` lists, in plain words, what
    was done to the user's table (rows dropped, columns left out, labels encoded); commands and
    the report show them.
    """

    name: str
    X: pd.DataFrame
    y: pd.Series
    study: pd.Series | None
    task: str  # 'regression' or 'classification'
    n_dropped: int
    description: str = ""
    citation: str = ""
    classes: tuple = ()
    notes: tuple = ()
    #: For a survival outcome (``task='survival'``): the event indicator of each row (True:
    #: the event happened at ``y``, the follow-up time; False: censored then).
    event: pd.Series | None = None

    @property
    def outcome(self):
        """What models are fitted on: ``y``, or for a survival outcome the structured
        (event, time) array of scikit-survival (:func:`replikit.experiment.survival_target`)."""
        if self.task != "survival":
            return self.y
        from .tables import survival_array

        return survival_array(self.y.to_numpy(float), self.event.to_numpy(bool))

    @property
    def n_studies(self) -> int:
        """Distinct studies; data without a study column is one study."""
        return 1 if self.study is None else int(self.study.nunique())

    def study_labels(self) -> pd.Series:
        """The study of every row (``'all'`` when there is no study column)."""
        if self.study is not None:
            return self.study
        return pd.Series(["all"] * len(self.y), name="study")

    def predictions_with_labels(self, predictions):
        """The predictions of a run on this dataset's ``y`` (the codes ``0..K-1``) with the
        user's class labels back.

        ``y_true`` and ``y_pred`` hold the labels (``'yes'``, not ``1``) and each probability
        column is named after its label, ``proba_<label>`` (``proba_yes``), in the sorted order
        of the labels; a label is written as its text (``proba_-1``, ``proba_1.5``,
        ``proba_very good``), which is how every reader of predictions matches a column to its
        class. Labels of several types (a number and a text, possible in a Parquet or DuckDB
        column) are written as their texts; when two labels have the same text (``1`` and
        ``'1'``), the codes are kept and ``note`` says so.

        Parameters
        ----------
        predictions : Predictions
            As :func:`replikit.experiment.run` returns them from ``X`` and ``y`` of this
            dataset.

        Returns
        -------
        (Predictions, str or None)
            The relabelled table (the same one for regression or when there is nothing to
            relabel) and a note for the user, or None.

        Examples
        --------
        >>> import pandas as pd
        >>> from replikit.data import Predictions
        >>> ds = dataset_from_frame(pd.DataFrame({"x": [1.0, 2, 3, 4],
        ...                                       "y": ["no", "yes", "no", "yes"]}), target="y")
        >>> codes = Predictions(pd.DataFrame({"study": "all", "model": "lr", "repeat": 0,
        ...     "fold": 0, "row": [0, 1], "y_true": [0, 1], "y_pred": [0, 0],
        ...     "proba_0": [0.8, 0.6], "proba_1": [0.2, 0.4]}))
        >>> labelled, note = ds.predictions_with_labels(codes)
        >>> labelled.frame[["y_true", "y_pred", "proba_no", "proba_yes"]]
          y_true y_pred  proba_no  proba_yes
        0     no     no       0.8        0.2
        1    yes     no       0.6        0.4
        """
        from .tables import Predictions

        if self.task != "classification" or not self.classes:
            return predictions, None
        classes = list(self.classes)
        if list(classes) == list(range(len(classes))):
            return predictions, None  # the labels are the codes 0..K-1
        texts = [str(c) for c in classes]
        if len(set(texts)) < len(texts):
            same = sorted({t for t in texts if texts.count(t) > 1})
            return predictions, (
                f"class labels {', '.join(map(repr, same))} of different types write the same; "
                "the predictions keep the codes 0.."
                f"{len(classes) - 1} (labels in sorted order: "
                f"{', '.join(f'{c!r} → {i}' for i, c in enumerate(classes[:10]))}).")
        kinds = {type(c) for c in classes}
        labels = pd.Series(texts if len(kinds) > 1 else classes).to_numpy()
        f = predictions.frame
        for col in ("y_true", "y_pred"):
            codes = f[col].to_numpy()
            f[col] = labels[codes.astype(np.int64)]
        f = f.rename(columns={f"proba_{i}": f"proba_{t}" for i, t in enumerate(texts)})
        return Predictions(f), None

    def outcome_by_study(self) -> pd.DataFrame:
        """The outcome per study: ``study, n, mean, sd, min, max`` (regression) or ``study, n,
        share <label>`` per class but the first (classification), studies in natural order
        (numerically when every label is a number)."""
        study = self.study_labels()
        if self.task == "survival":
            frame = pd.DataFrame({"study": study.to_numpy(), "time": self.y.to_numpy(float),
                                  "event": self.event.to_numpy(bool)})
            table = frame.groupby("study", sort=False).agg(
                n=("time", "size"), events=("event", "sum"),
                median_follow_up=("time", "median"), max_time=("time", "max")).reset_index()
            table["events"] = table["events"].astype(int)
            table["share events"] = table["events"] / table["n"]
            return _natural_order(table)
        per = pd.DataFrame({"study": study.to_numpy(), "y": self.y.to_numpy()}).groupby(
            "study", sort=False)["y"]
        if self.task == "regression":
            table = per.agg(n="size", mean="mean", sd="std", min="min", max="max").reset_index()
        else:
            table = per.agg(n="size").reset_index()
            codes = sorted(pd.unique(self.y))
            for code in codes[1:] if len(codes) == 2 else codes:
                label = self.classes[int(code)] if self.classes else code
                table[f"share {label}"] = per.apply(
                    lambda v, c=code: float(np.mean(v == c))).to_numpy()
        return _natural_order(table)


def _natural_order(table: pd.DataFrame) -> pd.DataFrame:
    """Rows in the natural order of their study labels (numerically when every label is a
    number)."""
    try:
        order = np.argsort(table["study"].astype(float).to_numpy(), kind="stable")
        return table.iloc[order].reset_index(drop=True)
    except ValueError:
        return table.sort_values("study", kind="stable").reset_index(drop=True)


def infer_task(y: pd.Series) -> str:
    """``'classification'`` for booleans, text or categorical targets and for integer-valued
    targets with at most 10 distinct values (scikit-learn's ``type_of_target`` reading);
    ``'regression'`` otherwise. Pass ``task`` to :func:`dataset_from_frame` to override.

    Parameters
    ----------
    y : pandas.Series
        The target (missing values left out).

    Returns
    -------
    str
        ``'classification'`` or ``'regression'``.

    Examples
    --------
    >>> infer_task(pd.Series([0, 1, 1])), infer_task(pd.Series([0.5, 1.2, 3.0]))
    ('classification', 'regression')
    """
    if ptypes.is_bool_dtype(y) or not ptypes.is_numeric_dtype(y):
        return "classification"
    values = y.to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if np.all(np.equal(np.mod(values, 1), 0)) and pd.unique(values).size <= _MAX_CLASS_LEVELS:
        return "classification"
    return "regression"


def _columns_list(frame: pd.DataFrame) -> str:
    return names_list(frame.columns)


#: Characters that separate the fields of a file that was read as a single column.
_FIELD_SEPARATORS = {"|": "pipes", ":": "colons", " ": "spaces"}


def _no_column(option: str, column: str, name: str, frame: pd.DataFrame) -> str:
    """The message for a column ``column`` that ``frame`` lacks: the columns it has, and a
    hint when one of them is the name but for spaces around it or its case, or when the file
    was read as a single column whose name holds another separator."""
    msg = f"`{option}`: no column {column!r} in {name}; available columns: {_columns_list(frame)}"
    key = str(column).strip().casefold()
    near = [str(c) for c in frame.columns if str(c).strip().casefold() == key]
    if near:
        spaces = near[0].strip() != near[0]
        case = near[0].strip() != str(column).strip()
        how = " and ".join(w for w, on in (("by spaces around the name", spaces),
                                           ("in upper/lower case", case)) if on)
        msg += (f" — column {near[0]!r} differs from it only {how}; give `{option}` "
                f"{near[0]!r}" + (" (or remove the spaces from the header)" if spaces else ""))
    elif frame.shape[1] == 1:
        only = str(frame.columns[0])
        seps = [w for c, w in _FIELD_SEPARATORS.items() if c in only.strip()]
        msg += (" — the file was read as a single column"
                + (f" whose name holds {seps[0]}; are its fields separated by {seps[0]}? Save "
                   "it with commas (or tabs, as .tsv) between the fields" if seps else "")
                )
    return msg + "."


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _is_text(col: pd.Series) -> bool:
    return not (ptypes.is_numeric_dtype(col) or ptypes.is_bool_dtype(col)
                or ptypes.is_datetime64_any_dtype(col))


#: Values that are not one number or label: a Parquet/DuckDB list or struct column reads as
#: NumPy arrays or dicts (a DataFrame may hold lists, tuples or sets).
_NESTED_TYPES = (list, tuple, dict, set, frozenset, np.ndarray)


def _row_ref(index: pd.Index, pos: int) -> str:
    """A row as the user finds it: ``data row N`` counts the rows below the header from 1; a
    frame whose index is not the default 0, 1, 2, ... also shows the row's index label."""
    ref = f"data row {pos + 1:,}"
    if not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1):
        ref += f" (index {_shown(index[pos])})"
    return ref


def _shown(value, width: int = 40) -> str:
    """``repr`` of a cell, NumPy scalars and arrays as plain Python, cut to ``width``."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (pd.Timestamp, pd.Timedelta, _dt.datetime, _dt.date, _dt.timedelta)):
        text = str(value)  # 2020-01-01 00:00:00, not datetime.datetime(2020, 1, 1, 0, 0)
        return text if len(text) <= width else text[:width - 3] + "..."
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _nested_cell(col: pd.Series) -> int | None:
    """Position of the first list, struct or array cell of ``col``, or None (cheap for
    columns of numbers or text: only object columns of mixed content are scanned)."""
    dtype = col.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        if not pa.types.is_nested(dtype.pyarrow_dtype):
            return None
        present = np.flatnonzero(col.notna().to_numpy())
        return int(present[0]) if present.size else None
    if not ptypes.is_object_dtype(dtype) or \
            ptypes.infer_dtype(col, skipna=True) not in ("mixed", "mixed-integer"):
        return None
    for pos, value in enumerate(col.to_numpy()):
        if isinstance(value, _NESTED_TYPES):
            return pos
    return None


def _bytes_cell(col: pd.Series) -> int | None:
    """Position of the first raw-bytes cell of ``col`` (a Parquet binary column), or None."""
    dtype = col.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        if not (pa.types.is_binary(dtype.pyarrow_dtype)
                or pa.types.is_large_binary(dtype.pyarrow_dtype)):
            return None
    elif not ptypes.is_object_dtype(dtype) or \
            ptypes.infer_dtype(col, skipna=True) not in ("bytes", "mixed"):
        return None
    for pos, value in enumerate(col.to_numpy()):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return pos
    return None


def _check_not_nested(col: pd.Series, label: str, role: str, advice: str) -> None:
    """A :class:`DataError` when ``col`` holds lists or structs (``TypeError: unhashable``
    further on) or raw bytes (a binary column: neither numbers nor text)."""
    pos = _bytes_cell(col)
    if pos is not None:
        raise DataError(f"{label} holds raw bytes (binary data; {_row_ref(col.index, pos)} "
                        f"holds {_shown(col.iloc[pos])}); {role} needs one number or text "
                        "label per row — drop the column, or decode it to text.")
    pos = _nested_cell(col)
    if pos is not None:
        raise DataError(f"{label} holds nested values (lists or structs; "
                        f"{_row_ref(col.index, pos)} holds {_shown(col.iloc[pos])}); {role} "
                        f"needs one number or label per row — {advice}.")


def _check_numeric_values(col: pd.Series, label: str) -> None:
    """No inf and no magnitudes that overflow when squared, in a numeric column."""
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = np.isinf(values)
    if bad.any():
        raise DataError(f"{label} holds {_plural(int(bad.sum()), 'infinite value')} "
                        f"({_rows_ref(col.index, bad)}); replace them by a number or leave the "
                        "cell empty.")
    huge = np.abs(np.nan_to_num(values)) > MAX_ABS
    if huge.any():
        raise DataError(f"{label} holds values beyond ±{MAX_ABS:.0e} ({_rows_ref(col.index, huge)}"
                        f", e.g. {values[huge][0]:.3g}), which overflow when squared; rescale it.")


def _rows_ref(index: pd.Index, mask: np.ndarray) -> str:
    """The rows of ``mask`` as the user finds them: ``data rows 4, 9`` (counted from 1 below
    the header, as :func:`_row_ref`), the first five and a count of the rest."""
    pos = np.flatnonzero(mask)
    if pos.size == 1:
        return _row_ref(index, int(pos[0]))
    shown = ", ".join(f"{p + 1:,}" for p in pos[:5])
    more = f", ... ({pos.size:,} rows)" if pos.size > 5 else ""
    return f"data rows {shown}{more}"


def _decimal_comma(col: pd.Series) -> str | None:
    """The first value of a text column whose every value is a number written with a decimal
    comma (``'0,25'``), or None: read as text, such numbers would become labels."""
    present = col.dropna()
    if present.empty or not _is_text(col):
        return None
    text = present.astype(str)
    if text.str.match(_DECIMAL_COMMA).all():
        return str(text.iloc[0])
    return None


def _stray_text(col: pd.Series) -> tuple[int, list] | None:
    """(count, examples) when a text column holds numbers but for a few stray entries."""
    present = col.dropna()
    if present.empty:
        return None
    numeric = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    ok = numeric.notna()
    if ok.mean() >= _NUMERIC_SHARE and not ok.all():
        bad = present[~ok]
        return int(bad.size), [str(v) for v in pd.unique(bad)[:3]]
    return None


def _check_stray_target(y: pd.Series, label: str, task_option: str) -> None:
    """A :class:`DataError` naming the first text cell of a target whose values are numbers
    but for a few text cells (``'bad'``, ``'n/a?'``): at least 80% of its non-missing values
    are numbers (the share that makes a feature's text cells stray), taking more than 10
    distinct values (what :func:`infer_task` reads as continuous). As text it would be read
    as one class per distinct number."""
    present = y.notna().to_numpy()
    numeric = pd.to_numeric(y[present].astype(str).str.strip(), errors="coerce")
    ok = numeric.notna().to_numpy()
    if ok.all() or ok.mean() < _NUMERIC_SHARE or \
            numeric[ok].nunique() <= _MAX_CLASS_LEVELS:
        return
    bad = np.flatnonzero(present)[~ok]
    first = int(bad[0])
    more = ""
    if bad.size > 1:
        rows = ", ".join(f"{p + 1:,}" for p in bad[1:4]) + (", ..." if bad.size > 4 else "")
        more = (f" ({bad.size - 1:,} more text cell{'s' if bad.size > 2 else ''}: data "
                f"row{'s' if bad.size > 2 else ''} {rows})")
    raise DataError(f"{label}: {int(ok.sum()):,} of {ok.size:,} values are numbers but "
                    f"{_row_ref(y.index, first)} holds {_shown(y.iloc[first])}{more}; fix it, or "
                    "leave the cell empty if the value is missing (the row is then dropped) — or "
                    f"set `{task_option}` to classification if the column holds class labels.")


def _prepare_features(frame: pd.DataFrame, features: list, name: str, n_rows: int,
                      notes: list[str]) -> list:
    """Check feature columns; return those to use (identifier-like, empty and date columns
    are left out with a note)."""
    used = []
    for c in features:
        col = frame[c]
        label = f"{name}: feature column {c!r}"
        _check_not_nested(col, label, "a feature",
                          "drop the column or flatten it into columns of its own")
        if col.isna().all():
            notes.append(f"left out feature {c!r}: every value is missing")
            continue
        if ptypes.is_datetime64_any_dtype(col):
            notes.append(f"left out feature {c!r}: dates are not used as predictors")
            continue
        if _is_text(col):
            comma = _decimal_comma(col)
            if comma is not None:
                raise DataError(f"{label} holds numbers written with a decimal comma (e.g. "
                                f"{comma!r}); as text they would become categories — write "
                                "them with a decimal point, or save the file as Parquet.")
            stray = _stray_text(col)
            if stray is not None:
                count, examples = stray
                raise DataError(
                    f"{label} is numeric except for {_plural(count, 'value')} such as "
                    f"{examples}; mark missing values as empty cells (or NA) or fix them — "
                    "as text the column would become one dummy column per distinct number.")
            levels = col.nunique(dropna=True)
            if levels > _ID_MIN_LEVELS and levels > 0.5 * n_rows:
                notes.append(f"left out feature {c!r}: {levels:,} distinct text values in "
                             f"{n_rows:,} rows (an identifier or free text, not a category)")
                continue
        else:
            _check_numeric_values(col, label)
        used.append(c)
    return used


def _encode_target(y: pd.Series, task: str, target: str, target_option: str,
                   notes: list[str]) -> tuple[pd.Series, tuple]:
    comma = _decimal_comma(y)
    if comma is not None:
        raise DataError(f"`{target_option}`: column {target!r} holds numbers written with a "
                        f"decimal comma (e.g. {comma!r}), which would be read as text labels; "
                        "write them with a decimal point, or save the file as Parquet.")
    if task == "regression":
        if _is_text(y):
            sample = y.astype(str).unique()[:3].tolist()
            raise DataError(
                f"`{target_option}`: column {target!r} must be numeric for regression; found "
                f"dtype {y.dtype} with values like {sample}.")
        y = y.astype(float)
        if y.nunique() < 2:
            raise DataError(f"`{target_option}`: column {target!r} is constant (every value is "
                            f"{y.iloc[0]:g}); there is nothing to predict.")
        spread = float(np.max(np.abs(y.to_numpy() - np.median(y.to_numpy()))))
        if spread < MIN_SPREAD:
            raise DataError(f"`{target_option}`: column {target!r} varies by less than "
                            f"{MIN_SPREAD:.0e} (its values are within {spread:.3g} of their "
                            "median), so squared errors and variances underflow to 0; rescale "
                            "it (e.g. multiply it by a power of ten).")
        return y, ()
    labels = pd.unique(y)
    if len(labels) < 2:
        raise DataError(f"`{target_option}`: column {target!r} is constant (every value is "
                        f"{_shown(labels[0])}); there is nothing to predict.")
    if len(labels) == len(y):
        shown = ", ".join(_shown(v) for v in labels[:3]) + (", ..." if len(y) > 3 else "")
        raise DataError(f"`{target_option}`: column {target!r} holds a different value in each "
                        f"of its {len(y):,} rows ({shown}): every class would have a "
                        "single row, which no model can learn from and be tested on; it looks "
                        "like an identifier, not an outcome — choose the outcome column.")
    try:
        classes = tuple(sorted(labels))
    except TypeError:  # mixed types: sort by their text
        classes = tuple(sorted(labels, key=str))
    codes = pd.Series(pd.Categorical(y, categories=list(classes)).codes, index=y.index)
    numeric_codes = all(isinstance(c, (int, np.integer, float, np.floating, bool, np.bool_))
                        for c in classes)
    if numeric_codes and list(classes) == list(range(len(classes))):
        return y.astype(int), tuple(int(c) for c in classes)
    mapping = ", ".join(f"{c!s} → {i}" for i, c in enumerate(classes[:10]))
    extra = "" if len(classes) <= 10 else f", ... ({len(classes)} classes)"
    notes.append(f"target labels encoded in sorted order: {mapping}{extra}"
                 + (f" (class {classes[1]!s} is the positive class)" if len(classes) == 2
                    else ""))
    return codes.astype(int), tuple(c.item() if hasattr(c, "item") else c for c in classes)


def _study_labels(col: pd.Series) -> pd.Series:
    """Study labels as text; integer-valued floats lose their '.0' (1978.0 → '1978')."""
    if ptypes.is_float_dtype(col):
        values = col.to_numpy(dtype=float)
        if np.all(np.mod(values, 1) == 0):
            return pd.Series(values.astype(np.int64), index=col.index).astype(str)
    return col.astype(str)




@dropped("target_option", "study_option", "task_option")
def dataset_from_frame(frame: pd.DataFrame, *, target: str | None = None,
                       study: str | None = None,
                       features: list[str] | None = None, task: str | None = None,
                       min_studies: int = 1, min_rows: int = 2,
                       name: str = "data", time: str | None = None,
                       event: str | None = None, event_value=None) -> Dataset:
    """Validate a user's table and split it into features, target and study labels.

    What is checked, and what is done (each recorded in ``Dataset.notes``):

    - column names must be unique; the target and study columns must exist and differ;
    - no used column may hold nested values (the lists or structs of a Parquet or DuckDB list
      or struct column, Python lists, tuples, dicts or sets): the error names the column and
      the first such cell; a nested feature is refused too, not left out, so that no command
      drops it silently;
    - feature columns: numeric ones must be finite and below 1e150 in magnitude; a text column
      that holds numbers but for a few stray entries (``'n/a?'``) is refused, not one-hot
      encoded; text columns with more distinct values than 50 and than half the rows
      (identifiers), empty columns and dates are left out; other text columns are one-hot
      encoded (first level dropped);
    - the target: for classification, labels of any type are encoded ``0..K-1`` in sorted
      order (``classes`` keeps the labels); for regression it must be numeric and not constant;
      a text target whose values are numbers but for a few text cells (at least 80% of its
      non-missing values are numbers, with more than 10 distinct numbers) is refused naming the
      first text cell, unless ``task='classification'``: as text it would be one class per
      distinct number; a classification target with a different value in every row (an
      identifier) is refused: every class would have a single row;
    - rows with a missing value in a used column are dropped and counted per column.

    Errors name the parameters (`target`, `study`, `task`, `features`); the command line shows
    its flags instead. A cell is named as ``data row N``: the N-th row of the table counted
    from 1 (below the header of a file), with its index label when the frame's index is not
    the default ``0, 1, 2, ...``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The user's table.
    target : str, optional
        The outcome column (not with ``time``/``event``).
    study : str, optional
        The study column (its values become text labels).
    features : list of str, optional
        The feature columns (default: every other column).
    task : {'regression', 'classification'}, optional
        Default :func:`infer_task` of the target.
    min_studies : int, default 1
        The fewest distinct studies accepted.
    min_rows : int, default 2
        The fewest rows accepted (in the table, and complete in the used columns): a model is
        fitted on some rows and tested on others (an audit needs 20).
    name : str, default 'data'
        What messages call the table (a file's name).
    time, event : str, optional
        A survival outcome in place of ``target``: the follow-up time column (positive
        numbers) and the event indicator column (1/0, true/false or yes/no; 1: the event
        happened at that time, 0: censored then), or ``'COLUMN=VALUE'`` for a column of labels
        (``'status=dead'``). The Dataset's ``task`` is ``'survival'``,
        ``y`` holds the times, ``event`` the indicators, and ``outcome`` the structured target
        models are fitted on.
    event_value : object, optional
        The value of the ``event`` column that marks the event (any other marks a censored
        time), for a column of labels such as ``'dead'``/``'alive'``.

    Returns
    -------
    Dataset
        Features, target, study labels and notes.

    Raises
    ------
    DataError
        Any of the checks above fails, the study column has fewer than ``min_studies`` studies,
        or fewer than ``min_rows`` rows (complete ones) remain.

    See Also
    --------
    load_dataset : Reads a file, then calls this.

    Examples
    --------
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [0.1, 0.5, 0.2, 0.9],
    ...                    "site": ["a", "a", "b", "b"]})
    >>> ds = dataset_from_frame(df, target="y", study="site")
    >>> ds.task, ds.n_studies, list(ds.X.columns)
    ('regression', 2, ['x'])
    """
    if time is not None or event is not None:
        return _survival_from_frame(frame, time, event, target, study, features, task,
                                    min_studies, name, min_rows, event_value)
    if target is None:
        raise ParameterError("`target` is needed (the outcome column), or `time` and `event` "
                             "for a survival outcome.")
    return _from_frame(frame, target, study, features, task, min_studies, name, "target",
                       "study", "task", min_rows)


def _event_codes(col: pd.Series, event: str, value=None) -> pd.Series:
    """An event column as 0/1 floats (missing kept): booleans, 0/1 numbers or the texts
    true/false, yes/no, 1/0; or, with ``value``, 1 where the column holds it (as text) and 0
    elsewhere."""
    if value is not None:
        text = col.astype(str).str.strip()
        wanted = str(value).strip()
        if not (text[col.notna()] == wanted).any():
            shown = ", ".join(repr(v) for v in pd.unique(text[col.notna()])[:5])
            raise DataError(f"`event`: column {event!r} never holds {wanted!r} (the value "
                            f"marking the event); its values: {shown}.")
        return (text == wanted).astype(float).where(col.notna())
    if ptypes.is_bool_dtype(col):
        return col.astype(float)
    if ptypes.is_numeric_dtype(col):
        values = col.dropna()
        bad = values[~values.isin([0, 1])]
        if len(bad):
            raise DataError(f"`event`: column {event!r} must hold event indicators (1 = the "
                            f"event happened, 0 = censored); found {_shown(bad.iloc[0])} "
                            f"({len(bad):,} such value(s)).")
        return col.astype(float)
    words = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "1": 1.0, "0": 0.0}
    text = col.dropna().astype(str).str.strip().str.lower()
    bad = text[~text.isin(list(words))]
    if len(bad):
        values = pd.unique(col.dropna().astype(str).str.strip())
        hint = (f"; name the value that marks the event: `{event}={values[0]}` or "
                f"`{event}={values[1]}` (--event COLUMN=VALUE on the command line, "
                "event_value= in Python)" if len(values) == 2 else "")
        raise DataError(f"`event`: column {event!r} must hold event indicators (1/0, true/"
                        f"false or yes/no); found {_shown(bad.iloc[0])} "
                        f"({len(bad):,} such value(s)){hint}.")
    return col.astype(str).str.strip().str.lower().map(words).where(col.notna())


def _survival_from_frame(frame, time, event, target, study, features, task, min_studies,
                         name, min_rows, event_value=None) -> Dataset:
    """A survival outcome: the follow-up ``time`` column and the ``event`` column (``COLUMN=VALUE``
    names the value that marks the event, unless a column is named so)."""
    if (event is not None and event_value is None and event not in frame.columns
            and "=" in event):
        event, event_value = event.split("=", 1)
    if time is None or event is None:
        raise ParameterError("a survival outcome needs both `time` (the follow-up time "
                             "column) and `event` (the event indicator column).")
    if target is not None:
        raise ParameterError(f"`target` ({target!r}) and `time`/`event` both name the outcome; "
                             "give `time` and `event` for a survival outcome, `target` "
                             "otherwise.")
    if task not in (None, "survival"):
        raise ParameterError(f"`task`: `time` and `event` make a survival outcome; got "
                             f"task={task!r}.")
    for option, col in (("time", time), ("event", event)):
        if col not in frame.columns:
            raise DataError(_no_column(option, col, name, frame))
    if time == event:
        raise DataError(f"`time` and `event` must differ; both are {time!r}.")
    if study is not None and study in (time, event):
        raise DataError(f"`study` ({study!r}) must differ from `time` and `event`.")
    if features is None:
        features = [c for c in frame.columns if c not in (time, event, study)]
    elif event in features or time in features:
        raise DataError("`features` must not hold the `time` or `event` column (they are the "
                        "outcome).")
    work = frame.copy()
    marker = "__replikit_event__"
    work[marker] = _event_codes(frame[event], event, event_value)
    ds = _from_frame(work.drop(columns=[event]), time, study, list(features) + [marker],
                     "regression", min_studies, name, "time", "study", "task", min_rows)
    y = ds.y.astype(float)
    bad = ~(np.isfinite(y.to_numpy()) & (y.to_numpy() > 0))
    if bad.any():
        raise DataError(f"`time`: column {time!r} must hold positive follow-up times; found "
                        f"{_shown(y[bad].iloc[0])} ({int(bad.sum()):,} such value(s)).")
    ev = ds.X[marker].astype(bool).rename(event)
    if not ev.any():
        raise DataError(f"`event`: column {event!r} has no event (every time is censored); "
                        "a survival model needs events.")
    notes = tuple(n for n in ds.notes if marker not in n)
    notes += (f"survival outcome: time {time!r}, event {event!r} ({int(ev.sum()):,} events, "
              f"{len(ev) - int(ev.sum()):,} censored)",)
    return dataclasses.replace(ds, X=ds.X.drop(columns=[marker]), task="survival",
                               event=ev.reset_index(drop=True), notes=notes)


#: A design is checked for collinearity (:func:`design_notes`) when its Gram matrix costs at
#: most this many multiply-adds (rows x columns^2): about 2 s on one core.
DESIGN_CHECK_BUDGET = 2e10
#: Relative eigenvalue of the standardised columns' correlation matrix below which a direction
#: counts as null: the pseudo-inverse cut-off of the batched least-squares fits.
NULL_EIGENVALUE = 1e-12
#: Condition number of the standardised columns from which a full-rank design is named as
#: nearly collinear, and ratio of the columns' SDs from which their scales are named.
NEAR_COLLINEAR = 1e4
SCALE_SPREAD = 1e6


def design_notes(X: pd.DataFrame) -> list[str]:
    """Notes on a numerically awkward encoded design (``X``: numeric columns): columns that are
    collinear (the centred, standardised columns' rank below their number: full dummy sets
    next to an intercept, a column that is a combination of others), nearly collinear (their
    condition number above :data:`NEAR_COLLINEAR`), or on wildly different scales (SDs more
    than :data:`SCALE_SPREAD` apart, e.g. a population in the billions next to 0/1 dummies).

    Least-squares predictions are unique whatever the design; coefficients are not when the
    columns are collinear, and a solver working in the raw units can stop short of the optimum
    when the scales differ by many orders of magnitude (its singular-value cut-off is relative
    to the largest column), which is why the default linear models standardise. Skipped (no
    note) when the check would cost more than :data:`DESIGN_CHECK_BUDGET`.
    """
    A = X.to_numpy(dtype=float, copy=False)
    n, p = A.shape
    if n < 2 or p == 0 or n * p * p > DESIGN_CHECK_BUDGET:
        return []
    sd = A.std(axis=0)
    mean = A.mean(axis=0)
    varying = sd > 10 * np.finfo(float).eps * np.maximum(1.0, np.abs(mean))
    notes = []
    if varying.sum() >= 2:
        spread = sd[varying].max() / sd[varying].min()
        if spread > SCALE_SPREAD:
            cols = X.columns[varying]
            big, small = cols[np.argmax(sd[varying])], cols[np.argmin(sd[varying])]
            notes.append(f"the encoded columns' scales differ by a factor of {spread:.1g} "
                         f"(SD of {big!r}: {sd[varying].max():.3g}; of {small!r}: "
                         f"{sd[varying].min():.3g}): the default linear models standardise them "
                         "(a least-squares solver on the raw columns can stop short of "
                         "the optimum)")
    gram = np.zeros((int(varying.sum()),) * 2)
    step = max(1, 4_000_000 // max(1, p))
    for start in range(0, n, step):
        Z = (A[start:start + step, varying] - mean[varying]) / sd[varying]
        gram += Z.T @ Z
    vals = np.linalg.eigvalsh(gram / n) if gram.size else np.zeros(0)
    top = vals[-1] if vals.size else 0.0
    rank = int(np.sum(vals > NULL_EIGENVALUE * top)) if top > 0 else 0
    if rank < p:
        constant = p - int(varying.sum())
        why = (f"; {_plural(constant, 'column')} constant" if constant else "")
        notes.append(f"the encoded columns are collinear (rank {rank:,} of {p:,} next to the "
                     f"intercept{why}): least-squares coefficients are not unique; predictions "
                     "are")
    elif vals.size and np.sqrt(top / vals[0]) > NEAR_COLLINEAR:
        notes.append(f"the encoded columns are nearly collinear (condition number "
                     f"{np.sqrt(top / vals[0]):.2g} after standardisation): least-squares "
                     "coefficients are unstable; predictions much less so")
    return notes


def _from_frame(frame, target, study, features, task, min_studies, name, target_option,
                study_option, task_option, min_rows=2) -> Dataset:
    min_rows = check_int(min_rows, "min_rows", min_value=1)
    notes: list[str] = []
    dup = frame.columns[frame.columns.duplicated()].unique().tolist()
    if dup:
        raise DataError(f"{name}: column name(s) {[str(d) for d in dup]} appear more than "
                        "once; column names must be unique.")
    if task is not None and task not in TASKS:
        raise DataError(f"`{task_option}` must be one of {', '.join(TASKS)}; got {task!r}.")
    if target not in frame.columns:
        raise DataError(_no_column(target_option, target, name, frame))
    if study is not None and study not in frame.columns:
        raise DataError(_no_column(study_option, study, name, frame))
    if study is not None and study == target:
        raise DataError(f"`{study_option}` and `{target_option}` must differ; both are {target!r}.")
    if len(frame) < min_rows:  # before the columns' checks: a single row says nothing of them
        raise DataError(f"`data`: {name} has {_plural(len(frame), 'row')}; at least {min_rows} "
                        f"are needed{_ROWS_WHY}.")
    if features is None:
        features = [c for c in frame.columns if c not in (target, study)]
    else:
        unknown = [f for f in features if f not in frame.columns]
        if unknown:
            raise DataError(f"`features`: no column(s) {unknown} in {name}; available columns: "
                            f"{_columns_list(frame)}.")
    if not features:
        raise DataError(f"{name} has no feature columns besides the target {target!r}.")
    y_raw = frame[target]
    _check_not_nested(y_raw, f"`{target_option}`: column {target!r}", "the outcome",
                      "flatten it or choose another column")
    if study is not None:
        _check_not_nested(frame[study], f"`{study_option}`: column {study!r}", "a study label",
                          "flatten it or choose another column")
    if y_raw.isna().all():
        raise DataError(f"`{target_option}`: column {target!r} has no values (all missing).")
    if ptypes.is_datetime64_any_dtype(y_raw) or ptypes.is_timedelta64_dtype(y_raw):
        kind = "durations" if ptypes.is_timedelta64_dtype(y_raw) else "dates"
        raise DataError(f"`{target_option}`: column {target!r} holds {kind} (e.g. "
                        f"{_shown(y_raw.dropna().iloc[0])}), not numbers or class labels; "
                        "choose the outcome column, or convert it to a number first (e.g. days "
                        "since a start date).")
    if not _is_text(y_raw):
        _check_numeric_values(y_raw, f"`{target_option}`: column {target!r}")
    elif task != "classification":
        numeric = pd.to_numeric(y_raw.dropna().astype(str).str.strip(), errors="coerce")
        if numeric.notna().all():  # numbers stored as text
            y_raw = pd.to_numeric(y_raw.astype(str).str.strip(), errors="coerce").where(
                y_raw.notna())
            frame = frame.copy()
            frame[target] = y_raw
        else:
            _check_stray_target(y_raw, f"`{target_option}`: column {target!r}", task_option)
    if task is None:
        task = infer_task(y_raw.dropna())
        if task == "classification" and ptypes.is_numeric_dtype(y_raw) and \
                y_raw.nunique() > 2:
            notes.append(f"target {target!r} has {y_raw.nunique()} distinct integer values: "
                         f"treated as classification (set `{task_option}` to regression if it "
                         "is a score)")
    features = _prepare_features(frame, list(features), name, len(frame), notes)
    if not features:
        raise DataError(f"{name}: no usable feature column besides the target {target!r} "
                        f"({'; '.join(notes)}).")
    used = frame[list(features) + [target] + ([study] if study else [])]
    missing = used.isna()
    complete_rows = ~missing.any(axis=1)
    complete = used[complete_rows.to_numpy()]
    n_dropped = len(used) - len(complete)
    if n_dropped:
        worst = missing.sum().sort_values(ascending=False)
        worst = worst[worst > 0]
        detail = ", ".join(f"{c!s}: {int(v):,}" for c, v in worst.head(5).items())
        notes.append(f"dropped {_plural(n_dropped, 'row')} with a missing value ({detail})")
    if len(complete) < min_rows:  # rows enough (checked above): missing values left too few
        worst = missing.sum().sort_values(ascending=False)
        detail = ", ".join(f"{c!s} ({int(v):,} missing)" for c, v in worst.head(3).items()
                           if v > 0)
        raise DataError(f"`data`: only {_plural(len(complete), 'row')} of {len(used):,} "
                        f"{'is' if len(complete) == 1 else 'are'} complete in the used columns "
                        f"of {name}; at least {min_rows} are needed{_ROWS_WHY}. Most missing: "
                        f"{detail}. Drop or fill those columns.")
    X = complete[list(features)]
    categorical = [c for c in X.columns if _is_text(X[c])]
    X = pd.get_dummies(X, columns=categorical, drop_first=True, dtype=float).astype(float)
    X.columns = [str(c) for c in X.columns]
    X = X.reset_index(drop=True)
    notes.extend(design_notes(X))
    y, classes = _encode_target(complete[target].reset_index(drop=True), task, target,
                                target_option, notes)
    s = None
    if study is not None:
        s = _study_labels(complete[study]).reset_index(drop=True).rename("study")
        n_studies = s.nunique()
        alike = lookalike_labels(pd.unique(s))
        if alike:
            notes.append("study labels that look alike are kept apart: "
                         + "; ".join(" / ".join(repr(v) for v in group) for group in alike[:3]))
        if n_studies < min_studies:
            raise DataError(
                f"`{study_option}`: column {study!r} holds {n_studies} distinct stud"
                f"{'y' if n_studies == 1 else 'ies'} ({', '.join(map(repr, s.unique()[:5]))}); "
                f"at least {min_studies} are needed to compare studies."
            )
    return Dataset(name, X, y.rename(target), s, task, n_dropped, classes=classes,
                   notes=tuple(notes))


@renamed(path="data")
@dropped("data_option", "target_option", "study_option", "task_option")
def load_dataset(data: str | os.PathLike, *, target: str | None = None,
                 study: str | None = None,
                 table: str | None = None, min_studies: int = 1, task: str | None = None,
                 features: list[str] | None = None, min_rows: int = 2,
                 time: str | None = None, event: str | None = None) -> Dataset:
    """Read a CSV/Parquet/DuckDB file and validate it as in :func:`dataset_from_frame`.

    Study labels are kept as written in a CSV file: ``'05'``, ``'5'`` and ``'5.0'`` are three
    studies, not one number. Errors name the parameters (`data`, `table`, `target`, `study`,
    `task`, `features`); the command line shows its flags instead.

    Parameters
    ----------
    data : path-like
        The file (its suffix picks the reader).
    target : str
        The outcome column.
    study : str, optional
        The study column.
    table : str, optional
        The table inside a DuckDB file.
    min_studies : int, default 1
        The fewest distinct studies accepted.
    task : {'regression', 'classification'}, optional
        Default :func:`infer_task` of the target.
    features : list of str, optional
        The feature columns (default: every other column).
    min_rows : int, default 2
        The fewest rows accepted (in the file, and complete in the used columns).
    time, event : str, optional
        A survival outcome: the follow-up time column and the event indicator column (1/0,
        true/false or yes/no), in place of `target` (see :func:`dataset_from_frame`).

    Returns
    -------
    Dataset
        Features, target, study labels and notes.

    See Also
    --------
    dataset_from_frame : The same checks on a DataFrame.
    replikit.data.read_frame : The reader.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d) / "survey.csv"
    ...     _ = path.write_text("x,y,year\\n1,0.5,05\\n2,0.7,05\\n3,0.2,5\\n4,0.9,5\\n")
    ...     ds = load_dataset(path, target="y", study="year")
    >>> ds.name, sorted(ds.study.unique())
    ('survey.csv', ['05', '5'])
    """
    # study labels as written: '05', '5' and '5.0' are three studies, not one number
    dtype = {study: str} if study is not None else None
    frame = _read(data, table, dtype, "data")
    return dataset_from_frame(frame, target=target, study=study, features=features, task=task,
                              min_studies=min_studies, min_rows=min_rows,
                              name=os.path.basename(str(data)), time=time, event=event)
