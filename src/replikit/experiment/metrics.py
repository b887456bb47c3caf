"""Performance metrics of one test set, shared by the capabilities.

Each metric is ``f(y_true, y_pred, proba, classes) -> float`` (``proba``: columns in the order of
``classes``). Built-ins: ``r2`` (1 − SSE/SST), ``r2_corr`` (squared Pearson correlation of
prediction and outcome — caret's default R²), ``mse``, ``rmse``, ``mae``, ``accuracy``,
``balanced_accuracy``, ``error_rate``, ``log_loss``, ``roc_auc`` (binary, Mann–Whitney form).
Any other name given to :func:`compute_metric` is looked up as a scikit-learn scorer and called
on the fitted estimator.

Survival outcomes (a structured ``(event, time)`` target, :mod:`replikit.experiment.survival`)
have their own metrics (:data:`SURVIVAL_METRIC_NAMES`): ``c_index`` (Harrell's C of the risk
score), ``c_index_uno`` (Uno's censoring-weighted C), ``mean_auc`` (the mean time-dependent
AUC) and ``integrated_brier_score`` (of the predicted survival curves); all but Harrell's C
read the training target too (the censoring weights), which :func:`compute_metric` takes as
``y_train``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ParameterError

__all__ = ["METRIC_LABELS", "metric_label", "primary_metric", "METRICS", "HIGHER_IS_BETTER",
           "NEEDS_PROBA", "CLASSIFICATION_METRICS", "NUMERIC_METRICS", "check_metrics",
           "text_labels", "compute_metric", "needs_proba", "higher_is_better",
           "SURVIVAL_METRIC_NAMES"]


def _r2(y, p, proba, classes):
    y = y.astype(float)
    sst = np.sum((y - y.mean()) ** 2)
    return float(1.0 - np.sum((y - p) ** 2) / sst) if sst > 0 else float("nan")


def _r2_corr(y, p, proba, classes):
    y = y.astype(float)
    p = np.asarray(p, float)
    if np.std(y) == 0 or np.std(p) == 0:
        return float("nan")
    return float(np.corrcoef(y, p)[0, 1] ** 2)


def _mse(y, p, proba, classes):
    return float(np.mean((y.astype(float) - p) ** 2))


def _rmse(y, p, proba, classes):
    return float(np.sqrt(_mse(y, p, proba, classes)))


def _mae(y, p, proba, classes):
    return float(np.mean(np.abs(y.astype(float) - p)))


def _accuracy(y, p, proba, classes):
    return float(np.mean(y == p))


def _error_rate(y, p, proba, classes):
    return float(np.mean(y != p))


def _balanced_accuracy(y, p, proba, classes):
    labels = np.unique(y)
    return float(np.mean([np.mean(p[y == c] == c) for c in labels]))


def _log_loss(y, p, proba, classes):
    proba = np.clip(proba, 1e-15, 1.0)
    proba = proba / proba.sum(axis=1, keepdims=True)
    col = np.searchsorted(classes, y)
    return float(-np.mean(np.log(proba[np.arange(len(y)), col])))


def _roc_auc(y, p, proba, classes):
    if len(classes) != 2:
        raise ParameterError("`metrics`: 'roc_auc' is defined here for binary outcomes only.")
    pos = y == classes[1]
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    from scipy.stats import rankdata

    ranks = rankdata(proba[:, 1])  # mid-ranks handle ties (Mann–Whitney form of the AUC)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


METRICS: dict[str, Callable] = {
    "r2": _r2, "r2_corr": _r2_corr, "mse": _mse, "rmse": _rmse, "mae": _mae,
    "accuracy": _accuracy, "error_rate": _error_rate, "balanced_accuracy": _balanced_accuracy,
    "log_loss": _log_loss, "roc_auc": _roc_auc,
}
#: Built-in metrics where a larger value is better (the others are errors and losses).
HIGHER_IS_BETTER = frozenset({"r2", "r2_corr", "accuracy", "balanced_accuracy", "roc_auc"})
NEEDS_PROBA = {"log_loss", "roc_auc"}
CLASSIFICATION_METRICS = {"accuracy", "error_rate", "balanced_accuracy", "log_loss", "roc_auc"}
#: Built-in metrics that compare outcomes as numbers (meaningless on the codes of text labels).
NUMERIC_METRICS = ("r2", "r2_corr", "mse", "rmse", "mae")
#: The metrics of a survival outcome (:data:`replikit.experiment.survival.SURVIVAL_METRICS`).
SURVIVAL_METRIC_NAMES = ("c_index", "c_index_uno", "mean_auc", "integrated_brier_score")
_SURVIVAL_HIGHER = frozenset({"c_index", "c_index_uno", "mean_auc"})


def text_labels(classes) -> list:
    """The labels among ``classes`` that are not numbers (booleans count as numbers).

    Parameters
    ----------
    classes : sequence
        Class labels (a :class:`~replikit.data.userdata.Dataset`'s ``classes``, or the
        distinct values of an outcome).

    Returns
    -------
    list
        The text (or other non-numeric) labels, in order.

    Examples
    --------
    >>> text_labels(["benign", "malignant"]), text_labels([0, 1])
    (['benign', 'malignant'], [])
    """
    return [c for c in classes
            if not isinstance(c, (int, float, bool, np.integer, np.floating, np.bool_))]


def needs_proba(name: str) -> bool:
    return name in NEEDS_PROBA


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better.

    Built-ins: ``r2``, ``r2_corr``, ``accuracy``, ``balanced_accuracy`` and ``roc_auc`` are
    higher-is-better; ``mse``, ``rmse``, ``mae``, ``error_rate`` and ``log_loss`` are errors.
    Any other name is a scikit-learn scorer, which is always higher-is-better (scikit-learn
    negates its losses: ``'neg_mean_squared_error'``).

    Parameters
    ----------
    metric : str
        A built-in metric or a scikit-learn scorer name.

    Returns
    -------
    bool
        True when larger is better.

    See Also
    --------
    primary_metric : The metric a report's headlines are about.
    metric_label : A metric's name in words.

    Examples
    --------
    >>> higher_is_better("roc_auc"), higher_is_better("log_loss")
    (True, False)
    >>> higher_is_better("neg_mean_absolute_error"), higher_is_better("c_index")
    (True, True)
    """
    if metric in SURVIVAL_METRIC_NAMES:
        return metric in _SURVIVAL_HIGHER
    return metric in HIGHER_IS_BETTER if metric in METRICS else True


