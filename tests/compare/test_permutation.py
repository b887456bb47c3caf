"""Permutation tests: mlxtend's exact p-values, brute-force enumeration, Monte Carlo behaviour."""

from __future__ import annotations

import json
from itertools import combinations, product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from replikit.compare._result import ComparisonResult
from replikit.compare.permutation import MAX_EXACT, permutation_test
from replikit.errors import DataError, ParameterError

REF = json.loads((Path(__file__).parents[1] / "reference" / "compare" / "comparison.json")
                 .read_text())["permutation"]


def test_independent_exact_reference():
    x, y = REF["independent"]["x"], REF["independent"]["y"]
    two = permutation_test(x, y, method="exact")
    greater = permutation_test(x, y, method="exact", alternative="greater")
    assert isinstance(two, ComparisonResult)
    assert two.pvalue == pytest.approx(REF["independent"]["p_two_sided"], abs=5e-6)
    assert greater.pvalue == pytest.approx(REF["independent"]["p_greater"], abs=5e-6)
    assert two.extra["n_resamples"] == 12870 and two.extra["exact"]
    assert two.estimate == pytest.approx(np.mean(x) - np.mean(y))


def test_paired_exact_reference():
    x, y = REF["paired"]["x"], REF["paired"]["y"]
    res = permutation_test(x, y, paired=True, method="exact")
    assert res.pvalue == pytest.approx(REF["paired"]["p_two_sided"], abs=1e-12)
    assert res.extra["n_resamples"] == 128 and res.n == 7
    assert res.test == "permutation_paired"


def _brute_independent(x, y):
    pooled = np.concatenate([x, y])
    n, na = pooled.size, len(x)
    stats_ = []
    for idx in combinations(range(n), na):
        mask = np.zeros(n, bool)
        mask[list(idx)] = True
        stats_.append(pooled[mask].mean() - pooled[~mask].mean())
    return np.array(stats_)


def _brute_paired(x, y):
    d = np.asarray(x) - np.asarray(y)
    return np.array([np.mean(np.array(s) * d) for s in product([1, -1], repeat=d.size)])


def _p(null, obs, alternative):
    tol = 1e-9 * max(1.0, abs(obs))
    if alternative == "greater":
        return np.mean(null >= obs - tol)
    if alternative == "less":
        return np.mean(null <= obs + tol)
    return np.mean(np.abs(null) >= abs(obs) - tol)


small = st.lists(st.integers(-20, 20), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(small, small, st.sampled_from(["two-sided", "less", "greater"]))
def test_independent_exact_equals_enumeration(x, y, alternative):
    # integer data: exact ties with the observed value are frequent
    x, y = np.array(x, float), np.array(y, float)
    null = _brute_independent(x, y)
    obs = x.mean() - y.mean()
    res = permutation_test(x, y, method="exact", alternative=alternative)
    assert res.pvalue == pytest.approx(_p(null, obs, alternative), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-9, 9), st.integers(-9, 9)), min_size=1, max_size=9),
       st.sampled_from(["two-sided", "less", "greater"]))
def test_paired_exact_equals_enumeration(pairs, alternative):
    x = np.array([p[0] for p in pairs], float) / 3
    y = np.array([p[1] for p in pairs], float) / 3
    null = _brute_paired(x, y)
    res = permutation_test(x, y, paired=True, method="exact", alternative=alternative)
    assert res.pvalue == pytest.approx(_p(null, np.mean(x - y), alternative), abs=1e-12)


def test_symmetry_and_range():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=7), rng.normal(size=9) + 0.3
    g = permutation_test(x, y, method="exact", alternative="greater")
    ls = permutation_test(y, x, method="exact", alternative="less")
    assert g.pvalue == pytest.approx(ls.pvalue, abs=1e-12)
    assert 0 < permutation_test(x, y, method="exact").pvalue <= 1


def test_approximate_close_to_exact_and_reproducible():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=10), rng.normal(size=10) + 0.8
    exact = permutation_test(x, y, method="exact").pvalue
    a1 = permutation_test(x, y, method="approximate", n_resamples=40_000, random_state=3)
    a2 = permutation_test(x, y, method="approximate", n_resamples=40_000, random_state=3)
    assert a1.pvalue == a2.pvalue and not a1.extra["exact"]
    mc_se = np.sqrt(exact * (1 - exact) / 40_000)
    assert abs(a1.pvalue - exact) < 5 * mc_se + 1e-4
    d = rng.normal(size=14) + 0.4
    pe = permutation_test(d, np.zeros(14), paired=True, method="exact").pvalue
    pa = permutation_test(d, np.zeros(14), paired=True, method="approximate",
                          n_resamples=40_000, random_state=0).pvalue
    assert abs(pa - pe) < 5 * np.sqrt(pe * (1 - pe) / 40_000) + 1e-4


def test_approximate_never_zero():
    res = permutation_test(np.arange(30) + 100.0, np.arange(30), method="approximate",
                           n_resamples=500, random_state=0)
    assert res.pvalue == pytest.approx(1 / 501)


def test_auto_and_large_exact():
    x, y = np.arange(5.0), np.arange(5.0) + 1
    assert permutation_test(x, y).extra["exact"]  # C(10, 5) = 252
    assert permutation_test(np.arange(10.0), np.arange(10.0), paired=True).extra["exact"]  # 2^10
    assert permutation_test(np.arange(11.0), np.arange(11.0) + 1).extra["exact"]  # C(22, 11)
    big = permutation_test(np.arange(20.0), np.arange(20.0) + 0.5, random_state=0)
    assert not big.extra["exact"] and big.extra["n_resamples"] == 10_000
    with pytest.raises(ParameterError, match="approximate"):
        permutation_test(np.arange(20.0), np.arange(20.0), method="exact")
    assert MAX_EXACT >= 2**20


def test_paired_exact_agrees_with_t_for_many_pairs():
    # with 18 normal pairs the permutation and t-test p-values are close
    rng = np.random.default_rng(11)
    x = rng.normal(size=18)
    y = x + rng.normal(0.3, 1.0, size=18)
    perm = permutation_test(x, y, paired=True, method="exact").pvalue
    assert perm == pytest.approx(stats.ttest_rel(x, y).pvalue, abs=0.03)


def test_input_errors():
    with pytest.raises(DataError, match="same length"):
        permutation_test([1, 2, 3], [1, 2], paired=True)
    with pytest.raises(ParameterError, match="method"):
        permutation_test([1, 2], [3, 4], method="bootstrap")
    with pytest.raises(DataError, match="finite"):
        permutation_test([1, np.nan], [3, 4])
