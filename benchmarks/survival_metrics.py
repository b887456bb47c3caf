"""Benchmark: survival metrics — replikit (``replikit.experiment.survival``) vs scikit-survival
(``sksurv.metrics``) on the same inputs, in one process.

Same work for both: n test subjects (n = 1,000 / 10,000 / 50,000; the training data is another
n subjects of the same design), exponential event and censoring times (about 40% censored,
times rounded to 3 decimals so some are tied), a risk score, survival probabilities at 20 time
points between the 10% and 70% quantiles of the follow-up. Timed: Harrell's C, Uno's C (with
``tau``), the cumulative/dynamic AUC at the 20 times and the integrated Brier score over them.
The time is the CPU time of this process (best of ``n_repeats`` calls), so other work on the
machine inflates it little; the answers are checked to agree (1e-10 relative).

Without scikit-survival installed, replikit alone is timed and the script says so.

Run: .venv/bin/python benchmarks/survival_metrics.py [n_repeats]   (default 3; about a minute,
most of it scikit-survival's concordance indices at n = 50,000).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _timing import bench_row  # benchmarks/_timing.py

from replikit.experiment.survival import (
    concordance_index,
    concordance_index_ipcw,
    cumulative_dynamic_auc,
    integrated_brier_score,
)


def _cpu(fn, repeats: int):
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def _data(n: int, rng):
    def draw():
        x = rng.normal(size=n)
        t_event = rng.exponential(size=n) / np.exp(0.7 * x)
        c = rng.exponential(scale=1.5, size=n)
        t = np.round(np.minimum(t_event, c), 3) + 0.001
        return t, t_event <= c, x
    t_tr, e_tr, _ = draw()
    t, e, x = draw()
    t_tr[np.argmax(t_tr)] = max(t_tr.max(), t.max())  # test follow-up within training's
    times = np.quantile(t, np.linspace(0.1, 0.7, 20))
    risk = x + 0.5 * rng.normal(size=n)
    probs = np.exp(-times[None, :] * np.exp(0.7 * risk)[:, None])
    return t_tr, e_tr, t, e, risk, probs, times


def _one_size(n: int, rng, repeats: int, sk, surv) -> None:
    t_tr, e_tr, t, e, risk, probs, times = _data(n, rng)
    tau = float(times[-1])
    ours = {
        "harrell_c": lambda: concordance_index(t, e, risk).estimate,
        "uno_c": lambda: concordance_index_ipcw(t_tr, e_tr, t, e, risk, tau=tau).estimate,
        "cumulative_dynamic_auc": lambda: cumulative_dynamic_auc(
            t_tr, e_tr, t, e, risk, times).mean_auc,
        "integrated_brier_score": lambda: integrated_brier_score(t_tr, e_tr, t, e, probs, times),
    }
    theirs = {}
    if sk is not None:
        y_tr, y = surv.from_arrays(e_tr, t_tr), surv.from_arrays(e, t)
        theirs = {
            "harrell_c": lambda: sk.concordance_index_censored(e, t, risk)[0],
            "uno_c": lambda: sk.concordance_index_ipcw(y_tr, y, risk, tau=tau)[0],
            "cumulative_dynamic_auc": lambda: sk.cumulative_dynamic_auc(y_tr, y, risk, times)[1],
            "integrated_brier_score": lambda: sk.integrated_brier_score(y_tr, y, probs, times),
        }
    for name, fn in ours.items():
        mine, value = _cpu(fn, repeats)
        if name in theirs:
            # the oracle's quadratic concordance loops are timed once at the largest n
            other, ref = _cpu(theirs[name], 1 if n >= 50_000 else repeats)
            if not np.isclose(value, ref, rtol=1e-10, atol=0):
                raise SystemExit(f"{name} at n={n}: replikit {value!r} != sksurv {ref!r}")
            print(f"{n:>7} {name:<24} {mine:>11.4f} {other:>10.4f} {other / mine:>7.1f}x")
            bench_row(f"survival {name} n={n}", "scikit-survival", other, mine)
        else:
            print(f"{n:>7} {name:<24} {mine:>11.4f} {'-':>10} {'-':>8}")
            bench_row(f"survival {name} n={n}", "goal", 2.0, mine,
                      "goal: under 2 s (scikit-survival not installed)")


def main(repeats: int = 3) -> None:
    try:
        import sksurv.metrics as sk
        from sksurv.util import Surv
    except ImportError:
        sk = Surv = None
        print("scikit-survival is not installed: timing replikit alone "
              "(pip install scikit-survival for the comparison).")
    rng = np.random.default_rng(0)
    print(f"{'n':>7} {'metric':<24} {'replikit s':>11} {'sksurv s':>10} {'ratio':>8}")
    for n in (1_000, 10_000, 50_000):
        _one_size(n, rng, repeats, sk, Surv)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
