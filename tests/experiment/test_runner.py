"""The runner: paired splits, cloning, metrics, studies, backends bit-identical, store."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score

from replikit.errors import DataError, ParameterError, ParameterTypeError, StoreError
from replikit.experiment import RepeatedKFold, run


@pytest.fixture(scope="module")
def clf_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    study = np.repeat(["s1", "s2"], 60)
    return X, y, study


def models():
    return {"lr": LogisticRegression(), "rf": RandomForestClassifier(n_estimators=10)}


def test_scores_shape_and_pairing(clf_data):
    X, y, study = clf_data
    res = run(models(), X, y, scheme="5x2", metrics=["accuracy", "roc_auc"], study=study,
              random_state=0)
    f = res.scores.frame
    assert len(f) == 2 * 2 * 10 * 2  # models x studies x splits x metrics
    assert set(f.n_train + f.n_test) == {60}
    p = res.predictions.frame
    # every model is evaluated on exactly the same test rows of each split
    rows = p.groupby(["model", "study", "repeat", "fold"])["row"].apply(tuple).unstack("model")
    assert (rows["lr"] == rows["rf"]).all()
    # within a study and repeat, the two folds partition the study's rows
    for (s, _rep), g in p[p.model == "lr"].groupby(["study", "repeat"]):
        assert sorted(g.row) == list(np.flatnonzero(study == s))
    assert {"proba_0", "proba_1"} <= set(p.columns)


def test_metric_values_recomputed_from_predictions():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=50)
    res = run({"ols": LinearRegression()}, X, y, scheme=RepeatedKFold(5, 2), metrics="r2",
              random_state=3)
    p = res.predictions.frame
    sf = res.scores.frame.set_index(["repeat", "fold"])["value"]
    for key, g in p.groupby(["repeat", "fold"]):
        value = sf.loc[key]
        assert value == pytest.approx(r2_score(g.y_true, g.y_pred), rel=1e-12)


def test_estimators_are_cloned_not_fitted(clf_data):
    X, y, _ = clf_data
    m = models()
    run(m, X, y, scheme="5x2", metrics="accuracy", random_state=0, return_predictions=False)
    assert not hasattr(m["lr"], "coef_") and not hasattr(m["rf"], "estimators_")


def test_unseeded_estimators_become_reproducible(clf_data):
    X, y, _ = clf_data
    a = run(models(), X, y, scheme="5x2", metrics="accuracy", random_state=5)
    b = run(models(), X, y, scheme="5x2", metrics="accuracy", random_state=5)
    c = run(models(), X, y, scheme="5x2", metrics="accuracy", random_state=6)
    assert a.scores == b.scores and a.predictions == b.predictions
    assert not (a.scores == c.scores)


@pytest.mark.slow
def test_backends_bit_identical(clf_data):
    X, y, study = clf_data
    kw = dict(scheme="5x2", metrics=["accuracy", "log_loss"], study=study, random_state=11)
    serial = run(models(), X, y, **kw)
    for backend, n_jobs in (("joblib", 2), ("dask", 2)):  # one Engine runs both
        other = run(models(), X, y, backend=backend, n_jobs=n_jobs, **kw)
        assert serial.scores == other.scores, (backend, n_jobs)
        assert serial.predictions == other.predictions, (backend, n_jobs)
        a = serial.scores.frame["value"].to_numpy()
        assert a.tobytes() == other.scores.frame["value"].to_numpy().tobytes()


def test_dataframe_input_and_validation(clf_data):
    X, y, _ = clf_data
    df = pd.DataFrame(X, columns=list("abcd"))
    res = run({"lr": LogisticRegression()}, df, pd.Series(y), scheme="3", metrics="accuracy",
              random_state=0)
    assert len(res.scores) == 3
    with pytest.raises(ParameterTypeError, match="`models` must be a non-empty dict"):
        run([LogisticRegression()], X, y, scheme="3", metrics="accuracy")
    with pytest.raises(ParameterTypeError, match=r"`models\['x'\]` must be a scikit-learn estimator"):
        run({"x": 3}, X, y, scheme="3", metrics="accuracy")
    with pytest.raises(DataError, match="`y` must be 1-D with one value per row"):
        run({"lr": LogisticRegression()}, X, y[:-1], scheme="3", metrics="accuracy")
    with pytest.raises(ParameterError, match="`backend` must be one of"):
        run({"lr": LogisticRegression()}, X, y, scheme="3", metrics="accuracy", backend="spark")
    with pytest.raises(ParameterError, match="a store needs a fixed int"):
        run({"lr": LogisticRegression()}, X, y, scheme="3", metrics="accuracy", store="x.duckdb")


def test_store_resumes_and_guards_spec(clf_data, tmp_path):
    X, y, study = clf_data
    path = tmp_path / "run.duckdb"
    kw = dict(scheme="5x2", metrics=["accuracy"], study=study, random_state=2)
    plain = run(models(), X, y, **kw)
    first = run(models(), X, y, store=path, **kw)
    again = run(models(), X, y, store=path, **kw)
    assert first.provenance["n_resumed"] == 0 and again.provenance["n_resumed"] == 40
    assert plain.scores == first.scores == again.scores
    assert plain.predictions == again.predictions
    with pytest.raises(StoreError, match="differs in: scheme"):
        run(models(), X, y, store=path, **{**kw, "scheme": "3"})
    replaced = run(models(), X, y, store=path, clear_store=True, **{**kw, "scheme": "3"})
    assert replaced.provenance["n_resumed"] == 0 and len(replaced.scores) == 2 * 2 * 3


SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.linear_model import LinearRegression
    from replikit.experiment import run

    class Slow(RegressorMixin, BaseEstimator):
        def fit(self, X, y):
            with open(sys.argv[3], "a") as log:
                log.write("fit\\n")
            time.sleep(0.15)
            self.m_ = LinearRegression().fit(X, y)
            return self
        def predict(self, X):
            return self.m_.predict(X)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)); y = X[:, 0] + rng.normal(size=60)
    res = run({"slow": Slow()}, X, y, scheme="10x3", metrics="mse", random_state=9,
              store=sys.argv[1])
    res.scores.write(sys.argv[2], overwrite=True)
    print(res.provenance["n_resumed"])
""")


