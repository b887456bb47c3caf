"""``replikit meta``: meta-analysis of effects with their variances or standard errors, with
meta-regression, influence diagnostics and small-study effects on request.

Every output is checked before any input is read: files this command would write are refused
if they exist, unless ``--overwrite``; other files in ``--out`` are never touched. CSVs and
standalone SVGs are written atomically. Library errors name parameters; the entry point shows
the flags (each flag is its parameter's name with dashes; ``moderators`` is ``--moderator``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import ParameterError, warn
from ._common import (
    InputArg,
    OutOpt,
    OverwriteOpt,
    TableOpt,
    emit,
    epilog,
    frame_table,
    info,
    parameter_flags,
    renamed_flags,
)
from ._common import (
    check_out as _check_out,
)
from ._common import (
    choice as _choice,
)
from ._common import (
    warning_lines as _warning_lines,
)

#: The papers behind ``replikit meta``.
META_REFERENCES = ("viechtbauer2010", "dersimonian1986", "viechtbauer2005", "knapp2003",
                   "higgins2009", "viechtbauer2007", "viechtbauer2010b", "egger1997",
                   "begg1994", "duval2000", "konstantopoulos2011", "hedges2010", "tipton2015")

_META_OUTPUTS = ("forest.svg", "meta.csv")
#: `replikit meta --out` draws forest.svg (one row per study) up to this many studies: a
#: forest plot takes about 0.3 MB of memory and 20 ms per study (1.5 GB and 100 s for 5,000)
#: and is unreadable long before (docs/meta.md, "Scale")
FOREST_MAX_STUDIES = 2_000


def _old_value(value: str, flag: str, old: str, new: str) -> str:
    """``new`` for the old value ``old`` of ``flag``, with one warning line."""
    if value.lower() != old:
        return value
    info(f"replikit: warning: `{flag} {old}` is now `{flag} {new}`; the old value will stop "
         "working in replikit 0.3.")
    return new


def meta(
    path: InputArg,
    effect: Annotated[str | None, typer.Option("--effect", help="Column of effects (default: "
                                               "yi, effect, estimate or value).")] = None,
    variance: Annotated[str | None, typer.Option("--variance", help="Column of sampling "
                                                 "variances (default: vi or variance).")] = None,
    se: Annotated[str | None, typer.Option("--se", help="Column of standard errors (default: "
                                           "se or sei), used when no variance column.")] = None,
    label: Annotated[str | None, typer.Option("--label", help="Column of study labels.")] = None,
    tau2_method: Annotated[str, typer.Option(
        "--tau2-method", help="FE (fixed effect), or the tau2 estimator of the random-effects "
        "model: DL, REML, ML, PM, HE, SJ, HS.")] = "REML",
    interval: Annotated[str, typer.Option(
        "--interval", help="Pooled interval: wald (z) or knha (Knapp-Hartung t).")] = "wald",
    knha_floor: Annotated[bool, typer.Option("--knha-floor", help="Floor the Knapp-Hartung SE "
                                             "at the Wald SE (metafor's adhoc).")] = False,
    pi_dist: Annotated[str | None, typer.Option(
        "--pi-dist", help="Prediction interval: z, t(k-1) or t(k-2) (Higgins, Thompson & "
        "Spiegelhalter 2009). Default as metafor: z with --interval wald, t(k-1) with "
        "--interval knha.")] = None,
    leave_one_out: Annotated[bool, typer.Option(
        "--leave-one-out", help="Also print the leave-one-out table (leave_one_out.csv with "
        "--out).")] = False,
    moderator: Annotated[list[str] | None, typer.Option(
        "--moderator", help="Study-level column(s) for a meta-regression (repeat the flag or "
        "give a comma list); metareg.csv and bubble.svg with --out. A column of numbers is a "
        "slope, a text column a factor.")] = None,
    factor: Annotated[list[str] | None, typer.Option(
        "--factor", help="Moderator column(s) to use as a factor even when they hold numbers "
        "(one dummy per level against the first, levels in order: 11, 12, 108); implies "
        "--moderator.")] = None,
    influence: Annotated[bool, typer.Option("--influence", help="Influence diagnostics "
                                            "(influence.csv, influence.svg, baujat.svg with "
                                            "--out).")] = False,
    funnel: Annotated[bool, typer.Option("--funnel", help="Small-study effects: Egger, rank "
                                         "test, trim-and-fill (small_study.csv, funnel.svg "
                                         "with --out).")] = False,
    measure: Annotated[str | None, typer.Option(
        "--measure", help="Convert reported statistics on the way in, as metafor's escalc: "
        "COR or ZCOR (a correlation r), R2 or ZR2 (an R²), PR, PLO or PAS (an accuracy), AUC "
        "or AUCLO (an AUC, Hanley & McNeil 1982 variance). Needs --n, or for an AUC --n-pos "
        "and --n-neg (or --n with --prevalence).")] = None,
    estimate: Annotated[str | None, typer.Option(
        "--estimate", help="With --measure: column of the reported statistic (default r, r2, "
        "accuracy or auc, after the measure).")] = None,
    n: Annotated[str | None, typer.Option(
        "--n", help="With --measure: column of sample sizes (default n).")] = None,
    n_pos: Annotated[str | None, typer.Option(
        "--n-pos", help="With --measure AUC/AUCLO: column of positive cases (default "
        "n_pos).")] = None,
    n_neg: Annotated[str | None, typer.Option(
        "--n-neg", help="With --measure AUC/AUCLO: column of negative cases (default "
        "n_neg).")] = None,
    prevalence: Annotated[str | None, typer.Option(
        "--prevalence", help="With --measure AUC/AUCLO and --n: column (or one number) of the "
        "share of positives.")] = None,
    clusters: Annotated[list[str] | None, typer.Option(
        "--clusters", help="Several effects per study: the columns of the nesting levels, "
        "outermost first (--clusters study,fold), for a multilevel meta-analysis (metafor's "
        "rma.mv with random = ~ 1 | study/fold; multilevel.csv with --out). --tau2-method "
        "REML or ML; --interval wald or t.")] = None,
    robust: Annotated[str | None, typer.Option(
        "--robust", help="With --clusters: cluster-robust standard errors by the outermost "
        "level, CR1 (Hedges, Tipton & Johnson 2010; t(J - p)) or CR2 (Tipton 2015; "
        "Satterthwaite df); robust.csv with --out.")] = None,
    table: TableOpt = None,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Meta-analysis of effects with variances or SEs (or of reported r, R², accuracy or
    AUC converted by --measure); a forest plot with --out; meta-regression, influence and
    funnel on request."""
    from ..replicate import PI_DISTS, TAU2_METHODS
    from ._metareg import extra_outputs, meta_extras, moderator_columns

    factors = moderator_columns(factor, "--factor")
    moderators = moderator_columns(moderator)
    moderators += [c for c in factors if c not in moderators]
    levels = moderator_columns(clusters, "--clusters")
    if levels or robust is not None:
        _multilevel(path, table, levels, robust, effect, variance, se, label, moderators,
                    factors, tau2_method, interval, out, overwrite,
                    {"--leave-one-out": leave_one_out, "--influence": influence,
                     "--funnel": funnel, "--measure": measure is not None,
                     "--knha-floor": knha_floor, "--pi-dist": pi_dist is not None})
        return
    names = list(_META_OUTPUTS) + (["leave_one_out.csv"] if leave_one_out else []) \
        + extra_outputs(moderators, influence, funnel)
    _check_out(out, names, overwrite)
    tau2_method = _choice(tau2_method, "--tau2-method", ("FE",) + TAU2_METHODS, upper=True)
    interval = _choice(_old_value(interval, "--interval", "z", "wald"), "--interval",
                       ("wald", "knha"))
    if pi_dist is not None:
        pi_dist = _choice("".join(pi_dist.split()), "--pi-dist", PI_DISTS + ("t",))

    from ..data.io import read_frame
    from ..replicate import leave_one_out as leave_one_out_of
    from ..replicate import meta_from_table

    frame = read_frame(path, table=table)
    conversion = {"--estimate": estimate, "--n": n, "--n-pos": n_pos, "--n-neg": n_neg,
                  "--prevalence": prevalence}
    if measure is None:
        given = [f for f, v in conversion.items() if v is not None]
        if given:
            raise ParameterError(f"`{given[0]}` goes with `--measure` (the conversion of "
                                 "reported statistics); without it the table holds effects.")
    else:
        frame, effect, variance, label = _converted(frame, measure, effect, variance, se,
                                                    label, estimate, n, n_pos, n_neg,
                                                    prevalence)
    with _warning_lines():
        res = meta_from_table(frame, effect=effect, variance=variance, se=se, label=label,
                              tau2_method=tau2_method, interval=interval,
                              knha_floor=knha_floor, pi_dist=pi_dist)
    if leave_one_out and res.k < 3:
        raise ParameterError(f"`--leave-one-out` needs at least 3 studies; the table has "
                             f"{res.k}.")
    if leave_one_out or influence:
        from ..replicate.influence import MAX_REFIT_K

        if res.k > MAX_REFIT_K:
            flag = "--leave-one-out" if leave_one_out else "--influence"
            raise ParameterError(f"`{flag}` refits the model once per study (k^2 work); the "
                                 f"table has {res.k:,} studies, above the limit of "
                                 f"{MAX_REFIT_K:,}: drop `{flag}` or pool the studies.")
    text = [str(res)]
    data = {"result": res.to_frame(), "studies": res.study_frame()}
    if measure is not None:
        text, data = _back_transformed(res, frame.attrs["measure_code"], text, data)
    if leave_one_out:
        lo = leave_one_out_of(res)
        text.append(frame_table(lo, title="Leave-one-out:"))
        data["leave_one_out"] = lo
    effect_name = effect or next(c for c in ("yi", "effect", "estimate", "value")
                                 if c in frame.columns)
    if moderators or influence or funnel:
        with _warning_lines():
            more, more_data, extra_written = meta_extras(frame, res, moderators, influence,
                                                         funnel, out, effect_name, factors)
        if out is not None and "bubble.svg" not in extra_written:
            names = [n for n in names if n != "bubble.svg"]  # no numeric moderator to draw
        text += more
        data.update(more_data)
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg

        if res.k <= FOREST_MAX_STUDIES:
            save_svg(res.plot(xlabel=effect_name).figure, out / "forest.svg")
        else:
            names = [n for n in names if n != "forest.svg"]
            with _warning_lines():
                warn(f"forest.svg not drawn: {res.k:,} studies, above the {FOREST_MAX_STUDIES:,}"
                     " rows a forest plot shows (meta.csv and the tables are written).")
        write_csv_atomic(out / "meta.csv", res.to_frame())
        if leave_one_out:
            write_csv_atomic(out / "leave_one_out.csv", data["leave_one_out"])
        info(f"Wrote {', '.join(names)} to {out}/")
    emit(text, data)


