"""``replikit audit``: the main job — a full replicability report on one dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._labels import escape_controls, names_list
from ._common import (
    EventOpt,
    RandomStateOpt,
    StudyOpt,
    TableOpt,
    TimeOpt,
    check_outcome_flags,
    emit,
    epilog,
    info,
    parameter_flags,
    state,
)

#: The examples of ``replikit audit --help`` (each a real command line, at most 76 characters).
EXAMPLES = (
    "replikit audit --quick --open",
    "replikit audit --data survey.csv --target score --study year --out audit",
    "replikit audit --scores bmr_scores.csv --out audit-scores",
    "replikit audit --example mlr3 --out audit-mlr3",
    "replikit audit --benchmark results_table.csv --lower-is-better",
    "replikit audit --estimates replications.csv --tolerance replicate=0.05",
)
#: The papers the audit's five questions rest on (the report lists every one it used).
REFERENCES = ("etherington2019", "verbyla1989", "gardner2017", "vijayakumar2021",
              "parmigiani2023", "matteucci2024")
_SECTIONS = "overview, resampling, compare, replicate, multistudy, generalize"


def audit(
    data: Annotated[Path | None, typer.Option("--data", help="Your table (CSV, Parquet, DuckDB); "
                                              "omit to audit the built-in ANES example.")] = None,
    target: Annotated[str | None, typer.Option("--target", help="Outcome column.")] = None,
    time: TimeOpt = None,
    event: EventOpt = None,
    study: StudyOpt = None,
    table: TableOpt = None,
    example: Annotated[str, typer.Option("--example", help="Built-in input when no other is "
                                         "given: a dataset (anes, nwtco, exam; survival: "
                                         "nwtco, breast, uis, lung; nwtco_binary) or the shipped "
                                         "sample of an entry (scores, mlr3, weka, predictions, "
                                         "benchmark, demsar, estimates).")] = "anes",
    moderator: Annotated[list[str] | None, typer.Option(
        "--moderator", help="Study-level column for the replication section's meta-regression "
        "(repeat or comma-separate; default: columns constant within every study).")] = None,
    models: Annotated[str | None, typer.Option("--models", help="Comma-separated model aliases "
                                               "(lr, ridge, lasso, enet, lda, rf, gb, svm, mlp, "
                                               "knn, tree, dummy; default lr,lasso,rf,gb,knn,"
                                               "dummy, with --quick lr,rf,dummy) or "
                                               "scikit-learn estimators by import path, "
                                               "package.module:Name.")] = None,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("replikit-audit"),
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace report.html and "
                                            "report.json if --out already holds them.")] = False,
    task: Annotated[str | None, typer.Option("--task", help="regression or classification "
                                             "(default: inferred from the target).")] = None,
    random_state: RandomStateOpt = 0,
    n_jobs: Annotated[int | None, typer.Option(
        "--n-jobs", "-j", min=1, help="Worker processes (default: one per CPU core, at most 8; "
        "the numbers do not depend on it).")] = None,
    quick: Annotated[bool, typer.Option(
        "--quick", help="Fewer resamples and models, a 50-tree forest: a fast preview.")] = False,
    sections: Annotated[str | None, typer.Option(
        "--sections", help=f"Comma-separated sections to run (default: all): {_SECTIONS}.")]
    = None,
    tolerance: Annotated[list[str] | None, typer.Option(
        "--tolerance", help="Practical tolerance a light is judged against, as SECTION=VALUE "
        "(repeatable): multistudy=10% (of the pooled loss) or a number in the metric's units, "
        "replicate=0.05 (R²), compare=0.01 (the metric), generalize=0.05. A bare VALUE is the "
        "multistudy tolerance. Default: each section's documented default, stated on its "
        "card.")] = None,
    scores: Annotated[Path | None, typer.Option(
        "--scores", help="Audit per-fold scores instead of data: the Scores layout (study, "
        "model, [repeat,] fold, metric, value[, n_train, n_test]), an mlr3 bmr$score() export "
        "or a Weka Experimenter CSV (recognised from their columns).")] = None,
    predictions: Annotated[Path | None, typer.Option(
        "--predictions", help="Audit out-of-fold predictions: study, model, repeat, fold, row, "
        "y_true, y_pred[, proba_CLASS].")] = None,
    benchmark: Annotated[Path | None, typer.Option(
        "--benchmark", help="Audit a benchmark table: one score per model and dataset, long "
        "or wide (a paper's table, an OpenML study).")] = None,
    estimates: Annotated[Path | None, typer.Option(
        "--estimates", help="Audit reported estimates: one row per study (or per effect: "
        "several rows of a study are pooled by a multilevel model), a column named by its "
        "metric (r2, r, auc, accuracy or estimate) with n, or se / variance; the original "
        "marked by a role column or --original.")] = None,
    columns: Annotated[str | None, typer.Option(
        "--columns", help="With --scores, --predictions, --benchmark or --estimates in another "
        "layout: ENTRY_COLUMN=FILE_COLUMN pairs, e.g. study=dataset,model=learner.")] = None,
    n_folds: Annotated[int | None, typer.Option(
        "--n-folds", min=2, help="With --scores from an mlr3 export of repeated_cv: the folds "
        "per repeat.")] = None,
    scheme: Annotated[str | None, typer.Option(
        "--scheme", help="With --scores (or --predictions) that do not record n_train/n_test: "
        "kfold (each repeat splits the rows into the folds) or holdout (with --test-fraction). "
        "Without it the tests that need the test/training size ratio are skipped.")] = None,
    test_fraction: Annotated[float | None, typer.Option(
        "--test-fraction", help="With --scores or --predictions of repeated hold-out splits: "
        "the share of rows in each test set (implies --scheme holdout).")] = None,
    metric: Annotated[str | None, typer.Option(
        "--metric", help="With --scores or --predictions: the primary metric (default: ROC AUC, "
        "balanced accuracy, accuracy or R², the first the input has); with --benchmark: the "
        "name of its score (roc_auc, accuracy, rmse, ...).")] = None,
    lower_is_better: Annotated[bool, typer.Option(
        "--lower-is-better", help="With --benchmark: lower scores are better (errors, "
        "losses).")] = False,
    original: Annotated[str | None, typer.Option(
        "--original", help="With --estimates: the original study's label (instead of a role "
        "column).")] = None,
    open_report: Annotated[bool, typer.Option(
        "--open", help="Open the report in the default web browser once it is written.")]
    = False,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="Dask scheduler address (tcp://host:8786): every fit of every "
        "section runs on that cluster (implies --backend dask; the numbers do not change).")]
    = None,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="serial | joblib | dask (default: joblib with several workers; dask "
        "with --scheduler).")] = None,
    store: Annotated[Path | None, typer.Option(
        "--store", help="DuckDB file of replikit's own keeping every finished fit: the same "
        "command after an interruption (even kill -9) refits nothing it finished and writes the "
        "same report. It belongs to one audit: other data or settings are refused.")] = None,
    clear_store: Annotated[bool, typer.Option(
        "--clear-store", help="Delete the results in --store (replikit's tables only) and "
        "start afresh.")] = False,
) -> None:
    """Audit a dataset or results already made: error estimates, model comparisons,
    replication across studies, cross-study replicability and ranking generalizability, in one
    HTML report + JSON twin.

    Start from a data table (--data: the models are fitted here), per-fold scores (--scores),
    out-of-fold predictions (--predictions), a benchmark table (--benchmark) or reported
    estimates (--estimates); each section answers what its input allows and the others say
    what to supply. Without an input, the built-in ANES example (ten survey years) is audited. The report opens
    with one card per question: the verdict, the key number with its interval, and the main
    caveat; each section's detail is folded under it.
    """
    import sys

    from .._outputs import check_output_dir
    from ..errors import ParameterError
    from ..experiment.models import make_models
    from ..report import REPORT_FILES, discover_sections, run_audit
    from ..report.audit import label_abbreviations

    check_output_dir(out, REPORT_FILES, option="out_dir", overwrite=overwrite,
                     overwrite_option="`overwrite`")
    # where the fits run and the store: checked before the data are read
    if backend is not None or scheduler is not None:
        from .run import choose_backend

        backend = choose_backend(backend, scheduler, n_jobs or 1)
    if store is not None:
        from ..experiment.store import check_store

        check_store(store, clear=clear_store)
    elif clear_store:
        raise ParameterError("`--clear-store` needs `--store` (the store to clear).")
    wanted = None
    if sections:
        known = [s.key for s in discover_sections()]
        wanted = [s.strip() for s in sections.split(",") if s.strip()]
        unknown = [s for s in wanted if s not in known]
        if unknown or not wanted:
            raise ParameterError(f"`--sections`: unknown section(s) {unknown or sections!r}; "
                                 f"available: {', '.join(known)}.")
    tolerances = _tolerances(tolerance)
    source = _source(data=data, target=target, time=time, event=event, study=study,
                     table=table, task=task,
                     example=example, models=models, moderator=moderator, scores=scores,
                     predictions=predictions, benchmark=benchmark, estimates=estimates,
                     columns=columns, n_folds=n_folds, scheme=scheme,
                     test_fraction=test_fraction, metric=metric,
                     lower_is_better=lower_is_better, original=original)
    dataset = source.dataset
    chosen = make_models(models, dataset.task) if models is not None else None
    moderators = _moderators(moderator, dataset) if dataset is not None else None
    # the input's long labels in the lines printed here shortened as in the report
    labels = label_abbreviations(source, chosen)
    if dataset is not None:
        n_studies = dataset.n_studies
        info(f"Auditing {dataset.name}: {len(dataset.y):,} rows, {n_studies} "
             f"{'study' if n_studies == 1 else 'studies'}, {dataset.task}"
             + (" (quick mode)" if quick else "") + ".")
        for note in dataset.notes:
            info(f"replikit: note: {labels.apply(note)}.")
        info(_expected_time(dataset, chosen, quick, n_jobs,
                            own_process=backend is None and scheduler is None))
    else:
        info(f"Auditing {source.name}: {source.label}"
             + (" (quick mode)" if quick else "") + ".")
        for note in source.notes:
            info(f"replikit: note: {labels.apply(note)}.")

    def skipped(section) -> None:
        typer.echo(f"replikit: warning: section '{section.key}' skipped: "
                   + escape_controls(" ".join(labels.apply(section.skipped).split())), err=True)

    command = "replikit " + " ".join(_quote(a) for a in sys.argv[1:]) if sys.argv[1:] else None
    client = None
    if scheduler is not None:
        from ..experiment.engine import connect_scheduler

        client = connect_scheduler(scheduler)
        info(f"Fitting on the Dask cluster at {scheduler} "
             f"({len(client.scheduler_info().get('workers', {}))} workers).")
    try:
        report = run_audit(source, out, models=chosen, random_state=random_state,
                           n_jobs=n_jobs, quick=quick, sections=wanted,
                           progress=_progress_mode(), overwrite=overwrite, debug=state.debug,
                           command=command, on_skip=skipped, moderators=moderators,
                           tolerances=tolerances, backend=backend, client=client,
                           store=store, clear_store=clear_store)
    finally:
        if client is not None:
            client.close()
    from ..report.summary import summary_cards

    # long labels shortened as in the report (whole where a value is the label)
    cards = labels.apply_deep(summary_cards(report.sections), keep_exact=True)
    emit([*_card_texts(cards),
          f"Report written to {report.html_path}\nJSON twin: {report.json_path}"
          + (f"\n{len(report.skipped)} section(s) skipped: "
             + ", ".join(s.key for s in report.skipped) if report.skipped else "")],
         {"cards": cards, "html": str(report.html_path), "json": str(report.json_path),
          "sections": [s.key for s in report.sections],
          "skipped": {s.key: s.skipped for s in report.skipped},
          "seconds": round(report.seconds, 1)})
    if open_report:
        open_in_browser(Path(report.html_path))


#: The light's colour in a terminal (piped output is plain text).
_STATE_STYLES = {"good": "bold green", "warn": "bold yellow", "bad": "bold red",
                 "info": "bold cyan", "skipped": "dim"}


#: The entry each shipped sample belongs to (``--example mlr3`` audits per-fold scores).
_SAMPLE_ENTRY = {"mlr3": "scores", "weka": "scores", "demsar": "benchmark"}


def _source(*, data, target, time, event, study, table, task, example, models, moderator,
            scores,
            predictions, benchmark, estimates, columns, n_folds, scheme, test_fraction, metric,
            lower_is_better, original):
    """The audit's entry from the options, checked before any work: the built-in example
    when no input is given, else exactly one of --data, --scores, --predictions,
    --benchmark, --estimates with the options that go with it."""
    from ..errors import ParameterError
    from ..report import example_dataset
    from ..report.inputs import AuditInput, audit_input

    given = {f"--{k}": v for k, v in (("data", data), ("scores", scores),
                                       ("predictions", predictions), ("benchmark", benchmark),
                                       ("estimates", estimates)) if v is not None}
    if len(given) > 1:
        raise ParameterError(f"give one input to audit; got {', '.join(given)}.")
    if not given:
        extra = [flag for flag, v in (("--target", target), ("--time", time),
                                      ("--event", event), ("--study", study),
                                      ("--table", table), ("--task", task),
                                      ("--columns", columns), ("--n-folds", n_folds),
                                      ("--scheme", scheme), ("--test-fraction", test_fraction),
                                      ("--metric", metric), ("--original", original))
                 if v is not None] + (["--lower-is-better"] if lower_is_better else [])
        if extra:
            raise ParameterError(f"`{extra[0]}` describes an input; give --data, --scores, "
                                 "--predictions, --benchmark or --estimates (without one, "
                                 "the built-in example is audited).")
        from ..data.examples import ENTRY_SAMPLES, EXAMPLES, entry_sample

        if example in EXAMPLES:
            ds = example_dataset(example)
            return AuditInput("data", ds.name, dataset=ds, task=ds.task)
        if example not in ENTRY_SAMPLES:
            raise ParameterError(f"`--example` must be a dataset ({', '.join(EXAMPLES)}) or "
                                 f"the sample of an entry ({', '.join(ENTRY_SAMPLES)}); got "
                                 f"{example!r}.")
        entry = _SAMPLE_ENTRY.get(example, example)
        return audit_input(**{entry: entry_sample(example)})
    flag = next(iter(given))
    if flag != "--data":
        wrong = [f for f, v in (("--models", models), ("--moderator", moderator),
                                ("--target", target), ("--time", time), ("--event", event),
                                ("--task", task) if flag != "--predictions"
                                else ("--target", None)) if v]
        if wrong:
            raise ParameterError(f"`{wrong[0]}` goes with --data (models fitted by replikit); "
                                 f"{flag} holds results already made.")
    if flag == "--data":
        _refuse_misplaced(data, table)
        check_outcome_flags(target, time, event)
        from ..data.userdata import load_dataset
        from ..report.preflight import MIN_ROWS

        ds = load_dataset(data, target=target, study=study, table=table,
                          min_studies=2 if study else 1, task=task, min_rows=MIN_ROWS,
                          time=time, event=event)
        return AuditInput("data", ds.name, dataset=ds, task=ds.task)
    if study is not None and flag != "--predictions":
        raise ParameterError(f"`--study` names a column of --data or --predictions; {flag} "
                             "has its own study column (map it with --columns study=...).")
    from .compare import _parse_columns

    return audit_input(scores=scores, predictions=predictions, benchmark=benchmark,
                       estimates=estimates, study=study, table=table,
                       columns=_parse_columns(columns), n_folds=n_folds, scheme=scheme,
                       test_fraction=test_fraction, metric=metric,
                       higher_is_better=False if lower_is_better else None,
                       original=original, task=task)


def _expected_time(dataset, models, quick: bool, n_jobs: int | None, *,
                   own_process: bool = True) -> str:
    """The line printed before the work: the audit's expected time, its fits and what the
    time budget changed (:func:`replikit.report.preflight.audit_budget`)."""
    from ..report.audit import default_jobs
    from ..report.preflight import audit_budget

    budget = audit_budget(dataset, models, quick=quick)
    return budget.with_jobs(n_jobs or default_jobs(budget if own_process else None)).line()


def _progress_mode():
    """Rich bars on a terminal; plain lines on stderr elsewhere (a log file, a CI job); none
    with --quiet."""
    if state.progress:
        return "bar"
    return False if state.quiet else "lines"


def _card_texts(cards: list[dict]) -> list:
    """The summary cards as terminal text, one block per question (see
    :func:`replikit.report.summary.card_lines`), each line wrapped to the output width under
    its indent; the light's word is coloured on a terminal only."""
    import textwrap

    from rich.text import Text

    from ..report.summary import card_lines
    from ._common import output_width

    width = output_width()
    blocks = []
    for card in cards:
        lines = card_lines(card)
        wrapped = []
        for i, line in enumerate(lines):
            indent = "" if i == 0 else "  "
            wrapped.extend(textwrap.wrap(line, width=width, subsequent_indent=indent + "  ",
                                         break_long_words=False, break_on_hyphens=False)
                           or [line])
        text = Text("\n".join(wrapped) + "\n")
        text.stylize(_STATE_STYLES.get(card.get("state"), ""), 0, lines[0].find("]") + 1)
        blocks.append(text)
    return blocks


