"""Comparisons across studies: ``compare_across_studies`` and ``replikit compare`` with five or
more studies. The numbers are those of the tested functions (hierarchical model, signed-rank
test, Bonferroni–Dunn), recomputed here from the same inputs and random state."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from replikit._random import root_seed_sequence, task_rng
from replikit.compare import (
    bayesian_signed_rank_test,
    bonferroni_dunn_test,
    compare_across_studies,
    hierarchical_test,
    scores_to_table,
)
from replikit.errors import DataError, ParameterError


def _scores(n_studies=6, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_studies):
        base = 0.75 + 0.05 * rng.standard_normal()
        for m, gain in (("lr", 0.0), ("rf", 0.04), ("dummy", -0.2)):
            for f in range(4):
                rows.append((f"s{s}", m, 0, f, "accuracy",
                             base + gain + 0.015 * rng.standard_normal(), 75, 25))
    return pd.DataFrame(rows, columns=["study", "model", "repeat", "fold", "metric", "value",
                                       "n_train", "n_test"])


def test_rows_are_the_tests_on_the_same_inputs():
    scores = _scores()
    res = compare_across_studies(scores, "rf", "lr", tolerance=0.01, control="lr", n_draws=400,
                                 n_chains=2, random_state=3)
    f = res.frame
    assert list(f["test"]) == ["hierarchical", "bayesian_signed_rank"]
    root = root_seed_sequence(3)  # one stream per (metric, pair, test) from the root
    h = hierarchical_test(scores, "rf", "lr", tolerance=0.01, n_draws=400, n_chains=2,
                          random_state=task_rng(root, ("across-studies", "accuracy", "rf",
                                                       "lr", "hierarchical")))
    sr = bayesian_signed_rank_test(
        scores_to_table(scores), "rf", "lr", tolerance=0.01, n_resamples=800,
        random_state=task_rng(root, ("across-studies", "accuracy", "rf", "lr",
                                     "bayesian_signed_rank")))
    assert tuple(f.iloc[0][["p_left", "p_rope", "p_right"]]) == h.probabilities
    assert tuple(f.iloc[1][["p_left", "p_rope", "p_right"]]) == sr.probabilities
    assert f["decision"].iloc[0] == "rf better"
    bd = bonferroni_dunn_test(scores_to_table(scores), control="lr")
    pd.testing.assert_frame_equal(res.control["accuracy"].comparisons, bd.comparisons)
    assert res.n_studies == 6 and "Across 6 studies" in str(res)
    assert len(res.control_frame()) == 2


def test_few_studies_and_bad_control():
    res = compare_across_studies(_scores(4), n_draws=200, n_chains=2)
    assert res.frame.empty and any("fewer than 5" in n for n in res.notes)
    with pytest.raises(ParameterError, match="control"):
        compare_across_studies(_scores(), control="svm")
    with pytest.raises(DataError, match="`a`"):
        compare_across_studies(_scores(), "svm")


def test_cli_across_studies(cli, tmp_path):
    path = tmp_path / "scores.csv"
    _scores().to_csv(path, index=False)
    code, out, err = cli("compare", path, "--a", "rf", "--b", "lr", "--control", "lr")
    assert code == 0, err
    assert "Across 6 studies" in out and "hierarchical" in out and "signed-rank" in out
    assert "against the control lr" in out
    code, out, err = cli("--format", "json", "compare", path, "--a", "rf", "--b", "lr",
                         "--out", tmp_path / "o")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"comparisons", "across_studies", "control"}
    assert [r["test"] for r in doc["across_studies"]] == ["hierarchical",
                                                          "bayesian_signed_rank"]
    written = pd.read_csv(tmp_path / "o" / "across_studies.csv")
    assert list(written["test"]) == ["hierarchical", "bayesian_signed_rank"]
    # --control: an unknown model, or too few studies, is one line naming the flag
    code, _, err = cli("compare", path, "--control", "svm")
    assert code == 2 and "--control" in err
    few = tmp_path / "few.csv"
    _scores(3).to_csv(few, index=False)
    code, _, err = cli("compare", few, "--control", "lr")
    assert code == 2 and "--control" in err and "at least 5 studies" in err
    code, out, _ = cli("--format", "json", "compare", few)
    assert code == 0 and isinstance(json.loads(out), list)  # no across-studies part


def test_cli_across_studies_when_fitting(cli, tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "site": np.repeat(list("abcde"), n // 5)})
    df["y"] = 2 * df["x"] + rng.normal(size=n)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    code, out, err = cli("--format", "json", "compare", "--data", path, "--target", "y",
                         "--models", "lr,dummy", "--study", "site", "--scheme", "3",
                         "--control", "dummy")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["across_studies"][0]["n_studies"] == 5
    assert [r["model"] for r in doc["control"]] == ["lr"]