def _multilevel(path, table, levels, robust, effect, variance, se, label, moderators, factors,
                tau2_method, interval, out, overwrite, other) -> None:
    """``--clusters``: the multilevel meta-analysis, and robust inference with ``--robust``."""
    if not levels:
        raise ParameterError("`--robust` needs `--clusters` (the columns of the nesting "
                             "levels, outermost first): the robust clusters are the outermost "
                             "level.")
    clash = [flag for flag, given in other.items() if given]
    if clash:
        raise ParameterError(f"`{clash[0]}` does not go with `--clusters` (the multilevel "
                             "model); drop one of them.")
    method = _choice(robust, "--robust", ("CR1", "CR2"), upper=True) if robust else None
    tau2_method = _choice(tau2_method, "--tau2-method", ("REML", "ML"), upper=True)
    interval = _choice(interval, "--interval", ("wald", "t"))
    names = ["multilevel.csv"] + (["robust.csv"] if method else [])
    _check_out(out, names, overwrite)

    from ..data.io import read_frame
    from ..replicate import multilevel_from_table
    from ._metareg import moderator_frame

    frame = read_frame(path, table=table).reset_index(drop=True)
    mods = moderator_frame(frame, moderators, factors) if moderators else None
    with _warning_lines():
        res = multilevel_from_table(frame, clusters=levels, effect=effect, variance=variance,
                                    se=se, label=label, moderators=mods,
                                    tau2_method=tau2_method, interval=interval)
    text = [str(res)]
    data = {"result": res.to_frame(), "summary": res.summary_frame()}
    if method:
        rob = res.robust(method=method)
        text.append(str(rob))
        data["robust"] = rob.to_frame()
    if out is not None:
        from .._outputs import write_csv_atomic

        write_csv_atomic(out / "multilevel.csv", data["result"])
        if method:
            write_csv_atomic(out / "robust.csv", data["robust"])
        info(f"Wrote {', '.join(names)} to {out}/")
    emit(text, data)


