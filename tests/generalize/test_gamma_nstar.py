"""The default n* estimator: unbiased kernel moments, the moment-matched asymptotic
quantile, its jackknife interval, and the Mallows design of the validity study."""

import math

import numpy as np
import pytest
from scipy import stats

from replikit._calibration import COLUMNS
from replikit.errors import DataError, ParameterError
from replikit.generalize import Kernel, estimate_nstar
from replikit.generalize import validity as gv
from replikit.generalize.nstar import (
    _moments,
    _moments_leave_one_out,
    gamma_nstar,
    kernel_moments,
)


def test_moments_are_unbiased_for_a_categorical_top_item():
    """0/1 kernel on the top item: C = diag(p) - p p^T, so tr C = 1 - sum p^2 and
    ||C||_HS^2 = sum of its squared eigenvalues (closed forms)."""
    p = np.array([0.5, 0.3, 0.2])
    C = np.diag(p) - np.outer(p, p)
    tr_true, hs_true = np.trace(C), (C * C).sum()
    rng = np.random.default_rng(0)
    R, N = 20000, 8
    x = rng.choice(3, size=(R, N), p=p)
    K = (x[:, :, None] == x[:, None, :]).astype(float)
    # unclipped U-statistics: recompute without the clip to test unbiasedness exactly
    d = np.ones((R, N))
    Kt = K * (1 - np.eye(N))
    r = Kt.sum(-1)
    s = r.sum(-1)
    tr = d.mean(-1) - s / (N * (N - 1))
    hs = ((Kt * Kt).sum((-2, -1)) + s * s / ((N - 1) * (N - 2))
          - 2 / (N - 2) * (r * r).sum(-1)) / (N * (N - 3))
    for est, truth in ((tr, tr_true), (hs, hs_true)):
        assert abs(est.mean() - truth) < 4 * est.std() / math.sqrt(R)
    # the public function returns the same numbers (inside the clip range)
    t0, h0 = kernel_moments(K[0])
    assert t0 == pytest.approx(tr[0]) and h0 == pytest.approx(np.clip(hs[0], 1e-9 * tr[0] ** 2,
                                                                     tr[0] ** 2))


def test_leave_one_out_moments_equal_recomputation():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((11, 3))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    tr, hs = _moments_leave_one_out(K)
    keep = ~np.eye(11, dtype=bool)
    brute = [_moments(K[np.ix_(keep[i], keep[i])]) for i in range(11)]
    np.testing.assert_allclose(tr, [b[0] for b in brute])
    np.testing.assert_allclose(hs, [b[1] for b in brute])


def test_gamma_nstar_closed_forms():
    eps, a = 0.3, 0.9
    # one eigenvalue lam: n MMD^2 -> 2 lam chi2_1
    lam = 0.4
    assert gamma_nstar(lam, lam ** 2, eps, a) == pytest.approx(
        2 * lam * stats.chi2.ppf(a, 1) / eps ** 2)
    # h equal eigenvalues: exactly 2 lam chi2_h
    h = 5
    assert gamma_nstar(h * lam, h * lam ** 2, eps, a) == pytest.approx(
        2 * lam * stats.chi2.ppf(a, h) / eps ** 2)
    # identical results: n* = 1; never below 1
    assert gamma_nstar(0.0, 0.0, eps, a) == 1.0
    assert gamma_nstar(1e-6, 1e-12, eps, a) == 1.0
    # up in alpha*, down in eps
    assert gamma_nstar(1, 0.5, eps, 0.99) > gamma_nstar(1, 0.5, eps, 0.9)
    assert gamma_nstar(1, 0.5, 0.2, a) > gamma_nstar(1, 0.5, 0.3, a)


def test_gamma_quantile_matches_the_weighted_chi_square():
    """The Satterthwaite quantile is close to the exact one of sum lam Z^2 (Monte Carlo)."""
    lam = np.array([0.3, 0.2, 0.1, 0.05, 0.05])
    rng = np.random.default_rng(2)
    q = np.quantile((rng.standard_normal((400_000, lam.size)) ** 2) @ lam, 0.95)
    exact = 2 * q / 0.3 ** 2
    approx = float(gamma_nstar(lam.sum(), (lam ** 2).sum(), 0.3, 0.95))
    assert approx == pytest.approx(exact, rel=0.02)


