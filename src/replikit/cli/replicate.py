"""``replikit replicate`` (the three aims of a replication) and ``replikit meta``
(meta-analysis of effects with variances or SEs), seed 000."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import DataError
from ._common import TableOpt, emit, info

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


def register(app: typer.Typer) -> None:
    app.command("replicate")(replicate)
    app.command("meta")(meta)
