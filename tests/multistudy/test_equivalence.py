"""replikit.multistudy.equivalence: the intersection–union test of ε-replicability, checked
against statsmodels' TOST (Welch), hand computations, the test's own inversion and a small
simulation; the spread estimators against statsmodels' Paule–Mandel τ² and closed forms."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.weightstats import ttost_ind

from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.multistudy import (
    PermutationMethod,
    assess,
    epsilon_test,
    from_arrays,
    spread_estimates,
    study_utilities,
)
from replikit.multistudy import kernels as ek


def _binary_studies(ps=(0.8, 0.75, 0.85), n=(120, 150, 90), seed=0):
    rng = np.random.default_rng(seed)
    y, pred, s = [], [], []
    for k, (p, m) in enumerate(zip(ps, n, strict=True)):
        yy = rng.integers(0, 2, m)
        correct = rng.random(m) < p
        y.append(yy)
        pred.append(np.where(correct, yy, 1 - yy))
        s += [f"s{k}"] * m
    return from_arrays(np.concatenate(pred), np.concatenate(y), np.array(s))


def test_two_studies_agree_with_statsmodels_welch_tost():
    d = _binary_studies(ps=(0.8, 0.72), n=(120, 150))
    su = study_utilities(d, "accuracy")
    r = epsilon_test(su, tolerance=0.15)
    # the unit utilities: 1 when the prediction is right
    u = (d.pred == d.y).astype(float)
    x1, x2 = u[d.codes == 0], u[d.codes == 1]
    p_ref, _, _ = ttost_ind(x1, x2, -0.15, 0.15, usevar="unequal")
    assert r.pvalue == pytest.approx(p_ref, rel=1e-10)
    # hand: F_t((|d| - ε)/se) on Welch-Satterthwaite df, and the bound |d| + t_0.95 se
    v1, v2 = x1.var(ddof=1) / x1.size, x2.var(ddof=1) / x2.size
    df = (v1 + v2) ** 2 / (v1 ** 2 / (x1.size - 1) + v2 ** 2 / (x2.size - 1))
    dd, se = abs(x1.mean() - x2.mean()), np.sqrt(v1 + v2)
    assert r.pvalue == pytest.approx(stats.t.cdf((dd - 0.15) / se, df), rel=1e-12)
    assert r.smallest_tolerance == pytest.approx(dd + stats.t.ppf(0.95, df) * se, rel=1e-12)
    assert r.pairs["df"].iloc[0] == pytest.approx(df)
    assert r.statistic == pytest.approx(dd)


def test_intersection_union_takes_the_largest_pairwise_pvalue_and_bound():
    t = pd.DataFrame({"study": list("abcd"), "utility": [0.80, 0.82, 0.79, 0.86],
                      "se": [0.01, 0.02, 0.015, 0.01], "n": [400, 300, 350, 500]})
    r = epsilon_test(t, tolerance=0.1)
    assert len(r.pairs) == 6
    assert r.pvalue == r.pairs["pvalue"].max() and r.smallest_tolerance == r.pairs[
        "upper_bound"].max()
    # no multiplicity correction: each pair is a level-α TOST
    one = epsilon_test(t.iloc[[2, 3]], tolerance=0.1)
    assert one.pvalue == pytest.approx(r.pairs.query("study_a == 'c' and study_b == 'd'")
                                       ["pvalue"].iloc[0])


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_bound_inverts_the_test(kind):
    t = pd.DataFrame({"study": list("abc"), "utility": [0.70, 0.78, 0.74],
                      "se": [0.02, 0.025, 0.02], "n": [200, 150, 220]})
    r = epsilon_test(t, kind=kind, alpha=0.05)
    at = epsilon_test(t, kind=kind, tolerance=r.smallest_tolerance).pvalue
    assert at == pytest.approx(0.05, abs=1e-6)
    assert epsilon_test(t, kind=kind, tolerance=r.smallest_tolerance * 1.01).replicable
    assert not epsilon_test(t, kind=kind, tolerance=r.smallest_tolerance * 0.99).replicable
    # a higher level widens the bound
    assert r.confidence_interval(0.99).high > r.smallest_tolerance > r.confidence_interval(
        0.8).high


def test_relative_equals_absolute_test_of_the_contrast_by_hand():
    # two studies, sign of a + b certain: the contrast (a − b) − (ε/2)(a + b) < 0
    a, b, va, vb, eps = 0.8, 0.7, 0.0004, 0.0009, 0.3
    t = pd.DataFrame({"study": ["a", "b"], "utility": [a, b], "se": np.sqrt([va, vb])})
    r = epsilon_test(t, kind="relative", tolerance=eps)
    L = (a - b) - eps / 2 * (a + b)
    se = np.sqrt(va * (1 - eps / 2) ** 2 + vb * (1 + eps / 2) ** 2)
    assert r.pvalue == pytest.approx(stats.norm.cdf(L / se), rel=1e-10)
    assert r.statistic == pytest.approx(2 * 0.1 / 1.5)


def test_total_variation_bound_and_pvalue_by_hand():
    # two cells: TV = |p1 − q1|; the sets of cells are {}, {0}, {1}, {0, 1}
    y = np.r_[np.zeros(60), np.ones(40), np.zeros(45), np.ones(55)].astype(int)
    d = from_arrays(y, y, np.repeat(["a", "b"], 100))  # predictions right: cells (0,0), (1,1)
    res = assess(d, "accuracy", n_resamples=20, permutation=PermutationMethod(9),
                 random_state=0)
    r = epsilon_test(res, kind="tv", tolerance=0.3)
    p, q = 0.6, 0.45
    se = np.sqrt(p * (1 - p) / 100 + q * (1 - q) / 100)
    assert r.statistic == pytest.approx(0.15)
    assert r.smallest_tolerance == pytest.approx(0.15 + stats.norm.ppf(0.95) * se)
    assert r.pvalue == pytest.approx(stats.norm.cdf((0.15 - 0.3) / se))
    # the bias-corrected TV: below the observed maximum, deterministic
    assert r.spread_method == "bootstrap" and 0 <= r.estimate < r.statistic
    assert epsilon_test(res, kind="tv").estimate == r.estimate
    assert epsilon_test(res, kind="tv", spread_method="plugin").estimate == r.statistic
    with pytest.raises(ParameterError, match="kind='tv'"):
        epsilon_test(res.utilities, kind="tv")


def test_bootstrap_standard_errors():
    d = _binary_studies()
    res = assess(d, "accuracy", n_resamples=300, permutation=PermutationMethod(9),
                 random_state=1)
    r = epsilon_test(res, se_method="bootstrap", tolerance=0.2)
    s = res.bootstrap.utility_se()
    assert r.pairs["se"].iloc[0] == pytest.approx(np.hypot(s[0], s[1]))
    assert np.isinf(r.pairs["df"]).all()
    delta = epsilon_test(res, tolerance=0.2)
    assert r.smallest_tolerance == pytest.approx(delta.smallest_tolerance, rel=0.2)
    with pytest.raises(ParameterError, match="se_method"):
        epsilon_test(res.utilities, se_method="bootstrap")


def test_pm_tau2_matches_statsmodels_and_expected_range_closed_form():
    rng = np.random.default_rng(3)
    U = rng.normal(0.8, 0.05, 6)
    v = rng.uniform(0.0005, 0.002, 6)
    ref = combine_effects(U, v, method_re="pm")
    assert ek.pm_tau2(U[None], v[None])[0] == pytest.approx(ref.tau2, rel=1e-6)
    assert ek.expected_range(2) == pytest.approx(2 / np.sqrt(np.pi))
    # Tippett's d_n table (Tippett 1925): 2.326 for 5, 3.078 for 10
    assert ek.expected_range(5) == pytest.approx(2.3259, abs=1e-4)
    assert ek.expected_range(10) == pytest.approx(3.0775, abs=1e-4)


def test_spread_estimates_are_deterministic_and_shrink():
    U, se = [0.80, 0.81, 0.79], [0.03, 0.03, 0.03]
    a, b = spread_estimates(U, se), spread_estimates(U, se)
    assert a == b
    # homogeneous studies (Q < K − 1): τ̂² = 0, so the empirical Bayes range is 0
    assert a["eb"] == 0.0 and a["re_range"] == 0.0
    assert a["plugin"] == pytest.approx(0.02)
    far = spread_estimates([0.6, 0.8, 0.95], [0.01, 0.01, 0.01])
    assert far["eb"] == pytest.approx(0.35, rel=0.05)  # precise studies: little shrinkage
    rows = spread_estimates(np.array([U, [0.6, 0.8, 0.95]]), np.array([se, [0.01] * 3]))
    assert rows["eb"][1] == pytest.approx(far["eb"])


def test_the_test_holds_its_level_at_the_boundary():
    # K = 2 studies of 1000 units, accuracies 0.75 and 0.85: exactly at ε = 0.1
    rng = np.random.default_rng(7)
    R, n = 4000, 1000
    U = rng.binomial(n, [0.75, 0.85], size=(R, 2)) / n
    v = U * (1 - U) / (n - 1)
    df = ek.welch_df(v[:, :1], v[:, 1:], n, n)
    d, se, df, _ = ek.absolute_bounds(U, v, df, 0.95)
    size = (ek.absolute_pvalues(d, se, df, 0.1).max(-1) <= 0.05).mean()
    assert abs(size - 0.05) < 3 * np.sqrt(0.05 * 0.95 / R) + 0.005


def test_errors_name_the_parameter():
    t = pd.DataFrame({"study": ["a", "b"], "utility": [0.8, 0.7], "se": [0.01, 0.01]})
    with pytest.raises(ParameterError, match="kind"):
        epsilon_test(t, kind="ratio")
    with pytest.raises(ParameterError, match="`tolerance`"):
        epsilon_test(t, tolerance=-1)
    with pytest.raises(ParameterError, match="alpha"):
        epsilon_test(t, alpha=1.5)
    with pytest.raises(DataError, match="missing se"):
        epsilon_test(t.drop(columns="se"))
    with pytest.raises(DataError, match="2 studies|compares studies"):
        epsilon_test(t.iloc[:1])
    with pytest.raises(ParameterTypeError, match="data"):
        epsilon_test([0.8, 0.7])
    with pytest.raises(ParameterError, match="absolute spread"):
        epsilon_test(t, kind="relative", spread_method="re_range")
    r = epsilon_test(t)
    assert r.replicable is None and np.isnan(r.pvalue)
    assert "smallest_tolerance" in r.to_frame() and "max |U_k - U_k'|" in str(r)
