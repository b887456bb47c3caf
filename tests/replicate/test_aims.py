"""The three aims: difference intervals, inconsistency, consistency (TOST), combination."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from replikit.errors import DataError, ParameterError, ParameterTypeError, ValidityWarning
from replikit.replicate import (
    Difference,
    Estimate,
    Inconsistency,
    combine,
    consistency,
    difference,
    from_predictions,
    from_summary,
    inconsistency,
    meta_analysis,
    r2_confidence_interval,
    replication_table,
)

REF = json.loads((Path(__file__).parents[1] / "reference" / "replicate"
                  / "single_values.json").read_text())


def test_toster_tostmeta():
    ref = REF["tost_known_se"]
    # a known-SE estimate vs an exactly known 0 reproduces TOSTmeta on the estimate itself
    orig = Estimate(0.0, 0.0, metric="d")
    rep = Estimate(ref["input"]["estimate"], ref["input"]["se"], metric="d")
    res = consistency(orig, rep, bounds=tuple(ref["input"]["bounds"]), confidence_level=0.90)
    assert res.statistic_lower == pytest.approx(ref["z_lower"], abs=1e-4)
    assert res.statistic_upper == pytest.approx(ref["z_upper"], abs=1e-4)
    assert res.pvalue_lower == pytest.approx(ref["p_lower"], abs=1e-6)
    assert res.pvalue_upper == pytest.approx(ref["p_upper"], abs=1e-6)
    assert res.ci_low == pytest.approx(ref["ci90"][0], abs=1e-6)
    assert res.ci_high == pytest.approx(ref["ci90"][1], abs=1e-6)
    assert res.verdict == "not shown consistent"


def test_wald_difference_is_eq2_of_the_paper():
    o = from_summary(r2=0.45, n=667, k=36)
    r = from_summary(r2=0.38, n=700, k=36)
    d = difference(o, r)
    se = np.sqrt(4 * .45 * .55 ** 2 / 667 + 4 * .38 * .62 ** 2 / 700)
    assert d.estimate == pytest.approx(-0.07) and d.se == pytest.approx(se)
    ci = d.confidence_interval(0.95)
    assert ci.low == pytest.approx(-0.07 - stats.norm.ppf(0.975) * se)
    assert d.pvalue == pytest.approx(2 * stats.norm.sf(0.07 / se))


def test_mover_uses_lee_limits_and_reduces_to_sa_for_wald_limits():
    o = from_summary(r2=0.45, n=200, k=10, sample="in_sample")
    r = from_summary(r2=0.30, n=150, k=10, sample="in_sample")
    ci = difference(o, r, interval="mover").confidence_interval(0.95)
    lo_o, hi_o = r2_confidence_interval(0.45, 200, 10, method="lee", sample="in_sample")
    lo_r, hi_r = r2_confidence_interval(0.30, 150, 10, method="lee", sample="in_sample")
    assert ci.low == pytest.approx(-0.15 - np.hypot(0.30 - lo_r, hi_o - 0.45))
    assert ci.high == pytest.approx(-0.15 + np.hypot(hi_r - 0.30, 0.45 - lo_o))
    # with symmetric Wald limits MOVER is exactly the simple asymptotic interval
    a, b = Estimate(1.0, 0.2, metric="mse"), Estimate(1.3, 0.1, metric="mse")
    m = difference(a, b, interval="mover").confidence_interval(0.9)
    s = difference(a, b, interval="wald").confidence_interval(0.9)
    assert (m.low, m.high) == pytest.approx((s.low, s.high))
    # a test-set R2 keeps its own Wald limits (Lee models an in-sample R2): MOVER == SA
    to, tr = from_summary(r2=0.45, n=200, k=10), from_summary(r2=0.30, n=150, k=10)
    with pytest.warns(ValidityWarning, match="olkin_finn"):
        m = difference(to, tr, interval="mover").confidence_interval(0.95)
        s = difference(to, tr, interval="wald").confidence_interval(0.95)
    assert (m.low, m.high) == pytest.approx((s.low, s.high))


def test_bootstrap_difference():
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=300), rng.normal(size=300)
    o = from_predictions(x1 + rng.normal(size=300), x1, se_method="bootstrap", n_resamples=400,
                         random_state=1)
    r = from_predictions(x2 + 1.5 * rng.normal(size=300), x2, se_method="bootstrap",
                         n_resamples=400, random_state=2)
    d = difference(o, r, interval="basic")
    reps = np.asarray(r.replicates) - np.asarray(o.replicates)
    assert d.se == pytest.approx(np.std(reps, ddof=1))
    ci = d.confidence_interval(0.95)
    q = np.quantile(reps, [0.025, 0.975])
    assert (ci.low, ci.high) == pytest.approx((2 * d.estimate - q[1], 2 * d.estimate - q[0]))
    assert d.se == pytest.approx(np.hypot(o.se, r.se), rel=0.15)
    with pytest.raises(ParameterError, match="bootstrap replicates"):
        difference(from_summary(r2=.4, n=100), r, interval="basic")


def test_verdicts_and_levels():
    o = from_summary(r2=0.45, n=2000)
    far = from_summary(r2=0.30, n=2000)
    near = from_summary(r2=0.449, n=20000)
    assert inconsistency(o, far).verdict == "inconsistent"
    assert inconsistency(o, near).verdict == "not shown inconsistent"
    con = consistency(o, near, tolerance=0.05)
    assert con.verdict == "consistent"
    # verdict <=> both one-sided p-values below (1 - level)/2 for the SA interval
    for rep in (far, near, from_summary(r2=0.42, n=1500)):
        for m in (0.02, 0.05, 0.1):
            c = consistency(o, rep, tolerance=m)
            assert c.consistent == (c.pvalue < 0.05)
    widths = [difference(o, far).confidence_interval(c).width for c in (0.5, 0.9, 0.95, 0.99)]
    assert np.all(np.diff(widths) > 0)
    assert "inconsistent" in str(inconsistency(o, far))
    tab = replication_table(o.with_label("o"), [far.with_label("far"), near.with_label("near")])
    assert list(tab["inconsistency"]) == ["inconsistent", "not shown inconsistent"]
    assert list(tab["consistency"]) == ["not shown consistent", "consistent"]


def test_combine_and_errors():
    ests = [from_summary(r2=v, n=n, label=f"s{i}") for i, (v, n) in
            enumerate([(0.45, 600), (0.41, 700), (0.47, 650)])]
    res = combine(ests, tau2_method="FE")
    direct = meta_analysis([e.estimate for e in ests], se=[e.se for e in ests], tau2_method="FE")
    assert res.estimate == pytest.approx(direct.estimate)
    assert res.labels == ("s0", "s1", "s2")
    with pytest.raises(ParameterTypeError, match="Estimate"):
        inconsistency(0.4, ests[0])
    with pytest.raises(DataError, match="metric"):
        difference(ests[0], Estimate(1.0, 0.1, metric="mse"))
    with pytest.raises(ParameterError, match="bounds"):
        consistency(ests[0], ests[1], bounds=(0.1, -0.1))


@pytest.mark.parametrize("orig, rep", [
    (dict(r2=0.1, n=50, k=3, interval="lee_fixed", sample="in_sample"),
     dict(r2=0.25, n=60, k=3, interval="lee_fixed", sample="in_sample")),
    (dict(r2=0.4682924644806017, n=2000, k=10, sample="in_sample"),
     dict(r2=0.41, n=1800, k=10, sample="in_sample")),
    (dict(r2=0.0, n=30, k=2, sample="in_sample"), dict(r2=0.9999, n=40, k=2, sample="in_sample")),
])
def test_mover_on_the_lee_failure_inputs(orig, rep):
    # Lee's limits once raised "function value is NaN" inside MOVER
    o, r = from_summary(**orig), from_summary(**rep)
    for ef in (lambda: inconsistency(o, r, interval="mover"),
               lambda: consistency(o, r, interval="mover", tolerance=0.05),
               lambda: inconsistency(r, o, interval="mover")):
        res = ef()
        assert np.isfinite(res.ci_low) and np.isfinite(res.ci_high)
        assert res.ci_low <= res.estimate <= res.ci_high
    table = replication_table(o, [r], interval="mover")
    assert table[["ci_low", "ci_high", "tost_ci_low", "tost_ci_high"]].notna().all().all()


def test_consistency_frame_gives_each_test_its_own_columns():
    # the z of the inconsistency test once sat beside the TOST p-value in one row
    ref = REF["tost_known_se"]
    orig = Estimate(0.0, 0.0, metric="d")
    rep = Estimate(ref["input"]["estimate"], ref["input"]["se"], metric="d")
    res = consistency(orig, rep, bounds=tuple(ref["input"]["bounds"]))
    row = res.to_frame().iloc[0]
    assert row["statistic_lower"] == pytest.approx(ref["z_lower"], abs=1e-4)
    assert row["pvalue_lower"] == pytest.approx(ref["p_lower"], abs=1e-6)
    assert row["statistic_upper"] == pytest.approx(ref["z_upper"], abs=1e-4)
    assert row["pvalue_upper"] == pytest.approx(ref["p_upper"], abs=1e-6)
    # the TOST statistic and p-value belong together: the binding (larger-p) one-sided test
    assert row["pvalue"] == pytest.approx(ref["p_upper"], abs=1e-6) == res.pvalue
    assert row["statistic"] == pytest.approx(ref["z_upper"], abs=1e-4) == res.statistic
    assert row["test"] == "TOST"
    # the z test of d = 0 (inconsistency) is not in the consistency row
    assert not {"z_lower", "p_lower"} & set(row.index)
    inc = inconsistency(orig, rep).to_frame().iloc[0]
    assert inc["test"] == "difference = 0"
    assert inc["statistic"] == pytest.approx(ref["input"]["estimate"] / ref["input"]["se"])
    assert inc["pvalue"] == pytest.approx(2 * stats.norm.sf(inc["statistic"]))


# ---------------------------------------------------------------------------------------------
# results on the base, and the old names (one release, with a FutureWarning)


def test_results_are_on_the_base_with_intervals():
    from _checks import check_result
    from replikit.results import ConfidenceInterval

    o = Estimate(0.41, 0.02, label="o", metric="mse")
    r = Estimate(0.38, 0.02, label="r", metric="mse")
    inc = inconsistency(o, r)
    con = consistency(o, r)
    for res in (difference(o, r), inc, con, o):
        check_result(res)
        assert isinstance(res.confidence_interval(), ConfidenceInterval)
    assert tuple(inc.confidence_interval()) == (inc.ci_low, inc.ci_high)
    assert con.confidence_interval().low == con.ci_low and con.confidence_level == 0.90
    assert "ci" not in {f for f in Inconsistency.__dataclass_fields__}


def test_old_interval_names_warn_and_agree():
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=200), rng.normal(size=200)
    o = from_predictions(x1 + rng.normal(size=200), x1, se_method="bootstrap", n_resamples=200,
                         random_state=1)
    r = from_predictions(x2 + rng.normal(size=200), x2, se_method="bootstrap", n_resamples=200,
                         random_state=2)
    a, b = Estimate(1.0, 0.2, metric="mse"), Estimate(1.3, 0.1, metric="mse")
    cases = [
        (lambda: difference(a, b, interval="sa"), lambda: difference(a, b, interval="wald")),
        (lambda: difference(o, r, interval="bootstrap"),
         lambda: difference(o, r, interval="basic")),
        (lambda: difference(o, r, interval="bootstrap", boot_interval="percentile"),
         lambda: difference(o, r, interval="percentile")),
        (lambda: inconsistency(o, r, boot_interval="percentile"),  # the default's kind
         lambda: inconsistency(o, r, interval="percentile")),
        (lambda: consistency(a, b, margin=0.4), lambda: consistency(a, b, tolerance=0.4)),
    ]
    for old, new in cases:
        with pytest.warns(FutureWarning, match="replikit 0.3"):
            got = old()
        want = new()
        assert got.confidence_interval() == want.confidence_interval()
        assert getattr(got, "difference", got).interval == \
            getattr(want, "difference", want).interval
    with pytest.warns(FutureWarning, match="tolerance"), \
            pytest.warns(FutureWarning, match="'wald'"):
        tab = replication_table(a, [b.with_label("b")], margin=0.4, interval="sa")
    assert tab.equals(replication_table(a, [b.with_label("b")], tolerance=0.4, interval="wald"))
    inc = inconsistency(a, b)
    with pytest.warns(FutureWarning, match="ci_low"):
        assert inc.ci == inc.confidence_interval()
    with pytest.warns(FutureWarning, match="ci_low"):
        again = Inconsistency(inc.difference, 0.95, ci=inc.confidence_interval(),
                              verdict=inc.verdict)
    assert again == inc
    d = difference(o, r, interval="percentile")
    with pytest.warns(FutureWarning, match="interval"):
        assert d.boot_interval == "percentile"
    with pytest.warns(FutureWarning, match="interval"):
        assert Difference(d.estimate, d.se, "bootstrap", o, r, boot_interval="percentile") == d
    with pytest.warns(FutureWarning, match="tau2_method"):
        assert combine([a, b], method="FE").estimate == combine([a, b], tau2_method="FE").estimate
    with pytest.raises(ParameterError, match="`interval`"):
        difference(a, b, interval="z")
