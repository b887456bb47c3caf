"""The paired design of two models: their scores on the same resampling splits.

Every test of :mod:`replikit.compare.resampled` starts here. :func:`paired_scores` takes a
Scores table (or a DataFrame in its layout, or a :class:`~replikit.experiment.RunResult`),
picks one study and one metric, and lines up the two models' scores split by split into
``repeat x fold`` matrices. The models must have been evaluated on the same splits: otherwise
the differences would not be paired, and :func:`paired_scores` raises a
:class:`~replikit.errors.DataError` naming the splits one of them lacks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.tables import Scores
from ..errors import DataError, ParameterError, ParameterTypeError

__all__ = ["Paired", "paired_scores"]

_SHOW = 6  # splits listed in messages


def _as_matrix(values, name: str, shape: tuple[int, int] | None = None,
               *, allow_nan: bool = False) -> np.ndarray:
    try:
        arr = np.array(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"`{name}` must be numeric; could not convert it ({exc}).") from None
    if shape is not None and arr.ndim == 0:
        arr = np.full(shape, float(arr))
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise DataError(f"`{name}` must be a (repeat x fold) matrix; got shape {arr.shape}.")
    if shape is not None and arr.shape != shape:
        raise DataError(f"`{name}` must have shape {shape} like `a_scores`; got {arr.shape}.")
    if arr.size == 0:
        raise DataError(f"`{name}` is empty.")
    if not allow_nan and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[:_SHOW].tolist()
        raise DataError(f"`{name}` must be finite; found NaN/inf at (repeat, fold) {bad}.")
    return arr


@dataclass(frozen=True)
class Paired:
    """Scores of two models on the same ``r x k`` splits (``r`` repeats of ``k`` folds).

    Attributes
    ----------
    a_scores, b_scores : ndarray of shape (r, k)
        The metric of model ``a`` and model ``b`` on each split; finite. Hold-out repeats and
        bootstrap resamples are ``(r, 1)``; one run of k-fold cross-validation is ``(1, k)``.
    n_train, n_test : ndarray of shape (r, k)
        Training and test set sizes of each split (NaN where unknown).
    a, b, metric : str
        Names of the two models and of the metric.
    study : object or None
        The study the scores come from.

    Notes
    -----
    Build it from a Scores table with :func:`paired_scores`, or directly from arrays; 1-D
    arrays are read as one repeat (shape ``(1, n)``) and scalar sizes are broadcast.

    Examples
    --------
    >>> p = Paired([[0.81, 0.79], [0.80, 0.83]], [[0.78, 0.80], [0.77, 0.79]],
    ...            n_train=50, n_test=50, a="rf", b="lr", metric="accuracy")
    >>> p.d.round(2).tolist()
    [[0.03, -0.01], [0.03, 0.04]]
    """

    a_scores: np.ndarray
    b_scores: np.ndarray
    n_train: np.ndarray | None = None
    n_test: np.ndarray | None = None
    a: str = "a"
    b: str = "b"
    metric: str = ""
    study: object | None = None

    def __post_init__(self) -> None:
        a = _as_matrix(self.a_scores, "a_scores")
        b = _as_matrix(self.b_scores, "b_scores", a.shape)
        n_train = _as_matrix(np.nan if self.n_train is None else self.n_train, "n_train",
                             a.shape, allow_nan=True)
        n_test = _as_matrix(np.nan if self.n_test is None else self.n_test, "n_test",
                            a.shape, allow_nan=True)
        for name, arr in (("n_train", n_train), ("n_test", n_test)):
            if np.any(arr[~np.isnan(arr)] < 1):
                raise DataError(f"`{name}` must be >= 1 where known; got {np.nanmin(arr):g}.")
        for name, arr in (("a_scores", a), ("b_scores", b), ("n_train", n_train),
                          ("n_test", n_test)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def d(self) -> np.ndarray:
        """Differences ``a_scores - b_scores``, shape ``(r, k)``."""
        return self.a_scores - self.b_scores

    @property
    def shape(self) -> tuple[int, int]:
        """``(r, k)``: repeats and folds per repeat."""
        return self.a_scores.shape

    @property
    def n(self) -> int:
        """Number of splits, ``r · k``."""
        return int(self.a_scores.size)

    @property
    def ratio(self) -> float:
        """``n_test / n_train`` from the recorded sizes: ``mean(n_test) / mean(n_train)``.

        NaN when a size is unknown. For k equal folds this is exactly ``1 / (k - 1)``.
        """
        if np.isnan(self.n_train).any() or np.isnan(self.n_test).any():
            return float("nan")
        return float(self.n_test.mean() / self.n_train.mean())

    def swap(self) -> Paired:
        """The same design with ``a`` and ``b`` exchanged."""
        return Paired(self.b_scores, self.a_scores, self.n_train, self.n_test, self.b, self.a,
                      self.metric, self.study)


def _frame_of(scores) -> pd.DataFrame:
    if isinstance(scores, Scores):
        return scores.frame
    if isinstance(scores, pd.DataFrame):
        return Scores(scores).frame
    inner = getattr(scores, "scores", None)
    if isinstance(inner, Scores):  # a RunResult
        return inner.frame
    raise ParameterTypeError(
        "`scores` must be a replikit Scores table, a pandas DataFrame in the Scores layout, a "
        f"RunResult or a Paired design; got {type(scores).__name__}."
    )


def _pick(frame: pd.DataFrame, column: str, value, name: str, context: str = ""):
    present = list(pd.unique(frame[column]))
    if value is None:
        if len(present) == 1:
            return present[0]
        raise ParameterError(
            f"`{name}` is required when several are present{context}: found {len(present)} "
            f"{column} values {present[:20]}."
        )
    if value not in present:
        # labels may be ints in the table but strings from a command line
        as_text = {str(p): p for p in present}
        if str(value) in as_text:
            return as_text[str(value)]
        raise DataError(f"{name} {value!r} not found{context}; {column} values present: "
                        f"{present[:20]}.")
    return value


def _splits_text(pairs) -> str:
    pairs = list(pairs)
    shown = ", ".join(f"({int(r)}, {int(f)})" for r, f in pairs[:_SHOW])
    more = f" and {len(pairs) - _SHOW} more" if len(pairs) > _SHOW else ""
    return shown + more


def paired_scores(scores, a=None, b=None, *, metric=None, study=None) -> Paired:
    """Line up two models' scores split by split.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        Resampling scores in the Scores layout (``study, model, repeat, fold, metric, value`` and
        optionally ``n_train, n_test``). A :class:`Paired` is returned unchanged.
    a, b : str, optional
        The two models; ``a - b`` is the difference tested. Both may be omitted when the table
        (for the chosen study and metric) holds exactly two models.
    metric : str, optional
        Required when the table holds several metrics.
    study : optional
        Required when the table holds several studies.

    Returns
    -------
    Paired
        ``r x k`` matrices of the two models' scores and of the split sizes, repeats in
        ascending order and, within a repeat, folds in ascending order of their labels.

    Raises
    ------
    ParameterError
        ``metric`` or ``study`` omitted while several are present (the message lists them), or
        ``a`` and ``b`` omitted while the table does not hold exactly two models.
    DataError
        A model, metric or study is absent (the message lists those present); the two models
        were not evaluated on the same splits (the message names the (repeat, fold) splits each
        one lacks, or the splits whose sizes differ); repeats have different numbers of folds;
        or a (repeat, fold) appears twice for a model (e.g. a factor column such as ``dataset``
        still splits the table: filter it first).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"study": "s", "model": ["rf", "lr"] * 2, "repeat": 0,
    ...                       "fold": [0, 0, 1, 1], "metric": "accuracy",
    ...                       "value": [0.82, 0.80, 0.79, 0.78], "n_train": 50, "n_test": 50})
    >>> p = paired_scores(frame, "rf", "lr")
    >>> p.shape, p.d.round(2).tolist()
    ((1, 2), [[0.02, 0.01]])
    """
    if isinstance(scores, Paired):
        return scores
    return _pair(_frame_of(scores), a, b, metric=metric, study=study)


def _pair(frame: pd.DataFrame, a, b, *, metric, study) -> Paired:
    """:func:`paired_scores` on an already validated Scores frame (no re-validation: callers
    that pair many models, such as ``compare_scores``, validate the table once)."""
    study = _pick(frame, "study", study, "study")
    frame = frame[frame["study"] == study]
    where = f" in study {study!r}"
    metric = _pick(frame, "metric", metric, "metric", where)
    frame = frame[frame["metric"] == metric]
    where = f" for metric {metric!r} in study {study!r}"
    models = list(pd.unique(frame["model"]))
    if a is None and b is None:
        if len(models) != 2:
            raise ParameterError(
                f"`a` and `b` (the two models to compare) are required unless exactly two models "
                f"are present; found {len(models)}{where}: {models[:20]}."
            )
        a, b = models
    elif a is None or b is None:
        raise ParameterError("give both `a` and `b` (the two models to compare), or neither; "
                             f"got a={a!r}, b={b!r}.")
    a = _pick(frame, "model", a, "model", where)
    b = _pick(frame, "model", b, "model", where)
    if a == b:
        raise ParameterError(f"`a` and `b` must be two different models; got {a!r} twice.")

    parts = {name: _model_part(frame, name, where) for name in (a, b)}
    return _align(parts[a], parts[b], a, b, metric=metric, study=study, where=where)


def _model_part(frame: pd.DataFrame, name, where: str) -> pd.DataFrame:
    """One model's ``repeat, fold, value[, n_train, n_test]`` rows of a (study, metric) block,
    checked for duplicated splits."""
    cols = ["repeat", "fold", "value"] + [c for c in ("n_train", "n_test") if c in frame.columns]
    part = frame.loc[frame["model"] == name, cols]
    dup = part.duplicated(["repeat", "fold"], keep=False).to_numpy()
    if dup.any():
        extra = [c for c in Scores.key_columns(frame) if c not in Scores.KEY]
        hint = (f"; the factor column(s) {extra} still split the table: select one level"
                if extra else "")
        raise DataError(
            f"model {name!r} has several scores for the same (repeat, fold){where}: "
            f"{_splits_text(part.loc[dup, ['repeat', 'fold']].drop_duplicates().to_numpy())}"
            f"{hint}."
        )
    return part


def _align(part_a: pd.DataFrame, part_b: pd.DataFrame, a, b, *, metric, study,
           where: str) -> Paired:
    """Line up two models' parts (from :func:`_model_part`) split by split."""
    parts = {a: part_a, b: part_b}
    cols = list(part_a.columns)
    # (repeat, fold) -> one integer code per split, ordered by repeat then fold label
    both = pd.concat([parts[a], parts[b]], ignore_index=True)
    r_codes, r_levels = pd.factorize(both["repeat"], sort=True)
    f_codes, f_levels = pd.factorize(both["fold"], sort=True)
    n_f = len(f_levels)
    code = r_codes.astype(np.int64) * n_f + f_codes
    n_a = len(parts[a])
    ka, kb = code[:n_a], code[n_a:]
    keys = np.union1d(ka, kb)

    def labels(codes):
        return np.column_stack([np.asarray(r_levels)[codes // n_f],
                                np.asarray(f_levels)[codes % n_f]])

    only_a, only_b = np.setdiff1d(ka, kb), np.setdiff1d(kb, ka)
    if len(only_a) or len(only_b):
        lacks = []
        if len(only_a):
            lacks.append(f"{b!r} lacks {len(only_a)} split(s) (repeat, fold) "
                         f"{_splits_text(labels(only_a))}")
        if len(only_b):
            lacks.append(f"{a!r} lacks {len(only_b)} split(s) (repeat, fold) "
                         f"{_splits_text(labels(only_b))}")
        raise DataError(
            f"models {a!r} and {b!r} were not evaluated on the same splits{where}: "
            + "; ".join(lacks) + ". Paired tests need both models scored on every split."
        )
    pos_a, pos_b = np.searchsorted(keys, ka), np.searchsorted(keys, kb)

    def aligned(name, pos, col):
        out = np.full(keys.size, np.nan)
        out[pos] = parts[name][col].to_numpy(dtype=float, na_value=np.nan)
        return out

    sizes = {}
    for col in ("n_train", "n_test"):
        if col not in cols:
            sizes[col] = np.full(keys.size, np.nan)
            continue
        va, vb = aligned(a, pos_a, col), aligned(b, pos_b, col)
        differ = ~np.isnan(va) & ~np.isnan(vb) & (va != vb)
        if differ.any():
            raise DataError(
                f"models {a!r} and {b!r} were not evaluated on the same splits{where}: `{col}` "
                f"differs at (repeat, fold) {_splits_text(labels(keys[differ]))}."
            )
        sizes[col] = np.where(np.isnan(va), vb, va)
    repeats, counts = np.unique(keys // n_f, return_counts=True)
    if np.unique(counts).size != 1:
        desc = ", ".join(f"repeat {np.asarray(r_levels)[r]}: {int(c)}"
                         for r, c in zip(repeats, counts, strict=True))
        raise DataError(
            f"the splits of {a!r} and {b!r}{where} are not a repeat x fold grid: repeats have "
            f"different numbers of folds ({desc[:300]})."
        )
    shape = (len(repeats), int(counts[0]))
    return Paired(
        aligned(a, pos_a, "value").reshape(shape), aligned(b, pos_b, "value").reshape(shape),
        sizes["n_train"].reshape(shape), sizes["n_test"].reshape(shape),
        a=a, b=b, metric=metric, study=study,
    )
