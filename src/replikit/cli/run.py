"""``replikit run``: fit models under a resampling scheme and write Scores (and Predictions)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import RandomStateOpt, StudyOpt, TableOpt, emit, info, state


def run_command(
    data: Annotated[Path, typer.Option("--data", help="Input table (CSV, Parquet or DuckDB).")],
    target: Annotated[str, typer.Option("--target", help="Outcome column.")],
    models: Annotated[str | None, typer.Option(
        "--models", help="Comma-separated aliases: lr, ridge, lasso, enet, lda, rf, gb, svm, mlp, "
        "knn, tree, dummy.")] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="Any estimator: NAME=module:Class (repeatable).")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="NAME.key=value for a --model (Python literals; repeatable).")] = None,
    scheme: Annotated[str, typer.Option("--scheme", help="10x10 | 5x2 | loo | bootstrap:200 | "
                                        "holdout:0.33x200 | resub | loso")] = "10x10",
    metrics: Annotated[str | None, typer.Option(
        "--metrics", help="Comma-separated metrics (default: r2,mse or accuracy,roc_auc).")] = None,
    study: StudyOpt = None,
    table: TableOpt = None,
    stratify: Annotated[bool, typer.Option("--stratify", help="Stratified splits.")] = False,
    store: Annotated[Path | None, typer.Option("--store", help="DuckDB file: commit each task, "
                                               "resume on re-run.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a store holding a "
                                            "different run, and existing output files.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Scores output (.csv, .parquet, .duckdb).")]
    = Path("scores.parquet"),
    predictions: Annotated[Path | None, typer.Option(
        "--predictions", help="Also write predictions to this file.")] = None,
    backend: Annotated[str, typer.Option("--backend", help="serial | joblib | dask")] = "serial",
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="Dask scheduler address (with --backend dask).")] = None,
    n_jobs: Annotated[int, typer.Option("--jobs", "--n-jobs", "-j", min=1,
                                        help="Worker processes.")] = 1,
    random_state: RandomStateOpt = 0,
) -> None:
    """Fit MODELS on every split of SCHEME and write one Scores row per split and metric."""
    from .._models import make_models, models_from_options
    from ..data.userdata import load_dataset
    from ..errors import ParameterError
    from ..resampling.runner import run
    from ..resampling.schemes import parse_scheme

    ds = load_dataset(data, target=target, study=None if scheme.lower() == "loso" else study,
                      table=table, data_option="--data", target_option="--target",
                      study_option="--study")
    groups = None
    if scheme.lower() == "loso":
        if study is None:
            raise ParameterError("`--scheme loso` needs `--study` (the study column).")
        groups = load_dataset(data, target=target, study=study, table=table,
                              min_studies=2, data_option="--data", study_option="--study").study
    chosen = models_from_options(models, model, param, ds.task)
    if not chosen:
        chosen = make_models("lr,dummy", ds.task)
    if metrics is None:
        metrics = "r2,mse" if ds.task == "regression" else "accuracy,roc_auc"
    sch = parse_scheme(scheme, stratify=stratify)
    info(f"Running {', '.join(chosen)} under {scheme} (every split seeded from --seed "
         f"{random_state}) on {len(ds.y):,} rows.")
    res = run(chosen, ds.X, ds.y, scheme=sch, metrics=metrics,
              study=None if groups is not None else ds.study, groups=groups, backend=backend,
              n_jobs=n_jobs, client=scheduler, store=store, overwrite=overwrite,
              random_state=random_state, return_predictions=predictions is not None,
              progress=state.progress)
    written = {"scores": str(res.scores.write(out, overwrite=overwrite))}
    if predictions is not None:
        written["predictions"] = str(res.predictions.write(predictions, overwrite=overwrite))
    summary = res.summary()
    emit(summary.to_string(index=False) + f"\n\nScores written to {written['scores']}",
         {"written": written, "summary": summary, "provenance": res.provenance})


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
