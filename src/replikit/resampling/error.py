"""Prediction-error estimates by resampling: the estimators of Etherington & Lieske (2019),
a replication of Verbyla & Litvaitis (1989) (their eqs. 3–7), and Efron's .632 and Efron &
Tibshirani's (1997) .632+ bootstrap.

Every method is computed the same way: the method's scheme of :mod:`replikit.experiment.schemes`
(:class:`~replikit.experiment.Resubstitution`, :class:`~replikit.experiment.HoldOut`,
:class:`~replikit.experiment.RepeatedKFold`, :class:`~replikit.experiment.LeaveOneOut`,
:class:`~replikit.experiment.Bootstrap`) gives R resamples as its ``masks``: a vector of training
weights over the n rows (bootstrap counts or 0/1 masks) and a test mask each; one model is fitted
per resample and predicts its test rows; the per-row losses ``L[r, i]`` are then reduced as each
equation says. The fits go through the batched fast path (:mod:`replikit.resampling._fast`) when
the model is LDA, linear/ridge/logistic regression or a mean/prior baseline, and otherwise through
the generic path, one :func:`replikit.experiment.fit.fit_predict` per resample (clone, the one
seeding rule, fit on the training rows repeated by their weights), in chunks of resamples run by
an :class:`~replikit.experiment.engine.Engine` (the calling process, joblib workers or a Dask
cluster; resumed from and committed to its store). Both paths see the same resamples, so they
give the same predictions (ties aside).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._compat import renamed
from .._random import root_seed_sequence, task_int_seed, task_rng
from .._threads import single_blas
from .._validation import check_choice, check_int
from ..errors import DataError, ParameterError, ParameterTypeError, ReplikitError
from ..results import Result

__all__ = ["ErrorEstimate", "ErrorEstimates", "estimate_error", "estimate_errors", "METHODS",
           "LOSSES"]

METHODS = ("resubstitution", "holdout", "kfold", "loo", "bootstrap", "loo_bootstrap", ".632",
           ".632+")
LOSSES = ("zero_one", "absolute", "squared", "log")
_BOOTSTRAP_FAMILY = ("bootstrap", "loo_bootstrap", ".632", ".632+")
_NAMES = {
    "resubstitution": "resubstitution (apparent) error, eq. 3",
    "holdout": "hold-out cross-validation, eq. 4",
    "kfold": "K-fold cross-validation, eq. 5",
    "loo": "leave-one-out (jackknife) cross-validation, eq. 5 with K = n",
    "bootstrap": "bootstrap, pooled out-of-bag errors, eq. 6",
    "loo_bootstrap": "leave-one-out bootstrap, eq. 7",
    ".632": ".632 bootstrap, Efron (1983)",
    ".632+": ".632+ bootstrap, Efron & Tibshirani (1997)",
}
#: Each method in a few words, for figure labels.
_SHORT = {"resubstitution": "resubstitution", "holdout": "hold-out", "kfold": "K-fold CV",
          "loo": "leave-one-out", "bootstrap": "bootstrap (eq. 6)",
          "loo_bootstrap": "leave-one-out bootstrap", ".632": ".632 bootstrap",
          ".632+": ".632+ bootstrap"}
#: The kinds of interval (``interval=``) and what each is, in words.
INTERVALS = ("nested", "wald", "t", "exact", "corrected_t", "none")
_INTERVAL_NAMES = {
    "nested": "nested cross-validation (Bates, Hastie & Tibshirani 2024)",
    "wald": "naive Wald interval (rows treated as independent; it covers below its level, "
            "Bates, Hastie & Tibshirani 2024)",
    "t": "Student's t interval of the split's per-row test losses",
    "exact": "exact (Clopper-Pearson) interval of the split's error count",
    "corrected_t": "corrected resampled t interval (Nadeau & Bengio 2003)",
    "none": "no interval",
}
_ALLOWED = {"kfold": ("nested", "wald", "none"), "loo": ("wald", "none"),
            "holdout": ("t", "exact", "corrected_t", "none")}
_NO_INTERVAL = {
    "resubstitution": "no interval: the apparent error is judged on the rows the model was "
                      "fitted to, so it does not estimate the error on new rows",
    "bootstrap": "no interval: no interval for the bootstrap estimates has had its coverage "
                 "measured here; K-fold cross-validation has one (nested cross-validation)",
}
NESTED_REPEATS = 50  # repetitions of nested CV, as the nestedcv package's default
_NOINFO_EXACT_MAX = 3000  # callable losses: all n^2 pairs up to this n, else a subsample


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ErrorEstimate(Result):
    """A prediction-error estimate from one resampling method (see :func:`estimate_error`).

    Attributes
    ----------
    estimate : float
        The estimated prediction error (mean loss of the rule fitted to all n rows).
    se : float
        The standard error behind the interval (nested CV: its SE; naive Wald: the SD of the
        per-row losses over sqrt(n); t and corrected t: theirs; exact: ``sqrt(p (1 - p) / m)``);
        ``nan`` when there is no interval.
    per_resample : ndarray
        The error of each resample on its own test rows (hold-out splits, folds, bootstrap
        out-of-bag sets; the single apparent error for resubstitution).
    method : str
        One of :data:`METHODS`.
    loss : str
        ``'zero_one'``, ``'absolute'``, ``'squared'``, ``'log'`` or a callable's name.
    parameters : dict
        The scheme's settings (``n_resamples``, ``n_folds``, ``n_repeats``, ``test_size``,
        ``rounding``, ``n_test``).
    n : int
        Rows in the data.
    path : str
        ``'fast'`` (batched fits) or ``'generic'`` (one cloned estimator per resample).
    components : dict
        For .632 and .632+: ``apparent`` (err, eq. 3), ``loo_bootstrap`` (Err(1), eq. 7),
        ``no_information`` (gamma), ``overfitting_rate`` (R, clipped), ``weight`` (w).
    interval : str
        The kind of interval (:data:`INTERVALS`): ``'nested'``, ``'wald'``, ``'t'``,
        ``'exact'``, ``'corrected_t'`` or ``'none'``; :attr:`interval_method` in words.
    interval_parts : dict
        What :meth:`confidence_interval` needs at any level: ``center``, ``se`` and ``df``
        (or the error count ``errors`` and ``m`` for the exact interval); for nested CV also
        ``nested_estimate`` (err_NCV), ``nested_cv_estimate`` (err_CV), ``bias``, ``mse``,
        ``inflation`` and ``nested_repeats``.
    interval_note : str
        Why there is no interval, when there is none, or why the interval is not the one
        asked for (nested cross-validation that failed, e.g. a pair of folds leaving a single
        class to train on, falls back to the naive Wald interval).

    See Also
    --------
    estimate_error : Computes it.
    ErrorEstimates : Several methods' estimates for one model and dataset.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = X[:, 0] + rng.normal(size=40)
    >>> est = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=5,
    ...                      random_state=0)
    >>> est.title, est.n_resamples
    ('K-fold cross-validation, eq. 5', 5)
    """

    estimate: float
    se: float
    per_resample: np.ndarray = field(repr=False)
    method: str
    loss: str
    parameters: dict
    n: int
    path: str
    components: dict = field(default_factory=dict)
    interval: str = "none"
    interval_parts: dict = field(default_factory=dict, repr=False)
    interval_note: str = ""

    @property
    def interval_method(self) -> str:
        """The interval's method in words (``'nested cross-validation (Bates, ...)'``)."""
        return _INTERVAL_NAMES[self.interval]

    def confidence_interval(self, confidence_level: float = 0.95):
        """The interval of the prediction error at ``confidence_level`` (method:
        :attr:`interval`, see :func:`estimate_error`).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the two-sided interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``; ``(nan, nan)`` when the estimate has no interval
            (:attr:`interval_note` says why).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import LinearRegression
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2)); y = X[:, 0] + rng.normal(size=40)
        >>> est = estimate_error(LinearRegression(), X, y, method="kfold", n_folds=5,
        ...                      n_nested_repeats=5, random_state=0)
        >>> ci = est.confidence_interval(0.9)
        >>> est.interval, bool(ci.low < ci.high)
        ('nested', True)
        """
        from .._validation import check_confidence_level
        from ..results import ConfidenceInterval, wald_interval

        level = check_confidence_level(confidence_level)
        parts = self.interval_parts
        if self.interval == "none":
            return ConfidenceInterval(math.nan, math.nan)
        if self.interval == "exact":
            from ._intervals import clopper_pearson

            return ConfidenceInterval(*clopper_pearson(parts["errors"], parts["m"], level))
        df = parts.get("df")
        ci = wald_interval(parts["center"], parts["se"], level,
                           df=None if df is None else float(df))
        if self.loss in ("zero_one", "squared", "absolute", "log"):  # losses are >= 0
            ci = ConfidenceInterval(max(0.0, ci.low), ci.high)
        if self.loss == "zero_one":
            ci = ConfidenceInterval(ci.low, min(1.0, ci.high))
        return ci

    @property
    def n_resamples(self) -> int:
        """The number of resamples (splits, folds or bootstrap resamples) behind the estimate."""
        return int(np.size(self.per_resample))

    @property
    def title(self) -> str:
        """The method in words (``'K-fold cross-validation, eq. 5'``)."""
        return _NAMES[self.method]

    def to_frame(self) -> pd.DataFrame:
        """One tidy row: ``method, estimate, se, ci_low, ci_high`` (95%), ``interval, loss, n,
        n_resamples, path`` + parameters, components and, for nested CV, the interval's centre
        (``interval_center``), the nested estimate and its bias correction.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        ci = self.confidence_interval(0.95)
        row: dict[str, Any] = {"method": self.method, "estimate": self.estimate, "se": self.se,
                               "ci_low": ci.low, "ci_high": ci.high,
                               "interval": self.interval, "loss": self.loss, "n": self.n,
                               "n_resamples": self.n_resamples, "path": self.path}
        row.update(self.parameters)
        row.update(self.components)
        for key in ("center", "nested_estimate", "bias", "nested_repeats"):
            if key in self.interval_parts:
                row[f"interval_{key}"] = self.interval_parts[key]
        return pd.DataFrame([row])

    def __str__(self) -> str:
        from .._format import number

        se = "" if not np.isfinite(self.se) else f" (SE {number(self.se, 4)})"
        params = ", ".join(f"{k} = {number(v, 4) if not isinstance(v, str) else v}"
                           for k, v in self.parameters.items() if k != "n_resamples")
        k = self.n_resamples
        out = (f"{self.title}\n  {self.loss} loss = {number(self.estimate, 4)}{se}; "
               f"n = {number(self.n)}, {number(k)} resample{'s' if k != 1 else ''}"
               f"{', ' + params if params else ''}; {self.path} path")
        if self.components:
            out += "\n  " + ", ".join(f"{k} = {number(v, 4)}" for k, v in self.components.items())
        if self.interval == "none":
            out += f"\n  {self.interval_note}" if self.interval_note else ""
        else:
            ci = self.confidence_interval(0.95)
            out += (f"\n  95% interval [{number(ci.low, 4)}, {number(ci.high, 4)}]: "
                    f"{self.interval_method}")
            out += f" ({self.interval_note})" if self.interval_note else ""
        return out


@dataclass(frozen=True, slots=True)
class ErrorEstimates(Result):
    """Several methods' estimates for one model and dataset (see :func:`estimate_errors`).

    ``result["kfold"]`` is the :class:`ErrorEstimate` of a method; iterating gives the method
    names in the order asked for.

    Attributes
    ----------
    estimates : dict of str -> ErrorEstimate
        Method name -> its estimate.

    See Also
    --------
    estimate_errors : Computes it.
    ErrorEstimate : One method's estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = X[:, 0] + rng.normal(size=40)
    >>> res = estimate_errors(LinearRegression(), X, y, methods=["resubstitution", "kfold"],
    ...                       random_state=0)
    >>> list(res), list(res.to_frame()["method"])
    (['resubstitution', 'kfold'], ['resubstitution', 'kfold'])
    """

    estimates: dict

    def __getitem__(self, method: str) -> ErrorEstimate:
        return self.estimates[method]

    def __iter__(self):
        return iter(self.estimates)

    def __len__(self) -> int:
        return len(self.estimates)

    @property
    def title(self) -> str:
        """``'Prediction error by resampling (<loss> loss)'``."""
        losses = sorted({e.loss for e in self.estimates.values()})
        return f"Prediction error by resampling ({', '.join(losses)} loss)"

    def to_frame(self) -> pd.DataFrame:
        """One row per method (columns as :meth:`ErrorEstimate.to_frame`).

        Returns
        -------
        pandas.DataFrame
            One row per method, in the order asked for.
        """
        return pd.concat([e.to_frame() for e in self.estimates.values()], ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """The methods' estimates in JSON types.

        Returns
        -------
        dict
            ``{"estimates": {method: ErrorEstimate.to_dict()}}``.
        """
        return {"estimates": {m: e.to_dict() for m, e in self.estimates.items()}}

    def __str__(self) -> str:
        frame = self.to_frame()[["method", "estimate", "ci_low", "ci_high", "interval",
                                 "n_resamples", "path"]]
        return f"{self.title}\n" + frame.to_string(index=False,
                                                   float_format=lambda v: f"{v:.4f}")

    def plot(self, ax=None):
        """Each method's estimate as a bar (±1 SE where the method has one).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; by default a new figure (shown inline in a notebook).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_method_estimates

        frame = self.to_frame()
        return plot_method_estimates(frame.assign(method=[_SHORT[m] for m in frame["method"]]),
                                     loss=", ".join(dict.fromkeys(frame["loss"])), ax=ax)


