"""Survival models for the runner: lifelines regression fitters as scikit-learn estimators, and
the predicted survival probabilities of any fitted survival model.

* :class:`LifelinesModel` wraps a lifelines regression fitter (``CoxPHFitter``,
  ``WeibullAFTFitter``, ``LogNormalAFTFitter``, ``LogLogisticAFTFitter``, ...; Davidson-Pilon
  2019) so that it behaves as a scikit-survival estimator (Pölsterl 2020): ``fit(X, y)`` with
  ``y`` a structured survival target, ``predict(X)`` a risk score (larger: earlier event),
  ``predict_survival_function(X)``. ``clone``, ``get_params`` and ``set_params`` work, and the
  fitter given is never fitted itself.
* :class:`StepFunction` is a predicted survival curve that is constant between time points.
* :func:`survival_probabilities` evaluates S(t | x) of a fitted model — a scikit-survival
  estimator, a :class:`LifelinesModel` or a Pipeline ending in one — at chosen times, one
  column per time: what the Brier scores of :mod:`replikit.experiment.survival` take.

lifelines is not imported here: a fitter is recognised by its classes' module, so replikit
works without lifelines installed until a user passes a lifelines fitter.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_1d_array, check_choice
from ..errors import DataError, ModelFitError, ParameterError, ParameterTypeError
from .survival import _event_iv, _is_structured, _structured_iv, _time_iv

__all__ = ["LifelinesModel", "StepFunction", "survival_probabilities"]

#: The kinds of prediction :meth:`LifelinesModel.predict` returns.
_PREDICTIONS = ("risk", "median", "expectation")


# -- step functions --------------------------------------------------------------------------

def _step_values(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``y`` (one row per curve, a column per ``x``) of right-continuous step curves at ``t``:
    1 before ``x[0]``, ``y[..., i]`` on ``[x[i], x[i+1])``, the last value from ``x[-1]`` on."""
    idx = np.searchsorted(x, t, side="right") - 1
    out = np.take(y, np.maximum(idx, 0), axis=-1)
    return np.where(idx >= 0, out, 1.0)


class StepFunction:
    r"""A predicted survival curve that is constant between time points.

    .. math::

        S(t) = 1 \ (t < x_1), \qquad S(t) = y_i \ (x_i \le t < x_{i+1}), \qquad
        S(t) = y_K \ (t \ge x_K)

    The semi-parametric survival curves of the Cox model with Breslow's (1974) baseline, of
    random survival forests and of gradient-boosted Cox models are of this kind. It mirrors
    ``sksurv.functions.StepFunction`` (``x``, ``y``, callable at times) with two conventions of
    its own: before the first time point it is 1 (scikit-survival returns ``y[0]``, which is
    below 1 when an event happened at ``x[0]``), and after the last one it keeps the last value
    (scikit-survival refuses times beyond ``x[-1]``).

    Parameters
    ----------
    x : array-like of shape (n_points,)
        Increasing time points.
    y : array-like of shape (n_points,)
        The survival probability from each time point to the next.

    See Also
    --------
    LifelinesModel.predict_survival_function : Returns these.
    survival_probabilities : The same values for many subjects and times at once.

    Examples
    --------
    >>> f = StepFunction([1.0, 2.0, 4.0], [0.9, 0.7, 0.4])
    >>> f([0.5, 1.0, 3.0, 10.0]).tolist()
    [1.0, 0.9, 0.7, 0.4]
    """

    def __init__(self, x, y):
        self.x = np.asarray(x, dtype=float)
        self.y = np.asarray(y, dtype=float)
        if self.x.ndim != 1 or self.x.shape != self.y.shape or self.x.size == 0:
            raise DataError(f"`x` and `y` must be one-dimensional of one length; got shapes "
                            f"{self.x.shape} and {self.y.shape}.")
        if np.any(np.diff(self.x) <= 0):
            raise DataError("`x` must be strictly increasing.")

    def __call__(self, t):
        """The survival probability at ``t`` (a number, or an array of times)."""
        arr = np.asarray(t, dtype=float)
        if not np.all(np.isfinite(arr)):
            raise DataError("`t` must be finite.")
        out = _step_values(self.x, self.y, arr)
        return float(out) if out.ndim == 0 else out

    def __repr__(self) -> str:
        return f"StepFunction(x={self.x!r}, y={self.y!r})"


