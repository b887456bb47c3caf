"""Error estimators of Etherington & Lieske (2019) (eqs. 3-7), .632 and .632+: closed forms, properties, inputs."""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from replikit.errors import DataError, ParameterError, ParameterTypeError, ReplikitError
from replikit.experiment import Bootstrap, HoldOut, RepeatedKFold
from replikit.resampling import ErrorEstimate, estimate_error
from replikit.resampling.error import _no_information, _Problem, estimate_errors

LDA = LinearDiscriminantAnalysis


def _null(seed, n=30, p=10):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)), rng.binomial(1, 0.5, n)


def test_resubstitution_is_training_error():
    X, y = _null(0)
    res = estimate_error(LDA(), X, y, method="resubstitution")
    pred = LDA().fit(X, y).predict(X)
    assert res.estimate == pytest.approx(np.mean(pred != y))


def test_loo_equals_press_closed_form():
    # leave-one-out residuals of OLS are e_i / (1 - h_ii) (closed form, no refitting)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=25)
    A = np.column_stack([np.ones(25), X])
    H = A @ np.linalg.solve(A.T @ A, A.T)
    e = y - H @ y
    press = np.mean((e / (1 - np.diag(H))) ** 2)
    for fast in (True, False):
        res = estimate_error(LinearRegression(), X, y, method="loo", fast=fast)
        assert res.estimate == pytest.approx(press, rel=1e-10)
        res_k = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=25, fast=fast,
                               interval="none")  # the point estimate is the question here
        assert res_k.estimate == pytest.approx(press, rel=1e-10)


def test_kfold_tests_every_row_once_per_repeat_and_holdout_sizes():
    X, y = _null(2, n=31)
    res = estimate_error(LDA(), X, y, method="kfold", n_folds=4, n_repeats=3, random_state=0)
    assert res.per_resample.size == 12
    for rounding, k in (("floor", 11), ("ceil", 12)):
        h = estimate_error(LDA(), X, y, method="holdout", n_repeats=7, test_size=0.368,
                           rounding=rounding, random_state=0)
        assert h.parameters["n_test"] == k
        assert h.per_resample.size == 7
        assert np.allclose(h.per_resample * k, np.round(h.per_resample * k))  # counts / k


def test_holdout_rounding_follows_schemes_module():
    for n, p in product((30, 31, 50, 97), (0.2, 0.368, 0.5)):
        for rounding in ("floor", "ceil"):
            res = estimate_error(LinearRegression(), np.arange(n)[:, None] * 1.0,
                                 np.arange(n) * 1.0, method="holdout", n_repeats=1,
                                 test_size=p, rounding=rounding, random_state=0)
            assert res.parameters["n_test"] == HoldOut(p, rounding=rounding).n_test(n)


def test_eq6_and_eq7_agree_as_b_grows():
    # Efron (1997): the two bootstrap definitions agree as B -> infinity
    gaps = {25: [], 2000: []}
    for seed in range(4):
        X, y = _null(seed)
        for B in gaps:
            res = estimate_errors(LDA(), X, y, methods=["bootstrap", "loo_bootstrap"],
                                  n_resamples=B, random_state=seed)
            gaps[B].append(abs(res["bootstrap"].estimate - res["loo_bootstrap"].estimate))
    assert max(gaps[2000]) < 0.006
    assert np.mean(gaps[2000]) < np.mean(gaps[25])


def test_resubstitution_below_others_on_null_design():
    methods = ["resubstitution", "holdout", "kfold", "loo", "bootstrap", "loo_bootstrap", ".632",
               ".632+"]
    for seed in range(5):
        X, y = _null(10 + seed)
        res = estimate_errors(LDA(), X, y, methods=methods, n_resamples=100, n_repeats=None,
                              random_state=seed)
        apparent = res["resubstitution"].estimate
        for m in methods[1:]:
            assert apparent <= res[m].estimate, (seed, m)


def _noinfo_bruteforce(y, pred, loss):
    pairs = np.array(list(product(y, pred)))
    return float(np.mean(loss(pairs[:, 0], pairs[:, 1])))


@pytest.mark.parametrize("loss, fn", [
    ("squared", lambda a, b: (a - b) ** 2),
    ("absolute", lambda a, b: np.abs(a - b)),
])
def test_no_information_rate_closed_forms_regression(loss, fn):
    rng = np.random.default_rng(3)
    y, pred = rng.normal(size=40), rng.normal(size=40)
    prob = _Problem(None, None, None, y, y, None, "regression", loss, loss, 40)
    assert _no_information(prob, pred, 0) == pytest.approx(_noinfo_bruteforce(y, pred, fn))


