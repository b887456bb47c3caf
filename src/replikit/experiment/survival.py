"""Performance metrics of survival (time-to-event) predictions on one test set, with censoring.

A survival outcome is a pair: the follow-up ``time`` and ``event`` (True when the event was
observed at that time, False when the subject was censored then). Every function takes a target
as two arrays (``time, event``) or as scikit-survival's structured array (one boolean field, the
event, and one float field, the time, under any names) in place of the pair — so
``concordance_index(y, risk)`` works as well as ``concordance_index(time, event, risk)``.

* :func:`concordance_index` — Harrell's C (Harrell et al. 1982; 1996): the share of comparable
  pairs whose predicted risks are ordered as their times; depends on the censoring pattern.
  Both C's come with the infinitesimal-jackknife standard error of R's
  ``survival::concordance`` (Therneau & Atkinson 2023) and a logit-scale interval.
* :func:`concordance_index_ipcw` — Uno et al.'s (2011) C, weighted by the inverse probability
  of censoring (Kaplan–Meier of the censoring times, from the training data), with truncation
  at ``tau``; free of the censoring distribution.
* :func:`cumulative_dynamic_auc` — the time-dependent AUC of cumulative cases and dynamic
  controls with censoring weights (Uno et al. 2007; Hung & Chiang 2010) and its mean over
  time (Lambert & Chevret 2016).
* :func:`brier_score` and :func:`integrated_brier_score` — the Brier score of predicted
  survival probabilities with censoring weights (Graf et al. 1999), at chosen times and
  integrated over them.

Each gives scikit-survival's numbers (``sksurv.metrics``, same names; see docs/survival.md for
the measured agreement) in O(n log² n) time (the concordance counts) or O(n log n) per time
point. :data:`SURVIVAL_METRICS` holds float-valued versions by name, with
:data:`SURVIVAL_HIGHER_IS_BETTER`; the runner computes them by name (``metrics=["c_index"]``,
:mod:`replikit.experiment.metrics`). :func:`survival_target` makes the target the runner and
scikit-survival's estimators take.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_confidence_level
from ..data.tables import SURVIVAL_DTYPE as _SURVIVAL_DTYPE
from ..data.tables import survival_array
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval, Result

__all__ = ["concordance_index", "concordance_index_ipcw", "cumulative_dynamic_auc",
           "brier_score", "integrated_brier_score", "ConcordanceResult",
           "CumulativeDynamicAUCResult", "BrierScoreResult", "SURVIVAL_METRICS",
           "SURVIVAL_HIGHER_IS_BETTER", "SURVIVAL_NEEDS_TIMES", "SURVIVAL_NEEDS_PROBA",
           "survival_higher_is_better", "survival_target", "is_survival_target",
           "target_parts", "evaluation_times", "SURVIVAL_DTYPE"]


# -- results ---------------------------------------------------------------------------------

#: The intervals of a concordance index: on the logit scale (default) or on its own scale.
_INTERVALS = ("logit", "wald")


@dataclass(frozen=True)
class ConcordanceResult(Result):
    """A concordance index, its standard error and interval, and the pair counts behind it.

    Attributes
    ----------
    estimate : float
        The concordance index, in [0, 1]: 1 when every comparable pair is ordered as its times,
        0.5 for a risk unrelated to the outcome.
    concordant : int
        Comparable pairs whose earlier-event subject has the higher risk.
    discordant : int
        Comparable pairs whose earlier-event subject has the lower risk.
    tied_risk : int
        Comparable pairs with risks within ``tied_tol`` (each counts 1/2).
    tied_time : int
        Comparable pairs of an event and a censoring at the same time (the censored subject is
        taken to outlive the event).
    n_comparable : int
        All comparable pairs: ``concordant + discordant + tied_risk``.
    method : str
        ``'harrell'`` or ``'uno'`` (censoring weights).
    tau : float or None
        The truncation time of Uno's C (None: none).
    se : float
        The infinitesimal-jackknife standard error of ``estimate`` (R's
        ``survival::concordance``; Therneau & Atkinson 2020). For Uno's C the censoring
        weights are held fixed.
    ci_low, ci_high : float
        The interval at ``confidence_level`` (``interval``).
    confidence_level : float
        The level of ``ci_low``, ``ci_high``.
    interval : str
        ``'logit'``: ``expit(logit(C) ± q SE / (C (1 - C)))``, inside [0, 1]; ``'wald'``:
        ``C ± q SE`` clipped to [0, 1] (``q`` the normal quantile).

    See Also
    --------
    concordance_index, concordance_index_ipcw : Build it.

    Examples
    --------
    >>> res = concordance_index([1.0, 2.0, 3.0, 4.0], [1, 1, 0, 1], [0.9, 0.5, 0.6, 0.1])
    >>> res.estimate, res.n_comparable
    (0.8, 5)
    """

    estimate: float
    concordant: int
    discordant: int
    tied_risk: int
    tied_time: int
    n_comparable: int
    method: str = "harrell"
    tau: float | None = None
    se: float = np.nan
    ci_low: float = np.nan
    ci_high: float = np.nan
    confidence_level: float = 0.95
    interval: str = "logit"

    @property
    def title(self) -> str:
        """The heading of the result."""
        return ("Harrell's concordance index" if self.method == "harrell"
                else "Uno's concordance index (censoring weights)")

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the concordance index at ``confidence_level``.

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval; default the result's ``confidence_level``.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)`` by the result's ``interval`` (logit or Wald), inside [0, 1].
        """
        level = check_confidence_level(self.confidence_level if confidence_level is None
                                       else confidence_level)
        return ConfidenceInterval(*_c_interval(self.estimate, self.se, level, self.interval))

    def to_frame(self):
        """One row: the estimate, its SE and interval, then the pair counts.

        Returns
        -------
        pandas.DataFrame
            ``method, estimate, se, ci_low, ci_high, confidence_level, interval, tau,
            n_comparable, concordant, discordant, tied_risk, tied_time``.
        """
        import pandas as pd

        names = ["method", "estimate", "se", "ci_low", "ci_high", "confidence_level",
                 "interval", "tau", "n_comparable", "concordant", "discordant", "tied_risk",
                 "tied_time"]
        return pd.DataFrame([{k: getattr(self, k) for k in names}], columns=names)


@dataclass(frozen=True)
class CumulativeDynamicAUCResult(Result):
    """The cumulative/dynamic AUC at each time and its mean over time.

    Attributes
    ----------
    times : ndarray of shape (n_times,)
        The time points, increasing.
    auc : ndarray of shape (n_times,)
        AUC(t) at each: the probability that a subject with an event by t has a higher risk
        than one still event-free after t.
    mean_auc : float
        Their mean weighted by the Kaplan–Meier drop of the test data's survival over the
        time points.

    See Also
    --------
    cumulative_dynamic_auc : Builds it.

    Examples
    --------
    >>> t = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    >>> res = cumulative_dynamic_auc(t, [1, 1, 0, 1, 1, 0], t, [1, 1, 0, 1, 1, 0],
    ...                              [6, 5, 4, 3, 2, 1], [2.5, 4.5])
    >>> res.auc.tolist()
    [1.0, 1.0]
    """

    times: np.ndarray
    auc: np.ndarray
    mean_auc: float

    @property
    def title(self) -> str:
        """The heading of the result."""
        return f"Cumulative/dynamic AUC (mean {self.mean_auc:.4g})"

    def to_frame(self):
        """One row per time point: ``time``, ``auc``.

        Returns
        -------
        pandas.DataFrame
            The AUC at each time.
        """
        import pandas as pd

        return pd.DataFrame({"time": self.times, "auc": self.auc})


