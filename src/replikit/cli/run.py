"""``replikit run``: fit models under a resampling scheme and write Scores (and Predictions).

Every output is checked before the data are read: ``--out`` and ``--predictions`` must be new
files (or ``--overwrite``), distinct from each other, from ``--data`` and from ``--store``; the
store must be a DuckDB file of replikit's own that no other run has open. ``--overwrite``
replaces output files only; deleting a store's results is ``--clear-store``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    EventOpt,
    RandomStateOpt,
    StudyOpt,
    TableOpt,
    TaskOpt,
    TimeOpt,
    check_outcome_flags,
    emit,
    epilog,
    flags,
    frame_table,
    info,
    parameter_flags,
    renamed_flags,
    state,
)

BACKENDS = ("serial", "joblib", "dask")


def check_table_output(path: Path, option: str, overwrite: bool) -> Path:
    """An output table path (``--out``, ``--predictions``): a known suffix, and a new file
    unless ``--overwrite``; an existing DuckDB file must be a DuckDB database not in use (its
    table is replaced, its other tables are kept)."""
    from .._outputs import check_output_file
    from ..data.io import check_duckdb_file, file_format, open_duckdb
    from ..errors import OutputError

    fmt = file_format(path, name=option)
    p = check_output_file(path, option=option, overwrite=overwrite)
    if fmt == "duckdb" and p.exists():
        check_duckdb_file(p, name=option, error=OutputError)
        with open_duckdb(p, name=option, read_only=True, error=OutputError):
            pass
    return p


def check_label_columns(path: Path, classes) -> None:
    """Before any fit: the ``proba_<label>`` columns of ``--predictions`` fit its format (a
    DuckDB table cannot hold ``proba_Yes`` and ``proba_yes`` apart)."""
    from ..data.io import check_duckdb_columns, file_format

    if file_format(path, name="--predictions") == "duckdb":
        check_duckdb_columns([f"proba_{c}" for c in classes], name="--predictions")


def choose_backend(backend: str | None, scheduler: str | None, n_jobs: int) -> str:
    """``--backend`` as given, or implied by ``--scheduler`` (dask) or ``--n-jobs`` > 1
    (joblib); a scheduler with another backend is refused."""
    from .._validation import check_choice
    from ..errors import ParameterError

    if backend is not None:
        backend = check_choice(backend, "--backend", BACKENDS)
        if scheduler is not None and backend != "dask":
            raise ParameterError(f"`--scheduler` is a Dask scheduler address; it needs "
                                 f"`--backend dask` (got --backend {backend}).")
        return backend
    if scheduler is not None:
        info("--scheduler given: running on the Dask backend (--backend dask).")
        return "dask"
    if n_jobs > 1:
        info(f"--n-jobs {n_jobs}: running in {n_jobs} joblib worker processes (--backend "
             "joblib).")
        return "joblib"
    return "serial"


#: Library parameter -> flag of ``replikit run`` (kept for the commands that still translate
#: errors themselves with :func:`as_flags`; the entry point now maps parameters to flags by
#: itself, see ``_common.parameter_flags``).
RUN_FLAGS = {"store": "--store", "clear_store": "--clear-store",
             "clear_store=True": "--clear-store", "metrics": "--metrics", "scheme": "--scheme",
             "stratify": "--stratify", "redraw_single_class": "--stratify",
             "client": "--scheduler", "n_jobs": "--n-jobs", "backend": "--backend"}


def as_flags(exc: Exception, flags: dict[str, str]) -> Exception:
    """The same error with the Python parameter names in backticks (`store`) replaced by the
    command-line flags (`--store`), so that the message names what the user typed.

    The entry point (``replikit.cli.main``) now does this for every command, from the
    command's own options and ``_common.parameter_flags``."""
    text = str(exc)
    for name, flag in flags.items():
        text = text.replace(f"`{name}`", f"`{flag}`") if "=" not in name else (
            text.replace(name, flag))
    return type(exc)(text)


