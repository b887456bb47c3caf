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
from typing import Any

from .. import __version__
from .._compat import dropped
from .._labels import Abbreviations, shortened
from .._outputs import check_output_dir, write_text_atomic
from .._plotting import figures_later, off_pyplot
from .._references import bibtex_for
from .._threads import single_blas, usable_cores
from ..data.examples import load_example
from ..data.userdata import Dataset
from ..errors import ModelFitError, NotApplicableError, ParameterError, ReplikitError
from ..results import Result, to_jsonable
from .blocks import Callout, SectionOutput
from .context import AuditContext, parse_tolerances
from .fits import fit_log, fit_seconds, release_after
from .inputs import AuditInput
from .preflight import preflight
from .progress import make_progress
from .render import cited_keys, render_html, render_json
from .sections import discover_sections
from .summary import SCHEMA_VERSION, section_card, summary_cards

__all__ = ["run_audit", "compute_audit", "Audit", "AuditReport", "example_dataset",
           "default_jobs", "REPORT_FILES", "label_abbreviations"]

REPORT_FILES = ("report.html", "report.json", "references.bib")
#: Most worker processes the audit starts by default.
MAX_DEFAULT_JOBS = 8
#: Core-seconds of the fits the workers would share, and fits, below which the audit fits
#: them in its own process by default: starting a worker (a Python process importing
#: scikit-learn and replikit) costs about 2 s of a core, more than parallel fits of a small
#: table save (a 4-study, 320-row quick audit, about 10 core-seconds of fits: 19.6 s on 2
#: workers, 17.0 s in one process). The count guards what the cost model may still miss on
#: hundreds of fits of tiny studies. (The threshold was 6.0 while the cost model left out
#: scikit-learn's fixed work per fit and per tree, about half of such fits' cost.)
WORKERS_FROM_SECONDS, WORKERS_FROM_FITS = 12.0, 200


def default_jobs(budget=None) -> int:
    """Worker processes of an audit by default: the CPU cores this process may use (at most
    :data:`MAX_DEFAULT_JOBS`), or 1 (the audit's own process) when its time plan ``budget``
    (:func:`~replikit.report.preflight.audit_budget`) gives the workers less than
    :data:`WORKERS_FROM_SECONDS` of fits and fewer than :data:`WORKERS_FROM_FITS` fits. The
    numbers do not depend on it (every fit draws from its own random state), so either
    choice is safe."""
    if (budget is not None and budget.worker_seconds < WORKERS_FROM_SECONDS
            and budget.fits < WORKERS_FROM_FITS):
        return 1
    return usable_cores(MAX_DEFAULT_JOBS)