@dataclass(frozen=True)
class BrierScoreResult(Result):
    """The censoring-weighted Brier score at each time.

    Attributes
    ----------
    times : ndarray of shape (n_times,)
        The time points, increasing.
    brier : ndarray of shape (n_times,)
        The Brier score at each (0 is perfect; 0.25 is what always predicting 0.5 scores).

    See Also
    --------
    brier_score, integrated_brier_score : Build it; the integral over the times.

    Examples
    --------
    >>> t = [1.0, 2.0, 3.0, 4.0]
    >>> res = brier_score(t, [1, 1, 1, 1], t, [1, 1, 1, 1], [[0.5], [0.5], [0.5], [0.5]],
    ...                   [2.5])
    >>> res.brier.tolist()
    [0.25]
    """

    times: np.ndarray
    brier: np.ndarray

    @property
    def title(self) -> str:
        """The heading of the result."""
        return "Brier score (censoring weights)"

    def to_frame(self):
        """One row per time point: ``time``, ``brier``.

        Returns
        -------
        pandas.DataFrame
            The Brier score at each time.
        """
        import pandas as pd

        return pd.DataFrame({"time": self.times, "brier": self.brier})


# -- input validation ------------------------------------------------------------------------

def _is_structured(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.names is not None


def _structured_iv(y, name: str) -> tuple[np.ndarray, np.ndarray]:
    names = y.dtype.names
    if y.ndim != 1 or len(names) != 2:
        raise DataError(f"`{name}`: a structured survival target must be one-dimensional with "
                        f"two fields (event, time); got shape {y.shape} and fields {names}.")
    kinds = {f: y.dtype[f].kind for f in names}
    event_f = [f for f in names if kinds[f] == "b"]
    time_f = [f for f in names if kinds[f] in "fiu"]
    if len(event_f) != 1 or len(time_f) != 1:
        raise DataError(f"`{name}`: a structured survival target needs one boolean field (the "
                        f"event) and one numeric field (the time); got {dict(kinds)} "
                        "(kinds: b boolean, f float, i/u integer).")
    return np.asarray(y[time_f[0]]), np.asarray(y[event_f[0]])


def _time_iv(time, name: str) -> np.ndarray:
    try:
        arr = np.asarray(time, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"`{name}` must hold numeric times; could not convert it ({exc}).") \
            from None
    if arr.ndim != 1 or arr.size == 0:
        raise DataError(f"`{name}` must be a non-empty one-dimensional array of times; got "
                        f"shape {arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0))
    if bad.size:
        raise DataError(f"`{name}` must hold positive finite times; found {bad.size} other "
                        f"value(s), first at position {bad[0]}: {arr[bad[0]]!r}.")
    return arr


def _event_iv(event, name: str, n: int) -> np.ndarray:
    arr = np.asarray(event)
    if arr.ndim != 1:
        raise DataError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    if arr.dtype.kind != "b":
        try:
            num = arr.astype(float)
        except (TypeError, ValueError):
            raise DataError(f"`{name}` must hold event indicators (True/False or 1/0); got "
                            f"values of type {arr.dtype}.") from None
        bad = np.flatnonzero((num != 0) & (num != 1))
        if bad.size:
            raise DataError(f"`{name}` must hold event indicators (True/False or 1/0); found "
                            f"{bad.size} other value(s), first at position {bad[0]}: "
                            f"{arr[bad[0]]!r}.")
        arr = num == 1
    if arr.size != n:
        raise DataError(f"`{name}` has {arr.size} values but its times have {n}.")
    if not arr.any():
        raise DataError(f"`{name}`: every subject is censored; at least one event is needed.")
    return arr.astype(bool)


#: The layout of a survival target as replikit passes it to estimators: scikit-survival's
#: (``sksurv.util.Surv``): the event indicator first, then the time (defined with the data
#: model, :mod:`replikit.data.tables`).
SURVIVAL_DTYPE = _SURVIVAL_DTYPE


def survival_target(time, event=None, *, name: str = "y") -> np.ndarray:
    """A survival outcome as one array: scikit-survival's structured layout, checked.

    Parameters
    ----------
    time : array-like of shape (n,), structured array or (time, event) tuple
        Follow-up times (positive, finite); or a whole target: a structured array with one
        boolean and one numeric field (any names, any order), or a ``(time, event)`` pair.
    event : array-like of shape (n,), optional
        Event indicators (True/1: the event was observed at ``time``; False/0: censored then).
        Needed unless ``time`` is a whole target.
    name : str, default 'y'
        How errors name the target.

    Returns
    -------
    ndarray of dtype :data:`SURVIVAL_DTYPE`
        Fields ``event`` (bool) and ``time`` (float): what scikit-survival's estimators take as
        ``y`` and what :func:`replikit.experiment.run` fits survival models on.

    Raises
    ------
    DataError
        Times that are not positive and finite, indicators other than 0/1, different lengths,
        or no event at all; the message names the parameter.

    See Also
    --------
    target_parts : The time and event arrays of a target.
    concordance_index : Harrell's C of a risk score on such a target.

    Examples
    --------
    >>> y = survival_target([5.0, 3.0, 9.0], [1, 0, 1])
    >>> y.dtype.names, y["event"].tolist()
    (('event', 'time'), [True, False, True])
    """
    if isinstance(time, tuple) and event is None:
        if len(time) != 2:
            raise DataError(f"`{name}`: a survival target given as a tuple must be "
                            f"(time, event); got {len(time)} items.")
        time, event = time
    if _is_structured(time):
        t, e = _structured_iv(time, name)
        target = _target_iv(t, e, (name, name))
    else:
        if event is None:
            raise ParameterError(f"`event` is needed with `time` (or pass `{name}` as a "
                                 "structured array or a (time, event) tuple).")
        target = _target_iv(time, event, (f"{name}: time" if name != "y" else "time",
                                          f"{name}: event" if name != "y" else "event"))
    return survival_array(target.time, target.event)


def is_survival_target(y) -> bool:
    """Whether ``y`` is a survival outcome: a structured array with one boolean and one
    numeric field (or a ``(time, event)`` tuple).

    Parameters
    ----------
    y : object
        An outcome.

    Returns
    -------
    bool

    See Also
    --------
    survival_target : Makes one.

    Examples
    --------
    >>> is_survival_target(survival_target([2.0, 1.0], [1, 1])), is_survival_target([1, 2])
    (True, False)
    """
    if isinstance(y, tuple):
        return len(y) == 2 and all(np.ndim(v) == 1 for v in y)
    if not _is_structured(y) or len(y.dtype.names) != 2:
        return False
    kinds = sorted(y.dtype[f].kind for f in y.dtype.names)
    return kinds[0] == "b" and kinds[1] in "fiu"


def target_parts(y) -> tuple[np.ndarray, np.ndarray]:
    """``(time, event)`` of a survival target (a structured array of any field names).

    Parameters
    ----------
    y : structured ndarray
        A survival target.

    Returns
    -------
    time : ndarray of float
    event : ndarray of bool

    See Also
    --------
    survival_target : The reverse.

    Examples
    --------
    >>> t, e = target_parts(survival_target([2.0, 1.0], [1, 0]))
    >>> t.tolist(), e.tolist()
    ([2.0, 1.0], [True, False])
    """
    t, e = _structured_iv(np.asarray(y), "y")
    return np.asarray(t, float), np.asarray(e, bool)


def evaluation_times(time_train, event_train, time_test, event_test, *,
                     quantiles=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)) -> np.ndarray:
    """The time points at which the runner scores the time-dependent metrics (the mean AUC and
    the integrated Brier score) of one test set.

    The quantiles of the test set's event times, kept where both the test and the training
    follow-up still run (inside ``[min test time, max test time)`` and before the last
    training time, so the censoring weights are defined) — the grid scikit-survival's user
    guide uses (its 10th–80th percentiles).

    Parameters
    ----------
    time_train, event_train : array-like
        The training target.
    time_test, event_test : array-like
        The test target.
    quantiles : sequence of float
        Quantiles of the test event times.

    Returns
    -------
    ndarray
        Strictly increasing times (possibly empty when the test set has too few events).

    See Also
    --------
    cumulative_dynamic_auc, integrated_brier_score : Score at these times.

    Examples
    --------
    >>> t = np.arange(1.0, 21.0); e = np.ones(20, bool)
    >>> evaluation_times(t, e, t, e)[[0, -1]].round(6).tolist()
    [2.9, 16.2]
    """
    tt, et = np.asarray(time_test, float), np.asarray(event_test, bool)
    if not et.any():
        return np.empty(0)
    grid = np.unique(np.quantile(tt[et], quantiles))
    last_train = float(np.max(np.asarray(time_train, float)))
    keep = (grid >= tt.min()) & (grid < tt.max()) & (grid < last_train)
    return grid[keep]


@dataclass(frozen=True)
class _Target:
    time: np.ndarray
    event: np.ndarray
    name: str  # how errors name it


def _target_iv(time, event, names: tuple[str, str]) -> _Target:
    if _is_structured(time):  # the whole target in the place of `time`
        t, e = _structured_iv(time, names[0])
        t = _time_iv(t, names[0])
        return _Target(t, _event_iv(e, names[0], t.size), names[0])
    t = _time_iv(time, names[0])
    return _Target(t, _event_iv(event, names[1], t.size), names[0])


def _parse_args(values: list, targets: list[tuple[str, str]], rest: list[str]):
    """Targets given as (time, event) pairs or structured arrays, then the other arguments.

    ``values`` are the positional parameters in order with the ones left at None dropped."""
    values = [v for v in values if v is not None]
    out, i = [], 0
    for names in targets:
        if i >= len(values):
            raise ParameterError(f"`{names[0]}`: a survival target is missing (give `time` and "
                                 "`event` arrays, or a structured array).")
        if _is_structured(values[i]):
            out.append(_target_iv(values[i], None, names))
            i += 1
        else:
            if i + 1 >= len(values):
                raise ParameterError(f"`{names[1]}` is missing.")
            out.append(_target_iv(values[i], values[i + 1], names))
            i += 2
    if len(values) - i != len(rest):
        raise ParameterError(
            f"expected {', '.join(f'`{r}`' for r in rest)} after the survival target(s); got "
            f"{len(values) - i} more argument(s). A target is `time` and `event` arrays, or "
            "one structured array in their place.")
    return out, values[i:]


def _risk_iv(risk, name: str, n: int, *, ndim: tuple[int, ...] = (1,)) -> np.ndarray:
    try:
        arr = np.asarray(risk, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"`{name}` must be numeric; could not convert it ({exc}).") from None
    if arr.ndim not in ndim:
        raise DataError(f"`{name}` must have {' or '.join(map(str, ndim))} dimension(s); got "
                        f"shape {arr.shape}.")
    if arr.shape[0] != n:
        raise DataError(f"`{name}` has {arr.shape[0]} rows but the test target has {n} "
                        "subjects.")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"`{name}` must be finite; found {int((~np.isfinite(arr)).sum())} "
                        "NaN/inf value(s).")
    return arr


