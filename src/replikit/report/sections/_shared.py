"""Computations that several audit sections share (cached once per audit in the context)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..context import AuditContext

__all__ = ["per_study_scores"]


def per_study_scores(ctx: AuditContext, models: dict) -> pd.DataFrame:
    """Mean 3-fold CV score (accuracy or R2) of every model within every study, on at most 800
    rows per study (300 with ``--quick``): columns ``study, model, score``.

    Computed once per audit and shared by the comparison (CD diagram across studies) and the
    generalizability (rankings over studies) sections; the cache key names the models, so a
    section asking for other models gets its own computation.
    """
    max_rows = 300 if ctx.quick else 800
    key = "per-study-scores:" + ",".join(map(str, models))
    return ctx.shared(key, lambda: _per_study_scores(ctx, models, max_rows))


def _per_study_scores(ctx: AuditContext, models: dict, max_rows: int) -> pd.DataFrame:
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    from ..._random import root_seed_sequence, task_int_seed, task_rng

    d = ctx.dataset
    root = root_seed_sequence(ctx.random_state)
    classification = d.task == "classification"
    scoring = "accuracy" if classification else "r2"
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
                    v = float(np.mean(cross_val_score(clone(est), X, y, cv=cv, scoring=scoring)))
                except ValueError:
                    v = np.nan
                rows.append({"study": s, "model": name, "score": v})
                advance()
    return pd.DataFrame(rows)
