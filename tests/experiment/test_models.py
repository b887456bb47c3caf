"""Every model alias fits what the audit gives it: a continuous outcome, two classes and three
classes (the liblinear lasso refused three classes and skipped four audit sections)."""

import warnings

import numpy as np
import pytest

from replikit.experiment.models import DEFAULT_MODELS, MODEL_ALIASES, QUICK_MODELS, make_model


def _data(kind: str):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 4))
    score = X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=240)
    if kind == "regression":
        return X, score
    if kind == "binary":
        return X, (score > 0).astype(int)
    return X, np.digitize(score, [-0.5, 0.8])  # three classes


CASES = [(alias, kind) for alias in sorted(MODEL_ALIASES)
         for kind in ("regression", "binary", "three classes")
         if not (alias == "lda" and kind == "regression")]  # lda is a classifier only


@pytest.mark.parametrize("alias, kind", CASES)
def test_every_alias_fits_and_predicts(alias, kind):
    task = "regression" if kind == "regression" else "classification"
    X, y = _data(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated parameters
        model = make_model(alias, task).fit(X, y)
    pred = model.predict(X)
    assert pred.shape == y.shape
    if task == "classification":
        assert set(np.unique(pred)) <= set(np.unique(y))
        if alias != "dummy":  # a real model learns the signal
            assert (pred == y).mean() > 0.6


def test_default_line_ups():
    assert DEFAULT_MODELS == ("lr", "lasso", "rf", "gb", "knn", "dummy")
    assert set(QUICK_MODELS) < set(DEFAULT_MODELS)


def test_knn_uses_at_most_the_training_rows():
    """The audit fits small studies: k = 15 neighbours on 13 training rows must still fit."""
    import pickle

    from sklearn.neighbors import KNeighborsClassifier

    X, y = _data("binary")
    small = make_model("knn", "classification").fit(X[:13], y[:13])
    assert small[-1].n_neighbors_ == 13
    big = make_model("knn", "classification").fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=15).fit(big[0].transform(X), y)
    np.testing.assert_array_equal(big.predict_proba(X), ref.predict_proba(big[0].transform(X)))
    assert pickle.loads(pickle.dumps(big)).predict(X[:3]).tolist() == big.predict(X[:3]).tolist()
