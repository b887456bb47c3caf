"""replikit.multistudy.conjunction: partial-conjunction p-values against hand computations of
Benjamini & Heller's (2008) formulas, BH against statsmodels, r-values against the saved output
of the R package radjust's example (Heller, Bogomolov & Benjamini 2014), and a simulation of
the partial conjunction's level."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from replikit.errors import DataError, ParameterError
from replikit.multistudy.conjunction import (
    bh_adjust,
    partial_conjunction,
    r_values,
    replicated_in,
    study_pvalues,
)

DATA = Path(__file__).parent / "data"


def test_partial_conjunction_by_hand():
    p = [0.3, 0.01, 0.02]          # sorted: 0.01, 0.02, 0.3
    # u = 2: the K − u + 1 = 2 largest, 0.02 and 0.3
    x = -2 * (np.log(0.02) + np.log(0.3))
    fisher = np.exp(-x / 2) * (1 + x / 2)     # χ²_4 survival function in closed form
    assert partial_conjunction(p, 2, method="fisher") == pytest.approx(fisher, rel=1e-12)
    z = (stats.norm.isf(0.02) + stats.norm.isf(0.3)) / np.sqrt(2)
    assert partial_conjunction(p, 2, method="stouffer") == pytest.approx(stats.norm.sf(z))
    assert partial_conjunction(p, 2, method="simes") == pytest.approx(min(2 * 0.02, 0.3))
    assert partial_conjunction(p, 2, method="bonferroni") == pytest.approx(0.04)
    # u = K: the conjunction is the largest p-value for every combination
    for m in ("fisher", "stouffer", "simes", "bonferroni"):
        assert partial_conjunction(p, 3, method=m) == pytest.approx(0.3)
    # u = 1: the global null — Fisher's and Simes' classical tests
    x = -2 * np.log([0.01, 0.02, 0.3]).sum()
    assert partial_conjunction(p, 1) == pytest.approx(stats.chi2.sf(x, 6))
    assert partial_conjunction(p, 1, method="simes") == pytest.approx(min(3 * 0.01, 1.5 * 0.02,
                                                                         0.3))
    # vectorised: rows are findings, columns values of u
    P = np.array([p, [0.5, 0.5, 0.5]])
    out = partial_conjunction(P, [1, 2, 3], method="simes")
    assert out.shape == (2, 3) and out[0, 1] == pytest.approx(0.04) and out[1, 2] == 0.5


def test_partial_conjunction_holds_its_level_under_the_least_favourable_null():
    # H^{2/3} true: one study has an effect (p near 0), the other two are null (uniform)
    rng = np.random.default_rng(0)
    R = 20000
    P = np.column_stack([np.full(R, 1e-12), rng.random((R, 2))])
    for m in ("fisher", "stouffer", "simes", "bonferroni"):
        size = (partial_conjunction(P, 2, method=m) <= 0.05).mean()
        assert size <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / R), m


def test_bh_matches_statsmodels():
    rng = np.random.default_rng(1)
    p = rng.random(40) ** 3
    ref = multipletests(p, method="fdr_bh")[1]
    np.testing.assert_allclose(bh_adjust(p), ref, rtol=1e-12)


def test_r_values_match_radjust_example():
    # radjust's example: radjust_pf(pv1 = crohn$pv1, pv2 = crohn$pv1, m = 635547, l00 = 0.8),
    # the r-values the package saves for its own test (Heller et al. 2014, Crohn's GWAS)
    ref = pd.read_csv(DATA / "radjust_crohn_example.csv")
    p = ref["pvalue_original"].to_numpy()
    rv = r_values(p, p, n_features=635547, null_fraction=0.8)
    np.testing.assert_allclose(rv, ref["rvalue"], rtol=1e-8)


def test_r_values_by_hand_without_null_fraction():
    # l00 = 0: c1 = 1 − c2, E_i = max(m p1 / c1, R p2 / c2), BH-type step-up on E
    p1, p2, m = np.array([1e-6, 1e-5, 1e-3]), np.array([0.001, 0.04, 0.2]), 1000
    E = np.maximum(m * p1 / 0.5, 3 * p2 / 0.5)          # 0.006, 0.24, 2.0
    assert E.tolist() == pytest.approx([0.006, 0.24, 2.0])
    ref = [min(E[0] / 1, E[1] / 2, 1), min(E[1] / 2, 1), min(E[2] / 3, 1)]
    np.testing.assert_allclose(r_values(p1, p2, n_features=m), ref)
    general = r_values(p1, p2, n_features=m, dependence="general")
    assert (general >= r_values(p1, p2, n_features=m)).all()
    with pytest.raises(ParameterError, match="n_features"):
        r_values(p1, p2, n_features=2)
    with pytest.raises(DataError, match="equal length"):
        r_values(p1, p2[:2], n_features=m)


def test_replicated_in_counts_and_fdr():
    t = pd.DataFrame({"study": ["s1", "s2", "s3", "s4"] * 3,
                      "finding": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
                      "pvalue": [1e-4, 2e-4, 1e-3, 0.6,
                                 0.001, 0.5, 0.7, 0.9,
                                 0.4, 0.5, 0.6, 0.7]})
    r = replicated_in(t, method="simes", alpha=0.05)
    tab = r.table.set_index("finding")
    assert tab.loc["a", "replicated_in"] == 3 and tab.loc["c", "replicated_in"] == 0
    # by hand: finding a at u = 3 combines 1e-3 and 0.6 (Simes: min(2 · 1e-3, 0.6))
    assert tab.loc["a", "pvalue_u3"] == pytest.approx(2e-3)
    # BH across the three findings at u = 1
    raw = tab["pvalue_u1"].to_numpy()
    np.testing.assert_allclose(tab["adjusted_u1"], multipletests(raw, method="fdr_bh")[1])
    # monotone in u
    pcs = tab[[f"pvalue_u{u}" for u in range(1, 5)]].to_numpy()
    assert (np.diff(pcs, axis=1) >= 0).all()
    assert "a: in at least 3 of 4 studies" in str(r)


def test_replicated_in_from_scores():
    rng = np.random.default_rng(2)
    rows = []
    for s in range(4):
        for fold in range(10):
            base = rng.normal(0.8, 0.01)
            for model, shift in (("lr", 0.03 if s < 3 else -0.01), ("rf", 0.0)):
                rows.append({"study": f"s{s}", "model": model, "repeat": 0, "fold": fold,
                             "metric": "accuracy", "value": base + shift
                             + rng.normal(0, 0.005), "n_train": 90, "n_test": 10})
    scores = pd.DataFrame(rows)
    sp = study_pvalues(scores)
    # by hand for study s0: the corrected resampled t-test (Nadeau & Bengio 2003)
    g = scores[scores.study == "s0"].pivot(index="fold", columns="model", values="value")
    d = (g["lr"] - g["rf"]).to_numpy()
    t = d.mean() / np.sqrt((1 / 10 + 10 / 90) * d.var(ddof=1))
    got = sp.query("study == 's0' and finding == 'lr beats rf'")["pvalue"].iloc[0]
    assert got == pytest.approx(stats.t.sf(t, 9))
    r = replicated_in(scores)
    tab = r.table.set_index("finding")
    assert tab.loc["lr beats rf", "replicated_in"] == 3
    assert tab.loc["rf beats lr", "replicated_in"] == 0


def test_errors():
    with pytest.raises(ParameterError, match="u"):
        partial_conjunction([0.1, 0.2], 3)
    with pytest.raises(DataError, match="p-values"):
        partial_conjunction([0.1, 1.2], 1)
    with pytest.raises(ParameterError, match="method"):
        partial_conjunction([0.1, 0.2], 1, method="tippett")
    with pytest.raises(DataError, match="pvalue"):
        replicated_in(pd.DataFrame({"study": ["a"], "finding": ["x"]}))
    with pytest.raises(DataError, match="twice"):
        replicated_in(pd.DataFrame({"study": ["a", "a"], "finding": ["x", "x"],
                                    "pvalue": [0.1, 0.2]}))
