"""The audit of a benchmark table with holes (a model that timed out on a dataset).

References: the Skillings–Mack statistic of :func:`replikit.compare.skillings_mack_test`
(itself checked against the R package's output in tests/compare/test_skillings_mack.py), the
missing cells read off the table here with numpy, and the datasets with a hole found by hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import replikit
from replikit.compare import skillings_mack_test


def _section(audit, key):
    return next(s for s in audit.sections if s.key == key)


@pytest.fixture(scope="module")
def holes():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.6, 0.9, (16, 1)) + rng.normal(0, 0.03, (16, 4)) + [0, 0.01, 0.03, -0.01]
    x[[1, 4, 4, 9], [0, 1, 3, 2]] = np.nan
    wide = pd.DataFrame(x, index=[f"d{i}" for i in range(16)], columns=["a", "b", "c", "d"])
    return wide.rename_axis("dataset").reset_index()


@pytest.fixture(scope="module")
def audited(holes):
    return replikit.audit(benchmark=holes, quick=True, random_state=0,
                          sections=["compare", "generalize"])


def test_compare_runs_skillings_mack_and_names_the_missing_cells(holes, audited):
    s = _section(audited, "compare")
    table = holes.set_index("dataset")
    ref = skillings_mack_test(table)
    assert s.data["friedman_chi2"] == pytest.approx(ref.statistic, rel=1e-12)
    assert "Skillings" in s.data["rank_test"]
    rows, cols = np.nonzero(table.isna().to_numpy())
    assert s.data["missing_cells"] == [[table.index[r], table.columns[c]]
                                       for r, c in zip(rows, cols, strict=True)]
    verdict = s.data["verdict"]
    assert "Skillings–Mack" in verdict["sentence"]
    assert any("4 of 64 cells have no score" in c for c in verdict["caveats"])
    # every pair's effect size is shown with its interval, over the datasets scoring both
    pairs = s.data["pairs"]
    both = [int(table[[a, b]].dropna().shape[0]) for a, b in zip(pairs["a"], pairs["b"],
                                                                 strict=True)]
    assert pairs["n"].tolist() == both
    assert (pairs["mean_difference_ci_low"] <= pairs["mean_difference"]).all()
    assert (pairs["mean_difference"] <= pairs["mean_difference_ci_high"]).all()


def test_generalize_leaves_out_the_datasets_with_a_hole_and_says_so_first(audited):
    s = _section(audited, "generalize")
    assert sorted(s.data["studies_left_out"]) == ["d1", "d4", "d9"]
    assert s.data["N"] == 13
    assert s.data["verdict"]["caveats"][0].startswith("3 studies left out")
