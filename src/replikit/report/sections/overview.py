"""Section 1: what the data are — rows, studies, outcome distribution per study, missing rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._plotting import new_figure, svg_later
from ..blocks import Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..registry import Section


def _outcome_figure(d, table: pd.DataFrame) -> str:
    """Box plots of the outcome per study (regression) or the share of the first class column
    of ``table`` per study (classification), in the table's study order."""
    order = [str(v) for v in table["study"]]
    if d.task == "survival":
        return _survival_figure(d, order)
    height = min(6.4, 1.2 + 0.22 * len(order))  # many studies: fewer tick labels, same height
    fig = new_figure(6.4, max(2.4, height))
    ax = fig.add_subplot()
    study = d.study_labels().astype(str)
    if d.task == "regression":
        groups = [d.y[study == s].to_numpy() for s in order]
        ax.boxplot(groups, orientation="horizontal", tick_labels=order,
                   showfliers=False, patch_artist=True,
                   boxprops={"facecolor": "#c9d6ea", "edgecolor": "#203a66"},
                   medianprops={"color": "#b3261e"})
        ax.set_xlabel(f"{d.y.name} (boxes: quartiles; whiskers: 1.5 IQR)")
    else:
        share = next(c for c in table.columns if str(c).startswith("share "))
        rate = table[share].to_numpy(dtype=float)
        ax.barh(order, rate, color="#5b7fb9")
        ax.set_xlabel(f"share of rows with {d.y.name} = {str(share)[len('share '):]}")
        ax.set_xlim(0, float(rate.max()) * 1.15 + 1e-9)
    ax.set_ylabel("study")
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    return svg_later(fig)


def _survival_figure(d, order: list) -> str:
    """Kaplan–Meier curves of the event-free share per study (at most 12 studies drawn)."""
    from ...experiment.models import SurvivalBaseline

    fig = new_figure(6.4, 3.6)
    ax = fig.add_subplot()
    study = d.study_labels().astype(str).to_numpy()
    y = d.outcome
    for s in order[:12]:
        km = SurvivalBaseline().fit(d.X.iloc[:1], y[study == s])
        ax.step(np.concatenate(([0.0], km.unique_times_)),
                np.concatenate(([1.0], km.survival_)), where="post", label=s)
    ax.set_xlabel(f"{d.y.name} (follow-up time)")
    ax.set_ylabel(f"share without the event ({d.event.name})")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(title="study", fontsize=7)
    return svg_later(fig)


def build(ctx: AuditContext) -> SectionOutput:
    d = ctx.dataset
    study = d.study_labels()
    table = d.outcome_by_study()
    facts = {
        "rows used (complete cases)": f"{len(d.y):,}",
        "rows dropped for missing values": f"{d.n_dropped:,}",
        "studies": f"{study.nunique():,}",
        "features (after one-hot encoding)": f"{d.X.shape[1]:,}",
        "outcome": f"{d.y.name} ({d.task})" if d.task != "survival" else
        f"time {d.y.name}, event {d.event.name} (survival: {int(d.event.sum()):,} events, "
        f"{int((~d.event).sum()):,} censored)",
    }
    blocks: list = []
    if d.description:
        blocks.append(Paragraph(d.description))
    if d.citation:
        blocks.append(Paragraph(f"Source: {d.citation}"))
    blocks += [
        KeyValues(facts),
        Figure(_outcome_figure(d, table),
               f"Distribution of {d.y.name} by study." if d.task == "regression" else
               "Kaplan–Meier estimate of the share without the event over the follow-up, by "
               "study." if d.task == "survival" else
               f"Share of each study's rows in the class named on the axis ({d.y.name})."),
        Table(table.reset_index(drop=True), f"{d.y.name} by study"),
    ]
    if d.notes:
        blocks.insert(len(blocks) - 2, Paragraph("What was done to the data: "
                                                 + "; ".join(d.notes) + "."))
    k = study.nunique()
    return SectionOutput(
        key="overview",
        title="Data overview",
        summary=(f"{len(d.y):,} complete rows in {k} {'study' if k == 1 else 'studies'}; "
                 f"{d.n_dropped:,} {'row' if d.n_dropped == 1 else 'rows'} with missing values "
                 f"{'was' if d.n_dropped == 1 else 'were'} dropped."),
        blocks=blocks,
        data={"n_rows": len(d.y), "n_dropped": d.n_dropped, "n_studies": int(k),
              "notes": list(d.notes),
              "n_features": int(d.X.shape[1]), "target": str(d.y.name), "task": d.task,
              "features": [str(c) for c in d.X.columns]},
    )


def _scores_table(scores, metric: str) -> pd.DataFrame:
    """Per study: models, metrics, repeats x folds and the primary metric's mean per model."""
    f = scores.frame
    rows = []
    for study, g in f.groupby("study", sort=False):
        p = g[g["metric"] == metric]
        means = p.groupby("model", sort=False)["value"].mean()
        rows.append({"study": study, "models": int(g["model"].nunique()),
                     "metrics": ", ".join(map(str, pd.unique(g["metric"]))),
                     "repeats x folds": f"{g['repeat'].nunique()} x {g['fold'].nunique()}",
                     f"mean {metric} by model": ", ".join(
                         f"{m} {v:.4g}" for m, v in means.items())})
    return pd.DataFrame(rows)


