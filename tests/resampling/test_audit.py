"""The audit entry of the resampling capability (replikit.resampling.audit): the plan, the loss
choice, failures kept as notes, the verdict, reproducibility across worker counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression, RidgeClassifier
from sklearn.tree import DecisionTreeClassifier

from replikit.data.userdata import Dataset
from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.experiment.models import make_models
from replikit.resampling import AUDIT_METHODS, ErrorAudit, audit, estimate_errors


def _dataset(task, n=300, seed=0, study=None):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    if task == "regression":
        y = pd.Series(2 * X["a"] + rng.normal(size=n), name="y")
    else:
        y = pd.Series((X["a"] + rng.normal(size=n) > 0).astype(int), name="y")
    return Dataset("toy", X, y, study, task, 0)


class Broken(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        raise ValueError("this model cannot be fitted")

    def predict(self, X):
        return np.zeros(len(X))


def test_regression_plan_loss_and_verdict():
    ds = _dataset("regression", n=600)
    res = audit(ds, models=make_models("lr,rf,dummy", "regression"), quick=True, random_state=1)
    assert isinstance(res, ErrorAudit) and res.loss == "squared" and res.n_rows == 600
    # every model on every row; the forest refitted per resample within the row-fit budget
    # (quick: clip(round(40,000 / 600), 5, 10) = 10 resamples)
    assert res.plans["lr"] == {"rows": 600, "n_resamples": 50, "n_folds": 10, "path": "fast",
                               "interval": "nested", "nested_repeats": 3, "limited_by": None}
    assert res.plans["dummy"]["path"] == "fast"
    assert res.plans["rf"] == {"rows": 600, "n_resamples": 10, "n_folds": 5, "path": "generic",
                               "interval": "wald", "nested_repeats": 0, "limited_by": None}
    frame = res.to_frame()
    assert len(frame) == 3 * len(AUDIT_METHODS)
    assert set(frame["n"]) == {600}
    table = res.table().set_index("model")
    # the verdict's numbers are the table's: lowest K-fold error and largest optimism
    assert res.best_model == table["kfold"].idxmin() != "dummy"
    assert res.best_estimate == table.loc[res.best_model, "kfold"]
    assert res.best_632 == table[".632+"].idxmin()
    # the key number is the best model's K-fold error with its interval (nested for lr)
    assert res.verdict.estimate == table.loc[res.best_model, "kfold"]
    low, high = res.verdict.ci_low, res.verdict.ci_high
    assert (low, high) == (table.loc[res.best_model, "kfold_ci_low"],
                           table.loc[res.best_model, "kfold_ci_high"])
    assert 0 <= low < high
    kinds = table["kfold_interval"].to_dict()
    assert kinds == {"lr": "nested", "rf": "wald", "dummy": "nested"}
    assert res.optimism_model == table["optimism"].idxmax() == "rf"  # a forest fits its rows
    assert res.optimism == pytest.approx(table.loc["rf", "kfold"] - table.loc["rf",
                                                                              "resubstitution"])
    v = res.verdict
    assert v.level == "info" and v.metric == "mean squared error"
    assert v.sentence.startswith(f"{res.best_model} has the lowest") and "rf would" in v.sentence
    assert any("quick" in c for c in v.caveats)
    assert any(n.startswith("rf: all 600 rows, 10 bootstrap resamples") for n in res.notes)
    assert "Prediction error by resampling" in str(res)


def test_estimates_are_estimate_errors_under_the_plan():
    # the batched model on all rows is exactly estimate_errors with the documented plan
    ds = _dataset("regression", seed=3)
    res = audit(ds, models={"ols": LinearRegression()}, random_state=7)
    ref = estimate_errors(LinearRegression(), ds.X, ds.y, methods=AUDIT_METHODS, loss="squared",
                          n_resamples=200, n_folds=10, n_nested_repeats=10,
                          random_state=7).to_frame()
    got = res.to_frame().drop(columns=["model", "rows_used"])
    pd.testing.assert_frame_equal(got, ref)


def test_plan_budget_of_refitted_models():
    from replikit.resampling.audit import _plan

    # clip(round(150,000 / n), 10, 50) resamples, every row, whatever n
    assert _plan(False, 600, False) == {"rows": 600, "n_resamples": 50, "n_folds": 10}
    assert _plan(False, 13440, False)["n_resamples"] == 11
    assert _plan(False, 10**6, False)["n_resamples"] == 10
    assert _plan(True, 10**6, False) == {"rows": 10**6, "n_resamples": 200, "n_folds": 10}


def test_kfold_from_a_shared_run_is_the_runners_first_repeat():
    """cv=: K-fold (eq. 5) read from a shared run's first repeat — the mean per-row loss,
    recomputed here from the run's predictions; the other methods unchanged."""
    from replikit.experiment import RepeatedKFold, run

    ds = _dataset("classification", n=300, seed=4)
    models = make_models("lr,rf", "classification")
    shared = run(models, ds.X, ds.y, scheme=RepeatedKFold(5, 2, stratify=True),
                 metrics=["roc_auc"], random_state=3, return_predictions=True)
    res = audit(ds, models=models, quick=True, random_state=3, cv=shared)
    alone = audit(ds, models=models, quick=True, random_state=3)
    p = shared.predictions.frame
    for name in models:
        q = p[(p["model"] == name) & (p["repeat"] == 0)]
        prob = np.where(q["y_true"] == 1, q["proba_1"], q["proba_0"])
        ref = float(np.mean(-np.log(np.clip(prob, 1e-15, 1))))
        got = res.to_frame().set_index(["model", "method"]).loc[(name, "kfold")]
        assert got["estimate"] == pytest.approx(ref, rel=1e-12) and got["n_resamples"] == 5
        for m in (".632+", "resubstitution", "bootstrap"):
            a = res.to_frame().set_index(["model", "method"]).loc[(name, m), "estimate"]
            b = alone.to_frame().set_index(["model", "method"]).loc[(name, m), "estimate"]
            assert a == b
    half = run(models, ds.X.iloc[:150], ds.y.iloc[:150], scheme="5x1", metrics=["accuracy"],
               random_state=3)
    with pytest.raises(ParameterTypeError, match="`cv`"):
        audit(ds, models=models, quick=True, random_state=3, cv=object())
    with pytest.raises(Exception, match="`cv`"):
        audit(ds, models=models, quick=True, random_state=3, cv=half)


