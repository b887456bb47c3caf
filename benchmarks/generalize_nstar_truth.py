"""The true n* of the Mallows design of ``replikit.generalize.validity``.

Rankings of 10 alternatives from a Mallows model (Kendall distance, theta = 0.3); for each goal
(Jaccard k = 1, Mallows kernel, Borda of alternative 0; the paper's default bandwidths) and
each n, the n-Gen value ``P(MMD_n <= epsilon*)`` of two independent samples of size n drawn
from the model itself, over R simulated pairs. The true n* is where n-Gen crosses
alpha* = 0.95 (linear interpolation between integers); ``validity.TRUTH`` holds the values
this script printed (40,000 pairs for Jaccard and Borda, 10,000 for the Mallows kernel):

    jaccard(k=1): n-Gen(35) = .9484, n-Gen(36) = .9520  -> n* = 35.44
    borda(0):     n-Gen(11) = .9495, n-Gen(12) = .9629  -> n* = 11.04
    mallows:      n-Gen(10) = .9429, n-Gen(11) = .9727  -> n* = 10.24

It also prints the Gamma estimator's n* at the model's own moments (from a pool of 3,000
rankings): the asymptotic approximation's own error, without estimation noise.

    .venv/bin/python benchmarks/generalize_nstar_truth.py [--reps R] [--random-state S]

The default ``--reps 500`` is a quick check (~10 s of CPU; n-Gen to about ±0.01) that keeps
``make bench`` short; the values above need ``--reps 40000`` (``10000`` for the Mallows kernel).
"""

from __future__ import annotations

import argparse

import numpy as np

from replikit.generalize.nstar import gamma_nstar
from replikit.generalize.validity import DELTA, KERNELS, LEVEL, N_ALT, mallows_rankings

GRID = {"jaccard(k=1)": range(33, 39), "borda(0)": range(9, 14), "mallows": range(9, 13)}


def ngen(rng, kernel, n: int, reps: int, eps: float) -> float:
    w = np.r_[np.ones(n), -np.ones(n)] / n
    hits = 0
    for start in range(0, reps, 500):
        r = min(500, reps - start)
        X = mallows_rankings(rng, r * 2 * n).reshape(r, 2 * n, N_ALT)
        for i in range(r):
            K = kernel.gram(X[i])
            hits += np.sqrt(max(w @ K @ w, 0.0)) <= eps
    return hits / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--random-state", dest="random_state", type=int, default=2,
                    help="makes the run reproducible")
    args = ap.parse_args()
    rng = np.random.default_rng(args.random_state)
    for name, kernel in KERNELS.items():
        eps = float(np.atleast_1d(kernel.epsilon(DELTA, N_ALT))[0])
        pool = mallows_rankings(rng, 3000)
        K = kernel.gram(pool)
        H = np.eye(len(pool)) - 1.0 / len(pool)
        C = H @ K @ H / (len(pool) - 1)
        asym = float(gamma_nstar(np.trace(C), (C * C).sum(), eps, LEVEL))
        curve = {n: ngen(rng, kernel, n, args.reps, eps) for n in GRID[name]}
        ns = np.array(list(curve))
        g = np.array(list(curve.values()))
        i = int(np.argmax(g >= LEVEL))
        cross = float(ns[i - 1] + (LEVEL - g[i - 1]) / (g[i] - g[i - 1])) if i else float(ns[0])
        print(f"{name}: n-Gen {', '.join(f'{n}: {v:.4f}' for n, v in curve.items())}; "
              f"true n* = {cross:.2f}; Gamma n* at the model's moments = {asym:.2f}")


if __name__ == "__main__":
    main()
