"""Pairing two models' scores split by split: replikit.compare._pairing.paired_scores."""


import numpy as np
import pandas as pd
import pytest

from replikit.compare._pairing import Paired, paired_scores
from replikit.data import Scores
from replikit.errors import DataError, ParameterError, ParameterTypeError


def _scores(r=3, k=4, models=("rf", "lr"), metrics=("accuracy",), studies=("s",), seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for study in studies:
        for model in models:
            for metric in metrics:
                for rep in range(r):
                    for fold in range(k):
                        rows.append({"study": study, "model": model, "repeat": rep,
                                     "fold": fold, "metric": metric,
                                     "value": float(rng.uniform(0.6, 0.9)),
                                     "n_train": 90 + fold % 2, "n_test": 30 - fold % 2})
    return pd.DataFrame(rows)


def test_paired_lines_up_splits_whatever_the_row_order():
    frame = _scores()
    shuffled = frame.sample(frac=1.0, random_state=1)
    p = paired_scores(shuffled, "rf", "lr")
    assert p.shape == (3, 4) and p.n == 12
    for name, mat in (("rf", p.a_scores), ("lr", p.b_scores)):
        sub = frame[frame.model == name].sort_values(["repeat", "fold"])
        np.testing.assert_array_equal(mat, sub["value"].to_numpy().reshape(3, 4))
    np.testing.assert_array_equal(p.d, p.a_scores - p.b_scores)
    np.testing.assert_array_equal(p.n_train[0], [90, 91, 90, 91])
    assert (p.a, p.b, p.metric, p.study) == ("rf", "lr", "accuracy", "s")
    assert p.ratio == pytest.approx(np.mean([30, 29, 30, 29]) / np.mean([90, 91, 90, 91]))


def test_accepts_scores_runresult_and_paired():
    frame = _scores()
    p1 = paired_scores(frame, "rf", "lr")
    p2 = paired_scores(Scores(frame), "rf", "lr")
    np.testing.assert_array_equal(p1.d, p2.d)
    assert paired_scores(p1) is p1

    class Run:  # anything with a .scores Scores, like resampling.RunResult
        scores = Scores(frame)

    np.testing.assert_array_equal(paired_scores(Run(), "rf", "lr").d, p1.d)
    with pytest.raises(ParameterTypeError, match="Scores table"):
        paired_scores([1, 2, 3], "rf", "lr")


def test_with_the_runner():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    from replikit.experiment import run

    X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    res = run({"lr": LogisticRegression(), "tree": DecisionTreeClassifier(random_state=0)},
              X, y, scheme="3x2", metrics=["accuracy"], random_state=0)
    p = paired_scores(res, "lr", "tree")
    assert p.shape == (2, 3)
    assert p.ratio == pytest.approx(0.5)  # 3-fold: 40 test / 80 train
    f = res.scores.frame
    np.testing.assert_array_equal(
        p.a_scores.ravel(), f[f.model == "lr"].sort_values(["repeat", "fold"])["value"])


def test_models_metric_study_defaults_and_errors():
    frame = _scores(models=("rf", "lr", "svm"), metrics=("accuracy", "auc"),
                    studies=("s1", "s2"))
    with pytest.raises(ParameterError, match=r"`study`.*'s1', 's2'"):
        paired_scores(frame, "rf", "lr", metric="auc")
    with pytest.raises(ParameterError, match=r"`metric`.*'accuracy', 'auc'"):
        paired_scores(frame, "rf", "lr", study="s1")
    with pytest.raises(ParameterError, match="exactly two models.*'svm'"):
        paired_scores(frame, metric="auc", study="s1")
    with pytest.raises(ParameterError, match="both `a` and `b`"):
        paired_scores(frame, "rf", metric="auc", study="s1")
    with pytest.raises(DataError, match=r"model 'xgb' not found.*\['rf', 'lr', 'svm'\]"):
        paired_scores(frame, "rf", "xgb", metric="auc", study="s1")
    with pytest.raises(DataError, match="metric 'f1' not found"):
        paired_scores(frame, "rf", "lr", metric="f1", study="s1")
    with pytest.raises(ParameterError, match="two different models"):
        paired_scores(frame, "rf", "rf", metric="auc", study="s1")
    two = frame[frame.model != "svm"]
    p = paired_scores(two, metric="auc", study="s2")
    assert (p.a, p.b, p.study) == ("rf", "lr", "s2")


def test_missing_splits_are_named():
    frame = _scores()
    drop = ((frame.model == "lr") & (frame.repeat == 1) & (frame.fold == 2)) | \
           ((frame.model == "rf") & (frame.repeat == 2) & (frame.fold == 0))
    with pytest.raises(DataError) as err:
        paired_scores(frame[~drop], "rf", "lr")
    msg = str(err.value)
    assert "not evaluated on the same splits" in msg
    assert "'lr' lacks 1 split(s) (repeat, fold) (1, 2)" in msg
    assert "'rf' lacks 1 split(s) (repeat, fold) (2, 0)" in msg


def test_different_split_sizes_and_ragged_grid_and_duplicates():
    frame = _scores()
    bad = frame.copy()
    bad.loc[(bad.model == "lr") & (bad.repeat == 0) & (bad.fold == 1), "n_test"] = 5
    with pytest.raises(DataError, match=r"`n_test` differs at \(repeat, fold\) \(0, 1\)"):
        paired_scores(bad, "rf", "lr")
    ragged = frame[~((frame.repeat == 2) & (frame.fold == 3))]
    with pytest.raises(DataError, match="repeat 0: 4.*repeat 2: 3"):
        paired_scores(ragged, "rf", "lr")
    two_datasets = pd.concat([frame.assign(dataset="x"), frame.assign(dataset="y")])
    with pytest.raises(DataError, match=r"several scores for the same.*\['dataset'\]"):
        paired_scores(two_datasets, "rf", "lr")


def test_sizes_optional_and_fold_labels_need_not_match_across_repeats():
    frame = _scores(r=2, k=3).drop(columns=["n_train", "n_test"])
    frame.loc[frame.repeat == 1, "fold"] += 10  # folds 0-2 in repeat 0, 10-12 in repeat 1
    p = paired_scores(frame, "rf", "lr")
    assert p.shape == (2, 3)
    assert np.isnan(p.n_train).all() and np.isnan(p.ratio)


def test_paired_from_arrays_validates():
    p = Paired([0.8, 0.7, 0.9], [0.7, 0.7, 0.8], n_train=20, n_test=10)
    assert p.shape == (1, 3) and p.ratio == 0.5
    np.testing.assert_allclose(p.swap().d, -p.d)
    assert p.swap().a == "b"
    with pytest.raises(DataError, match="shape"):
        Paired([[0.8, 0.7]], [[0.8, 0.7, 0.6]])
    with pytest.raises(DataError, match="finite"):
        Paired([[0.8, np.nan]], [[0.8, 0.7]])
    with pytest.raises(DataError, match="n_train"):
        Paired([[0.8]], [[0.7]], n_train=0, n_test=1)
    with pytest.raises(ValueError):  # read-only: the design cannot be changed behind a result
        p.a_scores[0, 0] = 1.0
