"""Two fitted models on one test set: the paired bootstrap and the randomization test.

References: the vectorised metric kernels against replikit's METRICS and scikit-learn's
metrics on every resample; the randomization test of a mean difference against the exact
enumeration of all 2^n sign flips (plain itertools, n = 10); the bootstrap interval and
p-value against a plain loop over the same resample indices; calibration: the size under
exchangeable models and the interval's coverage (small here; benchmarks/testset_calibration.py
for the full study recorded in docs/compare.md).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import sklearn.metrics as skm

from replikit.compare import TestSetResult, paired_bootstrap_test, randomization_test
from replikit.compare import testset as T
from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.experiment.metrics import METRICS


def _classifiers(seed=0, n=120, acc_a=0.85, acc_b=0.75, k=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    a = np.where(rng.random(n) < acc_a, y, rng.integers(0, k, n))
    b = np.where(rng.random(n) < acc_b, y, rng.integers(0, k, n))
    return y, a, b


def _reference(name, y, p):
    """The metric by its reference implementation: scikit-learn, or replikit's METRICS."""
    sk = {"f1": skm.f1_score, "precision": skm.precision_score, "recall": skm.recall_score}
    if name in sk:
        return sk[name](y, p, pos_label=1, zero_division=0)
    if name == "matthews_corrcoef":
        return skm.matthews_corrcoef(y, p)
    if name == "roc_auc":
        return skm.roc_auc_score(y, p)
    if name == "log_loss":
        proba = np.column_stack([1 - p, p])
        return METRICS["log_loss"](y, p, proba, np.array([0, 1]))
    return METRICS[name](np.asarray(y), np.asarray(p), None, np.unique(y))


LABEL_METRICS = ["accuracy", "error_rate", "balanced_accuracy", "f1", "precision", "recall",
                 "matthews_corrcoef"]


@pytest.mark.parametrize("name", LABEL_METRICS)
def test_bootstrap_replicates_equal_a_plain_loop_label_metrics(name):
    """Every vectorised replicate equals the reference metric on the same resampled rows."""
    y, a, b = _classifiers(seed=1, n=60)
    inp = T._testset_iv(y, a, b, name, 100, "two-sided", None)
    reps = T._bootstrap_differences(inp, np.random.default_rng(5))
    idx = np.random.default_rng(5).integers(0, y.size, size=(100, y.size))
    loop = [_reference(name, y[i], a[i]) - _reference(name, y[i], b[i]) for i in idx]
    np.testing.assert_allclose(reps, loop, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["mse", "rmse", "mae", "r2", "r2_corr"])
def test_bootstrap_replicates_equal_a_plain_loop_numeric_metrics(name):
    rng = np.random.default_rng(2)
    y = rng.normal(size=50)
    a, b = y + rng.normal(0, 0.5, 50), y + rng.normal(0, 0.8, 50)
    inp = T._testset_iv(y, a, b, name, 120, "two-sided", None)
    reps = T._bootstrap_differences(inp, np.random.default_rng(9))
    idx = np.random.default_rng(9).integers(0, 50, size=(120, 50))
    loop = [_reference(name, y[i], a[i]) - _reference(name, y[i], b[i]) for i in idx]
    np.testing.assert_allclose(reps, loop, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["roc_auc", "log_loss"])
def test_randomization_replicates_equal_a_plain_loop_score_metrics(name):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 40)
    sa = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.2, 40), 0.01, 0.99)
    sb = np.clip(0.5 + 0.1 * (y - 0.5) + rng.normal(0, 0.2, 40), 0.01, 0.99)
    sb[:5] = sa[:5]  # ties across the models
    inp = T._testset_iv(y, sa, sb, name, 100, "two-sided", None)
    reps = T._randomization_differences(inp, np.random.default_rng(4))
    z = np.random.default_rng(4).integers(0, 2, size=(100, 40)).astype(bool)
    loop = [_reference(name, y, np.where(zi, sb, sa)) - _reference(name, y, np.where(zi, sa, sb))
            for zi in z]
    np.testing.assert_allclose(reps, loop, rtol=1e-10, atol=1e-12)


