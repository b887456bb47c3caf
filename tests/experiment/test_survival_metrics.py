"""Survival metrics with censoring (replikit.experiment.survival).

References:

* R's ``survival::concordance`` (survival 3.5.3, R 4): Harrell's C and its pair counts on the
  survival data sets shipped with scikit-survival (exported with ``_export`` below), stored here
  with the R command; and R's ``timewt = "n/G2"`` (Uno's weights with the censoring
  Kaplan–Meier of the same data at T-, a left limit) against replikit's counting kernel.
* scikit-survival 0.28 (``sksurv.metrics``, a test-only oracle): every metric on the same data
  sets and on random inputs full of ties, at 1e-10 relative (they agree to rounding).
* Properties: C(-risk) = 1 - C(risk) without ties, invariance to increasing transforms, bounds,
  C = 1/2 in expectation for a risk unrelated to the outcome.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.experiment import survival as S
from replikit.experiment.survival import (
    SURVIVAL_METRICS,
    brier_score,
    concordance_index,
    concordance_index_ipcw,
    cumulative_dynamic_auc,
    integrated_brier_score,
    survival_higher_is_better,
)

RTOL = 1e-10


def _sksurv():
    return pytest.importorskip("sksurv.metrics", reason="scikit-survival (test oracle) missing")


def _dataset(name):
    """(time, event, covariates) of a data set shipped with scikit-survival."""
    datasets = pytest.importorskip("sksurv.datasets")
    loader = {"whas500": datasets.load_whas500, "gbsg2": datasets.load_gbsg2,
              "veterans": datasets.load_veterans_lung_cancer}[name]
    X, y = loader()
    event_f, time_f = y.dtype.names
    return y[time_f].astype(float), y[event_f].astype(bool), X, y


def _export():  # pragma: no cover - how the CSV files the R commands read were written
    for name in ("whas500", "gbsg2", "veterans"):
        t, e, X, _ = _dataset(name)
        frame = pd.DataFrame({"time": t, "status": e.astype(int)})
        frame[list(X.columns)] = X.to_numpy()
        frame.to_csv(f"/tmp/surv_{name}.csv", index=False)


def _risk(name, column):
    t, e, X, y = _dataset(name)
    x = X[column].to_numpy(float)
    return t, e, (-x if column == "Karnofsky_score" else x), y


# --------------------------------------------------------------------------------------------
# R: survival::concordance
#
# for (cs in list(c("whas500","age"), c("whas500","bmi"), c("gbsg2","pnodes"),
#                 c("gbsg2","tsize"), c("veterans","Karnofsky_score"))) {
#   d <- read.csv(sprintf("/tmp/surv_%s.csv", cs[1])); x <- d[[cs[2]]]
#   if (cs[2] == "Karnofsky_score") x <- -x
#   f <- concordance(Surv(d$time, d$status) ~ x, reverse = TRUE)
#   g <- concordance(Surv(d$time, d$status) ~ x, reverse = TRUE, timewt = "n/G2")
#   cat(cs, sprintf("%.17g", f$concordance), f$count, sprintf("%.17g", g$concordance), "\n")
# }
# (f$count: concordant, discordant, tied.x, tied.y, tied.xy; R's tied.y counts the pairs of
# two events at the same time, which are not comparable — scikit-survival's tied_time counts
# an event and a censoring at the same time, which are.)
R_CONCORDANCE = [
    # data, risk, C, concordant, discordant, tied.x, C with timewt = "n/G2"
    ("whas500", "age", 0.73123394855553636, 54226, 19472, 1451, 0.7733157572809275),
    ("whas500", "bmi", 0.35151499021943078, 26383, 48700, 66, 0.37889308872116445),
    ("gbsg2", "pnodes", 0.64524467957196108, 78870, 40214, 13988, 0.64508220405093852),
    ("gbsg2", "tsize", 0.57182202116147651, 73090, 53975, 6007, 0.57386233260182595),
    ("veterans", "Karnofsky_score", 0.70927987278509774, 5674, 1989, 1141,
     0.69933613937846206),
]


@pytest.mark.parametrize("name, column, c, con, dis, tied, c_g2", R_CONCORDANCE)
def test_harrell_matches_r_concordance(name, column, c, con, dis, tied, c_g2):
    t, e, x, _ = _risk(name, column)
    r = concordance_index(t, e, x)
    assert r.estimate == pytest.approx(c, rel=1e-14)
    assert (r.concordant, r.discordant, r.tied_risk) == (con, dis, tied)
    assert r.n_comparable == con + dis + tied


@pytest.mark.parametrize("name, column, c, con, dis, tied, c_g2", R_CONCORDANCE)
def test_uno_weights_at_left_limit_match_r_n_over_g2(name, column, c, con, dis, tied, c_g2):
    # R weighs each comparable pair by 1/G(T_i-)^2 with G the censoring Kaplan-Meier of the
    # same data; replikit (as scikit-survival) uses G(T_i). The kernel with R's choice gives R's.
    t, e, x, _ = _risk(name, column)
    counts = S._pair_counts(t, e, x, 0.0)
    uniq, g = S._kaplan_meier(t, e, censoring=True)
    idx = np.searchsorted(uniq, t[counts.events], side="left") - 1
    w = 1.0 / np.where(idx >= 0, g[np.maximum(idx, 0)], 1.0) ** 2
    got = np.sum(w * (counts.concordant + 0.5 * counts.tied)) / np.sum(w * counts.comparable)
    assert got == pytest.approx(c_g2, rel=1e-12)
    # and the public (right-limit) value differs from R's only a little
    assert concordance_index_ipcw(t, e, t, e, x).estimate == pytest.approx(c_g2, abs=5e-3)


# --------------------------------------------------------------------------------------------
# scikit-survival on real data

REAL = [("whas500", "age"), ("whas500", "bmi"), ("gbsg2", "pnodes"), ("gbsg2", "tsize"),
        ("veterans", "Karnofsky_score")]


@pytest.mark.parametrize("name, column", REAL)
def test_harrell_and_uno_match_sksurv_on_real_data(name, column):
    sk = _sksurv()
    t, e, x, y = _risk(name, column)
    ref = sk.concordance_index_censored(e, t, x)
    got = concordance_index(y, x)  # the structured target
    assert got.estimate == pytest.approx(ref[0], rel=RTOL)
    assert (got.concordant, got.discordant, got.tied_risk, got.tied_time) == tuple(ref[1:])
    # Uno's C: training = first half, test = second half, truncated at the 80% quantile
    rng = np.random.default_rng(0)
    idx = rng.permutation(t.size)
    tr, te = idx[: t.size // 2], idx[t.size // 2:]
    tau = float(np.quantile(t[tr], 0.8))
    for tau_ in (None, tau):
        try:
            ref = sk.concordance_index_ipcw(y[tr], y[te], x[te], tau=tau_)
        except ValueError:  # a test time beyond the training follow-up: only with tau
            assert tau_ is None
            continue
        got = concordance_index_ipcw(t[tr], e[tr], t[te], e[te], x[te], tau=tau_)
        assert got.estimate == pytest.approx(ref[0], rel=RTOL)
        assert (got.concordant, got.discordant, got.tied_risk, got.tied_time) == tuple(ref[1:])


def _survival_probs(t, X, times, rng):
    """Weibull survival curves from a linear predictor of the numeric covariates."""
    num = X.select_dtypes("number").to_numpy(float)
    lp = ((num - num.mean(0)) / num.std(0)) @ rng.normal(scale=0.3, size=num.shape[1])
    scale = np.median(t)
    return np.exp(-((times[None, :] / scale) ** 1.2) * np.exp(lp)[:, None]), lp


@pytest.mark.parametrize("name", ["whas500", "gbsg2", "veterans"])
def test_auc_and_brier_match_sksurv_on_real_data(name):
    sk = _sksurv()
    t, e, X, y = _dataset(name)
    rng = np.random.default_rng(1)
    idx = rng.permutation(t.size)
    tr, te = idx[: 2 * t.size // 3], idx[2 * t.size // 3:]
    last = np.argmax(t)  # scikit-survival needs every test event within the training follow-up
    tr, te = np.union1d(tr, [last]), np.setdiff1d(te, [last])
    hi = min(np.quantile(t[te], 0.8), np.quantile(t[tr], 0.8))
    times = np.linspace(np.quantile(t[te], 0.1), hi, 15)
    probs, lp = _survival_probs(t, X, times, rng)
    # AUC with a risk per subject and with a risk per subject and time
    for risk in (lp[te], 1.0 - probs[te]):
        ref = sk.cumulative_dynamic_auc(y[tr], y[te], risk, times)
        got = cumulative_dynamic_auc(y[tr], y[te], risk, times)
        np.testing.assert_allclose(got.auc, ref[0], rtol=RTOL)
        assert got.mean_auc == pytest.approx(ref[1], rel=RTOL)
    ref_bs = sk.brier_score(y[tr], y[te], probs[te], times)[1]
    np.testing.assert_allclose(brier_score(y[tr], y[te], probs[te], times).brier, ref_bs,
                               rtol=RTOL)
    ref_ibs = sk.integrated_brier_score(y[tr], y[te], probs[te], times)
    assert integrated_brier_score(t[tr], e[tr], t[te], e[te], probs[te], times) == \
        pytest.approx(ref_ibs, rel=RTOL)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # scikit-survival 0/0
def test_everything_matches_sksurv_on_random_tied_inputs():
    """300 small data sets with tied times, tied risks and ties between them."""
    sk = _sksurv()
    from sksurv.util import Surv

    rng = np.random.default_rng(2)
    checked = {"harrell": 0, "uno": 0, "auc": 0, "brier": 0}
    for trial in range(300):
        n, m = rng.integers(5, 60, size=2)
        t, tt = rng.integers(1, 20, n).astype(float), rng.integers(1, 18, m).astype(float)
        e, et = rng.random(n) < 0.6, rng.random(m) < 0.6
        e[0] = et[0] = True
        risk = rng.integers(0, 6, m) + (rng.random(m) if trial % 2 else 0.0)
        y_tr, y_te = Surv.from_arrays(e, t), Surv.from_arrays(et, tt)
        ref = sk.concordance_index_censored(et, tt, risk)
        if np.isfinite(ref[0]):
            got = concordance_index(tt, et, risk)
            assert got.estimate == pytest.approx(ref[0], rel=RTOL)
            assert (got.concordant, got.discordant, got.tied_risk, got.tied_time) == \
                tuple(ref[1:])
            checked["harrell"] += 1
        tau = None if trial % 3 == 0 else float(rng.integers(3, 19))
        try:
            ref = sk.concordance_index_ipcw(y_tr, y_te, risk, tau=tau)
        except ValueError:
            ref = None
        if ref is not None and np.isfinite(ref[0]):
            got = concordance_index_ipcw(y_tr, y_te, risk, tau=tau)
            assert got.estimate == pytest.approx(ref[0], rel=RTOL)
            checked["uno"] += 1
        if tt.max() <= tt.min():
            continue
        times = np.unique(rng.uniform(tt.min(), tt.max() - 1e-9, rng.integers(1, 5)))
        risk2 = rng.normal(size=(m, times.size)) if trial % 4 == 0 else risk
        try:
            ref = sk.cumulative_dynamic_auc(y_tr, y_te, risk2, times)
        except ValueError:
            ref = None
        if ref is not None:
            got = cumulative_dynamic_auc(y_tr, y_te, risk2, times)
            np.testing.assert_allclose(got.auc, ref[0], rtol=RTOL)
            np.testing.assert_allclose(got.mean_auc, ref[1], rtol=RTOL)
            checked["auc"] += 1
        probs = rng.random((m, times.size))
        try:
            ref = sk.brier_score(y_tr, y_te, probs, times)[1]
            got = brier_score(y_tr, y_te, probs, times).brier
        except (ValueError, DataError):
            continue
        np.testing.assert_allclose(got, ref, rtol=RTOL)
        checked["brier"] += 1
    assert min(checked.values()) > 200, checked


def test_larger_sample_matches_sksurv():
    sk = _sksurv()
    rng = np.random.default_rng(3)
    n = 4000
    t = np.round(rng.exponential(size=n), 2) + 0.01  # many tied times
    e = rng.random(n) < 0.5
    risk = np.round(rng.normal(size=n) - t, 1)          # many tied risks, informative
    ref = sk.concordance_index_censored(e, t, risk)
    got = concordance_index(t, e, risk)
    assert got.estimate == pytest.approx(ref[0], rel=RTOL)
    assert (got.concordant, got.discordant, got.tied_risk, got.tied_time) == tuple(ref[1:])


# --------------------------------------------------------------------------------------------
# properties


def _sim(n, rng, censor=1.0):
    t_event = rng.exponential(size=n)
    c = rng.exponential(scale=censor, size=n)
    return np.minimum(t_event, c), t_event <= c, t_event


def test_negated_risk_gives_one_minus_c():
    rng = np.random.default_rng(4)
    t, e, _ = _sim(500, rng)
    risk = rng.normal(size=500)
    a, b = concordance_index(t, e, risk), concordance_index(t, e, -risk)
    assert a.estimate + b.estimate == pytest.approx(1.0, rel=1e-14)
    assert (a.concordant, a.discordant) == (b.discordant, b.concordant)
    ua = concordance_index_ipcw(t, e, t, e, risk, tau=1.0)
    ub = concordance_index_ipcw(t, e, t, e, -risk, tau=1.0)
    assert ua.estimate + ub.estimate == pytest.approx(1.0, rel=1e-12)


def test_invariant_to_increasing_transforms_of_risk():
    rng = np.random.default_rng(5)
    t, e, t_event = _sim(400, rng)
    risk = -np.log(t_event) + rng.normal(size=400)
    times = np.quantile(t, [0.2, 0.5, 0.7])
    for f in (np.exp, lambda r: 3 * r + 7, lambda r: np.arctan(r) * 100):
        assert concordance_index(t, e, f(risk)).estimate == \
            pytest.approx(concordance_index(t, e, risk).estimate, rel=1e-14)
        assert concordance_index_ipcw(t, e, t, e, f(risk)).estimate == \
            pytest.approx(concordance_index_ipcw(t, e, t, e, risk).estimate, rel=1e-12)
        np.testing.assert_allclose(cumulative_dynamic_auc(t, e, t, e, f(risk), times).auc,
                                   cumulative_dynamic_auc(t, e, t, e, risk, times).auc,
                                   rtol=1e-12)


def test_bounds_and_perfect_risk():
    rng = np.random.default_rng(6)
    t, e, t_event = _sim(300, rng)
    perfect = -t  # ordered exactly as the observed times
    r = concordance_index(t, e, perfect)
    assert r.estimate == 1.0 and r.discordant == 0
    assert concordance_index(t, e, t).estimate == 0.0
    times = np.quantile(t, [0.2, 0.5])
    np.testing.assert_allclose(cumulative_dynamic_auc(t, e, t, e, perfect, times).auc, 1.0)
    for _ in range(20):
        risk = rng.normal(size=300)
        for v in (concordance_index(t, e, risk).estimate,
                  concordance_index_ipcw(t, e, t, e, risk).estimate,
                  *cumulative_dynamic_auc(t, e, t, e, risk, times).auc):
            assert 0.0 <= v <= 1.0
        probs = rng.random((300, 2))
        assert np.all(brier_score(t, e, t, e, probs, times).brier >= 0)


def test_constant_risk_is_one_half():
    rng = np.random.default_rng(7)
    t, e, _ = _sim(200, rng)
    r = concordance_index(t, e, np.zeros(200))
    assert r.estimate == 0.5 and r.tied_risk == r.n_comparable
    assert cumulative_dynamic_auc(t, e, t, e, np.ones(200), [0.5]).auc[0] == 0.5


def test_random_risk_is_one_half_in_expectation():
    """400 data sets of 100 subjects, half censored, risk unrelated to the outcome."""
    rng = np.random.default_rng(8)
    harrell, uno = [], []
    for _ in range(400):
        t, e, _ = _sim(100, rng)
        risk = rng.normal(size=100)
        harrell.append(concordance_index(t, e, risk).estimate)
        uno.append(concordance_index_ipcw(t, e, t, e, risk, tau=1.0).estimate)
    for values in (harrell, uno):
        mean, se = np.mean(values), np.std(values, ddof=1) / np.sqrt(len(values))
        assert abs(mean - 0.5) < 3.5 * se


def test_uno_is_free_of_censoring_where_harrell_is_not():
    """With a risk whose discrimination fades over time, heavier censoring inflates Harrell's C
    (early pairs weigh more); Uno's C truncated at tau stays put (Uno et al. 2011)."""
    rng = np.random.default_rng(9)
    n = 4000
    x = rng.normal(size=n)
    # hazard ratio exp(x) until t = 0.5, no effect after
    t1 = rng.exponential(size=n) / np.exp(x)
    t_event = np.where(t1 < 0.5, t1, 0.5 + rng.exponential(size=n))
    out = {}
    for label, scale in (("light", 20.0), ("heavy", 0.7)):
        c = rng.exponential(scale=scale, size=n)
        t, e = np.minimum(t_event, c), t_event <= c
        half = n // 2
        out[label] = (concordance_index(t, e, x).estimate,
                      concordance_index_ipcw(t[:half], e[:half], t[half:], e[half:], x[half:],
                                             tau=1.5).estimate)
    assert out["heavy"][0] - out["light"][0] > 0.03
    assert abs(out["heavy"][1] - out["light"][1]) < 0.02


