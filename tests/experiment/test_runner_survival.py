"""Survival outcomes through the runner, the data and cross-study validation.

References: scikit-survival 0.28's metrics (``sksurv.metrics``) on the runner's own folds, and
a fit made by hand (scikit-survival's CoxPHSurvivalAnalysis) for the cross-study cells.
"""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from replikit.data.examples import nwtco, uis
from replikit.data.userdata import dataset_from_frame
from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.experiment import RepeatedKFold, run
from replikit.experiment.models import SurvivalBaseline, make_model, make_models
from replikit.experiment.survival import survival_target

sksurv_metrics = pytest.importorskip("sksurv.metrics")


@pytest.fixture(scope="module")
def data():
    ex = uis()
    return ex.X, ex.outcome, ex.study


@pytest.fixture(scope="module")
def result(data):
    X, y, s = data
    return run(make_models("cox,dummy", "survival"), X, y, study=s,
               scheme=RepeatedKFold(5, 1, stratify=True),
               metrics=["c_index", "c_index_uno", "mean_auc", "integrated_brier_score"],
               random_state=0)


def test_scores_equal_scikit_survival_on_each_fold(data, result):
    """Each fold's four metrics equal scikit-survival's on that fold's predictions, with the
    training rows (the other folds of the study) for the censoring weights."""
    X, y, s = data
    preds = result.predictions.frame
    scores = result.scores.frame.set_index(["study", "model", "repeat", "fold", "metric"])
    for (study, model, rep, fold), g in preds[preds["model"] == "cox"].groupby(
            ["study", "model", "repeat", "fold"]):
        test = g["row"].to_numpy()
        train = np.setdiff1d(np.flatnonzero(s.to_numpy() == study), test)
        yt, ytr, risk = y[test], y[train], g["y_pred"].to_numpy()
        c = sksurv_metrics.concordance_index_censored(yt["event"], yt["time"], risk)[0]
        assert scores.loc[(study, model, rep, fold, "c_index"), "value"] == pytest.approx(
            c, abs=1e-12)
        uno = sksurv_metrics.concordance_index_ipcw(ytr, yt, risk)[0]
        assert scores.loc[(study, model, rep, fold, "c_index_uno"), "value"] == pytest.approx(
            uno, abs=1e-12)
        ev = yt["time"][yt["event"]]
        times = np.unique(np.quantile(ev, np.arange(1, 9) / 10))
        times = times[(times >= yt["time"].min()) & (times < yt["time"].max())
                      & (times < ytr["time"].max())]
        auc = sksurv_metrics.cumulative_dynamic_auc(ytr, yt, risk, times)[1]
        assert scores.loc[(study, model, rep, fold, "mean_auc"), "value"] == pytest.approx(
            auc, abs=1e-12)
        np.testing.assert_array_equal(g["event"].to_numpy(), yt["event"].astype(int))
        np.testing.assert_array_equal(g["y_true"].to_numpy(), yt["time"])


def test_baseline_scores_chance(result):
    f = result.scores.frame
    c = f[(f["model"] == "dummy") & (f["metric"] == "c_index")]["value"]
    np.testing.assert_allclose(c, 0.5)  # every pair tied
    ibs = f[f["metric"] == "integrated_brier_score"].groupby("model")["value"].mean()
    assert ibs["cox"] < ibs["dummy"] + 0.01  # Kaplan-Meier is the no-information reference


def test_folds_are_stratified_by_event(data, result):
    X, y, s = data
    preds = result.predictions.frame
    for study, g in preds[preds["model"] == "cox"].groupby("study"):
        rate = y["event"][s.to_numpy() == study].mean()
        per_fold = g.groupby("fold")["event"].mean()
        assert (abs(per_fold - rate) < 0.03).all()


def test_same_numbers_with_workers(data):
    X, y, s = data
    kw = dict(study=s, scheme=RepeatedKFold(3, 1, stratify=True), metrics="c_index",
              random_state=3)
    models = {"rf": make_model("rf", "survival")}
    models["rf"].set_params(n_estimators=10)
    a = run(models, X, y, **kw).scores.frame
    b = run(models, X, y, backend="joblib", n_jobs=2, **kw).scores.frame
    pd.testing.assert_frame_equal(a, b)


def test_tuple_target_equals_structured(data):
    X, y, s = data
    kw = dict(scheme=RepeatedKFold(3, 1, stratify=True), metrics="c_index", random_state=1)
    a = run({"cox": make_model("cox", "survival")}, X, y, **kw).scores.frame
    b = run({"cox": make_model("cox", "survival")}, X, (y["time"], y["event"]),
            **kw).scores.frame
    pd.testing.assert_frame_equal(a, b)