class _ModelCurve:
    """The fitted survival curve of one subject of a parametric lifelines model: ``x``, ``y`` at
    the training times (as :class:`StepFunction`), but callable at any time exactly."""

    def __init__(self, model: LifelinesModel, row: np.ndarray, x: np.ndarray, y: np.ndarray):
        self.model, self.row, self.x, self.y = model, row, x, y

    def __call__(self, t):
        arr = np.asarray(t, dtype=float)
        if not np.all(np.isfinite(arr)):
            raise DataError("`t` must be finite.")
        out = self.model._survival_at(self.row[None, :], np.atleast_1d(arr).ravel())[0]
        return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)

    def __repr__(self) -> str:
        return f"<fitted survival curve of {type(self.model.fitter_).__name__}>"


# -- input validation ------------------------------------------------------------------------

def _features_iv(X, name: str = "X") -> tuple[np.ndarray, np.ndarray | None]:
    """``X`` as a finite 2-D float array, and its column names when it is a DataFrame whose
    column names are all strings (scikit-learn's rule for ``feature_names_in_``)."""
    import pandas as pd

    names = None
    if isinstance(X, pd.DataFrame):
        cols = list(X.columns)
        if cols and all(isinstance(c, str) for c in cols):
            names = np.asarray(cols, dtype=object)
        try:
            arr = X.to_numpy(dtype=float)
        except (TypeError, ValueError):
            bad = [str(c) for c in cols if not (pd.api.types.is_numeric_dtype(X[c])
                                                or pd.api.types.is_bool_dtype(X[c]))]
            raise DataError(f"`{name}` must hold numeric features; column(s) "
                            f"{', '.join(bad[:5]) or '?'} are not numeric (encode them "
                            "first).") from None
    else:
        try:
            arr = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise DataError(f"`{name}` must hold numeric features; could not convert it "
                            f"({exc}).") from None
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise DataError(f"`{name}` must be two-dimensional (rows x features) with at least one "
                        f"row and one feature; got shape {arr.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"`{name}` has {int(bad.sum())} missing or infinite value(s), the first "
                        f"in row {i}, column {j}; lifelines cannot use them (impute or drop "
                        "them first).")
    return arr, names


def _survival_target_iv(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The times and event indicators of ``y``: scikit-survival's structured array or a
    ``(time, event)`` pair, one subject per row of ``X``."""
    if _is_structured(y):
        time, event = _structured_iv(y, "y")
    elif isinstance(y, tuple) and len(y) == 2:
        time, event = y
    else:
        shape = getattr(y, "shape", None)
        raise DataError(
            "`y` must be a survival target: scikit-survival's structured array (e.g. "
            "sksurv.util.Surv.from_arrays(event, time)) or a (time, event) pair; got "
            f"{type(y).__name__}{f' of shape {shape}' if shape is not None else ''}.")
    time = _time_iv(time, "y")
    event = _event_iv(event, "y", time.size)
    if time.size != n:
        raise DataError(f"`y` has {time.size} subjects but `X` has {n} rows.")
    return time, event


def _class_name(obj) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _fitter_iv(fitter) -> None:
    """A lifelines regression fitter instance, with ``fit(df, duration_col, event_col)``."""
    if isinstance(fitter, type):
        raise ParameterTypeError(f"`fitter` must be a lifelines fitter instance; got the class "
                                 f"{fitter.__name__} itself (write {fitter.__name__}()).")
    if not any(c.__module__.split(".")[0] == "lifelines" for c in type(fitter).__mro__):
        hint = ""
        if callable(getattr(fitter, "fit", None)) and callable(getattr(fitter, "predict", None)):
            hint = (" It looks like a scikit-learn estimator: scikit-survival's estimators take "
                    "the survival target themselves and need no wrapper.")
        raise ParameterTypeError(
            "`fitter` must be a lifelines regression fitter (e.g. lifelines.CoxPHFitter(), "
            f"lifelines.WeibullAFTFitter()); got {_class_name(fitter)}, which is not a lifelines "
            f"fitter.{hint}")
    fit = getattr(fitter, "fit", None)
    params = inspect.signature(fit).parameters if callable(fit) else {}
    if "duration_col" not in params or "event_col" not in params:
        raise ParameterTypeError(
            f"`fitter`: {type(fitter).__name__} has no fit(df, duration_col, event_col) method; "
            "LifelinesModel needs a lifelines regression fitter (CoxPHFitter, WeibullAFTFitter, "
            "LogNormalAFTFitter, LogLogisticAFTFitter, ...), not a univariate fitter such as "
            "KaplanMeierFitter or one of time-varying covariates.")


def _fit_params_iv(fit_params, fitter) -> dict:
    if fit_params is None:
        return {}
    if not isinstance(fit_params, Mapping):
        raise ParameterTypeError(f"`fit_params` must be a dict of keyword arguments of "
                                 f"{type(fitter).__name__}.fit, or None; got "
                                 f"{type(fit_params).__name__}.")
    taken = {"df", "duration_col", "event_col"} & set(fit_params)
    if taken:
        raise ParameterError(f"`fit_params` must not set {', '.join(sorted(taken))}: "
                             "LifelinesModel builds the data frame and its time and event "
                             "columns from `X` and `y`.")
    params = inspect.signature(fitter.fit).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(fit_params) - set(params))
        if unknown:
            raise ParameterError(
                f"`fit_params`: {type(fitter).__name__}.fit has no argument(s) "
                f"{', '.join(unknown)}; it takes "
                f"{', '.join(p for p in params if p not in ('df', 'self'))}.")
    return dict(fit_params)


def _has_base(obj, *names: str) -> bool:
    """Whether a class of ``obj``'s hierarchy has one of ``names`` (lifelines is not imported;
    it spells its AFT base class ``ParametericAFTRegressionFitter``)."""
    return any(c.__name__ in names for c in type(obj).__mro__)


def _free_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base`` with underscores around it, whichever is not in ``taken``."""
    name = base
    while name in taken:
        name = f"_{name}_"
    return name