def check_metrics(metrics, task: str | None = None, *, classes=None) -> list[str]:
    """Normalise ``metrics`` (a name, a comma-separated text or a list) and check each name.

    Parameters
    ----------
    metrics : str or list of str
        Built-in metrics (:data:`METRICS`) or scikit-learn scorer names; for a survival
        outcome, :data:`SURVIVAL_METRIC_NAMES`.
    task : {'classification', 'regression', 'survival'}, optional
        With ``'regression'``, classification metrics are refused; with ``'survival'``, every
        metric but the survival ones (and they are refused for the other tasks).
    classes : sequence, optional
        The labels of a classification outcome (a Dataset's ``classes``, whose ``y`` holds
        their codes 0..K-1): when some label is text, the metrics that compare numbers
        (:data:`NUMERIC_METRICS`: r2, r2_corr, mse, rmse, mae) are refused — on the codes they
        would depend on the labels' alphabetical order.

    Returns
    -------
    list of str
        The names, in order.

    Raises
    ------
    ParameterError
        No name, an unknown name, a name given twice, or a metric that does not fit the task;
        the message names `metrics`.

    See Also
    --------
    compute_metric : The value of a metric on one test set.

    Examples
    --------
    >>> check_metrics("r2, mse", "regression")
    ['r2', 'mse']
    >>> check_metrics("mse", "classification", classes=("no", "yes"))
    Traceback (most recent call last):
    ...
    replikit.errors.ParameterError: `metrics`: 'mse' needs a numeric outcome, but the outcome holds class labels ('no', 'yes'); use a metric of labels such as 'accuracy', 'balanced_accuracy' or 'log_loss'.
    """
    from sklearn.metrics import get_scorer_names

    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    metrics = list(metrics)
    if not metrics:
        raise ParameterError("`metrics`: give at least one metric.")
    known = set(get_scorer_names())
    for m in metrics:
        if task == "survival" and m not in SURVIVAL_METRIC_NAMES:
            raise ParameterError(
                f"`metrics`: {m!r} does not apply to a survival outcome (times with "
                f"censoring); use {', '.join(map(repr, SURVIVAL_METRIC_NAMES))}.")
        if m in SURVIVAL_METRIC_NAMES:
            if task not in (None, "survival"):
                raise ParameterError(f"`metrics`: {m!r} needs a survival outcome (a time and "
                                     "an event indicator); the target is not one.")
            continue
        if m not in METRICS and m not in known:
            raise ParameterError(
                f"`metrics`: unknown metric {m!r}; built-ins are {', '.join(METRICS)}, or any "
                "scikit-learn scorer name."
            )
        if task == "regression" and m in CLASSIFICATION_METRICS:
            raise ParameterError(f"`metrics`: {m!r} needs a categorical outcome; the target is "
                                 "continuous.")
        if m in NUMERIC_METRICS and classes is not None and text_labels(classes):
            shown = ", ".join(repr(c.item() if isinstance(c, np.generic) else c)
                              for c in list(classes)[:3])
            raise ParameterError(
                f"`metrics`: {m!r} needs a numeric outcome, but the outcome holds class labels "
                f"({shown}{', ...' if len(classes) > 3 else ''}); use a metric of labels such "
                "as 'accuracy', 'balanced_accuracy' or 'log_loss'.")
    if len(set(metrics)) != len(metrics):
        raise ParameterError(f"`metrics`: a metric is named twice in {metrics}.")
    return metrics


