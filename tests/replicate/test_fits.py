"""Batched closed-form fits (``replicate._fits``) on rank-deficient designs, against scikit-learn.

Issue 13 item 1: a column constant within a study (the ``exam`` example's school-level
columns), tiny studies and ``simulate replication --n 200`` crashed with ``LinAlgError:
Singular matrix``. Every fit must return what scikit-learn's ``LinearRegression`` returns: the
minimum-norm least-squares solution of the *centred* problem, intercept ``ybar - xbar'beta``.
The checks below compare predictions on training rows and on test rows off the training span
(where different least-squares solutions disagree).
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from replikit.replicate._fits import ols_cv_test


def _sk_reference(X, y, perm, n_splits, train_share=2 / 3, alpha=0.0):
    """Fold R2s, test predictions and test R2 of one study by scikit-learn."""
    n = y.size
    n_train = int(round(n * train_share))
    Xp, yp = X[perm], y[perm]
    Xtr, ytr, Xte, yte = Xp[:n_train], yp[:n_train], Xp[n_train:], yp[n_train:]
    if alpha > 0:
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    model = (lambda: LinearRegression()) if alpha == 0 else (lambda: Ridge(alpha=alpha))
    test_pred = model().fit(Xtr, ytr).predict(Xte)
    bounds = np.linspace(0, n_train, n_splits + 1).round().astype(int)
    folds = []
    for f in range(n_splits):
        te = np.arange(bounds[f], bounds[f + 1])
        tr = np.setdiff1d(np.arange(n_train), te)
        if te.size < 2:
            folds.append(np.nan)  # R2 undefined (sklearn warns and returns nan for one row)
            continue
        pred = model().fit(Xtr[tr], ytr[tr]).predict(Xtr[te])
        folds.append(r2_score(ytr[te], pred))
    return np.array(folds), test_pred, r2_score(yte, test_pred)


def _check(X, y, perm, n_splits=5, alpha=0.0):
    out = ols_cv_test(X, y, perm, n_splits=n_splits, alpha=alpha)
    for s in range(X.shape[0]):
        folds, pred, r2 = _sk_reference(X[s], y[s], perm[s], n_splits, alpha=alpha)
        np.testing.assert_allclose(out["test_pred"][s], pred, rtol=1e-7, atol=1e-8)
        assert out["test_r2"][s] == pytest.approx(r2, rel=1e-7, abs=1e-9)
        np.testing.assert_allclose(out["fold_r2"][s], folds, rtol=1e-6, atol=1e-8)
    return out


def _perm(rng, S, n):
    return np.argsort(rng.random((S, n)), axis=1)


def test_constant_column_within_a_study():
    # school-level covariates: constant within each study, different between studies
    rng = np.random.default_rng(0)
    S, n = 3, 60
    X = rng.normal(size=(S, n, 4))
    X[:, :, 2] = np.array([1.5, -0.3, 0.1])[:, None]   # constant per study
    X[:, :, 3] = 0.0                                    # all zero
    y = X[..., 0] - 0.5 * X[..., 1] + rng.normal(size=(S, n))
    _check(X, y, _perm(rng, S, n))


def test_constant_in_training_rows_only_off_the_span():
    # the column is constant on the training rows and varies on the test rows: sklearn
    # gives it coefficient 0, so the test value must not move the prediction
    rng = np.random.default_rng(1)
    n = 45
    X = rng.normal(size=(1, n, 3))
    perm = np.arange(n)[None]
    X[0, :30, 2] = 0.7
    X[0, 30:, 2] = rng.normal(size=15) * 5
    y = X[..., 0] + rng.normal(size=(1, n))
    _check(X, y, perm, n_splits=3)


def test_dummy_present_in_one_fold_only():
    # a rare category: its dummy is 1 only on rows of fold 2, so the fold-2 fit sees a
    # constant column (downdated sums must not leave rounding noise with a huge slope)
    rng = np.random.default_rng(11)
    n = 60
    X = rng.normal(size=(1, n, 3)) * 100 + 1000
    X[0, :, 2] = 0.0
    X[0, 16:19, 2] = 1.0
    y = 0.01 * X[..., 0] + 3 * X[..., 2] + rng.normal(size=(1, n))
    _check(X, y, np.arange(n)[None], n_splits=5)


def test_duplicated_columns_min_norm_split():
    # x1 == x0 (and x2 == 3 x0) on the training rows, different on the test rows: only the
    # minimum-norm solution of the centred problem reproduces scikit-learn's predictions
    rng = np.random.default_rng(2)
    n = 60
    x0 = rng.normal(size=n)
    X = np.column_stack([x0, x0, 3 * x0, rng.normal(size=n)])[None]
    X[0, 40:, 1] += rng.normal(size=20)
    X[0, 40:, 2] -= rng.normal(size=20)
    y = 2 * x0[None] + rng.normal(size=(1, n))
    perm = np.arange(n)[None]
    out = _check(X, y, perm, n_splits=4)
    # a basic least-squares solution (x1, x2 dropped) predicts the test rows differently
    basic = LinearRegression().fit(X[0, :40, [0, 3]].T, y[0, :40]).predict(X[0, 40:, [0, 3]].T)
    assert np.max(np.abs(out["test_pred"][0] - basic)) > 0.1


def test_more_predictors_than_rows():
    rng = np.random.default_rng(3)
    S, n, p = 2, 24, 30   # 16 training rows, 30 predictors
    X = rng.normal(size=(S, n, p)) + 5.0   # offset: centring matters
    y = X[..., :3].sum(-1) + rng.normal(size=(S, n))
    _check(X, y, _perm(rng, S, n), n_splits=4)


def test_many_outcomes_share_the_design():
    rng = np.random.default_rng(4)
    S, n = 2, 50
    X = rng.normal(size=(S, n, 3))
    X[..., 2] = X[..., 1]
    Y = np.stack([X[..., 0] + rng.normal(size=(S, n)) * s for s in (0.5, 1, 2)], axis=-1)
    perm = _perm(rng, S, n)
    out = ols_cv_test(X, Y, perm, n_splits=5)
    for j in range(3):
        single = ols_cv_test(X, Y[..., j], perm, n_splits=5)
        np.testing.assert_allclose(out["test_pred"][..., j], single["test_pred"], rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(out["fold_r2"][..., j], single["fold_r2"], rtol=1e-10)


@pytest.mark.parametrize("alpha", [0.5, 10.0])
def test_ridge_on_standardised_rank_deficient_inputs(alpha):
    rng = np.random.default_rng(5)
    S, n = 2, 48
    X = rng.normal(size=(S, n, 5))
    X[..., 3] = 2.0          # constant: StandardScaler leaves it at 0
    X[..., 4] = X[..., 0]    # duplicate
    y = X[..., 0] + 0.3 * X[..., 1] + rng.normal(size=(S, n))
    _check(X, y, _perm(rng, S, n), n_splits=4, alpha=alpha)


def test_tiny_studies_like_diabetes_clinics():
    # sklearn's diabetes data in made-up clinics of 5-19 rows with 10-fold CV: many folds are
    # empty or hold one row (R2 undefined -> NaN), the fits never raise and the defined values
    # match scikit-learn
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(6)
    start = 0
    for size in (5, 6, 9, 12, 19):
        Xs, ys = X[start:start + size][None], y[start:start + size][None]
        start += size
        perm = rng.permutation(size)[None]
        with np.errstate(all="raise"):  # no stray warnings either
            out = ols_cv_test(Xs, ys, perm, n_splits=10)
        folds, pred, r2 = _sk_reference(Xs[0], ys[0], perm[0], 10)
        np.testing.assert_allclose(out["test_pred"][0], pred, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(out["fold_r2"][0], folds, rtol=1e-6, atol=1e-8)
        assert out["fold_n"].sum() == int(round(size * 2 / 3))


def test_exam_example_runs():
    from replikit.data.examples import exam

    ex = exam()
    X = ex.X.to_numpy(float)
    y = ex.y.to_numpy(float)
    study = ex.study.astype(str).to_numpy()
    labels = sorted(set(study))[:8]
    rng = np.random.default_rng(7)
    for lab in labels:
        idx = np.flatnonzero(study == lab)
        perm = rng.permutation(idx.size)[None]
        out = ols_cv_test(X[idx][None], y[idx][None], perm, n_splits=10)
        folds, pred, r2 = _sk_reference(X[idx], y[idx], perm[0], 10)
        np.testing.assert_allclose(out["test_pred"][0], pred, rtol=1e-7, atol=1e-7)
        assert out["test_r2"][0] == pytest.approx(r2, rel=1e-7)


def test_return_keys_unchanged():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(2, 30, 2))
    y = X[..., 0] + rng.normal(size=(2, 30))
    out = ols_cv_test(X, y, _perm(rng, 2, 30), n_splits=5)
    assert set(out) == {"fold_r2", "fold_n", "test_r2", "test_n", "test_y", "test_pred", "p"}
    assert out["fold_r2"].shape == (2, 5) and out["test_pred"].shape == (2, 10)
    assert out["test_n"] == 10 and out["p"] == 2
