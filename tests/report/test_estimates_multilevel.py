"""The audit's replicate section on reported estimates with several effects per study: the
multilevel model (``analyze_reported`` -> ``multilevel_meta_analysis``), the card, the light
with an original, bad input, the command line.

References: metafor's ``rma.mv`` and clubSandwich's CR2 on the table below (values printed by
R, commands next to them); the section's numbers against the capability on the same rows; the
light's construction (closed form from the capability's fit); constructed tables whose answer
is known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import replikit
from replikit.errors import DataError, ParameterError
from replikit.replicate import analyze_reported, multilevel_meta_analysis
from replikit.report.inputs import audit_input

#: 12 studies with 1-4 effects each (simulated: 0.75 + study effect N(0, 0.03²) + effect
#: N(0, 0.015²) + sampling error; se on [0.01, 0.03]).
TABLE = pd.DataFrame({
    "study": ["Study 01"] * 4 + ["Study 02"] * 3 + ["Study 03"] * 2 + ["Study 04"]
    + ["Study 05"] * 2 + ["Study 06"] + ["Study 07"] * 3 + ["Study 08"] * 4 + ["Study 09"]
    + ["Study 10"] * 3 + ["Study 11"] * 4 + ["Study 12"] * 2,
    "outcome": ["acc", "auc", "f1", "bacc", "acc", "auc", "f1", "acc", "auc", "acc", "acc",
                "auc", "acc", "acc", "auc", "f1", "acc", "auc", "f1", "bacc", "acc", "acc",
                "auc", "f1", "acc", "auc", "f1", "bacc", "acc", "auc"],
    "estimate": [0.734, 0.7967, 0.7624, 0.7461, 0.7193, 0.6884, 0.7337, 0.7354, 0.7118, 0.7173,
                 0.7763, 0.7597, 0.8051, 0.7937, 0.8184, 0.8453, 0.7257, 0.7174, 0.7311,
                 0.6927, 0.7486, 0.7563, 0.7417, 0.722, 0.7918, 0.8007, 0.7693, 0.7507,
                 0.7396, 0.7368],
    "se": [0.0255, 0.0275, 0.0259, 0.0156, 0.0211, 0.0224, 0.0132, 0.0193, 0.0203, 0.0238,
           0.0131, 0.0202, 0.0118, 0.022, 0.0165, 0.0176, 0.0228, 0.0188, 0.0119, 0.0234,
           0.0269, 0.0129, 0.021, 0.0228, 0.0108, 0.021, 0.0105, 0.0125, 0.0205, 0.0218],
})
#: metafor 3.8-1, clubSandwich 0.5.8 (d = TABLE):
#:   res <- rma.mv(estimate, se^2, random = ~ 1 | study/outcome, data = d, method = "REML")
#:   cr2 <- coef_test(res, vcov = "CR2", cluster = d$study)
#:   a <- confint(res, sigma2 = 1, control = list(tol = 1e-12))   # the default tol is loose
#:   b <- confint(res, sigma2 = 2, control = list(tol = 1e-12))
#:   sprintf("%.12g", c(res$beta, res$se, res$sigma2, a$random[1, 2:3], b$random[1, 2:3],
#:                      cr2$SE, cr2$df_Satt))
METAFOR = {"beta": 0.754659298443, "se": 0.0101232059017,
           "sigma2": (0.00100132384268, 9.11636119685e-05),
           "sigma2_ci": ((0.0003700976766, 0.002968677122), (0.0, 0.0005043917164)),
           "cr2_se": 0.0101435587512, "cr2_df": 10.7703369671}


def _with_original(table, original="Study 01"):
    return table.assign(role=np.where(table["study"] == original, "original", "replication"))


def test_several_effects_per_study_match_metafor():
    res = analyze_reported(TABLE)
    fit, rob = res.multilevel, res.robust
    assert res.pooled is None and res.several_effects
    assert fit.levels == ("study", "outcome") and fit.n_clusters == (12, 30)
    assert fit.estimate == pytest.approx(METAFOR["beta"], rel=1e-6)
    assert fit.se == pytest.approx(METAFOR["se"], rel=1e-6)
    np.testing.assert_allclose(fit.sigma2, METAFOR["sigma2"], rtol=1e-5)
    for ci, ref in zip(fit.sigma2_ci, METAFOR["sigma2_ci"], strict=True):
        np.testing.assert_allclose([ci.low, ci.high], ref, rtol=1e-6, atol=1e-12)
    assert float(rob.se) == pytest.approx(METAFOR["cr2_se"], rel=1e-6)
    assert float(np.atleast_1d(rob.df)[0]) == pytest.approx(METAFOR["cr2_df"], rel=1e-6)
    # 12 studies (>= ROBUST_FROM): the interval used is CR2 with Satterthwaite t
    rows = res.pooled_frame().set_index("interval")
    used = rows[rows["used"]]
    assert list(used.index) == ["cluster-robust CR2 by study, Satterthwaite t"]
    q = stats.t.ppf(0.975, METAFOR["cr2_df"])
    assert used["ci_low"].iloc[0] == pytest.approx(METAFOR["beta"] - q * METAFOR["cr2_se"],
                                                   rel=1e-6)
    assert res.verdict.level == "info" and "multilevel model" in res.verdict.sentence


def test_few_studies_use_the_model_based_t_interval():
    few = TABLE[TABLE["study"].isin(["Study 01", "Study 02", "Study 05", "Study 07"])]
    res = analyze_reported(few)
    fit = res.multilevel
    used = res.pooled_frame().query("used").iloc[0]
    assert used["interval"] == "model-based, t(3)"
    q = stats.t.ppf(0.975, 3)
    assert (used["ci_low"], used["ci_high"]) == pytest.approx(
        (fit.estimate - q * fit.se, fit.estimate + q * fit.se), rel=1e-12)


def test_section_numbers_are_the_capabilitys_and_the_card_says_so():
    audit = replikit.audit(estimates=TABLE, quick=True, sections=["replicate"])
    sec = audit.section("replicate")
    ref = multilevel_meta_analysis(TABLE["estimate"], TABLE["se"] ** 2,
                                   clusters={"study": TABLE["study"],
                                             "outcome": TABLE["outcome"]})
    rob = ref.robust(method="CR2")
    pooled = pd.DataFrame(sec.data["pooled_all"]).set_index("interval")
    cr2 = pooled.loc["cluster-robust CR2 by study, Satterthwaite t"]
    q = stats.t.ppf(0.975, float(rob.df[0]))
    assert cr2["estimate"] == pytest.approx(ref.estimate, rel=1e-12)
    assert (cr2["ci_low"], cr2["ci_high"]) == pytest.approx(
        (ref.estimate - q * float(rob.se), ref.estimate + q * float(rob.se)), rel=1e-12)
    variances = pd.DataFrame(sec.data["multilevel"]).set_index("quantity")
    assert variances.loc["sigma2.study", "estimate"] == pytest.approx(ref.sigma2[0], rel=1e-12)
    assert variances.loc["sigma2.outcome", "ci_high"] == pytest.approx(
        ref.sigma2_ci[1].high, rel=1e-12)
    v = sec.data["verdict"]
    assert v["estimate"] == pytest.approx(ref.estimate) and v["ci_low"] == pytest.approx(
        cr2["ci_low"])
    assert sec.data["n_studies"] == 12 and sec.data["n_effects"] == 30
    card = " ".join([v["sentence"], *v["caveats"]])
    assert "multilevel model (Konstantopoulos (2011))" in card
    assert "not averaged nor treated as independent" in card and "CR2" in card
    text = " ".join(b.text for b in sec.blocks if type(b).__name__ == "Paragraph")
    assert "instead of being averaged" in text and "CR2" in text
    assert any(type(b).__name__ == "Figure" for b in sec.blocks)


def test_one_effect_per_study_keeps_the_single_level_analysis():
    one = TABLE.drop_duplicates("study")
    res = analyze_reported(one)
    assert res.multilevel is None and res.pooled is not None and not res.several_effects
    sec = replikit.audit(estimates=one, quick=True, sections=["replicate"]).section("replicate")
    assert "several_effects" not in sec.data and "pooled_all" in sec.data
    assert "multilevel" not in sec.data["verdict"]["sentence"]


def test_original_with_several_effects_compared_as_their_mean():
    res = analyze_reported(_with_original(TABLE))
    light = res.light
    reps = TABLE[TABLE["study"] != "Study 01"]
    orig = TABLE[TABLE["study"] == "Study 01"]
    y0, s0 = orig["estimate"].mean(), orig["se"].mean()  # the SE of a mean at correlation 1
    sub = multilevel_meta_analysis(reps["estimate"], reps["se"] ** 2,
                                   clusters={"study": reps["study"], "outcome": reps["outcome"]})
    rob = sub.robust(method="CR2")  # 11 replication studies >= 10: CR2
    diff = sub.estimate - y0
    half = stats.t.ppf(0.95, float(rob.df[0])) * np.sqrt(float(rob.se) ** 2 + s0 ** 2)
    assert light["difference"] == pytest.approx(diff, rel=1e-9)
    assert (light["low"], light["high"]) == pytest.approx((diff - half, diff + half), rel=1e-9)
    table = res.replication.table.set_index("replication")
    means = reps.groupby("study")[["estimate", "se"]].mean()
    assert table.loc["Study 08", "difference"] == pytest.approx(
        means.loc["Study 08", "estimate"] - y0)
    assert any("reports 4 effects" in c for c in res.verdict.caveats)


@pytest.mark.parametrize(("shift", "level"), [(0.0, "good"), (0.2, "bad")])
def test_the_light_is_earned(shift, level):
    # precise effects (se 0.002) all equal within studies: the replications sit `shift`
    # below the original
    rows = [{"study": f"s{j}", "effect_id": e, "estimate": 0.8 - (shift if j else 0.0),
             "se": 0.002} for j in range(12) for e in range(1 + j % 3)]
    res = analyze_reported(_with_original(pd.DataFrame(rows), "s0"), tolerance=0.05)
    assert res.verdict.level == level
    assert res.multilevel.levels == ("study", "effect_id")


def test_bad_input_names_the_column():
    no_se = TABLE.copy()
    no_se.loc[3, "se"] = np.nan
    with pytest.raises(DataError, match=r"study 'Study 01' \(row 4\).*`se`"):
        analyze_reported(no_se)
    with pytest.raises(DataError, match=r"`role`.*'Study 01' both"):
        analyze_reported(_with_original(TABLE).assign(
            role=lambda d: np.where(d.index == 0, "original", "replication")))
    with pytest.raises(DataError, match=r"`inner`: column 'outcome' holds 'acc' twice"):
        analyze_reported(TABLE.assign(outcome="acc"), inner="outcome")
    with pytest.raises(DataError, match="at least 2 studies"):
        analyze_reported(TABLE.assign(study="one"))
    with pytest.raises(DataError, match=r"`role`.*'Study 01' both"):
        audit_input(estimates=_with_original(TABLE).assign(
            role=lambda d: np.where(d.index == 0, "original", "replication")))


def test_inner_column_by_name_or_row_order():
    plain = TABLE.drop(columns="outcome")
    res = analyze_reported(plain)
    assert res.multilevel.levels == ("study", "effect")
    # an inner label unique within each study is the same model as the row within the study
    assert res.multilevel.estimate == pytest.approx(METAFOR["beta"], rel=1e-6)
    named = analyze_reported(TABLE.rename(columns={"outcome": "metric_name"}),
                             inner="metric_name")
    assert named.multilevel.levels == ("study", "metric_name")


def test_plot_draws_every_effect_and_refuses_moderators():
    res = analyze_reported(TABLE)
    ax = res.plot()
    labels = [t.get_text() for t in ax.texts]
    assert "Study 04" in labels and "Study 01 / auc" in labels  # one effect: the study alone
    fit = multilevel_meta_analysis(TABLE["estimate"], TABLE["se"] ** 2,
                                   clusters=[TABLE["study"]],
                                   moderators=pd.DataFrame({"x": np.arange(30.0)}))
    with pytest.raises(ParameterError, match="intercept-only"):
        fit.plot()


def test_cli_audits_several_effects_per_study(cli, tmp_path):
    path = tmp_path / "effects.csv"
    TABLE.to_csv(path, index=False)
    code, out, err = cli("audit", "--estimates", path, "--sections", "overview,replicate",
                         "--out", tmp_path / "o")
    assert code == 0, err
    assert "30 effects in 12 studies" in err
    assert "pooled by a multilevel model" in out and "CR2" in out
    bad = tmp_path / "bad.csv"
    TABLE.assign(se=lambda d: d["se"].where(d.index != 5)).to_csv(bad, index=False)
    code, out, err = cli("audit", "--estimates", bad, "--out", tmp_path / "b")
    assert code == 2 and "`se`" in err and "Study 02" in err
