"""The experiment runner: data + scikit-learn estimators + a scheme → Scores and Predictions.

Every (model, study, repeat, fold) is one task. A task's randomness comes from
``task_seed_sequence(root, key)`` (``replikit._random``), so results are bit-identical whatever
the backend (serial, joblib processes, Dask distributed) and the number of workers. All models
see the same splits (paired designs need it). Each task is one
:func:`replikit.experiment.fit.fit_predict` call, so the one seeding rule of
:mod:`replikit.experiment.fit` applies: estimators are cloned, and ``random_state`` parameters
that are ``None`` get the task's integer (a random state the user fixed is kept), so a run is
reproducible from its own ``random_state`` alone.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from .._convergence import model_fits
from .._random import root_seed_sequence, task_int_seed, task_seed_sequence
from .._validation import check_choice
from ..data.tables import Predictions, Scores
from ..errors import DataError, ModelFitError, ParameterError, ParameterTypeError, ReplikitError
from ..results import Result
from .engine import (
    BACKENDS,
    Engine,
    connect_scheduler,  # noqa: F401  (imported from here before 0.2)
    data_fingerprint,
    refit_bytes,
    spec_hash,
)
from .fit import TestRows, check_Xy, fit_predict
from .metrics import METRICS, check_metrics, compute_metric, needs_proba
from .schemes import Scheme, as_scheme

__all__ = ["run", "RunResult", "study_split_rng"]



@dataclass(frozen=True)
class RunResult(Result):
    """What :func:`run` returns: the Scores and Predictions tables and how they were made.

    Attributes
    ----------
    scores : Scores
        One row per (study, model, repeat, fold, metric), with ``n_train``/``n_test``.
    predictions : Predictions or None
        Out-of-sample predictions (``row`` = 0-based position in ``X``), ``proba_<class>``
        columns for classifiers with ``predict_proba``.
    provenance : dict
        Versions, the root random state's entropy, scheme, model parameters, data fingerprint,
        timings.

    See Also
    --------
    run : Makes it.
    replikit.data.Scores : The scores table.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(40, 2)); y = X[:, 0]
    >>> res = run({"ols": LinearRegression()}, X, y, scheme="5x2", metrics="mse",
    ...           random_state=0)
    >>> res.summary()[["model", "metric", "n"]]
      model metric   n
    0   ols    mse  10
    """

    scores: Scores
    predictions: Predictions | None
    provenance: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The scheme and the number of tasks in a line."""
        n = self.provenance.get("n_tasks")
        scheme = self.provenance.get("scheme", "")
        return f"Run of {scheme}" + (f": {n:,} fits" if isinstance(n, int) else "")

    def summary(self) -> pd.DataFrame:
        """Mean, SD and count of each metric per model (and study).

        Returns
        -------
        pandas.DataFrame
            ``study, model, metric, mean, sd, n``.
        """
        f = self.scores.frame
        return (f.groupby(["study", "model", "metric"], sort=False)["value"]
                .agg(mean="mean", sd="std", n="size").reset_index())

    def to_frame(self) -> pd.DataFrame:
        """The Scores table (one row per study, model, repeat, fold and metric).

        Returns
        -------
        pandas.DataFrame
            A copy of ``scores.frame``.
        """
        return self.scores.frame

    def to_dict(self) -> dict[str, Any]:
        """Scores, predictions and provenance in JSON types.

        Returns
        -------
        dict
            ``scores`` and ``predictions`` as lists of records (``None`` without
            predictions), ``provenance`` as a dict.
        """
        from ..results import to_jsonable

        return {"scores": to_jsonable(self.scores.frame),
                "predictions": (None if self.predictions is None
                                else to_jsonable(self.predictions.frame)),
                "provenance": to_jsonable(self.provenance)}

    def __str__(self) -> str:
        summary = self.summary().to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return f"{self.title}\n{summary}"


