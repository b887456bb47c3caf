"""Standard errors and intervals of the concordance indices (replikit.experiment.survival).

References:

* R's ``survival::concordance`` (survival 3.5-3, R 4): the infinitesimal-jackknife variance
  ``fit$var`` of Harrell's C and of the ``timewt = "n/G2"`` (Uno-type) C on the survival data
  sets shipped with scikit-survival (written to CSV by ``_export`` in
  test_survival_metrics.py) and on a small data set full of ties, stored here with the R
  commands.
* Properties: the per-subject pair weights against an O(n^2) count; the IJ SE against the
  ordinary leave-one-out jackknife; the intervals' coverage by simulation against a truth
  computed on a large sample of the same model.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from replikit.errors import ParameterError
from replikit.experiment import survival as S
from replikit.experiment.survival import concordance_index, concordance_index_ipcw

from .test_survival_metrics import R_CONCORDANCE, _risk

# --------------------------------------------------------------------------------------------
# R: survival::concordance, fit$var
#
# for (cs in list(c("whas500","age"), c("whas500","bmi"), c("gbsg2","pnodes"),
#                 c("gbsg2","tsize"), c("veterans","Karnofsky_score"))) {
#   d <- read.csv(sprintf("/tmp/surv_%s.csv", cs[1])); x <- d[[cs[2]]]
#   if (cs[2] == "Karnofsky_score") x <- -x
#   f <- concordance(Surv(d$time, d$status) ~ x, reverse = TRUE)
#   g <- concordance(Surv(d$time, d$status) ~ x, reverse = TRUE, timewt = "n/G2")
#   cat(cs, sprintf("%.17g", f$var), sprintf("%.17g", g$var), "\n")
# }
R_VARIANCE = {
    # (data, risk): (var of Harrell's C, var with timewt = "n/G2")
    ("whas500", "age"): (0.00031357515761456508, 0.0017392773493129588),
    ("whas500", "bmi"): (0.00037183331553131198, 0.0021721743338740419),
    ("gbsg2", "pnodes"): (0.00026821861723494775, 0.00031096168997409723),
    ("gbsg2", "tsize"): (0.00032135359064437295, 0.0003957822389617271),
    ("veterans", "Karnofsky_score"): (0.0005088957213363022, 0.00052416817182896467),
}
REAL = [row[:2] for row in R_CONCORDANCE]


def _uno_r_weights(t, e, counts):
    """R's n/G2 weights: 1 / G(T_i-)^2, G the censoring Kaplan-Meier of the same data."""
    uniq, g = S._kaplan_meier(t, e, censoring=True)
    idx = np.searchsorted(uniq, t[counts.events], side="left") - 1
    return 1.0 / np.where(idx >= 0, g[np.maximum(idx, 0)], 1.0) ** 2


def _weighted_c_and_se(t, e, x, w, counts):
    num = np.sum(w * (counts.concordant + 0.5 * counts.tied))
    den = np.sum(w * counts.comparable)
    c = num / den
    return c, S._concordance_se(c, den, *S._subject_pairs(t, e, x, 0.0, counts, w))


@pytest.mark.parametrize("name, column", REAL)
def test_harrell_se_matches_r_concordance_var(name, column):
    t, e, x, _ = _risk(name, column)
    r = concordance_index(t, e, x)
    assert r.se ** 2 == pytest.approx(R_VARIANCE[name, column][0], rel=1e-8)


@pytest.mark.parametrize("name, column", REAL)
def test_uno_type_se_matches_r_n_over_g2_var(name, column):
    # the setting in which the point estimates match R (test_survival_metrics.py): the
    # counting kernel with R's weights 1/G(T-)^2 from the same data
    t, e, x, _ = _risk(name, column)
    counts = S._pair_counts(t, e, x, 0.0)
    _, se = _weighted_c_and_se(t, e, x, _uno_r_weights(t, e, counts), counts)
    assert se ** 2 == pytest.approx(R_VARIANCE[name, column][1], rel=1e-8)


