"""The audit entry of the resampling capability: honest prediction-error estimates of several
models, by the estimators of Etherington & Lieske (2019), a replication of Verbyla & Litvaitis
(1989).

:func:`audit` estimates each model's prediction error on a dataset by resubstitution (eq. 3),
K-fold cross-validation (eq. 5), the bootstrap with pooled out-of-bag errors (eq. 6), Efron's
leave-one-out bootstrap (eq. 7) and the .632+ bootstrap (Efron & Tibshirani 1997), with
:func:`~replikit.resampling.estimate_errors`, so that the optimism of the apparent error shows.
Every model uses every row. Models with a batched fit (linear models, LDA, baselines) get 200
bootstrap resamples; the others, refitted one resample at a time, get as many as a fixed budget
of row-fits allows (50 up to 3,000 rows, at least 10) — fewer resamples add Monte-Carlo noise
but, unlike a row subsample, no bias. K-fold CV can come from a run the caller shares (the
report's one cross-validation, also used by the model comparison). Its verdict names the model
with the lowest K-fold error (the estimate that has an interval, and the one the model comparison
tests), says when the .632+ bootstrap ranks another model lowest, and names the model whose
apparent error is most optimistic.

The package binds :func:`audit` eagerly (``replikit.resampling.audit`` is the function, not this
module), so this module imports nothing heavy at import time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from ..results import Result, Verdict

__all__ = ["ErrorAudit", "audit", "bootstrap_plan", "AUDIT_METHODS", "METHOD_LABELS",
           "LOSS_LABELS"]

#: The methods the audit estimates, in the order they are shown.
AUDIT_METHODS = ("resubstitution", "kfold", "bootstrap", "loo_bootstrap", ".632+")
#: How each method is named in tables and figures.
METHOD_LABELS = {"resubstitution": "resubstitution (eq. 3)", "kfold": "K-fold CV (eq. 5)",
                 "bootstrap": "bootstrap (eq. 6)", "loo_bootstrap": "LOO bootstrap (eq. 7)",
                 ".632+": ".632+ bootstrap"}
#: The loss of each task, in words.
LOSS_LABELS = {"log": "log loss", "zero_one": "misclassification rate",
               "squared": "mean squared error"}


#: Row-fits per model of the bootstrap of a model refitted per resample: ``n_resamples =
#: clip(round(GENERIC_ROW_FITS / n), 10, 50)`` (quick: ``QUICK_ROW_FITS``, 5 to 10).
GENERIC_ROW_FITS, QUICK_ROW_FITS = 150_000, 40_000
#: Repetitions of nested cross-validation for the K-fold interval of a batched model (quick: 3).
AUDIT_NESTED_REPEATS, QUICK_NESTED_REPEATS = 10, 3
#: Bytes one model's bootstrap may hold at once: the predictions and losses of every resample
#: and row (8 bytes each; a probability per class) and its weights and test masks (1 byte
#: each). Beyond it the model gets fewer resamples (never fewer rows, never below
#: :data:`MEMORY_LEAST_RESAMPLES`): 33 for a million rows of a continuous outcome. With the
#: temporaries of the batched fits and losses the audit process holds about twice this while
#: the workers refit the other models (1 GB until 2026-11-28: 2.2 GiB in the audit process at
#: 300,000 rows, and the whole audit's goal is 4 GiB).
MEMORY_BYTES, MEMORY_LEAST_RESAMPLES = 600_000_000, 10


def memory_resamples(n: int, n_proba: int = 0) -> int:
    """The most bootstrap resamples of ``n`` rows whose predictions (``n_proba`` class
    probabilities per row, or one value) and losses fit :data:`MEMORY_BYTES`.

    Examples
    --------
    >>> memory_resamples(100_000), memory_resamples(1_000_000), memory_resamples(10**8)
    (333, 33, 10)
    """
    per = max(1, n) * (8 * max(1, n_proba) + 8 + 2)
    return int(max(MEMORY_LEAST_RESAMPLES, MEMORY_BYTES // per))


def _plan(fast: bool, n: int, quick: bool, cost: float = 0.0) -> dict:
    """Rows, resamples and folds of one model: every row always; a batched model gets 200
    resamples (50 in quick mode); a model refitted per resample ``clip(round(150,000 / n), 10,
    50)`` (quick: ``clip(round(40,000 / n), 5, 10)``), with 10-fold CV (5 in quick mode), and
    no more than the time budget affords: ``cost`` is the seconds of one resample of every
    refitted model (:func:`replikit.experiment.budget.fit_seconds`), and the resamples are at
    most :func:`~replikit.experiment.budget.affordable_resamples` of it (never below the low
    end)."""
    if fast:  # ``cost``: one batched fit (of one resample)
        resamples = 50 if quick else 200
        if cost > 0 and not quick:
            from ..experiment.budget import BATCHED_SECONDS, affordable_resamples

            resamples = affordable_resamples(cost, 200, 50, seconds=BATCHED_SECONDS)
        return {"rows": n, "n_resamples": resamples, "n_folds": 10}
    budget, low, high = (QUICK_ROW_FITS, 5, 10) if quick else (GENERIC_ROW_FITS, 10, 50)
    by_rows = int(min(high, max(low, round(budget / max(n, 1)))))
    if cost > 0 and not quick:
        from ..experiment.budget import affordable_resamples

        by_rows = min(by_rows, affordable_resamples(cost, high, low))
    return {"rows": n, "n_resamples": by_rows, "n_folds": 5 if quick else 10}


def bootstrap_plan(dataset, models: dict, *, quick: bool = False) -> dict:
    """The bootstrap :func:`audit` makes of each model, before any fit: model -> ``{'rows',
    'n_resamples', 'n_folds', 'path', 'seconds', 'nested_repeats'}`` (``path``: ``'fast'``
    batched fits or ``'generic'`` refits; ``seconds``: the expected seconds of its fits on one
    core of the reference machine, :func:`replikit.experiment.budget.fit_seconds`;
    ``nested_repeats``: the repetitions of nested CV for a batched model's K-fold interval).
    A batched model's resamples (50 to 200) and nested repetitions (3 to 10) follow
    :data:`~replikit.experiment.budget.BATCHED_SECONDS` (its weighted Gram matrices cost
    ``n p^2`` per fit: only wide and long tables get fewer).

    Parameters
    ----------
    dataset : Dataset
        The data the audit reads (its size sets the plan).
    models : dict of str -> estimator
        The models the audit estimates the error of.
    quick : bool, default False
        The preview's smaller plan.

    Returns
    -------
    dict
        Model name -> its plan (the keys above).

    See Also
    --------
    audit : Makes these fits.
    replikit.experiment.budget.fit_seconds : The cost model.

    References
    ----------
    .. [1] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from replikit.data.userdata import Dataset
    >>> from replikit.experiment.models import make_models
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(500, 3)), columns=list("abc"))
    >>> y = pd.Series(X["a"] + rng.normal(size=500), name="y")
    >>> plan = bootstrap_plan(Dataset("toy", X, y, None, "regression", 0),
    ...                       make_models("lr,rf", "regression"))
    >>> plan["lr"]["path"], plan["rf"]["path"], plan["rf"]["n_resamples"]
    ('fast', 'generic', 50)
    """
    from ..experiment.budget import TableSize, fit_seconds
    from .error import batched_fit

    task = dataset.task
    loss = _choose_loss(task, models)
    n = len(dataset.y)
    n_classes = int(dataset.y.nunique()) if task == "classification" else 0
    size = TableSize.of(dataset.X)
    oob = int(round(0.368 * n))
    kinds = {name: getattr(batched_fit(m, task, loss, n_classes), "kind", None)
             for name, m in models.items()}
    fast = {name: kind is not None for name, kind in kinds.items()}
    # a resample: one fit, predictions of its out-of-bag rows (about 36.8%); besides, one fit
    # on every row predicting every row (the resubstitution error)
    each = {name: 0.0 if fast[name] else fit_seconds(m, size, task, n_predict=oob)
            for name, m in models.items()}
    cost = sum(each.values())
    out = {}
    for name, m in models.items():
        # a batched fit: the weighted Gram matrix of every resample, n p^2 (a few IRLS steps
        # for the logistic regression); nothing for a baseline
        kind = str(kinds[name])
        batched = 0.0 if kind.startswith("dummy") else 4e-11 * n * size.n_columns ** 2 * (
            3.5 if kind == "logistic" else 1)
        plan = _plan(fast[name], n, quick, batched if fast[name] else cost)
        most = memory_resamples(n, n_classes if loss == "log" else 0)
        limited = "memory" if plan["n_resamples"] > most else None
        plan["n_resamples"] = min(plan["n_resamples"], most)
        full = 0.0 if fast[name] else fit_seconds(m, size, task, n_predict=n)
        seconds = each[name] * plan["n_resamples"] + full
        nested = QUICK_NESTED_REPEATS if quick else AUDIT_NESTED_REPEATS
        if fast[name] and not quick:  # nested CV: about K^2 batched fits per repetition;
            # on wide data the least squares of a repetition share its K folds' Gram
            # matrices (_fast._pattern_grams: measured about K batched fits)
            from ..experiment.budget import BATCHED_SECONDS
            from ._fast import WIDE_FEATURES

            shared = size.n_columns >= WIDE_FEATURES and kind in ("ols", "ridge")
            per = batched * plan["n_folds"] ** (1 if shared else 2)
            nested = int(min(AUDIT_NESTED_REPEATS, BATCHED_SECONDS // max(per, 1e-12)))
            # fewer than 3 repetitions would not make an interval: the Wald one instead
            nested = nested if nested >= QUICK_NESTED_REPEATS else 0
            seconds = batched * plan["n_resamples"] + per * nested
        out[name] = {**plan, "path": "fast" if fast[name] else "generic",
                     "seconds": seconds, "nested_repeats": nested, "limited_by": limited}
    return out


def _overlap_too_big(engine, planned: dict, batched: list, n: int, columns: int,
                     loss: str) -> bool:
    """Whether the batched fits (in this process: about twice a bootstrap's predictions and
    losses, :func:`memory_resamples`) beside the workers' refits of every row
    (:func:`~replikit.experiment.engine.refit_bytes` each) would take this process and its
    joblib workers above the engine's memory goal. A Dask cluster keeps its own limits."""
    from ..experiment.engine import refit_bytes, resident_bytes

    if engine.backend != "joblib" or engine.memory_goal is None:
        return False
    n_proba = 2 if loss == "log" else 0  # the two-class bound; more classes hold more
    batched_bytes = max(2 * planned[m]["n_resamples"] * n * (8 * max(1, n_proba) + 10)
                        for m in batched)
    need = resident_bytes() + batched_bytes + engine.workers * refit_bytes(n, columns)
    return need > engine.memory_goal


