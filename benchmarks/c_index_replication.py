"""Calibration of the replication of a C-index (docs/replicate.md, "Reported C-indices",
records the output).

1. Coverage of the 95% interval of one C-index estimated from data
   (``from_predictions((time, event), risk, metric="c_index")``: Harrell's C, its
   infinitesimal-jackknife SE, the Wald interval of logit C), with the plain Wald interval
   ``C ± z SE`` beside it.
2. Size at alpha = 0.05 of the difference test (the 95% Wald interval of replication −
   original on the C scale excludes 0: the inconsistency aim) for two independent samples of
   the same model — the truth is equal — and how often the consistency test (TOST, 90%
   interval inside ±0.05) then passes.
3. Size of the consistency test at the edge of the region: the replication's true C lower
   than the original's by exactly the tolerance 0.05 (a true difference of -0.05, where TOST
   must pass at most 5% of the time).
4. The SE of a C-index from n and the number of events alone (the Hanley-McNeil form with
   N/2 - 1, Newcombe 2006 method 4, used by Debray et al. 2017 for C-statistics): its ratio
   to the true SD, the reason replikit does not offer it.

The model (as benchmarks/survival_metrics.py): x ~ N(0, 1) is the fixed risk score, event
time T ~ Exponential(rate e^(b x)) (b = 1: a hazard ratio e per SD), censoring time ~
Exponential(rate lambda) independent of both, lambda = 0.3615 or 1.6333 for about 30% or 60%
censored (at b = 1). The truth of Harrell's C is its limit under *that* censoring, computed on
2,000,000 subjects. For 3, the replication's b is found by bisection (common random numbers
on 200,000 subjects) so that its true C is the original's minus 0.05, and checked on
2,000,000 new ones.

Run: ``PYTHONPATH=src python benchmarks/c_index_replication.py [n_sims]`` (default 2,000
data sets per setting; about eight minutes on one core), or ``... c_index_replication.py
newcombe [n_sims]`` for 4 alone over 30%, 60% and 90% censored and n = 100, 300, 1,000
(default 500 data sets; under a minute).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from replikit.experiment.survival import concordance_index
from replikit.replicate import consistency, difference, from_predictions

_RATE = {0.3: 0.3615, 0.6: 1.6333}
_TOL = 0.05
_Z = 1.959963984540054


def _draw(rng, n, rate, b=1.0, size=None):
    shape = (n,) if size is None else (size, n)
    x = rng.standard_normal(shape)
    t_event = rng.exponential(1.0, shape) / np.exp(b * x)
    t_cens = rng.exponential(1.0 / rate, shape)
    return np.minimum(t_event, t_cens), t_event <= t_cens, x


def _truth(rng, rate, b=1.0, n=2_000_000):
    t, e, x = _draw(rng, n, rate, b)
    return concordance_index(t, e, x).estimate


def _b_for(target, rate, seed=7, n=200_000):
    """b whose Harrell's C (under censoring ``rate``) is ``target``: common random numbers."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    u = rng.exponential(1.0, n)
    c = rng.exponential(1.0 / rate, n)

    def c_of(b):
        t_event = u / np.exp(b * x)
        return concordance_index(np.minimum(t_event, c), t_event <= c, x).estimate

    lo, hi = 0.1, 1.0
    for _ in range(18):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if c_of(mid) < target else (lo, mid)
    return (lo + hi) / 2


def _newcombe4(c, n, d):
    star = n / 2 - 1
    return np.sqrt(c * (1 - c) * (1 + star * (1 - c) / (2 - c) + star * c / (1 + c))
                   / (d * (n - d)))


