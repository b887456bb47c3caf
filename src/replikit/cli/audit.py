"""``replikit audit``: the main job — a full replicability report on one dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import NJobsOpt, RandomStateOpt, StudyOpt, TableOpt, emit, info, state


def audit(
    data: Annotated[Path | None, typer.Option("--data", help="Your table (CSV, Parquet, DuckDB); "
                                              "omit to audit the built-in ANES example.")] = None,
    target: Annotated[str | None, typer.Option("--target", help="Outcome column.")] = None,
    study: StudyOpt = None,
    table: TableOpt = None,
    example: Annotated[str, typer.Option("--example", help="Built-in dataset when --data is "
                                         "not given: anes, nwtco or exam.")] = "anes",
    models: Annotated[str | None, typer.Option("--models", help="Comma-separated model aliases "
                                               "(lr, ridge, lda, rf, gb, knn, tree, dummy).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("replikit-audit"),
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
    quick: Annotated[bool, typer.Option("--quick", help="Fewer resamples: a fast preview.")] = False,
    sections: Annotated[str | None, typer.Option(
        "--sections", help="Comma-separated section keys to run (default: all).")] = None,
) -> None:
    """Audit a dataset: error estimates, model comparisons, replication across studies,
    cross-study replicability and ranking generalizability, in one HTML report + JSON twin."""
    from .._models import make_models
    from ..data.userdata import load_dataset
    from ..errors import ParameterError
    from ..report import example_dataset, run_audit

    if data is None:
        if target is not None or study is not None:
            raise ParameterError("`--target`/`--study` need `--data`; without `--data` the "
                                 "built-in example is audited.")
        dataset = example_dataset(example)
    else:
        if target is None:
            raise ParameterError("`--target`: required with `--data` (the outcome column).")
        dataset = load_dataset(data, target=target, study=study, table=table,
                               min_studies=2 if study else 1, data_option="--data",
                               target_option="--target", study_option="--study")
    chosen = make_models(models, dataset.task) if models else None
    wanted = None
    if sections:
        from ..report import discover_sections

        known = [s.key for s in discover_sections()]
        wanted = [s.strip() for s in sections.split(",") if s.strip()]
        unknown = [s for s in wanted if s not in known]
        if unknown:
            raise ParameterError(f"`--sections`: unknown section(s) {unknown}; available: "
                                 f"{', '.join(known)}.")
    info(f"Auditing {dataset.name}: {len(dataset.y):,} rows, {dataset.n_studies} studies, "
         f"{dataset.task}.")
    report = run_audit(dataset, out, models=chosen, random_state=random_state, n_jobs=n_jobs,
                       quick=quick, sections=wanted, progress=state.progress)
    emit(f"Report written to {report.html_path}\nJSON twin: {report.json_path}",
         {"html": str(report.html_path), "json": str(report.json_path),
          "sections": [s.key for s in report.sections]})


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