def test_loss_choice_for_classifiers():
    ds = _dataset("classification")
    with_proba = audit(ds, models=make_models("lr,dummy", "classification"), quick=True,
                       random_state=0)
    assert with_proba.loss == "log" and with_proba.loss_label == "log loss"
    # a model without predict_proba: misclassification rate for every model
    without = audit(ds, models={"lr": make_models("lr", "classification")["lr"],
                                "ridge": RidgeClassifier()}, quick=True, random_state=0)
    assert without.loss == "zero_one"
    est = without.to_frame()["estimate"]
    assert np.all((est >= 0) & (est <= 1))


def test_failures_are_notes_and_all_failing_is_an_error():
    ds = _dataset("regression")
    res = audit(ds, models={"lr": LinearRegression(), "broken": Broken()}, quick=True,
                random_state=0)
    assert list(res.plans) == ["lr"] and "cannot be fitted" in res.failed["broken"]
    assert any(n.startswith("broken left out") for n in res.notes)
    assert any("not estimated: broken" in c for c in res.verdict.caveats)
    with pytest.raises(DataError, match="no model's error could be estimated: broken"):
        audit(ds, models={"broken": Broken()}, quick=True, random_state=0)


def test_same_seed_same_numbers_whatever_the_workers():
    ds = _dataset("classification", n=200, seed=4)
    models = {"tree": DecisionTreeClassifier(max_depth=3), "lda": make_models(
        "lda", "classification")["lda"]}
    a = audit(ds, models=models, quick=True, random_state=5)
    b = audit(ds, models=models, quick=True, random_state=5, n_jobs=2)
    c = audit(ds, models=models, quick=True, random_state=6)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    assert a.verdict == b.verdict and a.plans == b.plans
    assert not a.to_frame()["estimate"].equals(c.to_frame()["estimate"])


def test_studies_pooled_caveat_progress_and_plot():
    ds = _dataset("regression", study=pd.Series(np.repeat(["s1", "s2", "s3"], 100)))
    ticks = []
    res = audit(ds, models={"lr": LinearRegression()}, quick=True, random_state=0,
                progress=ticks.append)
    assert ticks == [1]
    assert any("3 studies are pooled" in n for n in res.notes)
    assert any("studies pooled" in c for c in res.verdict.caveats)
    ax = res.plot()
    assert ax.get_ylabel() == "estimated mean squared error"


