"""``replikit replicate`` (the three aims of a replication), ``replikit meta`` (meta-analysis of
effects with variances or SEs) and ``replikit simulate replication`` (Study 2), seed 000.

Every output is checked before any input is read: files this command would write are refused
if they exist, unless ``--overwrite``; other files in ``--out`` are never touched. CSVs and
standalone SVGs are written atomically.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ParameterError, ReplikitError, ReplikitWarning, warn
from ._common import RandomStateOpt, TableOpt, emit, frame_table, info, simulate_app

InputArg = Annotated[Path, typer.Argument(help="CSV/Parquet/DuckDB table.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Directory for the figures (SVG) "
                                             "and tables (CSV).")]
OverwriteOpt = Annotated[bool, typer.Option(
    "--overwrite", help="Replace the files an earlier run wrote in --out (other files there are "
    "never touched).")]
Tau2Opt = Annotated[str, typer.Option("--tau2", help="tau2 estimator of the random-effects "
                                      "model: DL, REML, ML, PM, HE, SJ, HS.")]
CiOpt = Annotated[str, typer.Option("--ci", help="Pooled interval: z or knha "
                                    "(Knapp-Hartung).")]

_REPLICATE_OUTPUTS = ("replications.csv", "pooled.csv", "inconsistency_*.svg",
                      "consistency_*.svg", "forest_*.svg")
_META_OUTPUTS = ("forest.svg", "meta.csv")
#: `replikit meta --out` draws forest.svg (one row per study) up to this many studies: a
#: forest plot takes about 0.3 MB of memory and 20 ms per study (1.5 GB and 100 s for 5,000)
#: and is unreadable long before (docs/meta.md, "Scale")
FOREST_MAX_STUDIES = 2_000
_SIM_TABLES = ("study2_table.csv", "study2_diagnostic.csv")
_SIM_FIGURES = {"fig9a_cv_inconsistency": ("cv", "inconsistency", "random"),
                "fig9b_cv_consistency": ("cv", "consistency", "random"),
                "fig10a_test_inconsistency": ("test", "inconsistency", "random"),
                "fig10b_test_consistency": ("test", "consistency", "random"),
                "fig11_cv_population_random": ("cv", "captured", "random"),
                "fig11_cv_population_fixed": ("cv", "captured", "fixed"),
                "fig12_test_population_random": ("test", "captured", "random"),
                "fig12_test_population_fixed": ("test", "captured", "fixed")}


# ---------------------------------------------------------------------------------------------
# shared pieces


@contextlib.contextmanager
def _flags(names: dict[str, str]) -> Iterator[None]:
    """Library errors name Python parameters (`` `n_per_study` ``); name the flags instead."""
    try:
        yield
    except ReplikitError as exc:
        message = str(exc)
        for param, flag in names.items():
            message = message.replace(f"`{param}`", f"`{flag}`")
        if message == str(exc):
            raise
        raise type(exc)(message) from None


@contextlib.contextmanager
def _warning_lines() -> Iterator[None]:
    """replikit's warnings as one ``replikit: warning: ...`` line each on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReplikitWarning)
        yield
    for w in caught:
        if issubclass(w.category, ReplikitWarning):
            typer.echo("replikit: warning: " + " ".join(str(w.message).split()), err=True)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _choice(value: str, flag: str, choices, *, upper: bool = False) -> str:
    v = value.upper() if upper else value.lower()
    if v not in choices:
        raise ParameterError(f"`{flag}` must be one of {', '.join(choices)}; got {value!r}.")
    return v


def _check_out(out: Path | None, names, overwrite: bool) -> None:
    if out is not None:
        from .._outputs import check_output_dir

        check_output_dir(out, list(names), option="--out", overwrite=overwrite)


def _stems(keys) -> dict:
    """File-name stems for (model, source) groups: safe characters only, never colliding."""
    out, used = {}, set()
    for key in keys:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(map(str, key))).strip("._") or "group"
        stem, i = base, 2
        while stem.lower() in used:
            stem, i = f"{base}_{i}", i + 1
        used.add(stem.lower())
        out[key] = stem
    return out


# ---------------------------------------------------------------------------------------------
# replicate


