"""Vectorized kernels of the ε-replicability test and of the spread estimators.

Every kernel takes arrays whose leading axis is a replication (one row for a real analysis, many
for a simulation) and whose last axis is a study (or a pair of studies), so the public
functions of :mod:`replikit.multistudy.equivalence` and the calibration study of
:mod:`replikit.multistudy.validity` run the same code. They take arrays and skip input validation: call them for simulations,
and :func:`~replikit.multistudy.equivalence.epsilon_test` for an analysis.

The test (Berger 1982; Berger & Hsu 1996, sec. 2): ε-replicability (Parmigiani 2023, Defs. 3.1, 3.2,
5.1) holds when *every* pair of studies is within ε, so H1 is an intersection over pairs and
H0 a union; the intersection–union test rejects H0 when every pairwise two one-sided test
(TOST) rejects at level α, with no multiplicity correction, and its p-value is the largest
pairwise p-value. Inverting it gives the smallest ε shown at level α, the largest pairwise
upper confidence bound — an upper ``1 − α`` confidence bound of the maximal difference, since
the pair attaining the true maximum is covered with probability ``1 − α``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["pair_index", "welch_df", "quantile", "cdf", "absolute_bounds", "absolute_pvalues",
           "absolute_lower_bounds", "card_light", "pooled_loss",
           "relative_bounds", "relative_pvalues", "tv_bounds", "tv_pvalues", "pm_tau2",
           "spread_plugin", "spread_eb", "spread_bootstrap", "spread_re_range",
           "spread_tv_bootstrap",
           "expected_range", "N_DRAWS", "MAX_SUBSET_CELLS"]

N_DRAWS = 2000  # fixed posterior / bootstrap normal draws of the deterministic spread estimators
MAX_SUBSET_CELLS = 12  # TV: enumerate every set of cells up to this many cells, bound above it
_TINY = 1e-300


def pair_index(K: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(i, j)`` of the ``K (K − 1) / 2`` pairs ``i < j``."""
    return np.triu_indices(K, 1)


def welch_df(v_i, v_j, n_i, n_j):
    """Welch–Satterthwaite degrees of freedom of ``U_i − U_j`` (``inf`` when undefined)."""
    num = (v_i + v_j) ** 2
    den = v_i ** 2 / np.maximum(n_i - 1, 1) + v_j ** 2 / np.maximum(n_j - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    return df


def quantile(level: float, df):
    """The ``level`` quantile of Student's t with ``df`` (normal where ``df`` is infinite)."""
    from scipy import stats

    df = np.asarray(df, dtype=float)
    z = stats.norm.ppf(level)
    finite = np.isfinite(df)
    if not finite.any():
        return np.full(df.shape, z)
    out = np.full(df.shape, z)
    out[finite] = stats.t.ppf(level, df[finite])
    return out


def cdf(x, df):
    """Student's t (normal where ``df`` is infinite) distribution function."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), x.shape)
    out = stats.norm.cdf(x)
    finite = np.isfinite(df)
    if finite.any():
        out = np.where(finite, stats.t.cdf(x, np.where(finite, df, 1.0)), out)
    return out


def _safe_ratio(num, den, zero_value):
    """``num / den`` with ``zero_value(num)`` where ``den == 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), zero_value)


# -- absolute: |U_k − U_k'| < ε for every pair (Def. 3.1) -------------------------------------

def absolute_bounds(U, v, df, level: float):
    """Per pair: ``|d|``, its SE, its df and the upper ``level`` confidence bound ``|d| + q·se``.

    ``U``, ``v`` (variances of ``U_k``) and ``df`` (per pair, broadcastable) have a leading
    replication axis; pairs follow :func:`pair_index`.
    """
    K = U.shape[-1]
    i, j = pair_index(K)
    d = np.abs(U[..., i] - U[..., j])
    se = np.sqrt(v[..., i] + v[..., j])
    df = np.broadcast_to(df, d.shape)
    return d, se, df, d + quantile(level, df) * se


