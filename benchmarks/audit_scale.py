"""The audit at a consortium's size (issue 28, "Large inputs"): ``replikit audit --data`` on
synthetic multi-site data of 100,000 to 1,000,000 rows, 50 studies (sites), 20 features —
wall time and peak memory of the whole process tree, locally and on a 2-worker Dask cluster.

The data (:func:`make_data`, seeded): 50 sites of unequal size (Dirichlet shares); 16 numeric
features, 6 of them pure noise and 3 correlated with each other, and 2 categorical features
(``region``, 6 levels, a site-level property; ``group``, 12 levels, a row-level one); the
outcome has a site-level shift in intercept and in the slopes of 4 features (random slopes),
an interaction and noise. Regression: ``y`` is that linear predictor plus noise; classification:
``y`` is 0/1 drawn from its logistic. Written to Parquet (what a consortium would hand over).

Each audit runs as the command a user types, ``replikit audit --data FILE --target y --study
site --out DIR --random-state 0``, with the audit's default models (whatever
``replikit.experiment.models.default_models`` and the audit's size-aware budget choose: the
cards and ``report.json`` say what they changed) and default workers, or, with ``--cluster``,
``--scheduler ADDR`` of a cluster this script starts as subprocesses: ``dask scheduler
--scheduler-file F --port 0`` and ``dask worker --scheduler-file F --nworkers 2 --nthreads 1``
(2 single-threaded worker processes).

Memory: the peak of the sum of the resident set sizes (RSS) of the audit process and all its
descendants (joblib/loky workers), polled with psutil every 0.1 s; for a cluster run the
scheduler and workers' process trees are polled too and reported apart ("cluster"), and the
total is the peak of the sum over both. Polling can miss a spike shorter than 0.1 s; the
largest single process's peak (``getrusage`` of the children, as ``/usr/bin/time -v`` reports
it) is printed too ("max process").

Per run: wall time, peak memory, the seconds of each section (``report.json``
``meta.section_seconds``) and of each shared fit set (``meta.fit_seconds``), and what the
audit's budget changed (``meta`` notes, if any), and the machine's mean and largest 1-minute
load average while the audit ran (a wall time measured beside other work is not the audit's
alone); then how time and memory grow from the
smallest size to each larger one against the growth of the rows (goal: linear; memory under
4 GiB; nothing refused that fits). An audit that fails or is refused is reported with its exit
code and the last lines of its stderr. No ``bench_row``: the goals are about memory and growth,
and ``make bench`` does not run this script (``run_all.MANUAL``).

Run::

    .venv/bin/python benchmarks/audit_scale.py                      # make bench: 100,000 rows,
                                                                     # regression, local
    .venv/bin/python benchmarks/audit_scale.py --rows 100000 300000 1000000 \\
        --task regression classification --cluster both             # the issue's table (hours)

``--cluster`` is ``no`` (default: local workers), ``yes`` (a 2-worker Dask cluster only) or
``both``. ``--keep DIR`` keeps the data and reports. The 1,000,000-row runs are not part of
``make bench``; their results are in docs/performance.md ("The audit at a million rows").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

N_STUDIES, N_FEATURES = 50, 20
MEMORY_GOAL_GIB = 4.0
BIN = Path(sys.executable).parent


# ------------------------------------------------------------------------------- the data


def make_data(n: int, task: str, random_state: int = 0):
    """``n`` rows of 50 sites x 20 features (18 numeric, 2 categorical) and ``y``, ``site``."""
    import pandas as pd

    rng = np.random.default_rng(random_state)
    shares = rng.dirichlet(np.full(N_STUDIES, 2.0))
    site = rng.choice(N_STUDIES, size=n, p=shares)
    n_num = N_FEATURES - 2
    X = rng.normal(size=(n, n_num))
    X[:, 1] = 0.7 * X[:, 0] + 0.3 * X[:, 1]  # correlated features
    X[:, 2] = 0.5 * X[:, 0] - 0.5 * X[:, 1] + 0.5 * X[:, 2]
    X += rng.normal(0, 0.3, size=(N_STUDIES, n_num))[site]  # site-level covariate shift
    beta = np.zeros(n_num)
    beta[:12] = rng.normal(0, 0.6, 12)  # features 12..17: pure noise
    slopes = np.zeros((N_STUDIES, n_num))
    slopes[:, :4] = rng.normal(0, 0.25, (N_STUDIES, 4))  # random slopes of 4 features
    intercept = rng.normal(0, 0.5, N_STUDIES)  # site-level intercept shift
    region_of_site = rng.integers(0, 6, N_STUDIES)
    region = region_of_site[site]
    group = rng.integers(0, 12, n)
    eta = (intercept[site] + np.einsum("ij,ij->i", X, beta + slopes[site])
           + np.array([0.0, 0.3, -0.2, 0.5, 0.1, -0.4])[region]
           + rng.normal(0, 0.3, 12)[group] + 0.4 * X[:, 0] * X[:, 3])
    if task == "regression":
        y = eta + rng.normal(0, 1.0, n)
    else:
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int64)
    frame = pd.DataFrame(X, columns=[f"x{j:02d}" for j in range(n_num)])
    frame["region"] = np.array([f"r{r}" for r in range(6)], dtype=object)[region]
    frame["group"] = np.array([f"g{g:02d}" for g in range(12)], dtype=object)[group]
    frame["site"] = np.array([f"site{s:02d}" for s in range(N_STUDIES)], dtype=object)[site]
    frame["y"] = y
    return frame


# ------------------------------------------------------------------------- memory polling


class TreePeak:
    """Peak of the summed RSS of some process trees (psutil, polled every ``interval`` s)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval, self.roots, self.peak = interval, {}, {}
        self.loads: list[float] = []  # the machine's 1-minute load average, once a second
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def watch(self, name: str, pid: int) -> None:
        self.roots.setdefault(name, []).append(pid)
        self.peak.setdefault(name, 0)
        self.peak.setdefault("total", 0)

    def start(self) -> TreePeak:
        self._thread.start()
        return self

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return dict(self.peak)

    def _rss(self, pid: int) -> int:
        import psutil

        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return 0
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def load(self) -> tuple[float, float] | None:
        """Mean and largest 1-minute load average seen while the run went on."""
        return (float(np.mean(self.loads)), max(self.loads)) if self.loads else None

    def _poll(self) -> None:
        polls = 0
        while not self._stop.is_set():
            if polls % max(1, round(1 / self.interval)) == 0:
                self.loads.append(os.getloadavg()[0])
            polls += 1
            now = {name: sum(self._rss(pid) for pid in pids)
                   for name, pids in list(self.roots.items())}
            for name, value in now.items():
                self.peak[name] = max(self.peak[name], value)
            self.peak["total"] = max(self.peak.get("total", 0), sum(now.values()))
            self._stop.wait(self.interval)


