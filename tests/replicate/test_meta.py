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
    res = meta_analysis(Y, V, tau2_method=method)
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
    fe = meta_analysis(Y, V, tau2_method="FE")
    dl = meta_analysis(Y, V, tau2_method="DL")
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
    res = meta_analysis(y, v, tau2_method="DL")
    fe = meta_analysis(y, v, tau2_method="FE")
    assert res.estimate == pytest.approx(fe.estimate, abs=1e-15)
    assert res.se == pytest.approx(fe.se, abs=1e-15)


@pytest.mark.parametrize("method", ["DL", "ML", "REML"])
def test_pymare_tau2_and_knapp_hartung(method):
    pm = pymare.meta_regression(Y, V, method=method)
    ours = meta_analysis(Y, V, tau2_method=method, interval="knha")
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
    ours = meta_analysis(Y, V, tau2_method="REML")
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
    plain = meta_analysis(y, v, tau2_method="REML", interval="knha")
    floored = meta_analysis(y, v, tau2_method="REML", interval="knha", knha_floor=True)
    assert plain.se < floored.se == pytest.approx(floored.se_z)


def test_vectorized_tau2_matches_loop():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(50, 8))
    v = rng.uniform(0.1, 1.0, size=(50, 8))
    for method in TAU2_METHODS:
        batch = tau2_estimate(y, v, method)
        loop = [float(tau2_estimate(y[i], v[i], method)) for i in range(50)]
        np.testing.assert_allclose(batch, loop, atol=1e-9)