def test_default_models_and_bad_inputs():
    ds = _dataset("regression", n=120)
    res = audit(ds, quick=True, random_state=0)
    assert list(res.plans) == ["lr", "rf", "dummy"]
    with pytest.raises(ParameterTypeError, match="`dataset`"):
        audit((ds.X, ds.y))
    with pytest.raises(ParameterTypeError, match="`models`"):
        audit(ds, models={})
    with pytest.raises(ParameterError, match="`n_jobs`"):
        audit(ds, n_jobs=0)
    with pytest.raises(ParameterTypeError, match="`quick`"):
        audit(ds, quick="yes")


def test_plan_follows_the_path_the_loss_allows():
    # LDA has a batched fit for labels, not for the log loss (its posterior depends on the
    # covariance divisor): with log loss it is refitted per resample, within the budget
    ds = _dataset("classification", n=600, seed=2)
    lda = make_models("lda", "classification")
    log = audit(ds, models={**lda, **make_models("lr", "classification")}, quick=True,
                random_state=0)
    assert log.loss == "log"
    assert log.plans["lda"] == {"rows": 600, "n_resamples": 10, "n_folds": 5, "path": "generic",
                                "interval": "wald", "nested_repeats": 0, "limited_by": None}
    assert log.plans["lr"]["path"] == "fast" and log.plans["lr"]["rows"] == 600
    zero_one = audit(ds, models={**lda, "ridge": RidgeClassifier()}, quick=True, random_state=0)
    assert zero_one.plans["lda"] == {"rows": 600, "n_resamples": 50, "n_folds": 10,
                                     "path": "fast", "interval": "nested", "nested_repeats": 3,
                                     "limited_by": None}


def test_verdict_says_when_632_and_kfold_disagree_on_the_best_model():
    # gapminder's quick audit: .632+ ranked rf lowest (12.8) while rf's own K-fold error
    # (18.3) was above lr's (14.8); the card named rf beside a comparison naming lr. The
    # best model is now the K-fold one, and the disagreement is said, not hidden
    import pandas as pd

    from replikit.resampling.audit import _verdict

    wide = pd.DataFrame({"kfold": [14.8, 18.3], ".632+": [13.5, 12.8],
                         "resubstitution": [11.4, 6.8]}, index=["lr", "rf"])
    krow = pd.Series({"estimate": 14.8, "se": 0.9, "ci_low": 13.0, "ci_high": 16.6,
                      "interval": "wald", "n_folds": 2})
    plans = {m: {"path": "fast", "n_resamples": 50} for m in wide.index}
    v = _verdict("squared", "lr", wide, "rf", "rf", 11.5, plans, {}, 1704, True, 5, krow)
    assert v.sentence.startswith("lr has the lowest estimated mean squared error")
    assert ("ranks rf lowest instead (12.8 against 13.5; its 2-fold error 18.3 against "
            "14.8), so the two estimators disagree") in v.sentence
    # nwtco: lasso and lr alike to three digits (0.363): more digits, and no "disagree"
    # when the K-fold gap is inside the best model's standard error
    near = pd.DataFrame({"kfold": [0.36312, 0.36318], ".632+": [0.36291, 0.36287],
                         "resubstitution": [0.35, 0.35]}, index=["lr", "lasso"])
    krow2 = pd.Series({"estimate": 0.36312, "se": 0.0098, "ci_low": 0.343, "ci_high": 0.382,
                       "interval": "nested", "n_folds": 10})
    plans["lasso"] = plans["lr"]
    plans["lr"] = {**plans["lr"], "nested_repeats": 3}
    w = _verdict("log", "lr", near, "lasso", "lr", 0.01, plans, {}, 4088, False, 2, krow2)
    assert "(0.3629 against 0.3629" not in w.sentence
    assert "lasso lowest instead (0.36287 against 0.36291; its 10-fold error 0.36318 " \
           "against 0.36312), a difference well inside the noise" in w.sentence
    assert "disagree" not in w.sentence
    assert v.estimate == 14.8 and (v.ci_low, v.ci_high) == (13.0, 16.6)
    same = _verdict("squared", "lr", wide, "lr", "rf", 11.5, plans, {}, 1704, True, 5, krow)
    assert "instead" not in same.sentence and "disagree" not in same.sentence
