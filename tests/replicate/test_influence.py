"""Influence diagnostics, Baujat coordinates and cumulative meta-analysis against metafor.

Sources: metafor repository (github:wviechtb/metafor, git 71ae8f5a) test files
``tests/testthat/<file>.r:<line>`` and ``vignettes/metafor.pdf`` (Viechtbauer 2010, JSS 36(3);
page numbers of the article). REML fits use metafor's stopping rule ``tol=1e-5``
(``R/rma.uni.r:1257``) so the printed 4th decimal matches.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit.errors import DataError, ParameterTypeError
from replikit.replicate import (
    Influence,
    baujat,
    cumulative,
    influence,
    leave_one_out,
    meta_analysis,
    meta_regression,
)

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG = pd.read_csv(REF / "dat_bcg.csv")
Y, V = BCG["yi"].to_numpy(), BCG["vi"].to_numpy()
TOL = 1e-5


def printed(ours, ref, digits=4):
    np.testing.assert_allclose(np.asarray(ours, float), np.asarray(ref, float), rtol=0,
                               atol=0.5 * 10.0 ** -digits + 1e-9)


def test_influence_re_model_study_1_test_misc_influence():
    # tests/testthat/test_misc_influence.r:17 (influence(rma(yi, vi)), first study, full digits)
    res = meta_analysis(Y, V)
    inf = influence(res)
    assert isinstance(inf, Influence)
    row = inf.table.iloc[0]
    ref = {"rstudent": -0.218142474344442, "dffits": -0.0407075604868486,
           "cook_d": 0.00171654236729195, "cov_r": 1.11644891104804,
           "tau2_del": 0.336156745300306, "qe_del": 151.582572747109,
           "hat": 0.0505948307931551, "weight": 5.05948307931551}
    for key, value in ref.items():
        assert row[key] == pytest.approx(value, rel=1e-5), key
    assert inf.dfbetas["intercept"].iloc[0] == pytest.approx(-0.0402659025974144, rel=1e-5)
    assert not row["influential"]


def test_cooks_distance_and_hat_ablat_test_misc_influence():
    fit = meta_regression(Y, V, moderators=BCG[["ablat"]], tol=TOL)
    t = influence(fit).table
    # tests/testthat/test_misc_influence.r:76 (hatvalues) and :100 (cooks.distance)
    printed(t["hat"], [0.049, 0.1493, 0.0351, 0.3481, 0.2248, 0.2367, 0.064, 0.357, 0.0926,
                       0.1157, 0.2309, 0.0189, 0.0778])
    printed(t["cook_d"], [0.0048, 0.0489, 0.0104, 0.2495, 0.0072, 0.2883, 0.3643, 0.2719,
                          0.02, 0.1645, 0.0009, 0.0403, 0.1433])


def test_rstudent_ablat_year_jss_p23():
    # JSS p. 23: rstudent(rma(yi, vi, mods = cbind(ablat, year))), studies 1-4, 7, 12, 13
    fit = meta_regression(Y, V, moderators=BCG[["ablat", "year"]], tol=TOL)
    t = influence(fit).table.iloc[[0, 1, 2, 3, 6, 11, 12]]
    printed(t["resid"], [0.2229, -0.2828, -0.3826, -1.0900, -1.4061, 1.1864, 0.7972])
    printed(t["resid_se"], [0.7486, 0.6573, 0.7501, 0.7768, 0.5416, 0.8084, 0.3742])
    printed(t["rstudent"], [0.2978, -0.4303, -0.5100, -1.4032, -2.5961, 1.4677, 2.1302])
    # JSS p. 24 / Figure 3: study 4 is the influential one ("large Cook's distance and hat value")
    assert influence(fit).influential == ("Study 4",)


def test_rstudent_subset_test_misc_residuals():
    # tests/testthat/test_misc_residuals.r:14: rstudent(rma(yi, vi, subset=1:6))$z
    printed(influence(meta_analysis(Y[:6], V[:6])).table["rstudent"],
            [0.1426, -0.9957, -0.4591, -1.1949, 2.0949, 0.4330])


def test_leave_one_out_jss_p24():
    # JSS p. 24: leave1out(rma(yi, vi), transf = exp, digits = 3), columns estimate, Q, tau2
    loo = leave_one_out(meta_analysis(Y, V))
    printed(np.exp(loo["estimate"]), [0.493, 0.520, 0.504, 0.533, 0.466, 0.491, 0.519, 0.452,
                                      0.477, 0.520, 0.469, 0.468, 0.460], 3)
    printed(loo["q"], [151.583, 145.318, 150.197, 96.563, 151.320, 128.187, 145.830, 67.986,
                       152.205, 139.827, 151.466, 150.787, 149.788], 3)
    # and influence()'s tau2(-i), QE(-i) are the same leave-one-out fits
    inf = influence(meta_analysis(Y, V)).table
    np.testing.assert_allclose(inf["tau2_del"], loo["tau2"], rtol=1e-8)
    np.testing.assert_allclose(inf["qe_del"], loo["q"], rtol=1e-10)


def test_cumulative_by_year_test_misc_cumul():
    res = meta_analysis(Y, V)
    out = cumulative(res, order=BCG["year"])
    # tests/testthat/test_misc_cumul.r:19, :24 and :29 (6 decimals; REML at metafor's 1e-5
    # stopping moves the 6th decimal: checked to 5e-6)
    ref = [-0.889311, -1.325003, -0.97208, -1.001094, -1.101424, -0.973464, -0.901251,
           -0.788566, -0.865607, -0.785211, -0.708206, -0.794768, -0.714532]
    np.testing.assert_allclose(out["estimate"], ref, atol=5e-6)
    np.testing.assert_allclose(np.exp(out["estimate"]),
                               [0.410939, 0.265802, 0.378296, 0.367477, 0.332398, 0.377772,
                                0.406061, 0.454496, 0.420796, 0.456024, 0.492527, 0.451686,
                                0.489421], atol=5e-6)
    col = cumulative(res, order=BCG["year"], collapse=True)
    np.testing.assert_allclose(np.exp(col["estimate"]),
                               [0.410939, 0.265802, 0.378296, 0.367477, 0.332398, 0.377772,
                                0.406061, 0.420796, 0.456024, 0.492527, 0.451686, 0.489421],
                               atol=5e-6)
    assert out["k"].tolist() == list(range(1, 14))


def test_cumulative_last_step_is_the_full_model():
    for method in ("FE", "DL", "REML"):
        for ci in ("wald", "knha"):
            res = meta_analysis(Y, V, tau2_method=method, interval=ci)
            last = cumulative(res).iloc[-1]
            assert last["estimate"] == pytest.approx(res.estimate, rel=1e-9)
            assert last["se"] == pytest.approx(res.se, rel=1e-7)
            c = res.confidence_interval()
            assert last["ci_low"] == pytest.approx(c.low, rel=1e-7)


def test_baujat_x_sums_to_q_under_fe():
    res = meta_analysis(Y, V, tau2_method="FE")
    b = baujat(res)
    assert b["x"].sum() == pytest.approx(res.q, rel=1e-10)
    # y: squared standardized change of the fitted value when the study is left out
    loo = leave_one_out(res)
    se_del = loo["se"].to_numpy()
    np.testing.assert_allclose(b["y"], (loo["estimate"] - res.estimate) ** 2 / se_del ** 2,
                               rtol=1e-8)


def test_influence_invariant_to_study_order():
    perm = np.random.default_rng(3).permutation(13)
    a = influence(meta_regression(Y, V, moderators=BCG[["ablat"]])).table
    b = influence(meta_regression(Y[perm], V[perm], moderators=BCG[["ablat"]].iloc[perm],
                                  labels=[f"Study {i + 1}" for i in perm])).table
    b = b.set_index("label").loc[a["label"]].reset_index()
    for col in ("rstudent", "dffits", "cook_d", "cov_r", "tau2_del", "hat"):
        np.testing.assert_allclose(b[col], a[col], rtol=1e-6, atol=1e-10)


def test_rank_deficient_deletion_gives_nan():
    mods = pd.DataFrame({"g": ["a"] + ["b"] * 12})
    inf = influence(meta_regression(Y, V, moderators=mods, tau2_method="FE"))
    assert np.isnan(inf.table["rstudent"].iloc[0])
    assert np.isfinite(inf.table["rstudent"].iloc[1:]).all()


def test_errors_and_output():
    with pytest.raises(ParameterTypeError):
        influence([1, 2, 3])
    with pytest.raises(DataError, match="studies"):
        influence(meta_analysis([0.1, 0.2], [0.01, 0.01]))
    with pytest.raises(DataError, match="one value per study"):
        cumulative(meta_analysis(Y, V), order=[1, 2])
    inf = influence(meta_analysis(Y, V))
    assert "Influence diagnostics" in str(inf)
    assert "dfbetas_intercept" in inf.to_frame().columns
    axes = inf.plot()
    assert axes.shape == (4, 2) and len(axes.flat[0].figure.axes) == 8
