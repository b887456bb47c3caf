"""Corpus: the runner's DuckDB store — a store is replikit's own file, never a
user's database; non-DuckDB files, directories, read-only paths, concurrent runs and labels
with separators are refused or handled with one clear line; SIGKILLs lose nothing but the tasks
in flight and duplicate nothing.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from replikit.data import Scores
from replikit.errors import StoreError
from replikit.experiment import run

from .conftest import assert_clear_error, assert_ok


@pytest.fixture
def data(write_csv):
    rng = np.random.default_rng(0)
    f = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    f["y"] = f.a + rng.normal(size=40)
    return write_csv(f)


def run_args(data, tmp_path, *extra):
    return ("run", "--data", data, "--target", "y", "--models", "lr", "--scheme", "3",
            "--out", tmp_path / "o.csv", "--overwrite", *extra)


def test_store_resume_and_overwrite_keeps_the_store(cli, data, tmp_path):
    store = tmp_path / "runs.duckdb"
    assert_ok(cli(*run_args(data, tmp_path, "--store", store)))
    first = pd.read_csv(tmp_path / "o.csv")
    res = cli("--format", "json", *run_args(data, tmp_path, "--store", store))
    assert_ok(res)
    import json

    assert json.loads(res[1])["provenance"]["n_resumed"] == 3  # --overwrite kept the store
    pd.testing.assert_frame_equal(first, pd.read_csv(tmp_path / "o.csv"))


def test_store_other_spec_needs_clear_store(cli, data, tmp_path):
    store = tmp_path / "runs.duckdb"
    assert_ok(cli(*run_args(data, tmp_path, "--store", store)))
    res = cli("run", "--data", data, "--target", "y", "--models", "lr", "--scheme", "5",
              "--out", tmp_path / "o.csv", "--overwrite", "--store", store)
    line = assert_clear_error(res, "--store", "--clear-store")
    assert "scheme" in line
    assert_ok(cli("run", "--data", data, "--target", "y", "--models", "lr", "--scheme", "5",
                  "--out", tmp_path / "o.csv", "--overwrite", "--store", store,
                  "--clear-store"))
    assert len(pd.read_csv(tmp_path / "o.csv")) == 5 * 2


def test_clear_store_without_store(cli, data, tmp_path):
    assert_clear_error(cli(*run_args(data, tmp_path, "--clear-store")), "--clear-store",
                       "--store")


def test_store_is_the_users_input_database(cli, tmp_path):
    rng = np.random.default_rng(1)
    db = tmp_path / "userdata.duckdb"
    frame = pd.DataFrame({"a": rng.normal(size=30), "y": rng.normal(size=30)})
    with duckdb.connect(str(db)) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE measurements AS SELECT * FROM frame")
    before = db.read_bytes()
    res = cli("run", "--data", db, "--target", "y", "--models", "lr", "--scheme", "3",
              "--out", tmp_path / "o.csv", "--store", db)
    assert_clear_error(res, "--store")
    res = cli("run", "--data", db, "--target", "y", "--models", "lr", "--scheme", "3",
              "--out", tmp_path / "o.csv", "--store", tmp_path / "other.duckdb")
    assert_ok(res)
    other = tmp_path / "mine.duckdb"
    with duckdb.connect(str(other)) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE measurements AS SELECT * FROM frame")
    line = assert_clear_error(cli("run", "--data", db, "--target", "y", "--models", "lr",
                                  "--scheme", "3", "--out", tmp_path / "o2.csv", "--store",
                                  other), "--store", "measurements")
    assert "did not write" in line
    assert db.read_bytes() == before  # never written into
    with duckdb.connect(str(other), read_only=True) as con:
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables")
                  .fetchall()}
    assert tables == {"measurements"}


@pytest.mark.parametrize("kind", ["sqlite", "csv", "empty", "parquet"])
def test_store_not_a_duckdb_file(cli, data, tmp_path, kind):
    path = tmp_path / "results.db"
    if kind == "sqlite":
        con = sqlite3.connect(path)
        con.execute("create table t (x)")
        con.commit()
        con.close()
    elif kind == "csv":
        path.write_text("a,b\n1,2\n")
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        pd.DataFrame({"a": [1]}).to_parquet(path)
    before = path.read_bytes()
    line = assert_clear_error(cli(*run_args(data, tmp_path, "--store", path)), "--store")
    assert "extension" not in line.lower() and "DuckDB" in line
    assert path.read_bytes() == before


def test_store_is_a_directory(cli, data, tmp_path):
    (tmp_path / "runs.duckdb").mkdir()
    assert_clear_error(cli(*run_args(data, tmp_path, "--store", tmp_path / "runs.duckdb")),
                       "--store", "directory")


def test_store_read_only(cli, data, tmp_path, monkeypatch):
    store = tmp_path / "runs.duckdb"
    assert_ok(cli(*run_args(data, tmp_path, "--store", store)))
    store.chmod(0o400)
    try:
        if os.access(store, os.W_OK):  # root may write anyway: deny it as a plain user sees it
            import replikit.experiment.store as store_module

            real = os.access
            monkeypatch.setattr(store_module.os, "access", lambda p, mode: (
                False if Path(p) == store and mode & os.W_OK else real(p, mode)))
        line = assert_clear_error(cli(*run_args(data, tmp_path, "--store", store)), "--store")
        assert "not writable" in line
    finally:
        store.chmod(0o600)


def test_store_in_a_read_only_directory(cli, data, tmp_path):
    from pathlib import Path

    if not Path("/proc/self").exists():
        pytest.skip("no /proc")
    line = assert_clear_error(cli(*run_args(data, tmp_path, "--store", "/proc/runs.duckdb")),
                              "--store")
    assert "not writable" in line


def test_store_parent_is_a_file(cli, data, tmp_path):
    (tmp_path / "afile").write_text("x")
    assert_clear_error(cli(*run_args(data, tmp_path, "--store", tmp_path / "afile" / "s.duckdb")),
                       "--store")


def test_store_equal_to_out(cli, data, tmp_path):
    res = cli("run", "--data", data, "--target", "y", "--out", tmp_path / "s.duckdb",
              "--store", tmp_path / "s.duckdb")
    assert_clear_error(res, "--store", "--out")


def test_store_of_an_older_replikit(cli, data, tmp_path):
    store = tmp_path / "old.duckdb"
    with duckdb.connect(str(store)) as con:  # format 1: joined task ids, no replikit_meta
        con.execute("CREATE TABLE replikit_runs (spec_hash VARCHAR PRIMARY KEY, spec VARCHAR)")
        con.execute("CREATE TABLE replikit_tasks (task_id VARCHAR PRIMARY KEY)")
    line = assert_clear_error(cli(*run_args(data, tmp_path, "--store", store)), "--store",
                              "--clear-store")
    assert "older" in line
    assert_ok(cli(*run_args(data, tmp_path, "--store", store, "--clear-store")))


def test_store_in_use_by_another_process(cli, data, tmp_path):
    store = tmp_path / "busy.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time\n"
         f"con = duckdb.connect({str(store)!r})\nprint('ready', flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        line = assert_clear_error(cli(*run_args(data, tmp_path, "--store", store)), "--store",
                                  "in use")
        assert str(holder.pid) in line
    finally:
        holder.kill()
        holder.wait()


SLOW_MODULE = textwrap.dedent("""
    import time
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.linear_model import LinearRegression

    class Slow(RegressorMixin, BaseEstimator):
        def __init__(self, delay=0.05, log=None):
            self.delay, self.log = delay, log

        def fit(self, X, y):
            if self.log:
                with open(self.log, "a") as fh:
                    fh.write("fit\\n")
            time.sleep(self.delay)
            self.m_ = LinearRegression().fit(X, y)
            return self

        def predict(self, X):
            return self.m_.predict(X)