# ----------------------------------------------------------------------------- the cluster


class Cluster:
    """``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 1`` as subprocesses (in
    this script's process group, so that run_all's kill of a timed-out script ends them too)."""

    def __init__(self, tmp: Path, workers: int = 2) -> None:
        self.file = tmp / "scheduler.json"
        self.log = open(tmp / "cluster.log", "w")  # noqa: SIM115 - closed in close()
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        self.scheduler = subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--scheduler-file", str(self.file), "--port", "0",
             "--no-dashboard"], stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 60
        while not self.file.exists() and time.time() < deadline:
            time.sleep(0.1)
        if not self.file.exists():
            self.close()
            raise RuntimeError("dask scheduler did not start within 60 s (see cluster.log)")
        time.sleep(0.2)  # the file is written in one go, but give it a moment
        self.address = json.loads(self.file.read_text())["address"]
        self.worker = subprocess.Popen(
            [str(BIN / "dask"), "worker", self.address, "--nworkers", str(workers),
             "--nthreads", "1", "--no-dashboard"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        from dask.distributed import Client

        with Client(self.address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=120)

    def pids(self) -> list[int]:
        return [self.scheduler.pid, self.worker.pid]

    def close(self) -> None:
        for proc in (getattr(self, "worker", None), self.scheduler):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.log.close()


# --------------------------------------------------------------------------------- one run


def audit(data: Path, out: Path, cluster: Cluster | None, extra: list[str]) -> dict:
    cmd = [str(BIN / "replikit"), "audit", "--data", str(data), "--target", "y", "--study",
           "site", "--out", str(out), "--overwrite", "--random-state", "0", *extra]
    if cluster is not None:
        cmd += ["--scheduler", cluster.address]
    err_path = out.parent / f"{out.name}.stderr"
    peak = TreePeak()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        peak.watch("audit", proc.pid)
        if cluster is not None:
            for pid in cluster.pids():
                peak.watch("cluster", pid)
        peak.start()
        code = proc.wait()
    wall = time.perf_counter() - start
    peaks = peak.stop()
    max_proc = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    res = {"cmd": " ".join(cmd), "code": code, "wall": wall, "peaks": peaks, "load": peak.load(),
           "max_process_kib": max_proc if max_proc > before else None}
    if code != 0:
        res["stderr"] = err_path.read_text()[-3000:]
        return res
    meta = json.loads((out / "report.json").read_text())["meta"]
    res["meta"] = {k: meta.get(k) for k in ("n_rows", "section_seconds", "fit_seconds",
                                             "fit_sets", "seconds", "models", "budget",
                                             "sizing", "backend", "n_jobs")
                   if k in meta}
    return res


def _gib(b: float) -> str:
    return f"{b / 2 ** 30:.2f} GiB"


def show(label: str, rows: int, res: dict) -> None:
    peaks = res["peaks"]
    mem = _gib(peaks.get("total", 0))
    if "cluster" in peaks:
        mem += f" (audit {_gib(peaks['audit'])}, cluster {_gib(peaks['cluster'])})"
    maxp = (f"; max process {res['max_process_kib'] / 2 ** 20:.2f} GiB"
            if res.get("max_process_kib") else "")
    if res["code"] != 0:
        print(f"{label} {rows:,} rows: FAILED (exit {res['code']}) after {res['wall']:.0f} s, "
              f"peak {mem}\n  {res['cmd']}\n  stderr (end):\n" +
              "\n".join("    " + ln for ln in res["stderr"].strip().splitlines()[-25:]),
              flush=True)
        return
    meta = res["meta"]
    over = (f" — above the {MEMORY_GOAL_GIB:g} GiB goal"
            if peaks.get("total", 0) > MEMORY_GOAL_GIB * 2 ** 30 else "")
    load = (f"; load {res['load'][0]:.1f} (max {res['load'][1]:.1f}) on {os.cpu_count()} cores"
            if res.get("load") else "")
    print(f"{label} {rows:,} rows: {res['wall']:.1f} s wall, peak {mem}{maxp}{over}{load}",
          flush=True)
    secs = meta.get("section_seconds") or {}
    print("  sections (s): " + ", ".join(f"{k} {v:.1f}" for k, v in secs.items()))
    fits = meta.get("fit_seconds") or {}
    print("  fit sets (s): " + ", ".join(
        f"{k} {v:.1f}" if isinstance(v, int | float) else f"{k} {v}" for k, v in fits.items()))
    for key in ("models", "budget", "sizing", "backend", "n_jobs"):
        if key in meta:
            print(f"  {key}: {json.dumps(meta[key], default=str)[:400]}")
    for name, f in (meta.get("fit_sets") or {}).items():
        if isinstance(f, dict):
            print(f"  fit set {name}: {f.get('fits')} fits of {', '.join(f.get('models', []))}"
                  f", {f.get('rows_fitted', 0):,} rows fitted")


def growth(results: dict) -> None:
    """Time and memory of each size against the smallest, next to the growth of the rows."""
    print("\nGrowth against the smallest size (linear: the same factor as the rows):")
    for (task, where), by_rows in results.items():
        ok = {n: r for n, r in by_rows.items() if r["code"] == 0}
        if len(ok) < 2:
            continue
        n0 = min(ok)
        r0 = ok[n0]
        for n in sorted(ok)[1:]:
            r = ok[n]
            print(f"  {task}, {where}: rows x{n / n0:.1f} ({n0:,} -> {n:,}): time "
                  f"x{r['wall'] / r0['wall']:.2f} ({r0['wall']:.0f} -> {r['wall']:.0f} s), "
                  f"memory x{r['peaks']['total'] / r0['peaks']['total']:.2f} "
                  f"({_gib(r0['peaks']['total'])} -> {_gib(r['peaks']['total'])})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000])
    ap.add_argument("--task", nargs="+", default=["regression"],
                    choices=("regression", "classification"))
    ap.add_argument("--cluster", choices=("no", "yes", "both"), default="no",
                    help="local workers (no), a 2-worker Dask cluster (yes), or both")
    ap.add_argument("--keep", type=Path, help="keep the data and reports in this directory")
    ap.add_argument("--audit-args", default="",
                    help="extra arguments for replikit audit, e.g. '--sections resampling'")
    args = ap.parse_args(argv)
    # a SIGTERM (a timeout, run_all's budget) still runs the finally below: no cluster left
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = Path(tempfile.mkdtemp(prefix="audit_scale_")) if args.keep is None else args.keep
    tmp.mkdir(parents=True, exist_ok=True)
    wheres = {"no": ["local"], "yes": ["cluster"], "both": ["local", "cluster"]}[args.cluster]
    results: dict = {}
    failed = False
    cluster = None
    try:
        if "cluster" in wheres:
            cluster = Cluster(tmp)
            print(f"Dask cluster: scheduler {cluster.address}, 2 workers x 1 thread", flush=True)
        for task in args.task:
            for n in sorted(args.rows):
                data = tmp / f"{task}_{n}.parquet"
                if not data.exists():
                    t0 = time.perf_counter()
                    make_data(n, task).to_parquet(data, index=False)
                    print(f"data {task} {n:,} rows: {data.stat().st_size / 2 ** 20:.0f} MiB "
                          f"Parquet in {time.perf_counter() - t0:.1f} s", flush=True)
                for where in wheres:
                    res = audit(data, tmp / f"{task}_{n}_{where}", cluster
                                if where == "cluster" else None, args.audit_args.split())
                    results.setdefault((task, where), {})[n] = res
                    show(f"audit {task}, {where},", n, res)
                    failed |= res["code"] != 0
        growth(results)
        # every run's numbers, for tables written later (JSON keys: "task/where/rows")
        (tmp / "results.json").write_text(json.dumps(
            {f"{t}/{w}/{n}": r for (t, w), by in results.items() for n, r in by.items()},
            indent=1, default=str))
    finally:
        if cluster is not None:
            cluster.close()
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
