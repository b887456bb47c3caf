"""``replikit compare SCORES --test unpaired``: models scored on different splits, by the
Welch-type corrected t (numbers equal to ``unpaired_corrected_ttest``, itself checked against
scipy's Welch test in tests/compare/test_unpaired.py), Holm over pairs; errors name flags."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def scores(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for model, mu, n_splits in (("a", 0.8, 15), ("b", 0.77, 12), ("c", 0.75, 10)):
        for j in range(n_splits):
            rows.append({"study": "s", "model": model, "repeat": j, "fold": 0,
                         "metric": "accuracy", "value": mu + rng.normal(0, 0.02),
                         "n_train": 100 if model != "c" else 120, "n_test": 50})
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_unpaired_from_the_command_line_equals_the_library(cli, scores):
    from replikit.compare import adjust_pvalues, unpaired_corrected_ttest

    code, out, err = cli("--format", "json", "compare", scores, "--test", "unpaired")
    assert code == 0, err
    got = json.loads(out)
    assert [(r["a"], r["b"]) for r in got] == [("a", "b"), ("a", "c"), ("b", "c")]
    f = pd.read_csv(scores)
    refs = []
    for r in got:
        x, y = f[f.model == r["a"]], f[f.model == r["b"]]
        ref = unpaired_corrected_ttest(x.value, y.value, n_train=(x.n_train.mean(),
                                                                  y.n_train.mean()),
                                       n_test=(50, 50))
        assert r["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
        assert r["df"] == pytest.approx(ref.df, rel=1e-12)
        refs.append(ref.pvalue)
    np.testing.assert_allclose([r["pvalue_adjusted"] for r in got], adjust_pvalues(refs),
                               rtol=1e-12)


def test_paired_tests_on_unpaired_scores_point_at_the_unpaired_test(cli, scores):
    code, _, err = cli("compare", scores, "--a", "a", "--b", "b")
    assert code == 2 and "--test unpaired" in err and "Traceback" not in err


def test_unpaired_refusals_name_the_flag(cli, scores, tmp_path):
    code, _, err = cli("compare", scores, "--test", "unpaired,naive_paired_ttest")
    assert code == 2 and "`--test unpaired` runs alone" in err
    code, _, err = cli("compare", scores, "--test", "unpaired", "--a", "zz", "--b", "a")
    assert code == 2 and "`--a`" in err
    bare = tmp_path / "bare.csv"
    pd.read_csv(scores).drop(columns=["n_train", "n_test"]).to_csv(bare, index=False)
    code, _, err = cli("compare", bare, "--test", "unpaired")
    assert code == 2 and "n_train and n_test" in err