""")


def _env(tmp_path: Path) -> dict:
    (tmp_path / "slowmod.py").write_text(SLOW_MODULE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return env


def _cmd(data, out, store, log, *extra, delay=0.05, scheme="10x4"):
    return [sys.executable, "-m", "replikit", "--quiet", "run", "--data", str(data), "--target",
            "y", "--model", "slow=slowmod:Slow", "--param", f"slow.delay={delay}", "--param",
            f"slow.log={str(log)!r}", "--models", "lr", "--scheme", scheme, "--out", str(out),
            "--overwrite", "--store", str(store), *extra]


@pytest.mark.slow
def test_two_runs_on_one_store_second_refused_in_one_line(data, tmp_path):
    env = _env(tmp_path)
    store, log = tmp_path / "s.duckdb", tmp_path / "fits.log"
    first = subprocess.Popen(_cmd(data, tmp_path / "a.csv", store, log, delay=0.2), env=env,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (log.exists() and log.read_text()):
            time.sleep(0.05)
        second = subprocess.run(_cmd(data, tmp_path / "b.csv", store, log), env=env,
                                capture_output=True, text=True, timeout=60)
    finally:
        first.kill()
        first.wait()
    lines = [ln for ln in second.stderr.splitlines() if ln.strip()]
    assert second.returncode == 2, second.stderr
    assert len(lines) == 1 and lines[0].startswith("replikit: error: `--store`")
    assert "in use" in lines[0] and "Traceback" not in second.stderr


def test_labels_with_separators_do_not_collide(tmp_path):
    from sklearn.dummy import DummyRegressor
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + rng.normal(size=40)
    study = np.repeat(["a|b", "b"], 20)
    models = {"m": LinearRegression(), "m|a": DummyRegressor()}  # 'm|a|b|..' twice if joined
    kw = dict(scheme="2", metrics="mse", study=study, random_state=0)
    plain = run(models, X, y, **kw)
    stored = run(models, X, y, store=tmp_path / "s.duckdb", **kw)
    again = run(models, X, y, store=tmp_path / "s.duckdb", **kw)
    assert len(plain.scores) == 2 * 2 * 2
    assert plain.scores == stored.scores == again.scores
    assert again.provenance["n_resumed"] == 8


def test_library_store_errors_name_the_parameter(tmp_path):
    from sklearn.linear_model import LinearRegression

    X, y = np.zeros((10, 1)), np.arange(10.0)
    path = tmp_path / "x.db"
    path.write_text("not a database")
    with pytest.raises(StoreError, match="`store`: .* not a DuckDB database"):
        run({"lr": LinearRegression()}, X, y, scheme="2", metrics="mse", store=path,
            random_state=0)


# ------------------------------------------------------------------------------------- soak

SOAK_DRIVER = textwrap.dedent("""
    # Imports replikit once, then forks one `replikit run` per cycle and SIGKILLs its process
    # group (the run and its joblib workers) after a random number of fits.
    import json, os, signal, sys, time
    import duckdb
    import numpy as np
    from replikit.cli import main

    args, kills, log, store = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    count = lambda: open(log).read().count("fit") if os.path.exists(log) else 0
    rng = np.random.default_rng(kills)
    n_killed, committed = 0, []
    for _ in range(kills + 10):
        if n_killed >= kills:
            break
        target = count() + int(rng.integers(1, 6))
        pid = os.fork()
        if pid == 0:
            os.setsid()
            code = 0
            try:
                main(args)
            except SystemExit as exc:
                code = exc.code or 0
            os._exit(code)
        deadline = time.time() + 30
        while time.time() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
            if count() >= target:
                os.killpg(pid, signal.SIGKILL)
                n_killed += 1
                break
            time.sleep(0.005)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        if os.path.exists(store):
            with duckdb.connect(store, read_only=True) as con:
                committed.append(con.execute("select count(*) from replikit_results").fetchone()[0])
    print(json.dumps({"killed": n_killed, "committed": committed}))