def absolute_lower_bounds(U, v, df, level: float):
    """Per pair, a lower bound ``max(|d| − q·se, 0)`` with ``q`` the two-sided Bonferroni
    quantile ``t_{1 − (1 − level) / (2P)}`` over the ``P = K (K − 1) / 2`` pairs; the largest is a
    lower ``level`` confidence bound of the maximal difference ``max |Δ|``.

    Why it is valid: ``|d| − |Δ| ≤ |d − Δ|``, so a pair's bound exceeds its own ``|Δ|`` only when
    ``|d − Δ| > q·se``, which has probability ``(1 − level) / P`` (two-sided: when ``Δ`` is near 0
    either tail can push ``|d|`` up). By Bonferroni every pair's bound stays below its ``|Δ|`` —
    hence below ``max |Δ|`` — with probability at least ``level``, whatever the correlation of
    the pairs (they share studies) and whichever pair attains the maximum.
    """
    K = U.shape[-1]
    i, j = pair_index(K)
    P = i.size
    d = np.abs(U[..., i] - U[..., j])
    se = np.sqrt(v[..., i] + v[..., j])
    df = np.broadcast_to(df, d.shape)
    q = quantile(1.0 - (1.0 - level) / (2.0 * P), df)
    return np.maximum(d - q * se, 0.0)


def card_light(lower, upper, tolerance):
    """The light of an earned verdict on a quantity that should be small: ``'good'`` when its
    upper confidence bound is within the tolerance (``upper <= tolerance``), ``'bad'`` when its
    lower confidence bound exceeds it, ``'warn'`` otherwise (the interval straddles it).
    Vectorised: arrays in, an array of strings out (a str for scalars)."""
    lower, upper, tolerance = np.broadcast_arrays(np.asarray(lower, float),
                                                  np.asarray(upper, float),
                                                  np.asarray(tolerance, float))
    out = np.where(upper <= tolerance, "good", np.where(lower > tolerance, "bad", "warn"))
    return str(out) if out.ndim == 0 else out


def pooled_loss(U, n, utility: str):
    """The pooled loss the relative tolerance is a share of: the unit-weighted mean of
    ``−U_k`` (mean squared error, Brier score) or, for accuracy, the error rate
    ``1 − mean U_k``. ``U`` (..., K), ``n`` (K,)."""
    w = np.asarray(n, float)
    mean = (np.asarray(U, float) * w).sum(-1) / w.sum()
    return 1.0 - mean if utility == "accuracy" else -mean


def absolute_pvalues(d, se, df, epsilon: float):
    """TOST p-value per pair for ``|Δ| < ε``: ``max(P(T ≥ (d + ε)/se), P(T ≤ (d − ε)/se))``,
    which is ``F_t((|d| − ε) / se)``; a pair with ``se = 0`` has p-value 0 when ``|d| < ε``."""
    x = _safe_ratio(d - epsilon, se, np.where(d < epsilon, -np.inf, np.inf))
    return cdf(x, df)


# -- relative: 2|U_k − U_k'| < ε |U_k + U_k'| (Def. 3.2), Fieller-type linear contrasts --------

def _relative_parts(U, v):
    K = U.shape[-1]
    i, j = pair_index(K)
    a, b = U[..., i], U[..., j]
    va, vb = v[..., i], v[..., j]
    s = np.where(a + b >= 0, 1.0, -1.0)
    c = np.abs(a + b) / 2.0
    return a, b, va, vb, s, c


def relative_bounds(U, v, df, level: float):
    """Per pair: the observed relative difference ``2|a − b| / |a + b|`` and the smallest ε for
    which both linear contrasts ``±(a − b) − (ε/2)·s·(a + b) < 0`` (``s`` the sign of
    ``a + b``) are shown at ``level`` — Fieller's method (Fieller 1954) applied to each one-sided
    test, exact for normal ``U_k`` given ``s``. The sign itself must be shown
    (``|a + b| > q·sqrt(v_a + v_b)``), otherwise the ratio has no finite bound (``inf``)."""
    a, b, va, vb, s, c = _relative_parts(U, v)
    df = np.broadcast_to(df, a.shape)
    t2 = quantile(level, df) ** 2
    obs = _safe_ratio(2 * np.abs(a - b), np.abs(a + b), np.where(a == b, 0.0, np.inf))
    A = c ** 2 - t2 * (va + vb) / 4.0
    bound = np.zeros(a.shape)
    for D, g in ((a - b, vb - va), (b - a, va - vb)):
        # f(ε) = (D − εc) + q·se(ε), se² = (va + vb)(1 + ε²/4) + ε·s·g: convex, f(∞) = −∞ when
        # A > 0; its crossing of 0 is the larger root of (D − εc)² = q²·se²(ε) (none when f < 0
        # everywhere, i.e. the contrast holds at ε = 0)
        B = -2.0 * D * c - t2 * s * g
        C0 = D ** 2 - t2 * (va + vb)
        disc = B ** 2 - 4 * A * C0
        with np.errstate(invalid="ignore", divide="ignore"):
            root = (-B + np.sqrt(np.maximum(disc, 0.0))) / (2 * np.where(A > 0, A, 1.0))
        root = np.where(disc >= 0, np.maximum(root, 0.0), 0.0)
        bound = np.maximum(bound, root)
    return obs, np.where(A > 0, bound, np.inf), df


