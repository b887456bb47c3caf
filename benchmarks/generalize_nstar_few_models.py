"""Coverage of n*'s jackknife interval when an audit ranks few models (3 or 5).

The calibration table of docs/generalize.md uses rankings of 10 alternatives; an audit ranks its
3 to 6 models. Here each of N studies ranks ``n_a`` models by a Mallows model (Kendall distance,
dispersion ``theta``, the identity as centre; exact probabilities over all ``n_a!``
rankings), and the target is the Gamma n* of the law itself (:func:`gamma_nstar` of the exact
moments ``tr(C)``, ``||C||^2_HS`` of the kernel under the law): the quantity the estimator and
its interval are about. Per cell: the share of replications whose jackknife 95% interval
(``_gamma_rows``, as :func:`~replikit.generalize.estimate_nstar`) covers it, among those with an
interval (as the n* table builds it), how many had none (N < 5 and the jackknife failed), how
many had every study alike (the interval then ``[1, agreement_bound]``), how many had a failed
jackknife (moments at a bound, or flat: ``[1, agreement_bound(n_other=...)]``) and how many were
near zero width (upper/lower < 1.01). The
audit's goals: the whole ranking (Mallows kernel), the best model (Jaccard, k = 1) and the
position of the best model (Borda).

Run: ``.venv/bin/python benchmarks/generalize_nstar_few_models.py [--replications 1000]``
(about 3 minutes with 1,000). Not part of ``make bench`` (``run_all.MANUAL``): it measures
calibration, not speed.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from scipy import special  # noqa: E402

from replikit.generalize import Kernel  # noqa: E402
from replikit.generalize.nstar import (  # noqa: E402
    _agree,
    _gamma_rows,
    _n_other,
    agreement_bound,
    gamma_nstar,
)


def kendall(a, b) -> int:
    n = len(a)
    return sum((a[i] - a[j]) * (b[i] - b[j]) < 0 for i in range(n) for j in range(i + 1, n))


def law(n_a: int, theta: float):
    perms = np.array(list(itertools.permutations(range(n_a))))  # ranks, 0 = best
    ident = np.arange(n_a)
    p = np.exp(-theta * np.array([kendall(r, ident) for r in perms]))
    return perms, p / p.sum()


def target(kernel: Kernel, perms, p, eps) -> float:
    G = kernel.gram(perms)
    m = G @ p
    tr = float(p @ np.diag(G) - p @ m)
    C = np.sqrt(p)[:, None] * (G - m[:, None] - m[None, :] + p @ m) * np.sqrt(p)
    hs = float((np.linalg.eigvalsh(C) ** 2).sum())
    return float(gamma_nstar(tr, hs, eps, 0.95))


def cell(rng, kernel, perms, p, N, R):
    n_a = perms.shape[1]
    eps = np.atleast_1d(kernel.epsilon(0.05, n_a)).astype(float)
    truth = target(kernel, perms, p, float(eps[0]))
    t = special.stdtrit(N - 1, 0.975)
    cover = none = thin = agree = failed = 0
    G = kernel.gram(perms)
    for _ in range(R):
        idx = rng.choice(len(p), size=N, p=p)
        K = G[np.ix_(idx, idx)]
        if _agree(K):  # every study alike: [1, agreement_bound], as the n* table
            lo, hi = 1.0, float(agreement_bound(N, kernel.inf(n_a), eps[0]))
            cover += lo <= truth <= hi
            agree += 1
            continue
        ns, se = _gamma_rows(K, eps, np.array([0.95]))
        ns, se = float(ns[0]), float(se[0])
        if not np.isfinite(se) and N < 5:
            none += 1
            continue
        if not np.isfinite(se):  # the jackknife failed (flat, at bound): the mode bound
            lo, hi = 1.0, float(agreement_bound(N, kernel.inf(n_a), eps[0],
                                                n_other=_n_other(K)))
            failed += 1
        else:
            lo, hi = ns * math.exp(-t * se), ns * math.exp(t * se)
        cover += lo <= truth <= hi
        thin += hi / lo < 1.01
    return truth, cover / max(R - none, 1), none, thin, agree, failed


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replications", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| models | theta | goal | target n* | N | covers (of those with an interval) | "
          "no interval | all studies alike | jackknife failed | near zero width |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n_a in (3, 5):
        for theta in (0.5, 1.5):
            perms, p = law(n_a, theta)
            goals = {"whole ranking (Mallows)": Kernel("mallows"),
                     "best model (Jaccard)": Kernel("jaccard", k=1),
                     "position of the best model (Borda)": Kernel("borda", alternative=0)}  # model 0
            for name, kernel in goals.items():
                for N in (5, 10, 20, 40):
                    truth, cov, none, thin, agree, failed = cell(rng, kernel, perms, p, N,
                                                                 args.replications)
                    print(f"| {n_a} | {theta} | {name} | {truth:.1f} | {N} | {cov:.3f} | "
                          f"{none} | {agree} | {failed} | {thin} |", flush=True)


if __name__ == "__main__":
    main()
