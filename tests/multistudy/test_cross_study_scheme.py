"""The schemes across studies (replikit.experiment.cross_study) and their runs through
experiment.run: CrossStudy (Bernau et al. 2014; Parmigiani 2023, sec. 7.4) and StudyHoldOut (the half
split of the fixed rule of Parmigiani 2023)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor

from replikit.errors import DataError, ParameterError
from replikit.experiment import run
from replikit.experiment.cross_study import CrossStudy, StudyHoldOut


def _splits(scheme, n, y=None, groups=None, seed=0):
    return list(scheme.iter_splits(np.zeros((n, 1)), y, groups, random_state=seed))


def test_cross_study_splits_by_training_study():
    s = np.array(["b"] * 7 + ["a"] * 6 + ["c"] * 3)     # unsorted; c smaller than the folds
    splits = _splits(CrossStudy(4), len(s), groups=s)
    labels = np.unique(s)
    assert CrossStudy(4).get_n_splits(groups=s) == len(splits) == 3 + 4 + 4 + 3
    for r, lab in enumerate(labels):
        own = np.flatnonzero(s == lab)
        mine = [sp for sp in splits if sp.repeat == r]
        first = mine[0]
        assert first.fold == 0
        np.testing.assert_array_equal(first.train, own)
        np.testing.assert_array_equal(first.test, np.flatnonzero(s != lab))
        within = mine[1:]
        assert [sp.fold for sp in within] == list(range(1, min(4, own.size) + 1))
        # the within-study folds partition the study, train and test disjoint
        np.testing.assert_array_equal(np.sort(np.concatenate([sp.test for sp in within])), own)
        for sp in within:
            assert np.intersect1d(sp.train, sp.test).size == 0
            assert np.union1d(sp.train, sp.test).tolist() == own.tolist()


def test_cross_study_seeded_and_each_study_its_own_folds():
    s = np.repeat(["a", "b", "c"], 10)
    a = _splits(CrossStudy(3), 30, groups=s, seed=5)
    b = _splits(CrossStudy(3), 30, groups=s, seed=5)
    c = _splits(CrossStudy(3), 30, groups=s, seed=6)
    assert all(np.array_equal(x.test, z.test) for x, z in zip(a, b, strict=True))
    assert any(not np.array_equal(x.test, z.test) for x, z in zip(a, c, strict=True))
    # a study no classifier can train on changes nothing in the other studies' folds
    y = np.tile([0, 1], 15)
    y[s == "a"] = 1
    d = _splits(CrossStudy(3, stratify=True), 30, y, s, seed=5)
    e = _splits(CrossStudy(3, stratify=True), 30, np.tile([0, 1], 15), s, seed=5)
    assert [sp.repeat for sp in d].count(0) == 0
    keep = [sp for sp in e if sp.repeat > 0]
    assert all(np.array_equal(x.test, z.test) for x, z in zip(d, keep, strict=True))


def test_cross_study_stratify_leaves_out_what_a_classifier_cannot_fit():
    s = np.repeat(["a", "b", "c"], 10)
    y = np.tile([0, 1], 15)
    y[s == "a"] = 0                       # a: one class, not trained on
    y[s == "b"] = [1] + [0] * 9           # b: a class of one row, no within-study CV
    scheme = CrossStudy(3, stratify=True)
    plan = {p.study: p for p in scheme.plan(y, s)}
    assert not plan["a"].trained and plan["a"].n_folds == 0
    assert plan["b"].trained and not plan["b"].stratified
    assert plan["c"].stratified
    splits = _splits(scheme, 30, y, s)
    assert {(sp.repeat, sp.fold) for sp in splits} == {(1, 0), (2, 0), (2, 1), (2, 2), (2, 3)}
    assert scheme.get_n_splits(y=y, groups=s) == 5
    for sp in splits:
        assert np.unique(y[sp.train]).size == 2


def test_cross_study_input_errors():
    with pytest.raises(ParameterError, match="groups"):
        _splits(CrossStudy(), 10)
    with pytest.raises(DataError, match="2 studies"):
        _splits(CrossStudy(2), 10, groups=np.zeros(10))
    with pytest.raises(ParameterError, match="n_folds"):
        CrossStudy(1)
    with pytest.raises(ParameterError, match="y"):
        CrossStudy(stratify=True).plan(None, np.repeat([0, 1], 5))
    assert repr(CrossStudy(3)) == ("CrossStudy(n_folds=3, in_sample=False, stratify=False, "
                                   "random_state=None, train_studies=None)")
    with pytest.raises(ParameterError, match="train_studies"):
        CrossStudy(train_studies=[-1])


def test_cross_study_in_sample_learners_and_masks():
    s = np.repeat(["a", "b", "c"], 5)
    y = np.tile([0, 1, 1], 5)
    y[s == "b"] = 1
    scheme = CrossStudy(None, in_sample=True, stratify=True)
    splits = _splits(scheme, 15, y, s)
    assert [(sp.repeat, sp.fold) for sp in splits] == [(0, 0), (2, 0)]   # b: one class
    for sp in splits:
        assert sp.test.tolist() == list(range(15))
        np.testing.assert_array_equal(sp.train, np.flatnonzero(s == "abc"[sp.repeat]))
    # the weight/mask form gives the same splits for the same random_state
    for sch in (CrossStudy(2), CrossStudy(3, stratify=True), StudyHoldOut(0.5, n_repeats=2)):
        W, T = sch.masks(15, y, s, random_state=3)
        its = _splits(sch, 15, y, s, seed=3)
        assert len(its) == W.shape[0]
        for sp, w, t in zip(its, W, T, strict=True):
            assert np.flatnonzero(w).tolist() == sp.train.tolist()
            assert np.flatnonzero(t).tolist() == sp.test.tolist()


def test_cross_study_through_the_runner():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=90)
    s = np.repeat(["a", "b", "c"], 30)
    res = run({"ols": LinearRegression()}, X, y, scheme=CrossStudy(3), metrics="r2", groups=s,
              random_state=0)
    f = res.predictions.frame
    first = f[(f["repeat"] == 1) & (f["fold"] == 0)]          # trained on b
    fit = LinearRegression().fit(X[s == "b"], y[s == "b"])
    np.testing.assert_allclose(first["y_pred"], fit.predict(X[first["row"]]))
    sc = res.scores.frame
    assert len(sc) == 3 * (1 + 3)
    r2 = sc[(sc["repeat"] == 1) & (sc["fold"] == 0)]["value"].item()
    assert r2 == pytest.approx(r2_score(y[s != "b"], fit.predict(X[s != "b"])))


def test_cross_study_run_bit_identical_serial_and_joblib():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    s = np.repeat(["a", "b", "c", "d"], 30)
    kw = dict(scheme=CrossStudy(3, stratify=True), metrics="accuracy", groups=s,
              random_state=4)
    a = run({"t": LogisticRegression()}, X, y, **kw).predictions.frame
    b = run({"t": LogisticRegression()}, X, y, backend="joblib", n_jobs=2, **kw).predictions.frame
    pd.testing.assert_frame_equal(a, b)


def test_study_hold_out_halves_every_study():
    s = np.array(["a"] * 9 + ["b"] * 4 + ["c"] * 1)
    sp = _splits(StudyHoldOut(0.5), len(s), groups=s)[0]
    for lab, n_test in (("a", 5), ("b", 2), ("c", 1)):
        assert np.isin(np.flatnonzero(s == lab), sp.test).sum() == n_test
    assert np.intersect1d(sp.train, sp.test).size == 0
    assert np.union1d(sp.train, sp.test).size == len(s)
    again = _splits(StudyHoldOut(0.5, n_repeats=2), len(s), groups=s)
    assert [x.repeat for x in again] == [0, 1] and not np.array_equal(again[0].test,
                                                                       again[1].test)
    with pytest.raises(DataError, match="no training row"):
        _splits(StudyHoldOut(0.5), 2, groups=np.array(["a", "b"]))
    with pytest.raises(ParameterError, match="test_size"):
        StudyHoldOut(1.0)


def test_study_hold_out_one_rule_for_every_study():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] + rng.normal(size=60)
    s = np.repeat(["a", "b", "c"], 20)
    res = run({"tree": DecisionTreeRegressor(max_depth=2)}, X, y, scheme=StudyHoldOut(0.5),
              metrics="mse", groups=s, random_state=3)
    f = res.predictions.frame
    assert len(f) == 30 and (f["fold"] == 0).all()
    assert sorted(pd.Series(s[f["row"]]).value_counts().tolist()) == [10, 10, 10]
