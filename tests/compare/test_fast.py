"""compare_scores' vectorised path gives the general path's rows bit for bit, and steps aside
when the scores are not a complete k-fold cube."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import replikit.compare._pairing as fast_module
from replikit.compare import compare_scores
from replikit.errors import DataError, ResourceLimitError


def _scores(n_studies=3, n_models=4, n_repeats=3, n_folds=5, metrics=("accuracy",), seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_studies):
        split = rng.normal(0.0, 0.02, size=(n_repeats, n_folds))
        for m in range(n_models):
            for metric in metrics:
                value = 0.8 + 0.01 * m + split + rng.normal(0.0, 0.01, size=split.shape)
                if metric == "log_loss":
                    value = 1.0 - value
                for r in range(n_repeats):
                    for f in range(n_folds):
                        rows.append({"study": f"s{s}", "model": f"m{m}", "repeat": r, "fold": f,
                                     "metric": metric, "value": value[r, f],
                                     "n_train": 400 + f, "n_test": 100 - f})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _general(monkeypatch, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(fast_module, "fast_recommended", lambda *a, **k: None)
        return compare_scores(*args, **kwargs)


def _spy(monkeypatch):
    used = []
    real = fast_module.fast_recommended

    def spy(*a, **k):
        out = real(*a, **k)
        used.append(out is not None)
        return out

    monkeypatch.setattr(fast_module, "fast_recommended", spy)
    return used


@pytest.mark.parametrize("kwargs", [
    {},
    {"alternative": "less", "tolerance": 0.0},
    {"alternative": "greater", "correction": "hochberg"},
    {"tolerance": {"accuracy": 0.005, "log_loss": 0.02}, "correction": None},
    {"a": "m1"},
    {"b": "m2", "study": "s1", "metrics": "log_loss"},
    {"confidence_level": 0.9, "alpha": 0.1},
    # a tolerance adds the TOST equivalence test, on the fast path too
    {"tolerance": 0.01},
    {"tolerance": 0.02, "alternative": "greater"},
    {"tolerance": {"accuracy": 0.01, "log_loss": 0.0}, "alternative": "less"},
])
def test_fast_path_rows_identical_to_general_path(monkeypatch, kwargs):
    scores = _scores(metrics=("accuracy", "log_loss"))
    general = _general(monkeypatch, scores, **kwargs)
    used = _spy(monkeypatch)
    fast = compare_scores(scores, **kwargs)
    assert used == [True]
    pd.testing.assert_frame_equal(fast.frame, general.frame, check_exact=True)
    assert str(fast) == str(general)


def test_fast_path_blocks_of_studies_identical(monkeypatch):
    # one study per block of differences (bounded memory) changes no bit
    scores = _scores(n_studies=4, n_models=3)
    whole = compare_scores(scores)
    monkeypatch.setattr(fast_module, "_CHUNK_BYTES", 1)
    used = _spy(monkeypatch)
    pd.testing.assert_frame_equal(compare_scores(scores).frame, whole.frame, check_exact=True)
    assert used == [True]


def test_fast_path_unsorted_split_labels(monkeypatch):
    scores = _scores(n_studies=2, n_models=3)
    scores["repeat"] = scores["repeat"].map({0: 7, 1: 3, 2: 5})
    scores["fold"] = scores["fold"] + 10
    general = _general(monkeypatch, scores, a="m0", b="m2")
    used = _spy(monkeypatch)
    fast = compare_scores(scores, a="m0", b="m2")
    assert used == [True]
    pd.testing.assert_frame_equal(fast.frame, general.frame, check_exact=True)


@pytest.mark.parametrize("case", ["missing_split", "zero_variance", "no_sizes", "5x2"])
def test_general_path_when_not_a_clean_cube(monkeypatch, case):
    scores = _scores(n_studies=2, n_models=3)
    if case == "missing_split":
        scores = scores.drop(index=scores.index[(scores["model"] == "m1")][:1])
    elif case == "zero_variance":
        sel = scores["model"] == "m2"
        scores.loc[sel, "value"] = scores.loc[scores["model"] == "m0", "value"].to_numpy() + 0.01
        scores = scores.sort_values(["model", "study", "repeat", "fold"])
        m0 = scores[scores["model"] == "m0"]
        scores.loc[scores["model"] == "m2", "value"] = m0["value"].to_numpy() + 0.01
    elif case == "no_sizes":
        scores = scores.drop(columns=["n_train", "n_test"])
    else:
        scores = _scores(n_studies=1, n_models=3, n_repeats=5, n_folds=2)
    used = _spy(monkeypatch)
    if case == "missing_split":
        with pytest.raises(DataError, match="not evaluated on the same splits"):
            compare_scores(scores)
        assert used == [False]
        return
    table = compare_scores(scores)
    assert used in ([False], [])
    pd.testing.assert_frame_equal(table.frame, _general(monkeypatch, scores).frame,
                                  check_exact=True)


def test_memory_guard_names_what_to_reduce(monkeypatch):
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "1K")
    with pytest.raises(ResourceLimitError, match="reduce the studies, metrics or models"):
        compare_scores(_scores(n_studies=2, n_models=3))
