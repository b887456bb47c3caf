"""The units of studies S_1..S_K after a fixed prediction rule φ was applied to them
(Parmigiani 2023, sec. 2.3).

Every public function of :mod:`replikit.multistudy` accepts a :class:`~replikit.data.Predictions`
table (or a DataFrame with its columns), or a :class:`MultiStudyData` built by
:func:`from_arrays` or :func:`from_estimator`. Internally the units are sorted by study, so that
the rows of study ``k`` are the contiguous block ``starts[k]:starts[k+1]`` — every group sum over
resamples is then a ``bincount`` or a ``reduceat``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .._compat import dropped
from .._labels import names_list
from .._validation import check_same_length, lookalike_labels
from ..data.tables import Predictions
from ..errors import DataError, ParameterError, ParameterTypeError, ReplikitWarning

__all__ = ["MultiStudyData", "from_arrays", "from_estimator", "from_predictions", "as_study_data",
           "load_predictions", "study_labels_as_text"]


@dataclass(frozen=True, eq=False)
class MultiStudyData:
    """Units ``(φ(x_ik), x_ik, y_ik)`` of studies ``S_1..S_K`` (Parmigiani 2023, secs. 2.3, 5).

    Build one with :func:`from_arrays`, :func:`from_estimator` or :func:`from_predictions`.

    Parameters
    ----------
    studies : tuple
        Study labels, in the order used by every matrix and table.
    codes : ndarray of int, shape (n,)
        Study index of each unit, sorted ascending (units are grouped by study).
    y : ndarray, shape (n,)
        Observed labels / outcomes.
    pred : ndarray, shape (n,)
        The rule's point prediction φ(x) (class label or number).
    proba : ndarray of shape (n, C) or None
        Class probabilities, columns in the order of ``classes``.
    classes : tuple or None
        Class labels of ``proba`` (sorted).
    X : DataFrame or None
        Features (for callable utilities and subgroups), rows aligned with ``y``.
    row : ndarray of int, shape (n,)
        Position of each unit in the caller's input (or the ``row`` column of a Predictions
        table).
    extra : DataFrame or None
        Any further columns of a Predictions table (subgroup columns), aligned with ``y``.

    See Also
    --------
    from_arrays, from_estimator, from_predictions : Build one.

    Examples
    --------
    >>> d = from_arrays([0, 1, 1], [0, 1, 0], ["b", "a", "b"])
    >>> d
    MultiStudyData(3 units, 2 studies, discrete)
    >>> d.studies, d.codes.tolist()
    (('a', 'b'), [0, 1, 1])
    """

    studies: tuple
    codes: np.ndarray
    y: np.ndarray
    pred: np.ndarray
    proba: np.ndarray | None = None
    classes: tuple | None = None
    X: pd.DataFrame | None = None
    row: np.ndarray | None = None
    extra: pd.DataFrame | None = None

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def K(self) -> int:
        return len(self.studies)

    @property
    def sizes(self) -> np.ndarray:
        """``n_k`` of each study."""
        return np.bincount(self.codes, minlength=self.K)

    @property
    def starts(self) -> np.ndarray:
        """Offsets of the study blocks: study ``k`` is ``starts[k]:starts[k+1]``."""
        return np.concatenate([[0], np.cumsum(self.sizes)])

    @property
    def is_discrete(self) -> bool:
        """Labels and predictions are classes (not continuous numbers)."""
        return _is_discrete(self.y) and _is_discrete(self.pred)

    def subset(self, mask) -> MultiStudyData:
        """The units where ``mask`` is true (local replicability, Parmigiani 2023, sec. 7.2).

        Studies left without units are dropped.
        """
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (self.n,):
            raise DataError(f"`subgroup` must be a boolean mask of length {self.n}; got dtype "
                            f"{mask.dtype} and shape {mask.shape}.")
        if not mask.any():
            raise DataError("`subgroup` selects no unit; local replicability needs a non-empty "
                            "subset X* (Parmigiani 2023, sec. 7.2).")
        kept = np.unique(self.codes[mask])
        remap = np.full(self.K, -1)
        remap[kept] = np.arange(kept.size)
        return MultiStudyData(
            studies=tuple(self.studies[k] for k in kept),
            codes=remap[self.codes[mask]],
            y=self.y[mask], pred=self.pred[mask],
            proba=None if self.proba is None else self.proba[mask],
            classes=self.classes,
            X=None if self.X is None else self.X.loc[mask].reset_index(drop=True),
            row=None if self.row is None else self.row[mask],
            extra=None if self.extra is None else self.extra.loc[mask].reset_index(drop=True),
        )

    def __repr__(self) -> str:
        return (f"MultiStudyData({self.n} units, {self.K} studies, "
                f"{'discrete' if self.is_discrete else 'continuous'}"
                f"{', proba' if self.proba is not None else ''})")


def _is_discrete(values: np.ndarray) -> bool:
    if not ptypes.is_numeric_dtype(values.dtype) or ptypes.is_bool_dtype(values.dtype):
        return True
    if ptypes.is_integer_dtype(values.dtype):
        return True
    v = values.astype(float)
    return bool(np.all(v == np.round(v)) and np.unique(v).size <= 20)


def _sort_units(study, y, pred, proba, classes, X, row, extra, study_order=None) -> MultiStudyData:
    study = np.asarray(study)
    if study_order is None:
        labels = pd.unique(pd.Series(study))
        try:
            labels = sorted(labels, key=float)
        except (TypeError, ValueError):
            labels = sorted(labels, key=str)
    else:
        labels = list(study_order)
    lookup = {lab: i for i, lab in enumerate(labels)}
    try:
        codes = np.fromiter((lookup[s] for s in study), dtype=np.int64, count=study.size)
    except KeyError as exc:
        raise DataError(f"`study`: label {exc.args[0]!r} is not in `study_order`.") from None
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    present = np.unique(codes)
    if present.size < len(labels):  # drop studies without units
        remap = np.full(len(labels), -1)
        remap[present] = np.arange(present.size)
        codes = remap[codes]
        labels = [labels[k] for k in present]
    return MultiStudyData(
        studies=tuple(labels), codes=codes, y=np.asarray(y)[order], pred=np.asarray(pred)[order],
        proba=None if proba is None else np.asarray(proba, float)[order],
        classes=None if classes is None else tuple(classes),
        X=None if X is None else X.iloc[order].reset_index(drop=True),
        row=np.asarray(row)[order] if row is not None else order,
        extra=None if extra is None else extra.iloc[order].reset_index(drop=True),
    )


def from_arrays(y_true, y_pred, study, *, proba=None, classes=None, X=None,
                study_order=None) -> MultiStudyData:
    """Units of several studies from plain arrays (φ already applied).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Observed labels or outcomes ``y_ik``.
    y_pred : array-like of shape (n,)
        The rule's predictions ``φ(x_ik)``.
    study : array-like of shape (n,)
        Study label of each unit.
    proba : array-like of shape (n, C), optional
        Class probabilities (for the log score and user-optimal thresholds).
    classes : sequence, optional
        Class labels of the ``proba`` columns (default: the sorted labels in ``y_true``).
    X : DataFrame, optional
        Features, for callable utilities and subgroups.
    study_order : sequence, optional
        Order of the studies in matrices (default: sorted labels).

    Returns
    -------
    MultiStudyData
        The units, sorted by study.

    See Also
    --------
    from_estimator : Apply a fitted estimator to every study.
    from_predictions : From a Predictions table.

    Examples
    --------
    >>> d = from_arrays([0, 1, 1, 0], [0, 1, 0, 0], ["a", "a", "b", "b"])
    >>> d.K, d.sizes.tolist()
    (2, [2, 2])
    """
    y = np.asarray(y_true)
    pred = np.asarray(y_pred)
    s = np.asarray(study)
    arrays = [("y_true", y), ("y_pred", pred), ("study", s)]
    if X is not None:
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(np.asarray(X))
        arrays.append(("X", X))
    n = check_same_length(arrays)
    if n == 0:
        raise DataError("`y_true` is empty; each study needs at least one unit.")
    if y.ndim != 1 or pred.ndim != 1 or s.ndim != 1:
        raise DataError("`y_true`, `y_pred` and `study` must be one-dimensional; got shapes "
                        f"{y.shape}, {pred.shape}, {s.shape}.")
    if pd.isna(pd.Series(s)).any():
        raise DataError("`study` has missing labels.")
    for name, arr in (("y_true", y), ("y_pred", pred)):
        if ptypes.is_numeric_dtype(arr.dtype) and not np.all(np.isfinite(arr.astype(float))):
            raise DataError(f"`{name}` must be finite; found NaN or inf.")
    if proba is not None:
        proba = np.asarray(proba, float)
        if proba.ndim == 1:
            proba = np.column_stack([1.0 - proba, proba])
        if proba.shape[0] != n:
            raise DataError(f"`proba` must have {n} rows; got {proba.shape[0]}.")
        if np.any((proba < 0) | (proba > 1)) or not np.all(np.isfinite(proba)):
            raise DataError("`proba` must hold probabilities in [0, 1].")
        if classes is None:
            classes = tuple(np.unique(y).tolist())
            if len(classes) != proba.shape[1]:
                raise DataError(f"`proba` has {proba.shape[1]} columns but `y_true` has "
                                f"{len(classes)} classes; pass `classes`.")
    return _sort_units(s, y, pred, proba, classes, X, None, None, study_order)


def _check_finite(values: np.ndarray, name: str, rows=None) -> None:
    """Numeric outcomes/predictions must be finite (an infinite prediction has no utility)."""
    if not ptypes.is_numeric_dtype(values.dtype) or ptypes.is_bool_dtype(values.dtype):
        return
    bad = np.flatnonzero(np.isinf(values.astype(float)))
    if bad.size:
        where = (np.asarray(rows)[bad] if rows is not None else bad)[:5].tolist()
        raise DataError(f"column `{name}` holds {bad.size} infinite value"
                        f"{'s' if bad.size > 1 else ''} (rows {where}); replace "
                        f"{'them' if bad.size > 1 else 'it'} by a finite number.")


def _proba_label(col: str):
    raw = col[len("proba_"):]
    try:
        f = float(raw)
        return int(f) if f == int(f) else f
    except ValueError:
        return raw


@dropped("model_option")
def from_predictions(predictions, *, model=None, repeat: int | None = 0,
                     study_order=None) -> MultiStudyData:
    """Units from a :class:`~replikit.data.Predictions` table (one model, one repeat).

    The rule φ applied to the units of every study (Parmigiani 2023, sec. 2.3).

    Parameters
    ----------
    predictions : Predictions or DataFrame
        Columns ``study, model, repeat, fold, row, y_true, y_pred`` and optional ``proba_*``.
    model : str, optional
        Which model's predictions are the rule φ; required when the table holds several.
    repeat : int or None, default 0
        Which repeat to use when the table holds several (each row once per repeat); ``None``
        keeps every row (use when repeats hold different rows).
    study_order : sequence, optional
        Order of the studies in matrices (default: sorted labels).

    Returns
    -------
    MultiStudyData
        Columns other than the Predictions columns are kept in ``extra`` (subgroups).

    Raises
    ------
    DataError
        ``y_true`` or ``y_pred`` holds an infinite value.

    See Also
    --------
    load_predictions : Read a Predictions table from a file.
    from_arrays : From plain arrays.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": ["a", "a", "b"], "model": "lr", "repeat": 0, "fold": 0,
    ...                   "row": [0, 1, 2], "y_true": [1, 0, 1], "y_pred": [1, 1, 1]})
    >>> from_predictions(f).sizes.tolist()
    [2, 1]
    """
    table = predictions if isinstance(predictions, Predictions) else Predictions(predictions)
    f = table.frame
    models = list(pd.unique(f["model"]))
    if model is None:
        if len(models) > 1:
            raise ParameterError(f"`model`: the predictions hold {len(models)} models "
                                 f"({', '.join(map(str, models[:6]))}); name the rule to assess.")
        model = models[0]
    elif model not in models:
        raise ParameterError(f"`model`: {model!r} is not in the predictions; "
                             f"available: {', '.join(map(str, models))}.")
    f = f[f["model"] == model]
    repeats = np.unique(f["repeat"])
    if repeat is not None and repeats.size > 1:
        if repeat not in repeats:
            raise ParameterError(f"`repeat`: {repeat} is not in the predictions; available: "
                                 f"{repeats.tolist()}.")
        f = f[f["repeat"] == repeat]
    proba_cols = [c for c in f.columns if str(c).startswith("proba_")]
    proba = f[proba_cols].to_numpy(float) if proba_cols else None
    classes = tuple(_proba_label(c) for c in proba_cols) if proba_cols else None
    if proba is not None and np.isnan(proba).any():
        proba = None
        classes = None
    known = {"study", "model", "repeat", "fold", "row", "y_true", "y_pred", *proba_cols}
    extra_cols = [c for c in f.columns if c not in known]
    extra = f[extra_cols].reset_index(drop=True) if extra_cols else None
    y = f["y_true"].to_numpy()
    pred = f["y_pred"].to_numpy()
    for name, arr in (("y_true", y), ("y_pred", pred)):
        _check_finite(arr, name, f["row"].to_numpy())
    return _sort_units(f["study"].to_numpy(), y, pred, proba, classes, None,
                       f["row"].to_numpy(), extra, study_order)


def from_estimator(estimator, X, y, study, *, study_order=None) -> MultiStudyData:
    """Apply a fitted estimator φ to every study's units.

    Parameters
    ----------
    estimator : fitted scikit-learn estimator
        The fixed rule φ (Parmigiani 2023, sec. 3: trained without using S_1..S_K).
    X : DataFrame or array of shape (n, p)
        Features of every unit.
    y : array-like of shape (n,)
        Outcomes.
    study : array-like of shape (n,)
        Study label of each unit.
    study_order : sequence, optional
        Order of the studies in matrices (default: sorted labels).

    Returns
    -------
    MultiStudyData
        With ``proba`` when the estimator has ``predict_proba``.

    See Also
    --------
    from_arrays : When the predictions are already made.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> d = from_estimator(LogisticRegression().fit(X, y), X, y, ["a", "a", "b", "b"])
    >>> d.K, d.classes
    (2, (0, 1))
    """
    if not hasattr(estimator, "predict"):
        raise ParameterTypeError(f"`estimator` must have a `predict` method; got "
                                 f"{type(estimator).__name__}.")
    Xf = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    pred = np.asarray(estimator.predict(X))
    proba = classes = None
    if hasattr(estimator, "predict_proba") and hasattr(estimator, "classes_"):
        try:
            proba = np.asarray(estimator.predict_proba(X), float)
            classes = tuple(np.asarray(estimator.classes_).tolist())
        except (AttributeError, NotImplementedError):
            proba = None
    return from_arrays(y, pred, study, proba=proba, classes=classes, X=Xf,
                       study_order=study_order)


def as_study_data(data, *, model=None, repeat: int | None = 0, subgroup=None,
                  name: str = "data") -> MultiStudyData:
    """Normalize the accepted inputs into :class:`MultiStudyData` and apply ``subgroup``.

    ``subgroup`` is a boolean mask over the input rows (indexed like the caller's arrays, or by
    the ``row`` column of a Predictions table), the name of an extra column of a Predictions
    table (its truthy values are kept), or a callable taking the MultiStudyData and returning a
    mask over its (study-sorted) units.
    """
    if isinstance(data, MultiStudyData):
        d = data
    elif isinstance(data, (Predictions, pd.DataFrame)):
        d = from_predictions(data, model=model, repeat=repeat)
    else:
        raise ParameterTypeError(
            f"`{name}` must be a Predictions table, a DataFrame with its columns or a "
            f"MultiStudyData (from_arrays / from_estimator); got {type(data).__name__}.")
    if subgroup is None:
        return d
    if callable(subgroup):
        mask = np.asarray(subgroup(d))
    elif isinstance(subgroup, str):
        if d.extra is None or subgroup not in d.extra.columns:
            have = [] if d.extra is None else list(d.extra.columns)
            raise DataError(f"`subgroup`: no column {subgroup!r} among the extra columns {have}.")
        mask = d.extra[subgroup].astype(bool).to_numpy()
    else:
        mask = np.asarray(subgroup)
        if mask.dtype != bool or mask.ndim != 1 or mask.size <= int(d.row.max()):
            raise DataError(
                f"`subgroup` must be a boolean mask over the input rows (length > "
                f"{int(d.row.max())}), a column name or a callable; got dtype {mask.dtype}, "
                f"shape {mask.shape}.")
        mask = mask[d.row]  # the mask is in the caller's row order; units are sorted by study
    return d.subset(mask)


def study_labels_as_text(col: pd.Series) -> pd.Series:
    """Study labels as text, as a reader wrote them.

    Integer-valued numbers lose their '.0' (1978.0 -> '1978'), other floats keep every digit
    they need (1.0000001 and 1.0000002 stay apart); text stays as written.

    Parameters
    ----------
    col : pandas.Series
        The study column.

    Returns
    -------
    pandas.Series
        The labels as text (missing values kept).

    See Also
    --------
    load_predictions : Reads study columns this way.

    Examples
    --------
    >>> import pandas as pd
    >>> study_labels_as_text(pd.Series([1978.0, 1.5])).tolist()
    ['1978', '1.5']
    """
    if ptypes.is_bool_dtype(col):
        return col.astype(str)
    if ptypes.is_float_dtype(col):
        def fmt(v):
            if pd.isna(v):
                return v
            return str(int(v)) if float(v).is_integer() else repr(float(v))
        return col.map(fmt)
    if ptypes.is_integer_dtype(col):
        return col.astype(str)
    return col


@dropped("study_option")
def load_predictions(path, *, study: str = "study", table: str | None = None,
                     min_studies: int = 1) -> Predictions:
    """Read a rule's predictions from CSV, Parquet or DuckDB as a Predictions table.

    The rule φ applied to the units of studies S_1..S_K (Parmigiani 2023). The file needs ``y_true``, ``y_pred`` and a study column (``study`` names it; it becomes the
    ``study`` column). Missing key columns are filled for a single fixed rule: ``model='rule'``,
    ``repeat=0``, ``fold=0`` and ``row`` = the line number.

    Study labels are kept as written in a CSV file: '5', '05' and '5.0' are three studies, not
    the number 5 (a :class:`~replikit.errors.ReplikitWarning` lists labels that differ only as
    written, in number format, case or surrounding spaces). Numeric study columns of Parquet or
    DuckDB files become text with every digit they need.

    Parameters
    ----------
    path : str or Path
        The file.
    study : str, default 'study'
        The column of study labels.
    table : str, optional
        The table inside a DuckDB file.
    min_studies : int, default 1
        Distinct study labels required (2 for replicability across studies).

    Returns
    -------
    Predictions
        With columns ``study, model, repeat, fold, row, y_true, y_pred`` and any others.

    Raises
    ------
    DataError
        The study column or ``y_true``/``y_pred`` is missing, ``y_true``/``y_pred`` holds an
        infinite value, or the study column has fewer than ``min_studies`` distinct labels.

    See Also
    --------
    from_predictions : The units of one rule from the table.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "preds.csv"
    >>> _ = path.write_text("site,y_true,y_pred\\n1978,1,1\\n1978,0,1\\n1980,1,0\\n")
    >>> p = load_predictions(path, study="site", min_studies=2)
    >>> p.frame[["study", "model", "y_true"]].values.tolist()
    [['1978', 'rule', 1], ['1978', 'rule', 0], ['1980', 'rule', 1]]
    """
    from ..data.io import read_frame

    frame = read_frame(path, table=table, dtype={"model": str, study: str})
    if study not in frame.columns:
        raise DataError(f"`study`: no column {study!r} in {path}; available columns: "
                        f"{names_list(frame.columns)}.")
    if study != "study":
        if "study" in frame.columns:
            frame = frame.drop(columns="study")
        frame = frame.rename(columns={study: "study"})
    frame["study"] = study_labels_as_text(frame["study"])
    labels = pd.unique(frame["study"].dropna())
    if len(labels) < min_studies:
        raise DataError(f"`study`: column {study!r} holds {len(labels)} distinct "
                        f"stud{'y' if len(labels) == 1 else 'ies'} "
                        f"({', '.join(map(repr, labels[:5]))}); at least {min_studies} are "
                        "needed to compare studies.")
    for group in lookalike_labels(pd.unique(frame["study"].dropna())):
        shown = ", ".join(repr(g) for g in group[:5]) + (" ..." if len(group) > 5 else "")
        warnings.warn(f"`study`: study labels {shown} differ only as written (number "
                      "format, case or spaces); they are kept as separate studies",
                      ReplikitWarning, stacklevel=2)
    for col in ("y_true", "y_pred"):
        if col in frame.columns:
            _check_finite(frame[col].to_numpy(), col)
    defaults = {"model": "rule", "repeat": 0, "fold": 0}
    for col, value in defaults.items():
        if col not in frame.columns:
            frame[col] = value
    if "row" not in frame.columns:
        frame["row"] = np.arange(len(frame))
    return Predictions(frame)
