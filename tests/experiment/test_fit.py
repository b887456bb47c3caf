"""The one fit path (experiment/fit.py): validation, the seeding rule, clone, set the random
state, fit, predict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from replikit.errors import DataError
from replikit.experiment.fit import check_Xy, fit_predict, seed_estimator


def test_check_Xy_shapes_and_messages():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    X, y = check_Xy(frame, pd.Series([1, 2, 3]))
    assert X is frame and isinstance(y, np.ndarray)
    with pytest.raises(DataError, match="`X` must be two-dimensional"):
        check_Xy(np.arange(3), np.arange(3))
    with pytest.raises(DataError, match="`y` must be 1-D with one value per row of `X` \\(3\\)"):
        check_Xy(np.zeros((3, 1)), np.arange(2))
    with pytest.raises(DataError, match="`y` has 1 missing value"):
        check_Xy(np.zeros((3, 1)), [1.0, np.nan, 2.0])
    with pytest.raises(DataError, match="at least 4 rows"):
        check_Xy(np.zeros((3, 1)), np.arange(3), min_rows=4)


def test_seeding_rule_only_fills_none():
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(random_state=None))
    seeded = seed_estimator(pipe, 11)
    assert seeded.get_params()["randomforestregressor__random_state"] == 11
    fixed = seed_estimator(RandomForestRegressor(random_state=3), 11)
    assert fixed.random_state == 3  # a random state the user fixed is kept
    state = np.random.RandomState(0)
    assert seed_estimator(RandomForestRegressor(random_state=state), 11).random_state is state


def test_fit_predict_clones_seeds_and_equals_a_manual_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=5)
    out = fit_predict(rf, X[:60], y[:60], X[60:], random_state=5, proba=True)
    assert not hasattr(rf, "estimators_")  # the caller's object is never fitted
    manual = RandomForestClassifier(n_estimators=5, random_state=5).fit(X[:60], y[:60])
    np.testing.assert_array_equal(out.y_pred, manual.predict(X[60:]))
    np.testing.assert_array_equal(out.proba, manual.predict_proba(X[60:]))
    again = fit_predict(rf, X[:60], y[:60], X[60:], random_state=5, proba=True)
    np.testing.assert_array_equal(out.proba, again.proba)


def test_fit_predict_aligns_probabilities_to_all_classes():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array(["b", "b", "c", "c", "b", "c"])
    out = fit_predict(LogisticRegression(), X, y, X[:2], random_state=0, proba=True,
                      classes=np.array(["a", "b", "c"]))
    assert out.classes.tolist() == ["a", "b", "c"]
    assert np.all(out.proba[:, 0] == 0) and np.allclose(out.proba.sum(axis=1), 1)
    ref = LogisticRegression().fit(X, y).predict_proba(X[:2])
    np.testing.assert_allclose(out.proba[:, 1:], ref)
    with pytest.raises(DataError, match="`classes`"):
        fit_predict(LogisticRegression(), X, y, X[:2], random_state=0, proba=True, classes=["b"])


def test_fit_predict_without_probabilities():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 0, 1, 0, 1])
    out = fit_predict(SVC(), X, y, X, random_state=0, proba=True)  # SVC(probability=False)
    assert out.proba is None and out.classes is None and out.y_pred.shape == (6,)
    assert fit_predict(SVC(), X, y, X, random_state=None).proba is None


@pytest.mark.parametrize("alias", ["lr", "ridge", "rf", "gb", "knn", "tree", "dummy"])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_test_rows_predicted_by_blocks_equal_one_predict(monkeypatch, alias, task):
    # a large test set is predicted a block at a time (fit.PREDICT_BLOCK_ROWS), out of the
    # data without a whole copy (TestRows): every number equals one predict of all the rows,
    # to the bit for trees, k-NN and the baseline; a linear model's X @ beta to a few ulp
    # (BLAS's matrix-vector kernels unroll rows, so a row's sum order can follow the block)
    import replikit.experiment.fit as fit
    from replikit.experiment.fit import TestRows
    from replikit.experiment.models import make_model

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    y = (X["a"] + rng.normal(size=300) > 0).map({True: "yes", False: "no"}).to_numpy() \
        if task == "classification" else X["a"].to_numpy() + rng.normal(size=300)
    model = make_model(alias, task)
    train, test = np.arange(0, 300, 2), np.arange(1, 300, 2)[::-1]
    whole = fit_predict(model, X.iloc[train], y[train], X.iloc[test], random_state=5,
                        proba=True)
    monkeypatch.setattr(fit, "PREDICT_BLOCK_ROWS", 7)
    for X_test in (TestRows(X, test), X.iloc[test], X.to_numpy()[test]):
        data = X if not isinstance(X_test, np.ndarray) else X.to_numpy()
        blocks = fit_predict(model, data.iloc[train] if hasattr(data, "iloc") else data[train],
                             y[train], X_test, random_state=5, proba=True)
        if alias in ("lr", "ridge"):
            same = lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)  # noqa: E731
        else:
            same = np.testing.assert_array_equal
        (same if task == "regression" else np.testing.assert_array_equal)(
            blocks.y_pred, whole.y_pred)
        if whole.proba is not None:
            same(blocks.proba, whole.proba)
