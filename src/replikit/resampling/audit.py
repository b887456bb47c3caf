"""The audit entry of seed 003: honest prediction-error estimates of several models.

:func:`audit` estimates each model's prediction error on a dataset by resubstitution (eq. 3),
K-fold cross-validation (eq. 5), the bootstrap with pooled out-of-bag errors (eq. 6), Efron's
leave-one-out bootstrap (eq. 7) and the .632+ bootstrap (Efron & Tibshirani 1997), with
:func:`~replikit.resampling.estimate_errors`, so that the optimism of the apparent error shows.
It chooses, per model, how to spend the time budget: models with a batched fit (linear models,
LDA, baselines) use every row and 200 bootstrap resamples; the others are refitted one resample
at a time on a stratified random subsample with fewer resamples. Its verdict names the model
with the lowest .632+ error and the model whose apparent error is most optimistic.

The package binds :func:`audit` eagerly (``replikit.resampling.audit`` is the function, not this
module), so this module imports nothing heavy at import time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..experiment.schemes import subsample
from ..experiment.schemes import subsample
from ..results import Verdict

__all__ = ["ErrorAudit", "audit", "AUDIT_METHODS", "METHOD_LABELS", "LOSS_LABELS"]

#: The methods the audit estimates, in the order they are shown.
AUDIT_METHODS = ("resubstitution", "kfold", "bootstrap", "loo_bootstrap", ".632+")
#: How each method is named in tables and figures.
METHOD_LABELS = {"resubstitution": "resubstitution (eq. 3)", "kfold": "K-fold CV (eq. 5)",
                 "bootstrap": "bootstrap (eq. 6)", "loo_bootstrap": "LOO bootstrap (eq. 7)",
                 ".632+": ".632+ bootstrap"}
#: The loss of each task, in words.
LOSS_LABELS = {"log": "log loss", "zero_one": "misclassification rate",
               "squared": "mean squared error"}


def _plan(fast: bool, n: int, quick: bool) -> dict:
    """Rows, resamples and folds of one model: a batched model uses all rows and 200 resamples
    (50 in quick mode); a model refitted per resample uses at most 1,500 rows (400), 25
    resamples (8) and 10 folds (5)."""
    if fast:
        return {"rows": n, "n_resamples": 50 if quick else 200, "n_splits": 10}
    return {"rows": min(n, 400 if quick else 1500), "n_resamples": 8 if quick else 25,
            "n_splits": 5 if quick else 10}


def _choose_loss(task: str, models: dict) -> str:
    """.632+ and the bootstrap need a loss per row: the log loss (a proper score) for
    classifiers when every model gives probabilities, else the misclassification rate; the
    squared error for a continuous outcome."""
    if task != "classification":
        return "squared"
    return "log" if all(hasattr(m, "predict_proba") for m in models.values()) else "zero_one"


@dataclass(frozen=True, slots=True)
class ErrorAudit:
    """Result of :func:`audit`: every model's error estimates, the plan behind them, the verdict.

    Attributes
    ----------
    estimates : pandas.DataFrame
        The tidy table (:meth:`to_frame`): one row per (model, method) with ``estimate``,
        ``se`` (the naive SE of K-fold; NaN for the others), ``loss``, ``n`` (rows used),
        ``n_resamples``, ``path`` (``'fast'`` batched fits or ``'generic'`` refits),
        ``rows_used`` and the method's parameters and .632+ components.
    loss : {'log', 'zero_one', 'squared'}
        The per-row loss (see :data:`LOSS_LABELS`).
    methods : tuple of str
        :data:`AUDIT_METHODS`.
    plans : dict
        Model -> ``{'rows', 'n_resamples', 'n_splits', 'path'}``.
    failed : dict
        Model -> why its error could not be estimated (the other models are kept).
    best_model : str
        The model with the lowest .632+ error; ``best_estimate`` is that error.
    optimism_model : str
        The model whose resubstitution error is furthest below its K-fold error; ``optimism``
        is that gap (K-fold minus resubstitution).
    quick : bool
    n_rows : int
        Rows of the dataset (studies pooled).
    notes : tuple of str
        What was done: subsamples, resamples, models left out.
    verdict : Verdict
    seconds : dict
        Model -> seconds spent (timing only; not part of the numbers).
    """

    estimates: pd.DataFrame = field(repr=False)
    loss: str
    methods: tuple
    plans: dict
    failed: dict
    best_model: str
    best_estimate: float
    optimism_model: str
    optimism: float
    quick: bool
    n_rows: int
    notes: tuple
    verdict: Verdict
    seconds: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def loss_label(self) -> str:
        """The loss in words (``'log loss'``, ...)."""
        return LOSS_LABELS[self.loss]

    @property
    def models(self) -> tuple:
        """The models whose errors were estimated, in the order given."""
        return tuple(self.plans)

    def to_frame(self) -> pd.DataFrame:
        """The tidy table: one row per (model, method) (a copy of :attr:`estimates`)."""
        return self.estimates.copy()

    def table(self) -> pd.DataFrame:
        """One row per model: ``model``, the estimate of each method (columns named as in
        :attr:`methods`), ``optimism`` (K-fold minus resubstitution), ``rows_used``,
        ``path``."""
        wide = self.estimates.pivot(index="model", columns="method", values="estimate").reindex(
            index=list(self.models), columns=list(self.methods))
        out = wide.reset_index()
        out.columns.name = None
        out["optimism"] = (wide["kfold"] - wide["resubstitution"]).to_numpy()
        out["rows_used"] = [self.plans[m]["rows"] for m in self.models]
        out["path"] = [self.plans[m]["path"] for m in self.models]
        return out

    def plot(self, ax=None):
        """Bars of every model's estimates by method (±1 naive SE where defined).

        Returns
        -------
        matplotlib Axes
        """
        from .plots import plot_error_estimates

        frame = self.estimates.assign(method=self.estimates["method"].map(METHOD_LABELS))
        ax = plot_error_estimates(frame[["model", "method", "estimate", "se"]], ax=ax)
        ax.set_ylabel(f"estimated {self.loss_label}")
        return ax

    def __str__(self) -> str:
        body = self.table().to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return f"Prediction error by resampling ({self.loss_label})\n{body}\n{self.verdict}"


def _audit_iv(dataset, models, quick, n_jobs):
    from .._validation import check_int
    from ..errors import ParameterTypeError

    for attr in ("X", "y", "task"):
        if not hasattr(dataset, attr):
            raise ParameterTypeError("`dataset` must be a replikit Dataset (X, y, task); got "
                                     f"{type(dataset).__name__}.")
    if models is None:
        from ..experiment.models import default_models

        models = default_models(dataset.task, quick=quick)
    if not isinstance(models, dict) or not models:
        raise ParameterTypeError("`models` must be a non-empty dict of name -> estimator; got "
                                 f"{type(models).__name__}.")
    if not isinstance(quick, bool):
        raise ParameterTypeError(f"`quick` must be a bool; got {type(quick).__name__}.")
    return models, check_int(n_jobs, "n_jobs", min_value=1)


def audit(dataset, *, models: dict | None = None, quick: bool = False, random_state=None,
          n_jobs: int = 1, progress: Callable[[int], Any] | None = None) -> ErrorAudit:
    r"""Honest prediction-error estimates of each model on a dataset (seed 003).

    For every model, :func:`~replikit.resampling.estimate_errors` computes the resubstitution
    error (eq. 3), K-fold cross-validation (eq. 5), the bootstrap with pooled out-of-bag errors
    (eq. 6), the leave-one-out bootstrap (eq. 7) and the .632+ bootstrap (Efron & Tibshirani
    1997, overfitting rate clipped to [0, 1]) on the pooled rows, with one loss for all models:
    the log loss for classifiers when every model has ``predict_proba`` (.632+ needs a loss per
    row, and the log loss is a proper score), else the misclassification rate; the squared
    error for a continuous outcome. The optimism of the apparent error is
    ``Err_K − Err_R`` (eq. 5 minus eq. 3).

    Plan (the time budget): a model with a batched fit for the chosen loss (linear/ridge/binary
    logistic regression, LDA for the misclassification rate, baselines:
    :mod:`replikit.resampling._fast`) uses all rows, 200 resamples and 10 folds; any
    other model is refitted once per resample on a stratified random subsample of at most 1,500
    rows with 25 resamples (quick mode: 50 batched resamples; 400 rows, 8 resamples and 5 folds
    otherwise). A model whose estimates fail is left out with the reason; the others are kept.

    Parameters
    ----------
    dataset : Dataset
        ``X``, ``y``, ``task`` (:class:`replikit.data.userdata.Dataset`); studies are pooled.
    models : dict of str -> estimator, optional
        Default :func:`replikit.experiment.models.default_models` of the task.
    quick : bool, default False
        Fewer resamples and smaller subsamples (previews, tests).
    random_state : None, int or numpy.random.Generator
        Root of every draw (subsamples, resamples, model seeds); the same int gives the same
        numbers, whatever ``n_jobs``.
    n_jobs : int, default 1
        Worker processes for the refitted models.
    progress : callable, optional
        Called with 1 after each model (a progress bar's ``advance``).

    Returns
    -------
    ErrorAudit

    Raises
    ------
    DataError
        When no model's error can be estimated (each model's reason is given).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from replikit.data.userdata import Dataset
    >>> from replikit.experiment.models import make_models
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(120, 3)), columns=list("abc"))
    >>> y = pd.Series(X["a"] + rng.normal(size=120), name="y")
    >>> res = audit(Dataset("toy", X, y, None, "regression", 0),
    ...             models=make_models("lr,dummy", "regression"), quick=True, random_state=0)
    >>> res.best_model, res.loss
    ('lr', 'squared')
    >>> res.verdict.level
    'info'
    """
    import pandas as pd

    from .._random import root_seed_sequence, task_rng
    from ..errors import DataError, ReplikitError
    from .error import batched_fit, estimate_errors

    models, n_jobs = _audit_iv(dataset, models, quick, n_jobs)
    root = root_seed_sequence(random_state)
    task = dataset.task
    loss = _choose_loss(task, models)
    X = dataset.X.reset_index(drop=True)
    y = dataset.y.reset_index(drop=True)
    n = len(y)
    n_classes = int(y.nunique()) if task == "classification" else 0
    frames, plans, failed, seconds, notes = [], {}, {}, {}, []
    for name, model in models.items():
        fast = batched_fit(model, task, loss, n_classes) is not None
        plan = _plan(fast, n, quick)
        Xs, ys = X, y
        if plan["rows"] < n:
            keep = subsample(y, plan["rows"], stratify=task == "classification",
                             random_state=task_rng(root, ("resampling-rows", name)))
            Xs, ys = X.iloc[keep].reset_index(drop=True), y.iloc[keep].reset_index(drop=True)
            plan["rows"] = len(keep)
        start = time.perf_counter()
        try:
            res = estimate_errors(model, Xs, ys, methods=AUDIT_METHODS, loss=loss, task=task,
                                  n_resamples=plan["n_resamples"], n_splits=plan["n_splits"],
                                  random_state=root, n_jobs=n_jobs)
        except (ReplikitError, ValueError) as exc:  # one model failing keeps the others
            failed[name] = " ".join(str(exc).split())
            if progress is not None:
                progress(1)
            continue
        seconds[name] = time.perf_counter() - start
        frame = res.to_frame()
        frame.insert(0, "model", name)
        frame["rows_used"] = plan["rows"]
        frames.append(frame)
        plans[name] = {**plan, "path": res["kfold"].path}
        if plan["rows"] < n:
            notes.append(f"{name}: a random subsample of {plan['rows']:,} of {n:,} rows, "
                         f"{plan['n_resamples']} bootstrap resamples, {plan['n_splits']}-fold CV")
        else:
            notes.append(f"{name}: all {n:,} rows, {plan['n_resamples']} bootstrap resamples, "
                         f"{plan['n_splits']}-fold CV ({res['kfold'].path} path)")
        if progress is not None:
            progress(1)
    if not frames:
        raise DataError("no model's error could be estimated: " + "; ".join(
            f"{m}: {why}" for m, why in failed.items()))
    notes.extend(f"{m} left out: {why}" for m, why in failed.items())
    if dataset.study is not None and dataset.n_studies > 1:
        notes.append(f"the {dataset.n_studies} studies are pooled")
    estimates = pd.concat(frames, ignore_index=True)
    wide = estimates.pivot(index="model", columns="method", values="estimate").reindex(
        index=list(plans))
    best = str(wide[".632+"].idxmin())
    gap = wide["kfold"] - wide["resubstitution"]
    worst = str(gap.idxmax())
    verdict = _verdict(loss, best, float(wide.loc[best, ".632+"]), worst, float(gap[worst]),
                       plans, failed, n, quick, dataset.n_studies)
    return ErrorAudit(estimates, loss, AUDIT_METHODS, plans, failed, best,
                      float(wide.loc[best, ".632+"]), worst, float(gap[worst]), quick, n,
                      tuple(notes), verdict, seconds)


def _verdict(loss, best, best_estimate, worst, optimism, plans, failed, n, quick,
             n_studies) -> Verdict:
    label = LOSS_LABELS[loss]
    sentence = f"{best} has the lowest estimated {label} (.632+ bootstrap: {best_estimate:.3g})"
    if optimism > 0:
        sentence += (f"; judged on the rows it was fitted to, {worst} would look better than "
                     f"under cross-validation by {optimism:.3g}.")
    else:
        sentence += "; no model looks better on its training rows than under cross-validation."
    caveats = []
    sub = [m for m, p in plans.items() if p["rows"] < n]
    if sub:
        caveats.append(f"{', '.join(sub)} estimated on a random subsample of rows with fewer "
                       "resamples (leaning pessimistic for a model trained on all rows)")
    if failed:
        caveats.append("not estimated: " + ", ".join(failed))
    if quick:
        caveats.append("quick mode: fewer resamples")
    if n_studies > 1:
        caveats.append("studies pooled: the error of a model applied within the same studies, "
                       "not to a new one")
    return Verdict(sentence, label, "info", estimate=best_estimate, caveats=tuple(caveats))