def _converted(frame, measure, effect, variance, se, label, estimate, n, n_pos, n_neg,
               prevalence):
    """The table with ``yi`` and ``vi`` from ``--measure`` (every other column kept, for the
    moderators), and the columns the meta-analysis reads."""
    from ..replicate import MEASURES, effects_from_reported

    code = _choice(measure, "--measure", tuple(MEASURES), upper=True)
    clash = [f for f, v in (("--effect", effect), ("--variance", variance), ("--se", se))
             if v is not None]
    if clash:
        raise ParameterError(f"`{clash[0]}` does not go with `--measure`: the effects and their "
                             "variances come from the conversion (columns yi and vi).")
    taken = [c for c in ("yi", "vi") if c in frame.columns]
    if taken:
        raise ParameterError(f"`--measure` writes columns yi and vi, but the table already has "
                             f"{taken[0]!r}: drop `--measure` to pool them as they are.")
    if prevalence is not None:
        try:
            prevalence = float(prevalence)
        except ValueError:
            pass  # a column name
    study = label or "study"
    effects = effects_from_reported(frame, measure=code, estimate=estimate, n=n, n_pos=n_pos,
                                    n_neg=n_neg, prevalence=prevalence, study=study)
    out = frame.reset_index(drop=True).assign(yi=effects["yi"].to_numpy(),
                                              vi=effects["vi"].to_numpy())
    out.attrs["measure_code"] = code
    info(f"effects: {code}, {effects.attrs['measure']} (as metafor's escalc)")
    return out, "yi", "vi", label


