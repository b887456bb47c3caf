"""Shared command-line pieces: global state, option aliases, output helpers.

Each command module in :mod:`replikit.cli` defines ``register(app)``; the package discovers the
modules, so a capability adds its commands without touching a shared file. Commands under
``replikit simulate <study>`` are added to :data:`simulate_app`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = [
    "OutputFormat", "State", "state", "simulate_app", "emit", "info", "DataOpt", "TargetOpt",
    "StudyOpt", "OutDirOpt", "RandomStateOpt", "NJobsOpt", "TableOpt", "ModelsOpt",
]


class OutputFormat(StrEnum):
    human = "human"
    json = "json"


@dataclass
class State:
    format: OutputFormat = OutputFormat.human
    debug: bool = False
    quiet: bool = False

    @property
    def progress(self) -> bool:
        """Show progress bars: human output, not quiet, stderr is a terminal."""
        return self.format is OutputFormat.human and not self.quiet and sys.stderr.isatty()


state = State()

simulate_app = typer.Typer(help="Simulation studies: calibration of tests and estimators.",
                           no_args_is_help=True)

DataOpt = Annotated[Path, typer.Option("--data", help="Input table (CSV, Parquet or DuckDB).")]
TargetOpt = Annotated[str, typer.Option("--target", help="Column holding the outcome.")]
StudyOpt = Annotated[str | None, typer.Option("--study", help="Column holding study labels.")]
TableOpt = Annotated[str | None, typer.Option("--table", help="Table name inside a DuckDB file.")]
OutDirOpt = Annotated[Path, typer.Option("--out", help="Output directory.")]
RandomStateOpt = Annotated[int, typer.Option("--random-state", "--seed", min=0,
                                             help="Root random seed.")]
NJobsOpt = Annotated[int, typer.Option("--n-jobs", "-j", min=1, help="Worker processes.")]
ModelsOpt = Annotated[str | None, typer.Option(
    "--models", help="Comma-separated model aliases: lr, ridge, lda, rf, gb, knn, tree, dummy.")]


def info(message: str) -> None:
    """A diagnostic line on stderr (never mixed into data on stdout)."""
    if not state.quiet:
        typer.echo(message, err=True)


def emit(human: str, data: Any) -> None:
    """Write the command's result to stdout: ``human`` text, or ``data`` as JSON."""
    if state.format is OutputFormat.json:
        from ..report.blocks import to_jsonable

        typer.echo(json.dumps(to_jsonable(data), indent=2, allow_nan=False))
    else:
        typer.echo(human)