@dataclass(frozen=True)
class AuditReport(Result):
    """What :func:`run_audit` wrote: the report's files and every section's output.

    In a notebook the report shows its summary cards (one per question, with the verdict, the
    key number and its interval); ``to_frame()`` has one row per section with its verdict.

    Attributes
    ----------
    html_path : pathlib.Path
        The self-contained HTML report.
    json_path : pathlib.Path
        Its JSON twin (every number the report shows).
    sections : list of SectionOutput
        Every section that was run, in report order, the skipped ones included.
    skipped : list of SectionOutput
        The sections that could not run on these data, each with its reason and advice.
    seconds : float
        Wall time of the audit.
    bib_path : pathlib.Path or None
        ``references.bib``: the BibTeX of the papers behind the methods used.
    labels : dict
        The input's labels longer than :data:`replikit._labels.MAX_LABEL` characters, each
        short form (as the cards and the HTML show it) -> the label (``meta['labels']``).

    See Also
    --------
    run_audit : Runs the audit and returns this.
    SectionOutput : One section's blocks and numbers.

    Examples
    --------
    >>> from replikit.results import Verdict
    >>> v = Verdict("lr is better than dummy.", "ROC AUC", "good", 0.12, 0.08, 0.16,
    ...             label="best minus runner-up, ROC AUC")
    >>> report = AuditReport(Path("report.html"), Path("report.json"), [
    ...     SectionOutput("compare", "Model comparisons", data={"verdict": v.to_dict()})])
    >>> report.to_frame()[["section", "state", "label", "estimate"]]
      section state                          label  estimate
    0 compare  good  best minus runner-up, ROC AUC      0.12
    >>> print(report)  # doctest: +NORMALIZE_WHITESPACE
    Replicability audit (report.html)
    [holds up] Are the differences between the models real?
      lr is better than dummy.
      best minus runner-up, ROC AUC: 0.12 [0.08, 0.16]
    """

    html_path: Path
    json_path: Path
    sections: list[SectionOutput]
    skipped: list[SectionOutput] = field(default_factory=list)
    seconds: float = 0.0
    bib_path: Path | None = None
    labels: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        """``'Replicability audit'``."""
        return "Replicability audit"

    @property
    def cards(self) -> list[dict[str, Any]]:
        """The summary cards (the JSON twin's ``summary.cards``): one per question, long labels
        shortened as in the report."""
        return Abbreviations.from_lookup(self.labels).apply_deep(summary_cards(self.sections),
                                                                 keep_exact=True)

    def to_frame(self):
        """One row per section: its state and verdict.

        Returns
        -------
        pandas.DataFrame
            Columns ``section, title, state, sentence, label, metric, estimate, ci_low,
            ci_high, caveat``; ``state`` is ``good``, ``warn``, ``bad``, ``info`` (nothing to
            judge) or ``skipped`` (then ``sentence`` is the reason).
        """
        return _cards_frame(self.sections)

    def to_dict(self) -> dict[str, Any]:
        """The files, the summary cards and every section's JSON (as in ``report.json``).

        Returns
        -------
        dict
            ``html_path, json_path, bib_path, seconds, summary, sections`` in plain JSON types.
        """
        return to_jsonable({
            "html_path": str(self.html_path), "json_path": str(self.json_path),
            "bib_path": None if self.bib_path is None else str(self.bib_path),
            "seconds": self.seconds, "summary": self.cards,
            "sections": [s.json() for s in self.sections]})

    def __str__(self) -> str:
        from .summary import card_lines

        lines = [f"{self.title} ({self.html_path})"]
        for card in self.cards:
            lines += card_lines(card)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from .render import render_cards

        return render_cards(self.cards, title=self.title, path=str(self.html_path))


def _cards_frame(sections):
    """One row per section: its state and verdict (the summary card's fields)."""
    import pandas as pd

    rows = []
    for s in sections:
        card = section_card(s, s.title)
        rows.append({"section": s.key, "title": s.title, "state": card["state"],
                     "sentence": card["sentence"], "label": card["label"] or "",
                     "metric": card["metric"] or "", "estimate": card["estimate"],
                     "ci_low": card["ci_low"], "ci_high": card["ci_high"],
                     "caveat": card["caveat"] or ""})
    frame = pd.DataFrame(rows, columns=["section", "title", "state", "sentence", "label",
                                        "metric", "estimate", "ci_low", "ci_high", "caveat"])
    numbers = ["estimate", "ci_low", "ci_high"]
    frame[numbers] = frame[numbers].astype(float)  # a missing number is NaN
    return frame


def example_dataset(name: str = "anes") -> Dataset:
    """A built-in example, ready to audit.

    Parameters
    ----------
    name : {'anes', 'nwtco', 'exam'}, default 'anes'
        ``'anes'``: the American National Election Studies' feeling thermometers over ten
        survey years; ``'nwtco'``: Wilms' tumour relapses in two trials (imbalanced classes);
        ``'exam'``: exam scores of pupils in 65 schools (see
        :func:`replikit.data.examples.load_example`).

    Returns
    -------
    Dataset
        Features, target, study labels, description and citation.

    See Also
    --------
    run_audit : Audits it.
    replikit.data.examples.load_example : The example as its parts.

    Examples
    --------
    >>> ds = example_dataset("nwtco")
    >>> ds.task, ds.n_studies
    ('survival', 2)
    """
    ex = load_example(name)
    classes = tuple(sorted(ex.y.unique().tolist())) if ex.task == "classification" else ()
    return Dataset(ex.name, ex.X, ex.y, ex.study, ex.task, ex.n_dropped, ex.description,
                   ex.citation, classes=classes, event=ex.event)


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


