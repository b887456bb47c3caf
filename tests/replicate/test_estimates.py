"""Estimates with uncertainty: R2 SEs and intervals, bootstrap, other metrics."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import mean_squared_error, r2_score, roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from replikit.errors import DataError, ParameterError
from replikit.replicate import (
    bootstrap_interval,
    from_folds,
    from_predictions,
    from_summary,
    meta_analysis,
    r2_cdf_lee,
    r2_confidence_interval,
    r2_se,
)

REF = json.loads((Path(__file__).parents[1] / "reference" / "replicate"
                  / "single_values.json").read_text())


def test_psychometric_ci_rsq():
    ref = REF["r2_ci_cohen"]
    inp = ref["input"]
    se = r2_se(inp["r2"], inp["n"], inp["k"], method="cohen")
    assert se == pytest.approx(ref["se"], abs=1e-8)
    ci = r2_confidence_interval(inp["r2"], inp["n"], inp["k"], inp["level"], method="cohen")
    assert ci.low == pytest.approx(ref["ci"][0], abs=1e-6)
    assert ci.high == pytest.approx(ref["ci"][1], abs=1e-6)


def test_olkin_finn_closed_form_and_cohen_gap():
    assert r2_se(0.41, 667) == pytest.approx(np.sqrt(4 * 0.41 * 0.59 ** 2 / 667))
    ratio = r2_se(0.41, 133, 36) / r2_se(0.41, 133, 36, method="cohen")
    assert ratio == pytest.approx(1.40, abs=0.01)  # Cohen's SE is ~29% smaller
    gap = 1 - 1 / ratio
    assert gap == pytest.approx(0.29, abs=0.01)
    big = r2_se(0.41, 100_000, 5) / r2_se(0.41, 100_000, 5, method="cohen")
    assert big == pytest.approx(1.0, abs=1e-3)


def test_lee_exact_at_zero_and_monte_carlo():
    # rho2 = 0: Lee's approximation is the exact central F
    r2, n, k = 0.1, 40, 3
    f = r2 / k / ((1 - r2) / (n - k - 1))
    assert r2_cdf_lee(r2, 0.0, n, k) == pytest.approx(stats.f.cdf(f, k, n - k - 1), abs=1e-12)
    # rho2 > 0: against simulated R2 of OLS with normal predictors
    rng = np.random.default_rng(3)
    n, k, rho2, b = 40, 3, 0.3, 4000
    X = rng.normal(size=(b, n, k))
    y = X[..., 0] + np.sqrt((1 - rho2) / rho2) * rng.normal(size=(b, n))
    Xc = np.concatenate([np.ones((b, n, 1)), X], axis=2)
    coef = np.linalg.solve(np.einsum("bij,bik->bjk", Xc, Xc),
                           np.einsum("bij,bi->bj", Xc, y)[..., None])[..., 0]
    res = y - np.einsum("bij,bj->bi", Xc, coef)
    sim = 1 - (res ** 2).sum(1) / ((y - y.mean(1, keepdims=True)) ** 2).sum(1)
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        assert r2_cdf_lee(np.quantile(sim, q), rho2, n, k) == pytest.approx(q, abs=0.025)


@pytest.mark.parametrize("predictors", ["random", "fixed"])
def test_lee_interval_inverts_its_cdf(predictors):
    r2, n, k = 0.25, 100, 5
    ci = r2_confidence_interval(r2, n, k, 0.95, method="lee", predictors=predictors,
                                sample="in_sample")
    assert 0 < ci.low < r2 < ci.high < 1
    if predictors == "random":
        assert r2_cdf_lee(r2, ci.low, n, k) == pytest.approx(0.975, abs=1e-8)
        assert r2_cdf_lee(r2, ci.high, n, k) == pytest.approx(0.025, abs=1e-8)
    else:
        f = r2 / k / ((1 - r2) / (n - k - 1))
        lam = n * ci.high / (1 - ci.high)
        assert stats.ncf.cdf(f, k, n - k - 1, lam) == pytest.approx(0.025, abs=1e-8)
    narrower = r2_confidence_interval(r2, n, k, 0.9, method="lee", predictors=predictors,
                                sample="in_sample")
    assert ci.low < narrower.low < narrower.high < ci.high
    # lower bound 0 when R2 is not significant
    assert r2_confidence_interval(0.01, 50, 5, method="lee", sample="in_sample").low == 0.0


def test_negative_r2_rules():
    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    yhat = y[::-1] * 0.5  # worse than the mean -> negative R2
    assert r2_score(y, yhat) < 0
    with pytest.raises(DataError, match="Negative R2"):
        from_predictions(y, yhat, se_method="olkin_finn")
    # the default delta-method SE accepts a negative test R2
    assert from_predictions(y, yhat).se > 0
    with pytest.raises(DataError, match=r"\[0, 1\)"):
        r2_confidence_interval(-0.1, 100, 3, method="lee", sample="in_sample")
    est = from_predictions(y, yhat, se_method="bootstrap", n_resamples=300, random_state=0)
    assert est.estimate == pytest.approx(r2_score(y, yhat))
    assert est.se > 0


def _data(n=400, random_state=0):
    rng = np.random.default_rng(random_state)
    x = rng.normal(size=n)
    return x + rng.normal(size=n), x


def test_bootstrap_intervals_and_reproducibility():
    y, yhat = _data()
    a = from_predictions(y, yhat, se_method="bootstrap", n_resamples=500, random_state=7)
    b = from_predictions(y, yhat, se_method="bootstrap", n_resamples=500, random_state=7)
    assert a.replicates == b.replicates and a.se == b.se
    reps = np.asarray(a.replicates)
    pct = bootstrap_interval(reps, a.estimate, 0.95, "percentile")
    basic = bootstrap_interval(reps, a.estimate, 0.95, "basic")
    assert basic.low == pytest.approx(2 * a.estimate - pct.high)
    assert basic.high == pytest.approx(2 * a.estimate - pct.low)
    bca = from_predictions(y, yhat, se_method="bootstrap", n_resamples=500, random_state=7,
                           interval="bca").confidence_interval()
    assert bca.low < a.estimate < bca.high
    # the bootstrap SE of R2 agrees with the Olkin-Finn SE for a correctly specified model
    of = from_predictions(y, yhat)
    assert a.se == pytest.approx(of.se, rel=0.15)
    assert of.estimate == pytest.approx(r2_score(y, yhat))


def test_jackknife_closed_form_matches_direct():
    from replikit.replicate.estimates import _jackknife

    y, yhat = _data(60)
    for metric, fn in (("r2", r2_score), ("mse", mean_squared_error)):
        jk = _jackknife(metric, y, yhat)
        direct = [fn(np.delete(y, i), np.delete(yhat, i)) for i in range(60)]
        np.testing.assert_allclose(jk, direct, rtol=1e-10)


def test_other_metrics():
    y, score = _data(500, 1)
    labels = (y > 0).astype(int)
    auc = from_predictions(labels, score, metric="auc")
    assert auc.estimate == pytest.approx(roc_auc_score(labels, score))
    boot = from_predictions(labels, score, metric="auc", se_method="bootstrap", n_resamples=800,
                            random_state=0)
    assert boot.estimate == pytest.approx(auc.estimate)
    assert auc.se == pytest.approx(boot.se, rel=0.15)  # DeLong vs bootstrap
    pred = (score > 0).astype(int)
    acc = from_predictions(labels, pred, metric="accuracy")
    lo, hi = proportion_confint(int((labels == pred).sum()), labels.size, method="wilson")
    ci = acc.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((lo, hi), abs=1e-12)
    mse = from_predictions(y, score, metric="mse")
    assert mse.estimate == pytest.approx(mean_squared_error(y, score))
    assert mse.se == pytest.approx(np.std((y - score) ** 2, ddof=1) / np.sqrt(500))


def test_from_summary_and_folds():
    e = from_summary(r2=0.41, n=667, k=36, label="orig")
    assert e.se == pytest.approx(r2_se(0.41, 667)) and e.source == "olkin_finn"
    assert from_summary(estimate=0.8, metric="accuracy", n=100).se == pytest.approx(0.04)
    with pytest.raises(ParameterError, match="`se`"):
        from_summary(estimate=1.2, metric="mse")
    with pytest.raises(ParameterError, match="exactly one"):
        from_summary()
    folds = np.array([0.50, 0.47, 0.52, 0.49, 0.51])
    fe, meta = from_folds(folds, 134, pooling="fixed", return_meta=True)
    direct = meta_analysis(folds, se=r2_se(folds, 134), tau2_method="FE")
    assert fe.estimate == pytest.approx(direct.estimate) and fe.se == pytest.approx(direct.se)
    assert fe.n == 670 and fe.source == "folds:FE" and meta.k == 5
    re = from_folds(folds, 134, pooling="random", tau2_method="DL")
    assert re.se >= fe.se - 1e-15
    assert "r2 = " in str(e) and set(e.to_frame().columns) >= {"estimate", "se", "ci_low"}


def test_callable_metric_bootstrap_matches_builtin():
    from sklearn.metrics import mean_absolute_error

    y, yhat = _data(200, 4)
    a = from_predictions(y, yhat, metric=mean_absolute_error, n_resamples=300, random_state=5)
    b = from_predictions(y, yhat, metric="mae", se_method="bootstrap", n_resamples=300,
                         random_state=5)
    assert a.metric == "mean_absolute_error" and a.estimate == pytest.approx(b.estimate)
    np.testing.assert_allclose(a.replicates, b.replicates, rtol=1e-12)
    bca_a = from_predictions(y, yhat, metric=mean_absolute_error, n_resamples=300,
                             random_state=5, interval="bca").confidence_interval()
    bca_b = from_predictions(y, yhat, metric="mae", se_method="bootstrap", n_resamples=300,
                             random_state=5, interval="bca").confidence_interval()
    assert (bca_a.low, bca_a.high) == pytest.approx((bca_b.low, bca_b.high), rel=1e-10)
    with pytest.raises(ParameterError, match="bootstrap"):
        from_predictions(y, yhat, metric=mean_absolute_error, se_method="delta")


def test_fold_input_errors():
    with pytest.raises(DataError, match="n_per_fold"):
        from_folds([0.4, 0.5, 0.45], [100, 100])
    with pytest.raises(DataError, match="`se`"):
        from_folds([0.4, 0.5, 0.45], 100, se=[0.1, 0.1])
    with pytest.raises(DataError, match="at least 2"):
        from_folds([0.4], 100)


# ---------------------------------------------------------------------------------------------
# Lee's interval never raises (it once failed with "function value is NaN")

_R2_GRID = (0.0, 1e-4, 0.01, 0.05, 0.1, 0.3, 0.4682924644806017, 0.7, 0.9, 0.99, 0.9999)
_NK_GRID = ((5, 1), (5, 3), (12, 10), (20, 3), (50, 1), (50, 3), (50, 10), (200, 10),
            (2000, 10), (2000, 36), (100_000, 5))


@pytest.mark.parametrize("predictors", ["random", "fixed"])
def test_lee_interval_on_a_grid_never_raises(predictors):
    levels = (0.5, 0.8, 0.9, 0.95, 0.99)
    for n, k in _NK_GRID:
        for r2 in _R2_GRID:
            cis = [r2_confidence_interval(r2, n, k, lv, method="lee", predictors=predictors,
                                sample="in_sample")
                   for lv in levels]
            for ci in cis:
                assert 0.0 <= ci.low <= ci.high <= 1.0, (r2, n, k, ci)
            lows = [c.low for c in cis]
            highs = [c.high for c in cis]
            # nested: a higher confidence level never gives a narrower interval
            assert np.all(np.diff(lows) <= 1e-9), (r2, n, k, lows)
            assert np.all(np.diff(highs) >= -1e-9), (r2, n, k, highs)


@pytest.mark.parametrize("args, kwargs", [
    ((0.1, 50, 3), {"method": "lee", "predictors": "fixed"}),
    ((0.4682924644806017, 2000, 10), {"method": "lee"}),
])
def test_lee_former_failure_cases(args, kwargs):
    ci = r2_confidence_interval(*args, **kwargs)
    assert 0.0 <= ci.low < args[0] < ci.high < 1.0
    r2, n, k = args
    # each finite limit solves its defining equation
    if kwargs.get("predictors") == "fixed":
        f = r2 / k / ((1 - r2) / (n - k - 1))
        cdf = lambda rho2: stats.ncf.cdf(f, k, n - k - 1, n * rho2 / (1 - rho2))  # noqa: E731
    else:
        cdf = lambda rho2: r2_cdf_lee(r2, rho2, n, k)  # noqa: E731
    if ci.low > 0:
        assert cdf(ci.low) == pytest.approx(0.975, abs=1e-7)
    assert cdf(ci.high) == pytest.approx(0.025, abs=1e-7)


def test_lee_cdf_is_finite_and_monotone_in_rho2():
    rho = np.concatenate([np.linspace(0, 0.99, 100), 1 - np.logspace(-3, -10, 30)])
    for n, k in _NK_GRID:
        for r2 in (0.01, 0.3, 0.9):
            c = np.asarray(r2_cdf_lee(r2, rho, n, k))
            assert np.all(np.isfinite(c)) and np.all((c >= 0) & (c <= 1)), (n, k, r2)
            assert np.all(np.diff(c) <= 1e-12), (n, k, r2)


@pytest.mark.parametrize("predictors", ["fixed", "random"])
def test_lee_interval_coverage_monte_carlo(predictors):
    # the region of the former failures (n = 50, k = 3, small R2): 400 simulated studies, 95% intervals
    rng = np.random.default_rng(11)
    n, k, rho2, b = 50, 3, 0.1, 400
    if predictors == "fixed":
        X = np.broadcast_to(rng.normal(size=(n, k)), (b, n, k))
        Xc0 = X[0] - X[0].mean(0)
        # noncentrality lambda = beta' Xc'Xc beta / sigma^2 = n rho2 / (1 - rho2), sigma = 1
        beta = np.array([1.0, 0.0, 0.0])
        beta *= np.sqrt(n * rho2 / (1 - rho2) / (beta @ Xc0.T @ Xc0 @ beta))
        y = X @ beta + rng.normal(size=(b, n))
    else:
        X = rng.normal(size=(b, n, k))
        y = X[..., 0] + np.sqrt((1 - rho2) / rho2) * rng.normal(size=(b, n))
    Xc = np.concatenate([np.ones((b, n, 1)), X], axis=2)
    coef = np.linalg.solve(np.einsum("bij,bik->bjk", Xc, Xc),
                           np.einsum("bij,bi->bj", Xc, y)[..., None])[..., 0]
    res = y - np.einsum("bij,bj->bi", Xc, coef)
    sim = 1 - (res ** 2).sum(1) / ((y - y.mean(1, keepdims=True)) ** 2).sum(1)
    cover = [(lambda c: c.low <= rho2 <= c.high)(
        r2_confidence_interval(s, n, k, 0.95, method="lee", predictors=predictors,
                                sample="in_sample")) for s in sim]
    # 400 draws: MC SE of a 95% coverage is 0.011
    assert np.mean(cover) == pytest.approx(0.95, abs=0.035)
