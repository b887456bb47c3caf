"""Benchmark: the Bayesian Plackett–Luce model on 100 datasets x 10 models, and its calibration.

Timing. ``replikit.compare.plackett_luce`` (the Caron & Doucet 2012 Gibbs sampler in numpy, 4
chains, 500 burn-in sweeps each, 4,000 kept draws) on a 100 x 10 table of scores drawn from a
Plackett–Luce model. The goal: under 1 s. No other Bayesian Plackett–Luce implementation runs
here to time beside it: BayesPermus 1.0.0 (the Python package of Rojas-Delgado, Ceberio, Calvo &
Lozano 2022) is pip-installable but imports ``pystan`` 2 (``pystan.StanModel``), which needs a
C++ toolchain to compile its Stan model and has no wheels for Python >= 3.11; R's
``scmamp::bPlackettLuceModel`` needs rstan. So the anchor is the goal.

Calibration (``--sbc N``): simulation-based calibration (Cook, Gelman & Rubin 2006; Talts et al.
2018): N replicates of weights drawn from the flat Dirichlet prior, ``--datasets`` rankings of
``--models`` models drawn from Plackett–Luce with them, the coverage of the 95% and 50%
credible intervals of every weight, and the coverage of P(best) as a forecast (the
true best model's prob_best averaged, against the fraction of replicates where the most
probable is the true best).

Run: ``.venv/bin/python benchmarks/compare_plackett_luce.py [--sbc 1000 --datasets 20
--models 5]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import bench_row, best_time  # benchmarks/_timing.py

from replikit.compare import plackett_luce

GOAL_SECONDS = 1.0


def _table(w, n, rng):
    return np.log(w) + rng.gumbel(size=(n, len(w)))  # Plackett-Luce rankings (Gumbel-max)


def timing(n_datasets: int, n_models: int) -> None:
    rng = np.random.default_rng(0)
    table = _table(rng.dirichlet(np.ones(n_models)), n_datasets, rng)
    seconds, res = best_time(lambda: plackett_luce(table, random_state=0), 3)
    print(f"plackett_luce on {n_datasets} datasets x {n_models} models, {res.n_draws} draws: "
          f"{seconds * 1000:.0f} ms (goal {GOAL_SECONDS:g} s; ratio {GOAL_SECONDS / seconds:.1f}); "
          f"minimum effective sample size {res.ess.min():.0f}")
    print("BayesPermus / scmamp not timed: they need a Stan toolchain (pystan 2 / rstan).")
    bench_row(f"Plackett-Luce posterior {n_datasets}x{n_models}", "goal", GOAL_SECONDS,
              seconds, "no pip-installable Bayesian PL without Stan to time")


def sbc(reps: int, n_datasets: int, n_models: int) -> None:
    rng = np.random.default_rng(2024)
    hit95 = hit50 = 0
    best_prob, best_hit = [], []
    start = time.perf_counter()
    for r in range(reps):
        w = rng.dirichlet(np.ones(n_models))
        res = plackett_luce(_table(w, n_datasets, rng), n_resamples=2000, n_chains=2,
                            n_warmup=300, random_state=r)
        hit95 += int(((res.ci_low <= w) & (w <= res.ci_high)).sum())
        ci = res.credible_intervals(0.5)
        hit50 += int(((ci["ci_low"] <= w) & (w <= ci["ci_high"])).sum())
        true_best = res.models[int(np.argmax(w))]
        best_prob.append(res.prob_best[true_best])
        best_hit.append(res.best == true_best)
    n = reps * n_models
    print(f"SBC: {reps} replicates, {n_datasets} datasets x {n_models} models, flat prior "
          f"({time.perf_counter() - start:.0f} s)")
    for hits, level in ((hit95, 0.95), (hit50, 0.5)):
        se = np.sqrt(level * (1 - level) / n)
        print(f"  {level:.0%} credible intervals: coverage {hits / n:.4f} of {n} "
              f"(binomial SE {se:.4f})")
    print(f"  mean P(best) of the true best {np.mean(best_prob):.4f}; the most probable "
          f"was the true best in {np.mean(best_hit):.4f} of replicates")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=None)
    parser.add_argument("--models", type=int, default=None)
    parser.add_argument("--sbc", type=int, default=0, help="calibration replicates (0: skip)")
    args = parser.parse_args()
    if args.sbc:
        sbc(args.sbc, args.datasets or 20, args.models or 5)
    else:
        timing(args.datasets or 100, args.models or 10)


if __name__ == "__main__":
    main()