def misplaced_layout(frame) -> tuple[str, str] | None:
    """What a table passed as ``--data`` looks like when it is not raw data: ``(what, option)``
    (see :func:`replikit.data.foreign.guess_entry`), or ``None``."""
    from ..data.foreign import guess_entry

    found = guess_entry(frame)
    return None if found is None else (found[1], f"--{found[0]}")


def _refuse_misplaced(data: Path, table: str | None) -> None:
    """Refuse, before any fit, a ``--data`` table laid out as scores, predictions or
    estimates, pointing to the command that reads it. A file that cannot be read is left to
    the data loader (its own error names the problem)."""
    from ..data.foreign import maybe_estimates
    from ..errors import DataError, ReplikitError

    try:
        if str(data).lower().endswith((".csv", ".tsv", ".txt")):
            import pandas as pd

            header = pd.read_csv(data, nrows=0, sep="\t" if str(data).lower().endswith(".tsv")
                                 else ",")
            if misplaced_layout(header) is None and not maybe_estimates(header):
                return
        from ..data.io import read_frame

        frame = read_frame(data, table=table)
    except (ReplikitError, OSError, ValueError):
        return
    found = misplaced_layout(frame)
    if found is not None:
        what, option = found
        raise DataError(f"`--data`: {data.name} looks like {what}, not a data table to fit "
                        f"models on; audit it with `replikit audit {option} "
                        f"{_quote(str(data))}`.")


