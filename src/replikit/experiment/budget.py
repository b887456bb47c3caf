"""What a fit costs: the audit's time budget, from the size of the table and the models.

The audit promises any table up to 20,000 rows and 200 encoded columns in about a minute on
2 cores. It keeps that promise by planning before any fit, from a **cost model**: the seconds
one fit (and its predictions) of a model takes on one core of a reference machine (a 2-core
machine of 2026), as a function of the table's size — rows, encoded columns, and how many
distinct values the columns hold (a 0/1 dummy is cheap to split on, a continuous column is
not). :func:`fit_seconds` is that model; :class:`TableSize` the size it reads.

The plan depends on the size of the table and the models only, never on the machine's speed
or load, so the numbers of an audit are the same on every machine and with any number of
workers; only the *expected time* printed before the work is an estimate.

The shares of the budget (core-seconds of the reference machine):

- :data:`POOLED_CV_SECONDS` for the repeated K-fold CV every model gets on every row (the
  model comparison and the K-fold error estimate): its repeats are
  ``floor(POOLED_CV_SECONDS / (K x cost of one fold of every model))``, between 2 and the
  design's own number (:func:`affordable_repeats`);
- :data:`BOOTSTRAP_SECONDS` for the bootstrap of the error estimates of the models refitted
  once per resample (:func:`affordable_resamples`).

Fewer repeats and resamples add Monte-Carlo noise; no row is ever left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["TableSize", "fit_seconds", "affordable_repeats", "affordable_resamples",
           "GOAL_SECONDS", "QUICK_GOAL_SECONDS", "REFERENCE_CORES", "POOLED_CV_SECONDS", "BOOTSTRAP_SECONDS",
           "BATCHED_SECONDS"]

#: The audit's goal: wall seconds on :data:`REFERENCE_CORES` cores.
GOAL_SECONDS = 60.0
#: The goal of a quick audit (a preview: fewer resamples and models).
QUICK_GOAL_SECONDS = 20.0
#: Cores of the reference machine the goal is stated for.
REFERENCE_CORES = 2
#: Core-seconds of the pooled repeated K-fold CV (all models, all repeats).
POOLED_CV_SECONDS = 45.0
#: Core-seconds of the bootstrap of the models refitted per resample (all of them).
BOOTSTRAP_SECONDS = 35.0
#: Core-seconds of each batched model's bootstrap, and as many of its nested CV (the K-fold
#: interval), in weighted fits of ``n p^2`` each.
BATCHED_SECONDS = 10.0


@dataclass(frozen=True)
class TableSize:
    """The size of a table as the cost model reads it.

    Attributes
    ----------
    n_rows : int
        Rows.
    n_columns : int
        Encoded columns (after one-hot encoding).
    split_weight : float
        Mean over the columns of ``min(1, log2(distinct values) / log2(rows))`` among at
        most 2,000 evenly spaced rows: 1 for continuous columns, 0.09 for a 0/1 dummy; how
        costly the columns are to search for a tree split, relative to continuous ones.
    n_binary : int
        0/1 columns (dummies).
    """

    n_rows: int
    n_columns: int
    split_weight: float = 1.0
    n_binary: int = 0

    @classmethod
    def of(cls, X) -> TableSize:
        """The size of a feature table (a DataFrame or an array)."""
        values = np.asarray(X, dtype=float)
        n, p = values.shape
        if n < 2 or p == 0:
            return cls(int(n), int(p), 1.0, 0)
        # distinct values among at most 2,000 evenly spaced rows (one sort of every column)
        m = min(n, 2_000)
        sample = np.ascontiguousarray(values[np.linspace(0, n - 1, m).astype(int)].T)
        sample.sort(axis=1)
        distinct = 1 + np.count_nonzero(np.diff(sample, axis=1), axis=1)
        weight = np.minimum(1.0, np.log2(np.maximum(distinct, 2)) / math.log2(m))
        return cls(int(n), int(p), float(weight.mean()), int(np.sum(distinct <= 2)))

    def with_rows(self, n_rows: int) -> TableSize:
        """The same columns with ``n_rows`` rows (a training fold, a bootstrap sample)."""
        return TableSize(int(n_rows), self.n_columns, self.split_weight, self.n_binary)

    def coded(self, groups) -> TableSize:
        """The size after :class:`~replikit.experiment.encoding.LevelCodes` replaced each set
        of dummies in ``groups`` by one code column (a code splits like a continuous
        column)."""
        inside = sum(len(g) for g in groups)
        if not inside:
            return self
        p = self.n_columns - inside + len(groups)
        # the dummies left the mean weight; each code column weighs 1
        dummy_weight = min(1.0, 1.0 / math.log2(max(self.n_rows, 4)))
        total = self.split_weight * self.n_columns - inside * dummy_weight + len(groups)
        return TableSize(self.n_rows, p, max(0.0, total) / max(p, 1),
                         max(0, self.n_binary - inside))


def _final(model):
    steps = getattr(model, "steps", None)
    return steps[-1][1] if steps else model


def _coded_size(model, size: TableSize) -> TableSize:
    for _, step in getattr(model, "steps", None) or []:
        groups = getattr(step, "groups", None)
        if groups is not None and type(step).__name__ == "LevelCodes":
            return size.coded(groups)
    return size


def _max_features(value, p: int) -> float:
    """Candidate columns per split of a forest's ``max_features`` (anything else: all)."""
    if value == "sqrt":
        return max(1.0, math.sqrt(p))
    if value == "log2":
        return max(1.0, math.log2(max(p, 2)))
    if isinstance(value, float | np.floating):
        return max(1.0, float(value) * p)
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return float(min(p, max(1, int(value))))
    return float(p)