""")


def _soak(data, tmp_path, env, backend_args, kills, label):
    import json

    store, log = tmp_path / f"{label}.duckdb", tmp_path / f"{label}.log"
    out = tmp_path / f"{label}.csv"
    cmd = _cmd(data, out, store, log, *backend_args, delay=0.03, scheme="10x6")
    driver = tmp_path / "driver.py"
    driver.write_text(SOAK_DRIVER)
    res = subprocess.run([sys.executable, str(driver), json.dumps(cmd[3:]), str(kills),
                          str(log), str(store)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout.strip().splitlines()[-1])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return report["killed"], report["committed"], Scores.read(out)


@pytest.mark.slow
def test_soak_sigkills_lose_and_duplicate_nothing(data, tmp_path):
    """SIGKILLs (serial and joblib) at random moments, then a resume: the scores equal a run
    without interruption, each task stored exactly once. The suite kills 2 serial and 2
    joblib runs (about 25 s); ``REPLIKIT_SOAK_KILLS=14,8`` runs the full soak of 22 kills (about
    150 s), as before a release."""
    kills = [int(k) for k in os.environ.get("REPLIKIT_SOAK_KILLS", "2,2").split(",")]
    env = _env(tmp_path)
    serial = _soak(data, tmp_path, env, (), kills[0], "serial")
    joblib = _soak(data, tmp_path, env, ("--backend", "joblib", "--n-jobs", "2"), kills[1],
                   "joblib")
    clean = subprocess.run(_cmd(data, tmp_path / "clean.csv", tmp_path / "clean.duckdb",
                                tmp_path / "clean.log", delay=0.0, scheme="10x6"), env=env,
                           capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr
    reference = Scores.read(tmp_path / "clean.csv")
    for _killed, committed, scores in (serial, joblib):
        assert committed == sorted(committed)  # a committed task is never lost
        assert scores == reference  # nothing lost, nothing duplicated (keys unique)
    # a kill can come too late (the run finished first): most must land
    assert serial[0] >= kills[0] - 2 and joblib[0] >= kills[1] - 2
    for label in ("serial", "joblib"):
        with duckdb.connect(str(tmp_path / f"{label}.duckdb"), read_only=True) as con:
            n_tasks = con.execute("select count(*) from replikit_results").fetchone()[0]
            n_scores = con.execute("select count(*) from replikit_scores").fetchone()[0]
            dup = con.execute('select count(*) from (select model, study, "repeat", fold, '
                              'metric from replikit_scores group by all having count(*) > 1)'
                              ).fetchone()[0]
        assert n_tasks == 2 * 60 and n_scores == 2 * 60 * 2 and dup == 0
    print(f"soak: serial {serial[0]} kills (tasks committed after each: {serial[1]}); joblib "
          f"{joblib[0]} kills ({joblib[1]})")
