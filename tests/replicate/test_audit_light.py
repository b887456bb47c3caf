"""The replication card's light (``replikit.replicate.audit``): earned from the replications
pooled, or from every replication, at a stated tolerance; and no study dropped because one CV
fold's R² is <= 0.

The rule is checked on constructed cases against the public meta-analysis
(:func:`~replikit.replicate.meta_analysis`, an independent path to the pooled mean and its
Knapp-Hartung SE) and the single-replication tests (:func:`~replikit.replicate.consistency`);
the tolerance plumbing through ``run_audit(tolerances=...)``; the no-drop fix on data whose
folds have negative R².
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.data.userdata import dataset_from_frame
from replikit.replicate import LINEAR_MODEL, audit, consistency, from_summary, meta_analysis

AUDIT_MODULE = __import__("sys").modules["replikit.replicate.audit"]
_light = AUDIT_MODULE._light


def _case(y0, y, se0=0.01, se=0.01, tolerance=0.05, interval="knha"):
    y = np.asarray(y, float)
    v = np.broadcast_to(np.asarray(se, float) ** 2, y.shape)
    return _light(np.float64(y0), np.float64(se0 ** 2), y, v, tolerance, interval=interval)


def test_pooled_difference_is_the_meta_analysis_of_the_replications_minus_the_original():
    y0, se0 = 0.40, 0.012
    y = np.array([0.38, 0.41, 0.36, 0.39, 0.42])
    se = np.array([0.01, 0.015, 0.012, 0.02, 0.011])
    out = _light(np.float64(y0), np.float64(se0 ** 2), y, se ** 2, 0.05, interval="knha")
    ref = meta_analysis(y, se=se, tau2_method="REML", interval="knha")
    assert float(out["difference"]) == pytest.approx(ref.estimate - y0, abs=1e-10)
    half = stats.t.ppf(0.95, len(y) - 1) * np.hypot(ref.se, se0)
    assert float(out["low"]) == pytest.approx(ref.estimate - y0 - half, abs=1e-9)
    assert float(out["high"]) == pytest.approx(ref.estimate - y0 + half, abs=1e-9)
    # each replication's TOST and inconsistency are those of the single-replication functions
    ref_con = sum(consistency(from_summary(estimate=y0, se=se0),
                              from_summary(estimate=yi, se=si), tolerance=0.05).consistent
                  for yi, si in zip(y, se, strict=True))
    assert int(out["n_consistent"]) == ref_con


def test_green_when_the_pooled_interval_is_inside_the_tolerance():
    out = _case(0.40, [0.41, 0.39, 0.40, 0.405, 0.395], se0=0.005, se=0.035)
    assert out["level"] == "good" and out["pooled_in"]
    assert int(out["n_consistent"]) == 0  # no single replication is precise enough


def test_green_when_every_replication_is_shown_consistent():
    # two replications: Knapp-Hartung t(1) makes the pooled interval wide, yet each one's
    # 90% interval lies inside ±0.05 -- the intersection-union route
    out = _case(0.40, [0.41, 0.39], se0=0.003, se=0.003)
    assert not out["pooled_in"] and out["all_in"] and out["level"] == "good"


def test_one_consistent_replication_among_many_is_not_green():
    # the old rule (one TOST success among k) said green here: 4 of 9 replications are 0.20
    # lower; the pooled difference is -0.089, but the studies disagree (tau2 > 0) and the
    # Knapp-Hartung interval is too wide to show it beyond -0.05: amber, never green
    y = [0.40] * 5 + [0.20] * 4
    out = _case(0.40, y, se0=0.005, se=0.005)
    assert int(out["n_consistent"]) == 5 and int(out["n_inconsistent"]) == 4
    assert float(out["difference"]) == pytest.approx(-0.2 * 4 / 9, abs=0.01)
    assert out["level"] == "warn" and float(out["low"]) < -0.05 < float(out["high"])


def test_red_only_when_the_pooled_interval_is_entirely_outside():
    assert _case(0.40, [0.30, 0.31, 0.29, 0.30], se0=0.005, se=0.01)["level"] == "bad"
    # the same difference, too imprecise to show it exceeds the tolerance: amber
    assert _case(0.40, [0.30, 0.31, 0.29, 0.30], se0=0.05, se=0.05)["level"] == "warn"
    assert _case(0.40, [0.50, 0.52, 0.51], se0=0.005, se=0.01)["level"] == "bad"


def test_amber_when_the_data_cannot_tell():
    out = _case(0.40, [0.42, 0.37, 0.41], se0=0.04, se=0.04)
    assert out["level"] == "warn" and not out["pooled_in"] and not out["all_in"]


def test_one_replication_is_its_own_pool_with_a_z_interval():
    out = _case(0.40, [0.41], se0=0.01, se=0.01)
    half = stats.norm.ppf(0.95) * np.hypot(0.01, 0.01)
    assert float(out["low"]) == pytest.approx(0.01 - half)
    assert out["level"] == "good"


def test_the_rule_is_vectorised():
    ys = np.array([[0.41, 0.39, 0.40, 0.40], [0.30, 0.31, 0.29, 0.30], [0.42, 0.37, 0.41, 0.45]])
    se = np.array([0.01, 0.01, 0.04])[:, None] * np.ones((1, 4))
    together = _light(np.full(3, 0.40), np.array([0.01, 0.01, 0.04]) ** 2, ys, se ** 2, 0.05)
    alone = [str(_light(np.float64(0.40), np.float64(s ** 2), y, e ** 2, 0.05)["level"])
             for y, e, s in zip(ys, se, [0.01, 0.01, 0.04], strict=True)]
    assert together["level"].tolist() == alone == ["good", "bad", "warn"]


# ---- on a dataset -------------------------------------------------------------------------

def _weak(seed=0, sizes=(240, 240, 240, 240), slope=0.45):
    """Four studies whose test R² is about .15: with 10-fold CV on 160 training rows (16 per
    fold), several folds have a negative R²."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = slope * df.x1 + rng.normal(size=n)
    df["year"] = np.repeat([str(1990 + 2 * i) for i in range(len(sizes))], sizes)
    return dataset_from_frame(df, target="y", study="year")


