"""A user's modelling data: a table with a target column and, optionally, a study column."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .._compat import dropped, renamed
from .._labels import names_list
from .._validation import check_int, lookalike_labels
from ..errors import DataError
from .io import _read

__all__ = ["Dataset", "dataset_from_frame", "load_dataset", "infer_task"]


TASKS = ("regression", "classification")
MAX_ABS = 1e150  # larger magnitudes overflow when squared (sums of squares, Gram matrices)
_ID_MIN_LEVELS = 50  # a text column with more distinct values than this and than half the rows
_NUMERIC_SHARE = 0.8  # text column whose values are numbers but for a few: stray entries
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

    @property
    def n_studies(self) -> int:
        """Distinct studies; data without a study column is one study."""
        return 1 if self.study is None else int(self.study.nunique())

    def study_labels(self) -> pd.Series:
        """The study of every row (``'all'`` when there is no study column)."""
        if self.study is not None:
            return self.study
        return pd.Series(["all"] * len(self.y), name="study")

    def outcome_by_study(self) -> pd.DataFrame:
        """The outcome per study: ``study, n, mean, sd, min, max`` (regression) or ``study, n,
        share <label>`` per class but the first (classification), studies in natural order
        (numerically when every label is a number)."""
        study = self.study_labels()
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
    if np.all(np.equal(np.mod(values, 1), 0)) and pd.unique(values).size <= 10:
        return "classification"
    return "regression"


def _columns_list(frame: pd.DataFrame) -> str:
    return names_list(frame.columns)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _is_text(col: pd.Series) -> bool:
    return not (ptypes.is_numeric_dtype(col) or ptypes.is_bool_dtype(col)
                or ptypes.is_datetime64_any_dtype(col))


def _check_numeric_values(col: pd.Series, label: str) -> None:
    """No inf and no magnitudes that overflow when squared, in a numeric column."""
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = np.isinf(values)
    if bad.any():
        rows = np.flatnonzero(bad)[:5].tolist()
        raise DataError(f"{label} holds {_plural(int(bad.sum()), 'infinite value')} (rows "
                        f"{rows}); replace them by a number or leave the cell empty.")
    huge = np.abs(np.nan_to_num(values)) > MAX_ABS
    if huge.any():
        rows = np.flatnonzero(huge)[:5].tolist()
        raise DataError(f"{label} holds values beyond ±{MAX_ABS:.0e} (rows {rows}, e.g. "
                        f"{values[huge][0]:.3g}), which overflow when squared; rescale it.")


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


def _prepare_features(frame: pd.DataFrame, features: list, name: str, n_rows: int,
                      notes: list[str]) -> list:
    """Check feature columns; return those to use (identifier-like, empty and date columns
    are left out with a note)."""
    used = []
    for c in features:
        col = frame[c]
        label = f"{name}: feature column {c!r}"
        if col.isna().all():
            notes.append(f"left out feature {c!r}: every value is missing")
            continue
        if ptypes.is_datetime64_any_dtype(col):
            notes.append(f"left out feature {c!r}: dates are not used as predictors")
            continue
        if _is_text(col):
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
        return y, ()
    labels = pd.unique(y)
    if len(labels) < 2:
        raise DataError(f"`{target_option}`: column {target!r} has a single class "
                        f"({labels[0]!r}); nothing to predict.")
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
def dataset_from_frame(frame: pd.DataFrame, *, target: str, study: str | None = None,
                       features: list[str] | None = None, task: str | None = None,
                       min_studies: int = 1, min_rows: int = 2,
                       name: str = "data") -> Dataset:
    """Validate a user's table and split it into features, target and study labels.

    What is checked, and what is done (each recorded in ``Dataset.notes``):

    - column names must be unique; the target and study columns must exist and differ;
    - feature columns: numeric ones must be finite and below 1e150 in magnitude; a text column
      that holds numbers but for a few stray entries (``'n/a?'``) is refused, not one-hot
      encoded; text columns with more distinct values than 50 and than half the rows
      (identifiers), empty columns and dates are left out; other text columns are one-hot
      encoded (first level dropped);
    - the target: for classification, labels of any type are encoded ``0..K-1`` in sorted
      order (``classes`` keeps the labels); for regression it must be numeric and not constant;
    - rows with a missing value in a used column are dropped and counted per column.

    Errors name the parameters (`target`, `study`, `task`, `features`); the command line shows
    its flags instead.

    Parameters
    ----------
    frame : pandas.DataFrame
        The user's table.
    target : str
        The outcome column.
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
    return _from_frame(frame, target, study, features, task, min_studies, name, "target",
                       "study", "task", min_rows)


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
        raise DataError(
            f"`{target_option}`: no column {target!r} in {name}; available columns: "
            f"{_columns_list(frame)}."
        )
    if study is not None and study not in frame.columns:
        raise DataError(
            f"`{study_option}`: no column {study!r} in {name}; available columns: "
            f"{_columns_list(frame)}."
        )
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
    if y_raw.isna().all():
        raise DataError(f"`{target_option}`: column {target!r} has no values (all missing).")
    if not _is_text(y_raw):
        _check_numeric_values(y_raw, f"`{target_option}`: column {target!r}")
    elif task != "classification":
        numeric = pd.to_numeric(y_raw.dropna().astype(str).str.strip(), errors="coerce")
        if numeric.notna().all():  # numbers stored as text
            y_raw = pd.to_numeric(y_raw.astype(str).str.strip(), errors="coerce").where(
                y_raw.notna())
            frame = frame.copy()
            frame[target] = y_raw
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
def load_dataset(data: str | os.PathLike, *, target: str, study: str | None = None,
                 table: str | None = None, min_studies: int = 1, task: str | None = None,
                 features: list[str] | None = None, min_rows: int = 2) -> Dataset:
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
    return _from_frame(frame, target, study, features, task, min_studies,
                       os.path.basename(str(data)), "target", "study", "task", min_rows)