def _choose_loss(task: str, models: dict) -> str:
    """.632+ and the bootstrap need a loss per row: the log loss (a proper score) for
    classifiers when every model gives probabilities, else the misclassification rate; the
    squared error for a continuous outcome."""
    if task != "classification":
        return "squared"
    return "log" if all(hasattr(m, "predict_proba") for m in models.values()) else "zero_one"


@dataclass(frozen=True, slots=True)
class ErrorAudit(Result):
    """Result of :func:`audit`: every model's error estimates, the plan behind them, the verdict.

    Attributes
    ----------
    estimates : pandas.DataFrame
        The tidy table (:meth:`to_frame`): one row per (model, method) with ``estimate``,
        ``se``, ``ci_low``, ``ci_high`` and ``interval`` (K-fold: nested CV for a batched
        model, the naive Wald interval otherwise; none for the others), ``loss``, ``n``,
        ``n_resamples``, ``path`` (``'fast'`` batched fits or ``'generic'`` refits),
        ``rows_used`` and the method's parameters and .632+ components.
    loss : {'log', 'zero_one', 'squared'}
        The per-row loss (see :data:`LOSS_LABELS`).
    methods : tuple of str
        :data:`AUDIT_METHODS`.
    plans : dict
        Model -> ``{'rows', 'n_resamples', 'n_folds', 'path'}``.
    failed : dict
        Model -> why its error could not be estimated (the other models are kept).
    best_model : str
        The model with the lowest K-fold error (the estimate with an interval; the model
        comparison tests its difference from the others on the same kind of cross-validation);
        ``best_estimate`` is that error.
    best_estimate : float
        The best model's K-fold error.
    best_632 : str
        The model with the lowest .632+ error: when it is not ``best_model``, the two
        estimators disagree on which model is best, and the verdict says so.
    optimism_model : str
        The model whose resubstitution error is furthest below its K-fold error.
    optimism : float
        That gap (K-fold minus resubstitution).
    quick : bool
        Whether the audit ran in quick mode (fewer resamples and folds).
    n_rows : int
        Rows of the dataset (studies pooled).
    notes : tuple of str
        What was done: resamples, folds, models left out.
    verdict : Verdict
        The sentence; its key number is the best model's (lowest K-fold error) K-fold error
        with its 95% interval: nested cross-validation for a model with a batched fit, else
        the naive Wald interval (the .632+ bootstrap has no calibrated interval).
    seconds : dict
        Model -> seconds spent (timing only; not part of the numbers).

    See Also
    --------
    audit : Computes it.
    ErrorEstimates : One model's estimates.

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
    >>> list(res.table().columns[:3]), res.verdict.label
    (['model', 'resubstitution', 'kfold'], "lr's 10-fold CV mean squared error (its error on new rows like these), 95% nested cross-validation interval")
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
    best_632: str = ""

    @property
    def loss_label(self) -> str:
        """The loss in words (``'log loss'``, ...)."""
        return LOSS_LABELS[self.loss]

    @property
    def models(self) -> tuple:
        """The models whose errors were estimated, in the order given."""
        return tuple(self.plans)

    @property
    def title(self) -> str:
        """``'Prediction error by resampling (<loss>)'``."""
        return f"Prediction error by resampling ({self.loss_label})"

    def to_frame(self) -> pd.DataFrame:
        """The tidy table: one row per (model, method) (a copy of :attr:`estimates`).

        Returns
        -------
        pandas.DataFrame
            ``model, method, estimate, se, loss, n, n_resamples, path, ...``.
        """
        return self.estimates.copy()

    def table(self) -> pd.DataFrame:
        """One row per model: ``model``, the estimate of each method (columns named as in
        :attr:`methods`), ``optimism`` (K-fold minus resubstitution), the 95% interval of the
        K-fold estimate (``kfold_ci_low``, ``kfold_ci_high``, ``kfold_interval``: ``'nested'``
        or ``'wald'``), ``rows_used``, ``path``.

        Returns
        -------
        pandas.DataFrame
            One row per model, in the order given.
        """
        wide = self.estimates.pivot(index="model", columns="method", values="estimate").reindex(
            index=list(self.models), columns=list(self.methods))
        out = wide.reset_index()
        out.columns.name = None
        out["optimism"] = (wide["kfold"] - wide["resubstitution"]).to_numpy()
        kf = self.estimates[self.estimates["method"] == "kfold"].set_index("model").reindex(
            list(self.models))
        out["kfold_ci_low"] = kf["ci_low"].to_numpy(dtype=float)
        out["kfold_ci_high"] = kf["ci_high"].to_numpy(dtype=float)
        out["kfold_interval"] = kf["interval"].to_numpy()
        out["rows_used"] = [self.plans[m]["rows"] for m in self.models]
        out["path"] = [self.plans[m]["path"] for m in self.models]
        return out

    def plot(self, ax=None):
        """Bars of every model's estimates by method (with the 95% interval where there is one).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; by default a new figure (shown inline in a notebook).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_error_estimates

        frame = self.estimates.assign(method=self.estimates["method"].map(METHOD_LABELS))
        ax = plot_error_estimates(frame[["model", "method", "estimate", "ci_low", "ci_high"]],
                                  ax=ax)
        ax.set_ylabel(f"estimated {self.loss_label}")
        return ax

    def __str__(self) -> str:
        body = self.table().to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return f"{self.title}\n{body}\n{self.verdict}"


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
          n_jobs: int = 1, progress: Callable[[int], Any] | None = None,
          cv=None, engine=None) -> ErrorAudit:
    r"""Honest prediction-error estimates of each model on a dataset (Etherington & Lieske
    (2019) [1]_, replicating Verbyla & Litvaitis (1989) [2]_).

    For every model, :func:`~replikit.resampling.estimate_errors` computes the resubstitution
    error (eq. 3), K-fold cross-validation (eq. 5), the bootstrap with pooled out-of-bag errors
    (eq. 6), the leave-one-out bootstrap (eq. 7) and the .632+ bootstrap (Efron & Tibshirani
    (1997) [3]_, overfitting rate clipped to [0, 1]) on the pooled rows, with one loss for all models:
    the log loss for classifiers when every model has ``predict_proba`` (.632+ needs a loss per
    row, and the log loss is a proper score), else the misclassification rate; the squared
    error for a continuous outcome. The optimism of the apparent error is
    ``Err_K − Err_R`` (eq. 5 minus eq. 3).

    Plan (the time budget): every model uses every row. A model with a batched fit for the
    chosen loss (linear/ridge/binary logistic regression, LDA for the misclassification rate,
    baselines: :mod:`replikit.resampling._fast`) gets 200 resamples and 10 folds; any other
    model is refitted once per resample, ``clip(round(150,000 / n), 10, 50)`` times (quick mode:
    50 batched resamples; ``clip(round(40,000 / n), 5, 10)`` refits and 5 folds). A model whose
    estimates fail is left out with the reason; the others are kept. With ``cv``, K-fold CV is
    read from that run's first repeat instead of being refitted.

    Parameters
    ----------
    dataset : Dataset
        ``X``, ``y``, ``task`` (:class:`replikit.data.userdata.Dataset`); studies are pooled.
    models : dict of str -> estimator, optional
        Default :func:`replikit.experiment.models.default_models` of the task.
    quick : bool, default False
        Fewer resamples and folds (previews, tests).
    random_state : None, int or numpy.random.Generator
        Root of every draw (resamples, folds, the models' random states); the same int gives
        the same numbers, whatever ``n_jobs``.
    n_jobs : int, default 1
        Worker processes for the refitted models.
    progress : callable, optional
        Called with 1 after each model (a progress bar's ``advance``).
    cv : RunResult, optional
        Predictions of ``models`` under repeated K-fold CV of every row of ``dataset``
        (:func:`replikit.experiment.run` with ``return_predictions=True``, e.g. the design of
        :func:`replikit.compare.audit_design`): its first repeat is the K-fold estimate (eq. 5),
        so the report's one cross-validation serves both sections. Checked: every row tested
        once in that repeat, every model present.
    engine : Engine, optional
        Where the refitted models' fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`), instead of ``n_jobs``: an analysis
        passes one engine to all its parts, so every fit goes to one cluster and one store,
        and an audit killed and started again refits nothing it had finished. The numbers do
        not depend on it.

    Returns
    -------
    ErrorAudit
        Every model's estimates, the plan behind them and the verdict.

    Raises
    ------
    DataError
        When no model's error can be estimated (each model's reason is given).

    See Also
    --------
    estimate_errors : One model's estimates by several methods.
    ErrorAudit : The result.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317
    .. [3] Efron, B. & Tibshirani, R. (1997). Improvements on Cross-Validation: The .632+
       Bootstrap Method. Journal of the American Statistical Association, 92(438), 548–560.
       https://doi.org/10.1080/01621459.1997.10474007

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

    from .._convergence import model_fits
    from .._random import root_seed_sequence
    from ..errors import DataError, ReplikitError
    from .error import _engine_iv, estimate_error, estimate_errors

    models, n_jobs = _audit_iv(dataset, models, quick, n_jobs)
    engine = _engine_iv(engine, n_jobs)  # n_jobs joblib workers unless an engine is given
    root = root_seed_sequence(random_state)
    task = dataset.task
    loss = _choose_loss(task, models)
    X = dataset.X.reset_index(drop=True)
    y = dataset.y.reset_index(drop=True)
    n = len(y)
    frames, plans, failed, seconds, notes = [], {}, {}, {}, []
    methods = AUDIT_METHODS if cv is None else tuple(m for m in AUDIT_METHODS if m != "kfold")
    shared = _cv_predictions(cv, list(models), n) if cv is not None else None
    planned = bootstrap_plan(dataset, models, quick=quick)

    def estimated(name, model):
        """One model's estimates: ``(res, nested, shared_folds, seconds)``, or the reason it
        failed; its fits counted for it (the command line's note on fits that did not
        converge)."""
        with model_fits(name):
            return _estimated(name, model)

    def _estimated(name, model):
        fast = planned[name]["path"] == "fast"
        nested_reps = planned[name]["nested_repeats"]
        start = time.perf_counter()
        try:
            res = estimate_errors(model, X, y, methods=methods, loss=loss, task=task,
                                  n_resamples=planned[name]["n_resamples"],
                                  n_folds=planned[name]["n_folds"],
                                  interval=None if fast and nested_reps else "wald",
                                  n_nested_repeats=max(nested_reps, 1), random_state=root,
                                  engine=engine)
            nested = None
            shared_folds = (int(_kfold_row(shared[name], loss, y, n, "fast")["n_folds"])
                            if shared is not None else 0)
            if fast and shared_folds >= 3 and nested_reps:  # the shared K-fold's interval,
                # with its K (nested CV needs three folds: quick mode's 5x2 CV has two)
                nested = estimate_error(model, X, y, method="kfold", loss=loss, task=task,
                                        n_folds=shared_folds, interval="nested",
                                        n_nested_repeats=nested_reps, random_state=root,
                                        engine=engine)
        except (ReplikitError, ValueError) as exc:  # one model failing keeps the others
            return " ".join(str(exc).split())
        return res, nested, shared_folds, time.perf_counter() - start

    # The batched fits run in this process and never use the engine: with workers, they
    # run in a thread while the workers refit the other models (the numbers are the same;
    # the cores are not left idle while one process solves the batched systems).
    batched = [m for m in models if planned[m]["path"] == "fast"]
    overlap = bool(batched) and len(batched) < len(models) and engine.backend != "serial"
    if overlap and _overlap_too_big(engine, planned, batched, n, X.shape[1], loss):
        overlap = False  # the batched fits first, then the refits (as many at once as fit)
        notes.append("the batched fits ran before the refitted models, not beside them, to "
                     f"stay within the {engine.memory_goal / 2**30:g} GiB memory goal")
    noted = len(engine.memory_notes)
    outcome = {}
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = {m: pool.submit(estimated, m, models[m]) for m in batched} if overlap else {}
        for name, model in models.items():
            if name not in pending:
                outcome[name] = estimated(name, model)
                if progress is not None:
                    progress(1)
        for name, future in pending.items():
            outcome[name] = future.result()
            if progress is not None:
                progress(1)
    notes.extend(engine.memory_notes[noted:])  # refits run fewer at a time (Engine.map)
    for name in models:
        fast = planned[name]["path"] == "fast"
        plan = {k: planned[name][k] for k in ("rows", "n_resamples", "n_folds")}
        nested_reps = planned[name]["nested_repeats"]
        if isinstance(outcome[name], str):
            failed[name] = outcome[name]
            continue
        res, nested, shared_folds, seconds[name] = outcome[name]
        frame = res.to_frame()
        path = res[methods[-1]].path
        if shared is not None:
            kfold = _kfold_row(shared[name], loss, y, n, path, nested)
            plan["n_folds"] = int(kfold["n_folds"])
            frame = pd.concat([frame.iloc[:1], pd.DataFrame([kfold]), frame.iloc[1:]],
                              ignore_index=True)
        frame.insert(0, "model", name)
        frame["rows_used"] = plan["rows"]
        frames.append(frame)
        used = str(frame.loc[frame["method"] == "kfold", "interval"].iloc[0])
        plans[name] = {**plan, "path": path, "interval": used,
                       "nested_repeats": nested_reps if used == "nested" else 0,
                       "limited_by": planned[name]["limited_by"]}
        notes.append(f"{name}: all {n:,} rows, {plan['n_resamples']} bootstrap resamples "
                     f"({path} path"
                     + ("; fewer, to hold them in memory" if plans[name]["limited_by"] else "")
                     + f"), {plan['n_folds']}-fold CV"
                     + (" (the report's shared cross-validation)" if shared is not None else "")
                     + (f", its interval by nested cross-validation ({nested_reps} "
                        "repetitions, batched fits)" if used == "nested" else
                        ", its interval the naive Wald one (nested cross-validation needs "
                        "at least 3 folds)" if fast and shared is not None and shared_folds < 3
                        else ", its interval the naive Wald one (nested cross-validation of "
                        f"{n:,} rows x {X.shape[1]:,} columns is beyond the time budget)"
                        if fast and not nested_reps
                        else ", its interval the naive Wald one (nested cross-validation failed)"
                        if fast else
                        ", its interval the naive Wald one (nested cross-validation would "
                        f"refit {name} {plan['n_folds'] * (plan['n_folds'] + 1) // 2} times "
                        "per repetition)"))
    if not frames:
        raise DataError("no model's error could be estimated: " + "; ".join(
            f"{m}: {why}" for m, why in failed.items()))
    notes.extend(f"{m} left out: {why}" for m, why in failed.items())
    if dataset.study is not None and dataset.n_studies > 1:
        notes.append(f"the {dataset.n_studies} studies are pooled")
    estimates = pd.concat(frames, ignore_index=True)
    wide = estimates.pivot(index="model", columns="method", values="estimate").reindex(
        index=list(plans))
    # the best model by the K-fold error: the key number, the estimate with an interval, and
    # the cross-validation the model comparison tests (ranking by .632+ instead let this card
    # name a model whose own K-fold error was the larger, beside a comparison naming another)
    best = str(wide["kfold"].idxmin())
    best_632 = str(wide[".632+"].idxmin())
    gap = wide["kfold"] - wide["resubstitution"]
    worst = str(gap.idxmax())
    krow = estimates[(estimates["model"] == best) & (estimates["method"] == "kfold")].iloc[0]
    sized = models.caveat() if callable(getattr(models, "caveat", None)) else ""
    if sized:
        notes.insert(0, sized)
    verdict = _verdict(loss, best, wide, best_632, worst, float(gap[worst]),
                       plans, failed, n, quick, dataset.n_studies, krow, sized)
    return ErrorAudit(estimates, loss, AUDIT_METHODS, plans, failed, best,
                      float(wide.loc[best, "kfold"]), worst, float(gap[worst]), quick, n,
                      tuple(notes), verdict, seconds, best_632)


def _cv_predictions(cv, names: list[str], n: int) -> dict:
    """Model -> its first-repeat predictions in ``cv`` (a RunResult), each row once."""
    import numpy as np

    from ..errors import ParameterError, ParameterTypeError

    preds = getattr(getattr(cv, "predictions", None), "frame", None)
    if preds is None:
        raise ParameterTypeError("`cv` must be a RunResult with predictions "
                                 "(run(..., return_predictions=True)); got "
                                 f"{type(cv).__name__}.")
    first = preds[preds["repeat"] == preds["repeat"].min()]
    out = {}
    for name in names:
        p = first[first["model"] == name].sort_values("row", kind="stable")
        if len(p) != n or not np.array_equal(p["row"].to_numpy(), np.arange(n)):
            raise ParameterError(f"`cv`: the first repeat must test each of the {n} rows "
                                 f"once for model {name!r}; it tests {len(p)}.")
        out[name] = p
    return out


def _kfold_row(p, loss: str, y, n: int, path: str, nested=None) -> dict:
    """The K-fold estimate (eq. 5) from one repeat's predictions: the mean per-row loss (each
    row tested once), with the 95% interval of ``nested`` (an :class:`ErrorEstimate` whose
    interval is nested CV) or else the naive Wald interval ``mean ± z sd(row losses) /
    sqrt(n)``, as ``estimate_errors`` reports them."""
    import numpy as np

    from ..errors import DataError

    y_true = p["y_true"].to_numpy()
    if loss == "log":
        cols = {c.removeprefix("proba_"): c for c in p.columns if c.startswith("proba_")}
        missing = {str(v) for v in np.unique(y_true)} - set(cols)
        if not cols or missing:
            raise DataError("`cv`: the log loss needs the predicted probabilities "
                            "(proba_<class> columns) of every model and class.")
        prob = np.empty(len(p))
        for label, col in cols.items():
            hit = np.asarray(y_true).astype(str) == label
            prob[hit] = p[col].to_numpy()[hit]
        row_loss = -np.log(np.clip(prob, 1e-15, 1.0))
    elif loss == "zero_one":
        row_loss = (p["y_pred"].to_numpy() != y_true).astype(float)
    else:
        row_loss = (y_true.astype(float) - p["y_pred"].to_numpy(dtype=float)) ** 2
    from ..results import wald_interval

    folds = p["fold"].to_numpy()
    k = int(np.unique(folds).size)
    est = float(row_loss.mean())
    row = {"method": "kfold", "estimate": est, "loss": loss, "n": n, "n_resamples": k,
           "path": path, "n_folds": float(k), "n_repeats": 1.0}
    if nested is not None:
        ci = nested.confidence_interval(0.95)
        row.update(se=nested.se, ci_low=ci.low, ci_high=ci.high, interval=nested.interval,
                   interval_center=nested.interval_parts["center"])
    else:
        se = float(np.std(row_loss, ddof=1) / np.sqrt(n))
        ci = wald_interval(est, se, 0.95)
        row.update(se=se, ci_low=max(0.0, ci.low), ci_high=ci.high, interval="wald")
    return row


def _verdict(loss, best, wide, best_632, worst, optimism, plans, failed, n, quick,
             n_studies, krow, sized: str = "") -> Verdict:
    import numpy as np

    from .._format import interval, number

    label = LOSS_LABELS[loss]
    nested = krow["interval"] == "nested"
    k = int(krow["n_folds"])
    kind = "nested cross-validation" if nested else "naive Wald"
    sentence = (f"{best} has the lowest estimated {label} ({k}-fold cross-validation: "
                f"{number(krow['estimate'])}, 95% {kind} interval "
                f"{interval(krow['ci_low'], krow['ci_high'])}; .632+ bootstrap: "
                f"{number(wide.loc[best, '.632+'])})")
    if best_632 != best:  # the two estimators disagree on which model is best: say so
        a, b = wide.loc[best_632], wide.loc[best]
        d = 3  # enough digits that the numbers compared do not print alike
        while d < 6 and (number(a[".632+"], d) == number(b[".632+"], d)
                         or number(a["kfold"], d) == number(b["kfold"], d)):
            d += 1
        gap = float(a["kfold"] - b["kfold"])
        se = float(krow["se"]) if np.isfinite(krow.get("se", np.nan)) else np.nan
        sentence += (f"; the .632+ bootstrap ranks {best_632} lowest instead "
                     f"({number(a['.632+'], d)} against {number(b['.632+'], d)}; its {k}-fold "
                     f"error {number(a['kfold'], d)} against {number(b['kfold'], d)}), ")
        sentence += ("a difference well inside the noise of either estimate: the model "
                     "comparison tests it" if np.isfinite(se) and gap < se else
                     "so the two estimators disagree on the best model: the model comparison "
                     "tests the difference")
    if optimism > 0:
        sentence += (f"; judged on the rows it was fitted to, {worst} would look better than "
                     f"under cross-validation by {number(optimism)}.")
    else:
        sentence += "; no model looks better on its training rows than under cross-validation."
    caveats = [sized] if sized else []  # what the time budget changed comes first
    if nested:
        caveats.append(f"the interval is nested cross-validation (Bates, Hastie & Tibshirani "
                       f"2024; {plans[best]['nested_repeats']} repetitions), whose coverage is "
                       "measured in docs/resampling.md; the .632+ bootstrap has no calibrated "
                       "interval, so the key number is the K-fold estimate")
    else:
        why = (f"nested cross-validation needs at least 3 folds, and this cross-validation has "
               f"{k}" if k < 3 else
               f"nested cross-validation would refit {best} {k * (k + 1) // 2} times per "
               "repetition, beyond the audit's time budget")
        caveats.append(f"the interval is the naive Wald one (rows treated as independent): "
                       f"{why}; the naive interval can "
                       "cover below its level (Bates, Hastie & Tibshirani 2024); the .632+ "
                       "bootstrap has no calibrated interval, so the key number is the K-fold "
                       "estimate")
    few = [m for m, p in plans.items() if p["path"] == "generic" and p["n_resamples"] < 50]
    if few and not quick:
        counts = sorted({plans[m]["n_resamples"] for m in few})
        caveats.append(f"{', '.join(few)}: {'/'.join(map(str, counts))} bootstrap resamples "
                       "each (refitted per resample; the time budget), so their bootstrap "
                       "estimates carry more Monte-Carlo noise")
    lean = [m for m, p in plans.items() if p.get("limited_by") == "memory"]
    if lean:  # what was done instead of running out of memory: on the card, with the budget's
        counts = sorted({plans[m]["n_resamples"] for m in lean})
        text = (f"{', '.join(lean)}: {'/'.join(map(str, counts))} bootstrap resamples each, "
                f"not fewer rows: the predictions of every resample of the {n:,} rows are "
                f"held at once, and a model's bootstrap is kept within about "
                f"{MEMORY_BYTES / 1e9:.1g} GB; more Monte-Carlo noise in the bootstrap "
                "estimates")
        if sized:
            caveats[0] = f"{sized}; {text}"
        else:
            caveats.insert(0, text)
    if failed:
        caveats.append("not estimated: " + ", ".join(failed))
    if quick:
        caveats.append("quick mode: fewer resamples")
    if n_studies > 1:
        caveats.append("studies pooled: the error of a model applied within the same studies, "
                       "not to a new one")
    return Verdict(sentence, label, "info", estimate=float(krow["estimate"]),
                   ci_low=float(krow["ci_low"]), ci_high=float(krow["ci_high"]),
                   caveats=tuple(caveats), tolerance="",
                   label=f"{best}'s {k}-fold CV {label} (its error on new rows like these), "
                         f"95% {kind} interval")