@dataclass(frozen=True)
class _Task:
    model: str
    study: str
    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray

    @property
    def key(self) -> tuple:
        """``(model, study, repeat, fold)``: a structured key, so that no label can make two
        tasks collide (a joined ``'m|a|b|0|0'`` string was both model ``m|a`` in study ``b`` and
        model ``m`` in study ``a|b``)."""
        return (self.model, self.study, self.repeat, self.fold)


@dataclass(frozen=True)
class _RunInputs:
    """The validated inputs of :func:`run`."""

    models: dict
    X: Any  # DataFrame (as given) or 2-D ndarray: what the estimators see
    Xa: np.ndarray  # X as an array (fingerprint, row counts)
    ya: np.ndarray
    sa: np.ndarray | None  # study labels (str)
    ga: np.ndarray | None  # scheme groups
    backend: str
    metrics: list
    scheme: Scheme
    is_clf: bool
    classes: np.ndarray | None  # sorted class labels of a classification run


@dataclass(frozen=True)
class _Settings:
    """What every task of a run shares (sent to each worker with the task)."""

    metrics: tuple
    entropy: int
    return_predictions: bool
    classes: np.ndarray | None
    spawn_key: tuple = ()


def _run_iv(models, X, y, study, groups, backend, metrics, scheme) -> _RunInputs:
    if not isinstance(models, dict) or not models:
        raise ParameterTypeError("`models` must be a non-empty dict of name -> estimator; got "
                                 f"{type(models).__name__}.")
    for name, est in models.items():
        if not isinstance(name, str) or not name:
            raise ParameterTypeError(f"`models`: names must be non-empty strings; got {name!r}.")
        if not (hasattr(est, "fit") and hasattr(est, "predict")):
            raise ParameterTypeError(f"`models[{name!r}]` must be a scikit-learn estimator with "
                                     f"fit and predict; got {type(est).__name__}.")
    backend = check_choice(backend, "backend", BACKENDS)
    X, ya = check_Xy(X, y)
    Xa = X.to_numpy() if isinstance(X, pd.DataFrame) else X
    sa = None
    if study is not None:
        sa = np.asarray(study).astype(str)
        if len(sa) != len(Xa):
            raise DataError(f"`study` must have one label per row of `X` ({len(Xa)}); got {len(sa)}.")
    ga = None if groups is None else np.asarray(groups)
    if ga is not None and len(ga) != len(Xa):
        raise DataError(f"`groups` must have one label per row of `X` ({len(Xa)}); got {len(ga)}.")
    scheme = as_scheme(scheme)
    is_surv = ya.dtype.names is not None  # check_Xy gives survival targets this layout
    if is_surv:
        metrics = check_metrics(metrics, "survival")
        _check_survival_models(models, metrics)
        return _RunInputs(models, X, Xa, ya, sa, ga, backend, metrics, scheme, False, None)
    is_clf = any(getattr(est, "_estimator_type", None) == "classifier"
                 or _is_classifier(est) for est in models.values())
    labels = None if pd.api.types.is_numeric_dtype(pd.Series(ya)) else pd.unique(ya)
    metrics = check_metrics(metrics, None if is_clf else "regression", classes=labels)
    _check_metrics_fit(metrics, models, ya, is_clf)
    classes = None
    if is_clf:
        try:  # sorted as scikit-learn sorts ``classes_``
            classes = np.unique(ya)
        except TypeError:  # labels of mixed types: columns follow each fit's classes_
            classes = None
    return _RunInputs(models, X, Xa, ya, sa, ga, backend, metrics, scheme, is_clf, classes)


