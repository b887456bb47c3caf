"""``replikit meta`` extras: ``--moderator``, ``--factor``, ``--influence``, ``--funnel``.

Kept apart from :mod:`replikit.cli.meta` so that the command only names the flags: this module
parses them, calls the meta-regression, the influence diagnostics and the small-study tests,
and writes their files.
"""

from __future__ import annotations

from pathlib import Path

from .._labels import names_list
from ..errors import ParameterError

__all__ = ["moderator_columns", "moderator_frame", "extra_outputs", "meta_extras"]


def moderator_columns(values, flag: str = "--moderator") -> list[str]:
    """``--moderator a --moderator b,c`` -> ``['a', 'b', 'c']`` (order kept, no repeats)."""
    cols: list[str] = []
    for v in values or ():
        for part in str(v).split(","):
            part = part.strip()
            if not part:
                raise ParameterError(f"`{flag}`: empty column name in {v!r}.")
            if part not in cols:
                cols.append(part)
    return cols


def extra_outputs(moderators, influence: bool, funnel: bool) -> list[str]:
    """The files the extras write in ``--out`` (checked before any work)."""
    names = []
    if moderators:
        names += ["metareg.csv", "bubble.svg"]
    if influence:
        names += ["influence.csv", "influence.svg", "baujat.svg"]
    if funnel:
        names += ["small_study.csv", "funnel.svg"]
    return names


def moderator_frame(frame, moderators: list[str], factors=()):
    """The moderator columns of the table, those of ``--factor`` as categoricals.

    A column of numbers in a CSV is read as numbers and enters the meta-regression as a slope;
    ``--factor`` makes it a factor (one dummy per level against the first, levels in the
    order of their values: 11, 12, 108). A text column is a factor either way.
    """
    missing = [c for c in moderators if c not in frame.columns]
    if missing:
        flag = "--factor" if missing[0] in factors else "--moderator"
        raise ParameterError(f"`{flag}`: no column {missing[0]!r} in the table; the "
                             f"columns are {names_list(frame.columns)}.")
    mods = frame[moderators].reset_index(drop=True)
    for col in factors:
        mods[col] = mods[col].astype("category")
    return mods


def _check_moderators(mods, effect_name: str, factors=(), labels=()) -> None:
    """Refuse the effect column as its own moderator, and a factor with a level per study
    (the study labels): each takes as many coefficients as there are studies; name a missing
    moderator value by its study and table row (counted from 1)."""
    import pandas as pd

    for col in mods.columns:
        flag = "--factor" if col in factors else "--moderator"
        missing = mods[col].isna().to_numpy().nonzero()[0]
        if missing.size and len(labels) == len(mods):
            first = int(missing[0])
            more = f" and {missing.size - 1} more" if missing.size > 1 else ""
            raise ParameterError(f"`{flag}`: {col!r} is missing for study {labels[first]!r} "
                                 f"(row {first + 1}){more}; fill it in or drop the study.")
        if col == effect_name:
            raise ParameterError(f"`{flag}`: {col!r} is the effect column; a moderator is a "
                                 "study-level characteristic that may explain the effects "
                                 "(year, site, design), not the effects themselves.")
        values = mods[col].dropna()
        is_factor = col in factors or not pd.api.types.is_numeric_dtype(values)
        if is_factor and len(values) > 2 and values.nunique() == len(values):
            raise ParameterError(f"`{flag}`: {col!r} holds a different value for every study "
                                 f"({len(values)} levels, like study labels): as a factor it "
                                 "would take one coefficient per study, leaving nothing to "
                                 "estimate; choose a characteristic the studies share.")


def meta_extras(frame, res, moderators: list[str], influence: bool, funnel: bool,
                out: Path | None, effect_name: str,
                factors=()) -> tuple[list, dict, list]:
    """Fit what the flags ask for; returns (human text, JSON data, files written).
    ``factors`` (a subset of ``moderators``) are the ``--factor`` columns."""
    text: list = []
    data: dict = {}
    written: list = []
    fit = None
    if moderators:
        mods = moderator_frame(frame, moderators, factors)
        _check_moderators(mods, effect_name, factors, res.labels)
        from ..replicate import meta_regression

        fit = meta_regression(list(res.y), list(res.v), moderators=mods,
                              labels=res.labels, tau2_method=res.tau2_method,
                              interval=res.interval,
                              knha_floor=res.knha_floor, pi_dist=res.pi_dist)
        text.append(str(fit))
        text.append(str(fit.heterogeneity()))
        data["meta_regression"] = fit.to_frame()
        data["meta_regression_summary"] = fit.summary_frame()
        data["residual_heterogeneity"] = fit.heterogeneity().to_frame()
    else:
        data["heterogeneity"] = res.heterogeneity().to_frame()
        text.append(str(res.heterogeneity()))
    inf = sse = None
    if influence:
        from ..replicate import influence as influence_of

        inf = influence_of(fit if fit is not None else res)
        text.append(str(inf))
        data["influence"] = inf.to_frame()
    if funnel:
        from ..replicate import small_study_effects

        sse = small_study_effects(res)
        text.append(str(sse))
        data["small_study"] = sse.to_frame()
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg

        if fit is not None:
            write_csv_atomic(out / "metareg.csv", fit.to_frame())
            numeric = [t for t, idx in fit.terms.items()
                       if len(idx) == 1 and fit.names[idx[0]] == t]
            if numeric:
                save_svg(fit.plot(numeric[0], ylabel=effect_name).figure, out / "bubble.svg")
                written.append("bubble.svg")
            written.append("metareg.csv")
        if inf is not None:
            from ..replicate import baujat_plot

            write_csv_atomic(out / "influence.csv", inf.to_frame())
            save_svg(inf.plot().flat[0].figure, out / "influence.svg")
            save_svg(baujat_plot(fit if fit is not None else res).figure, out / "baujat.svg")
            written += ["influence.csv", "influence.svg", "baujat.svg"]
        if sse is not None:
            write_csv_atomic(out / "small_study.csv", sse.to_frame())
            save_svg(sse.plot(contours=(0.90, 0.95, 0.99)).figure, out / "funnel.svg")
            written += ["small_study.csv", "funnel.svg"]
    return text, data, written