def _per_subject(values, index) -> np.ndarray:
    """One float per subject from a lifelines prediction (a Series, a one-column frame or a
    number when there is one subject), in the order of ``index``."""
    import pandas as pd

    if isinstance(values, pd.DataFrame) and values.shape[1] == 1:
        values = values.iloc[:, 0]
    if isinstance(values, pd.Series) and len(values) == len(index) and \
            set(values.index) == set(index):
        values = values.reindex(index)
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size != len(index):
        raise ModelFitError(f"the lifelines fitter returned {arr.size} predictions for "
                            f"{len(index)} rows.")
    return arr


# -- the wrapper -----------------------------------------------------------------------------

class LifelinesModel(BaseEstimator):
    r"""A lifelines regression fitter as a scikit-learn survival estimator.

    ``fit(X, y)`` builds the data frame lifelines wants — the columns of ``X`` (named as in a
    DataFrame ``X``, else ``x0 ... x{p-1}``) and the time and event of ``y`` under names no
    feature has — and fits a deep copy of ``fitter`` (the object given is never fitted, so
    ``clone`` and repeated fits are safe). The fitted model predicts as scikit-survival's
    estimators do (Pölsterl 2020):

    - ``predict(X)`` a risk score, larger for an earlier event (``prediction``):

      ``'risk'`` (default): for a proportional-hazards fitter, the log partial hazard
      :math:`(x - \bar x_{train})'\hat\beta`, where
      :math:`h(t \mid x) = h_0(t)\, e^{x'\beta}` (Cox 1972; R's ``predict(fit, type = "lp")``);
      for a proportional-hazards fitter without a partial hazard (a spline or piecewise
      baseline), :math:`\log \hat H(t_{ref} \mid x)`, the linear predictor plus the constant
      :math:`\log H_0(t_{ref})`, :math:`t_{ref}` the median training event time; for an
      accelerated-failure-time fitter, minus the log of the predicted median survival time,
      :math:`-\log \hat t_{0.5}(x)`, which is minus the linear predictor of :math:`\log T`
      plus a constant (Kalbfleisch & Prentice 2002, section 2.3); for any other fitter (Aalen's
      additive model, ...), minus the predicted mean survival time.
      ``'median'``: minus the predicted median survival time (infinite, and refused, where a
      curve stays above 0.5). ``'expectation'``: minus the predicted mean survival time
      (lifelines' ``predict_expectation``; for curves known only over the training follow-up,
      the mean restricted to it). The concordance indices and AUC(t) depend only on the order
      of the risks, so any of these serves them.
    - ``predict_survival_function(X)`` the survival curves :math:`\hat S(t \mid x)`, with
      :math:`\hat S(t \mid x) = \exp(-\hat H_0(t)\, e^{(x - \bar x)'\hat\beta})` and Breslow's
      (1974) :math:`\hat H_0` for the Cox model.

    Parameters
    ----------
    fitter : lifelines regression fitter
        An unfitted (or fitted: it is copied) lifelines fitter with
        ``fit(df, duration_col, event_col)``: ``CoxPHFitter(penalizer=0.1)``,
        ``WeibullAFTFitter()``, ``LogNormalAFTFitter()``, ``LogLogisticAFTFitter()``,
        ``PiecewiseExponentialRegressionFitter(breakpoints)``, ``AalenAdditiveFitter()``, ...
    prediction : {'risk', 'median', 'expectation'}, default 'risk'
        What :meth:`predict` returns (see above); every kind is larger for an earlier event.
        (Not ``predict``: a parameter is an attribute of its own name, which would hide the
        method.)
    fit_params : dict, optional
        Keyword arguments of the fitter's ``fit`` (``{'robust': True}``,
        ``{'strata': ['x2']}``, ``{'fit_options': {'precision': 1e-9}}``), named as scikit-learn
        names keyword arguments passed to ``fit``; lifelines' own ``fit_options`` (the
        optimiser's settings) is one of them.

    Attributes
    ----------
    fitter_ : lifelines fitter
        The fitted copy of ``fitter``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        The column names of ``X`` in ``fit``, when it was a DataFrame with string column names.
    unique_times_ : ndarray
        The distinct training times (of events and censorings), increasing — the time points of
        ``predict_survival_function(X, return_array=True)``, as in scikit-survival.

    See Also
    --------
    survival_probabilities : S(t | x) of a fitted model at chosen times.
    replikit.experiment.concordance_index : The C-index of the risk scores.

    Notes
    -----
    Proportional-hazards fitters are those with lifelines' proportional-hazards mixin
    (``CoxPHFitter`` with any baseline); the Breslow baseline gives step curves
    (:class:`StepFunction`), constant between training times: at a time between two training
    times replikit keeps the value of the earlier one, where lifelines' own
    ``predict_survival_function(X, times)`` interpolates the cumulative hazard linearly. The
    curves of parametric fitters are evaluated exactly at any time, also beyond the training
    follow-up (an extrapolation of the model).

    References
    ----------
    Breslow, N. E. (1974). Covariance analysis of censored survival data. Biometrics, 30(1),
    89–99.

    Cox, D. R. (1972). Regression models and life-tables. Journal of the Royal Statistical
    Society, Series B, 34(2), 187–220.

    Davidson-Pilon, C. (2019). lifelines: survival analysis in Python. Journal of Open Source
    Software, 4(40), 1317.

    Kalbfleisch, J. D. & Prentice, R. L. (2002). The Statistical Analysis of Failure Time Data
    (2nd ed.). Wiley.

    Pölsterl, S. (2020). scikit-survival: a library for time-to-event analysis built on top of
    scikit-learn. Journal of Machine Learning Research, 21(212), 1–6.

    Examples
    --------
    >>> import numpy as np
    >>> from lifelines import CoxPHFitter
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> time = rng.exponential(1 / np.exp(X[:, 0]))          # hazard exp(x0); x1 is noise
    >>> censor = rng.exponential(2.0, size=300)
    >>> y = (np.minimum(time, censor), time <= censor)
    >>> model = LifelinesModel(CoxPHFitter()).fit(X, y)
    >>> model.fitter_.params_.round(2).tolist()
    [1.1, -0.05]
    >>> risk = model.predict(X[:3])                           # the log partial hazard
    >>> model.predict_survival_function(X[:3], return_array=True).shape
    (3, 300)
    """

    def __init__(self, fitter, *, prediction: str = "risk", fit_params: dict | None = None):
        self.fitter = fitter
        self.prediction = prediction
        self.fit_params = fit_params

    def fit(self, X, y):
        """Fit a copy of the fitter to features ``X`` and survival target ``y``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric features without missing values.
        y : structured array of shape (n_samples,) or tuple (time, event)
            The survival target: scikit-survival's structured array (one boolean field, the
            event, and one numeric field, the time) or a pair of arrays.

        Returns
        -------
        LifelinesModel
            ``self``, fitted.
        """
        import pandas as pd

        _fitter_iv(self.fitter)
        kind = check_choice(self.prediction, "prediction", _PREDICTIONS)
        fit_params = _fit_params_iv(self.fit_params, self.fitter)
        arr, names = _features_iv(X)
        time, event = _survival_target_iv(y, arr.shape[0])
        columns = ([str(c) for c in names] if names is not None
                   else [f"x{j}" for j in range(arr.shape[1])])
        if len(set(columns)) != len(columns):
            raise DataError("`X` has repeated column names; lifelines needs distinct ones.")
        time_col = _free_name("time", set(columns))
        event_col = _free_name("event", set(columns) | {time_col})
        df = pd.DataFrame(arr, columns=columns)
        df[time_col] = time
        df[event_col] = event.astype(float)
        fitter = copy.deepcopy(self.fitter)
        try:
            fitter.fit(df, duration_col=time_col, event_col=event_col, **fit_params)
        except (ValueError, ArithmeticError) as exc:  # lifelines' ConvergenceError, LinAlgError
            raise ModelFitError(f"`fitter`: {type(fitter).__name__}.fit failed: {exc}",
                                model=type(fitter).__name__) from exc
        if not callable(getattr(fitter, "predict_survival_function", None)):
            raise ParameterTypeError(f"`fitter`: {type(fitter).__name__} has no "
                                     "predict_survival_function method; LifelinesModel needs a "
                                     "regression fitter.")
        self.fitter_ = fitter
        self.n_features_in_ = arr.shape[1]
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.unique_times_ = np.unique(time)
        self._columns = columns
        self._steps = self._is_step(fitter)
        self._t_ref = float(np.median(time[event]))
        self._kind = kind
        return self

    # -- helpers --

    @staticmethod
    def _is_step(fitter) -> bool:
        """Whether the fitted survival curves are step functions of the training times: the
        Cox model's Breslow baseline, Aalen's additive model."""
        return (getattr(fitter, "baseline_estimation_method", None) == "breslow"
                or hasattr(fitter, "cumulative_hazards_"))

    def _frame(self, X):
        """``X`` validated against the fit, as the data frame the fitter predicts from."""
        import pandas as pd
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "fitter_")
        arr, names = _features_iv(X)
        if arr.shape[1] != self.n_features_in_:
            raise DataError(f"`X` has {arr.shape[1]} features, but the model was fitted with "
                            f"{self.n_features_in_}.")
        fitted_names = getattr(self, "feature_names_in_", None)
        if names is not None and fitted_names is not None:
            if set(names) != set(fitted_names):
                raise DataError(f"`X` has columns {list(names)}, but the model was fitted with "
                                f"{list(fitted_names)}.")
            order = [list(names).index(c) for c in fitted_names]
            arr = arr[:, order]
        return pd.DataFrame(arr, columns=self._columns)

    def _lifelines_survival(self, df, times: np.ndarray) -> np.ndarray:
        """lifelines' S(t | x) at increasing distinct ``times``: (n, len(times))."""
        sf = self.fitter_.predict_survival_function(df, times=times)
        if sf.shape[0] != times.size:  # a fitter that ignores `times` (Aalen's)
            sf = sf.reindex(index=times)
        sf = sf.reindex(columns=df.index)
        out = np.asarray(sf, dtype=float).T
        if not np.all(np.isfinite(out)):
            raise ModelFitError(f"{type(self.fitter_).__name__} predicted a survival "
                                "probability that is not finite.",
                                model=type(self.fitter_).__name__)
        return out

    def _survival_at(self, X, times: np.ndarray) -> np.ndarray:
        """S(t | x) of each row of ``X`` at each of ``times`` (any order): (n, len(times))."""
        df = self._frame(X)
        times = np.asarray(times, dtype=float)
        if self._steps:  # the curve at t is its value at the last training time <= t
            grid = self.unique_times_
            idx = np.searchsorted(grid, times, side="right") - 1
            out = np.ones((len(df), times.size))
            inside = idx >= 0
            if inside.any():
                used, pos = np.unique(idx[inside], return_inverse=True)
                out[:, inside] = self._lifelines_survival(df, grid[used])[:, pos]
            return out
        uniq, inv = np.unique(times, return_inverse=True)
        return self._lifelines_survival(df, uniq)[:, inv]

    # -- the estimator's methods --

    def predict(self, X):
        """A risk score per row of ``X``: larger for an earlier event.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features, as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples,)
            The score chosen by ``prediction`` (see the class docstring).
        """
        df = self._frame(X)
        f, kind = self.fitter_, self._kind
        if kind == "risk":
            if callable(getattr(f, "predict_log_partial_hazard", None)):
                risk = _per_subject(f.predict_log_partial_hazard(df), df.index)
            elif _has_base(f, "ParametericAFTRegressionFitter", "ParametricAFTRegressionFitter"):
                risk = -np.log(self._median(df))  # (the Weibull AFT model is also PH)
            elif _has_base(f, "ProportionalHazardMixin"):
                cum = f.predict_cumulative_hazard(df, times=[self._t_ref])
                risk = np.log(_per_subject(cum.T if hasattr(cum, "T") else cum, df.index))
            else:
                risk = -_per_subject(f.predict_expectation(df), df.index)
        elif kind == "median":
            risk = -self._median(df)
        else:
            risk = -_per_subject(f.predict_expectation(df), df.index)
        if not np.all(np.isfinite(risk)):
            raise ModelFitError(f"{type(f).__name__} predicted a risk that is not finite for "
                                f"{int((~np.isfinite(risk)).sum())} row(s) of `X`.",
                                model=type(f).__name__)
        return risk

    def _median(self, df) -> np.ndarray:
        med = _per_subject(self.fitter_.predict_median(df), df.index)
        bad = ~np.isfinite(med)
        if bad.any():
            raise DataError(
                f"`prediction`={self._kind!r}: the predicted survival of {int(bad.sum())} row(s) "
                "of `X` stays above 0.5 over the fitted follow-up, so their median survival "
                "time is infinite; use prediction='risk' or 'expectation'.")
        return med

    def predict_survival_function(self, X, return_array: bool = False):
        """The predicted survival curve of each row of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features, as in :meth:`fit`.
        return_array : bool, default False
            Return the curves' values at :attr:`unique_times_` instead of the curves.

        Returns
        -------
        ndarray
            With ``return_array``, shape (n_samples, len(unique_times_)): S(t | x) at each
            training time. Otherwise an object array of shape (n_samples,) of curves with
            ``x`` (the training times), ``y`` (S there) and a call at any times:
            :class:`StepFunction` for the Breslow Cox model and Aalen's model, an exact fitted
            curve for parametric fitters.
        """
        surv = self._survival_at(X, self.unique_times_)
        if return_array:
            return surv
        rows = self._frame(X).to_numpy()
        out = np.empty(surv.shape[0], dtype=object)
        for i in range(surv.shape[0]):
            out[i] = (StepFunction(self.unique_times_, surv[i]) if self._steps
                      else _ModelCurve(self, rows[i], self.unique_times_, surv[i]))
        return out

    def score(self, X, y):
        """Harrell's concordance index of :meth:`predict` on ``X`` and ``y``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features.
        y : structured array or tuple (time, event)
            The survival target, as in :meth:`fit`.

        Returns
        -------
        float
            Harrell's C (Harrell et al. 1982), as scikit-survival's estimators score.
        """
        from .survival import concordance_index

        time, event = _survival_target_iv(y, len(X))
        return concordance_index(time, event, self.predict(X)).estimate


