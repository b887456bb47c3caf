"""``replikit replicate`` (the three aims of a replication) and ``replikit meta``
(meta-analysis of effects with variances or SEs), seed 000."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import DataError
from ._common import TableOpt, emit, info, simulate_app

InputArg = Annotated[Path, typer.Argument(help="CSV/Parquet/DuckDB table.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Directory for the figures (SVG) "
                                             "and tables (CSV).")]
Tau2Opt = Annotated[str, typer.Option("--tau2", help="tau2 estimator of the random-effects "
                                      "model: DL, REML, ML, PM, HE, SJ, HS.")]
CiOpt = Annotated[str, typer.Option("--ci", help="Pooled interval: z or knha "
                                    "(Knapp-Hartung).")]


def replicate(
    path: InputArg,
    original: Annotated[str | None, typer.Option("--original", help="Label of the original "
                                                 "study (default: the first).")] = None,
    study: Annotated[str, typer.Option("--study", help="Column of study labels.")] = "study",
    value: Annotated[str | None, typer.Option("--value", help="Column of estimates (default: "
                                              "value, r2 or estimate).")] = None,
    metric: Annotated[str, typer.Option("--metric", help="Metric of the estimates.")] = "r2",
    margin: Annotated[float, typer.Option("--margin", min=0.0, help="Region of equivalence "
                                          "+-margin for the consistency test.")] = 0.05,
    method: Annotated[str, typer.Option("--method", help="Difference interval: sa (seed eq. 2)"
                                        " or mover (Zou 2007).")] = "sa",
    pooling: Annotated[str, typer.Option("--pooling", help="Pooling of CV folds in a Scores "
                                         "table: fixed or random.")] = "random",
    tau2: Tau2Opt = "REML",
    ci: CiOpt = "z",
    se_method: Annotated[str, typer.Option("--se-method", help="SE of R2: olkin_finn or "
                                           "cohen.")] = "olkin_finn",
    table: TableOpt = None,
    out: OutOpt = None,
) -> None:
    """Does a replication contradict, confirm, or combine with the original? (seed 000)

    Input: one row per study (study, value/r2, n, [k], [se], [model]) or a Scores table of CV
    folds (study, model, fold, metric, value, n_test), whose folds are pooled per study first.
    """
    from ..data.io import read_frame
    from ..replicate.analysis import analyse_replications, estimates_from_table

    frame = read_frame(path, table=table, name="PATH")
    groups = estimates_from_table(frame, study=study, value=value, metric=metric,
                                  pooling=pooling, tau2_method=tau2, se_method=se_method)
    if original is None:
        original = next(iter(groups.values()))[0].label
        info(f"Original study: {original!r} (the first; choose with --original).")
    res = analyse_replications(groups, original, margin=margin, method=method,
                               tau2_method=tau2, ci=ci)
    if out is not None:
        _write_figures(res, out, metric)
    emit(str(res), {"original": res.original, "bounds": list(res.bounds),
                    "difference_method": res.method, "tau2_method": res.tau2_method,
                    "replications": res.table, "pooled": res.pooled,
                    "estimates": res.estimates})


def _write_figures(res, out: Path, metric: str) -> None:
    from ..replicate.plots import forest_plot, plot_differences
    from ..report.figures import svg_from_figure

    out.mkdir(parents=True, exist_ok=True)
    res.table.to_csv(out / "replications.csv", index=False)
    res.pooled.to_csv(out / "pooled.csv", index=False)
    written = ["replications.csv", "pooled.csv"]
    for (model, source), sub in res.table.groupby(["model", "source"], sort=False):
        stem = f"{model}_{source}".replace("/", "_").replace(" ", "_")
        ax = plot_differences(sub, title=f"{model} ({source}): inconsistency, 95% CI")
        (out / f"inconsistency_{stem}.svg").write_text(svg_from_figure(ax.figure))
        ax = plot_differences(sub, low="tost_ci_low", high="tost_ci_high", bounds=res.bounds,
                              title=f"{model} ({source}): consistency, 90% CI")
        (out / f"consistency_{stem}.svg").write_text(svg_from_figure(ax.figure))
        ax = forest_plot(res.meta[(model, source, "random")], xlabel=metric, refline=None)
        (out / f"forest_{stem}.svg").write_text(svg_from_figure(ax.figure))
        written += [f"inconsistency_{stem}.svg", f"consistency_{stem}.svg", f"forest_{stem}.svg"]
    info(f"Wrote {len(written)} files to {out}/")


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
    pi_dist: Annotated[str, typer.Option("--pi", help="Prediction interval: z or t.")] = "z",
    loo: Annotated[bool, typer.Option("--leave-one-out", help="Also print the leave-one-out "
                                      "table.")] = False,
    table: TableOpt = None,
    out: OutOpt = None,
) -> None:
    """Meta-analysis of effects with variances or SEs; a forest plot with --out."""
    from ..data.io import read_frame
    from ..replicate.meta import leave_one_out, meta_analysis

    frame = read_frame(path, table=table, name="PATH")
    cols = list(frame.columns)

    def pick(given, options, what):
        if given is not None:
            if given not in cols:
                raise DataError(f"column {given!r} ({what}) not found; columns are {cols}.")
            return given
        return next((c for c in options if c in cols), None)

    ycol = pick(effect, ("yi", "effect", "estimate", "value"), "effects")
    if ycol is None:
        raise DataError(f"no effect column: expected yi, effect, estimate or value (or "
                        f"--effect); got {cols}.")
    vcol = pick(variance, ("vi", "variance", "var"), "variances")
    scol = None if vcol is not None else pick(se, ("se", "sei"), "standard errors")
    if vcol is None and scol is None:
        raise DataError(f"no variance (vi) or standard-error (se) column; got {cols}.")
    lcol = pick(label, ("label", "study", "author"), "labels")
    labels = frame[lcol].astype(str).tolist() if lcol else None
    kwargs = {"v": frame[vcol].to_numpy(float)} if vcol else {"se": frame[scol].to_numpy(float)}
    res = meta_analysis(frame[ycol].to_numpy(float), labels=labels, method=method, ci=ci,
                        knha_floor=knha_floor, pi_dist=pi_dist, **kwargs)
    text = str(res)
    data = {"result": res.to_frame(), "studies": res.study_frame()}
    if loo:
        lo = leave_one_out(res)
        text += "\nLeave-one-out:\n" + lo.to_string(index=False, float_format=lambda v: f"{v:.4f}")
        data["leave_one_out"] = lo
    if out is not None:
        from ..replicate.plots import forest_plot
        from ..report.figures import svg_from_figure

        out.mkdir(parents=True, exist_ok=True)
        ax = forest_plot(res, xlabel=ycol)
        (out / "forest.svg").write_text(svg_from_figure(ax.figure))
        res.to_frame().to_csv(out / "meta.csv", index=False)
        info(f"Wrote {out}/forest.svg and meta.csv")
    emit(text, data)




def simulate_replication_cmd(
    models: Annotated[str, typer.Option("--models", help="Comma-separated: lr, ridge "
                                        "(batched), lasso, enet, rf, svm, mlp.")] = "lr,ridge",
    repetitions: Annotated[int, typer.Option("--repetitions", "-R", min=1,
                                             help="Monte-Carlo repetitions.")] = 200,
    n_studies: Annotated[int, typer.Option("--studies", min=3, help="Studies K.")] = 8,
    n_per_study: Annotated[int, typer.Option("--n", min=50, help="Rows per study.")] = 2000,
    tau2: Annotated[str, typer.Option("--tau2", help="tau2 estimator (the seed's R meta "
                                      "package: DL).")] = "DL",
    seed: Annotated[int, typer.Option("--seed", min=0, help="Root seed.")] = 0,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", min=1, help="Workers for the "
                                        "scikit-learn models.")] = 1,
    out: OutOpt = None,
) -> None:
    """Seed 000's Study 2: do the procedures tell replications from non-replications?"""
    from ..replicate.simulation import simulate_replication
    from ._common import state

    names = [m.strip() for m in models.split(",") if m.strip()]
    info(f"Simulating {repetitions} repetition(s) of {n_studies} studies x {n_per_study} rows, "
         f"models {', '.join(names)} (anes as the population).")
    if state.progress:
        from ..report.context import Progress

        with Progress(True).stage("Study 2 repetitions", total=repetitions) as advance:
            res = simulate_replication(models=names, n_repetitions=repetitions,
                                       n_studies=n_studies, n_per_study=n_per_study,
                                       tau2_method=tau2, random_state=seed, n_jobs=n_jobs,
                                       progress=advance)
    else:
        res = simulate_replication(models=names, n_repetitions=repetitions, n_studies=n_studies,
                                   n_per_study=n_per_study, tau2_method=tau2,
                                   random_state=seed, n_jobs=n_jobs)
    if out is not None:
        from ..replicate.plots import plot_simulation
        from ..report.figures import svg_from_figure

        out.mkdir(parents=True, exist_ok=True)
        res.table.to_csv(out / "study2_table.csv", index=False)
        res.diagnostic().to_csv(out / "study2_diagnostic.csv", index=False)
        figs = {"fig9a_cv_inconsistency": ("cv", "inconsistency", "random"),
                "fig9b_cv_consistency": ("cv", "consistency", "random"),
                "fig10a_test_inconsistency": ("test", "inconsistency", "random"),
                "fig10b_test_consistency": ("test", "consistency", "random"),
                "fig11_cv_population_random": ("cv", "captured", "random"),
                "fig11_cv_population_fixed": ("cv", "captured", "fixed"),
                "fig12_test_population_random": ("test", "captured", "random"),
                "fig12_test_population_fixed": ("test", "captured", "fixed")}
        for name, (measure, procedure, stage2) in figs.items():
            fig = plot_simulation(res, measure=measure, procedure=procedure, stage2=stage2)
            (out / f"{name}.svg").write_text(svg_from_figure(fig))
        info(f"Wrote study2_table.csv, study2_diagnostic.csv and {len(figs)} figures to {out}/")
    emit(str(res), {"runtime_seconds": res.runtime_seconds, "r2_population": res.r2_population,
                    "n_repetitions": res.n_repetitions, "settings": res.settings,
                    "table": res.table})


def register(app: typer.Typer) -> None:
    app.command("replicate")(replicate)
    app.command("meta")(meta)
    simulate_app.command("replication")(simulate_replication_cmd)
