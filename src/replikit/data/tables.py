"""The two tidy tables every capability reads: :class:`Scores` and :class:`Predictions`.

``Scores``
    one row per ``(study, model, repeat, fold, metric)`` — columns ``study``, ``model``,
    ``repeat`` (optional: without it, one repeat), ``fold``, ``metric``, ``value``,
    ``n_train``, ``n_test`` and any factor columns a user adds (``dataset``, ``tuning``, ...).
    Non-float extra columns are part of the key.
``Predictions``
    one row per ``(study, model, repeat, fold, row)`` — ``y_true``, ``y_pred`` and ``proba_*``
    (class probabilities) where the model has them; for a survival outcome ``y_true`` is the
    follow-up time, ``event`` its event indicator and ``y_pred`` the predicted risk.

Both validate on construction: required columns, dtypes, missing values and duplicated keys.
Error messages name the column and show the first offending rows. The validated DataFrame is
available as ``.frame`` (a copy: the caller's DataFrame is never modified).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .._compat import dropped
from ..errors import DataError, ParameterTypeError
from .io import _read, _write

__all__ = ["Scores", "Predictions", "ColumnSpec", "metric_range", "METRIC_RANGES"]

_SHOW = 5  # offending rows shown in messages


@dataclass(frozen=True)
class ColumnSpec:
    """What a column must hold.

    kind: ``'label'`` (strings or integers: names and ids), ``'int'`` (integers >= ``min``),
    ``'float'`` (real numbers), ``'any'`` (numbers or strings, e.g. class labels).
    """

    name: str
    kind: str
    required: bool = True
    nullable: bool = False
    min: float | None = None
    max: float | None = None


def _show(value) -> str:
    """repr of a cell, with numpy scalars shown as plain Python values."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _rows(mask: np.ndarray, index: pd.Index) -> str:
    idx = index[np.asarray(mask)]
    shown = ", ".join(str(i) for i in idx[:_SHOW])
    more = f" and {len(idx) - _SHOW} more" if len(idx) > _SHOW else ""
    return f"row(s) {shown}{more} (0-based)"


def _check_column(frame: pd.DataFrame, spec: ColumnSpec, table: str) -> pd.Series:
    col = frame[spec.name]
    missing = col.isna().to_numpy()
    if missing.any() and not spec.nullable:
        raise DataError(
            f"{table}: column `{spec.name}` has {int(missing.sum())} missing value(s) at "
            f"{_rows(missing, frame.index)}."
        )
    if spec.kind == "float" or spec.kind == "int":
        if ptypes.is_bool_dtype(col) or not ptypes.is_numeric_dtype(col):
            coerced = pd.to_numeric(col, errors="coerce")
            bad = (coerced.isna() & ~missing).to_numpy()
            example = col[bad].iloc[0] if bad.any() else None
            raise DataError(
                f"{table}: column `{spec.name}` must be numeric; found dtype {col.dtype} "
                f"with non-numeric value {_show(example)} at {_rows(bad, frame.index)}."
            )
        values = col.to_numpy(dtype=float, na_value=np.nan)
        if spec.kind == "float":
            inf = np.isinf(values)
            if inf.any():
                raise DataError(
                    f"{table}: column `{spec.name}` must be finite; found inf at "
                    f"{_rows(inf, frame.index)}."
                )
        if spec.kind == "int":
            frac = ~np.isnan(values) & (values != np.round(values))
            if frac.any():
                raise DataError(
                    f"{table}: column `{spec.name}` must hold integers; found "
                    f"{_show(col[frac].iloc[0])} at {_rows(frac, frame.index)}."
                )
        for bound, op, word in ((spec.min, np.less, ">="), (spec.max, np.greater, "<=")):
            if bound is not None:
                bad = op(values, bound) & ~np.isnan(values)
                if bad.any():
                    raise DataError(
                        f"{table}: column `{spec.name}` must be {word} {bound:g}; found "
                        f"{_show(col[bad].iloc[0])} at {_rows(bad, frame.index)}."
                    )
        if spec.kind == "int":
            return col.astype("Int64") if spec.nullable else col.astype("int64")
        return col.astype("float64")
    if spec.kind == "label":
        if ptypes.is_float_dtype(col) or ptypes.is_bool_dtype(col):
            raise DataError(
                f"{table}: column `{spec.name}` must hold names (strings) or integer ids; "
                f"found dtype {col.dtype}."
            )
        if ptypes.is_object_dtype(col):
            bad = ~col.map(lambda v: isinstance(v, (str, int, np.integer))).to_numpy() & ~missing
            if bad.any():
                raise DataError(
                    f"{table}: column `{spec.name}` must hold names (strings) or integer ids; "
                    f"found {_show(col[bad].iloc[0])} ({type(col[bad].iloc[0]).__name__}) at "
                    f"{_rows(bad, frame.index)}."
                )
        return col
    # 'any': numbers, booleans or strings, but one kind throughout
    if ptypes.is_object_dtype(col):
        kinds = col.dropna().map(lambda v: "num" if isinstance(v, (int, float, np.number)) else type(v).__name__)
        if kinds.nunique() > 1:
            raise DataError(
                f"{table}: column `{spec.name}` mixes value types ({', '.join(sorted(kinds.unique()))})."
            )
    return col


