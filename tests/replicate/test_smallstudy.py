"""Funnel-plot asymmetry tests and trim-and-fill against metafor, plus properties.

Sources: metafor repository (github:wviechtb/metafor, git 71ae8f5a):
``tests/testthat/test_misc_pub_bias.r`` (regtest / ranktest on ``dat.egger2001``) and
``vignettes/metafor.pdf`` (Viechtbauer 2010, JSS 36(3), pp. 30-32: regtest and trimfill on
``dat.bcg``). ``dat.egger2001`` (16 trials of intravenous magnesium after myocardial infarction,
Egger, Davey Smith & Altman 2001) is typed in below from its 2x2 counts (metadat's
``dat.egger2001``: ai/n1i deaths/patients on magnesium, ci/n2i on control); the log odds ratios
follow ``escalc(measure="OR")`` with 1/2 added to the cells of a study with a zero cell
(metafor's default ``add=1/2, to="only0"``).
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.replicate import (
    meta_analysis,
    meta_regression,
    rank_test,
    regression_test,
    small_study_effects,
    trim_and_fill,
)

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG = pd.read_csv(REF / "dat_bcg.csv")
Y, V = BCG["yi"].to_numpy(), BCG["vi"].to_numpy()
N_BCG = (BCG["tpos"] + BCG["tneg"] + BCG["cpos"] + BCG["cneg"]).to_numpy(float)

# dat.egger2001 (metadat): deaths / patients, magnesium (ai, n1i) and control (ci, n2i)
AI = np.array([1, 9, 2, 1, 10, 1, 1, 0, 6, 1, 2, 5, 4, 90, 4, 2216.0])
N1 = np.array([40, 135, 200, 48, 150, 59, 25, 22, 76, 27, 89, 23, 130, 1159, 107, 29011.0])
CI = np.array([2, 23, 7, 1, 8, 9, 3, 1, 11, 7, 12, 13, 8, 118, 17, 2103.0])
N2 = np.array([36, 135, 200, 46, 148, 56, 23, 21, 75, 27, 80, 33, 122, 1157, 108, 29039.0])


def _egger2001():
    add = np.where((AI == 0) | (CI == 0), 0.5, 0.0)
    a, b, c, d = AI + add, N1 - AI + add, CI + add, N2 - CI + add
    return np.log(a * d / (b * c)), 1 / a + 1 / b + 1 / c + 1 / d


def printed(ours, ref, digits=4):
    assert float(ours) == pytest.approx(ref, abs=0.5 * 10.0 ** -digits + 1e-9)


def test_regtest_egger2001_test_misc_pub_bias():
    y, v = _egger2001()
    res = meta_analysis(y, v)
    # tests/testthat/test_misc_pub_bias.r:13: regtest(rma(yi, vi))$zval = -4.6686
    printed(regression_test(res).statistic, -4.6686)
    # :24: regtest(res, model="lm", predictor="sqrtninv")$zval = -5.6083
    t = regression_test(res, model="lm", predictor="inv_sqrt_n", n=N1 + N2)
    printed(t.statistic, -5.6083)
    assert t.df == 14


def test_ranktest_egger2001_test_misc_pub_bias():
    y, v = _egger2001()
    r = rank_test(meta_analysis(y, v))
    # tests/testthat/test_misc_pub_bias.r:40-41: tau = 0.15, pval = 0.4503
    assert r.statistic == pytest.approx(0.15, abs=1e-12)
    printed(r.pvalue, 0.4503)
    assert r.exact


def test_regtest_bcg_jss_p30_31():
    res = meta_analysis(Y, V)
    # JSS p. 30: regtest(res, model = "lm"): t = -1.4013, df = 11, p = 0.1887
    t = regression_test(res, model="lm")
    printed(t.statistic, -1.4013)
    assert t.df == 11
    printed(t.pvalue, 0.1887)
    # JSS p. 31: mixed-effects model with ablat and year, predictor total sample size:
    # z = 0.7470, p = 0.4550 (metafor's REML stopping rule, R/rma.uni.r:1257)
    fit = meta_regression(Y, V, moderators=BCG[["ablat", "year"]], tol=1e-5)
    z = regression_test(fit, predictor="n", n=N_BCG)
    printed(z.statistic, 0.7470)
    printed(z.pvalue, 0.4550)
    assert z.df is None and np.isnan(z.estimate)


def test_trimfill_bcg_fe_jss_p31_32():
    res = meta_analysis(Y, V, tau2_method="FE")
    taf = trim_and_fill(res)
    # JSS pp. 31-32: trimfill(rma(yi, vi, method = "FE")): 4 missing studies on the right side;
    # FE model (k = 17): Q(df = 16) = 262.7316; estimate -0.2910 (se 0.0383), z = -7.6057,
    # CI [-0.3660, -0.2160]
    assert (taf.side, taf.k0, taf.meta.k) == ("right", 4, 17)
    printed(taf.meta.q, 262.7316)
    printed(taf.estimate, -0.2910)
    printed(taf.meta.se, 0.0383)
    printed(taf.meta.statistic, -7.6057)
    ci = taf.confidence_interval()
    printed(ci.low, -0.3660)
    printed(ci.high, -0.2160)


def test_egger_lm_is_weighted_least_squares():
    # independent oracle: statsmodels WLS of y on se with weights 1/v (Egger et al. 1997)
    y, v = _egger2001()
    t = regression_test(meta_analysis(y, v), model="lm")
    se = np.sqrt(v)
    wls = sm.WLS(y, sm.add_constant(se), weights=1 / v).fit()
    assert t.statistic == pytest.approx(wls.tvalues[1], rel=1e-9)
    assert t.pvalue == pytest.approx(wls.pvalues[1], rel=1e-7)
    assert t.estimate == pytest.approx(wls.params[0], rel=1e-9)


def test_rank_test_is_kendall_of_standardized_deviates():
    y, v = _egger2001()
    w = 1 / v
    b = (w * y).sum() / w.sum()
    ref = stats.kendalltau((y - b) / np.sqrt(v - 1 / w.sum()), v)
    r = rank_test(meta_analysis(y, v))
    assert r.statistic == pytest.approx(ref.statistic)


def test_trimfill_side_and_mirror_properties():
    # mirrored data: the missing side flips, k0 is the same, the filled estimate is mirrored
    for method in ("FE", "REML"):
        a = trim_and_fill(meta_analysis(Y, V, tau2_method=method))
        b = trim_and_fill(meta_analysis(-Y, V, tau2_method=method))
        assert {a.side, b.side} == {"left", "right"} and a.k0 == b.k0
        assert b.estimate == pytest.approx(-a.estimate, rel=1e-7)
    # a symmetric funnel needs no filling
    ys = np.r_[Y - Y.mean(), -(Y - Y.mean())]
    vs = np.r_[V, V]
    assert trim_and_fill(meta_analysis(ys, vs, tau2_method="FE")).k0 == 0


def test_trimfill_r0_pvalue():
    y, v = _egger2001()
    taf = trim_and_fill(meta_analysis(y, v), estimator="R0")
    # metafor R/trimfill.rma.uni.r:202: p = 1 - sum_{m=-1}^{k0-1} 0.5^(m+2) = 0.5^(k0+1)
    assert taf.pvalue_k0 == pytest.approx(0.5 ** (taf.k0 + 1))
    assert taf.se_k0 == pytest.approx(np.sqrt(2 * taf.k0 + 2))


def test_small_study_effects_bundle_and_plot():
    sse = small_study_effects(meta_analysis(Y, V))
    f = sse.to_frame()
    assert f["test"].tolist() == ["regression", "regression", "rank correlation",
                                  "trim-and-fill"]
    assert any("asymmetry" in c for c in sse.caveats)
    ax = sse.plot(contours=(0.9, 0.95, 0.99))
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # standard error axis inverted
    assert "Trim-and-fill" in str(sse)


def test_errors():
    res = meta_analysis(Y, V)
    with pytest.raises(ParameterError, match="sample sizes"):
        regression_test(res, predictor="n")
    with pytest.raises(DataError, match="sample sizes"):
        regression_test(res, predictor="n", n=np.zeros(13))
    with pytest.raises(ParameterTypeError):
        trim_and_fill(meta_regression(Y, V, moderators=BCG[["ablat"]]))
    with pytest.raises(ParameterTypeError):
        rank_test(meta_regression(Y, V, moderators=BCG[["ablat"]]))
    with pytest.raises(DataError, match="full rank"):
        regression_test(meta_analysis([0.1, 0.2, 0.3, 0.4], [0.01] * 4))
