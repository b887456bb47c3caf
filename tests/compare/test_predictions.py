"""McNemar, Cochran's Q and Looney's F on hold-out predictions.

References: mlxtend 0.25.0 values in tests/reference/compare/comparison.json, and mlxtend's
``mcnemar``/``cochrans_q``/``ftest`` run on random tables (differential tests).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mlxtend.evaluate import cochrans_q, ftest, mcnemar
from scipy import stats

from replikit.compare._result import ComparisonResult
from replikit.compare.predictions import (
    PredictionTestResult,
    cochrans_q_test,
    cochrans_q_test_from_predictions,
    looney_ftest,
    looney_ftest_from_predictions,
    mcnemar_table,
    mcnemar_test,
    mcnemar_test_from_predictions,
    mcnemar_test_from_table,
)
from replikit.data import Predictions
from replikit.errors import DataError, ParameterError, ParameterTypeError

REF = json.loads((Path(__file__).parents[1] / "reference" / "compare" / "comparison.json")
                 .read_text())


def _predictions_at(indices, n=100):
    p = np.zeros(n, dtype=int)
    p[indices] = 1
    return p


@pytest.fixture
def cochran_case():
    ref = REF["cochran_q"]
    y = np.zeros(ref["y_true_zeros"], dtype=int)
    preds = [_predictions_at(ref[f"model_{j}_predicts_one_at"]) for j in (1, 2, 3)]
    return y, preds


# ---------------------------------------------------------------------------------------------
# McNemar: reference values
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("correction,key", [("edwards", "corrected"), ("none", "uncorrected")])
def test_mcnemar_chi2_reference(correction, key):
    ref = REF["mcnemar"]
    res = mcnemar_test_from_table(ref["table"], correction=correction)
    assert isinstance(res, ComparisonResult)
    assert res.statistic == pytest.approx(ref[key]["chi2"], rel=1e-6)
    assert res.pvalue == pytest.approx(ref[key]["p"], rel=1e-6)
    assert res.df == 1.0
    assert res.test == ("mcnemar_edwards" if correction == "edwards" else "mcnemar")


def test_mcnemar_exact_reference():
    ref = REF["mcnemar"]
    res = mcnemar_test_from_table(ref["table"], correction="exact")
    assert res.pvalue == pytest.approx(ref["exact"]["p"], rel=1e-6)
    assert res.statistic == 121 and res.test == "mcnemar_exact"


def test_mcnemar_estimate_and_wald_interval():
    ref = REF["mcnemar"]
    res = mcnemar_test_from_table(ref["table"], labels=("m1", "m2"))
    n, b, c = 314, 121, 59
    assert res.estimate == pytest.approx((b - c) / n)
    assert res.se == pytest.approx(math.sqrt(b + c - (b - c) ** 2 / n) / n)
    lo, hi = res.confidence_interval(0.95)
    z = stats.norm.ppf(0.975)
    assert (lo, hi) == pytest.approx((res.estimate - z * res.se, res.estimate + z * res.se))
    frame = res.to_frame()
    assert frame.loc[0, "a"] == "m1" and frame.loc[0, "ci_low"] == pytest.approx(lo)
    assert frame.loc[0, "requires"] == "hold-out predictions" and bool(frame.loc[0, "valid"])
    assert "McNemar" in str(res)


def test_mcnemar_from_arrays_equals_table(cochran_case):
    y, (m1, m2, _) = cochran_case
    table = mcnemar_table(y, m1, m2)
    assert table.tolist() == REF["cochran_q"]["mcnemar_table_m1_m2"]
    for correction in ("edwards", "none", "exact"):
        direct = mcnemar_test(y, m1, m2, correction=correction)
        via = mcnemar_test_from_table(table, correction=correction)
        assert direct.statistic == via.statistic and direct.pvalue == via.pvalue


# ---------------------------------------------------------------------------------------------
# McNemar: differential tests against mlxtend and edge cases
# ---------------------------------------------------------------------------------------------
tables = st.tuples(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))


@settings(max_examples=150, deadline=None)
@given(tables)
def test_mcnemar_matches_mlxtend(cells):
    n11, b, c, n00 = cells
    table = np.array([[n11, b], [c, n00]])
    if b + c == 0 or table.sum() == 0:
        return
    for correction, corrected, exact in (("edwards", True, False), ("none", False, False),
                                         ("exact", False, True)):
        chi2, p = mcnemar(table, corrected=corrected, exact=exact)
        res = mcnemar_test_from_table(table, correction=correction)
        if correction == "edwards" and b == c:
            # mlxtend applies the correction even when |b - c| = 0 (chi2 = 1/(b + c));
            # replikit, like R's mcnemar.test, never lets the correction overshoot: chi2 = 0
            assert res.statistic == 0.0 and res.pvalue == 1.0
            continue
        assert res.pvalue == pytest.approx(min(p, 1.0), rel=1e-10, abs=1e-300)
        if not exact:
            assert res.statistic == pytest.approx(chi2, rel=1e-12)


@pytest.mark.parametrize("correction", ["edwards", "none", "exact"])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_mcnemar_no_discordant_pairs(correction, alternative):
    res = mcnemar_test_from_table([[40, 0], [0, 10]], correction=correction,
                                  alternative=alternative)
    assert res.pvalue == 1.0
    assert res.estimate == 0.0 and res.se == 0.0
    assert "never disagree" in res.extra["note"]
    assert res.statistic == (0.0 if correction != "exact" else 0)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40))
def test_mcnemar_one_sided(b, c):
    if b + c == 0:
        return
    table = [[5, b], [c, 5]]
    # exact: b ~ Binomial(b + c, 1/2); 'greater' = model a more accurate
    g = mcnemar_test_from_table(table, correction="exact", alternative="greater").pvalue
    ls = mcnemar_test_from_table(table, correction="exact", alternative="less").pvalue
    two = mcnemar_test_from_table(table, correction="exact").pvalue
    assert g == pytest.approx(stats.binom.sf(b - 1, b + c, 0.5), rel=1e-12)
    assert ls == pytest.approx(stats.binom.cdf(b, b + c, 0.5), rel=1e-12)
    assert two == pytest.approx(min(1.0, 2 * min(g, ls)), rel=1e-12)
    # uncorrected: the one-sided z tails sum to one and double to the chi-square p-value
    zg = mcnemar_test_from_table(table, correction="none", alternative="greater")
    zl = mcnemar_test_from_table(table, correction="none", alternative="less")
    chi = mcnemar_test_from_table(table, correction="none")
    assert zg.pvalue + zl.pvalue == pytest.approx(1.0)
    assert chi.pvalue == pytest.approx(2 * min(zg.pvalue, zl.pvalue), rel=1e-9)
    assert zg.statistic == pytest.approx((b - c) / math.sqrt(b + c))
    # Edwards one-sided: the continuity correction is towards the null
    eg = mcnemar_test_from_table(table, alternative="greater")
    assert eg.statistic == pytest.approx((b - c - 1) / math.sqrt(b + c))
    assert eg.pvalue >= zg.pvalue


def test_mcnemar_string_labels_and_validation():
    y = np.array(["cat", "dog", "dog", "cat", "dog"])
    a = np.array(["cat", "dog", "cat", "cat", "dog"])
    b = np.array(["dog", "dog", "dog", "dog", "cat"])
    assert mcnemar_table(y, a, b).tolist() == [[1, 3], [1, 0]]
    with pytest.raises(DataError, match="same length"):
        mcnemar_test(y, a, b[:3])
    with pytest.raises(ParameterError, match="correction"):
        mcnemar_test(y, a, b, correction="yates")
    with pytest.raises(ParameterError, match="alternative"):
        mcnemar_test(y, a, b, alternative="bigger")
    with pytest.raises(DataError, match="2 x 2"):
        mcnemar_test_from_table([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(DataError, match="non-negative integer"):
        mcnemar_test_from_table([[1, -2], [3, 4]])
    with pytest.raises(DataError, match="missing"):
        mcnemar_test([0, 1, np.nan], [0, 1, 1], [1, 1, 0])


# ---------------------------------------------------------------------------------------------
# Cochran's Q and Looney's F
# ---------------------------------------------------------------------------------------------
def test_cochran_q_reference(cochran_case):
    y, preds = cochran_case
    ref = REF["cochran_q"]
    res = cochrans_q_test(y, *preds, labels=["m1", "m2", "m3"])
    assert isinstance(res, PredictionTestResult)
    assert res.statistic == pytest.approx(ref["q"], rel=1e-6)
    assert res.pvalue == pytest.approx(ref["q_p"], rel=1e-4)
    assert res.df == 2.0 and res.n == 100
    assert math.isnan(res.estimate) and math.isnan(res.confidence_interval().low)
    assert res.extra["accuracy"] == pytest.approx({"m1": 0.84, "m2": 0.92, "m3": 0.92})
    assert "m3: 0.92" in str(res)


def test_cochran_q_two_models_is_uncorrected_mcnemar(cochran_case):
    y, (m1, m2, _) = cochran_case
    ref = REF["cochran_q"]
    q = cochrans_q_test(y, m1, m2)
    assert q.statistic == pytest.approx(ref["q_m1_m2"], rel=1e-4)
    assert q.pvalue == pytest.approx(ref["q_m1_m2_p"], rel=1e-4)
    mc = mcnemar_test(y, m1, m2, correction="none")
    assert q.statistic == pytest.approx(mc.statistic, rel=1e-12)
    assert q.estimate == pytest.approx(mc.estimate) and q.se == pytest.approx(mc.se)


def test_looney_f_reference(cochran_case):
    y, preds = cochran_case
    ref = REF["cochran_q"]
    res = looney_ftest(y, *preds)
    assert res.statistic == pytest.approx(ref["looney_f"], rel=1e-6)
    assert (res.df, res.df2) == (2.0, 198.0)
    # Looney's (m - 1)(n - 1) denominator df; mlxtend's p (0.022376) uses (m - 1) n
    assert res.pvalue == pytest.approx(stats.f.sf(ref["looney_f"], 2, 198), rel=1e-5)
    assert stats.f.sf(res.statistic, 2, 200) == pytest.approx(ref["looney_f_p"], rel=1e-4)
    assert math.isnan(res.confidence_interval().low)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5), st.integers(5, 80))
@example(61, 3, 5)
def test_cochran_and_looney_match_mlxtend(seed, m, n):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    preds = [np.where(rng.uniform(size=n) < rng.uniform(0.3, 0.95), y, (y + 1) % 3)
             for _ in range(m)]
    ok = np.column_stack([p == y for p in preds])
    rows = ok.sum(axis=1)
    res_q = cochrans_q_test(y, *preds)
    res_f = looney_ftest(y, *preds)
    if np.all((rows == 0) | (rows == m)):  # no disagreement: Q undefined in mlxtend
        assert res_q.statistic == 0.0 and res_q.pvalue == 1.0
        return
    q, p = cochrans_q(y, *preds)
    assert res_q.statistic == pytest.approx(q, rel=1e-10)
    assert res_q.pvalue == pytest.approx(p, rel=1e-8, abs=1e-300)
    f, _ = ftest(y, *preds)
    if np.isinf(res_f.statistic):  # an exactly zero error sum of squares; mlxtend's float
        assert not np.isfinite(f) or f > 1e12  # residue leaves a huge finite F (seed 61)
    elif np.isfinite(f) and res_f.statistic > 0:
        assert res_f.statistic == pytest.approx(f, rel=1e-8)
        assert res_f.pvalue == pytest.approx(stats.f.sf(f, m - 1, (m - 1) * (n - 1)), rel=1e-8)


def test_cochran_no_disagreement_and_errors():
    y = np.array([0, 1, 1, 0])
    res = cochrans_q_test(y, y, y.copy(), y.copy())
    assert res.statistic == 0.0 and res.pvalue == 1.0
    assert looney_ftest(y, y, y.copy()).pvalue == 1.0
    with pytest.raises(ParameterError, match="at least 2"):
        cochrans_q_test(y, y)
    with pytest.raises(ParameterError, match="labels"):
        cochrans_q_test(y, y, y, labels=["only one"])


# ---------------------------------------------------------------------------------------------
# from a Predictions table
# ---------------------------------------------------------------------------------------------
def _predictions_frame(seed=0, n=60, models=("lr", "rf", "knn"), studies=("s",)):
    rng = np.random.default_rng(seed)
    rows = []
    for study in studies:
        y = rng.integers(0, 2, n)
        fold = np.arange(n) % 3
        for model in models:
            for rep in range(2):
                pred = np.where(rng.uniform(size=n) < 0.8, y, 1 - y)
                rows.append(pd.DataFrame({"study": study, "model": model, "repeat": rep,
                                          "fold": fold, "row": np.arange(n), "y_true": y,
                                          "y_pred": pred}))
    return pd.concat(rows, ignore_index=True)


def test_from_predictions_matches_arrays():
    frame = _predictions_frame()
    sub = frame[frame["repeat"] == 1]
    y = sub[sub.model == "lr"].sort_values(["fold", "row"])["y_true"].to_numpy()
    pa = sub[sub.model == "lr"].sort_values(["fold", "row"])["y_pred"].to_numpy()
    pb = sub[sub.model == "knn"].sort_values(["fold", "row"])["y_pred"].to_numpy()
    pc = sub[sub.model == "rf"].sort_values(["fold", "row"])["y_pred"].to_numpy()
    res = mcnemar_test_from_predictions(Predictions(frame), ["lr", "knn"], repeat=1)
    direct = mcnemar_test(y, pa, pb)
    assert res.statistic == direct.statistic and res.pvalue == direct.pvalue
    assert (res.a, res.b, res.n) == ("lr", "knn", 60)
    q = cochrans_q_test_from_predictions(frame, repeat=1)
    assert q.statistic == pytest.approx(cochrans_q_test(y, pa, pc, pb).statistic)
    f = looney_ftest_from_predictions(frame, ["lr", "rf", "knn"], repeat=1)
    assert f.statistic == pytest.approx(looney_ftest(y, pa, pc, pb).statistic)


def test_from_predictions_errors():
    frame = _predictions_frame(studies=("s1", "s2"))
    with pytest.raises(ParameterError, match="several studies"):
        mcnemar_test_from_predictions(frame, ["lr", "rf"])
    with pytest.raises(DataError, match=r"models present: \['lr', 'rf', 'knn'\]"):
        mcnemar_test_from_predictions(frame, ["lr", "svm"], study="s1")
    with pytest.raises(DataError, match="repeats present"):
        mcnemar_test_from_predictions(frame, ["lr", "rf"], study="s1", repeat=5)
    with pytest.raises(ParameterError, match="exactly two"):
        mcnemar_test_from_predictions(frame, ["lr", "rf", "knn"], study="s1")
    with pytest.raises(ParameterTypeError):
        cochrans_q_test_from_predictions(frame, "lr", study="s1")
    # a model lacking some test rows cannot be paired
    single = _predictions_frame()
    drop = single[~((single.model == "rf") & (single.row < 2))]
    with pytest.raises(DataError, match="same test rows"):
        mcnemar_test_from_predictions(drop, ["lr", "rf"])
