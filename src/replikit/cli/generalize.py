"""``replikit generalize``: how many experiments a benchmark needs to generalize (seed 004)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import RandomStateOpt, TableOpt, emit, frame_table, info, progress

# every file `--out` may receive (names of the per-analysis figures depend on the data)
OUT_FILES = ("generalize_nstar.csv", "generalize_ranks.csv", "generalize_nstar_by_*.svg",
             "fit_*.svg", "ngen_*.svg")
_MAX_FIGURES = 50  # (design, goal) analyses drawn at most
# how the spec fields are named in messages on the command line
_OPTIONS = {"alternative": "--alternative", "score": "--score", "factors": "--factor",
            "design": "--design", "held_constant": "--hold",
            "min_condition_coverage": "--coverage", "min_alternative_coverage": "--coverage",
            "kernels": "--goal", "n_resamples": "--resamples"}


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
    higher_is_better: Annotated[bool, typer.Option("--higher-is-better/--lower-is-better",
                                                   help="Direction of the score: "
                                                   "--lower-is-better for errors and "
                                                   "losses.")] = True,
    goal: Annotated[list[str] | None, typer.Option("--goal", help="borda:NAME, jaccard:K, "
                                                   "mallows[:NU] or rbf[:GAMMA] "
                                                   "(repeatable; default mallows).")] = None,
    confidence_level: Annotated[str, typer.Option("--confidence-level", help="Desired "
                                                  "generalizability alpha*, a probability "
                                                  "level (comma-separated for a grid).")]
    = "0.95",
    delta: Annotated[str, typer.Option("--delta", help="Similarity threshold delta* "
                                       "(comma-separated for a grid).")] = "0.05",
    resamples: Annotated[int, typer.Option("--resamples", min=1, help="Pairs of disjoint "
                                           "subsamples per subsample size.")] = 1000,
    missing: Annotated[str, typer.Option("--missing", help="worst (rank missing results last) "
                                         "or drop (80% coverage filters, then worst).")]
    = "worst",
    coverage: Annotated[float, typer.Option("--coverage", min=0.0, max=1.0, help="Coverage "
                                            "threshold of --missing drop, for conditions and "
                                            "alternatives.")] = 0.8,
    grid: Annotated[str, typer.Option("--grid", help="all (n = 1..N/2, Algorithm 1) or even "
                                      "(n = 2, 4, ... < N/2, the authors' code).")] = "all",
    ci_resamples: Annotated[int, typer.Option("--ci-resamples", min=0, help="Bootstrap "
                                              "resamples of n* (kept in the Python result; "
                                              "the 95% interval ci_low/ci_high is the "
                                              "jackknife one, always computed).")] = 0,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the tables (CSV) and "
                                             "the figures (SVG).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace replikit's output "
                                            "files already in --out (other files are never "
                                            "touched).")] = False,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
) -> None:
    """How many experiments (e.g. datasets) are needed for a study's rankings to generalize?

    Ranks shown (tables, CSV, JSON) count from 1 = best; ties share a rank and a missing result
    ranks last.
    """
    from .._outputs import check_output_dir
    from ..data.io import read_frame
    from ..errors import ParameterError
    from ..generalize import StudySpec, analyze, parse_goal, prepare
    from ..generalize.nstar import check_delta, check_levels

    # every option and every output is checked before the results are read
    hold = {}
    for item in held or []:
        col, sep, lvl = item.partition("=")
        if not sep or not col:
            raise ParameterError(f"`--hold` must be COL=LEVEL; got {item!r}.")
        hold[col] = lvl
    if grid not in ("all", "even"):
        raise ParameterError(f"`--grid` must be all or even; got {grid!r}.")
    if missing not in ("worst", "drop"):
        raise ParameterError(f"`--missing` must be worst or drop; got {missing!r}.")
    levels = check_levels(_floats(confidence_level, "--confidence-level"),
                          "--confidence-level")
    deltas = check_delta(_floats(delta, "--delta"), "--delta")
    kernels = [parse_goal(g, option="--goal") for g in (goal or ["mallows"])]
    if out is not None:
        check_output_dir(out, OUT_FILES, option="--out", overwrite=overwrite)

    # labels are kept as written ('05' and '5' are two alternatives, not the number 5)
    labels = dict.fromkeys([alternative, *factor, *(design or []), *hold], str)
    frame = read_frame(results, table=table, name="RESULTS", dtype=labels)
    spec = StudySpec(alternative=alternative, score=score, factors=list(factor),
                     design=list(design or []), held_constant=hold,
                     higher_is_better=higher_is_better, missing=missing,
                     min_condition_coverage=coverage, min_alternative_coverage=coverage)
    prepared = prepare(frame, spec, options=_OPTIONS)
    for k in kernels:  # goals against the alternatives actually analyzed
        k.check(prepared.samples[0].alternatives, option="--goal")
    info(str(prepared))
    if prepared.dropped_alternatives:
        info("dropped alternatives: " + ", ".join(map(str, prepared.dropped_alternatives)))
    with progress("generalizability: n* per design and goal") as advance:
        res = analyze(prepared, kernels=kernels, confidence_level=levels, delta=deltas,
                      n_resamples=resamples, ci_resamples=ci_resamples,
                      n="even" if grid == "even" else None, random_state=random_state,
                      progress=advance)
    for note in res.notes:
        info(f"warning: {note}")
    if out is not None:
        _write(res, out)
        info(f"wrote {out}/generalize_nstar.csv, generalize_ranks.csv and figures")
    summary = res.summary()
    emit(_human(res, summary),
         {"nstar": res.table, "alternatives": summary,
          "dropped_alternatives": prepared.dropped_alternatives,
          "dropped_conditions": len(prepared.dropped_conditions),
          "imputed_worst": prepared.n_imputed, "notes": list(res.notes)})


def _human(res, summary) -> list:
    """n* per analysis (the result's heading and table, numbers to 3 significant digits) and
    the alternatives by mean rank, for the terminal."""
    t = res.table
    cols = [c for c in t.columns if c not in ("beta0", "beta1", "nstar_bound", "eps",
                                              "se_log", "estimator", "nstar_loglog")]
    return [str(res).split("\n")[0], frame_table(t[cols], digits=3, max_rows=60), "",
            _alternatives_text(summary)]


def _alternatives_text(summary):
    """Alternatives by mean rank (1 = best), averaged over the design combinations."""
    g = (summary.groupby("alternative", sort=False)
         .agg(mean_rank=("mean_rank", "mean"), n_best=("n_best", "sum"),
              n_missing=("n_missing", "sum"))
         .sort_values("mean_rank", kind="stable").reset_index())
    return frame_table(g, formats={"mean_rank": "{:.2f}"}, max_rows=40,
                       title="Alternatives by mean rank (1 = best; ties share a rank, a "
                             "missing result ranks last; n_best = conditions ranked first):")


def _write(res, out: Path) -> None:
    import re

    from .._outputs import write_csv_atomic
    from .._plotting import save_svg
    from ..generalize.plots import plot_generalizability, plot_nstar, plot_quantile_fit

    out.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(out / "generalize_nstar.csv", res.table)
    write_csv_atomic(out / "generalize_ranks.csv", res.ranks())
    t = res.table
    for by in ("confidence_level", "delta"):
        if t[by].nunique() > 1 or by == "confidence_level":
            save_svg(plot_nstar(t, by=by).figure, out / f"generalize_nstar_by_{by}.svg")
    stems: set[str] = set()
    for i, ((design, kernel), r) in enumerate(res.details.items()):
        if i >= _MAX_FIGURES:
            info(f"figures drawn for the first {_MAX_FIGURES} of {len(res.details)} analyses")
            break
        stem = base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{design}_{kernel}")[:80]
        j = 1
        while stem in stems:  # labels that differ only in replaced characters
            j += 1
            stem = f"{base}_{j}"
        stems.add(stem)
        save_svg(plot_quantile_fit(r).figure, out / f"fit_{stem}.svg")
        save_svg(plot_generalizability(r).figure, out / f"ngen_{stem}.svg")


def register(app: typer.Typer) -> None:
    app.command("generalize")(generalize)
