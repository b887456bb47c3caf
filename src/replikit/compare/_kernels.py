"""Test statistics of the resampled-score tests as array functions.

Each kernel is vectorised over leading axes, so a calibration study can compute thousands of
tests in one call (``d`` of shape ``(n_datasets, n_splits)``), and the per-pair functions of
:mod:`replikit.compare.resampled` are thin wrappers that call them on one pair: both give the
same numbers bit for bit.

Zero variance. When all differences of a sample are equal the standard error is 0: the
statistic is ``±inf`` if the mean difference is not 0 (a p-value of 0 two-sided) and ``NaN`` if
it is 0 (a p-value of NaN: the data cannot tell). No warning is raised by the kernels.

References
----------
Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine Learning 52.
Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance tests for
comparing learning algorithms. PAKDD.
Bouckaert, R. R. (2003). Choosing between two learning algorithms based on calibrated tests.
ICML.
Bouckaert, R. R. (2004). Estimating replicability of classifier learning experiments. ICML.
Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised classification
learning algorithms. Neural Computation 10(7).
Alpaydin, E. (1999). Combined 5x2 cv F test for comparing supervised classification learning
algorithms. Neural Computation 11(8).
Gardner, J. & Brooks, C. (2017). Statistical approaches to the model comparison task in
learning analytics, eqs. 1-3 and Table 1.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

__all__ = ["range_sf", "range_cdf", "range_isf", "t_corrected", "t_naive", "t_5x2", "f_5x2", "t_sorted_runs", "z_proportions",
           "sorted_runs_sample", "SORTS"]

SORTS = ("difference", "learner")


def _div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


def t_corrected(d, ratio):
    """Corrected resampled t (Nadeau & Bengio 2003; Bouckaert & Frank 2004).

    ``t = mean(d) / sqrt((1/n + ratio) · s²)`` with ``s²`` the sample variance (ddof 1) of the
    ``n`` differences and ``ratio = n_test / n_train`` (Gardner & Brooks 2017, eq. 3; Table 1 rows (2) and (3)).

    Parameters
    ----------
    d : array_like of shape (..., n)
        Score differences, one per split (``n = k · r`` for repeated k-fold).
    ratio : float or array_like of shape (...)
        ``n_test / n_train`` (``1/(k-1)`` for k-fold). ``0`` gives the naive t.

    Returns
    -------
    statistic, se, df : ndarray of shape (...)
        ``df = n - 1``.

    Examples
    --------
    Three simulated 10x10 cv comparisons at once:

    >>> import numpy as np
    >>> d = 0.01 + 0.02 * np.random.default_rng(0).standard_normal((3, 100))
    >>> stat, se, df = t_corrected(d, 1 / 9)
    >>> stat.shape, df.tolist()
    ((3,), [99.0, 99.0, 99.0])
    """
    d = np.asarray(d, dtype=float)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    var = d.var(axis=-1, ddof=1) if n > 1 else np.full(mean.shape, np.nan)
    se = np.sqrt(var * (1.0 / n + np.asarray(ratio, dtype=float)))
    stat = _div(mean, se)
    return stat, se, np.full(np.shape(stat), n - 1.0)


def t_naive(d):
    """Naive paired t: ``t = mean(d) / (s / sqrt(n))``, ``df = n - 1`` (Gardner & Brooks
    2017, eq. 2).

    Invalid on resampled or cross-validated scores (the differences are correlated); kept for
    comparison. ``d`` has shape ``(..., n)``; returns ``(statistic, se, df)``.
    """
    return t_corrected(d, 0.0)


def _check_5x2(d):
    d = np.asarray(d, dtype=float)
    if d.shape[-2:] != (5, 2):
        raise ValueError(f"5x2cv kernels need d of shape (..., 5, 2); got {d.shape}.")
    return d


def _s2_5x2(d):
    """Per-repeat variances ``s_i² = (d_i1 - m_i)² + (d_i2 - m_i)²`` (Dietterich 1998)."""
    m = d.mean(axis=-1, keepdims=True)
    return ((d - m) ** 2).sum(axis=-1)


def t_5x2(d):
    """Dietterich's (1998) 5x2cv paired t (Gardner & Brooks 2017, Table 1 row (1)).

    ``t = d_11 / sqrt((1/5) Σ_i s_i²)`` with ``s_i² = Σ_j (d_ij - d̄_i)²``, Student t with 5 df.

    Parameters
    ----------
    d : array_like of shape (..., 5, 2)
        Differences for 5 repeats of 2-fold cross-validation; the numerator is ``d[..., 0, 0]``.

    Returns
    -------
    statistic, se, df : ndarray of shape (...)
        ``se = sqrt(mean_i s_i²)`` and ``df = 5``.
    """
    d = _check_5x2(d)
    se = np.sqrt(_s2_5x2(d).mean(axis=-1))
    stat = _div(d[..., 0, 0], se)
    return stat, se, np.full(np.shape(stat), 5.0)


def f_5x2(d):
    """Alpaydin's (1999) combined 5x2cv F.

    ``f = Σ_ij d_ij² / (2 Σ_i s_i²)``, F distributed with (10, 5) df under the null.

    Parameters
    ----------
    d : array_like of shape (..., 5, 2)

    Returns
    -------
    statistic, df1, df2 : ndarray of shape (...)
    """
    d = _check_5x2(d)
    num = (d ** 2).sum(axis=(-2, -1))
    den = 2.0 * _s2_5x2(d).sum(axis=-1)
    stat = _div(num, den)
    return stat, np.full(np.shape(stat), 10.0), np.full(np.shape(stat), 5.0)


def sorted_runs_sample(sa, sb, sort="difference"):
    """The k sorted-run differences of Bouckaert (2003); Gardner & Brooks (2017), Table 1 row (4).

    ``sort='difference'``: sort the fold differences within each run and average the i-th
    smallest across runs. ``sort='learner'``: within each run sort each learner's fold scores,
    average the i-th smallest across the r runs (``P_i = (1/R) Σ_runs (i-th smallest)``, the
    paper's literal text), and take ``x_i = P_i(a) - P_i(b)`` — liberal, see
    :func:`replikit.compare.resampled.sorted_runs_ttest`. ``sa``, ``sb`` have shape ``(..., r, k)``;
    the result has shape ``(..., k)``.
    """
    sa = np.asarray(sa, dtype=float)
    sb = np.asarray(sb, dtype=float)
    if sort == "learner":
        return np.sort(sa, axis=-1).mean(axis=-2) - np.sort(sb, axis=-1).mean(axis=-2)
    if sort == "difference":
        return np.sort(sa - sb, axis=-1).mean(axis=-2)
    raise ValueError(f"`sort` must be one of {SORTS}; got {sort!r}.")


def t_sorted_runs(sa, sb, sort="difference"):
    """Paired t on the sorted-runs sample (Bouckaert 2003; Gardner & Brooks 2017, Table 1 row (4)).

    ``t = mean(x) / (s_x / sqrt(k))`` on the ``k`` sorted-run differences ``x`` of
    :func:`sorted_runs_sample`, Student t with ``k - 1`` df (Gardner & Brooks print ``df = r - 1``,
    the same number for its 10x10 design; the sample has ``k`` values, hence ``k - 1``).

    Parameters
    ----------
    sa, sb : array_like of shape (..., r, k)
        Scores of the two learners, ``r`` runs of ``k`` folds.
    sort : {'difference', 'learner'}

    Returns
    -------
    statistic, se, df : ndarray of shape (...)
    """
    return t_corrected(sorted_runs_sample(sa, sb, sort), 0.0)


def z_proportions(err_a, err_b, n_test):
    """Difference-of-proportions z with a pooled rate (Gardner & Brooks 2017, eq. 1;
    Dietterich 1998, sec. 3.1).

    ``z = (p_A - p_B) / sqrt(2 p (1 - p) / n)`` with ``p = (p_A + p_B) / 2``. Invalid for
    comparing learners (the two rates share a test set and training-set variation is ignored);
    kept for comparison.

    Parameters
    ----------
    err_a, err_b : array_like of shape (...)
        Error rates (or accuracies: the statistic only changes sign) of the two models.
    n_test : array_like of shape (...)
        Number of test examples the rates rest on.

    Returns
    -------
    statistic : ndarray of shape (...)
    """
    pa = np.asarray(err_a, dtype=float)
    pb = np.asarray(err_b, dtype=float)
    p = (pa + pb) / 2.0
    se = np.sqrt(2.0 * p * (1.0 - p) / np.asarray(n_test, dtype=float))
    return _div(pa - pb, se)


# ---------------------------------------------------------------------------------------------
# The studentized range with infinite degrees of freedom, vectorised over quantiles.
#
# The Nemenyi test (Demšar 2006, section 3.2.2) needs, for k models, the distribution of the range
# ``R`` of k independent standard normals (the studentized range ``Q_{k, inf}``):
#
# ``P(R <= q) = k ∫ φ(z) [Φ(z) - Φ(z - q)]^(k-1) dz``
#
# (Hartley 1942; Lund & Lund 1983, eq. 1 with ν = ∞). ``scipy.stats.studentized_range`` integrates
# it adaptively, one ``quad`` call per quantile — 1,225 calls for the pairwise p-values of 50
# models. Here the upper tail is written without cancellation,
#
# ``P(R > q) = ∫ w(z) [1 - (1 - Φ(z - q) / Φ(z))^(k-1)] dz``,   ``w(z) = k φ(z) Φ(z)^(k-1)``
#
# (``k ∫ φ Φ^(k-1) dz = 1``), with the bracket evaluated as ``-expm1((k-1) log1p(-b/a))`` so it
# keeps its relative accuracy when it is tiny (far tail), and integrated for every ``q`` at once
# by the trapezoidal rule on one uniform grid of ``z``. The integrand is smooth and decays like a
# Gaussian at both ends, where the trapezoidal rule converges geometrically in the step
# (Trefethen & Weideman 2014, SIAM Review 56, section 5): a step of 0.2 (k <= 50) down to 0.1
# (k <= 5,000) keeps the quadrature error below 1e-11 relative. The grid starts where ``w``
# reaches 1e-30 of its peak and stops at ``q / 2 + 9``: the integrand's mass sits near the peak
# of ``w`` for small ``q`` and moves to ``q / 2`` (a Gaussian of sd ``1 / sqrt 2``) for large
# ``q``.
#
# Accuracy (tests/compare/test_srange.py): for k = 2 the range is ``|X1 - X2|``, so
# ``P(R > q) = erfc(q / 2)`` exactly — matched to 1e-12 relative down to 1e-270; for k = 2 to
# 1,000 the values agree with ``scipy.stats.studentized_range.sf`` within 1e-8 relative plus 1e-14
# absolute (scipy computes ``1 - cdf`` and so loses its relative accuracy below about 1e-7 —
# at q = 20 it returns 1e-16 for a tail of 1e-42); in the far tail they approach the
# Bonferroni asymptote ``C(k, 2) erfc(q / 2)`` (ratio 1 within 1e-12 at q = 40). The quantile
# (:func:`range_isf`) agrees with ``scipy.stats.studentized_range.ppf`` within 1e-11.
#
# References
# ----------
# Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7.
# Hartley, H. O. (1942). The range in random samples. Biometrika 32(3/4).
# Lund, R. E. & Lund, J. R. (1983). Algorithm AS 190: probabilities and upper quantiles for the
# studentized range. Applied Statistics 32(2).
# Trefethen, L. N. & Weideman, J. A. C. (2014). The exponentially convergent trapezoidal rule.
# SIAM Review 56(3).
# ---------------------------------------------------------------------------------------------
#: trapezoidal steps in z by the largest k they serve: w(z) narrows as k grows (its sd is about
#: 1 / sqrt(2 log k)); each step keeps the quadrature error below 1e-11 relative up to its k
#: (checked against step 0.025, tests/compare/test_srange.py)
_STEPS = ((50, 0.2), (200, 0.15), (500, 0.125), (5000, 0.1))
_FINE_STEP = 0.05


def _step(k: int) -> float:
    for k_max, h in _STEPS:
        if k <= k_max:
            return h
    return _FINE_STEP
#: w(z) below this share of its peak is outside the grid
_CUT = 1e-30
_Z_LO, _Z_HI = -40.0, 40.0


@lru_cache(maxsize=64)
def _weights(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid of z from where w(z) = k φ(z) Φ(z)^(k-1) reaches 1e-30 of its peak up to 40:
    (z, Φ(z), h w(z)).

    Cached per k (a few kB each); the arrays are read-only."""
    h = _step(k)
    z = np.arange(_Z_LO, _Z_HI + h / 2, h)
    logw = np.log(k) - 0.5 * z * z - 0.5 * np.log(2.0 * np.pi) + (k - 1) * special.log_ndtr(z)
    lo = int(np.flatnonzero(logw >= logw.max() + np.log(_CUT))[0])
    out = (z[lo:], special.ndtr(z[lo:]), h * np.exp(logw[lo:]))
    for arr in out:
        arr.setflags(write=False)
    return out


def range_sf(q, k: int, *, max_block: int = 2**20) -> np.ndarray:
    """Upper tail ``P(R > q)`` of the range of ``k`` standard normals, for every ``q`` at once.

    Equals ``scipy.stats.studentized_range.sf(q, k, np.inf)`` (see the module docstring for
    the accuracy) at a fraction of its cost for many ``q``.

    Parameters
    ----------
    q : array-like
        Quantiles (any shape). ``q <= 0`` gives 1, ``q = inf`` 0 and ``NaN`` ``NaN``.
    k : int
        Number of normals (>= 2).
    max_block : int
        Largest number of (q, z) points evaluated at once (bounds the memory).

    Returns
    -------
    numpy.ndarray
        Same shape as ``q``.
    """
    q = np.asarray(q, dtype=float)
    flat = q.ravel()
    out = np.ones_like(flat)
    out[np.isnan(flat)] = np.nan
    out[np.isposinf(flat)] = 0.0
    todo = np.flatnonzero((flat > 0) & np.isfinite(flat))
    if todo.size == 0:
        return out.reshape(q.shape)
    k = int(k)
    z, a, w = _weights(k)
    h = _step(k)
    # the integrand's mass: near the peak of w for small q, around q / 2 (a Gaussian of sd
    # 1 / sqrt 2) for large q. Beyond q / 2 + 9 it is below 1e-17 of P(R > q) for every q, so
    # the grid stops there (extended past 40 for q > 62).
    top = float(np.max(flat[todo])) / 2.0 + 9.0
    z, a, w = z[z <= top], a[z <= top], w[z <= top]
    if top > z[-1] + h:
        extra = np.arange(z[-1] + h, top + h / 2, h)
        logw = (np.log(k) - 0.5 * extra * extra - 0.5 * np.log(2.0 * np.pi)
                + (k - 1) * special.log_ndtr(extra))
        z = np.concatenate([z, extra])
        a = np.concatenate([a, special.ndtr(extra)])
        w = np.concatenate([w, h * np.exp(logw)])
    m = float(k - 1)
    rows = max(1, max_block // z.size)
    for start in range(0, todo.size, rows):
        idx = todo[start:start + rows]
        f = special.ndtr(z[None, :] - flat[idx, None])      # b = Φ(z - q)
        f /= a
        np.negative(f, out=f)
        with np.errstate(divide="ignore"):
            np.log1p(f, out=f)                                # log(1 - b / a), -inf at b = a
        f *= m
        np.expm1(f, out=f)                                    # (1 - b / a)^(k-1) - 1
        out[idx] = -(f @ w)
    np.clip(out, 0.0, 1.0, out=out)
    out += 0.0  # no -0.0 where the tail underflows
    return out.reshape(q.shape)


def range_cdf(q, k: int) -> np.ndarray:
    """``P(R <= q)`` (``1 - range_sf``; use :func:`range_sf` in the upper tail)."""
    return 1.0 - range_sf(q, k)


def _range_pdf(q: float, k: int) -> float:
    """Density of R at q: ``k (k-1) ∫ φ(z) φ(z - q) [Φ(z) - Φ(z - q)]^(k-2) dz``."""
    h = _step(k)
    z = np.arange(-12.0, q + 12.0 + h / 2, h)
    d = special.ndtr(z) - special.ndtr(z - q)
    phi = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    phiq = np.exp(-0.5 * (z - q) ** 2) / np.sqrt(2.0 * np.pi)
    return float(k * (k - 1) * h * np.sum(phi * phiq * d ** (k - 2)))


def range_isf(p: float, k: int) -> float:
    """The ``q`` with ``P(R > q) = p``: Newton steps on ``log P(R > q)``, safeguarded by a
    bracket, to a relative tolerance of 1e-14 in q (or 1e-15 in log p)."""
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie in (0, 1)")
    lo, hi = 0.0, 80.0
    x = 3.0
    for _ in range(100):
        s = float(range_sf(x, k))
        if s > p:
            lo = x
        else:
            hi = x
        g = np.log(s) - np.log(p) if s > 0 else -np.inf
        if abs(g) <= 1e-15:
            return float(x)
        dens = _range_pdf(x, k)
        step = g * s / dens if s > 0 and dens > 0 else np.nan
        new = x + step
        if not (lo < new < hi) or not np.isfinite(new):
            new = 0.5 * (lo + hi)
        if abs(new - x) <= 1e-14 * max(1.0, abs(x)) or hi - lo <= 1e-14 * max(1.0, hi):
            return float(new)
        x = new
    return float(x)  # pragma: no cover
