"""Benchmark: Friedman + Nemenyi on 1,000 datasets x 50 models, replikit vs autorank.

Issue 19's goal: replikit's rank tests at least 10x faster than autorank on the same table.
Both tools get the same scores (one per dataset and model, higher is better) in one process.
autorank's ``autorank`` runs normality and homoscedasticity checks first and then chooses the
test; it is forced onto the non-parametric path (``force_mode='nonparametric'``), which runs
Friedman and Nemenyi, so both compute the same thing. The mean ranks and the critical
difference are compared, then the times (best of several runs) and their ratio are printed.

Measured at the end of the 2026-11-23 session (2-core machine, quiet): replikit 62 ms,
autorank 130 ms — 2.1x, far from the 10x goal; the mean ranks agree exactly, the CDs to 2e-4
(the studentized-range quantile). 85% of replikit's time is scipy's studentized_range.sf for
the 1,225 pairwise Nemenyi p-values (one numerical integral each): issue 19's work.

Run: ``.venv/bin/python benchmarks/friedman_vs_autorank.py [--datasets 1000 --models 50]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import warnings

import numpy as np
import pandas as pd
from _timing import best_time  # benchmarks/_timing.py

from replikit.compare import nemenyi_test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--models", type=int, default=50)
    args = parser.parse_args()
    from autorank import autorank

    rng = np.random.default_rng(19)
    skill = np.linspace(0.0, 0.05, args.models)
    scores = 0.7 + skill + rng.normal(scale=0.05, size=(args.datasets, args.models))
    table = pd.DataFrame(scores, columns=[f"m{j:02d}" for j in range(args.models)])

    nemenyi_test(table)  # warm imports
    t_rk, ours = best_time(lambda: nemenyi_test(table, alpha=0.05), repeats=5)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # and autorank's own printing
        t_ar, theirs = best_time(lambda: autorank(table, alpha=0.05, verbose=False,
                                                  force_mode="nonparametric"), repeats=2)
    ours_ranks = ours.mean_ranks.reindex(table.columns)
    theirs_ranks = theirs.rankdf["meanrank"].reindex(table.columns)
    print(f"Task: Friedman + Nemenyi, {args.datasets} datasets x {args.models} models")
    print(f"replikit  {t_rk * 1e3:9.1f} ms   CD = {ours.critical_distance:.4f}")
    print(f"autorank  {t_ar * 1e3:9.1f} ms   CD = {theirs.cd:.4f}")
    print(f"largest mean-rank difference: {np.max(np.abs(ours_ranks - theirs_ranks)):.2e}")
    print(f"ratio autorank / replikit: {t_ar / t_rk:.1f}x")


if __name__ == "__main__":
    main()
