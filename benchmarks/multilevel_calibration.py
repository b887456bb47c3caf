"""Coverage of the 95% intervals of a three-level meta-analysis, and the size of its tests.

Simulates ``y = mu + u_outer + u_inner + e`` with 20 outer clusters (studies), 2-5 inner
clusters each (e.g. datasets), 1-4 effects per inner cluster (folds), ``sigma2 = (0.05, 0.03)``,
sampling variances uniform on [0.01, 0.05] and ``mu = 0.2``; fits
:func:`replikit.replicate.multilevel_meta_analysis` (REML) and reports, at the true ``mu``:
the coverage of the model-based z and t(k - 1) intervals, of the robust CR1 (t(J - 1)) and CR2
(Satterthwaite t) intervals, and so the size of the matching tests at alpha = 0.05 (one minus
the coverage). A second scenario fits a misspecified model (the outer level left out, inner
clusters treated as independent), where only the robust intervals clustered by study hold.

Run: ``python benchmarks/multilevel_calibration.py [n_reps]`` (default 1000; about 2 minutes).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.special import stdtrit

from replikit.replicate import multilevel_meta_analysis


def simulate(rng, n_outer=20, sigma2=(0.05, 0.03), mu=0.2):
    n_inner = rng.integers(2, 6, n_outer)
    outer_of_inner = np.repeat(np.arange(n_outer), n_inner)
    n_eff = rng.integers(1, 5, outer_of_inner.size)
    inner = np.repeat(np.arange(outer_of_inner.size), n_eff)
    outer = outer_of_inner[inner]
    v = rng.uniform(0.01, 0.05, inner.size)
    y = (mu + rng.normal(0, np.sqrt(sigma2[0]), n_outer)[outer]
         + rng.normal(0, np.sqrt(sigma2[1]), outer_of_inner.size)[inner]
         + rng.normal(0, np.sqrt(v)))
    return y, v, outer, inner


def main(n_reps: int = 1000, seed: int = 20261128) -> dict:
    rng = np.random.default_rng(seed)
    mu = 0.2
    keys = ("z", "t", "CR1", "CR2", "misspecified z", "misspecified CR2")
    hits = {k: 0 for k in keys}
    t0 = time.perf_counter()
    for _ in range(n_reps):
        y, v, outer, inner = simulate(rng, mu=mu)
        fit = multilevel_meta_analysis(y, v, clusters=[outer, inner])
        hits["z"] += mu in fit.confidence_interval()
        q = stdtrit(y.size - 1, 0.975)  # interval="t": the same fit, t(k - 1) quantiles
        hits["t"] += abs(fit.estimate - mu) <= q * fit.se
        hits["CR1"] += mu in fit.robust().confidence_interval()
        hits["CR2"] += mu in fit.robust(method="CR2").confidence_interval()
        wrong = multilevel_meta_analysis(y, v, clusters=[inner])
        hits["misspecified z"] += mu in wrong.confidence_interval()
        hits["misspecified CR2"] += mu in wrong.robust(cluster=outer,
                                                       method="CR2").confidence_interval()
    out = {k: hits[k] / n_reps for k in keys}
    print(f"{n_reps} repetitions, {time.perf_counter() - t0:.0f} s")
    se = np.sqrt(0.95 * 0.05 / n_reps)
    for k in keys:
        print(f"  {k:<18} coverage {out[k]:.3f}  size {1 - out[k]:.3f}  (MC SE {se:.3f})")
    return out


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
