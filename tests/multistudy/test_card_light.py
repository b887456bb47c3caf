"""The multistudy card's earned light: green only when the upper confidence bound of the largest
difference between studies is within the tolerance, red only when a lower bound (Bonferroni over
the pairs) exceeds it, amber otherwise; the lower bound's coverage by simulation; the tolerance
from the library and from the audit; the validity rows of the rule."""

import importlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression

from replikit.data.userdata import dataset_from_frame
from replikit.errors import ParameterError
from replikit.multistudy import audit, epsilon_test
from replikit.multistudy import kernels as ek

audit_module = importlib.import_module("replikit.multistudy.audit")


def test_card_light_rule_on_constructed_bounds():
    # upper bound inside -> good; lower bound beyond -> bad; straddling -> warn
    assert ek.card_light(0.0, 0.08, 0.1) == "good"
    assert ek.card_light(0.0, 0.10, 0.1) == "good"  # within: at most the tolerance
    assert ek.card_light(0.12, 0.3, 0.1) == "bad"
    assert ek.card_light(0.05, 0.3, 0.1) == "warn"
    assert ek.card_light(0.10, 0.3, 0.1) == "warn"  # the lower bound must exceed it
    out = ek.card_light([0.0, 0.12, 0.05], [0.08, 0.3, 0.3], 0.1)
    assert out.tolist() == ["good", "bad", "warn"]


def _table(U, se):
    return pd.DataFrame({"study": [f"s{k}" for k in range(len(U))], "utility": U,
                         "se": se})


def test_lower_bound_is_the_bonferroni_pairwise_bound():
    U, se = np.array([0.80, 0.92, 0.79, 0.85]), np.full(4, 0.01)
    r = epsilon_test(_table(U, se))
    P = 6
    q = stats.norm.ppf(1 - 0.05 / (2 * P))  # no n: normal quantiles
    i, j = np.triu_indices(4, 1)
    expected = max(0.0, (np.abs(U[i] - U[j]) - q * np.sqrt(2) * 0.01).max())
    assert r.lower_bound == pytest.approx(expected, rel=1e-12)
    assert tuple(r.confidence_interval()) == pytest.approx((r.lower_bound, r.smallest_tolerance))
    # a lower level narrows the interval from both ends
    ci90 = r.confidence_interval(0.9)
    assert ci90.low > r.lower_bound and ci90.high < r.smallest_tolerance
    # equal utilities: the lower bound is 0
    assert epsilon_test(_table(np.full(3, 0.8), np.full(3, 0.01))).lower_bound == 0.0


@pytest.mark.parametrize("K", [2, 5, 10])
@pytest.mark.parametrize("config", ["equal", "one pair apart", "spread out"])
def test_lower_bound_coverage_by_simulation(K, config):
    """P(lower bound > true max|Δ|) <= 0.05: normal utilities with unequal SEs, Welch df."""
    rng = np.random.default_rng(K * 7 + len(config))
    R, n = 4000, 40
    theta = {"equal": np.zeros(K),
             "one pair apart": np.r_[0.3, np.zeros(K - 2), -0.3][:K] if K > 2
             else np.array([0.3, -0.3]),
             "spread out": np.linspace(-0.2, 0.2, K)}[config]
    sd = np.linspace(0.5, 1.5, K)
    x = rng.normal(theta[None, :, None], sd[None, :, None], size=(R, K, n))
    U, v = x.mean(-1), x.var(-1, ddof=1) / n
    i, j = ek.pair_index(K)
    nn = np.full(K, float(n))
    df = ek.welch_df(v[:, i], v[:, j], nn[i], nn[j])
    lower = ek.absolute_lower_bounds(U, v, df, 0.95).max(-1)
    upper = ek.absolute_bounds(U, v, df, 0.95)[3].max(-1)
    truth = theta.max() - theta.min()
    miss_low = np.mean(lower > truth)
    miss_high = np.mean(upper < truth)
    band = 0.05 + 3 * np.sqrt(0.05 * 0.95 / R)
    assert miss_low <= band and miss_high <= band
    assert np.all(lower <= upper)


def _df(shift=0.0, n=150, K=4, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n * K),
                       "site": np.repeat([f"s{k}" for k in range(K)], n)})
    noise = rng.normal(size=n * K) * np.where(df.site == "s0", 1.0 + shift, 1.0)
    df["y"] = df.x + noise
    return dataset_from_frame(df, target="y", study="site")


MODELS = {"lr": LinearRegression(), "dummy": DummyRegressor()}