# -- survival probabilities of any fitted model ----------------------------------------------

def _no_survival(est, why: str) -> ParameterError:
    return ParameterError(
        f"`estimator`: {type(est).__name__} {why}, so it gives no survival probabilities; the "
        "integrated Brier score needs them (use a model with predict_survival_function, e.g. "
        "CoxnetSurvivalAnalysis(fit_baseline_model=True), or a risk-based metric such as the "
        "C-index).")


def _curves_at(curves, times: np.ndarray, est) -> np.ndarray:
    """The curves of ``predict_survival_function(X)`` at ``times``: (n, len(times))."""
    curves = np.asarray(curves, dtype=object).reshape(-1)
    out = np.empty((curves.size, times.size))
    shared_x, rows, ys = None, [], []
    for i, f in enumerate(curves):
        if isinstance(f, _ModelCurve):  # a parametric lifelines curve: exact
            out[i] = f(times)
            continue
        x, y = getattr(f, "x", None), getattr(f, "y", None)
        if x is None or y is None:
            raise ParameterError(f"`estimator`: {type(est).__name__}.predict_survival_function "
                                 f"returned {type(f).__name__} objects, not step functions "
                                 "with `x` and `y`.")
        y = getattr(f, "a", 1.0) * np.asarray(y, dtype=float) + getattr(f, "b", 0.0)
        x = np.asarray(x, dtype=float)
        if shared_x is None:
            shared_x = x
        if x is shared_x or np.array_equal(x, shared_x):
            rows.append(i)
            ys.append(y)
        else:
            out[i] = _step_values(x, y, times)
    if rows:  # the usual case: every curve on the training times, evaluated at once
        out[rows] = _step_values(shared_x, np.vstack(ys), times)
    return out


