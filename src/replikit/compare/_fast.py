"""Vectorised :func:`~replikit.compare.compare_scores` for the common case: recommended tests on
complete r x k cross-validation scores.

The general path pairs the models one (study, metric, pair) at a time and builds a result object
per test (about 5 ms each: pandas alignment and frozen scipy distributions). When every study
and metric holds every model on the same r x k grid of splits (k >= 2, not 5 x 2) with the split
sizes recorded, finite scores and a non-zero variance in every pair, the same numbers come from
one array ``V[study, metric, model, split]``: the differences of all pairs at once, the
corrected repeated k-fold t (Bouckaert & Frank 2004) through the same kernel
(:func:`replikit.compare._kernels.t_corrected`) over a leading axis, and the Bayesian correlated
t (Corani & Benavoli 2015, eq. 8) from the same mean and scale — the rows the general path
builds, in its order, equal to it (tests/compare/test_fast.py). Anything else returns ``None``
and the general path runs (it also names the problem when the scores are inconsistent).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._memory import check_memory
from . import _kernels as K

__all__ = ["fast_recommended"]

#: bytes of pairwise differences built at once (a block of studies)
_CHUNK_BYTES = 32 << 20

_KFOLD = ("corrected_repeated_kfold_t", "Corrected repeated k-fold cv t-test (Bouckaert & Frank "
          "2004)", "repeated k-fold")
_BAYES = ("bayesian_correlated_t", "Bayesian correlated t-test (Corani & Benavoli 2015)",
          "any resampling")


def _codes(values: pd.Series, levels: list) -> np.ndarray:
    """Position of each value in ``levels`` (-1 when absent): one factorize, then a lookup of the
    distinct values."""
    codes, uniques = pd.factorize(values)
    return pd.Index(levels).get_indexer(uniques)[codes]


def fast_recommended(frame: pd.DataFrame, pairs: list, metrics: list, studies: list, *,
                     alternative: str, confidence_level: float, rope, higher_is_better,
                     recommended) -> tuple[pd.DataFrame, int] | None:
    """The rows of ``compare_scores(tests='recommended', interval='marginal')`` before the
    adjustment, or ``None`` when the scores are not a complete k-fold cube.

    ``higher_is_better(metric)`` and ``recommended(r, k)`` are the caller's rules. Returns the
    rows and the number of (study, metric, pair) comparisons.
    """
    if not {"n_train", "n_test"} <= set(frame.columns):
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
    for col in ("n_train", "n_test"):
        arr = np.empty(cells)
        arr[flat] = frame[col].to_numpy(dtype=float, na_value=np.nan)
        arr = arr.reshape(shape)
        if np.isnan(arr).any() or (arr != arr[:, :, :1, :]).any():
            return None  # unknown or inconsistent sizes: the general path decides or names it
        sizes[col] = np.ascontiguousarray(arr[:, :, 0, :])
    values = values.reshape(shape)
    ia = np.array([models.index(p[0]) for p in pairs])
    ib = np.array([models.index(p[1]) for p in pairs])
    ratio = sizes["n_test"].mean(axis=-1) / sizes["n_train"].mean(axis=-1)   # (S, M)
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
    ropes = np.array([float(rope[m]) if isinstance(rope, dict) else float(rope)
                      for m in metrics])[None, :, None]
    ropes = np.broadcast_to(ropes, mean.shape)
    b_lo, b_hi = stats.t.interval(confidence_level, dfv, loc=mean, scale=se)
    p_right = stats.t.sf(ropes, dfv, loc=mean, scale=se)
    p_left = np.where(ropes == 0, 1.0 - p_right, stats.t.cdf(-ropes, dfv, loc=mean, scale=se))
    p_rope = np.where(ropes == 0, 0.0, np.maximum(0.0, 1.0 - p_left - p_right))

    # rows: for study, for metric, for pair: the k-fold t then the Bayesian test
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

    def both(x_t, x_b):
        return np.column_stack([np.ravel(x_t), np.ravel(x_b)]).ravel()

    def twice(x):
        return np.repeat(np.asarray(x, dtype=object) if isinstance(x, list) else x, 2)

    nan = np.full(n_cmp, np.nan)
    study_arr = np.empty(n_s, dtype=object)
    study_arr[:] = studies
    metric_arr = np.empty(n_m, dtype=object)
    metric_arr[:] = metrics
    out = pd.DataFrame({
        "study": twice(study_arr[s_idx]), "a": twice(a_names), "b": twice(b_names),
        "metric": twice(metric_arr[m_idx]),
        "test": np.tile(np.array([_KFOLD[0], _BAYES[0]], dtype=object), n_cmp),
        "method": np.tile(np.array([_KFOLD[1], _BAYES[1]], dtype=object), n_cmp),
        "estimate": twice(mean.ravel()), "se": twice(se.ravel()),
        "ci_low": both(lo, b_lo), "ci_high": both(hi, b_hi),
        "ci_level": both(ci_level, np.full(n_cmp, confidence_level)),
        "statistic": both(stat, nan), "df": np.full(2 * n_cmp, dfv), "df2": np.nan,
        "pvalue": both(pvalue, nan),
        "p_left": both(nan, p_left), "p_rope": both(nan, p_rope), "p_right": both(nan, p_right),
        "conclusion": both(np.full(n_cmp, "", dtype=object), conclusion),
        "valid": True,
        "requires": np.tile(np.array([_KFOLD[2], _BAYES[2]], dtype=object), n_cmp),
        "n": n, "n_repeats": n_r, "n_folds": n_f,
        "alternative": np.tile(np.array([alternative, "two-sided"], dtype=object), n_cmp),
    })
    return out, n_cmp