def test_brier_of_true_survival_beats_a_constant():
    rng = np.random.default_rng(10)
    n = 2000
    x = rng.normal(size=n)
    t_event = rng.exponential(size=n) / np.exp(x)
    c = rng.exponential(scale=2.0, size=n)
    t, e = np.minimum(t_event, c), t_event <= c
    times = np.quantile(t, np.linspace(0.1, 0.7, 10))
    truth = np.exp(-times[None, :] * np.exp(x)[:, None])
    half = np.full_like(truth, 0.5)
    assert integrated_brier_score(t, e, t, e, truth, times) < \
        integrated_brier_score(t, e, t, e, half, times) - 0.03


def test_structured_and_array_targets_agree():
    rng = np.random.default_rng(11)
    t, e, _ = _sim(100, rng)
    y = np.empty(100, dtype=[("status", bool), ("days", float)])
    y["status"], y["days"] = e, t
    risk = rng.normal(size=100)
    times = np.quantile(t, [0.3, 0.6])
    probs = rng.random((100, 2))
    assert concordance_index(y, risk) == concordance_index(t, e.astype(int), risk)
    assert concordance_index_ipcw(y, y, risk) == concordance_index_ipcw(t, e, y, risk)
    assert concordance_index_ipcw(y, y, risk=risk) == concordance_index_ipcw(t, e, t, e, risk)
    np.testing.assert_array_equal(cumulative_dynamic_auc(y, y, risk, times).auc,
                                  cumulative_dynamic_auc(t, e, t, e, risk, times).auc)
    assert integrated_brier_score(y, y, probs, times) == \
        integrated_brier_score(t, e, t, e, survival_probs=probs, times=times)


