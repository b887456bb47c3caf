"""Replicability of training techniques across studies (Parmigiani 2023, secs. 7.4 and 7.6).

* :func:`cross_study_matrix` — Bernau et al. (2014): train on study k, evaluate on study k'
  (diagonal: within-study cross-validation).
* :func:`leave_one_study_out` — the study-level jackknife: train on K − 1 studies, predict the
  one left out; returns a Predictions table that the rest of :mod:`replikit.multistudy` accepts.
* :func:`multistudy_stacking` — Patil & Parmigiani (2018): one learner per study, combined by
  stacking weights from non-negative least squares on the merged data (with and without an
  intercept), compared with the merged learner, equal weights and cross-study-performance
  weights, each evaluated by leaving one study out.

Every fit is a :func:`replikit.experiment.run` call with the study labels as ``groups``: the
:class:`~replikit.experiment.cross_study.CrossStudy` scheme for the matrix,
:class:`~replikit.experiment.LeaveOneStudyOut` for the left-out studies and the merged learner,
one split per study for the stacked learners. So the runner's rules apply: estimators are
``clone``d, a fit's random state depends only on ``random_state`` and the task key (model,
study, repeat, fold) and is given to ``random_state`` parameters left ``None`` (ones the user
fixed are kept), and results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import dropped, renamed, renamed_fields
from .._format import number
from .._validation import check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from ..experiment.cross_study import CrossStudy
from ..experiment.metrics import METRICS, NEEDS_PROBA, higher_is_better, text_labels
from ..experiment.schemes import LeaveOneStudyOut
from ..results import Result, to_jsonable
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
    return _Metric(name, higher_is_better(name), name in NEEDS_PROBA, METRICS[name])


_METRICS = {name: _builtin(name) for name in
            ("accuracy", "balanced_accuracy", "error_rate", "r2", "mse", "rmse", "mae",
             "roc_auc", "log_loss")}


_LABEL_METRICS = ("accuracy", "balanced_accuracy", "error_rate", "roc_auc", "log_loss")


def _harrell(y, p, pr, cl):
    from ..experiment.survival import concordance_index

    if not y["event"].any():  # no event among these rows: no comparable pair
        return float("nan")
    return concordance_index(y, p).estimate


#: The metric of a survival outcome: Harrell's C of the risk score (Bernau et al. (2014)
#: compare cross-study validation by it); ``y`` is the structured (event, time) target.
_SURVIVAL_METRICS = {"c_index": _Metric("c_index", True, False, _harrell)}


@dropped("option")
def get_metric(metric, *, task: str | None = None, n_classes: int | None = None,
               classes=None) -> _Metric:
    """The metric of cross-study validation: a built-in name or a utility.

    A built-in metric name (accuracy, balanced_accuracy, error_rate, r2, mse, rmse, mae,
    roc_auc, log_loss) or a utility (``'cost:u01,u10'``, ``'squared'``, a :class:`Utility`,
    ...) whose study mean is the score.

    Parameters
    ----------
    metric : str or Utility
        The metric.
    task : {'classification', 'regression'}, optional
        When given, a metric of class labels (accuracy, error_rate, roc_auc, log_loss, the
        cost, log and accuracy utilities) is refused for regression.
    n_classes : int, optional
        Classes of the outcome: roc_auc is refused for more than 2.
    classes : sequence, optional
        The labels of a classification outcome (a Dataset's ``classes``, whose ``y`` holds
        their codes): when some label is text, a metric of numbers (r2, mse, rmse, mae, the
        squared and absolute utilities) is refused — on the codes it would depend on the
        labels' alphabetical order.

    Returns
    -------
    object
        The metric: ``name``, ``higher_is_better``, ``needs_proba`` and ``func(y, pred, proba,
        classes)``.

    Raises
    ------
    ParameterError
        An unknown metric, or one that does not fit the task (messages name `metric`).

    See Also
    --------
    cross_study_matrix, leave_one_study_out, multistudy_stacking : Score with it.
    parse_utility : The utilities it accepts.

    Examples
    --------
    >>> m = get_metric("mse")
    >>> m.name, m.higher_is_better, m.func(np.array([1.0, 2.0]), np.array([1.0, 4.0]), None, None)
    ('mse', False, 2.0)
    """
    if task == "survival" or (isinstance(metric, str) and metric in _SURVIVAL_METRICS):
        if task not in (None, "survival"):
            raise ParameterError(f"`metric`: {metric!r} needs a survival outcome (a time and "
                                 "an event); the target is not one.")
        if metric not in _SURVIVAL_METRICS:
            raise ParameterError(f"`metric`: a survival outcome is scored by 'c_index' "
                                 f"(Harrell's C of the risk score); got {metric!r}.")
        return _SURVIVAL_METRICS[metric]
    if isinstance(metric, str) and metric in _METRICS:
        m = _METRICS[metric]
        labels_only = metric in _LABEL_METRICS
        numbers_only = not labels_only
    else:
        try:
            u = parse_utility(metric, name="metric")
        except (ParameterError, ParameterTypeError):
            raise ParameterError(f"`metric` must be one of {', '.join(map(repr, _METRICS))} "
                                 f"or a utility ('cost:u01,u10', 'squared', ...); got "
                                 f"{metric!r}.") from None
        m = _utility_metric(u)
        labels_only = u.kind in ("accuracy", "cost", "log", "brier")
        numbers_only = u.kind in ("squared", "absolute")
    if task == "regression" and labels_only:
        raise ParameterError(f"`metric`: {m.name} scores class labels, but the outcome is "
                             "continuous (regression); use r2, mse, rmse, mae or the 'squared' "
                             "or 'absolute' utility.")
    if numbers_only and classes is not None and text_labels(classes):
        shown = ", ".join(repr(c) for c in list(classes)[:3])
        raise ParameterError(f"`metric`: {m.name} needs a numeric outcome, but the outcome "
                             f"holds class labels ({shown}{', ...' if len(classes) > 3 else ''}"
                             "); use accuracy, balanced_accuracy, error_rate, log_loss or a "
                             "utility of labels ('cost:u01,u10').")
    if m.name == "roc_auc" and n_classes is not None and n_classes > 2:
        raise ParameterError(f"`metric`: roc_auc is defined here for binary outcomes; the "
                             f"outcome has {n_classes} classes (use accuracy or log_loss).")
    return m


def _utility_metric(u: Utility) -> _Metric:
    from ._data import from_arrays
    from .utilities import _unit_values

    def f(y, p, pr, cl):
        d = from_arrays(y, p, np.zeros(len(y), int), proba=pr, classes=cl)
        return float(_unit_values(d, u)[0].mean())

    return _Metric(f"utility {u.name}", True, u.kind in ("log", "brier")
                   or u.threshold is not None, f)


# -- fitting ---------------------------------------------------------------------------------

def _iv(estimator, X, y, study, task):
    from sklearn.base import is_classifier

    if not hasattr(estimator, "fit") or not hasattr(estimator, "predict"):
        raise ParameterTypeError(f"`estimator` must be a scikit-learn estimator with fit/predict; "
                                 f"got {type(estimator).__name__}.")
    from ..experiment.survival import is_survival_target, survival_target

    Xa = X.to_numpy(float) if isinstance(X, pd.DataFrame) else np.asarray(X, float)
    surv = is_survival_target(y)
    ya = survival_target(y) if surv else np.asarray(y)
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
    if surv:
        task = "survival"
    elif task == "survival":
        raise DataError("`y`: task 'survival' needs a survival target (a structured array of "
                        "event and time, or a (time, event) tuple).")
    if task is None:
        task = "classification" if is_classifier(estimator) else "regression"
    return Xa, ya, sa, list(labels), task


def _run(models: dict, Xa, ya, scheme, groups, *, random_state, n_jobs: int, engine=None,
         progress=None):
    """One :func:`replikit.experiment.run` call: its rule of random states (a task's from the
    root and the key (model, study, repeat, fold); ``random_state`` parameters left ``None`` get
    it), one BLAS thread per fit, joblib processes when ``n_jobs > 1``. The runner's own score
    (accuracy or MSE over a split's test rows) is not used: cells are scored per test study
    from the predictions."""
    from ..experiment.engine import run_options
    from ..experiment.runner import run

    clf = any(_is_classifier(e) for e in models.values())
    first = ("c_index" if ya.dtype.names is not None else "accuracy" if clf else "mse")
    return run(models, Xa, ya, scheme=scheme, metrics=[first],
               groups=groups, random_state=random_state, return_predictions=True,
               progress=progress or False, **run_options(engine, n_jobs))


def _is_classifier(est) -> bool:
    from sklearn.base import is_classifier

    return bool(is_classifier(est))


def _predicted(predictions, classes=None) -> dict:
    """``{(repeat, fold): (rows, y_pred, proba)}`` from a runner's Predictions; ``proba`` has
    one column per label of ``classes`` (zeros for a class the learner never saw, as the runner
    pads them) or is None without probabilities."""
    f = predictions.frame
    cols = None
    if classes is not None:
        want = [f"proba_{c}" for c in classes]
        if all(c in f.columns for c in want):
            cols = want
    out = {}
    # copies: a group's columns are views of the whole frame sorted by group, which those
    # views would keep alive (cross_study_matrix keeps the within-study folds' predictions
    # of every batch: at a million rows 2.5 GiB of sorted frames instead of 16 MB)
    for key, g in f.groupby(["repeat", "fold"], sort=False):
        out[(int(key[0]), int(key[1]))] = (
            g["row"].to_numpy(copy=True), g["y_pred"].to_numpy(copy=True),
            None if cols is None else g[cols].to_numpy(float, copy=True))
    return out


class _TrainableLeaveOneStudyOut:
    """Leave-one-study-out (the splits of :class:`~replikit.experiment.LeaveOneStudyOut`)
    without the studies whose complement holds a single class: a classifier cannot be trained
    there. A plain scikit-learn splitter (the runner numbers its splits 0, 1, ...; the left-out
    study is read from the test rows)."""

    def split(self, X, y=None, groups=None):
        codes = np.asarray(groups)
        y_arr = np.asarray(y)
        for sp in LeaveOneStudyOut().iter_splits(np.empty((codes.size, 0)), y_arr, codes):
            if pd.unique(y_arr[sp.train]).size > 1:
                yield sp.train, sp.test

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return sum(1 for _ in self.split(X, y, groups))


def _by_left_out_study(predictions, codes, classes) -> dict:
    """Leave-one-study-out predictions keyed by the code of the study left out."""
    return {int(codes[test[0]]): (test, pred, proba)
            for (test, pred, proba) in _predicted(predictions, classes).values()}


def _plural(n: int, word: str) -> str:
    if word.endswith("y"):
        return f"{n} {word if n == 1 else word[:-1] + 'ies'}"
    return f"{n} {word}{'' if n == 1 else 's'}"


def _listing(items, limit: int = 8) -> str:
    items = [str(i) for i in items]
    return ", ".join(items[:limit]) + (" ..." if len(items) > limit else "")


def _default_metric(task: str) -> str:
    """The metric of cross-study validation when none is given."""
    return {"classification": "accuracy", "survival": "c_index"}.get(task, "r2")


def _usable_studies(ya, sa, labels, classification, notes, *, min_rows: int = 2):
    """Studies with at least ``min_rows`` rows; for classification, which of them hold a
    single class (no classifier can be trained on them)."""
    sizes = {lab: int(np.sum(sa == lab)) for lab in labels}
    tiny = [lab for lab in labels if sizes[lab] < min_rows]
    if tiny:
        notes.append(f"left out {_plural(len(tiny), 'study')} with fewer than {min_rows} rows "
                     f"(nothing to train on or to score): "
                     f"{_listing(f'{t} ({sizes[t]})' for t in tiny)}")
    kept = [lab for lab in labels if lab not in tiny]
    if len(kept) < 2:
        raise DataError(f"`study`: only {len(kept)} of {len(labels)} studies have at least "
                        f"{min_rows} rows; cross-study validation needs 2.")
    one_class = {}
    if classification:
        for lab in kept:
            u = pd.unique(ya[sa == lab])
            if u.size < 2:
                one_class[lab] = u[0].item() if hasattr(u[0], "item") else u[0]
    return kept, one_class


def _undefined_note(M, expected_nan, metric, notes) -> None:
    extra = int(np.sum(np.isnan(M) & ~expected_nan))
    if extra:
        notes.append(f"{_plural(extra, 'cell')} left empty (NaN): {metric} is undefined there "
                     "(e.g. a test study with a constant outcome, or with one class for "
                     "roc_auc)")


# -- cross-study validation matrix -----------------------------------------------------------

@renamed_fields(cv="n_folds")
@dataclass(frozen=True, slots=True)
class CrossStudyResult(Result):
    """Cross-study validation matrix (Bernau et al. 2014; Parmigiani 2023, sec. 7.4).

    Attributes
    ----------
    matrix : DataFrame
        Rows: training study k; columns: test study k'. Off-diagonal: the learner trained on all
        of study k, scored on study k'. Diagonal: within-study ``n_folds``-fold
        cross-validation (out-of-fold predictions pooled, then scored).
    metric : str
        The metric of every cell.
    higher_is_better : bool
        Direction of the metric.
    n_folds : int
        Folds of the within-study cross-validation.
    notes : tuple of str
        Studies left out or left empty and why (a single row, a single class, fewer rows than
        folds), cells where the metric is undefined.
    cells : dict or None
        With ``return_predictions=True``: ``(k, k') -> (rows, prediction)`` of every scored
        cell (study labels as in ``matrix``; ``rows`` index the rows of ``X`` given, the
        diagonal's predictions are the pooled out-of-fold ones).

    See Also
    --------
    cross_study_matrix : Computes it.
    LeaveOneStudyOutResult : Training on all studies but one.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from replikit.multistudy import cross_study_matrix
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(60, 1))
    >>> y = X[:, 0] + rng.normal(size=60) * .1; s = np.repeat(["a", "b"], 30)
    >>> r = cross_study_matrix(LinearRegression(), X, y, s, metric="r2", n_folds=3)
    >>> r.n_folds, r.to_frame().columns.tolist()
    (3, ['train', 'test', 'metric', 'value', 'kind'])
    """

    matrix: pd.DataFrame
    metric: str
    higher_is_better: bool
    n_folds: int
    notes: tuple = ()
    cells: dict | None = field(default=None, repr=False, compare=False)

    @property
    def title(self) -> str:
        return (f"Cross-study validation matrix ({self.metric}; Bernau et al. 2014; "
                "Parmigiani 2023, sec. 7.4)")

    @property
    def studies(self) -> list:
        """The study labels (rows and columns of :attr:`matrix`)."""
        return list(self.matrix.index)

    def summary(self) -> pd.DataFrame:
        """Within-study against external performance, per training study.

        Returns
        -------
        DataFrame
            ``study, within`` (diagonal), ``external_mean`` (row mean off the diagonal),
            ``gap`` (within − external) and ``as_test_mean`` (column mean off the diagonal:
            how well the other studies' learners predict this study).
        """
        M = self.matrix.to_numpy(float)
        K = M.shape[0]
        off = ~np.eye(K, dtype=bool)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row or column left empty
            ext = np.array([np.nanmean(M[k, off[k]]) for k in range(K)])
            col = np.array([np.nanmean(M[off[:, k], k]) for k in range(K)])
        diag = np.diag(M)
        return pd.DataFrame({"study": self.studies, "within": diag, "external_mean": ext,
                             "gap": diag - ext, "as_test_mean": col})

    def overall(self) -> dict:
        """Mean of the diagonal (within-study CV) and of all off-diagonal cells (cross-study).

        Returns
        -------
        dict
            ``within_mean``, ``cross_study_mean``.
        """
        M = self.matrix.to_numpy(float)
        off = ~np.eye(M.shape[0], dtype=bool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # every cell left empty
            return {"within_mean": float(np.nanmean(np.diag(M))),
                    "cross_study_mean": float(np.nanmean(M[off]))}

    def to_frame(self) -> pd.DataFrame:
        """The matrix in long form.

        Returns
        -------
        DataFrame
            ``train, test, metric, value, kind`` (``'within'`` on the diagonal, else
            ``'cross'``).
        """
        m = self.matrix.copy()
        m.index.name = "train"
        long = m.reset_index().melt(id_vars="train", var_name="test", value_name="value")
        long.insert(2, "metric", self.metric)
        long["kind"] = np.where(long["train"] == long["test"], "within", "cross")
        return long

    def plot(self, ax=None):
        """The matrix as a heatmap (rows: training study; columns: test study).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_matrix

        frame = self.matrix.copy()
        frame.index = [str(s) for s in frame.index]
        frame.columns = [str(s) for s in frame.columns]
        return plot_matrix(frame, ax=ax, symmetric=False, title=f"cross-study {self.metric}",
                           xlabel="test study", ylabel="training study")

    def headline(self) -> str:
        """The number of studies and the mean within-study and cross-study scores.

        Returns
        -------
        str
            One line.
        """
        o = self.overall()
        return (f"{len(self.studies)} studies; mean within-study {self.metric} "
                f"{number(o['within_mean'], 4)} ({self.n_folds}-fold cross-validation), mean "
                f"cross-study {number(o['cross_study_mean'], 4)}")

    def __str__(self) -> str:
        return (f"{self.title}\n  {self.headline()}\n"
                + self.matrix.to_string(float_format=lambda v: number(v, 3, grouping=False)))


@renamed(cv="n_folds")
def cross_study_matrix(estimator, X, y, study, *, metric=None, n_folds: int = 5, task=None,
                       random_state=None, n_jobs: int = 1, engine=None,
                       progress=None, return_predictions: bool = False) -> CrossStudyResult:
    """Train on each study and evaluate on every other (Bernau et al. 2014).

    Parameters
    ----------
    estimator : scikit-learn estimator
        The training technique (cloned for every fit).
    X : DataFrame or array of shape (n, p)
        Features.
    y : array-like of shape (n,)
        Outcomes.
    study : array-like of shape (n,)
        Study label of each row.
    metric : str, Utility or None
        See :func:`get_metric`; default ``'accuracy'`` (classification) or ``'r2'``.
    n_folds : int, default 5
        Folds of the within-study cross-validation on the diagonal.
    task : {'classification', 'regression'}, optional
        Default: from the estimator.
    random_state : None, int or Generator
        The random state of the run (within-study folds, and each fit's own random state).
    n_jobs : int, default 1
        Parallel fits (joblib processes); the result does not depend on it.
    engine : Engine, optional
        Where the fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`); replaces ``n_jobs``.
    progress : callable, optional
        Called with 1 after each fit (e.g. the ``advance`` of an audit's progress stage).
    return_predictions : bool, default False
        Keep each cell's predictions (``cells`` of the result), e.g. for the standard errors
        of the cells or an ensemble of the per-study learners.

    Returns
    -------
    CrossStudyResult
        The K×K matrix of scores.

    See Also
    --------
    leave_one_study_out : Train on all studies but one.
    multistudy_stacking : Combine per-study learners.

    Notes
    -----
    Element ``(k, k')`` is ``m(φ_k; S_k')`` where ``φ_k`` is trained de novo on ``S_k``; unlike
    the utility matrix of sec. 3.2 the rule differs in every row. The fits are one
    :func:`~replikit.experiment.run` with the
    :class:`~replikit.experiment.cross_study.CrossStudy` scheme (study labels as ``groups``);
    each cell is scored from the run's predictions on that test study.

    References
    ----------
    .. [1] Bernau, C., Riester, M., Boulesteix, A., Parmigiani, G., Huttenhower, C., Waldron,
       L. & Trippa, L. (2014). Cross-Study Validation for the Assessment of Prediction
       Algorithms. Bioinformatics, 30(12), i105–i112. https://doi.org/10.1093/bioinformatics/btu279
    .. [2] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

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
    cv = check_int(n_folds, "n_folds", min_value=2)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    classification = task == "classification"
    all_classes = sorted(pd.unique(pd.Series(ya)).tolist(), key=str) if classification else None
    m = get_metric(metric or _default_metric(task), task=task,
                   n_classes=len(all_classes) if classification else None)
    notes: list[str] = []
    labels, one_class = _usable_studies(ya, sa, labels, classification, notes)
    if one_class:
        one = len(one_class) == 1
        notes.append(f"{_plural(len(one_class), 'study')} {'holds' if one else 'hold'} a single "
                     f"class, so no classifier can be trained on {'it' if one else 'them'} "
                     "(row and diagonal left empty; still scored as a test study): "
                     f"{_listing(f'{k} (only class {c!s})' for k, c in one_class.items())}")
    rows, codes = _coded(sa, labels)
    y_used = ya[rows]
    survival = task == "survival"
    scheme = CrossStudy(cv, stratify=classification or survival)
    plan = scheme.plan(y_used["event"].astype(int) if survival else y_used, codes)
    few = [f"{labels[p.repeat]} ({p.n_rows})" for p in plan if p.trained and p.n_rows < cv]
    if few:
        notes.append(f"{_plural(len(few), 'study')} with fewer rows than the {cv} folds: "
                     f"within-study CV with one fold per row (leave-one-out) for "
                     f"{_listing(few)}")
    K = len(labels)
    M = np.full((K, K), np.nan)
    oof: dict[int, list] = {}
    cells: dict | None = {} if return_predictions else None
    for batch in _study_batches(plan, codes.size):
        # a few training studies per run: each predicts every other study's rows, and a run's
        # predictions are held at once (the splits and random states are those of one run)
        part = CrossStudy(cv, stratify=classification or survival, train_studies=batch)
        res = _run({"model": estimator}, Xa[rows], y_used, part, codes,
                   random_state=random_state, n_jobs=n_jobs, engine=engine, progress=progress)
        for (k, fold), (test, pred, proba) in _predicted(res.predictions, all_classes).items():
            if fold == 0:  # trained on all of study k, tested on every other study
                for j in np.unique(codes[test]):
                    sel = codes[test] == j
                    M[k, j] = m.func(y_used[test][sel], pred[sel],
                                     None if proba is None else proba[sel], all_classes)
                    if cells is not None:
                        cells[(labels[k], labels[j])] = (rows[test[sel]], pred[sel])
            else:
                oof.setdefault(k, []).append((test, pred, proba))
        del res
    for k, parts in oof.items():  # within-study CV: out-of-fold predictions pooled
        test = np.concatenate([p[0] for p in parts])
        pred = np.concatenate([p[1] for p in parts])
        proba = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
        M[k, k] = m.func(y_used[test], pred, proba, all_classes)
        if cells is not None:
            cells[(labels[k], labels[k])] = (rows[test], pred)
    no_cv = [labels[p.repeat] for p in plan if p.trained and p.repeat not in oof]
    if no_cv:
        notes.append(f"within-study CV left empty for {_listing(no_cv)}: a class has a single "
                     "row there, so one fold would train on one class")
    expected = np.zeros((K, K), bool)
    for p in plan:
        if not p.trained:
            expected[p.repeat, :] = True
        elif p.repeat not in oof:
            expected[p.repeat, p.repeat] = True
    _undefined_note(M, expected, m.name, notes)
    frame = pd.DataFrame(M, index=labels, columns=labels)
    return CrossStudyResult(frame, m.name, m.higher_is_better, cv, tuple(notes), cells)


#: Predicted rows one run of :func:`cross_study_matrix` holds at once (each training study
#: predicts every other study's rows): beyond it the training studies run in batches (the
#: numbers do not depend on it). The run's predictions frame costs about 100 bytes a row, and
#: its checks and the per-cell arrays as much again: at 10,000,000 the audit of 300,000 rows
#: grew by 1.4 GiB here (2.8 GiB in all); 2,000,000 keeps a run near 0.4 GiB.
BATCH_PREDICTIONS = 2_000_000


def _study_batches(plan, n: int) -> list[list[int]]:
    """The trained studies of ``plan`` in consecutive batches whose cross-study predictions
    (about ``n`` rows each) stay within :data:`BATCH_PREDICTIONS`; one batch for most data."""
    trained = [p.repeat for p in plan if p.trained]
    size = max(1, BATCH_PREDICTIONS // max(1, n))
    return [trained[a:a + size] for a in range(0, len(trained), size)] or [[]]


def _coded(sa: np.ndarray, labels: list) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the studies in ``labels`` and their study codes (positions in ``labels``): the
    ``groups`` of a run, so that the schemes' sorted-label order is the order of ``labels``."""
    lookup = {lab: i for i, lab in enumerate(labels)}
    codes_all = np.fromiter((lookup.get(v, -1) for v in sa), dtype=np.int64, count=len(sa))
    rows = np.flatnonzero(codes_all >= 0)
    return rows, codes_all[rows]


# -- leave one study out ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LeaveOneStudyOutResult(Result):
    """Leave-one-study-out results (Parmigiani 2023, sec. 7.4).

    Attributes
    ----------
    scores : DataFrame
        ``study, n, metric, value``: the learner trained on the other K − 1 studies, scored on
        the study left out.
    predictions : Predictions
        The out-of-study predictions (``fold`` = index of the left-out study), ready for
        :func:`~replikit.multistudy.study_utilities` and the other measures.
    metric : str
        The metric of the scores.
    notes : tuple of str
        Studies left out and why, scores left empty.

    See Also
    --------
    leave_one_study_out : Computes it.
    CrossStudyResult : Training on one study at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from replikit.multistudy import leave_one_study_out
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(60, 1))
    >>> y = X[:, 0] + rng.normal(size=60) * .1; s = np.repeat(["a", "b", "c"], 20)
    >>> r = leave_one_study_out(LinearRegression(), X, y, s)
    >>> r.scores["study"].tolist(), r.metric
    (['a', 'b', 'c'], 'r2')
    """

    scores: pd.DataFrame
    predictions: object = field(repr=False)
    metric: str = ""
    notes: tuple = ()

    @property
    def title(self) -> str:
        return f"Leave-one-study-out ({self.metric}; Parmigiani 2023, sec. 7.4)"

    def to_frame(self) -> pd.DataFrame:
        """The score of every study left out.

        Returns
        -------
        DataFrame
            ``study, n, metric, value``.
        """
        return self.scores.copy()

    def to_dict(self) -> dict:
        """The scores, the metric, the notes and the predictions in JSON types.

        Returns
        -------
        dict
            ``scores``, ``metric``, ``notes``, ``predictions`` (records).
        """
        frame = getattr(self.predictions, "frame", None)
        return to_jsonable({"scores": self.scores, "metric": self.metric,
                            "notes": list(self.notes), "predictions": frame})

    def __str__(self) -> str:
        v = self.scores["value"]
        return (f"{self.title}: {len(v)} studies, mean {number(v.mean(), 4)}, range "
                f"[{number(v.min(), 4)}, {number(v.max(), 4)}]")


def leave_one_study_out(estimator, X, y, study, *, metric=None, task=None, model_name="model",
                        random_state=None, n_jobs: int = 1, engine=None,
                        progress=None) -> LeaveOneStudyOutResult:
    """Train on all studies but one, predict the one left out, for every study.

    Parameters
    ----------
    estimator : scikit-learn estimator
        The training technique (cloned for every fit).
    X : DataFrame or array of shape (n, p)
        Features.
    y : array-like of shape (n,)
        Outcomes.
    study : array-like of shape (n,)
        Study label of each row.
    metric : str, Utility or None
        See :func:`get_metric`; default ``'accuracy'`` or ``'r2'``.
    task : {'classification', 'regression'}, optional
        Default: from the estimator.
    model_name : str, default 'model'
        The ``model`` column of the returned Predictions.
    random_state : None, int or Generator
        The random state of the run.
    n_jobs : int, default 1
        Parallel fits (joblib processes); the result does not depend on it.
    engine : Engine, optional
        Where the fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`); replaces ``n_jobs``.
    progress : callable, optional
        Called with 1 after each fit (e.g. the ``advance`` of an audit's progress stage).

    Returns
    -------
    LeaveOneStudyOutResult
        The score of each study left out and the out-of-study predictions.

    See Also
    --------
    cross_study_matrix : Train on one study, score every other.

    Notes
    -----
    The study-level jackknife of Parmigiani (2023), sec. 7.4. Each left-out study's score is
    what a user in a new study would get from the technique trained on the others.

    References
    ----------
    .. [1] Bernau, C., Riester, M., Boulesteix, A., Parmigiani, G., Huttenhower, C., Waldron,
       L. & Trippa, L. (2014). Cross-Study Validation for the Assessment of Prediction
       Algorithms. Bioinformatics, 30(12), i105–i112. https://doi.org/10.1093/bioinformatics/btu279
    .. [2] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(60, 1))
    >>> y = X[:, 0] + rng.normal(size=60) * .1; s = np.repeat(["a", "b", "c"], 20)
    >>> r = leave_one_study_out(LinearRegression(), X, y, s)
    >>> bool((r.scores["value"] > 0.9).all())
    True
    """
    from ..data.tables import Predictions

    Xa, ya, sa, labels, task = _iv(estimator, X, y, study, task)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    if not isinstance(model_name, str) or not model_name:
        raise ParameterTypeError(f"`model_name` must be a non-empty string; got {model_name!r}.")
    classification = task == "classification"
    all_classes = sorted(pd.unique(pd.Series(ya)).tolist(), key=str) if classification else None
    m = get_metric(metric or _default_metric(task), task=task,
                   n_classes=len(all_classes) if classification else None)
    notes: list[str] = []
    labels, _ = _usable_studies(ya, sa, labels, False, notes)
    rows, codes = _coded(sa, labels)
    y_used = ya[rows]
    scheme = _TrainableLeaveOneStudyOut() if classification else LeaveOneStudyOut()
    untrainable = [k for i, k in enumerate(labels)
                   if classification and pd.unique(y_used[codes != i]).size < 2]
    if len(untrainable) == len(labels):
        raise DataError("leave-one-study-out: no study could be predicted (the training sets "
                        "hold a single class).")
    res = _run({model_name: estimator}, Xa[rows], y_used, scheme, codes,
               random_state=random_state, n_jobs=n_jobs, engine=engine, progress=progress)
    got = _by_left_out_study(res.predictions, codes, all_classes)
    out_rows, frames = [], []
    for i, k in enumerate(labels):
        n_k = int(np.sum(codes == i))
        if i not in got:  # the other studies hold one class between them
            out_rows.append({"study": k, "n": n_k, "metric": m.name, "value": np.nan})
            continue
        test, pred, proba = got[i]
        out_rows.append({"study": k, "n": n_k, "metric": m.name,
                         "value": m.func(y_used[test], pred, proba, all_classes)})
        f = pd.DataFrame({"study": str(k), "model": model_name, "repeat": 0, "fold": i,
                          "row": rows[test], "y_true": y_used[test] if task != "survival"
                          else y_used["time"][test], "y_pred": pred})
        if task == "survival":
            f["event"] = y_used["event"][test].astype(np.int64)
        if proba is not None:
            for j, c in enumerate(all_classes):
                f[f"proba_{c}"] = proba[:, j]
        frames.append(f)
    if untrainable:
        notes.append(f"no classifier for {_listing(untrainable)} left out: the other studies "
                     "hold a single class between them (score left empty)")
    scores = pd.DataFrame(out_rows)
    expected = np.isin(scores["study"].to_numpy(), np.asarray(untrainable, dtype=object))
    _undefined_note(scores["value"].to_numpy(float), expected, m.name, notes)
    return LeaveOneStudyOutResult(scores, Predictions(pd.concat(frames, ignore_index=True)),
                                  m.name, tuple(notes))


# -- multi-study stacking --------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StackingResult(Result):
    """Multi-study stacking (Patil & Parmigiani 2018; Parmigiani 2023, sec. 7.6).

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
        The metric of the evaluation.
    higher_is_better : bool
        Direction of the metric.
    notes : tuple of str
        Studies left out of the learners and why (a single row, a single class).

    See Also
    --------
    multistudy_stacking : Computes it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from replikit.multistudy import multistudy_stacking
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(60, 1))
    >>> y = X[:, 0] + rng.normal(size=60) * .1; s = np.repeat(["a", "b", "c"], 20)
    >>> r = multistudy_stacking(LinearRegression(), X, y, s)
    >>> r.to_frame().columns.tolist()
    ['learner', 'stack', 'stack_intercept', 'cross_study', 'average']
    """

    weights: pd.DataFrame
    intercept: float
    evaluation: pd.DataFrame | None
    metric: str
    higher_is_better: bool
    notes: tuple = ()

    @property
    def title(self) -> str:
        return "Multi-study stacking (Patil & Parmigiani 2018; Parmigiani 2023, sec. 7.6)"

    def summary(self) -> pd.DataFrame:
        """Mean, SD, min and max of the left-out-study metric per method, best first.

        Returns
        -------
        DataFrame
            ``method, mean, sd, min, max``.
        """
        if self.evaluation is None:
            raise ParameterError("no evaluation: call multistudy_stacking(..., evaluate=True).")
        s = (self.evaluation.groupby("method", sort=False)["value"]
             .agg(mean="mean", sd="std", min="min", max="max").reset_index())
        return s.sort_values("mean", ascending=not self.higher_is_better, kind="stable"
                             ).reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """The weights of every learner.

        Returns
        -------
        DataFrame
            ``learner`` and one column per weighting.
        """
        return self.weights.reset_index(names="learner")

    def evaluation_lines(self) -> list[str]:
        """The intercept and the leave-one-study-out evaluation, one line each.

        Returns
        -------
        list of str
            For the text under the weights' table.
        """
        lines = [f"  intercept of stack_intercept: {number(self.intercept, 4)}"]
        if self.evaluation is not None:
            lines.append(f"  leave-one-study-out {self.metric}:")
            for r in self.summary().itertuples(index=False):
                lines.append(f"    {r.method:>16}: mean {number(r.mean, 4)} "
                             f"(SD {number(r.sd, 3)})")
        return lines

    def __str__(self) -> str:
        return "\n".join([self.title,
                          self.weights.to_string(float_format=lambda v: f"{v:.3f}"),
                          *self.evaluation_lines()])


def _nnls(P: np.ndarray, y: np.ndarray, intercept: bool) -> tuple[np.ndarray, float]:
    """``min ||y − a − P w||²`` s.t. ``w >= 0`` (``a = 0`` without intercept). With a free
    intercept, the problem is NNLS on centered data: ``a = ȳ − P̄ w``."""
    from scipy.optimize import nnls

    if not intercept:
        w, _ = nnls(P, y)
        return w, 0.0
    Pm, ym = P.mean(axis=0), y.mean()
    w, _ = nnls(P - Pm, y - ym)
    return w, float(ym - Pm @ w)


def _learner_outputs(predictions, n: int, learners: list, classification: bool,
                     pos_class) -> np.ndarray:
    """``P`` of shape (n, len(learners)): each single-study learner's continuous output on
    every row — P(y = positive) for classifiers (0 when the learner never saw the positive
    class; its predicted label when it has no probabilities), else the prediction."""
    P = np.zeros((n, len(learners)))
    got = _predicted(predictions, [pos_class] if classification else None)
    for j, k in enumerate(learners):
        test, pred, proba = got[(k, 0)]
        if proba is not None:
            P[test, j] = proba[:, 0]
        elif classification:
            P[test, j] = (pred == pos_class).astype(float)
        else:
            P[test, j] = np.asarray(pred, float)
    return P


def _weights(P, target, sa, labels):
    """Every weighting of the learners' outputs ``P`` (rows: the training rows, with study
    labels ``sa``; columns: the learners of ``labels``)."""
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
                        task=None, random_state=None, n_jobs: int = 1) -> StackingResult:
    """Ensemble of per-study learners with replicability-rewarding weights.

    Multi-study stacking (Patil & Parmigiani 2018; Parmigiani 2023, sec. 7.6).

    Parameters
    ----------
    estimator : scikit-learn estimator
        The single-study learner (SSL), cloned for every study.
    X : DataFrame or array of shape (n, p)
        Features.
    y : array-like of shape (n,)
        Outcomes.
    study : array-like of shape (n,)
        Study label of each row.
    metric : str, Utility or None
        Used in the evaluation; default ``'accuracy'`` or ``'r2'``.
    evaluate : bool, default True
        Leave each study out in turn: fit the SSLs and all weights on the other studies, then
        score each ensemble and the merged learner on the left-out study.
    task : {'classification', 'regression'}, optional
        Default: from the estimator.
    random_state : None, int or Generator
        The random state of the run.
    n_jobs : int, default 1
        Parallel fits (joblib processes); the result does not depend on it.

    Returns
    -------
    StackingResult
        The weights and their leave-one-study-out evaluation.

    See Also
    --------
    cross_study_matrix : The cross-study performance behind ``cross_study`` weights.
    leave_one_study_out : The merged learner alone.

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

    References
    ----------
    .. [1] Patil, P. & Parmigiani, G. (2018). Training Replicable Predictors in Multiple
       Studies. Proceedings of the National Academy of Sciences, 115(11), 2578–2583.
       https://doi.org/10.1073/pnas.1708283115
    .. [2] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(60, 1))
    >>> y = X[:, 0] + rng.normal(size=60) * .1; s = np.repeat(["a", "b", "c"], 20)
    >>> r = multistudy_stacking(LinearRegression(), X, y, s)
    >>> r.summary()["method"].tolist()[0] in {"stack", "stack_intercept", "merged",
    ...                                       "cross_study", "average"}
    True
    """
    Xa, ya, sa, labels, task = _iv(estimator, X, y, study, task)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
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
    m = get_metric(metric or ("accuracy" if classification else "r2"), task=task,
                   n_classes=len(classes) if classification else None)
    notes: list[str] = []
    labels, one_class = _usable_studies(ya, sa, labels, classification, notes)
    ssl_labels = [k for k in labels if k not in one_class]
    if one_class:
        notes.append(f"no single-study learner for {_listing(one_class)}: "
                     f"{'it holds' if len(one_class) == 1 else 'they hold'} a single class "
                     "(still in the stacking fit and the evaluation)")
    if not ssl_labels:
        raise DataError("multi-study stacking: no study holds both classes, so no single-study "
                        "learner can be trained.")
    rows, codes = _coded(sa, labels)
    s_used, y_used, t_used = sa[rows], ya[rows], target[rows]
    ssl = [labels.index(k) for k in ssl_labels]
    # one learner per study, predicting every row (in-sample on its own study): one run; the
    # learner of study k is the same in every leave-one-study-out configuration
    res = _run({"learner": estimator}, Xa[rows], y_used,
               CrossStudy(None, in_sample=True, stratify=classification), codes,
               random_state=random_state, n_jobs=n_jobs)
    P = _learner_outputs(res.predictions, len(rows), ssl, classification, pos_class)
    merged: dict = {}
    if evaluate:  # the merged learner, trained on the pooled other studies: one run
        scheme = _TrainableLeaveOneStudyOut() if classification else LeaveOneStudyOut()
        if not classification or any(pd.unique(y_used[codes != i]).size > 1
                                     for i in range(len(labels))):
            res_m = _run({"merged": estimator}, Xa[rows], y_used, scheme, codes,
                         random_state=random_state, n_jobs=n_jobs)
            merged = _by_left_out_study(res_m.predictions, codes, classes)
    w = _weights(P, t_used, s_used, ssl_labels)
    weights = pd.DataFrame({k: v[0] for k, v in w.items()}, index=[str(k) for k in ssl_labels])
    intercept = w["stack_intercept"][1]
    rows_out, skipped = [], []
    for i, held in enumerate(labels if evaluate else []):
        keep = [j for j, k in enumerate(ssl_labels) if k != held]
        if not keep:
            skipped.append(held)
            continue
        tr, te = codes != i, codes == i
        wh = _weights(P[np.ix_(tr, keep)], t_used[tr], s_used[tr],
                      [ssl_labels[j] for j in keep])
        Pte = P[np.ix_(te, keep)]
        for meth, (wv, a0) in wh.items():
            rows_out.append({"study": held, "method": meth,
                             "value": _score_output(m, y_used[te], Pte @ wv + a0,
                                                    classification, classes)})
        if i in merged:
            test, pred, proba = merged[i]
            rows_out.append({"study": held, "method": "merged",
                             "value": m.func(y_used[test], pred,
                                             proba if (classification and m.needs_proba)
                                             else None, classes)})
    if skipped:
        notes.append(f"not evaluated on {_listing(skipped)}: without it no study with both "
                     "classes is left to train on")
    evaluation = (pd.DataFrame(rows_out, columns=["study", "method", "value"]) if evaluate
                  else None)
    return StackingResult(weights, float(intercept), evaluation, m.name, m.higher_is_better,
                          tuple(notes))


def _score_output(m: _Metric, y, out, classification, classes):
    if not classification:
        return m.func(y, out, None, None)
    p = np.clip(out, 0.0, 1.0)
    pred = np.where(p >= 0.5, classes[-1], classes[0])
    proba = np.column_stack([1 - p, p])
    return m.func(y, pred, proba, classes)
