"""The audit on an engine: every fit of every section through one backend and one store.

A store makes the audit resumable (the same audit again refits nothing and gives the same
numbers, bit for bit); a Dask cluster started with ``dask scheduler`` / ``dask worker`` gives
the serial audit's numbers; a store belongs to one audit and refuses another in one line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from _checks import audit_numbers
from replikit.data.userdata import dataset_from_frame
from replikit.errors import ParameterError, StoreError
from replikit.report import compute_audit

FITS = {"n": 0}


class CountingTree(DecisionTreeRegressor):
    """A regression tree that counts its fits (serial audits run them in this process); not a
    linear model, so the error estimates refit it per resample (the generic path)."""

    def fit(self, X, y, sample_weight=None):
        FITS["n"] += 1
        return super().fit(X, y, sample_weight=sample_weight)


def _frame(n_per: int = 70) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frames = []
    for i in range(4):
        X = rng.normal(size=(n_per, 3))
        y = X @ [0.9, -0.5, 0.2] + 0.3 * i + rng.normal(size=n_per)
        frames.append(pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y,
                                    "site": f"s{i}"}))
    return pd.concat(frames, ignore_index=True)


def _models(tree=CountingTree):
    return {"lr": LinearRegression(), "tree": tree(max_depth=3, min_samples_leaf=5),
            "dummy": DummyRegressor()}


KW = dict(random_state=3, quick=True, n_jobs=1)


def numbers(audit) -> str:
    """The audit's JSON twin without its timings (the numbers a user reads)."""
    return audit_numbers(audit.to_dict())


@pytest.fixture(scope="module")
def data():
    return dataset_from_frame(_frame(), target="y", study="site", name="sites")


@pytest.fixture(scope="module")
def serial(data):
    FITS["n"] = 0
    audit = compute_audit(data, models=_models(), **KW)
    assert not [s.key for s in audit.sections if s.skipped]
    return numbers(audit), FITS["n"]


def test_store_resumes_refitting_nothing_bit_identical(data, serial, tmp_path):
    path = tmp_path / "audit.duckdb"
    FITS["n"] = 0
    first = compute_audit(data, models=_models(), store=path, **KW)
    fitted = FITS["n"]
    FITS["n"] = 0
    again = compute_audit(data, models=_models(), store=path, **KW)
    assert numbers(first) == serial[0] == numbers(again)
    assert fitted == serial[1] > 0  # the store changes nothing about the fits made
    assert FITS["n"] == 0  # everything read back from the store


def test_store_belongs_to_one_audit(data, tmp_path):
    path = tmp_path / "audit.duckdb"
    compute_audit(data, models=_models(), store=path, sections=["overview", "compare"], **KW)
    with pytest.raises(StoreError, match=r"different audit \(differs in: random_state\)"):
        compute_audit(data, models=_models(), store=path, sections=["overview", "compare"],
                      **{**KW, "random_state": 4})
    other = dataset_from_frame(_frame(60), target="y", study="site", name="sites")
    with pytest.raises(StoreError, match=r"differs in: data"):
        compute_audit(other, models=_models(), store=path, sections=["overview", "compare"],
                      **KW)
    # --clear-store starts afresh
    compute_audit(other, models=_models(), store=path, sections=["overview", "compare"],
                  clear_store=True, **KW)


def test_store_needs_data_and_a_fixed_random_state(data, tmp_path):
    from replikit.report import audit_input

    scores = pd.DataFrame({"study": "all", "model": np.repeat(["a", "b"], 5),
                           "fold": np.tile(range(5), 2), "metric": "r2",
                           "value": np.linspace(0.1, 0.5, 10)})
    with pytest.raises(ParameterError, match="`store` keeps the fits of an audit of data"):
        compute_audit(audit_input(scores=scores), store=tmp_path / "s.duckdb", random_state=0)
    with pytest.raises(ParameterError, match="a store needs a fixed int"):
        compute_audit(data, store=tmp_path / "s.duckdb", random_state=None)
    with pytest.raises(ParameterError, match="`clear_store` needs `store`"):
        compute_audit(data, clear_store=True)
    assert not (tmp_path / "s.duckdb").exists()


def _cli(*args, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "replikit", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout)


def test_cli_store_flags_are_checked_before_the_data(tmp_path):
    bad = tmp_path / "notes.duckdb"
    bad.write_text("not a database")
    res = _cli("audit", "--data", tmp_path / "missing.csv", "--target", "y", "--store", bad,
               "--out", tmp_path / "out")
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith("replikit: error: `--store`") and "DuckDB" in lines[0]
    res = _cli("audit", "--example", "nwtco", "--clear-store", "--out", tmp_path / "out")
    assert res.returncode == 2 and "`--clear-store` needs `--store`" in res.stderr
    res = _cli("audit", "--example", "nwtco", "--scheduler", "tcp://127.0.0.1:9",
               "--backend", "joblib", "--out", tmp_path / "out")
    assert res.returncode == 2 and "`--scheduler`" in res.stderr and "Traceback" not in res.stderr


# ------------------------------------------------------------------ a real Dask cluster

def _start_cluster(tmp_path: Path, n_workers: int = 2):
    """``dask scheduler`` and ``dask worker`` as a user starts them: (address, processes)."""
    exe = Path(sys.executable).with_name("dask")
    log = open(tmp_path / "scheduler.log", "w")
    sched = subprocess.Popen([str(exe), "scheduler", "--host", "127.0.0.1", "--port", "0",
                              "--no-dashboard"], stderr=log, stdout=log)
    address, deadline = None, time.time() + 60
    while address is None and time.time() < deadline:
        found = re.search(r"Scheduler at:\s+(tcp://\S+)",
                          (tmp_path / "scheduler.log").read_text())
        address = found.group(1) if found else None
        time.sleep(0.2)
    assert address, (tmp_path / "scheduler.log").read_text()
    worker = subprocess.Popen([str(exe), "worker", address, "--nworkers", str(n_workers),
                               "--nthreads", "1", "--no-dashboard"],
                              stderr=open(tmp_path / "worker.log", "w"),
                              stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": ""})
    from dask.distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(n_workers, timeout=60)
    return address, (worker, sched)


@pytest.mark.slow
def test_audit_on_a_dask_cluster_equals_the_serial_audit(data, tmp_path):
    """Every fit of every section on a 2-worker cluster (the tree: a plain scikit-learn model
    the workers can import): the JSON numbers equal the serial audit's."""
    serial = numbers(compute_audit(data, models=_models(DecisionTreeRegressor), **KW))
    address, procs = _start_cluster(tmp_path)
    try:
        distributed = compute_audit(data, models=_models(DecisionTreeRegressor),
                                    client=address, **KW)
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
    assert numbers(distributed) == serial