def test_registry():
    rng = np.random.default_rng(12)
    t, e, _ = _sim(200, rng)
    risk = rng.normal(size=200) - t
    times = np.quantile(t, [0.2, 0.5, 0.7])
    probs = np.exp(-times[None, :] * np.ones((200, 1)))
    assert SURVIVAL_METRICS["c_index"](t, e, t, e, risk) == \
        concordance_index(t, e, risk).estimate
    assert SURVIVAL_METRICS["c_index_uno"](t, e, t, e, risk, times) == \
        concordance_index_ipcw(t, e, t, e, risk, tau=times[-1]).estimate
    assert SURVIVAL_METRICS["mean_auc"](t, e, t, e, risk, times) == \
        cumulative_dynamic_auc(t, e, t, e, risk, times).mean_auc
    assert SURVIVAL_METRICS["integrated_brier_score"](t, e, t, e, probs, times) == \
        integrated_brier_score(t, e, t, e, probs, times)
    assert [survival_higher_is_better(m) for m in SURVIVAL_METRICS] == [True, True, True, False]
    with pytest.raises(ParameterError, match="`metric`"):
        survival_higher_is_better("c")


def test_results_keep_the_contract():
    from _checks import check_result

    rng = np.random.default_rng(13)
    t, e, _ = _sim(100, rng)
    risk = rng.normal(size=100)
    times = np.quantile(t, [0.3, 0.6])
    check_result(concordance_index(t, e, risk))
    check_result(concordance_index_ipcw(t, e, t, e, risk, tau=1.0))
    auc = cumulative_dynamic_auc(t, e, t, e, risk, times)
    check_result(auc)
    assert list(auc.to_frame().columns) == ["time", "auc"]
    check_result(brier_score(t, e, t, e, rng.random((100, 2)), times))


