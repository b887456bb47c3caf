"""Benchmark: one random-effects meta-analysis — replikit ``meta_analysis`` vs statsmodels'
``combine_effects`` on the same estimates and sampling variances.

Same work for both: one call on k studies (k = 5, 20, 100), the same τ² estimator where both
have it — DerSimonian-Laird (``tau2_method='DL'`` / ``method_re='dl'``) and Paule-Mandel
(``'PM'`` / ``'pm'``) — plus replikit's default REML against statsmodels' default
(``'iterated'``, Paule-Mandel) for the call people write without options. Each call returns
the pooled estimate, its SE and interval, τ², Q and I²; the Q-profile interval of τ² that every
replikit result shows is computed when first read (``tau2_ci``, ``str``, ``to_dict``), so a
further row times the call *and* that read. The two tools take turns, so a load on the machine
falls on both alike; the time is the median over repetitions of the mean CPU time (of this
process) of many calls, so other work on the machine inflates neither much.

Run: .venv/bin/python benchmarks/meta_vs_statsmodels.py [n_calls] [n_repeats]
(default 100 11: a few seconds). Prints a ``bench_row`` per comparison; checks the answers agree.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from _timing import bench_row  # benchmarks/_timing.py


def _data(k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    v = rng.uniform(0.001, 0.004, size=k)
    y = 0.45 + rng.normal(0.0, 0.03, size=k) + rng.normal(0.0, np.sqrt(v))
    return y, v


def _per_call(fn, n_calls: int) -> float:
    # CPU time of this process: what the call costs, whatever else the machine runs
    start = time.process_time()
    for _ in range(n_calls):
        fn()
    return (time.process_time() - start) / n_calls


def _median_pair(a, b, n_calls: int, n_repeats: int) -> tuple[float, float]:
    """Median per-call seconds of ``a`` and ``b``, timed in alternation."""
    a(), b()  # warm: imports, caches
    ta, tb = [], []
    for _ in range(n_repeats):
        ta.append(_per_call(a, n_calls))
        tb.append(_per_call(b, n_calls))
    return float(np.median(ta)), float(np.median(tb))


def main(n_calls: int = 100, n_repeats: int = 11) -> None:
    from statsmodels.stats.meta_analysis import combine_effects

    from replikit.replicate import meta_analysis

    warnings.simplefilter("ignore")  # statsmodels' NaN SEs when its untruncated DL tau2 < 0
    cases = (("DL", "dl"), ("PM", "pm"), ("REML", "iterated"))
    print(f"one call, median of {n_repeats} repetitions of {n_calls} calls")
    print(f"{'k':>4} {'replikit':>9} {'statsmodels':>12} {'replikit':>9} {'statsmodels':>12} "
          f"{'ratio':>6} {'ratio with tau2_ci':>19}")
    for k in (5, 20, 100):
        y, v = _data(k)
        for ours, theirs in cases:
            def sm(theirs=theirs, y=y, v=v):
                return combine_effects(y, v, method_re=theirs)

            def rk(ours=ours, y=y, v=v):
                return meta_analysis(y, v, tau2_method=ours)

            def rk_ci(ours=ours, y=y, v=v):
                return meta_analysis(y, v, tau2_method=ours).tau2_ci

            t_rk, t_sm = _median_pair(rk, sm, n_calls, n_repeats)
            t_ci, t_sm2 = _median_pair(rk_ci, sm, max(1, n_calls // 4), n_repeats)
            res, ref = rk(), sm()
            if ours != "REML":  # the same estimator: the same numbers
                tau2_ref = max(float(ref.tau2), 0.0)  # statsmodels does not truncate DL at 0
                assert abs(res.tau2 - tau2_ref) <= 1e-8 * max(1.0, tau2_ref), (k, ours)
                if ref.tau2 >= 0:
                    assert abs(res.estimate - ref.mean_effect_re) <= 1e-10, (k, ours)
                    assert abs(res.se - ref.sd_eff_w_re) <= 1e-10, (k, ours)
            print(f"{k:>4} {ours:>9} {theirs:>12} {1e6 * t_rk:7.0f}us {1e6 * t_sm:10.0f}us "
                  f"{t_sm / t_rk:6.2f} {t_sm2 / t_ci:19.2f}")
            if ours == "DL" or k == 20:  # make bench's table: DL at every k, all at k = 20
                bench_row(f"one meta_analysis ({ours}, k = {k})",
                          f"statsmodels combine_effects ({theirs})", t_sm, t_rk,
                          f"median CPU time of {n_repeats} x {n_calls} calls; Q-profile tau2 "
                          "CI computed when read")
            if ours == "DL" and k == 20:
                bench_row(f"one meta_analysis ({ours}, k = {k}) and reading its Q-profile tau2 CI",
                          f"statsmodels combine_effects ({theirs}; no tau2 CI)", t_sm2, t_ci,
                          f"median CPU time of {n_repeats} x {max(1, n_calls // 4)} calls")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:3]])