def _not_for_entry(section, source) -> SectionOutput:
    """A section the audit's entry cannot feed: skipped, naming what to supply."""
    return SectionOutput(section.key, section.title,
                         skipped=f"Not answerable from {source.label} ({source.flag}).",
                         advice=f"supply {section.needs}." if section.needs else
                         "audit a data table (--data) for this section.")


def _run_section(section, ctx, wanted, debug, timings, outputs, on_skip) -> None:
    """Build one section in isolation: a failure becomes a skipped section."""
    if wanted is not None and section.key not in wanted:
        return
    t_section = time.perf_counter()
    left_out: list[tuple[str, str]] = []
    build = section.builder(ctx.entry)
    if build is None:  # the entry does not hold what this section reads: say what would
        output = _not_for_entry(section, ctx.source)
        timings[section.key] = 0.0
        outputs.append(output)
        if on_skip is not None:
            on_skip(output)
        return
    say = getattr(ctx.progress, "line", None)  # plain progress lines (LineProgress)
    if say is not None:
        say(f"section {section.key} ({section.title}): started")
    engine_notes = getattr(ctx.engine, "memory_notes", [])
    noted = len(engine_notes)
    while True:
        try:
            with warnings.catch_warnings():
                # fit-time noise (convergence, undefined metrics) belongs in the report, not
                # interleaved with the progress bars
                warnings.simplefilter("ignore")
                output = build(ctx)
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
            cache = ctx._cache
            ctx = dataclasses.replace(ctx, models=kept)
            ctx._cache = cache
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
    _memory_callout(output, engine_notes[noted:])
    timings[section.key] = round(time.perf_counter() - t_section, 2)
    if say is not None:
        say(f"section {section.key}: {'skipped' if output.skipped else 'done'} in "
            f"{timings[section.key]:.1f} s")
    outputs.append(output)
    if output.skipped and on_skip is not None:
        on_skip(output)


def _memory_callout(output, notes) -> None:
    """What the engine did during a section to stay within its memory goal (fewer fits at
    once: :meth:`replikit.experiment.engine.Engine.map`), on the section's card and in its
    JSON, unless the section's own notes say it already."""
    if output.skipped or not notes:
        return
    data = output.data if isinstance(output.data, dict) else None
    own = " ".join(str(t) for t in (data or {}).get("notes", []))
    new = [t for t in notes if t not in own]
    if not new:
        return
    output.blocks.append(Callout("To stay within memory: " + "; ".join(new) + " (the numbers "
                                 "are the same, only slower).", "info"))
    if data is not None:
        data["memory_notes"] = list(new)


