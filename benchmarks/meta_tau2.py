"""Benchmark: many random-effects meta-analyses (the Study-2 workload: every repetition pools
folds into studies and studies into a population) — replikit vs statsmodels and PyMARE.

Same work for every tool: n_meta meta-analyses of k studies; DerSimonian-Laird and REML tau2,
pooled estimate and SE. replikit estimates all n_meta in one array expression
(``tau2_estimate`` works on the last axis); statsmodels' ``combine_effects`` and PyMARE's
estimators are called once per meta-analysis. Prints times and ratios; checks the answers agree.
One ``meta_analysis`` call against one ``combine_effects`` call: benchmarks/meta_vs_statsmodels.py.

Run: .venv/bin/python benchmarks/meta_tau2.py [n_meta] [k]   (default 500 10, a few seconds;
docs/performance.md's figures used 2000 10). Prints a ``bench_row`` per comparison.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from _timing import bench_row, best_time  # benchmarks/_timing.py


def _pooled(y, v, tau2):
    w = 1.0 / (v + tau2[..., None])
    return (w * y).sum(-1) / w.sum(-1), 1.0 / np.sqrt(w.sum(-1))


def main(n_meta: int = 500, k: int = 10) -> None:
    import pymare
    from statsmodels.stats.meta_analysis import combine_effects

    from replikit.replicate import tau2_estimate

    rng = np.random.default_rng(0)
    v = rng.uniform(0.001, 0.004, size=(n_meta, k))
    y = 0.45 + rng.normal(0, 0.03, size=(n_meta, 1)) * rng.random((n_meta, 1)) + \
        rng.normal(0, np.sqrt(v))
    print(f"{n_meta} meta-analyses of k = {k} studies")

    for method in ("DL", "REML"):
        def rk(method=method):
            tau2 = tau2_estimate(y, v, method)
            return tau2, _pooled(y, v, tau2)

        t_rk, (tau2, (mu, se)) = best_time(rk, 5)  # best of 5 (the loops below: one run)

        t0 = time.perf_counter()
        if method == "DL":
            with warnings.catch_warnings():  # negative tau2 -> NaN SEs in statsmodels
                warnings.simplefilter("ignore")
                sm = [combine_effects(y[i], v[i], method_re="dl") for i in range(n_meta)]
            n_neg = sum(r.tau2 < 0 for r in sm)
            sm_tau2 = np.maximum(0.0, np.array([r.tau2 for r in sm]))  # statsmodels: untruncated
            sm_mu = np.array([r.mean_effect_re for r in sm])
            t_other, other = time.perf_counter() - t0, "statsmodels combine_effects"
            t0 = time.perf_counter()
        pm_tau2 = np.empty(n_meta)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(n_meta):
                if method == "DL":
                    est = pymare.estimators.DerSimonianLaird()
                else:
                    est = pymare.estimators.VarianceBasedLikelihoodEstimator(method="REML")
                est.fit(y=y[i][:, None], v=v[i][:, None], X=np.ones((k, 1)))
                pm_tau2[i] = float(np.ravel(est.params_["tau2"])[0])
        t_pm = time.perf_counter() - t0
        print(f"\n{method}: replikit (vectorised)           {t_rk:8.4f} s")
        if method == "DL":
            print(f"{method}: {other:32s} {t_other:8.4f} s   ratio {t_other / t_rk:8.1f}x")
            bench_row(f"{method} tau2 + pooled estimate, {n_meta} meta-analyses of k = {k}",
                      other + " (loop)", t_other, t_rk, "replikit: one array expression")
            print(f"    statsmodels gave a negative tau2 in {n_neg} of {n_meta} (replikit: 0)")
            print(f"    max |tau2 diff| vs statsmodels (truncated) = "
                  f"{np.max(np.abs(sm_tau2 - tau2)):.2e}; max |mu diff| where tau2 > 0 = "
                  f"{np.max(np.abs((sm_mu - mu)[tau2 > 0])):.2e}")
        print(f"{method}: PyMARE (loop)                     {t_pm:8.4f} s   ratio "
              f"{t_pm / t_rk:8.1f}x")
        bench_row(f"{method} tau2 + pooled estimate, {n_meta} meta-analyses of k = {k}",
                  "PyMARE (loop)", t_pm, t_rk, "replikit: one array expression")
        print(f"    max |tau2 diff| vs PyMARE = {np.max(np.abs(np.maximum(pm_tau2, 0) - tau2)):.2e}")



if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