def _predictions_table(predictions) -> pd.DataFrame:
    f = predictions.frame
    rows = []
    for study, g in f.groupby("study", sort=False):
        first = g[(g["model"] == g["model"].iloc[0]) & (g["repeat"] == g["repeat"].iloc[0])]
        rows.append({"study": study, "rows": int(len(first)),
                     "models": ", ".join(map(str, pd.unique(g["model"]))),
                     "repeats x folds": f"{g['repeat'].nunique()} x {g['fold'].nunique()}"})
    return pd.DataFrame(rows)


def _scores_figure(scores, metric: str) -> str:
    """The primary metric's fold scores per model (box plots), all studies together."""
    from ...experiment.metrics import metric_label

    f = scores.frame
    f = f[f["metric"] == metric]
    models = list(pd.unique(f["model"]))
    fig = new_figure(6.4, max(2.2, 1.0 + 0.35 * len(models)))
    ax = fig.add_subplot()
    ax.boxplot([f.loc[f["model"] == m, "value"].to_numpy() for m in models],
               orientation="horizontal", tick_labels=[str(m) for m in models],
               patch_artist=True, boxprops={"facecolor": "#c9d6ea", "edgecolor": "#203a66"},
               medianprops={"color": "#b3261e"})
    ax.set_xlabel(f"{metric_label(metric)} per fold (boxes: quartiles; whiskers: 1.5 IQR)")
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    return svg_later(fig)


def _scheme_words(src) -> str:
    if src.scheme == "holdout":
        return f"repeated hold-out, test share {src.test_fraction:g}"
    return {"kfold": "k-fold cross-validation",
            "recorded": "training and test set sizes recorded"}.get(
                src.scheme, "unknown (no n_train / n_test; see --scheme)")


def build_input(ctx: AuditContext) -> SectionOutput:
    """What was audited when the audit starts from results: the input, how it was read and
    what it holds."""
    src = ctx.source
    facts = {"input": src.name, "entry": src.label, "studies" if src.kind != "benchmark"
             else "datasets": f"{src.n_studies:,}"}
    blocks: list = [Paragraph(
        f"The audit starts from {src.label} ({src.flag}), not from data: replikit fits no "
        "model here and each section answers what this input allows; the sections it cannot "
        "answer say what to supply.")]
    data: dict = {"entry": src.kind, "input": src.name, "notes": list(src.notes),
                  "n_studies": src.n_studies}
    if src.notes:
        blocks.append(Paragraph("How it was read: " + "; ".join(src.notes) + "."))
    if src.kind == "scores":
        f = src.scores.frame
        facts.update({"models": f"{f['model'].nunique()}", "metrics": ", ".join(
            map(str, src.scores.metrics)), "primary metric": str(src.metric),
            "scheme": _scheme_words(src)})
        data.update({"n_models": int(f["model"].nunique()), "metrics": list(src.scores.metrics),
                     "primary_metric": src.metric, "scheme": src.scheme})
        blocks += [KeyValues(facts),
                   Figure(_scores_figure(src.scores, src.metric),
                          f"{src.metric} of each fold by model (all studies)."),
                   Table(_scores_table(src.scores, src.metric), "The scores by study")]
    elif src.kind == "predictions":
        f = src.predictions.frame
        facts.update({"models": f"{f['model'].nunique()}", "prediction rows": f"{len(f):,}",
                      "task": str(src.task)})
        data.update({"n_models": int(f["model"].nunique()), "n_rows": int(len(f)),
                     "task": src.task})
        blocks += [KeyValues(facts), Table(_predictions_table(src.predictions),
                                           "The predictions by study")]
    elif src.kind == "benchmark":
        b = src.benchmark
        facts.update({"models": f"{b.shape[1]}", "score": str(src.metric),
                      "direction": "higher is better" if src.higher_is_better
                      else "lower is better"})
        data.update({"n_models": int(b.shape[1]), "higher_is_better": src.higher_is_better})
        blocks += [KeyValues(facts), Table(b.reset_index(), "The benchmark table")]
    else:  # estimates
        e = src.estimates
        facts.update({"metric column": str(src.metric),
                      "original": src.original or "none marked (meta-analysis only)"})
        data.update({"metric": src.metric, "original": src.original})
        blocks += [KeyValues(facts), Table(e.reset_index(drop=True), "The reported estimates")]
    return SectionOutput(key="overview", title="What was audited",
                         summary=f"{src.label[:1].upper()}{src.label[1:]} from {src.name}: "
                                 f"{src.n_studies} "
                                 f"{'dataset' if src.kind == 'benchmark' else 'stud'}"
                                 + ("s" if src.kind == "benchmark" and src.n_studies != 1
                                    else "" if src.kind == "benchmark" else
                                    "y" if src.n_studies == 1 else "ies") + ".",
                         blocks=blocks, data=data)


SECTION = Section(key="overview", title="Data overview", order=0, build=build,
                  description="Rows, studies, outcome by study, missing values; or, for results "
                              "already made, what the input holds.",
                  entries={"scores": build_input, "predictions": build_input,
                           "benchmark": build_input, "estimates": build_input,
                           "survival": build})
