"""Kernels, rankings and MMD against Example 4.1 of Matteucci et al. (2024), genexpy fixtures and
properties."""

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replikit.errors import DataError, ParameterError
from replikit.generalize import (
    Kernel,
    borda_gram,
    discordant_pairs,
    jaccard_gram,
    mallows_gram,
    mmd,
    mmd_from_gram,
    parse_goal,
    rank_scores,
    rbf_gram,
)

REF = Path(__file__).resolve().parents[1] / "reference" / "generalize"


@pytest.fixture(scope="module")
def fixtures():
    with gzip.open(REF / "genexpy_fixtures.json.gz", "rt") as fh:
        return json.load(fh)


def test_example_4_1():
    r, s = [[0, 0, 0]], [[0, 1, 1]]
    assert borda_gram(r, s, idx=0)[0, 0] == 1.0
    assert jaccard_gram(r, s, k=1)[0, 0] == pytest.approx(1 / 3)
    # one discordant pair counted twice by half: n_d = 1, nu = 1/C(3,2)
    assert discordant_pairs(r, s)[0, 0] == 1.0
    assert mallows_gram(r, s)[0, 0] == pytest.approx(math.exp(-1 / 3))
    assert round(mallows_gram(r, s)[0, 0], 2) == 0.72


def test_rankings_dense_ties_and_direction():
    np.testing.assert_array_equal(rank_scores([[0.9, 0.7, 0.9, 0.1]]), [[0, 1, 0, 2]])
    np.testing.assert_array_equal(rank_scores([[0.9, 0.7, 0.9, 0.1]], higher_is_better=False),
                                  [[2, 1, 2, 0]])
    np.testing.assert_array_equal(rank_scores([[1.0, 1.05, 2.0]], tol=0.1), [[1, 1, 0]])
    np.testing.assert_array_equal(rank_scores([[1.0, 1.05, 2.0]]), [[2, 1, 0]])
    # missing = a tier of its own below every observed score (never the best, unlike genexpy)
    np.testing.assert_array_equal(rank_scores([[np.nan, 0.5, 0.9]]), [[2, 1, 0]])
    np.testing.assert_array_equal(rank_scores([[np.nan, 0.5, 0.9]], higher_is_better=False),
                                  [[2, 0, 1]])
    with pytest.raises(DataError, match="scores"):
        rank_scores(np.zeros((2, 2, 2)))
    with pytest.raises(ParameterError, match="tol"):
        rank_scores([[1.0]], tol=-1)


@pytest.mark.parametrize("name", ["random_5x20", "random_12x16", "random_3x10",
                                  "encoders_DTC_full_ACC"])