@pytest.mark.slow
def test_sigkill_loses_only_tasks_in_flight(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    store, out = tmp_path / "s.duckdb", tmp_path / "scores.parquet"
    log = tmp_path / "fits.log"
    proc = subprocess.Popen([sys.executable, str(script), str(store), str(out), str(log)],
                            stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:  # kill once 8 of the 30 fits have started
        if log.exists() and log.read_text().count("fit") >= 8:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = subprocess.run([sys.executable, str(script), str(store), str(out), str(log)],
                             capture_output=True, text=True, check=True)
    n_resumed = int(resumed.stdout.strip())
    # finished tasks were kept: all but the one in flight and those finished within the
    # store's commit interval (0.2 s, about one 0.15-s fit) before the kill
    assert 5 <= n_resumed <= 8
    from replikit.data import Scores

    interrupted = Scores.read(out)
    clean_store = tmp_path / "clean.duckdb"
    subprocess.run([sys.executable, str(script), str(clean_store), str(out), str(log)], check=True,
                   capture_output=True)
    assert interrupted == Scores.read(out)


def test_spawned_seed_sequences_seed_the_estimators_too():
    """A child SeedSequence as random_state: its spawn key reaches the estimators' seeds, not
    only the splits (the tasks used to rebuild the root from its entropy alone)."""
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + rng.normal(size=60)
    a, b = np.random.SeedSequence(5).spawn(2)

    def preds(ss):
        res = run({"rf": RandomForestRegressor(n_estimators=5)}, X, y, scheme="resub",
                  metrics="r2", random_state=ss)
        return res.predictions.frame["y_pred"].to_numpy()

    assert np.array_equal(preds(a), preds(np.random.SeedSequence(5).spawn(2)[0]))
    assert not np.array_equal(preds(a), preds(b))  # resubstitution: only the random state differs


class _Noisy(RegressorMixin, BaseEstimator):
    """A regressor that warns on every fit (as a solver that does not converge)."""

    def fit(self, X, y):
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        warnings.warn("did not converge (test)", ConvergenceWarning, stacklevel=2)
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def test_worker_warnings_reach_the_caller_and_its_filters():
    """A joblib worker's warnings come back to the calling process, where its filters decide:
    shown (as a serial run shows them) or silenced (the audit), never printed by the worker."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X = np.random.default_rng(0).normal(size=(40, 2))
    y = X[:, 0]
    for backend, n_jobs in (("serial", 1), ("joblib", 2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run({"m": _Noisy()}, X, y, scheme="4x1", metrics=["r2"], backend=backend,
                n_jobs=n_jobs, random_state=0)
        got = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        assert got and "did not converge (test)" in str(got[0].message), backend
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a silenced caller: the worker's warning obeys it
        with pytest.raises(ConvergenceWarning):
            run({"m": _Noisy()}, X, y, scheme="4x1", metrics=["r2"], backend="joblib",
                n_jobs=2, random_state=0)