def test_randomization_replicates_equal_a_plain_loop_f1():
    y, a, b = _classifiers(seed=4, n=70)
    inp = T._testset_iv(y, a, b, "f1", 100, "two-sided", None)
    reps = T._randomization_differences(inp, np.random.default_rng(8))
    z = np.random.default_rng(8).integers(0, 2, size=(100, 70)).astype(bool)
    loop = [_reference("f1", y, np.where(zi, b, a)) - _reference("f1", y, np.where(zi, a, b))
            for zi in z]
    np.testing.assert_allclose(reps, loop, atol=1e-12)


@pytest.mark.parametrize("name", [*LABEL_METRICS, "roc_auc"])
def test_statistic_is_the_reference_metric_difference(name):
    y, a, b = _classifiers(seed=6, n=90)
    if name == "roc_auc":
        rng = np.random.default_rng(0)
        a, b = a + rng.normal(0, 0.3, 90), b + rng.normal(0, 0.3, 90)
    r = randomization_test(y, a, b, scoring=name, n_resamples=100, random_state=0)
    assert r.statistic == pytest.approx(_reference(name, y, a) - _reference(name, y, b),
                                        abs=1e-12)


def test_randomization_equals_exact_sign_flip_enumeration():
    """For accuracy (a mean of per-row values) swapping a row's predictions flips the sign of
    its difference; all 2^10 flips enumerated with itertools give the exact p-value, which the
    Monte Carlo p approaches within a few Monte Carlo SEs."""
    y = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 1])
    a = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 1])   # 9 right
    b = np.array([0, 0, 1, 0, 0, 1, 1, 1, 1, 0])   # 5 right
    d = (a == y).astype(float) - (b == y)
    obs = d.mean()
    flips = np.array(list(itertools.product([1, -1], repeat=10)))
    exact = {"two-sided": np.mean(np.abs(flips @ d / 10) >= abs(obs) - 1e-12),
             "greater": np.mean(flips @ d / 10 >= obs - 1e-12),
             "less": np.mean(flips @ d / 10 <= obs + 1e-12)}
    assert exact["two-sided"] == pytest.approx(0.125)  # 2 * 8/128 by hand: 4 discordant rows
    for alt, p_exact in exact.items():
        r = randomization_test(y, a, b, n_resamples=40_000, alternative=alt, random_state=1)
        assert abs(r.pvalue - p_exact) < 4 * math.sqrt(p_exact * (1 - p_exact) / 40_000) + 1e-4
        assert r.pvalue_mcse == pytest.approx(math.sqrt(r.pvalue * (1 - r.pvalue) / 40_000))


def test_bootstrap_interval_and_pvalue_equal_a_plain_loop():
    """Percentile interval and shifted p-value recomputed from a plain loop over the same
    resample indices (numpy.quantile default, the +1 rule)."""
    y, a, b = _classifiers(seed=7, n=80)
    R = 400
    r = paired_bootstrap_test(y, a, b, scoring="f1", n_resamples=R, random_state=11)
    idx = np.random.default_rng(11).integers(0, 80, size=(R, 80))
    reps = np.array([skm.f1_score(y[i], a[i]) - skm.f1_score(y[i], b[i]) for i in idx])
    delta = skm.f1_score(y, a) - skm.f1_score(y, b)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    ci = r.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((lo, hi), abs=1e-12)
    p = (1 + np.sum(np.abs(reps - delta) >= abs(delta) - 1e-12)) / (1 + R)
    assert r.pvalue == pytest.approx(p, abs=1e-12)
    assert r.se == pytest.approx(reps.std(ddof=1), rel=1e-10)
    lo90 = np.quantile(reps, 0.05)
    assert r.confidence_interval(0.9).low == pytest.approx(lo90, abs=1e-12)
    g = paired_bootstrap_test(y, a, b, scoring="f1", n_resamples=R, random_state=11,
                              alternative="greater")
    assert g.confidence_interval().high == math.inf
    assert g.confidence_interval().low == pytest.approx(np.quantile(reps, 0.05), abs=1e-12)
    assert g.pvalue == pytest.approx((1 + np.sum(reps - delta >= delta - 1e-12)) / (1 + R))


