"""Per-fold scores in which a model did not run in some studies (a hole in the study table).

References: :func:`replikit.compare.skillings_mack_test` on the studies x models table of mean
scores computed here with pandas (the test itself is checked against the R package's output in
test_skillings_mack.py), the pairs counted by hand, and the Bayesian signed-rank test's input
restricted by hand to the studies scoring both models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replikit.compare import audit_scores, compare_scores, skillings_mack_test
from replikit.errors import DataError

HOLES = {("s1", "c"), ("s3", "d"), ("s5", "a")}


@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(1)
    rows = []
    for s in range(8):
        for j, m in enumerate("abcd"):
            if (f"s{s}", m) in HOLES:
                continue
            for r in range(2):
                for f in range(5):
                    rows.append({"study": f"s{s}", "model": m, "repeat": r, "fold": f,
                                 "metric": "accuracy", "n_train": 400, "n_test": 100,
                                 "value": 0.8 - 0.02 * j + rng.normal(0, 0.03)})
    return pd.DataFrame(rows)


def test_compare_scores_skips_a_pair_where_a_model_did_not_run(scores):
    with pytest.warns(UserWarning, match="is not compared in study 's1'"):
        table = compare_scores(scores, metrics=["accuracy"],
                               tests=["corrected_repeated_kfold_ttest"])
    f = table.frame
    # 6 pairs in 8 studies, less the 3 pairs of each hole's model in its study
    assert len(f) == 6 * 8 - 3 * len(HOLES)
    for study, model in HOLES:
        sub = f[f["study"] == study]
        assert not ((sub["a"] == model) | (sub["b"] == model)).any()
    assert sum("is not compared" in n for n in table.notes) == 3 * len(HOLES)


def test_a_model_absent_everywhere_is_still_an_error(scores):
    with pytest.raises(DataError, match="'e'"):
        compare_scores(scores, "a", "e", metrics=["accuracy"])


def test_audit_scores_ranks_across_studies_with_skillings_mack(scores):
    res = audit_scores(scores, metric="accuracy", random_state=0)
    means = scores.pivot_table(index="study", columns="model", values="value", aggfunc="mean")
    ref = skillings_mack_test(means)
    fr = res.nemenyi.friedman
    assert fr.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert set(fr.missing) == HOLES
    assert res.studies_left_out == ()
    assert "Skillings–Mack" in str(res)
    assert any("Skillings–Mack" in n for n in res.notes)
    # the Plackett-Luce posterior ranks each study's models among those it scores
    assert res.plackett_luce is not None and len(res.plackett_luce.missing) == len(HOLES)
    # across studies, best against runner-up only on the studies scoring both
    both = means[[res.best, res.runner_up]].dropna()
    assert len(both) < len(means)  # the hole in s5 is the best model's
    assert [post.n_datasets for post in res.across_studies] == [len(both)] * len(
        res.across_studies)