@dropped("out_option", "overwrite_option")
def run_audit(dataset: Dataset, out_dir: str | os.PathLike = "replikit-audit", *,
              models: dict | None = None, random_state: int | None = None,
              n_jobs: int | None = None,
              quick: bool = False, sections: list[str] | None = None,
              progress: bool = False, overwrite: bool = False, debug: bool = False,
              command: str | None = None,
              on_skip: Callable[[SectionOutput], None] | None = None,
              moderators: list[str] | tuple[str, ...] | None = None,
              tolerances: dict | None = None, backend: str | None = None, client=None,
              store=None, clear_store: bool = False) -> AuditReport:
    """Run the audit on ``dataset`` and write the report.

    Every section (:func:`discover_sections`) runs in isolation: one that does not apply to
    the data, or fails, is reported as skipped with its reason while the others are kept. Three
    files are written to ``out_dir``: ``report.html`` (self-contained: summary cards, one
    section per question, Methods and References, Reproduce), its JSON twin ``report.json``
    and ``references.bib`` (the BibTeX of the methods used).

    Parameters
    ----------
    dataset : Dataset
        The data (see :func:`replikit.data.userdata.load_dataset` and
        :func:`example_dataset`).
    out_dir : path-like, default 'replikit-audit'
        Directory for the files (created if needed). Existing report files in it are refused
        before any work unless ``overwrite``; other files are never touched.
    models : dict, optional
        Name -> scikit-learn estimator; by default
        :func:`replikit.experiment.models.default_models` of the task (linear model, lasso,
        random forest, gradient boosting, k nearest neighbours, baseline; with ``quick``:
        linear model, random forest, baseline).
    random_state : int, optional
        The same value gives the same numbers. ``None`` draws fresh entropy and records it in
        the report (``meta.random_state``), so the run can still be repeated.
    n_jobs : int, optional
        Worker processes for the fits (joblib). Default: one per CPU core, at most
        :data:`MAX_DEFAULT_JOBS`, or the audit's own process when the fits are too few to
        repay starting workers (:func:`default_jobs`). The numbers are bit-identical whatever
        the value.
    quick : bool, default False
        Fewer resamples (for previews and tests); stamped in the report and its JSON.
    sections : list of str, optional
        Keys of the sections to run (default: all).
    progress : bool or {'bar', 'lines'}, default False
        A progress bar per stage on stderr (``True`` or ``'bar'``), or plain progress lines
        (``'lines'``: for a log file or a job queue, :class:`~replikit.report.progress.
        LineProgress`).
    overwrite : bool, default False
        Replace existing report files in ``out_dir``.
    debug : bool, default False
        Let a failing section raise instead of reporting it as skipped.
    command : str, optional
        The command line that produced the report (shown in its Reproduce block).
    on_skip : callable, optional
        Called with each skipped section as soon as it is known (the command line prints one
        warning line per skipped section).
    moderators : list of str, optional
        Study-level columns for the replication section's meta-regression of the study
        estimates (default: the columns constant within every study, found and listed).
    tolerances : dict, optional
        Practical tolerances the lights are judged against, by section: ``{"multistudy":
        "10%", "replicate": 0.05, "compare": 0.01, "generalize": 0.05}`` (a number in the
        section's units, or a percentage of the pooled loss for ``multistudy``). A section
        without one uses its documented default, stated on its card (docs/audit.md, "The
        lights").
    backend : {'serial', 'joblib', 'dask'}, optional
        Where the fits run (see :func:`compute_audit`).
    client : dask.distributed.Client or str, optional
        A Dask client or scheduler address: every fit runs on that cluster.
    store : path-like, optional
        A DuckDB file keeping every finished fit: the audit resumes after an interruption.
    clear_store : bool, default False
        Delete the results in ``store`` and start afresh.

    Returns
    -------
    AuditReport
        The paths written and every section's output; in a notebook it shows the summary
        cards.

    Raises
    ------
    OutputExistsError, OutputError
        The report files exist (and ``overwrite`` is false) or cannot be written — checked
        before any work.
    DataError
        The data cannot support any audit (too few rows, a class with one row): checked
        before any work.

    See Also
    --------
    example_dataset : A built-in dataset to audit.
    AuditReport : What is returned.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> import pandas as pd
    >>> from replikit.data.userdata import dataset_from_frame
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=40), "site": ["a", "b"] * 20})
    >>> df["y"] = df["x"] + rng.normal(size=40)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report = run_audit(dataset_from_frame(df, target="y", study="site"), d,
    ...                        sections=["overview"], random_state=0)
    ...     print(report.html_path.name, report.json_path.exists())
    report.html True
    """
    out = check_output_dir(out_dir, REPORT_FILES, option="out_dir", overwrite=overwrite,
                           overwrite_option="`overwrite`")
    result = compute_audit(dataset, models=models, random_state=random_state, n_jobs=n_jobs,
                           quick=quick, sections=sections, progress=progress, debug=debug,
                           command=command, on_skip=on_skip, moderators=moderators,
                           tolerances=tolerances, backend=backend, client=client, store=store,
                           clear_store=clear_store)
    return result.save(out, overwrite=True)