#: The layout of a survival outcome as estimators take it: scikit-survival's (``sksurv.util.Surv``)
#: structured array, the event indicator first, then the time.
SURVIVAL_DTYPE = np.dtype([("event", "?"), ("time", "<f8")])


def survival_array(time, event) -> np.ndarray:
    """``time`` and ``event`` (already checked) as one :data:`SURVIVAL_DTYPE` array."""
    out = np.empty(len(time), dtype=SURVIVAL_DTYPE)
    out["event"], out["time"] = np.asarray(event, bool), np.asarray(time, float)
    return out


class _Table:
    """Shared machinery of Scores and Predictions."""

    NAME: ClassVar[str]
    COLUMNS: ClassVar[tuple[ColumnSpec, ...]]
    KEY: ClassVar[tuple[str, ...]]
    PATTERN_COLUMNS: ClassVar[tuple[tuple[str, ColumnSpec], ...]] = ()

    __slots__ = ("_frame",)

    def __init__(self, frame: pd.DataFrame) -> None:
        if isinstance(frame, _Table):
            frame = frame.frame
        if not isinstance(frame, pd.DataFrame):
            raise ParameterTypeError(
                f"{self.NAME} needs a pandas DataFrame; got {type(frame).__name__}."
            )
        self._frame = self._validate(frame)

    # -- validation ---------------------------------------------------------------------------
    @classmethod
    def _validate(cls, frame: pd.DataFrame) -> pd.DataFrame:
        table = cls.NAME
        if frame.columns.duplicated().any():
            dup = frame.columns[frame.columns.duplicated()].tolist()
            raise DataError(f"{table}: duplicated column name(s) {dup}.")
        required = [c.name for c in cls.COLUMNS if c.required]
        missing = [c for c in required if c not in frame.columns]
        if missing:
            raise DataError(
                f"{table}: missing required column(s) {', '.join(repr(m) for m in missing)}; "
                f"found columns {list(map(str, frame.columns))}."
            )
        if len(frame) == 0:
            raise DataError(f"{table}: the table is empty (0 rows).")
        out = frame.reset_index(drop=True)  # a new object: the caller's frame is never modified
        for spec in cls.COLUMNS:
            if spec.name in out.columns:
                out[spec.name] = _check_column(out, spec, table)
        for prefix, spec in cls.PATTERN_COLUMNS:
            for name in [c for c in out.columns if str(c).startswith(prefix)]:
                sub = ColumnSpec(name, spec.kind, nullable=spec.nullable, min=spec.min, max=spec.max)
                out[name] = _check_column(out, sub, table)
        key = list(cls.key_columns(out))
        dup = out.duplicated(subset=key, keep=False).to_numpy()
        if dup.any():
            first = out.loc[dup, key].head(_SHOW).to_dict("records")
            raise DataError(
                f"{table}: {int(dup.sum())} rows share a key ({', '.join(f'`{k}`' for k in key)}); "
                f"each key must appear once. First duplicates at {_rows(dup, out.index)}: {first}."
            )
        return out

    @classmethod
    def key_columns(cls, frame: pd.DataFrame) -> tuple[str, ...]:
        """The key columns: the table's fixed key plus extra non-float factor columns."""
        known = {c.name for c in cls.COLUMNS}
        extra = [
            c for c in frame.columns
            if c not in known
            and not any(str(c).startswith(p) for p, _ in cls.PATTERN_COLUMNS)
            and not ptypes.is_float_dtype(frame[c])
        ]
        return tuple(cls.KEY) + tuple(extra)

    # -- access -------------------------------------------------------------------------------
    @property
    def frame(self) -> pd.DataFrame:
        """The validated table (a copy, so changing it cannot corrupt this object)."""
        return self._frame.copy()

    def to_frame(self) -> pd.DataFrame:
        """The validated table (a copy).

        Returns
        -------
        pandas.DataFrame
            The same as :attr:`frame`.
        """
        return self.frame

    def __len__(self) -> int:
        return len(self._frame)

    def __repr__(self) -> str:
        return f"{self.NAME}({len(self)} rows, columns={list(self._frame.columns)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._frame.equals(other._frame)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def concat(cls, tables: Iterable[_Table]):
        """Stack several tables of this kind into one (validated again, so keys must not clash)."""
        frames = [t.frame if isinstance(t, _Table) else t for t in tables]
        return cls(pd.concat(frames, ignore_index=True))

    # -- IO -----------------------------------------------------------------------------------
    _CSV_DTYPES: ClassVar[dict] = {"model": str, "metric": str}

    @classmethod
    def read(cls, path: str | os.PathLike, *, table: str | None = None):
        """Read a table from CSV, Parquet or a DuckDB file (table ``table``) and validate it.

        Parameters
        ----------
        path : path-like
            The file; its suffix picks the reader.
        table : str, optional
            The table inside a DuckDB file (may be left out when it holds one).

        Returns
        -------
        Scores or Predictions
            The validated table.
        """
        frame = _read(path, table, cls._CSV_DTYPES, "path")
        return cls(frame)

    @dropped("name", "overwrite_option")
    def write(self, path: str | os.PathLike, *, table: str | None = None,
              overwrite: bool = False) -> Path:
        """Write to CSV, Parquet or a DuckDB table (default name: ``scores``/``predictions``).

        An existing file (CSV/Parquet) or table (DuckDB) is replaced only with ``overwrite``;
        messages name `path` and `overwrite`. See :func:`replikit.data.io.write_frame`.

        Parameters
        ----------
        path : path-like
            The file; its suffix picks the format.
        table : str, optional
            The table inside a DuckDB file.
        overwrite : bool, default False
            Replace an existing file or table.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        return _write(self._frame, path, table or self.NAME.lower(), overwrite, "path",
                      "`overwrite`")


#: The values a metric can take, ``(low, high)`` (None: unbounded), for the metrics replikit
#: knows: its built-ins and scikit-learn's scorers (by name, or by prefix for the ``f1_macro``
#: kind). A Scores row outside its metric's range is refused: it is a typo, a percentage where a
#: proportion belongs, or a loss with its sign flipped, and every test run on it would be
#: meaningless. A metric not listed here is not checked.
METRIC_RANGES: dict[str, tuple[float | None, float | None]] = {
    "accuracy": (0.0, 1.0), "balanced_accuracy": (0.0, 1.0), "error_rate": (0.0, 1.0),
    "roc_auc": (0.0, 1.0), "auc": (0.0, 1.0), "r2_corr": (0.0, 1.0), "average_precision": (0.0, 1.0),
    "top_k_accuracy": (0.0, 1.0), "r2": (None, 1.0), "explained_variance": (None, 1.0),
    "d2_absolute_error_score": (None, 1.0), "matthews_corrcoef": (-1.0, 1.0),
    "mse": (0.0, None), "rmse": (0.0, None), "mae": (0.0, None), "log_loss": (0.0, None),
    "brier_score": (0.0, 1.0),
}
#: Metric-name prefixes and their range: scikit-learn's averaged scores (``f1_macro``,
#: ``roc_auc_ovr``, ``precision_weighted``) and its negated losses (``neg_mean_squared_error``,
#: ``neg_log_loss``: never above 0).
METRIC_PREFIX_RANGES: tuple[tuple[str, tuple[float | None, float | None]], ...] = (
    ("f1", (0.0, 1.0)), ("precision", (0.0, 1.0)), ("recall", (0.0, 1.0)),
    ("jaccard", (0.0, 1.0)), ("roc_auc_", (0.0, 1.0)), ("neg_", (None, 0.0)),
)
_RANGE_SLACK = 1e-9  # rounding of exported values (an AUC of 1.0000000000000002)


def metric_range(metric) -> tuple[float | None, float | None] | None:
    """The ``(low, high)`` range of a known metric's values (None for either bound: open), or
    None for a metric replikit does not know.

    Examples
    --------
    >>> metric_range("accuracy"), metric_range("mse"), metric_range("f1_macro")
    ((0.0, 1.0), (0.0, None), (0.0, 1.0))
    >>> metric_range("my_score") is None
    True
    """
    name = str(metric)
    if name in METRIC_RANGES:
        return METRIC_RANGES[name]
    for prefix, bounds in METRIC_PREFIX_RANGES:
        if name.startswith(prefix):
            return bounds
    return None


def _range_text(bounds) -> str:
    low, high = bounds
    if low is not None and high is not None:
        return f"in [{low:g}, {high:g}]"
    return f">= {low:g}" if low is not None else f"<= {high:g}"


def _check_metric_ranges(frame: pd.DataFrame) -> None:
    """Each ``value`` inside its metric's range (:func:`metric_range`); a DataError naming the
    column, the metric, the first offending value and its rows otherwise."""
    values = frame["value"].to_numpy(dtype=float)
    for metric, idx in frame.groupby("metric", sort=False, observed=True).indices.items():
        bounds = metric_range(metric)
        if bounds is None:
            continue
        low, high = bounds
        v = values[idx]
        bad = np.zeros(len(v), bool)
        if low is not None:
            bad |= v < low - _RANGE_SLACK
        if high is not None:
            bad |= v > high + _RANGE_SLACK
        if not bad.any():
            continue
        mask = np.zeros(len(frame), bool)
        mask[idx[bad]] = True
        first = v[bad][0]
        hint = ""
        if high == 1.0 and low == 0.0 and np.all((v >= 0) & (v <= 100)) and np.median(v) > 1:
            hint = " (percentages? give proportions: 87.5% is 0.875)"
        elif low == 0.0 and high is None and np.all(v <= 0):
            hint = (" (a negated loss, as scikit-learn's scorers report it? give the loss "
                    "itself, without the minus sign)")
        raise DataError(
            f"Scores: column `value` holds {first:g} for metric {str(metric)!r} at "
            f"{_rows(mask, frame.index)}; expected values {_range_text(bounds)} for "
            f"{str(metric)!r}{hint}.")


class Scores(_Table):
    """Resampling scores: one row per ``(study, model, repeat, fold, metric)``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``study``, ``model``, ``repeat``, ``fold``, ``metric``, ``value`` (without
        ``repeat`` the table is one repeat: ``repeat`` 0); optionally ``n_train``,
        ``n_test`` (training/test set sizes, needed by corrected resampled tests) and any
        factor columns. ``value`` must be finite, and inside its metric's range when replikit
        knows the metric (:func:`metric_range`: an accuracy or AUC in [0, 1], an ``r2`` at
        most 1, an ``mse``, ``rmse``, ``mae`` or ``log_loss`` at least 0, a ``neg_*``
        scikit-learn score at most 0); ``repeat``/``fold`` non-negative integers.

    Raises
    ------
    DataError
        A required column is missing, a column has the wrong dtype, ``value`` is missing, not
        finite or outside its metric's range, a key appears twice or the table is empty.

    See Also
    --------
    Predictions : The out-of-sample predictions table.
    replikit.experiment.run : Makes both.
    replikit.data.foreign.read_scores : Reads mlr3 and Weka Experimenter exports as Scores.

    Examples
    --------
    >>> import pandas as pd
    >>> s = Scores(pd.DataFrame({"study": "s", "model": ["a", "b"], "repeat": 0, "fold": 0,
    ...                          "metric": "accuracy", "value": [0.8, 0.7]}))
    >>> len(s)
    2
    """

    NAME = "Scores"
    COLUMNS = (
        ColumnSpec("study", "label"),
        ColumnSpec("model", "label"),
        ColumnSpec("repeat", "int", min=0),
        ColumnSpec("fold", "int", min=0),
        ColumnSpec("metric", "label"),
        ColumnSpec("value", "float"),
        ColumnSpec("n_train", "int", required=False, nullable=True, min=0),
        ColumnSpec("n_test", "int", required=False, nullable=True, min=0),
    )
    KEY = ("study", "model", "repeat", "fold", "metric")

    @classmethod
    def _validate(cls, frame: pd.DataFrame) -> pd.DataFrame:
        if "repeat" not in frame.columns and "fold" in frame.columns:
            # a table without repeats (an mlr3 or Weka-style export of one K-fold CV) is one
            # repeat; a new frame, so the caller's is not modified
            at = list(frame.columns).index("fold")
            frame = frame.copy()
            frame.insert(at, "repeat", 0)
        out = super()._validate(frame)
        _check_metric_ranges(out)
        return out

    @property
    def models(self) -> list:
        return list(pd.unique(self._frame["model"]))

    @property
    def metrics(self) -> list:
        return list(pd.unique(self._frame["metric"]))

    @property
    def studies(self) -> list:
        return list(pd.unique(self._frame["study"]))


class Predictions(_Table):
    """Out-of-sample predictions: one row per ``(study, model, repeat, fold, row)``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``study``, ``model``, ``repeat``, ``fold``, ``row`` (the index of the observation
        in the data), ``y_true``, ``y_pred``; optionally ``proba_<class>`` columns in [0, 1],
        and for a survival outcome ``event`` (True/1 where ``y_true`` is an event time, False/0
        where it is a censoring time; ``y_pred`` is then a risk score).

    Raises
    ------
    DataError
        As for :class:`Scores`; also a ``proba_*`` value outside [0, 1].

    See Also
    --------
    Scores : The scores table.
    replikit.experiment.run : Makes both.

    Examples
    --------
    >>> import pandas as pd
    >>> p = Predictions(pd.DataFrame({"study": "s", "model": "lr", "repeat": 0, "fold": 0,
    ...                               "row": [0, 1], "y_true": [1, 0], "y_pred": [1, 1],
    ...                               "proba_1": [0.8, 0.6]}))
    >>> p.proba_columns, len(p)
    (['proba_1'], 2)
    """

    NAME = "Predictions"

    @classmethod
    def _validate(cls, frame: pd.DataFrame) -> pd.DataFrame:
        if "event" in frame.columns and ptypes.is_bool_dtype(frame["event"]):
            frame = frame.assign(event=frame["event"].astype("int64"))  # True/False -> 1/0
        return super()._validate(frame)

    COLUMNS = (
        ColumnSpec("study", "label"),
        ColumnSpec("model", "label"),
        ColumnSpec("repeat", "int", min=0),
        ColumnSpec("fold", "int", min=0),
        ColumnSpec("row", "int", min=0),
        ColumnSpec("y_true", "any"),
        ColumnSpec("y_pred", "any"),
        ColumnSpec("event", "int", required=False, min=0, max=1),
    )
    PATTERN_COLUMNS = (("proba_", ColumnSpec("proba_", "float", min=0.0, max=1.0)),)
    KEY = ("study", "model", "repeat", "fold", "row")
    _CSV_DTYPES: ClassVar[dict] = {"model": str}

    @property
    def proba_columns(self) -> list[str]:
        return [c for c in self._frame.columns if str(c).startswith("proba_")]

    @property
    def models(self) -> list:
        return list(pd.unique(self._frame["model"]))

    @property
    def studies(self) -> list:
        return list(pd.unique(self._frame["study"]))
