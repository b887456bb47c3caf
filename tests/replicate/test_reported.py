"""The replication of a reported result from study-level estimates (analyze_reported) and the
audit's replicate section on --estimates.

References: metafor's rma (values printed by R, command below); closed forms of the Olkin-Finn
SE and of the Wald difference (Vijayakumar & Cheung 2021, eq. 1-2); the light's rule on
constructed tables whose answer is known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.errors import DataError, ParameterError
from replikit.replicate import analyze_reported

#: Molloy, G. J., O'Carroll, R. E. & Ferguson, E. (2014). Conscientiousness and medication
#: adherence: a meta-analysis. Annals of Behavioral Medicine, 47(1), 92-101: the correlations
#: and sample sizes of its 16 studies (metafor's ``dat.molloy2014``, package metadat).
MOLLOY = pd.DataFrame({
    "study": ["Axelsson 2009", "Axelsson 2011", "Bruce 2010", "Christensen 1999",
              "Christensen & Smith 1995", "Cohen 2004", "Dobbels 2005", "Ediger 2007",
              "Insel 2006", "Jerant 2011", "Moran 1997", "O'Cleirigh 2007", "Penedo 2003",
              "Quine 2012", "Stilley 2004", "Wiebe & Christensen 1997"],
    "n": [109, 749, 55, 107, 72, 65, 174, 326, 58, 771, 56, 91, 116, 537, 158, 65],
    "r": [0.187, 0.162, 0.340, 0.320, 0.270, 0.000, 0.175, 0.050, 0.260, 0.010, -0.090,
          0.370, 0.000, 0.150, 0.240, 0.040],
})
#: metafor 5.1-12 (REML iterated to convergence, so both fits reach the same optimum):
#:   dat <- escalc("ZCOR", ri=ri, ni=ni, data=dat.molloy2014)
#:   res <- rma(yi, vi, data=dat, method="REML", test="knha",
#:              control=list(threshold=1e-12, maxiter=10000))
#:   pr <- predict(res, transf=transf.ztor)
#:   sprintf("%.15g", c(res$beta, res$se, res$tau2, res$I2, pr$pred, pr$ci.lb, pr$ci.ub,
#:                      pr$pi.lb, pr$pi.ub))
MOLLOY_RMA = {"z": 0.1499171485175, "se": 0.0327697722477816, "tau2": 0.00810956082430392,
              "i2": 61.7296546892391, "pred": 0.148804017690012,
              "ci": (0.0798993547722417, 0.216293366000031),
              "pi": (-0.0542865713436213, 0.340072308298642)}


def test_meta_analysis_without_original_matches_metafor():
    res = analyze_reported(MOLLOY)
    m = res.pooled.meta
    assert res.scale == "fisher_z" and res.original is None
    assert m.estimate == pytest.approx(MOLLOY_RMA["z"], rel=1e-7)
    assert m.se == pytest.approx(MOLLOY_RMA["se"], rel=1e-7)
    assert m.tau2 == pytest.approx(MOLLOY_RMA["tau2"], rel=1e-7)
    assert m.i2_tau == pytest.approx(MOLLOY_RMA["i2"], rel=1e-7)
    assert res.pooled.estimate == pytest.approx(MOLLOY_RMA["pred"], rel=1e-7)
    ci, pi = res.pooled.confidence_interval(), res.pooled.prediction_interval()
    np.testing.assert_allclose([ci.low, ci.high], MOLLOY_RMA["ci"], rtol=1e-7)
    np.testing.assert_allclose([pi.low, pi.high], MOLLOY_RMA["pi"], rtol=1e-7)
    # nothing to judge: the light is 'info' and the key number is the pooled r with its CI
    v = res.verdict
    assert v.level == "info" and "nothing to replicate" in v.sentence
    assert (v.ci_low, v.ci_high) == pytest.approx(MOLLOY_RMA["ci"], rel=1e-7)


def test_r2_with_n_uses_olkin_finn_and_wald_differences():
    table = pd.DataFrame({"study": ["o", "a", "b"], "r2": [0.445, 0.3958, 0.4591],
                          "n": [457, 323, 453], "role": ["original", "replication",
                                                         "replication"]})
    res = analyze_reported(table)
    r2, n = table["r2"].to_numpy(), table["n"].to_numpy()
    se = np.sqrt(4 * r2 * (1 - r2) ** 2 / n)  # Olkin & Finn (1995); V&C (2021) eq. 1
    np.testing.assert_allclose(res.studies["se"], se, rtol=1e-12)
    rep = res.replication.table.set_index("replication")
    for i, lab in ((1, "a"), (2, "b")):
        d, s = r2[i] - r2[0], np.hypot(se[i], se[0])  # V&C (2021) eq. 2
        assert rep.loc[lab, "difference"] == pytest.approx(d)
        assert rep.loc[lab, "ci_low"] == pytest.approx(d - stats.norm.ppf(0.975) * s)
        assert rep.loc[lab, "tost_ci_high"] == pytest.approx(d + stats.norm.ppf(0.95) * s)
    # pooled on the z scale of the multiple correlation: atanh(sqrt R2), variance 1/n
    np.testing.assert_allclose(res.studies["yi"], np.arctanh(np.sqrt(r2)))
    np.testing.assert_allclose(res.studies["vi"], 1 / n)


def _table(metric, values, sizes, **more):
    k = len(values)
    return pd.DataFrame({"study": [f"s{i}" for i in range(k)], metric: values, "n": sizes,
                         "role": ["original"] + ["replication"] * (k - 1), **more})


@pytest.mark.parametrize("metric, values, n, level", [
    # identical values, large studies: every 90% CI well inside ±0.05
    ("r", [0.30, 0.30, 0.30, 0.30], 20_000, "good"),
    # replications 0.2 below the original with large studies: CI entirely outside ±0.05
    ("r", [0.50, 0.30, 0.30, 0.30], 20_000, "bad"),
    # tiny studies: the data cannot tell
    ("r", [0.30, 0.30, 0.32, 0.28], 30, "warn"),
    ("accuracy", [0.80, 0.80, 0.81, 0.79], 50_000, "good"),
    ("accuracy", [0.90, 0.70, 0.71, 0.69], 50_000, "bad"),
])
def test_light_is_earned(metric, values, n, level):
    res = analyze_reported(_table(metric, values, n))
    assert res.verdict.level == level
    assert "±0.05" in res.verdict.tolerance


def test_auc_needs_class_sizes_and_uses_hanley_mcneil():
    table = pd.DataFrame({"study": ["o", "a", "b"], "auc": [0.85, 0.80, 0.83],
                          "n_pos": [51, 80, 60], "n_neg": [58, 120, 90]})
    res = analyze_reported(table, original="o")
    a, p, q = table["auc"], table["n_pos"], table["n_neg"]
    q1, q2 = a / (2 - a), 2 * a ** 2 / (1 + a)
    v = (a * (1 - a) + (p - 1) * (q1 - a ** 2) + (q - 1) * (q2 - a ** 2)) / (p * q)
    np.testing.assert_allclose(res.studies["se"], np.sqrt(v), rtol=1e-12)
    assert res.scale == "logit" and set(res.studies["variance_from"]) == {"AUC"}
    with pytest.raises(DataError, match="n_pos.*n_neg"):
        analyze_reported(table.drop(columns=["n_pos", "n_neg"]).assign(n=100))


def test_reported_se_wins_and_estimate_needs_one():
    table = pd.DataFrame({"study": ["o", "a"], "r": [0.3, 0.25], "n": [100, 100],
                          "se": [0.05, np.nan]})
    res = analyze_reported(table, original="o")
    assert res.studies["se"].iloc[0] == 0.05
    assert list(res.studies["variance_from"]) == ["reported se", "COR"]
    bare = pd.DataFrame({"study": ["o", "a"], "estimate": [1.0, 1.2], "n": [10, 10]})
    with pytest.raises(DataError, match=r"study 'o'.*`se`.*`variance`"):
        analyze_reported(bare)
    ok = analyze_reported(bare.assign(variance=[0.01, 0.02]), original="o")
    assert ok.scale == "identity"
    assert ok.replication.table["difference"].iloc[0] == pytest.approx(0.2)


def test_bad_input_names_what_is_wrong():
    with pytest.raises(DataError, match=r"column 'r'.*study 'a'.*\(-1, 1\)"):
        analyze_reported(pd.DataFrame({"study": ["o", "a"], "r": [0.3, 1.5], "n": [50, 50]}))
    with pytest.raises(ParameterError, match="`original`"):
        analyze_reported(MOLLOY, original="nobody")
    with pytest.raises(DataError, match="`role`"):
        analyze_reported(MOLLOY.assign(role="original"))


def test_audit_cards_from_estimates():
    import replikit
    from replikit.data.examples import entry_sample

    audit = replikit.audit(estimates=entry_sample("estimates"), quick=True)
    sec = audit.section("replicate")
    assert not sec.skipped
    v = sec.data["verdict"]
    assert v["level"] in ("good", "warn", "bad") and "1978" in v["sentence"]
    assert "±0.05" in v["tolerance"]
    assert any(type(b).__name__ == "Figure" for b in sec.blocks)  # the forest plot
    given = replikit.audit(estimates=entry_sample("estimates"), quick=True,
                           tolerances={"replicate": 0.2})
    assert "±0.2" in given.section("replicate").data["verdict"]["tolerance"]
    none = replikit.audit(estimates=MOLLOY, quick=True)
    assert none.section("replicate").data["verdict"]["level"] == "info"
