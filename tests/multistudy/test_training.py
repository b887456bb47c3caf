"""Cross-study validation, leave-one-study-out and multi-study stacking (Parmigiani 2023, secs. 7.4, 7.6)."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import lsq_linear
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, r2_score
from sklearn.tree import DecisionTreeRegressor

from replikit.errors import DataError, ParameterError
from replikit.multistudy import (
    cross_study_matrix,
    leave_one_study_out,
    multistudy_stacking,
    study_utilities,
)
from replikit.multistudy.training import _nnls


def _reg(seed=0, K=4, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K * n, 3))
    s = np.repeat([f"s{k}" for k in range(K)], n)
    beta = 1.0 + rng.normal(scale=0.5, size=(K, 3))
    y = np.einsum("ij,ij->i", X, beta[np.repeat(np.arange(K), n)]) + rng.normal(size=K * n)
    return X, y, s


def test_cross_study_matrix_off_diagonal_equals_hand_loop():
    X, y, s = _reg()
    r = cross_study_matrix(LinearRegression(), X, y, s, metric="r2", n_folds=4)
    for a in np.unique(s):
        fit = LinearRegression().fit(X[s == a], y[s == a])
        for b in np.unique(s):
            if a != b:
                assert r.matrix.loc[a, b] == pytest.approx(r2_score(y[s == b],
                                                                    fit.predict(X[s == b])))
    assert np.all(np.isfinite(np.diag(r.matrix.to_numpy())))
    summ = r.summary()
    assert np.allclose(summ["gap"], summ["within"] - summ["external_mean"])
    long = r.to_frame()
    assert len(long) == 16 and set(long["kind"]) == {"within", "cross"}


def test_cross_study_matrix_independent_of_n_jobs_and_seeded():
    X, y, s = _reg(K=3)
    a = cross_study_matrix(DecisionTreeRegressor(max_features=2), X, y, s, metric="mse",
                           random_state=5)
    b = cross_study_matrix(DecisionTreeRegressor(max_features=2), X, y, s, metric="mse",
                           random_state=5, n_jobs=2)
    pd.testing.assert_frame_equal(a.matrix, b.matrix)


def test_cross_study_classification_accuracy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=150) > 0).astype(int)
    s = np.repeat(["a", "b", "c"], 50)
    r = cross_study_matrix(LogisticRegression(), X, y, s, metric="accuracy")
    fit = LogisticRegression().fit(X[s == "a"], y[s == "a"])
    assert r.matrix.loc["a", "c"] == pytest.approx(accuracy_score(y[s == "c"],
                                                                  fit.predict(X[s == "c"])))
    auc = cross_study_matrix(LogisticRegression(), X, y, s, metric="roc_auc")
    assert np.all(auc.matrix.to_numpy() > 0.8)
    cost = cross_study_matrix(LogisticRegression(), X, y, s, metric="cost:-2,-1")
    assert np.all(cost.matrix.to_numpy() <= 0)


def test_leave_one_study_out_matches_hand_loop_and_feeds_utilities():
    X, y, s = _reg()
    r = leave_one_study_out(LinearRegression(), X, y, s, metric="r2")
    for lab in np.unique(s):
        fit = LinearRegression().fit(X[s != lab], y[s != lab])
        v = r.scores.set_index("study").loc[lab, "value"]
        assert v == pytest.approx(r2_score(y[s == lab], fit.predict(X[s == lab])))
    su = study_utilities(r.predictions, "squared")
    assert len(su.studies) == 4


def test_nnls_with_intercept_matches_bounded_least_squares():
    rng = np.random.default_rng(2)
    P = rng.normal(size=(80, 4))
    y = 2 + P @ np.array([0.5, -1.0, 0.0, 1.5]) + rng.normal(size=80)
    w, a = _nnls(P, y, True)
    ref = lsq_linear(np.column_stack([np.ones(80), P]), y,
                     bounds=([-np.inf, 0, 0, 0, 0], [np.inf] * 5), tol=1e-12)
    assert a == pytest.approx(ref.x[0], abs=1e-6)
    assert w == pytest.approx(ref.x[1:], abs=1e-6)
    w0, a0 = _nnls(P, y, False)
    ref0 = lsq_linear(P, y, bounds=(0, np.inf), tol=1e-12)
    assert a0 == 0 and w0 == pytest.approx(ref0.x, abs=1e-6)


def test_stacking_weights_nonnegative_and_evaluated():
    X, y, s = _reg(K=4, n=50)
    r = multistudy_stacking(LinearRegression(), X, y, s, metric="r2")
    assert (r.weights.to_numpy() >= 0).all()
    assert r.weights["cross_study"].sum() == pytest.approx(1.0)
    assert r.weights["average"].tolist() == [0.25] * 4
    ev = r.evaluation
    assert set(ev["method"]) == {"stack", "stack_intercept", "cross_study", "average", "merged"}
    assert len(ev) == 5 * 4
    assert r.summary()["mean"].is_monotonic_decreasing


def test_stacking_puts_weight_on_the_learner_that_transfers():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    s = np.repeat(["a", "b", "c"], 100)
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    y[s == "c"] = -X[s == "c", 0] * 0.2 + rng.normal(size=100)  # an outlying study
    r = multistudy_stacking(LinearRegression(), X, y, s, evaluate=False)
    w = r.weights["stack"]
    assert w["a"] + w["b"] > 2 * w["c"]
    cs = r.weights["cross_study"]
    assert cs["c"] < min(cs["a"], cs["b"])
    assert r.evaluation is None
    with pytest.raises(ParameterError, match="evaluate"):
        r.summary()


def test_stacking_binary_classification():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(240, 2))
    y = (X[:, 0] > 0).astype(int)
    s = np.repeat(["a", "b", "c"], 80)
    r = multistudy_stacking(LogisticRegression(), X, y, s, metric="accuracy")
    assert (r.weights.to_numpy() >= 0).all()
    assert r.summary()["mean"].iloc[0] > 0.9
    with pytest.raises(DataError, match="binary"):
        multistudy_stacking(LogisticRegression(), X, np.arange(240) % 3, s)


def test_training_input_errors():
    X, y, s = _reg()
    with pytest.raises(DataError, match="at least 2"):
        cross_study_matrix(LinearRegression(), X, y, np.full(len(y), "a"))
    with pytest.raises(ParameterError, match="metric"):
        cross_study_matrix(LinearRegression(), X, y, s, metric="bogus")
    with pytest.raises(DataError, match="rows"):
        leave_one_study_out(LinearRegression(), X[:10], y, s)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_matrix_run_a_few_training_studies_at_a_time_is_the_same_matrix(monkeypatch, task):
    """Large data: the training studies run in batches (each run's predictions of every other
    study held at once); the splits and random states are those of one run, so the matrix is
    the same to the bit."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    import replikit.multistudy.training as training

    rng = np.random.default_rng(4)
    n = 480
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    signal = X["a"] + rng.normal(size=n)
    y = (signal > 0).astype(int) if task == "classification" else signal
    study = np.repeat([f"s{i}" for i in range(8)], n // 8)
    est = (RandomForestClassifier if task == "classification" else RandomForestRegressor)(
        n_estimators=10)
    one = cross_study_matrix(est, X, y, study, random_state=3)
    calls = []
    real = training._run
    monkeypatch.setattr(training, "_run", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(training, "BATCH_PREDICTIONS", 3 * n)  # 3 studies per run
    batched = cross_study_matrix(est, X, y, study, random_state=3)
    assert len(calls) == 3
    assert batched.matrix.equals(one.matrix) and batched.notes == one.notes
