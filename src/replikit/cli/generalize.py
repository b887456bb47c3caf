"""``replikit generalize``: how many experiments a benchmark needs to generalize (Matteucci et
al. 2024)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    RandomStateOpt,
    TableOpt,
    emit,
    epilog,
    frame_table,
    info,
    parameter_flags,
    progress,
    renamed_flags,
)

# every file `--out` may receive (names of the per-analysis figures depend on the data)
OUT_FILES = ("generalize_nstar.csv", "generalize_ranks.csv", "generalize_nstar_by_*.svg",
             "fit_*.svg", "ngen_*.svg")
_MAX_FIGURES = 50  # (design, goal) analyses drawn at most
#: library parameters (StudySpec fields, analyze's) whose flag has another name
_FLAGS = {"factors": "--factor", "held_constant": "--hold", "kernels": "--goal",
          "min_condition_coverage": "--coverage", "min_alternative_coverage": "--coverage",
          "bootstrap": "--bootstrap-resamples", "n": "--grid", "path": "RESULTS"}
#: every parameter a note of the analysis may name, with its flag
_NOTE_FLAGS = {"alternative": "--alternative", "score": "--score", "design": "--design",
               **_FLAGS}


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
    tolerance: Annotated[str, typer.Option("--tolerance", help="Similarity threshold delta*: "
                                           "how dissimilar the results of two studies may be "
                                           "(comma-separated for a grid).")] = "0.05",
    n_resamples: Annotated[int, typer.Option("--n-resamples", min=1, help="Pairs of disjoint "
                                             "subsamples per subsample size.")] = 1000,
    missing: Annotated[str, typer.Option("--missing", help="worst (rank missing results last) "
                                         "or drop (80% coverage filters, then worst).")]
    = "worst",
    coverage: Annotated[float, typer.Option("--coverage", min=0.0, max=1.0, help="Coverage "
                                            "threshold of --missing drop, for conditions and "
                                            "alternatives.")] = 0.8,
    grid: Annotated[str, typer.Option("--grid", help="all (n = 1..N/2, Algorithm 1) or even "
                                      "(n = 2, 4, ... < N/2, the authors' code).")] = "all",
    bootstrap_resamples: Annotated[int, typer.Option("--bootstrap-resamples", min=0,
                                                     help="Bootstrap resamples of n* (kept in "
                                                     "the Python result; the 95% interval "
                                                     "ci_low/ci_high is the jackknife one, "
                                                     "always computed).")] = 0,
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
    from ..generalize.nstar import check_levels, check_tolerance
    from ..methods import BootstrapMethod

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
    levels = check_levels(_floats(confidence_level, "--confidence-level"))
    tolerances = check_tolerance(_floats(tolerance, "--tolerance"))
    kernels = [parse_goal(g) for g in (goal or ["mallows"])]
    if out is not None:
        check_output_dir(out, OUT_FILES, option="--out", overwrite=overwrite)

    # labels are kept as written ('05' and '5' are two alternatives, not the number 5)
    labels = dict.fromkeys([alternative, *factor, *(design or []), *hold], str)
    frame = read_frame(results, table=table, dtype=labels)
    spec = StudySpec(alternative=alternative, score=score, factors=list(factor),
                     design=list(design or []), held_constant=hold,
                     higher_is_better=higher_is_better, missing=missing,
                     min_condition_coverage=coverage, min_alternative_coverage=coverage)
    prepared = prepare(frame, spec)
    for k in kernels:  # goals against the alternatives actually analyzed
        k.check(prepared.samples[0].alternatives)
    info(str(prepared))
    if prepared.dropped_alternatives:
        info("dropped alternatives: " + ", ".join(map(str, prepared.dropped_alternatives)))
    with progress("generalizability: n* per design and goal") as advance:
        res = analyze(prepared, kernels=kernels, confidence_level=levels, tolerance=tolerances,
                      n_resamples=n_resamples,
                      bootstrap=(BootstrapMethod(n_resamples=bootstrap_resamples)
                                 if bootstrap_resamples else None),
                      n="even" if grid == "even" else None, random_state=random_state,
                      progress=advance)
    for note in res.notes:
        info(f"warning: {_flag_words(note)}")
    if out is not None:
        _write(res, out)
        info(f"wrote {out}/generalize_nstar.csv, generalize_ranks.csv and figures")
    data = res.to_dict()
    data["notes"] = [_flag_words(n) for n in data["notes"]]
    emit(_human(res, res.summary()), data)


def _flag_words(text: str) -> str:
    """A note of the analysis names parameters in backticks (`` `factors` ``); the command
    line names its flags (`` `--factor` ``)."""
    return re.sub(r"`([A-Za-z_]\w*)`",
                  lambda m: f"`{_NOTE_FLAGS.get(m.group(1), m.group(1))}`", text)


def _human(res, summary) -> list:
    """n* per analysis (the result's heading and table, numbers to 3 significant digits) and
    the alternatives by mean rank, for the terminal."""
    t = res.table
    cols = [c for c in t.columns if c not in ("beta0", "beta1", "nstar_bound", "eps",
                                              "se_log", "estimator", "nstar_loglog", "kappa_inf")]
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
    from .._plotting import new_axes, save_svg
    from ..generalize.plots import plot_generalizability, plot_nstar, plot_quantile_fit

    out.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(out / "generalize_nstar.csv", res.table)
    write_csv_atomic(out / "generalize_ranks.csv", res.ranks())
    t = res.table
    for by in ("confidence_level", "tolerance"):
        if t[by].nunique() > 1 or by == "confidence_level":
            save_svg(plot_nstar(t, by=by, ax=new_axes()).figure,
                     out / f"generalize_nstar_by_{by}.svg")
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
        save_svg(plot_quantile_fit(r, ax=new_axes()).figure, out / f"fit_{stem}.svg")
        save_svg(plot_generalizability(r, ax=new_axes()).figure, out / f"ngen_{stem}.svg")


def register(app: typer.Typer) -> None:
    app.command("generalize", epilog=epilog(
        examples=["replikit generalize runs.csv --alternative model --score auc --factor task"],
        note=("Goals: --goal jaccard:1 (is the best alternative the same?), --goal mallows "
              "(are the alternatives ordered the same?), --goal borda:NAME (is NAME ranked "
              "the same?); repeat --goal for several. Grids: --confidence-level 0.9,0.95 "
              "--tolerance 0.05,0.1. n* is estimated from the asymptotic law of the MMD, "
              "with a jackknife interval; --out DIR writes the tables and figures."),
        references=("matteucci2024", "gretton2012", "efron1981")))(generalize)
    renamed_flags("generalize", {"--delta": "--tolerance", "--resamples": "--n-resamples",
                                 "--ci-resamples": "--bootstrap-resamples"})
    parameter_flags("generalize", _FLAGS)