def survival_probabilities(estimator, X, times) -> np.ndarray:
    r"""The predicted probability of being event-free at each of ``times``, for each row of ``X``.

    .. math::

        P_{ik} = \hat S(t_k \mid x_i)

    from a fitted survival model: a scikit-survival estimator with ``predict_survival_function``
    (``CoxPHSurvivalAnalysis``, ``CoxnetSurvivalAnalysis(fit_baseline_model=True)``,
    ``RandomSurvivalForest``, ``GradientBoostingSurvivalAnalysis``,
    ``ComponentwiseGradientBoostingSurvivalAnalysis``, ...), a :class:`LifelinesModel`, or a
    scikit-learn Pipeline ending in one. These are the predictions the Brier score and the
    integrated Brier score (Graf et al. 1999, equations 6–8;
    :func:`replikit.experiment.integrated_brier_score`) judge.

    Step curves (those of scikit-survival's estimators, of the Breslow Cox model and of Aalen's
    model in lifelines) are 1 before their first time point, take at :math:`t` the value of
    the last time point :math:`\le t`, and keep their last value after the last training time
    (:class:`StepFunction`); scikit-survival's own step functions agree with them on the
    training follow-up, refuse later times and return their first value before it. A
    parametric lifelines model is evaluated exactly at every time.

    Parameters
    ----------
    estimator : fitted estimator
        A fitted survival model (see above).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The subjects to predict.
    times : array-like of shape (n_times,)
        Non-negative finite times, in any order; one column each.

    Returns
    -------
    ndarray of shape (n_samples, n_times)
        The predicted survival probabilities.

    Raises
    ------
    ParameterError
        The model has no survival function (``FastSurvivalSVM``, ``CoxnetSurvivalAnalysis``
        fitted without ``fit_baseline_model=True``, a regressor) or is not fitted.

    See Also
    --------
    LifelinesModel : lifelines' regression models as estimators.
    replikit.experiment.integrated_brier_score : The score of these probabilities.

    References
    ----------
    Graf, E., Schmoor, C., Sauerbrei, W. & Schumacher, M. (1999). Assessment and comparison of
    prognostic classification schemes for survival data. Statistics in Medicine, 18(17–18),
    2529–2545.

    Examples
    --------
    >>> import numpy as np
    >>> from sksurv.linear_model import CoxPHSurvivalAnalysis
    >>> from sksurv.util import Surv
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> time = rng.exponential(1 / np.exp(X[:, 0]))
    >>> y = Surv.from_arrays(event=np.ones(200, bool), time=time)
    >>> model = CoxPHSurvivalAnalysis().fit(X, y)
    >>> survival_probabilities(model, X[:2], [0.0, 0.5, 100.0]).round(3)
    array([[1.   , 0.595, 0.   ],
           [1.   , 0.418, 0.   ]])
    """
    from sklearn.exceptions import NotFittedError
    from sklearn.pipeline import Pipeline

    times = check_1d_array(times, "times")
    if np.any(times < 0):
        raise ParameterError(f"`times` must be >= 0; got {times.min():g}.")
    est = estimator
    try:
        while isinstance(est, Pipeline):
            if len(est.steps) > 1:
                X = est[:-1].transform(X)
            est = est.steps[-1][1]
        if isinstance(est, LifelinesModel):
            return est._survival_at(X, times)
        if isinstance(est, type):
            raise ParameterTypeError(f"`estimator` must be a fitted estimator; got the class "
                                     f"{est.__name__}.")
        fn = getattr(est, "predict_survival_function", None)
        if not callable(fn):
            raise _no_survival(est, "has no predict_survival_function")
        if getattr(est, "fit_baseline_model", True) is False:
            raise _no_survival(est, "was made without fit_baseline_model=True")
        curves = fn(X)
    except NotFittedError:
        raise ParameterError(f"`estimator`: {type(est).__name__} is not fitted; fit it "
                             "first.") from None
    return _curves_at(curves, times, est)