def test_estimator_choice_and_reproducibility():
    rng = np.random.default_rng(3)
    r = gv.mallows_rankings(rng, 16, n_a=5)
    a = estimate_nstar(r, Kernel("mallows"), n_resamples=50, random_state=4)
    b = estimate_nstar(r, Kernel("mallows"), n_resamples=50, random_state=4)
    assert a.table.equals(b.table)
    assert a.table["estimator"][0] == "gamma" and a.table["nstar_loglog"][0] > 0
    u = estimate_nstar(r, Kernel("mallows"), n_resamples=50, mmd_estimator="unbiased",
                       random_state=0)
    assert u.table["estimator"][0] == "loglog"
    with pytest.raises(ParameterError, match="unbiased"):
        estimate_nstar(r, Kernel("mallows"), mmd_estimator="unbiased", estimator="gamma")
    with pytest.raises(ParameterError, match="estimator"):
        estimate_nstar(r, Kernel("mallows"), estimator="median")
    # the grid of (alpha*, delta*) uses one set of moments
    g = estimate_nstar(r, Kernel("jaccard"), confidence_level=[0.9, 0.95], tolerance=[0.05, 0.1],
                       n_resamples=20, random_state=0).table
    one = estimate_nstar(r, Kernel("jaccard"), confidence_level=0.95, tolerance=0.1,
                         n_resamples=20, random_state=0).table
    row = g[(g.confidence_level == 0.95) & (g.tolerance == 0.1)].iloc[0]
    assert row.nstar == pytest.approx(one.nstar[0]) and row.se_log == pytest.approx(
        one.se_log[0])


def test_mallows_sampler_top_item_probability():
    """Repeated insertion: alternative 0 stays first unless some j is inserted at the top,
    P = prod_j (1 - e^{-theta j} / sum_{r<=j} e^{-theta r})."""
    theta, n_a = 0.3, 6
    p = np.prod([1 - math.exp(-theta * j) / np.exp(-theta * np.arange(j + 1)).sum()
                 for j in range(1, n_a)])
    R = 40000
    r = gv.mallows_rankings(np.random.default_rng(5), R, n_a=n_a, theta=theta)
    assert np.all(np.sort(r, axis=1) == np.arange(n_a))
    share = np.mean(r[:, 0] == 0)
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / R)


def test_validity_rows(monkeypatch):
    monkeypatch.setitem(gv.SIZES, "small", {"gamma": 6, "loglog": 2, "mmd_resamples": 20,
                                            "bootstrap": 20, "card": 10})
    monkeypatch.setattr(gv, "DATASETS", (10,))
    t = gv.validity(size="small", random_state=0)
    assert list(t.columns) == list(COLUMNS)
    assert set(t["capability"]) == {"generalize"}
    assert len(t) == 3 * 4 + len(gv.CARD_SETTINGS)
    assert set(t["quantity"]) == {"relative_bias", "coverage", "size", "power"}
    again = gv.validity(size="small", random_state=0)
    assert t.equals(again)
    with pytest.raises(ParameterError):
        gv.validity(size="huge")


def test_moments_at_their_bound_give_the_conservative_bound_not_a_zero_width_interval():
    # 10 experiments, the best model split 5/5: the unbiased HS estimate reaches tr^2 (h = 1)
    # with every experiment left out, so the jackknife SE was 0 and n* read 42.7 [42.7, 42.7].
    # The interval is now [1, agreement_bound] with 5 of 10 unlike the most common result:
    # closed form 2 (1 - (1 - p_u)^2) chi2_1^{-1}(0.95) / eps*^2, eps*^2 = 2 delta* = 0.1,
    # p_u the Clopper-Pearson 95% upper bound after 5 of 10 (beta(6, 5) quantile)
    from scipy import stats

    a_best, b_best = [0, 1, 2], [1, 0, 2]
    r = np.array([a_best] * 5 + [b_best] * 5)
    res = estimate_nstar(r, Kernel("jaccard", k=1), tolerance=0.05, n_resamples=50,
                         random_state=0)
    row = res.table.iloc[0]
    assert row["nstar"] > 10 and np.isnan(row["se_log"]) and row["ci_kind"] == "at bound"
    p_u = stats.beta.ppf(0.95, 6, 5)
    bound = 2 * (1 - (1 - p_u) ** 2) * stats.chi2.ppf(0.95, 1) / 0.1
    assert (row["ci_low"], row["n_other"]) == (1.0, 5)
    assert row["ci_high"] == pytest.approx(bound, rel=1e-9) and row["ci_high"] > row["nstar"]
    assert tuple(res.confidence_interval()) == pytest.approx((1.0, bound), rel=1e-9)
    # a split away from the bound keeps its jackknife interval, of positive width
    r2 = np.array([a_best] * 7 + [b_best] * 3)
    row2 = estimate_nstar(r2, Kernel("jaccard", k=1), tolerance=0.05, n_resamples=50,
                          random_state=0).table.iloc[0]
    assert row2["ci_high"] > row2["ci_low"] > 0