def relative_pvalues(U, v, df, epsilon: float):
    """Per pair, the largest of the one-sided p-values of the contrasts
    ``±(a − b) − (ε/2) s (a + b) < 0`` and of ``s (a + b) > 0`` (the sign the contrasts
    assume): the IUT of Def. 3.2, consistent with :func:`relative_bounds`."""
    a, b, va, vb, s, c = _relative_parts(U, v)
    df = np.broadcast_to(df, a.shape)
    half = epsilon / 2.0
    total = np.sqrt(va + vb)
    p = cdf(_safe_ratio(-2 * c, total, np.where(c > 0, -np.inf, np.inf)), df)
    for D, wa, wb in ((a - b, 1 - half * s, 1 + half * s), (b - a, 1 + half * s, 1 - half * s)):
        L = D - epsilon * c
        se = np.sqrt(va * wa ** 2 + vb * wb ** 2)
        x = _safe_ratio(L, se, np.where(L < 0, -np.inf, np.inf))
        p = np.maximum(p, cdf(x, df))
    return p


# -- total variation: TV(F_k, F_k') < ε (Def. 5.1) ---------------------------------------------

@lru_cache(maxsize=16)
def _subsets(C: int) -> np.ndarray:
    """Indicator matrix (2^C, C) of every set of cells."""
    codes = np.arange(2 ** C)[:, None]
    return ((codes >> np.arange(C)) & 1).astype(float)


def tv_bounds(F, n, level: float):
    """Per pair: the observed TV and an upper ``level`` confidence bound of TV.

    ``F`` (R, K, C) holds cell frequencies, ``n`` (K,) the study sizes. ``TV = max_A
    (P_k(A) − P_k'(A))`` over sets of cells ``A``; at the true maximizing set the one-sided
    bound ``d_A + z·se_A`` (multinomial variance) covers ``TV`` with probability ``level``, so
    ``max_A (d_A + z·se_A)`` is a valid bound. Up to :data:`MAX_SUBSET_CELLS` cells every set
    is enumerated; above, the bound ``TV̂ + z·sqrt(1/(4 n_k) + 1/(4 n_k'))`` uses the largest
    possible ``se_A``.
    """
    from scipy import stats

    R, K, C = F.shape
    i, j = pair_index(K)
    z = stats.norm.ppf(level)
    tv = 0.5 * np.abs(F[:, i, :] - F[:, j, :]).sum(-1)
    ni, nj = n[i].astype(float), n[j].astype(float)
    if C <= MAX_SUBSET_CELLS:
        S = _subsets(C)                                       # (2^C, C)
        Pi = F[:, i, :] @ S.T                                  # (R, P, 2^C)
        Pj = F[:, j, :] @ S.T
        se = np.sqrt(np.maximum(Pi * (1 - Pi) / ni[:, None] + Pj * (1 - Pj) / nj[:, None],
                                0.0))
        bound = (Pi - Pj + z * se).max(-1)
    else:
        bound = tv + z * np.sqrt(0.25 / ni + 0.25 / nj)
    return tv, bound


def tv_pvalues(F, n, epsilon: float):
    """Per pair, the IUT p-value of ``TV < ε``: ``max_A P(Z ≥ (ε − d_A)/se_A)`` over sets of
    cells (the bound of :func:`tv_bounds` above :data:`MAX_SUBSET_CELLS` cells)."""
    from scipy import stats

    R, K, C = F.shape
    i, j = pair_index(K)
    ni, nj = n[i].astype(float), n[j].astype(float)
    if C <= MAX_SUBSET_CELLS:
        S = _subsets(C)
        Pi = F[:, i, :] @ S.T
        Pj = F[:, j, :] @ S.T
        d = Pi - Pj
        se = np.sqrt(np.maximum(Pi * (1 - Pi) / ni[:, None] + Pj * (1 - Pj) / nj[:, None],
                                0.0))
        x = _safe_ratio(d - epsilon, se, np.where(d < epsilon, -np.inf, np.inf))
        return stats.norm.cdf(x).max(-1)
    tv = 0.5 * np.abs(F[:, i, :] - F[:, j, :]).sum(-1)
    se = np.sqrt(0.25 / ni + 0.25 / nj)
    return stats.norm.cdf((tv - epsilon) / se)