def _check_survival_models(models, metrics) -> None:
    """A survival run's models must not be classifiers or regressors of plain outcomes, and
    the integrated Brier score needs models that predict survival curves."""
    for name, est in models.items():
        kind = getattr(est, "_estimator_type", None)
        if kind in ("classifier", "regressor") or _is_classifier(est):
            raise ParameterTypeError(
                f"`models[{name!r}]` is a {kind or 'classifier'} ({type(est).__name__}); a "
                "survival outcome needs a survival model whose predict gives a risk score "
                "(scikit-survival's CoxPHSurvivalAnalysis, RandomSurvivalForest, ..., or "
                "replikit.experiment.LifelinesModel).")
    if "integrated_brier_score" in metrics:
        lacking = [n for n, est in models.items()
                   if not hasattr(est, "predict_survival_function")
                   or getattr(est, "low_memory", False)]
        if lacking:
            raise ParameterError(
                "`metrics`: 'integrated_brier_score' scores predicted survival curves; model(s) "
                f"{', '.join(map(repr, lacking))} predict none (no predict_survival_function, "
                "or a forest with low_memory=True: set low_memory=False).")


def _is_classifier(est) -> bool:
    from sklearn.base import is_classifier

    try:
        return bool(is_classifier(est))
    except Exception:  # exotic estimators without tags
        return False


def _model_params(est) -> str:
    """The estimator's class and parameters as text (what a store's specification records):
    two classes with the same parameters are two models."""
    kind = f"{type(est).__module__}.{type(est).__qualname__}"
    try:
        return kind + repr(sorted((k, repr(v)) for k, v in est.get_params(deep=True).items()))
    except Exception:
        return kind + repr(est)


def _make_tasks(models, scheme: Scheme, Xa, ya, sa, ga, root, metrics=(),
                is_clf: bool = False) -> list[_Task]:
    tasks = []
    studies = ["all"] if sa is None else [str(v) for v in pd.unique(sa)]
    surv = ya.dtype.names is not None
    check = (_SurvivalCheck(ya) if surv else
             _SplitCheck(ya, metrics, is_clf, stratified=bool(getattr(scheme, "stratify", False))))
    if surv:  # schemes see (and stratify on) the event indicator
        ya = ya["event"].astype(np.int64)
    for s in studies:
        rows = np.arange(len(Xa)) if sa is None else np.flatnonzero(sa == s)
        where = "" if sa is None else f"study {s!r} ({len(rows)} rows): "
        y_s = ya[rows]
        g_s = None if ga is None else ga[rows]
        if g_s is None and sa is not None and type(scheme).__name__ == "LeaveOneStudyOut":
            raise ParameterError("`scheme`: leave-one-study-out runs across studies; pass the "
                                 "labels as `groups`, not `study`.")
        check.study(y_s, where)
        split_rng = study_split_rng(root, s)
        try:
            splits = list(scheme.iter_splits(Xa[rows], y_s, g_s, random_state=split_rng))
        except DataError as exc:
            raise DataError(f"`scheme`: {where}{exc}") from None
        for sp in splits:
            train, test = rows[sp.train], rows[sp.test]
            check.split(train, test, f"{where}repeat {sp.repeat}, fold {sp.fold}")
            for name in models:
                tasks.append(_Task(name, s, int(sp.repeat), int(sp.fold), train, test))
    return tasks