def replicate(
    path: InputArg,
    original: Annotated[str | None, typer.Option("--original", help="Label of the original "
                                                 "study (default: the first).")] = None,
    study: Annotated[str, typer.Option("--study", help="Column of study labels.")] = "study",
    estimate: Annotated[str | None, typer.Option("--estimate", help="Column of estimates "
                                                 "(default: value, r2, estimate or yi; in a "
                                                 "Scores table: value).")] = None,
    metric: Annotated[str, typer.Option("--metric", help="Metric of the estimates.")] = "r2",
    margin: Annotated[float, typer.Option("--margin", help="Region of equivalence +-margin "
                                          "(> 0) for the consistency test.")] = 0.05,
    interval: Annotated[str, typer.Option("--interval", help="Difference interval: sa (seed "
                                          "eq. 2) or mover (Zou 2007).")] = "sa",
    pooling: Annotated[str, typer.Option("--pooling", help="Pooling of CV folds in a Scores "
                                         "table: fixed or random.")] = "random",
    tau2: Tau2Opt = "REML",
    ci: CiOpt = "z",
    se_method: Annotated[str, typer.Option("--se-method", help="SE of R2: olkin_finn or "
                                           "cohen.")] = "olkin_finn",
    table: TableOpt = None,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Does a replication contradict, confirm, or combine with the original? (seed 000)

    Input: one row per study (study, value/r2/estimate, n, \\[k], \\[se], \\[model]);
    or a Scores table of CV folds (study, model, fold, metric, value, n_test), pooled per study.
    """
    from ..replicate import SE_METHODS, TAU2_METHODS

    _check_out(out, _REPLICATE_OUTPUTS, overwrite)
    interval = _choice(interval, "--interval", ("sa", "mover"))
    tau2 = _choice(tau2, "--tau2", TAU2_METHODS, upper=True)
    ci = _choice(ci, "--ci", ("z", "knha"))
    se_method = _choice(se_method, "--se-method", SE_METHODS)
    pooling = _choice(pooling, "--pooling", ("fixed", "random"))
    if not margin > 0:
        raise ParameterError(f"`--margin` must be > 0 (the region is +-margin); got {margin}.")

    from ..data.io import read_frame
    from ..replicate import analyze_replications, estimates_from_table

    frame = read_frame(path, table=table, name="PATH")
    with _warning_lines(), _flags({"study": "--study", "estimate": "--estimate",
                                   "metric": "--metric", "original": "--original"}):
        groups = estimates_from_table(frame, study=study, estimate=estimate, metric=metric,
                                      pooling=pooling, tau2_method=tau2, se_method=se_method)
        if original is None:
            original = next(iter(groups.values()))[0].label
            info(f"Original study: {original!r} (the first; choose with --original).")
        res = analyze_replications(groups, original, margin=margin, interval=interval,
                                   tau2_method=tau2, ci=ci)
    if out is not None:
        _write_replication(res, out, metric)
    emit(_replication_human(res), {"original": res.original, "bounds": list(res.bounds),
                    "interval": res.interval, "tau2_method": res.tau2_method,
                    "replications": res.table, "pooled": res.pooled,
                    "estimates": res.estimates})


def _replication_human(res) -> list:
    """The replication analysis for the terminal: its heading (the first line of the
    result's text) and the per-replication and pooled tables."""
    show = ["model", "source", "replication", "estimate", "difference", "ci_low", "ci_high",
            "inconsistency", "pvalue_tost", "consistency"]
    pooled = ["model", "source", "pooling", "method", "ci_method", "estimate", "ci_low",
              "ci_high", "tau2", "i2_q"]
    return [str(res).split("\n")[0],
            frame_table(res.table[show], formats={"pvalue_tost": "p"}),
            frame_table(res.pooled[pooled], title="Pooled (original + replications):")]


def _write_replication(res, out: Path, metric: str) -> None:
    from .._outputs import write_csv_atomic
    from .._plotting import save_svg
    from ..replicate import forest_plot, plot_differences

    write_csv_atomic(out / "replications.csv", res.table)
    write_csv_atomic(out / "pooled.csv", res.pooled)
    written = ["replications.csv", "pooled.csv"]
    groups = list(res.table.groupby(["model", "source"], sort=False))
    stems = _stems([key for key, _ in groups])
    for (model, source), sub in groups:
        stem = stems[(model, source)]
        ax = plot_differences(sub, title=f"{model} ({source}): inconsistency, 95% CI")
        save_svg(ax.figure, out / f"inconsistency_{stem}.svg")
        ax = plot_differences(sub, low="tost_ci_low", high="tost_ci_high", bounds=res.bounds,
                              title=f"{model} ({source}): consistency, 90% CI")
        save_svg(ax.figure, out / f"consistency_{stem}.svg")
        ax = forest_plot(res.meta[(model, source, "random")], xlabel=metric, refline=None)
        save_svg(ax.figure, out / f"forest_{stem}.svg")
        written += [f"inconsistency_{stem}.svg", f"consistency_{stem}.svg", f"forest_{stem}.svg"]
    info(f"Wrote {len(written)} files to {out}/")


# ---------------------------------------------------------------------------------------------
# meta


def meta(
    path: InputArg,
    effect: Annotated[str | None, typer.Option("--effect", help="Column of effects (default: "
                                               "yi, effect, estimate or value).")] = None,
    variance: Annotated[str | None, typer.Option("--variance", help="Column of sampling "
                                                 "variances (default: vi or variance).")] = None,
    se: Annotated[str | None, typer.Option("--se", help="Column of standard errors (default: "
                                           "se or sei), used when no variance column.")] = None,
    label: Annotated[str | None, typer.Option("--label", help="Column of study labels.")] = None,
    method: Annotated[str, typer.Option("--method", help="FE, DL, REML, ML, PM, HE, SJ or "
                                        "HS.")] = "REML",
    ci: CiOpt = "z",
    knha_floor: Annotated[bool, typer.Option("--knha-floor", help="Floor the Knapp-Hartung SE "
                                             "at the z SE (metafor's adhoc).")] = False,
    pi_dist: Annotated[str | None, typer.Option(
        "--pi-dist", "--pi", help="Prediction interval: z, t(k-1) or t(k-2) (Higgins, Thompson "
        "& Spiegelhalter 2009). Default as metafor: z with --ci z, t(k-1) with --ci knha.")]
    = None,
    loo: Annotated[bool, typer.Option("--leave-one-out", help="Also print the leave-one-out "
                                      "table (leave_one_out.csv with --out).")] = False,
    moderator: Annotated[list[str] | None, typer.Option(
        "--moderator", help="Study-level column(s) for a meta-regression (repeat the flag or "
        "give a comma list); metareg.csv and bubble.svg with --out.")] = None,
    influence: Annotated[bool, typer.Option("--influence", help="Influence diagnostics "
                                            "(influence.csv, influence.svg, baujat.svg with "
                                            "--out).")] = False,
    funnel: Annotated[bool, typer.Option("--funnel", help="Small-study effects: Egger, rank "
                                         "test, trim-and-fill (small_study.csv, funnel.svg "
                                         "with --out).")] = False,
    table: TableOpt = None,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Meta-analysis of effects with variances or SEs; a forest plot with --out;
    meta-regression, influence and funnel on request."""
    from ..replicate import PI_DISTS, TAU2_METHODS
    from ._metareg import extra_outputs, meta_extras, moderator_columns

    moderators = moderator_columns(moderator)
    names = list(_META_OUTPUTS) + (["leave_one_out.csv"] if loo else []) \
        + extra_outputs(moderators, influence, funnel)
    _check_out(out, names, overwrite)
    method = _choice(method, "--method", ("FE",) + TAU2_METHODS, upper=True)
    ci = _choice(ci, "--ci", ("z", "knha"))
    if pi_dist is not None:
        pi_dist = _choice("".join(pi_dist.split()), "--pi-dist", PI_DISTS + ("t",))

    from ..data.io import read_frame
    from ..replicate import leave_one_out, meta_from_table

    frame = read_frame(path, table=table, name="PATH")
    with _warning_lines(), _flags({"effect": "--effect", "variance": "--variance",
                                   "se": "--se", "label": "--label"}):
        res = meta_from_table(frame, effect=effect, variance=variance, se=se, label=label,
                              method=method, ci=ci, knha_floor=knha_floor, pi_dist=pi_dist)
    if loo and res.k < 3:
        raise ParameterError(f"`--leave-one-out` needs at least 3 studies; the table has "
                             f"{res.k}.")
    if loo or influence:
        from ..replicate.influence import MAX_REFIT_K

        if res.k > MAX_REFIT_K:
            flag = "--leave-one-out" if loo else "--influence"
            raise ParameterError(f"`{flag}` refits the model once per study (k^2 work); the "
                                 f"table has {res.k:,} studies, above the limit of "
                                 f"{MAX_REFIT_K:,}: drop `{flag}` or pool the studies.")
    text = [str(res)]
    data = {"result": res.to_frame(), "studies": res.study_frame()}
    if loo:
        lo = leave_one_out(res)
        text.append(frame_table(lo, title="Leave-one-out:"))
        data["leave_one_out"] = lo
    effect_name = effect or next(c for c in ("yi", "effect", "estimate", "value")
                                 if c in frame.columns)
    if moderators or influence or funnel:
        with _warning_lines(), _flags({"moderators": "--moderator"}):
            more, more_data, _ = meta_extras(frame, res, moderators, influence, funnel, out,
                                             effect_name)
        text += more
        data.update(more_data)
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg
        from ..replicate import forest_plot

        if res.k <= FOREST_MAX_STUDIES:
            save_svg(forest_plot(res, xlabel=effect_name).figure, out / "forest.svg")
        else:
            names = [n for n in names if n != "forest.svg"]
            with _warning_lines():
                warn(f"forest.svg not drawn: {res.k:,} studies, above the {FOREST_MAX_STUDIES:,}"
                     " rows a forest plot shows (meta.csv and the tables are written).")
        write_csv_atomic(out / "meta.csv", res.to_frame())
        if loo:
            write_csv_atomic(out / "leave_one_out.csv", data["leave_one_out"])
        info(f"Wrote {', '.join(names)} to {out}/")
    emit(text, data)


# ---------------------------------------------------------------------------------------------
# simulate replication


def simulate_replication_cmd(
    models: Annotated[str, typer.Option("--models", help="Comma-separated: lr, ridge "
                                        "(batched), lasso, enet, rf, svm, mlp.")] = "lr,ridge",
    repetitions: Annotated[int, typer.Option("--repetitions", "-R", min=1,
                                             help="Monte-Carlo repetitions.")] = 200,
    n_studies: Annotated[int, typer.Option("--studies", min=3, help="Studies K (>= 3: the "
                                           "original, a replication and a changed study; "
                                           "with K < 6 fewer studies are changed).")] = 8,
    n_per_study: Annotated[int, typer.Option("--n", min=50, help="Rows per study (50 to the "
                                             "13,440 rows of the population).")] = 2000,
    tau2: Annotated[str, typer.Option("--tau2", help="tau2 estimator (the seed's R meta "
                                      "package: DL).")] = "DL",
    random_state: RandomStateOpt = 0,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", min=1, help="Workers for the "
                                        "scikit-learn models.")] = 1,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Seed 000's Study 2: do the procedures tell replications from non-replications?"""
    from ..replicate import simulate_replication
    from ._common import progress

    _check_out(out, list(_SIM_TABLES) + [f"{name}.svg" for name in _SIM_FIGURES], overwrite)
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        raise ParameterError(f"`--models` names no model; got {models!r}.")
    info(f"Simulating {repetitions} repetition(s) of {n_studies} studies x {n_per_study} rows, "
         f"models {', '.join(names)} (anes as the population).")
    kwargs = dict(models=names, n_repetitions=repetitions, n_studies=n_studies,
                  n_per_study=n_per_study, tau2_method=tau2, random_state=random_state,
                  n_jobs=n_jobs)
    flags = {"models": "--models", "n_repetitions": "--repetitions", "n_studies": "--studies",
             "n_per_study": "--n", "tau2_method": "--tau2", "random_state": "--seed",
             "n_jobs": "--n-jobs"}
    with _warning_lines(), _flags(flags):
        with progress("Study 2 repetitions", total=repetitions) as advance:
            res = simulate_replication(progress=advance, **kwargs)
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg
        from ..replicate import plot_simulation

        write_csv_atomic(out / "study2_table.csv", res.table)
        write_csv_atomic(out / "study2_diagnostic.csv", res.diagnostic())
        for name, (measure, procedure, stage2) in _SIM_FIGURES.items():
            fig = plot_simulation(res, measure=measure, procedure=procedure, stage2=stage2)
            save_svg(fig, out / f"{name}.svg")
        info(f"Wrote study2_table.csv, study2_diagnostic.csv and {len(_SIM_FIGURES)} figures to "
             f"{out}/")
    emit(_simulation_human(res), {"runtime_seconds": res.runtime_seconds,
                                  "r2_population": res.r2_population,
                    "n_repetitions": res.n_repetitions, "settings": res.settings,
                    "notes": list(res.notes), "table": res.table})


def _simulation_human(res) -> list:
    """Study 2 for the terminal: the result's text with its pivot table as a table."""
    t = res.table
    text = str(res).split("\n")
    changed = max(res.n_changed)
    sub = t[(t["n_changed"] == changed) & (t["procedure"].isin(["inconsistency", "consistency"]))
            & (t["margin"].isin([0.0, 0.1]))]
    piv = sub.pivot_table(index=["model", "measure", "stage1", "procedure", "margin", "group"],
                          columns="delta", values="proportion")
    piv.columns = [f"{c:g}" for c in piv.columns]
    notes = [line for line in text if line.startswith("note: ")]
    return [text[0], text[1] if len(text) > 1 else None,
            frame_table(piv, index=True, formats=dict.fromkeys(piv.columns, "{:.2f}")),
            *notes]


def register(app: typer.Typer) -> None:
    app.command("replicate")(replicate)
    app.command("meta")(meta)
    simulate_app.command("replication")(simulate_replication_cmd)
