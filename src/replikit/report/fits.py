"""The audit's fits, planned once and shared by the sections.

The sections ask for their fits here instead of making them: each *fit set* is one call of
:func:`replikit.experiment.run` (or, for the bootstrap of the error estimates, of the
resampling capability's batched or generic path), made the first time a section needs it and
cached in the :class:`~replikit.report.context.AuditContext` for the others:

- **pooled CV** — repeated K-fold CV of every model on every row, the design of
  :func:`replikit.compare.audit_design`: the model comparison's tests read all repeats, the
  error estimates' K-fold CV (eq. 5 of Verbyla & Litvaitis (1989)) reads the first;
- **within-study CV** — the hold-out-with-CV design of the replication section
  (:class:`replikit.replicate.HoldOutCV`) within every study, every model, every row: the
  replication section reads the CV folds and the test part, the comparison across studies and
  the generalizability section read each study's mean CV score on the primary metric.

:func:`fit_log` lists what was fitted (for the report's provenance and the benchmarks).
"""

from __future__ import annotations

import time

from .context import AuditContext

__all__ = ["pooled_cv", "shared_cv", "study_cv", "fit_log", "fit_seconds", "release_after",
           "survival_cv", "SURVIVAL_MIN_EVENTS"]


def _backend(ctx: AuditContext) -> dict:
    return {"engine": ctx.engine}


def _log(ctx: AuditContext, name: str, res, seconds: float) -> None:
    f = res.scores.frame
    tasks = f.drop_duplicates(["study", "model", "repeat", "fold"])
    ctx.shared("fit-log", dict)[name] = {
        "fits": int(len(tasks)), "models": sorted(map(str, set(tasks["model"]))),
        "rows_fitted": int(tasks["n_train"].sum())}
    ctx.shared("fit-seconds", dict)[name] = round(seconds, 2)


def fit_log(ctx: AuditContext) -> dict:
    """Fit set -> ``{'fits', 'models', 'rows_fitted'}`` of the sets made so far (the numbers
    of the report; their wall times are in :func:`fit_seconds`)."""
    return dict(ctx.shared("fit-log", dict))


def fit_seconds(ctx: AuditContext) -> dict:
    """Fit set -> wall seconds it took (timing only)."""
    return dict(ctx.shared("fit-seconds", dict))


def pooled_cv(ctx: AuditContext, models: dict):
    """Repeated K-fold CV of ``models`` on every row (the comparison's design), with
    predictions; made once per audit and set of models."""
    from ..compare import audit_design
    from ..experiment import run

    key = "pooled-cv:" + ",".join(map(str, models))

    def compute():
        d = audit_design(ctx.dataset, metric=ctx.metric, models=models, quick=ctx.quick)
        t0 = time.perf_counter()
        with ctx.stage("Fits: repeated K-fold CV of every model on every row") as advance:
            res = run(models, ctx.dataset.X, ctx.dataset.y, scheme=d["scheme"],
                      metrics=d["metrics"], random_state=ctx.random_state,
                      return_predictions=True, progress=advance, **_backend(ctx))
        _log(ctx, "pooled CV", res, time.perf_counter() - t0)
        return res

    return ctx.shared(key, compute)


def shared_cv(ctx: AuditContext, models: dict):
    """:func:`pooled_cv`, or ``None`` when the comparison's design does not apply to these
    data (e.g. a class too rare for two stratified folds): the caller then fits its own."""
    from ..errors import NotApplicableError

    try:
        return pooled_cv(ctx, models)
    except NotApplicableError:
        return None


#: Fewest rows of a study for the within-study fits (and for classification, rows per class).
STUDY_MIN_ROWS, STUDY_MIN_PER_CLASS = 9, 3


def within_study_design(ctx: AuditContext) -> tuple:
    """``(scheme, metrics)`` of the within-study fits: for a continuous outcome the replication
    section's hold-out-with-CV design (:func:`replikit.replicate.audit_design`), scored on
    the primary metric and R²; for classes, stratified 3-fold CV on the primary metric (the
    replication section does not apply to classes)."""
    if ctx.dataset.task == "regression":
        from ..replicate import audit_design

        return (audit_design(quick=ctx.quick)["scheme"],
                list(dict.fromkeys([ctx.metric, "r2"])))
    from ..experiment import RepeatedKFold

    return RepeatedKFold(3, 1, stratify=True), [ctx.metric]