# --------------------------------------------------------------------------------------------
# bad input names the parameter

T, E, R = [1.0, 2.0, 3.0, 4.0], [1, 0, 1, 1], [0.1, 0.4, 0.2, 0.3]


@pytest.mark.parametrize("call, error, match", [
    (lambda: concordance_index([1, -2, 3, 4], E, R), DataError, "`time`.*positive"),
    (lambda: concordance_index([1, np.nan, 3, 4], E, R), DataError, "`time`.*finite"),
    (lambda: concordance_index(T, [1, 2, 0, 1], R), DataError, "`event`.*1/0"),
    (lambda: concordance_index(T, [0, 0, 0, 0], R), DataError, "`event`.*censored"),
    (lambda: concordance_index(T, [1, 0, 1], R), DataError, "`event` has 3"),
    (lambda: concordance_index(T, E, [0.1, 0.2]), DataError, "`risk` has 2"),
    (lambda: concordance_index(T, E, [0.1, np.inf, 0, 1]), DataError, "`risk`.*finite"),
    (lambda: concordance_index(T, E), ParameterError, "`risk`"),
    (lambda: concordance_index(T, E, R, tied_tol=-1), ParameterError, "`tied_tol`"),
    (lambda: concordance_index(T, E, R, tied_tol="a"), ParameterTypeError, "`tied_tol`"),
    (lambda: concordance_index([1.0, 1.0], [1, 1], [0, 1]), DataError, "no comparable"),
    (lambda: concordance_index(np.zeros(3, dtype=[("a", float), ("b", float)]), R),
     DataError, "`time`.*boolean"),
    (lambda: concordance_index_ipcw(T, E, T, E, R, tau=0), ParameterError, "`tau`"),
    (lambda: concordance_index_ipcw(T, E, T, E, R, tau=1.0), DataError, "no test event"),
    (lambda: concordance_index_ipcw([1, 2], [0, 1], T, E, R), DataError,
     "beyond the training follow-up.*`time_train`"),
    (lambda: concordance_index_ipcw([1, 2, 3], [1, 1, 0], T, E, R), DataError, "G\\(t\\) is 0"),
    (lambda: concordance_index_ipcw(T, [0, 0, 0, 0], T, E, R), DataError, "`event_train`"),
    (lambda: cumulative_dynamic_auc(T, E, T, E, R, [2.5, 2.0]), ParameterError,
     "`times`.*increasing"),
    (lambda: cumulative_dynamic_auc(T, E, T, E, R, [4.0]), ParameterError, "`times`.*follow-up"),
    (lambda: cumulative_dynamic_auc(T, E, T, E, R, [0.5]), ParameterError, "`times`"),
    (lambda: cumulative_dynamic_auc(T, E, T, E, np.ones((4, 3)), [2.0, 3.0]), DataError,
     "`risk` has 3 columns"),
    (lambda: brier_score(T, E, T, E, [[0.5, 1.5]] * 4, [1.5, 2.5]), DataError,
     "`survival_probs`.*probabilities"),
    (lambda: brier_score(T, E, T, E, [0.5] * 4, [1.5, 2.5]), DataError,
     "`survival_probs`.*one column per time"),
    (lambda: integrated_brier_score(T, E, T, E, [0.5] * 4, [1.5]), ParameterError,
     "`times`.*at least 2"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_censored_test_subjects_beyond_training_follow_up_are_fine():
    # only the weights that are used need the censoring distribution
    r = concordance_index_ipcw([1, 2, 3, 5], [1, 1, 0, 0], [1, 2, 4, 9], [1, 1, 1, 0],
                               [0.9, 0.5, 0.4, 0.1])
    assert r.estimate == 1.0
