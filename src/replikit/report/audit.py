"""``replikit audit``: run every registered section on one dataset and write the report.

The audit never loses work to one section: each section runs in isolation, and one that cannot
run on the data (or fails) is written into the report as *skipped*, with the reason and what
the user can do, while every other section is kept. Only input errors found before any work
(bad paths, unusable data) stop the audit.
"""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from .._outputs import check_output_dir, write_text_atomic
from .._references import SECTION_REFERENCES, bibtex_for
from .._threads import single_blas, usable_cores
from ..data.examples import load_example
from ..data.userdata import Dataset
from ..errors import ModelFitError, NotApplicableError, ReplikitError
from .blocks import Callout, SectionOutput
from .context import AuditContext, Progress
from .fits import fit_log, fit_seconds
from .preflight import preflight
from .render import render_html, render_json
from .sections import discover_sections
from .summary import SCHEMA_VERSION

__all__ = ["run_audit", "AuditReport", "example_dataset", "default_jobs", "REPORT_FILES"]

REPORT_FILES = ("report.html", "report.json", "references.bib")
#: Most worker processes the audit starts by default.
MAX_DEFAULT_JOBS = 8


def default_jobs() -> int:
    """Worker processes of an audit by default: the CPU cores this process may use (at most
    :data:`MAX_DEFAULT_JOBS`). The numbers do not depend on it (every fit draws from its own
    seed), so using every core is safe."""
    return usable_cores(MAX_DEFAULT_JOBS)


@dataclass(frozen=True)
class AuditReport:
    html_path: Path
    json_path: Path
    sections: list[SectionOutput]
    skipped: list[SectionOutput] = field(default_factory=list)
    seconds: float = 0.0
    bib_path: Path | None = None


def example_dataset(name: str = "anes") -> Dataset:
    """A built-in example as a :class:`~replikit.data.userdata.Dataset`."""
    ex = load_example(name)
    classes = tuple(sorted(ex.y.unique().tolist())) if ex.task == "classification" else ()
    return Dataset(ex.name, ex.X, ex.y, ex.study, ex.task, ex.n_dropped, ex.description,
                   ex.citation, classes=classes)


def _skipped_output(section, exc: BaseException) -> SectionOutput:
    """A section that raised: reported as skipped, with the reason and what to do."""
    if isinstance(exc, NotApplicableError):
        reason, advice = str(exc), exc.advice or "leave this section out with --sections."
    elif isinstance(exc, ReplikitError):
        reason = str(exc)
        advice = ("Check the data against the requirement named above, or leave this section "
                  "out with --sections.")
    else:
        reason = f"it failed with an unexpected error ({type(exc).__name__}: {exc})"
        advice = ("This is a bug in replikit, not a problem with your data: please report it "
                  "with the command you ran; rerun with --debug for the traceback.")
    return SectionOutput(section.key, section.title, skipped=" ".join(reason.split()),
                         advice=advice)


def _run_section(section, ctx, wanted, debug, timings, outputs, on_skip) -> None:
    """Build one section in isolation: a failure becomes a skipped section."""
    if wanted is not None and section.key not in wanted:
        return
    t_section = time.perf_counter()
    left_out: list[tuple[str, str]] = []
    while True:
        try:
            with warnings.catch_warnings():
                # fit-time noise (convergence, undefined metrics) belongs in the report, not
                # interleaved with the progress bars
                warnings.simplefilter("ignore")
                output = section.build(ctx)
            break
        except ModelFitError as exc:
            # one model that cannot fit these data: the section goes on without it
            models = ctx.models or {}
            if debug or exc.model not in models or len(models) <= 2:
                if debug:
                    raise
                output = _skipped_output(section, exc)
                break
            left_out.append((exc.model, " ".join(str(exc).split())))
            kept = {k: v for k, v in models.items() if k != exc.model}
            # the cache is kept: the fit sets are keyed by the models they hold
            ctx = dataclasses.replace(ctx, models=kept)
        except Exception as exc:  # noqa: BLE001 — isolation is the point: keep the others
            if debug:
                raise
            output = _skipped_output(section, exc)
            break
    if left_out and not output.skipped:
        output.blocks.insert(0, Callout(
            "Left out of this section: " + "; ".join(f"{m} ({why})" for m, why in left_out)
            + ".", "warn"))
        if isinstance(output.data, dict):
            output.data["models_left_out"] = {m: why for m, why in left_out}
            verdict = output.data.get("verdict")
            if isinstance(verdict, dict):  # the summary card names it too
                verdict["caveats"] = [f"{', '.join(m for m, _ in left_out)} could not be "
                                      "fitted here and was left out"] + list(
                                          verdict.get("caveats") or [])
    timings[section.key] = round(time.perf_counter() - t_section, 2)
    outputs.append(output)
    if output.skipped and on_skip is not None:
        on_skip(output)