def compute_audit(source, *, models: dict | None = None, random_state: int | None = None,
                  n_jobs: int | None = None, quick: bool = False,
                  sections: list[str] | None = None, progress: bool = False,
                  debug: bool = False, command: str | None = None,
                  on_skip: Callable[[SectionOutput], None] | None = None,
                  moderators: list[str] | tuple[str, ...] | None = None,
                  tolerances: dict | None = None, backend: str | None = None,
                  client=None, store=None, clear_store: bool = False) -> Audit:
    """Run every section on ``source`` (a Dataset or an :class:`AuditInput`) and return the
    result, writing nothing (:meth:`Audit.save` writes it).

    Parameters
    ----------
    source : Dataset or AuditInput
        What to audit (:func:`replikit.report.audit_input` reads any entry level).
    models : dict, optional
        With data: name -> scikit-learn estimator (default: the audit's line-up).
    random_state : int, optional
        The same value gives the same numbers; ``None`` draws fresh entropy (recorded).
    n_jobs : int, optional
        Worker processes for the fits (default: one per core, at most 8; the audit's own
        process when its fits are few, :func:`default_jobs`).
    quick : bool, default False
        Fewer resamples (a preview).
    sections : list of str, optional
        Keys of the sections to run (default: all).
    progress : bool or {'bar', 'lines'}, default False
        Progress bars on stderr, or plain lines (``'lines'``).
    debug : bool, default False
        Let a failing section raise instead of reporting it as skipped.
    command : str, optional
        The command line that produced the audit (shown in the report's Reproduce block).
    on_skip : callable, optional
        Called with each skipped section as soon as it is known.
    moderators : list of str, optional
        Study-level columns for the replication section's meta-regression.
    tolerances : dict, optional
        Practical tolerances of the lights by section (see :func:`run_audit`).
    backend : {'serial', 'joblib', 'dask'}, optional
        Where every fit of every section runs (default: 'dask' with ``client``, else 'joblib'
        with ``n_jobs`` > 1, else 'serial'); the numbers do not depend on it.
    client : dask.distributed.Client or str, optional
        A Dask client or a scheduler address: every fit goes to that cluster.
    store : path-like, optional
        A DuckDB file of replikit's own (:mod:`replikit.experiment.store`) keeping every
        finished fit of every section: the same audit started again after an interruption
        (even SIGKILL) refits nothing it finished and gives the same numbers. The store
        belongs to one audit (a fingerprint of the data and the settings); another is refused.
        Needs an int ``random_state``; the data entry only (the others fit nothing).
    clear_store : bool, default False
        Delete the results in ``store`` (replikit's tables only) and start afresh.

    Returns
    -------
    Audit
        The cards and every section's output.

    See Also
    --------
    replikit.audit : Reads an entry and runs this.
    run_audit : Runs this and writes the report.

    Examples
    --------
    >>> import pandas as pd
    >>> from replikit.report import audit_input
    >>> table = pd.DataFrame({"dataset": ["d1", "d2", "d3"], "lr": [0.8, 0.7, 0.9],
    ...                       "rf": [0.82, 0.69, 0.93]})
    >>> result = compute_audit(audit_input(benchmark=table), sections=["overview"])
    >>> result.sections[0].title, result.meta["entry"]
    ('What was audited', 'benchmark')
    """
    if isinstance(source, Dataset):
        source = AuditInput("data", source.name, dataset=source, task=source.task)
    elif not isinstance(source, AuditInput):
        raise ParameterError("the audit takes a Dataset or an AuditInput (see "
                             f"replikit.audit); got {type(source).__name__}.")
    tolerances = parse_tolerances(tolerances)
    if sections is not None:
        known = [s.key for s in discover_sections()]
        unknown = [s for s in sections if s not in known]
        if unknown:
            raise ParameterError(f"`sections`: unknown section(s) {unknown}; available: "
                                 f"{', '.join(known)}.")
    start = time.perf_counter()
    if store is not None and not isinstance(random_state, int):
        raise ParameterError("`random_state`: a store needs a fixed int so that the audit "
                             f"started again resumes; got {random_state!r}.")
    if random_state is None:  # fresh entropy, recorded so that the report can be reproduced
        import numpy as np

        random_state = int(np.random.SeedSequence().entropy)
    dataset = source.dataset
    budget = None
    if dataset is not None:  # one line-up for every section, sized to the time budget
        # (docs/performance.md), and the work the workers would share
        from .preflight import audit_budget

        budget = audit_budget(dataset, models, quick=quick)
        models = budget.models
    if n_jobs is None:  # a small audit fits in its own process (unless a backend is named)
        n_jobs = default_jobs(budget if backend is None and client is None else None)
    plan = preflight(dataset, models) if dataset is not None else None
    engine = _engine(source, models, random_state, n_jobs, quick, sections, moderators,
                     tolerances, backend, client, store, clear_store)
    ctx = AuditContext(dataset=dataset, models=models, random_state=random_state,
                       n_jobs=n_jobs, quick=quick, progress=make_progress(progress), plan=plan,
                       moderators=tuple(moderators) if moderators is not None else None,
                       tolerances=tolerances, source=source, engine=engine)
    outputs: list[SectionOutput] = []
    timings: dict[str, float] = {}
    # labels longer than MAX_LABEL characters are shortened in the figures, the HTML and the
    # terminal, whole in the JSON's values (meta["labels"] maps each short form to its label)
    labels = label_abbreviations(source, models)
    # the thread policy (replikit._threads): small matrices, many fits; the report's figures
    # are drawn outside pyplot (a notebook shows the cards, not every figure)
    try:
        # the figures are drawn in a thread of their own while the fits go on (figures_later);
        # both threads enter and leave warnings.catch_warnings (a fit, matplotlib's
        # rc_context), whose global state they may then restore out of order: the outer one,
        # left once the figures are drawn, puts back the caller's filters and display
        with warnings.catch_warnings(), single_blas(), off_pyplot(), shortened(labels), \
                figures_later():
            for section in discover_sections():
                _run_section(section, ctx, sections, debug, timings, outputs, on_skip)
                release_after(ctx, section.key, sections)
            _drawn(outputs, debug)
    finally:
        engine.close()
    seconds = time.perf_counter() - start
    meta = {
        "dataset_name": source.name, "entry": source.kind, "entry_label": source.label,
        "entry_notes": list(source.notes), "replikit_version": __version__,
        "random_state": random_state,
        "n_rows": None if dataset is None else len(dataset.y),
        "n_studies": source.n_studies, "task": source.task, "quick": quick,
        "primary_metric": ctx.metric,
        "primary_metric_label": plan.metric_label if plan is not None else _metric_label(ctx),
        "primary_metric_rule": plan.primary_metric_rule if plan is not None else None,
        "data_notes": list(plan.notes) if plan is not None else [],
        "command": command, "seconds": round(seconds, 1), "section_seconds": timings,
        "sections_skipped": [s.key for s in outputs if s.skipped],
        "versions": _versions(), "references": cited_keys(outputs),
        "schema_version": SCHEMA_VERSION, "fit_sets": fit_log(ctx),
        "fit_seconds": fit_seconds(ctx), "labels": labels.lookup(),
    }
    return Audit(meta, outputs, seconds)


