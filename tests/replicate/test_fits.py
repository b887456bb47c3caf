"""Batched closed-form fits (``replicate._fits``) on rank-deficient designs, against scikit-learn.

A column constant within a study (the ``exam`` example's school-level
columns), tiny studies and ``simulate replication --n-per-study 200`` once crashed with ``LinAlgError:
Singular matrix``. Every fit must return what scikit-learn's ``LinearRegression`` returns: the
minimum-norm least-squares solution of the *centered* problem, intercept ``ybar - xbar'beta``.
The checks below compare predictions on training rows and on test rows off the training span
(where different least-squares solutions disagree). Rows are assigned by fold labels (``f``
for CV fold f, ``-1`` for the test part), as :class:`~replikit.replicate.HoldOutCV` gives them.
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from replikit.replicate._fits import ols_cv_test


def _labels(perm, n_folds, train_share=2 / 3):
    """Fold labels of rows taken in ``perm`` order: contiguous folds of the first
    ``round(n * train_share)`` positions (empty folds in tiny studies allowed), then the test
    part (-1). Works on (n,) and (S, n)."""
    perm = np.asarray(perm)
    if perm.ndim == 2:
        return np.stack([_labels(p, n_folds, train_share) for p in perm])
    n = perm.size
    n_train = int(round(n * train_share))
    bounds = np.linspace(0, n_train, n_folds + 1).round().astype(int)
    position = np.full(n, -1)
    for f in range(n_folds):
        position[bounds[f]:bounds[f + 1]] = f
    labels = np.empty(n, int)
    labels[perm] = position
    return labels


def _sk_reference(X, y, labels, n_folds, alpha=0.0):
    """Fold R2s, test predictions (test rows in ascending order) and test R2 of one study by
    scikit-learn, on the rows the labels assign."""
    train, test = np.flatnonzero(labels >= 0), np.flatnonzero(labels < 0)
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
    if alpha > 0:
        sc = StandardScaler().fit(Xtr)
        Xtr_s, Xte_s = sc.transform(Xtr), sc.transform(Xte)
    else:
        Xtr_s, Xte_s = Xtr, Xte
    model = (lambda: LinearRegression()) if alpha == 0 else (lambda: Ridge(alpha=alpha))
    test_pred = model().fit(Xtr_s, ytr).predict(Xte_s)
    folds = []
    for f in range(n_folds):
        te = labels[train] == f
        if te.sum() < 2:
            folds.append(np.nan)  # R2 undefined (sklearn warns and returns nan for one row)
            continue
        pred = model().fit(Xtr_s[~te], ytr[~te]).predict(Xtr_s[te])
        folds.append(r2_score(ytr[te], pred))
    return np.array(folds), test_pred, r2_score(yte, test_pred)


def _check(X, y, perm, n_folds=5, alpha=0.0):
    labels = _labels(perm, n_folds)
    out = ols_cv_test(X, y, labels, n_folds=n_folds, penalty=alpha)
    for s in range(X.shape[0]):
        folds, pred, r2 = _sk_reference(X[s], y[s], labels[s], n_folds, alpha=alpha)
        np.testing.assert_allclose(out["test_pred"][s], pred, rtol=1e-7, atol=1e-8)
        assert out["test_r2"][s] == pytest.approx(r2, rel=1e-7, abs=1e-9)
        np.testing.assert_allclose(out["fold_r2"][s], folds, rtol=1e-6, atol=1e-8)
        assert out["test_rows"][s].tolist() == np.flatnonzero(labels[s] < 0).tolist()
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
    perm = np.arange(n)[None]  # rows 0-29 train, 30-44 test
    X[0, :30, 2] = 0.7
    X[0, 30:, 2] = rng.normal(size=15) * 5
    y = X[..., 0] + rng.normal(size=(1, n))
    _check(X, y, perm, n_folds=3)


def test_dummy_present_in_one_fold_only():
    # a rare category: its dummy is 1 only on rows of fold 2, so the fold-2 fit sees a
    # constant column (downdated sums must not leave rounding noise with a huge slope)
    rng = np.random.default_rng(11)
    n = 60
    X = rng.normal(size=(1, n, 3)) * 100 + 1000
    X[0, :, 2] = 0.0
    X[0, 16:19, 2] = 1.0
    y = 0.01 * X[..., 0] + 3 * X[..., 2] + rng.normal(size=(1, n))
    _check(X, y, np.arange(n)[None], n_folds=5)


def test_duplicated_columns_min_norm_split():
    # x1 == x0 (and x2 == 3 x0) on the training rows, different on the test rows: only the
    # minimum-norm solution of the centered problem reproduces scikit-learn's predictions
    rng = np.random.default_rng(2)
    n = 60
    x0 = rng.normal(size=n)
    X = np.column_stack([x0, x0, 3 * x0, rng.normal(size=n)])[None]
    X[0, 40:, 1] += rng.normal(size=20)
    X[0, 40:, 2] -= rng.normal(size=20)
    y = 2 * x0[None] + rng.normal(size=(1, n))
    perm = np.arange(n)[None]
    out = _check(X, y, perm, n_folds=4)
    # a basic least-squares solution (x1, x2 dropped) predicts the test rows differently
    basic = LinearRegression().fit(X[0, :40, [0, 3]].T, y[0, :40]).predict(X[0, 40:, [0, 3]].T)
    assert np.max(np.abs(out["test_pred"][0] - basic)) > 0.1


def test_more_predictors_than_rows():
    rng = np.random.default_rng(3)
    S, n, p = 2, 24, 30   # 16 training rows, 30 predictors
    X = rng.normal(size=(S, n, p)) + 5.0   # offset: centering matters
    y = X[..., :3].sum(-1) + rng.normal(size=(S, n))
    _check(X, y, _perm(rng, S, n), n_folds=4)


def test_many_outcomes_share_the_design():
    rng = np.random.default_rng(4)
    S, n = 2, 50
    X = rng.normal(size=(S, n, 3))
    X[..., 2] = X[..., 1]
    Y = np.stack([X[..., 0] + rng.normal(size=(S, n)) * s for s in (0.5, 1, 2)], axis=-1)
    labels = _labels(_perm(rng, S, n), 5)
    out = ols_cv_test(X, Y, labels)
    for j in range(3):
        single = ols_cv_test(X, Y[..., j], labels)
        np.testing.assert_allclose(out["test_pred"][..., j], single["test_pred"], rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(out["fold_r2"][..., j], single["fold_r2"], rtol=1e-10)


@pytest.mark.parametrize("alpha", [0.5, 10.0])
def test_ridge_on_standardized_rank_deficient_inputs(alpha):
    rng = np.random.default_rng(5)
    S, n = 2, 48
    X = rng.normal(size=(S, n, 5))
    X[..., 3] = 2.0          # constant: StandardScaler leaves it at 0
    X[..., 4] = X[..., 0]    # duplicate
    y = X[..., 0] + 0.3 * X[..., 1] + rng.normal(size=(S, n))
    _check(X, y, _perm(rng, S, n), n_folds=4, alpha=alpha)


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
        labels = _labels(rng.permutation(size)[None], 10)
        with np.errstate(all="raise"):  # no stray warnings either
            out = ols_cv_test(Xs, ys, labels, n_folds=10)
        folds, pred, r2 = _sk_reference(Xs[0], ys[0], labels[0], 10)
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
        labels = _labels(rng.permutation(idx.size)[None], 10)
        out = ols_cv_test(X[idx][None], y[idx][None], labels)
        folds, pred, r2 = _sk_reference(X[idx], y[idx], labels[0], 10)
        np.testing.assert_allclose(out["test_pred"][0], pred, rtol=1e-7, atol=1e-7)
        assert out["test_r2"][0] == pytest.approx(r2, rel=1e-7)


def test_return_keys_unchanged():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(2, 30, 2))
    y = X[..., 0] + rng.normal(size=(2, 30))
    out = ols_cv_test(X, y, _labels(_perm(rng, 2, 30), 5))
    assert set(out) == {"fold_r2", "fold_n", "test_r2", "test_n", "test_rows", "test_y",
                        "test_pred", "p"}
    assert out["fold_r2"].shape == (2, 5) and out["test_pred"].shape == (2, 10)
    assert out["test_n"] == 10 and out["p"] == 2


def test_studies_must_share_the_layout():
    rng = np.random.default_rng(9)
    labels = np.array([[0, 0, 1, 1, -1, -1], [0, 1, 1, 1, -1, -1]])
    with pytest.raises(ValueError, match="same number of rows"):
        ols_cv_test(rng.normal(size=(2, 6, 1)), rng.normal(size=(2, 6)), labels)


@pytest.mark.parametrize("alpha", [0.0, 2.0])
def test_any_assignment_of_rows(alpha):
    # labels from HoldOutCV's masks in any row order: the fits follow the labels, not positions
    from replikit.replicate import HoldOutCV
    from replikit.replicate.design import fold_labels_from_masks

    rng = np.random.default_rng(10)
    S, n = 3, 90
    X = rng.normal(size=(S, n, 3))
    y = X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=(S, n))
    labels = np.stack([fold_labels_from_masks(HoldOutCV(4).masks(n, random_state=s)[1])
                       for s in range(S)])
    out = ols_cv_test(X, y, labels, penalty=alpha)
    for s in range(S):
        folds, pred, r2 = _sk_reference(X[s], y[s], labels[s], 4, alpha=alpha)
        np.testing.assert_allclose(out["test_pred"][s], pred, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(out["fold_r2"][s], folds, rtol=1e-9)
    assert out["fold_n"].tolist() == [15, 15, 15, 15] and out["test_n"] == 30