# set.seed(1); n <- 25
# time <- sample(1:10, n, replace=TRUE); status <- rbinom(n,1,0.6); x <- sample(1:5, n, TRUE)
# f <- concordance(Surv(time, status) ~ x, reverse=TRUE, influence=3)
# g <- concordance(Surv(time, status) ~ x, reverse=TRUE, influence=3, timewt="n/G2")
# cat(sprintf("%.17g", c(f$concordance, f$var, g$concordance, g$var)))
SMALL_T = [9, 4, 7, 1, 2, 7, 2, 3, 1, 5, 5, 10, 6, 10, 7, 9, 5, 5, 9, 9, 5, 5, 2, 10, 9]
SMALL_E = [1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1]
SMALL_X = [2, 3, 2, 2, 5, 2, 1, 3, 3, 4, 3, 1, 4, 5, 1, 1, 4, 5, 5, 4, 5, 4, 4, 1, 5]
# f$count: 70 42 29 (concordant, discordant, tied.x); R's per-subject influence (first rows
# 9 4 0 / 2 1 0 / 6 2 0) equals the pair counts of _subject_pairs below
R_SMALL = (0.5992907801418439, 0.012069432711171382, 0.59623171883906334,
           0.011985959439588509)


def test_small_tied_data_match_r():
    t, e, x = (np.asarray(a, float) for a in (SMALL_T, SMALL_E, SMALL_X))
    e = e.astype(bool)
    r = concordance_index(t, e, x)
    assert r.estimate == pytest.approx(R_SMALL[0], rel=1e-12)
    assert r.se ** 2 == pytest.approx(R_SMALL[1], rel=1e-8)
    counts = S._pair_counts(t, e, x, 0.0)
    c, se = _weighted_c_and_se(t, e, x, _uno_r_weights(t, e, counts), counts)
    assert c == pytest.approx(R_SMALL[2], rel=1e-12)
    assert se ** 2 == pytest.approx(R_SMALL[3], rel=1e-8)


# --------------------------------------------------------------------------------------------
# properties


def test_subject_pairs_match_a_quadratic_count():
    """Weighted per-subject concordant/discordant/tied pair weights, on tied data with a
    tolerance, against the O(n^2) definition."""
    rng = np.random.default_rng(0)
    for trial in range(40):
        n = int(rng.integers(5, 80))
        t = rng.integers(1, 12, n).astype(float)
        e = rng.random(n) < 0.6
        e[0] = True
        x = rng.integers(0, 5, n) + (rng.random(n) * 1e-9 if trial % 2 else 0.0)
        tol = 1e-8
        counts = S._pair_counts(t, e, x, tol)
        w = rng.random(counts.events.size) + 0.5
        got = np.column_stack(S._subject_pairs(t, e, x, tol, counts, w))
        wi = np.zeros(n)
        wi[counts.events] = w
        comp = e[:, None] & ((t[:, None] < t[None, :]) | ((t[:, None] == t[None, :])
                                                          & ~e[None, :]))
        diff = x[:, None] - x[None, :]
        kinds = [comp & (diff > tol), comp & (diff < -tol), comp & (np.abs(diff) <= tol)]
        want = np.column_stack([(k * wi[:, None]).sum(1) + (k * wi[:, None]).sum(0)
                                for k in kinds])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_ij_se_is_close_to_the_leave_one_out_jackknife():
    rng = np.random.default_rng(1)
    n = 300
    x = rng.normal(size=n)
    t = np.round(rng.exponential(size=n) / np.exp(x), 1) + 0.1
    c = np.round(rng.exponential(2.0, size=n), 1) + 0.1
    time, event, risk = np.minimum(t, c), t <= c, np.round(x, 1)
    se = concordance_index(time, event, risk).se
    keep = ~np.eye(n, dtype=bool)
    loo = np.array([concordance_index(time[k], event[k], risk[k]).estimate for k in keep])
    jack = np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
    assert se == pytest.approx(jack, rel=0.03)  # observed 0.6%