def _f1(y_true, y_pred):
    tp = np.sum((y_true == 1) & (y_pred == 1))
    return 2 * tp / (np.sum(y_true == 1) + np.sum(y_pred == 1))


def test_callable_scoring_equals_the_named_metric():
    y, a, b = _classifiers(seed=8, n=60)
    named = paired_bootstrap_test(y, a, b, scoring="f1", n_resamples=200, random_state=2)
    custom = paired_bootstrap_test(y, a, b, scoring=_f1, n_resamples=200, random_state=2)
    assert custom.metric == "_f1"
    assert custom.pvalue == named.pvalue
    np.testing.assert_allclose(custom._replicates, named._replicates, atol=1e-12)
    rn = randomization_test(y, a, b, scoring="f1", n_resamples=200, random_state=2)
    rc = randomization_test(y, a, b, scoring=_f1, n_resamples=200, random_state=2)
    assert rn.pvalue == rc.pvalue


def test_symmetry_swapping_models_negates_the_statistic():
    y, a, b = _classifiers(seed=9)
    for test in (paired_bootstrap_test, randomization_test):
        ab = test(y, a, b, scoring="matthews_corrcoef", n_resamples=500, random_state=3)
        ba = test(y, b, a, scoring="matthews_corrcoef", n_resamples=500, random_state=3)
        assert ab.statistic == pytest.approx(-ba.statistic)
        assert ab.pvalue == pytest.approx(ba.pvalue)
    ab = paired_bootstrap_test(y, a, b, scoring="f1", n_resamples=500, random_state=3)
    ba = paired_bootstrap_test(y, b, a, scoring="f1", n_resamples=500, random_state=3)
    assert ab.confidence_interval().low == pytest.approx(-ba.confidence_interval().high)


def test_identical_models_give_p_one():
    y, a, _ = _classifiers(seed=10)
    for test in (paired_bootstrap_test, randomization_test):
        r = test(y, a, a, scoring="f1", n_resamples=200, random_state=0)
        assert r.statistic == 0 and r.pvalue == 1.0 and r.pvalue_mcse == 0.0


def test_result_contract_and_outputs():
    from _checks import check_result

    y, a, b = _classifiers(seed=12)
    r = paired_bootstrap_test(y, a, b, scoring="balanced_accuracy", n_resamples=300,
                              labels=("rf", "lr"), random_state=0)
    assert isinstance(r, TestSetResult)
    check_result(r, plot=False)
    f = r.to_frame()
    assert {"n_resamples", "pvalue_mcse", "ci_low", "ci_high"} <= set(f.columns)
    assert f["n_resamples"].iloc[0] == 300
    text = str(r)
    assert "rf - lr (balanced_accuracy)" in text and "Monte Carlo SE of p" in text
    assert "300 resamples" in text and "percentile CI" in text
    q = randomization_test(y, a, b, n_resamples=300, random_state=0)
    check_result(q, plot=False)
    assert math.isnan(q.confidence_interval().low) and "CI" not in str(q)
    json.dumps(q.to_dict(), allow_nan=False)


def test_multiclass_and_string_labels():
    y, a, b = _classifiers(seed=13, k=3)
    names = np.array(["cat", "dog", "emu"])
    r = randomization_test(names[y], names[a], names[b], scoring="balanced_accuracy",
                           n_resamples=200, random_state=0)
    assert r.statistic == pytest.approx(skm.balanced_accuracy_score(y, a)
                                        - skm.balanced_accuracy_score(y, b))
    with pytest.raises(ParameterError, match="`scoring`: 'f1' is defined here for two"):
        randomization_test(y, a, b, scoring="f1", n_resamples=200)


