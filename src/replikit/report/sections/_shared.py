"""Computations that several audit sections share (cached once per audit in the context)."""

from __future__ import annotations

import pandas as pd

from ..context import AuditContext

__all__ = ["per_study_scores", "per_study_left_out", "EntryView", "survival_scores_context",
           "left_out_words"]


def per_study_scores(ctx: AuditContext, models: dict) -> pd.DataFrame:
    """Mean within-study CV score on the report's primary metric of every model in every
    study, on every row: columns ``study, model, score``.

    Read from the audit's one within-study fit set (:func:`replikit.report.fits.study_cv`:
    for a continuous outcome the CV folds of the replication section's design, whose test
    part is not used here; for classes stratified 3-fold CV). Studies too small (fewer than 9
    rows, or for classification fewer than 3 rows of some class) are left out. Shared by the
    comparison (CD diagram across studies) and the generalizability (rankings over studies)
    sections.
    """
    key = "per-study-scores:" + ",".join(map(str, models))
    return ctx.shared(key, lambda: _per_study_scores(ctx, models))


def per_study_left_out(ctx: AuditContext) -> list[tuple[str, str]]:
    """Studies left out of :func:`per_study_scores`, with the reason."""
    from ..fits import STUDY_MIN_PER_CLASS, STUDY_MIN_ROWS

    return ctx.plan.usable_studies(STUDY_MIN_ROWS, all_classes=True,
                                   min_per_class=STUDY_MIN_PER_CLASS)[1]


def _per_study_scores(ctx: AuditContext, models: dict) -> pd.DataFrame:
    from ..fits import study_cv, within_study_design

    with ctx.stage("Within-study CV of every model (shared)", total=1) as advance:
        res, d = study_cv(ctx, models)
        advance(1)
    scheme, _ = within_study_design(ctx)
    f = res.scores.frame
    f = f[f["metric"] == ctx.metric]
    if ctx.dataset.task == "regression":  # the CV folds only, not the hold-out test split
        sizes = d.study.astype(str).value_counts()
        k = f["study"].astype(str).map(lambda s: scheme.folds_for(int(sizes[s])))
        f = f[f["fold"].to_numpy() < k.to_numpy()]
    out = (f.groupby(["study", "model"], sort=False)["value"].mean()
           .rename("score").reset_index())
    return out[["study", "model", "score"]]


class EntryView:
    """The audit's context as another entry sees it: the section builders of the ``scores``
    and ``estimates`` entries read ``ctx.source`` (the scores, their metric and scheme; the
    estimates and the original) and nothing of the data; every other attribute is the
    audit's own (its stages, caches, tolerances)."""

    def __init__(self, ctx: AuditContext, source) -> None:
        self._ctx, self.source = ctx, source

    @property
    def entry(self) -> str:
        return self.source.kind

    @property
    def metric(self) -> str:
        return self.source.metric

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def survival_scores_context(ctx: AuditContext):
    """A survival audit's within-study CV scores (:func:`replikit.report.fits.survival_cv`,
    Harrell's C-index per fold) as a per-fold-scores entry, for the sections that read
    scores: ``(context view, left_out)``."""
    from ..fits import survival_cv
    from ..inputs import AuditInput

    res, _, left_out = survival_cv(ctx)
    source = AuditInput("scores", ctx.dataset.name, scores=res.scores, metric="c_index",
                        scheme="kfold", task="survival",
                        notes=("per-fold C-index of 5-fold cross-validation within every "
                               "study, stratified by the event",))
    return EntryView(ctx, source), left_out


def left_out_words(left_out) -> str:
    """" Left out: study (reason); ..." for the studies a section could not use, or ""."""
    if not left_out:
        return ""
    return " Left out: " + "; ".join(f"{s} ({r})" for s, r in left_out) + "."