class _SplitCheck:
    """Pre-flight checks of the splits against the models and metrics, before any fit: a
    classifier needs two classes in every training set; ``r2``/``r2_corr`` need test outcomes
    that are not all equal (never true for one-row test sets); ``roc_auc`` needs both classes
    in every test set."""

    def __init__(self, ya, metrics, is_clf: bool, stratified: bool = False) -> None:
        self.is_clf = is_clf
        self.stratified = stratified
        self.varying = [m for m in metrics if m in ("r2", "r2_corr")]
        self.auc = "roc_auc" in metrics
        self.codes = None
        if is_clf or self.auc:
            self.classes, self.codes = np.unique(ya.astype(str) if ya.dtype == object else ya,
                                                 return_inverse=True)
        self.ya = ya

    def study(self, y_s, where: str) -> None:
        if self.is_clf:
            values = pd.unique(y_s)
            if len(values) < 2:
                raise DataError(f"{where or '`y`: '}every row has the same class "
                                f"({_show(values[0])}); a classifier needs at least two classes"
                                + (" — drop this study or pool it with others."
                                   if where else "."))

    def split(self, train, test, where: str) -> None:
        if self.is_clf:
            present = np.bincount(self.codes[train], minlength=len(self.classes)) > 0
            if present.sum() < 2:
                only = _show(self.classes[np.flatnonzero(present)[0]])
                counts = np.bincount(self.codes, minlength=len(self.classes))
                rare = int(np.argmin(counts))
                smallest = (f"; the smallest class, {_show(self.classes[rare])}, has "
                            f"{int(counts[rare]):,} of {len(self.codes):,} rows")
                advice = ("fewer folds, more rows of that class, or leave the class out"
                          if self.stratified else
                          "stratified splits (`stratify`), fewer folds, or more rows")
                raise DataError(f"`scheme`: {where} trains on one class only ({only}){smallest}"
                                f" — use {advice}.")
        if self.varying:
            yt = self.ya[test]
            if len(yt) < 2 or np.all(yt == yt[0]):
                m = self.varying[0]
                raise ParameterError(
                    f"`metrics`: {m!r} is undefined on a test set whose outcomes are all equal "
                    f"({where}: {len(yt)} test row(s)); use 'mse' or 'mae', or a scheme with "
                    "larger test sets.")
        if self.auc:
            if np.unique(self.codes[test]).size < 2:
                raise ParameterError(
                    f"`metrics`: 'roc_auc' needs both classes in every test set; {where} tests "
                    f"{len(test)} row(s) of one class — use stratified splits (`stratify`), "
                    "larger test sets, or 'accuracy'/'log_loss'.")


class _SurvivalCheck:
    """Pre-flight checks of a survival run's splits: every training set needs an event (no
    survival model can be fitted on censored times alone), every test set an event and a
    later follow-up time (else no pair is comparable and the C-index is undefined)."""

    def __init__(self, ya) -> None:
        self.time, self.event = ya["time"], ya["event"]

    def study(self, y_s, where: str) -> None:  # y_s: the study's event indicators
        if not np.asarray(y_s).any():
            raise DataError(f"{where or '`y`: '}every time is censored (no event); a survival "
                            "model needs events" + (" — drop this study or pool it with "
                                                    "others." if where else "."))

    def split(self, train, test, where: str) -> None:
        if not self.event[train].any():
            raise DataError(f"`scheme`: {where} trains on censored times only (no event); use "
                            "stratified splits (`stratify`), fewer folds or more rows.")
        ev = self.event[test]
        if not ev.any() or self.time[test][ev].min() >= self.time[test].max():
            raise DataError(
                f"`scheme`: {where} tests {len(test)} row(s) with "
                f"{'no event' if not ev.any() else 'no follow-up beyond the first event'}, so "
                "no pair of them is comparable and the C-index is undefined — use stratified "
                "splits (`stratify`), fewer folds or larger test sets.")


def _show(v) -> str:
    return repr(v.item() if isinstance(v, np.generic) else v)


def _check_metrics_fit(metrics, models, ya, is_clf) -> None:
    """Metrics that cannot be computed whatever the splits: ``roc_auc`` on more than two
    classes, a probability metric for a model without ``predict_proba`` (an error metric
    (``mse`` ...) on text labels is refused by ``check_metrics``)."""
    classes = pd.unique(ya)
    if "roc_auc" in metrics and len(classes) > 2:
        raise ParameterError(f"`metrics`: 'roc_auc' is defined for two classes; `y` has "
                             f"{len(classes)}. Use 'accuracy', 'balanced_accuracy' or "
                             "'log_loss'.")
    for m in metrics:
        if needs_proba(m):
            lacking = [n for n, est in models.items() if not hasattr(est, "predict_proba")]
            if lacking:
                raise ParameterError(f"`metrics`: {m!r} needs predicted probabilities; model(s) "
                                     f"{', '.join(map(repr, lacking))} have no predict_proba.")