def label_abbreviations(source, models: dict | None = None) -> Abbreviations:
    """The short forms of the input's long labels: its studies, models, columns and classes
    (:meth:`AuditInput.labels`) and the audit's model names, each longer than
    :data:`replikit._labels.MAX_LABEL` characters cut to that many, distinct."""
    if isinstance(source, Dataset):
        source = AuditInput("data", source.name, dataset=source, task=source.task)
    return Abbreviations([*source.labels(), *(models or {})])


def _drawn(outputs: list[SectionOutput], debug: bool) -> None:
    """Put each section's rendered figures in place of their futures (:func:`svg_later`); a
    figure that could not be drawn becomes a sentence saying so (or raises with ``debug``)."""
    from concurrent.futures import Future

    from .blocks import Figure, Paragraph

    for out in outputs:
        for i, block in enumerate(out.blocks):
            if isinstance(block, Figure) and isinstance(block.svg, Future):
                try:
                    out.blocks[i] = dataclasses.replace(block, svg=block.svg.result())
                except Exception as exc:  # noqa: BLE001 - a figure never sinks the report
                    if debug:
                        raise
                    out.blocks[i] = Paragraph(
                        f"(A figure could not be drawn: {type(exc).__name__}: {exc}. "
                        f"Caption: {block.caption})")