def test_errors_name_the_parameter(data):
    X, y, s = data
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(ParameterTypeError, match=r"`models\['lr'\]`.*survival model"):
        run({"lr": LogisticRegression()}, X, y, scheme="5x2", metrics="c_index")
    with pytest.raises(ParameterError, match="`metrics`: 'mse' does not apply to a survival"):
        run({"cox": make_model("cox", "survival")}, X, y, scheme="5x2", metrics="mse")
    with pytest.raises(ParameterError, match="`metrics`: 'c_index' needs a survival outcome"):
        run({"m": make_model("lr", "regression")}, X, y["time"], scheme="5x2",
            metrics="c_index")
    censored = survival_target(y["time"], np.where(s == "site A", False, y["event"]))
    with pytest.raises(DataError, match="study 'site A'.*every time is censored"):
        run({"cox": make_model("cox", "survival")}, X, censored, study=s, scheme="5x2",
            metrics="c_index")
    with pytest.raises(ParameterError, match="`model`: 'knn' is not a survival model"):
        make_model("knn", "survival")
    with pytest.raises(ParameterError, match="'cox' is a survival model"):
        make_model("cox", "regression")


def test_dataset_from_frame_time_event():
    frame = pd.DataFrame({"t": [5.0, 3, 9, 4, 8, 2, 7, 6], "dead": ["yes", "no"] * 4,
                          "x": np.arange(8.0), "site": ["a"] * 4 + ["b"] * 4})
    ds = dataset_from_frame(frame, time="t", event="dead", study="site")
    assert ds.task == "survival" and list(ds.X.columns) == ["x"]
    assert ds.event.tolist() == [True, False] * 4
    assert ds.outcome["time"].tolist() == frame["t"].tolist()
    with pytest.raises(DataError, match="`event`: column 'dead' must hold event indicators"):
        dataset_from_frame(frame.assign(dead=["maybe"] * 8), time="t", event="dead")
    with pytest.raises(DataError, match="`time`: column 't' must hold positive"):
        dataset_from_frame(frame.assign(t=-1.0 * frame["t"]), time="t", event="dead")
    with pytest.raises(ParameterError, match="needs both `time`"):
        dataset_from_frame(frame, time="t")
    with pytest.raises(DataError, match="no column 'when'|'when'"):
        dataset_from_frame(frame, time="when", event="dead")


def test_cross_study_cells_equal_a_fit_by_hand():
    """The off-diagonal cell (trained on NWTS-3, tested on NWTS-4) is Harrell's C of a Cox
    model fitted by hand on all of NWTS-3 (scikit-survival directly, same pipeline)."""
    from sklearn.base import clone

    from replikit.multistudy import cross_study_matrix

    ex = nwtco()
    est = make_model("cox", "survival")
    r = cross_study_matrix(est, ex.X, ex.outcome, ex.study, random_state=0)
    a = (ex.study == "NWTS-3").to_numpy()
    fitted = clone(est).fit(ex.X[a].to_numpy(), ex.outcome[a])
    risk = fitted.predict(ex.X[~a].to_numpy())
    yb = ex.outcome[~a]
    c = sksurv_metrics.concordance_index_censored(yb["event"], yb["time"], risk)[0]
    assert r.matrix.loc["NWTS-3", "NWTS-4"] == pytest.approx(c, abs=1e-12)
    assert r.metric == "c_index"


def test_audit_survival_summaries_and_verdict():
    from replikit.multistudy import audit_survival

    ex = nwtco()
    a = audit_survival(ex.X, ex.outcome, ex.study, random_state=0,
                       models={"cox": make_model("cox", "survival"),
                               "dummy": SurvivalBaseline()})
    row = a.summary.set_index("model").loc["cox"]
    m = a.matrices["cox"].to_numpy()
    assert row["within"] == pytest.approx(np.diag(m).mean(), abs=1e-12)
    assert row["across"] == pytest.approx(m[~np.eye(2, dtype=bool)].mean(), abs=1e-12)
    assert row["drop_low"] < row["drop"] < row["drop_high"]
    assert a.best == "cox"
    # the light follows the bounds: green exactly when the upper bound is within tolerance
    assert (a.verdict.level == "good") == (row["drop_high"] <= a.tolerance)
    strict = audit_survival(ex.X, ex.outcome, ex.study, random_state=0, tolerance=0.0,
                            models={"cox": make_model("cox", "survival")})
    assert strict.verdict.level in ("warn", "bad")


