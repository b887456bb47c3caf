"""scores_from_predictions: per-fold scores against scikit-learn computed by hand on each fold,
sizes only where the predictions show them, the primary metric by the data entry's rule."""

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from replikit.data import Predictions, Scores
from replikit.errors import ParameterError
from replikit.experiment import primary_metric_of, scores_from_predictions


def _kfold_predictions(seed=0, n=60, k=4, repeats=2, models=("lr", "tree"), binary=True):
    """Out-of-fold predictions of a k-fold CV: each row tested once per (model, repeat)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2 if binary else 3, n)
    rows = []
    for r in range(repeats):
        fold = rng.permutation(np.arange(n) % k)
        for m in models:
            p1 = np.clip(0.35 * (y == 1) + rng.uniform(0, 0.65, n), 0, 1)
            pred = (p1 > 0.5).astype(int) if binary else rng.integers(0, 3, n)
            rows.append(pd.DataFrame({"study": "s", "model": m, "repeat": r, "fold": fold,
                                      "row": np.arange(n), "y_true": y, "y_pred": pred,
                                      "proba_0": 1 - p1, "proba_1": p1}))
    return pd.concat(rows, ignore_index=True)


def test_values_match_sklearn_on_each_fold():
    f = _kfold_predictions()
    s = scores_from_predictions(f, ["roc_auc", "accuracy", "balanced_accuracy", "log_loss"]).frame
    assert len(s) == 2 * 2 * 4 * 4
    for (m, r, k), g in f.groupby(["model", "repeat", "fold"]):
        got = s[(s.model == m) & (s.repeat == r) & (s.fold == k)].set_index("metric")["value"]
        proba = g[["proba_0", "proba_1"]].to_numpy()
        assert got["roc_auc"] == pytest.approx(skm.roc_auc_score(g.y_true, g.proba_1), rel=1e-12)
        assert got["accuracy"] == pytest.approx(skm.accuracy_score(g.y_true, g.y_pred), rel=1e-12)
        assert got["balanced_accuracy"] == pytest.approx(
            skm.balanced_accuracy_score(g.y_true, g.y_pred), rel=1e-12)
        assert got["log_loss"] == pytest.approx(
            skm.log_loss(g.y_true, proba, labels=[0, 1]), rel=1e-9)


def test_kfold_sizes_are_the_other_folds():
    f = _kfold_predictions()
    s = scores_from_predictions(f).frame
    counts = f.groupby(["model", "repeat", "fold"]).size()
    for (m, r, k), n_test in counts.items():
        rows = s[(s.model == m) & (s.repeat == r) & (s.fold == k)]
        assert (rows.n_test == n_test).all()
        assert (rows.n_train == 60 - n_test).all()


def test_sizes_missing_when_rows_repeat_across_folds():
    # repeated hold-out stored as folds of one repeat: a row is tested in several folds, so
    # the training sizes are unknown — missing, never guessed
    rng = np.random.default_rng(3)
    parts = []
    for k in range(3):
        rows = rng.choice(40, 12, replace=False)
        parts.append(pd.DataFrame({"study": "s", "model": ["a"] * 12 + ["b"] * 12, "repeat": 0,
                                   "fold": k, "row": np.tile(rows, 2),
                                   "y_true": rng.normal(size=24), "y_pred": rng.normal(size=24)}))
    f = pd.concat(parts, ignore_index=True)
    s = scores_from_predictions(f).frame
    assert s["n_train"].isna().all()
    assert (s["n_test"] == 12).all()
    # a single test set: no other fold to train on — unknown too
    one = f[f.fold == 0]
    assert scores_from_predictions(one).frame["n_train"].isna().all()


def test_regression_defaults_r2_and_mae():
    rng = np.random.default_rng(1)
    n = 30
    y = rng.normal(size=n)
    f = pd.DataFrame({"study": np.repeat(["a", "b"], n // 2), "model": "ols", "repeat": 0,
                      "fold": np.tile(np.arange(3), n // 3), "row": np.arange(n),
                      "y_true": y, "y_pred": y + rng.normal(scale=0.5, size=n)})
    assert primary_metric_of(f) == "r2"
    s = scores_from_predictions(f).frame
    assert list(pd.unique(s["metric"])) == ["r2", "mae"]
    for (st, k), g in f.groupby(["study", "fold"]):
        got = s[(s.study == st) & (s.fold == k)].set_index("metric")["value"]
        assert got["r2"] == pytest.approx(skm.r2_score(g.y_true, g.y_pred), rel=1e-12)
        assert got["mae"] == pytest.approx(skm.mean_absolute_error(g.y_true, g.y_pred), rel=1e-12)


def test_primary_metric_follows_the_data_entry_rule():
    f = _kfold_predictions()
    assert primary_metric_of(f) == "roc_auc"
    no_proba = f.drop(columns=["proba_0", "proba_1"])
    assert primary_metric_of(no_proba) == "balanced_accuracy"
    assert list(pd.unique(scores_from_predictions(no_proba).frame.metric)) == [
        "balanced_accuracy", "accuracy"]
    three = _kfold_predictions(binary=False).drop(columns=["proba_0", "proba_1"])
    assert primary_metric_of(three) == "balanced_accuracy"


def test_one_probability_column_and_string_labels():
    f = _kfold_predictions()
    one = f.drop(columns="proba_0")
    a = scores_from_predictions(one, "roc_auc").frame
    b = scores_from_predictions(f, "roc_auc").frame
    np.testing.assert_array_equal(a["value"], b["value"])
    # string classes, probabilities named by them: the positive class is the larger label
    g = f.assign(y_true=np.where(f.y_true == 1, "yes", "no"),
                 y_pred=np.where(f.y_pred == 1, "yes", "no"))
    g = g.rename(columns={"proba_0": "proba_no", "proba_1": "proba_yes"})
    c = scores_from_predictions(g, ["roc_auc", "accuracy"]).frame
    d = scores_from_predictions(f, ["roc_auc", "accuracy"]).frame
    np.testing.assert_array_equal(c["value"], d["value"])


def test_returns_scores_in_key_order_and_accepts_a_predictions_table():
    f = _kfold_predictions(seed=5)
    s = scores_from_predictions(Predictions(f.sample(frac=1, random_state=0)))
    assert isinstance(s, Scores)
    t = scores_from_predictions(f).frame
    pd.testing.assert_frame_equal(s.frame, t)
    keys = t[["model", "repeat", "fold"]].drop_duplicates()
    assert keys.equals(keys.sort_values(["model", "repeat", "fold"]))


def test_undefined_fold_left_out_with_a_warning():
    f = _kfold_predictions(n=40)
    # fold 0 of repeat 0 holds one class only: its AUC is undefined (for every model)
    hit = (f.repeat == 0) & (f.fold == 0)
    f.loc[hit, "y_true"] = 1
    with pytest.warns(UserWarning, match="roc_auc of 2 folds"):
        s = scores_from_predictions(f).frame
    auc = s[s.metric == "roc_auc"]
    assert len(auc) == 2 * 2 * 4 - 2
    assert len(s[s.metric == "accuracy"]) == 16


def test_bad_metrics_are_refused_by_name():
    f = _kfold_predictions()
    with pytest.raises(ParameterError, match="`metrics`"):
        scores_from_predictions(f, "mae")
    with pytest.raises(ParameterError, match="scorer"):
        scores_from_predictions(f, "f1")
    with pytest.raises(ParameterError, match="probabilit"):
        scores_from_predictions(f.drop(columns=["proba_0", "proba_1"]), "roc_auc")
    with pytest.raises(ParameterError, match="`task`"):
        scores_from_predictions(f, task="survival")