def test_a_fold_r2_below_zero_keeps_the_study():
    """Before the fix every study here was dropped (one fold R² <= 0 each) and the audit said
    "predictors explain almost nothing"; the test R² (delta-method SE, valid at any value)
    keeps them all, the CV R² leaves them out by name."""
    res = audit(_weak(0), models={}, random_state=0)
    assert res.studies == ("1990", "1992", "1994", "1996")
    test = res.estimates[(res.estimates["model"] == LINEAR_MODEL)
                         & (res.estimates["source"] == "test")]
    assert len(test) == 4
    out = dict(res.studies_outside[LINEAR_MODEL])
    assert out and all("left out of the CV R2" in why and "test R2" not in why
                       for why in out.values())
    assert any("kept for the test R2 but left out of the CV R2" in c for c in res.verdict.caveats)
    assert res.verdict.tolerance.startswith("judged against ±0.05 in test R² (the default)")


def test_pure_noise_keeps_every_study_with_a_test_r2_near_zero():
    res = audit(_weak(1, sizes=(150, 150, 150), slope=0.0), models={}, quick=True,
                random_state=0)
    assert len(res.studies) == 3
    est = res.estimates[(res.estimates["model"] == LINEAR_MODEL)
                        & (res.estimates["source"] == "test")]["estimate"]
    assert (est.abs() < 0.2).all()


def test_the_verdict_rests_on_the_light_and_states_the_tolerance():
    rng = np.random.default_rng(3)
    sizes = [3000] * 4
    n = sum(sizes)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=n)
    df["year"] = np.repeat(["1990", "1992", "1994", "1996"], sizes)
    ds = dataset_from_frame(df, target="y", study="year")
    narrow = audit(ds, models={}, quick=True, random_state=0)
    wide = audit(ds, models={}, quick=True, random_state=0, tolerance=0.15)
    # the same studies; only the tolerance differs
    assert narrow.verdict.estimate == wide.verdict.estimate
    assert wide.verdict.level == "good" and "replicates" in wide.verdict.sentence
    assert narrow.verdict.level in ("warn", "good")
    assert "(the tolerance given)" in wide.verdict.tolerance and "±0.15" in wide.verdict.tolerance
    assert "90% CI" in narrow.verdict.tolerance
    tests = narrow.analysis.estimates
    t = tests[(tests["model"] == LINEAR_MODEL) & (tests["source"] == "test")].set_index("study")
    ref = _light(np.float64(t.loc["1990", "estimate"]), np.float64(t.loc["1990", "se"] ** 2),
                 t.loc[["1992", "1994", "1996"], "estimate"].to_numpy(),
                 t.loc[["1992", "1994", "1996"], "se"].to_numpy() ** 2, 0.05)
    assert narrow.verdict.level == str(ref["level"])


@pytest.mark.slow
def test_run_audit_tolerances_change_the_replication_light(tmp_path):
    from replikit.report import run_audit

    rng = np.random.default_rng(3)
    sizes = [1500] * 4
    n = sum(sizes)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=n)
    df["year"] = np.repeat(["1990", "1992", "1994", "1996"], sizes)
    ds = dataset_from_frame(df, target="y", study="year")
    from sklearn.linear_model import LinearRegression

    cards = {}
    for tol in (None, 0.2):
        rep = run_audit(ds, tmp_path / str(tol), models={"ols": LinearRegression()},
                        quick=True, random_state=0, sections=["replicate"],
                        tolerances=None if tol is None else {"replicate": tol})
        sec = next(s for s in rep.sections if s.key == "replicate")
        cards[tol] = sec.data["verdict"]
    assert cards[None]["level"] == "warn" and cards[0.2]["level"] == "good"
    assert "±0.05 in test R² (the default)" in cards[None]["tolerance"]
    assert "±0.2 in test R² (the tolerance given)" in cards[0.2]["tolerance"]