# -- spread estimators --------------------------------------------------------------------

def spread_plugin(U) -> np.ndarray:
    """``max_k U_k − min_k U_k``: the descriptive smallest ε of Def. 3.1 (biased upward)."""
    return U.max(-1) - U.min(-1)


def _floor_variances(v, U=None):
    """Variances floored at 1e-12 of the row's largest (or, when all are 0, of the squared
    utilities' scale), so that weights ``1/v`` stay finite."""
    scale = np.nanmax(v, axis=-1, keepdims=True)
    if U is not None:
        level = np.maximum(np.nanmax(U * U, axis=-1, keepdims=True), 1.0)
        scale = np.where(scale > 0, scale, level)
    return np.maximum(v, 1e-12 * np.maximum(scale, _TINY))


def pm_tau2(U, v, iterations: int = 100) -> np.ndarray:
    """Paule–Mandel between-study variance: the root of ``Q(τ²) = K − 1`` with
    ``Q(τ²) = Σ w_k (U_k − μ̂)²``, ``w_k = 1/(v_k + τ²)`` (Paule & Mandel 1982; DerSimonian &
    Kacker 2007), 0 when ``Q(0) <= K − 1``. Bisection on ``[0, Σ(U_k − Ū)²/(K − 1)]`` (Q is
    decreasing and below ``K − 1`` at the upper end), vectorized over rows."""
    v = _floor_variances(v, U)
    K = U.shape[-1]

    def Q(t2):
        w = 1.0 / (v + t2[..., None])
        mu = (w * U).sum(-1, keepdims=True) / w.sum(-1, keepdims=True)
        return (w * (U - mu) ** 2).sum(-1)

    lo = np.zeros(U.shape[:-1])
    hi = ((U - U.mean(-1, keepdims=True)) ** 2).sum(-1) / (K - 1)
    zero = Q(lo) <= K - 1
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        above = Q(mid) > K - 1
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return np.where(zero, 0.0, (lo + hi) / 2.0)


@lru_cache(maxsize=8)
def _normal_draws(K: int, n_draws: int = N_DRAWS) -> tuple[np.ndarray, np.ndarray]:
    """Fixed standard normal draws ``(n_draws, K)`` and ``(n_draws,)``: the spread estimators
    are deterministic functions of the data (the same input, the same estimate)."""
    rng = np.random.default_rng(20080201 + K)
    return rng.standard_normal((n_draws, K)), rng.standard_normal(n_draws)


def _range_stats(theta, statistic: str) -> np.ndarray:
    if statistic == "absolute":
        return theta.max(-1) - theta.min(-1)
    K = theta.shape[-1]
    i, j = pair_index(K)
    a, b = theta[..., i], theta[..., j]
    num = 2.0 * np.abs(a - b)
    den = np.abs(a + b)
    rel = _safe_ratio(num, den, np.where(num == 0, 0.0, np.inf))
    return rel.max(-1)


def _posterior_means(U, v, t2):
    w = 1.0 / (v + t2[..., None])
    mu = (w * U).sum(-1, keepdims=True) / w.sum(-1, keepdims=True)
    B = t2[..., None] / (t2[..., None] + v)
    return w, mu, B


def spread_eb(U, v, *, statistic: str = "absolute", block: int = 256) -> np.ndarray:
    """Empirical-Bayes posterior mean of ``max_{k,k'} |θ_k − θ_k'|`` (or its relative form).

    Model: ``U_k ~ N(θ_k, v_k)``, ``θ_k ~ N(μ, τ²)``; ``τ²`` by Paule–Mandel (:func:`pm_tau2`),
    ``μ`` flat. Given ``τ²`` the posterior is ``μ ~ N(μ̂, 1/Σw_k)`` and
    ``θ_k | μ ~ N(B_k U_k + (1 − B_k) μ, B_k v_k)`` with ``B_k = τ²/(τ² + v_k)`` (Morris 1983);
    the estimate is the mean of the statistic over :data:`N_DRAWS` fixed draws. It targets the
    studies' own true spread (conditional on the studies), shrinks the noise out of the
    observed maximum, and is 0 when ``τ̂² = 0``.
    """
    v = _floor_variances(v, U)
    t2 = pm_tau2(U, v)
    w, mu, B = _posterior_means(U, v, t2)
    Z, Z0 = _normal_draws(U.shape[-1])
    out = np.empty(U.shape[:-1])
    flat_U = U.reshape(-1, U.shape[-1])
    flat = [x.reshape(-1, x.shape[-1]) for x in (v, w, mu, B)]
    res = out.reshape(-1)
    for r0 in range(0, flat_U.shape[0], block):
        sl = slice(r0, r0 + block)
        Ub, vb, wb, mub, Bb = flat_U[sl], flat[0][sl], flat[1][sl], flat[2][sl], flat[3][sl]
        mu_draw = mub[:, None, :] + Z0[None, :, None] / np.sqrt(wb.sum(-1))[:, None, None]
        theta = (Bb[:, None, :] * Ub[:, None, :] + (1 - Bb[:, None, :]) * mu_draw
                 + np.sqrt(Bb * vb)[:, None, :] * Z[None])
        res[sl] = _range_stats(theta, statistic).mean(-1)
    return out


