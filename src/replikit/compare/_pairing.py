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

__all__ = ["Paired", "paired_scores", "fast_recommended"]

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

    Build it from a Scores table with :func:`paired_scores`, or directly from arrays; 1-D
    arrays are read as one repeat (shape ``(1, n)``) and scalar sizes are broadcast.

    Parameters
    ----------
    a_scores, b_scores : array-like of shape (r, k)
        The metric of model ``a`` and model ``b`` on each split; finite. Hold-out repeats and
        bootstrap resamples are ``(r, 1)``; one run of k-fold cross-validation is ``(1, k)``.
    n_train, n_test : array-like of shape (r, k) or float, optional
        Training and test set sizes of each split (NaN where unknown).
    a, b, metric : str, default 'a', 'b', ''
        Names of the two models and of the metric.
    study : object, optional
        The study the scores come from.

    See Also
    --------
    paired_scores : Lines up two models' scores from a Scores table.
    replikit.compare.corrected_repeated_kfold_ttest : A test that takes it.

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
    study : str, optional
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

    See Also
    --------
    Paired : The design it returns.
    replikit.compare.compare_scores : Pairs every two models itself.
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
            + "; ".join(lacks) + ". Paired tests need both models scored on every split "
            "(scores from different splits or samples: the unpaired corrected t, "
            "`unpaired_corrected_ttest`, `replikit compare --test unpaired`)."
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


# ---------------------------------------------------------------------------------------------
# Vectorised :func:`~replikit.compare.compare_scores` for the common case: recommended tests on
# complete r x k cross-validation scores.
#
# The general path pairs the models one (study, metric, pair) at a time and builds a result object
# per test (about 5 ms each: pandas alignment and frozen scipy distributions). When every study
# and metric holds every model on the same r x k grid of splits (k >= 2, not 5 x 2) with the split
# sizes recorded, finite scores and a non-zero variance in every pair, the same numbers come from
# one array ``V[study, metric, model, split]``: the differences of all pairs at once, the
# corrected repeated k-fold t (Bouckaert & Frank 2004) through the same kernel
# (:func:`replikit.compare._kernels.t_corrected`) over a leading axis, and the Bayesian correlated
# t (Corani & Benavoli 2015, eq. 8) from the same mean and scale, and with a tolerance the TOST
# equivalence test (Schuirmann 1987) with the same standard error — the rows the general path
# builds, equal to it (tests/compare/test_fast.py). Anything else returns ``None`` and the
# general path runs (it also names the problem when the scores are inconsistent).
# ---------------------------------------------------------------------------------------------
#: bytes of pairwise differences built at once (a block of studies)
_CHUNK_BYTES = 32 << 20

_KFOLD = ("corrected_repeated_kfold_t", "Corrected repeated k-fold cv t-test (Bouckaert & Frank "
          "2004)", "repeated k-fold")
_BAYES = ("bayesian_correlated_t", "Bayesian correlated t-test (Corani & Benavoli 2015)",
          "any resampling")
_TOST = ("equivalence_tost", "TOST equivalence test, corrected resampled variance",
         "any resampling")


def _codes(values: pd.Series, levels: list) -> np.ndarray:
    """Position of each value in ``levels`` (-1 when absent): one factorize, then a lookup of the
    distinct values."""
    codes, uniques = pd.factorize(values)
    return pd.Index(levels).get_indexer(uniques)[codes]