def test_rankings_and_grams_match_genexpy(fixtures, name):
    conf = fixtures["configurations"][name]
    scores = np.array(conf["scores"])
    ranks = rank_scores(scores)
    np.testing.assert_array_equal(ranks, np.array(conf["ranks"]))
    na = ranks.shape[1]
    g = conf["gram"]
    np.testing.assert_allclose(borda_gram(ranks, idx=0), g["borda_0"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(Kernel("borda", alternative=na - 1).gram(ranks),
                               g[f"borda_{na - 1}"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(jaccard_gram(ranks, k=1), g["jaccard_1"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(jaccard_gram(ranks, k=2), g["jaccard_2"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(mallows_gram(ranks), g["mallows"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rbf_gram(scores), g["rbf"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["random_5x20", "random_12x16", "encoders_DTC_full_ACC"])
def test_mmd_matches_genexpy(fixtures, name):
    conf = fixtures["configurations"][name]
    na = len(conf["ranks"][0])
    kernels = {"borda_0": Kernel("borda", alternative=0), "jaccard_1": Kernel("jaccard"),
               "jaccard_2": Kernel("jaccard", k=2), "mallows": Kernel("mallows")}
    for kname, k in kernels.items():
        m = conf["mmd"][kname]
        got = [mmd(np.array(x), np.array(y), k) for x, y in zip(m["x"], m["y"], strict=False)]
        np.testing.assert_allclose(got, m["vectorized"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(got, m["embedding"], rtol=0, atol=1e-7)
    for kname, k in dict(kernels, rbf=Kernel("rbf")).items():
        np.testing.assert_allclose(k.epsilon([0.05, 0.1, 0.3], na), conf["eps"][kname],
                                   rtol=0, atol=1e-12)


rankings_strategy = st.integers(2, 7).flatmap(
    lambda na: st.lists(st.lists(st.integers(0, na - 1), min_size=na, max_size=na),
                        min_size=1, max_size=25))


@settings(max_examples=60, deadline=None)
@given(rankings_strategy, st.integers(0, 6), st.integers(1, 3))
def test_gram_matrices_are_psd_and_bounded(rows, idx, k):
    r = rank_scores(np.array(rows, dtype=float))  # dense tiers from arbitrary integers
    na = r.shape[1]
    for kern in (Kernel("borda", alternative=idx % na), Kernel("jaccard", k=k),
                 Kernel("mallows"), Kernel("rbf")):
        K = kern.gram(r)
        np.testing.assert_allclose(K, K.T, atol=1e-14)
        assert np.linalg.eigvalsh(K).min() >= -1e-10
        assert K.max() <= kern.sup(na) + 1e-12 and K.min() >= kern.inf(na) - 1e-12
        np.testing.assert_allclose(np.diag(K), 1.0)


@settings(max_examples=60, deadline=None)
@given(rankings_strategy, st.integers(0, 2**31 - 1))
def test_mmd_within_prop_4_1_bounds(rows, random_state):
    r = rank_scores(np.array(rows, dtype=float))
    N, na = r.shape
    rng = np.random.default_rng(random_state)
    for kern in (Kernel("borda", alternative=0), Kernel("jaccard"), Kernel("mallows")):
        K = kern.gram(r)
        xi = rng.integers(0, N, (5, 3))
        yi = rng.integers(0, N, (5, 4))
        v = mmd_from_gram(K, xi, yi)
        assert np.all(v >= 0) and np.all(v <= kern.mmd_max(na) + 1e-12)


def test_mmd_unbiased_and_symmetry():
    rng = np.random.default_rng(1)
    r = rank_scores(rng.integers(0, 3, (12, 4)).astype(float))
    k = Kernel("mallows")
    K = k.gram(r)
    x, y = np.arange(6), np.arange(6, 12)
    assert mmd_from_gram(K, x, y)[0] == pytest.approx(mmd_from_gram(K, y, x)[0], abs=1e-14)
    # unbiased U-statistic by explicit sums
    kxx, kyy, kxy = K[np.ix_(x, x)], K[np.ix_(y, y)], K[np.ix_(x, y)]
    u2 = ((kxx.sum() - np.trace(kxx)) / 30 + (kyy.sum() - np.trace(kyy)) / 30
          - 2 * kxy.mean())
    got = mmd_from_gram(K, x, y, mmd_estimator="unbiased")[0]
    assert np.sign(got) * got ** 2 == pytest.approx(u2, abs=1e-12)
    assert mmd(r[:6], r[:6], k) == pytest.approx(0.0, abs=1e-7)


def test_kernel_validation_and_goals():
    with pytest.raises(ParameterError, match="kind"):
        Kernel("foo")
    with pytest.raises(ParameterError, match="alternative"):
        Kernel("borda")
    k = Kernel("borda", alternative="OHE")
    # resolved by name among the analyzed alternatives (after filtering), not by position
    assert k.resolve_index(["A", "B", "OHE"]) == 2
    with pytest.raises(ParameterError, match="OHE"):
        k.resolve_index(["A", "B"])
    assert parse_goal("borda:OHE") == k
    assert parse_goal("jaccard:2").k == 2
    assert parse_goal("mallows").nu is None
    with pytest.raises(ParameterError, match="goal"):
        parse_goal("kendall")
    # nu is never rounded: eps > 0 for many alternatives (genexpy rounds nu to 2 decimals
    # when rebuilding from its name, which gives nu=0, eps=0 and n* = inf)
    assert Kernel("mallows").epsilon(0.05, 60) == pytest.approx(math.sqrt(2 * (1 - math.exp(-0.05))))
    assert Kernel("mallows").effective_nu(60) == 1 / math.comb(60, 2)


def test_many_alternatives_no_nan():
    """genexpy yields NaN probabilities for >= 160 alternatives; Gram matrices here stay finite."""
    rng = np.random.default_rng(0)
    r = rank_scores(rng.normal(size=(10, 200)))
    for kern in (Kernel("borda", alternative=5), Kernel("jaccard", k=3), Kernel("mallows")):
        K = kern.gram(r)
        assert np.all(np.isfinite(K))
        v = mmd_from_gram(K, np.arange(5), np.arange(5, 10))
        assert np.all(np.isfinite(v))
