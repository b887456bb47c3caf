"""The audit's comparison from per-fold scores, out-of-fold predictions and a benchmark table.

References: the section's numbers must EQUAL compare_scores on the same scores with the same
options (the shipped mlr3 and Weka exports read with read_scores); the data entry and the
scores entry must give the same numbers on the same scores; the tests that need the
test-to-training ratio are skipped when the scheme is unknown; the exact Wilcoxon path equals
scipy.stats.wilcoxon; the lights follow the documented rule.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import replikit
from replikit.compare import audit_scores, compare_benchmark, compare_scores
from replikit.data import Scores
from replikit.data.examples import score_export
from replikit.data.foreign import read_scores
from replikit.errors import ParameterError, ValidityWarning

BENCHMARK = "src/replikit/data/_files/benchmark_demsar2006_auc.csv"


def _section(audit):
    sec = audit.section("compare")
    assert not sec.skipped, sec.skipped
    return sec


@pytest.mark.parametrize("layout, ratio, secondary", [("mlr3", 1 / 9, "error_rate"),
                                                      ("weka", None, "accuracy")])
def test_section_equals_compare_scores_on_the_shipped_exports(layout, ratio, secondary):
    """The audit's numbers are compare_scores' on the same data with the same options: the
    recommended tests plus TOST at ±0.01, Holm, simultaneous 95% intervals; mlr3 states k-fold
    CV (n_test/n_train = 1/9 for its 10 folds), Weka records the sizes."""
    audit = replikit.audit(scores=score_export(layout), quick=True, random_state=0,
                           sections=["compare"])
    got = _section(audit).data["comparisons"]
    scores = read_scores(score_export(layout))
    want = compare_scores(scores, metrics=["roc_auc", secondary], tests="recommended",
                          tolerance={"roc_auc": 0.01, secondary: 0.01}, alpha=0.05,
                          confidence_level=0.95, simultaneous=True, ratio=ratio)
    assert len(want.frame) > 0
    pd.testing.assert_frame_equal(got.drop(columns="headline").reset_index(drop=True),
                                  want.frame)
    # the headline rows are the corrected repeated k-fold t on every (study, pair, metric)
    head = got[got["headline"]]
    assert set(head["test"]) == {"corrected_repeated_kfold_t"}
    assert len(head) == 2 * 2  # 2 studies x 1 pair x 2 metrics
    # the naive t as contrast: compare_scores' own rejections
    with pytest.warns(ValidityWarning):
        naive = compare_scores(scores, metrics=["roc_auc"], tests=["naive_paired_ttest"])
    assert _section(audit).data["naive_rejections"] == int(naive.frame["reject"].sum())
    # the card's key number is a headline row's estimate and simultaneous interval
    v = audit.section("compare").data["verdict"]
    rows = got[got["headline"] & (got["metric"] == "roc_auc")]
    match = rows[np.isclose(rows["estimate"].abs(), abs(v["estimate"]))]
    assert len(match) == 1
    assert {abs(match["ci_low"].iloc[0]), abs(match["ci_high"].iloc[0])} == {
        abs(v["ci_low"]), abs(v["ci_high"])}


def test_mlr3_kfold_ratio_is_stated_and_equals_the_tests_own_rule():
    """k-fold without sizes: 1/(k-1) passed explicitly gives the numbers the corrected k-fold
    tests derive from k themselves."""
    scores = read_scores(score_export("mlr3"))
    a = compare_scores(scores, simultaneous=True).frame
    b = compare_scores(scores, simultaneous=True, ratio=1 / 9).frame
    pd.testing.assert_frame_equal(a, b)
    # a different ratio changes the corrected variance: se scales as sqrt(1/n + ratio)
    c = compare_scores(scores, ratio=0.5, tests=["corrected_repeated_kfold_ttest"]).frame
    d = compare_scores(scores, tests=["corrected_repeated_kfold_ttest"]).frame
    np.testing.assert_allclose(c["se"] / d["se"], np.sqrt((1 / 10 + 0.5) / (1 / 10 + 1 / 9)))
    with pytest.raises(ParameterError, match="`ratio`"):
        compare_scores(scores, ratio=0)


def _synthetic(n_studies=4, models=("a", "b", "c"), r=3, k=5, sizes=False, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_studies):
        for m_i, m in enumerate(models):
            for rep in range(r):
                for f in range(k):
                    row = {"study": f"s{s}", "model": m, "repeat": rep, "fold": f,
                           "metric": "accuracy",
                           "value": 0.7 + 0.05 * m_i + 0.01 * s + 0.02 * rng.normal()}
                    if sizes:
                        row.update(n_train=400, n_test=100)
                    rows.append(row)
    return pd.DataFrame(rows)


def test_unknown_scheme_skips_the_ratio_tests_and_keeps_the_comparison_across_studies():
    frame = _synthetic(n_studies=4)
    res = audit_scores(frame, random_state=0)
    assert res.skipped and res.table is None and res.comparisons.empty
    assert "not run on a guessed 1/(k-1)" in next(iter(res.skipped.values()))
    assert res.verdict.level == "warn"
    assert res.verdict.sentence.startswith("No pair could be tested within a study")
    # across the 4 studies the Friedman test still runs, on the study means
    from replikit.compare import friedman_test

    means = frame.groupby(["study", "model"])["value"].mean().unstack()
    assert res.nemenyi is not None
    assert res.nemenyi.friedman.pvalue == pytest.approx(friedman_test(means).pvalue)
    assert "Friedman" in res.verdict.sentence
    # stated k-fold: the tests run with n_test/n_train = 1/(k-1)
    kf = audit_scores(frame, scheme="kfold", random_state=0)
    assert not kf.skipped and kf.ratio == pytest.approx(1 / 4)
    want = compare_scores(Scores(frame), metrics=["accuracy"], tests="recommended",
                          tolerance={"accuracy": 0.01}, simultaneous=True, ratio=1 / 4)
    pd.testing.assert_frame_equal(kf.comparisons.drop(columns="headline"), want.frame)


def test_stated_holdout_ratio_and_recorded_sizes():
    frame = _synthetic(n_studies=1, r=10, k=1)
    res = audit_scores(frame, scheme="holdout", ratio=0.25, random_state=0)
    assert res.headline_test == "corrected_resampled_t"
    want = compare_scores(Scores(frame), tests="recommended", tolerance={"accuracy": 0.01},
                          simultaneous=True, ratio=0.25)
    pd.testing.assert_frame_equal(res.comparisons.drop(columns="headline"), want.frame)
    # recorded sizes are read, whatever the scheme says
    rec = audit_scores(_synthetic(n_studies=1, sizes=True), random_state=0)
    assert rec.ratio is None and "recorded" in rec.ratio_source and not rec.skipped
    with pytest.raises(ParameterError, match="`ratio`"):
        audit_scores(frame, scheme="holdout")
    with pytest.raises(ParameterError, match="`scheme`"):
        audit_scores(frame, scheme="bootstrap")


def test_error_metric_has_no_default_tolerance():
    frame = _synthetic(n_studies=1, sizes=True).assign(metric="rmse")
    res = audit_scores(frame, random_state=0)
    assert "equivalence_tost" not in set(res.comparisons["test"])
    assert "equivalence not tested" in res.verdict.tolerance
    assert any("No equivalence test on RMSE" in n for n in res.notes)
    given = audit_scores(frame, tolerance=0.05, random_state=0)
    assert "equivalence_tost" in set(given.comparisons["test"])


def test_the_data_entry_and_the_scores_entry_agree_on_the_same_scores():
    """audit (fits) and audit_scores (on those fits' scores) share the step after the fits."""
    from sklearn.datasets import load_breast_cancer

    from replikit.compare import audit
    from replikit.data.userdata import dataset_from_frame

    ds = dataset_from_frame(load_breast_cancer(as_frame=True).frame, target="target")
    fitted = audit(ds, models="lr,dummy", quick=True, random_state=0)
    again = audit_scores(fitted.scores, random_state=0)
    pd.testing.assert_frame_equal(fitted.comparisons, again.comparisons)
    assert fitted.verdict.level == again.verdict.level
    assert fitted.verdict.estimate == again.verdict.estimate


def test_light_is_green_only_when_every_pair_in_every_study_is_decided():
    frame = _synthetic(n_studies=2, sizes=True, models=("a", "b"))
    clear = frame.assign(value=frame["value"] + np.where(frame["model"] == "b", 0.2, 0.0))
    assert audit_scores(clear, random_state=0).verdict.level == "good"
    # equal models within ±0.01, tight: shown equivalent by TOST in both studies
    rng = np.random.default_rng(1)
    same = frame.assign(value=0.8 + 0.0005 * rng.normal(size=len(frame)))
    res = audit_scores(same, random_state=0)
    assert res.verdict.level == "good" and "Shown equivalent" in res.verdict.sentence
    # one study noisy: undecided there, amber
    noisy = same.copy()
    hit = noisy["study"] == "s1"
    # (an accuracy stays in [0, 1]: Scores refuses values outside their metric's range)
    noisy.loc[hit, "value"] = np.clip(0.8 + 0.2 * rng.normal(size=int(hit.sum())), 0, 1)
    assert audit_scores(noisy, random_state=0).verdict.level == "warn"


def test_fast_wilcoxon_equals_scipy_with_ties_and_zeros():
    from replikit.compare.multiple import _wilcoxon

    cases = [np.array([0.1, -0.1, 0.2, 0.2, -0.3, 0.0, 0.4, 0.5]),
             np.array([0.02, 0.02, -0.01, 0.03, -0.02, 0.05, 0.0, 0.0, 0.01]),
             np.array([1.0, 2.0, 2.0, -3.0, 4.0, -4.0, 5.0])]
    for d in cases:
        for alt in ("two-sided", "less", "greater"):
            for zm in ("zsplit", "pratt"):
                want = stats.wilcoxon(d, zero_method=zm, alternative=alt)
                got = _wilcoxon(d, zm, alt)
                assert got[0] == float(want.statistic)
                assert got[1] == pytest.approx(float(want.pvalue), rel=1e-12, abs=1e-15)


def test_benchmark_section_light_and_numbers():
    audit = replikit.audit(benchmark=BENCHMARK, random_state=0, sections=["compare"])
    data = _section(audit).data
    table = pd.read_csv(BENCHMARK).set_index("dataset")
    res = compare_benchmark(table, random_state=0, metric="score")
    assert data["friedman_pvalue"] == pytest.approx(res.friedman.pvalue)
    # Demšar (2006, sec. 3.2.4): critical difference 1.25 for 4 models on 14 datasets; from
    # the AUCs he prints (Table 6) the mean ranks are 1.929, 2.000, 2.929, 3.143 (his printed
    # ranks order two AUCs that print equal on one dataset: see docs/compare.md)
    assert data["critical_distance"] == pytest.approx(1.25, abs=0.005)
    assert sorted(data["mean_ranks"].values()) == pytest.approx([1.929, 2.0, 2.929, 3.143],
                                                                 abs=5e-4)
    dec = data["decisions"]
    assert data["verdict"]["level"] == ("good" if dec["decided"].all() else "warn")
    # best minus runner-up: the mean difference over datasets with its 95% t interval
    ranks = res.friedman.mean_ranks.sort_values(kind="stable")
    d = table[ranks.index[0]] - table[ranks.index[1]]
    lo, hi = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert data["verdict"]["estimate"] == pytest.approx(d.mean())
    assert (data["verdict"]["ci_low"], data["verdict"]["ci_high"]) == pytest.approx((lo, hi))


def test_benchmark_light_rule():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.6, 0.9, 12)
    decided = pd.DataFrame({"a": base + 0.1, "b": base, "c": base + 0.0002 * rng.normal(size=12)})
    res = compare_benchmark(decided, random_state=0)
    assert res.decisions()["decided"].all() and res.verdict.level == "good"
    # a mean difference of 0.01 with spread: neither a difference nor equivalence shown
    d = np.array([0.03, -0.01, 0.04, 0.0, 0.025, -0.02, 0.015, -0.005])
    open_ = pd.DataFrame({"a": base[:8] + d, "b": base[:8]})
    res = compare_benchmark(open_, random_state=0)
    dec = res.decisions()
    assert not dec["difference"].any() and (dec["bayes"] == "undecided").all()
    assert res.verdict.level == "warn" and "Undecided: a vs b" in res.verdict.sentence
    # scores outside 0-1: no default tolerance, equivalence not tested
    big = compare_benchmark(decided * 100, random_state=0)
    assert big.tolerance == 0 and "equivalence not tested" in big.verdict.tolerance


def test_predictions_entry_goes_through_scores_from_predictions():
    from replikit.experiment import scores_from_predictions

    rng = np.random.default_rng(3)
    n, rows = 120, []
    y = rng.integers(0, 2, n)
    for study in ("s1", "s2"):
        for rep in range(2):
            fold = rng.permutation(np.arange(n) % 5)
            for m, signal in (("lr", 0.4), ("dummy", 0.0)):
                p = np.clip(0.3 + signal * y + 0.3 * rng.uniform(size=n), 0, 1)
                rows.append(pd.DataFrame({"study": study, "model": m, "repeat": rep,
                                          "fold": fold, "row": np.arange(n), "y_true": y,
                                          "y_pred": (p > 0.5).astype(int), "proba_1": p}))
    preds = pd.concat(rows, ignore_index=True)
    audit = replikit.audit(predictions=preds, random_state=0, sections=["compare"])
    got = _section(audit).data["comparisons"]
    want = audit_scores(scores_from_predictions(preds), random_state=0).comparisons
    pd.testing.assert_frame_equal(got, want)
    assert "recorded" in _section(audit).data["ratio_source"]
