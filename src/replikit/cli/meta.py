"""``replikit meta``: meta-analysis of effects with their variances or standard errors, with
meta-regression, influence diagnostics and small-study effects on request.

Every output is checked before any input is read: files this command would write are refused
if they exist, unless ``--overwrite``; other files in ``--out`` are never touched. CSVs and
standalone SVGs are written atomically.
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
    frame_table,
    info,
)
from ._common import (
    check_out as _check_out,
)
from ._common import (
    choice as _choice,
)
from ._common import (
    flags as _flags,
)
from ._common import (
    warning_lines as _warning_lines,
)

CiOpt = Annotated[str, typer.Option("--ci", help="Pooled interval: z or knha "
                                    "(Knapp-Hartung).")]

_META_OUTPUTS = ("forest.svg", "meta.csv")
#: `replikit meta --out` draws forest.svg (one row per study) up to this many studies: a
#: forest plot takes about 0.3 MB of memory and 20 ms per study (1.5 GB and 100 s for 5,000)
#: and is unreadable long before (docs/meta.md, "Scale")
FOREST_MAX_STUDIES = 2_000


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

    frame = read_frame(path, table=table)
    with _warning_lines(), _flags({"effect": "--effect", "variance": "--variance",
                                   "se": "--se", "label": "--label"}):
        res = meta_from_table(frame, effect=effect, variance=variance, se=se, label=label,
                              tau2_method=method, interval="wald" if ci == "z" else ci,
                              knha_floor=knha_floor, pi_dist=pi_dist)
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


def register(app: typer.Typer) -> None:
    app.command("meta")(meta)