# --------------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------------

@dataclass
class _Problem:
    model: Any
    X: Any  # what the generic path fits on (numpy array or DataFrame)
    Xf: np.ndarray | None  # float matrix for the fast path (None if not numeric)
    y: np.ndarray  # original labels / values
    yf: np.ndarray  # float outcome (regression) or class codes (classification)
    classes: np.ndarray | None
    task: str
    loss: str | Callable
    loss_name: str
    n: int


def _estimate_error_iv(model, X, y, loss, task) -> _Problem:
    from sklearn.base import is_classifier

    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise ParameterTypeError("`model` must be a scikit-learn estimator with fit and predict; "
                                 f"got {type(model).__name__}.")
    if isinstance(X, pd.DataFrame):
        Xg = X.reset_index(drop=True)
    else:
        Xg = np.asarray(X)
        if Xg.ndim == 1:
            Xg = Xg[:, None]
        if Xg.ndim != 2:
            raise DataError(f"`X` must be two-dimensional (rows x features); got shape {Xg.shape}.")
    try:
        Xf = np.asarray(Xg, dtype=float)
        if not np.all(np.isfinite(Xf)):
            raise DataError("`X` contains NaN or infinite values; remove or impute them first.")
    except (TypeError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        Xf = None
    y_arr = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
    if y_arr.ndim != 1:
        raise DataError(f"`y` must be one-dimensional; got shape {y_arr.shape}.")
    n = y_arr.shape[0]
    if len(Xg) != n:
        raise DataError(f"`X` and `y` must have the same number of rows; got {len(Xg)} and {n}.")
    if n < 3:
        raise DataError(f"`X` must have at least 3 rows to resample; got {n}.")
    if task is None:
        task = "classification" if is_classifier(model) else "regression"
    task = check_choice(task, "task", ("classification", "regression"))
    if task == "classification":
        if pd.isna(y_arr).any():
            raise DataError("`y` contains missing labels.")
        classes, codes = np.unique(y_arr, return_inverse=True)
        if classes.size < 2:
            raise DataError(f"`y` has a single class ({classes[0]!r}); nothing to predict.")
        yf = codes.astype(np.int64)
    else:
        try:
            yf = y_arr.astype(float)
        except (TypeError, ValueError):
            raise DataError("`y` must be numeric for a regression model; got dtype "
                            f"{y_arr.dtype}.") from None
        if not np.all(np.isfinite(yf)):
            raise DataError("`y` contains NaN or infinite values.")
        classes = None
    if loss is None:
        loss = "zero_one" if task == "classification" else "squared"
    if loss == "log" and not hasattr(model, "predict_proba"):
        raise ParameterError(f"`loss`='log' needs predicted probabilities; "
                             f"{type(model).__name__} has no predict_proba (use 'zero_one').")
    if callable(loss):
        name = getattr(loss, "__name__", "custom")
    else:
        loss = check_choice(loss, "loss", LOSSES)
        name = loss
        if task == "regression" and loss in ("zero_one", "log"):
            raise ParameterError(f"`loss`={loss!r} needs a classifier; the model is a regressor "
                                 "(use 'squared' or 'absolute').")
        if task == "classification" and loss == "absolute":
            if not np.issubdtype(np.asarray(classes).dtype, np.number):
                raise ParameterError("`loss`='absolute' needs numeric class labels (as the "
                                     "|y - y_hat| of Verbyla & Litvaitis (1989) with 0/1 "
                                     "labels); use 'zero_one'.")
        if loss == "squared" and task == "classification":
            if not np.issubdtype(np.asarray(classes).dtype, np.number):
                raise ParameterError("`loss`='squared' needs numeric class labels.")
    return _Problem(model, Xg, Xf, y_arr, yf, classes, task, loss, name, n)


def _scheme_iv(method, n_resamples, n_folds, n_repeats, test_size, rounding, n):
    method = check_choice(method, "method", METHODS)
    params: dict[str, Any] = {}
    if method == "holdout":
        from ..experiment.schemes import HoldOut

        if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real):
            raise ParameterTypeError(f"`test_size` must be a number in (0, 1); got {test_size!r}.")
        reps = 200 if n_repeats is None else check_int(n_repeats, "n_repeats", min_value=1)
        try:
            k = HoldOut(float(test_size), reps, rounding=rounding).n_test(n, min_train=2)
        except DataError as exc:  # a setting that cannot work for these data
            raise ParameterError(str(exc)) from None
        params = {"n_repeats": reps, "test_size": float(test_size), "rounding": rounding,
                  "n_test": k}
    elif method == "kfold":
        k = check_int(n_folds, "n_folds", min_value=2, max_value=n)
        reps = 1 if n_repeats is None else check_int(n_repeats, "n_repeats", min_value=1)
        params = {"n_folds": k, "n_repeats": reps}
    elif method == "loo":
        params = {"n_folds": n}
    elif method in _BOOTSTRAP_FAMILY:
        params = {"n_resamples": check_int(n_resamples, "n_resamples", min_value=1)}
    return method, params


