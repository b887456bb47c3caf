"""Tests of two models on resampled scores (replikit.compare.resampled; Gardner & Brooks 2017).

References: Gardner & Brooks (2017), Table 3 (corrected 10x10 cv p-values from published means and SDs);
baycomp's CorrelatedTTest on real 10x10 cv accuracies; mlxtend's 5x2cv t and F on the same
splits; scipy/statsmodels for the naive t and the pooled proportions z; R TOSTER for the TOST.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.compare import _kernels as K
from replikit.compare import resampled
from replikit.compare._pairing import Paired
from replikit.compare._result import FRAME_COLUMNS, BayesianResult, ComparisonResult
from replikit.compare.resampled import (
    NAIVE_T_WARNING,
    PROPORTIONS_Z_WARNING,
    bayesian_correlated_ttest,
    combined_ftest_5x2cv,
    corrected_repeated_kfold_ttest,
    corrected_resampled_ttest,
    corrected_ttest_from_stats,
    equivalence_test_from_stats,
    equivalence_ttest,
    naive_paired_ttest,
    paired_ttest_5x2cv,
    proportions_ztest,
    sorted_runs_ttest,
)
from replikit.errors import DataError, ParameterError, ValidityWarning

REF = Path(__file__).parents[1] / "reference" / "compare"


def _design(r=10, k=10, *, shift=0.01, seed=0, n_train=900, n_test=100, **kw):
    """Correlated CV-like scores: a run effect, a fold effect shared by both models, noise."""
    rng = np.random.default_rng(seed)
    base = 0.8 + 0.02 * rng.standard_normal((r, 1)) + 0.03 * rng.standard_normal((r, k))
    a = base + shift + 0.02 * rng.standard_normal((r, k))
    b = base + 0.02 * rng.standard_normal((r, k))
    return Paired(a, b, n_train=n_train, n_test=n_test, a="A", b="B", metric="accuracy", **kw)


def _frame(p: Paired, study="s"):
    r, k = p.shape
    rows = []
    for name, mat in ((p.a, p.a_scores), (p.b, p.b_scores)):
        rep, fold = np.meshgrid(np.arange(r), np.arange(k), indexing="ij")
        rows.append(pd.DataFrame({"study": study, "model": name, "repeat": rep.ravel(),
                                  "fold": fold.ravel(), "metric": p.metric,
                                  "value": mat.ravel(), "n_train": p.n_train.ravel(),
                                  "n_test": p.n_test.ravel()}))
    return pd.concat(rows, ignore_index=True).astype({"n_train": int, "n_test": int})


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ValidityWarning)
        return fn(*args, **kw)


# ---------------------------------------------------------------------------------------------
# Gardner & Brooks (2017), Table 3


def test_seed_table3_corrected_pvalues():
    ref = json.loads((REF / "seed002_table3.json").read_text())
    h = 5e-7  # the printed means and SDs are rounded to the 6th decimal
    for metric, row in ref["rows"].items():
        res = corrected_ttest_from_stats(row["mean_difference"], row["sd_difference"],
                                         ref["n"], ref["ratio"], metric=metric)
        assert res.df == 99
        # the paper's p lies in the range the rounding of its inputs allows ...
        ps = [corrected_ttest_from_stats(row["mean_difference"] + dm, row["sd_difference"] + ds,
                                         ref["n"], ref["ratio"]).pvalue
              for dm in (-h, h) for ds in (-h, h)]
        assert min(ps) <= row["p_corrected"] <= max(ps), metric
        # ... and replikit's p from the printed values is within that rounding of it:
        # 4e-5 relative for AUC (5 significant digits), 1.3e-3 for specificity and 6e-3 for
        # accuracy (3 significant digits in its mean 0.000382 and SD 0.000641)
        tol = {"auc": 1e-4, "specificity": 2e-3, "accuracy": 1e-2}[metric]
        assert res.pvalue == pytest.approx(row["p_corrected"], rel=tol), metric
        assert res.pvalue == pytest.approx(
            2 * stats.t.sf(abs(row["mean_difference"]) / row["sd_difference"]
                           / np.sqrt(1 / 100 + 1 / 9), 99), rel=1e-12)


def test_from_stats_equals_test_on_scores():
    p = _design(seed=3)
    res = corrected_repeated_kfold_ttest(p)
    d = p.d.ravel()
    again = corrected_ttest_from_stats(d.mean(), d.std(ddof=1), d.size, 100 / 900)
    assert again.statistic == pytest.approx(res.statistic, rel=1e-12)
    assert again.pvalue == pytest.approx(res.pvalue, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# baycomp: Bayesian correlated t-test on real 10x10 cv accuracies


def _baycomp_data():
    data, name = {}, None
    for line in (REF / "baycomp_accuracies.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 1:
            name = parts[0]
            data[name] = []
        elif parts:
            data[name].append((parts[0], np.array(parts[1:], dtype=float)))
    return data


BAYCOMP_CASES = [("nbc", "aode", 0), ("nbc", "hnb", 5), ("j48", "j48gr", 9),
                 ("aode", "hnb", 17), ("hnb", "j48", 24), ("nbc", "j48", 33),
                 ("aode", "j48gr", 41), ("j48", "nbc", 50)]


@pytest.mark.parametrize("rope", [0.0, 0.5, 1.0])
def test_bayesian_matches_baycomp(rope):
    baycomp = pytest.importorskip("baycomp")
    data = _baycomp_data()
    assert {len(v) for v in data.values()} == {54}
    for ca, cb, i in BAYCOMP_CASES:
        dataset, acc_a = data[ca][i]
        _, acc_b = data[cb][i]
        p = Paired(acc_a.reshape(10, 10), acc_b.reshape(10, 10), a=ca, b=cb, metric="acc%")
        res = bayesian_correlated_ttest(p, tolerance=rope)  # rope in percentage points
        # baycomp's diff is y - x: pass a as y and b as x to get a - b
        ref = baycomp.CorrelatedTTest(acc_b, acc_a, rope=rope, runs=10).probs()
        if rope == 0:
            assert res.p_rope == 0.0
            assert (res.p_left, res.p_right) == pytest.approx(ref, abs=1e-9), dataset
        else:
            assert (res.p_left, res.p_rope, res.p_right) == pytest.approx(ref, abs=1e-9), dataset
        assert res.p_left + res.p_rope + res.p_right == pytest.approx(1.0, abs=1e-12)
        assert res.extra["ratio"] == 1 / 9  # inferred from k = 10 folds: sizes not recorded


def test_baycomp_probabilities_give_the_corrected_kfold_pvalue():
    baycomp = pytest.importorskip("baycomp")
    data = _baycomp_data()
    for ca, cb, i in BAYCOMP_CASES:
        _, acc_a = data[ca][i]
        _, acc_b = data[cb][i]
        p = Paired(acc_a.reshape(10, 10), acc_b.reshape(10, 10))
        p_left, p_right = baycomp.CorrelatedTTest(acc_b, acc_a, rope=0, runs=10).probs()
        res = corrected_repeated_kfold_ttest(p)
        assert res.pvalue == pytest.approx(2 * min(p_left, p_right), rel=1e-9, abs=1e-12)
        bayes = bayesian_correlated_ttest(p, tolerance=0)
        assert res.pvalue == pytest.approx(2 * min(bayes.p_left, bayes.p_right),
                                           rel=1e-9, abs=1e-12)


def test_bayesian_rope_in_metric_units_and_point_mass():
    p = _design(seed=4)
    res = bayesian_correlated_ttest(p, tolerance=0.005)
    scaled = Paired(100 * p.a_scores, 100 * p.b_scores, p.n_train, p.n_test)
    res100 = bayesian_correlated_ttest(scaled, tolerance=0.5)
    assert (res.p_left, res.p_rope, res.p_right) == pytest.approx(
        (res100.p_left, res100.p_rope, res100.p_right), abs=1e-12)
    assert res.scale == pytest.approx(
        np.sqrt((1 / 100 + 100 / 900) * p.d.var(ddof=1)), rel=1e-12)
    wider = bayesian_correlated_ttest(p, tolerance=0.02)
    assert wider.p_rope > res.p_rope
    ci = res.confidence_interval(0.9)
    assert res.posterior().cdf(ci.high) == pytest.approx(0.95, abs=1e-10)
    frame = res.to_frame()
    assert list(frame.columns[:3]) == ["test", "method", "a"]
    assert "P(equivalent)" in str(res)
    # all differences equal: the posterior is a point mass (as in baycomp), no crash
    const = Paired(p.b_scores + 0.01, p.b_scores)
    pm = bayesian_correlated_ttest(const, tolerance=0.005)
    assert (pm.p_left, pm.p_rope, pm.p_right) == (0.0, 0.0, 1.0) and pm.scale == 0.0
    assert bayesian_correlated_ttest(const, tolerance=0.02).p_rope == 1.0
    same = bayesian_correlated_ttest(Paired(p.b_scores, p.b_scores), tolerance=0)
    assert (same.p_left, same.p_right) == (0.5, 0.5)
    with pytest.raises(ParameterError, match="`tolerance`"):
        bayesian_correlated_ttest(p, tolerance=-0.1)


# ---------------------------------------------------------------------------------------------
# mlxtend: 5x2cv t and F on the same splits


def _mlxtend_splits(n, random_seed):
    """The splits mlxtend's paired_ttest_5x2cv/combined_ftest_5x2cv draw (read from its source):
    a RandomState(random_seed) draws randint(0, 32767) per repeat, which seeds
    train_test_split(test_size=0.5); fold 0 trains on the first half, fold 1 on the second."""
    from sklearn.model_selection import train_test_split

    rng = np.random.RandomState(random_seed)
    for _ in range(5):
        seed = rng.randint(low=0, high=32767)
        first, second = train_test_split(np.arange(n), test_size=0.5, random_state=seed)
        yield [(first, second), (second, first)]


@pytest.mark.parametrize("random_seed", [1, 123])
def test_5x2cv_matches_mlxtend_on_the_same_splits(random_seed):
    pytest.importorskip("mlxtend")
    from mlxtend.evaluate import combined_ftest_5x2cv as ml_f
    from mlxtend.evaluate import paired_ttest_5x2cv as ml_t
    from sklearn.base import clone
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(n_samples=300, n_features=8, flip_y=0.1, random_state=7)
    est_a, est_b = LogisticRegression(), DecisionTreeClassifier(random_state=0)
    rows = []
    for rep, folds in enumerate(_mlxtend_splits(len(y), random_seed)):
        for fold, (train, test) in enumerate(folds):
            for name, est in (("lr", est_a), ("tree", est_b)):
                fitted = clone(est).fit(X[train], y[train])
                rows.append({"study": "s", "model": name, "repeat": rep, "fold": fold,
                             "metric": "accuracy", "value": fitted.score(X[test], y[test]),
                             "n_train": len(train), "n_test": len(test)})
    scores = pd.DataFrame(rows)
    t_ref, pt_ref = ml_t(clone(est_a), clone(est_b), X, y, random_seed=random_seed)
    f_ref, pf_ref = ml_f(clone(est_a), clone(est_b), X, y, random_seed=random_seed)
    t = paired_ttest_5x2cv(scores, "lr", "tree")
    f = combined_ftest_5x2cv(scores, "lr", "tree")
    assert t.statistic == pytest.approx(t_ref, abs=1e-10)
    assert t.pvalue == pytest.approx(pt_ref, abs=1e-10)
    assert f.statistic == pytest.approx(f_ref, abs=1e-10)
    assert f.pvalue == pytest.approx(pf_ref, abs=1e-10)
    assert (t.df, f.df, f.df2, t.n) == (5.0, 10.0, 5.0, 10)


def test_5x2cv_through_the_runner():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    from replikit.experiment import run

    X, y = make_classification(n_samples=200, n_features=6, random_state=2)
    res = run({"lr": LogisticRegression(), "nb": GaussianNB()}, X, y, scheme="5x2",
              metrics=["accuracy"], random_state=0)
    t = paired_ttest_5x2cv(res, "lr", "nb")
    f = res.scores.frame
    d = (f[f.model == "lr"].sort_values(["repeat", "fold"])["value"].to_numpy()
         - f[f.model == "nb"].sort_values(["repeat", "fold"])["value"].to_numpy()).reshape(5, 2)
    s2 = ((d - d.mean(1, keepdims=True)) ** 2).sum(1)
    assert t.statistic == pytest.approx(d[0, 0] / np.sqrt(s2.mean()), rel=1e-12)
    assert t.extra["d11"] == d[0, 0] and t.estimate == pytest.approx(d.mean())
    assert combined_ftest_5x2cv(res, "lr", "nb").statistic == pytest.approx(
        (d ** 2).sum() / (2 * s2.sum()), rel=1e-12)


def test_5x2_needs_5x2_and_f_is_two_sided():
    p = _design()
    with pytest.raises(DataError, match=r"5 repeats of 2-fold.*10 repeat\(s\) x 10 fold"):
        paired_ttest_5x2cv(p)
    five = _design(5, 2, n_train=50, n_test=50)
    with pytest.raises(ParameterError, match="'two-sided'"):
        combined_ftest_5x2cv(five, alternative="greater")
    f = combined_ftest_5x2cv(five)
    ci = f.confidence_interval()
    assert np.isnan(ci.low) and np.isnan(ci.high)
    row = f.to_frame()
    assert np.isnan(row.loc[0, "ci_low"]) and row.loc[0, "df2"] == 5.0
    assert "df = (10, 5)" in str(f)


# ---------------------------------------------------------------------------------------------
# the corrected t-tests


def test_corrected_tests_closed_form():
    p = _design(seed=5)
    d = p.d.ravel()
    se = np.sqrt((1 / 100 + 100 / 900) * d.var(ddof=1))
    for fn in (corrected_repeated_kfold_ttest, corrected_resampled_ttest):
        res = fn(p)
        assert res.se == pytest.approx(se, rel=1e-14)
        assert res.statistic == pytest.approx(d.mean() / se, rel=1e-14)
        assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(d.mean() / se), 99), rel=1e-12)
        assert res.df == 99 and res.n == 100 and res.valid
        lo, hi = res.confidence_interval(0.9)
        q = stats.t.ppf(0.95, 99)
        assert (lo, hi) == pytest.approx((d.mean() - q * se, d.mean() + q * se), rel=1e-12)
    assert corrected_repeated_kfold_ttest(p).requires == "repeated k-fold"
    assert corrected_resampled_ttest(p).requires == "any resampling"


def test_ratio_from_recorded_sizes_given_or_inferred():
    # 10-fold cv of 23,537 rows: folds of 2,353 or 2,354 rows; mean(n_test)/mean(n_train) = 1/9
    sizes = np.array([2354] * 7 + [2353] * 3)
    p = _design(n_train=np.tile(23537 - sizes, (10, 1)), n_test=np.tile(sizes, (10, 1)))
    res = corrected_repeated_kfold_ttest(p)
    assert res.extra["ratio"] == pytest.approx(1 / 9, rel=1e-14)
    assert res.extra["ratio_source"] == "recorded split sizes"
    no_sizes = Paired(p.a_scores, p.b_scores)
    inferred = corrected_repeated_kfold_ttest(no_sizes)
    assert inferred.extra["ratio"] == 1 / 9 and "1/(k-1)" in inferred.extra["ratio_source"]
    assert inferred.pvalue == pytest.approx(res.pvalue, rel=1e-9)
    with pytest.raises(DataError, match="ratio n_test/n_train"):
        corrected_resampled_ttest(Paired(p.a_scores[:, :1], p.b_scores[:, :1]))
    given = corrected_resampled_ttest(Paired(p.a_scores[:, :1], p.b_scores[:, :1]), ratio=0.5)
    assert given.extra["ratio"] == 0.5 and given.n == 10
    with pytest.raises(ParameterError, match="k >= 2 folds.*corrected_resampled_ttest"):
        corrected_repeated_kfold_ttest(Paired(p.a_scores[:, :1], p.b_scores[:, :1]), ratio=0.5)
    with pytest.raises(DataError, match="at least 2 splits"):
        corrected_resampled_ttest(Paired([[0.8]], [[0.7]]), ratio=0.5)


def test_scores_table_entry_point_and_result_frame():
    p = _design(seed=6)
    frame = _frame(p)
    res = corrected_repeated_kfold_ttest(frame, "A", "B", metric="accuracy")
    assert res.statistic == corrected_repeated_kfold_ttest(p).statistic
    assert (res.a, res.b, res.metric) == ("A", "B", "accuracy")
    row = res.to_frame()
    assert tuple(row.columns) == FRAME_COLUMNS
    assert row.loc[0, "test"] == "corrected_repeated_kfold_t" and bool(row.loc[0, "valid"])
    text = str(res)
    assert "A - B (accuracy)" in text and "Bouckaert & Frank" in text
    assert isinstance(res, ComparisonResult) and isinstance(res.pvalue, float)


# ---------------------------------------------------------------------------------------------
# sorted runs


def _sorted_runs_reference(sa, sb, sort):
    r, k = sa.shape
    if sort == "learner":
        pa = [np.mean([sorted(sa[i])[j] for i in range(r)]) for j in range(k)]
        pb = [np.mean([sorted(sb[i])[j] for i in range(r)]) for j in range(k)]
        return stats.ttest_rel(pa, pb), np.subtract(pa, pb)
    x = [np.mean([sorted(sa[i] - sb[i])[j] for i in range(r)]) for j in range(k)]
    return stats.ttest_1samp(x, 0.0), np.array(x)


@pytest.mark.parametrize("sort", ["learner", "difference"])
@pytest.mark.parametrize("shape", [(10, 10), (5, 4)])
def test_sorted_runs_matches_scipy_on_the_sorted_sample(sort, shape):
    p = _design(*shape, seed=7)
    res = _quiet(sorted_runs_ttest, p, sort=sort)
    ref, x = _sorted_runs_reference(p.a_scores, p.b_scores, sort)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.df == shape[1] - 1 and res.n == shape[1]
    np.testing.assert_allclose(res.extra["sample"], x, rtol=1e-12)
    # both readings keep the mean of all r*k differences as the numerator
    assert res.estimate == pytest.approx(p.d.mean(), rel=1e-12)
    assert res.extra["sort"] == sort


def test_sorted_runs_by_learner_is_flagged_invalid():
    # the literal reading rejects ~77% under the null in the calibration simulation
    p = _design(seed=11)
    with pytest.warns(ValidityWarning, match="sort='learner'"):
        res = sorted_runs_ttest(p, sort="learner")
    assert res.valid is False
    assert sorted_runs_ttest(p, sort="difference").valid is True


def test_sorted_runs_default_sorts_differences():
    p = _design(seed=10)
    res = sorted_runs_ttest(p)
    assert res.extra["sort"] == "difference"
    assert res.statistic == sorted_runs_ttest(p, sort="difference").statistic
    assert "sort='difference'" in res.method


def test_sorted_runs_needs_runs_and_folds():
    with pytest.raises(DataError, match="r >= 2 runs"):
        sorted_runs_ttest(_design(1, 10))
    with pytest.raises(ParameterError, match="`sort`"):
        sorted_runs_ttest(_design(), sort="fold")


# ---------------------------------------------------------------------------------------------
# invalid tests


def test_naive_t_is_scipy_ttest_rel_and_warns():
    p = _design(seed=8)
    with pytest.warns(ValidityWarning, match="overlap") as rec:
        res = naive_paired_ttest(p, alternative="greater")
    msg = str(rec[0].message)
    assert "Dietterich 1998" in msg and "Nadeau & Bengio 2003" in msg
    assert "underestimates the variance" in msg
    ref = stats.ttest_rel(p.a_scores.ravel(), p.b_scores.ravel(), alternative="greater")
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert not res.valid and res.extra["warning"] == NAIVE_T_WARNING
    assert "INVALID" in str(res)


@pytest.mark.parametrize("alternative,sm_alt", [("two-sided", "two-sided"),
                                                ("less", "smaller"), ("greater", "larger")])
def test_proportions_z_matches_statsmodels_and_warns(alternative, sm_alt):
    from statsmodels.stats.proportion import proportions_ztest as sm_ztest

    # one hold-out split of 300 test rows: error rates 0.20 and 0.25
    p = Paired([[0.20]], [[0.25]], n_train=700, n_test=300, metric="error_rate")
    with pytest.warns(ValidityWarning, match="same test examples") as rec:
        res = proportions_ztest(p, alternative=alternative)
    assert "Dietterich 1998" in str(rec[0].message)
    z, pv = sm_ztest([60, 75], [300, 300], alternative=sm_alt)
    assert res.statistic == pytest.approx(z, rel=1e-12)
    assert res.pvalue == pytest.approx(pv, rel=1e-10)
    assert res.df is None and res.n == 300 and not res.valid
    assert res.extra["warning"] == PROPORTIONS_Z_WARNING


def test_proportions_z_on_kfold_counts_each_row_once_per_repeat():
    p = _design(3, 10, n_train=900, n_test=100)  # 3 repeats of 10-fold cv on 1,000 rows
    res = _quiet(proportions_ztest, p)
    assert res.n == 1000
    pa, pb = p.a_scores.mean(), p.b_scores.mean()
    assert res.statistic == pytest.approx(K.z_proportions(pa, pb, 1000), rel=1e-14)
    # accuracy or error rate: the same test, sign flipped
    err = Paired(1 - p.a_scores, 1 - p.b_scores, p.n_train, p.n_test, metric="error_rate")
    assert _quiet(proportions_ztest, err).statistic == pytest.approx(-res.statistic, rel=1e-10)


def test_proportions_z_input_checks():
    with pytest.raises(ParameterError, match="accuracy or error-rate"):
        _quiet(proportions_ztest, Paired([[0.7]], [[0.6]], 10, 10, metric="roc_auc"))
    with pytest.raises(ParameterError, match="percentages"):
        _quiet(proportions_ztest, Paired([[70.0]], [[60.0]], 10, 10, metric="accuracy"))
    with pytest.raises(DataError, match="n_test"):
        _quiet(proportions_ztest, Paired([[0.7]], [[0.6]], metric="accuracy"))
    res = _quiet(proportions_ztest, Paired([[0.7]], [[0.6]], metric="accuracy"), n_test=50)
    assert res.n == 50


# ---------------------------------------------------------------------------------------------
# equivalence


def test_tost_matches_toster():
    ref = json.loads((REF / "tost_toster.json").read_text())
    inp = ref["input"]
    res = equivalence_test_from_stats(inp["estimate"], inp["se"], bounds=inp["bounds"])
    assert res.extra["statistic_lower"] == pytest.approx(ref["z_lower"], abs=1e-4)
    assert res.extra["statistic_upper"] == pytest.approx(ref["z_upper"], abs=1e-4)
    assert res.extra["pvalue_lower"] == pytest.approx(ref["p_lower"], abs=1e-6)
    assert res.extra["pvalue_upper"] == pytest.approx(ref["p_upper"], abs=1e-6)
    assert res.pvalue == pytest.approx(ref["p_upper"], abs=1e-6)
    ci = res.confidence_interval(1 - 2 * inp["alpha"])
    assert (ci.low, ci.high) == pytest.approx(ref["ci90"], abs=1e-6)
    same = equivalence_test_from_stats(inp["estimate"], inp["se"], tolerance=0.2, df=np.inf)
    assert same.pvalue == res.pvalue


def test_equivalence_with_corrected_variance():
    p = _design(seed=9, shift=0.002)
    kfold = corrected_repeated_kfold_ttest(p)
    for margin in (0.005, 0.01, 0.03):
        res = equivalence_ttest(p, tolerance=margin)
        assert res.se == kfold.se and res.df == 99
        ref = equivalence_test_from_stats(kfold.estimate, kfold.se, df=99, tolerance=margin)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
        # TOST at 5% <=> the 90% interval lies inside the bounds
        lo, hi = res.confidence_interval(0.90)
        assert (res.pvalue < 0.05) == (-margin < lo and hi < margin)
        p_lo = stats.t.sf((kfold.estimate + margin) / kfold.se, 99)
        p_hi = stats.t.cdf((kfold.estimate - margin) / kfold.se, 99)
        assert res.pvalue == pytest.approx(max(p_lo, p_hi), rel=1e-10)
        ni = equivalence_ttest(p, tolerance=margin, alternative="greater")
        assert ni.pvalue == pytest.approx(p_lo, rel=1e-10)
    asym = equivalence_ttest(p, bounds=(-0.01, 0.02))
    assert asym.extra["bounds"] == (-0.01, 0.02)
    assert equivalence_ttest(p, tolerance=0.03).pvalue < 0.05 < equivalence_ttest(
        p, tolerance=0.001).pvalue
    with pytest.raises(ParameterError, match="exactly one of `tolerance`"):
        equivalence_ttest(p, tolerance=0.01, bounds=(-0.01, 0.01))
    with pytest.raises(ParameterError, match="exactly one of `tolerance`"):
        equivalence_ttest(p)
    with pytest.raises(ParameterError, match="low < high"):
        equivalence_ttest(p, bounds=(0.01, -0.01))
    with pytest.raises(ParameterError, match="> 0"):
        equivalence_ttest(p, tolerance=-0.01)


# ---------------------------------------------------------------------------------------------
# kernels == per-pair functions, exactly


def test_kernels_agree_exactly_with_per_pair_functions():
    n_pairs = 40
    pairs = [_design(10, 10, seed=s, shift=0.003 * (s % 5)) for s in range(n_pairs)]
    da = np.stack([p.a_scores for p in pairs])
    db = np.stack([p.b_scores for p in pairs])
    d = (da - db).reshape(n_pairs, 100)
    ratios = np.full(n_pairs, 100 / 900)
    t, se, df = K.t_corrected(d, ratios)
    tn, sen, _ = K.t_naive(d)
    ts, ses, dfs = K.t_sorted_runs(da, db, "learner")
    tsd, _, _ = K.t_sorted_runs(da, db, "difference")
    for i, p in enumerate(pairs):
        res = corrected_repeated_kfold_ttest(p)
        assert (res.statistic, res.se, res.df) == (t[i], se[i], df[i])
        naive = _quiet(naive_paired_ttest, p)
        assert (naive.statistic, naive.se) == (tn[i], sen[i])
        sr = _quiet(sorted_runs_ttest, p, sort="learner")
        assert (sr.statistic, sr.se, sr.df) == (ts[i], ses[i], dfs[i])
        assert sorted_runs_ttest(p).statistic == tsd[i]  # default: sort='difference'
    five = [_design(5, 2, seed=s, n_train=50, n_test=50) for s in range(n_pairs)]
    d52 = np.stack([p.d for p in five])
    t5, se5, _ = K.t_5x2(d52)
    f5, df1, df2 = K.f_5x2(d52)
    for i, p in enumerate(five):
        res = paired_ttest_5x2cv(p)
        assert (res.statistic, res.se) == (t5[i], se5[i])
        assert combined_ftest_5x2cv(p).statistic == f5[i]
    assert set(df1) == {10.0} and set(df2) == {5.0}
    ea = np.stack([p.a_scores.mean() for p in pairs])
    eb = np.stack([p.b_scores.mean() for p in pairs])
    z = K.z_proportions(ea, eb, 1000.0)
    for i, p in enumerate(pairs):
        assert _quiet(proportions_ztest, p).statistic == z[i]
    with pytest.raises(ValueError, match=r"\(\.\.\., 5, 2\)"):
        K.t_5x2(d)


# ---------------------------------------------------------------------------------------------
# properties


ALL_T = [corrected_resampled_ttest, corrected_repeated_kfold_ttest, sorted_runs_ttest,
         naive_paired_ttest]


@pytest.mark.parametrize("seed", range(6))
def test_properties(seed):
    p = _design(10, 10, seed=seed, shift=0.004 * (seed - 2))
    q = p.swap()
    for fn in ALL_T:
        res, rev = _quiet(fn, p), _quiet(fn, q)
        assert 0.0 <= res.pvalue <= 1.0
        assert rev.statistic == pytest.approx(-res.statistic, rel=1e-12)
        assert rev.pvalue == pytest.approx(res.pvalue, rel=1e-10)
        assert res.estimate in res.confidence_interval()
        less = _quiet(fn, p, alternative="less").pvalue
        greater = _quiet(fn, p, alternative="greater").pvalue
        assert less + greater == pytest.approx(1.0, abs=1e-12)
        assert min(less, greater) == pytest.approx(res.pvalue / 2, rel=1e-10)
        # a one-sided CI at the same level is half-open on the other side
        assert np.isinf(_quiet(fn, p, alternative="greater").confidence_interval().high)
    naive = _quiet(naive_paired_ttest, p)
    corrected = corrected_repeated_kfold_ttest(p)
    assert corrected.se >= naive.se
    assert corrected.pvalue >= naive.pvalue
    # two-sided: p < alpha exactly when the (1 - alpha) CI excludes 0
    for alpha in (0.01, 0.05, 0.2):
        ci = corrected.confidence_interval(1 - alpha)
        assert (corrected.pvalue < alpha) == (0 not in ci)
    five = _design(5, 2, seed=seed, n_train=50, n_test=50, shift=0.01)
    for fn in (paired_ttest_5x2cv, combined_ftest_5x2cv):
        res, rev = fn(five), fn(five.swap())
        assert 0.0 <= res.pvalue <= 1.0 and rev.pvalue == pytest.approx(res.pvalue, rel=1e-12)
    t5 = paired_ttest_5x2cv(five)
    assert t5.estimate in t5.confidence_interval()


def test_more_splits_do_not_shrink_the_corrected_se_to_zero():
    # the naive SE falls like 1/sqrt(n); the corrected one is bounded below by sqrt(ratio) s
    big = _design(100, 10, seed=11)
    naive = _quiet(naive_paired_ttest, big)
    corrected = corrected_repeated_kfold_ttest(big)
    s = big.d.std(ddof=1)
    assert naive.se == pytest.approx(s / np.sqrt(1000))
    assert corrected.se > np.sqrt(1 / 9) * s > 5 * naive.se


def test_zero_variance_is_handled_without_warnings():
    base = _design(seed=12).b_scores
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from 0/0 either
        shifted = Paired(np.full((10, 10), 0.81), np.full((10, 10), 0.80), 900, 100)
        res = corrected_repeated_kfold_ttest(shifted)
        assert res.statistic == np.inf and res.pvalue == 0.0 and res.se == 0.0
        assert "zero variance" in res.extra["note"] and "zero variance" in str(res)
        assert corrected_repeated_kfold_ttest(shifted, alternative="less").pvalue == 1.0
        same = Paired(base, base, 900, 100)
        res0 = corrected_repeated_kfold_ttest(same)
        assert np.isnan(res0.statistic) and np.isnan(res0.pvalue) and res0.estimate == 0.0
        for fn in (sorted_runs_ttest, resampled.corrected_resampled_ttest):
            assert np.isnan(fn(same).pvalue)
        tost = equivalence_ttest(shifted, tolerance=0.02)
        assert tost.pvalue == 0.0  # a constant difference of 0.01 lies inside +-0.02
        assert equivalence_ttest(shifted, tolerance=0.005).pvalue == 1.0
        frame = res.to_frame()
        assert frame.loc[0, "ci_low"] == frame.loc[0, "ci_high"] == res.estimate
        assert res.estimate == pytest.approx(0.01)
    five = Paired(np.full((5, 2), 0.8), np.full((5, 2), 0.8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(paired_ttest_5x2cv(five).pvalue)
        assert np.isnan(combined_ftest_5x2cv(five).pvalue)


def test_bayesian_result_type():
    res = bayesian_correlated_ttest(_design(seed=13))
    assert isinstance(res, BayesianResult)
    assert res.tolerance == 0.01 and res.df == 99 and res.n == 100
    with pytest.raises(AttributeError):
        res.p_left = 0.5  # frozen