@pytest.fixture(scope="module")
def shifted():
    """One site with errors of sd 3 instead of 1: its MSE about 9 against 1."""
    return _df(shift=2.0)


def test_audit_light_follows_the_bounds_and_the_tolerance(shifted):
    runs = {tol: audit(shifted, models=MODELS, quick=True, random_state=0, tolerance=tol)
            for tol in (None, "10%", 0.5, 100.0, "100%")}
    base = runs[None]
    # the default is 10% of the pooled loss
    assert base.tolerance_share == pytest.approx(audit_module.DEFAULT_TOLERANCE)
    assert base.tolerance == pytest.approx(0.1 * base.pooled_loss)
    same = runs["10%"].verdict
    assert (same.level, same.ci_low, same.ci_high) == (base.verdict.level, base.verdict.ci_low,
                                                       base.verdict.ci_high)
    assert "the default" in base.verdict.tolerance and "the default" not in same.tolerance
    assert base.pooled_loss == pytest.approx(-np.average(base.utilities.utility,
                                                         weights=base.utilities.n))
    low, high = base.lower_bound, base.smallest_tolerance
    assert (base.verdict.ci_low, base.verdict.ci_high) == (low, high)
    assert tuple(base.confidence_interval()) == pytest.approx((low, high))
    assert 0 < low < high
    for tol, a in runs.items():
        assert a.verdict.level == ek.card_light(low, high, a.tolerance), tol
        assert a.verdict.tolerance.startswith("judged against ε = ")
    # a site whose MSE is about 9 against 1: shown beyond 0.5, within 100
    assert runs[0.5].verdict.level == "bad" and runs[0.5].tolerance == 0.5
    assert "lower bound" in runs[0.5].verdict.tolerance
    assert runs[0.5].verdict.sentence.split(":")[0].endswith(
        "is not replicable across the 4 studies within ε = 0.5 (in units of the mean squared "
        "error)")
    assert runs[100.0].verdict.level == "good" and "upper bound" in runs[100.0].verdict.tolerance
    assert " is replicable across the " in runs[100.0].verdict.sentence.split(":")[0]
    assert runs["100%"].tolerance == pytest.approx(base.pooled_loss)
    # never 'holds up' from a test that failed to reject
    for a in runs.values():
        assert "holds up" not in a.verdict.sentence


def test_amber_when_the_bounds_straddle():
    a = audit(_df(shift=0.0, n=60, K=3), models=MODELS, quick=True, random_state=1)
    assert a.lower_bound <= a.tolerance < a.smallest_tolerance
    assert a.verdict.level == "warn"
    assert "cannot tell" in a.verdict.sentence


@pytest.mark.parametrize("bad", [-1, "ten", "150%", float("nan"), float("inf")])
def test_tolerance_is_checked(bad):
    with pytest.raises(ParameterError, match="`tolerance`"):
        audit_module._tolerance_iv(bad)


def test_run_audit_tolerances_change_the_card(tmp_path, shifted):
    from replikit.report import run_audit

    cards = {}
    for name, tol in (("relative", {"multistudy": "10%"}), ("loose", {"multistudy": 100}),
                      ("tight", {"multistudy": 0.5})):
        rep = run_audit(shifted, tmp_path / name, models=MODELS, quick=True, random_state=0,
                        sections=["multistudy"], tolerances=tol)
        sec = next(s for s in rep.sections if s.key == "multistudy")
        cards[name] = sec.data
    assert cards["loose"]["verdict"]["level"] == "good"
    assert cards["tight"]["verdict"]["level"] == "bad"
    assert cards["relative"]["tolerance_share"] == pytest.approx(0.1)
    assert cards["loose"]["tolerance"] == 100 and cards["loose"]["tolerance_share"] is None
    assert "judged against ε = 100" in cards["loose"]["verdict"]["tolerance"]
    assert cards["relative"]["verdict"]["tolerance"].startswith("judged against ε = ")


def test_validity_card_rows_inside_their_bands():
    from replikit.multistudy.validity import _card_rows

    t = pd.DataFrame(_card_rows(np.random.default_rng(0), 1000, 200))
    cal = t[t["claim"] == "calibrated"]
    assert len(cal) == 48 and cal["within"].all(), cal.loc[~cal["within"], ["setting",
                                                                               "estimate"]]
    # green is reachable when the bounds are tight: 10,000 units per study, equal studies
    power = t[(t["quantity"] == "power") & t["method"].str.startswith("green")
              & t["setting"].str.contains("n=10000, squared")]
    assert (power["estimate"] > 0.8).all()