def audit_fingerprint(source: AuditInput, models, random_state, quick, sections, moderators,
                      tolerances) -> dict:
    """What an audit's numbers depend on: the data (a hash of the table) and every setting.
    A store of the audit (``store=``) belongs to this; another audit is refused with what
    differs."""
    from ..experiment.engine import data_fingerprint
    from ..experiment.runner import _model_params

    d = source.dataset
    return {"kind": "audit", "entry": source.kind,
            "data": data_fingerprint(d.X, d.y, d.study) if d is not None else None,
            "models": {k: _model_params(v) for k, v in (models or {}).items()},
            "random_state": str(random_state), "quick": bool(quick),
            "sections": None if sections is None else sorted(sections),
            "moderators": None if moderators is None else list(moderators),
            "tolerances": {k: repr(v) for k, v in sorted((tolerances or {}).items())}}


def _engine(source, models, random_state, n_jobs, quick, sections, moderators, tolerances,
            backend, client, store, clear_store):
    """The audit's one engine (checked before any work): backend, cluster and store."""
    from ..experiment.engine import Engine, spec_hash

    if backend is None:
        backend = "dask" if client is not None else "joblib" if n_jobs > 1 else "serial"
    if clear_store and store is None:
        raise ParameterError("`clear_store` needs `store` (the store to clear).")
    task_store = None
    if store is not None:
        from ..experiment.store import TaskStore, check_store

        if source.kind != "data":
            raise ParameterError(f"`store` keeps the fits of an audit of data; the audit of "
                                 f"{source.label} fits no models, so there is nothing to "
                                 "store.")
        check_store(store, clear=clear_store)
        owner = audit_fingerprint(source, models, random_state, quick, sections, moderators,
                                  tolerances)
        task_store = TaskStore(store, owner, spec_hash(owner), clear=clear_store)
    try:
        return Engine(backend, n_jobs if backend != "serial" else None, client, task_store)
    except BaseException:
        if task_store is not None:
            task_store.close()
        raise


def _metric_label(ctx) -> str | None:
    from ..experiment.metrics import METRIC_LABELS

    m = ctx.metric
    return None if m is None else METRIC_LABELS.get(m, m)


