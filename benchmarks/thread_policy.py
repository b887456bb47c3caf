"""The thread policy (replikit._threads): the same work with the policy and with
BLAS threads unlimited, in one process, on a quiet machine and under a competing CPU load.

Work (scikit-learn's breast_cancer data, 569 x 30):

1. ``estimate``: what ``replikit estimate --data bc.csv --target target --model lr`` runs
   (resubstitution, 10-fold, bootstrap, LOO bootstrap and .632+ with 200 resamples; the batched fast
   path of a scaled logistic regression);
2. ``run``: a serial ``replikit run`` of lr and rf under 10x10 cross-validation;
3. ``experiment``: the batched experiment of Etherington & Lieske (2019) (``simulate_resampling``).

"policy" is replikit as shipped (one BLAS thread in batched paths and around each fit);
"unlimited" replaces every limit of ``replikit._threads`` by BLAS threads = cpu_count (what the
code did before the policy, when OpenBLAS used every core). "load" runs one busy process per
core in the background, as on a shared machine. Prints each time and the ratio
unlimited / policy; the results are checked to be identical.

    python benchmarks/thread_policy.py [--full] [--no-load]

The default run is the quick one (50 resamples, 5x2 CV, 100 datasets; about 30 s with the
load runs), which ``make bench`` uses; ``--full`` runs the sizes above (200 resamples, 10x10 CV,
1000 datasets; several minutes). ``--quick`` is accepted for compatibility (the default). One
``BENCH`` line per work and condition: anchor "BLAS threads unlimited" (the code before the
policy), replikit = the policy.

Default (quick) run, 23 Nov 2026, on the shared 2-core machine already at load average ~7 from
other work ("quiet" = no extra load of ours), policy vs unlimited: estimate 0.07 s vs 0.28 s
(3.9x) quiet, 0.21 s vs 0.84 s (4.1x) under load; run lr+rf 5x2 1.7 s vs 2.9 s (1.7x), 6.1 s vs
10.7 s; experiment (100 datasets) 0.30 s vs 1.08 s (3.7x), 1.5 s vs 4.7 s (3.1x); identical
results throughout. 35 s in all.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time

from _timing import bench_row  # benchmarks/_timing.py
from sklearn.datasets import load_breast_cancer
from threadpoolctl import threadpool_info, threadpool_limits

import replikit._threads as threads
from replikit.experiment import run
from replikit.experiment.models import make_model, make_models
from replikit.resampling.error import estimate_errors
from replikit.resampling.simulation import simulate_resampling

METHODS = ["resubstitution", "kfold", "bootstrap", "loo_bootstrap", ".632+"]


@contextlib.contextmanager
def unlimited():
    """Every replikit thread limit becomes 'BLAS threads = cpu_count'."""
    n = os.cpu_count() or 1
    original = threads.limit_threads
    threads.limit_threads = lambda **kwargs: threadpool_limits(limits=n, user_api="blas")
    try:
        with threadpool_limits(limits=n, user_api="blas"):
            yield
    finally:
        threads.limit_threads = original


@contextlib.contextmanager
def cpu_load(n: int):
    """``n`` background processes spinning on a core each."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def workloads(quick: bool):
    X, y = load_breast_cancer(return_X_y=True)
    n_resamples = 50 if quick else 200
    scheme = "5x2" if quick else "10x10"
    n_exp = 100 if quick else 1000

    def estimate():
        lr = make_model("lr", "classification")
        return estimate_errors(lr, X, y, methods=METHODS, n_resamples=n_resamples,
                               random_state=0).to_frame()

    def serial_run():
        models = make_models("lr,rf", "classification")
        return run(models, X, y, scheme=scheme, metrics=["accuracy", "roc_auc"],
                   random_state=0, return_predictions=False).scores.frame

    def experiment():
        return simulate_resampling(n_experiments=n_exp, random_state=1).errors

    return {f"estimate (5 methods, {n_resamples} resamples)": estimate, f"run lr+rf {scheme} serial": serial_run,
            f"experiment ({n_exp} datasets)": experiment}


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="the full sizes (several minutes)")
    ap.add_argument("--quick", action="store_true", help="smaller work (the default)")
    ap.add_argument("--no-load", action="store_true", help="skip the competing-load runs")
    args = ap.parse_args()
    n = os.cpu_count() or 1
    blas = [(p["internal_api"], p["num_threads"]) for p in threadpool_info()
            if p["user_api"] == "blas"]
    print(f"{n} cores; BLAS {blas}; load average {os.getloadavg()[0]:.1f} at start")
    work = workloads(not args.full)
    for name, fn in work.items():  # warm-up: imports, caches
        if "run" not in name:
            fn()
    conditions = [("quiet", contextlib.nullcontext)]
    if not args.no_load:
        conditions.append((f"load ({n} busy processes)", lambda: cpu_load(n)))
    print(f"{'work':34s} {'condition':26s} {'policy s':>9s} {'unlimited s':>12s} {'ratio':>6s}")
    for cond, ctx in conditions:
        for name, fn in work.items():
            with ctx():
                t_policy, a = timed(fn)
                with unlimited():
                    t_free, b = timed(fn)
            same = a.drop(columns=[c for c in a.columns if c == "runtime_seconds"]).equals(
                b.drop(columns=[c for c in b.columns if c == "runtime_seconds"]))
            print(f"{name:34s} {cond:26s} {t_policy:9.1f} {t_free:12.1f} "
                  f"{t_free / t_policy:6.2f}{'' if same else '  RESULTS DIFFER'}", flush=True)
            bench_row(f"thread policy: {name}, {cond}", "BLAS threads unlimited", t_free,
                      t_policy, "same results" if same else "RESULTS DIFFER")


if __name__ == "__main__":
    main()
