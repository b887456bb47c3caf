"""The experiment store (issue 28, "Fast storage"): what a store adds to a run, and a
1,000,000-row Scores table written and read back.

Rows (``bench_row``, anchor ``goal``):

* **run overhead**: ``replikit.experiment.run`` of 400 small tasks (LinearRegression,
  ``bootstrap:400`` on 200 rows x 5 features, metric r2) with a fresh store vs without one, in
  the same process, alternating, best of ``--repeats``; serially and with ``--backend joblib
  --n-jobs 2``. Also prints the CPU time of the calling process (the store's writer thread and
  DuckDB run there), steadier than wall time on a shared machine. Goal: the store adds at most 20 % (the goal's seconds are 1.2 x the time
  without a store). Checks that the scores with and without a store are identical.
* **1,000,000 score rows**: 10,000 tasks x 100 metrics written through the same path as the
  runner (``Engine.map`` with a store, the runner's ``_encode`` / ``_decode`` / ``_ScoreRows``)
  by a trivial module-level task function (:func:`tiny_task`) that returns a runner
  ``_TaskOutput`` of 100 random values — so only the store is timed, not fits; then read back by
  a second ``Engine.map`` over the same keys on the reopened store (every task resumed:
  ``TaskStore.load``, codec decode, ``_decode``) and the runner's ``_scores_frame`` of the
  10,000 outputs, checked equal to what was written. Runs in a fresh process (its peak RSS,
  ``getrusage`` max RSS of that process, is reported). Goal: write + read back under 20 s.
  It also checks the long ``replikit_scores`` SQL table holds the 1,000,000 rows.

Run: .venv/bin/python benchmarks/store_bench.py [--repeats 3] [--rows 1000000] [--only run|scores]

Before (the store of 24 Nov 2026, one transaction per task, ``TaskStore.commit``): the
1,000,000-row write took 215 s (225 s with load + concat, 642 MiB peak), and the 400-task run
3.6-10x as long with a store. Both before/after figures: docs/performance.md ("The store").
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import bench_row  # benchmarks/_timing.py

GOAL_RATIO = 1.2  # a store adds at most 20 %
GOAL_SCORES_SECONDS = 20.0


# ------------------------------------------------------------------------ run of 400 tasks


def _run_case(repeats: int, backend: str, n_jobs: int | None) -> tuple:
    from sklearn.linear_model import LinearRegression

    from replikit.experiment import run

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = X @ rng.normal(size=5) + rng.normal(size=200)
    models = {"ols": LinearRegression()}
    kw = dict(scheme="bootstrap:400", metrics="r2", random_state=0, backend=backend,
              n_jobs=n_jobs, return_predictions=False)
    run(models, X, y, **kw)  # warm-up (imports, joblib workers)
    plain, stored, cpu_plain, cpu_stored = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            ref = run(models, X, y, **kw)
            plain.append(time.perf_counter() - t0)
            cpu_plain.append(time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            res = run(models, X, y, store=Path(tmp) / f"run{i}.duckdb", **kw)
            stored.append(time.perf_counter() - t0)
            cpu_stored.append(time.process_time() - c0)
            assert res.provenance["n_resumed"] == 0
            a, b = ref.scores.frame, res.scores.frame
            assert len(a) == 400 and a["value"].to_numpy().tobytes() == \
                b["value"].to_numpy().tobytes(), "scores differ with a store"
    return min(plain), min(stored), min(cpu_plain), min(cpu_stored)


def bench_run(repeats: int) -> None:
    for backend, n_jobs in (("serial", None), ("joblib", 2)):
        plain, stored, cpu_plain, cpu_stored = _run_case(repeats, backend, n_jobs)
        where = "serial" if backend == "serial" else f"joblib n_jobs={n_jobs}"
        print(f"run, 400 tasks, {where}: no store {plain:.3f} s, store {stored:.3f} s, "
              f"ratio {stored / plain:.2f}; CPU time of this process (the store's writer "
              f"thread and DuckDB included, workers not): {cpu_plain:.2f} s -> "
              f"{cpu_stored:.2f} s")
        bench_row(f"store overhead: run of 400 small tasks (LinearRegression, bootstrap:400, "
                  f"200 rows), {where}", "goal", GOAL_RATIO * plain, stored,
                  f"goal 1.2 x no store ({plain:.2f} s); store / no store "
                  f"{stored / plain:.2f}; process CPU {cpu_plain:.2f} -> {cpu_stored:.2f} s; "
                  f"best of {repeats}")


# --------------------------------------------------------------- 1,000,000 score rows


def score_tasks(n_tasks: int):
    """``n_tasks`` runner tasks (20 models x 10 studies x repeats x 10 folds), 400/100 rows."""
    from replikit.experiment.runner import _Task

    train, test = np.arange(400), np.arange(400, 500)
    return [_Task(f"model_{t % 20}", f"study_{t // 20 % 10}", t // 2000, t // 200 % 10,
                  train, test) for t in range(n_tasks)]


def _task_index(task) -> int:
    return task.repeat * 2000 + task.fold * 200 + int(task.study[6:]) * 20 + \
        int(task.model[6:])


def tiny_task(task, values):
    """A runner-like task that fits nothing: its output is the task's row of ``values``."""
    from replikit.experiment.runner import _TaskOutput

    return _TaskOutput(task, values[_task_index(task)], None, None, None, 0.0)