def open_in_browser(path: Path) -> bool:
    """Open a written report in the default web browser (``--open``); without a usable
    browser, one note on stderr instead. Returns whether a browser took it."""
    import webbrowser

    uri = path.resolve().as_uri()
    try:
        opened = webbrowser.open(uri)
    except webbrowser.Error:
        opened = False
    if not opened:
        info(f"replikit: note: no web browser available; open {uri} yourself.")
    return bool(opened)


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def register(app: typer.Typer) -> None:
    app.command("audit", epilog=epilog(examples=EXAMPLES, references=REFERENCES))(audit)
    # library parameters whose flag has another name (errors name the parameter)
    parameter_flags("audit", {"out_dir": "--out", "moderators": "--moderator",
                              "dataset": "--data", "tolerances": "--tolerance",
                              "higher_is_better": "--lower-is-better", "client": "--scheduler",
                              "clear_store": "--clear-store"})


def _tolerances(given: list[str] | None) -> dict | None:
    """``--tolerance [SECTION=]VALUE`` (repeatable, comma-separated too) as the library's
    ``tolerances`` mapping; a bare VALUE is the multistudy tolerance. Values are checked by
    :func:`replikit.report.context.parse_tolerances` before any work."""
    from ..errors import ParameterError
    from ..report.context import parse_tolerances

    if not given:
        return None
    out: dict[str, str] = {}
    for item in (p.strip() for g in given for p in g.split(",") if p.strip()):
        key, _, value = item.rpartition("=")
        key = key.strip() or "multistudy"
        if key in out:
            raise ParameterError(f"`--tolerance`: {key} given twice ({out[key]!r} and "
                                 f"{value.strip()!r}).")
        out[key] = value.strip()
    parse_tolerances(out)
    return out


