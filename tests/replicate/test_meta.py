"""Meta-analysis against metafor (stored), statsmodels and PyMARE (live), plus properties."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pymare
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

from replikit.errors import DataError, ParameterError
from replikit.replicate import (
    TAU2_METHODS,
    leave_one_out,
    meta_analysis,
    q_statistic,
    tau2_estimate,
    tau2_qprofile_ci,
)

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG = pd.read_csv(REF / "dat_bcg.csv")
METAFOR = json.loads((REF / "metafor_bcg.json").read_text())
Y, V = BCG["yi"].to_numpy(), BCG["vi"].to_numpy()


@pytest.mark.parametrize("method", ["FE", "DL", "REML"])
def test_metafor_bcg(method):
    ref = METAFOR[method]
    res = meta_analysis(Y, V, method=method)
    assert res.k == METAFOR["k"]
    assert res.q == pytest.approx(METAFOR["Q"], abs=1e-4)
    assert res.estimate == pytest.approx(ref["est"], abs=1e-6)
    assert res.se == pytest.approx(ref["se"], abs=1e-6)
    ci = res.confidence_interval(0.95)
    assert ci.low == pytest.approx(ref["ci"][0], abs=1e-6)
    assert ci.high == pytest.approx(ref["ci"][1], abs=1e-6)
    assert res.statistic == pytest.approx(ref["z"], abs=1e-4)
    assert res.i2_tau == pytest.approx(ref["I2"], abs=1e-4)
    if method != "FE":
        assert res.tau2 == pytest.approx(ref["tau2"], abs=1e-6)
        assert res.h2_tau == pytest.approx(ref["H2"], abs=1e-4)
        pi = res.prediction_interval(0.95)
        assert pi.low == pytest.approx(ref["pi"][0], abs=1e-6)
        assert pi.high == pytest.approx(ref["pi"][1], abs=1e-6)
    else:
        assert res.tau2 == 0.0
        assert res.i2_q == pytest.approx(ref["I2"], abs=1e-4)


def test_statsmodels_combine_effects_fe_dl_pm():
    sm = combine_effects(Y, V, method_re="dl")
    fe = meta_analysis(Y, V, method="FE")
    dl = meta_analysis(Y, V, method="DL")
    assert fe.estimate == pytest.approx(sm.mean_effect_fe, abs=1e-10)
    assert fe.se == pytest.approx(sm.sd_eff_w_fe, abs=1e-10)
    assert dl.estimate == pytest.approx(sm.mean_effect_re, abs=1e-10)
    assert dl.tau2 == pytest.approx(sm.tau2, abs=1e-10)
    assert dl.q == pytest.approx(sm.q, abs=1e-8)
    pm_sm = combine_effects(Y, V, method_re="pm")
    assert tau2_estimate(Y, V, "PM") == pytest.approx(pm_sm.tau2, abs=1e-8)


def test_dl_truncated_where_statsmodels_is_negative():
    # homogeneous "CV folds": almost identical R2 with Olkin-Finn variances -> Q < k-1
    y = np.array([0.50, 0.501, 0.499, 0.5005, 0.4995])
    v = np.full(5, 0.03 ** 2)
    sm = combine_effects(y, v, method_re="dl")
    assert sm.tau2 < 0  # the trap
    assert tau2_estimate(y, v, "DL") == 0.0
    res = meta_analysis(y, v, method="DL")
    fe = meta_analysis(y, v, method="FE")
    assert res.estimate == pytest.approx(fe.estimate, abs=1e-15)
    assert res.se == pytest.approx(fe.se, abs=1e-15)


@pytest.mark.parametrize("method", ["DL", "ML", "REML"])
def test_pymare_tau2_and_knapp_hartung(method):
    pm = pymare.meta_regression(Y, V, method=method)
    ours = meta_analysis(Y, V, method=method, ci="knha")
    assert ours.tau2 == pytest.approx(float(np.ravel(pm.tau2)[0]), abs=1e-6)
    assert ours.estimate == pytest.approx(float(np.ravel(pm.fe_params)[0]), abs=1e-6)
    # PyMARE defaults to Knapp-Hartung standard errors
    assert ours.se == pytest.approx(float(np.ravel(pm.fe_se)[0]), abs=1e-6)
    assert ours.df == 12


def test_pymare_wald_and_qprofile():
    est = pymare.estimators.VarianceBasedLikelihoodEstimator(
        method="REML", small_sample_correction="wald")
    ds = pymare.Dataset(y=Y, v=V)
    res = est.fit_dataset(ds).summary()
    ours = meta_analysis(Y, V, method="REML")
    assert ours.se == pytest.approx(float(np.ravel(res.fe_se)[0]), abs=1e-6)
    re = pymare.meta_regression(Y, V, method="REML").get_re_stats()
    lo, hi = tau2_qprofile_ci(Y, V, 0.95)
    assert lo == pytest.approx(float(np.ravel(re["ci_l"])[0]), abs=1e-5)
    assert hi == pytest.approx(float(np.ravel(re["ci_u"])[0]), abs=1e-5)
    # and the defining property: Q(bound) equals the chi2 quantile
    assert q_statistic(Y, V, lo) == pytest.approx(stats.chi2.ppf(0.975, 12), rel=1e-9)
    assert q_statistic(Y, V, hi) == pytest.approx(stats.chi2.ppf(0.025, 12), rel=1e-9)


def test_known_estimators_bcg():
    # rma(yi, vi, method=...) on dat.bcg as metafor prints it (4 decimals); not in the stored
    # reference file (ML and PM are also checked against PyMARE / statsmodels above)
    expected = {"ML": 0.2800, "PM": 0.3181, "HE": 0.3286, "SJ": 0.3455, "HS": 0.2284}
    for method, tau2 in expected.items():
        assert tau2_estimate(Y, V, method) == pytest.approx(tau2, abs=5e-5)


def test_knha_floor():
    y = np.array([0.50, 0.501, 0.499, 0.5005, 0.4995])
    v = np.full(5, 0.03 ** 2)
    plain = meta_analysis(y, v, method="REML", ci="knha")
    floored = meta_analysis(y, v, method="REML", ci="knha", knha_floor=True)
    assert plain.se < floored.se == pytest.approx(floored.se_z)


def test_vectorised_tau2_matches_loop():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(50, 8))
    v = rng.uniform(0.1, 1.0, size=(50, 8))
    for method in TAU2_METHODS:
        batch = tau2_estimate(y, v, method)
        loop = [float(tau2_estimate(y[i], v[i], method)) for i in range(50)]
        np.testing.assert_allclose(batch, loop, atol=1e-9)


def test_leave_one_out_and_errors():
    res = meta_analysis(Y, V, method="DL", labels=BCG["author"])
    loo = leave_one_out(res)
    assert list(loo["omitted"]) == list(BCG["author"])
    direct = meta_analysis(Y[1:], V[1:], method="DL")
    assert loo["estimate"].iloc[0] == pytest.approx(direct.estimate)
    with pytest.raises(ParameterError, match="method"):
        meta_analysis(Y, V, method="XX")
    with pytest.raises(DataError, match="at least 2"):
        meta_analysis([1.0], [1.0])
    with pytest.raises(DataError, match="> 0"):
        meta_analysis([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ParameterError, match="exactly one"):
        meta_analysis([1.0, 2.0])
    s = str(res)
    assert "DerSimonian-Laird" in s and "I2" in s and "Q(12)" in s
    frame = res.to_frame()
    assert {"estimate", "se", "ci_low", "ci_high", "tau2", "i2_q", "i2_tau", "method",
            "ci_method"} <= set(frame.columns)


effects = st.lists(st.floats(-2, 2), min_size=2, max_size=10)


@settings(max_examples=40, deadline=None)
@given(effects, st.integers(0, 10_000), st.sampled_from(TAU2_METHODS))
def test_properties(ys, seed, method):
    rng = np.random.default_rng(seed)
    y = np.asarray(ys)
    v = rng.uniform(0.01, 1.0, size=y.size)
    res = meta_analysis(y, v, method=method)
    fe = meta_analysis(y, v, method="FE")
    assert 0.0 <= res.i2_q <= 100.0 and 0.0 <= res.i2_tau <= 100.0
    assert res.tau2 >= 0.0
    if res.tau2 == 0.0:  # FE = RE when tau2 = 0
        assert res.estimate == pytest.approx(fe.estimate, abs=1e-12)
        assert res.se == pytest.approx(fe.se, abs=1e-12)
    perm = rng.permutation(y.size)
    res_p = meta_analysis(y[perm], v[perm], method=method)
    assert res_p.estimate == pytest.approx(res.estimate, abs=1e-9)
    assert res_p.tau2 == pytest.approx(res.tau2, abs=1e-9)
    widths = [res.confidence_interval(c).width for c in (0.5, 0.8, 0.9, 0.95, 0.99)]
    assert np.all(np.diff(widths) > 0)
    assert res.prediction_interval().width >= res.confidence_interval().width - 1e-12


def test_tau2_interval_levels_nested():
    res = meta_analysis(Y, V, method="REML")
    c95 = res.tau2_confidence_interval(0.95)
    assert (c95.low, c95.high) == pytest.approx((res.tau2_ci.low, res.tau2_ci.high))
    c80 = res.tau2_confidence_interval(0.80)
    assert c95.low < c80.low < res.tau2 < c80.high < c95.high