def _tol_iv(tied_tol) -> float:
    if isinstance(tied_tol, bool) or not isinstance(tied_tol, (int, float, np.number)):
        raise ParameterTypeError(f"`tied_tol` must be a number; got {type(tied_tol).__name__}.")
    if not np.isfinite(tied_tol) or tied_tol < 0:
        raise ParameterError(f"`tied_tol` must be finite and >= 0; got {tied_tol!r}.")
    return float(tied_tol)


def _times_iv(times, test: _Target) -> np.ndarray:
    arr = _time_iv(np.atleast_1d(np.asarray(times, dtype=float)), "times")
    if arr.size > 1 and np.any(np.diff(arr) <= 0):
        raise ParameterError("`times` must be strictly increasing (the columns of the "
                             "predictions follow them).")
    lo, hi = test.time.min(), test.time.max()
    if arr[0] < lo or arr[-1] >= hi:
        raise ParameterError(f"`times` must lie within the test data's follow-up [{lo:g}, "
                             f"{hi:g}) (the last time observed must exceed them, so that some "
                             f"subjects are still followed); got [{arr[0]:g}, {arr[-1]:g}].")
    return arr


# -- Kaplan–Meier ----------------------------------------------------------------------------

def _kaplan_meier(time, event, *, censoring: bool) -> tuple[np.ndarray, np.ndarray]:
    """Distinct times and the Kaplan–Meier survival just after each.

    With ``censoring``, the survival of the censoring times G(t) = P(C > t): at a time with both
    events and censorings the events come first (the censored subjects were at risk of them),
    so they leave the risk set of the censoring process before its jump."""
    uniq, inverse, counts = np.unique(time, return_inverse=True, return_counts=True)
    d = np.bincount(inverse, weights=event, minlength=uniq.size)
    at_risk = time.size - np.concatenate(([0], np.cumsum(counts)[:-1]))
    if censoring:
        jumps, at_risk = counts - d, at_risk - d
    else:
        jumps = d
    ratio = np.divide(jumps, at_risk, out=np.zeros(uniq.size), where=jumps != 0)
    return uniq, np.cumprod(1.0 - ratio)


def _step_at(uniq, surv, t) -> np.ndarray:
    """The right-continuous step function (1 before the first time) at ``t``."""
    idx = np.searchsorted(uniq, t, side="right") - 1
    return np.where(idx >= 0, surv[np.maximum(idx, 0)], 1.0)


