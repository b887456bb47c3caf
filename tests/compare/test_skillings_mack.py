"""Skillings-Mack test (Friedman with missing cells) and the incomplete post-hoc tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.compare import (
    bonferroni_dunn_test,
    friedman_test,
    nemenyi_test,
    skillings_mack_test,
    wilcoxon_holm,
)
from replikit.errors import DataError

# Skillings & Mack (1981, Technometrics 23:171-177), Table 1: four methods of assembling a
# product (columns A-D) in nine blocks, four cells missing. Reference output of the R package
# Skillings.Mack (Srisuradetchai), from its help page example, printed in the README of
# github.com/ZacWarham/Skillings.Mack (README_files/original.png):
#   maty <- matrix(c(3.2,4.1,3.8,4.2, 3.1,3.9,3.4,4.0, 4.3,3.5,4.6,4.8, 3.5,3.6,3.9,4.0,
#                    3.6,4.2,3.7,3.9, 4.5,4.7,3.7,NA, NA,4.2,3.4,NA, 4.3,4.6,4.4,4.9,
#                    3.5,NA,3.7,3.9), ncol = 9, byrow = FALSE)
#   Ski.Mack(maty)
#   -> Skillings-Mack Statistic = 15.493049, p-value = 0.001440 (chi-squared, d.f. = 3)
#      adjustedSum -14.12559752 4.281244146 -4.281244146 14.12559752
#      varCovarMatrix rows 22 -7 -8 -7 / -7 21 -8 -6 / -8 -8 23 -7 / -7 -6 -7 20
# The package ranks the smallest value first: higher_is_better=False here.
SM1981 = np.array([
    [3.2, 4.1, 3.8, 4.2], [3.1, 3.9, 3.4, 4.0], [4.3, 3.5, 4.6, 4.8], [3.5, 3.6, 3.9, 4.0],
    [3.6, 4.2, 3.7, 3.9], [4.5, 4.7, 3.7, np.nan], [np.nan, 4.2, 3.4, np.nan],
    [4.3, 4.6, 4.4, 4.9], [3.5, np.nan, 3.7, 3.9]])
SM1981_COV = np.array([[22, -7, -8, -7], [-7, 21, -8, -6], [-8, -8, 23, -7], [-7, -6, -7, 20]])
SM1981_A = np.array([-14.12559752, 4.281244146, -4.281244146, 14.12559752])


def sm_table():
    return pd.DataFrame(SM1981, columns=list("ABCD"), index=[f"b{i + 1}" for i in range(9)])


@pytest.mark.parametrize("tie_correction", [True, False])
def test_skillings_mack_1981_table1_against_r_package(tie_correction):
    res = skillings_mack_test(sm_table(), higher_is_better=False, tie_correction=tie_correction)
    assert res.statistic == pytest.approx(15.493049, abs=1e-6)
    assert res.pvalue == pytest.approx(0.001440, abs=1e-6)
    assert res.df == 3
    np.testing.assert_allclose(res.adjusted_rank_sums.to_numpy(), SM1981_A, atol=1e-8)
    np.testing.assert_allclose(res.covariance.to_numpy(), SM1981_COV, atol=1e-12)
    assert set(res.missing) == {("b6", "D"), ("b7", "A"), ("b7", "D"), ("b9", "B")}
    # friedman_test on the same table runs Skillings-Mack and says so
    fr = friedman_test(sm_table(), higher_is_better=False, tie_correction=tie_correction)
    assert fr.statistic == pytest.approx(res.statistic) and "Skillings-Mack" in fr.method
    text = str(fr)
    assert "missing cells (4" in text and "b7/A" in text
    row = fr.to_frame().iloc[0]
    assert row["n_missing"] == 4 and "b9/B" in row["missing"]
    assert fr.to_dict()["missing"] and np.isnan(fr.f_statistic)


@pytest.mark.parametrize("tie_correction", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_friedman_on_complete_tables(seed, tie_correction):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(3, 15), rng.integers(2, 7)
    tables = [rng.normal(size=(n, k)), rng.integers(0, 3, size=(n, k)).astype(float)]  # ties
    for t in tables:
        fr = friedman_test(t, tie_correction=tie_correction)
        sm = skillings_mack_test(t, tie_correction=tie_correction)
        assert sm.statistic == pytest.approx(fr.statistic, rel=1e-10, abs=1e-12)
        assert sm.pvalue == pytest.approx(fr.pvalue, rel=1e-10, abs=1e-12)
        np.testing.assert_allclose(sm.mean_ranks, fr.mean_ranks, atol=1e-12)
        if np.isfinite(fr.f_statistic):
            assert sm.f_statistic == pytest.approx(fr.f_statistic, rel=1e-10)
        if tie_correction:  # scipy's tie-corrected Friedman (k >= 3)
            if k >= 3 and np.ptp(t, axis=1).all():
                ref = stats.friedmanchisquare(*t.T)
                assert sm.statistic == pytest.approx(ref.statistic, rel=1e-10)


def test_durbin_bibd_equivalence():
    # a balanced incomplete block design (k = 4 treatments, blocks of 3, each pair together
    # twice): Skillings-Mack equals Durbin's statistic (Chatfield & Mander 2009),
    # D = 12 (t - 1) / (r t (k - 1)(k + 1)) sum_j (R_j - r (k + 1) / 2)^2 with t = 4
    # treatments, k = 3 per block, r = 3 replicates.
    rng = np.random.default_rng(3)
    design = [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    t = np.full((4, 4), np.nan)
    for i, cols in enumerate(design):
        t[i, list(cols)] = rng.normal(size=3)
    res = skillings_mack_test(t, higher_is_better=False)
    ranks = res.ranks.to_numpy()
    r_sum = np.nansum(ranks, axis=0)
    durbin = 12 * 3 / (3 * 4 * 2 * 4) * np.sum((r_sum - 3 * 4 / 2) ** 2)
    assert res.statistic == pytest.approx(durbin, rel=1e-10)


def test_blocks_with_one_model_drop_out_and_errors():
    t = sm_table()
    t.loc["b10"] = [np.nan, 4.0, np.nan, np.nan]           # one model: no ranking
    res = skillings_mack_test(t, higher_is_better=False)
    assert res.dropped == ("b10",) and res.n_datasets == 9
    assert res.statistic == pytest.approx(15.493049, abs=1e-6)
    assert "left out" in str(res)
    with pytest.raises(DataError, match="infinite"):
        skillings_mack_test(np.array([[1.0, np.inf], [2.0, 1.0]]))
    with pytest.raises(DataError, match="at least 2 scored models|no dataset"):
        skillings_mack_test(np.array([[1.0, np.nan], [np.nan, 1.0]]))


def test_incomplete_nemenyi_and_bonferroni_dunn():
    t = sm_table()
    nem = nemenyi_test(t, higher_is_better=False)
    a = nem.friedman.adjusted_rank_sums.to_numpy()
    s = nem.friedman.covariance.to_numpy()
    z01 = (a[0] - a[1]) / np.sqrt(s[0, 0] + s[1, 1] - 2 * s[0, 1])
    assert nem.statistics.iloc[0, 1] == pytest.approx(z01, rel=1e-10)
    p01 = stats.studentized_range.sf(np.sqrt(2) * abs(z01), 4, np.inf)
    assert nem.pvalues.iloc[0, 1] == pytest.approx(p01, rel=1e-4)
    assert (nem.significant.to_numpy() == (nem.pvalues.to_numpy() < 0.05)).all()
    frame = nem.to_frame()
    assert {"statistic", "pvalue_adjusted", "rank_biserial", "n"} <= set(frame)
    assert "missing cells (4" in str(nem) and nem.missing
    ctrl = bonferroni_dunn_test(t, control="A", higher_is_better=False)
    row = ctrl.comparisons.set_index("model").loc["D"]
    z = (a[3] - a[0]) / np.sqrt(s[3, 3] + s[0, 0] - 2 * s[3, 0])
    assert row["z"] == pytest.approx(z, rel=1e-10)
    assert row["pvalue_adjusted"] == pytest.approx(min(1, 3 * 2 * stats.norm.sf(abs(z))))
    assert row["n"] == 7 and "missing cells" in str(ctrl)


def test_complete_tables_keep_todays_numbers():
    rng = np.random.default_rng(5)
    t = pd.DataFrame(rng.normal(size=(12, 4)) + [0, 0.3, 0.6, 1.0], columns=list("wxyz"))
    nem = nemenyi_test(t)
    assert not nem.missing and nem.method == "Nemenyi post-hoc test"
    k, n = 4, 12
    r = nem.mean_ranks.to_numpy()
    se = np.sqrt(k * (k + 1) / (6 * n))
    q = np.sqrt(2) * abs(r[0] - r[3]) / se
    assert nem.pvalues.iloc[0, 3] == pytest.approx(
        stats.studentized_range.sf(q, k, np.inf), rel=1e-4)


def test_wilcoxon_holm_uses_each_pairs_complete_datasets():
    t = sm_table()
    res = wilcoxon_holm(t)
    row = res.set_index(["a", "b"]).loc[("A", "D")]
    both = t[["A", "D"]].dropna()
    ref = stats.wilcoxon(both["A"] - both["D"])
    assert row["n"] == len(both) == 7
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.attrs["missing"] and len(res.attrs["missing"]) == 4


def _null_size(k, n, share, reps, rng):
    rej = 0
    for _ in range(reps):
        t = rng.normal(size=(n, k))
        t[rng.random((n, k)) < share] = np.nan
        rej += skillings_mack_test(t).pvalue <= 0.05
    return rej / reps


def test_size_under_the_null_is_near_alpha():
    # property: calibration with 20% of the cells missing at random (400 tables: the size
    # lies within 0.05 +- 3 binomial SEs = +- 0.033)
    size = _null_size(4, 15, 0.2, 400, np.random.default_rng(11))
    assert abs(size - 0.05) < 0.033
