"""Schemes: partition properties, sizes, reproducibility, reprs, parse_scheme."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import KFold

from replikit.errors import DataError, ParameterError
from replikit.experiment.schemes import (
    Bootstrap,
    FiveByTwo,
    HoldOut,
    LeaveOneOut,
    LeaveOneStudyOut,
    RepeatedKFold,
    Resubstitution,
    SklearnScheme,
    parse_scheme,
)


def splits(scheme, n=30, y=None, groups=None, seed=0):
    return list(scheme.iter_splits(np.zeros((n, 1)), y, groups, random_state=seed))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 60), k=st.integers(2, 4), r=st.integers(1, 3))
def test_kfold_partitions_every_repeat(n, k, r):
    sp = splits(RepeatedKFold(k, r), n=n)
    assert len(sp) == k * r
    for rep in range(r):
        tests = np.concatenate([s.test for s in sp if s.repeat == rep])
        np.testing.assert_array_equal(np.sort(tests), np.arange(n))
    for s in sp:
        assert np.intersect1d(s.train, s.test).size == 0
        assert s.train.size + s.test.size == n


@pytest.mark.parametrize("n,p,ceil,floor", [(30, 0.368, 12, 11), (30, 0.2, 6, 6), (10, 0.33, 4, 3)])
def test_holdout_rounding(n, p, ceil, floor):
    assert all(s.test.size == ceil for s in splits(HoldOut(p, 5), n=n))
    assert all(s.test.size == floor for s in splits(HoldOut(p, 5, rounding="floor"), n=n))


def test_holdout_ceil_matches_sklearn_size():
    from sklearn.model_selection import ShuffleSplit

    for n in (17, 30, 101):
        _, test = next(ShuffleSplit(1, test_size=0.33, random_state=0).split(np.zeros(n)))
        assert splits(HoldOut(0.33), n=n)[0].test.size == test.size


def test_holdout_stratified_keeps_shares_and_redraw():
    y = np.array([0] * 20 + [1] * 10)
    for s in splits(HoldOut(0.3, 10, stratify=True), n=30, y=y):
        assert np.sum(y[s.test] == 1) == 3
    y0 = np.array([1] + [0] * 9)
    for s in splits(HoldOut(0.5, 30, redraw_all_zero=True), n=10, y=y0):
        assert y0[s.train].sum() == 1


def test_bootstrap_oob_and_single_class_redraw():
    y = np.array([1, 1] + [0] * 8)
    for s in splits(Bootstrap(200, redraw_single_class=True), n=10, y=y):
        assert s.train.size == 10
        assert np.setdiff1d(np.arange(10), s.train).tolist() == s.test.tolist()
        assert np.unique(y[s.train]).size == 2


def test_fixed_schemes():
    assert [(s.repeat, s.fold) for s in splits(Resubstitution(), n=5)] == [(0, 0)]
    loo = splits(LeaveOneOut(), n=6)
    assert [s.test.tolist() for s in loo] == [[i] for i in range(6)]
    f52 = splits(FiveByTwo(), n=20)
    assert len(f52) == 10 and {s.test.size for s in f52} == {10}
    g = np.repeat(["b", "a", "c"], 4)
    lo = splits(LeaveOneStudyOut(), n=12, groups=g)
    assert [np.unique(g[s.test]).tolist() for s in lo] == [["a"], ["b"], ["c"]]


def test_reproducible_and_seed_sensitive():
    a = splits(RepeatedKFold(5, 2), seed=3)
    b = splits(RepeatedKFold(5, 2), seed=3)
    c = splits(RepeatedKFold(5, 2), seed=4)
    assert all(np.array_equal(x.test, y.test) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x.test, y.test) for x, y in zip(a, c, strict=True))


def test_split_api_like_sklearn():
    s = RepeatedKFold(3, 2, random_state=0)
    pairs = list(s.split(np.zeros((9, 2))))
    assert len(pairs) == s.get_n_splits() == 6
    wrapped = splits(SklearnScheme(KFold(3)), n=9)
    assert [w.fold for w in wrapped] == [0, 1, 2]


def test_repr_shows_every_parameter():
    assert repr(HoldOut(0.2, 3)) == ("HoldOut(test_size=0.2, n_repeats=3, stratify=False, "
                                     "rounding='ceil', redraw_all_zero=False, random_state=None)")
    assert repr(FiveByTwo()) == "FiveByTwo(stratify=False, random_state=None)"


@pytest.mark.parametrize("spec,expected", [
    ("10x10", RepeatedKFold(10, 10)), ("5", RepeatedKFold(5, 1)), ("kfold:3", RepeatedKFold(3)),
    ("5x2", FiveByTwo()), ("loo", LeaveOneOut()), ("bootstrap:50", Bootstrap(50)),
    ("holdout:0.25x20", HoldOut(0.25, 20)), ("resub", Resubstitution()),
    ("loso", LeaveOneStudyOut()),
])
def test_parse_scheme(spec, expected):
    assert parse_scheme(spec) == expected


def test_bad_parameters():
    with pytest.raises(ParameterError, match="`scheme`: cannot read 'weird'"):
        parse_scheme("weird")
    with pytest.raises(ParameterError, match="`test_size`"):
        HoldOut(1.5)
    with pytest.raises(ParameterError, match="`n_folds` must be >= 2"):
        RepeatedKFold(1)
    with pytest.raises(ParameterError, match="`rounding`"):
        HoldOut(0.3, rounding="round")
    with pytest.raises(DataError, match="exceeds the number of rows"):
        splits(RepeatedKFold(10), n=5)
    with pytest.raises(ParameterError, match="groups"):
        splits(LeaveOneStudyOut(), n=5)


# --------------------------------------------------------------------------------------------
# one scheme engine: masks() and iter_splits() are the same splits
# --------------------------------------------------------------------------------------------

def _all_schemes():
    return [Resubstitution(), HoldOut(0.3, 7), HoldOut(0.25, 5, stratify=True),
            HoldOut(0.4, 6, rounding="floor", redraw_all_zero=True), RepeatedKFold(4, 3),
            RepeatedKFold(3, 2, stratify=True), RepeatedKFold(5, 1, shuffle=False), FiveByTwo(),
            LeaveOneOut(), Bootstrap(9), Bootstrap(6, redraw_single_class=True),
            LeaveOneStudyOut(), SklearnScheme(KFold(3))]


@pytest.mark.parametrize("scheme", _all_schemes(), ids=repr)
@pytest.mark.parametrize("seed", [0, 5])
def test_masks_are_the_splits_of_iter_splits(scheme, seed):
    n = 23
    y = np.array([0, 1] * 11 + [1])
    groups = np.repeat(["a", "b", "c"], [8, 8, 7]) if isinstance(scheme, LeaveOneStudyOut) else None
    W, T = scheme.masks(n, y, groups, random_state=seed)
    sp = list(scheme.iter_splits(np.zeros((n, 2)), y, groups, random_state=seed))
    assert W.shape == T.shape == (len(sp), n) and W.dtype == float and T.dtype == bool
    for r, s in enumerate(sp):
        np.testing.assert_array_equal(np.bincount(s.train, minlength=n), W[r])
        np.testing.assert_array_equal(np.flatnonzero(T[r]), np.sort(s.test))
        if not isinstance(scheme, Resubstitution):
            assert not np.any((W[r] > 0) & T[r])  # nothing tested that was trained on
    if scheme.randomized and not isinstance(scheme, SklearnScheme):
        W2, T2 = scheme.masks(n, y, groups, random_state=seed + 1)
        assert not (np.array_equal(W, W2) and np.array_equal(T, T2))


def test_kfold_folds_are_scikit_learns():
    # each repeat draws one int seed, then the folds are KFold(shuffle=True, random_state=seed)
    rng = np.random.default_rng(3)
    seeds = [int(rng.integers(0, 2**31 - 1)) for _ in range(2)]
    got = splits(RepeatedKFold(4, 2), n=18, seed=3)
    for r, seed in enumerate(seeds):
        ref = list(KFold(4, shuffle=True, random_state=seed).split(np.zeros((18, 1))))
        for f, (train, test) in enumerate(ref):
            s = got[4 * r + f]
            assert (s.repeat, s.fold) == (r, f)
            np.testing.assert_array_equal(s.train, train)
            np.testing.assert_array_equal(s.test, test)


def test_bootstrap_masks_are_counts_and_oob():
    W, T = Bootstrap(300).masks(12, random_state=1)
    assert np.all(W.sum(axis=1) == 12) and np.all(W == np.round(W))
    np.testing.assert_array_equal(T, W == 0)
    assert T.any(axis=1).all()  # every resample has out-of-bag rows
    # the out-of-bag share approaches (1 - 1/n)^n
    assert abs(T.mean() - (1 - 1 / 12) ** 12) < 0.02


def test_blocks_bound_memory_and_keep_the_stream(monkeypatch):
    import replikit.experiment.schemes as schemes

    y = np.array([0, 1] * 20)
    ref = {s: s.masks(40, y, random_state=2) for s in (Bootstrap(25, True), HoldOut(0.3, 25),
                                                       RepeatedKFold(40, 2), LeaveOneOut())}
    monkeypatch.setattr(schemes, "_BLOCK_CELLS", 40 * 3)  # blocks of 3 splits
    for s, (W, T) in ref.items():
        W2, T2 = s.masks(40, y, random_state=2)
        if isinstance(s, (RepeatedKFold, LeaveOneOut)):  # their draws do not depend on blocks
            np.testing.assert_array_equal(W, W2)
            np.testing.assert_array_equal(T, T2)
        assert W2.shape == W.shape


def test_mask_helpers():
    from replikit.experiment.schemes import bootstrap_weights, holdout_test_masks, kfold_test_masks

    T = kfold_test_masks(np.array([[4, 0, 3, 1, 2]]), 2)
    assert T.shape == (1, 2, 5) and T[0, 0].tolist() == [True, False, False, True, True]
    assert holdout_test_masks(np.array([4, 0, 3, 1, 2]), 2).tolist() == [True, False, False,
                                                                        False, True]
    assert bootstrap_weights(np.array([[1, 1, 1]]), 3).tolist() == [[0, 3, 0]]


def test_masks_bad_inputs():
    with pytest.raises(ParameterError, match="`n`"):
        RepeatedKFold(3).masks(1)
    with pytest.raises(DataError, match="`y` must have one value per row"):
        RepeatedKFold(3).masks(10, y=np.zeros(9))
    with pytest.raises(DataError, match="not all 0"):
        HoldOut(0.5, 3, redraw_all_zero=True).masks(10, y=np.zeros(10), random_state=0)
    with pytest.raises(DataError, match="two classes"):
        Bootstrap(3, redraw_single_class=True).masks(10, y=np.zeros(10), random_state=0)


def test_a_scheme_written_with_iter_gets_masks_too():
    from replikit.experiment.schemes import Scheme, Split

    class FirstHalf(Scheme):
        randomized = False

        def get_n_splits(self, X=None, y=None, groups=None):
            return 1

        def _iter(self, n, y, groups, rng):
            yield Split(0, 0, np.array([2, 0, 0]), np.arange(n // 2, n))

    W, T = FirstHalf().masks(6)
    assert W.tolist() == [[2, 0, 1, 0, 0, 0]] and T.tolist() == [[False] * 3 + [True] * 3]
    (s,) = FirstHalf().iter_splits(np.zeros((6, 1)))
    assert s.train.tolist() == [2, 0, 0]  # the subclass's own index arrays, unchanged