class _Censoring:
    """G, the Kaplan–Meier survival of the censoring times of the training data."""

    def __init__(self, train: _Target):
        self.last = train.time.max()
        if train.event.all():  # no censoring seen: G = 1 over the follow-up
            self.uniq, self.surv = np.unique(train.time), None
        else:
            self.uniq, self.surv = _kaplan_meier(train.time, train.event, censoring=True)
        self.train_name = train.name

    def at(self, t, what: str) -> np.ndarray:
        t = np.asarray(t, float)
        if self.surv is None:
            g = np.ones(t.shape)
        else:
            g = _step_at(self.uniq, self.surv, t)
        beyond = t > self.last
        if beyond.any() and (self.surv is None or self.surv[-1] > 0):
            raise DataError(
                f"{what} reach {t[beyond].max():g}, beyond the training follow-up (last time "
                f"{self.last:g} in `{self.train_name}`): the censoring distribution is unknown "
                "there. Truncate (`tau`, `times`) below the training follow-up.")
        g = np.where(beyond, 0.0, g)
        if np.any(g <= 0):
            raise DataError(
                f"{what} reach {t[g <= 0].min():g}, where the training data's censoring "
                "survival G(t) is 0 (every subject still followed there was censored): the "
                "censoring weights 1/G are infinite. Truncate (`tau`, `times`) below it.")
        return g


# -- the concordance kernel ------------------------------------------------------------------

