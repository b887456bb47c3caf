"""Every public result of the resampling capability, the experiment layer and the data package
keeps the contract of :class:`replikit.results.Result` (``_checks.check_result``); and the
renamed parameters of these packages keep working for one release, with a FutureWarning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from _checks import assert_plain, check_result


def _regression(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    y = pd.Series(X["a"] + rng.normal(size=n), name="y")
    return X, y


def _error_estimates():
    from sklearn.linear_model import LinearRegression

    from replikit.resampling import estimate_errors

    X, y = _regression()
    return estimate_errors(LinearRegression(), X, y, methods=["resubstitution", "kfold", ".632+"],
                           n_resamples=20, n_folds=5, random_state=0)


def _error_audit():
    from replikit.data.userdata import Dataset
    from replikit.experiment.models import make_models
    from replikit.resampling import audit

    X, y = _regression(120)
    return audit(Dataset("toy", X, y, None, "regression", 0),
                 models=make_models("lr,dummy", "regression"), quick=True, random_state=0)


def _experiment():
    from replikit.resampling import simulate_resampling

    return simulate_resampling(n_experiments=10, random_state=1)


def _run_result():
    from sklearn.linear_model import LogisticRegression

    from replikit.experiment import run

    X, _ = _regression()
    y = (X["a"] > 0).astype(int)
    return run({"lr": LogisticRegression()}, X, y, scheme="5x2", metrics="accuracy",
               random_state=0)


def _fit_prediction():
    from sklearn.linear_model import LogisticRegression

    from replikit.experiment import fit_predict

    X, _ = _regression()
    y = np.where(X["a"] > 0, "yes", "no")
    return fit_predict(LogisticRegression(), X[:40], y[:40], X[40:], random_state=0, proba=True)


def _example():
    from replikit.data.examples import nwtco

    return nwtco()


def _cv_summary():
    from replikit.data.examples import score_export
    from replikit.data.foreign import read_scores
    from replikit.resampling import summarize_scores

    return summarize_scores(read_scores(score_export("weka")), metric="roc_auc")


#: One small real instance of each public result type of these packages.
FACTORIES = {
    "ErrorEstimate": lambda: _error_estimates()["kfold"],
    "ErrorEstimates": _error_estimates,
    "ErrorAudit": _error_audit,
    "ResamplingExperiment": _experiment,
    "RunResult": _run_result,
    "FitPrediction": _fit_prediction,
    "Example": _example,
    "CVSummary": _cv_summary,
}

#: Public functions of ``replikit.resampling`` that compute no statistical method (the others
#: cite the papers they implement).
NO_METHOD: dict[str, str] = {
    "describe_splits": "words for a resampling design ('10x10-fold CV') from its counts",
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_verdict_labels_its_key_number():
    res = _error_audit()
    assert res.verdict.label.startswith(f"{res.best_model}'s ")
    assert "CV mean squared error" in res.verdict.label and "95%" in res.verdict.label
    assert "interval" in res.verdict.label
    kfold = res.to_frame().query("method == 'kfold' and model == @res.best_model").iloc[0]
    assert res.verdict.estimate == kfold["estimate"]
    assert (res.verdict.ci_low, res.verdict.ci_high) == (kfold["ci_low"], kfold["ci_high"])
    assert_plain(str(res.verdict))


def test_estimates_plot_by_method():
    from replikit._plotting import new_axes

    ax = _error_estimates().plot(ax=new_axes())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["resubstitution", "K-fold CV", ".632+ bootstrap"]
    assert ax.get_xlabel() == "estimated mean squared error"


def test_experiment_plot_and_words():
    from replikit._plotting import new_axes

    res = _experiment()
    ax = res.plot(ax=new_axes())
    assert len(ax.get_lines()) == 9  # eight estimators and the true error
    assert res.title == "Resampling estimators of the error of LDA on 10 datasets with no signal"
    assert "Etherington & Lieske (2019)" in str(res)
    assert_plain(str(res))


# --------------------------------------------------------------------------------------------
# renamed parameters: the old names warn and give the same result


def _same_warning(call_old, call_new, old, new=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call_old()
    messages = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert messages and f"`{old}`" in messages[0], messages
    if new is not None:
        assert f"`{new}`" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        want = call_new()
    return got, want


def test_estimate_error_n_splits_is_n_folds():
    from sklearn.linear_model import LinearRegression

    from replikit.resampling import estimate_error

    X, y = _regression()
    got, want = _same_warning(
        lambda: estimate_error(LinearRegression(), X, y, method="kfold", n_splits=4,
                               random_state=0),
        lambda: estimate_error(LinearRegression(), X, y, method="kfold", n_folds=4,
                               random_state=0), "n_splits", "n_folds")
    assert got.estimate == want.estimate and got.parameters == want.parameters


def test_estimate_errors_n_splits_is_n_folds():
    from sklearn.linear_model import LinearRegression

    from replikit.resampling import estimate_errors

    X, y = _regression()
    got, want = _same_warning(
        lambda: estimate_errors(LinearRegression(), X, y, methods=["kfold"], n_splits=3,
                                random_state=0),
        lambda: estimate_errors(LinearRegression(), X, y, methods=["kfold"], n_folds=3,
                                random_state=0), "n_splits", "n_folds")
    assert got.to_frame().equals(want.to_frame())


@pytest.mark.parametrize("cls", ["RepeatedKFold", "CrossStudy"])
def test_schemes_n_splits_is_n_folds(cls):
    import replikit.experiment as ex

    scheme = getattr(ex, cls)
    got, want = _same_warning(lambda: scheme(n_splits=3), lambda: scheme(n_folds=3),
                              "n_splits", "n_folds")
    assert repr(got) == repr(want) and got.n_folds == 3
    with pytest.warns(FutureWarning, match="n_folds"):
        assert want.n_splits == 3  # the old attribute name


def test_fit_predict_seed_is_random_state():
    from sklearn.ensemble import RandomForestClassifier

    from replikit.experiment import fit_predict

    X, _ = _regression()
    y = (X["a"] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=5)
    got, want = _same_warning(
        lambda: fit_predict(rf, X[:40], y[:40], X[40:], seed=3, proba=True),
        lambda: fit_predict(rf, X[:40], y[:40], X[40:], random_state=3, proba=True),
        "seed", "random_state")
    assert np.array_equal(got.proba, want.proba)
    assert got.estimator.random_state == 3


def test_seed_estimator_seed_is_random_state():
    from sklearn.ensemble import RandomForestClassifier

    from replikit.experiment import seed_estimator

    got, want = _same_warning(lambda: seed_estimator(RandomForestClassifier(), seed=7),
                              lambda: seed_estimator(RandomForestClassifier(), random_state=7),
                              "seed", "random_state")
    assert got.random_state == want.random_state == 7


def test_make_models_spec_and_option():
    from replikit.errors import ParameterError
    from replikit.experiment import make_model, make_models

    got, want = _same_warning(lambda: make_models(spec="lr,dummy", task="regression"),
                              lambda: make_models("lr,dummy", "regression"), "spec", "models")
    assert list(got) == list(want)
    with pytest.raises(ParameterError, match="`models`: unknown model 'nope'"):
        make_models("lr,nope", "regression")
    with pytest.raises(ParameterError, match="`model`: unknown model 'nope'"):
        make_model("nope", "regression")
    # an old caller's `option=` is accepted, ignored, with a warning
    with pytest.warns(FutureWarning, match="`option` of make_models"), \
            pytest.raises(ParameterError, match="`models`: unknown model"):
        make_models("nope", "regression", option="--models")
    with pytest.warns(FutureWarning, match="`option` of make_model"), \
            pytest.raises(ParameterError, match="`model`: 'lda' is a classifier"):
        make_model("lda", "regression", option="--model")


def test_parse_scheme_option():
    from replikit.errors import ParameterError
    from replikit.experiment import parse_scheme

    with pytest.raises(ParameterError, match="`scheme`: cannot read 'ten'"):
        parse_scheme("ten")
    with pytest.warns(FutureWarning, match="`option` of parse_scheme"), \
            pytest.raises(ParameterError, match="`scheme`: cannot read 'ten'"):
        parse_scheme("ten", option="--scheme")
    with pytest.warns(FutureWarning):
        assert parse_scheme("5x2", option="--scheme") == parse_scheme("5x2")


def test_store_options(tmp_path):
    from replikit.errors import StoreError
    from replikit.experiment import TaskStore, check_store

    bad = tmp_path / "results.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    with pytest.raises(StoreError, match="^`store`: "):
        check_store(bad)
    with pytest.warns(FutureWarning, match="`option` of check_store"), \
            pytest.raises(StoreError, match="^`store`: "):
        check_store(bad, option="--store")
    with pytest.warns(FutureWarning, match="`clear_option` of TaskStore"):
        TaskStore(tmp_path / "a.duckdb", {"x": 1}, "h1", clear_option="--clear-store").close()
    with pytest.raises(StoreError, match="clear this one with `clear_store`"):
        TaskStore(tmp_path / "a.duckdb", {"x": 2}, "h2")


def test_load_dataset_options(tmp_path):
    from replikit.data.userdata import dataset_from_frame, load_dataset
    from replikit.errors import DataError, InputFileError

    path = tmp_path / "d.csv"
    pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.1, 0.4, 0.2]}).to_csv(path, index=False)
    with pytest.raises(InputFileError, match="^`data`: file"):
        load_dataset(tmp_path / "missing.csv", target="y")
    with pytest.raises(DataError, match="^`target`: no column 'z'"):
        load_dataset(path, target="z")
    got, want = _same_warning(lambda: load_dataset(path=path, target="y"),
                              lambda: load_dataset(path, target="y"), "path", "data")
    assert got.X.equals(want.X)
    with pytest.warns(FutureWarning, match="`data_option` of load_dataset"), \
            pytest.raises(InputFileError, match="^`data`: file"):
        load_dataset(tmp_path / "missing.csv", target="y", data_option="--data")
    with pytest.warns(FutureWarning, match="`target_option` of load_dataset"), \
            pytest.raises(DataError, match="^`target`: no column"):
        load_dataset(path, target="z", target_option="--target")
    frame = pd.read_csv(path)
    with pytest.warns(FutureWarning, match="`task_option` of dataset_from_frame"), \
            pytest.raises(DataError, match="^`task` must be one of"):
        dataset_from_frame(frame, target="y", task="survival", task_option="--task")


def test_read_and_write_frame_options(tmp_path):
    from replikit.data import Scores, read_frame, write_frame
    from replikit.errors import InputFileError, OutputExistsError

    with pytest.raises(InputFileError, match="^`path`: file"):
        read_frame(tmp_path / "missing.csv")
    with pytest.warns(FutureWarning, match="`name` of read_frame"), \
            pytest.raises(InputFileError, match="^`path`: file"):
        read_frame(tmp_path / "missing.csv", name="PATH")
    frame = pd.DataFrame({"study": "s", "model": ["a", "b"], "repeat": 0, "fold": 0,
                          "metric": "r2", "value": [0.1, 0.2]})
    out = write_frame(frame, tmp_path / "t.csv")
    with pytest.raises(OutputExistsError, match="pass `overwrite` to replace it"):
        write_frame(frame, out)
    with pytest.warns(FutureWarning, match="`overwrite_option` of write_frame"), \
            pytest.raises(OutputExistsError, match="pass `overwrite` to replace it"):
        write_frame(frame, out, overwrite_option="--overwrite")
    scores = Scores(frame)
    with pytest.raises(OutputExistsError, match="^`path`: .*pass `overwrite`"):
        scores.write(out)
    with pytest.warns(FutureWarning, match="`name` of Scores.write"), \
            pytest.raises(OutputExistsError, match="^`path`: "):
        scores.write(out, name="--out")


def test_connect_scheduler_option():
    from replikit.errors import ParameterError
    from replikit.experiment.runner import connect_scheduler

    with pytest.raises(ParameterError, match="^`client`: cannot reach"):
        connect_scheduler("tcp://127.0.0.1:9", timeout=0.2)
    with pytest.warns(FutureWarning, match="`option` of connect_scheduler"), \
            pytest.raises(ParameterError, match="^`client`: cannot reach"):
        connect_scheduler("tcp://127.0.0.1:9", timeout=0.2, option="--scheduler")


@pytest.mark.parametrize("old, new", [("--resamples", "--n-resamples"), ("--folds", "--n-folds"),
                                      ("-K", "--n-folds"), ("--repeats", "--n-repeats"),
                                      ("--method", "--methods")])
def test_estimate_old_flags(cli, tmp_path, old, new):
    path = tmp_path / "d.csv"
    X, y = _regression(40)
    X.assign(y=y).to_csv(path, index=False)
    value = {"--method": "kfold", "--repeats": "2"}.get(old, "4")
    extra = () if old == "--method" else ("--methods", "kfold,bootstrap")
    code, out, err = cli("--format", "json", "estimate", "--data", path, "--target", "y",
                         *extra, old, value)
    code_new, out_new, _ = cli("--format", "json", "estimate", "--data", path, "--target", "y",
                               *extra, new, value)
    assert code == code_new == 0, err
    assert f"`{old}` is now `{new}`" in err
    assert out == out_new


def test_simulate_and_run_old_flags(cli, tmp_path):
    import json

    code, out, err = cli("--format", "json", "simulate", "resampling", "--experiments", "3")
    assert code == 0 and "`--experiments` is now `--n-experiments`" in err
    new = cli("--format", "json", "simulate", "resampling", "--n-experiments", "3")[1]
    assert json.loads(out)["table"] == json.loads(new)["table"]
    code, _, err = cli("run", "--data", tmp_path / "missing.csv", "--target", "y", "--jobs", "2")
    assert code == 2 and "`--jobs` is now `--n-jobs`" in err


def test_cli_errors_name_flags(cli, tmp_path):
    path = tmp_path / "d.csv"
    X, y = _regression(40)
    X.assign(y=y).to_csv(path, index=False)
    code, _, err = cli("estimate", "--data", path, "--target", "y", "--methods", "kfold",
                       "--n-folds", "500")
    assert code == 2 and "`--n-folds`" in err
    code, _, err = cli("estimate", "--data", path, "--target", "nope")
    assert code == 2 and "`--target`: no column 'nope'" in err
    code, _, err = cli("estimate", "--data", tmp_path / "missing.csv", "--target", "y")
    assert code == 2 and "`--data`: file" in err
    code, _, err = cli("run", "--data", path, "--target", "y", "--scheme", "ten",
                       "--out", tmp_path / "s.csv")
    assert code == 2 and "`--scheme`: cannot read 'ten'" in err
    code, _, err = cli("run", "--data", path, "--target", "y", "--models", "lr,nope",
                       "--out", tmp_path / "s2.csv")
    assert code == 2 and "`--models`: unknown model 'nope'" in err
