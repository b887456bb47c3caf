"""replikit.multistudy on odd inputs: clear errors naming the parameter or column, flagged
results."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score

from replikit.errors import DataError, ParameterError, ReplikitWarning
from replikit.experiment.cross_study import CrossStudy
from replikit.multistudy import (
    PermutationMethod,
    assess,
    cross_study_matrix,
    from_arrays,
    get_metric,
    leave_one_study_out,
    load_predictions,
    multistudy_stacking,
    parse_utility,
    study_utilities,
)


def _cls(seed=0, n=60, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K * n, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=K * n) > 0).astype(int)
    s = np.repeat([f"s{k}" for k in range(K)], n)
    return X, y, s


# -- utilities --------------------------------------------------------------------------------

def test_accuracy_of_continuous_values_refused():
    rng = np.random.default_rng(0)
    y = rng.normal(size=60)
    d = from_arrays(y, y + 0.1, np.repeat(["a", "b"], 30))
    with pytest.raises(DataError, match="y_pred.*continuous"):
        study_utilities(d, "accuracy")
    # probabilities given as predictions of 0/1 labels
    lab = (y > 0).astype(int)
    with pytest.raises(DataError, match="y_pred"):
        study_utilities(from_arrays(lab, 1 / (1 + np.exp(-y)), np.repeat(["a", "b"], 30)))


def test_assess_picks_squared_for_continuous_outcomes_and_says_so():
    rng = np.random.default_rng(1)
    y = rng.normal(size=90)
    d = from_arrays(y, y + rng.normal(size=90), np.repeat(["a", "b", "c"], 30))
    a = assess(d, n_resamples=20, permutation=PermutationMethod(19), random_state=0)
    assert a.utilities.utility_name == "squared" and "squared" in a.notes[0]
    ref = study_utilities(d, "squared")
    np.testing.assert_allclose(a.utilities.utility, ref.utility)
    lab = (y > 0).astype(int)
    a = assess(from_arrays(lab, lab, np.repeat(["a", "b", "c"], 30)), n_resamples=20,
               permutation=PermutationMethod(19), random_state=0)
    assert a.utilities.utility_name == "accuracy" and not a.notes
    with pytest.raises(DataError, match="`utility`"):
        assess(d, "accuracy", n_resamples=20)


def test_squared_utility_overflow_refused():
    y = np.array([0.0, 1.0, 0.0, 1.0])
    with pytest.raises(DataError, match="overflows"):
        study_utilities(from_arrays(y, np.array([0, 1e308, 0, 1]), ["a", "a", "b", "b"]),
                        "squared")


def test_cost_utility_names_the_parameter_and_the_positive_class():
    with pytest.raises(ParameterError, match="`metric`"):
        parse_utility("cost:5,1", name="metric")
    y = np.array(["benign", "malignant"] * 20)
    a = assess(from_arrays(y, y, np.repeat(["a", "b"], 20)), "cost:-5,-1", n_resamples=20,
               permutation=PermutationMethod(19), random_state=0)
    assert any("'malignant'" in n and "positive" in n for n in a.notes)
    three = np.array([0, 1, 2] * 10)
    with pytest.raises(DataError, match="`utility`.*binary"):
        assess(from_arrays(three, three, np.repeat(["a", "b"], 15)), "cost:-1,-1")


def test_small_studies_flagged_and_min_units():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 61)
    s = np.array(["a"] * 30 + ["b"] * 30 + ["z"])
    d = from_arrays(y, y, s)
    a = assess(d, n_resamples=20, permutation=PermutationMethod(19), random_state=0)
    assert any("z (1)" in n for n in a.notes)
    b = assess(d, n_resamples=20, permutation=PermutationMethod(19), random_state=0,
               min_units=5)
    assert b.utilities.studies == ("a", "b")
    assert any("left out 1 study" in n and "z (1)" in n for n in b.notes)
    with pytest.raises(DataError, match="min_units"):
        assess(d, min_units=31)
    with pytest.raises(ParameterError, match="studystrap"):
        assess(d, bag_size=2)


def test_one_study_names_the_parameter():
    y = np.array([0, 1] * 10)
    with pytest.raises(DataError, match="`data`.*1 study"):
        assess(from_arrays(y, y, ["5"] * 20))


# -- reading predictions --------------------------------------------------------------------

def test_load_predictions_keeps_labels_as_written(tmp_path):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 100)
    df = pd.DataFrame({"site": ["5", "05", "5.0", "a", "a "] * 20, "y_true": y, "y_pred": y})
    df.to_csv(tmp_path / "p.csv", index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = load_predictions(tmp_path / "p.csv", study="site")
    assert sorted(p.frame["study"].unique()) == sorted(["5", "05", "5.0", "a", "a "])
    msgs = [str(w.message) for w in caught if issubclass(w.category, ReplikitWarning)]
    assert any("'05'" in m and "'5.0'" in m for m in msgs)
    assert any("'a '" in m for m in msgs)
    df.assign(site=np.repeat([1.0000001, 1.0000002, 2.0, 3.5, 4.0], 20)).to_parquet(
        tmp_path / "p.parquet")
    p = load_predictions(tmp_path / "p.parquet", study="site")
    assert sorted(p.frame["study"].unique()) == ["1.0000001", "1.0000002", "2", "3.5", "4"]
    with pytest.raises(DataError, match="holds 2 distinct studies"):
        load_predictions(tmp_path / "p.csv", study="y_true", min_studies=3)


def test_load_predictions_refuses_infinite_values(tmp_path):
    df = pd.DataFrame({"site": ["a", "b"] * 5, "y_true": np.arange(10.0), "y_pred": 1.0})
    df.loc[3, "y_pred"] = np.inf
    df.to_csv(tmp_path / "p.csv", index=False)
    with pytest.raises(DataError, match="`y_pred`.*infinite.*rows \\[3\\]"):
        load_predictions(tmp_path / "p.csv", study="site")


# -- training techniques --------------------------------------------------------------------

def test_metric_checked_against_the_task():
    with pytest.raises(ParameterError, match="`metric`.*continuous"):
        get_metric("accuracy", task="regression")
    with pytest.raises(ParameterError, match="binary"):
        get_metric("roc_auc", task="classification", n_classes=3)
    with pytest.raises(ParameterError, match="`metric`"):
        get_metric("nope")
    assert get_metric("r2", task="regression").name == "r2"


def test_stratified_folds_keep_every_class_in_training():
    y = np.array([1, 1, 1] + [0] * 27 + [1, 0] * 15)     # 3 positives in study a, 5 folds
    s = np.repeat(["a", "b"], 30)
    scheme = CrossStudy(5, stratify=True, random_state=0)
    assert scheme.plan(y, s)[0].stratified
    within = [sp for sp in scheme.iter_splits(np.zeros((60, 1)), y, s) if sp.fold > 0]
    assert len(within) == 10
    for sp in within:
        assert set(y[sp.train]) == {0, 1}


def test_study_with_one_class_leaves_its_row_empty():
    X, y, s = _cls()
    y[s == "s1"] = 1
    r = cross_study_matrix(LogisticRegression(), X, y, s, n_folds=3)
    M = r.matrix
    assert M.loc["s1"].isna().all()
    assert M.drop(index="s1").notna().all().all()
    fit = LogisticRegression().fit(X[s == "s0"], y[s == "s0"])
    assert M.loc["s0", "s1"] == pytest.approx(accuracy_score(y[s == "s1"],
                                                             fit.predict(X[s == "s1"])))
    assert any("s1" in n and "single class" in n for n in r.notes)
    st = multistudy_stacking(LogisticRegression(), X, y, s)
    assert list(st.weights.index) == ["s0", "s2"]
    assert set(st.evaluation["study"]) == {"s0", "s1", "s2"}
    assert any("s1" in n for n in st.notes)


def test_tiny_study_left_out_equals_analysis_without_it():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(91, 2))
    y = X[:, 0] + 0.3 * rng.normal(size=91)
    s = np.array(["a"] * 45 + ["b"] * 45 + ["tiny"])
    r = cross_study_matrix(LinearRegression(), X, y, s, metric="r2", n_folds=3, random_state=1)
    ref = cross_study_matrix(LinearRegression(), X[:90], y[:90], s[:90], metric="r2", n_folds=3,
                             random_state=1)
    pd.testing.assert_frame_equal(r.matrix, ref.matrix)
    assert any("tiny (1)" in n for n in r.notes)
    lo = leave_one_study_out(LinearRegression(), X, y, s, metric="r2")
    assert list(lo.scores["study"]) == ["a", "b"]


def test_small_study_cross_validated_with_fewer_folds_and_said():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(63, 2))
    y = X[:, 0] + 0.3 * rng.normal(size=63)
    s = np.array(["a"] * 30 + ["b"] * 30 + ["c"] * 3)
    r = cross_study_matrix(LinearRegression(), X, y, s, metric="mse", n_folds=5)
    assert np.isfinite(r.matrix.loc["c", "c"])
    assert any("c (3)" in n and "leave-one-out" in n for n in r.notes)


def test_loso_without_a_trainable_study():
    X = np.random.default_rng(6).normal(size=(40, 2))
    y = np.array([0] * 20 + [1] * 20)
    s = np.repeat(["a", "b"], 20)
    with pytest.raises(DataError, match="single class"):
        leave_one_study_out(LogisticRegression(), X, y, s)
