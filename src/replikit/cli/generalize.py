"""``replikit generalize``: how many experiments a benchmark needs to generalize (seed 004)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import RandomStateOpt, TableOpt, emit, info


def _floats(text: str, name: str) -> list[float]:
    from ..errors import ParameterError

    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(f"`{name}` must be comma-separated numbers; got {text!r}.") from None


def generalize(
    results: Annotated[Path, typer.Argument(help="Results table (CSV, Parquet, DuckDB): one row "
                                            "per alternative and condition.")],
    alternative: Annotated[str, typer.Option("--alternative", help="Column of the compared "
                                             "alternatives (e.g. model, encoder).")],
    score: Annotated[str, typer.Option("--score", help="Column of the score.")],
    factor: Annotated[list[str], typer.Option("--factor", help="Generalizability factor "
                                              "column(s), e.g. dataset (repeatable).")],
    design: Annotated[list[str] | None, typer.Option("--design", help="Design factor column(s): "
                                                     "one analysis per level combination "
                                                     "(repeatable).")] = None,
    held: Annotated[list[str] | None, typer.Option("--hold", help="Held-constant factor as "
                                                   "COL=LEVEL (repeatable).")] = None,
    lower_is_better: Annotated[bool, typer.Option("--lower-is-better", help="Lower scores are "
                                                  "better (errors, losses).")] = False,
    goal: Annotated[list[str] | None, typer.Option("--goal", help="borda:NAME, jaccard:K, "
                                                   "mallows[:NU] or rbf[:GAMMA] "
                                                   "(repeatable; default mallows).")] = None,
    alpha: Annotated[str, typer.Option("--alpha", help="Desired generalizability alpha* "
                                       "(comma-separated for a grid).")] = "0.95",
    delta: Annotated[str, typer.Option("--delta", help="Similarity threshold delta* "
                                       "(comma-separated for a grid).")] = "0.05",
    reps: Annotated[int, typer.Option("--reps", min=1, help="Repetitions per subsample "
                                      "size.")] = 1000,
    missing: Annotated[str, typer.Option("--missing", help="worst (rank missing results last) "
                                         "or drop (80% coverage filters, then worst).")]
    = "worst",
    coverage: Annotated[float, typer.Option("--coverage", min=0.0, max=1.0, help="Coverage "
                                            "threshold of --missing drop, for conditions and "
                                            "alternatives.")] = 0.8,
    grid: Annotated[str, typer.Option("--grid", help="all (n = 1..N/2, Algorithm 1) or even "
                                      "(n = 2, 4, ... < N/2, the authors' code).")] = "all",
    boot: Annotated[int, typer.Option("--boot", min=0, help="Bootstrap resamples for a CI of "
                                      "n* (0 = none).")] = 0,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the table (CSV) and "
                                             "the figures (SVG).")] = None,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
) -> None:
    """How many experiments (e.g. datasets) are needed for a study's rankings to generalize?"""
    from ..data.io import read_frame
    from ..errors import ParameterError
    from ..generalize import StudySpec, analyze, parse_goal, prepare

    hold = {}
    for item in held or []:
        col, sep, lvl = item.partition("=")
        if not sep:
            raise ParameterError(f"`--hold` must be COL=LEVEL; got {item!r}.")
        hold[col] = lvl
    if grid not in ("all", "even"):
        raise ParameterError(f"`--grid` must be all or even; got {grid!r}.")
    frame = read_frame(results, table=table, name="RESULTS")
    for col, lvl in list(hold.items()):
        if col in frame.columns and frame[col].dtype.kind in "iuf":
            hold[col] = type(frame[col].iloc[0].item())(lvl)
    spec = StudySpec(alternative=alternative, score=score, factors=list(factor),
                     design=list(design or []), held_constant=hold,
                     lower_is_better=lower_is_better, missing=missing,
                     min_condition_coverage=coverage, min_alternative_coverage=coverage)
    kernels = [parse_goal(g) for g in (goal or ["mallows"])]
    prepared = prepare(frame, spec)
    for k in kernels:
        if k.kind == "borda":
            k.resolve_index(prepared.samples[0].alternatives)
    info(str(prepared))
    if prepared.dropped_alternatives:
        info("dropped alternatives: " + ", ".join(map(str, prepared.dropped_alternatives)))
    res = analyze(prepared, kernels=kernels, alpha=_floats(alpha, "--alpha"),
                  delta=_floats(delta, "--delta"), n_rep=reps, n_boot=boot,
                  n="even" if grid == "even" else None, random_state=random_state)
    if out is not None:
        _write(res, out)
        info(f"wrote {out}/generalize_nstar.csv and figures")
    emit(str(res), {"nstar": res.table, "dropped_alternatives": prepared.dropped_alternatives,
                    "dropped_conditions": len(prepared.dropped_conditions),
                    "imputed_worst": prepared.n_imputed})


def _write(res, out: Path) -> None:
    import re

    from ..generalize.plots import plot_generalizability, plot_nstar, plot_quantile_fit
    from ..report.figures import svg_from_figure

    out.mkdir(parents=True, exist_ok=True)
    res.table.to_csv(out / "generalize_nstar.csv", index=False)
    t = res.table
    for by in ("alpha", "delta"):
        if t[by].nunique() > 1 or by == "alpha":
            ax = plot_nstar(t, by=by)
            (out / f"generalize_nstar_by_{by}.svg").write_text(svg_from_figure(ax.figure))
    for i, ((design, kernel), r) in enumerate(res.details.items()):
        if i >= 50:
            break
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{design}_{kernel}")[:80]
        ax = plot_quantile_fit(r)
        (out / f"fit_{stem}.svg").write_text(svg_from_figure(ax.figure))
        ax = plot_generalizability(r)
        (out / f"ngen_{stem}.svg").write_text(svg_from_figure(ax.figure))


def register(app: typer.Typer) -> None:
    app.command("generalize")(generalize)
