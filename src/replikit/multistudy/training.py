"""Replicability of training techniques across studies (seed 001, secs. 7.4 and 7.6).

* :func:`cross_study_matrix` — Bernau et al. (2014): train on study k, evaluate on study k'
  (diagonal: within-study cross-validation).
* :func:`leave_one_study_out` — the study-level jackknife: train on K − 1 studies, predict the
  one left out; returns a Predictions table that the rest of :mod:`replikit.multistudy` accepts.
* :func:`multistudy_stacking` — Patil & Parmigiani (2018): one learner per study, combined by
  stacking weights from non-negative least squares on the merged data (with and without an
  intercept), compared with the merged learner, equal weights and cross-study-performance
  weights, each evaluated by leaving one study out.

Estimators are always ``clone``d; a task's seed depends only on ``random_state`` and the task
(e.g. ``("train", study)``), so results do not depend on ``n_jobs``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._metrics import LOWER_IS_BETTER, METRICS, NEEDS_PROBA
from .._random import root_seed_sequence, task_int_seed
from .._validation import check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from .utilities import Utility, parse_utility

__all__ = ["CrossStudyResult", "cross_study_matrix", "LeaveOneStudyOutResult",
           "leave_one_study_out", "StackingResult", "multistudy_stacking", "get_metric"]


# -- metrics ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Metric:
    name: str
    higher_is_better: bool
    needs_proba: bool
    func: Callable = field(repr=False)


def _builtin(name: str) -> _Metric:
    return _Metric(name, name not in LOWER_IS_BETTER, name in NEEDS_PROBA, METRICS[name])


_METRICS = {name: _builtin(name) for name in
            ("accuracy", "error_rate", "r2", "mse", "rmse", "mae", "roc_auc", "log_loss")}


def get_metric(metric) -> _Metric:
    """A built-in metric name (accuracy, error_rate, r2, mse, rmse, mae, roc_auc, log_loss) or a
    utility (``'cost:u01,u10'``, ``'squared'``, a :class:`Utility`, ...) whose study mean is the
    score."""
    if isinstance(metric, str) and metric in _METRICS:
        return _METRICS[metric]
    try:
        u = parse_utility(metric)
    except (ParameterError, ParameterTypeError):
        raise ParameterError(f"`metric` must be one of {', '.join(map(repr, _METRICS))} or a "
                             f"utility ('cost:u01,u10', 'squared', ...); got {metric!r}.") from None
    return _utility_metric(u)


def _utility_metric(u: Utility) -> _Metric:
    from ._data import from_arrays
    from .utilities import _unit_values

    def f(y, p, pr, cl):
        d = from_arrays(y, p, np.zeros(len(y), int), proba=pr, classes=cl)
        return float(_unit_values(d, u)[0].mean())

    return _Metric(f"utility {u.name}", True, u.kind == "log" or u.threshold is not None, f)


# -- fitting ---------------------------------------------------------------------------------

def _iv(estimator, X, y, study, task):
    from sklearn.base import is_classifier

    if not hasattr(estimator, "fit") or not hasattr(estimator, "predict"):
        raise ParameterTypeError(f"`estimator` must be a scikit-learn estimator with fit/predict; "
                                 f"got {type(estimator).__name__}.")
    Xa = X.to_numpy(float) if isinstance(X, pd.DataFrame) else np.asarray(X, float)
    ya = np.asarray(y)
    sa = np.asarray(study)
    if Xa.ndim != 2 or len(Xa) != len(ya) or len(ya) != len(sa):
        raise DataError(f"`X`, `y`, `study` must have the same number of rows; got {Xa.shape}, "
                        f"{ya.shape}, {sa.shape}.")
    labels = pd.unique(pd.Series(sa))
    try:
        labels = sorted(labels, key=float)
    except (TypeError, ValueError):
        labels = sorted(labels, key=str)
    if len(labels) < 2:
        raise DataError(f"`study` must hold at least 2 studies; got {len(labels)}.")
    if task is None:
        task = "classification" if is_classifier(estimator) else "regression"
    return Xa, ya, sa, list(labels), task


def _seeded(estimator, seed: int):
    from sklearn.base import clone

    est = clone(estimator)
    params = {k: seed for k in est.get_params(deep=True) if k == "random_state"
              or k.endswith("__random_state")}
    if params:
        est.set_params(**params)
    return est


def _fit_predict(estimator, seed, X_train, y_train, X_test, want_proba):
    est = _seeded(estimator, seed)
    try:
        est.fit(X_train, y_train)
    except ValueError as exc:
        raise DataError(f"fitting {type(estimator).__name__} failed: {exc}") from None
    pred = est.predict(X_test)
    proba = classes = None
    if want_proba and hasattr(est, "predict_proba"):
        proba = est.predict_proba(X_test)
        classes = list(est.classes_)
    return pred, proba, classes


def _parallel(tasks, n_jobs):
    if n_jobs == 1 or len(tasks) <= 1:
        return [f(*a) for f, a in tasks]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs)(delayed(f)(*a) for f, a in tasks)


def _align_proba(proba, classes, all_classes):
    """Probabilities of a model trained on a study missing some classes, padded with zeros."""
    if proba is None:
        return None
    out = np.zeros((proba.shape[0], len(all_classes)))
    for j, c in enumerate(classes):
        out[:, all_classes.index(c)] = proba[:, j]
    return out


def _folds(y, n_folds, classification, rng_seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    n_folds = min(n_folds, len(y))
    if classification:
        _, counts = np.unique(y, return_counts=True)
        if counts.min() >= n_folds:
            return list(StratifiedKFold(n_folds, shuffle=True, random_state=rng_seed).split(
                np.zeros(len(y)), y))
    return list(KFold(n_folds, shuffle=True, random_state=rng_seed).split(np.zeros(len(y))))


# -- cross-study validation matrix -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CrossStudyResult:
    """Cross-study validation matrix (Bernau et al. 2014; seed 001, sec. 7.4).

    Attributes
    ----------
    matrix : DataFrame
        Rows: training study k; columns: test study k'. Off-diagonal: the learner trained on all
        of study k, scored on study k'. Diagonal: within-study ``cv``-fold cross-validation
        (out-of-fold predictions pooled, then scored).
    metric : str
    higher_is_better : bool
    cv : int
    """

    matrix: pd.DataFrame
    metric: str
    higher_is_better: bool
    cv: int

    @property
    def studies(self) -> list:
        return list(self.matrix.index)

    def summary(self) -> pd.DataFrame:
        """Per training study: ``within`` (diagonal), ``external_mean`` (row mean off the
        diagonal), ``gap`` (within − external) and ``as_test_mean`` (column mean off the
        diagonal: how well the other studies' learners predict this study)."""
        M = self.matrix.to_numpy(float)
        K = M.shape[0]
        off = ~np.eye(K, dtype=bool)
        ext = np.array([M[k, off[k]].mean() for k in range(K)])
        col = np.array([M[off[:, k], k].mean() for k in range(K)])
        diag = np.diag(M)
        return pd.DataFrame({"study": self.studies, "within": diag, "external_mean": ext,
                             "gap": diag - ext, "as_test_mean": col})

    def overall(self) -> dict:
        """Mean of the diagonal (within-study CV) and of all off-diagonal cells (cross-study)."""
        M = self.matrix.to_numpy(float)
        off = ~np.eye(M.shape[0], dtype=bool)
        return {"within_mean": float(np.nanmean(np.diag(M))),
                "cross_study_mean": float(np.nanmean(M[off]))}

    def to_frame(self) -> pd.DataFrame:
        """Long form: ``train, test, metric, value, kind`` (within/cross)."""
        m = self.matrix.copy()
        m.index.name = "train"
        long = m.reset_index().melt(id_vars="train", var_name="test", value_name="value")
        long.insert(2, "metric", self.metric)
        long["kind"] = np.where(long["train"] == long["test"], "within", "cross")
        return long

    def __str__(self) -> str:
        o = self.overall()
        return (f"Cross-study validation matrix ({self.metric}; Bernau et al. 2014; seed 001 "
                f"sec. 7.4)\n  {len(self.studies)} studies; mean within-study CV "
                f"{o['within_mean']:.4g}, mean cross-study {o['cross_study_mean']:.4g}\n"
                + self.matrix.to_string(float_format=lambda v: f"{v:.3f}"))


def cross_study_matrix(estimator, X, y, study, *, metric=None, cv: int = 5, task=None,
                       random_state=0, n_jobs: int = 1) -> CrossStudyResult:
    """Train on each study and evaluate on every other (Bernau et al. 2014; seed 001 sec. 7.4).

    Parameters
    ----------
    estimator : scikit-learn estimator
        The training technique (cloned for every fit).
    X : DataFrame or array of shape (n, p)
    y : array-like of shape (n,)
    study : array-like of shape (n,)
    metric : str, Utility or None
        See :func:`get_metric`; default ``'accuracy'`` (classification) or ``'r2'``.
    cv : int
        Folds of the within-study cross-validation on the diagonal.
    task : {'classification', 'regression'}, optional
        Default: from the estimator.
    random_state : int, Generator or None
        Root seed (folds and estimator seeds per task).
    n_jobs : int
        Parallel fits (joblib processes); the result does not depend on it.

    Returns
    -------
    CrossStudyResult

    Notes
    -----
    Element ``(k, k')`` is ``m(φ_k; S_k')`` where ``φ_k`` is trained de novo on ``S_k``; unlike
    the utility matrix of sec. 3.2 the rule differs in every row.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(90, 2))
    >>> y = X[:, 0] + rng.normal(size=90) * .1; s = np.repeat(["a", "b", "c"], 30)
    >>> r = cross_study_matrix(LinearRegression(), X, y, s, metric="r2")
    >>> bool((r.matrix.to_numpy() > .9).all())
    True
    """
    Xa, ya, sa, labels, task = _iv(estimator, X, y, study, task)
    cv = check_int(cv, "cv", min_value=2)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    m = get_metric(metric or ("accuracy" if task == "classification" else "r2"))
    root = root_seed_sequence(random_state)
    classification = task == "classification"
    all_classes = sorted(pd.unique(pd.Series(ya)).tolist(), key=str) if classification else None
    want_proba = classification and m.needs_proba
    idx = {lab: np.flatnonzero(sa == lab) for lab in labels}
    tasks, keys = [], []
    for k in labels:
        tr = idx[k]
        te = np.flatnonzero(sa != k)
        tasks.append((_fit_predict, (estimator, task_int_seed(root, ("train", str(k))),
                                     Xa[tr], ya[tr], Xa[te], want_proba)))
        keys.append(("train", k, te))
        folds = _folds(ya[tr], cv, classification, task_int_seed(root, ("folds", str(k))))
        for f, (a, b) in enumerate(folds):
            tasks.append((_fit_predict, (estimator, task_int_seed(root, ("cv", str(k), f)),
                                         Xa[tr[a]], ya[tr[a]], Xa[tr[b]], want_proba)))
            keys.append(("cv", k, tr[b]))
    results = _parallel(tasks, n_jobs)
    K = len(labels)
    M = np.full((K, K), np.nan)
    pos = {lab: i for i, lab in enumerate(labels)}
    oof_pred: dict = {}
    for (kind, k, rows), (pred, proba, classes) in zip(keys, results, strict=True):
        proba = _align_proba(proba, classes, all_classes) if proba is not None else None
        if kind == "train":
            for j in labels:
                if j == k:
                    continue
                sel = sa[rows] == j
                M[pos[k], pos[j]] = m.func(ya[rows][sel], np.asarray(pred)[sel],
                                           None if proba is None else proba[sel], all_classes)
        else:
            oof_pred.setdefault(k, []).append((rows, np.asarray(pred), proba))
    for k, parts in oof_pred.items():
        rows = np.concatenate([p[0] for p in parts])
        pred = np.concatenate([p[1] for p in parts])
        proba = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
        M[pos[k], pos[k]] = m.func(ya[rows], pred, proba, all_classes)
    frame = pd.DataFrame(M, index=labels, columns=labels)
    return CrossStudyResult(frame, m.name, m.higher_is_better, cv)


# -- leave one study out ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LeaveOneStudyOutResult:
    """Leave-one-study-out results (seed 001, sec. 7.4).

    Attributes
    ----------
    scores : DataFrame
        ``study, n, metric, value``: the learner trained on the other K − 1 studies, scored on
        the study left out.
    predictions : Predictions
        The out-of-study predictions (``fold`` = index of the left-out study), ready for
        :func:`~replikit.multistudy.study_utilities` and the other measures.
    metric : str
    """

    scores: pd.DataFrame
    predictions: object = field(repr=False)
    metric: str = ""

    def to_frame(self) -> pd.DataFrame:
        return self.scores.copy()

    def __str__(self) -> str:
        v = self.scores["value"]
        return (f"Leave-one-study-out ({self.metric}; seed 001 sec. 7.4): {len(v)} studies, "
                f"mean {v.mean():.4g}, range [{v.min():.4g}, {v.max():.4g}]")


def leave_one_study_out(estimator, X, y, study, *, metric=None, task=None, model_name="model",
                        random_state=0, n_jobs: int = 1) -> LeaveOneStudyOutResult:
    """Train on all studies but one, predict the one left out, for every study.

    Parameters
    ----------
    estimator : scikit-learn estimator
    X, y, study : array-likes with one row per unit
    metric : str, Utility or None
        Default ``'accuracy'`` or ``'r2'``.
    model_name : str
        The ``model`` column of the returned Predictions.
    random_state, n_jobs : see :func:`cross_study_matrix`

    Returns
    -------
    LeaveOneStudyOutResult

    Notes
    -----
    The study-level jackknife of seed 001 (sec. 7.4, citing [39]). Each left-out study's score
    is what a user in a new study would get from the technique trained on the others.
    """
    from ..data.tables import Predictions

    Xa, ya, sa, labels, task = _iv(estimator, X, y, study, task)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    m = get_metric(metric or ("accuracy" if task == "classification" else "r2"))
    root = root_seed_sequence(random_state)
    classification = task == "classification"
    all_classes = sorted(pd.unique(pd.Series(ya)).tolist(), key=str) if classification else None
    tasks = []
    for k in labels:
        te = np.flatnonzero(sa == k)
        tr = np.flatnonzero(sa != k)
        tasks.append((_fit_predict, (estimator, task_int_seed(root, ("loso", str(k))),
                                     Xa[tr], ya[tr], Xa[te], classification)))
    results = _parallel(tasks, n_jobs)
    rows, frames = [], []
    for i, (k, (pred, proba, classes)) in enumerate(zip(labels, results, strict=True)):
        te = np.flatnonzero(sa == k)
        proba = _align_proba(proba, classes, all_classes) if proba is not None else None
        rows.append({"study": k, "n": te.size, "metric": m.name,
                     "value": m.func(ya[te], np.asarray(pred), proba, all_classes)})
        f = pd.DataFrame({"study": str(k), "model": model_name, "repeat": 0, "fold": i,
                          "row": te, "y_true": ya[te], "y_pred": np.asarray(pred)})
        if proba is not None:
            for j, c in enumerate(all_classes):
                f[f"proba_{c}"] = proba[:, j]
        frames.append(f)
    return LeaveOneStudyOutResult(pd.DataFrame(rows), Predictions(pd.concat(frames,
                                                                            ignore_index=True)),
                                  m.name)


# -- multi-study stacking --------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StackingResult:
    """Multi-study stacking (Patil & Parmigiani 2018; seed 001, sec. 7.6).

    Attributes
    ----------
    weights : DataFrame
        Rows: the per-study learners (by training study); columns: ``stack`` (NNLS, no
        intercept), ``stack_intercept`` (NNLS with a free intercept), ``cross_study``
        (weights ∝ 1 / mean cross-study squared error), ``average`` (1/K). Fitted on all studies.
    intercept : float
        Intercept of ``stack_intercept``.
    evaluation : DataFrame or None
        Leave-one-study-out: ``study, method, value`` for each ensemble and the ``merged``
        learner (trained on the pooled other studies).
    metric : str
    higher_is_better : bool
    """

    weights: pd.DataFrame
    intercept: float
    evaluation: pd.DataFrame | None
    metric: str
    higher_is_better: bool

    def summary(self) -> pd.DataFrame:
        """Mean, SD, min and max of the left-out-study metric per method, best first."""
        if self.evaluation is None:
            raise ParameterError("no evaluation: call multistudy_stacking(..., evaluate=True).")
        s = (self.evaluation.groupby("method", sort=False)["value"]
             .agg(mean="mean", sd="std", min="min", max="max").reset_index())
        return s.sort_values("mean", ascending=not self.higher_is_better, kind="stable"
                             ).reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        return self.weights.reset_index(names="learner")

    def __str__(self) -> str:
        lines = ["Multi-study stacking (Patil & Parmigiani 2018; seed 001 sec. 7.6)",
                 self.weights.to_string(float_format=lambda v: f"{v:.3f}"),
                 f"  intercept of stack_intercept: {self.intercept:.4g}"]
        if self.evaluation is not None:
            lines.append(f"  leave-one-study-out {self.metric}:")
            for r in self.summary().itertuples(index=False):
                lines.append(f"    {r.method:>16}: mean {r.mean:.4g} (SD {r.sd:.3g})")
        return "\n".join(lines)


def _nnls(P: np.ndarray, y: np.ndarray, intercept: bool) -> tuple[np.ndarray, float]:
    """``min ||y − a − P w||²`` s.t. ``w >= 0`` (``a = 0`` without intercept). With a free
    intercept, the problem is NNLS on centred data: ``a = ȳ − P̄ w``."""
    from scipy.optimize import nnls

    if not intercept:
        w, _ = nnls(P, y)
        return w, 0.0
    Pm, ym = P.mean(axis=0), y.mean()
    w, _ = nnls(P - Pm, y - ym)
    return w, float(ym - Pm @ w)


def _stack_fit(estimator, Xa, ya, sa, train_labels, root, key, classification, pos_class):
    """Fit the per-study learners on ``train_labels`` and every weighting scheme."""
    tasks = []
    for k in train_labels:
        tr = np.flatnonzero(sa == k)
        tasks.append((_fit_predict_models, (estimator, task_int_seed(root, key + ("ssl", str(k))),
                                            Xa[tr], ya[tr], classification)))
    return tasks


def _fit_predict_models(estimator, seed, X_train, y_train, classification):
    est = _seeded(estimator, seed)
    try:
        est.fit(X_train, y_train)
    except ValueError as exc:
        raise DataError(f"fitting {type(estimator).__name__} failed: {exc}") from None
    return est


def _score(est, X, classification, pos_class):
    """Continuous output of a learner: P(y = positive) for classifiers, else the prediction."""
    if classification:
        classes = list(est.classes_)
        if pos_class not in classes:
            return np.zeros(len(X))
        if hasattr(est, "predict_proba"):
            return est.predict_proba(X)[:, classes.index(pos_class)]
        return (est.predict(X) == pos_class).astype(float)
    return np.asarray(est.predict(X), float)


def _weights(models, Xa, target, sa, labels, classification, pos_class):
    P = np.column_stack([_score(m, Xa, classification, pos_class) for m in models])
    w_s, _ = _nnls(P, target, False)
    w_a, a = _nnls(P, target, True)
    # cross-study performance: mean squared error of learner k on the other studies
    err = np.full(len(labels), np.nan)
    for i, k in enumerate(labels):
        other = sa != k
        if other.any():
            err[i] = np.mean((P[other, i] - target[other]) ** 2)
    if np.isnan(err).all():  # a single training study: no cross-study performance to weigh
        w_cs = np.full(len(labels), 1.0 / len(labels))
    else:
        inv = np.where(np.isnan(err), 0.0, 1.0 / np.maximum(err, 1e-12))
        w_cs = inv / inv.sum()
    w_avg = np.full(len(labels), 1.0 / len(labels))
    return {"stack": (w_s, 0.0), "stack_intercept": (w_a, a), "cross_study": (w_cs, 0.0),
            "average": (w_avg, 0.0)}


def multistudy_stacking(estimator, X, y, study, *, metric=None, evaluate: bool = True,
                        task=None, random_state=0, n_jobs: int = 1) -> StackingResult:
    """Ensemble of per-study learners with replicability-rewarding weights (seed 001, sec. 7.6).

    Parameters
    ----------
    estimator : scikit-learn estimator
        The single-study learner (SSL), cloned for every study.
    X, y, study : array-likes with one row per unit
    metric : str, Utility or None
        Used in the evaluation; default ``'accuracy'`` or ``'r2'``.
    evaluate : bool
        Leave each study out in turn: fit the SSLs and all weights on the other studies, then
        score each ensemble and the merged learner on the left-out study.
    task : {'classification', 'regression'}, optional
    random_state, n_jobs : see :func:`cross_study_matrix`

    Returns
    -------
    StackingResult

    Notes
    -----
    Patil & Parmigiani (2018): (1) train ``φ_k`` on each study; (2) stack on the merged data,
    ``min_w Σ_i (y_i − a − Σ_k w_k φ_k(x_i))²`` with ``w_k >= 0`` — without intercept
    (``a = 0``) and with a free intercept. Each ``φ_k`` also predicts its own training study
    in-sample, as in the original proposal; the weights are thus driven mainly by how well a
    learner predicts the studies it was not trained on. Classifiers stack their
    positive-class probabilities (binary outcomes; the ensemble predicts the positive class
    when its clipped score is >= 0.5). ``cross_study`` weights are proportional to the inverse
    mean squared error of ``φ_k`` on the other studies (our reading of cross-study-performance
    weighting). All weights are >= 0.
    """
    Xa, ya, sa, labels, task = _iv(estimator, X, y, study, task)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    m = get_metric(metric or ("accuracy" if task == "classification" else "r2"))
    root = root_seed_sequence(random_state)
    classification = task == "classification"
    pos_class = None
    classes = None
    if classification:
        classes = sorted(pd.unique(pd.Series(ya)).tolist(), key=str)
        if len(classes) != 2:
            raise DataError(f"multi-study stacking of classifiers needs a binary outcome; "
                            f"found {len(classes)} classes.")
        pos_class = classes[-1]
        target = (ya == pos_class).astype(float)
    else:
        target = ya.astype(float)
    # fits: all studies, then (for evaluation) each left-out configuration
    configs = [("all", None)] + ([("loso", k) for k in labels] if evaluate else [])
    tasks, slots = [], []
    for name, held in configs:
        train_labels = [k for k in labels if k != held]
        key = (name, str(held))
        t = _stack_fit(estimator, Xa, ya, sa, train_labels, root, key, classification, pos_class)
        slots.append((name, held, train_labels, len(tasks), len(tasks) + len(t)))
        tasks += t
        if held is not None:
            tr = np.flatnonzero(sa != held)
            tasks.append((_fit_predict_models, (estimator, task_int_seed(root, key + ("merged",)),
                                                Xa[tr], ya[tr], classification)))
    fitted = _parallel(tasks, n_jobs)
    weights = intercept = None
    rows = []
    for _name, held, train_labels, a, b in slots:
        models = fitted[a:b]
        tr = np.flatnonzero(sa != held) if held is not None else np.arange(len(ya))
        w = _weights(models, Xa[tr], target[tr], sa[tr], train_labels, classification, pos_class)
        if held is None:
            weights = pd.DataFrame({k: v[0] for k, v in w.items()},
                                   index=[str(k) for k in train_labels])
            intercept = w["stack_intercept"][1]
            continue
        te = np.flatnonzero(sa == held)
        P = np.column_stack([_score(mm, Xa[te], classification, pos_class) for mm in models])
        merged = fitted[b]
        outputs = {meth: P @ wv + a0 for meth, (wv, a0) in w.items()}
        for meth, out in outputs.items():
            rows.append({"study": held, "method": meth,
                         "value": _score_output(m, ya[te], out, classification, classes)})
        mp = merged.predict(Xa[te])
        mpr = merged.predict_proba(Xa[te]) if (classification and m.needs_proba) else None
        rows.append({"study": held, "method": "merged",
                     "value": m.func(ya[te], np.asarray(mp), mpr, classes)})
    evaluation = pd.DataFrame(rows) if evaluate else None
    return StackingResult(weights, float(intercept), evaluation, m.name, m.higher_is_better)


def _score_output(m: _Metric, y, out, classification, classes):
    if not classification:
        return m.func(y, out, None, None)
    p = np.clip(out, 0.0, 1.0)
    pred = np.where(p >= 0.5, classes[-1], classes[0])
    proba = np.column_stack([1 - p, p])
    return m.func(y, pred, proba, classes)