@dataclass(frozen=True, repr=False)
class Audit(Result):
    """The audit's answers: one summary card per question and every section's detail.

    Returned by :func:`replikit.audit`. In a notebook it shows its cards (the verdict, the key
    number with its interval, the tolerance and the main caveat); :meth:`save` writes the
    self-contained HTML report, its JSON twin and the BibTeX of the methods used.

    Attributes
    ----------
    meta : dict
        What was audited and how: the entry level, the input, the random state, the versions.
    sections : list of SectionOutput
        Every section, in report order, the skipped ones included (with their reason).
    seconds : float
        Wall time of the audit.

    See Also
    --------
    replikit.audit : Runs it.
    AuditReport : What :meth:`save` returns.

    Examples
    --------
    >>> from replikit.results import Verdict
    >>> v = Verdict("lr is better than dummy.", "ROC AUC", "good", 0.12, 0.08, 0.16,
    ...             label="best minus runner-up, ROC AUC", tolerance="±0.01")
    >>> a = Audit({"dataset_name": "demo"}, [
    ...     SectionOutput("compare", "Model comparisons", data={"verdict": v.to_dict()})])
    >>> [c["state"] for c in a.cards], a.to_frame()["estimate"].tolist()
    (['good'], [0.12])
    """

    meta: dict[str, Any]
    sections: list[SectionOutput]
    seconds: float = 0.0

    @property
    def title(self) -> str:
        """``'Replicability audit: <input>'``."""
        return f"Replicability audit: {self.meta.get('dataset_name', '')}".rstrip(": ")

    @property
    def cards(self) -> list[dict[str, Any]]:
        """The summary cards (the JSON twin's ``summary.cards``): one per question, long labels
        shortened as in the report."""
        return Abbreviations.from_lookup(self.meta.get("labels")).apply_deep(
            summary_cards(self.sections), keep_exact=True)

    @property
    def skipped(self) -> list[SectionOutput]:
        """The sections that could not run here, each with its reason and advice."""
        return [s for s in self.sections if s.skipped]

    def section(self, key: str) -> SectionOutput:
        """One section's output by key (``'compare'``)."""
        for s in self.sections:
            if s.key == key:
                return s
        raise ParameterError(f"`key`: no section {key!r}; sections are "
                             f"{', '.join(s.key for s in self.sections)}.")

    def to_frame(self):
        """One row per section: its state and verdict (see :meth:`AuditReport.to_frame`)."""
        return _cards_frame(self.sections)

    def to_dict(self) -> dict[str, Any]:
        """The JSON twin: exactly what :meth:`save` writes to ``report.json``."""
        import json

        return json.loads(render_json(self.meta, self.sections))

    def save(self, directory: str | os.PathLike = "replikit-audit", *,
             overwrite: bool = False) -> AuditReport:
        """Write ``report.html``, ``report.json`` and ``references.bib`` to ``directory``.

        Parameters
        ----------
        directory : path-like, default 'replikit-audit'
            Created if needed. Existing report files are refused unless ``overwrite``; other
            files are never touched.
        overwrite : bool, default False
            Replace the report files.

        Returns
        -------
        AuditReport
            The paths written, with the sections.

        Raises
        ------
        OutputExistsError, OutputError
            The files exist (and ``overwrite`` is false) or cannot be written.
        """
        out = check_output_dir(directory, REPORT_FILES, option="directory",
                               overwrite=overwrite, overwrite_option="`overwrite`")
        html_path, json_path, bib_path = (out / name for name in REPORT_FILES)
        write_text_atomic(html_path, render_html(self.meta, self.sections))
        write_text_atomic(json_path, render_json(self.meta, self.sections))
        write_text_atomic(bib_path, bibtex_for(self.meta.get("references") or []))
        return AuditReport(html_path, json_path, self.sections, self.skipped, self.seconds,
                           bib_path, dict(self.meta.get("labels") or {}))

    def __repr__(self) -> str:
        from collections import Counter

        states = Counter(c["state"] for c in self.cards)
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(states.items()))
        return (f"Audit(input={self.meta.get('dataset_name')!r}, "
                f"entry={self.meta.get('entry')!r}, cards={{{shown}}})")

    def __str__(self) -> str:
        from .summary import card_lines

        lines = [self.title]
        for card in self.cards:
            lines += card_lines(card)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from .render import render_cards

        return render_cards(self.cards, title=self.title, path="")


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
