"""The generic path of the error estimates through an Engine: the numbers do not depend on the
backend, the workers or the store; a store resumes every finished chunk of fits (none refitted)
and accepts whatever the path accepts without one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.compose import make_column_transformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from replikit.errors import ParameterError, ParameterTypeError
from replikit.experiment.engine import Engine
from replikit.experiment.store import TaskStore
from replikit.resampling import audit, estimate_error, estimate_errors
from replikit.resampling.error import _chunk_size

METHODS = ["resubstitution", "kfold", "bootstrap", "loo_bootstrap", ".632+"]


class LoggedTree(ClassifierMixin, BaseEstimator):
    """A small classification tree that writes one line per fit to ``log`` (any process)."""

    def __init__(self, log="", max_depth=3, random_state=None):
        self.log, self.max_depth, self.random_state = log, max_depth, random_state

    def fit(self, X, y):
        with open(self.log, "a") as fh:
            fh.write("fit\n")
        self.tree_ = DecisionTreeClassifier(max_depth=self.max_depth,
                                            random_state=self.random_state).fit(X, y)
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X):
        return self.tree_.predict(X)

    def predict_proba(self, X):
        return self.tree_.predict_proba(X)


class LoggedRegressor(RegressorMixin, BaseEstimator):
    """A small regression tree that writes one line per fit to ``log``."""

    def __init__(self, log="", random_state=None):
        self.log, self.random_state = log, random_state

    def fit(self, X, y):
        with open(self.log, "a") as fh:
            fh.write("fit\n")
        self.tree_ = DecisionTreeRegressor(max_depth=2, random_state=self.random_state).fit(X, y)
        return self

    def predict(self, X):
        return self.tree_.predict(X)


def _fits(log) -> int:
    return log.read_text().count("fit") if log.exists() else 0


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    labels = np.where(X[:, 0] + rng.normal(size=n) > 0, "yes", "no")
    return X, labels


def _numbers(res) -> list:
    """Every number of every estimate, as exact bytes/reprs (NaN equal to NaN)."""
    out = []
    for m, e in res.estimates.items():
        out.append((m, repr(float(e.estimate)), repr(float(e.se)),
                    np.asarray(e.per_resample, dtype=float).tobytes(),
                    repr(sorted(e.components.items())), repr(sorted(e.interval_parts.items())),
                    e.interval, e.path))
    return out


def _store(path):
    return TaskStore(path, {"kind": "test"}, "test-owner")


def test_serial_and_store_fresh_then_resumed_give_the_same_bits(tmp_path):
    X, y = _data()
    log = tmp_path / "fits.log"
    kw = dict(methods=METHODS, loss="log", n_resamples=10, n_folds=4, interval="wald",
              random_state=3)
    model = LoggedTree(str(log))
    serial = estimate_errors(model, X, y, **kw)
    n_fits = _fits(log)
    assert n_fits == 1 + 4 + 10  # the full-data fit, the folds, the resamples
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        fresh = estimate_errors(model, X, y, engine=engine, **kw)
        assert engine.last_resumed == 0
    assert _fits(log) == 2 * n_fits
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        resumed = estimate_errors(model, X, y, engine=engine, **kw)
        size = _chunk_size(len(y))
        assert engine.last_resumed == 1 + -(-4 // size) + -(-10 // size)  # every chunk
    assert _fits(log) == 2 * n_fits  # nothing refitted
    assert _numbers(fresh) == _numbers(serial)
    assert _numbers(resumed) == _numbers(serial)
    assert serial["resubstitution"].path == "generic"


@pytest.mark.slow  # starting joblib's worker processes takes seconds on a loaded machine
def test_joblib_workers_and_a_store_resumed_by_another_engine_give_the_same_bits(tmp_path):
    X, y = _data()
    log = tmp_path / "fits.log"
    kw = dict(methods=METHODS, loss="log", n_resamples=10, n_folds=4, interval="wald",
              random_state=3)
    model = LoggedTree(str(log))
    serial = estimate_errors(model, X, y, **kw)
    two = estimate_errors(model, X, y, n_jobs=2, **kw)
    with Engine("joblib", 2, store=_store(tmp_path / "s.duckdb")) as engine:
        fresh = estimate_errors(model, X, y, engine=engine, **kw)
    before = _fits(log)
    assert before == 3 * (1 + 4 + 10)  # the workers' fits are logged too
    with Engine("serial", store=_store(tmp_path / "s.duckdb")) as engine:  # other workers
        resumed = estimate_errors(model, X, y, engine=engine, **kw)
    assert _fits(log) == before  # nothing refitted
    for res in (two, fresh, resumed):
        assert _numbers(res) == _numbers(serial)


def test_a_partly_finished_store_refits_only_the_missing_chunks(tmp_path):
    import duckdb

    X, y = _data(seed=1)
    log = tmp_path / "fits.log"
    kw = dict(methods=["bootstrap", ".632+"], n_resamples=20, random_state=4)
    model = LoggedTree(str(log))
    ref = estimate_errors(model, X, y, **kw)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        estimate_errors(model, X, y, engine=engine, **kw)
    con = duckdb.connect(str(tmp_path / "s.duckdb"))
    keys = [k for (k,) in con.execute('SELECT "key" FROM replikit_results').fetchall()]
    lost = [k for k in keys if k.startswith('["bootstrap"')][:2]  # as if killed before them
    for k in lost:
        con.execute('DELETE FROM replikit_results WHERE "key" = ?', [k])
    con.close()
    before = _fits(log)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        again = estimate_errors(model, X, y, engine=engine, **kw)
        assert engine.last_resumed == len(keys) - 2
    assert _fits(log) - before == 2 * _chunk_size(len(y))  # the two lost chunks only
    assert _numbers(again) == _numbers(ref)


def test_the_store_accepts_what_the_path_accepts(tmp_path):
    # mixed-type columns in a DataFrame, string labels, a pipeline, the 0/1 loss, hold-out,
    # leave-one-out, a callable loss on a regressor, and a Generator as random state
    rng = np.random.default_rng(2)
    n = 36
    X = pd.DataFrame({"a": rng.normal(size=n), "site": rng.choice(["n", "s", "e"], n),
                      "k": rng.integers(0, 3, n)})
    y = pd.Series(np.where(X["a"] + rng.normal(size=n) > 0, "up", "down"))
    pipe = make_pipeline(make_column_transformer((OneHotEncoder(), ["site"]),
                                                 remainder="passthrough"),
                         DecisionTreeClassifier(max_depth=2))
    reg_y = X["a"].to_numpy() * 2 + rng.normal(size=n)

    def absolute(t, p):
        return np.abs(t - p)

    calls = [
        (pipe, X, y, dict(methods=["resubstitution", "holdout", ".632+"], n_repeats=3,
                          n_resamples=5, random_state=1)),
        (pipe, X, y, dict(methods=["kfold"], loss="log", n_folds=3, interval="wald",
                          random_state=2)),
        (DecisionTreeRegressor(max_depth=2), X[["a", "k"]].to_numpy(), reg_y,
         dict(methods=["loo", "bootstrap"], loss=absolute, n_resamples=4, random_state=3)),
    ]
    refs = [_numbers(estimate_errors(model, Xc, yc, **kw)) for model, Xc, yc, kw in calls]
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        for (model, Xc, yc, kw), ref in zip(calls, refs, strict=True):
            assert _numbers(estimate_errors(model, Xc, yc, engine=engine, **kw)) == ref
        # no fixed seed: nothing to resume, but nothing refused either
        res = estimate_errors(pipe, X, y, methods=["bootstrap"], n_resamples=3,
                              random_state=np.random.default_rng(0), engine=engine)
        assert np.isfinite(res["bootstrap"].estimate)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        for (model, Xc, yc, kw), ref in zip(calls, refs, strict=True):
            again = estimate_errors(model, Xc, yc, engine=engine, **kw)
            assert engine.last_resumed > 0
            assert _numbers(again) == ref


def test_nested_cv_of_a_refitted_model_resumes(tmp_path):
    X, y = _data(40, seed=5)
    log = tmp_path / "fits.log"
    kw = dict(method="kfold", n_folds=3, interval="nested", n_nested_repeats=2, random_state=6)
    model = LoggedTree(str(log), max_depth=2)
    ref = estimate_error(model, X, y, **kw)
    assert ref.interval == "nested"
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        fresh = estimate_error(model, X, y, engine=engine, **kw)
    before = _fits(log)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        resumed = estimate_error(model, X, y, engine=engine, **kw)
    assert _fits(log) == before
    for res in (fresh, resumed):
        assert repr(res.estimate) == repr(ref.estimate)
        assert repr(sorted(res.interval_parts.items())) == repr(sorted(ref.interval_parts.items()))


def test_progress_counts_every_fit_fresh_and_resumed(tmp_path):
    X, y = _data()
    log = tmp_path / "fits.log"
    model = LoggedTree(str(log))
    kw = dict(methods=METHODS, n_resamples=11, n_folds=3, interval="wald", random_state=0)
    for _ in range(2):
        calls = []

        def advance(m, total=None, calls=calls):
            calls.append((m, total))

        with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
            estimate_errors(model, X, y, engine=engine, progress=advance, **kw)
        assert calls[0] == (0, 1 + 3 + 11)
        assert sum(m for m, _ in calls[1:]) == 1 + 3 + 11
    assert _fits(log) == 1 + 3 + 11  # the second pass resumed every fit


def test_audit_passes_its_engine(tmp_path):
    from replikit.data.userdata import Dataset

    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.normal(size=(50, 2)), columns=["a", "b"])
    y = pd.Series(X["a"] + rng.normal(size=50), name="y")
    ds = Dataset("toy", X, y, None, "regression", 0)
    log = tmp_path / "fits.log"
    models = {"tree": LoggedRegressor(str(log))}
    ref = audit(ds, models=models, quick=True, random_state=1)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        fresh = audit(ds, models=models, quick=True, random_state=1, engine=engine)
    before = _fits(log)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        resumed = audit(ds, models=models, quick=True, random_state=1, engine=engine)
    assert _fits(log) == before
    cols = ["model", "method", "estimate", "se", "ci_low", "ci_high"]
    for res in (fresh, resumed):
        pd.testing.assert_frame_equal(res.estimates[cols], ref.estimates[cols],
                                      check_exact=True)


def test_engine_and_n_jobs_are_one_choice():
    X, y = _data(20)
    with pytest.raises(ParameterError, match="`engine`.*n_jobs"):
        estimate_errors(LoggedTree(), X, y, engine=Engine(), n_jobs=2)
    with pytest.raises(ParameterTypeError, match="`engine`"):
        estimate_error(LoggedTree(), X, y, engine="joblib")


def test_chunks_are_set_by_the_rows_not_the_workers():
    assert _chunk_size(60) == 8
    assert _chunk_size(5_000) == 2
    assert _chunk_size(1_000_000) == 1


@pytest.mark.slow
def test_dask_workers_give_the_serial_numbers(tmp_path):
    pytest.importorskip("dask.distributed")
    X, y = _data(seed=8)
    kw = dict(methods=METHODS, loss="log", n_resamples=12, n_folds=3, interval="wald",
              random_state=9)
    model = DecisionTreeClassifier(max_depth=3)
    ref = estimate_errors(model, X, y, **kw)
    with Engine("dask", n_jobs=2, store=_store(tmp_path / "s.duckdb")) as engine:
        on_dask = estimate_errors(model, X, y, engine=engine, **kw)
    assert _numbers(on_dask) == _numbers(ref)


class OtherLoggedRegressor(LoggedRegressor):
    """The same parameters as :class:`LoggedRegressor`, another model (a deeper tree)."""

    def fit(self, X, y):
        super().fit(X, y)
        self.tree_ = DecisionTreeRegressor(max_depth=4, random_state=self.random_state).fit(X, y)
        return self


def test_two_model_classes_with_the_same_parameters_are_two_runs_in_a_store(tmp_path):
    """A store keys a model by its class and parameters: a second class with the same
    parameters is never served the first one's fits (a resumed audit once read one model's
    bootstrap back for three)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + rng.normal(size=60)
    log = str(tmp_path / "fits.log")
    kw = dict(methods=["bootstrap"], loss="squared", n_resamples=6, interval="wald",
              random_state=2)
    alone = estimate_errors(OtherLoggedRegressor(log), X, y, **kw)
    with Engine(store=_store(tmp_path / "s.duckdb")) as engine:
        estimate_errors(LoggedRegressor(log), X, y, engine=engine, **kw)
        other = estimate_errors(OtherLoggedRegressor(log), X, y, engine=engine, **kw)
        assert engine.last_resumed == 0
    assert _numbers(other) == _numbers(alone)