def compute_metric(name, y_true, y_pred, proba=None, classes=None, estimator=None, X_test=None,
                   y_train=None):
    """Value of metric ``name`` on one test set.

    Parameters
    ----------
    name : str
        A built-in metric or a scikit-learn scorer name.
    y_true : array-like of shape (n_test,)
        Observed outcomes.
    y_pred : array-like of shape (n_test,)
        Predicted outcomes.
    proba : ndarray of shape (n_test, n_classes), optional
        Predicted probabilities (``log_loss`` and ``roc_auc`` need them).
    classes : array-like, optional
        The column labels of ``proba``.
    estimator : fitted estimator, optional
        For a scikit-learn scorer.
    X_test : array-like, optional
        For a scikit-learn scorer, and for ``integrated_brier_score`` (the model's predicted
        survival curves of these rows).
    y_train : structured ndarray, optional
        The training target of a survival metric that weights by the censoring distribution
        (all but ``c_index``).

    Returns
    -------
    float
        The metric's value.

    See Also
    --------
    check_metrics : Checks the names before any fit.
    higher_is_better : The metric's direction.

    Examples
    --------
    >>> compute_metric("accuracy", [0, 1, 1], [0, 1, 0])
    0.6666666666666666
    """
    if name in SURVIVAL_METRIC_NAMES:
        return _survival_metric(name, y_true, y_pred, estimator, X_test, y_train)
    if name in METRICS:
        if name in NEEDS_PROBA and proba is None:
            raise ParameterError(f"`metrics`: {name!r} needs predicted probabilities; the model "
                                 "has no predict_proba.")
        return METRICS[name](np.asarray(y_true), np.asarray(y_pred), proba, classes)
    from sklearn.metrics import get_scorer

    return float(get_scorer(name)(estimator, X_test, y_true))


