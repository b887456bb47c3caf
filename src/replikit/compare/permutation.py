"""Permutation tests of a difference in means, exact or Monte Carlo, vectorised.

Under the null hypothesis the labels "model a" / "model b" are exchangeable: for independent
samples every split of the pooled values into groups of sizes ``n_a`` and ``n_b`` is equally
likely; for paired samples every sign pattern of the paired differences is. The p-value is the
share of those rearrangements whose mean difference is at least as extreme as the observed one.

``method='exact'`` enumerates all ``C(n_a + n_b, n_a)`` splits or all ``2^n`` sign patterns: the
subset sums (or signed sums) of each half of the data are built by doubling and added pairwise in
array chunks (meet in the middle), so no Python loop runs per rearrangement;
``method='approximate'`` draws ``n_resamples`` of them at random and reports
``(count + 1) / (n_resamples + 1)`` (Phipson & Smyth 2010), which never returns 0 and keeps the
test valid. ``method='auto'`` enumerates when there are at most ``max(n_resamples, 2^20)``
rearrangements: enumerating a million takes milliseconds, ten million about a tenth of a second.

Caution (Gardner & Brooks 2017, section 3): permuting scores of overlapping
cross-validation splits treats them as independent and is as invalid as the naive paired t-test.
Use these tests on independent units — datasets, or rows of an independent test set.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._random import check_random_state
from .._validation import check_1d_array, check_alternative, check_choice, check_int
from ..errors import DataError, ParameterError
from ._result import ComparisonResult
from ._words import fill_doc

__all__ = ["permutation_test", "MAX_EXACT", "AUTO_EXACT"]

#: Largest number of rearrangements :func:`permutation_test` enumerates.
MAX_EXACT = 2**26
#: ``method='auto'`` enumerates up to this many rearrangements (or ``n_resamples`` if larger).
AUTO_EXACT = 2**20
_CHUNK = 2**16


def _extreme_count(values: np.ndarray, observed: float, alternative: str, gamma: float) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(values >= observed - gamma))
    if alternative == "less":
        return int(np.count_nonzero(values <= observed + gamma))
    return int(np.count_nonzero(np.abs(values) >= abs(observed) - gamma))


def _signed_sums(d: np.ndarray) -> np.ndarray:
    """All ``2^len(d)`` sums ``sum_i s_i d_i`` with ``s_i = ±1`` (doubling, vectorised)."""
    sums = np.zeros(1)
    for value in d:
        sums = np.concatenate([sums + value, sums - value])
    return sums


def _subset_sums(v: np.ndarray, max_size: int) -> list[np.ndarray]:
    """``out[j]`` = sums of all ``j``-element subsets of ``v``, ``j = 0..max_size``."""
    out = [np.zeros(1)] + [np.zeros(0) for _ in range(max_size)]
    for value in v:
        for j in range(max_size, 0, -1):
            out[j] = np.concatenate([out[j], out[j - 1] + value])
    return out


def _count_sumset(left: np.ndarray, right: np.ndarray, transform, observed: float,
                  alternative: str, gamma: float) -> int:
    """Extreme count over all ``transform(l + r)`` for ``l`` in ``left``, ``r`` in ``right``."""
    if left.size == 0 or right.size == 0:
        return 0
    rows = max(1, (_CHUNK * 16) // left.size)
    count = 0
    for start in range(0, right.size, rows):
        block = left[None, :] + right[start:start + rows, None]
        count += _extreme_count(transform(block), observed, alternative, gamma)
    return count


def _paired_exact(d: np.ndarray, observed: float, alternative: str, gamma: float) -> int:
    """Meet in the middle: the signed sums of each half, added pairwise in chunks."""
    n = d.size
    h = n // 2
    return _count_sumset(_signed_sums(d[:h]), _signed_sums(d[h:]), lambda s: s / n, observed,
                         alternative, gamma)


def _paired_random(d, observed, alternative, gamma, n_resamples, rng) -> int:
    n = d.size
    count = 0
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, n))
        count += _extreme_count(signs @ d / n, observed, alternative, gamma)
    return count


def _independent_stat(sum_a: np.ndarray, total: float, na: int, nb: int) -> np.ndarray:
    return sum_a / na - (total - sum_a) / nb


def _independent_exact(pooled, na, nb, observed, alternative, gamma) -> int:
    """All C(n, na) splits: j of the first half's values and na - j of the second's."""
    total = float(pooled.sum())
    h = pooled.size // 2
    left = _subset_sums(pooled[:h], min(na, h))
    right = _subset_sums(pooled[h:], min(na, pooled.size - h))
    count = 0
    for j in range(max(0, na - (pooled.size - h)), min(na, h) + 1):
        count += _count_sumset(left[j], right[na - j],
                               lambda s: _independent_stat(s, total, na, nb), observed,
                               alternative, gamma)
    return count


def _independent_random(pooled, na, nb, observed, alternative, gamma, n_resamples, rng) -> int:
    total = float(pooled.sum())
    count = 0
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        perm = rng.permuted(np.broadcast_to(pooled, (size, pooled.size)), axis=1)
        sums = perm[:, :na].sum(axis=1)
        count += _extreme_count(_independent_stat(sums, total, na, nb), observed, alternative,
                                gamma)
    return count


@fill_doc()
def permutation_test(x, y, *, paired: bool = False, method: str = "auto",
                     n_resamples: int = 10_000, alternative: str = "two-sided",
                     random_state=None) -> ComparisonResult:
    """Permutation test of ``mean(x) - mean(y)`` (independent) or ``mean(x - y)`` (paired).

    Under the null the labels "model a" / "model b" are exchangeable; the p-value is the share
    of rearrangements (re-splits of the pooled values, or sign flips of the paired
    differences) whose mean difference is at least as extreme as the observed one. Use it on
    independent units — datasets, or rows of an independent test set: permuting scores of
    overlapping cross-validation splits is as invalid as the naive paired t-test (Gardner &
    Brooks 2017, section 3).

    Parameters
    ----------
    x, y : array-like of shape (n_x,), (n_y,)
        Scores of model ``a`` and model ``b``. With ``paired=True`` they must have the same
        length and ``x[i]``, ``y[i]`` belong to the same unit (dataset, test row).
    paired : bool, default False
        Paired design (sign flips of ``d = x - y``) instead of two independent samples
        (re-splits of the pooled values).
    method : {'auto', 'exact', 'approximate'}, default 'auto'
        ``'exact'`` enumerates every rearrangement (at most :data:`MAX_EXACT`);
        ``'approximate'`` draws ``n_resamples`` random ones; ``'auto'`` is exact when there are
        at most ``max(n_resamples, AUTO_EXACT)`` rearrangements.
    n_resamples : int, default 10000
        Random rearrangements for ``'approximate'``.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        ``'greater'``: the mean of ``x`` exceeds that of ``y``. Two-sided counts rearrangements
        with ``|T| >= |T_obs|`` (the null distribution of the mean difference is centred at 0).
    random_state : None, int or numpy.random.Generator
        Root of the random rearrangements (unused when exact).

    Returns
    -------
    ComparisonResult
        ``statistic`` = ``estimate`` = the observed mean difference; ``se`` and the interval are
        NaN (a permutation test has no variance model); ``extra`` holds ``n_resamples`` (the
        rearrangements counted: all of them when exact) and ``exact``. The exact p-value is
        ``#{T >= T_obs} / #rearrangements`` (the observed one included); the approximate one
        ``(#{T >= T_obs} + 1) / (n_resamples + 1)``. Ties with the observed value are counted
        with a relative tolerance of 1e-10.

    Raises
    ------
    ParameterError
        ``method='exact'`` with more than :data:`MAX_EXACT` rearrangements.

    See Also
    --------
    replikit.compare.wilcoxon_holm : Signed-rank tests over datasets.
    replikit.compare.mcnemar_test : Two classifiers on one test set.

    References
    ----------
    {refs:phipson2010,good2005,gardner2017}

    Examples
    --------
    >>> x = [3.67, 1.72, 3.46, 2.60, 2.03, 2.10, 3.01]
    >>> y = [2.11, 1.79, 2.71, 1.89, 1.69, 1.71, 2.01]
    >>> permutation_test(x, y, paired=True, method="exact").pvalue
    0.03125
    """
    paired = bool(paired)
    method = check_choice(method, "method", ("auto", "exact", "approximate"))
    alternative = check_alternative(alternative)
    n_resamples = check_int(n_resamples, "n_resamples", min_value=1)
    xa = check_1d_array(x, "x", min_size=1)
    ya = check_1d_array(y, "y", min_size=1)
    if paired:
        if xa.size != ya.size:
            raise DataError(f"paired samples must have the same length: `x` has {xa.size}, "
                            f"`y` has {ya.size}.")
        d = xa - ya
        observed = float(d.mean())
        n_total = 2.0**d.size
        scale = float(np.max(np.abs(d)))
        n_units = int(d.size)
    else:
        pooled = np.concatenate([xa, ya])
        observed = float(xa.mean() - ya.mean())
        n_total = float(special.comb(pooled.size, xa.size, exact=True))
        scale = float(np.max(np.abs(pooled)))
        n_units = int(pooled.size)
    if method == "auto":
        method = "exact" if n_total <= max(n_resamples, AUTO_EXACT) else "approximate"
    if method == "exact" and n_total > MAX_EXACT:
        raise ParameterError(
            f"`method='exact'` would enumerate {n_total:.4g} rearrangements (more than "
            f"{MAX_EXACT}); use method='approximate'."
        )
    gamma = 1e-10 * max(abs(observed), scale, 1e-300)
    if method == "exact":
        if paired:
            count = _paired_exact(d, observed, alternative, gamma)
        else:
            count = _independent_exact(pooled, xa.size, ya.size, observed, alternative, gamma)
        n_counted = int(n_total)
        pvalue = count / n_counted
    else:
        rng = check_random_state(random_state)
        if paired:
            count = _paired_random(d, observed, alternative, gamma, n_resamples, rng)
        else:
            count = _independent_random(pooled, xa.size, ya.size, observed, alternative, gamma,
                                        n_resamples, rng)
        n_counted = n_resamples
        pvalue = (count + 1) / (n_resamples + 1)
    exact = method == "exact"
    design = "paired" if paired else "independent"
    return ComparisonResult(
        statistic=observed, pvalue=float(min(1.0, pvalue)), df=None, estimate=observed,
        se=math.nan, alternative=alternative,
        method=f"permutation test ({design}, {'exact' if exact else 'Monte Carlo'})",
        extra={"n_resamples": n_counted, "exact": exact, "count": count},
        test=f"permutation_{design}", valid=True,
        requires="independent units (datasets or test rows)", n=n_units,
    )
