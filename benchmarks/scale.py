"""Scale (memory, not time): peak memory and time of the big meta-analysis and store cases,
each in a fresh process.

Cases (``--full`` for the full sizes, about 5 minutes; the default, for ``make bench``, is ten
times smaller with fewer cases, about a minute):

* ``meta_analysis`` of k = 100,000 studies with each tau2 estimator (DL and REML by default) (the result includes the
  Q-profile CI of tau2 and the I2/H2 statistics), ``heterogeneity()`` (SE of tau2 and Q-profile
  intervals of tau2, tau, I2, H2), the prediction interval, ``small_study_effects`` (Egger,
  rank test, trim-and-fill) and ``replikit meta data.csv`` as a whole command;
* the batched ``tau2_estimate`` over 10,000 meta-analyses of 100 studies (DL, REML, PM);
* ``influence`` and ``leave_one_out`` (k refits of k studies: k^2 work): fitted in blocks of
  bounded memory up to ``MAX_REFIT_K`` = 20,000 studies, refused above it — the 100,000-study
  case shows the refusal, a 5,000-study case (``--full``; 1,000 by default) the bounded memory;
* a 1,000,000-row Scores table through ``replikit.experiment.store.TaskStore`` (10,000 tasks
  of 100 score rows) written as the runner writes it — ``Engine.map`` with a store, the
  runner's encoding and ``_ScoreRows``, group commits by the store's writer thread — then read
  back by a second ``Engine.map`` that resumes every task, and the runner's scores frame
  (``benchmarks/store_bench.py``, :func:`store_bench.scores_case`, which also times it against
  the goal of 20 s).

"peak RSS" is the process's maximum resident set (``getrusage``), including the interpreter
and imports (the "imports only" row); "work" is the peak minus the RSS before the case ran.

Run: .venv/bin/python benchmarks/scale.py [--full] [--only CASE ...]

Measured (--full, 2026-11-23, AMD EPYC 2 cores shared with 4 other jobs, 23.5 GiB): see
docs/performance.md, section "Scale".
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _rss_now_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _meta_data(k: int, random_state: int = 0):
    import numpy as np

    rng = np.random.default_rng(random_state)
    v = rng.uniform(0.01, 0.05, k)
    y = 0.3 + rng.normal(0, 0.1, k) + rng.normal(0, np.sqrt(v))
    return y, v


# --------------------------------------------------------------------------------- the cases


def case_imports(k: int) -> str:
    import pandas  # noqa: F401
    import scipy.stats  # noqa: F401

    import replikit.experiment.store  # noqa: F401
    import replikit.replicate  # noqa: F401

    return "interpreter + numpy/scipy/pandas + replikit.replicate + store (duckdb)"


def _meta(method: str):
    def run(k: int) -> str:
        from replikit.replicate import meta_analysis

        y, v = _meta_data(k)
        res = meta_analysis(y, v, tau2_method=method)
        return f"tau2 = {res.tau2:.4g}, Q-profile CI {res.tau2_ci}"
    return run


def case_heterogeneity(k: int, method: str = "REML") -> str:
    from replikit.replicate import meta_analysis

    y, v = _meta_data(k)
    res = meta_analysis(y, v, tau2_method=method)
    h = res.heterogeneity(0.90)
    pi = res.prediction_interval(0.95, "t(k-2)")
    return f"SE(tau2) = {h.se_tau2:.3g}, I2 {h.i2:.1f}% {h.i2_ci}; PI {pi}"


def case_small_study(k: int) -> str:
    from replikit.replicate import meta_analysis, small_study_effects

    y, v = _meta_data(k)
    sse = small_study_effects(meta_analysis(y, v, tau2_method="DL"))
    return f"{type(sse).__name__}"


def case_cli(k: int) -> str:
    import numpy as np
    import pandas as pd

    from replikit._entry import main

    y, v = _meta_data(k)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "studies.csv"
        pd.DataFrame({"study": [f"s{i}" for i in range(k)], "yi": y, "vi": v}).to_csv(
            path, index=False)
        del y, v
        sys.argv = ["replikit", "--quiet", "meta", str(path), "--label", "study"]
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the study table is long
        try:
            code = main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.stdout = sys.__stdout__
        if code not in (0, None):
            raise RuntimeError(f"replikit meta exited {code}")
    return f"replikit meta data.csv ({np.int64(k):,} rows)"


def case_batched(n_meta: int, k: int = 100) -> str:
    import numpy as np

    from replikit.replicate import tau2_estimate

    rng = np.random.default_rng(1)
    v = rng.uniform(0.01, 0.05, (n_meta, k))
    y = 0.3 + rng.normal(0, 0.1, (n_meta, 1)) + rng.normal(0, np.sqrt(v))
    for method in ("DL", "REML", "PM"):
        tau2_estimate(y, v, method)
    return f"{n_meta:,} x {k} (DL, REML, PM)"


def case_influence(k: int) -> str:
    from replikit.replicate import influence, meta_analysis

    y, v = _meta_data(k)
    inf = influence(meta_analysis(y, v))
    return f"{len(inf.influential)} flagged"


def case_leave_one_out(k: int) -> str:
    from replikit.replicate import leave_one_out, meta_analysis

    y, v = _meta_data(k)
    return f"{len(leave_one_out(meta_analysis(y, v)))} rows"


def case_store(n_rows: int) -> str:
    from store_bench import scores_case  # benchmarks/store_bench.py

    r = scores_case(n_rows)
    return (f"{r['rows']:,} rows in {r['tasks']:,} tasks; write {r['write']:.1f} s in "
            f"{r['commits']} commits (peak {r['rss_write_kib'] / 1024:.0f} MiB after writing), "
            f"read back {r['read']:.1f} s (Engine.map resuming every task + scores frame)")


def _cases(full: bool) -> list[tuple[str, object, int]]:
    k = 100_000 if full else 10_000
    cases = [("imports only", case_imports, 0)]
    for method in ("FE", "DL", "REML", "ML", "PM", "HE", "SJ", "HS") if full else ("DL", "REML"):
        cases.append((f"meta_analysis {method} (+ Q-profile CI)", _meta(method), k))
    cases += [
        ("heterogeneity() REML + prediction interval", case_heterogeneity, k),
    ]
    if full:
        cases.append(("heterogeneity() SJ", lambda n: case_heterogeneity(n, "SJ"), k))
    cases += [
        ("small_study_effects (Egger, rank, trim-and-fill)", case_small_study, k),
        ("replikit meta data.csv (whole command)", case_cli, k),
        ("tau2_estimate batched, 100 studies each", case_batched, k // 10),
        ("influence (REML)", case_influence, 100_000),  # refused: above MAX_REFIT_K
    ]
    if full:
        cases.append(("leave_one_out (REML)", case_leave_one_out, k))
    cases += [
        ("influence (REML), bounded blocks", case_influence, 5_000 if full else 1_000),
        ("store: Scores rows write + load", case_store, 1_000_000 if full else 50_000),
    ]
    return cases


def _child(name: str, full: bool) -> None:
    cases = {c[0]: c for c in _cases(full)}
    _, fn, size = cases[name]
    if name != "imports only":  # time and memory of the work, not of the imports
        import pandas  # noqa: F401
        import scipy.stats  # noqa: F401

        import replikit.experiment.store  # noqa: F401
        import replikit.replicate  # noqa: F401
    before = _rss_now_kib()
    t0 = time.perf_counter()
    try:
        note = fn(size)
        status = "ok"
    except Exception as exc:  # noqa: BLE001 - a refusal is a result of the case
        note = f"{type(exc).__name__}: {exc}".replace("\t", " ").replace("\n", " ")
        status = "refused" if type(exc).__name__ in ("ParameterError", "ResourceLimitError") \
            else "failed"
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"SCALE\t{seconds:.3f}\t{peak}\t{before}\t{status}\t{note}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the issue's sizes (100,000 studies, "
                    "1,000,000 score rows); several minutes")
    ap.add_argument("--only", nargs="+", help="cases whose name starts with one of these")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, args.full)
        return 0
    cases = _cases(args.full)
    if args.only:
        cases = [c for c in cases if any(c[0].startswith(o) for o in args.only)]
    print("| case | studies / rows | peak RSS | work (peak - before) | seconds | result |")
    print("|---|---:|---:|---:|---:|---|")
    ok = True
    for name, _, size in cases:
        cmd = [sys.executable, __file__, "--child", name] + (["--full"] if args.full else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("SCALE\t")), None)
        if line is None:
            ok = False
            err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"| {name} | {size:,} | - | - | - | crashed: {err[:120]} |", flush=True)
            continue
        _, sec, peak, before, status, note = line.split("\t", 5)
        ok &= status != "failed"
        peak_mib, work_mib = int(peak) / 1024, (int(peak) - int(before)) / 1024
        shown = note if status == "ok" else f"**{status}**: {note}"
        print(f"| {name} | {size:,} | {peak_mib:.0f} MiB | {work_mib:.0f} MiB | "
              f"{float(sec):.2f} | {shown[:200]} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