def _survival_metric(name, y_true, y_pred, estimator, X_test, y_train) -> float:
    """A survival metric of one test set: the risk score ``y_pred`` (larger: earlier event)
    for the concordance indices and the AUC, the model's survival curves at
    :func:`~replikit.experiment.survival.evaluation_times` for the integrated Brier score.
    Uno's C is truncated at the last training time (``tau``) when test events lie beyond it:
    the censoring weights are not known there (untruncated otherwise, as scikit-survival's
    default)."""
    from .survival import SURVIVAL_METRICS, evaluation_times, target_parts

    t_test, e_test = target_parts(y_true)
    if name == "c_index":
        return float(SURVIVAL_METRICS[name](None, None, t_test, e_test, y_pred))
    if y_train is None:
        raise ParameterError(f"`metrics`: {name!r} weights by the censoring distribution of "
                             "the training data; `y_train` is needed.")
    t_train, e_train = target_parts(y_train)
    times = None
    if name == "c_index_uno" and t_test[e_test].max(initial=0.0) > t_train.max():
        # test events beyond the training follow-up have no censoring weight: truncate there
        times = np.array([t_train.max()])
    if name in ("mean_auc", "integrated_brier_score"):
        times = evaluation_times(t_train, e_train, t_test, e_test)
        if times.size < (2 if name == "integrated_brier_score" else 1):
            return float("nan")
    prediction = y_pred
    if name == "integrated_brier_score":
        if estimator is None or X_test is None:
            raise ParameterError("`metrics`: 'integrated_brier_score' scores the predicted "
                                 "survival curves; the fitted model and the test rows are "
                                 "needed.")
        from .survival_models import survival_probabilities

        prediction = survival_probabilities(estimator, X_test, times)
    return float(SURVIVAL_METRICS[name](t_train, e_train, t_test, e_test, prediction, times))


# -- the primary metric of a task ------------------------------------------------------------

METRIC_LABELS = {"r2": "R²", "r2_corr": "R² (squared correlation)", "roc_auc": "ROC AUC",
                 "balanced_accuracy": "balanced accuracy", "accuracy": "accuracy",
                 "mae": "MAE", "mse": "MSE", "rmse": "RMSE", "log_loss": "log loss",
                 "error_rate": "error rate", "c_index": "C-index",
                 "c_index_uno": "C-index (Uno)", "mean_auc": "mean time-dependent AUC",
                 "integrated_brier_score": "integrated Brier score"}


def metric_label(metric: str) -> str:
    """How a metric is named in sentences and tables (``'roc_auc'`` → ``'ROC AUC'``).

    Parameters
    ----------
    metric : str
        A metric name.

    Returns
    -------
    str
        Its name in words (the name itself when replikit has none).

    See Also
    --------
    primary_metric : The metric a report's headlines are about.

    Examples
    --------
    >>> metric_label("roc_auc"), metric_label("neg_log_loss")
    ('ROC AUC', 'neg_log_loss')
    """
    return METRIC_LABELS.get(metric, metric)


def primary_metric(task: str, n_classes: int = 0, models: dict | None = None) -> tuple[str, str]:
    """The metric a report's headlines are about, and the rule that chose it.

    - regression: R² (out of sample);
    - two classes: ROC AUC when every model gives probabilities (``models=None`` assumes they
      do) — it depends on no threshold and not on the class balance, and a constant baseline
      scores 0.5 — else balanced accuracy;
    - more classes: balanced accuracy (the mean recall over classes; chance is 1/K).

    Plain accuracy is never chosen: with 14% cases, always predicting "no case" is 86% accurate.

    Parameters
    ----------
    task : {'classification', 'regression', 'survival'}
        The task.
    n_classes : int, default 0
        Classes of a classification target.
    models : dict of str -> estimator, optional
        The models (whether each has ``predict_proba``).

    Returns
    -------
    metric : str
        The metric's name.
    rule : str
        Why it was chosen, in words.

    See Also
    --------
    higher_is_better : The metric's direction.
    metric_label : Its name in words.

    Examples
    --------
    >>> primary_metric("classification", 2)[0]
    'roc_auc'
    """
    if task == "regression":
        return "r2", "regression: out-of-sample R²"
    if task == "survival":
        return "c_index", ("survival outcome: Harrell's C-index (the share of comparable pairs "
                           "whose predicted risks are ordered as their event times; 0.5 for a "
                           "risk unrelated to the outcome)")
    if n_classes == 2:
        if models is None or all(hasattr(m, "predict_proba") for m in models.values()):
            return "roc_auc", ("binary outcome: ROC AUC (threshold-free, unaffected by the "
                               "class balance; a constant baseline scores 0.5)")
        return "balanced_accuracy", ("binary outcome, some model without probabilities: "
                                     "balanced accuracy (mean recall of the two classes)")
    return "balanced_accuracy", (f"{n_classes} classes: balanced accuracy (mean recall over "
                                 f"classes; chance is 1/{n_classes})")
