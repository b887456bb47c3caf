"""The batched fast path gives the same predictions as fitting each resample separately
(scikit-learn, a textbook LDA) and reproduces mlxtend's bootstrap scores where they coincide."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from mlxtend.evaluate import bootstrap_point632_score
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from replikit.resampling._fast import FastPredictor, fast_predictor, lda_decision
from replikit.resampling.error import estimate_errors


class ClassicLDA(ClassifierMixin, BaseEstimator):
    """Textbook LDA (pooled covariance / (n - K), priors = class shares): the reference."""

    def fit(self, X, y):
        X = np.asarray(X, float)
        self.classes_, codes = np.unique(y, return_inverse=True)
        n, K = len(codes), len(self.classes_)
        means = np.array([X[codes == k].mean(axis=0) for k in range(K)])
        resid = X - means[codes]
        cov = resid.T @ resid / (n - K)
        self.coef_ = np.linalg.solve(cov, means.T).T
        priors = np.bincount(codes, minlength=K) / n
        self.intercept_ = -0.5 * np.sum(self.coef_ * means, axis=1) + np.log(priors)
        return self

    def decision_function(self, X):
        return np.asarray(X, float) @ self.coef_.T + self.intercept_

    def predict(self, X):
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]


ALL_METHODS = ["resubstitution", "holdout", "kfold", "loo", "bootstrap", "loo_bootstrap", ".632",
               ".632+"]


def _data(seed=0, n=40, p=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y_cls = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    y_reg = X @ rng.normal(size=p) + rng.normal(size=n)
    return X, y_cls, y_reg


def _bootstrap_weights(n, R, seed):
    idx = np.random.default_rng(seed).integers(0, n, size=(R, n))
    return idx, np.stack([np.bincount(i, minlength=n) for i in idx]).astype(float)


@pytest.mark.parametrize("model, task", [
    (LinearRegression(), "regression"),
    (make_pipeline(StandardScaler(), Ridge(alpha=3.0)), "regression"),
    (Ridge(alpha=0.5), "regression"),
    (DummyRegressor(), "regression"),
    (LinearDiscriminantAnalysis(priors=[0.5, 0.5]), "classification"),
    (make_pipeline(StandardScaler(), LogisticRegression(C=0.5)), "classification"),
    (LogisticRegression(C=2.0), "classification"),
    (DummyClassifier(strategy="prior"), "classification"),
])
def test_fast_equals_sklearn_per_resample(model, task):
    X, y_cls, y_reg = _data(1)
    y = y_cls if task == "classification" else y_reg
    idx, W = _bootstrap_weights(len(y), 30, seed=2)
    fp = fast_predictor(model, task)
    assert fp is not None
    pred = fp.predict(X[None], y[None].astype(float if task == "regression" else int), W[None],
                      2)[0]
    ref = np.stack([clone(model).fit(X[i], y[i]).predict(X) for i in idx])
    if task == "regression":
        np.testing.assert_allclose(pred, ref, rtol=1e-8, atol=1e-8)
    else:
        assert np.mean(pred != ref) <= 0.004  # ties / optimiser tolerance only


@pytest.mark.parametrize("model, task", [
    (LinearRegression(), "regression"),
    (make_pipeline(StandardScaler(), Ridge(alpha=3.0)), "regression"),
    (LinearDiscriminantAnalysis(priors=[0.5, 0.5]), "classification"),
    (LogisticRegression(C=0.5), "classification"),
])
def test_wide_data_fast_path_equals_sklearn(model, task):
    """From ``WIDE_FEATURES`` columns the Gram matrices come from one ``syrk`` per resample
    instead of the rows' outer products; the fits stay scikit-learn's."""
    from replikit.resampling import _fast

    X, y_cls, y_reg = _data(3, n=160, p=_fast.WIDE_FEATURES + 8)
    y = y_cls if task == "classification" else y_reg
    idx, W = _bootstrap_weights(len(y), 6, seed=4)
    fp = fast_predictor(model, task)
    pred = fp.predict(X[None], y[None].astype(float if task == "regression" else int), W[None],
                      2)[0]
    ref = np.stack([clone(model).fit(X[i], y[i]).predict(X) for i in idx])
    if task == "regression":
        np.testing.assert_allclose(pred, ref, rtol=1e-7, atol=1e-7)
    else:
        assert np.mean(pred != ref) <= 0.004


@pytest.mark.parametrize("scaled", [False, True])
def test_wide_logistic_quasi_newton_reaches_sklearns_optimum(scaled):
    """The wide path's quasi-Newton steps (full-data inverse Hessian, BFGS updates, renewed
    Hessians) end at the penalised optimum: decision values equal a tightly converged
    scikit-learn fit per resample, also where a rare dummy column (2 of 200 rows) is absent
    from a resample (its coefficient then set by the penalty alone)."""
    from replikit.resampling import _fast

    rng = np.random.default_rng(8)
    n, p = 200, _fast.WIDE_FEATURES + 4
    X = rng.normal(size=(n, p))
    X[:, -1] = 0.0
    X[:2, -1] = 1.0  # a rare level
    y = (X[:, 0] - X[:, 1] + 2 * X[:, -1] + rng.logistic(size=n) > 0).astype(int)
    idx, W = _bootstrap_weights(n, 12, seed=6)
    assert (W[:, :2].sum(axis=1) == 0).any()  # some resample has none of the rare rows
    est = LogisticRegression(C=0.7, solver="newton-cholesky", tol=1e-12, max_iter=500)
    model = make_pipeline(StandardScaler(), est) if scaled else est
    got = _fast.logistic_decision(X[None], y[None].astype(float), W[None], C=0.7,
                                  scaled=scaled)[0]
    ref = np.stack([clone(model).fit(X[i], y[i]).decision_function(X) for i in idx])
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


def test_wide_and_narrow_moments_agree(monkeypatch):
    """The two ways of building ``sum_i w_ri x_i x_i'`` (outer products; syrk per resample)
    agree to rounding on a batch of two datasets with bootstrap and 0/1 weights, and the
    batched logistic fit gives the same rules either way."""
    from replikit.resampling import _fast

    rng = np.random.default_rng(5)
    X = rng.normal(size=(2, 90, 12))
    W = np.concatenate([rng.poisson(1.0, size=(2, 4, 90)),
                        rng.integers(0, 2, size=(2, 3, 90))], axis=1).astype(float)
    y = (X[..., 0] + rng.normal(size=(2, 90)) > 0).astype(float)
    narrow = _fast.weighted_moments(W, X)
    narrow_logit = _fast.logistic_decision(X, y, W, C=1.0)
    monkeypatch.setattr(_fast, "WIDE_FEATURES", 4)
    wide = _fast.weighted_moments(W, X)
    wide_logit = _fast.logistic_decision(X, y, W, C=1.0)
    for a, b in zip(narrow, wide, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wide_logit, narrow_logit, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("p", [5, 40])
def test_moments_from_weight_patterns_equal_the_direct_sums(p):
    """Fold masks take few weight patterns (a row's fold): the moments built from each
    pattern's Gram matrix equal the direct sums; bootstrap counts (a pattern per row) and a
    projection shared by different columns take the direct path."""
    from replikit.resampling import _fast

    rng = np.random.default_rng(11)
    n, K = 120, 4
    X = rng.normal(size=(1, n, p))
    fold = rng.integers(0, K, size=n)
    masks = np.array([(fold != a) & (fold != b) for a in range(K) for b in range(K)])
    W = masks.astype(float)[None] * np.arange(1, masks.shape[0] + 1)[None, :, None]
    found = _fast._weight_patterns(W[0])
    assert found is not None and found[0].size == K
    sw, sx, sxx = _fast.weighted_moments(W, X)
    direct = np.einsum("rn,ni,nj->rij", W[0], X[0], X[0])
    np.testing.assert_allclose(sxx[0], direct, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(sx[0], W[0] @ X[0], rtol=1e-12)
    boot = rng.multinomial(n, np.full(n, 1 / n), size=6).astype(float)
    assert _fast._weight_patterns(boot) is None
    key = np.random.default_rng(_fast._PATTERN_SEED).random(2)
    clash = np.tile([[1.0, 0.0], [0.0, key[0] / key[1]]], 8)  # two columns, one projection
    assert np.unique(key @ clash).size == 1
    assert _fast._weight_patterns(clash) is None


def test_lda_divisor_n_matches_sklearn_default_priors():
    # scikit-learn >= 1.9 divides the pooled scatter by n; divisor='n' reproduces it exactly
    X, y, _ = _data(3, n=30, p=10)
    idx, W = _bootstrap_weights(30, 200, seed=4)
    fp = FastPredictor("lda", {"priors": None, "divisor": "n"}, True, True)
    pred = fp.predict(X[None], y[None], W[None], 2)[0]
    ref = np.stack([LinearDiscriminantAnalysis().fit(X[i], y[i]).predict(X) for i in idx])
    assert np.array_equal(pred, ref)


def test_lda_classic_divisor_matches_textbook_lda():
    X, y, _ = _data(5, n=30, p=10)
    idx, W = _bootstrap_weights(30, 200, seed=6)
    scores = lda_decision(X[None], y[None], W[None], 2)[0]  # (R, n, 2)
    for r in range(0, 200, 20):
        ref = ClassicLDA().fit(X[idx[r]], y[idx[r]]).decision_function(X)
        np.testing.assert_allclose(scores[r, :, 1] - scores[r, :, 0], ref[:, 1] - ref[:, 0],
                                   rtol=1e-8, atol=1e-8)


def test_lda_three_classes_and_absent_class():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(45, 4))
    y = np.repeat([0, 1, 2], 15)
    X[y == 1] += 1.5
    W = np.ones((2, 45))
    W[1, y == 2] = 0  # class 2 absent from the second resample's training rows
    scores = lda_decision(X[None], y[None], W[None], 3)[0]
    ref0 = ClassicLDA().fit(X, y).decision_function(X)
    np.testing.assert_allclose(scores[0], ref0, rtol=1e-8, atol=1e-8)
    keep = y != 2
    ref1 = ClassicLDA().fit(X[keep], y[keep]).decision_function(X)
    np.testing.assert_allclose(scores[1, :, :2], ref1, rtol=1e-8, atol=1e-8)
    assert np.all(np.isneginf(scores[1, :, 2]))


def test_collinear_ols_is_minimum_norm_like_sklearn():
    X, _, y = _data(8, n=25, p=3)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # exactly collinear column
    idx, W = _bootstrap_weights(25, 30, seed=9)
    pred = fast_predictor(LinearRegression(), "regression").predict(X[None], y[None], W[None])[0]
    ref = np.stack([LinearRegression().fit(X[i], y[i]).predict(X) for i in idx])
    np.testing.assert_allclose(pred, ref, rtol=1e-6, atol=1e-6)


# lbfgs stops at tol=1e-4, so scikit-learn's decision values differ from the batched Newton fit
# by ~1e-4 and a row that close to the boundary can flip; at tol=1e-10 the two solve alike
@pytest.mark.parametrize("model", [LinearDiscriminantAnalysis(priors=[0.5, 0.5]),
                                   make_pipeline(StandardScaler(), LogisticRegression(tol=1e-10))])
def test_fast_path_equals_generic_path_all_methods(model):
    X, y, _ = _data(10, n=30, p=6)
    kw = dict(methods=ALL_METHODS, n_resamples=40, n_repeats=5, random_state=11,
              interval="wald")  # the test compares estimates; nested CV would refit 2,750 times
    fast = estimate_errors(model, X, y, fast=True, **kw)
    generic = estimate_errors(model, X, y, fast=False, **kw)
    for m in ALL_METHODS:
        assert fast[m].path == "fast" and generic[m].path == "generic"
        assert fast[m].estimate == pytest.approx(generic[m].estimate, abs=0.01), m


def test_fast_path_equals_generic_path_regression():
    X, _, y = _data(12, n=50, p=4)
    kw = dict(methods=ALL_METHODS, n_resamples=50, random_state=3, loss="absolute")
    fast = estimate_errors(LinearRegression(), X, y, fast=None, **kw)
    generic = estimate_errors(LinearRegression(), X, y, fast=False, **kw)
    for m in ALL_METHODS:
        assert fast[m].estimate == pytest.approx(generic[m].estimate, rel=1e-9), m
        np.testing.assert_allclose(fast[m].per_resample, generic[m].per_resample, rtol=1e-9)


def test_unsupported_models_are_not_fast():
    from sklearn.ensemble import RandomForestClassifier

    assert fast_predictor(RandomForestClassifier(), "classification") is None
    assert fast_predictor(LinearDiscriminantAnalysis(shrinkage=0.1, solver="lsqr"),
                          "classification") is None
    assert fast_predictor(LogisticRegression(solver="liblinear"), "classification") is None


# ---- mlxtend: its bootstrap resamples are RandomState(seed).choice(n, n); its per-round scores
# ---- use the bootstrap model's predictions of all rows, which the fast path computes at once


def _mlxtend_resamples(n, B, seed):
    rng = np.random.RandomState(seed)
    idx = np.stack([rng.choice(np.arange(n), size=n, replace=True) for _ in range(B)])
    W = np.stack([np.bincount(i, minlength=n) for i in idx]).astype(float)
    return W


def _mlxtend_scores(method, score, y, pred, W):
    """mlxtend's per-round definitions, from the all-row predictions of every resample."""
    test = W == 0
    out = []
    for r in range(W.shape[0]):
        test_acc = score(y[test[r]], pred[r, test[r]])
        if method == "oob":
            out.append(test_acc)
            continue
        test_err, train_err = 1 - test_acc, 1 - score(y, pred[r])
        weight = 0.632
        if method == ".632+":
            gamma = 1 - np.mean([score(np.array([a]), np.array([b]))
                                 for a in y for b in pred[r]])
            rate = (test_err - train_err) / (gamma - train_err)
            weight = 0.632 / (1 - 0.368 * rate)
        out.append(1 - (weight * test_err + (1 - weight) * train_err))
    return np.array(out)


@pytest.mark.parametrize("method", ["oob", ".632", ".632+"])
def test_matches_mlxtend_bootstrap_point632_classification(method):
    X, y, _ = _data(13, n=30, p=10)
    y = np.random.default_rng(14).binomial(1, 0.5, 30)  # null design, as Etherington & Lieske (2019)
    W = _mlxtend_resamples(30, 50, seed=15)
    fp = FastPredictor("lda", {"priors": None, "divisor": "n"}, True, True)  # sklearn 1.9 LDA
    pred = fp.predict(X[None], y[None], W[None], 2)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = bootstrap_point632_score(LinearDiscriminantAnalysis(), X, y, n_splits=50,
                                       method=method, random_seed=15)
    ours = _mlxtend_scores(method, lambda a, b: np.mean(a == b), y, pred, W)
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_matches_mlxtend_bootstrap_point632_regression():
    X, _, y = _data(16, n=40, p=3)
    W = _mlxtend_resamples(40, 40, seed=17)
    pred = fast_predictor(LinearRegression(), "regression").predict(X[None], y[None], W[None])[0]
    ref = bootstrap_point632_score(LinearRegression(), X, y, n_splits=40, method="oob",
                                   random_seed=17)
    ours = _mlxtend_scores("oob", lambda a, b: np.mean((a - b) ** 2), y, pred, W)
    np.testing.assert_allclose(ours, ref, rtol=1e-9)


def test_badly_scaled_full_dummies_match_the_scaled_pipeline():
    # a 1e9-scale column next to a full dummy set (collinear with the intercept): the batched
    # fit solves on standardised columns, so its minimum-norm solution is the pipeline's, also
    # for training rows that miss a level (its coefficient is null, as in scikit-learn)
    rng = np.random.default_rng(21)
    n, levels = 120, 12
    lev = np.arange(n) % levels
    X = np.column_stack([rng.lognormal(19, 1.5, n), rng.normal(size=n),
                         (lev[:, None] == np.arange(levels)).astype(float)])
    y = rng.normal(0, 3, levels)[lev] + X[:, 1] + 1e-9 * X[:, 0] + rng.normal(size=n)
    idx, W = _bootstrap_weights(n, 20, seed=5)
    W = np.vstack([W, (lev != 3).astype(float)])
    idx = [*idx, np.flatnonzero(lev != 3)]
    model = make_pipeline(StandardScaler(), LinearRegression())
    pred = fast_predictor(model, "regression").predict(X[None], y[None], W[None])[0]
    ref = np.stack([model.fit(X[i], y[i]).predict(X) for i in idx])
    np.testing.assert_allclose(pred, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_centred_fit_without_intercept_is_not_batched():
    model = make_pipeline(StandardScaler(), LinearRegression(fit_intercept=False))
    assert fast_predictor(model, "regression") is None
    assert fast_predictor(make_pipeline(StandardScaler(with_mean=False),
                                        LinearRegression(fit_intercept=False)),
                          "regression") is not None


# ---------------------------------------------------------------- row-blocked moments (issue 28)

def _blocked_data(n=700, p=6, R=5, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1, n, p)) * np.array([1.0, 3.0, 0.5, 10.0, 1.0, 2.0])[:p]
    y = (X[0, :, 0] - X[0, :, 1] + rng.normal(size=n) > 0).astype(np.int64)[None]
    W = rng.multinomial(n, np.full(n, 1 / n), size=R)[None].astype(float)
    return X, y, W


def test_blocked_moments_equal_the_direct_product(monkeypatch):
    from replikit.resampling import _fast

    rng = np.random.default_rng(0)
    W = rng.random((2, 3, 501))
    F = rng.normal(size=(2, 501, 7))
    direct = np.matmul(W, F)
    # one block: exactly the single product
    assert np.array_equal(_fast._blocked_moments(W, 501, 7, lambda a, b: F[:, a:b]), direct)
    monkeypatch.setattr(_fast, "_BLOCK", 7 * 64)  # blocks of 64 rows
    blocked = _fast._blocked_moments(W, 501, 7, lambda a, b: F[:, a:b])
    np.testing.assert_allclose(blocked, direct, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("fn", ["lda_margin", "lda_decision"])
def test_lda_by_row_blocks_equals_the_whole_product(monkeypatch, fn):
    from replikit.resampling import _fast

    X, y, W = _blocked_data()
    call = (lambda: _fast.lda_margin(X, y, W)) if fn == "lda_margin" else (
        lambda: _fast.lda_decision(X, y, W, 2))
    whole = call()
    general = _fast._lda_general(_fast._unit_scale(X), y, W, 2)
    monkeypatch.setattr(_fast, "_BLOCK", 50 * 5)  # blocks of a few rows
    blocked = call()
    np.testing.assert_allclose(blocked, whole, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_fast._lda_general(_fast._unit_scale(X), y, W, 2), general,
                               rtol=1e-10, atol=1e-10)


def test_logistic_by_row_blocks_equals_the_kept_outer_products(monkeypatch):
    from replikit.resampling import _fast

    X, y, W = _blocked_data()
    kept = _fast.logistic_decision(X, y, W, scaled=True)
    monkeypatch.setattr(_fast, "_OUTER_CELLS", 0)  # formed per Newton step, by blocks
    monkeypatch.setattr(_fast, "_BLOCK", 2_000)
    blocked = _fast.logistic_decision(X, y, W, scaled=True)
    np.testing.assert_allclose(blocked, kept, rtol=1e-9, atol=1e-9)
    E2 = np.concatenate([X, X[:, ::-1]], axis=0)  # two datasets: the einsum branch
    y2 = np.concatenate([y, y[:, ::-1]], axis=0)
    W2 = np.concatenate([W, W], axis=0)
    monkeypatch.setattr(_fast, "_OUTER_CELLS", 10**12)
    kept2 = _fast.logistic_decision(E2, y2, W2)
    monkeypatch.setattr(_fast, "_OUTER_CELLS", 0)
    np.testing.assert_allclose(_fast.logistic_decision(E2, y2, W2), kept2, rtol=1e-9,
                               atol=1e-9)
