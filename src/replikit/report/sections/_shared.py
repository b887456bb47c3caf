"""Computations that several audit sections share (cached once per audit in the context)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..context import AuditContext

__all__ = ["per_study_scores", "per_study_left_out", "subsample_rows"]


def subsample_rows(ctx: AuditContext, key: tuple, rows: int, *,
                   stratify: bool = False) -> np.ndarray:
    """Sorted row indices of a random subsample of ``rows`` rows of the pooled data (all rows
    when there are no more); stratified by class (every class keeps at least 2 rows) when
    ``stratify``. ``key`` names the draw, so each section's subsample has its own stream."""
    from ..._random import task_rng

    n = len(ctx.dataset.y)
    if rows >= n:
        return np.arange(n)
    rng = task_rng(ctx.random_state, key)
    if not stratify:
        return np.sort(rng.choice(n, rows, replace=False))
    y = ctx.dataset.y.to_numpy()
    keep = []
    for c in pd.unique(y):
        idx = np.flatnonzero(y == c)
        k = max(2, int(round(rows * idx.size / n)))
        keep.append(rng.choice(idx, min(k, idx.size), replace=False))
    return np.sort(np.concatenate(keep))


def per_study_scores(ctx: AuditContext, models: dict) -> pd.DataFrame:
    """Mean 3-fold CV score on the report's primary metric of every model within every study,
    on at most 800 rows per study (300 with ``--quick``): columns ``study, model, score``.

    Studies too small for 3-fold CV (fewer than 9 rows, or for classification fewer than 3 rows
    of some class — the folds are stratified) are left out; ``ctx.shared`` keeps the list under
    ``'per-study-left-out'``. Computed once per audit and shared by the comparison (CD diagram
    across studies) and the generalizability (rankings over studies) sections; the cache key
    names the models, so a section asking for other models gets its own computation.
    """
    max_rows = 300 if ctx.quick else 800
    key = "per-study-scores:" + ",".join(map(str, models))
    return ctx.shared(key, lambda: _per_study_scores(ctx, models, max_rows))


def per_study_left_out(ctx: AuditContext) -> list[tuple[str, str]]:
    """Studies left out of :func:`per_study_scores`, with the reason."""
    return ctx.plan.usable_studies(9, all_classes=True, min_per_class=3)[1]


def _per_study_scores(ctx: AuditContext, models: dict, max_rows: int) -> pd.DataFrame:
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    from ..._random import root_seed_sequence, seed_estimator, task_int_seed, task_rng

    d, _ = ctx.study_subset(9, all_classes=True, min_per_class=3)
    root = root_seed_sequence(ctx.random_state)
    classification = d.task == "classification"
    scoring = ctx.metric
    rows = []
    studies = pd.unique(d.study)
    with ctx.stage("per-study 3-fold CV of every model", len(studies) * len(models)) as advance:
        for s in studies:
            idx = np.flatnonzero((d.study == s).to_numpy())
            rng = task_rng(root, ("generalize-rows", str(s)))
            if len(idx) > max_rows:
                idx = np.sort(rng.choice(idx, max_rows, replace=False))
            X, y = d.X.iloc[idx], d.y.iloc[idx]
            seed = task_int_seed(root, ("generalize-cv", str(s)))
            ok = classification and y.value_counts().min() >= 3
            cv = (StratifiedKFold(3, shuffle=True, random_state=seed) if ok else
                  KFold(3, shuffle=True, random_state=seed))
            for name, est in models.items():
                try:
                    model = seed_estimator(clone(est), task_int_seed(
                        root, ("per-study-model", str(s), name)))
                    v = float(np.mean(cross_val_score(model, X, y, cv=cv, scoring=scoring,
                                                      error_score="raise")))
                except ValueError:
                    v = np.nan
                rows.append({"study": s, "model": name, "score": v})
                advance()
    return pd.DataFrame(rows, columns=["study", "model", "score"])