def main(n_sims: int = 2000) -> None:
    rng = np.random.default_rng(20250131)
    mc = np.sqrt(0.05 * 0.95 / n_sims)
    print(f"{n_sims} data sets per row; Monte Carlo SE of a rate near .05 or .95: {mc:.4f}",
          flush=True)
    print(f"\n1-2. {'cens':>4} {'n':>4} {'truth':>7} {'mean C':>7} {'SD':>7} {'mean SE':>7} "
          f"{'logit':>6} {'Wald':>6} | {'diff size':>9} {'TOST pass':>9} | "
          f"{'NM4 SE/SD':>9}")
    for share, rate in _RATE.items():
        truth = _truth(rng, rate)
        for n in (100, 300):
            T, E, X = _draw(rng, n, rate, size=2 * n_sims)
            ests, nm4 = [], []
            for k in range(2 * n_sims):
                ests.append(from_predictions((T[k], E[k]), X[k], metric="c_index"))
                nm4.append(_newcombe4(ests[-1].estimate, n, E[k].sum()))
            first = ests[:n_sims]
            c = np.array([e.estimate for e in first])
            se = np.array([e.se for e in first])
            ci = np.array([tuple(e.confidence_interval()) for e in first])
            logit = np.mean((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
            wald = np.mean((c - _Z * se <= truth) & (truth <= c + _Z * se))
            reject = passed = 0
            for o, r in zip(first, ests[n_sims:], strict=True):
                lo, hi = difference(o, r).confidence_interval(0.95)
                reject += (lo > 0) or (hi < 0)
                passed += consistency(o, r, tolerance=_TOL).verdict == "consistent"
            sd = c.std(ddof=1)
            print(f"     {share:>4.0%} {n:>4} {truth:>7.4f} {c.mean():>7.4f} {sd:>7.4f} "
                  f"{se.mean():>7.4f} {logit:>6.3f} {wald:>6.3f} | {reject / n_sims:>9.3f} "
                  f"{passed / n_sims:>9.3f} | {np.mean(nm4[:n_sims]) / sd:>9.2f}", flush=True)
    print(f"\n3. TOST at the edge: replication's true C = original's - {_TOL}")
    print(f"   {'cens':>4} {'n':>4} {'C orig':>7} {'C rep':>7} {'b rep':>6} {'TOST pass':>9} "
          f"{'diff reject':>11}")
    for share, rate in _RATE.items():
        c_orig = _truth(rng, rate)
        b_rep = _b_for(c_orig - _TOL, rate)
        c_rep = _truth(rng, rate, b_rep)
        for n in (100, 300):
            To, Eo, Xo = _draw(rng, n, rate, size=n_sims)
            Tr, Er, Xr = _draw(rng, n, rate, b_rep, size=n_sims)
            passed = reject = 0
            for k in range(n_sims):
                o = from_predictions((To[k], Eo[k]), Xo[k], metric="c_index")
                r = from_predictions((Tr[k], Er[k]), Xr[k], metric="c_index")
                passed += consistency(o, r, tolerance=_TOL).verdict == "consistent"
                lo, hi = difference(o, r).confidence_interval(0.95)
                reject += (lo > 0) or (hi < 0)
            print(f"   {share:>4.0%} {n:>4} {c_orig:>7.4f} {c_rep:>7.4f} {b_rep:>6.3f} "
                  f"{passed / n_sims:>9.3f} {reject / n_sims:>11.3f}", flush=True)


def newcombe(n_sims: int = 500) -> None:
    """Section 4 alone, over more censoring shares (rates 0.3615, 1.6333, 9.0: about 30%, 60%
    and 90% censored) and n = 100, 300, 1,000: the ratio of the Newcombe (method 4) SE from
    n and the number of events to the true SD of Harrell's C."""
    rng = np.random.default_rng(5)
    print(f"4. Newcombe (2006) method 4 SE from n and events / SD of C ({n_sims} data sets)")
    print(f"   {'rate':>6} {'censored':>8} {'n':>5} {'SD':>7} {'NM4 SE':>7} {'ratio':>6}")
    for rate in (0.3615, 1.6333, 9.0):
        for n in (100, 300, 1000):
            T, E, X = _draw(rng, n, rate, size=n_sims)
            c = np.array([concordance_index(T[k], E[k], X[k]).estimate for k in range(n_sims)])
            nm4 = _newcombe4(c, n, E.sum(axis=1))
            sd = c.std(ddof=1)
            print(f"   {rate:>6} {1 - E.mean():>8.0%} {n:>5} {sd:>7.4f} {nm4.mean():>7.4f} "
                  f"{nm4.mean() / sd:>6.2f}", flush=True)


if __name__ == "__main__":
    start = time.perf_counter()
    if len(sys.argv) > 1 and sys.argv[1] == "newcombe":
        newcombe(int(sys.argv[2]) if len(sys.argv) > 2 else 500)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
    print(f"\n{time.perf_counter() - start:.0f} s")
