"""The replication of a reported C-index (a survival model's concordance) and of one estimated
from data: reported.py (``c_index`` metric, measures C and CLO), estimates.py
(``from_predictions(..., metric='c_index')``, ``from_summary`` with an interval), the
difference and consistency of two C-indices, the audit's ``--estimates`` entry and the CLI.

References:

* metafor 3.8-1 (R 4) ``rma(yi = qlogis(c), sei = se / (c (1 - c)), method = "REML")`` (SEs
  from a reported interval: ``(qlogis(u) - qlogis(l)) / (2 qnorm(.975))``) with ``test = "z"``
  and ``"knha"``, ``predict(transf = plogis)``, on two published sets of C-statistics from
  metamisc's data (Debray et al. 2017; 2019): the EuroSCORE II validations (Guida et al. 2014;
  19 of 23 studies report an SE or an interval) and the Framingham Risk Score validations for
  coronary heart disease in men, a time-to-event outcome (Damen et al. 2016; 10 of 24). The R
  command is below. Also a REML fit by hand (the restricted likelihood maximised by scipy).
* R survival 3.5-3 ``concordance(Surv(time, status) ~ x, reverse = TRUE)`` on ``survival::lung``
  (``tests/reference/replicate/lung.csv``): C, ``sqrt(var)`` and the logit interval.
* Properties: 1 - C for a reversed risk with the same SE; an interval's SE recovered from the
  interval it gave; the Wald difference on the C scale; the coverage and sizes of
  benchmarks/c_index_replication.py on a small scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.replicate import (
    analyze_reported,
    consistency,
    difference,
    effects_from_reported,
    from_predictions,
    from_summary,
    meta_analysis_on_scale,
)

REF = Path(__file__).parents[1] / "reference" / "replicate"
Z = stats.norm.ppf(0.975)
nan = np.nan

#: metamisc 0.4.0's ``EuroSCORE`` (Debray et al. 2017, BMJ, the review's example): the
#: C-statistics of EuroSCORE II in its development study (Nashef 2012, a split-sample
#: validation) and 22 external validations (Guida et al. 2014). Two first authors occur twice
#: (two papers each): numbered here.
EUROSCORE = pd.DataFrame({
    "study": ["Nashef", "Biancari", "Di Dedda", "Chalmers", "Grant", "Carneo", "Kunt",
              "Kirmani", "Howell", "Wang (1)", "Borde", "Qadir", "Spiliopoulos", "Wendt",
              "Laurent", "Wang (2)", "Nishida", "Barilli (1)", "Barilli (2)", "Paparella",
              "Carosella", "Borracci", "Osnabrugge"],
    "n": [5553, 1027, 1090, 5576, 23740, 3798, 428, 15497, 933, 11170, 498, 2004, 216, 1066,
          314, 818, 461, 12201, 1670, 6191, 250, 503, 50588],
    "n_events": [232, 28, 41, 191, 746, 215, 34, 547, 90, 226, 8, 76, 14, 45, 18, 13, 33, 210,
                 125, 300, 9, 21, 1071],
    "c_index": [0.8095, 0.867, 0.81, 0.79, 0.808, 0.85, 0.72, 0.818, 0.67, 0.72, 0.72, 0.84,
                0.77, 0.72, 0.77, 0.642, 0.7697, 0.8, 0.82, 0.83, 0.76, 0.856, 0.77],
    "se": [nan, nan, nan, 0.01, 0.008, 0.01, 0.051, 0.007, nan, 0.015, nan, nan, 0.067, 0.034,
           0.061, 0.071, nan, 0.015, 0.02, 0.012, 0.056, 0.033, 0.01],
    "ci_low": [0.782, 0.798, 0.74] + [nan] * 20,
    "ci_high": [0.836, 0.936, 0.88] + [nan] * 20,
})
#: metamisc 0.4.0's ``Framingham`` (Debray et al. 2019's time-to-event example): C-statistics
#: of the Framingham Risk Score for coronary heart disease in men (Damen et al. 2016). Rows
#: with neither an SE nor an interval are left out; Comin 2007 reports both.
FRAMINGHAM = pd.DataFrame({
    "study": ["Buitrago 2011", "Comin 2007", "DeFilippis 2015", "Ferrario 2005",
              "Mainous 2007", "Rodondi 2012", "Simmons 2008", "Vaidya 2007", "Marrugat 2007",
              "Reissigova 2007"],
    "c_index": [0.63, 0.679281, 0.69, 0.723, 0.691, 0.583, 0.71, 0.698, 0.68, 0.638],
    "se": [nan, 0.023, 0.02, nan, nan, 0.024, nan, 0.03, 0.024, 0.027],
    "ci_low": [0.52, 0.6325416, nan, 0.67, 0.67, nan, 0.69, nan, nan, nan],
    "ci_high": [0.75, 0.7226817, nan, 0.779, 0.712, nan, 0.73, nan, nan, nan],
})
#: R 4, metafor 3.8-1 (metamisc's data sets: load("EuroSCORE.rda"), load("Framingham.rda")):
#:   prep <- function(d) {
#:     ok <- !is.na(d$c.index) & (!is.na(d$se.c.index) |
#:                                (!is.na(d$c.index.95CIl) & !is.na(d$c.index.95CIu)))
#:     d <- d[ok, ]; yi <- qlogis(d$c.index)
#:     sei <- ifelse(!is.na(d$se.c.index), d$se.c.index / (d$c.index * (1 - d$c.index)),
#:                   (qlogis(d$c.index.95CIu) - qlogis(d$c.index.95CIl)) / (2 * qnorm(0.975)))
#:     list(yi = yi, sei = sei) }
#:   for (test in c("z", "knha")) {
#:     res <- rma(yi = p$yi, sei = p$sei, method = "REML", test = test,
#:                control = list(threshold = 1e-12, maxiter = 10000))
#:     pr <- predict(res, transf = plogis)
#:     cat(sprintf("%.15g", c(res$beta, res$se, res$tau2, res$I2, res$QE, pr$pred, pr$ci.lb,
#:                            pr$ci.ub, pr$pi.lb, pr$pi.ub)), sep = ", ") }
_KEYS = ("mu", "se", "tau2", "i2", "q", "pred", "ci_low", "ci_high", "pi_low", "pi_high")
RMA = {
    ("euroscore", "z"): (1.35202076137174, 0.0644701601297189, 0.0519854016368791,
                         85.5270028392817, 102.044161434541, 0.794459801596754,
                         0.773058345536676, 0.814327757511806, 0.708399145260171,
                         0.86013597117152),
    ("euroscore", "knha"): (1.35202076137174, 0.0663629861339884, 0.0519854016368791,
                            85.5270028392817, 102.044161434541, 0.794459801596754,
                            0.770758188892291, 0.816294943390856, 0.701222501728399,
                            0.864234548351829),
    ("framingham", "z"): (0.737026874348906, 0.0602739259892404, 0.0239274705471184,
                          74.6932553407787, 32.169457771192, 0.676345373693203,
                          0.649966543520856, 0.701648783385917, 0.601482679973483,
                          0.74315025140135),
    ("framingham", "knha"): (0.737026874348906, 0.059080021817332, 0.0239274705471184,
                             74.6932553407787, 32.169457771192, 0.676345373693203,
                             0.646428891110167, 0.704886167174692, 0.589633576190914,
                             0.752427828068669),
}
#: R 4, survival 3.5-3 on tests/reference/replicate/lung.csv (``survival::lung``):
#:   d <- read.csv("lung.csv"); dc <- d[!is.na(d$ph.ecog), ]
#:   x3 <- 0.011 * dc$age - 0.55 * dc$sex + 0.46 * dc$ph.ecog
#:   for (nm in c("age", "ph.ecog", "lp")) {
#:     x <- if (nm == "lp") x3 else dc[[nm]]
#:     f <- concordance(Surv(time, status) ~ x, data = dc, reverse = TRUE)
#:     C <- f$concordance; s <- sqrt(f$var)
#:     ci <- plogis(qlogis(C) + c(-1, 1) * qnorm(0.975) * s / (C * (1 - C)))
#:     cat(nm, sprintf("%.17g", c(C, s, ci)), "\n") }
R_LUNG = {
    "age": (0.55114469095871033, 0.025319116850321732, 0.50117491979485185,
            0.60010290254766341),
    "ph.ecog": (0.60446252590084404, 0.023901526915260266, 0.55679310240949065,
                0.65022565861316162),
    "lp": (0.63713549300045491, 0.02506797385307958, 0.58672357658349938,
           0.68470265965901023),
}
#: The same data split by sex (original: men, replication: women), risk
#: x = 0.011 age + 0.46 ph.ecog; C, sqrt(var), n of each, then C_women - C_men, its SE
#: sqrt(var_1 + var_2), its 95% and 90% Wald intervals:
#:   for (s in 1:2) f <- concordance(Surv(time, status) ~ x, data = dc[dc$sex == s, ],
#:                                   reverse = TRUE)
R_LUNG_SEX = (0.60887803656398698, 0.031808414287745529, 137, 0.59648768671780372,
              0.044667670082219453, 90, -0.012390349846183257, 0.054835900376257678,
              -0.11986673964347468, 0.095086039951108162, -0.10258737946722025,
              0.07780667977485374)


def _lung():
    d = pd.read_csv(REF / "lung.csv").dropna(subset=["ph.ecog"]).reset_index(drop=True)
    return d, d["time"].to_numpy(float), (d["status"] == 2).to_numpy()


def _by_hand(table):
    """logit C and its SE: the SE by the delta method, else from the interval."""
    c = table["c_index"].to_numpy()
    se = table["se"].to_numpy()
    from_ci = (stats.logistic.ppf(table["ci_high"]) - stats.logistic.ppf(table["ci_low"])) \
        / (2 * Z)
    sei = np.where(np.isnan(se), from_ci, se / (c * (1 - c)))
    return np.log(c / (1 - c)), sei


def _reml_tau2(y, v):
    """REML tau2 by maximising the restricted log-likelihood directly."""
    def nll(t2):
        w = 1 / (v + t2)
        mu = np.sum(w * y) / np.sum(w)
        return 0.5 * (np.sum(np.log(v + t2)) + np.log(np.sum(w)) + np.sum(w * (y - mu) ** 2))

    return optimize.minimize_scalar(nll, bounds=(0, 5), method="bounded",
                                    options={"xatol": 1e-13}).x


def _usable(table):
    ok = table["se"].notna() | (table["ci_low"].notna() & table["ci_high"].notna())
    return table[ok].reset_index(drop=True)


# -- pooling on the logit scale ------------------------------------------------------------


@pytest.mark.parametrize("name, table", [("euroscore", _usable(EUROSCORE)),
                                         ("framingham", FRAMINGHAM)])
def test_logit_pooling_matches_metafor_and_a_fit_by_hand(name, table):
    yi, sei = _by_hand(table)
    res = analyze_reported(table)
    assert res.metric == "c_index" and res.scale == "logit" and res.original is None
    np.testing.assert_allclose(res.studies["yi"], yi, rtol=1e-12)
    np.testing.assert_allclose(res.studies["vi"], sei ** 2, rtol=1e-12)
    # each study's SE on the C scale: as reported, else C (1 - C) SE(logit C)
    c = table["c_index"].to_numpy()
    np.testing.assert_allclose(res.studies["se"], sei * c * (1 - c), rtol=1e-12)
    # fewer than 20 studies: Knapp-Hartung intervals, as metafor's test = "knha"
    m, ref = res.pooled.meta, dict(zip(_KEYS, RMA[name, "knha"], strict=True))
    for ours, key in ((m.estimate, "mu"), (m.se, "se"), (m.tau2, "tau2"), (m.i2_tau, "i2"),
                      (m.q, "q"), (res.pooled.estimate, "pred")):
        assert ours == pytest.approx(ref[key], rel=1e-6), key
    ci, pi = res.pooled.confidence_interval(), res.pooled.prediction_interval()
    np.testing.assert_allclose([ci.low, ci.high, pi.low, pi.high],
                               [ref["ci_low"], ref["ci_high"], ref["pi_low"], ref["pi_high"]],
                               rtol=1e-6)
    # the z-test fit of the same effects (metafor's default), from C and its SE
    z = meta_analysis_on_scale(c, sei * c * (1 - c), scale="logit", tau2_method="REML")
    ref = dict(zip(_KEYS, RMA[name, "z"], strict=True))
    got = [z.meta.estimate, z.meta.se, z.meta.tau2, z.estimate, *z.confidence_interval(),
           *z.prediction_interval()]
    np.testing.assert_allclose(got, [ref[k] for k in ("mu", "se", "tau2", "pred", "ci_low",
                                                      "ci_high", "pi_low", "pi_high")],
                               rtol=1e-6)
    # and by hand: REML tau2 from the restricted likelihood, then the weighted mean
    tau2 = _reml_tau2(yi, sei ** 2)
    w = 1 / (sei ** 2 + tau2)
    assert m.tau2 == pytest.approx(tau2, rel=1e-6, abs=1e-10)
    assert z.meta.estimate == pytest.approx(np.sum(w * yi) / np.sum(w), rel=1e-6)
    assert z.meta.se == pytest.approx(np.sum(w) ** -0.5, rel=1e-6)


def test_effects_from_reported_c_and_clo():
    table = _usable(EUROSCORE)
    yi, sei = _by_hand(table)
    c = table["c_index"].to_numpy()
    clo = effects_from_reported(table, measure="CLO")
    np.testing.assert_allclose(clo["yi"], yi, rtol=1e-12)
    np.testing.assert_allclose(clo["vi"], sei ** 2, rtol=1e-12)
    raw = effects_from_reported(table, measure="C")
    np.testing.assert_allclose(raw["yi"], c)
    np.testing.assert_allclose(raw["vi"], (sei * c * (1 - c)) ** 2, rtol=1e-12)
    assert clo.attrs["measure"].startswith("logit transformed concordance")
    # a 90% interval is read with its own quantile
    one = pd.DataFrame({"c_index": [0.7], "ci_low": [0.65], "ci_high": [0.75],
                        "confidence_level": [0.90]})
    vi = effects_from_reported(one, measure="CLO")["vi"].iloc[0]
    want = ((stats.logistic.ppf(0.75) - stats.logistic.ppf(0.65)) / (2 * stats.norm.ppf(0.95)))
    assert vi == pytest.approx(want ** 2, rel=1e-12)


def test_missing_se_and_interval_names_the_study_and_the_columns():
    with pytest.raises(DataError, match=r"study 'Howell' \(row 9\).*`se`.*`ci_low`.*`ci_high`"):
        analyze_reported(EUROSCORE)
    with pytest.raises(DataError, match=r"Howell.*\(column 'se'\).*'ci_low' and 'ci_high'"):
        effects_from_reported(EUROSCORE, measure="CLO")
    one_bound = pd.DataFrame({"study": ["a", "b"], "c_index": [0.7, 0.72],
                              "se": [0.02, nan], "ci_low": [nan, 0.7], "ci_high": [nan, nan]})
    with pytest.raises(DataError, match="study 'b'.*one bound"):
        analyze_reported(one_bound)
    outside = one_bound.assign(ci_low=[nan, 0.73], ci_high=[nan, 0.78])
    with pytest.raises(DataError, match="study 'b'.*not inside its interval"):
        analyze_reported(outside)
    with pytest.raises(DataError, match=r"column 'c_index'.*study 'a'.*\(0, 1\)"):
        analyze_reported(one_bound.assign(c_index=[1.0, 0.72], ci_high=[nan, 0.75]))
    with pytest.raises(ParameterError, match="`se` goes with measures 'C' and 'CLO'"):
        effects_from_reported([0.3], measure="ZCOR", n=50, se=0.1)


# -- replication of a reported C-index ------------------------------------------------------


def test_replication_of_the_development_study():
    table = _usable(EUROSCORE).assign(role="replication")
    table.loc[0, "role"] = "original"  # Nashef 2012: the development study's validation
    res = analyze_reported(table, tolerance=0.05)
    _, sei = _by_hand(table)
    c = table["c_index"].to_numpy()
    se = sei * c * (1 - c)
    rep = res.replication.table.set_index("replication")
    for i in range(1, len(table)):
        d, s = c[i] - c[0], np.hypot(se[i], se[0])  # Vijayakumar & Cheung (2021), eq. 2
        row = rep.loc[table["study"][i]]
        assert row["difference"] == pytest.approx(d, abs=1e-12)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((d - Z * s, d + Z * s))
        q = stats.norm.ppf(0.95)
        assert (row["tost_ci_low"], row["tost_ci_high"]) == pytest.approx((d - q * s,
                                                                           d + q * s))
    v = res.verdict
    assert v.metric == "C-index" and "The reported C-index" in v.sentence
    assert "±0.05 in C-index" in v.tolerance
    assert any("higher C is better" in cv for cv in v.caveats)
    assert any("logit scale" in cv for cv in v.caveats)  # three SEs come from intervals
    assert set(res.studies["variance_from"]) == {"reported se",
                                                 "reported interval (logit scale)"}


def test_several_effects_per_study_use_the_same_variances():
    table = _usable(FRAMINGHAM).assign(study=["a", "a", "b", "b", "c", "c", "d", "d", "e",
                                               "e"])
    res = analyze_reported(table)
    yi, sei = _by_hand(FRAMINGHAM)
    assert res.multilevel is not None and res.scale == "logit"
    np.testing.assert_allclose(res.studies["vi"], sei ** 2, rtol=1e-12)


# -- estimates from data and from a report --------------------------------------------------


@pytest.mark.parametrize("column", list(R_LUNG))
def test_estimate_from_predictions_matches_r_concordance(column):
    d, t, e = _lung()
    x = (0.011 * d["age"].to_numpy(float) - 0.55 * d["sex"].to_numpy(float)
         + 0.46 * d["ph.ecog"].to_numpy(float)) if column == "lp" else d[column].to_numpy(float)
    est = from_predictions((t, e), x, metric="c_index", label="lung")
    c, se, lo, hi = R_LUNG[column]
    assert est.estimate == pytest.approx(c, abs=1e-10)
    assert est.se == pytest.approx(se, abs=1e-10)
    ci = est.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((lo, hi), abs=1e-10)
    assert (est.metric, est.source, est.interval, est.n) == ("c_index", "ij", "logit", len(d))
    # a structured array (scikit-survival's target) gives the same estimate
    y = np.array(list(zip(e, t, strict=True)), dtype=[("event", bool), ("time", float)])
    same = from_predictions(y, x, metric="c_index")
    assert (same.estimate, same.se) == (est.estimate, est.se)
    # the reversed risk: 1 - C with the same SE
    rev = from_predictions((t, e), -x, metric="c_index")
    assert rev.estimate == pytest.approx(1 - est.estimate, abs=1e-12)
    assert rev.se == pytest.approx(est.se, rel=1e-10)
    # its interval, reported, gives back its SE (the logit-scale reading is exact for it)
    back = from_summary(estimate=est.estimate, ci_low=ci.low, ci_high=ci.high,
                        metric="c_index")
    assert back.se == pytest.approx(est.se, rel=1e-12)
    assert (back.source, back.interval) == ("reported interval", "logit")


def test_difference_of_two_c_indices_matches_r():
    d, t, e = _lung()
    x = 0.011 * d["age"].to_numpy(float) + 0.46 * d["ph.ecog"].to_numpy(float)
    men, women = (d["sex"] == 1).to_numpy(), (d["sex"] == 2).to_numpy()
    o = from_predictions((t[men], e[men]), x[men], metric="c_index", label="men")
    r = from_predictions((t[women], e[women]), x[women], metric="c_index", label="women")
    c1, s1, n1, c2, s2, n2, dd, sd, lo95, hi95, lo90, hi90 = R_LUNG_SEX
    assert (o.estimate, o.se, o.n, r.estimate, r.se, r.n) == pytest.approx(
        (c1, s1, n1, c2, s2, n2), abs=1e-10)
    diff = difference(o, r)
    assert diff.interval == "wald"
    assert (diff.estimate, diff.se) == pytest.approx((dd, sd), abs=1e-10)
    assert tuple(diff.confidence_interval()) == pytest.approx((lo95, hi95), abs=1e-10)
    con = consistency(o, r, tolerance=0.05)  # the tolerance in C units
    assert (con.ci_low, con.ci_high) == pytest.approx((lo90, hi90), abs=1e-10)
    assert con.bounds == (-0.05, 0.05) and con.verdict == "not shown consistent"
    # from the reported numbers alone: the same difference
    ro = from_summary(estimate=c1, se=s1, metric="c_index")
    rr = from_summary(estimate=c2, se=s2, metric="c_index")
    assert ro.interval == "logit"
    assert tuple(difference(ro, rr).confidence_interval()) == pytest.approx((lo95, hi95),
                                                                           abs=1e-12)


def test_estimate_errors_name_the_parameter():
    with pytest.raises(ParameterError, match="`se`.*`ci_low`, `ci_high`.*no closed-form"):
        from_summary(estimate=0.7, n=300, metric="c_index")
    with pytest.raises(ParameterError, match="`ci_low` and `ci_high` give the SE of a C-index"):
        from_summary(estimate=0.7, ci_low=0.6, ci_high=0.8, metric="auc")
    with pytest.raises(ParameterError, match="not both"):
        from_summary(estimate=0.7, se=0.02, ci_low=0.6, ci_high=0.8, metric="c_index")
    with pytest.raises(DataError, match="`ci_low` <= `estimate` <= `ci_high`"):
        from_summary(estimate=0.9, ci_low=0.6, ci_high=0.8, metric="c_index")
    with pytest.raises(DataError, match=r"C-index must lie in \(0, 1\)"):
        from_summary(estimate=1.2, se=0.1, metric="c_index")
    with pytest.raises(ParameterTypeError, match="survival target"):
        from_predictions(np.ones(5), np.arange(5.0), metric="c_index")
    with pytest.raises(ParameterError, match="`se_method`"):
        from_predictions((np.arange(1.0, 6), np.ones(5)), np.arange(5.0), metric="c_index",
                         se_method="delong")


# -- calibration (benchmarks/c_index_replication.py has the full runs) ---------------------


def _draw(rng, n, rate, size):
    x = rng.standard_normal((size, n))
    t_event = rng.exponential(1.0, (size, n)) / np.exp(x)
    t_cens = rng.exponential(1.0 / rate, (size, n))
    return np.minimum(t_event, t_cens), t_event <= t_cens, x


@pytest.mark.slow
def test_logit_interval_covers_and_the_difference_test_holds_its_size():
    # 30% censored, n = 300; truth of Harrell's C under this censoring from 400,000 subjects
    # (SE about 0.0006); 400 data sets: coverage and size within 3 Monte Carlo SEs (0.033)
    from replikit.experiment.survival import concordance_index

    rng = np.random.default_rng(11)
    t, e, x = (a[0] for a in _draw(rng, 400_000, 0.3615, 1))
    truth = concordance_index(t, e, x).estimate
    T, E, X = _draw(rng, 300, 0.3615, 800)
    ests = [from_predictions((T[k], E[k]), X[k], metric="c_index") for k in range(800)]
    ci = np.array([tuple(est.confidence_interval()) for est in ests[:400]])
    cover = np.mean((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    assert abs(cover - 0.95) < 3 * np.sqrt(0.05 * 0.95 / 400)
    reject = np.mean([0 < difference(o, r).confidence_interval().low
                      or difference(o, r).confidence_interval().high < 0
                      for o, r in zip(ests[:400], ests[400:], strict=True)])
    assert reject < 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)


# -- the audit and the command line ---------------------------------------------------------


def _estimates_table():
    table = FRAMINGHAM.copy()
    table["role"] = ["replication"] * len(table)
    table.loc[1, "role"] = "original"  # Comin 2007
    return table


def test_audit_estimates_entry_reads_a_c_index_table():
    import replikit
    from replikit.data.foreign import guess_entry

    table = _estimates_table()
    assert guess_entry(table[["study", "c_index", "ci_low", "ci_high", "role"]])[0] == \
        "estimates"
    audit = replikit.audit(estimates=table, quick=True)
    sec = audit.section("replicate")
    assert not sec.skipped
    v = sec.data["verdict"]
    assert v["metric"] == "C-index" and "C-index" in v["sentence"]
    assert "±0.05 in C-index" in v["tolerance"]
    assert v["level"] in ("good", "warn", "bad")
    assert sec.data["scale"] == "logit"
    pooled = sec.data["pooled_all"]
    assert float(pooled["estimate_original"].iloc[0]) == pytest.approx(
        RMA["framingham", "knha"][5], rel=1e-6)
    with pytest.raises(DataError, match="c_index.*`ci_low`, `ci_high`"):
        replikit.audit(estimates=table.assign(se=nan).iloc[:, [0, 1, 2, 5]], quick=True)


def test_cli_audit_replicate_and_meta(cli, tmp_path):
    path = tmp_path / "cindex.csv"
    _estimates_table().to_csv(path, index=False)
    code, out, err = cli("audit", "--estimates", path, "--out", tmp_path / "out", "--quick")
    assert code == 0, err
    assert "C-index" in out + err
    assert (tmp_path / "out" / "report.html").exists()
    code, out, err = cli("--format", "json", "replicate", path, "--original", "Comin 2007")
    assert code == 0, err
    assert '"replication": "Mainous 2007"' in out
    code, out, err = cli("meta", path, "--measure", "CLO", "--estimate", "c_index",
                         "--label", "study")
    assert code == 0, err
    assert "0.6763" in out  # back-transformed: metafor's 0.676345 (REML, z)
    bad = tmp_path / "bad.csv"
    FRAMINGHAM.assign(ci_low=nan, ci_high=nan).to_csv(bad, index=False)
    for args in (("audit", "--estimates", bad, "--out", tmp_path / "x"),
                 ("replicate", bad), ("meta", bad, "--measure", "CLO", "--estimate",
                                      "c_index")):
        code, out, err = cli(*args)
        lines = [ln for ln in err.splitlines() if ln.startswith("replikit: error:")]
        assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
        assert "se" in lines[0] and "ci_low" in lines[0] and "--se" not in lines[0]
