"""Scale of replikit.generalize: bounded memory, a clear error beyond it, and
the vectorized MMD / Mallows code giving the same numbers as the plain per-size loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replikit.errors import ResourceLimitError
from replikit.generalize import Kernel, _mmd, analyze, estimate_nstar, kernels, mmd_from_gram
from replikit.generalize._mmd import mmd_distribution, subsample_pairs


def _gram(N, random_state=0):
    x = np.random.default_rng(random_state).normal(size=(N, 4))
    return np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / 4)


def _loop(K, ns, R, random_state):
    """Algorithm 1's inner loops written plainly: one subsample_pairs call per size."""
    rng = np.random.default_rng(random_state)
    return np.array([mmd_from_gram(K, *subsample_pairs(len(K), int(n), R, rng)) for n in ns])


@pytest.mark.parametrize("chunk", [None, 3000])
@pytest.mark.parametrize("mmd_estimator", ["biased", "unbiased"])
def test_mmd_distribution_equals_per_size_loop(monkeypatch, chunk, mmd_estimator):
    """The chunked draw (one sort per chunk of sizes) is the loop's stream, bit for bit."""
    if chunk:
        monkeypatch.setattr(_mmd, "_CHUNK_BYTES", chunk)  # one or two sizes per chunk
    K = _gram(23)
    d = mmd_distribution(K, n_resamples=17, mmd_estimator=mmd_estimator, random_state=5)
    ns = d.n
    rng = np.random.default_rng(5)
    ref = []
    for n in ns:
        x, y = subsample_pairs(23, int(n), 17, rng)
        ref.append(mmd_from_gram(K, x, y, mmd_estimator=mmd_estimator))
    np.testing.assert_array_equal(d.values, np.array(ref))
    if mmd_estimator == "biased":
        np.testing.assert_array_equal(d.values, _loop(K, ns, 17, 5))


class _CoarseKeys:
    """A stand-in generator whose keys tie often (tenths), to exercise the tie fallback."""

    def __init__(self, random_state):
        self.rng = np.random.default_rng(random_state)

    def random(self, shape):
        return np.round(self.rng.random(shape), 1)


def test_tied_keys_are_split_as_argsort_does():
    K = _gram(12, random_state=1)
    ns = np.arange(1, 7)
    got = _mmd._mmd_disjoint(K, ns, 40, _CoarseKeys(3), "biased")
    keys = _CoarseKeys(3)
    for i, n in enumerate(ns):
        perm = np.argsort(keys.random((40, 12)), axis=1)
        np.testing.assert_array_equal(got[i], mmd_from_gram(K, perm[:, :n], perm[:, n:2 * n]))


def test_discordant_pairs_in_blocks_is_exact(monkeypatch):
    r = np.random.default_rng(0).integers(0, 6, (30, 25))
    r2 = np.random.default_rng(1).integers(0, 6, (20, 25))
    whole = kernels.discordant_pairs(r), kernels.discordant_pairs(r, r2)
    monkeypatch.setattr(kernels, "_PAIR_BLOCK_BYTES", 16 * 30 * 7)  # 7 pairs per block
    np.testing.assert_array_equal(kernels.discordant_pairs(r), whole[0])
    np.testing.assert_array_equal(kernels.discordant_pairs(r, r2), whole[1])
    # closed form on one pair of rankings: 0 1 2 vs 2 1 0 disagree on all 3 pairs
    assert kernels.discordant_pairs([[0, 1, 2]], [[2, 1, 0]])[0, 0] == 3.0


def _study(n_alt, n_cond, random_state=0):
    rng = np.random.default_rng(random_state)
    skill = rng.normal(0, 1, n_alt)
    return pd.DataFrame({"alternative": np.tile([f"a{i}" for i in range(n_alt)], n_cond),
                         "dataset": np.repeat([f"d{i}" for i in range(n_cond)], n_alt),
                         "score": np.tile(skill, n_cond) + rng.normal(0, 2, n_alt * n_cond)})


def test_too_large_study_is_refused_naming_what_to_reduce(monkeypatch):
    df = _study(20, 200)
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "4M")
    with pytest.raises(ResourceLimitError) as err:
        analyze(df, alternative="alternative", score="score", factors="dataset",
                kernels=["mallows"], n_resamples=1000, random_state=0)
    assert "`n_resamples`" in str(err.value) and "`factors`" in str(err.value)
    with pytest.raises(ResourceLimitError, match="rows of `results`"):
        estimate_nstar(np.zeros((3000, 3), dtype=int), Kernel("jaccard"), n_resamples=1)
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "20K")
    with pytest.raises(ResourceLimitError, match="alternatives"):  # before the pivot
        analyze(df, alternative="alternative", score="score", factors="dataset")


def test_cli_too_large_study_is_a_clear_error(tmp_path, monkeypatch, capsys):
    from replikit.cli import main

    path = tmp_path / "big.csv"
    _study(20, 200).to_csv(path, index=False)
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "4M")
    with pytest.raises(SystemExit) as exc:
        main(["generalize", str(path), "--alternative", "alternative", "--score", "score",
              "--factor", "dataset"])
    assert exc.value.code == 2
    text = capsys.readouterr().err
    err = [ln for ln in text.splitlines() if ln.startswith("replikit: error:")]
    assert len(err) == 1 and "Traceback" not in text, text
    assert all(m in err[0] for m in ("memory", "`--n-resamples`", "`--factor`", "--design")), err


def test_mallows_guard_counts_pair_blocks():
    """Mallows on 200 alternatives: the pair codes are bounded by the block, not 2 C(200, 2)
    floats per ranking."""
    full = 16 * 1000 * 19900
    est = _mmd.analysis_peak_bytes(1000, 200, 1000, None, "mallows")
    assert est < full and est > 8 * 1000 * 1000


@pytest.mark.slow
def test_200_alternatives_x_1000_datasets_memory_is_bounded():
    """The scale case (with few resamples: memory, not time): the traced peak stays
    below the guard's estimate and far below what unchunked arrays would take."""
    import tracemalloc

    df = _study(200, 1000)
    tracemalloc.start()
    try:
        res = analyze(df, alternative="alternative", score="score", factors="dataset",
                      kernels=["jaccard:1", "mallows", "borda:a0"], n_resamples=4,
                      n="even", random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (res.table["N"] == 1000).all() and np.isfinite(res.table["nstar"]).all()
    est = _mmd.analysis_peak_bytes(1000, 200, 4, _mmd.n_sizes(1000, "even"), "mallows")
    assert peak < est + 100 * 1024**2          # the table and the frame's pivot come on top
    assert peak < 16 * 1000 * 19900            # less than the unblocked Mallows codes (318 MB)