def test_ranks_counted_from_one_are_refused_not_read_as_n_star_one():
    # 1-based ranks left every top tier empty: the Jaccard Gram matrix was 0/0, and n* read
    # 1.0 [1.0, 1.0] without a word
    r = np.array([[1, 2, 3]] * 5 + [[2, 1, 3]] * 5)
    with pytest.raises(DataError, match="subtract 1"):
        estimate_nstar(r, Kernel("jaccard", k=1), n_resamples=20, random_state=0)


def test_agreement_bound_covers_every_law_that_n_agreeing_studies_cannot_rule_out():
    # N results all alike: n* = 1 with no jackknife spread. The bound must be at least the
    # Gamma n* of every law that puts >= 1 - p_u on the observed ranking (p_u the exact 95%
    # bound after 0 of N), whatever it does with the rest: random laws over the 3! rankings
    import itertools

    from replikit.generalize.nstar import agreement_bound, gamma_nstar

    k = Kernel("mallows")
    perms = np.array(list(itertools.permutations(range(3))))
    G = k.gram(perms)
    eps = float(k.epsilon(0.05, 3))
    rng = np.random.default_rng(0)
    for N in (5, 12, 30):
        p_u = 1 - 0.05 ** (1 / N)
        bound = float(agreement_bound(N, k.inf(3), eps))
        worst = 0.0
        for _ in range(3000):
            w = rng.dirichlet(np.full(5, rng.choice([0.05, 0.3, 1.0, 5.0])))
            p = np.r_[1 - p_u, p_u * w]
            m = G @ p
            C = np.sqrt(p)[:, None] * (G - m[:, None] - m[None, :] + p @ m) * np.sqrt(p)
            lam = np.linalg.eigvalsh(C)
            worst = max(worst, float(gamma_nstar(1 - p @ m, (lam ** 2).sum(), eps)))
        assert worst <= bound < 2.5 * worst  # a bound, and not a vacuous one
    # at other confidence levels alpha*, sup_h q_h / h (not q_1) where q_h / h is not monotone
    from scipy import stats

    h = np.arange(1, 5000)
    sup = (stats.chi2.ppf(0.683, h) / h).max()  # 1.18 (at h near 10); q_1 is 1.001
    assert float(agreement_bound(5, 0.0, 1.0, 0.683)) == pytest.approx(
        2 * (1 - 0.05 ** 0.4) * sup, rel=1e-4)
    r = np.array([[0, 1, 2]] * 8)
    res = estimate_nstar(r, k, n_resamples=50, random_state=0)
    row = res.table.iloc[0]
    assert (row["nstar"], row["ci_low"], row["ci_kind"]) == (1.0, 1.0, "agreement")
    assert row["ci_high"] == pytest.approx(float(agreement_bound(8, k.inf(3), eps)))
    ci90 = res.confidence_interval(0.90)
    assert ci90.low == 1 and 1 < ci90.high < row["ci_high"]


def test_a_flat_jackknife_is_a_failed_one_not_a_narrow_interval():
    # 3 camps of 4 on the best model (a stationary point of n* in the law): every experiment
    # left out gives the same n*, so the jackknife SE is 0. Before: [n*, n*]; now 'flat' and
    # the conservative bound (8 of 12 unlike the most common result)
    from replikit.generalize.nstar import FLAT_SD, agreement_bound

    r = np.array([[0, 1, 2]] * 4 + [[1, 0, 2]] * 4 + [[1, 2, 0]] * 4)
    k = Kernel("jaccard", k=1)
    row = estimate_nstar(r, k, n_resamples=50, random_state=0).table.iloc[0]
    assert row["ci_kind"] == "flat" and np.isnan(row["se_log"]) and row["n_other"] == 8
    assert row["ci_low"] == 1 and row["ci_high"] == pytest.approx(
        float(agreement_bound(12, 0.0, row["eps"], n_other=8)))
    assert row["ci_high"] > row["nstar"] > 1
    # off the stationary point (6/4/2) the jackknife stands, its SD above the threshold
    r2 = np.array([[0, 1, 2]] * 6 + [[1, 0, 2]] * 4 + [[1, 2, 0]] * 2)
    row2 = estimate_nstar(r2, k, n_resamples=50, random_state=0).table.iloc[0]
    assert row2["ci_kind"] == "jackknife" and row2["se_log"] * np.sqrt(12) >= FLAT_SD
    assert row2["ci_low"] < row2["nstar"] < row2["ci_high"]
