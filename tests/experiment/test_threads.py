"""The thread policy (``replikit._threads``) in the runner, the error
estimates and the simulations: one BLAS thread around every fit and batched product, one BLAS
and one OpenMP thread inside every joblib/Dask worker task, and the same numbers with or
without the policy."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import replikit._threads as threads
from replikit.experiment import run
from replikit.resampling.error import estimate_errors


class Recorder(RegressorMixin, BaseEstimator):
    """Writes the thread pools it sees during ``fit`` (one JSON line per fit) to ``path``."""

    def __init__(self, path=None):
        self.path = path

    def fit(self, X, y):
        from threadpoolctl import threadpool_info

        pools = [(p["user_api"], p["num_threads"]) for p in threadpool_info()]
        with open(self.path, "a") as fh:
            fh.write(json.dumps(pools) + "\n")
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def _pools(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _data(n=40):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, X[:, 0] + rng.normal(size=n)


def test_serial_runner_fits_with_one_blas_and_one_openmp_thread(tmp_path):
    from sklearn.ensemble import HistGradientBoostingRegressor  # loads scikit-learn's OpenMP

    HistGradientBoostingRegressor(max_iter=2).fit(*_data())
    log = tmp_path / "pools.jsonl"
    X, y = _data()
    run({"rec": Recorder(str(log))}, X, y, scheme="3", metrics="mse", random_state=0)
    seen = _pools(log)
    assert len(seen) == 3
    for pools in seen:
        blas = [n for api, n in pools if api == "blas"]
        openmp = [n for api, n in pools if api == "openmp"]
        assert blas and all(n == 1 for n in blas)
        assert openmp and all(n == 1 for n in openmp)


def test_joblib_worker_tasks_have_one_blas_and_one_openmp_thread(tmp_path):
    log = tmp_path / "pools.jsonl"
    X, y = _data()
    run({"rec": Recorder(str(log))}, X, y, scheme="4", metrics="mse", random_state=0,
        backend="joblib", n_jobs=2)
    seen = _pools(log)
    assert len(seen) == 4
    for pools in seen:
        assert any(api == "blas" for api, _ in pools)
        assert all(n == 1 for api, n in pools if api in ("blas", "openmp")), pools


def test_generic_error_estimates_in_workers_have_one_thread(tmp_path):
    log = tmp_path / "pools.jsonl"
    X, y = _data()
    estimate_errors(Recorder(str(log)), X, y, methods=["kfold"], n_folds=4, random_state=0,
                    n_jobs=2)
    for pools in _pools(log):
        assert all(n == 1 for api, n in pools if api in ("blas", "openmp")), pools


@pytest.mark.slow
def test_dask_worker_tasks_have_one_blas_and_one_openmp_thread(tmp_path):
    pytest.importorskip("dask.distributed")
    log = tmp_path / "pools.jsonl"
    X, y = _data()
    run({"rec": Recorder(str(log))}, X, y, scheme="3", metrics="mse", random_state=0,
        backend="dask", n_jobs=1)
    for pools in _pools(log):
        assert all(n == 1 for api, n in pools if api in ("blas", "openmp")), pools


@contextlib.contextmanager
def _no_policy(monkeypatch):
    """Every limit of replikit._threads made a no-op (what the code did before the policy)."""
    with monkeypatch.context() as m:
        m.setattr(threads, "limit_threads",
                  lambda **kwargs: contextlib.nullcontext())
        yield


def test_results_bit_identical_with_and_without_the_policy(monkeypatch, tmp_path):
    from replikit.compare.calibration import simulate_tests
    from replikit.resampling.simulation import simulate_resampling

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:200]
    y = y[:200]
    lr = make_pipeline(StandardScaler(), LogisticRegression())

    def work():
        est = estimate_errors(lr, X, y, methods=[".632+", "kfold"], n_resamples=30,
                              random_state=1).to_frame()
        runres = run({"lr": lr, "ols": LinearRegression()}, X, y.astype(float), scheme="3x2",
                     metrics="mse", random_state=2, return_predictions=True)
        exp = simulate_resampling(n_experiments=5, random_state=3).errors
        cal = simulate_tests(n_datasets=3, n_rows=40, differences=(0.1,),
                             tests=["corrected_resampled_t"], n_repeats=2,
                             n_population=100_000, n_training_sets=100, random_state=0).table
        return est, runres.scores.frame, runres.predictions.frame, exp, cal

    with_policy = work()
    with _no_policy(monkeypatch):
        assert threads.limit_threads() is not None  # the patch is in force
        without = work()
    for a, b in zip(with_policy, without, strict=True):
        a = a.drop(columns=[c for c in a.columns if c == "runtime_seconds"])
        b = b.drop(columns=[c for c in b.columns if c == "runtime_seconds"])
        assert a.equals(b)


def test_every_fit_path_has_one_openmp_thread(tmp_path):
    """The generic resampling path fits through experiment.fit.fit_predict, not the runner:
    the policy lives there, so it holds for every fit."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    HistGradientBoostingRegressor(max_iter=2).fit(*_data())
    log = tmp_path / "pools.jsonl"
    X, y = _data()
    estimate_errors(Recorder(str(log)), X, y, methods=["kfold"], n_folds=3, random_state=0,
                    fast=False)
    seen = _pools(log)
    assert seen
    for pools in seen:
        assert all(n == 1 for api, n in pools if api in ("blas", "openmp")), pools
        assert any(api == "openmp" for api, _ in pools)
