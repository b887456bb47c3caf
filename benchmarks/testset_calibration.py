"""Calibration of the test-set and unpaired comparisons (docs/compare.md records the output).

1. Size at alpha = 0.05 of the paired bootstrap and the randomization test when the two
   models are exchangeable (each row: both classifiers right independently with the same
   probability), for accuracy and F1; coverage of the 95% percentile bootstrap interval of
   the difference when the models differ (true difference from a very large sample).
2. Size at alpha = 0.05 of the unpaired corrected resampled t and of the uncorrected Welch t
   when one learner (least squares) is evaluated by repeated random subsampling on two
   independent samples of one population (no true difference).

Run: ``PYTHONPATH=src python benchmarks/testset_calibration.py [--quick]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from replikit.compare import (
    paired_bootstrap_test,
    randomization_test,
    unpaired_corrected_ttest,
    welch_ttest,
)


def _classifiers(rng, n, acc_a, acc_b, prevalence=0.4):
    y = (rng.random(n) < prevalence).astype(int)
    a = np.where(rng.random(n) < acc_a, y, 1 - y)
    b = np.where(rng.random(n) < acc_b, y, 1 - y)
    return y, a, b


def _f1(y, p):
    tp = np.sum((y == 1) & (p == 1))
    return 2 * tp / (np.sum(p == 1) + np.sum(y == 1))


def testset(reps: int, n: int = 200, n_resamples: int = 999) -> None:
    rng = np.random.default_rng(20240601)
    rej = {(t, m): 0 for t in ("bootstrap", "randomization") for m in ("accuracy", "f1")}
    for _ in range(reps):
        y, a, b = _classifiers(rng, n, 0.8, 0.8)
        seed = int(rng.integers(2**31))
        for m in ("accuracy", "f1"):
            rej["bootstrap", m] += paired_bootstrap_test(
                y, a, b, scoring=m, n_resamples=n_resamples, random_state=seed).pvalue <= 0.05
            rej["randomization", m] += randomization_test(
                y, a, b, scoring=m, n_resamples=n_resamples, random_state=seed).pvalue <= 0.05
    se = np.sqrt(0.05 * 0.95 / reps)
    print(f"Size at alpha = 0.05, exchangeable classifiers (accuracy 0.8 each), n = {n} rows, "
          f"{n_resamples} resamples, {reps} data sets (MC SE {se:.3f}):")
    for (t, m), k in rej.items():
        print(f"  {t:14s} {m:9s} {k / reps:.3f}")
    # coverage: a 0.85 vs b 0.78 accurate
    big_y, big_a, big_b = _classifiers(np.random.default_rng(1), 4_000_000, 0.85, 0.78)
    truth = {"accuracy": np.mean(big_a == big_y) - np.mean(big_b == big_y),
             "f1": _f1(big_y, big_a) - _f1(big_y, big_b)}
    cover = dict.fromkeys(truth, 0)
    for _ in range(reps):
        y, a, b = _classifiers(rng, n, 0.85, 0.78)
        seed = int(rng.integers(2**31))
        for m in truth:
            ci = paired_bootstrap_test(y, a, b, scoring=m, n_resamples=n_resamples,
                                       random_state=seed).confidence_interval()
            cover[m] += ci.low <= truth[m] <= ci.high
    print(f"Coverage of the 95% percentile interval (a 0.85, b 0.78 accurate; true differences "
          f"{truth['accuracy']:.4f} accuracy, {truth['f1']:.4f} F1), n = {n}, {reps} data sets:")
    for m, k in cover.items():
        print(f"  {m:9s} {k / reps:.3f}")


def _ols_mse(x, y, train, test):
    """Test MSE of least squares fitted on each row of the boolean masks (batched)."""
    xt = x[None, :, :] * train[:, :, None]
    beta = np.linalg.solve(np.einsum("jnp,nq->jpq", xt, x),
                           np.einsum("jnp,n->jp", xt, y)[..., None])[..., 0]
    resid = y[None, :] - np.einsum("np,jp->jn", x, beta)
    return (resid**2 * test).sum(axis=1) / test.sum(axis=1)


def unpaired(reps: int, n: int = 150, n_splits: int = 15, p: int = 5) -> None:
    rng = np.random.default_rng(7)
    beta = np.linspace(1.0, 0.2, p)
    n_train = int(round(2 * n / 3))
    n_test = n - n_train
    rejected = {"corrected": 0, "welch": 0}
    for _ in range(reps):
        scores = []
        for _side in range(2):
            x = np.column_stack([np.ones(n), rng.standard_normal((n, p))])
            y = x[:, 1:] @ beta + rng.standard_normal(n) * 1.5
            order = np.argsort(rng.random((n_splits, n)), axis=1)
            train = np.zeros((n_splits, n), bool)
            np.put_along_axis(train, order[:, :n_train], True, axis=1)
            scores.append(_ols_mse(x, y, train, ~train))
        rejected["corrected"] += unpaired_corrected_ttest(
            scores[0], scores[1], n_train=n_train, n_test=n_test).pvalue <= 0.05
        rejected["welch"] += welch_ttest(scores[0], scores[1]).pvalue <= 0.05
    print(f"Size at alpha = 0.05, unpaired: least squares on two independent samples of "
          f"{n} rows from one population, {n_splits} random {n_train}:{n_test} subsamples "
          f"each, test MSE, {reps} data sets (MC SE {np.sqrt(0.05 * 0.95 / reps):.3f}):")
    for k, v in rejected.items():
        print(f"  {k:10s} {v / reps:.3f}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    t0 = time.perf_counter()
    if "--unpaired" not in sys.argv:
        testset(200 if quick else 2000)
    unpaired(300 if quick else 4000)
    print(f"({time.perf_counter() - t0:.0f} s)")