def spread_bootstrap(U, v, *, statistic: str = "absolute", block: int = 256) -> np.ndarray:
    """Bootstrap bias correction ``max(0, 2 θ̂ − mean θ̂*)`` with ``U* = U + sqrt(v)·Z`` (a
    parametric bootstrap on :data:`N_DRAWS` fixed normal draws; Efron & Tibshirani 1993,
    sec. 10.6), ``block`` rows at a time."""
    Z, _ = _normal_draws(U.shape[-1])
    obs = _range_stats(U, statistic)
    flat_U = U.reshape(-1, U.shape[-1])
    flat_s = np.sqrt(v).reshape(-1, U.shape[-1])
    star = np.empty(flat_U.shape[0])
    for r0 in range(0, flat_U.shape[0], block):
        sl = slice(r0, r0 + block)
        star[sl] = _range_stats(flat_U[sl, None, :] + flat_s[sl, None, :] * Z,
                                statistic).mean(-1)
    return np.maximum(0.0, 2 * obs - star.reshape(obs.shape))


def spread_tv_bootstrap(F, n, *, n_draws: int = 500, block: int = 64) -> np.ndarray:
    """Bootstrap bias correction of ``max_{k,k'} TV(F_k, F_k')``: ``max(0, 2 TV̂ − mean TV̂*)``
    with ``F*_k ~ Multinomial(n_k, F_k)/n_k`` (a parametric bootstrap; Efron & Tibshirani 1993,
    sec. 10.6) on a fixed random state, so the estimate is a deterministic function of the data.
    ``F`` (R, K, C) cell frequencies, ``n`` (K,) study sizes; ``block`` rows at a time."""
    R, K, C = F.shape
    i, j = pair_index(K)
    obs = (0.5 * np.abs(F[:, i, :] - F[:, j, :]).sum(-1)).max(-1)
    rng = np.random.default_rng(19932001)
    n = np.asarray(n, dtype=np.int64)
    star = np.empty(R)
    P = np.clip(F, 0.0, None)
    P = P / np.maximum(P.sum(-1, keepdims=True), _TINY)
    for r0 in range(0, R, block):
        sl = slice(r0, min(r0 + block, R))
        draws = np.stack([rng.multinomial(n[k], P[sl, k, :], size=(n_draws, P[sl].shape[0]))
                          for k in range(K)], axis=2) / n[None, None, :, None]  # (D, b, K, C)
        tv = 0.5 * np.abs(draws[:, :, i, :] - draws[:, :, j, :]).sum(-1).max(-1)  # (D, b)
        star[sl] = tv.mean(0)
    return np.maximum(0.0, 2 * obs - star)


@lru_cache(maxsize=64)
def expected_range(K: int) -> float:
    """``d_K = E[max − min]`` of K independent standard normals: ``∫ 1 − Φ(x)^K −
    (1 − Φ(x))^K dx`` (Tippett 1925); d_2 = 2/√π = 1.128, d_5 = 2.326, d_10 = 3.078."""
    from scipy import integrate, stats

    value, _ = integrate.quad(lambda x: 1 - stats.norm.cdf(x) ** K - stats.norm.sf(x) ** K,
                              -math.inf, math.inf)
    return float(value)


def spread_re_range(U, v) -> np.ndarray:
    """``τ̂ · d_K``: the expected range of K true study utilities drawn from the random-effects
    distribution ``N(μ, τ²)`` (a population quantity, not the K studies' own spread)."""
    return np.sqrt(pm_tau2(U, v)) * expected_range(U.shape[-1])