def scores_case(n_rows: int, metrics: int = 100) -> dict:
    """Write ``n_rows`` score rows through ``Engine.map`` + store, then read them back."""
    import duckdb

    from replikit.experiment.engine import Engine, spec_hash
    from replikit.experiment.runner import _decode, _encode, _ScoreRows, _scores_frame
    from replikit.experiment.store import TaskStore

    n_tasks = n_rows // metrics
    names = tuple(f"metric_{j}" for j in range(metrics))
    tasks = score_tasks(n_tasks)
    values = np.random.default_rng(0).random((n_tasks, metrics))
    spec = {"kind": "run", "case": "store_bench", "n": n_rows}
    run_id = spec_hash(spec)
    keys = [t.key for t in tasks]
    kw = dict(shared=(values,), keys=keys, run_id=run_id, spec=spec, encode=_encode,
              decode=_decode, rows=_ScoreRows(names))
    cpu0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.duckdb"
        t0 = time.perf_counter()
        with Engine(store=TaskStore(path, spec, run_id)) as engine:
            engine.map(tiny_task, tasks, **kw)
            n_commits = engine.store.n_commits
        t_write = time.perf_counter() - t0
        rss_write = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        size = path.stat().st_size
        t0 = time.perf_counter()
        with Engine(store=TaskStore(path, spec, run_id)) as engine:
            outs = engine.map(tiny_task, tasks, **kw)
            resumed = engine.last_resumed
        frame = _scores_frame(outs, list(names))
        t_read = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        assert resumed == n_tasks, f"resumed {resumed} of {n_tasks}"
        assert frame["value"].to_numpy().tobytes() == values.ravel().tobytes()
        con = duckdb.connect(str(path), read_only=True)
        n_sql = con.execute("SELECT count(*) FROM replikit_scores").fetchone()[0]
        con.close()
        assert n_sql == n_rows, f"replikit_scores has {n_sql} rows"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rows": n_rows, "tasks": n_tasks, "write": t_write, "read": t_read,
            "commits": n_commits, "cpu": cpu, "rss_write_kib": rss_write, "peak_kib": peak,
            "file_mib": size / 2 ** 20}


def bench_scores(n_rows: int) -> None:
    proc = subprocess.run([sys.executable, __file__, "--child-scores", str(n_rows)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"scores case failed (exit {proc.returncode})")
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    total = r["write"] + r["read"]
    print(f"{r['rows']:,} score rows in {r['tasks']:,} tasks: write {r['write']:.2f} s "
          f"({r['commits']} commits), read back {r['read']:.2f} s, total {total:.2f} s "
          f"(CPU time of the process {r['cpu']:.2f} s); "
          f"peak RSS {r['peak_kib'] / 1024:.0f} MiB ({r['rss_write_kib'] / 1024:.0f} MiB "
          f"after writing); file {r['file_mib']:.0f} MiB")
    bench_row(f"store: {r['rows']:,} score rows ({r['tasks']:,} tasks x 100) written via "
              "Engine.map and read back", "goal", GOAL_SCORES_SECONDS, total,
              f"write {r['write']:.1f} s in {r['commits']} commits, read {r['read']:.1f} s, "
              f"CPU {r['cpu']:.1f} s, peak RSS {r['peak_kib'] / 1024:.0f} MiB; before: 225 s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--only", choices=("run", "scores"))
    ap.add_argument("--child-scores", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_scores:
        print(json.dumps(scores_case(args.child_scores)))
        return 0
    if args.only in (None, "run"):
        bench_run(args.repeats)
    if args.only in (None, "scores"):
        bench_scores(args.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
