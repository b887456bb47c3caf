"""Benchmark: survival metrics — replikit (``replikit.experiment.survival``) vs scikit-survival
(``sksurv.metrics``) on the same inputs, in one process.

Same work for both: n test subjects (n = 1,000 / 10,000 / 50,000; the training data is another
n subjects of the same design), exponential event and censoring times (about 40% censored,
times rounded to 3 decimals so some are tied), a risk score, survival probabilities at 20 time
points between the 10% and 70% quantiles of the follow-up. Timed: Harrell's C, Uno's C (with
``tau``), the cumulative/dynamic AUC at the 20 times and the integrated Brier score over them.
replikit's concordance indices include their infinitesimal-jackknife standard error (more
work than scikit-survival does: it gives none).
The time is the CPU time of this process (best of ``n_repeats`` calls), so other work on the
machine inflates it little; the answers are checked to agree (1e-10 relative).

Without scikit-survival installed, replikit alone is timed and the script says so.

Run: .venv/bin/python benchmarks/survival_metrics.py [n_repeats]   (default 3; about a minute,
most of it scikit-survival's concordance indices at n = 50,000).

``benchmarks/survival_metrics.py coverage [n_sims]`` instead measures the coverage of the 95%
intervals of Harrell's and Uno's C (logit and Wald) by simulation — the numbers in
docs/survival.md (default 2,000 data sets per setting; a few minutes).

The model: x ~ N(0, 1), event time T ~ Exponential(rate e^x) (risk score x, hazard ratio e per
SD), censoring time ~ Exponential(rate lambda) independent of both, lambda set for 30% or 60%
censored (0.3615, 1.6333); n = 50, 200, 1,000. The truths: Harrell's C is the limit of the
statistic under *that* censoring (it depends on it), computed on 2,000,000 subjects of the same
model and censoring; Uno's C with tau = 1 estimates P(x_i > x_j | T_i < T_j, T_i < 1), free of
censoring, computed on 2,000,000 uncensored subjects. Uno's C takes its censoring weights from
the data set itself (training = test).
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


_CENSORING_RATE = {0.3: 0.36152059121907265, 0.6: 1.6333472708907162}
_TAU = 1.0


def _draw(n: int, rate: float | None, rng, size: int = 1):
    """``size`` data sets of n subjects of the coverage model (no censoring with rate None)."""
    x = rng.normal(size=(size, n))
    t_event = rng.exponential(size=(size, n)) / np.exp(x)
    if rate is None:
        return t_event, np.ones((size, n), bool), x
    c = rng.exponential(scale=1.0 / rate, size=(size, n))
    return np.minimum(t_event, c), t_event <= c, x


def coverage(n_sims: int = 2000, seed: int = 0) -> dict:
    """Coverage of the 95% logit and Wald intervals of Harrell's and Uno's C (see the module
    docstring); prints one row per setting and returns them."""
    from replikit.errors import DataError

    rng = np.random.default_rng(seed)
    big = 2_000_000
    t, e, x = (a[0] for a in _draw(big, None, rng))
    truth_uno = concordance_index_ipcw(t, e, t, e, x, tau=_TAU).estimate
    print(f"Uno's C truth (tau = {_TAU}): {truth_uno:.5f}")
    print(f"{'censored':>8} {'n':>5} {'index':<8} {'truth':>7} {'mean':>7} {'SD':>7} "
          f"{'mean SE':>8} {'logit':>6} {'Wald':>6} {'failed':>6}")
    rows = []
    for share, rate in _CENSORING_RATE.items():
        t, e, x = (a[0] for a in _draw(big, rate, rng))
        truth_h = concordance_index(t, e, x).estimate
        for n in (50, 200, 1000):
            T, E, X = _draw(n, rate, rng, n_sims)   # all data sets at once
            est = {"harrell": [], "uno": []}
            failed = {"harrell": 0, "uno": 0}
            for k in range(n_sims):
                for name in ("harrell", "uno"):
                    try:
                        r = (concordance_index(T[k], E[k], X[k]) if name == "harrell" else
                             concordance_index_ipcw(T[k], E[k], T[k], E[k], X[k], tau=_TAU))
                    except DataError:  # no comparable pair, or G = 0 before tau
                        failed[name] += 1
                        continue
                    est[name].append((r.estimate, r.se, r.ci_low, r.ci_high))
            z = 1.959963984540054
            for name, truth in (("harrell", truth_h), ("uno", truth_uno)):
                a = np.asarray(est[name])
                # the logit interval is the result's; the Wald one C +- z SE (clipped)
                wald = np.clip(a[:, [0]] + z * a[:, [1]] * np.array([-1.0, 1.0]), 0.0, 1.0)
                cov_logit = np.mean((a[:, 2] <= truth) & (truth <= a[:, 3]))
                cov_wald = np.mean((wald[:, 0] <= truth) & (truth <= wald[:, 1]))
                row = {"censored": share, "n": n, "index": name, "truth": truth,
                       "mean": a[:, 0].mean(), "sd": a[:, 0].std(ddof=1),
                       "mean_se": a[:, 1].mean(), "logit": cov_logit, "wald": cov_wald,
                       "failed": failed[name]}
                rows.append(row)
                print(f"{share:>8.0%} {n:>5} {name:<8} {truth:>7.4f} {row['mean']:>7.4f} "
                      f"{row['sd']:>7.4f} {row['mean_se']:>8.4f} {cov_logit:>6.3f} "
                      f"{cov_wald:>6.3f} {failed[name]:>6}", flush=True)
    return {"rows": rows}


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
    if len(sys.argv) > 1 and sys.argv[1] == "coverage":
        coverage(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
