"""Section 1: what the data are — rows, studies, outcome distribution per study, missing rows."""

from __future__ import annotations

import pandas as pd

from ..._plotting import new_figure, svg_inline
from ..blocks import Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..registry import Section


def _outcome_figure(d, table: pd.DataFrame) -> str:
    """Box plots of the outcome per study (regression) or the share of the first class column
    of ``table`` per study (classification), in the table's study order."""
    order = [str(v) for v in table["study"]]
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
    return svg_inline(fig)


def build(ctx: AuditContext) -> SectionOutput:
    d = ctx.dataset
    study = d.study_labels()
    table = d.outcome_by_study()
    facts = {
        "rows used (complete cases)": f"{len(d.y):,}",
        "rows dropped for missing values": f"{d.n_dropped:,}",
        "studies": f"{study.nunique():,}",
        "features (after one-hot encoding)": f"{d.X.shape[1]:,}",
        "outcome": f"{d.y.name} ({d.task})",
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


SECTION = Section(key="overview", title="Data overview", order=0, build=build,
                  description="Rows, studies, outcome by study, missing values.")
