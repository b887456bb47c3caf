"""Resampling and permutation tests (Parmigiani 2023, sec. 6): properties and calibration."""

import numpy as np
import pytest
from scipy import stats

from replikit.errors import DataError, ParameterError
from replikit.multistudy import from_arrays, permutation_test, resample_replicability


def _data(seed=0, shifts=(0.0, 0.0, 0.0), n=(60, 80, 100)):
    rng = np.random.default_rng(seed)
    s = np.repeat([f"s{k}" for k in range(len(n))], n)
    y = rng.normal(size=sum(n))
    p = y + rng.normal(size=sum(n)) + np.repeat(shifts, n)
    return from_arrays(y, p, s)


def test_within_bootstrap_se_matches_plugin_se():
    d = _data(shifts=(0.0, 0.0), n=(400, 300))
    r = resample_replicability(d, "squared", n_resamples=4000, random_state=1)
    u = -(d.y - d.pred) ** 2
    for k in range(2):
        uk = u[d.codes == k]
        plug_in = uk.std(ddof=0) / np.sqrt(uk.size)  # the bootstrap's target
        assert r.utility_se()[k] == pytest.approx(plug_in, rel=0.06)
    # independent studies: SE of the difference is sqrt(se1^2 + se2^2)
    dse = r.difference_se().to_numpy()
    assert dse[0, 1] == pytest.approx(np.hypot(*r.utility_se()), rel=0.06)
    assert np.allclose(dse, dse.T) and np.all(np.diag(dse) == 0)


def test_same_seed_bit_identical_and_different_seed_differs():
    d = _data()
    for scheme in ("within", "cluster", "studystrap"):
        a = resample_replicability(d, "squared", bootstrap=scheme, n_resamples=50, random_state=7)
        b = resample_replicability(d, "squared", bootstrap=scheme, n_resamples=50, random_state=7)
        c = resample_replicability(d, "squared", bootstrap=scheme, n_resamples=50, random_state=8)
        for k in a.draws:
            assert np.array_equal(a.draws[k], b.draws[k])
        assert not np.array_equal(a.draws["absolute"], c.draws["absolute"])
    p1 = permutation_test(d, "squared", n_resamples=99, random_state=3)
    p2 = permutation_test(d, "squared", n_resamples=99, random_state=3)
    assert np.array_equal(p1.null_distribution, p2.null_distribution)


def test_cluster_bootstrap_without_within_draws_whole_studies():
    d = _data()
    r = resample_replicability(d, "squared", bootstrap="cluster", within=False, n_resamples=300,
                               random_state=0)
    U = r.utility
    spreads = {0.0} | {abs(U[i] - U[j]) for i in range(3) for j in range(3)} | {np.ptp(U)}
    assert all(min(abs(v - s) for s in spreads) < 1e-12 for v in r.draws["absolute"])
    assert r.draws["absolute"].max() <= np.ptp(U) + 1e-12


def test_study_strap_bag_size_dials_heterogeneity():
    d = _data(shifts=(0.0, 1.0, 2.0))
    one = resample_replicability(d, "squared", bootstrap="studystrap", bag_size=1, n_resamples=200,
                                 random_state=0)
    # bag of one label: each pseudo-study is one whole observed study
    assert one.draws["absolute"].max() <= one.observed["absolute"] + 1e-12
    big = resample_replicability(d, "squared", bootstrap="studystrap", bag_size=200,
                                 n_resamples=200, random_state=0)
    assert big.draws["absolute"].mean() < 0.5 * one.draws["absolute"].mean()
    assert big.draws["tv"].mean() < one.draws["tv"].mean()


def test_proportion_replicable_is_monotone_in_epsilon():
    d = _data(shifts=(0.0, 0.3, 0.0))
    r = resample_replicability(d, "squared", n_resamples=300, tolerance=0.5, random_state=2)
    props = [r.proportion_replicable(e) for e in (0.0, 0.2, 0.5, 1.0, 100.0)]
    assert props == sorted(props) and props[-1] == 1.0
    assert r.to_frame().set_index("statistic").loc["absolute", "proportion_replicable"] == props[2]
    with pytest.raises(ParameterError, match="within"):
        resample_replicability(d, bootstrap="cluster", n_resamples=10, random_state=0,
                               utility="squared").utility_se()


def test_permutation_pvalue_uniform_under_null():
    # 500 null datasets: units exchangeable across 3 studies (continuous utility: no ties)
    rng = np.random.default_rng(2024)
    pvals = []
    for _i in range(500):
        y = rng.normal(size=90)
        p = rng.normal(size=90)
        d = from_arrays(y, p, np.repeat(["a", "b", "c"], [20, 30, 40]))
        pvals.append(permutation_test(d, "squared", n_resamples=199,
                                      random_state=rng).pvalue)
    pvals = np.array(pvals)
    assert stats.kstest(pvals, "uniform").pvalue > 0.01
    assert np.all((pvals > 0) & (pvals <= 1))


def test_permutation_tv_pvalue_uniform_under_null():
    rng = np.random.default_rng(77)
    pvals = []
    for _i in range(500):
        y = rng.normal(size=80)
        p = y + rng.normal(size=80)
        d = from_arrays(y, p, np.repeat(["a", "b"], 40))
        pvals.append(permutation_test(d, "squared", statistic="tv", bins=3, n_resamples=199,
                                      random_state=rng).pvalue)
    # discrete statistic: ties make the test conservative, never anti-conservative
    pvals = np.array(pvals)
    for a in (0.05, 0.1, 0.25):
        assert np.mean(pvals <= a) <= a + 2.6 * np.sqrt(a * (1 - a) / 500)


def test_permutation_detects_a_real_difference():
    d = _data(shifts=(0.0, 0.0, 1.5), seed=3)
    r = permutation_test(d, "squared", n_resamples=199, random_state=0)
    assert r.pvalue == pytest.approx(1 / 200)
    assert r.statistic == pytest.approx(np.ptp([-np.mean((d.y - d.pred)[d.codes == k] ** 2)
                                                for k in range(3)]))


def test_one_study_is_rejected():
    d = from_arrays([1.0, 2.0], [1.0, 2.5], ["a", "a"])
    with pytest.raises(DataError, match="at least 2 studies"):
        permutation_test(d, "squared")