def _check_nan(frame: pd.DataFrame) -> None:
    """A metric that came out undefined (NaN) after fitting, e.g. r2_corr of constant
    predictions: one clear error instead of a Scores table with holes."""
    bad = frame["value"].isna()
    if not bad.any():
        return
    first = frame.loc[bad].iloc[0]
    sub = frame[(frame["metric"] == first["metric"]) & (frame["model"] == first["model"])]
    k = int(sub["value"].isna().sum())
    reason = (" (constant predictions)" if first["metric"] == "r2_corr" else "")
    raise ParameterError(f"`metrics`: {first['metric']!r} is undefined (NaN) for model "
                         f"{first['model']!r} in {k} of {len(sub)} split(s){reason}; choose "
                         "another metric.")


def study_split_rng(random_state, study) -> np.random.Generator:
    """The random stream from which :func:`run` draws the splits of ``study``.

    For code that must reproduce those splits — e.g. a batched fast path that fits on the
    runner's own splits.

    Parameters
    ----------
    random_state : None, int, Generator or numpy.random.SeedSequence
        The run's ``random_state`` (or its root sequence).
    study : object
        The study label (``'all'`` when the run has no study labels).

    Returns
    -------
    numpy.random.Generator
        The stream ``run`` passes to the scheme for that study.

    See Also
    --------
    run : Draws each study's splits from this stream.

    Examples
    --------
    >>> a = study_split_rng(0, "all").integers(0, 10**6)
    >>> b = study_split_rng(0, "all").integers(0, 10**6)
    >>> bool(a == b)
    True
    """
    root = random_state if isinstance(random_state, np.random.SeedSequence) else \
        root_seed_sequence(random_state)
    return np.random.default_rng(task_seed_sequence(root, ("split", str(study))))


def _execute(task: _Task, estimator, X, ya, settings: _Settings):
    """Fit and evaluate one task (one :func:`fit_predict` call under the task's integer); returns
    its metric values and (optionally) predictions, probabilities aligned to the run's
    classes."""
    t0 = time.perf_counter()
    metrics, return_predictions = settings.metrics, settings.return_predictions
    root = np.random.SeedSequence(settings.entropy, spawn_key=settings.spawn_key)
    seed = task_int_seed(root, (task.model, task.study, task.repeat, task.fold))
    take = (lambda idx: X.iloc[idx]) if isinstance(X, pd.DataFrame) else (lambda idx: X[idx])
    X_train, X_test = take(task.train), TestRows(X, task.test)  # test rows taken by blocks
    y_train, y_test = ya[task.train], ya[task.test]
    want_proba = return_predictions or any(map(needs_proba, metrics))
    try:
        with model_fits(task.model):
            fitted = fit_predict(estimator, X_train, y_train, X_test, random_state=seed,
                                 proba=want_proba, classes=settings.classes)
    except ReplikitError:
        raise
    except ValueError as exc:  # scikit-learn's message says what the data lack
        detail = " ".join(str(exc).split())[:300]
        raise ModelFitError(f"model {task.model!r} failed on {_where(task)}: {detail}",
                            model=task.model) from None
    est, y_pred, proba, classes = fitted.estimator, fitted.y_pred, fitted.proba, fitted.classes
    values = np.asarray([_metric(m, task, y_test, y_pred, proba, classes, est, X_test,
                                 y_train) for m in metrics], float)
    if not return_predictions:
        y_pred = proba = classes = None
    return _TaskOutput(task, values, y_pred, proba, classes, time.perf_counter() - t0)


def _where(task: _Task) -> str:
    study = "" if task.study == "all" else f"study {task.study!r}, "
    return f"{study}repeat {task.repeat}, fold {task.fold}"


def _metric(m, task, y_test, y_pred, proba, classes, est, X_test, y_train=None) -> float:
    if isinstance(X_test, TestRows) and m not in METRICS and m != "c_index":
        X_test = X_test.take()  # a scikit-learn scorer (or a survival curve) predicts
    try:
        return compute_metric(m, y_test, y_pred, proba, classes, est, X_test,
                              y_train=y_train if y_train is not None and
                              y_train.dtype.names is not None else None)
    except ReplikitError:
        raise
    except (ValueError, TypeError, AttributeError) as exc:
        detail = " ".join(str(exc).split())[:300]
        raise ParameterError(f"`metrics`: {m!r} failed for model {task.model!r} on "
                             f"{_where(task)}: {detail}") from None


