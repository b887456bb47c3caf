"""Every public result of the comparison capability keeps the contract of
:class:`replikit.results.Result` (``_checks.check_result``); figures and words a reader sees
name the tests in words; and the renamed parameters, fields and flags of the package keep
working for one release, with a FutureWarning.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from _checks import INTERNAL_IDS, assert_plain, check_result

# --------------------------------------------------------------------------------------------
# small real instances


def _scores(n_models=2, n_repeats=10, n_folds=10, seed=0, metrics=("accuracy",)):
    rng = np.random.default_rng(seed)
    names = ["lr", "rf", "tree", "knn"][:n_models]
    rows = [{"study": "s", "model": m, "repeat": r, "fold": f, "metric": metric,
             "value": 0.8 + 0.01 * i + 0.01 * rng.normal(), "n_train": 900, "n_test": 100}
            for i, m in enumerate(names) for metric in metrics
            for r in range(n_repeats) for f in range(n_folds)]
    return pd.DataFrame(rows)


def _study_scores(n_studies=6, seed=0):
    rng = np.random.default_rng(seed)
    rows = [(f"s{s}", m, 0, f, "accuracy", 0.8 + 0.02 * s + (0.03 if m == "rf" else 0)
             + 0.01 * rng.standard_normal(), 90, 10)
            for s in range(n_studies) for m in ("lr", "rf") for f in range(5)]
    return pd.DataFrame(rows, columns=["study", "model", "repeat", "fold", "metric", "value",
                                       "n_train", "n_test"])


def _paired():
    from replikit.compare import Paired

    rng = np.random.default_rng(4)
    acc = 0.85 + 0.03 * rng.standard_normal((10, 10))
    return Paired(acc + 0.02 + 0.01 * rng.standard_normal((10, 10)), acc, a="rf", b="lr",
                  metric="accuracy", n_train=90, n_test=10)


def _table_of_studies():
    return np.random.default_rng(0).normal(size=(20, 4)) + [1.5, 0.0, 0.2, 1.4]


def _comparison_result():
    from replikit.compare import corrected_repeated_kfold_ttest

    return corrected_repeated_kfold_ttest(_paired())


def _bayesian_result():
    from replikit.compare import bayesian_correlated_ttest

    return bayesian_correlated_ttest(_paired(), tolerance=0.01)


def _prediction_result():
    from replikit.compare import mcnemar_test_from_table

    return mcnemar_test_from_table([[101, 121], [59, 33]], labels=("lr", "tree"))


@functools.cache
def _bayesian_comparison():
    from replikit.compare import hierarchical_test

    return hierarchical_test(_study_scores(), "rf", "lr", tolerance=0.01, n_draws=300,
                             n_chains=2, n_warmup=100, random_state=0)


def _signed_rank():
    from replikit.compare import bayesian_signed_rank_test

    b = np.random.default_rng(0).uniform(0.7, 0.9, size=30)
    return bayesian_signed_rank_test((b + 0.01, b), tolerance=0.01, n_resamples=1000,
                                     random_state=0)


@functools.cache
def _calibration():
    from replikit.compare import simulate_tests

    return simulate_tests(n_datasets=20, n_rows=100, differences=(0.1,),
                          tests=["corrected_repeated_kfold_t", "naive_paired_t_kfold"],
                          n_repeats=2, n_population=100_000, n_training_sets=200,
                          random_state=0)


def _control():
    from replikit.compare import bonferroni_dunn_test

    return bonferroni_dunn_test(_table_of_studies(), control="model 0")


def _smd():
    from replikit.compare import standardized_mean_difference

    return standardized_mean_difference(_paired())


def _friedman():
    from replikit.compare import friedman_test

    return friedman_test(_table_of_studies())


def _nemenyi():
    from replikit.compare import nemenyi_test

    return nemenyi_test(_table_of_studies())


def _across():
    from replikit.compare import compare_across_studies

    return compare_across_studies(_study_scores(), n_draws=200, n_chains=2, random_state=0)


@functools.cache
def _audit():
    from sklearn.datasets import load_diabetes

    from replikit.compare import audit
    from replikit.data.userdata import dataset_from_frame

    ds = dataset_from_frame(load_diabetes(as_frame=True).frame, target="target")
    return audit(ds, models="lr,dummy", quick=True, random_state=0)


def _plackett_luce():
    from replikit.compare import plackett_luce

    return plackett_luce(_table_of_studies(), n_resamples=400, random_state=0)


def _comparison_table():
    from replikit.compare import compare_scores

    return compare_scores(_scores(n_models=2), tests="all", tolerance=0.01)


def _testset_result():
    from replikit.compare import paired_bootstrap_test

    return paired_bootstrap_test([0, 1, 1, 0, 1] * 20, [0, 1, 1, 1, 1] * 20,
                                 [0, 1, 0, 0, 1] * 20, scoring="f1", n_resamples=200,
                                 labels=("rf", "lr"), random_state=0)


def _test_set_audit():
    import numpy as np
    import pandas as pd

    from replikit.compare import audit_test_set

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    preds = pd.concat([pd.DataFrame({"model": m, "row": np.arange(200), "y_true": y,
                                     "y_pred": np.where(rng.random(200) < acc, y, 1 - y)})
                       for m, acc in (("rf", 0.9), ("lr", 0.75), ("tree", 0.7))])
    return audit_test_set(preds, n_resamples=200, random_state=0)


#: One small real instance of each public result type of replikit.compare.
FACTORIES = {
    "ComparisonResult": _comparison_result,
    "BayesianResult": _bayesian_result,
    "PredictionTestResult": _prediction_result,
    "BayesianComparison": _bayesian_comparison,
    "CalibrationResult": _calibration,
    "ControlResult": _control,
    "SMDResult": _smd,
    "FriedmanResult": _friedman,
    "NemenyiResult": _nemenyi,
    "AcrossStudies": _across,
    "ComparisonAudit": _audit,
    "ComparisonTable": _comparison_table,
    "TestSetResult": _testset_result,
    "PlackettLuceResult": _plackett_luce,
    "TestSetAudit": _test_set_audit,
}

#: Public functions of ``replikit.compare`` that compute no statistical method of their own.
NO_METHOD: dict[str, str] = {
    "paired_scores": "lines up two models' scores split by split (a table helper)",
    "scores_to_table": "averages fold scores into a datasets x models table (a table helper)",
    "mcnemar_table": "counts the 2 x 2 table of paired correctness (a table helper)",
    "audit_design": "the scheme and metrics the audit's fits need (a plan)",
    "recommended_tests": "names the tests a design calls for (a rule of Gardner & Brooks 2017)",
    "primary_test": "names the headline test of a design (a rule)",
    "plot_cd_diagram": "draws a Nemenyi result (a plot)",
    "plot_cd_control": "draws a Bonferroni-Dunn result (a plot)",
    "plot_comparisons": "draws a table of tests (a plot)",
    "plot_calibration": "draws a calibration result (a plot)",
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_signed_rank_result_keeps_the_contract():
    check_result(_signed_rank())


# --------------------------------------------------------------------------------------------
# tests, intervals and figures


@pytest.mark.parametrize("factory", [_friedman, _nemenyi, _control])
def test_rank_tests_expose_statistic_pvalue_alternative(factory):
    res = factory()
    assert np.isfinite(res.statistic) and 0 <= res.pvalue <= 1
    assert res.alternative == "two-sided"


def test_nemenyi_pvalue_is_the_range_test_of_its_largest_difference():
    res = _nemenyi()
    p = res.pvalues.to_numpy()
    assert res.pvalue == p[~np.eye(len(p), dtype=bool)].min()
    # the statistic at the CD is the critical value: significant pairs exceed it
    assert res.significant.to_numpy().any() == (res.pvalue < res.alpha)


def test_control_pvalue_is_the_smallest_bonferroni_pvalue():
    res = _control()
    assert res.pvalue == res.comparisons["pvalue_adjusted"].min()
    assert res.statistic == pytest.approx(res.comparisons["z"].abs().max())


def test_intervals_reuse_the_wald_interval():
    from replikit.results import wald_interval

    bayes = _bayesian_result()
    ci = wald_interval(bayes.estimate, bayes.scale, 0.9, df=bayes.df)
    assert tuple(bayes.confidence_interval(0.9)) == tuple(ci)
    pred = _prediction_result()
    assert tuple(pred.confidence_interval()) == tuple(wald_interval(pred.estimate, pred.se))
    # and the Bayesian row of compare_scores is that interval
    from replikit.compare import bayesian_correlated_ttest, compare_scores, paired_scores

    row = compare_scores(_scores()).frame.iloc[1]
    assert row["test"] == "bayesian_correlated_t"
    res = bayesian_correlated_ttest(paired_scores(_scores()))
    assert res.confidence_interval().low == pytest.approx(row["ci_low"], rel=1e-12)


def _labels(ax):
    texts = [t.get_text() for t in ax.get_yticklabels()] + [ax.get_xlabel(),
                                                             ax.get_title(loc="left")]
    return [t for t in texts if t]


def test_forest_plot_labels_tests_in_words():
    from replikit._plotting import new_axes
    from replikit.compare import compare_scores

    table = compare_scores(_scores(n_models=3), tests="all")
    ax = table.plot(ax=new_axes(8, 6))
    labels = _labels(ax)
    assert not [t for t in labels if INTERNAL_IDS.search(t)], labels
    assert "corrected repeated k-fold t-test: lr − rf" in labels
    assert "naive paired t-test: lr − rf (invalid)" in labels
    assert ax.get_xlabel() == "mean difference a − b (accuracy)"


def test_str_names_tests_in_words():
    for res in (_comparison_table(), _calibration(), _audit(), _comparison_result()):
        text = str(res)
        assert not INTERNAL_IDS.search(text), text
        assert_plain(text)


def test_calibration_legend_names_tests_in_words():
    from replikit._plotting import new_axes

    ax = _calibration().plot(ax=new_axes())
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["corrected repeated k-fold t-test",
                      "naive paired t-test, 10x10 CV (invalid)"]


@pytest.mark.parametrize("factory", [_bayesian_comparison, _signed_rank, _bayesian_result])
def test_bayesian_results_draw_their_posterior(factory):
    from replikit._plotting import new_axes

    res = factory()
    ax = res.plot(ax=new_axes())
    title = ax.get_title(loc="left")
    assert "P(" in title and "equivalent" in title


def test_audit_verdict_labels_its_key_number():
    res = _audit()
    assert res.verdict.label == "best minus runner-up, R²"
    assert "Best minus runner-up on R²: lr − dummy = " in res.verdict.sentence
    assert_plain(str(res.verdict))
    json.dumps(res.to_dict(), allow_nan=False)


def test_verdict_numbers_in_plain_notation():
    from replikit.compare.audit import _verdict

    frame = pd.DataFrame({
        "a": ["lr"], "b": ["dummy"], "metric": ["r2"], "test": ["corrected_repeated_kfold_t"],
        "method": ["corrected"], "estimate": [1234.5], "ci_low": [1000.0], "ci_high": [1500.0],
        "pvalue_adjusted": [2e-9], "reject": [True], "valid": [True],
        "conclusion": ["lr better"], "headline": [True]})
    from replikit.compare.audit import _Plan

    v = _verdict(frame, "r2", "R²", "corrected_repeated_kfold_t", "lr", "dummy",
                 _Plan(500, 10, 10, False), 500, 500, False, [])
    assert "Holm p < 0.001" in v.sentence
    assert "= 1,234" in v.sentence and "[1,000, 1,500]" in v.sentence
    assert "e+0" not in v.sentence and "e-0" not in v.sentence


# --------------------------------------------------------------------------------------------
# renamed parameters: the old names warn and give the same result


def _same(call_old, call_new, old, new):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call_old()
    messages = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert any(f"`{old}`" in m and f"`{new}`" in m for m in messages), messages
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        want = call_new()
    return got, want


@pytest.mark.parametrize("old", ["rope", "margin"])
def test_compare_scores_rope_and_margin_are_tolerance(old):
    from replikit.compare import compare_scores

    scores = _scores(n_models=3)
    got, want = _same(lambda: compare_scores(scores, **{old: 0.02}),
                      lambda: compare_scores(scores, tolerance=0.02), old, "tolerance")
    pd.testing.assert_frame_equal(got.frame, want.frame)
    assert set(want.frame["test"]) == {"corrected_repeated_kfold_t", "equivalence_tost",
                                       "bayesian_correlated_t"}
    assert want.tolerance == 0.02


def test_compare_scores_rope_and_margin_together_must_choose():
    from replikit.compare import compare_scores
    from replikit.errors import ParameterTypeError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ParameterTypeError, match="give `tolerance` only"):
            compare_scores(_scores(), rope=0.01, margin=0.02)


def test_tolerance_is_the_rope_and_the_tost_margin():
    from replikit.compare import (
        bayesian_correlated_ttest,
        compare_scores,
        equivalence_ttest,
        paired_scores,
    )

    table = compare_scores(_scores(), tolerance=0.015).frame
    p = paired_scores(_scores())
    tost = equivalence_ttest(p, tolerance=0.015)
    bayes = bayesian_correlated_ttest(p, tolerance=0.015)
    row = table.set_index("test")
    assert row.loc["equivalence_tost", "pvalue"] == tost.pvalue
    assert row.loc["bayesian_correlated_t", "p_rope"] == bayes.p_rope
    # no tolerance: the Bayesian rows at the default, no equivalence test
    table = compare_scores(_scores())
    assert table.tolerance == 0.01 and "equivalence_tost" not in set(table.frame["test"])
    # a zero tolerance: no equivalence can be shown, so no TOST row
    table = compare_scores(_scores(), tolerance=0.0)
    assert "equivalence_tost" not in set(table.frame["test"])


def test_compare_scores_interval_is_simultaneous():
    from replikit.compare import compare_scores

    scores = _scores(n_models=3)
    got, want = _same(lambda: compare_scores(scores, interval="simultaneous"),
                      lambda: compare_scores(scores, simultaneous=True), "interval",
                      "simultaneous")
    pd.testing.assert_frame_equal(got.frame, want.frame)
    assert want.simultaneous is True
    got, want = _same(lambda: compare_scores(scores, interval="marginal"),
                      lambda: compare_scores(scores), "interval", "simultaneous")
    pd.testing.assert_frame_equal(got.frame, want.frame)


def test_compare_models_old_names():
    from sklearn.dummy import DummyClassifier
    from sklearn.linear_model import LogisticRegression

    from replikit.compare import compare_models

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    models = {"lr": LogisticRegression(), "dummy": DummyClassifier()}
    got, want = _same(
        lambda: compare_models(models, X, y, scheme="5x2", rope=0.02, interval="simultaneous",
                               random_state=0),
        lambda: compare_models(models, X, y, scheme="5x2", tolerance=0.02, simultaneous=True,
                               random_state=0), "rope", "tolerance")
    pd.testing.assert_frame_equal(got.frame, want.frame)


def test_result_fields_old_names():
    from replikit.compare import BayesianResult, ComparisonTable

    res = _comparison_table()
    with pytest.warns(FutureWarning, match="ComparisonTable.tolerance"):
        assert res.rope == res.tolerance
    with pytest.warns(FutureWarning, match="ComparisonTable.simultaneous"):
        assert res.interval == "marginal"
    with pytest.warns(FutureWarning):
        old = ComparisonTable(res.frame, rope=0.02, interval="simultaneous")
    assert old.tolerance == 0.02 and old.simultaneous is True
    bayes = _bayesian_result()
    with pytest.warns(FutureWarning, match="BayesianResult.tolerance"):
        assert bayes.rope == 0.01
    with pytest.warns(FutureWarning, match="`rope` is now `tolerance`"):
        again = BayesianResult(bayes.p_left, bayes.p_rope, bayes.p_right, rope=0.01,
                               estimate=bayes.estimate, scale=bayes.scale, df=bayes.df)
    assert again.tolerance == 0.01
    comp = _bayesian_comparison()
    with pytest.warns(FutureWarning, match="BayesianComparison.n_draws"):
        assert comp.n_samples == comp.n_draws == 600
    with pytest.warns(FutureWarning, match="BayesianComparison.tolerance"):
        assert comp.rope == 0.01
    with pytest.warns(FutureWarning, match="CalibrationResult.n_repeats"):
        assert _calibration().n_replications == 2
    audit = _audit()
    with pytest.warns(FutureWarning, match="ComparisonAudit.tolerance"):
        assert audit.rope == audit.tolerance
    with pytest.warns(FutureWarning, match="ComparisonAudit.simultaneous"):
        assert audit.interval == "simultaneous"


def test_two_model_tests_old_names():
    from replikit.compare import (
        bayesian_correlated_ttest,
        equivalence_test_from_stats,
        equivalence_ttest,
    )

    p = _paired()
    got, want = _same(lambda: equivalence_ttest(p, margin=0.05),
                      lambda: equivalence_ttest(p, tolerance=0.05), "margin", "tolerance")
    assert got.pvalue == want.pvalue and got.extra["bounds"] == (-0.05, 0.05)
    got, want = _same(lambda: equivalence_test_from_stats(0.12, 0.09, margin=0.2),
                      lambda: equivalence_test_from_stats(0.12, 0.09, tolerance=0.2),
                      "margin", "tolerance")
    assert got.pvalue == want.pvalue
    got, want = _same(lambda: bayesian_correlated_ttest(p, rope=0.02),
                      lambda: bayesian_correlated_ttest(p, tolerance=0.02), "rope", "tolerance")
    assert (got.p_left, got.p_rope, got.p_right) == (want.p_left, want.p_rope, want.p_right)


def test_bayesian_tests_old_names():
    from replikit.compare import (
        bayesian_signed_rank_test,
        compare_across_studies,
        hierarchical_test,
        hierarchical_test_from_arrays,
    )

    b = np.random.default_rng(0).uniform(0.7, 0.9, size=30)
    got, want = _same(
        lambda: bayesian_signed_rank_test((b + 0.01, b), rope=0.02, n_samples=500,
                                          random_state=1),
        lambda: bayesian_signed_rank_test((b + 0.01, b), tolerance=0.02, n_resamples=500,
                                          random_state=1), "rope", "tolerance")
    assert got.probabilities == want.probabilities and want.n_draws == 500
    with pytest.warns(FutureWarning, match="`n_samples` is now `n_resamples`"):
        bayesian_signed_rank_test((b + 0.01, b), n_samples=500, random_state=1)
    scores = _study_scores()
    got, want = _same(
        lambda: hierarchical_test(scores, "rf", "lr", n_samples=200, n_chains=2, n_warmup=50,
                                  random_state=0),
        lambda: hierarchical_test(scores, "rf", "lr", n_draws=200, n_chains=2, n_warmup=50,
                                  random_state=0), "n_samples", "n_draws")
    assert got.probabilities == want.probabilities
    rng = np.random.default_rng(1)
    xb = 0.8 + 0.02 * rng.standard_normal((6, 10))
    xa = xb + 0.02 + 0.01 * rng.standard_normal((6, 10))
    got, want = _same(
        lambda: hierarchical_test_from_arrays(xa, xb, n_folds=10, rope=0.02, n_draws=200,
                                              n_chains=2, n_warmup=50, random_state=0),
        lambda: hierarchical_test_from_arrays(xa, xb, n_folds=10, tolerance=0.02, n_draws=200,
                                              n_chains=2, n_warmup=50, random_state=0),
        "rope", "tolerance")
    assert got.probabilities == want.probabilities
    got, want = _same(
        lambda: compare_across_studies(scores, rope=0.02, n_samples=200, n_chains=2,
                                       random_state=0),
        lambda: compare_across_studies(scores, tolerance=0.02, n_draws=200, n_chains=2,
                                       random_state=0), "rope", "tolerance")
    pd.testing.assert_frame_equal(got.frame, want.frame)
    assert "tolerance" in want.frame.columns and "rope" not in want.frame.columns


def test_simulate_tests_old_names():
    from replikit.compare import simulate_tests

    kwargs = dict(n_datasets=10, n_rows=60, differences=(), tests=["bayesian_correlated_t"],
                  n_population=100_000, n_training_sets=100, random_state=0)
    got, want = _same(lambda: simulate_tests(n_replications=2, rope=0.02, **kwargs),
                      lambda: simulate_tests(n_repeats=2, tolerance=0.02, **kwargs),
                      "n_replications", "n_repeats")
    pd.testing.assert_frame_equal(got.table, want.table)
    assert want.settings["n_repeats"] == 2 and want.settings["tolerance"] == 0.02
    assert "n_repeats" in want.table.columns


# --------------------------------------------------------------------------------------------
# renamed flags: the old flags print one warning line and give the same output


@pytest.fixture
def scores_csv(tmp_path):
    path = tmp_path / "scores.csv"
    _scores(n_models=2).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("old, new", [(("--rope", "0.02"), ("--tolerance", "0.02")),
                                      (("--margin", "0.02"), ("--tolerance", "0.02")),
                                      (("--interval", "simultaneous"), ("--simultaneous",)),
                                      (("--interval=simultaneous",), ("--simultaneous",)),
                                      (("--interval", "marginal"), ())])
def test_compare_old_flags(cli, scores_csv, old, new):
    code, out, err = cli("--format", "json", "compare", scores_csv, *old)
    code_new, out_new, err_new = cli("--format", "json", "compare", scores_csv, *new)
    assert code == code_new == 0, err
    name = old[0].split("=")[0]
    assert f"`{name}" in err and "replikit 0.3" in err
    assert out == out_new


def test_compare_old_interval_value_is_checked(cli, scores_csv):
    code, _, err = cli("compare", scores_csv, "--interval", "both")
    assert code == 2 and "`--interval` must be marginal or simultaneous" in err


def test_compare_errors_name_flags(cli, scores_csv):
    code, _, err = cli("compare", scores_csv, "--metric", "auc")
    assert code == 2 and "`--metric`" in err
    code, _, err = cli("compare", scores_csv, "--test", "equivalence_ttest")
    assert code == 2 and "`--tolerance`" in err


def test_simulate_tests_old_flags(cli):
    base = ("--format", "json", "simulate", "tests", "--tests", "bayesian_correlated_t",
            "--differences", "0")
    old = ("--datasets", "10", "--rows", "60", "-m", "2", "--rope", "0.02")
    new = ("--n-datasets", "10", "--n-rows", "60", "--n-repeats", "2", "--tolerance", "0.02")
    code, out, err = cli(*base, *old)
    code_new, out_new, _ = cli(*base, *new)
    assert code == code_new == 0, err
    for before, after in zip(old[::2], new[::2], strict=True):
        assert f"`{before}` is now `{after}`" in err
    docs = [json.loads(o) for o in (out, out_new)]
    for doc in docs:
        doc.pop("runtime_seconds")
    assert docs[0] == docs[1]
    code, _, err = cli("simulate", "tests", "--replications", "0")
    assert code == 2 and "--n-repeats" in err