def _prefix_rank_counts(seq: np.ndarray, prefix: np.ndarray, bound: np.ndarray,
                        weights: np.ndarray | None = None) -> np.ndarray:
    """For each query q, #{j < prefix[q] : seq[j] < bound[q]}, in O((n + m) log^2 n); with
    ``weights``, the sum of ``weights[j]`` over those j instead of their number.

    ``seq`` holds integers >= 0; the prefix [0, P) splits into dyadic blocks (one per set bit of
    P), each counted by a binary search in the sorted copy of its block at that level (and
    summed through the cumulative weights of the sorted block)."""
    n = seq.size
    levels = max(1, int(np.ceil(np.log2(max(n, 2)))))
    size = 1 << levels
    top = int(max(n, seq.max(initial=0) + 1, bound.max(initial=0)))
    padded = np.full(size, top, dtype=np.int64)  # padding is never < a bound (bounds <= top)
    padded[:n] = seq
    if weights is not None:
        w = np.zeros(size)
        w[:n] = weights
    out = np.zeros(prefix.size, dtype=np.int64 if weights is None else float)
    prefix = prefix.astype(np.int64)
    bound = bound.astype(np.int64)
    for k in range(levels + 1):
        width = 1 << k
        has = (prefix >> k) & 1 == 1
        if not has.any():
            continue
        block = (prefix[has] >> (k + 1)) << 1  # index of the block [start, start + 2^k)
        blocks = padded.reshape(-1, width)
        if weights is None:
            keys = np.sort(blocks, axis=1)
        else:
            order = np.argsort(blocks, axis=1, kind="stable")
            keys = np.take_along_axis(blocks, order, axis=1)
            cum = np.cumsum(np.take_along_axis(w.reshape(-1, width), order, axis=1), axis=1)
        keys = (keys + (np.arange(size // width, dtype=np.int64) * (top + 1))[:, None]).ravel()
        below = (np.searchsorted(keys, block * (top + 1) + bound[has], side="left")
                 - block * width)  # how many of the block are < the bound
        if weights is None:
            out[has] += below
        else:
            out[has] += np.where(below > 0, cum[block, np.maximum(below - 1, 0)], 0.0)
    return out


@dataclass(frozen=True)
class _PairCounts:
    events: np.ndarray       # positions of the event subjects
    concordant: np.ndarray   # per event subject, among its comparable subjects
    tied: np.ndarray
    comparable: np.ndarray
    tied_time: np.ndarray


def _pair_counts(time, event, risk, tied_tol) -> _PairCounts:
    """Per event subject i: its comparable subjects (later time, or censored at the same time)
    with a lower risk (by more than ``tied_tol``) and with a risk within ``tied_tol``."""
    # order: time decreasing, censored before events at the same time, so that the subjects
    # comparable with event i are exactly the first P_i of the order
    order = np.lexsort((event, -time))
    rank_of = np.empty(time.size, dtype=np.int64)
    rank_of[np.argsort(risk, kind="stable")] = np.arange(time.size)
    seq = rank_of[order]
    ev = np.flatnonzero(event)
    t_sorted = np.sort(time)
    c_sorted = np.sort(time[~event])
    t_ev = time[ev]
    later = time.size - np.searchsorted(t_sorted, t_ev, side="right")
    cens_tied = (np.searchsorted(c_sorted, t_ev, side="right")
                 - np.searchsorted(c_sorted, t_ev, side="left"))
    prefix = later + cens_tied
    r_sorted = np.sort(risk)
    lo = np.searchsorted(r_sorted, risk[ev] - tied_tol, side="left")   # risk < r_i - tol
    hi = np.searchsorted(r_sorted, risk[ev] + tied_tol, side="right")  # risk <= r_i + tol
    counts = _prefix_rank_counts(seq, np.concatenate([prefix, prefix]), np.concatenate([lo, hi]))
    below, upto = counts[:ev.size], counts[ev.size:]
    return _PairCounts(ev, below, upto - below, prefix, cens_tied)


def _subject_pairs(time, event, risk, tied_tol, counts: _PairCounts, w) -> tuple:
    """Per subject, the summed weight of the comparable pairs it belongs to — as the earlier
    event or as the later subject — that are concordant, discordant and tied in risk.

    ``w`` is the weight of each event's pairs (aligned with ``counts.events``). As the later
    subject j belongs to the pairs of the events before it (and at its time when j is
    censored): a prefix of the events ordered by time, counted like the events' own pairs."""
    n = time.size
    ev = counts.events
    con, dis, tie = np.zeros(n), np.zeros(n), np.zeros(n)
    con[ev] = w * counts.concordant
    tie[ev] = w * counts.tied
    dis[ev] = w * (counts.comparable - counts.concordant - counts.tied)
    by_time = np.argsort(time[ev], kind="stable")
    t_ev = time[ev][by_time]
    prefix = np.where(event, np.searchsorted(t_ev, time, side="left"),
                      np.searchsorted(t_ev, time, side="right"))
    rank_of = np.empty(n, dtype=np.int64)
    rank_of[np.argsort(risk, kind="stable")] = np.arange(n)
    r_sorted = np.sort(risk)
    lo = np.searchsorted(r_sorted, risk - tied_tol, side="left")   # events with r_i < r_j - tol
    hi = np.searchsorted(r_sorted, risk + tied_tol, side="right")  # events with r_i <= r_j + tol
    w_time = w[by_time]
    sums = _prefix_rank_counts(rank_of[ev][by_time], np.concatenate([prefix, prefix]),
                               np.concatenate([lo, hi]), w_time)
    below, upto = sums[:n], sums[n:]
    total = np.concatenate(([0.0], np.cumsum(w_time)))[prefix]
    return con + (total - upto), dis + below, tie + (upto - below)


def _concordance_se(estimate, den, con, dis, tie) -> float:
    """The infinitesimal-jackknife standard error of a (weighted) concordance ratio.

    Subject i's influence is (c_i + t_i/2 - C m_i) / N, with c_i, t_i the weight of its
    concordant and risk-tied pairs, m_i of all its comparable pairs, N of all pairs
    (Therneau & Atkinson 2020, section 3: R's ``survival::concordance`` variance)."""
    influence = (con + 0.5 * tie - estimate * (con + dis + tie)) / den
    return float(np.sqrt(np.sum(influence ** 2)))


def _c_interval(estimate, se, confidence_level, interval) -> tuple[float, float]:
    """Wald interval of C on its own scale (``'wald'``, clipped to [0, 1]) or on the logit
    scale (``'logit'``; delta method, SE / (C (1 - C)))."""
    from scipy import stats

    if not np.isfinite(se):
        return np.nan, np.nan
    q = float(stats.norm.ppf((1.0 + confidence_level) / 2.0))
    if interval == "wald" or se == 0.0 or estimate in (0.0, 1.0):
        return float(max(0.0, estimate - q * se)), float(min(1.0, estimate + q * se))
    logit = np.log(estimate / (1.0 - estimate))
    half = q * se / (estimate * (1.0 - estimate))
    return (float(1.0 / (1.0 + np.exp(-(logit - half)))),
            float(1.0 / (1.0 + np.exp(-(logit + half)))))


def _concordance(counts: _PairCounts, weights, method, tau, *, time, event, risk, tol,
                 confidence_level, interval) -> ConcordanceResult:
    weights = np.broadcast_to(np.asarray(weights, float), counts.events.shape)
    num = np.sum(weights * (counts.concordant + 0.5 * counts.tied))
    den = np.sum(weights * counts.comparable)
    n_comp = int(counts.comparable.sum())
    con, tie = int(counts.concordant.sum()), int(counts.tied.sum())
    if n_comp == 0 or den <= 0:
        where = "" if method == "harrell" else " with an event before `tau`"
        raise DataError(f"no comparable pair{where}: a pair is comparable when the subject "
                        "with the shorter time had the event.")
    estimate = float(num / den)
    se = _concordance_se(estimate, den, *_subject_pairs(time, event, risk, tol, counts,
                                                         weights))
    low, high = _c_interval(estimate, se, confidence_level, interval)
    return ConcordanceResult(estimate, con, n_comp - con - tie, tie,
                             int(counts.tied_time.sum()), n_comp, method,
                             None if tau is None else float(tau), se, low, high,
                             confidence_level, interval)


# -- public metrics --------------------------------------------------------------------------

def concordance_index(time, event, risk=None, *, tied_tol=1e-8, confidence_level=0.95,
                      interval="logit") -> ConcordanceResult:
    r"""Harrell's concordance index of a risk score with a censored survival outcome.

    A pair of subjects is comparable when the one with the shorter time had the event (a
    censoring at the same time as an event counts as later; two events at the same time are not
    comparable). The index is the share of comparable pairs whose earlier-event subject has the
    higher risk, a tie in risk counting 1/2:

    .. math::

        C = \frac{\sum_{i,j} \delta_i\,I(T_i < T_j)\,[I(r_i > r_j) + \tfrac12 I(r_i = r_j)]}
                 {\sum_{i,j} \delta_i\,I(T_i < T_j)}

    (Harrell et al. 1982; Harrell, Lee & Mark 1996, section 5.5). Its limit depends on the
    censoring distribution; :func:`concordance_index_ipcw` removes that dependence. Counted in
    O(n log^2 n) with no loop over pairs; the numbers are scikit-survival's
    ``concordance_index_censored``.

    The standard error is the infinitesimal jackknife of R's ``survival::concordance``
    (Therneau & Atkinson 2023, section "Variance"): with :math:`c_k, t_k, m_k` the numbers of
    concordant, risk-tied and all comparable pairs subject k belongs to (as the earlier event
    or as the later subject) and N all comparable pairs,

    .. math::

        \widehat{\mathrm{SE}}(C)^2 = \sum_k \Big(\frac{c_k + t_k/2 - C\, m_k}{N}\Big)^2

    (N taken as ancillary, as R does). The default interval is on the logit scale,
    :math:`\mathrm{expit}(\mathrm{logit}\,C \pm z\,\widehat{\mathrm{SE}}/(C(1-C)))`, the
    transform Therneau & Atkinson suggest; it stays inside [0, 1]. It is an interval for the
    limit of Harrell's C under the censoring of the data at hand.

    Parameters
    ----------
    time : array-like of shape (n,) or structured array
        Follow-up times (positive), or a structured survival target (a boolean event field and
        a numeric time field, as scikit-survival's) — then ``risk`` comes second.
    event : array-like of shape (n,)
        True (or 1) when the event was observed at ``time``, False (0) when censored.
    risk : array-like of shape (n,)
        Predicted risk: higher means an earlier event expected.
    tied_tol : float, default 1e-8
        Risks closer than this are tied.
    confidence_level : float, default 0.95
        Level of the interval ``ci_low``, ``ci_high``.
    interval : {'logit', 'wald'}, default 'logit'
        The interval: on the logit scale, or ``C ± z SE`` clipped to [0, 1].

    Returns
    -------
    ConcordanceResult
        ``estimate``, ``se``, ``ci_low``, ``ci_high`` and the counts ``concordant``,
        ``discordant``, ``tied_risk``, ``tied_time``, ``n_comparable``.

    Raises
    ------
    DataError
        Times not positive and finite, events not 0/1, lengths that differ, no event, or no
        comparable pair.

    See Also
    --------
    concordance_index_ipcw : Uno's C, free of the censoring distribution.
    cumulative_dynamic_auc : Discrimination at chosen times.

    References
    ----------
    Harrell, F. E., Califf, R. M., Pryor, D. B., Lee, K. L. & Rosati, R. A. (1982). Evaluating
    the yield of medical tests. JAMA, 247(18), 2543–2546.

    Harrell, F. E., Lee, K. L. & Mark, D. B. (1996). Multivariable prognostic models: issues in
    developing models, evaluating assumptions and adequacy, and measuring and reducing errors.
    Statistics in Medicine, 15(4), 361–387.

    Therneau, T. M. & Atkinson, E. J. (2023). Concordance. Vignette of the R package
    survival, version 3.5-3.

    Examples
    --------
    >>> r = concordance_index([2, 4, 6, 8], [1, 1, 0, 1], [0.9, 0.5, 0.7, 0.1])
    >>> r.estimate, r.concordant, r.discordant, r.n_comparable
    (0.8, 4, 1, 5)
    >>> round(r.se, 4), round(r.ci_low, 3), round(r.ci_high, 3)
    (0.204, 0.247, 0.98)
    """
    (test,), (risk,) = _parse_args([time, event, risk], [("time", "event")], ["risk"])
    risk = _risk_iv(risk, "risk", test.time.size)
    tol = _tol_iv(tied_tol)
    level = check_confidence_level(confidence_level)
    interval = check_choice(interval, "interval", _INTERVALS)
    counts = _pair_counts(test.time, test.event, risk, tol)
    return _concordance(counts, 1.0, "harrell", None, time=test.time, event=test.event,
                        risk=risk, tol=tol, confidence_level=level, interval=interval)


def concordance_index_ipcw(time_train, event_train, time_test=None, event_test=None, risk=None,
                           *, tau=None, tied_tol=1e-8, confidence_level=0.95,
                           interval="logit") -> ConcordanceResult:
    r"""Uno's concordance index: Harrell's C weighted by the inverse probability of censoring.

    Each comparable pair whose earlier time :math:`T_i` is an event before ``tau`` is weighted by
    :math:`\hat G(T_i)^{-2}`, with :math:`\hat G` the Kaplan–Meier estimate of the censoring
    survival function :math:`P(C > t)` from the training data:

    .. math::

        C_\tau = \frac{\sum_{i,j} \delta_i \hat G(T_i)^{-2} I(T_i < T_j, T_i < \tau)
                       [I(r_i > r_j) + \tfrac12 I(r_i = r_j)]}
                      {\sum_{i,j} \delta_i \hat G(T_i)^{-2} I(T_i < T_j, T_i < \tau)}

    (Uno et al. 2011, equation 6). Under censoring independent of the covariates it estimates
    :math:`P(r_i > r_j \mid T_i < T_j, T_i < \tau)`, whatever the censoring distribution. Tied
    times as in :func:`concordance_index`; the numbers are scikit-survival's
    ``concordance_index_ipcw``.

    The standard error is the infinitesimal jackknife of :func:`concordance_index` with each
    pair's weight :math:`\hat G(T_i)^{-2}` in the counts, the weights held fixed: R's
    ``survival::concordance(..., timewt = "n/G2")`` variance (Therneau & Atkinson 2023). It
    leaves out the sampling error of :math:`\hat G` (and of the training data when they
    differ from the test data); the coverage measured in docs/survival.md is close to nominal
    all the same. The interval is on the logit scale by default, as for Harrell's C.

    Parameters
    ----------
    time_train : array-like of shape (n_train,) or structured array
        Training follow-up times (for the censoring distribution), or the training target as a
        structured array (then the test target and ``risk`` move one place left).
    event_train : array-like of shape (n_train,)
        Training event indicators.
    time_test : array-like of shape (n,) or structured array
        Test follow-up times, or the test target as a structured array.
    event_test : array-like of shape (n,)
        Test event indicators.
    risk : array-like of shape (n,)
        Predicted risk of the test subjects (higher: earlier event expected).
    tau : float, optional
        Truncation time: only pairs whose earlier event is before ``tau`` count. Choose it
        where the censoring survival is still positive; test events before it must lie within
        the training follow-up. None: no truncation.
    tied_tol : float, default 1e-8
        Risks closer than this are tied.
    confidence_level : float, default 0.95
        Level of the interval ``ci_low``, ``ci_high``.
    interval : {'logit', 'wald'}, default 'logit'
        The interval: on the logit scale, or ``C ± z SE`` clipped to [0, 1].

    Returns
    -------
    ConcordanceResult
        ``estimate`` (weighted), ``se``, ``ci_low``, ``ci_high`` and the unweighted counts of
        all comparable pairs, as scikit-survival reports them (including the pairs after
        ``tau``, which weigh 0).

    Raises
    ------
    DataError
        Invalid targets or risks; a test event before ``tau`` beyond the training follow-up or
        where the censoring survival is 0; no event before ``tau``.

    See Also
    --------
    concordance_index : Harrell's C.

    References
    ----------
    Uno, H., Cai, T., Pencina, M. J., D'Agostino, R. B. & Wei, L. J. (2011). On the
    C-statistics for evaluating overall adequacy of risk prediction procedures with censored
    survival data. Statistics in Medicine, 30(10), 1105–1117.

    Therneau, T. M. & Atkinson, E. J. (2023). Concordance. Vignette of the R package
    survival, version 3.5-3.

    Examples
    --------
    >>> t, e = [2, 4, 6, 8, 9], [1, 1, 0, 1, 0]
    >>> r = concordance_index_ipcw(t, e, t, e, [0.9, 0.5, 0.7, 0.1, 0.2])
    >>> round(r.estimate, 4), round(r.se, 4)
    (0.6486, 0.1986)
    """
    (train, test), (risk,) = _parse_args(
        [time_train, event_train, time_test, event_test, risk],
        [("time_train", "event_train"), ("time_test", "event_test")], ["risk"])
    risk = _risk_iv(risk, "risk", test.time.size)
    tol = _tol_iv(tied_tol)
    level = check_confidence_level(confidence_level)
    interval = check_choice(interval, "interval", _INTERVALS)
    if tau is not None:
        if isinstance(tau, bool) or not isinstance(tau, (int, float, np.number)) \
                or not np.isfinite(tau) or tau <= 0:
            raise ParameterError(f"`tau` must be a positive finite time or None; got {tau!r}.")
    counts = _pair_counts(test.time, test.event, risk, tol)
    t_ev = test.time[counts.events]
    used = t_ev < tau if tau is not None else np.ones(t_ev.size, bool)
    if not used.any():
        raise DataError(f"`{test.name}`: no test event before `tau` = {tau!r}.")
    g = _Censoring(train).at(t_ev[used], "test event times" + (" before `tau`" if tau else ""))
    weights = np.zeros(t_ev.size)
    weights[used] = 1.0 / g ** 2
    return _concordance(counts, weights, "uno", tau, time=test.time, event=test.event,
                        risk=risk, tol=tol, confidence_level=level, interval=interval)


def _auc_kernel(risk, cases_w, controls, tol) -> np.ndarray:
    """Mann–Whitney AUC per column: weighted cases vs controls, ties (chained within ``tol`` in
    sorted order) counting 1/2. ``risk`` (n, T) or (n, 1); weights (n, T)."""
    n, n_times = cases_w.shape
    order = np.argsort(risk, axis=0, kind="stable")
    r = np.take_along_axis(risk, order, axis=0)
    if r.shape[1] != n_times:
        order = np.broadcast_to(order, (n, n_times))
        r = np.broadcast_to(r, (n, n_times))
    w = np.take_along_axis(cases_w, order, axis=0)
    c = np.take_along_axis(controls, order, axis=0)
    new_group = np.ones((n, n_times), bool)
    new_group[1:] = np.abs(np.diff(r, axis=0)) > tol
    idx = np.arange(n)[:, None]
    start = np.maximum.accumulate(np.where(new_group, idx, 0), axis=0)
    end_flag = np.ones((n, n_times), bool)
    end_flag[:-1] = new_group[1:]
    end = np.flip(np.minimum.accumulate(np.flip(np.where(end_flag, idx, n - 1), 0), axis=0), 0)
    cum_c = np.cumsum(c, axis=0)
    below = np.take_along_axis(cum_c - c, start, axis=0)       # controls in lower groups
    within = np.take_along_axis(cum_c, end, axis=0) - below     # controls in the same group
    num = np.sum(w * (below + 0.5 * within), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / (w.sum(axis=0) * c.sum(axis=0))


def cumulative_dynamic_auc(time_train, event_train, time_test=None, event_test=None, risk=None,
                           times=None, *, tied_tol=1e-8) -> CumulativeDynamicAUCResult:
    r"""Time-dependent AUC of cumulative cases against dynamic controls, with censoring weights.

    At time t the cases are the subjects with an event by t, weighted by
    :math:`\omega_i = 1/\hat G(T_i)` (:math:`\hat G` the Kaplan–Meier censoring survival of the
    training data), and the controls are those still followed after t:

    .. math::

        \widehat{AUC}(t) = \frac{\sum_{i,j} \omega_i\, I(T_i \le t, \delta_i = 1)\, I(T_j > t)
                                 [I(r_i > r_j) + \tfrac12 I(r_i = r_j)]}
                                {\sum_i \omega_i I(T_i \le t, \delta_i = 1)\,
                                 \sum_j I(T_j > t)}

    (Uno et al. 2007; Hung & Chiang 2010, equation 2.3). The mean over the time points weights
    each AUC by the drop of the test data's Kaplan–Meier survival :math:`\hat S` since the
    previous point (from 1 before the first):
    :math:`\sum_k \widehat{AUC}(t_k)\,[\hat S(t_{k-1}) - \hat S(t_k)] / [1 - \hat S(t_K)]`, a
    discrete form of Lambert & Chevret's (2016) summary. The numbers are scikit-survival's
    ``cumulative_dynamic_auc``.

    Parameters
    ----------
    time_train : array-like of shape (n_train,) or structured array
        Training follow-up times, or the training target as a structured array (then the
        other arguments move one place left).
    event_train : array-like of shape (n_train,)
        Training event indicators.
    time_test : array-like of shape (n,) or structured array
        Test follow-up times, or the test target as a structured array.
    event_test : array-like of shape (n,)
        Test event indicators.
    risk : array-like of shape (n,) or (n, n_times)
        Predicted risk (one per subject, or one per subject and time point).
    times : array-like of shape (n_times,)
        Strictly increasing time points within the test follow-up ``[min, max)``; test events
        up to the last must lie within the training follow-up.
    tied_tol : float, default 1e-8
        Risks closer than this (consecutive in sorted order) are tied.

    Returns
    -------
    CumulativeDynamicAUCResult
        ``times``, ``auc`` (NaN at a time with no case yet) and ``mean_auc``.

    Raises
    ------
    DataError
        Invalid targets or risks; a test event up to the last time beyond the training
        follow-up or where the censoring survival is 0.
    ParameterError
        ``times`` not increasing or outside the test follow-up.

    See Also
    --------
    concordance_index_ipcw : A summary over all times.
    brier_score : Accuracy of predicted survival probabilities.

    References
    ----------
    Uno, H., Cai, T., Tian, L. & Wei, L. J. (2007). Evaluating prediction rules for t-year
    survivors with censored regression models. Journal of the American Statistical
    Association, 102(478), 527–537.

    Hung, H. & Chiang, C.-T. (2010). Estimation methods for time-dependent AUC models with
    survival data. Canadian Journal of Statistics, 38(1), 8–26.

    Lambert, J. & Chevret, S. (2016). Summary measure of discrimination in survival models
    based on cumulative/dynamic time-dependent ROC curves. Statistical Methods in Medical
    Research, 25(5), 2088–2102.

    Examples
    --------
    >>> t, e = [2, 4, 6, 8, 9], [1, 1, 0, 1, 0]
    >>> r = cumulative_dynamic_auc(t, e, t, e, [0.9, 0.5, 0.7, 0.1, 0.2], [3, 5])
    >>> r.auc.round(4).tolist(), round(r.mean_auc, 4)
    ([1.0, 0.8333], 0.9167)
    """
    (train, test), (risk, times) = _parse_args(
        [time_train, event_train, time_test, event_test, risk, times],
        [("time_train", "event_train"), ("time_test", "event_test")], ["risk", "times"])
    times = _times_iv(times, test)
    risk = _risk_iv(risk, "risk", test.time.size, ndim=(1, 2))
    if risk.ndim == 2 and risk.shape[1] != times.size:
        raise DataError(f"`risk` has {risk.shape[1]} columns but `times` has {times.size} "
                        "time points.")
    tol = _tol_iv(tied_tol)
    cases = test.event[:, None] & (test.time[:, None] <= times[None, :])
    ipcw = np.zeros(test.time.size)
    needed = test.event & (test.time <= times[-1])
    ipcw[needed] = 1.0 / _Censoring(train).at(test.time[needed], "test event times")
    auc = _auc_kernel(risk.reshape(test.time.size, -1), cases * ipcw[:, None],
                      (test.time[:, None] > times[None, :]).astype(float), tol)
    if times.size == 1:
        mean = float(auc[0])
    else:
        uniq, surv = _kaplan_meier(test.time, test.event, censoring=False)
        s = _step_at(uniq, surv, times)
        drop = -np.diff(np.concatenate(([1.0], s)))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = float(np.sum(auc * drop) / (1.0 - s[-1]))
    return CumulativeDynamicAUCResult(times, auc, mean)


def _brier(train, test, probs, times) -> np.ndarray:
    g = _Censoring(train)
    g_t = g.at(times, "`times`")
    cases = test.event[:, None] & (test.time[:, None] <= times[None, :])
    controls = test.time[:, None] > times[None, :]
    needed = test.event & (test.time <= times[-1])
    g_y = np.ones(test.time.size)
    g_y[needed] = g.at(test.time[needed], "test event times")
    return np.mean(np.where(cases, probs ** 2 / g_y[:, None], 0.0)
                   + np.where(controls, (1.0 - probs) ** 2 / g_t[None, :], 0.0), axis=0)


def _brier_iv(values, min_times: int = 1):
    (train, test), (probs, times) = _parse_args(
        values, [("time_train", "event_train"), ("time_test", "event_test")],
        ["survival_probs", "times"])
    times = _times_iv(times, test)
    if times.size < min_times:
        raise ParameterError(f"`times` must hold at least {min_times} time points; got "
                             f"{times.size}.")
    probs = _risk_iv(probs, "survival_probs", test.time.size, ndim=(1, 2))
    if probs.ndim == 1:
        if times.size != 1:
            raise DataError(f"`survival_probs` must have one column per time point "
                            f"({times.size}); got a one-dimensional array.")
        probs = probs[:, None]
    if probs.shape[1] != times.size:
        raise DataError(f"`survival_probs` has {probs.shape[1]} columns but `times` has "
                        f"{times.size} time points.")
    if np.any((probs < 0) | (probs > 1)):
        raise DataError("`survival_probs` must hold probabilities in [0, 1]; found values "
                        f"from {probs.min():g} to {probs.max():g}.")
    return train, test, probs, times


def brier_score(time_train, event_train, time_test=None, event_test=None, survival_probs=None,
                times=None) -> BrierScoreResult:
    r"""The Brier score of predicted survival probabilities at each time, with censoring weights.

    .. math::

        BS(t) = \frac1n \sum_i \Big[\frac{\hat\pi_i(t)^2\, I(T_i \le t, \delta_i = 1)}
                                          {\hat G(T_i)}
                                    + \frac{(1 - \hat\pi_i(t))^2\, I(T_i > t)}{\hat G(t)}\Big]

    with :math:`\hat\pi_i(t)` the predicted probability that subject i is event-free at t and
    :math:`\hat G` the Kaplan–Meier censoring survival of the training data (Graf et al. 1999,
    equation 6); subjects censored before t contribute 0 and are represented by the weights.
    The numbers are scikit-survival's ``brier_score``.

    Parameters
    ----------
    time_train : array-like of shape (n_train,) or structured array
        Training follow-up times, or the training target as a structured array (then the
        other arguments move one place left).
    event_train : array-like of shape (n_train,)
        Training event indicators.
    time_test : array-like of shape (n,) or structured array
        Test follow-up times, or the test target as a structured array.
    event_test : array-like of shape (n,)
        Test event indicators.
    survival_probs : array-like of shape (n, n_times)
        Predicted probability of being event-free at each time point (one column per time; a
        one-dimensional array with a single time).
    times : array-like of shape (n_times,)
        Strictly increasing time points within the test follow-up ``[min, max)`` and the
        training follow-up.

    Returns
    -------
    BrierScoreResult
        ``times`` and ``brier``.

    Raises
    ------
    DataError
        Invalid targets or probabilities; a time, or a test event up to the last time, beyond
        the training follow-up or where the censoring survival is 0.
    ParameterError
        ``times`` not increasing or outside the test follow-up.

    See Also
    --------
    integrated_brier_score : Its average over time.

    References
    ----------
    Graf, E., Schmoor, C., Sauerbrei, W. & Schumacher, M. (1999). Assessment and comparison of
    prognostic classification schemes for survival data. Statistics in Medicine, 18(17–18),
    2529–2545.

    Examples
    --------
    >>> t, e = [2, 4, 6, 8, 9], [1, 1, 0, 1, 0]
    >>> brier_score(t, e, t, e, [0.2, 0.4, 0.9, 0.9, 0.8], [5]).brier.round(4).tolist()
    [0.052]
    """
    train, test, probs, times = _brier_iv(
        [time_train, event_train, time_test, event_test, survival_probs, times])
    return BrierScoreResult(times, _brier(train, test, probs, times))


def integrated_brier_score(time_train, event_train, time_test=None, event_test=None,
                           survival_probs=None, times=None) -> float:
    r"""The Brier score integrated over time (trapezoid rule), per unit of time.

    .. math::

        IBS = \frac{1}{t_K - t_1} \int_{t_1}^{t_K} BS(t)\, dt

    with :math:`BS(t)` the censoring-weighted Brier score of :func:`brier_score` (Graf et al.
    1999, equation 8, with uniform weight over ``[t_1, t_K]``). The number is scikit-survival's
    ``integrated_brier_score``.

    Parameters
    ----------
    time_train : array-like of shape (n_train,) or structured array
        Training follow-up times, or the training target as a structured array (then the
        other arguments move one place left).
    event_train : array-like of shape (n_train,)
        Training event indicators.
    time_test : array-like of shape (n,) or structured array
        Test follow-up times, or the test target as a structured array.
    event_test : array-like of shape (n,)
        Test event indicators.
    survival_probs : array-like of shape (n, n_times)
        Predicted probability of being event-free at each time point.
    times : array-like of shape (n_times,)
        At least two strictly increasing time points (the grid of the integral).

    Returns
    -------
    float
        The integrated Brier score (lower is better).

    See Also
    --------
    brier_score : The score at each time.

    References
    ----------
    Graf, E., Schmoor, C., Sauerbrei, W. & Schumacher, M. (1999). Assessment and comparison of
    prognostic classification schemes for survival data. Statistics in Medicine, 18(17–18),
    2529–2545.

    Examples
    --------
    >>> t, e = [2, 4, 6, 8, 9], [1, 1, 0, 1, 0]
    >>> p = [[0.2, 0.1], [0.4, 0.3], [0.9, 0.8], [0.9, 0.8], [0.8, 0.7]]
    >>> round(integrated_brier_score(t, e, t, e, p, [3, 5]), 4)
    0.073
    """
    train, test, probs, times = _brier_iv(
        [time_train, event_train, time_test, event_test, survival_probs, times], min_times=2)
    bs = _brier(train, test, probs, times)
    return float(np.trapezoid(bs, times) / (times[-1] - times[0]))


# -- the registry ----------------------------------------------------------------------------

def _c_harrell(time_train, event_train, time_test, event_test, prediction, times=None):
    return concordance_index(time_test, event_test, prediction).estimate


def _c_uno(time_train, event_train, time_test, event_test, prediction, times=None):
    tau = None if times is None else float(np.max(times))
    return concordance_index_ipcw(time_train, event_train, time_test, event_test, prediction,
                                  tau=tau).estimate


def _mean_auc(time_train, event_train, time_test, event_test, prediction, times=None):
    return cumulative_dynamic_auc(time_train, event_train, time_test, event_test, prediction,
                                  times).mean_auc


def _ibs(time_train, event_train, time_test, event_test, prediction, times=None):
    return integrated_brier_score(time_train, event_train, time_test, event_test, prediction,
                                  times)


#: Survival metrics by name, each ``f(time_train, event_train, time_test, event_test,
#: prediction, times=None) -> float``: ``prediction`` is a risk for the concordance indices and
#: the AUC, survival probabilities at ``times`` (one column each) for the Brier score;
#: ``c_index_uno`` truncates at ``max(times)`` when times are given.
SURVIVAL_METRICS: dict[str, Callable] = {
    "c_index": _c_harrell, "c_index_uno": _c_uno, "mean_auc": _mean_auc,
    "integrated_brier_score": _ibs,
}
#: Survival metrics where a larger value is better (the Brier score is an error).
SURVIVAL_HIGHER_IS_BETTER = frozenset({"c_index", "c_index_uno", "mean_auc"})
#: Survival metrics that need time points.
SURVIVAL_NEEDS_TIMES = frozenset({"mean_auc", "integrated_brier_score"})
#: Survival metrics that need predicted survival probabilities (not a risk score).
SURVIVAL_NEEDS_PROBA = frozenset({"integrated_brier_score"})


def survival_higher_is_better(metric: str) -> bool:
    """Whether a larger value of survival metric ``metric`` is better.

    Parameters
    ----------
    metric : str
        A name in :data:`SURVIVAL_METRICS`.

    Returns
    -------
    bool
        True for the concordance indices and the AUC, False for the Brier score.

    Raises
    ------
    ParameterError
        An unknown name.

    See Also
    --------
    concordance_index : Harrell's C.

    Examples
    --------
    >>> survival_higher_is_better("c_index"), survival_higher_is_better("integrated_brier_score")
    (True, False)
    """
    if metric not in SURVIVAL_METRICS:
        raise ParameterError(f"`metric`: unknown survival metric {metric!r}; known are "
                             f"{', '.join(SURVIVAL_METRICS)}.")
    return metric in SURVIVAL_HIGHER_IS_BETTER
