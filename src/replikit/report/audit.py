"""``replikit audit``: run every registered section on one dataset and write the report."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..data.examples import load_example
from ..data.userdata import Dataset
from .blocks import SectionOutput
from .context import AuditContext, Progress
from .registry import discover_sections
from .render import render_html, render_json

__all__ = ["run_audit", "AuditReport", "example_dataset"]


@dataclass(frozen=True)
class AuditReport:
    html_path: Path
    json_path: Path
    sections: list[SectionOutput]


def example_dataset(name: str = "anes") -> Dataset:
    """A built-in example as a :class:`~replikit.data.userdata.Dataset`."""
    ex = load_example(name)
    return Dataset(ex.name, ex.X, ex.y, ex.study, ex.task, ex.n_dropped, ex.description,
                   ex.citation)


def run_audit(dataset: Dataset, out_dir: str | os.PathLike = "replikit-audit", *,
              models: dict | None = None, random_state: int = 0, n_jobs: int = 1,
              quick: bool = False, sections: list[str] | None = None,
              progress: bool = False) -> AuditReport:
    """Run the audit sections on ``dataset`` and write ``report.html`` and ``report.json``.

    Parameters
    ----------
    dataset : Dataset
        The data (see :func:`replikit.data.userdata.load_dataset`).
    out_dir : path-like
        Directory for the two files (created if needed; the two files are replaced).
    models : dict, optional
        name -> estimator; by default a linear model, a random forest and a baseline.
    random_state : int
        Root seed: the same seed gives the same report numbers.
    quick : bool
        Fewer resamples (for previews and tests).
    sections : list of str, optional
        Keys of the sections to run (default: all registered).
    """
    ctx = AuditContext(dataset=dataset, models=models, random_state=random_state,
                       n_jobs=n_jobs, quick=quick, progress=Progress(progress))
    outputs: list[SectionOutput] = []
    for section in discover_sections():
        if sections is not None and section.key not in sections:
            continue
        outputs.append(section.build(ctx))
    meta = {
        "dataset_name": dataset.name, "replikit_version": __version__,
        "random_state": random_state, "n_rows": len(dataset.y), "n_studies": dataset.n_studies,
        "task": dataset.task, "quick": quick,
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html_path, json_path = out / "report.html", out / "report.json"
    html_path.write_text(render_html(meta, outputs), encoding="utf-8")
    json_path.write_text(render_json(meta, outputs), encoding="utf-8")
    return AuditReport(html_path, json_path, outputs)