@dataclass(frozen=True)
class _TaskOutput:
    """Plain arrays from one task; frames are built once for the whole run (cheap per task)."""

    task: _Task
    values: np.ndarray
    y_pred: np.ndarray | None
    proba: np.ndarray | None
    classes: np.ndarray | None
    seconds: float


def _scores_frame(outs: list[_TaskOutput], metrics: list[str]) -> pd.DataFrame:
    k = len(metrics)
    tasks = [o.task for o in outs]
    return pd.DataFrame({
        "study": np.repeat([t.study for t in tasks], k),
        "model": np.repeat([t.model for t in tasks], k),
        "repeat": np.repeat(np.array([t.repeat for t in tasks], dtype=np.int64), k),
        "fold": np.repeat(np.array([t.fold for t in tasks], dtype=np.int64), k),
        "metric": np.tile(np.asarray(metrics, dtype=object), len(tasks)),
        "value": np.concatenate([o.values for o in outs]) if outs else np.empty(0),
        "n_train": np.repeat(np.array([len(t.train) for t in tasks], dtype=np.int64), k),
        "n_test": np.repeat(np.array([len(t.test) for t in tasks], dtype=np.int64), k),
    })


def _predictions_frame(outs: list[_TaskOutput], ya: np.ndarray) -> pd.DataFrame:
    tasks = [o.task for o in outs]
    sizes = np.array([len(t.test) for t in tasks])
    rows = np.concatenate([t.test for t in tasks])
    frame = pd.DataFrame({
        "study": np.repeat([t.study for t in tasks], sizes),
        "model": np.repeat([t.model for t in tasks], sizes),
        "repeat": np.repeat(np.array([t.repeat for t in tasks], dtype=np.int64), sizes),
        "fold": np.repeat(np.array([t.fold for t in tasks], dtype=np.int64), sizes),
        "row": rows.astype(np.int64),
        "y_true": ya[rows] if ya.dtype.names is None else ya["time"][rows],
        "y_pred": np.concatenate([o.y_pred for o in outs]),
    })
    if ya.dtype.names is not None:  # a survival outcome: the time above, its event here
        frame["event"] = ya["event"][rows].astype(np.int64)
    all_classes = [o.classes for o in outs if o.classes is not None]
    if all_classes:
        labels = list(dict.fromkeys(c for cl in all_classes for c in cl.tolist()))
        proba = np.full((len(rows), len(labels)), np.nan)
        start = 0
        for o, size in zip(outs, sizes, strict=True):
            if o.proba is not None:
                cols = [labels.index(c) for c in o.classes.tolist()]
                block = np.zeros((size, len(labels)))
                block[:, cols] = o.proba
                proba[start:start + size] = block
            start += size
        if not np.isnan(proba).any():  # every model had probabilities
            for j, c in enumerate(labels):
                frame[f"proba_{c}"] = proba[:, j]
    return frame


def _run_task(task: _Task, models: dict, X, ya, settings: _Settings) -> _TaskOutput:
    """One task, as :meth:`replikit.experiment.engine.Engine.map` calls it."""
    return _execute(task, models[task.model], X, ya, settings)


def _encode(out: _TaskOutput) -> tuple:
    """A task's output as the store keeps it (the task itself is rebuilt from the scheme)."""
    return (out.values, out.y_pred, out.proba, out.classes, out.seconds)


def _decode(tree: tuple, task: _Task) -> _TaskOutput:
    return _TaskOutput(task, *tree)


@dataclass(frozen=True)
class _ScoreRows:
    """The scores rows of a batch of task outputs, for the store's SQL table."""

    metrics: tuple

    def __call__(self, outs: list) -> pd.DataFrame:
        return _scores_frame(outs, list(self.metrics))