def test_cli_audit_time_event(tmp_path):
    ex = uis()
    frame = ex.frame()
    path = tmp_path / "uis.csv"
    frame.to_csv(path, index=False)
    run_cli = [sys.executable, "-m", "replikit", "audit", "--data", str(path), "--time", "TIME",
               "--study", "study", "--quick", "--out", str(tmp_path / "out")]
    bad = subprocess.run(run_cli, capture_output=True, text=True)
    assert bad.returncode == 2 and "--event" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_scores_from_survival_predictions(result, data):
    """Out-of-fold predictions with an `event` column are scored by Harrell's C per fold, the
    runner's own numbers; a fold without an event is left out with a warning."""
    from replikit.experiment.scoring import scores_from_predictions

    preds = result.predictions.frame
    got = scores_from_predictions(preds).frame
    want = result.scores.frame
    want = want[want["metric"] == "c_index"].reset_index(drop=True)
    merged = got.merge(want, on=["study", "model", "repeat", "fold", "metric"])
    assert len(merged) == len(want)
    np.testing.assert_allclose(merged["value_x"], merged["value_y"], atol=1e-12)
    assert (merged["n_test_x"] == merged["n_test_y"]).all()
    odd = preds.copy()
    first = (odd["study"] == "site A") & (odd["fold"] == 0) & (odd["model"] == "cox")
    odd.loc[first, "event"] = 0
    from replikit.errors import ReplikitWarning

    with pytest.warns(ReplikitWarning, match="left out c_index of 1 fold"):
        out = scores_from_predictions(odd.assign(event=odd["event"].astype(bool))).frame
    assert len(out) == len(got) - 1
    with pytest.raises(ParameterError, match="'c_index_uno' needs each fold's training rows"):
        scores_from_predictions(preds, metrics="c_index_uno")


def test_audit_of_survival_predictions(result, tmp_path):
    """The predictions entry on survival predictions: error estimates and comparisons from
    the per-fold C-index; the cross-study section says why it needs the data."""
    from replikit.report import audit_input, compute_audit

    src = audit_input(predictions=result.predictions.frame)
    assert src.task == "survival" and src.metric == "c_index"
    a = compute_audit(src, sections=["resampling", "compare", "multistudy"], random_state=0,
                      quick=True)
    by = {s.key: s for s in a.sections}
    assert not by["resampling"].skipped and not by["compare"].skipped
    assert "needs the data" in by["multistudy"].skipped
    assert "C-index" in by["compare"].data["verdict"]["metric"]