def default_metrics(task: str, y, models: dict, scheme=None) -> str:
    """r2,mse for a continuous outcome; accuracy,roc_auc for two classes when every model has
    probabilities; accuracy otherwise (roc_auc is binary only). Under leave-one-out (test sets
    of one row, where r2 and roc_auc are undefined) those two are left out, and said so."""
    import pandas as pd

    from ..experiment.schemes import LeaveOneOut

    if task == "survival":
        chosen = ["c_index", "c_index_uno"]
    elif task == "regression":
        chosen = ["r2", "mse"]
    else:
        two = pd.Series(y).nunique() == 2
        proba = all(hasattr(m, "predict_proba") for m in models.values())
        chosen = ["accuracy", "roc_auc"] if two and proba else ["accuracy"]
    if isinstance(scheme, LeaveOneOut):
        dropped = [m for m in chosen if m in ("r2", "roc_auc")]
        chosen = [m for m in chosen if m not in dropped]
        if dropped:
            info(f"note: {', '.join(dropped)} left out of the default metrics: undefined on the "
                 "one-row test sets of leave-one-out.")
    return ",".join(chosen)


def run_command(
    data: Annotated[Path, typer.Option("--data", help="Input table (CSV, Parquet or DuckDB).")],
    target: Annotated[str | None, typer.Option("--target", help="Outcome column.")] = None,
    time: TimeOpt = None,
    event: EventOpt = None,
    models: Annotated[str | None, typer.Option(
        "--models", help="Comma-separated aliases: lr, ridge, lasso, enet, lda, rf, gb, svm, mlp, "
        "knn, tree, dummy.")] = None,
    task: TaskOpt = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="Any estimator: NAME=module:Class (repeatable).")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="NAME.key=value for a --model (Python literals; repeatable).")] = None,
    scheme: Annotated[str, typer.Option("--scheme", help="10x10 | 5x2 | loo | bootstrap:200 | "
                                        "holdout:0.33x200 | resub | loso")] = "10x10",
    metrics: Annotated[str | None, typer.Option(
        "--metrics", help="Comma-separated metrics (default: r2,mse; accuracy,roc_auc for two "
        "classes; accuracy for more).")] = None,
    study: StudyOpt = None,
    table: TableOpt = None,
    stratify: Annotated[bool, typer.Option("--stratify", help="Stratified splits.")] = False,
    store: Annotated[Path | None, typer.Option(
        "--store", help="DuckDB file of replikit's own: commit each task, resume on re-run.")]
    = None,
    clear_store: Annotated[bool, typer.Option(
        "--clear-store", help="Delete the results in --store (replikit's tables only) and start "
        "afresh.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace existing --out and "
                                            "--predictions files.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Scores output (.csv, .parquet, .duckdb).")]
    = Path("scores.parquet"),
    predictions: Annotated[Path | None, typer.Option(
        "--predictions", help="Also write predictions to this file.")] = None,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="serial | joblib | dask (default: serial; dask with --scheduler, "
        "joblib with --n-jobs > 1).")] = None,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="Dask scheduler address (implies --backend dask).")] = None,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", min=1,
                                        help="Worker processes (joblib, or a local Dask "
                                        "cluster).")] = 1,
    random_state: RandomStateOpt = 0,
) -> None:
    """Fit MODELS on every split of SCHEME and write one Scores row per split and metric."""
    from .._outputs import check_distinct
    from ..data.userdata import load_dataset
    from ..errors import ParameterError
    from ..experiment.engine import connect_scheduler
    from ..experiment.metrics import check_metrics
    from ..experiment.models import make_models, models_from_options
    from ..experiment.runner import run
    from ..experiment.schemes import parse_scheme
    from ..experiment.store import check_store

    # every output, the store and the flags first: a refusal costs the user nothing
    backend = choose_backend(backend, scheduler, n_jobs)
    check_distinct({"--data": data, "--out": out, "--predictions": predictions,
                    "--store": store})
    check_table_output(out, "--out", overwrite)
    if predictions is not None:
        check_table_output(predictions, "--predictions", overwrite)
    if store is not None:
        check_store(store, clear=clear_store)
    elif clear_store:
        raise ParameterError("`--clear-store` needs `--store` (the store to clear).")
    check_outcome_flags(target, time, event)
    sch = parse_scheme(scheme, stratify=stratify)

    ds = load_dataset(data, target=target, study=None if scheme.lower() == "loso" else study,
                      table=table, task=task, time=time, event=event)
    groups = None
    if scheme.lower() == "loso":
        if study is None:
            raise ParameterError("`--scheme loso` needs `--study` (the study column).")
        groups = load_dataset(data, target=target, study=study, table=table,
                              min_studies=2, task=task, time=time, event=event).study
    if predictions is not None and ds.task == "classification":
        check_label_columns(predictions, ds.classes)
    chosen = models_from_options(models, model, param, ds.task)
    if not chosen:
        chosen = make_models("cox,dummy" if ds.task == "survival" else "lr,dummy", ds.task)
    if metrics is None:
        metrics = default_metrics(ds.task, ds.y, chosen, sch)
    check_metrics(metrics, ds.task, classes=ds.classes)  # not mse of text labels' codes
    client = connect_scheduler(scheduler) if scheduler else None
    info(f"Running {', '.join(chosen)} under {scheme} (every split drawn from --random-state "
         f"{random_state}) on {len(ds.y):,} rows; metrics {metrics}.")
    try:
        res = run(chosen, ds.X, ds.outcome, scheme=sch, metrics=metrics,
                  study=None if groups is not None else ds.study, groups=groups,
                  backend=backend, n_jobs=n_jobs, client=client, store=store,
                  clear_store=clear_store, random_state=random_state,
                  return_predictions=predictions is not None, progress=state.progress)
    finally:
        if client is not None:
            client.close()
    scores = res.scores
    if groups is not None:  # leave-one-study-out: fold i leaves out the i-th study (sorted)
        scores = _with_held_out(scores, groups)
    with flags({"path": "--out"}):
        written = {"scores": str(scores.write(out, overwrite=overwrite))}
    if predictions is not None:
        labelled, note = ds.predictions_with_labels(res.predictions)
        if note:
            info(f"note: {note}")
        with flags({"path": "--predictions"}):
            written["predictions"] = str(labelled.write(predictions, overwrite=overwrite))
    summary = res.summary()
    emit([frame_table(summary, title="Scores by study, model and metric (mean and SD over "
                                 "splits):"),
          "", f"Scores written to {written['scores']}"],
         {"written": written, "summary": summary, "provenance": res.provenance})


def _with_held_out(scores, groups):
    """The scores of a leave-one-study-out run with a ``held_out`` column after ``fold``: the
    study each fold tests (fold i leaves out the i-th study in sorted order), so that a score
    can be told apart from the others by the study it was measured on."""
    import numpy as np

    from ..data import Scores

    labels = np.unique(np.asarray(groups))
    frame = scores.frame.copy()
    frame.insert(list(frame.columns).index("fold") + 1, "held_out",
                 labels[frame["fold"].to_numpy(dtype=int)])
    return Scores(frame)


def register(app: typer.Typer) -> None:
    app.command("run", epilog=epilog(
        examples=["replikit run --data survey.csv --target y --models lr,rf --scheme 10x10",
                  "replikit run --data survey.csv --target y --scheme 5x2 --store run.duckdb",
                  "replikit run --data survey.csv --target y --n-jobs 2 --out scores.csv"],
        references=("etherington2019", "dietterich1998")))(run_command)
    renamed_flags("run", {"--jobs": "--n-jobs"})
    # --stratify makes a bootstrap redraw resamples of one class (`redraw_single_class`)
    parameter_flags("run", {"client": "--scheduler", "redraw_single_class": "--stratify"})
