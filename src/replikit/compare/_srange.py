"""The studentized range with infinite degrees of freedom, vectorised over quantiles.

The Nemenyi test (Demšar 2006, section 3.2.2) needs, for k models, the distribution of the range
``R`` of k independent standard normals (the studentized range ``Q_{k, inf}``):

``P(R <= q) = k ∫ φ(z) [Φ(z) - Φ(z - q)]^(k-1) dz``

(Hartley 1942; Lund & Lund 1983, eq. 1 with ν = ∞). ``scipy.stats.studentized_range`` integrates
it adaptively, one ``quad`` call per quantile — 1,225 calls for the pairwise p-values of 50
models. Here the upper tail is written without cancellation,

``P(R > q) = ∫ w(z) [1 - (1 - Φ(z - q) / Φ(z))^(k-1)] dz``,   ``w(z) = k φ(z) Φ(z)^(k-1)``

(``k ∫ φ Φ^(k-1) dz = 1``), with the bracket evaluated as ``-expm1((k-1) log1p(-b/a))`` so it
keeps its relative accuracy when it is tiny (far tail), and integrated for every ``q`` at once
by the trapezoidal rule on one uniform grid of ``z``. The integrand is smooth and decays like a
Gaussian at both ends, where the trapezoidal rule converges geometrically in the step
(Trefethen & Weideman 2014, SIAM Review 56, section 5): a step of 0.2 (k <= 50) down to 0.1
(k <= 5,000) keeps the quadrature error below 1e-11 relative. The grid starts where ``w``
reaches 1e-30 of its peak and stops at ``q / 2 + 9``: the integrand's mass sits near the peak
of ``w`` for small ``q`` and moves to ``q / 2`` (a Gaussian of sd ``1 / sqrt 2``) for large
``q``.

Accuracy (tests/compare/test_srange.py): for k = 2 the range is ``|X1 - X2|``, so
``P(R > q) = erfc(q / 2)`` exactly — matched to 1e-12 relative down to 1e-300; for k = 2 to
1,000 the values agree with ``scipy.stats.studentized_range.sf`` within 1e-8 relative plus 1e-14
absolute (scipy computes ``1 - cdf`` and so loses its relative accuracy below about
1e-12 — at q = 20 it returns 1e-16 for a tail of 1e-42); in the far tail they approach the
Bonferroni asymptote ``C(k, 2) erfc(q / 2)`` (ratio 1 within 1e-12 at q = 40). The quantile
(:func:`range_isf`) agrees with ``scipy.stats.studentized_range.ppf`` within 1e-11.

References
----------
Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7.
Hartley, H. O. (1942). The range in random samples. Biometrika 32(3/4).
Lund, R. E. & Lund, J. R. (1983). Algorithm AS 190: probabilities and upper quantiles for the
studentized range. Applied Statistics 32(2).
Trefethen, L. N. & Weideman, J. A. C. (2014). The exponentially convergent trapezoidal rule.
SIAM Review 56(3).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

__all__ = ["range_sf", "range_cdf", "range_isf"]

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
