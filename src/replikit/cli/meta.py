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
                   "begg1994", "duval2000")

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
    table: TableOpt = None,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Meta-analysis of effects with variances or SEs; a forest plot with --out;
    meta-regression, influence and funnel on request."""
    from ..replicate import PI_DISTS, TAU2_METHODS
    from ._metareg import extra_outputs, meta_extras, moderator_columns

    factors = moderator_columns(factor, "--factor")
    moderators = moderator_columns(moderator)
    moderators += [c for c in factors if c not in moderators]
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


def register(app: typer.Typer) -> None:
    app.command("meta", epilog=epilog(
        examples=["replikit meta studies.csv --tau2-method DL --interval knha",
                  "replikit meta studies.csv --moderator year --influence --funnel --out figs",
                  "replikit meta studies.csv --moderator ablat --factor site"],
        references=META_REFERENCES))(meta)
    renamed_flags("meta", {"--method": "--tau2-method", "--ci": "--interval",
                           "--pi": "--pi-dist"})
    parameter_flags("meta", {"moderators": "--moderator"})