def fit_seconds(model, size: TableSize, task: str, *, n_predict: int | None = None) -> float:
    """Expected seconds of one fit of ``model`` on a table of ``size`` and its predictions of
    ``n_predict`` rows (default a fifth of the rows), on one core of the reference machine.

    The formulas (constants measured on the reference machine; a model not listed is
    assumed to cost like gradient boosting of its size):

    - random forest: ``trees x (f + 6e-9 x m x w x s log2(s)^2)`` with ``m`` candidate
      columns per split, ``w`` their split weight (:class:`TableSize`), ``s`` rows per tree
      and scikit-learn's fixed work per tree ``f`` (1.2 ms, 2.8 ms for a classifier, whose
      probabilities are averaged over the trees) — measured 2026-11-27: 1.1-1.8 ms per tree
      at 40-300 rows, 4.9 ms at 2,000 x 10 (before: ``1.2e-8 x trees x m x w x s log2(s)^2``,
      which put the exam example's 65 studies of ~60 rows at a thirtieth of their cost);
    - histogram gradient boosting: ``iterations x (2.6e-4 + 8.5e-5 L + 2.2e-8 n p)`` with
      ``L = min(max_leaf_nodes, n / min_samples_leaf)`` leaves per tree (measured 2026-11-27:
      0.43 ms per iteration at 40 rows, 2.7-4.1 ms from 620 to 5,000 rows x 10 columns,
      15.7 ms at 5,000 x 100; the earlier ``1.6e-3 + 2.3e-8 n p`` put the audit of 20,000 x
      200 rows at 45 s when it took 68 s);
    - lasso (coordinate descent, 5-fold CV path): ``0.13 + 3e-7 n p`` (measured 2026-11-27:
      0.13-0.15 s from 40 to 2,000 rows, 0.22 s at 10,000 x 30; before ``0.03 + 1.2e-6 n p``);
      the L1 logistic
      regression (saga): ``0.05 + 2.5e-6 n p`` (``x 8`` at the default tolerance 1e-4);
    - linear and logistic regression: ``2e-3 + 1.5e-9 n p^2`` (logistic ``+ 2e-7 n p``);
    - k nearest neighbours: ``2e-3 + n n_predict (5e-9 + 1.6e-10 p)`` (the predictions);
    - a decision tree: a forest of one tree on every column; the baselines: ``1e-3``.

    Parameters
    ----------
    model : estimator
        A scikit-learn estimator or pipeline (a
        :class:`~replikit.experiment.encoding.LevelCodes` step shrinks the columns the model
        after it sees).
    size : TableSize
        The training table.
    task : {'regression', 'classification'}
        The task.
    n_predict : int, optional
        Rows predicted (default ``n_rows // 5``).

    Returns
    -------
    float
        Seconds (an estimate: the plan uses it to choose, never the numbers).

    Examples
    --------
    >>> from replikit.experiment.models import make_model
    >>> small, large = TableSize(1_000, 10, 1.0), TableSize(20_000, 200, 1.0)
    >>> fit_seconds(make_model("rf", "regression"), small, "regression") < fit_seconds(
    ...     make_model("rf", "regression"), large, "regression")
    True
    """
    size = _coded_size(model, size)
    est = _final(model)
    n, p = max(size.n_rows, 1), max(size.n_columns, 1)
    kind = type(est).__name__
    params = est.get_params(deep=False) if hasattr(est, "get_params") else {}
    if "Forest" in kind or "DecisionTree" in kind or "ExtraTrees" in kind:
        trees = int(params.get("n_estimators", 1) or 1)
        chosen = params.get("max_features")
        if chosen is None and "Forest" in kind:
            chosen = "sqrt" if task == "classification" else 1.0
        m = float(p) if chosen is None else _max_features(chosen, p)
        share = params.get("max_samples")
        if isinstance(share, int | np.integer) and not isinstance(share, bool):
            s = float(min(n, int(share)))
        elif isinstance(share, float | np.floating):
            s = max(2.0, float(share) * n)
        else:
            s = float(n)
        fixed = (2.8e-3 if task == "classification" else 1.2e-3) if "Forest" in kind else 0.0
        return trees * (fixed + 6e-9 * m * size.split_weight * s * math.log2(max(s, 2)) ** 2)
    if "HistGradientBoosting" in kind:
        # per iteration: a fixed part, a part per leaf (scikit-learn's Python work per node
        # of the grower; a tree has at most max_leaf_nodes leaves and n / min_samples_leaf
        # of them) and the histograms (n p)
        leaves = min(int(params.get("max_leaf_nodes") or 31),
                     max(1, n // max(1, int(params.get("min_samples_leaf", 20)))))
        return int(params.get("max_iter", 100)) * (2.6e-4 + 8.5e-5 * leaves + 2.2e-8 * n * p)
    if kind in ("LassoCV", "ElasticNetCV", "Lasso", "ElasticNet"):
        folds = params.get("cv", 5)
        folds = folds if isinstance(folds, int) else 5
        return (0.13 + 3e-7 * n * p) * (folds + 1) / 6
    if kind == "LogisticRegression" and params.get("solver") in ("saga", "liblinear"):
        tol = float(params.get("tol", 1e-4))
        return 0.05 + 2.5e-6 * n * p * (8.0 if tol < 1e-3 else 1.0)
    if kind in ("LinearRegression", "Ridge", "RidgeClassifier", "LogisticRegression",
                "LinearDiscriminantAnalysis", "RidgeCV"):
        extra = 2e-7 * n * p if kind == "LogisticRegression" else 0.0
        return 2e-3 + 1.5e-9 * n * p * p + extra
    if kind in ("KNNRegressor", "KNNClassifier", "KNeighborsRegressor",
                "KNeighborsClassifier"):
        m = n // 5 if n_predict is None else n_predict
        return 2e-3 + n * m * (5e-9 + 1.6e-10 * p)
    if kind in ("DummyRegressor", "DummyClassifier"):
        return 1e-3
    return 100 * (1.6e-3 + 2.3e-8 * n * p)


def affordable_repeats(cost_per_fold: float, n_folds: int, most: int, *, least: int = 2,
                       seconds: float = POOLED_CV_SECONDS) -> int:
    """Repeats of K-fold CV that fit ``seconds`` of work: ``floor(seconds / (n_folds x
    cost_per_fold))`` between ``least`` and ``most`` (``cost_per_fold``: every model's fit
    on one fold, :func:`fit_seconds`).

    Examples
    --------
    >>> affordable_repeats(0.2, 10, 10), affordable_repeats(2.0, 10, 10)
    (10, 2)
    """
    if cost_per_fold <= 0:
        return most
    return int(min(most, max(least, math.floor(seconds / (n_folds * cost_per_fold)))))


def affordable_resamples(cost_per_resample: float, most: int, least: int, *,
                         seconds: float = BOOTSTRAP_SECONDS) -> int:
    """Bootstrap resamples that fit ``seconds`` of work: ``floor(seconds /
    cost_per_resample)`` between ``least`` and ``most`` (``cost_per_resample``: the fits of
    every model refitted per resample).

    Examples
    --------
    >>> affordable_resamples(0.2, 50, 10), affordable_resamples(30.0, 50, 10)
    (50, 10)
    """
    if cost_per_resample <= 0:
        return most
    return int(min(most, max(least, math.floor(seconds / cost_per_resample))))
