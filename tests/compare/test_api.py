"""compare_scores / compare_models: design-driven test choice, pairing, Holm families, the
table and its text, checked against mlxtend, baycomp, statsmodels and closed forms."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from replikit.compare import (
    TEST_IDS,
    TESTS,
    ComparisonTable,
    compare_models,
    compare_scores,
    primary_test,
    recommended_tests,
)
from replikit.errors import DataError, ParameterError, ParameterTypeError, ValidityWarning
from replikit.experiment import run


def _scores(r=10, k=10, models=("lr", "rf", "gb"), studies=("s1",), shift=None, seed=0,
            metric="accuracy", n=1000):
    """Synthetic scores with a shared split effect (so the pairs are correlated)."""
    rng = np.random.default_rng(seed)
    shift = shift or {"rf": 0.03}
    rows = []
    n_test = n // k if k > 1 else n // 3
    for s in studies:
        split = 0.02 * rng.normal(size=(r, k))
        for m in models:
            v = 0.8 + shift.get(m, 0.0) + split + 0.01 * rng.normal(size=(r, k))
            for i in range(r):
                for j in range(k):
                    rows.append({"study": s, "model": m, "repeat": i, "fold": j,
                                 "metric": metric, "value": v[i, j], "n_train": n - n_test,
                                 "n_test": n_test})
    return pd.DataFrame(rows)


def _corrected_t(d, ratio):
    d = np.ravel(d)
    t = d.mean() / np.sqrt((1 / d.size + ratio) * d.var(ddof=1))
    return t, 2 * stats.t.sf(abs(t), d.size - 1)


# ---- test choice follows the design ---------------------------------------------------------

def test_recommended_tests_per_design():
    assert recommended_tests(10, 10) == ["corrected_repeated_kfold_ttest",
                                         "bayesian_correlated_ttest"]
    assert recommended_tests(1, 10)[0] == "corrected_repeated_kfold_ttest"
    assert recommended_tests(30, 1)[0] == "corrected_resampled_ttest"
    assert recommended_tests(5, 2)[:2] == ["paired_ttest_5x2cv", "combined_ftest_5x2cv"]
    assert set(TEST_IDS) == set(TESTS)


@pytest.mark.parametrize("r, k, expected", [
    (10, 10, ["corrected_repeated_kfold_t", "bayesian_correlated_t"]),
    (20, 1, ["corrected_resampled_t", "bayesian_correlated_t"]),
    (5, 2, ["paired_t_5x2cv", "combined_f_5x2cv", "bayesian_correlated_t"]),
])
def test_recommended_by_scheme(r, k, expected):
    table = compare_scores(_scores(r, k, models=("lr", "rf")))
    assert list(table.frame["test"]) == expected
    assert table.frame["valid"].all()


def test_all_tests_on_10x10_lists_invalid_last_and_warns_once_per_test():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = compare_scores(_scores(), tests="all")
    validity = [w for w in caught if issubclass(w.category, ValidityWarning)]
    assert len(validity) == 2  # naive t and proportions z: once each, not once per pair
    assert all("3 comparisons" in str(w.message) for w in validity)
    f = table.frame
    assert set(f["test"]) == {"corrected_repeated_kfold_t", "sorted_runs_t",
                              "bayesian_correlated_t", "naive_paired_t", "proportions_z"}
    valid = f["valid"].to_numpy()
    assert valid[: valid.sum()].all() and not valid[valid.sum():].any()  # valid first
    text = str(table)
    bad_lines = [ln for ln in text.splitlines() if ln.startswith("!")]
    assert len(bad_lines) == 6 + 1  # 3 pairs x 2 invalid tests + the footnote
    assert "reference only" in bad_lines[-1] and "same test rows" in bad_lines[-1]
    assert len(table.notes) == 2


def test_all_tests_without_split_sizes_or_with_percentages():
    frame = _scores(models=("lr", "rf"))
    bare = frame.drop(columns=["n_train", "n_test"])  # k-fold: ratio 1/(k-1) is inferred
    with pytest.warns(ValidityWarning):
        table = compare_scores(bare, tests="all")
    assert "proportions_z" not in set(table.frame["test"])  # needs n_test: left out
    full = compare_scores(frame, tests=["corrected_repeated_kfold_ttest"]).frame
    kfold = table.frame.set_index("test").loc["corrected_repeated_kfold_t"]
    assert kfold.statistic == pytest.approx(full.statistic[0])  # 100/900 = 1/(10-1)
    # accuracies in percent are not accuracies: refused, the message says what to give
    percent = frame.assign(value=frame["value"] * 100)
    with pytest.raises(DataError, match=r"`value`.*'accuracy'.*\[0, 1\].*percentages"):
        compare_scores(percent, tests="all")


def test_named_test_that_does_not_fit_the_design_is_an_error():
    with pytest.raises(ParameterError, match="5x2"):
        compare_scores(_scores(), tests=["paired_ttest_5x2cv"])
    with pytest.raises(ParameterError, match="unknown test"):
        compare_scores(_scores(), tests=["wilcoxon"])
    with pytest.raises(ParameterError, match="`tolerance`: the equivalence test needs"):
        compare_scores(_scores(), tests=["equivalence_ttest"])
    # short ids work as names too
    with pytest.warns(ValidityWarning, match="raised for 3 comparisons"):
        t = compare_scores(_scores(), tests=["corrected_repeated_kfold_t", "naive_paired_ttest"])
    assert list(t.frame["test"].unique()) == ["corrected_repeated_kfold_t", "naive_paired_t"]


# ---- numbers against references -------------------------------------------------------------

def test_corrected_t_and_holm_match_closed_form_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    frame = _scores(models=("lr", "rf", "gb"), studies=("s1", "s2"))
    table = compare_scores(frame, tests=["corrected_repeated_kfold_ttest"], alternative="two-sided")
    f = table.frame
    assert len(f) == 6  # 2 studies x 3 pairs
    for row in f.itertuples():
        sub = frame[frame.study == row.study].sort_values(["repeat", "fold"])
        d = (sub[sub.model == row.a]["value"].to_numpy()
             - sub[sub.model == row.b]["value"].to_numpy())
        t, p = _corrected_t(d, 100 / 900)
        assert row.statistic == pytest.approx(t, rel=1e-12)
        assert row.pvalue == pytest.approx(p, rel=1e-10)
        assert row.estimate == pytest.approx(d.mean(), rel=1e-12)
        q = stats.t.ppf(0.975, 99)
        assert row.ci_low == pytest.approx(d.mean() - q * abs(d.mean() / t), rel=1e-9)
    holm = multipletests(f["pvalue"], method="holm")[1]
    np.testing.assert_allclose(f["pvalue_adjusted"], holm, rtol=1e-12)
    np.testing.assert_array_equal(f["reject"].to_numpy(bool), holm <= 0.05)
    bonf = compare_scores(frame, tests=["corrected_repeated_kfold_ttest"],
                          correction="bonferroni").frame
    np.testing.assert_allclose(bonf["pvalue_adjusted"], np.minimum(1, 6 * f["pvalue"]))
    none = compare_scores(frame, tests=["corrected_repeated_kfold_ttest"], correction=None)
    np.testing.assert_array_equal(none.frame["pvalue_adjusted"], f["pvalue"])


def test_holm_family_spans_metrics_within_each_test():
    f1 = _scores(models=("lr", "rf"), metric="accuracy", seed=1)
    f2 = _scores(models=("lr", "rf"), metric="roc_auc", seed=2)
    table = compare_scores(pd.concat([f1, f2]), tests="recommended")
    t = table.frame[table.frame["test"] == "corrected_repeated_kfold_t"]
    p = np.sort(t["pvalue"].to_numpy())
    expected = np.minimum(1, np.maximum.accumulate(p * [2, 1]))
    np.testing.assert_allclose(np.sort(t["pvalue_adjusted"].to_numpy()), expected)
    bayes = table.frame[table.frame["test"] == "bayesian_correlated_t"]
    assert bayes["pvalue"].isna().all() and bayes["reject"].isna().all()


def test_bayesian_row_matches_baycomp():
    import baycomp

    frame = _scores(models=("lr", "rf"), shift={"rf": 0.012})
    table = compare_scores(frame, "lr", "rf", tolerance=0.01)
    row = table.frame.set_index("test").loc["bayesian_correlated_t"]
    a = frame[frame.model == "lr"].sort_values(["repeat", "fold"])["value"].to_numpy()
    b = frame[frame.model == "rf"].sort_values(["repeat", "fold"])["value"].to_numpy()
    left, rope, right = baycomp.CorrelatedTTest.probs(b, a, rope=0.01, runs=10)
    assert (row.p_left, row.p_rope, row.p_right) == pytest.approx((left, rope, right),
                                                                  abs=1e-10)
    assert row.estimate == pytest.approx(np.mean(a - b))
    best = np.argmax([left, rope, right])
    expected = ("rf better" if best == 0 else "lr better" if best == 2
                else "practically equivalent")
    assert row.conclusion == (expected if max(left, rope, right) >= 0.95 else "undecided")


def test_5x2_end_to_end_matches_mlxtend_on_the_same_splits():
    """Feed replikit mlxtend's own 5x2 splits: t and F must agree with mlxtend exactly."""
    from mlxtend.evaluate import combined_ftest_5x2cv, paired_ttest_5x2cv

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:300], y[:300]
    lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)

    class MlxtendSplits:  # the splits mlxtend draws with random_seed=1
        def split(self, X, y=None, groups=None):
            rng = np.random.RandomState(1)
            for _ in range(5):
                i1, i2 = train_test_split(np.arange(len(X)), test_size=0.5,
                                          random_state=rng.randint(low=0, high=32767))
                yield i1, i2
                yield i2, i1

        def get_n_splits(self, X=None, y=None, groups=None):
            return 10

    res = run({"lr": lr, "tree": tree}, X, y, scheme=MlxtendSplits(), metrics="accuracy",
              random_state=0, return_predictions=False)
    frame = res.scores.frame.assign(repeat=lambda f: f["fold"] // 2, fold=lambda f: f["fold"] % 2)
    table = compare_scores(frame, "lr", "tree", tests=["paired_ttest_5x2cv",
                                                       "combined_ftest_5x2cv"])
    f = table.frame.set_index("test")
    t, p = paired_ttest_5x2cv(clone(lr), clone(tree), X, y, scoring="accuracy", random_seed=1)
    F, pf = combined_ftest_5x2cv(clone(lr), clone(tree), X, y, scoring="accuracy",
                                 random_seed=1)
    assert f.loc["paired_t_5x2cv", "statistic"] == pytest.approx(t, rel=1e-10)
    assert f.loc["paired_t_5x2cv", "pvalue"] == pytest.approx(p, rel=1e-8)
    assert f.loc["combined_f_5x2cv", "statistic"] == pytest.approx(F, rel=1e-10)
    assert f.loc["combined_f_5x2cv", "pvalue"] == pytest.approx(pf, rel=1e-8)
    assert f.loc["combined_f_5x2cv", "df"] == 10 and f.loc["combined_f_5x2cv", "df2"] == 5
    assert np.isnan(f.loc["combined_f_5x2cv", "ci_low"])


# ---- pairs, studies, options ----------------------------------------------------------------

def test_pairs_studies_and_selection():
    frame = _scores(models=("lr", "rf", "gb"), studies=("s1", "s2"))
    with pytest.warns(ValidityWarning):
        every = compare_scores(frame, tests=["naive_paired_ttest"])
    assert len(every) == 6
    one = compare_scores(frame, "rf", tests=["corrected_repeated_kfold_ttest"], study="s2")
    assert list(zip(one.frame["a"], one.frame["b"], strict=True)) == [("rf", "lr"), ("rf", "gb")]
    assert set(one.frame["study"]) == {"s2"}
    swapped = compare_scores(frame, "gb", "lr", tests=["corrected_repeated_kfold_ttest"],
                             study="s2").frame.iloc[0]
    direct = compare_scores(frame, "lr", "gb", tests=["corrected_repeated_kfold_ttest"],
                            study="s2").frame.iloc[0]
    assert swapped.estimate == pytest.approx(-direct.estimate)
    assert swapped.pvalue == pytest.approx(direct.pvalue)
    # the frame is tidy and the text mentions the study column only when there are several
    assert "study" in str(every).splitlines()[1]
    assert "study" not in str(one).splitlines()[1]


def test_alternative_and_conclusion_direction():
    frame = _scores(models=("lr", "rf"), shift={"rf": 0.04})
    two = compare_scores(frame, "rf", "lr", tests=["corrected_repeated_kfold_ttest"]).frame
    greater = compare_scores(frame, "rf", "lr", tests=["corrected_repeated_kfold_ttest"],
                             alternative="greater").frame
    assert greater.pvalue[0] == pytest.approx(two.pvalue[0] / 2)
    assert two.conclusion[0] == "rf better"
    # the combined F test has no direction: left out of one-sided comparisons on 5x2 CV
    five = compare_scores(_scores(5, 2, models=("lr", "rf")), alternative="greater")
    assert list(five.frame["test"]) == ["paired_t_5x2cv", "bayesian_correlated_t"]
    # for an error metric, lower is better: the same numbers favour the other model
    err = compare_scores(frame.assign(metric="error_rate"), "rf", "lr",
                         tests=["corrected_repeated_kfold_ttest"]).frame
    assert err.conclusion[0] == "lr better"


def test_tolerance_per_metric_and_equivalence():
    f1 = _scores(models=("lr", "rf"), metric="accuracy", shift={"rf": 0.0})
    f2 = _scores(models=("lr", "rf"), metric="mae", shift={"rf": 0.0}, seed=3)
    frame = pd.concat([f1, f2])
    wide = compare_scores(frame, tolerance={"accuracy": 0.5, "mae": 0.0})
    b = wide.frame[wide.frame["test"] == "bayesian_correlated_t"].set_index("metric")
    assert b.loc["accuracy", "p_rope"] > 0.999 and b.loc["mae", "p_rope"] == 0
    assert b.loc["accuracy", "conclusion"] == "practically equivalent"
    with pytest.raises(ParameterError, match="`tolerance`: a dict .* missing \\['mae'\\]"):
        compare_scores(frame, tolerance={"accuracy": 0.01})
    eq = compare_scores(f1, tolerance=0.05)
    assert "equivalence_tost" in set(eq.frame["test"])
    row = eq.frame.set_index("test").loc["equivalence_tost"]
    assert row.reject and row.conclusion == "equivalent within the tolerance"
    # a metric with a zero tolerance gets no equivalence test (nothing is equivalent within 0)
    assert set(wide.frame.loc[wide.frame["test"] == "equivalence_tost", "metric"]) == {
        "accuracy"}


def test_input_errors_name_what_is_wrong():
    frame = _scores(models=("lr", "rf"))
    with pytest.raises(DataError, match="models present: lr, rf"):
        compare_scores(frame, "lr", "svm")
    with pytest.raises(DataError, match="metrics present"):
        compare_scores(frame, metrics="r2")
    with pytest.raises(DataError, match="studies present"):
        compare_scores(frame, study="zz")
    with pytest.raises(ParameterError, match="different"):
        compare_scores(frame, "lr", "lr")
    with pytest.raises(ParameterError, match="correction"):
        compare_scores(frame, correction="fdr")
    with pytest.raises(ParameterTypeError, match="`simultaneous` must be True or False"):
        compare_scores(frame, simultaneous="bonferroni")
    with pytest.raises(DataError, match="one model"):
        compare_scores(frame[frame.model == "lr"])
    broken = frame.drop(frame.index[(frame.model == "rf") & (frame.repeat == 3)
                                    & (frame.fold == 7)])
    with pytest.raises(DataError, match="same splits"):
        compare_scores(broken)


# ---- the table object -----------------------------------------------------------------------

def test_table_object():
    table = compare_scores(_scores())
    assert isinstance(table, ComparisonTable)
    out = table.to_frame()
    out.loc[0, "estimate"] = 99.0
    assert table.frame.loc[0, "estimate"] != 99.0
    sig = table.significant
    assert set(sig["test"]) <= {"corrected_repeated_kfold_t"} and sig["valid"].all()
    assert {"a", "b", "metric", "test", "method", "estimate", "se", "ci_low", "ci_high",
            "statistic", "df", "pvalue", "pvalue_adjusted", "reject", "valid", "requires",
            "n"} <= set(out.columns)
    text = str(table)
    assert text.startswith("Model comparisons") and "Holm-adjusted" in text
    assert "P(<,=,>)" in text
    ax = table.plot()
    assert len(ax.get_yticklabels()) == len(table)
    two = compare_scores(pd.concat([_scores(models=("lr", "rf")),
                                    _scores(models=("lr", "rf"), metric="r2")]))
    with pytest.raises(ParameterError, match="several metrics"):
        two.plot()
    assert two.plot(metric="r2").get_xlabel() == "mean difference a − b (R²)"


def test_compare_models_runs_once_and_equals_compare_scores():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200], y[:200]
    models = {"lr": make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
              "dummy": DummyClassifier()}
    table = compare_models(models, X, y, scheme="5x2", metrics=["accuracy", "roc_auc"],
                           random_state=3)
    assert table.scores is not None and len(table.scores) == 2 * 10 * 2
    again = compare_scores(table.scores, tests="recommended")
    pd.testing.assert_frame_equal(table.frame, again.frame)
    direct = run(models, X, y, scheme="5x2", metrics=["accuracy", "roc_auc"], random_state=3,
                 return_predictions=False)
    pd.testing.assert_frame_equal(direct.scores.frame, table.scores.frame)
    assert set(table.frame["metric"]) == {"accuracy", "roc_auc"}
    lr_better = table.frame[table.frame["test"] == "paired_t_5x2cv"]
    assert (lr_better["estimate"] > 0).all()
    # default metric by task
    default = compare_models(models, X, y, scheme="holdout:0.3x5", random_state=0)
    assert set(default.frame["metric"]) == {"accuracy"}
    assert default.frame["test"].iloc[0] == "corrected_resampled_t"
    with pytest.raises(ParameterError, match="at least two"):
        compare_models({"lr": models["lr"]}, X, y)