def _engine_iv(engine, n_jobs):
    """The engine of the generic path's fits: ``engine``, or the calling process (``n_jobs=1``)
    or ``n_jobs`` joblib workers."""
    from ..experiment.engine import Engine

    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    if engine is None:  # no store, no client: nothing to close
        return Engine("joblib" if n_jobs > 1 else "serial", n_jobs)
    if not isinstance(engine, Engine):
        raise ParameterTypeError("`engine` must be a replikit.experiment.engine.Engine; got "
                                 f"{type(engine).__name__}.")
    if n_jobs != 1:
        raise ParameterError("`engine` carries the backend and the workers; give the Engine "
                             f"its workers and leave `n_jobs` at 1 (got n_jobs={n_jobs}).")
    return engine


# --------------------------------------------------------------------------------------------
# resamples: the schemes of the experiment layer, as weight matrices
# --------------------------------------------------------------------------------------------

def _scheme(family: str, params: dict, prob: _Problem):
    """The :mod:`replikit.experiment.schemes` scheme of ``family``, with the redraw rules of
    Etherington & Lieske's code for a classifier: a hold-out split whose training labels are all class 0 and a
    bootstrap resample whose training labels are a single class are redrawn."""
    from ..experiment.schemes import Bootstrap, HoldOut, LeaveOneOut, RepeatedKFold, Resubstitution

    clf = prob.task == "classification"
    if family == "resubstitution":
        return Resubstitution()
    if family == "loo":
        return LeaveOneOut()
    if family == "holdout":
        return HoldOut(params["test_size"], params["n_repeats"], rounding=params["rounding"],
                       redraw_all_zero=clf)
    if family == "kfold":
        return RepeatedKFold(params["n_folds"], params["n_repeats"])
    return Bootstrap(params["n_resamples"], redraw_single_class=clf)


def _resamples(family: str, params: dict, prob: _Problem, root) -> tuple[np.ndarray, np.ndarray]:
    """Training weights ``W`` (R, n; ``uint8`` counts: a million rows x 200 resamples is 200
    MB, not 1.6 GB) and test mask ``T`` (R, n) of ``family``'s scheme, drawn from the stream
    of ``(root, family)``."""
    y_codes = prob.yf if prob.task == "classification" else None
    return _scheme(family, params, prob).masks(prob.n, y_codes,
                                               random_state=task_rng(root, ("resamples", family)),
                                               compact=True)


# --------------------------------------------------------------------------------------------
# predictions: fast and generic paths
# --------------------------------------------------------------------------------------------

def batched_fit(model, task: str, loss, n_classes: int = 0):
    """The batched fit :func:`estimate_errors` uses for ``model`` with ``loss``, or ``None``
    when it refits the model per resample (the generic path)."""
    from ._fast import fast_predictor

    fp = fast_predictor(model, task)
    if fp is not None and fp.kind == "logistic" and n_classes != 2:
        fp = None
    if fp is not None and loss == "log" and (not fp.has_proba or fp.kind == "lda"):
        # LDA's posterior depends on the covariance divisor (n - K here, n in scikit-learn
        # >= 1.9) even with equal priors, so probability losses use the generic path
        fp = None
    if fp is not None and callable(loss):
        fp = fp if fp.is_classifier == (task == "classification") else None
    return fp


def _choose_fast(prob: _Problem, fast: bool | None):
    if fast is False or prob.Xf is None:
        return None
    fp = batched_fit(prob.model, prob.task, prob.loss,
                     0 if prob.classes is None else prob.classes.size)
    if fast is True and fp is None:
        raise ParameterError(f"`fast`: there is no batched fit for {type(prob.model).__name__} "
                             "with these settings; leave `fast` unset (the batched fit when "
                             "there is one) or ask for the generic path.")
    return fp