def test_validation_names_the_parameter():
    y, a, b = _classifiers(seed=14)
    with pytest.raises(DataError, match="`pred_b` has 119"):
        paired_bootstrap_test(y, a, b[:-1], n_resamples=200)
    with pytest.raises(ParameterError, match="`n_resamples` must be >= 100"):
        paired_bootstrap_test(y, a, b, n_resamples=50)
    with pytest.raises(ParameterError, match="`scoring` must be one of"):
        paired_bootstrap_test(y, a, b, scoring="f2", n_resamples=200)
    with pytest.raises(ParameterTypeError, match="`scoring`"):
        randomization_test(y, a, b, scoring=3, n_resamples=200)
    with pytest.raises(ParameterError, match="`alternative`"):
        randomization_test(y, a, b, alternative="bigger", n_resamples=200)
    with pytest.raises(ParameterError, match="`confidence_level`"):
        paired_bootstrap_test(y, a, b, confidence_level=95, n_resamples=200)
    with pytest.raises(DataError, match="`pred_a` must be numeric"):
        paired_bootstrap_test([1.0, 2.0, 3.0], ["x", "y", "z"], [1, 2, 3], scoring="mse",
                              n_resamples=200)
    with pytest.raises(DataError, match="`pred_a` must hold probabilities"):
        paired_bootstrap_test([0, 1, 1], [0.2, 1.4, 0.8], [0.3, 0.6, 0.7], scoring="log_loss",
                              n_resamples=200)
    with pytest.raises(DataError, match="`y_true`: 'roc_auc' needs exactly two classes"):
        paired_bootstrap_test([1, 1, 1], [0.2, 0.4, 0.8], [0.3, 0.6, 0.7], scoring="roc_auc",
                              n_resamples=200)
    with pytest.raises(DataError, match="`y_true` has 1 missing"):
        paired_bootstrap_test([0, np.nan, 1], [0, 1, 1], [0, 1, 0], n_resamples=200)


def test_undefined_resamples_are_left_out_and_said():
    y = np.array([0] * 18 + [1] * 2)
    rng = np.random.default_rng(0)
    sa, sb = rng.random(20) + y, rng.random(20)
    r = paired_bootstrap_test(y, sa, sb, scoring="roc_auc", n_resamples=300, random_state=0)
    assert r.extra["n_undefined"] > 0 and r.n_resamples == 300 - r.extra["n_undefined"]
    assert "undefined" in str(r)


def _size(test, metric, reps, n=100, seed=0):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        y = (rng.random(n) < 0.4).astype(int)
        a = np.where(rng.random(n) < 0.8, y, 1 - y)
        b = np.where(rng.random(n) < 0.8, y, 1 - y)
        hits += test(y, a, b, scoring=metric, n_resamples=199,
                     random_state=int(rng.integers(2**31))).pvalue <= 0.05
    return hits / reps


@pytest.mark.parametrize("metric", ["accuracy", "f1"])
def test_randomization_size_under_exchangeable_models(metric):
    """Exchangeable classifiers: the rejection rate at 0.05 stays below 0.05 + 3 SE (200
    data sets here; 2,000 in the recorded study)."""
    size = _size(randomization_test, metric, 200)
    assert size <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 200)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["accuracy", "f1"])
def test_bootstrap_size_under_exchangeable_models(metric):
    size = _size(paired_bootstrap_test, metric, 300, seed=1)
    assert size <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)


def test_bootstrap_interval_coverage_of_accuracy_difference():
    """Coverage of the 95% percentile interval of a known accuracy difference (0.85 - 0.75
    = 0.10 by construction), 150 data sets: within 3 SE of 0.95."""
    rng = np.random.default_rng(21)
    cover, reps = 0, 150
    for _ in range(reps):
        y = rng.integers(0, 2, 150)
        a = np.where(rng.random(150) < 0.85, y, 1 - y)
        b = np.where(rng.random(150) < 0.75, y, 1 - y)
        ci = paired_bootstrap_test(y, a, b, n_resamples=400,
                                   random_state=int(rng.integers(2**31))).confidence_interval()
        cover += ci.low <= 0.10 <= ci.high
    assert abs(cover / reps - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / reps)


def test_scoring_names_cover_replikits_metrics():
    """One name per metric across the library: every built-in metric is a scoring name."""
    assert set(METRICS) <= set(T.SCORINGS)