def _back_transformed(res, code, text, data):
    """The pooled effect on the reported statistic's scale, for a transformed measure."""
    from ..replicate import MEASURE_SCALES, MEASURES, from_scale

    scale = MEASURE_SCALES.get(code)
    if scale is None:
        return text, data
    ci, pi = res.confidence_interval(), res.prediction_interval()
    low, high, pi_low, pi_high = (float(from_scale(x, scale))
                                  for x in (ci.low, ci.high, pi.low, pi.high))
    est = float(from_scale(res.estimate, scale))
    stat = MEASURES[code][0]
    text = [*text, f"Back-transformed to {stat} (monotone, so the intervals keep their "
                   f"coverage; the estimate is the median effect): {est:.4f}, 95% CI "
                   f"[{low:.4f}, {high:.4f}], 95% prediction interval [{pi_low:.4f}, "
                   f"{pi_high:.4f}]"]
    data = {**data, "back_transformed": {"statistic": stat, "estimate": est, "ci_low": low,
                                         "ci_high": high, "pi_low": pi_low,
                                         "pi_high": pi_high}}
    return text, data


def register(app: typer.Typer) -> None:
    app.command("meta", epilog=epilog(
        examples=["replikit meta studies.csv --tau2-method DL --interval knha",
                  "replikit meta studies.csv --moderator year --influence --funnel --out figs",
                  "replikit meta studies.csv --moderator ablat --factor site",
                  "replikit meta correlations.csv --measure ZCOR --estimate r --n n",
                  "replikit meta folds.csv --clusters study,fold --robust CR2"],
        references=META_REFERENCES))(meta)
    renamed_flags("meta", {"--method": "--tau2-method", "--ci": "--interval",
                           "--pi": "--pi-dist"})
    parameter_flags("meta", {"moderators": "--moderator"})