def test_intervals_and_result_fields():
    rng = np.random.default_rng(2)
    n = 150
    x = rng.normal(size=n)
    t = rng.exponential(size=n) / np.exp(x)
    c = rng.exponential(1.5, size=n)
    time, event = np.minimum(t, c), t <= c
    for r in (concordance_index(time, event, x),
              concordance_index_ipcw(time, event, time, event, x, tau=1.0)):
        assert 0 < r.ci_low < r.estimate < r.ci_high < 1
        assert tuple(r.confidence_interval()) == (r.ci_low, r.ci_high)  # logit by default
        z = stats.norm.ppf(0.975)
        logit = np.log(r.estimate / (1 - r.estimate))
        half = z * r.se / (r.estimate * (1 - r.estimate))
        np.testing.assert_allclose(tuple(r.confidence_interval()),
                                   1 / (1 + np.exp(-(logit + np.array([-half, half])))),
                                   rtol=1e-12)
        wide, narrow = r.confidence_interval(0.99), r.confidence_interval(0.5)
        assert wide.low < r.ci_low < narrow.low < narrow.high < r.ci_high < wide.high
        frame = r.to_frame()
        assert list(frame.columns[:7]) == ["method", "estimate", "se", "ci_low", "ci_high",
                                           "confidence_level", "interval"]
        assert "se" in str(r) and "ci_low" in str(r)
        assert r.to_dict()["ci_high"] == r.ci_high
    w = concordance_index(time, event, x, interval="wald", confidence_level=0.9)
    z = stats.norm.ppf(0.95)
    assert (w.ci_low, w.ci_high) == pytest.approx((w.estimate - z * w.se,
                                                   w.estimate + z * w.se), rel=1e-12)
    assert w.confidence_level == 0.9


def test_perfect_ordering_has_zero_se_and_a_bounded_interval():
    t = np.arange(1.0, 21.0)
    e = np.ones(20, bool)
    r = concordance_index(t, e, -t)
    assert r.estimate == 1.0 and r.se == 0.0 and (r.ci_low, r.ci_high) == (1.0, 1.0)
    near = concordance_index(t, e, -t + np.where(np.arange(20) == 3, 1.5, 0.0))
    assert 0 < near.se and near.ci_high <= 1.0


def test_se_invariant_to_increasing_transforms_and_negation():
    rng = np.random.default_rng(3)
    n = 200
    x = rng.normal(size=n)
    t = rng.exponential(size=n) / np.exp(x)
    c = rng.exponential(size=n)
    time, event = np.minimum(t, c), t <= c
    a = concordance_index(time, event, x)
    assert concordance_index(time, event, np.exp(x)).se == pytest.approx(a.se, rel=1e-12)
    assert concordance_index(time, event, -x).se == pytest.approx(a.se, rel=1e-12)
    u = concordance_index_ipcw(time, event, time, event, x, tau=1.0)
    assert concordance_index_ipcw(time, event, time, event, -x, tau=1.0).se == \
        pytest.approx(u.se, rel=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"interval": "percentile"}, "`interval`"),
    ({"confidence_level": 1.5}, "`confidence_level`"),
])
def test_bad_interval_options(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        concordance_index([1, 2, 3], [1, 1, 0], [3, 2, 1], **kwargs)
    with pytest.raises(ParameterError, match=match):
        concordance_index_ipcw([1, 2, 3], [1, 1, 0], [1, 2, 3], [1, 1, 0], [3, 2, 1], **kwargs)


# --------------------------------------------------------------------------------------------
# calibration: a small version of benchmarks/survival_metrics.py coverage


@pytest.mark.slow
def test_coverage_of_the_95_percent_intervals():
    """400 data sets of 200 subjects, 60% censored: the logit intervals of Harrell's C (for its
    limit under this censoring) and Uno's C (tau = 1, censoring-free) cover about 95%."""
    rng = np.random.default_rng(4)
    rate, tau, n, n_sims = 1.6333472708907162, 1.0, 200, 400

    def draw(size, m, censor=True):
        x = rng.normal(size=(size, m))
        t = rng.exponential(size=(size, m)) / np.exp(x)
        if not censor:
            return t, np.ones_like(t, bool), x
        c = rng.exponential(1.0 / rate, size=(size, m))
        return np.minimum(t, c), t <= c, x

    big = 300_000
    t, e, x = (a[0] for a in draw(1, big))
    truth_h = concordance_index(t, e, x).estimate
    t, e, x = (a[0] for a in draw(1, big, censor=False))
    truth_u = concordance_index_ipcw(t, e, t, e, x, tau=tau).estimate
    T, E, X = draw(n_sims, n)
    hits_h = hits_u = 0
    for k in range(n_sims):
        hits_h += truth_h in concordance_index(T[k], E[k], X[k]).confidence_interval()
        hits_u += truth_u in concordance_index_ipcw(T[k], E[k], T[k], E[k], X[k],
                                                    tau=tau).confidence_interval()
    band = 3.5 * np.sqrt(0.95 * 0.05 / n_sims)  # 0.038
    for hits in (hits_h, hits_u):
        assert abs(hits / n_sims - 0.95) < band, (hits_h, hits_u)