def study_cv(ctx: AuditContext, models: dict):
    """The within-study fits of ``models`` (:func:`within_study_design`) on every row of
    every study with at least :data:`STUDY_MIN_ROWS` rows (and, for classes, every class
    with :data:`STUDY_MIN_PER_CLASS` rows), with predictions: ``(RunResult, dataset)``; made
    once per audit and set of models."""
    from ..experiment import run

    key = "study-cv:" + ",".join(map(str, models))

    def compute():
        d, _ = ctx.study_subset(STUDY_MIN_ROWS, all_classes=True,
                                min_per_class=STUDY_MIN_PER_CLASS)
        if len(d.y) == 0:  # every study too small: say so, not `X` has 0 rows
            from ..errors import NotApplicableError

            sizes = ctx.dataset.study.value_counts()
            need = f"{STUDY_MIN_ROWS} rows" + (
                f" with {STUDY_MIN_PER_CLASS} of every class"
                if ctx.dataset.task == "classification" else "")
            raise NotApplicableError(
                f"no study has the {need} that cross-validation within a study needs: "
                f"{len(sizes):,} studies, the largest with {int(sizes.max()):,} rows — pool "
                "small studies into larger ones (e.g. by region or period).")
        scheme, metrics = within_study_design(ctx)
        t0 = time.perf_counter()
        with ctx.stage("Fits: cross-validation within every study") as advance:
            res = run(models, d.X, d.y, scheme=scheme, metrics=metrics, study=d.study,
                      random_state=ctx.random_state, return_predictions=True,
                      progress=advance, **_backend(ctx))
        _log(ctx, "within-study CV", res, time.perf_counter() - t0)
        return res, d

    return ctx.shared(key, compute)


#: Fewest events a study needs for the within-study CV of a survival outcome (two per fold).
SURVIVAL_MIN_EVENTS = 10


def survival_cv(ctx: AuditContext):
    """The within-study CV of a survival outcome
    (:func:`~replikit.report.preflight.survival_design`), every model in
    every study with at least :data:`SURVIVAL_MIN_EVENTS` events, scored by Harrell's and
    Uno's C-index, with predictions: ``(RunResult, dataset, left_out)``; made once per
    audit."""
    import dataclasses

    from ..errors import NotApplicableError
    from ..experiment import run
    from .preflight import survival_design

    def compute():
        d = ctx.dataset
        study = d.study_labels().astype(str)
        events = d.event.groupby(study.to_numpy()).sum()
        keep = [s for s in _in_order(study) if events.get(s, 0) >= SURVIVAL_MIN_EVENTS]
        left_out = [(s, f"{int(events.get(s, 0))} event(s); cross-validation within a study "
                     f"needs {SURVIVAL_MIN_EVENTS}") for s in _in_order(study) if s not in keep]
        if not keep:
            raise NotApplicableError(
                f"no study has the {SURVIVAL_MIN_EVENTS} events that cross-validation within "
                "a study needs — pool small studies into larger ones.")
        if left_out:
            mask = study.isin(keep).to_numpy()
            d = dataclasses.replace(
                d, X=d.X[mask].reset_index(drop=True), y=d.y[mask].reset_index(drop=True),
                study=None if d.study is None else d.study[mask].reset_index(drop=True),
                event=d.event[mask].reset_index(drop=True))
        t0 = time.perf_counter()
        with ctx.stage("Fits: cross-validation within every study (survival)") as advance:
            res = run(ctx.models, d.X, d.outcome, scheme=survival_design(ctx.quick),
                      metrics=["c_index", "c_index_uno"],
                      study=None if d.study is None else d.study.astype(str),
                      random_state=ctx.random_state, return_predictions=True,
                      progress=advance, **_backend(ctx))
        _log(ctx, "within-study CV", res, time.perf_counter() - t0)
        return res, d, left_out

    return ctx.shared("survival-cv", compute)


def _in_order(values) -> list:
    """The distinct values in order of appearance."""
    return list(dict.fromkeys(values.tolist()))


def release_after(ctx: AuditContext, section: str, wanted=None) -> None:
    """Free the shared fit sets (their predictions: hundreds of MB at a million rows) once
    the last section that reads them has run, so that the sections after them do not hold
    them: the pooled CV after ``compare`` (after ``resampling`` when ``compare`` does not run);
    the within-study CV after ``replicate`` when the
    per-study scores ``generalize`` reads are made (by ``compare``) or ``generalize`` does
    not run, else after ``generalize``. ``wanted``: the sections the audit runs (None: all)."""
    if section == "compare" or (section == "resampling" and wanted is not None
                                and "compare" not in wanted):
        ctx.release("pooled-cv:")
    elif section == "generalize" or (section == "replicate" and (
            ctx.holds("per-study-scores:") or (wanted is not None
                                                and "generalize" not in wanted))):
        ctx.release("study-cv:")
