"""Performance metrics computed from a test set's outcomes, predictions and probabilities.

Built-in names (all "higher or lower" as stated): ``r2`` (1 − SSE/SST, higher), ``r2_corr``
(squared Pearson correlation of prediction and outcome — the default R² of R's caret, which the
numbers of seed 000 most likely used; higher), ``mse``, ``rmse``, ``mae`` (lower),
``accuracy``, ``balanced_accuracy`` (higher), ``error_rate`` (lower), ``log_loss`` (lower),
``roc_auc`` (binary, higher). Any other name is looked up as a scikit-learn scorer and called on
the fitted estimator.
"""

from __future__ import annotations

import numpy as np

from .._metrics import CLASSIFICATION_METRICS as _CLASSIFICATION
from .._metrics import LOWER_IS_BETTER, METRICS
from .._metrics import NEEDS_PROBA as _PROBA
from ..errors import ParameterError

__all__ = ["METRICS", "LOWER_IS_BETTER", "check_metrics", "compute_metric", "needs_proba"]


def needs_proba(name: str) -> bool:
    return name in _PROBA


def check_metrics(metrics, task: str | None = None) -> list[str]:
    """Normalise ``metrics`` (a name, a comma-separated text or a list) and check each name."""
    from sklearn.metrics import get_scorer_names

    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    metrics = list(metrics)
    if not metrics:
        raise ParameterError("`metrics`: give at least one metric.")
    known = set(get_scorer_names())
    for m in metrics:
        if m not in METRICS and m not in known:
            raise ParameterError(
                f"`metrics`: unknown metric {m!r}; built-ins are {', '.join(METRICS)}, or any "
                "scikit-learn scorer name."
            )
        if task == "regression" and m in _CLASSIFICATION:
            raise ParameterError(f"`metrics`: {m!r} needs a categorical outcome; the target is "
                                 "continuous.")
    if len(set(metrics)) != len(metrics):
        raise ParameterError(f"`metrics`: a metric is named twice in {metrics}.")
    return metrics


def compute_metric(name, y_true, y_pred, proba=None, classes=None, estimator=None, X_test=None):
    """Value of metric ``name`` on one test set."""
    if name in METRICS:
        if name in _PROBA and proba is None:
            raise ParameterError(f"`metrics`: {name!r} needs predicted probabilities; the model "
                                 "has no predict_proba.")
        return METRICS[name](np.asarray(y_true), np.asarray(y_pred), proba, classes)
    from sklearn.metrics import get_scorer

    return float(get_scorer(name)(estimator, X_test, y_true))