def test_no_information_rate_closed_forms_classification():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 50)
    pred = rng.integers(0, 3, 50)
    classes = np.array([0, 1, 2])
    prob = _Problem(None, None, None, y, y, classes, "classification", "zero_one", "zero_one", 50)
    assert _no_information(prob, pred, 0) == pytest.approx(
        _noinfo_bruteforce(y, pred, lambda a, b: a != b))
    proba = rng.dirichlet(np.ones(3), size=50)
    prob_log = _Problem(None, None, None, y, y, classes, "classification", "log", "log", 50)
    brute = np.mean([-np.log(proba[j, y[i]]) for i in range(50) for j in range(50)])
    assert _no_information(prob_log, proba, 0) == pytest.approx(brute)
    custom = _Problem(None, None, None, y, y, classes, "classification",
                      lambda a, b: (a != b) * 2.0, "double", 50)
    assert _no_information(custom, pred, 0) == pytest.approx(
        2 * _noinfo_bruteforce(y, pred, lambda a, b: a != b))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(12, 40), p=st.integers(1, 8),
       signal=st.sampled_from([0.0, 1.0, 8.0]))
def test_632_plus_always_in_unit_interval(seed, n, p, signal):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (signal * X[:, 0] + rng.normal(size=n) > 0).astype(int)
    if np.unique(y).size < 2:
        y[0] = 1 - y[0]
    for model in (LDA(priors=[0.5, 0.5]), DecisionTreeClassifier(max_depth=None)):
        res = estimate_error(model, X, y, method=".632+", n_resamples=20, random_state=seed)
        c = res.components
        assert 0.0 <= res.estimate <= 1.0
        assert 0.0 <= c["overfitting_rate"] <= 1.0
        err1p = min(c["loo_bootstrap"], c["no_information"])  # Err(1)' of E&T (1997)
        # a convex combination of the apparent error and Err(1)'
        assert min(c["apparent"], err1p) - 1e-12 <= res.estimate
        assert res.estimate <= max(c["apparent"], err1p) + 1e-12


def test_632_plus_reduces_to_632_without_overfitting_and_to_err1_at_full_overfitting():
    # a fully overfitting tree on null data: err = 0 and Err(1) ~ gamma, so R ~ 1, w ~ 1
    X, y = _null(5, n=40, p=3)
    res = estimate_errors(DecisionTreeClassifier(), X, y, methods=[".632", ".632+"],
                          n_resamples=200, random_state=1)
    c = res[".632+"].components
    assert c["apparent"] == 0.0
    assert c["overfitting_rate"] > 0.8
    assert res[".632+"].estimate > res[".632"].estimate
    expected = c["weight"] * min(c["loo_bootstrap"], c["no_information"])
    assert res[".632+"].estimate == pytest.approx(expected)


def test_same_seed_bit_identical_and_generic_parallel_identical():
    X, y = _null(6)
    a = estimate_errors(DecisionTreeClassifier(), X, y, methods=["kfold", ".632+"],
                        n_resamples=20, random_state=7)
    b = estimate_errors(DecisionTreeClassifier(), X, y, methods=["kfold", ".632+"],
                        n_resamples=20, random_state=7, n_jobs=2)
    for m in ("kfold", ".632+"):
        assert a[m].estimate == b[m].estimate
        assert np.array_equal(a[m].per_resample, b[m].per_resample)
    c = estimate_error(LDA(), X, y, method="bootstrap", random_state=7)
    d = estimate_error(LDA(), X, y, method="bootstrap", random_state=7)
    assert c.estimate == d.estimate and np.array_equal(c.per_resample, d.per_resample)


def test_bootstrap_methods_share_resamples():
    X, y = _null(8)
    single = estimate_error(LDA(), X, y, method="loo_bootstrap", random_state=3)
    both = estimate_errors(LDA(), X, y, methods=["bootstrap", "loo_bootstrap"], random_state=3)
    assert single.estimate == both["loo_bootstrap"].estimate


def test_losses_absolute_equals_zero_one_for_01_labels_and_log_loss():
    X, y = _null(9)
    # the point estimates are the question here: no interval (nested CV refits K(K+1)/2 x 50)
    a = estimate_error(LDA(), X, y, method="kfold", loss="absolute", random_state=0,
                       interval="none")
    z = estimate_error(LDA(), X, y, method="kfold", loss="zero_one", random_state=0,
                       interval="none")
    assert a.estimate == z.estimate  # eq. 2 with 0/1 labels is the misclassification rate
    from sklearn.linear_model import LogisticRegression

    lg_fast = estimate_error(LogisticRegression(C=0.3), X, y, method="kfold", loss="log",
                             random_state=0, interval="none")
    lg_gen = estimate_error(LogisticRegression(C=0.3), X, y, method="kfold", loss="log",
                            random_state=0, fast=False, interval="none")
    assert lg_fast.path == "fast"
    assert lg_fast.estimate == pytest.approx(lg_gen.estimate, rel=1e-4)
    # LDA probabilities depend on the covariance divisor: log loss takes the generic path
    assert estimate_error(LDA(), X, y, method="kfold", loss="log",
                          interval="none").path == "generic"
    custom = estimate_error(DecisionTreeRegressor(max_depth=2), X, y.astype(float),
                            method="kfold", loss=lambda t, p: np.abs(t - p) ** 3,
                            random_state=0, interval="none")
    assert custom.loss == "<lambda>" and custom.estimate >= 0


