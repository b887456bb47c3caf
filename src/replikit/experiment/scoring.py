"""Per-fold scores from out-of-fold predictions: one :class:`~replikit.data.Scores` row per
``(study, model, repeat, fold, metric)``, each metric computed on that fold's rows with
:func:`~replikit.experiment.metrics.compute_metric` — the same values the runner records when it
fits the models itself.

Sizes are recorded only where the predictions show them: ``n_test`` is the fold's rows;
``n_train`` is the rest of the (study, model, repeat)'s rows when those rows form a partition
into two or more folds (each row tested exactly once: k-fold out-of-fold predictions), and is
left missing otherwise (repeated hold-out, a single test set), never guessed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from ..errors import DataError, ParameterError, warn
from .metrics import (
    CLASSIFICATION_METRICS,
    METRICS,
    NEEDS_PROBA,
    check_metrics,
    compute_metric,
    primary_metric,
)

__all__ = ["scores_from_predictions", "primary_metric_of"]

_GROUP = ["study", "model", "repeat", "fold"]
_TASKS = ("classification", "regression")
#: Built-in metrics of a continuous outcome.
_REGRESSION_METRICS = set(METRICS) - CLASSIFICATION_METRICS
#: The secondary metric added to the primary one by default.
_SECONDARY = {"classification": "accuracy", "regression": "mae"}


# -- reading the predictions ----------------------------------------------------------------

def _table(predictions) -> pd.DataFrame:
    from ..data.tables import Predictions

    if isinstance(predictions, Predictions):
        return predictions.frame
    if isinstance(predictions, pd.DataFrame):
        return Predictions(predictions).frame
    raise ParameterError("`predictions` must be a replikit.data.Predictions table or a pandas "
                         f"DataFrame in its layout; got {type(predictions).__name__}.")


def _infer_task(frame: pd.DataFrame, proba_cols: list[str]) -> str:
    """Classification when class probabilities are given or the outcome is text, boolean or
    takes at most 10 whole-number values; else regression."""
    y = frame["y_true"]
    if proba_cols or not ptypes.is_numeric_dtype(y) or ptypes.is_bool_dtype(y):
        return "classification"
    values = pd.unique(y.dropna())
    whole = bool(np.all(values == np.round(values))) if len(values) else False
    return "classification" if whole and len(values) <= 10 else "regression"


def _task_iv(task, frame: pd.DataFrame, proba_cols: list[str]) -> str:
    if "event" in frame.columns:  # a survival outcome: y_true the time, y_pred a risk
        if task not in (None, "survival"):
            raise ParameterError(f"`task`: the predictions have an `event` column (a survival "
                                 f"outcome); got task={task!r}.")
        return "survival"
    if task == "survival":
        raise ParameterError("`task`: 'survival' needs an `event` column beside `y_true` (the "
                             "follow-up time) and `y_pred` (the predicted risk).")
    if task is None:
        return _infer_task(frame, proba_cols)
    if task not in _TASKS:
        raise ParameterError(f"`task` must be 'classification' or 'regression'; got {task!r}.")
    if task == "regression" and not ptypes.is_numeric_dtype(frame["y_true"]):
        raise DataError("`task='regression'` needs a numeric `y_true`; found dtype "
                        f"{frame['y_true'].dtype}.")
    return task


def _label_value(label: str, y: np.ndarray):
    """The class a ``proba_<label>`` column names, in the type of ``y_true`` (None: no match)."""
    if ptypes.is_bool_dtype(y):
        return {"True": True, "False": False, "1": True, "0": False}.get(label)
    if ptypes.is_numeric_dtype(y):
        try:
            f = float(label)
        except ValueError:
            return None
        return int(f) if f == int(f) else f
    return label


def _classes_and_proba(frame: pd.DataFrame, proba_cols: list[str]):
    """``(classes, proba)``: the sorted class labels and the probability matrix in their order.

    The classes are those the ``proba_<class>`` columns name (each outcome must be one of
    them); a single column of a binary outcome gives the other class's probability as its
    complement. Without probabilities for every class, ``proba`` is None and the classes are
    the outcome's values.
    """
    y = frame["y_true"].to_numpy()
    observed = np.unique(y)
    if not proba_cols:
        return observed, None
    labels = [_label_value(str(c)[len("proba_"):], y) for c in proba_cols]
    if any(lab is None for lab in labels) or len(set(labels)) < len(labels):
        return observed, None
    if len(labels) == 1:
        classes = np.unique(np.concatenate([observed, np.asarray(labels, dtype=observed.dtype)]))
        if len(classes) != 2:
            return observed, None
        p = frame[proba_cols[0]].to_numpy(float)
        return classes, (np.column_stack([p, 1 - p]) if labels[0] == classes[0]
                         else np.column_stack([1 - p, p]))
    if not set(observed.tolist()) <= set(labels):
        return observed, None
    at = sorted(range(len(labels)), key=lambda i: labels[i])
    classes = np.asarray([labels[i] for i in at], dtype=observed.dtype)
    return classes, np.column_stack([frame[proba_cols[i]].to_numpy(float) for i in at])


def _described(predictions, task):
    frame = _table(predictions)
    proba_cols = [c for c in frame.columns if str(c).startswith("proba_")]
    task = _task_iv(task, frame, proba_cols)
    if task in ("regression", "survival"):
        return frame, task, None, None
    classes, proba = _classes_and_proba(frame, proba_cols)
    return frame, task, classes, proba


def _default_metrics(task: str, classes, proba) -> tuple[str, list[str]]:
    if task == "survival":  # Uno's C and the others need each fold's training rows
        return "c_index", ["c_index"]
    if task == "regression":
        primary = primary_metric("regression")[0]
    else:
        n = len(classes)
        primary = primary_metric("classification", n)[0] if proba is not None else (
            "balanced_accuracy")
    return primary, [primary, _SECONDARY[task]]


# -- public ---------------------------------------------------------------------------------

def primary_metric_of(predictions, task: str | None = None) -> str:
    """The primary metric of out-of-fold predictions, by the rule of the audit's data entry.

    - regression: ``'r2'`` (out-of-sample R²);
    - two classes with the probability of each (``proba_<class>`` columns; one column of a
      binary outcome gives the other as its complement): ``'roc_auc'``;
    - otherwise (more classes, or no probabilities): ``'balanced_accuracy'``.

    Parameters
    ----------
    predictions : Predictions or DataFrame
        Columns ``study, model, repeat, fold, row, y_true, y_pred`` and optional ``proba_*``.
    task : {'classification', 'regression'}, optional
        Default: classification when probabilities are given or ``y_true`` is text, boolean
        or takes at most 10 whole-number values; else regression.

    Returns
    -------
    str
        The metric's name.

    See Also
    --------
    replikit.experiment.primary_metric : The rule, from a task and its number of classes.
    scores_from_predictions : The per-fold scores.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": "m", "repeat": 0, "fold": [0, 0, 1, 1],
    ...                   "row": [0, 1, 2, 3], "y_true": [0, 1, 0, 1], "y_pred": [0, 1, 1, 1],
    ...                   "proba_1": [0.2, 0.9, 0.6, 0.7]})
    >>> primary_metric_of(f)
    'roc_auc'
    >>> primary_metric_of(f.drop(columns="proba_1"))
    'balanced_accuracy'
    """
    _, task, classes, proba = _described(predictions, task)
    return _default_metrics(task, classes, proba)[0]


def _metrics_iv(metrics, task: str, proba) -> list[str]:
    names = check_metrics(metrics, task)
    for m in names:
        if task == "survival":
            if m != "c_index":
                raise ParameterError(f"`metrics`: from predictions replikit scores a survival "
                                     f"outcome by 'c_index' (Harrell's C); {m!r} needs each "
                                     "fold's training rows.")
            continue
        if m not in METRICS:
            raise ParameterError(f"`metrics`: {m!r} is a scikit-learn scorer, which needs the "
                                 "fitted estimator; from predictions replikit computes "
                                 f"{', '.join(METRICS)}.")
        if task == "classification" and m in _REGRESSION_METRICS:
            raise ParameterError(f"`metrics`: {m!r} needs a continuous outcome; the "
                                 "predictions are of classes.")
        if m in NEEDS_PROBA and proba is None:
            raise ParameterError(f"`metrics`: {m!r} needs the predicted probability of every "
                                 "class (`proba_<class>` columns); the predictions have none "
                                 "or not one per class.")
    return names


def _fold_sizes(keys: pd.DataFrame, rows: np.ndarray, starts: np.ndarray,
                counts: np.ndarray) -> np.ndarray:
    """``n_train`` per fold: the (study, model, repeat)'s other rows when its folds partition
    its rows (>= 2 folds, each row tested once), else NaN."""
    run = keys[["study", "model", "repeat"]]
    run_id = run.groupby(list(run.columns), sort=False, dropna=False).ngroup().to_numpy()
    # rows of each run (rows are sorted by key, so each run is contiguous)
    row_run = np.repeat(run_id, counts)
    n_rows = np.bincount(row_run)
    distinct = pd.Series(rows).groupby(row_run).nunique().to_numpy()
    n_folds = np.bincount(run_id)
    partition = (distinct == n_rows) & (n_folds >= 2)
    n_train = (n_rows[run_id] - counts).astype(float)
    n_train[~partition[run_id]] = np.nan
    return n_train


def scores_from_predictions(predictions, metrics=None, *, task: str | None = None):
    """Per-fold scores of out-of-fold predictions.

    One row per ``(study, model, repeat, fold, metric)``: the metric computed on the fold's
    rows by :func:`~replikit.experiment.metrics.compute_metric` (``roc_auc`` and ``log_loss``
    from the ``proba_<class>`` columns, the classes read from their names). ``n_test`` is the
    fold's number of rows. ``n_train`` is

    .. math:: n_{train} = N_{smr} - n_{test}

    with :math:`N_{smr}` the rows of that study, model and repeat, **only** when each of those
    rows appears in exactly one fold and there are two or more folds (k-fold out-of-fold
    predictions: the training set of a fold is the other folds); otherwise it is missing —
    the corrected resampled tests (Nadeau & Bengio, 2003) then need the scheme stated.

    A metric undefined on a fold (ROC AUC of a fold with one class, R² of a constant outcome)
    is left out for that fold, with a warning naming how many folds.

    Parameters
    ----------
    predictions : Predictions or DataFrame
        Columns ``study, model, repeat, fold, row, y_true, y_pred`` and optional ``proba_*``.
    metrics : str or list of str, optional
        Built-in metrics (:data:`~replikit.experiment.metrics.METRICS`). Default: the primary
        metric (:func:`primary_metric_of`: ``roc_auc`` for two classes with probabilities,
        else ``balanced_accuracy``; ``r2`` for regression) and ``accuracy`` (classification)
        or ``mae`` (regression).
    task : {'classification', 'regression', 'survival'}, optional
        Default: inferred as in :func:`primary_metric_of`; predictions with an ``event``
        column are of a survival outcome (``y_true`` the follow-up time, ``y_pred`` a risk
        score), scored by Harrell's C-index (``'c_index'``).

    Returns
    -------
    replikit.data.Scores
        Columns ``study, model, repeat, fold, metric, value, n_train, n_test``; rows in the
        order of the sorted keys, metrics in the order given.

    Raises
    ------
    ParameterError
        An unknown metric, a scikit-learn scorer (it needs the estimator), a metric that does
        not fit the task, or a probability metric without probabilities.
    DataError
        The predictions are not a valid Predictions table, or no fold defines any metric.

    See Also
    --------
    primary_metric_of : The default primary metric.
    replikit.experiment.run : Fits models and records both tables.

    References
    ----------
    Nadeau, C. and Bengio, Y. (2003). Inference for the generalization error. *Machine
    Learning*, 52, 239-281.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": "m", "repeat": 0, "fold": [0, 0, 1, 1],
    ...                   "row": [0, 1, 2, 3], "y_true": [0, 1, 0, 1], "y_pred": [0, 1, 1, 1],
    ...                   "proba_1": [0.2, 0.9, 0.6, 0.7]})
    >>> s = scores_from_predictions(f).frame
    >>> s[["fold", "metric", "value", "n_train", "n_test"]].to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'fold': [0, 0, 1, 1], 'metric': ['roc_auc', 'accuracy', 'roc_auc', 'accuracy'],
     'value': [1.0, 1.0, 1.0, 0.5], 'n_train': [2, 2, 2, 2], 'n_test': [2, 2, 2, 2]}
    """
    from ..data.tables import Scores

    frame, task, classes, proba = _described(predictions, task)
    names = (_default_metrics(task, classes, proba)[1] if metrics is None
             else _metrics_iv(metrics, task, proba))
    if metrics is None:
        names = _metrics_iv(names, task, proba)
    # sort once by the fold key: every fold is a contiguous slice
    group_id = frame.groupby(_GROUP, sort=True, dropna=False).ngroup().to_numpy()
    order = np.argsort(group_id, kind="stable")
    gid = group_id[order]
    counts = np.bincount(gid)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    keys = frame.iloc[order[starts]][_GROUP].reset_index(drop=True)
    y = frame["y_true"].to_numpy()[order]
    pred = frame["y_pred"].to_numpy()[order]
    if task == "regression":
        y = y.astype(float)
        pred = pred.astype(float)
    if task == "survival":
        from .survival import survival_target

        y = survival_target(y.astype(float), frame["event"].to_numpy()[order], name="y_true")
        pred = pred.astype(float)
    prob = proba[order] if proba is not None else None
    rows = frame["row"].to_numpy()[order]
    n_train = _fold_sizes(keys, rows, starts, counts)

    values = np.empty((len(counts), len(names)))
    for j, m in enumerate(names):
        uses_proba = m in NEEDS_PROBA
        for g, (a, n) in enumerate(zip(starts, counts, strict=True)):
            s = slice(a, a + n)
            if task == "survival" and not y["event"][s].any():
                values[g, j] = np.nan  # no event in the fold: no comparable pair
                continue
            values[g, j] = compute_metric(m, y[s], pred[s], prob[s] if uses_proba else None,
                                          classes)
    out = pd.DataFrame({
        **{c: np.repeat(keys[c].to_numpy(), len(names)) for c in _GROUP},
        "metric": np.tile(np.asarray(names, dtype=object), len(counts)),
        "value": values.ravel(),
        "n_train": pd.array(np.repeat(n_train, len(names)), dtype="Float64").astype("Int64"),
        "n_test": np.repeat(counts, len(names)).astype("int64"),
    })
    undefined = ~np.isfinite(out["value"].to_numpy())
    if undefined.all():
        raise DataError("`predictions`: no fold defines " + ", ".join(names) + " (e.g. every "
                        "fold holds a single class, or a constant outcome).")
    if undefined.any():
        dropped = out.loc[undefined].groupby("metric", sort=False).size()
        warn("scores_from_predictions: left out "
             + "; ".join(f"{m} of {k} fold{'s' if k > 1 else ''}" for m, k in dropped.items())
             + " where the metric is undefined (a fold with one class, or a constant outcome).")
        out = out.loc[~undefined].reset_index(drop=True)
    return Scores(out)