def fast_recommended(frame: pd.DataFrame, pairs: list, metrics: list, studies: list, *,
                     alternative: str, confidence_level: float, tolerance: dict, margins: dict,
                     higher_is_better, recommended,
                     ratio: float | None = None) -> tuple[pd.DataFrame, int] | None:
    """The rows of ``compare_scores(tests='recommended', simultaneous=False)`` before the
    adjustment, or ``None`` when the scores are not a complete k-fold cube.

    ``tolerance[metric]`` is the half-width of the Bayesian rows' region of practical
    equivalence, ``margins[metric]`` the TOST margin (None: no TOST rows for that metric).
    ``higher_is_better(metric)`` and ``recommended(r, k)`` are the caller's rules; ``ratio``
    (n_test / n_train) replaces the recorded sizes when given. Returns the rows and the number
    of (study, metric, pair) comparisons.
    """
    from scipy import stats

    from .._memory import check_memory
    from . import _kernels as K

    if ratio is None and not {"n_train", "n_test"} <= set(frame.columns):
        return None
    models = list(dict.fromkeys(m for pair in pairs for m in pair))
    s_code = _codes(frame["study"], studies)
    m_code = _codes(frame["metric"], metrics)
    keep = (s_code >= 0) & (m_code >= 0)
    if not keep.all():
        frame, s_code, m_code = frame.loc[keep], s_code[keep], m_code[keep]
    mo_code = _codes(frame["model"], models)
    if (mo_code < 0).any():  # models outside the compared pairs: leave them out
        inside = mo_code >= 0
        frame, s_code, m_code, mo_code = (frame.loc[inside], s_code[inside], m_code[inside],
                                          mo_code[inside])
    try:
        r_code, r_levels = pd.factorize(frame["repeat"], sort=True)
        f_code, f_levels = pd.factorize(frame["fold"], sort=True)
    except TypeError:  # labels that do not sort: the general path
        return None
    n_s, n_m, n_mo, n_r, n_f = len(studies), len(metrics), len(models), len(r_levels), len(f_levels)
    n_split = n_r * n_f
    cells = n_s * n_m * n_mo * n_split
    if len(frame) != cells or n_f < 2 or list(recommended(n_r, n_f)) != [
            "corrected_repeated_kfold_ttest", "bayesian_correlated_ttest"]:
        return None
    n_pairs = len(pairs)
    n_cmp = n_s * n_m * n_pairs
    # the differences of all pairs are built a block of studies at a time (about 32 MiB each);
    # what stays: the cube and its sizes, the row codes (8 bytes a row each) and the output
    # (2 rows of ~27 columns per comparison)
    chunk = max(1, _CHUNK_BYTES // (8 * n_m * n_pairs * n_split))
    check_memory(8.0 * (10 * cells + 3 * min(chunk, n_s) * n_m * n_pairs * n_split
                        + 2 * 27 * n_cmp),
                 what=f"comparing {n_pairs} pairs of models on {n_s} studies x {n_m} metrics x "
                      f"{n_split} splits",
                 reduce="the studies, metrics or models compared (study=, metrics=, a=/b=)")
    flat = (((s_code.astype(np.int64) * n_m + m_code) * n_mo + mo_code) * n_r + r_code) * n_f \
        + f_code
    if np.bincount(flat, minlength=cells).max() != 1:  # duplicates (hence gaps)
        return None
    shape = (n_s, n_m, n_mo, n_split)
    values = np.empty(cells)
    values[flat] = frame["value"].to_numpy(dtype=float, na_value=np.nan)
    sizes = {}
    for col in (("n_train", "n_test") if ratio is None else ()):
        arr = np.empty(cells)
        arr[flat] = frame[col].to_numpy(dtype=float, na_value=np.nan)
        arr = arr.reshape(shape)
        if np.isnan(arr).any() or (arr != arr[:, :, :1, :]).any():
            return None  # unknown or inconsistent sizes: the general path decides or names it
        sizes[col] = np.ascontiguousarray(arr[:, :, 0, :])
    values = values.reshape(shape)
    ia = np.array([models.index(p[0]) for p in pairs])
    ib = np.array([models.index(p[1]) for p in pairs])
    ratio = (sizes["n_test"].mean(axis=-1) / sizes["n_train"].mean(axis=-1)   # (S, M)
             if ratio is None else np.full((n_s, n_m), float(ratio)))
    stat, se, mean = (np.empty((n_s, n_m, n_pairs)) for _ in range(3))
    for s0 in range(0, n_s, chunk):
        part = values[s0:s0 + chunk]
        d = part[:, :, ia, :] - part[:, :, ib, :]                # (S', M, P, n), contiguous
        if not np.isfinite(d).all():
            return None  # overflow: the general path's warnings
        with np.errstate(all="ignore"):
            stat[s0:s0 + chunk], se[s0:s0 + chunk], _ = K.t_corrected(
                d, ratio[s0:s0 + chunk, :, None])
        mean[s0:s0 + chunk] = d.mean(axis=-1)
    del values, d
    if not (np.isfinite(stat).all() and (se > 0).all()):
        return None  # zero variance: the general path's notes
    n = n_split
    dfv = float(n - 1)
    if alternative == "less":
        pvalue = stats.t.cdf(stat, dfv)
    elif alternative == "greater":
        pvalue = stats.t.sf(stat, dfv)
    else:
        pvalue = np.minimum(1.0, 2.0 * np.minimum(stats.t.cdf(stat, dfv), stats.t.sf(stat, dfv)))
    if alternative == "two-sided":
        q = stats.t(dfv).ppf((1 + confidence_level) / 2)
        lo, hi = mean - q * se, mean + q * se
        ci_level = np.full(mean.shape, confidence_level)
    else:
        q = stats.t(dfv).ppf(confidence_level)
        lo = np.full(mean.shape, -np.inf) if alternative == "less" else mean - q * se
        hi = mean + q * se if alternative == "less" else np.full(mean.shape, np.inf)
        ci_level = np.full(mean.shape, np.nan)
    # Bayesian correlated t: posterior t(n - 1, mean, se) (the same scale as the corrected t)
    ropes = np.array([float(tolerance[m]) for m in metrics])[None, :, None]
    ropes = np.broadcast_to(ropes, mean.shape)
    b_lo, b_hi = stats.t.interval(confidence_level, dfv, loc=mean, scale=se)
    p_right = stats.t.sf(ropes, dfv, loc=mean, scale=se)
    p_left = np.where(ropes == 0, 1.0 - p_right, stats.t.cdf(-ropes, dfv, loc=mean, scale=se))
    p_rope = np.where(ropes == 0, 0.0, np.maximum(0.0, 1.0 - p_left - p_right))

    # (study, metric, pair) of every comparison, in the general path's loop order
    s_idx, m_idx, p_idx = (g.ravel() for g in np.meshgrid(np.arange(n_s), np.arange(n_m),
                                                          np.arange(n_pairs), indexing="ij"))
    a_names = np.array([p[0] for p in pairs], dtype=object)[p_idx]
    b_names = np.array([p[1] for p in pairs], dtype=object)[p_idx]
    hib = np.array([bool(higher_is_better(m)) for m in metrics])[m_idx]
    probs = np.stack([p_left.ravel(), p_rope.ravel(), p_right.ravel()], axis=1)
    best = np.argmax(probs, axis=1)
    higher = np.where(best == 2, a_names, b_names)
    lower = np.where(best == 2, b_names, a_names)
    winner = np.where(hib, higher, lower)
    conclusion = np.where(probs.max(axis=1) < 0.95, "undecided",
                          np.where(best == 1, "practically equivalent",
                                   np.char.add(winner.astype(str), " better"))).astype(object)
    nan = np.full(n_cmp, np.nan)
    study_arr = np.empty(n_s, dtype=object)
    study_arr[:] = studies
    metric_arr = np.empty(n_m, dtype=object)
    metric_arr[:] = metrics
    common = {"study": study_arr[s_idx], "a": a_names, "b": b_names,
              "metric": metric_arr[m_idx], "estimate": mean.ravel(), "se": se.ravel()}
    blocks = [
        # the corrected repeated k-fold t
        {**common, "kind": _KFOLD, "ci_low": np.ravel(lo), "ci_high": np.ravel(hi),
         "ci_level": np.ravel(ci_level), "statistic": stat.ravel(), "pvalue": pvalue.ravel(),
         "p_left": nan, "p_rope": nan, "p_right": nan,
         "conclusion": np.full(n_cmp, "", dtype=object), "alternative": alternative},
        # the Bayesian correlated t
        {**common, "kind": _BAYES, "ci_low": b_lo.ravel(), "ci_high": b_hi.ravel(),
         "ci_level": np.full(n_cmp, confidence_level), "statistic": nan, "pvalue": nan,
         "p_left": p_left.ravel(), "p_rope": p_rope.ravel(), "p_right": p_right.ravel(),
         "conclusion": conclusion, "alternative": "two-sided"},
    ]
    with_margin = np.array([margins.get(m) is not None for m in metrics])
    if with_margin.any():
        blocks.insert(1, _tost_block(common, with_margin[m_idx], metrics, margins, m_idx, mean,
                                     se, dfv, lo, hi, ci_level, alternative, nan))
    columns = ["study", "a", "b", "metric", "test", "method", "estimate", "se", "ci_low",
               "ci_high", "ci_level", "statistic", "df", "df2", "pvalue", "p_left", "p_rope",
               "p_right", "conclusion", "valid", "requires", "n", "n_repeats", "n_folds",
               "alternative"]
    out = {}
    for col in columns:
        parts = []
        for blk in blocks:
            size = len(blk["estimate"])
            if col in ("test", "method", "requires"):
                value = blk["kind"][{"test": 0, "method": 1, "requires": 2}[col]]
                parts.append(np.full(size, value, dtype=object))
            elif col in ("df",):
                parts.append(np.full(size, dfv))
            elif col == "df2":
                parts.append(np.full(size, np.nan))
            elif col == "valid":
                parts.append(np.ones(size, dtype=bool))
            elif col in ("n", "n_repeats", "n_folds"):
                parts.append(np.full(size, {"n": n, "n_repeats": n_r, "n_folds": n_f}[col],
                                     dtype=np.int64))
            elif col == "alternative":
                parts.append(np.full(size, blk["alternative"], dtype=object))
            else:
                parts.append(np.asarray(blk[col]))
        out[col] = np.concatenate(parts)
    return pd.DataFrame(out), n_cmp


def _tost_block(common, keep, metrics, margins, m_idx, mean, se, dfv, lo, hi, ci_level,
                alternative, nan) -> dict:
    """The TOST rows of the comparisons ``keep`` (their metric has a margin): the two one-sided
    corrected t's of :func:`replikit.compare.equivalence_ttest`, the binding one reported."""
    from scipy import stats

    margin = np.array([margins.get(m) or 0.0 for m in metrics])[m_idx]
    est, sev = mean.ravel(), se.ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = np.true_divide(est - (-margin), sev)
        t_hi = np.true_divide(est - margin, sev)
    p_lo = stats.t.sf(t_lo, dfv)   # H0: mu <= -margin
    p_hi = stats.t.cdf(t_hi, dfv)  # H0: mu >= margin
    if alternative == "greater":     # non-inferiority
        stat, pvalue = t_lo, p_lo
    elif alternative == "less":      # non-superiority
        stat, pvalue = t_hi, p_hi
    else:
        lower = p_lo >= p_hi
        stat, pvalue = np.where(lower, t_lo, t_hi), np.where(lower, p_lo, p_hi)
    block = {key: np.asarray(value)[keep] for key, value in common.items()}
    block.update({"kind": _TOST, "ci_low": np.ravel(lo)[keep], "ci_high": np.ravel(hi)[keep],
                  "ci_level": np.ravel(ci_level)[keep], "statistic": stat[keep],
                  "pvalue": pvalue[keep], "p_left": nan[keep], "p_rope": nan[keep],
                  "p_right": nan[keep], "conclusion": np.full(int(keep.sum()), "",
                                                              dtype=object),
                  "alternative": alternative})
    return block
