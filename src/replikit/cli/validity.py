"""``replikit simulate validity``: rerun the calibration studies of every capability that ships
one (``replikit.<capability>.validity.validity``) and write one table of rates ± Monte-Carlo SEs
against their nominal values and tolerance bands, with figures (docs/validity.md).

The capabilities are discovered, not listed: any capability with a public ``validity`` module
whose ``validity(*, size, random_state, n_jobs)`` returns a table of
:mod:`replikit._calibration` rows takes part. Every capability gets the same ``--random-state``,
so its rows are those of ``replikit.<capability>.validity.validity(random_state=...)`` in
Python, whichever capabilities are run beside it.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..errors import NotApplicableError, ParameterError
from ._common import (
    NJobsOpt,
    RandomStateOpt,
    emit,
    epilog,
    frame_table,
    info,
    progress,
    simulate_app,
)

__all__ = ["CAPABILITIES", "Size", "providers", "output_names", "simulate_validity_cmd",
           "register"]

#: Capabilities searched for a ``validity`` module, in the order their rows are stacked.
CAPABILITIES = ("replicate", "compare", "generalize", "multistudy", "resampling")


class Size(StrEnum):
    small = "small"
    full = "full"


def providers() -> dict[str, Callable]:
    """The capabilities that ship a validity study: ``{name: validity function}``, in the
    order of :data:`CAPABILITIES`.

    A capability takes part when its public module ``replikit.<capability>.validity`` exists
    and defines a callable ``validity``; nothing is registered by hand.
    """
    found: dict[str, Callable] = {}
    for capability in CAPABILITIES:
        name = f"replikit.{capability}.validity"
        if importlib.util.find_spec(name) is None:
            continue
        function = getattr(importlib.import_module(name), "validity", None)
        if callable(function):
            found[capability] = function
    return found


def _select(text: str | None, available: dict[str, Callable]) -> list[str]:
    """The capabilities named by ``--capabilities`` (comma-separated, or ``all``)."""
    if not available:
        raise NotApplicableError("no capability ships a validity study (no "
                                 "replikit.<capability>.validity module was found).")
    if text is None or text.strip().lower() == "all":
        return list(available)
    chosen: list[str] = []
    for raw in text.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        if name not in available:
            offered = ", ".join(available)
            if name in CAPABILITIES:
                raise ParameterError(f"`--capabilities`: {name} ships no validity study; "
                                     f"choose from {offered} (comma-separated) or all.")
            raise ParameterError(f"`--capabilities`: unknown capability {raw.strip()!r}; "
                                 f"choose from {offered} (comma-separated) or all.")
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise ParameterError(f"`--capabilities` names no capability; got {text!r}.")
    return chosen


def output_names(capabilities) -> list[str]:
    """The files ``--out`` receives: ``validity.csv`` and one ``validity_<capability>.svg``
    per capability run."""
    return ["validity.csv", *(f"validity_{c}.svg" for c in capabilities)]


def _table_human(table, failures):
    """The validity rows for the terminal (as :func:`replikit._calibration.format_table`):
    estimate ± MC SE, nominal, band (three decimals, signed for biases), n, claim, status —
    FAIL for a calibrated row outside its band, outside for a documented or invalid one."""
    import math

    import pandas as pd

    if table.empty:
        return "(no rows)"

    def num(v, signed):
        v = float(v)
        if not math.isfinite(v):
            return "n/a"
        return f"{v:+.3f}" if signed else f"{v:.3f}"

    biased = table["quantity"].isin(("bias", "relative_bias")).tolist()
    inside = ((table["lower"].astype(float) <= table["estimate"].astype(float))
              & (table["estimate"].astype(float) <= table["upper"].astype(float))).tolist()
    failing = set(failures.index)
    show = pd.DataFrame({
        "capability": table["capability"].astype(str),
        "study": table["study"].astype(str),
        "method": table["method"].astype(str),
        "setting": table["setting"].astype(str),
        "quantity": table["quantity"].astype(str),
        "estimate ± MC SE": [f"{num(e, b)} ± {num(s, False)}" for e, s, b in
                             zip(table["estimate"], table["mc_se"], biased, strict=True)],
        "nominal": [num(v, b) for v, b in zip(table["nominal"], biased, strict=True)],
        "band": [f"[{num(lo, b)}, {num(hi, b)}]" for lo, hi, b in
                 zip(table["lower"], table["upper"], biased, strict=True)],
        "n": [int(v) for v in table["n_replications"]],
        "claim": table["claim"].astype(str),
        "status": ["FAIL" if i in failing else ("ok" if ok else "outside")
                   for i, ok in zip(table.index, inside, strict=True)],
    })
    if show["capability"].nunique() == 1:
        show = show.drop(columns="capability")
    return frame_table(show, no_wrap=("estimate ± MC SE", "nominal", "band"))


def _summary(table, failures) -> str:
    calibrated = int((table["claim"] == "calibrated").sum())
    if failures.empty:
        return (f"{len(table)} rows; all {calibrated} calibrated rows lie within their "
                "tolerance bands.")
    names = "\n".join(f"  {r.capability} {r.study}: {r.method} ({r.setting}) {r.quantity} "
                       f"{r.estimate:.3f} outside [{r.lower:.3f}, {r.upper:.3f}]"
                       for r in failures.itertuples(index=False))
    return (f"{len(table)} rows; {len(failures)} of {calibrated} calibrated rows lie outside "
            f"their tolerance bands:\n{names}")


def simulate_validity_cmd(
    size: Annotated[Size, typer.Option("--size", help="small: the reduced studies the test "
                                       "suite runs (seconds to a minute); full: the sizes of "
                                       "docs/validity.md (minutes).")] = Size.full,
    capabilities: Annotated[str | None, typer.Option(
        "--capabilities", help="Comma-separated capabilities to run (replicate, compare, "
        "generalize, multistudy, resampling: those that ship a validity study), or all "
        "(default).")] = None,
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for validity.csv and "
                                             "one validity_<capability>.svg per "
                                             "capability.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace validity.csv and the "
                                            "SVGs in --out.")] = False,
) -> None:
    """Rerun the calibration studies: coverage, size and bias of every interval, test and
    estimator against its nominal value (docs/validity.md).

    Each row is a Monte-Carlo rate (or bias) ± its SE, the nominal value and the tolerance
    band; a row replikit claims calibrated is FAIL when it leaves its band, a documented or
    invalid row is shown as it is. The global --format json prints the rows as JSON.
    """
    from .._calibration import check_table, stack_tables

    available = providers()
    chosen = _select(capabilities, available)
    if out is not None:  # before any work
        from .._outputs import check_output_dir

        check_output_dir(out, output_names(chosen), option="--out", overwrite=overwrite)
    tables = []
    with progress("validity studies", total=len(chosen)) as advance:
        for i, capability in enumerate(chosen, 1):
            step = f"[{i}/{len(chosen)}] {capability}"
            info(f"{step}: validity study, size {size.value} ...")
            advance.step(f"validity studies: {capability}")
            start = time.perf_counter()
            table = available[capability](size=size.value, random_state=random_state,
                                          n_jobs=n_jobs)
            advance()
            table = stack_tables([table])
            failing = len(check_table(table))
            info(f"{step}: {len(table)} rows in {time.perf_counter() - start:.1f} s"
                 + (f"; {failing} calibrated row(s) outside their band" if failing else ""))
            tables.append(table)
    table = stack_tables(tables)
    failures = check_table(table)
    if out is not None:
        from .._calibration import plot_validity
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg

        write_csv_atomic(out / "validity.csv", table)
        for capability, part in zip(chosen, tables, strict=True):
            save_svg(plot_validity(part)[0].figure, out / f"validity_{capability}.svg")
        info(f"Wrote {', '.join(output_names(chosen))} to {out}/")
    if not failures.empty:
        info(f"warning: {len(failures)} calibrated row(s) outside their tolerance band.")
    emit([_table_human(table, failures), "", _summary(table, failures)],
         {"size": size.value, "random_state": random_state, "capabilities": chosen,
          "n_failures": len(failures), "rows": table})


def register(app: typer.Typer) -> None:
    simulate_app.command("validity", epilog=epilog(
        examples=["replikit simulate validity --size small",
                  "replikit simulate validity --capabilities replicate --out validity/"],
        note="What each row means, and every study's settings and claims: docs/validity.md "
             "(each capability's validity module names the papers its methods rest on).",
    ))(simulate_validity_cmd)