def run_audit(dataset: Dataset, out_dir: str | os.PathLike = "replikit-audit", *,
              models: dict | None = None, random_state: int | None = None,
              n_jobs: int | None = None,
              quick: bool = False, sections: list[str] | None = None,
              progress: bool = False, overwrite: bool = False, debug: bool = False,
              command: str | None = None, out_option: str = "out_dir",
              overwrite_option: str = "overwrite=True",
              on_skip: Callable[[SectionOutput], None] | None = None,
              moderators: list[str] | tuple[str, ...] | None = None) -> AuditReport:
    """Run the audit sections on ``dataset``; write ``report.html``, its JSON twin
    ``report.json`` and the BibTeX of the methods used, ``references.bib``.

    Parameters
    ----------
    dataset : Dataset
        The data (see :func:`replikit.data.userdata.load_dataset`).
    out_dir : path-like
        Directory for the two files (created if needed). Existing report files in it are
        refused before any work unless ``overwrite``; other files are never touched.
    models : dict, optional
        name -> estimator; by default :data:`replikit.experiment.models.DEFAULT_MODELS` (linear
        model, lasso, random forest, gradient boosting, k nearest neighbours, baseline), or
        ``QUICK_MODELS`` (linear model, random forest, baseline) when ``quick``.
    random_state : int, optional
        Root seed: the same seed gives the same report numbers. ``None`` draws fresh entropy and
        records it in the report (``meta.random_state``), so the run can still be repeated.
    n_jobs : int, optional
        Worker processes for the fits (joblib). Default: one per CPU core, at most
        :data:`MAX_DEFAULT_JOBS`. The report's numbers are bit-identical whatever the value.
    quick : bool
        Fewer resamples (for previews and tests); stamped in the report and its JSON.
    sections : list of str, optional
        Keys of the sections to run (default: all registered).
    overwrite : bool
        Replace an existing ``report.html``/``report.json`` in ``out_dir``.
    debug : bool
        Let a failing section raise instead of reporting it as skipped.
    command : str, optional
        The command line that produced the report (shown in its "Reproduce" line).
    on_skip : callable, optional
        Called with each skipped section as soon as it is known (the CLI prints one warning
        line per skipped section).
    moderators : list of str, optional
        Study-level columns for the replication section's meta-regression of the study
        estimates (default: the columns constant within every study, found and listed).

    Raises
    ------
    OutputExistsError, OutputError
        The report files exist (and ``overwrite`` is false) or cannot be written — checked
        before any work.
    DataError
        The data cannot support any audit (checked before any work; see
        :func:`replikit.report.preflight.preflight`).
    """
    out = check_output_dir(out_dir, REPORT_FILES, option=out_option, overwrite=overwrite,
                           overwrite_option=overwrite_option)
    start = time.perf_counter()
    if random_state is None:  # fresh entropy, recorded so that the report can be reproduced
        import numpy as np

        random_state = int(np.random.SeedSequence().entropy)
    if models is None:  # one line-up for every section (a preview uses fewer models)
        from ..experiment.models import default_models

        models = default_models(dataset.task, quick=quick)
    if n_jobs is None:
        n_jobs = default_jobs()
    plan = preflight(dataset, models)
    ctx = AuditContext(dataset=dataset, models=models, random_state=random_state,
                       n_jobs=n_jobs, quick=quick, progress=Progress(progress), plan=plan,
                       moderators=tuple(moderators) if moderators is not None else None)
    outputs: list[SectionOutput] = []
    timings: dict[str, float] = {}
    with single_blas():  # the thread policy (replikit._threads): small matrices, many fits
        for section in discover_sections():
            _run_section(section, ctx, sections, debug, timings, outputs, on_skip)
    seconds = time.perf_counter() - start
    ran = [s for s in outputs if not s.skipped]
    reference_keys = [k for s in ran for k in SECTION_REFERENCES.get(s.key, ())]
    meta = {
        "dataset_name": dataset.name, "replikit_version": __version__,
        "random_state": random_state, "n_rows": len(dataset.y), "n_studies": dataset.n_studies,
        "task": dataset.task, "quick": quick, "primary_metric": plan.primary_metric,
        "primary_metric_label": plan.metric_label,
        "primary_metric_rule": plan.primary_metric_rule, "data_notes": list(plan.notes),
        "command": command, "seconds": round(seconds, 1), "section_seconds": timings,
        "sections_skipped": [s.key for s in outputs if s.skipped],
        "versions": _versions(), "references": list(dict.fromkeys(reference_keys)),
        "schema_version": SCHEMA_VERSION, "fit_sets": fit_log(ctx),
        "fit_seconds": fit_seconds(ctx),
    }
    html_path, json_path, bib_path = (out / name for name in REPORT_FILES)
    write_text_atomic(html_path, render_html(meta, outputs))
    write_text_atomic(json_path, render_json(meta, outputs))
    write_text_atomic(bib_path, bibtex_for(reference_keys))
    return AuditReport(html_path, json_path, outputs, [s for s in outputs if s.skipped],
                       seconds, bib_path)


def _versions() -> dict[str, str]:
    """Versions of the libraries the numbers depend on (for the Reproduce block)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "pandas", "scikit-learn"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out
