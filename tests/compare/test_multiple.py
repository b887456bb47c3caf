"""Multiple comparisons: Holm/Bonferroni/Hochberg, Friedman + Iman-Davenport, Nemenyi, Wilcoxon-Holm.

References: Demšar (2006) Tables 2, 5a, 6 and section 3.2.2 (tests/reference/compare/
demsar2006.json), the Nemenyi CDs of comparison.json, scipy.stats.friedmanchisquare,
scipy.stats.wilcoxon and statsmodels' multipletests.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from replikit.compare.multiple import (
    FriedmanResult,
    NemenyiResult,
    adjust_pvalues,
    critical_difference,
    friedman_test,
    nemenyi_test,
    scores_to_table,
    wilcoxon_holm,
)
from replikit.data import Scores
from replikit.errors import DataError, ParameterError, ParameterTypeError

REF = Path(__file__).parents[1] / "reference" / "compare"
DEMSAR = json.loads((REF / "demsar2006.json").read_text())
COMPARISON = json.loads((REF / "comparison.json").read_text())


@pytest.fixture
def auc() -> pd.DataFrame:
    return pd.DataFrame(DEMSAR["auc"], index=DEMSAR["datasets"], columns=DEMSAR["models"])


@pytest.fixture
def printed_ranks() -> pd.DataFrame:
    return pd.DataFrame(DEMSAR["printed_ranks"], index=DEMSAR["datasets"],
                        columns=DEMSAR["models"])


# ---------------------------------------------------------------------------------------------
# adjust_pvalues
# ---------------------------------------------------------------------------------------------
_SM = {"holm": "holm", "bonferroni": "bonferroni", "hochberg": "simes-hochberg"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30),
       st.sampled_from(sorted(_SM)))
def test_adjust_matches_statsmodels(pvals, correction):
    p = np.array(pvals)
    expected = multipletests(p, method=_SM[correction])[1]
    np.testing.assert_allclose(adjust_pvalues(p, correction=correction), expected, rtol=0, atol=1e-12)


def test_adjust_demsar_holm_example():
    # Demšar (2006) section 3.2.2: Holm rejects the first two of p = 0.016, 0.019, 0.607
    ref = DEMSAR["holm_vs_control"]
    adj = adjust_pvalues(ref["pvalues"], correction="holm")
    np.testing.assert_allclose(adj, [0.048, 0.048, 0.607])
    assert (adj <= 0.05).tolist() == ref["rejected_at_005"]


def test_adjust_keeps_shape_and_skips_nan():
    p = np.array([[0.01, np.nan], [0.04, 0.03]])
    adj = adjust_pvalues(p, correction="holm")
    assert adj.shape == (2, 2)
    assert np.isnan(adj[0, 1])
    # the family is the three finite values
    np.testing.assert_allclose(adj[~np.isnan(p)], [0.03, 0.06, 0.06])
    np.testing.assert_allclose(adjust_pvalues([0.2, np.nan], correction="bonferroni")[0], 0.2)


def test_adjust_orders_hold():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=50) ** 3
    bonf = adjust_pvalues(p, correction="bonferroni")
    holm = adjust_pvalues(p, correction="holm")
    hoch = adjust_pvalues(p, correction="hochberg")
    assert np.all(p <= hoch + 1e-15) and np.all(hoch <= holm + 1e-15)
    assert np.all(holm <= bonf + 1e-15)


def test_adjust_rejects_bad_input():
    with pytest.raises(DataError, match="pvalues"):
        adjust_pvalues([0.5, 1.2])
    with pytest.raises(ParameterError, match="correction"):
        adjust_pvalues([0.5], correction="fdr")


# ---------------------------------------------------------------------------------------------
# Friedman
# ---------------------------------------------------------------------------------------------
def test_friedman_demsar_table6(printed_ranks):
    res = friedman_test(printed_ranks, higher_is_better=False, tie_correction=False)
    assert isinstance(res, FriedmanResult)
    np.testing.assert_allclose(res.mean_ranks.to_numpy(), DEMSAR["mean_ranks"], atol=5e-4)
    assert res.statistic == pytest.approx(DEMSAR["chi2_F"], abs=5e-3)
    assert res.f_statistic == pytest.approx(DEMSAR["F_F"], abs=5e-3)
    assert res.f_df == tuple(DEMSAR["F_df"])
    assert res.df == 3
    # Demšar: F(3, 39) critical value at 0.05 is 2.85, so the null is rejected
    assert res.f_pvalue < 0.05
    assert res.f_pvalue == pytest.approx(stats.f.sf(res.f_statistic, 3, 39), rel=1e-12)


def test_friedman_rounded_auc_ranks_ties(auc, printed_ranks):
    # the rounded AUCs tie on 'voting' where the paper ranked 2 and 3
    res = friedman_test(auc, tie_correction=False)
    assert res.ranks.loc["voting"].tolist() == [4.0, 1.0, 2.5, 2.5]
    other = res.ranks.drop(index="voting")
    np.testing.assert_array_equal(other.to_numpy(), printed_ranks.drop(index="voting").to_numpy())


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 15), st.integers(3, 7), st.integers(0, 2**32 - 1), st.booleans())
def test_friedman_matches_scipy(n, k, seed, coarse):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k))
    if coarse:  # many ties
        x = np.round(x)
    expected = stats.friedmanchisquare(*x.T)
    res = friedman_test(x)
    if not np.isfinite(expected.statistic):  # every row tied: scipy gives nan
        assert res.statistic == 0.0 and res.pvalue == 1.0
        return
    assert res.statistic == pytest.approx(expected.statistic, rel=1e-12, abs=1e-12)
    assert res.pvalue == pytest.approx(expected.pvalue, rel=1e-10, abs=1e-14)


def test_friedman_higher_is_better_false_flips_ranks(auc):
    up = friedman_test(auc)
    down = friedman_test(-auc, higher_is_better=False)
    pd.testing.assert_series_equal(up.mean_ranks, down.mean_ranks)
    assert up.statistic == down.statistic
    k = auc.shape[1]
    assert up.mean_ranks.sum() == pytest.approx(k * (k + 1) / 2)


def test_friedman_perfect_agreement_and_all_ties():
    x = np.tile([3.0, 2.0, 1.0], (6, 1))
    res = friedman_test(x)
    assert res.statistic == pytest.approx(2 * 6)  # N (k - 1)
    assert res.f_statistic == np.inf and res.f_pvalue == 0.0
    tied = friedman_test(np.ones((5, 3)))
    assert tied.statistic == 0.0 and tied.pvalue == 1.0


def test_friedman_outputs(auc):
    res = friedman_test(auc)
    frame = res.to_frame()
    assert frame.shape[0] == 1
    assert {"statistic", "pvalue", "f_statistic", "f_pvalue", "f_df1", "f_df2"} <= set(frame)
    text = str(res)
    assert "chi2_F" in text and "C4.5+m+cf" in text


def test_friedman_input_errors(auc):
    bad = auc.copy()
    bad.iloc[2, 1] = np.inf  # a NaN cell is a missing score (Skillings-Mack); inf is an error
    with pytest.raises(DataError, match="breast cancer wisconsin"):
        friedman_test(bad)
    with pytest.raises(DataError, match="at least 2 models"):
        friedman_test(auc[["C4.5"]])
    with pytest.raises(DataError, match="at least 2 datasets"):
        friedman_test(auc.iloc[:1])
    with pytest.raises(ParameterTypeError):
        friedman_test("table")
    with pytest.raises(DataError, match="two-dimensional"):
        friedman_test(np.ones(5))


# ---------------------------------------------------------------------------------------------
# Nemenyi and the critical difference
# ---------------------------------------------------------------------------------------------
def test_critical_difference_reference():
    ref = COMPARISON["nemenyi_critical_distance"]
    assert critical_difference(4, 14, alpha=ref["alpha"]) == pytest.approx(ref["k4_N14"], abs=2e-5)
    assert critical_difference(5, 30, alpha=ref["alpha"]) == pytest.approx(ref["k5_N30"], abs=5e-5)
    assert critical_difference(4, 14) == pytest.approx(DEMSAR["cd_005"], abs=5e-3)
    assert critical_difference(4, 14, alpha=0.10) == pytest.approx(DEMSAR["cd_010"], abs=5e-3)


@pytest.mark.parametrize("alpha,key", [(0.05, "nemenyi_q_005"), (0.10, "nemenyi_q_010")])
def test_critical_difference_demsar_table5a(alpha, key):
    # CD with N chosen so that sqrt(k(k+1)/(6N)) = 1 would need N non-integer; divide instead
    for k, q in DEMSAR[key].items():
        k = int(k)
        cd = critical_difference(k, 10, alpha=alpha)
        assert cd / np.sqrt(k * (k + 1) / 60.0) == pytest.approx(q, abs=1.5e-3)


def test_critical_difference_errors():
    with pytest.raises(ParameterError, match="`k`"):
        critical_difference(1, 10)
    with pytest.raises(ParameterError, match="`alpha`"):
        critical_difference(3, 10, alpha=1.5)


def test_nemenyi_demsar_decisions(printed_ranks):
    at05 = nemenyi_test(printed_ranks, higher_is_better=False, tie_correction=False)
    assert isinstance(at05, NemenyiResult)
    assert not at05.significant.to_numpy().any()  # "not powerful enough"
    assert at05.cliques() == [tuple(DEMSAR["models"][i] for i in (3, 1, 2, 0))]
    at10 = nemenyi_test(printed_ranks, alpha=0.10, higher_is_better=False, tie_correction=False)
    sig = {tuple(sorted(p)) for p in DEMSAR["significant_010"]}
    found = {tuple(sorted((a, b))) for a, b in combinations(DEMSAR["models"], 2)
             if at10.significant.loc[a, b]}
    assert found == sig
    assert [list(g) for g in at10.cliques()] == DEMSAR["groups_010"]


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 25), st.integers(2, 8), st.integers(0, 2**32 - 1),
       st.sampled_from([0.01, 0.05, 0.1]))
def test_nemenyi_decision_is_rank_difference_over_cd(n, k, seed, alpha):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k)) + np.linspace(0, 1.5, k)
    res = nemenyi_test(x, alpha=alpha)
    r = res.mean_ranks.to_numpy()
    diff = np.abs(r[:, None] - r[None, :])
    cd = critical_difference(k, n, alpha=alpha)
    assert res.critical_distance == pytest.approx(cd)
    np.testing.assert_array_equal(res.significant.to_numpy(), diff > cd + 1e-12)
    # the pairwise p-values agree with the decisions (away from the boundary)
    p = res.pvalues.to_numpy()
    clear = np.abs(diff - cd) > 1e-6
    np.testing.assert_array_equal((p < alpha)[clear], (diff > cd)[clear])
    # every model of a clique is within CD of every other; cliques are maximal runs
    order = list(res.mean_ranks.sort_values(kind="stable").index)
    for group in res.cliques():
        ranks = res.mean_ranks[list(group)]
        assert ranks.max() - ranks.min() <= cd + 1e-12
        lo, hi = order.index(group[0]), order.index(group[-1])
        assert list(group) == order[lo:hi + 1]
        if hi + 1 < len(order):
            assert res.mean_ranks[order[hi + 1]] - res.mean_ranks[group[0]] > cd


def test_nemenyi_pvalue_closed_form_for_two_models():
    # k = 2: the studentized range of two normals / sqrt(2) is |z|, so p = 2 (1 - Phi(z))
    x = np.column_stack([np.arange(12.0), np.arange(12.0) + np.r_[np.ones(9), -np.ones(3)]])
    res = nemenyi_test(x)
    r = res.mean_ranks.to_numpy()
    z = abs(r[0] - r[1]) / np.sqrt(2 * 3 / (6 * 12))
    assert res.pvalues.iloc[0, 1] == pytest.approx(2 * stats.norm.sf(z), rel=1e-6)


def test_nemenyi_outputs(auc):
    res = nemenyi_test(auc, alpha=0.10)
    frame = res.to_frame()
    assert len(frame) == 6
    assert {"a", "b", "rank_difference", "pvalue", "significant"} <= set(frame)
    assert "critical difference" in str(res)
    assert res.friedman.n_datasets == 14


# ---------------------------------------------------------------------------------------------
# Wilcoxon-Holm
# ---------------------------------------------------------------------------------------------
def test_wilcoxon_demsar_table2(auc):
    # Demšar section 3.1.3: C4.5 vs C4.5+m, zeros split evenly: R+ = 93, R- = 12, T = 12 <= 21
    res = wilcoxon_holm(auc[["C4.5", "C4.5+m"]])
    ref = DEMSAR["wilcoxon_c45_vs_c45m"]
    row = res.iloc[0]
    assert row["statistic"] == ref["T"]
    assert row["statistic"] <= ref["critical_T_005_N14"] and row["pvalue"] < 0.05
    assert (row["wins"], row["losses"], row["ties"]) == (2, 10, 2)


def test_wilcoxon_holm_matches_scipy_and_statsmodels(auc):
    res = wilcoxon_holm(auc, zero_method="wilcox")
    pairs = list(combinations(auc.columns, 2))
    assert list(zip(res["a"], res["b"], strict=True)) == pairs
    pvals = [stats.wilcoxon(auc[a] - auc[b], zero_method="wilcox").pvalue for a, b in pairs]
    np.testing.assert_allclose(res["pvalue"], pvals, rtol=1e-12)
    np.testing.assert_allclose(res["pvalue_adjusted"], multipletests(pvals, method="holm")[1],
                               rtol=1e-12)
    assert (res["significant"] == (res["pvalue_adjusted"] <= 0.05)).all()


def test_wilcoxon_exact_small_sample_closed_form():
    # 6 datasets, a always better, distinct differences: exact two-sided p = 2 / 2^6
    t = pd.DataFrame({"a": [0.91, 0.82, 0.73, 0.94, 0.75, 0.96],
                      "b": [0.90, 0.80, 0.70, 0.90, 0.70, 0.90]})
    res = wilcoxon_holm(t)
    assert res.loc[0, "pvalue"] == pytest.approx(2 / 64)
    greater = wilcoxon_holm(t, alternative="greater")
    assert greater.loc[0, "pvalue"] == pytest.approx(1 / 64)


def test_wilcoxon_identical_models_p_one():
    t = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [0.1, 0.2, 0.3], "c": [0.3, 0.4, 0.5]})
    res = wilcoxon_holm(t)
    row = res[(res["a"] == "a") & (res["b"] == "b")].iloc[0]
    assert row["pvalue"] == 1.0 and row["ties"] == 3


# ---------------------------------------------------------------------------------------------
# scores_to_table
# ---------------------------------------------------------------------------------------------
def _scores_frame() -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(0)
    for study in ["s1", "s2", "s3"]:
        for model in ["lr", "rf"]:
            for rep in range(2):
                for fold in range(3):
                    for metric in ["accuracy", "auc"]:
                        rows.append({"study": study, "model": model, "repeat": rep,
                                     "fold": fold, "metric": metric,
                                     "value": float(rng.uniform())})
    return pd.DataFrame(rows)


def test_scores_to_table_means():
    frame = _scores_frame()
    table = scores_to_table(Scores(frame), metric="auc")
    assert list(table.index) == ["s1", "s2", "s3"] and list(table.columns) == ["lr", "rf"]
    sub = frame[(frame.study == "s2") & (frame.model == "rf") & (frame.metric == "auc")]
    assert table.loc["s2", "rf"] == pytest.approx(sub["value"].mean())
    # feeds the Friedman test directly
    assert friedman_test(table).n_datasets == 3


def test_scores_to_table_by_factor_and_errors():
    frame = _scores_frame()
    frame["dataset"] = frame["study"].map({"s1": "d1", "s2": "d1", "s3": "d2"})
    table = scores_to_table(frame, metric="accuracy", by="dataset")
    assert list(table.index) == ["d1", "d2"]
    with pytest.raises(ParameterError, match="several metrics"):
        scores_to_table(frame)
    with pytest.raises(ParameterError, match="not in the scores"):
        scores_to_table(frame, metric="f1")
    with pytest.raises(ParameterError, match="`by`"):
        scores_to_table(frame, metric="auc", by="site")
    with pytest.raises(ParameterTypeError):
        scores_to_table([1, 2, 3], metric="auc")


def test_wilcoxon_demsar_zero_rule():
    # an odd number of zero differences: Demšar ignores one, then splits the others' ranks
    d = np.array([0.0, 0.0, 0.0, 0.05, 0.02, -0.01, 0.04, 0.03, 0.06, -0.02])
    t = pd.DataFrame({"a": d, "b": np.zeros(d.size)})
    res = wilcoxon_holm(t)
    expected = stats.wilcoxon(d[1:], zero_method="zsplit")
    assert res.loc[0, "statistic"] == expected.statistic
    assert res.loc[0, "pvalue"] == pytest.approx(expected.pvalue, rel=1e-12)
    split = wilcoxon_holm(t, zero_method="zsplit")
    assert split.loc[0, "pvalue"] == pytest.approx(
        stats.wilcoxon(d, zero_method="zsplit").pvalue, rel=1e-12)