def test_leave_one_out_and_errors():
    res = meta_analysis(Y, V, tau2_method="DL", labels=BCG["author"])
    loo = leave_one_out(res)
    assert list(loo["omitted"]) == list(BCG["author"])
    direct = meta_analysis(Y[1:], V[1:], tau2_method="DL")
    assert loo["estimate"].iloc[0] == pytest.approx(direct.estimate)
    with pytest.raises(ParameterError, match="method"):
        meta_analysis(Y, V, tau2_method="XX")
    with pytest.raises(DataError, match="at least 2"):
        meta_analysis([1.0], [1.0])
    with pytest.raises(DataError, match="> 0"):
        meta_analysis([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ParameterError, match="exactly one"):
        meta_analysis([1.0, 2.0])
    s = str(res)
    assert "DerSimonian-Laird" in s and "I²" in s and "Q(12)" in s
    frame = res.to_frame()
    assert {"estimate", "se", "ci_low", "ci_high", "tau2", "i2_q", "i2_tau", "tau2_method",
            "interval"} <= set(frame.columns)


effects = st.lists(st.floats(-2, 2), min_size=2, max_size=10)


@settings(max_examples=40, deadline=None)
@given(effects, st.integers(0, 10_000), st.sampled_from(TAU2_METHODS))
def test_properties(ys, random_state, method):
    rng = np.random.default_rng(random_state)
    y = np.asarray(ys)
    v = rng.uniform(0.01, 1.0, size=y.size)
    res = meta_analysis(y, v, tau2_method=method)
    fe = meta_analysis(y, v, tau2_method="FE")
    assert 0.0 <= res.i2_q <= 100.0 and 0.0 <= res.i2_tau <= 100.0
    assert res.tau2 >= 0.0
    if res.tau2 == 0.0:  # FE = RE when tau2 = 0
        assert res.estimate == pytest.approx(fe.estimate, abs=1e-12)
        assert res.se == pytest.approx(fe.se, abs=1e-12)
    perm = rng.permutation(y.size)
    res_p = meta_analysis(y[perm], v[perm], tau2_method=method)
    assert res_p.estimate == pytest.approx(res.estimate, abs=1e-9)
    assert res_p.tau2 == pytest.approx(res.tau2, abs=1e-9)
    widths = [res.confidence_interval(c).width for c in (0.5, 0.8, 0.9, 0.95, 0.99)]
    assert np.all(np.diff(widths) > 0)
    assert res.prediction_interval().width >= res.confidence_interval().width - 1e-12


def test_tau2_interval_levels_nested():
    res = meta_analysis(Y, V, tau2_method="REML")
    c95 = res.tau2_confidence_interval(0.95)
    assert (c95.low, c95.high) == pytest.approx((res.tau2_ci.low, res.tau2_ci.high))
    c80 = res.tau2_confidence_interval(0.80)
    assert c95.low < c80.low < res.tau2 < c80.high < c95.high


# ---------------------------------------------------------------------------------------------
# metafor conventions: Knapp-Hartung prediction intervals, pi_dist, FE H2

EX = json.loads((REF / "metafor_examples.json").read_text())
RAUD = pd.read_csv(REF / "dat_raudenbush1985.csv")


@pytest.mark.parametrize("ci", ["z", "knha"])
@pytest.mark.parametrize("method", ["EE", "ML", "REML", "DL", "HE"])
def test_metafor_raudenbush_tables(method, ci):
    ref = EX["raudenbush1985"][ci][method]
    res = meta_analysis(RAUD.yi, RAUD.vi, tau2_method="FE" if method == "EE" else method,
                        interval="wald" if ci == "z" else ci)
    c = res.confidence_interval()
    # metafor's test file gives 4 decimals
    assert res.tau2 == pytest.approx(ref["tau2"], abs=1e-4)
    assert res.estimate == pytest.approx(ref["est"], abs=1e-4)
    assert res.se == pytest.approx(ref["se"], abs=1e-4)
    assert res.statistic == pytest.approx(ref["z" if ci == "z" else "t"], abs=2e-4)
    assert (c.low, c.high) == pytest.approx(tuple(ref["ci"]), abs=1e-4)
    assert res.q == pytest.approx(EX["raudenbush1985"]["Q"], abs=1e-4)
    assert res.df == (None if ci == "z" else 18)


def test_prediction_interval_defaults_follow_metafor():
    ex = EX["raudenbush1985"]
    z = meta_analysis(RAUD.yi, RAUD.vi, tau2_method="REML")
    assert z.pi_dist == "z"
    pi = z.prediction_interval()
    # metafor stops REML at a tau2 change below 1e-5 (control threshold); replikit converges to
    # 1e-12, which moves the 4th decimal of the PI (0.37099 vs 0.3711) and of I2 (41.85 vs 41.86)
    assert (pi.low, pi.high) == pytest.approx(tuple(ex["REML_pi_z"]), abs=2e-4)
    assert z.i2_tau == pytest.approx(ex["REML_I2"], abs=0.02)
    assert z.h2_tau == pytest.approx(ex["REML_H2"], abs=5e-3)
    # test='knha': predict() uses t(k-1) and the Knapp-Hartung variance (metafor predict.rma:
    # crit = qt(., df = k - p) when x$test is knha/adhoc/t; pi.se = sqrt(vb + tau2))
    kh = meta_analysis(RAUD.yi, RAUD.vi, tau2_method="REML", interval="knha")
    assert kh.pi_dist == "t(k-1)"
    ref = ex["knha"]["REML"]
    half = stats.t.ppf(0.975, 18) * np.sqrt(ref["se"] ** 2 + ref["tau2"])
    pi = kh.prediction_interval()
    assert (pi.low, pi.high) == pytest.approx((ref["est"] - half, ref["est"] + half), abs=5e-4)
    exact = stats.t.ppf(0.975, 18) * np.sqrt(kh.se ** 2 + kh.tau2)
    assert pi.high - pi.low == pytest.approx(2 * exact, rel=1e-12)
    # the z interval of the same model is narrower
    assert pi.high - pi.low > z.prediction_interval().width


def test_t_prediction_interval_reproduces_metafor_predict_on_a_t_model():
    # metafor's robust() test on dat.bcg: a t(12) model with vcov 0.032106; predict() gives the
    # PI pred +- t(k-1) sqrt(vcov + tau2). The same rule in replikit's MetaResult:
    import dataclasses

    ref = EX["bcg_robust_t"]
    reml = meta_analysis(Y, V, tau2_method="REML")
    t_model = dataclasses.replace(reml, se=float(np.sqrt(ref["vcov"])), df=float(ref["dfs"]),
                                  interval="knha", pi_dist="t(k-1)")
    ci = t_model.confidence_interval()
    pi = t_model.prediction_interval()
    assert np.exp(reml.estimate) == pytest.approx(ref["pred_exp"], abs=1e-6)
    assert (np.exp(ci.low), np.exp(ci.high)) == pytest.approx(tuple(ref["ci_exp"]), abs=2e-6)
    assert (np.exp(pi.low), np.exp(pi.high)) == pytest.approx(tuple(ref["pi_exp"]), abs=2e-6)


def test_higgins_t_k_minus_2_option():
    # Higgins, Thompson & Spiegelhalter (2009) / Riley et al. (2011): t(k-2), the SE of the
    # model (metafor predict(..., predtype='Riley'): pi.ddf = k - p - 1)
    ref = METAFOR["REML"]
    res = meta_analysis(Y, V, tau2_method="REML", pi_dist="t(k-2)")
    half = stats.t.ppf(0.975, 11) * np.sqrt(ref["se"] ** 2 + ref["tau2"])
    pi = res.prediction_interval()
    assert (pi.low, pi.high) == pytest.approx((ref["est"] - half, ref["est"] + half), abs=2e-6)
    kh = meta_analysis(Y, V, tau2_method="REML", interval="knha", pi_dist="t(k-2)")
    half = stats.t.ppf(0.975, 11) * np.sqrt(kh.se ** 2 + kh.tau2)
    assert kh.prediction_interval().width == pytest.approx(2 * half, rel=1e-12)
    # per call, and the ordering z < t(k-1) < t(k-2)
    widths = [res.prediction_interval(pi_dist=d).width for d in ("z", "t(k-1)", "t(k-2)")]
    assert widths[0] < widths[1] < widths[2]
    # the old spelling 't' still means t(k-1)
    assert meta_analysis(Y, V, pi_dist="t").pi_dist == "t(k-1)"
    with pytest.raises(ParameterError, match="pi_dist"):
        meta_analysis(Y, V, pi_dist="t(k-3)")
    # k = 2: t(k-2) has no df; like metafor, the df is floored at 1
    two = meta_analysis([0.1, 0.4], [0.01, 0.02], tau2_method="DL", pi_dist="t(k-2)")
    assert np.isfinite(two.prediction_interval().width)
    frame = res.to_frame()
    assert frame.loc[0, "pi_dist"] == "t(k-2)"


def test_fe_h2_as_metafor_prints():
    # metafor (rma.uni): for EE/FE models I2 = max(0, 100 (Q - df)/Q) and H2 = Q/df, not
    # floored at 1 -- conv.fivenum's example prints Q(3) = 1.7974 with H^2 = 0.60
    ex = EX["fivenum_EE"]
    m, s, n = np.array(ex["mean"]), np.array(ex["sd"]), ex["n"]
    yi = np.log(s / m) + 1 / (2 * (n - 1))
    vi = 1 / (2 * (n - 1)) + s ** 2 / (n * m ** 2)
    res = meta_analysis(yi, vi, tau2_method="FE")
    assert res.q == pytest.approx(ex["Q"], abs=1e-4)
    assert (res.estimate, res.se) == pytest.approx((ex["est"], ex["se"]), abs=1e-4)
    assert res.i2_tau == pytest.approx(ex["I2"], abs=5e-3)
    assert res.h2_tau == pytest.approx(ex["H2"], abs=5e-3)
    assert res.h2_tau < 1 and res.h2_tau == res.h2_q
    bcg = meta_analysis(Y, V, tau2_method="FE")
    assert bcg.i2_tau == pytest.approx(EX["bcg_EE_printed"]["I2"], abs=5e-3)
    assert bcg.h2_tau == pytest.approx(EX["bcg_EE_printed"]["H2"], abs=5e-3)


def test_negative_standard_errors_are_refused():
    # negative SEs were once squared into valid variances
    with pytest.raises(DataError, match="se"):
        meta_analysis([0.1, 0.2, 0.3], se=[0.1, -0.1, 0.2])
    with pytest.raises(DataError, match="se"):
        meta_analysis([0.1, 0.2, 0.3], se=[0.1, np.nan, 0.2])


@pytest.mark.parametrize("y, v", [
    # Fisher scoring cycles here (0.11 <-> 0.095, growing): one outlying study
    ([0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
     [0.82601155, 0.12270066, 0.70789138, 0.83871889, 0.46860796, 0.56085761]),
    # the earlier fixed-point iteration needed over 1,000 steps here
    ([0.430, 0.398, 0.440, 0.514, 1.044], list(np.linspace(0.005, 0.05, 5))),
])
@pytest.mark.parametrize("method", ["ML", "REML"])
def test_ml_reml_converge_to_the_likelihood_maximum(y, v, method):
    from scipy.optimize import minimize_scalar

    y, v = np.asarray(y), np.asarray(v)

    def neg_loglik(t2):  # the (restricted) log-likelihood, written out
        w = 1 / (v + t2)
        mu = (w * y).sum() / w.sum()
        ll = -0.5 * (np.log(v + t2).sum() + (w * (y - mu) ** 2).sum())
        if method == "REML":
            ll -= 0.5 * np.log(w.sum())
        return -ll

    best = minimize_scalar(neg_loglik, bounds=(0, 10), method="bounded",
                           options={"xatol": 1e-12})
    tau2 = meta_analysis(y, v, tau2_method=method).tau2
    assert tau2 == pytest.approx(best.x, abs=1e-7)
    assert neg_loglik(tau2) <= best.fun + 1e-12


# --- old names (one release) ----------------------------------------------------------------

def _warned(record, text):
    return any(text in str(w.message) for w in record)


def test_old_keywords_values_and_attributes_warn_and_agree():
    from replikit.replicate import meta_analysis_on_scale, meta_regression

    new = meta_analysis(Y, V, tau2_method="DL", interval="wald")
    with pytest.warns(FutureWarning) as rec:
        old = meta_analysis(Y, V, method="DL")
    assert _warned(rec, "`method` is now `tau2_method`")
    assert old.estimate == new.estimate and old.tau2 == new.tau2
    with pytest.warns(FutureWarning) as rec:
        old = meta_analysis(Y, V, tau2_method="DL", ci="z")
    assert _warned(rec, "`ci` is now `interval`") and _warned(rec, "interval='wald'")
    assert old.interval == "wald" and old.se == new.se
    with pytest.warns(FutureWarning) as rec:
        assert new.method == "DL" and new.ci_method == "wald"
    assert _warned(rec, "MetaResult.tau2_method") and _warned(rec, "MetaResult.interval")
    with pytest.warns(FutureWarning) as rec:
        assert new.prediction_interval(dist="t(k-2)") == new.prediction_interval(
            pi_dist="t(k-2)")
    assert _warned(rec, "`dist` is now `pi_dist`")
    with pytest.warns(FutureWarning):
        assert float(tau2_estimate(Y, V, method="DL")) == float(tau2_estimate(Y, V, "DL"))
    fit = meta_regression(Y, V, tau2_method="REML", interval="knha")
    with pytest.warns(FutureWarning):
        old_fit = meta_regression(Y, V, method="REML", ci="knha")
    assert old_fit.tau2 == fit.tau2
    with pytest.warns(FutureWarning) as rec:
        assert fit.ci_method == "knha" and fit.p == 1
        assert fit.heterogeneity().method == "REML"
    assert _warned(rec, "MetaRegression.interval") and _warned(rec, "n_coefficients")
    assert _warned(rec, "Heterogeneity.tau2_method")
    x = np.array([0.8, 0.85, 0.9, 0.7])
    s = np.array([0.05, 0.04, 0.03, 0.06])
    with pytest.warns(FutureWarning):
        old_scaled = meta_analysis_on_scale(x, s, metric="roc_auc", method="DL", ci="z")
    assert old_scaled.estimate == meta_analysis_on_scale(x, s, metric="roc_auc",
                                                         tau2_method="DL").estimate
    from replikit.replicate import influence

    inf = influence(new)
    with pytest.warns(FutureWarning) as rec:
        assert inf.method == "DL" and inf.p == 1
    assert _warned(rec, "Influence.tau2_method") and _warned(rec, "Influence.n_coefficients")


def test_identical_effects_with_knapp_hartung_print_and_test():
    # QE = 0: the Knapp-Hartung SE is 0 (metafor's rule), the t statistic infinite, no error
    res = meta_analysis([0.25] * 4, [0.01, 0.02, 0.01, 0.03], interval="knha")
    assert res.se == 0.0 and res.statistic == np.inf and res.pvalue == 0.0
    assert "t = ∞" in str(res) and res.to_frame().loc[0, "ci_low"] == 0.25
