"""Section 5: do the audited models' rankings generalize across studies? (Matteucci et al.
(2024))

Each study is one experimental condition: the audited models are scored in every study by
within-study cross-validation on every row (``_shared.per_study_scores``), and
:func:`replikit.generalize.audit` ranks them and estimates n* (the number of studies needed for
(alpha*, delta*)-generalizability) for the whole ranking, the best model and each model's
position. This module only formats its result.

The other entries give the same capability the same long frame ``study, model, score``
(:func:`format_audit` formats every entry alike):

* ``benchmark`` — each dataset of the table (a row) is a study, each column a model, in the
  table's direction (``higher_is_better``);
* ``scores`` — each task (``study``) of the per-fold scores is a study; a model's score there is
  the mean of the primary metric over its repeats and folds;
* ``predictions`` — the same, from the per-fold scores of the out-of-fold predictions
  (:func:`replikit.experiment.scoring.scores_from_predictions`, shared with the other sections)
  on their primary metric.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..._format import interval, number
from ..._plotting import svg_later
from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..registry import Section
from ._shared import per_study_left_out, per_study_scores

KEY, TITLE = "generalize", "Do the model rankings generalize across studies?"


def build(ctx: AuditContext) -> SectionOutput:
    from ...experiment.models import default_models
    from ...generalize import check_applicable

    d = ctx.dataset
    if d.study is None:
        return SectionOutput(key=KEY, title=TITLE, skipped=(
            "no study column: the number of studies needed (n*) takes two disjoint sets of at "
            "least 2 studies (Matteucci et al. (2024), Algorithm 1)."),
            advice="name the column of studies, sites or years with --study.")
    models = ctx.models or default_models(d.task, quick=ctx.quick)
    check_applicable(d.n_studies, len(models))  # refuse before any model is fitted
    t0 = time.perf_counter()
    res = _audit(ctx, per_study_scores(ctx, models), metric=ctx.plan.metric_label,
                 left_out=per_study_left_out(ctx))
    metric = res.metric
    cv = "the CV folds of the replication design" if d.task == "regression" else (
        "stratified 3-fold CV")
    studies = ("Each study is treated as one experimental condition of a benchmark of the "
               f"audited models: every model is scored by cross-validation ({metric}) on every "
               "row of each study (the within-study fits the other study-level sections also "
               f"read: {cv}), models are ranked within each study (ties share a tier), and ")
    return format_audit(ctx, res, studies, t0)


def _audit(ctx: AuditContext, study_scores, **options):
    """:func:`replikit.generalize.audit` with the audit's settings and the user's δ*."""
    from ...generalize import audit

    given = ctx.tolerance(KEY)
    extra = {} if given is None else {"tolerance": given.value}
    return audit(study_scores, quick=ctx.quick, random_state=ctx.random_state, **options,
                 **extra)


def format_audit(ctx: AuditContext, res, studies: str, t0: float) -> SectionOutput:
    """The section from a :class:`~replikit.generalize.GeneralizabilityAudit`, whatever the
    entry: ``studies`` opens the first paragraph (what a study is and how each model was
    scored in it, ending with "and "); ``t0`` is when the work began."""
    given = ctx.tolerance(KEY)
    metric, N = res.metric, res.N
    conf, tolerance = res.confidence_level, res.tolerance
    t = res.nstar
    nstar = pd.DataFrame({
        "goal": t["goal"],
        "n*": t["nstar"].round(1),
        "95% interval": [interval(lo, hi) if np.isfinite(lo) and np.isfinite(hi) else "–"
                         for lo, hi in zip(t["ci_low"], t["ci_high"], strict=True)],
        "studies available": N,
        "enough": t["sufficient"].map({True: "yes", False: "no"}),
        "n* by log-log extrapolation (Algorithm 1)": t["nstar_loglog"].round(1),
    })
    per_model = pd.DataFrame({
        "model": res.per_model["model"],
        f"mean {metric}": res.per_model["mean_score"].round(4),
        "mean rank (1 = best)": res.per_model["mean_rank"].round(2),
        "studies ranked best": res.per_model["n_best"],
    })
    ranks = res.ranks.reset_index()
    blocks = [
        Paragraph(
            studies + "n* — the number of studies after which two independent sets of studies "
            f"give similar ranking distributions (MMD ≤ ε*) with probability {number(conf)} "
            "(Matteucci et al. (2024)) — is estimated from the large-sample law of the MMD "
            "(n·MMD² as a weighted sum of χ² variables, Gretton et al. (2012), its quantile by "
            "a scaled χ² with the kernel's estimated moments; tolerance δ* = "
            f"{number(tolerance)}), with a jackknife interval over the studies. Matteucci et "
            "al. (2024)'s Algorithm 1 (a log-log fit of the MMD quantiles of "
            f"{number(res.n_resamples)} disjoint subsample pairs per n, extrapolated to ε*) is "
            "shown beside it: its extrapolation overstates n* when N is small (+170% at N = 10 "
            "in replikit's validity study). The light judges every goal's 95% interval of n* "
            f"against the {N} studies at hand: green only when every goal's upper bound is "
            f"within {N} (the data show the studies suffice), red when some goal's lower bound "
            f"is beyond {N} (the data show they do not), amber otherwise; the tolerance δ* is "
            + ("the one given" if given is not None else
               "Matteucci et al. (2024)'s default, 0.05; --tolerance generalize= changes it")
            + ". The rule's false-green rate when the true n* equals the studies at hand, and "
            "its power, are measured in replikit's validity study (docs/generalize.md)."),
        Callout(res.verdict.sentence, res.verdict.level),
        KeyValues({"studies (N)": N, "models": len(res.models),
                   "subsample pairs per n": number(res.n_resamples),
                   "confidence level (α*)": number(conf), "tolerance (δ*)": number(tolerance),
                   "judged against": res.verdict.tolerance,
                   "time": f"{number(time.perf_counter() - t0, 2)} s"}),
        Table(nstar, "Studies needed (n*) per goal"),
        Table(per_model, "Models across studies"),
        Table(ranks, "Rank of each model in each study (1 = best; ties share a rank)"),
    ]
    try:
        blocks.insert(4, Figure(svg_later(res.plot().figure),
                                "Studies needed for the ranking to generalize (Mallows "
                                "goal): the MMD quantile against the number of studies n on "
                                "log-log axes, with the large-sample quantile curve (dotted), "
                                "n* and its interval at ε* (dashed), and the fitted line and "
                                "extrapolated n* of Algorithm 1 (hollow triangle)."))
    except (KeyError, ValueError):
        pass
    left = res.studies_left_out
    if left:
        blocks.insert(1, Paragraph(
            f"{len(left)} studies left out: " + "; ".join(
                f"{s} ({r})" for s, r in left[:15]) + (" ..." if len(left) > 15 else "") + "."))
    if res.models_left_out:
        blocks.insert(1, Paragraph("Models left out: " + "; ".join(
            f"{m} ({r})" for m, r in res.models_left_out) + "."))
    data = {"nstar": t, "per_model": per_model, "ranks": ranks, "N": N,
            "n_resamples": res.n_resamples, "primary_metric": ctx.metric,
            "studies_left_out": [s for s, _ in left],
            "models_left_out": [m for m, _ in res.models_left_out],
            "confidence_level": conf, "tolerance": tolerance,
            "verdict": res.verdict.to_dict()}
    return SectionOutput(key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
                         data=data)


def _from_study_scores(ctx: AuditContext, study_scores, n_studies: int, n_models: int,
                       studies: str, advice: str, **options) -> SectionOutput:
    """The section from one score per (study, model) of an entry other than data; skipped,
    with ``advice``, when n* cannot be had (fewer than 4 studies or 2 models)."""
    from ...errors import NotApplicableError
    from ...generalize import check_applicable

    t0 = time.perf_counter()
    try:
        check_applicable(n_studies, n_models)
        res = _audit(ctx, study_scores, **options)
    except NotApplicableError as exc:
        return SectionOutput(key=KEY, title=TITLE, skipped=str(exc), advice=advice)
    return format_audit(ctx, res, studies, t0)


def build_from_benchmark(ctx: AuditContext) -> SectionOutput:
    """Each dataset (row) of the benchmark table is a study, each column a model."""
    src = ctx.source
    wide = src.benchmark
    long = (wide.rename_axis(index="study", columns="model").stack().rename("score")
            .reset_index())
    from ...experiment.metrics import METRIC_LABELS

    label = METRIC_LABELS.get(src.metric, str(src.metric))  # 'roc_auc' reads 'ROC AUC'
    direction = "higher" if src.higher_is_better else "lower"
    studies = ("Each dataset of the benchmark table is one study (an experimental condition of "
               f"the benchmark): a model's score there is the table's ({label}; {direction} "
               "is better), models are ranked within each dataset (ties share a tier), and ")
    return _from_study_scores(
        ctx, long, wide.shape[0], wide.shape[1], studies,
        "supply a benchmark table with four or more datasets (rows) and two or more models.",
        metric=label, higher_is_better=bool(src.higher_is_better))


def _scores_words(what: str, metric: str) -> str:
    return (f"Each task of the {what} (its `study` column) is one study (an experimental "
            f"condition): a model's score there is its mean {metric} over its repeats and "
            "folds, models are ranked within each study (ties share a tier), and ")


def build_from_scores(ctx: AuditContext) -> SectionOutput:
    """Each study of the per-fold scores is a study; a model's score there is the mean of the
    primary metric over its repeats and folds (averaged by :func:`replikit.generalize.audit`)."""
    from ...experiment.metrics import higher_is_better

    scores, metric = ctx.source.scores, ctx.source.metric
    f = scores.frame[scores.frame["metric"] == metric]
    return _from_study_scores(
        ctx, scores, f["study"].nunique(), f["model"].nunique(),
        _scores_words("per-fold scores", metric),
        f"supply per-fold scores of two or more models in four or more studies (a `study` "
        f"column naming the task, dataset or site of each row) on {metric}.",
        metric=metric, higher_is_better=higher_is_better(metric))


def build_from_predictions(ctx: AuditContext) -> SectionOutput:
    """The per-fold scores of the out-of-fold predictions (shared with the other sections) on
    their primary metric, then as :func:`build_from_scores`."""
    from ...experiment.metrics import higher_is_better
    from ...experiment.scoring import primary_metric_of, scores_from_predictions

    preds = ctx.source.predictions
    scores = ctx.shared("predictions-scores", lambda: scores_from_predictions(preds))
    metric = ctx.source.metric
    if metric is None or metric not in set(scores.frame["metric"]):
        metric = primary_metric_of(preds)
    f = scores.frame[scores.frame["metric"] == metric]
    return _from_study_scores(
        ctx, scores, f["study"].nunique(), f["model"].nunique(),
        _scores_words("out-of-fold predictions", metric).replace(
            "over its repeats and folds", "over its repeats and folds (each fold scored from "
            "its predictions)"),
        "supply out-of-fold predictions of two or more models in four or more studies (a "
        "`study` column naming the task, dataset or site of each row).",
        metric=metric, higher_is_better=higher_is_better(metric))


def build_survival(ctx: AuditContext) -> SectionOutput:
    """A survival outcome: each study's mean C-index of every model in the within-study CV
    (:func:`replikit.report.fits.survival_cv`), read as per-fold scores are."""
    from ._shared import survival_scores_context

    view, _ = survival_scores_context(ctx)
    return build_from_scores(view)


SECTION = Section(key=KEY, title=TITLE, order=50, build=build,
                  description="Studies needed (n*) for the audited models' rankings to "
                              "generalize (Matteucci et al. (2024)).",
                  entries={"benchmark": build_from_benchmark, "scores": build_from_scores,
                           "survival": build_survival,
                           "predictions": build_from_predictions},
                  needs="a benchmark table (--benchmark), per-fold scores (--scores) or "
                        "out-of-fold predictions (--predictions) of two or more models in four "
                        "or more studies, or a data table with a study column (--data ... "
                        "--study)")
