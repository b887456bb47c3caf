"""replikit.replicate.validity: the simulation's parts against the library and closed forms."""

import math

import numpy as np
import pytest

from replikit._calibration import COLUMNS
from replikit._random import root_seed_sequence
from replikit.replicate import meta_analysis, r2_confidence_interval
from replikit.replicate import validity as V


def test_vectorized_lee_limits_match_the_library():
    r2 = np.array([0.0, 0.05, 0.25, 0.41, 0.7, 0.95])
    for n, k in ((50, 5), (133, 36)):
        lo, hi = V.lee_limits(r2, n, k)
        for i, x in enumerate(r2):
            ci = r2_confidence_interval(x, n, k, method="lee", sample="in_sample")
            assert (lo[i], hi[i]) == pytest.approx((ci.low, ci.high), abs=1e-7)


def test_fitted_models_have_the_ols_error_moments():
    # E|beta_hat - beta|^2 = sigma2 tr E[(X_c'X_c)^-1] = sigma2 k / (n - k - 2) (inverse
    # Wishart mean) and E alpha_hat^2 = sigma2 / n + E[x_bar' db db' x_bar]
    rng = np.random.default_rng(0)
    n, k, rho2, R = 60, 8, 0.4, 40000
    _, db, alpha = V._fitted_models(rng, n, k, rho2, R)
    sigma2 = 1 - rho2
    err = (db ** 2).sum(axis=1)
    expect = sigma2 * k / (n - k - 2)
    assert err.mean() == pytest.approx(expect, abs=4 * err.std() / math.sqrt(R))
    a_expect = sigma2 / n + expect / n
    assert (alpha ** 2).mean() == pytest.approx(a_expect, rel=0.05)


def test_out_of_sample_truth_is_the_large_test_set_r2():
    rng = np.random.default_rng(1)
    beta, db, alpha = V._fitted_models(rng, 80, 10, 0.4, 3)
    y, yhat, truth = V._test_sets(rng, beta, db, alpha, 0.4, 400_000)
    np.testing.assert_allclose(V._r2(y, yhat), truth, atol=0.006)


def test_in_sample_draws_match_the_r2_distribution():
    # E R2 = 1 - (n-k-1)/(n-1) (1-rho2) 2F1(1, 1; (n+1)/2; rho2) ~ Olkin-Pratt; at rho2 = 0
    # R2 ~ Beta(k/2, (n-k-1)/2) exactly
    rng = np.random.default_rng(2)
    r2 = V._insample_r2(rng, 40, 6, 1e-12, 40000)
    assert r2.mean() == pytest.approx(6 / 39, abs=0.002)


def test_meta_limits_are_meta_analysis():
    rng = np.random.default_rng(3)
    v = np.linspace(0.005, 0.05, 6)
    y = 0.3 + 0.2 * rng.standard_normal((4, 6))
    for method in ("FE", "DL", "REML"):
        for interval in ("wald", "knha"):
            est, lo, hi, plo, phi, _ = V.meta_limits(y, v, method, interval)
            for i in range(y.shape[0]):
                res = meta_analysis(y[i], v, tau2_method=method, interval=interval)
                c, p = res.confidence_interval(), res.prediction_interval()
                assert (est[i], lo[i], hi[i]) == pytest.approx((res.estimate, c.low, c.high))
                assert (plo[i], phi[i]) == pytest.approx((p.low, p.high))


def test_cells_are_deterministic_and_claims_hold(monkeypatch):
    tiny = dict(V.SIZES["small"], r2=300, test=300, inc=60, tost=40, meta=100,
                r2_cells=((133, 36),), inc_cells=((100, 10),), tost_cells=(2000,),
                meta_k=(5,), meta_tau2=(0.05,))
    monkeypatch.setitem(V.SIZES, "small", tiny)
    a = V.validity(size="small", random_state=5)
    b = V.validity(size="small", random_state=5, n_jobs=2)
    assert list(a.columns) == list(COLUMNS)
    assert a.equals(b)
    assert set(a["capability"]) == {"replicate"}
    cov = a.set_index(["study", "method"])["estimate"]
    # the numbers at (n, k, rho2) = (133, 36, .4): Wald on in-sample and Lee on
    # test-set R2 are far off; Lee in-sample and delta on test-set are not
    assert cov[("R2 CI: in-sample R2", "wald (olkin_finn)")] < 0.4
    assert cov[("R2 CI: in-sample R2", "lee (default)")] > 0.9
    assert cov[("R2 CI: test-set R2", "lee")] < 0.4
    assert cov[("R2 CI: test-set R2", "wald t(n-1) (delta, default)")] > 0.9
    paper = a.set_index(["study", "method"]).loc[("inconsistency test: test-set R2",
                                                   "wald (olkin_finn SE, paper)")]
    assert paper["claim"] == "documented"
    assert ("meta-analysis CI of mu", "REML, interval=knha") in cov.index


def test_run_cell_key_gives_its_own_stream():
    root = root_seed_sequence(0)
    r1 = V._run_cell(root, ("insample", 50, 5), V._insample_cell, (50, 5, 50))
    r2 = V._run_cell(root, ("insample", 50, 5), V._insample_cell, (50, 5, 50))
    assert r1 == r2