def _predict_fast(fp, prob: _Problem, W: np.ndarray, need_proba: bool) -> np.ndarray:
    K = 0 if prob.classes is None else prob.classes.size
    out = []
    # bound the (R, n, K) temporaries of classifiers; a regression's least squares recomputes
    # the rows' outer products per chunk (n p^2), so it takes ten times as many resamples
    step = max(1, (8_000_000 if K else 20_000_000) // max(1, prob.n * max(1, K)))
    for start in range(0, W.shape[0], step):
        Wb = W[None, start:start + step].astype(float, copy=False)  # compact counts: weights
        if need_proba:
            out.append(fp.predict_proba(prob.Xf[None], prob.yf[None], Wb, K)[0])
        else:
            out.append(fp.predict(prob.Xf[None], prob.yf[None], Wb, K)[0])
    return np.concatenate(out, axis=0)


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


#: Resamples per task of the generic path: ``clip(round(10,000 / n), 1, 8)``. It depends on the
#: rows only, never on the workers, so that a run resumed with another engine finds its chunks
#: in the store under the same keys; on large data a chunk is one fit (the store keeps each).
_CHUNK_ROWS, _CHUNK_MAX = 10_000, 8


def _chunk_size(n: int) -> int:
    return int(min(_CHUNK_MAX, max(1, round(_CHUNK_ROWS / n))))


@dataclass(frozen=True)
class _FitChunk:
    """Resamples ``start, start + 1, ...`` of one fit set (``family``), with everything random
    about them: their training weights, test masks and the integer seeds of their fits."""

    family: str
    start: int
    W: np.ndarray
    T: np.ndarray
    seeds: tuple

    @property
    def key(self) -> tuple:
        return (self.family, self.start, self.start + len(self.seeds))


def _fit_predict(model, X, y, W_rows, T_rows, seeds, proba, classes):
    """One :func:`~replikit.experiment.fit.fit_predict` per resample: the training rows are
    the rows repeated by their weights (what the fast path's weighted fit solves)."""
    from ..experiment.fit import TestRows, fit_predict

    n = W_rows.shape[1]
    preds = []
    for w, t, seed in zip(W_rows, T_rows, seeds, strict=True):
        train = np.repeat(np.arange(n), w.astype(np.int64))
        Xt = TestRows(X, np.flatnonzero(t))  # predicted by blocks, never copied whole
        try:
            out = fit_predict(model, _take(X, train), y[train], Xt, random_state=seed,
                              proba=proba, classes=classes)
        except ReplikitError:
            raise
        except ValueError as exc:
            raise DataError(f"fitting {type(model).__name__} on a resample failed: {exc}") from exc
        preds.append(out.proba if proba else out.y_pred)
    return preds


def _fit_chunk(chunk: _FitChunk, model, X, y, proba: bool, classes) -> list:
    """A chunk's test-row predictions, as :meth:`~replikit.experiment.engine.Engine.map` calls
    it: per resample the probabilities (``proba``), the class codes (a classifier's labels as
    indices into ``classes``) or the predicted values — numeric arrays the store keeps exactly."""
    preds = _fit_predict(model, X, y, chunk.W, chunk.T, chunk.seeds, proba, classes)
    if proba or classes is None:
        return preds
    return [np.searchsorted(classes, p) for p in preds]


def _digest(*arrays) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _fit_set_spec(prob: _Problem, chunks: list, need_proba: bool) -> dict:
    """What a store's results of ``chunks`` depend on: the data, the model's parameters, the
    resamples (their weights and test masks) and seeds, and whether probabilities are kept."""
    from ..experiment.engine import data_fingerprint
    from ..experiment.runner import _model_params

    sets: dict[str, list] = {}
    for c in chunks:
        sets.setdefault(c.family, []).append(_digest(c.W, c.T, np.asarray(c.seeds, np.int64)))
    return {"kind": "resampling fits", "data": data_fingerprint(prob.X, prob.y),
            "task": prob.task, "model": _model_params(prob.model),
            "proba": bool(need_proba),
            "resamples": {f: _digest(np.array(d, dtype="S32")) for f, d in sets.items()}}


def _predict_generic(prob: _Problem, sets: list, need_proba: bool, root, engine,
                     tick=None) -> list[np.ndarray]:
    """The predictions ``P`` of each fit set ``(family, W, T)`` of ``sets``: one
    :func:`~replikit.experiment.fit.fit_predict` per resample, in chunks of a fixed number of
    resamples (:func:`_chunk_size`) run by ``engine`` (resumed from and committed to its store);
    a resample's fit is seeded by ``(root, 'fit', family, r)``. ``tick(m)`` as ``m`` more fits
    are done."""
    size = _chunk_size(prob.n)
    chunks, owner = [], []  # owner: the index in ``sets`` of each chunk
    for s, (family, W, T) in enumerate(sets):
        seeds = [task_int_seed(root, ("fit", family, r)) for r in range(W.shape[0])]
        for a in range(0, W.shape[0], size):
            chunks.append(_FitChunk(family, a, W[a:a + size], T[a:a + size],
                                    tuple(seeds[a:a + size])))
            owner.append(s)
    run_id = spec = None
    if engine.store is not None:
        from ..experiment.engine import spec_hash

        spec = _fit_set_spec(prob, chunks, need_proba)
        run_id = spec_hash(spec)
    on_result = None
    if tick is not None:  # chunks finish in any order: tick the sizes, largest first
        sizes = iter(sorted((len(c.seeds) for c in chunks), reverse=True))

        def on_result():
            tick(next(sizes))

    from ..experiment.engine import refit_bytes

    most = max((int(np.max(W.sum(axis=1), initial=0)) for _, W, _ in sets), default=0)
    final = prob.model.steps[-1][1] if hasattr(prob.model, "steps") else prob.model
    outs = engine.map(_fit_chunk, chunks,
                      shared=(prob.model, prob.X, prob.y, need_proba, prob.classes),
                      keys=[c.key for c in chunks], run_id=run_id, spec=spec,
                      on_result=on_result, task_bytes=refit_bytes(most, prob.X.shape[1]),
                      label=f"the {type(final).__name__} refits ({most:,} training rows)")
    K = 0 if prob.classes is None else prob.classes.size
    result = [np.full((W.shape[0], prob.n, K) if need_proba else W.shape, np.nan)
              for _, W, _ in sets]
    for c, s, out in zip(chunks, owner, outs, strict=True):
        T = sets[s][2]
        for r, p in enumerate(out, start=c.start):
            result[s][r, np.flatnonzero(T[r])] = p
    return result


# --------------------------------------------------------------------------------------------
# losses and the no-information error
# --------------------------------------------------------------------------------------------

def _losses(prob: _Problem, P: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Per-row losses ``L[r, i]`` on test entries (NaN elsewhere), computed a block of
    resamples at a time (the index and value temporaries stay near :data:`_LOSS_CELLS`)."""
    L = np.full(T.shape, np.nan)
    step = max(1, _LOSS_CELLS // max(1, T.shape[1]))
    for a in range(0, T.shape[0], step):
        _block_losses(prob, P, T, L, a, min(T.shape[0], a + step))
    return L


#: Resample x row cells of :func:`_losses`' temporaries per block.
_LOSS_CELLS = 4_000_000


def _block_losses(prob: _Problem, P: np.ndarray, T: np.ndarray, L: np.ndarray, a: int,
                  b: int) -> None:
    """:func:`_losses` of resamples ``a:b``, written into ``L``."""
    r, i = np.nonzero(T[a:b])
    r = r + a
    if callable(prob.loss):
        if prob.task == "classification":
            pred = prob.classes[P[r, i].astype(np.int64)]
        else:
            pred = P[r, i]
        vals = np.asarray(prob.loss(prob.y[i], pred), dtype=float)
        if vals.shape != i.shape:
            raise ParameterError("`loss`: a callable loss must return one value per row "
                                 f"(shape {i.shape}); got shape {vals.shape}.")
        L[r, i] = vals
        return
    if prob.loss == "log":
        p = P[r, i, prob.yf[i]]
        L[r, i] = -np.log(np.clip(p, 1e-15, 1.0))
        return
    if prob.task == "classification":
        if prob.loss == "zero_one":
            L[r, i] = (P[r, i] != prob.yf[i]).astype(float)
            return
        truth = prob.classes[prob.yf[i]].astype(float)
        pred = prob.classes[P[r, i].astype(np.int64)].astype(float)
    else:
        truth, pred = prob.yf[i], P[r, i]
    L[r, i] = np.abs(truth - pred) if prob.loss == "absolute" else (truth - pred) ** 2


def _no_information(prob: _Problem, full_pred: np.ndarray, root) -> float:
    """gamma-hat: the mean loss over all n^2 pairs (y_i, full-data prediction of row j)
    (Efron & Tibshirani 1997, eq. 27), computed in closed form for the built-in losses."""
    n = prob.n
    if callable(prob.loss):
        rows = np.arange(n)
        if n > _NOINFO_EXACT_MAX:
            rows = np.sort(task_rng(root, "noinfo").choice(n, _NOINFO_EXACT_MAX, replace=False))
        truth = prob.y[rows]
        pred = (prob.classes[full_pred[rows].astype(np.int64)] if prob.task == "classification"
                else full_pred[rows])
        total = 0.0
        for a in range(0, rows.size, 256):
            t = np.repeat(truth[a:a + 256], rows.size)
            q = np.tile(pred, min(256, rows.size - a))
            total += float(np.sum(prob.loss(t, q)))
        return total / rows.size**2
    if prob.loss == "log":
        share = np.bincount(prob.yf, minlength=prob.classes.size) / n
        return float(-np.sum(share * np.log(np.clip(full_pred, 1e-15, 1.0)).mean(axis=0)))
    if prob.task == "classification" and prob.loss == "zero_one":
        K = prob.classes.size
        p = np.bincount(prob.yf, minlength=K) / n
        q = np.bincount(full_pred.astype(np.int64), minlength=K) / n
        return float(np.sum(p * (1.0 - q)))
    if prob.task == "classification":
        truth = prob.classes[prob.yf].astype(float)
        pred = prob.classes[full_pred.astype(np.int64)].astype(float)
    else:
        truth, pred = prob.yf, full_pred
    if prob.loss == "squared":
        return float(np.mean(truth**2) - 2 * truth.mean() * pred.mean() + np.mean(pred**2))
    # absolute: sum_i sum_j |y_i - p_j| from the sorted predictions and their cumulative sums
    ps = np.sort(pred)
    cum = np.concatenate([[0.0], np.cumsum(ps)])
    k = np.searchsorted(ps, truth, side="right")
    below = truth * k - cum[k]
    above = (cum[-1] - cum[k]) - truth * (n - k)
    return float(np.sum(below + above) / n**2)


# --------------------------------------------------------------------------------------------
# the estimators (reductions of the loss matrix)
# --------------------------------------------------------------------------------------------

def _split_means(L, T):
    return np.sum(L, axis=1, where=T) / T.sum(axis=1)


def _naive_se(values):
    return float(np.std(values, ddof=1) / np.sqrt(values.size)) if values.size > 1 else math.nan


def _reduce(method, params, L, T, apparent, gamma):
    """(estimate, se, per_resample, components) of ``method`` from the loss matrix."""
    per = _split_means(L, T)
    if method == "resubstitution":
        return apparent, math.nan, np.array([apparent]), {}
    if method == "holdout":  # eq. 4: mean over H splits of the test-set mean error
        return float(per.mean()), _naive_se(per), per, {}
    if method in ("kfold", "loo"):  # eq. 5: mean over rows, then over repeats
        reps = params.get("n_repeats", 1)
        K = L.shape[0] // reps
        row_err = np.nansum(L.reshape(reps, K, -1), axis=1)  # each row tested once per repeat
        est = float(row_err.mean())
        return est, _naive_se(per), per, {}
    oob = T.sum(axis=0)
    # sums over the test entries only (``where``: no NaN-free copy of the (R, n) losses)
    eq6 = float(np.sum(L, where=T) / T.sum())
    if method == "bootstrap":  # eq. 6: pooled out-of-bag errors
        return eq6, math.nan, per, {}
    seen = oob > 0
    err1 = float(np.mean(np.sum(L, axis=0, where=T)[seen] / oob[seen]))  # eq. 7
    if method == "loo_bootstrap":
        return err1, math.nan, per, {"rows_never_out_of_bag": int((~seen).sum())}
    if method == ".632":
        est = 0.368 * apparent + 0.632 * err1
        return est, math.nan, per, {"apparent": apparent, "loo_bootstrap": err1, "weight": 0.632}
    # .632+: Err1' = min(Err1, gamma); R' = (Err1' - err) / (gamma - err) clipped to [0, 1]
    err1p = min(err1, gamma)
    if err1p > apparent and gamma > apparent:
        rate = min(1.0, max(0.0, (err1p - apparent) / (gamma - apparent)))
    else:
        rate = 0.0
    weight = 0.632 / (1.0 - 0.368 * rate)
    est = (1.0 - weight) * apparent + weight * err1p
    return est, math.nan, per, {"apparent": apparent, "loo_bootstrap": err1,
                                "no_information": gamma, "overfitting_rate": rate,
                                "weight": weight}


def _interval_choice(method: str, params: dict, prob: _Problem,
                     interval: str | None) -> tuple[str, str]:
    """(kind of interval, note when there is none) for ``method``: its default when
    ``interval`` is None; an interval the method does not allow gives none, with the reason."""
    allowed = _ALLOWED.get(method, ("none",))
    if method == "holdout":
        single = params["n_repeats"] == 1
        allowed = (("t", "exact") if single else ("corrected_t",)) + ("none",)
        if prob.loss_name != "zero_one":
            allowed = tuple(a for a in allowed if a != "exact")
        default = ("exact" if prob.loss_name == "zero_one" else "t") if single else "corrected_t"
    else:
        default = allowed[0]
    few_folds = method == "kfold" and params.get("n_folds", 10) < 3
    if interval == "nested" and few_folds:
        raise ParameterError(f"`interval`='nested' needs `n_folds` >= 3 (each fit of nested "
                             f"cross-validation leaves two folds out and must keep one); got "
                             f"n_folds={params['n_folds']}. Use interval='wald' or more folds.")
    if interval is None:
        interval = default
        if few_folds:  # with two folds, a fit without two folds has no rows to learn from
            return "wald", (f"nested cross-validation needs at least 3 folds (got "
                            f"{params['n_folds']}); the naive Wald interval instead")
    if interval in allowed and interval != "none":
        return interval, ""
    if interval == "none" and method in _ALLOWED:
        return "none", "no interval: none was asked for"
    if method == "resubstitution":
        return "none", _NO_INTERVAL["resubstitution"]
    if method in _BOOTSTRAP_FAMILY:
        return "none", _NO_INTERVAL["bootstrap"]
    return "none", (f"no interval: interval={interval!r} does not apply to this method "
                    f"(it allows {', '.join(repr(a) for a in allowed)})")


def _interval_parts(kind: str, params: dict, L: np.ndarray, T: np.ndarray, n: int) -> dict:
    from ._intervals import corrected_t, holdout_single, wald_rows

    if kind == "wald":
        reps = params.get("n_repeats", 1)
        est = float(np.nansum(L.reshape(reps, -1, n), axis=1).mean())
        return {"center": est, "se": wald_rows(L, reps)}
    if kind in ("t", "exact"):
        losses = L[0, T[0]]
        return holdout_single(losses, exact=kind == "exact")
    return corrected_t(_split_means(L, T), params["n_test"], n)


def _nested(prob: _Problem, fp, K: int, reps: int, root, engine, progress) -> dict:
    """Nested cross-validation (Bates, Hastie & Tibshirani 2024, Algorithm 1) over ``reps``
    random partitions into ``K`` folds (their own random stream): the pair fits and the
    single-fold fits, batched on the fast path (:func:`_nested_fast`), on the generic path one
    fit set of ``engine`` per chunk of partitions, reduced by
    :class:`~replikit.resampling._intervals.NestedAccumulator`."""
    from ..experiment.schemes import RepeatedKFold
    from ._intervals import NestedAccumulator, pair_index

    n = prob.n
    y_codes = prob.yf if prob.task == "classification" else None
    _, T_all = RepeatedKFold(K, reps).masks(n, y_codes,
                                            random_state=task_rng(root, ("resamples", "nested")))
    fold_all = np.argmax(T_all.reshape(reps, K, n), axis=1)  # (reps, n)
    del T_all
    acc = NestedAccumulator(K, n)
    if fp is not None:
        _nested_fast(prob, fp, K, fold_all, acc, progress)
        return acc.result()
    ia, ib = pair_index(K)
    P = ia.size
    need_proba = prob.loss == "log"
    chunk = max(1, 3_000_000 // max(1, (P + K) * n))
    for start in range(0, reps, chunk):
        fold = fold_all[start:start + chunk]
        r = fold.shape[0]
        Fm = fold[:, None, :] == np.arange(K)[None, :, None]  # (r, K, n)
        T_pair = (Fm[:, ia, :] | Fm[:, ib, :]).reshape(r * P, n)
        T_out = Fm.reshape(r * K, n)
        T = np.concatenate([T_pair, T_out], axis=0)
        W = (~T).astype(np.uint8)
        (Pred,) = _predict_generic(prob, [(f"nested{start}", W, T)], need_proba, root,
                                   engine, tick=progress)
        L = _losses(prob, Pred, T)
        acc.add(L[:r * P].reshape(r, P, n), L[r * P:].reshape(r, K, n), fold)
    return acc.result()


#: Fit x row cells (times the classes of a probabilistic classifier) of one batch of
#: :func:`_nested_fast`: its predictions, losses and weights stay near this many values.
_NESTED_CELLS = 8_000_000


def _nested_fast(prob: _Problem, fp, K: int, fold_all: np.ndarray, acc, progress) -> None:
    """The batched fits of nested CV, a few at a time: the ``K (K - 1) / 2`` pair fits and
    ``K`` single-fold fits of every partition (``fold_all``: each row's fold per partition),
    at most :data:`_NESTED_CELLS` predicted cells per batch, each batch's losses reduced at
    once to the sums :meth:`~replikit.resampling._intervals.NestedAccumulator.add_sums`
    needs. A batch never spans two partitions when the data are wide: its weights then take
    ``K`` patterns (a row's fold) and the batched fits build ``K`` Gram matrices instead of one
    per fit (``_fast._pattern_grams``). Memory: ``O(cells)``, not the ``(K (K + 1) / 2, n)``
    losses of a partition (55 x 1,000,000 doubles, 440 MB, for 10 folds, twice over)."""
    from ._fast import WIDE_FEATURES
    from ._intervals import pair_index

    reps, n = fold_all.shape
    ia, ib = pair_index(K)
    P = ia.size
    need_proba = prob.loss == "log"
    C = prob.classes.size if need_proba else 1
    per = max(1, _NESTED_CELLS // max(1, n * C))  # fits per batch
    wide = prob.Xf.shape[1] >= WIDE_FEATURES
    # the fits: (partition, first fold, second fold); a single-fold fit has second = -1
    fits = [(r, int(a), int(b)) for r in range(reps) for a, b in zip(ia, ib, strict=True)]
    fits += [(r, j, -1) for r in range(reps) for j in range(K)]
    fits.sort(key=lambda f: f[0])  # stable: a partition's pairs, then its single folds
    s_a = np.zeros((reps, P))
    s_b = np.zeros((reps, P))
    out_sum = np.zeros((reps, K))
    out_var = np.zeros((reps, K))
    nk = np.zeros((reps, K))
    ho = [0.0, 0.0, 0]
    pair_of = {(int(a), int(b)): p for p, (a, b) in enumerate(zip(ia, ib, strict=True))}
    rows = {}  # (partition, fold) -> its rows

    def rows_of(r, k):
        if (r, k) not in rows:
            if len(rows) > 2 * K:  # the partitions come in order: keep the current one's
                rows.clear()
            rows[r, k] = np.flatnonzero(fold_all[r] == k)
        return rows[r, k]

    start = 0
    while start < len(fits):
        stop = min(len(fits), start + per)
        if wide:
            stop = start + sum(1 for f in fits[start:stop] if f[0] == fits[start][0])
        batch = fits[start:stop]
        T = np.zeros((len(batch), n), bool)
        for i, (r, a, b) in enumerate(batch):
            T[i] = fold_all[r] == a
            if b >= 0:
                T[i] |= fold_all[r] == b
        Pred = _predict_fast(fp, prob, (~T).astype(np.uint8), need_proba)
        L = _losses(prob, Pred, T)
        del Pred
        if progress is not None:
            progress(len(batch))
        for i, (r, a, b) in enumerate(batch):
            la = L[i, rows_of(r, a)]
            if b < 0:  # the single-fold fit without a, tested on a
                out_sum[r, a] = la.sum()
                nk[r, a] = la.size
                out_var[r, a] = float(np.var(la, ddof=1)) if la.size > 1 else 0.0
                continue
            lb = L[i, rows_of(r, b)]
            p = pair_of[a, b]
            s_a[r, p], s_b[r, p] = la.sum(), lb.sum()
            ho[0] += float(s_a[r, p] + s_b[r, p])
            ho[1] += float(np.dot(la, la) + np.dot(lb, lb))
            ho[2] += la.size + lb.size
        start = stop
    acc.add_sums(s_a, s_b, ho[0], ho[1], ho[2], out_sum, out_var, nk)


# --------------------------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------------------------

@renamed(n_splits="n_folds")
@single_blas
def estimate_errors(model, X, y, *, methods: Sequence[str] = ("resubstitution", "kfold",
                    "bootstrap", "loo_bootstrap", ".632+"), loss: str | Callable | None = None,
                    n_resamples: int = 200, n_folds: int = 10, n_repeats: int | None = None,
                    test_size: float = 0.368, rounding: str = "ceil", task: str | None = None,
                    interval: str | None = None, n_nested_repeats: int | None = None,
                    fast: bool | None = None, random_state=None,
                    n_jobs: int = 1, progress=None, engine=None) -> ErrorEstimates:
    """Prediction-error estimates of ``model`` by several resampling methods at once.

    Each method is computed as :func:`estimate_error` computes it (the formulas are there).
    The bootstrap methods (``bootstrap``, ``loo_bootstrap``, ``.632``, ``.632+``) share one set
    of resamples and fits; the full-data fit is shared by ``resubstitution``, ``.632`` and
    ``.632+``.

    Parameters
    ----------
    model : scikit-learn estimator
        Never fitted in place: the generic path fits ``clone(model)`` per resample (an unset
        ``random_state`` gets a per-resample integer drawn from ``random_state``).
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Outcome (class labels for a classifier).
    methods : sequence of str, default ('resubstitution', 'kfold', 'bootstrap', 'loo_bootstrap', '.632+')
        Method names of :data:`METHODS`, each at most once.
    loss : {'zero_one', 'absolute', 'squared', 'log'} or callable, optional
        Per-row loss; default ``'zero_one'`` for classifiers, ``'squared'`` for regressors.
        ``'log'`` uses ``predict_proba``. A callable takes ``(y_true, y_pred)`` arrays and
        returns one loss per row.
    n_resamples : int, default 200
        Number of bootstrap resamples (B in Etherington & Lieske's equations) for the bootstrap
        methods.
    n_folds : int, default 10
        K for ``'kfold'``.
    n_repeats : int, optional
        H for ``'holdout'`` (default 200, as Etherington & Lieske) or repeats of ``'kfold'``
        (default 1).
    test_size : float, default 0.368
        Hold-out test share p (Etherington & Lieske's 0.368 matches the bootstrap's out-of-bag
        share).
    rounding : {'ceil', 'floor'}, default 'ceil'
        How ``n p`` becomes a number of test rows (the rule of
        :class:`~replikit.experiment.HoldOut`); ``'floor'`` is the original code's
        ``int(n * p)``.
    task : {'classification', 'regression'}, optional
        Default from ``sklearn.base.is_classifier(model)``.
    interval : {'nested', 'wald', 't', 'exact', 'corrected_t', 'none'}, optional
        The kind of interval (default: the method's own): ``'nested'`` (K-fold; nested
        cross-validation, Bates, Hastie & Tibshirani (2024), Algorithm 1), ``'wald'`` (K-fold
        and leave-one-out; naive: ``estimate ± z sd(e_i) / sqrt(n)`` with ``e_i`` each row's
        loss averaged over the repeats), ``'t'`` / ``'exact'`` (one hold-out split: Student's
        t of its per-row losses / Clopper–Pearson of its error count, 0–1 loss),
        ``'corrected_t'`` (H > 1 hold-out splits: ``SE^2 = (1/H + m/(n - m)) s^2`` of the
        split errors, t on H - 1 df, Nadeau & Bengio (2003)) or ``'none'``. The bootstrap
        family and resubstitution have none (``interval_note`` says why).
    n_nested_repeats : int, optional
        Random partitions of nested cross-validation (default 50, the ``nestedcv`` package's);
        each costs ``K (K + 1) / 2`` fits, batched on the fast path.
    fast : bool or None, default None
        ``None`` uses the batched fast path when the model supports it; ``False`` forces the
        generic path; ``True`` requires the fast path.
    random_state : None, int or numpy.random.Generator
        Root of every draw; the same value gives bit-identical results, and the bootstrap
        methods drawn with the same random state share resamples.
    n_jobs : int, default 1
        Worker processes (joblib) for the generic path (the numbers do not depend on it).
    progress : callable, optional
        A progress bar's ``advance``: called once as ``progress(0, total=k)`` with the number
        ``k`` of fits (the full-data fit and every resample of every distinct scheme), then as
        ``progress(m)`` as ``m`` more are done — a chunk of resamples at a time on the generic
        path (a chunk read back from a store included), a scheme's resamples at once on the
        fast path (one batched fit). It does not change the result (every scheme's resamples
        come from their own stream, so drawing them first changes no draw).
    engine : Engine, optional
        Where the generic path's fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`: the calling process, joblib workers or a
        Dask cluster), instead of ``n_jobs``. The fits go in chunks of a fixed number of
        resamples (set by the rows, never by the workers); with a store, a chunk already held
        is read back bit for bit instead of refitted and each finished chunk is committed, so
        an analysis killed and started again refits only what it had not finished. The numbers
        do not depend on the engine. The batched fast path runs in the calling process.

    Returns
    -------
    ErrorEstimates
        ``result['kfold']`` is an :class:`ErrorEstimate`; ``result.to_frame()`` one row per
        method.

    See Also
    --------
    estimate_error : One method.
    audit : Several models' estimates and a verdict.
    replikit.experiment.run : Scores of any scheme, for model comparisons.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317
    .. [3] Efron, B. (1983). Estimating the Error Rate of a Prediction Rule: Improvement on
       Cross-Validation. Journal of the American Statistical Association, 78(382), 316–331.
       https://doi.org/10.1080/01621459.1983.10477973
    .. [4] Efron, B. & Tibshirani, R. (1997). Improvements on Cross-Validation: The .632+
       Bootstrap Method. Journal of the American Statistical Association, 92(438), 548–560.
       https://doi.org/10.1080/01621459.1997.10474007
    .. [5] Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it
       estimate and how well does it do it? Journal of the American Statistical Association,
       119(546), 1434–1445. https://doi.org/10.1080/01621459.2023.2197686
    .. [6] Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning, 52(3), 239–281. https://doi.org/10.1023/A:1024068626366

    Examples
    --------
    >>> from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X, y = rng.normal(size=(30, 10)), rng.integers(0, 2, 30)
    >>> res = estimate_errors(LinearDiscriminantAnalysis(), X, y, random_state=0)
    >>> res["resubstitution"].estimate < res["bootstrap"].estimate
    True
    """
    if isinstance(methods, str):
        methods = [methods]
    methods = list(methods)
    if not methods:
        raise ParameterError("`methods` must name at least one method.")
    if len(set(methods)) != len(methods):
        raise ParameterError(f"`methods` names a method twice: {methods}.")
    methods = [check_choice(m, "methods", METHODS) for m in methods]
    check_choice(rounding, "rounding", ("ceil", "floor"))  # also when no hold-out uses it
    engine = _engine_iv(engine, n_jobs)
    prob = _estimate_error_iv(model, X, y, loss, task)
    specs = {m: _scheme_iv(m, n_resamples, n_folds, n_repeats, test_size, rounding, prob.n)
             for m in methods}
    if interval is not None:
        interval = check_choice(interval, "interval", INTERVALS)
    nested_reps = (NESTED_REPEATS if n_nested_repeats is None
                   else check_int(n_nested_repeats, "n_nested_repeats", min_value=1))
    chosen = {m: _interval_choice(method, params, prob, interval)
              for m, (method, params) in specs.items()}
    root = root_seed_sequence(random_state)
    need_proba = prob.loss == "log"
    fp = _choose_fast(prob, fast)
    path = "fast" if fp is not None else "generic"

    drawn: dict[tuple, tuple] = {}  # resamples drawn ahead (generic path; fits counted)
    fitted: dict[tuple, np.ndarray] = {}  # the generic path's predictions of every fit set

    def predictions(family, params):
        key = (family, tuple(sorted(params.items())))
        W, T = drawn.pop(key) if key in drawn else _resamples(family, params, prob, root)
        if fp is not None:
            P = _predict_fast(fp, prob, W, need_proba)
            if progress is not None:
                progress(W.shape[0])
        else:
            P = fitted.pop(key)
        return _losses(prob, P, T), T, P

    cache: dict[tuple, tuple] = {}
    needs_full = any(m in ("resubstitution", ".632", ".632+") for m, _ in specs.values())
    if progress is not None or fp is None:
        sets = ([("resubstitution", {})] if needs_full else []) + [
            ("bootstrap" if method in _BOOTSTRAP_FAMILY else method, params)
            for method, params in specs.values() if method != "resubstitution"]
        for family, params in sets:
            key = (family, tuple(sorted(params.items())))
            if key not in drawn:
                drawn[key] = _resamples(family, params, prob, root)
    if progress is not None:
        nested_fits = sum(nested_reps * (p["n_folds"] * (p["n_folds"] + 1) // 2)
                          for m, (_, p) in specs.items() if chosen[m] == "nested")
        progress(0, total=sum(W.shape[0] for W, _ in drawn.values()) + nested_fits)
    if fp is None:  # every fit set of the generic path in one map of the engine
        keys = list(drawn)
        fitted = dict(zip(keys, _predict_generic(prob, [(k[0], *drawn[k]) for k in keys],
                                                 need_proba, root, engine, progress),
                          strict=True))
    apparent = gamma = math.nan
    if needs_full:
        L_full, _, P_full = predictions("resubstitution", {})
        apparent = float(np.mean(L_full))
        if ".632+" in specs:
            gamma = _no_information(prob, P_full[0], root)
    out = {}
    for m, (method, params) in specs.items():
        if method == "resubstitution":
            out[m] = ErrorEstimate(apparent, math.nan, np.array([apparent]), method,
                                   prob.loss_name, {}, prob.n, path,
                                   interval_note=chosen[m][1])
            continue
        family = "bootstrap" if method in _BOOTSTRAP_FAMILY else method
        key = (family, tuple(sorted(params.items())))
        if key not in cache:
            cache[key] = predictions(family, params)
        L, T, _ = cache[key]
        est, se, per, comps = _reduce(method, params, L, T, apparent, gamma)
        kind, note = chosen[m]
        parts = {}
        if kind == "nested":
            try:
                parts = _nested(prob, fp, params["n_folds"], nested_reps, root, engine,
                                progress)
                if not (math.isfinite(parts["center"]) and math.isfinite(parts["se"])):
                    raise DataError("its numbers are not finite")
            except (ReplikitError, ValueError, np.linalg.LinAlgError) as exc:
                # e.g. a pair of folds leaves a single class to train on
                kind = "wald"
                note = ("nested cross-validation failed (" + " ".join(str(exc).split())
                        + "); the naive Wald interval instead")
        if kind == "nested":
            pass
        elif kind != "none":
            parts = _interval_parts(kind, params, L, T, prob.n)
        if kind != "none" and kind != "exact":
            se = parts["se"]
        elif kind == "exact":
            se = math.sqrt(parts["center"] * (1 - parts["center"]) / parts["m"])
        out[m] = ErrorEstimate(float(est), float(se), per, method, prob.loss_name, params,
                               prob.n, path, comps, kind, parts, note)
    return ErrorEstimates(out)


@renamed(n_splits="n_folds")
def estimate_error(model, X, y, *, method: str = ".632+", loss: str | Callable | None = None,
                   n_resamples: int = 200, n_folds: int = 10, n_repeats: int | None = None,
                   test_size: float = 0.368, rounding: str = "ceil", task: str | None = None,
                   interval: str | None = None, n_nested_repeats: int | None = None,
                   fast: bool | None = None, random_state=None, n_jobs: int = 1,
                   engine=None) -> ErrorEstimate:
    r"""Estimate the prediction error of ``model`` on ``(X, y)`` by a resampling method.

    Implements the estimators of Etherington & Lieske (2019) [1]_, replicating Verbyla &
    Litvaitis (1989) [2]_, with the per-row error ``Err_i = L(y_i, f(x_i))`` (their eq. 2 is
    the absolute loss ``|y_i - y_hat_i|``, equal to the 0/1 loss for 0/1 labels):

    - ``'resubstitution'`` (eq. 3): ``Err_R = (1/n) sum_i L(y_i, f(d)(x_i))``, the apparent
      error of the rule fitted to all rows (optimistic);
    - ``'holdout'`` (eq. 4): ``Err_Hp = (1/H) sum_t (1/#t) sum_{i in t} L(y_i, f(d - t)(x_i))``
      over H random splits with ``#t = ceil(n p)`` test rows (``rounding='ceil'``, scikit-learn's
      rule) or ``floor(n p)`` (``rounding='floor'``, the original code's ``int(n * p)``); for
      classifiers a split whose training labels are all 0 is redrawn, as the original code did;
    - ``'kfold'`` (eq. 5): ``Err_K = (1/n) sum_i L(y_i, f(d - k_i)(x_i))``, averaged over
      ``n_repeats`` random partitions into ``n_folds`` folds; ``'loo'`` is K = n (jackknife);
    - ``'bootstrap'`` (eq. 6): ``Err_B = sum_b sum_{i notin b} L_bi / sum_b #(d - b)``,
      Etherington & Lieske's definition — all out-of-bag errors pooled; for classifiers a
      resample whose training labels are a single class is redrawn (their convention);
    - ``'loo_bootstrap'`` (eq. 7): ``Err(1) = (1/n) sum_i (1/#C_i) sum_{b in C_i} L_bi``,
      Efron's leave-one-out bootstrap (rows never out of bag are left out of the mean, as
      Efron & Tibshirani (1997) do); eqs. 6 and 7 agree as B grows;
    - ``'.632'`` (Efron (1983) [3]_): ``0.368 err + 0.632 Err(1)`` with ``err`` the apparent
      error (eq. 3);
    - ``'.632+'`` (Efron & Tibshirani (1997) [4]_, eqs. 27–32): no-information error
      ``gamma = (1/n^2) sum_i sum_j L(y_i, f(d)(x_j))`` from the full-data rule;
      ``Err(1)' = min(Err(1), gamma)``; relative overfitting rate
      ``R = (Err(1)' - err) / (gamma - err)`` when ``Err(1)' > err`` and ``gamma > err``, else 0,
      **clipped to [0, 1]**; ``w = 0.632 / (1 - 0.368 R)`` and
      ``Err.632+ = (1 - w) err + w Err(1)'``. Clipping keeps the estimate between the apparent
      error and gamma (hence in [0, 1] for the 0/1 loss); the unclipped per-resample form (e.g.
      mlxtend's ``bootstrap_point632_score``) can leave [0, 1].

    Parameters
    ----------
    model : scikit-learn estimator
        Never fitted in place: the generic path fits ``clone(model)`` per resample (an unset
        ``random_state`` gets a per-resample integer drawn from ``random_state``).
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Outcome (class labels for a classifier).
    method : str, default '.632+'
        One of :data:`METHODS`.
    loss : {'zero_one', 'absolute', 'squared', 'log'} or callable, optional
        Per-row loss; default ``'zero_one'`` for classifiers, ``'squared'`` for regressors.
        ``'log'`` uses ``predict_proba``. A callable takes ``(y_true, y_pred)`` arrays and
        returns one loss per row.
    n_resamples : int, default 200
        Number of bootstrap resamples (B in Etherington & Lieske's equations) for the bootstrap
        methods.
    n_folds : int, default 10
        K for ``'kfold'``.
    n_repeats : int, optional
        H for ``'holdout'`` (default 200, as Etherington & Lieske) or repeats of ``'kfold'``
        (default 1).
    test_size : float, default 0.368
        Hold-out test share p (Etherington & Lieske's 0.368 matches the bootstrap's out-of-bag
        share).
    rounding : {'ceil', 'floor'}, default 'ceil'
        How ``n p`` becomes a number of test rows (the rule of
        :class:`~replikit.experiment.HoldOut`); ``'floor'`` is the original code's
        ``int(n * p)``.
    task : {'classification', 'regression'}, optional
        Default from ``sklearn.base.is_classifier(model)``.
    interval : {'nested', 'wald', 't', 'exact', 'corrected_t', 'none'}, optional
        The kind of interval (default: the method's own): ``'nested'`` (K-fold; nested
        cross-validation, Bates, Hastie & Tibshirani (2024), Algorithm 1), ``'wald'`` (K-fold
        and leave-one-out; naive: ``estimate ± z sd(e_i) / sqrt(n)`` with ``e_i`` each row's
        loss averaged over the repeats), ``'t'`` / ``'exact'`` (one hold-out split: Student's
        t of its per-row losses / Clopper–Pearson of its error count, 0–1 loss),
        ``'corrected_t'`` (H > 1 hold-out splits: ``SE^2 = (1/H + m/(n - m)) s^2`` of the
        split errors, t on H - 1 df, Nadeau & Bengio (2003)) or ``'none'``. The bootstrap
        family and resubstitution have none (``interval_note`` says why).
    n_nested_repeats : int, optional
        Random partitions of nested cross-validation (default 50, the ``nestedcv`` package's);
        each costs ``K (K + 1) / 2`` fits, batched on the fast path.
    fast : bool or None, default None
        ``None`` uses the batched fast path when the model supports it; ``False`` forces the
        generic path; ``True`` requires the fast path.
    random_state : None, int or numpy.random.Generator
        Root of every draw; the same value gives bit-identical results, and the bootstrap
        methods drawn with the same random state share resamples.
    n_jobs : int, default 1
        Worker processes (joblib) for the generic path (the numbers do not depend on it).
    engine : Engine, optional
        Where the generic path's fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`: the calling process, joblib workers or a
        Dask cluster), instead of ``n_jobs``. The fits go in chunks of a fixed number of
        resamples (set by the rows, never by the workers); with a store, a chunk already held
        is read back bit for bit instead of refitted and each finished chunk is committed, so
        an analysis killed and started again refits only what it had not finished. The numbers
        do not depend on the engine. The batched fast path runs in the calling process.

    Returns
    -------
    ErrorEstimate
        The estimate, its SE where the method has one, each resample's error and, for .632
        and .632+, the components.

    See Also
    --------
    estimate_errors : Several methods at once, sharing resamples and fits.
    audit : Several models' estimates and a verdict.
    simulate_resampling : The estimators' bias and spread on data with no signal.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317
    .. [3] Efron, B. (1983). Estimating the Error Rate of a Prediction Rule: Improvement on
       Cross-Validation. Journal of the American Statistical Association, 78(382), 316–331.
       https://doi.org/10.1080/01621459.1983.10477973
    .. [4] Efron, B. & Tibshirani, R. (1997). Improvements on Cross-Validation: The .632+
       Bootstrap Method. Journal of the American Statistical Association, 92(438), 548–560.
       https://doi.org/10.1080/01621459.1997.10474007
    .. [5] Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it
       estimate and how well does it do it? Journal of the American Statistical Association,
       119(546), 1434–1445. https://doi.org/10.1080/01621459.2023.2197686
    .. [6] Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning, 52(3), 239–281. https://doi.org/10.1023/A:1024068626366

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(30, 10)), rng.integers(0, 2, 30)
    >>> est = estimate_error(LinearDiscriminantAnalysis(), X, y, method="bootstrap",
    ...                      random_state=1)
    >>> 0.2 < est.estimate < 0.8
    True
    """
    method = check_choice(method, "method", METHODS)
    res = estimate_errors(model, X, y, methods=[method], loss=loss, n_resamples=n_resamples,
                          n_folds=n_folds, n_repeats=n_repeats, test_size=test_size,
                          rounding=rounding, task=task, interval=interval,
                          n_nested_repeats=n_nested_repeats, fast=fast,
                          random_state=random_state, n_jobs=n_jobs, engine=engine)
    out = res[method]
    if interval is not None and interval != "none" and out.interval == "none":
        raise ParameterError(f"`interval`={interval!r} does not apply to method {method!r}; "
                             f"it allows {_ALLOWED.get(method, ('none',))}.")
    return out