def test_string_labels_and_dataframe_input():
    X, y = _null(10)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    labels = np.where(y == 1, "present", "absent")
    res = estimate_error(LDA(), frame, pd.Series(labels), method="kfold", random_state=0)
    ref = estimate_error(LDA(), X, y, method="kfold", random_state=0)
    assert res.estimate == ref.estimate


def test_result_frame_and_str():
    X, y = _null(11)
    res = estimate_error(LDA(), X, y, method="holdout", n_repeats=20, rounding="floor",
                         random_state=0)
    assert isinstance(res, ErrorEstimate)
    frame = res.to_frame()
    assert list(frame.columns[:10]) == ["method", "estimate", "se", "ci_low", "ci_high",
                                        "interval", "loss", "n", "n_resamples", "path"]
    assert frame.loc[0, "n_test"] == 11
    assert "hold-out" in str(res) and "eq. 4" in str(res)
    assert math.isfinite(res.se) and res.se > 0
    many = estimate_errors(LDA(), X, y, methods=["resubstitution", ".632+"], random_state=0)
    assert len(many.to_frame()) == 2 and "632+" in str(many)


@pytest.mark.parametrize("kwargs, err, text", [
    ({"method": "cv"}, ParameterError, "`method`"),
    ({"method": "kfold", "n_folds": 1}, ParameterError, "`n_folds`"),
    ({"method": "kfold", "n_folds": 31}, ParameterError, "`n_folds`"),
    ({"method": "holdout", "test_size": 1.5}, ParameterError, "`test_size`"),
    ({"method": "holdout", "test_size": 0.01, "rounding": "floor"}, ParameterError,
     "`test_size`"),
    ({"method": "holdout", "rounding": "round"}, ParameterError, "`rounding`"),
    ({"method": "bootstrap", "n_resamples": 0}, ParameterError, "`n_resamples`"),
    ({"method": "bootstrap", "n_resamples": 2.5}, ParameterTypeError, "`n_resamples`"),
    ({"loss": "hinge"}, ParameterError, "`loss`"),
    ({"task": "ranking"}, ParameterError, "`task`"),
    ({"random_state": -1}, ParameterTypeError, "`random_state`"),
])
def test_bad_parameters(kwargs, err, text):
    X, y = _null(12)
    with pytest.raises(err, match=text):
        estimate_error(LDA(), X, y, **kwargs)


def test_bad_data_and_fast_request():
    X, y = _null(13)
    with pytest.raises(DataError, match="same number of rows"):
        estimate_error(LDA(), X[:20], y)
    with pytest.raises(DataError, match="single class"):
        estimate_error(LDA(), X, np.zeros(30))
    with pytest.raises(ParameterError, match="needs a classifier"):
        estimate_error(LinearRegression(), X, y * 1.0, loss="zero_one")
    with pytest.raises(ParameterError, match="`fast`"):
        estimate_error(DecisionTreeClassifier(), X, y, fast=True)
    with pytest.raises(ParameterTypeError, match="`model`"):
        estimate_error("lda", X, y)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        estimate_error(LDA(), bad, y)
    with pytest.raises(ReplikitError, match="`methods`"):
        estimate_errors(LDA(), X, y, methods=["kfold", "kfold"])


@pytest.mark.parametrize("method, scheme", [
    ("kfold", RepeatedKFold(5, 2)), ("holdout", HoldOut(0.368, 6)), ("bootstrap", Bootstrap(15)),
])
def test_resamples_are_the_experiment_schemes_splits(method, scheme):
    # one scheme engine: the batched fit's per-resample errors equal scikit-learn refits on the
    # splits the scheme's iter_splits gives for the same stream
    from replikit._random import task_rng

    rng = np.random.default_rng(21)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, 0.5, -1.0] + rng.normal(size=40)
    res = estimate_error(LinearRegression(), X, y, method=method, n_folds=5, n_repeats=2 if
                         method == "kfold" else 6, n_resamples=15, random_state=4)
    assert res.path == "fast"
    splits = scheme.iter_splits(X, y, random_state=task_rng(4, ("resamples", method)))
    ref = [np.mean((y[s.test] - LinearRegression().fit(X[s.train], y[s.train]).predict(
        X[s.test])) ** 2) for s in splits]
    np.testing.assert_allclose(res.per_resample, ref, rtol=1e-9)