# ---- intervals beside adjusted p-values ------------------------------------------------------

def test_primary_test_per_design():
    assert primary_test(10, 10) == "corrected_repeated_kfold_ttest"
    assert primary_test(3, 7) == "corrected_repeated_kfold_ttest"
    assert primary_test(100, 1) == "corrected_resampled_ttest"
    assert primary_test(5, 2) == "combined_ftest_5x2cv"  # all ten differences, not d_11
    for r, k in ((10, 10), (100, 1), (5, 2)):
        assert primary_test(r, k) in recommended_tests(r, k)


def test_marginal_and_simultaneous_intervals():
    frame = pd.concat([_scores(), _scores(metric="roc_auc", seed=1)])
    marg = compare_scores(frame)
    sim = compare_scores(frame, simultaneous=True)
    assert marg.simultaneous is False and sim.simultaneous is True
    # the tests themselves do not change, only the frequentist intervals
    same = ["estimate", "se", "statistic", "pvalue", "pvalue_adjusted", "p_left", "p_rope"]
    pd.testing.assert_frame_equal(marg.frame[same], sim.frame[same])
    t = sim.frame["test"] == "corrected_repeated_kfold_t"
    m = int(t.sum())
    assert m == 6  # 3 pairs x 2 metrics: the Holm family
    f = sim.frame[t]
    q = stats.t.ppf(1 - 0.05 / (2 * m), f["df"])
    np.testing.assert_allclose(f["ci_high"] - f["estimate"], q * f["se"], rtol=1e-10)
    np.testing.assert_allclose(f["ci_level"], 1 - 0.05 / m)
    np.testing.assert_allclose(marg.frame.loc[t, "ci_level"], 0.95)
    assert (f["ci_high"] - f["ci_low"] > (marg.frame.loc[t, "ci_high"]
                                          - marg.frame.loc[t, "ci_low"])).all()
    bayes = sim.frame["test"] == "bayesian_correlated_t"
    pd.testing.assert_frame_equal(sim.frame.loc[bayes, ["ci_low", "ci_high", "ci_level"]],
                                  marg.frame.loc[bayes, ["ci_low", "ci_high", "ci_level"]])
    assert "95% simult. CI" in str(sim) and "each interval at 99.17%" in str(sim)
    assert "95% CI" in str(marg) and "simult." not in str(marg)
    # F rows have no interval, hence no level; a family of one keeps the marginal level
    five = compare_scores(_scores(r=5, k=2, models=("lr", "rf")), simultaneous=True)
    f5 = five.frame.set_index("test")
    assert np.isnan(f5.loc["combined_f_5x2cv", "ci_level"])
    assert f5.loc["paired_t_5x2cv", "ci_level"] == 0.95