def _moderators(given: list[str] | None, dataset) -> list[str] | None:
    """``--moderator`` values (repeated or comma-separated), checked before any work: each a
    column of the data with one value per study."""
    from ..errors import ParameterError

    if not given:
        return None
    names = [n.strip() for g in given for n in g.split(",") if n.strip()]
    if not names:
        raise ParameterError("`--moderator`: give a column name.")
    if dataset.study is None or dataset.n_studies < 2:
        raise ParameterError("`--moderator` needs studies (`--study COL` with two or more): a "
                             "moderator explains differences between studies.")
    columns = [str(c) for c in dataset.X.columns]
    for name in names:
        if name not in columns:
            raise ParameterError(f"`--moderator`: {name!r} is not a column of the data "
                                 f"(after encoding); columns: {names_list(columns, 12)}.")
        per_study = dataset.X[name].groupby(dataset.study.to_numpy()).nunique()
        varies = [str(s) for s, n in per_study.items() if n > 1]
        if varies:
            raise ParameterError(f"`--moderator`: {name!r} varies within stud"
                                 f"{'y' if len(varies) == 1 else 'ies'} "
                                 f"{', '.join(varies[:3])}{', ...' if len(varies) > 3 else ''}; "
                                 "a moderator has one value per study.")
    return list(dict.fromkeys(names))