def run(models: dict, X, y, *, scheme, metrics, study=None, groups=None, backend: str = "serial",
        n_jobs: int | None = None, client=None, store=None, clear_store: bool = False,
        random_state=None, return_predictions: bool = True,
        progress=False, engine: Engine | None = None) -> RunResult:
    """Fit every model on every split of ``scheme`` and score it on the test rows.

    Parameters
    ----------
    models : dict of str -> estimator
        scikit-learn estimators (cloned per task, never fitted in place).
    X : array-like or DataFrame of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Outcome.
    scheme : Scheme, str or scikit-learn splitter
        E.g. ``RepeatedKFold(10, 10)``, ``"10x10"``, ``"5x2"``, ``"bootstrap:200"``
        (:func:`parse_scheme` reads the text).
    metrics : str or list of str
        Built-ins of :mod:`replikit.experiment.metrics` or scikit-learn scorer names.
    study : array-like of shape (n_samples,), optional
        With study labels, the scheme runs within each study.
    groups : array-like, optional
        Group labels passed to the scheme (e.g. for leave-one-study-out).
    backend : {'serial', 'joblib', 'dask'}, default 'serial'
        Where the tasks run; the numbers do not depend on it.
    n_jobs : int, optional
        Workers for joblib (processes) or a local Dask cluster.
    client : dask.distributed.Client or str, optional
        An existing Dask client or a scheduler address (``backend='dask'`` only); an address
        that cannot be reached within 5 s is a :class:`~replikit.errors.ParameterError`.
    store : path-like, optional
        A DuckDB file of replikit's own (see :mod:`replikit.experiment.store`): each finished
        task is committed at once and a re-run resumes. A file holding other tables, a
        non-DuckDB file, or a store open in another process is refused.
    clear_store : bool, default False
        Delete the results in ``store`` (replikit's tables only) and start afresh; needed when
        the store holds a different run specification.
    random_state : None, int or Generator
        Root of every task's random state. A store needs a fixed int.
    return_predictions : bool, default True
        Keep the out-of-sample predictions (``RunResult.predictions``).
    progress : bool or callable, default False
        A rich progress bar on stderr, or a function called with 1 after each task (e.g. the
        ``advance`` of an audit's progress stage).
    engine : Engine, optional
        Where the tasks run and the store that keeps them
        (:class:`~replikit.experiment.engine.Engine`), instead of ``backend``, ``n_jobs``,
        ``client`` and ``store``: an analysis of several runs (the audit) passes one engine, so
        its runs share one cluster and one store. Its store holds the run under the hash of the
        run's specification.

    Returns
    -------
    RunResult
        The Scores and Predictions tables and the run's provenance.

    See Also
    --------
    parse_scheme : Schemes from short texts such as ``'10x10'``.
    fit_predict : What each task calls.
    replikit.resampling.estimate_errors : Error estimates by batched fits of the same schemes.

    Notes
    -----
    The schemes follow Etherington & Lieske (2019, eqs. 3–7) and Dietterich (1998, the 5×2
    design). A task's random state depends only on the root and the key (model, study,
    repeat, fold), so the result does not depend on the backend, the worker count or the order
    in which tasks finish. Threads follow :mod:`replikit._threads`: one BLAS thread around each
    fit; in joblib and Dask workers also one OpenMP thread.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Dietterich, T. G. (1998). Approximate Statistical Tests for Comparing Supervised
       Classification Learning Algorithms. Neural Computation, 10(7), 1895–1923.
       https://doi.org/10.1162/089976698300017197

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(40, 2)); y = X[:, 0]
    >>> res = run({"ols": LinearRegression()}, X, y, scheme="5x2", metrics="r2", random_state=0)
    >>> len(res.scores)
    10
    """
    inputs = _run_iv(models, X, y, study, groups, backend, metrics, scheme)
    X, Xa, ya, sa, ga = inputs.X, inputs.Xa, inputs.ya, inputs.sa, inputs.ga
    backend, metrics, scheme = inputs.backend, inputs.metrics, inputs.scheme
    if engine is not None and (backend != "serial" or n_jobs is not None
                               or client is not None or store is not None):
        raise ParameterError("`engine` carries the backend, workers, scheduler and store; pass "
                             "`backend`, `n_jobs`, `client` and `store` to the Engine, not to "
                             "run().")
    own = engine is None
    if own:
        engine = Engine(backend, n_jobs, client)
    stored = store is not None or engine.store is not None
    if stored and not isinstance(random_state, int | np.integer | np.random.SeedSequence):
        raise ParameterError("`random_state`: a store needs a fixed int so that a re-run "
                             f"can resume; got {random_state!r}.")
    root = root_seed_sequence(random_state)
    entropy = root.entropy
    tasks = _make_tasks(models, scheme, Xa, ya, sa, ga, root, metrics, inputs.is_clf)
    settings = _Settings(tuple(metrics), entropy, bool(return_predictions), inputs.classes,
                         tuple(root.spawn_key))
    fingerprint = data_fingerprint(X, ya, sa)
    spec = {
        "kind": "run", "scheme": repr(scheme), "metrics": metrics, "data": fingerprint,
        "models": {k: _model_params(v) for k, v in models.items()},
        "random_state": str(entropy), "return_predictions": bool(return_predictions),
    }
    if root.spawn_key:  # a spawned child sequence is another run (absent for plain ints)
        spec["spawn_key"] = [int(k) for k in root.spawn_key]
    run_id = spec_hash(spec)
    t0 = time.perf_counter()
    try:
        if store is not None:
            from .store import TaskStore

            engine.store = TaskStore(store, spec, run_id, clear=clear_store)
        most = max((len(t.train) for t in tasks), default=0)
        with _progress(progress, len(tasks)) as advance:
            outs = engine.map(
                _run_task, tasks, shared=(models, X, ya, settings),
                keys=[t.key for t in tasks], run_id=run_id if engine.store else None,
                spec=spec, encode=_encode, decode=_decode, rows=_ScoreRows(tuple(metrics)),
                on_result=advance, task_bytes=refit_bytes(most, Xa.shape[1]),
                label=f"the fits of {', '.join(models)} (up to {most:,} training rows)")
        n_resumed = engine.last_resumed
    finally:
        if own:
            engine.close()
    scores_frame = _scores_frame(outs, metrics)
    _check_nan(scores_frame)
    scores = Scores(scores_frame)
    predictions = Predictions(_predictions_frame(outs, ya)) if return_predictions else None
    fit_seconds = float(sum(o.seconds for o in outs))
    provenance = {
        "replikit": __version__, "python": platform.python_version(),
        "numpy": np.__version__, "sklearn": _version("sklearn"), "pandas": pd.__version__,
        "root_entropy": str(entropy), "scheme": repr(scheme), "metrics": metrics,
        "models": spec["models"], "data_fingerprint": fingerprint, "n_tasks": len(tasks),
        "n_resumed": n_resumed, "backend": engine.backend, "n_jobs": engine.n_jobs,
        "seconds": time.perf_counter() - t0, "fit_seconds": fit_seconds,
        "spec_hash": run_id,
    }
    return RunResult(scores, predictions, provenance)


def _version(module: str) -> str:
    import importlib

    return getattr(importlib.import_module(module), "__version__", "?")


class _progress:
    def __init__(self, enabled, total: int) -> None:
        self.enabled, self.total = enabled, total

    def __enter__(self):
        if callable(self.enabled):  # the caller's own progress: advance(n=1) per task
            tick = self.enabled
            self.enabled = False
            return lambda: tick(1)
        if not self.enabled:
            return lambda: None
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True))
        self._bar.__enter__()
        task = self._bar.add_task("fitting", total=self.total)
        return lambda: self._bar.advance(task)

    def __exit__(self, *exc) -> Any:
        if self.enabled:
            self._bar.__exit__(*exc)
        return False
