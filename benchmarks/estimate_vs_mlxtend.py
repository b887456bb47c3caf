"""Benchmark: the .632+ bootstrap (200 resamples) of LDA on a 30 x 10 dataset, replikit vs mlxtend.

Both tools fit 200 bootstrap resamples of scikit-learn's LinearDiscriminantAnalysis on the same
data in one process run; replikit uses its batched fast path (all resamples fitted as one set of
weighted moments and one batched solve), mlxtend's ``bootstrap_point632_score`` refits a cloned
estimator per resample. Prints both times (best of several runs) and the ratio.

Run: ``.venv/bin/python benchmarks/estimate_vs_mlxtend.py``
"""

from __future__ import annotations

import warnings

import numpy as np
from _timing import best_time  # benchmarks/_timing.py
from mlxtend.evaluate import bootstrap_point632_score
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from replikit.resampling import estimate_error


def main() -> None:
    rng = np.random.default_rng(2019)
    X = rng.normal(size=(30, 10))
    y = rng.binomial(1, 0.5, size=30)
    model = LinearDiscriminantAnalysis()

    estimate_error(model, X, y, method=".632+", n_resamples=200, random_state=0)  # warm imports
    t_rk, ours = best_time(lambda: estimate_error(model, X, y, method=".632+", n_resamples=200,
                                                  random_state=0), repeats=20)
    t_rk_generic, generic = best_time(
        lambda: estimate_error(model, X, y, method=".632+", n_resamples=200, random_state=0,
                               fast=False), repeats=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mx, scores = best_time(lambda: bootstrap_point632_score(
            model, X, y, n_splits=200, method=".632+", random_seed=0), repeats=3)
    print("Task: .632+ bootstrap error of LDA, 200 resamples, n = 30, p = 10")
    print(f"replikit (fast path)     {t_rk * 1e3:9.2f} ms   error = {ours.estimate:.4f}")
    print(f"replikit (generic path)  {t_rk_generic * 1e3:9.2f} ms   error = {generic.estimate:.4f}")
    print(f"mlxtend                  {t_mx * 1e3:9.2f} ms   error = {1 - np.mean(scores):.4f} "
          "(mean of per-resample .632+ scores, unclipped R)")
    print(f"ratio mlxtend / replikit fast path: {t_mx / t_rk:.0f}x")
    print(f"ratio mlxtend / replikit generic path: {t_mx / t_rk_generic:.1f}x")


if __name__ == "__main__":
    main()