def test_cli_run_and_crossstudy_on_a_survival_table(tmp_path):
    """`replikit run` and `replikit crossstudy` take --time/--event; the cross-study C-index
    of the command line equals the library's."""
    import json

    from replikit.multistudy import cross_study_matrix

    ex = uis()
    path = tmp_path / "uis.csv"
    ex.frame().to_csv(path, index=False)
    base = [sys.executable, "-m", "replikit"]
    out = subprocess.run([*base, "--format", "json", "crossstudy", "--data", str(path),
                          "--time", "TIME", "--event", "CENSOR", "--study", "study",
                          "--models", "cox"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["models"]["cox"]["cross_study_matrix"]
    want = cross_study_matrix(make_model("cox", "survival"), ex.X, ex.outcome, ex.study,
                              random_state=0).matrix
    assert got[0]["site B"] == pytest.approx(want.loc["site A", "site B"], abs=1e-12)
    scores = tmp_path / "scores.csv"
    out = subprocess.run([*base, "run", "--data", str(path), "--time", "TIME", "--event",
                          "CENSOR", "--study", "study", "--scheme", "5x2", "--out",
                          str(scores)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert set(pd.read_csv(scores)["metric"]) == {"c_index", "c_index_uno"}
    stack = subprocess.run([*base, "crossstudy", "--data", str(path), "--time", "TIME",
                            "--event", "CENSOR", "--study", "study", "--stacking"],
                           capture_output=True, text=True)
    assert stack.returncode == 2 and "`--stacking`" in stack.stderr


def test_lifelines_models_run_through_the_runner(data):
    """A lifelines Cox model through the adapter gives the same per-fold C-index as
    scikit-survival's Cox on the same splits (both unpenalised Cox fits with Efron's ties)."""
    pytest.importorskip("lifelines")
    from lifelines import CoxPHFitter
    from sksurv.linear_model import CoxPHSurvivalAnalysis

    from replikit.experiment import LifelinesModel

    X, y, s = data
    res = run({"lifelines": LifelinesModel(CoxPHFitter()),
               "sksurv": CoxPHSurvivalAnalysis(ties="efron")}, X, y,
              scheme=RepeatedKFold(3, 1, stratify=True),
              metrics=["c_index", "integrated_brier_score"], random_state=2)
    f = res.scores.frame.pivot_table(index=["fold", "metric"], columns="model", values="value")
    np.testing.assert_allclose(f["lifelines"], f["sksurv"], atol=2e-4)


def test_uno_truncated_at_the_training_follow_up():
    """Test events beyond the last training time have no censoring weight: the runner's Uno's
    C is then scikit-survival's with tau = that time (untruncated otherwise)."""
    from replikit.experiment.metrics import compute_metric

    rng = np.random.default_rng(4)
    t_train, t_test = rng.exponential(1, 60), rng.exponential(1, 60) * 1.5
    e_train, e_test = rng.random(60) < 0.7, rng.random(60) < 0.7
    ytr, yte = survival_target(t_train, e_train), survival_target(t_test, e_test)
    risk = -t_test + rng.normal(0, 0.5, 60)
    assert t_test[e_test].max() > t_train.max()
    got = compute_metric("c_index_uno", yte, risk, y_train=ytr)
    want = sksurv_metrics.concordance_index_ipcw(ytr, yte, risk, tau=t_train.max())[0]
    assert got == pytest.approx(want, abs=1e-12)


def test_compare_scores_with_two_constant_models():
    """Two rules scoring 0.5 on every fold of every study (a forest grown to one leaf and the
    baseline) leave the hierarchical model nothing to fit: the comparison still runs."""
    from replikit.compare import audit_scores

    rng = np.random.default_rng(0)
    rows = []
    for s in range(6):
        for fold in range(5):
            for m, v in (("cox", 0.45 + rng.normal(0, 0.05)), ("rf", 0.5), ("dummy", 0.5)):
                rows.append({"study": f"s{s}", "model": m, "repeat": 0, "fold": fold,
                             "metric": "c_index", "value": v, "n_train": 40, "n_test": 10})
    res = audit_scores(pd.DataFrame(rows), metric="c_index", scheme="kfold")
    assert res.verdict.metric == "C-index"


def test_event_labels_name_their_value():
    """A column of labels (dead/alive) is read with the value that marks the event, as
    `event='status=dead'` (the command line's --event status=dead) or `event_value=`."""
    frame = pd.DataFrame({"days": [5.0, 3, 9, 4, 8, 2], "status": ["dead", "alive"] * 3,
                          "x": np.arange(6.0)})
    with pytest.raises(DataError, match="`status=dead` or `status=alive`|"
                                        "`status=alive` or `status=dead`"):
        dataset_from_frame(frame, time="days", event="status")
    a = dataset_from_frame(frame, time="days", event="status=dead")
    b = dataset_from_frame(frame, time="days", event="status", event_value="dead")
    assert a.event.tolist() == b.event.tolist() == [True, False] * 3
    with pytest.raises(DataError, match="never holds 'died'"):
        dataset_from_frame(frame, time="days", event="status=died")


def test_forest_without_curves_refuses_the_brier_score(data):
    X, y, s = data
    rf = make_model("rf", "survival")
    with pytest.raises(ParameterError, match="low_memory=False"):
        run({"rf": rf}, X, y, scheme="5x2", metrics="integrated_brier_score")
    rf.set_params(low_memory=False, n_estimators=10)
    res = run({"rf": rf}, X, y, scheme=RepeatedKFold(3, 1, stratify=True),
              metrics=["c_index", "integrated_brier_score"], random_state=0)
    assert res.scores.frame["value"].between(0, 1).all()


def test_small_studies_below_chance_within_are_not_green():
    """lung's institutions (15-36 patients): within-study CV scores the Cox model below 0.5
    while it reaches 0.62 across institutions; a drop measured against a below-chance
    reference shows nothing, so the light is amber and says why."""
    from replikit.data.examples import lung
    from replikit.multistudy import audit_survival

    ex = lung()
    a = audit_survival(ex.X, ex.outcome, ex.study, random_state=0,
                       models={"cox": make_model("cox", "survival")})
    row = a.summary.iloc[0]
    assert row["within"] < 0.5 < row["across"]
    assert a.verdict.level == "warn" and "below chance" in a.verdict.sentence
