"""Checks made before any model is fitted, and the choices that follow from the data.

:func:`preflight` refuses data no audit can use (too few rows, a class with one row) with a
:class:`~replikit.errors.DataError` naming the column, and fixes the report-wide choices: the
**primary metric** every headline is about, and which studies can enter the study-level
sections (:meth:`AuditPlan.usable_studies`).

The primary-metric rule is :func:`replikit.experiment.metrics.primary_metric` (stated in the
report and in ``docs/audit.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._format import number, percent
from ..data.userdata import Dataset
from ..errors import DataError
from ..experiment.metrics import metric_label, primary_metric

__all__ = ["AuditPlan", "preflight", "MIN_ROWS"]

MIN_ROWS = 20  # complete rows an audit needs (10-fold CV leaves 2 test rows per fold)

@dataclass(frozen=True)
class AuditPlan:
    """Report-wide choices made before any fit."""

    primary_metric: str
    primary_metric_rule: str
    notes: tuple = ()
    study_rows: dict = field(default_factory=dict)
    study_classes: dict = field(default_factory=dict)
    n_classes: int = 0
    class_values: tuple = ()

    @property
    def metric_label(self) -> str:
        return metric_label(self.primary_metric)

    def usable_studies(self, min_rows: int, *, all_classes: bool = True,
                       min_per_class: int = 1) -> tuple[list[str], list[tuple[str, str]]]:
        """Studies with at least ``min_rows`` rows (and, for classification with
        ``all_classes``, at least ``min_per_class`` rows of every class): (kept, [(study,
        reason)] left out)."""
        kept, dropped = [], []
        for s, n in self.study_rows.items():
            if n < min_rows:
                dropped.append((s, f"{n} row{'s' if n != 1 else ''} (fewer than {min_rows})"))
                continue
            counts = self.study_classes.get(s)
            if all_classes and counts is not None:
                short = [c for c in self.class_values if counts.get(c, 0) < min_per_class]
                if short:
                    dropped.append((s, f"class{'es' if len(short) > 1 else ''} "
                                       f"{', '.join(map(str, short))} "
                                       f"{'absent' if min_per_class == 1 else 'too rare'}"))
                    continue
            kept.append(s)
        return kept, dropped


def preflight(dataset: Dataset, models: dict | None = None) -> AuditPlan:
    """Check that ``dataset`` can be audited and fix the report-wide choices.

    Raises
    ------
    DataError
        Fewer than ``MIN_ROWS`` complete rows, or a class with fewer than 2 rows (no split can
        put it on both sides).
    """
    n = len(dataset.y)
    if n < MIN_ROWS:
        raise DataError(f"`dataset`: {n} complete row{'s' if n != 1 else ''}; an audit needs at "
                        f"least {MIN_ROWS} (cross-validation and bootstrap need test rows).")
    notes = list(dataset.notes)
    n_classes = 0
    study = dataset.study if dataset.study is not None else pd.Series(["all"] * n)
    study = study.astype(str).to_numpy()
    labels, first = np.unique(study, return_index=True)
    order = labels[np.argsort(first)]
    rows = {str(s): int(np.sum(study == s)) for s in order}
    classes: dict = {}
    if dataset.task == "classification":
        y = dataset.y.to_numpy()
        counts = pd.Series(y).value_counts()
        n_classes = int(counts.size)
        classes_index = counts.index.tolist()
        if counts.min() < 2:
            rare = counts.idxmin()
            shown = dataset.classes[int(rare)] if dataset.classes else rare
            raise DataError(f"`target`: class {shown!r} has only {int(counts.min())} row; "
                            "every class needs at least 2 rows to appear in training and test "
                            "data.")
        share = counts.min() / n
        if share < 0.05:
            notes.append(f"rare class: {number(int(counts.min()))} of {number(n)} rows "
                         f"({percent(share)}); splits are "
                         "stratified where the class counts allow it")
        for s in order:
            vc = pd.Series(y[study == s]).value_counts()
            classes[str(s)] = {k: int(v) for k, v in vc.items()}
    metric, rule = primary_metric(dataset.task, n_classes, models)
    values = tuple(sorted(classes_index)) if dataset.task == "classification" else ()
    return AuditPlan(metric, rule, tuple(notes), rows, classes, n_classes, values)
