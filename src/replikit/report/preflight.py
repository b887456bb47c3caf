"""Checks made before any model is fitted, and the choices that follow from the data.

:func:`preflight` refuses data no audit can use (too few rows, a class with one row) with a
:class:`~replikit.errors.DataError` naming the column, and fixes the report-wide choices: the
**primary metric** every headline is about, and which studies can enter the study-level
sections (:meth:`AuditPlan.usable_studies`).

The primary-metric rule is :func:`replikit.experiment.metrics.primary_metric` (stated in the
report and in ``docs/audit.md``).

:func:`audit_budget` plans the audit's time before any fit: the expected seconds of every fit
set from the cost model of :mod:`replikit.experiment.budget`, and, for the default models,
the cheapest changes that bring the expected time within the goal (``docs/performance.md``,
"How the audit budgets its time").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._format import number, percent
from ..data.userdata import Dataset
from ..errors import DataError
from ..experiment.metrics import metric_label, primary_metric

__all__ = ["AuditPlan", "preflight", "MIN_ROWS", "AuditBudget", "audit_budget",
           "OVERHEAD_SECONDS", "survival_design", "SURVIVAL_FIT_SECONDS"]

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
    class_names: tuple = ()  # the user's label of each code in class_values (Dataset.classes)

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
                    names = dict(enumerate(self.class_names))
                    dropped.append((s, f"class{'es' if len(short) > 1 else ''} "
                                       f"{', '.join(str(names.get(c, c)) for c in short)} "
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
    caveat = getattr(models, "caveat", None)  # what the time budget changed (SizedModels)
    if callable(caveat) and caveat():
        notes.append(caveat())
    metric, rule = primary_metric(dataset.task, n_classes, models)
    values = tuple(sorted(classes_index)) if dataset.task == "classification" else ()
    return AuditPlan(metric, rule, tuple(notes), rows, classes, n_classes, values,
                     tuple(dataset.classes or ()))


#: Wall seconds of an audit besides its model fits on the reference machine: starting the
#: process, the statistics of every section (the Bayesian comparisons, the bootstrap and
#: permutations of the cross-study section) and writing the report.
OVERHEAD_SECONDS = 15.0
#: How far above the goal the expected time must be before the budget leaves models out
#: (lasso and k-NN; once they are out, the forest follows while the plan exceeds the goal
#: itself; the cost model's estimates are good to about this factor: on 2026-11-27 the default
#: audits of ANES, exam and a 20,000 x 200 table took 1.0, 1.0 and 1.1 times their expected
#: time, nwtco 0.8); the cheaper encodings, the smaller forest and the shorter boosting come
#: as soon as it exceeds the goal. It was 1.5 while the cost model left out scikit-learn's
#: fixed work per fit and per tree.
MARGIN = 1.25
#: Core-seconds of the runner's own work per fit besides the model (the task, its
#: predictions and scores, the transfer from a worker): measured as the CPU the exam
#: example's 2,310 fits took beyond their modelled cost, about 20 ms each.
FIT_OVERHEAD_SECONDS = 0.02


@dataclass(frozen=True)
class AuditBudget:
    """The audit's time plan, made before any fit (:func:`audit_budget`).

    Attributes
    ----------
    models : dict
        The models the audit fits (for the default line-up, a
        :class:`~replikit.experiment.models.SizedModels` with what the budget changed).
    steps : tuple of str
        The changes made to the default models (:data:`~replikit.experiment.models.
        SIZING_STEPS`); empty when the full plan fits the goal or the user named the models.
    parts : dict
        Fit set -> ``(fits, core-seconds over the workers, seconds one at a time)`` expected
        on the reference machine.
    seconds : float
        Expected wall seconds with ``n_jobs`` workers.
    full_seconds : float
        Expected wall seconds of the default models unchanged on the reference machine's 2
        cores (the reason for the changes).
    n_jobs : int
        Workers the expected time is for.
    """

    models: dict
    steps: tuple
    parts: dict
    seconds: float
    full_seconds: float
    n_jobs: int

    @property
    def worker_seconds(self) -> float:
        """Core-seconds of the fits the workers share (the rest run in the audit's process)."""
        return float(sum(p[1] for p in self.parts.values()))

    def with_jobs(self, n_jobs: int) -> AuditBudget:
        """The same plan, its expected time for ``n_jobs`` workers."""
        from dataclasses import replace

        n_jobs = max(1, int(n_jobs))
        return replace(self, seconds=_expected(self.parts, n_jobs), n_jobs=n_jobs)

    @property
    def fits(self) -> int:
        """Model fits expected in all."""
        return int(sum(p[0] for p in self.parts.values()))

    def line(self) -> str:
        """One line for stderr before the work: ``'expected time: about 40 s (600 fits: ...)'``."""
        from .._format import number

        secs = self.seconds
        shown = f"{secs:.0f} s" if secs < 120 else f"{secs / 60:.1f} min"
        parts = ", ".join(f"{name} {number(p[0])}" for name, p in self.parts.items() if p[0])
        return (f"expected time: about {shown} on {self.n_jobs} worker"
                f"{'s' if self.n_jobs != 1 else ''} ({number(self.fits)} fits: {parts})"
                + (f"; {', '.join(self.steps)} changed to stay near the goal"
                   if self.steps else ""))

    def notes(self) -> list[str]:
        """What the budget changed, in words (empty when nothing)."""
        caveat = getattr(self.models, "caveat", None)
        text = caveat() if callable(caveat) else ""
        return [text] if text else []


#: Core-seconds per fit of a survival model per 1,000 training rows (scikit-survival on the
#: reference machine, nwtco: the forest 0.7, boosting 0.8, Cox 0.06 at 1,100 rows).
SURVIVAL_FIT_SECONDS = 0.7


def survival_design(quick: bool):
    """The within-study design of a survival outcome: 5-fold CV stratified by the event,
    repeated twice (once for a quick audit); :func:`replikit.report.fits.survival_cv` fits
    it."""
    from ..experiment import RepeatedKFold

    return RepeatedKFold(5, 1 if quick else 2, stratify=True)


def _survival_budget(dataset, models, quick: bool, cores: int) -> AuditBudget:
    """The plan of a survival audit: the default line-up (no sizing steps), within-study CV
    (:func:`survival_design`) and the cross-study matrices."""
    from ..experiment.models import default_models

    models = default_models("survival", quick=quick) if models is None else models
    scheme = survival_design(quick)
    k, r = scheme.n_folds, scheme.n_repeats
    n, studies = len(dataset.y), max(dataset.n_studies, 1)
    per = SURVIVAL_FIT_SECONDS * n / 1000 / studies
    fits_cv = k * r * studies * len(models)
    fits_cs = (studies + studies * k) * len(models) if studies > 1 else 0
    parts = {"within-study CV": (fits_cv, fits_cv * per, 0.0),
             "cross-study": (fits_cs, fits_cs * per, 0.0)}
    from ..experiment.budget import REFERENCE_CORES

    seconds = _expected(parts, REFERENCE_CORES)
    return AuditBudget(models, (), parts, _expected(parts, cores), seconds, cores)


def _parts(dataset, models, quick: bool) -> dict:
    """Fit set -> (fits, core-seconds spread over the workers, seconds made one at a time)
    on the reference machine, for the audit's fit sets."""
    from ..compare import audit_design
    from ..errors import ReplikitError
    from ..experiment.budget import TableSize, fit_seconds
    from ..resampling import bootstrap_plan

    task, n = dataset.task, len(dataset.y)
    size = TableSize.of(dataset.X)
    parts: dict[str, tuple[int, float]] = {}
    try:
        d = audit_design(dataset, models=models, quick=quick)
        k, r = d["n_folds"], d["n_repeats"]
        train = size.with_rows(n - n // k)
        cost = sum(fit_seconds(m, train, task, n_predict=n // k) for m in models.values())
        parts["pooled CV"] = (r * k * len(models), r * k * cost, 0.0)
    except ReplikitError:
        parts["pooled CV"] = (0, 0.0, 0.0)
    try:
        boot = bootstrap_plan(dataset, models, quick=quick)
        generic = [p for p in boot.values() if p["path"] == "generic"]
        batched = [p for p in boot.values() if p["path"] == "fast"]
        # the refits over the workers; the batched fits in the audit's own process, beside
        # the workers' refits when there are any (resampling.audit overlaps them)
        refits = sum(p["seconds"] for p in generic)
        fitted = sum(p["seconds"] for p in batched)
        parts["bootstrap"] = (sum(p["n_resamples"] + 1 for p in generic),
                              refits + fitted if generic else 0.0,
                              0.0 if generic else fitted)
    except (ReplikitError, ValueError):
        parts["bootstrap"] = (0, 0.0, 0.0)
    k_studies = dataset.n_studies
    if k_studies >= 2:
        per = n / k_studies
        # within each study: hold-out with 5-fold CV (regression) or 3-fold CV (classes)
        folds, share = (6, 0.6) if task == "regression" else (3, 2 / 3)
        small = size.with_rows(max(2, int(per * share)))
        each = [fit_seconds(m, small, task, n_predict=int(per / folds)) for m in
                models.values()]
        parts["within-study CV"] = (folds * k_studies * len(models),
                                    folds * k_studies * sum(each), 0.0)
        # cross-study: every model on half of every study, one at a time; the best rule's
        # cross-study matrix (its within-study CV and one fit per study) over the workers
        half = size.with_rows(n // 2)
        rules = [fit_seconds(m, half, task, n_predict=n // 2) for m in models.values()]
        in_study = size.with_rows(max(2, int(per * 0.8)))
        matrix = max(fit_seconds(m, in_study, task, n_predict=n) for m in models.values())
        parts["cross-study"] = (len(models) + 6 * k_studies, 6 * k_studies * matrix,
                                sum(rules))
    # the runner's own work per fit (the task, its predictions and scores, the transfer)
    return {name: (fits, spread + FIT_OVERHEAD_SECONDS * fits, serial)
            for name, (fits, spread, serial) in parts.items()}


def _expected(parts: dict, cores: int) -> float:
    """Wall seconds: the overhead, the cross-study fits (made one at a time) and the others
    over ``cores`` workers."""
    serial = sum(p[2] for p in parts.values())
    parallel = sum(p[1] for p in parts.values())
    return OVERHEAD_SECONDS + serial + parallel / max(1, cores)


def audit_budget(dataset: Dataset, models: dict | None = None, *, quick: bool = False,
                 n_jobs: int | None = None) -> AuditBudget:
    """Plan the audit's time before any fit: its models, its fits and its expected seconds.

    The plan depends on the table's size and the models only (never on the machine), so
    the audit's numbers are the same everywhere. For the default models (``models`` not
    given), when the expected wall time of the full plan on the reference machine's 2 cores
    exceeds :data:`~replikit.experiment.budget.GOAL_SECONDS` (a quick audit's:
    :data:`~replikit.experiment.budget.QUICK_GOAL_SECONDS`), the changes of
    :func:`~replikit.experiment.models.sized_models` follow in order until it does not: the
    trees fitted on level codes of the many-level categoricals, then a smaller forest, then
    the shorter boosting, then (only when the plan still exceeds the goal by the factor
    :data:`MARGIN`) lasso and k-NN left out, then, while it still exceeds the goal, the
    forest; the last one stays when none suffices. Models a user names are never
    changed; the repeats of the pooled CV and the bootstrap resamples follow the budget in
    every case (:func:`replikit.compare.audit_design`,
    :func:`replikit.resampling.bootstrap_plan`).

    Parameters
    ----------
    dataset : Dataset
        The data.
    models : dict, optional
        The user's models; default the audit's line-up, sized here.
    quick : bool, default False
        The preview's line-up and designs.
    n_jobs : int, optional
        Workers the expected time is printed for (default the reference machine's 2).

    Returns
    -------
    AuditBudget
        The models, the changes made, the expected fits and seconds.
    """
    from ..experiment.budget import GOAL_SECONDS, QUICK_GOAL_SECONDS, REFERENCE_CORES
    from ..experiment.models import SIZING_STEPS, sized_models

    cores = REFERENCE_CORES if n_jobs is None else max(1, int(n_jobs))
    if dataset.task == "survival":
        return _survival_budget(dataset, models, quick, cores)
    if models is not None:
        parts = _parts(dataset, models, quick)
        seconds = _expected(parts, REFERENCE_CORES)
        return AuditBudget(models, (), parts, _expected(parts, cores), seconds, cores)
    goal = QUICK_GOAL_SECONDS if quick else GOAL_SECONDS
    full = previous = None
    chosen, steps, parts, changed = None, (), {}, []
    for i in range(len(SIZING_STEPS) + 1):
        candidate = sized_models(dataset.task, dataset.X, quick=quick,
                                 steps=SIZING_STEPS[:i])
        if previous is None or candidate.notes != chosen.notes:
            if previous is not None:
                changed.append(SIZING_STEPS[i - 1])
            parts = _parts(dataset, candidate, quick)  # else: the step changed nothing here
            previous = _expected(parts, REFERENCE_CORES)
        chosen, steps = candidate, SIZING_STEPS[:i]
        full = previous if full is None else full
        # trees on level codes, a smaller forest and shorter boosting as soon as the plan
        # exceeds the goal; fewer models only when it is clearly beyond it (the estimate is
        # rough: MARGIN), and then the forest too while it still exceeds the goal
        if i == len(SIZING_STEPS) or previous <= (
                MARGIN * goal if SIZING_STEPS[i] == "line-up" else goal):
            break
    if steps:
        from .._format import number

        chosen = sized_models(dataset.task, dataset.X, quick=quick, steps=steps,
                              reason=f"unchanged, they would take the audit to about "
                                     f"{number(round(full))} s on {REFERENCE_CORES} cores even "
                                     "with fewer CV repeats and bootstrap resamples; its goal "
                                     f"is {number(goal)} s"
                                     + (" for a quick audit" if quick else ""))
    return AuditBudget(chosen, tuple(changed), parts,
                       _expected(parts, cores), full, cores)
