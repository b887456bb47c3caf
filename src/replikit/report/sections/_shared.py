"""Computations that several audit sections share (cached once per audit in the context)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._random import task_rng
from ..context import AuditContext

__all__ = ["per_study_scores", "per_study_left_out"]


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
    """One runner call: 3-fold CV (stratified for classification) within every usable study,
    on at most ``max_rows`` rows of each, scored on the report's primary metric."""
    import dataclasses

    from ...experiment import RepeatedKFold, run

    d, _ = ctx.study_subset(9, all_classes=True, min_per_class=3)
    keep = []
    for s in pd.unique(d.study):
        idx = np.flatnonzero((d.study == s).to_numpy())
        if len(idx) > max_rows:
            idx = np.sort(task_rng(ctx.random_state, ("per-study-rows", str(s))).choice(
                idx, max_rows, replace=False))
        keep.append(idx)
    rows = np.sort(np.concatenate(keep))
    d = dataclasses.replace(d, X=d.X.iloc[rows].reset_index(drop=True),
                            y=d.y.iloc[rows].reset_index(drop=True),
                            study=d.study.iloc[rows].reset_index(drop=True))
    scheme = RepeatedKFold(3, 1, stratify=d.task == "classification")
    with ctx.stage("per-study 3-fold CV of every model", total=1) as advance:
        res = run(models, d.X, d.y, scheme=scheme, metrics=[ctx.metric], study=d.study,
                  random_state=ctx.random_state, return_predictions=False,
                  backend="joblib" if ctx.n_jobs > 1 else "serial", n_jobs=ctx.n_jobs)
        advance(1)
    f = res.scores.frame
    out = (f.groupby(["study", "model"], sort=False)["value"].mean()
           .rename("score").reset_index())
    return out[["study", "model", "score"]]
