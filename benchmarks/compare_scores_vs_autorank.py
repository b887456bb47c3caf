"""Benchmark: comparing 10 models on 50 studies of 10x10 CV scores, replikit vs autorank.

The goal: ``compare_scores`` at least 10x faster than autorank on the same table.

The same table: 50 studies x 10 models x 10 repeats x 10 folds of accuracy (50,000 rows of a
Scores table; a per-study split effect shared by the models, a small skill gradient). What each
tool does with it:

* autorank gets what it can read — the 50 x 10 table of study means (the 100 CV scores of a
  model in a study averaged, Demšar 2006 section 3.2.3) — and runs its default pipeline:
  Shapiro–Wilk normality per model, Bartlett/Levene homoscedasticity, then the omnibus test
  and its post-hoc (here repeated-measures ANOVA and Tukey HSD, or Friedman and Nemenyi);
  the time of computing the means is not charged to it.
* replikit's ``compare_scores`` reads the full Scores table and, in every study, tests every
  one of the 45 pairs with the corrected repeated k-fold t-test (Bouckaert & Frank 2004) and the
  Bayesian correlated t-test (Corani & Benavoli 2015) on the 100 paired CV differences — 4,500
  tests, Holm-adjusted within each test — i.e. it does strictly more than autorank: per study,
  not only across studies, and from the resampled scores.

Both in one process, alternating, best of several runs. Before the vectorised path
compare_scores looped over (study, pair) with pandas alignment and a result object per test.
Now a complete r x k table goes through one vectorised path
(replikit.compare._pairing.fast_recommended, the same rows bit for bit).
Measured 2026-11-23 (2-core machine shared with other jobs, load 4-7): general path 9.9 s
(20 s in a cold, busier run), now 34-72 ms; autorank 0.60-0.75 s — 14-22x (goal 10x).

Run: ``.venv/bin/python benchmarks/compare_scores_vs_autorank.py [--studies 50 --models 10]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import warnings

import numpy as np
import pandas as pd
from _timing import bench_row, best_time  # benchmarks/_timing.py

from replikit.compare import compare_scores


def make_scores(n_studies: int, n_models: int, n_repeats: int = 10, n_folds: int = 10,
                random_state: int = 19) -> pd.DataFrame:
    """A complete Scores table: study x model x repeat x fold, one accuracy each."""
    rng = np.random.default_rng(random_state)
    shape = (n_studies, n_models, n_repeats, n_folds)
    st, mo, rep, fo = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    skill = np.linspace(0.0, 0.03, n_models)[None, :, None, None]
    split = rng.normal(0.0, 0.02, size=(n_studies, 1, n_repeats, n_folds))
    value = 0.8 + skill + split + rng.normal(0.0, 0.01, size=shape)
    return pd.DataFrame({
        "study": np.array([f"s{s:03d}" for s in range(n_studies)])[st.ravel()],
        "model": np.array([f"m{m:02d}" for m in range(n_models)])[mo.ravel()],
        "repeat": rep.ravel(), "fold": fo.ravel(), "metric": "accuracy",
        "value": value.ravel(), "n_train": 900, "n_test": 100,
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=50)
    parser.add_argument("--models", type=int, default=10)
    args = parser.parse_args()
    from autorank import autorank

    scores = make_scores(args.studies, args.models)
    means = scores.groupby(["study", "model"])["value"].mean().unstack()
    compare_scores(scores)  # warm imports
    t_rk, t_ar = np.inf, np.inf
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # and autorank's own printing
        autorank(means, alpha=0.05, verbose=False)
        for _ in range(3):  # alternate the tools: the machine's load hits both
            t, ours = best_time(lambda: compare_scores(scores), repeats=3)
            t_rk = min(t_rk, t)
            t, theirs = best_time(lambda: autorank(means, alpha=0.05, verbose=False), repeats=1)
            t_ar = min(t_ar, t)
    frame = ours.frame
    print(f"Task: {len(scores):,} Scores rows = {args.studies} studies x {args.models} models x "
          "10x10 CV")
    print(f"replikit compare_scores  {t_rk * 1e3:9.1f} ms   {len(frame):,} tests "
          f"({frame['test'].nunique()} per pair), "
          f"{int(frame['reject'].fillna(False).sum())} rejections after Holm")
    print(f"autorank (study means)   {t_ar * 1e3:9.1f} ms   {theirs.omnibus} + {theirs.posthoc}")
    print(f"ratio autorank / replikit: {t_ar / t_rk:.1f}x")
    bench_row(f"compare_scores, {args.studies} studies x {args.models} models x 10x10 CV",
              "autorank (study means)", t_ar, t_rk,
              "replikit: 2 tests x 45 pairs x each study; goal 10x")


if __name__ == "__main__":
    main()