def test_audit_within_a_memory_goal_has_the_same_numbers_and_says_so(tmp_path):
    """A memory goal the fits cannot meet: the batched fits run before the refits, not beside
    them, and the refits one at a time in this process; the numbers are those of two workers
    without a goal, and the notes say what was done."""
    from sklearn.linear_model import LinearRegression

    from replikit.data.userdata import Dataset

    X, _ = _data(60)
    Xr = pd.DataFrame(X, columns=["a", "b", "c"])
    yr = pd.Series(Xr["a"] + 0.5 * Xr["b"] ** 2, name="y")
    ds = Dataset("toy", Xr, yr, None, "regression", 0)
    models = {"lr": LinearRegression(), "tree": LoggedRegressor(str(tmp_path / "f.log"))}
    with Engine("joblib", 2, memory_goal=None) as engine:
        free = audit(ds, models=models, quick=True, random_state=3, engine=engine)
    with Engine("joblib", 2, memory_goal=1) as engine:
        tight = audit(ds, models=models, quick=True, random_state=3, engine=engine)
    cols = ["model", "method", "estimate", "se", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(tight.estimates[cols], free.estimates[cols], check_exact=True)
    said = " ".join(tight.notes)
    assert "the batched fits ran before the refitted models" in said
    assert "the LoggedRegressor refits" in said  # the refits' own note names the model
    assert "one at a time instead of 2 to stay within" in said
    assert "memory goal" not in " ".join(free.notes)
