"""Intervals of the prediction-error estimates: nested cross-validation against a plain loop
written from the nestedcv package's R code (Bates, Hastie & Tibshirani 2024), the hold-out
intervals against scipy, and properties (levels, reproducibility, workers, CLI output)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from replikit._random import root_seed_sequence, task_rng
from replikit.errors import ParameterError
from replikit.experiment.schemes import HoldOut, RepeatedKFold
from replikit.resampling import estimate_error, estimate_errors


def _regression(n=40, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + rng.normal(size=n)


def _nested_by_loop(X, y, folds_by_repeat, K):
    """nestedcv's nested_cv / nested_cv_helper, transcribed with one sklearn fit per loop
    (bias from the outer folds of the same partitions, every row kept)."""
    n = len(y)
    pivots_a, pivots_b, ho_errs, cv_errs = [], [], [], []

    def loss(train, test):
        fit = LinearRegression().fit(X[train], y[train])
        return (y[test] - fit.predict(X[test])) ** 2

    for fold in folds_by_repeat:
        ho = {}
        for f1 in range(K - 1):
            for f2 in range(f1 + 1, K):
                train = (fold != f1) & (fold != f2)
                ho[f1, f2] = loss(train, fold == f1)  # errors on f1, folds f1 & f2 left out
                ho[f2, f1] = loss(train, fold == f2)
                ho_errs.extend(ho[f1, f2])
                ho_errs.extend(ho[f2, f1])
        for f1 in range(K):
            e_out = loss(fold != f1, fold == f1)
            cv_errs.extend(e_out)
            e_in = np.concatenate([ho[f2, f1] for f2 in range(K) if f2 != f1])
            pivots_a.append(e_in.mean() - e_out.mean())
            pivots_b.append(np.var(e_out, ddof=1) / e_out.size)
    ho_errs = np.array(ho_errs)
    mse = np.mean(np.array(pivots_a) ** 2) - np.mean(pivots_b)
    n_sub = math.floor(n * (K - 1) / K)
    infl = math.sqrt(max(0.0, mse)) / (np.std(ho_errs, ddof=1) / math.sqrt(n_sub))
    infl = max(1.0, min(infl, math.sqrt(K)))
    bias = (np.mean(ho_errs) - np.mean(cv_errs)) * (1 + ((K - 2) / K) ** 1.5)
    center = np.mean(ho_errs) - bias
    se = np.std(ho_errs, ddof=1) / math.sqrt(n) * infl
    return center, se, mse


@pytest.mark.parametrize("n, K, reps, p", [(40, 5, 3, 3), (43, 4, 2, 3), (160, 4, 2, 40)])
@pytest.mark.parametrize("fast", [None, False])
def test_nested_cv_matches_a_plain_loop(n, K, reps, p, fast):
    # p = 40: wide data, one partition per batch, moments from the folds' Gram matrices
    X, y = _regression(n, p)
    est = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=K,
                         n_nested_repeats=reps, random_state=5, fast=fast)
    root = root_seed_sequence(5)
    _, T = RepeatedKFold(K, reps).masks(n, None,
                                        random_state=task_rng(root, ("resamples", "nested")))
    folds = np.argmax(T.reshape(reps, K, n), axis=1)
    center, se, mse = _nested_by_loop(X, y, folds, K)
    parts = est.interval_parts
    assert est.interval == "nested" and parts["nested_repeats"] == reps
    assert parts["center"] == pytest.approx(center, rel=1e-9)
    assert parts["se"] == pytest.approx(se, rel=1e-9)
    assert parts["mse"] == pytest.approx(mse, rel=1e-8, abs=1e-12)
    z = stats.norm.ppf(0.95)
    ci = est.confidence_interval(0.9)
    assert (ci.low, ci.high) == pytest.approx((max(0, center - z * se), center + z * se),
                                              rel=1e-9)


@pytest.mark.parametrize("p", [3, 40])
def test_nested_cv_in_small_batches_matches_a_plain_loop(monkeypatch, p):
    # batches of 4 fits: a batch spans two partitions (p = 3) or stops at the partition's end
    # (p = 40, wide); the losses are reduced batch by batch, never held for a whole partition
    import replikit.resampling.error as error

    n, K, reps = 160, 4, 3
    monkeypatch.setattr(error, "_NESTED_CELLS", 4 * n)
    X, y = _regression(n, p, seed=2)
    est = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=K,
                         n_nested_repeats=reps, random_state=1)
    root = root_seed_sequence(1)
    _, T = RepeatedKFold(K, reps).masks(n, None,
                                        random_state=task_rng(root, ("resamples", "nested")))
    center, se, mse = _nested_by_loop(X, y, np.argmax(T.reshape(reps, K, n), axis=1), K)
    parts = est.interval_parts
    assert parts["center"] == pytest.approx(center, rel=1e-9)
    assert parts["se"] == pytest.approx(se, rel=1e-9)
    assert parts["mse"] == pytest.approx(mse, rel=1e-8, abs=1e-12)


def test_nested_cv_of_probabilities_does_not_depend_on_the_batch_size(monkeypatch):
    import replikit.resampling.error as error

    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] + rng.normal(size=150) > 0, "yes", "no")

    def parts():
        return estimate_error(LDA(), X, y, method="kfold", n_folds=5, loss="log",
                              n_nested_repeats=2, random_state=3).interval_parts

    whole = parts()
    monkeypatch.setattr(error, "_NESTED_CELLS", 2 * 150 * 2)  # two fits of two classes
    small = parts()
    for key in ("center", "se", "mse", "nested_estimate", "nested_cv_estimate"):
        assert small[key] == pytest.approx(whole[key], rel=1e-12), key


def test_nested_se_stays_between_naive_and_sqrt_k_naive():
    X, y = _regression(60, seed=3)
    est = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=5,
                         n_nested_repeats=4, random_state=0)
    assert 1.0 <= est.interval_parts["inflation"] <= math.sqrt(5)


def test_holdout_single_split_t_interval_is_scipys():
    X, y = _regression(50, seed=1)
    est = estimate_error(LinearRegression(), X, y, method="holdout", n_repeats=1,
                         random_state=2)
    assert est.interval == "t"
    # the same split, refitted by hand
    W, T = HoldOut(0.368, 1).masks(50, random_state=task_rng(root_seed_sequence(2),
                                                               ("resamples", "holdout")))
    train, test = W[0] > 0, T[0]
    losses = (y[test] - LinearRegression().fit(X[train], y[train]).predict(X[test])) ** 2
    ref = stats.t.interval(0.9, losses.size - 1, loc=losses.mean(),
                           scale=stats.sem(losses))
    ci = est.confidence_interval(0.9)
    assert (ci.low, ci.high) == pytest.approx((max(0.0, ref[0]), ref[1]), rel=1e-10)


def test_holdout_zero_one_exact_interval_is_clopper_pearson():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    est = estimate_error(LDA(), X, y, method="holdout", n_repeats=1, random_state=0)
    assert est.interval == "exact"
    m = est.parameters["n_test"]
    k = int(round(est.estimate * m))
    ref = stats.binomtest(k, m).proportion_ci(0.95, method="exact")
    ci = est.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), rel=1e-10)


def test_repeated_holdout_corrected_t():
    X, y = _regression(60, seed=2)
    est = estimate_error(LinearRegression(), X, y, method="holdout", n_repeats=30,
                         random_state=1)
    assert est.interval == "corrected_t"
    H, m = 30, est.parameters["n_test"]
    se = math.sqrt((1 / H + m / (60 - m)) * np.var(est.per_resample, ddof=1))
    ci = est.confidence_interval(0.95)
    q = stats.t.ppf(0.975, H - 1)
    assert (ci.low, ci.high) == pytest.approx((est.estimate - q * se, est.estimate + q * se))


def test_wald_interval_does_not_shrink_with_repeats():
    # the naive SE is over rows, not over the K*R fold errors: 10 repeats barely narrow it
    X, y = _regression(60, seed=6)
    one = estimate_error(LinearRegression(), X, y, method="kfold", interval="wald",
                         random_state=0)
    ten = estimate_error(LinearRegression(), X, y, method="kfold", interval="wald",
                         n_repeats=10, random_state=0)
    assert one.interval == ten.interval == "wald"
    assert 0.7 < ten.se / one.se < 1.3
    fold_se = np.std(ten.per_resample, ddof=1) / math.sqrt(ten.per_resample.size)
    assert ten.se > 2 * fold_se  # the old SE divided by sqrt(100)


def test_levels_nest_and_reproduce():
    X, y = _regression(50, seed=7)
    est = estimate_errors(LinearRegression(), X, y, methods=["kfold", "loo", "holdout"],
                          n_nested_repeats=3, random_state=3)
    again = estimate_errors(LinearRegression(), X, y, methods=["kfold", "loo", "holdout"],
                            n_nested_repeats=3, random_state=3)
    for m in est:
        cis = [est[m].confidence_interval(level) for level in (0.5, 0.8, 0.9, 0.95, 0.99)]
        for a, b in zip(cis, cis[1:], strict=False):
            assert b.low <= a.low and a.high <= b.high
        assert est[m].interval_parts == again[m].interval_parts  # bit-identical
    with pytest.raises(ParameterError, match="confidence_level"):
        est["kfold"].confidence_interval(1.5)


def test_generic_path_nested_does_not_depend_on_n_jobs():
    X, y = _regression(30, seed=8)
    kw = dict(method="kfold", n_folds=3, n_nested_repeats=2, random_state=4)
    one = estimate_error(DecisionTreeRegressor(max_depth=2), X, y, n_jobs=1, **kw)
    two = estimate_error(DecisionTreeRegressor(max_depth=2), X, y, n_jobs=2, **kw)
    assert one.path == "generic" and one.interval_parts == two.interval_parts


def test_no_interval_says_why():
    X, y = _regression(40, seed=9)
    res = estimate_errors(LinearRegression(), X, y, methods=[".632+", "resubstitution"],
                          n_resamples=20, random_state=0)
    for m in res:
        ci = res[m].confidence_interval()
        assert math.isnan(ci.low) and math.isnan(ci.high)
        assert res[m].interval == "none" and res[m].interval_note.startswith("no interval:")
        assert res[m].interval_note in str(res[m])
    with pytest.raises(ParameterError, match="`interval`"):
        estimate_error(LinearRegression(), X, y, method=".632+", interval="nested")
    with pytest.raises(ParameterError, match="`interval`"):
        estimate_error(LinearRegression(), X, y, method="kfold", interval="bogus")


def test_cli_prints_interval_and_method(tmp_path, capsys):
    import pandas as pd

    from replikit.cli import main

    X, y = _regression(60, seed=10)
    path = tmp_path / "d.csv"
    pd.DataFrame(np.c_[X, y], columns=["a", "b", "c", "y"]).to_csv(path, index=False)
    args = ["estimate", "--data", str(path), "--target", "y", "--methods", "kfold,.632+",
            "--n-nested-repeats", "3", "--n-resamples", "20"]
    with pytest.raises(SystemExit) as exc:
        main(["--format", "json", *args, "--confidence-level", "0.9"])
    assert exc.value.code == 0
    data = json.loads(capsys.readouterr().out)
    kfold, boot = data["estimates"]
    ref = estimate_error(LinearRegression(), pd.DataFrame(X, columns=list("abc")), y,
                         method="kfold", n_nested_repeats=3, random_state=0)
    ci = ref.confidence_interval(0.9)
    assert (kfold["ci_low"], kfold["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert kfold["interval"] == "nested" and kfold["confidence_level"] == 0.9
    assert "Bates" in kfold["interval_method"]
    assert boot["ci_low"] is None and boot["interval_method"].startswith("no interval")
    with pytest.raises(SystemExit):
        main(args)
    out = capsys.readouterr().out
    assert "95% interval" in out and "nested cross-validation" in out
    assert f"[{ref.confidence_interval().low:.4g}" in out.replace(",", "")


def test_nested_cv_that_cannot_fit_falls_back_to_wald(monkeypatch):
    import replikit.resampling.error as error

    def broken(*args, **kwargs):
        raise error.DataError("fitting on a resample failed: one class")

    monkeypatch.setattr(error, "_nested", broken)
    X, y = _regression(30, seed=11)
    est = estimate_error(LinearRegression(), X, y, method="kfold", random_state=0)
    assert est.interval == "wald" and "nested cross-validation failed" in est.interval_note
    assert est.interval_note in str(est)
    ci = est.confidence_interval()
    assert ci.low < est.estimate < ci.high


def test_two_folds_have_no_nested_interval():
    """Nested CV fits without two folds: with K = 2 nothing is left to learn from, so the default
    is the naive interval (said on the result) and asking for nested names n_folds."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + rng.normal(size=60)
    est = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=2, random_state=0)
    assert est.interval == "wald" and "at least 3 folds" in est.interval_note
    low, high = est.confidence_interval()
    assert low < est.estimate < high
    with pytest.raises(ParameterError, match="n_folds"):
        estimate_error(LinearRegression(), X, y, method="kfold", n_folds=2, interval="nested")
    three = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=3,
                           n_nested_repeats=3, random_state=0)
    assert three.interval == "nested"
