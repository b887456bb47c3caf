"""Section 5: do the audited models' rankings generalize across studies? (seed 004)

Each study is one experimental condition: the audited models are scored in every study by
3-fold cross-validation on a row subsample, ranked, and n* (the number of studies needed for
(alpha*, delta*)-generalizability) is estimated by Algorithm 1 for three goals: the whole
ranking (Mallows), the best model (Jaccard, k = 1) and each model's position (Borda).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..figures import svg_from_figure
from ..registry import Section
from ._shared import per_study_left_out, per_study_scores

_ALPHA, _DELTA = 0.95, 0.05


def build(ctx: AuditContext) -> SectionOutput:
    from ...experiment.models import default_models
    from ...generalize import Kernel, StudySpec, analyze, prepare
    from ...generalize.plots import plot_quantile_fit

    d = ctx.dataset
    key, title = "generalize", "Do the model rankings generalize across studies?"
    need = ("n* needs two disjoint sets of at least 2 studies (seed 004, Algorithm 1)")
    if d.study is None:
        return SectionOutput(key=key, title=title, skipped=f"no study column: {need}.",
                             advice="name the column of studies, sites or years with --study.")
    if d.n_studies < 4:
        return SectionOutput(key=key, title=title, skipped=(
            f"{d.n_studies} studies; {need}, so at least 4."),
            advice="audit data with four or more studies.")
    models = ctx.models or default_models(d.task)
    if len(models) < 2:
        return SectionOutput(key=key, title=title, skipped="one model only: nothing to rank.",
                             advice="give two or more models with --models.")
    t0 = time.perf_counter()
    max_rows = 300 if ctx.quick else 800
    n_rep = 300 if ctx.quick else 1000
    scores = per_study_scores(ctx, models)
    wide_all = scores.pivot(index="study", columns="model", values="score")
    complete = wide_all.dropna()
    left_out = [(s, r) for s, r in per_study_left_out(ctx)]
    left_out += [(s, "a model could not be scored") for s in wide_all.index
                 if s not in complete.index]
    if len(complete) < 4:
        return SectionOutput(key=key, title=title, skipped=(
            f"only {len(complete)} studies have a score for every model; {need}."),
            advice="studies need at least 9 rows (3 of each class) for 3-fold CV.")
    scores = scores[scores["study"].isin(complete.index)]
    metric = ctx.plan.metric_label
    spec = StudySpec(alternative="model", score="score", factors="study")
    prepared = prepare(scores, spec)
    sample = prepared.samples[0]
    names = list(sample.alternatives)
    kernels = [Kernel("mallows"), Kernel("jaccard", k=1)] + [
        Kernel("borda", alternative=m) for m in names]
    res = analyze(prepared, kernels=kernels, alpha=_ALPHA, delta=_DELTA, n_rep=n_rep,
                  random_state=ctx.random_state)
    N = len(sample.conditions)
    t = res.table
    goal = {"mallows": "whole ranking (Mallows)", "jaccard(k=1)": "best model (Jaccard, k=1)"}
    nstar = pd.DataFrame({
        "goal": [goal.get(k, f"position of {k[6:-1]} (Borda)") for k in t["kernel"]],
        "n*": t["nstar"].round(1),
        "studies available": N,
        "enough": np.where(t["sufficient"], "yes", "no"),
        "log-log slope": t["beta1"].round(2),
    })
    tiers = np.asarray(sample.ranks, dtype=float)
    tiers = tiers - np.nanmin(tiers) + 1  # shown as 1 = best, whatever the internal base
    ranks = pd.DataFrame(tiers, columns=names, index=sample.conditions)
    wide = pd.DataFrame(sample.scores, columns=names, index=sample.conditions)
    per_model = pd.DataFrame({
        "model": names,
        f"mean {metric}": wide.mean().round(4).to_numpy(),
        "mean rank (1 = best)": ranks.mean().round(2).to_numpy(),
        "studies ranked best": (ranks == 1).sum().to_numpy(),
    })
    ranks_out = ranks.reset_index().rename(columns={ranks.index.name or "index": "study"})
    m = t[t["kernel"] == "mallows"].iloc[0]
    j = t[t["kernel"] == "jaccard(k=1)"].iloc[0]
    worst = max(t["nstar"])
    level = "good" if worst <= N else ("warn" if worst <= 3 * N else "bad")
    verdict = (f"With {N} studies, the whole ranking needs n* ≈ {m['nstar']:.1f} studies and "
               f"the identity of the best model n* ≈ {j['nstar']:.1f} to be "
               f"({_ALPHA:g}, {_DELTA:g})-generalizable; "
               + ("every goal is met by the studies at hand." if worst <= N else
                  f"the hardest goal needs about {worst:.0f} studies."))
    blocks = [
        Paragraph(
            "Each study is treated as one experimental condition of a benchmark of the audited "
            f"models: every model is scored by 3-fold cross-validation ({metric}) on at most "
            f"{max_rows} rows of each study, models are ranked within each study (ties share a "
            "tier), and n* — the number of studies after which two independent sets of studies "
            f"give similar ranking distributions (MMD ≤ ε*) with probability {_ALPHA:g} — is "
            "estimated by Algorithm 1 of seed 004 (MMD quantiles for every n ≤ N/2 from "
            f"{n_rep} disjoint subsample pairs, log-log fit, δ* = {_DELTA:g}). The scores come "
            "from a row subsample to keep the audit fast; they rank models, not report them."),
        Callout(verdict, level),
        KeyValues({"studies (N)": N, "models": len(names), "repetitions per n": n_rep,
                   "alpha*": _ALPHA, "delta*": _DELTA,
                   "time": f"{time.perf_counter() - t0:.1f} s"}),
        Table(nstar, "n*: studies needed per goal"),
        Table(per_model, "Models across studies"),
        Table(ranks_out, "Rank of each model in each study (1 = best; ties share a rank)"),
    ]
    try:
        ax = plot_quantile_fit(res.details[(sample.label, "mallows")])
        blocks.insert(4, Figure(svg_from_figure(ax.figure),
                                "Mallows goal: MMD quantile vs n on log-log axes, fitted line "
                                "and the extrapolated n* (triangle) at ε* (dashed)."))
    except (KeyError, ValueError):
        pass
    if left_out:
        blocks.insert(1, Paragraph(
            f"{len(left_out)} studies left out: " + "; ".join(
                f"{s} ({r})" for s, r in left_out[:15]) + (" ..." if len(left_out) > 15 else "")
            + "."))
    data = {"nstar": t, "per_model": per_model, "ranks": ranks_out, "N": N, "n_rep": n_rep,
            "primary_metric": ctx.metric, "studies_left_out": [s for s, _ in left_out],
            "alpha": _ALPHA, "delta": _DELTA, "max_rows_per_study": max_rows}
    return SectionOutput(key=key, title=title, summary=verdict, blocks=blocks, data=data)


SECTION = Section(key="generalize", title="Do the model rankings generalize across studies?",
                  order=50, build=build,
                  description="n* for the audited models' rankings across studies (seed 004)")
