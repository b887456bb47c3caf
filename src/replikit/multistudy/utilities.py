"""User utilities of a fixed prediction rule in each study (Parmigiani 2023, secs. 3.2 and 4.1).

A utility ``U(a, x, y)`` scores the user's action ``a = δ*(φ(x))`` on a unit. The average over
study ``k``, ``U_k = (1/n_k) Σ_i U(δ*(φ(x_ik)), x_ik, y_ik)`` (eqs. 1–2), is what the user gets
from the rule in that study; replicability compares the ``U_k``.

Built-ins (all "higher is better"):

``accuracy``        ``I{φ = y}``
``cost:u01,u10``    ``u01·I{φ < y} + u10·I{φ > y}`` with ``u01, u10 ≤ 0`` (eq. 3), so that
                    ``U_k = u01·f01_k + u10·f10_k`` (eq. 4)
``squared``         ``−(y − φ)²``
``absolute``        ``−|y − φ|``
``log``             ``log p_φ(y)``, the log score of the predicted class probabilities
``brier``           ``−½ Σ_c (p_φ(c) − I{y = c})²``, the (halved) Brier score: for two classes
                    ``−(p − y)²``; bounded in [−1, 0], a proper score like ``log``
callable            ``U(pred, X, y)`` returning one number per unit

References: Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
Science, 38(4), 543–556; Brier, G. W. (1950). Verification of Forecasts Expressed in Terms of
Probability. Monthly Weather Review, 78(1), 1–3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import renamed
from .._format import number
from .._validation import check_choice, check_float
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import Result
from ._data import MultiStudyData, _is_discrete, as_study_data
from ._names import utility_words, warn_old_name

__all__ = ["Utility", "accuracy", "error_cost", "squared", "absolute", "log_score", "brier",
           "custom_utility", "parse_utility", "optimal_threshold", "study_utilities",
           "StudyUtilities", "unit_utilities", "check_utility_data"]

_LOG_FLOOR = 1e-15


@dataclass(frozen=True)
class Utility:
    """A user's utility function ``U(δ*(φ(x)), x, y)`` (Parmigiani 2023, sec. 3.2).

    Build one with :func:`accuracy`, :func:`error_cost`, :func:`squared`, :func:`absolute`,
    :func:`log_score`, :func:`brier`, :func:`custom_utility` or :func:`parse_utility`.

    Parameters
    ----------
    name : str
        How the utility is named in tables (``'accuracy'``, ``'cost(u01=-5, u10=-1)'``).
    kind : str
        ``'accuracy'``, ``'cost'``, ``'squared'``, ``'absolute'``, ``'log'``, ``'brier'`` or
        ``'callable'``.
    u01, u10 : float or None
        Utilities of the two errors (cost utility, eq. 3), both ``<= 0``.
    threshold : None, float, str or callable
        For ``cost`` with risk scores: ``None`` uses the rule's labels ``y_pred``; a number is a
        fixed threshold on the positive-class probability; ``'bayes'`` is the user-optimal
        ``δ*`` when the user adopts the rule's probabilities (predict 1 iff
        ``p ≥ u10/(u01+u10)``); ``'empirical'`` maximizes the pooled empirical utility (the
        user's "empirical" probability model); a callable ``π(p)`` maps the rule's score to the
        user's own probability before the Bayes threshold.
    positive : label or None
        The class coded 1 in eq. (3) (default: the largest label).
    func : callable or None
        ``U(pred, X, y)`` of a custom utility.

    See Also
    --------
    parse_utility : A utility from its name.
    study_utilities : The average utility ``U_k`` in every study.

    Examples
    --------
    >>> u = error_cost(-5, -1)
    >>> u.kind, u.u01, u.u10
    ('cost', -5.0, -1.0)
    """

    name: str
    kind: str
    u01: float | None = None
    u10: float | None = None
    threshold: object = None
    positive: object = None
    func: Callable | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.name


def accuracy() -> Utility:
    """The accuracy utility ``U(φ, x, y) = I{φ = y}``.

    ``U_k`` is then the share of correct predictions in study k (Parmigiani 2023, sec. 4.1).

    Returns
    -------
    Utility
        Of kind ``'accuracy'``.

    See Also
    --------
    error_cost : Different utilities for the two errors.
    brier : A proper score of the class probabilities.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> accuracy().name
    'accuracy'
    """
    return Utility("accuracy", "accuracy")


def error_cost(u01: float, u10: float, *, threshold=None, positive=None) -> Utility:
    """The two-error utility ``U = u01·I{φ<y} + u10·I{φ>y}`` (Parmigiani 2023, eq. 3).

    Parameters
    ----------
    u01 : float
        Utility (``<= 0``) of predicting 0 when ``y = 1`` (a missed positive).
    u10 : float
        Utility (``<= 0``) of predicting 1 when ``y = 0`` (a false alarm).
    threshold : None, float, {'bayes', 'empirical'} or callable
        How the user turns risk scores into actions (see :class:`Utility`). The Bayes threshold
        ``u10/(u01+u10)`` follows from maximizing ``E_π U`` (sec. 3.2) with
        ``π(y=1|x) = p``: predicting 1 gives ``(1−p)·u10``, predicting 0 gives ``p·u01``.
    positive : label, optional
        Class coded 1 (default: the largest label).

    Returns
    -------
    Utility
        ``U_k = u01·f01_k + u10·f10_k`` (eq. 4).

    See Also
    --------
    optimal_threshold : The user's threshold on a risk score.
    accuracy : Both errors cost the same.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> error_cost(-5, -1).name
    'cost(u01=-5, u10=-1)'
    """
    u01 = check_float(u01, "u01", max_value=0.0)
    u10 = check_float(u10, "u10", max_value=0.0)
    if u01 == 0 and u10 == 0:
        raise ParameterError("`u01`, `u10`: at least one error must have a negative utility; "
                             "got both 0.")
    if threshold is not None and not callable(threshold):
        if isinstance(threshold, str):
            check_choice(threshold, "threshold", ("bayes", "empirical"))
        else:
            threshold = check_float(threshold, "threshold", min_value=0.0, max_value=1.0)
    name = f"cost(u01={number(u01, 6, grouping=False)}, u10={number(u10, 6, grouping=False)})"
    if threshold is not None:
        tname = threshold if isinstance(threshold, (str, float)) else "user π"
        name += f" @ {tname}"
    return Utility(name, "cost", u01=u01, u10=u10, threshold=threshold, positive=positive)


def squared() -> Utility:
    """The squared-error utility ``U = −(y − φ)²``.

    ``−U_k`` is then study k's mean squared error (Parmigiani 2023, sec. 3.2).

    Returns
    -------
    Utility
        Of kind ``'squared'``.

    See Also
    --------
    absolute : Minus the absolute error.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> squared().kind
    'squared'
    """
    return Utility("squared", "squared")


def absolute() -> Utility:
    """The absolute-error utility ``U = −|y − φ|``.

    ``−U_k`` is then study k's mean absolute error (Parmigiani 2023, sec. 3.2).

    Returns
    -------
    Utility
        Of kind ``'absolute'``.

    See Also
    --------
    squared : Minus the squared error.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> absolute().kind
    'absolute'
    """
    return Utility("absolute", "absolute")


def log_score() -> Utility:
    """The logarithmic score ``U = log p_φ(y)`` of the rule's class probabilities.

    Predictions are probability distributions on ``Y`` (Parmigiani 2023, sec. 2.1).
    Probabilities are floored at 1e-15.

    Returns
    -------
    Utility
        Of kind ``'log'``.

    See Also
    --------
    brier : A bounded proper score.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> log_score().name
    'log'
    """
    return Utility("log", "log")


def brier() -> Utility:
    """Minus the Brier score ``U = −½ Σ_c (p_φ(c) − I{y = c})²`` of the class probabilities.

    Halved so that for two classes it is ``−(p − y)²`` with ``p`` the probability of the
    positive class (Brier 1950). A proper scoring rule like :func:`log_score`, but bounded in
    [−1, 0], so one overconfident unit cannot dominate ``U_k``.

    Returns
    -------
    Utility
        Of kind ``'brier'``.

    See Also
    --------
    log_score : The unbounded proper score.
    accuracy : The share of correct labels.

    References
    ----------
    .. [1] Brier, G. W. (1950). Verification of Forecasts Expressed in Terms of Probability.
       Monthly Weather Review, 78(1), 1–3.
    .. [2] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> brier().name
    'brier'
    """
    return Utility("brier", "brier")


def custom_utility(func: Callable, name: str = "custom") -> Utility:
    """A user's own utility ``U(pred, X, y)``, vectorized.

    It receives the arrays of a set of units and returns one utility per unit (Parmigiani
    2023, eq. 1).

    Parameters
    ----------
    func : callable
        ``func(pred, X, y)`` returning an array of shape (n,).
    name : str, default 'custom'
        The utility's name in tables.

    Returns
    -------
    Utility
        Of kind ``'callable'``.

    See Also
    --------
    parse_utility : Built-in utilities by name.

    Examples
    --------
    >>> u = custom_utility(lambda pred, X, y: -(y - pred) ** 4, "quartic")
    >>> u.name, u.kind
    ('quartic', 'callable')
    """
    if not callable(func):
        raise ParameterTypeError(f"`func` must be callable; got {type(func).__name__}.")
    return Utility(name, "callable", func=func)


def parse_utility(spec, *, threshold=None, positive=None, name: str = "utility") -> Utility:
    """A :class:`Utility` from its name, or as given.

    Parameters
    ----------
    spec : str, Utility or callable
        ``'accuracy'``, ``'cost:u01,u10'`` (two numbers <= 0, e.g. ``'cost:-5,-1'``),
        ``'squared'``, ``'absolute'``, ``'log'``, ``'brier'``, a Utility (returned as it is) or a
        callable ``U(pred, X, y)``.
    threshold : None, float, {'bayes', 'empirical'} or callable
        For ``'cost:u01,u10'``: see :func:`error_cost`.
    positive : label, optional
        For ``'cost:u01,u10'``: the class coded 1.
    name : str, default 'utility'
        The parameter named in error messages (the caller's parameter that holds ``spec``).

    Returns
    -------
    Utility
        The utility.

    Raises
    ------
    ParameterError
        An unknown name, or a cost utility that is not two numbers <= 0.

    See Also
    --------
    error_cost, accuracy, squared, absolute, log_score, brier : The built-in utilities.

    Examples
    --------
    >>> parse_utility("cost:-2,-1").u01
    -2.0
    """
    if isinstance(spec, Utility):
        return spec
    if callable(spec):
        return custom_utility(spec, getattr(spec, "__name__", "custom"))
    if not isinstance(spec, str):
        raise ParameterTypeError(f"`{name}` must be a name, a Utility or a callable; got "
                                 f"{type(spec).__name__}.")
    s = spec.strip().lower()
    if s.startswith("cost"):
        try:
            _, rest = s.split(":", 1)
            a, b = (float(v) for v in rest.split(","))
        except ValueError:
            raise ParameterError(f"`{name}`: write the cost utility as 'cost:u01,u10' with two "
                                 f"non-positive numbers, e.g. 'cost:-5,-1'; got {spec!r}.") from None
        if not (np.isfinite(a) and np.isfinite(b)) or a > 0 or b > 0 or (a == 0 and b == 0):
            raise ParameterError(f"`{name}`: the cost utility 'cost:u01,u10' takes the "
                                 "utilities of the two errors, both <= 0 and not both 0 (e.g. "
                                 f"'cost:-5,-1'); got {spec!r}.")
        return error_cost(a, b, threshold=threshold, positive=positive)
    simple = {"accuracy": accuracy, "squared": squared, "absolute": absolute, "log": log_score,
              "brier": brier}
    if s not in simple:
        raise ParameterError(f"`{name}` must be one of 'accuracy', 'cost:u01,u10', 'squared', "
                             f"'absolute', 'log', 'brier' or a callable; got {spec!r}.")
    return simple[s]()


def check_utility_data(d: MultiStudyData, u: Utility, *, name: str = "utility") -> None:
    """Refuse a utility that cannot score these units (instead of a silent constant).

    The accuracy utility compares labels: with a continuous ``y_true`` or ``y_pred`` (numbers
    or risk scores) ``I{φ = y}`` is 0 for every unit and ``U_k = 0`` in every study. The cost
    utility needs a binary outcome.

    Parameters
    ----------
    d : MultiStudyData
        The units.
    u : Utility
        The utility to check.
    name : str, default 'utility'
        The parameter named in error messages.

    Returns
    -------
    None
        When the utility can score the units.

    Raises
    ------
    DataError
        Naming ``name`` and the column at fault.

    See Also
    --------
    parse_utility : A utility from its name.

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> d = from_arrays([0.5, 1.5], [0.4, 1.2], ["a", "b"])
    >>> check_utility_data(d, squared())
    >>> try:
    ...     check_utility_data(d, accuracy())
    ... except DataError as exc:
    ...     print(str(exc)[:48])
    `utility`: accuracy compares labels, but column
    """
    if u.kind == "accuracy":
        for col, v in (("y_pred", d.pred), ("y_true", d.y)):
            if not _is_discrete(v):
                vals = np.unique(v)
                raise DataError(
                    f"`{name}`: accuracy compares labels, but column `{col}` holds continuous "
                    f"values ({vals.size} distinct, e.g. {number(float(vals[len(vals) // 2]), 4)}), so "
                    "U_k would be 0 in every study; use 'squared' or 'absolute' for numbers, or "
                    "'cost:u01,u10' with a threshold for risk scores.")
    elif u.kind == "cost":
        try:
            _positive(d, u.positive)
        except DataError as exc:
            raise DataError(f"`{name}`: {exc}") from None


# -- unit-level utilities --------------------------------------------------------------------

def _positive(d: MultiStudyData, positive):
    values = pd.unique(np.concatenate([np.asarray(d.y, object), np.asarray(d.pred, object)]))
    try:
        labels = sorted(values)
    except TypeError:
        labels = sorted(values, key=str)
    if positive is None:
        if len(labels) > 2:
            raise DataError(f"the cost utility (eq. 3) needs a binary outcome; found "
                            f"{len(labels)} labels {labels[:6]}.")
        return labels[-1], labels
    if positive not in labels and (d.classes is None or positive not in d.classes):
        raise ParameterError(f"`positive`: {positive!r} is not a label of the data ({labels}).")
    return positive, labels


def _positive_score(d: MultiStudyData, positive) -> np.ndarray:
    if d.proba is None or d.classes is None:
        raise DataError("a threshold on risk scores needs class probabilities (`proba_*` "
                        "columns or an estimator with predict_proba); none were given.")
    classes = list(d.classes)
    if positive not in classes:
        # proba columns named '0'/'1' while labels are ints (or the reverse)
        matches = [i for i, c in enumerate(classes) if str(c) == str(positive)]
        if not matches:
            raise DataError(f"no probability column for the positive class {positive!r}; "
                            f"classes are {classes}.")
        return d.proba[:, matches[0]]
    return d.proba[:, classes.index(positive)]


def optimal_threshold(score, y, u01: float, u10: float, *, method: str = "bayes",
                      user_probability: Callable | None = None) -> float:
    """The user's optimal threshold ``δ*`` on a risk score (Parmigiani 2023, secs. 3.2, 4.2.1).

    Parameters
    ----------
    score : array-like of shape (n,)
        The rule's probability of ``y = 1``.
    y : array-like of shape (n,) of {0, 1}
        Outcomes (used by ``method='empirical'`` only).
    u01, u10 : float
        Utilities (``<= 0``) of a missed positive and of a false alarm (eq. 3).
    method : {'bayes', 'empirical'}
        How the threshold is computed. ``'bayes'``: the user takes the score as their
        probability ``π(y=1|x)`` and predicts 1 iff ``(1−p)·u10 ≥ p·u01``, i.e.
        ``p ≥ u10/(u01+u10)``. ``'empirical'``: the threshold maximizing the empirical mean
        utility ``(1/n) Σ U(I{s_i ≥ t}, y_i)`` over the observed scores (the user's empirical
        probability model).
    user_probability : callable, optional
        The user's own model ``π(p)`` mapping the score to a probability (increasing); the
        Bayes threshold is then mapped back to the score scale by bisection.

    Returns
    -------
    float
        Predict 1 iff ``score >= threshold``.

    See Also
    --------
    error_cost : The utility whose ``threshold`` this computes.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> optimal_threshold([0.2, 0.7], [0, 1], -1, -1)
    0.5
    """
    check_choice(method, "method", ("bayes", "empirical"))
    u01 = check_float(u01, "u01", max_value=0.0)
    u10 = check_float(u10, "u10", max_value=0.0)
    p_star = u10 / (u01 + u10)
    if method == "bayes":
        if user_probability is None:
            return float(p_star)
        lo, hi = 0.0, 1.0  # smallest score s with π(s) >= p*
        if user_probability(hi) < p_star:
            return float(np.nextafter(1.0, 2.0))
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if user_probability(mid) >= p_star:
                hi = mid
            else:
                lo = mid
        return float(hi)
    s = np.asarray(score, float)
    yy = np.asarray(y).astype(int)
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], yy[order]
    # predicting 1 for the top j scores: false alarms = #y=0 among them, misses = #y=1 below
    tp = np.concatenate([[0], np.cumsum(y_sorted)])
    fp = np.concatenate([[0], np.cumsum(1 - y_sorted)])
    misses = tp[-1] - tp
    util = u01 * misses + u10 * fp
    # only cut between distinct scores
    valid = np.ones(util.size, bool)
    valid[1:-1] = s_sorted[1:] != s_sorted[:-1]
    j = int(np.flatnonzero(valid)[np.argmax(util[valid])])
    if j == 0:
        return float(np.nextafter(s_sorted[0], np.inf))
    return float(s_sorted[j - 1])


def unit_utilities(data, utility="accuracy", **kwargs) -> tuple[np.ndarray, float | None]:
    """Per-unit utilities ``U(δ*(φ(x_ik)), x_ik, y_ik)`` in the (study-sorted) unit order.

    The terms of the study averages of :func:`study_utilities` (Parmigiani 2023, eq. 1).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        The rule's predictions on the units of every study.
    utility : str, Utility or callable, default 'accuracy'
        See :func:`parse_utility`.
    **kwargs
        ``model``, ``repeat``, ``subgroup``: see :func:`study_utilities`.

    Returns
    -------
    values : ndarray of shape (n,)
        One utility per unit, units grouped by study.
    threshold : float or None
        The threshold used on the risk score (``None`` when the rule's labels are used).

    See Also
    --------
    study_utilities : Their average in each study.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> values, threshold = unit_utilities(from_arrays([1, 0, 1], [1, 1, 1], ["a", "a", "b"]))
    >>> values.tolist(), threshold
    ([1.0, 0.0, 1.0], None)
    """
    d = as_study_data(data, **kwargs)
    u = parse_utility(utility)
    return _unit_values(d, u)


def _binary_decisions(d: MultiStudyData, u: Utility):
    positive, _ = _positive(d, u.positive)
    y1 = d.y == positive
    thr = None
    if u.threshold is None:
        phi1 = d.pred == positive
    else:
        score = _positive_score(d, positive)
        if isinstance(u.threshold, float):
            thr = u.threshold
        elif u.threshold == "empirical":
            thr = optimal_threshold(score, y1, u.u01, u.u10, method="empirical")
        elif u.threshold == "bayes":
            thr = optimal_threshold(score, y1, u.u01, u.u10)
        else:
            thr = optimal_threshold(score, y1, u.u01, u.u10, user_probability=u.threshold)
        phi1 = score >= thr
    return np.asarray(phi1, bool), np.asarray(y1, bool), thr, positive


def _unit_values(d: MultiStudyData, u: Utility) -> tuple[np.ndarray, float | None]:
    if u.kind == "accuracy":
        check_utility_data(d, u)
        return (d.y == d.pred).astype(float), None
    if u.kind == "cost":
        phi1, y1, thr, _ = _binary_decisions(d, u)
        return u.u01 * (~phi1 & y1) + u.u10 * (phi1 & ~y1), thr
    if u.kind in ("squared", "absolute"):
        try:
            diff = d.y.astype(float) - d.pred.astype(float)
        except (TypeError, ValueError):
            raise DataError(f"the {u.kind} utility needs numeric outcomes and predictions.") from None
        with np.errstate(over="ignore", invalid="ignore"):
            values = -(diff**2) if u.kind == "squared" else -np.abs(diff)
        if not np.all(np.isfinite(values)):
            bad = np.flatnonzero(~np.isfinite(values))
            raise DataError(f"the {u.kind} utility overflows: |y_true - y_pred| reaches "
                            f"{number(float(np.abs(diff[bad[0]])))} (rows {d.row[bad][:5].tolist()}); "
                            "rescale y_true and y_pred.")
        return values, None
    if u.kind in ("log", "brier"):
        if d.proba is None:
            raise DataError(f"the {'log' if u.kind == 'log' else 'Brier'} score needs class "
                            "probabilities (`proba_*` columns or an estimator with "
                            "predict_proba); none were given.")
        classes = [str(c) for c in d.classes]
        idx = pd.Index(classes).get_indexer(pd.Series(d.y).astype(str).to_numpy())
        if (idx < 0).any():
            bad = d.y[idx < 0][0]
            raise DataError(f"outcome {bad!r} has no probability column; classes are {classes}.")
        if u.kind == "brier":
            onehot = np.zeros(d.proba.shape)
            onehot[np.arange(d.n), idx] = 1.0
            return -0.5 * np.sum((d.proba - onehot) ** 2, axis=1), None
        p = d.proba[np.arange(d.n), idx]
        return np.log(np.maximum(p, _LOG_FLOOR)), None
    values = np.asarray(u.func(d.pred, d.X, d.y), float)
    if values.shape != (d.n,):
        raise DataError(f"the utility {u.name!r} must return one number per unit ({d.n}); got "
                        f"shape {values.shape}.")
    if not np.all(np.isfinite(values)):
        raise DataError(f"the utility {u.name!r} returned NaN or inf.")
    return values, None


def _group_mean(values: np.ndarray, codes: np.ndarray, K: int) -> np.ndarray:
    return np.bincount(codes, weights=values, minlength=K) / np.bincount(codes, minlength=K)


# -- per-study summary -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StudyUtilities(Result):
    """Average utilities ``U_k`` of a rule in each study (Parmigiani 2023, eqs. 1–2).

    Attributes
    ----------
    studies : tuple
        Study labels, in the order of every array and matrix.
    n : ndarray of int
        Units per study ``n_k``.
    utility : ndarray
        ``U_k``.
    se : ndarray
        ``sd_k / sqrt(n_k)`` (plug-in standard error of the study mean).
    utility_name : str
        The utility (:attr:`Utility.name`).
    threshold : float or None
        Decision threshold used on the risk score, if any.
    table : DataFrame
        One row per study: ``study, n, utility, se`` and, for binary outcomes, the confusion
        frequencies ``f00, f01, f10, f11`` (``f01``: φ=0, y=1) with ``sensitivity``,
        ``specificity`` and ``prevalence`` (sec. 4.1).

    See Also
    --------
    study_utilities : Computes it.
    epsilon_test : Is the rule ε-replicable, with an upper confidence bound of the spread?
    dominance : Compare two rules' utilities.

    Examples
    --------
    >>> from replikit.multistudy import from_arrays, study_utilities
    >>> su = study_utilities(from_arrays([1, 1, 0, 0], [1, 0, 0, 0], ["a", "a", "b", "b"]))
    >>> su.smallest_tolerance(), su.is_replicable(0.6)
    (0.5, True)
    """

    studies: tuple
    n: np.ndarray
    utility: np.ndarray
    se: np.ndarray
    utility_name: str
    threshold: float | None
    table: pd.DataFrame = field(repr=False)

    @property
    def title(self) -> str:
        return f"Average utility per study ({utility_words(self.utility_name)})"

    @property
    def K(self) -> int:
        """The number of studies."""
        return len(self.studies)

    def matrix(self) -> pd.DataFrame:
        """The K×K matrix with element ``U_k − U_k'`` (Parmigiani 2023, sec. 3.2).

        Returns
        -------
        DataFrame
            Rows ``k`` and columns ``k'`` are the studies.
        """
        m = self.utility[:, None] - self.utility[None, :]
        return pd.DataFrame(m, index=list(self.studies), columns=list(self.studies))

    def relative_matrix(self) -> pd.DataFrame:
        """The K×K matrix ``2|U_k − U_k'| / |U_k + U_k'|`` (Def. 3.2).

        The absolute value in the denominator makes negative utilities, such as costs, give a
        non-negative ratio.

        Returns
        -------
        DataFrame
            Rows and columns are the studies.
        """
        return pd.DataFrame(_relative(self.utility), index=list(self.studies),
                            columns=list(self.studies))

    def smallest_tolerance(self, kind: str = "absolute") -> float:
        """The smallest tolerance ε for which the rule is ε-replicable (Defs. 3.1, 3.2).

        The observed maximum of noisy differences, biased upward;
        :func:`~replikit.multistudy.epsilon_test` gives an upper confidence bound and a
        bias-aware estimate.

        Parameters
        ----------
        kind : {'absolute', 'relative'}, default 'absolute'
            ``max |U_k − U_k'|`` (Def. 3.1) or ``max 2|U_k − U_k'| / |U_k + U_k'|`` (Def. 3.2).

        Returns
        -------
        float
            0 with a single study.
        """
        check_choice(kind, "kind", ("absolute", "relative"))
        if self.K < 2:
            return 0.0
        if kind == "absolute":
            return float(self.utility.max() - self.utility.min())
        return float(np.max(_relative(self.utility)))

    def smallest_epsilon(self, kind: str = "absolute") -> float:
        """Old name of :meth:`smallest_tolerance` (warns).

        Parameters
        ----------
        kind : {'absolute', 'relative'}, default 'absolute'
            See :meth:`smallest_tolerance`.

        Returns
        -------
        float
            :meth:`smallest_tolerance`.
        """
        warn_old_name("StudyUtilities.smallest_epsilon()", "StudyUtilities.smallest_tolerance()")
        return self.smallest_tolerance(kind)

    @renamed(epsilon="tolerance")
    def is_replicable(self, tolerance: float, kind: str = "absolute") -> bool:
        """Whether ``max_{k,k'} |U_k − U_k'| <= tolerance`` (Def. 3.1) or its relative form.

        Parameters
        ----------
        tolerance : float >= 0
            The tolerance ε of ε-replicability, on the utility's scale.
        kind : {'absolute', 'relative'}, default 'absolute'
            Def. 3.1 or Def. 3.2.

        Returns
        -------
        bool
            The observed differences are all within ``tolerance``.
        """
        eps = check_float(tolerance, "tolerance", min_value=0.0)
        return bool(self.smallest_tolerance(kind) <= eps)

    def to_frame(self) -> pd.DataFrame:
        """The table: one row per study.

        Returns
        -------
        DataFrame
            ``study, n, utility, se`` and, for binary outcomes, the confusion frequencies.
        """
        return self.table.copy()

    def plot(self, ax=None):
        """``U_k`` per study with ``U_k ± 1.96 SE`` bars.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_study_utilities

        return plot_study_utilities(self, ax=ax)

    def __str__(self) -> str:
        head = self.title
        if self.threshold is not None:
            head += f", threshold {number(self.threshold, 4)}"
        lines = [head]
        for s, n, u, se in zip(self.studies, self.n, self.utility, self.se, strict=True):
            lines.append(f"  {str(s):>12}  n = {number(int(n)):>7}  U = {number(u, 4)} "
                         f"(SE {number(se, 3)})")
        lines.append(f"  smallest tolerance ε (observed): absolute "
                     f"{number(self.smallest_tolerance('absolute'), 4)}, relative "
                     f"{number(self.smallest_tolerance('relative'), 4)}")
        return "\n".join(lines)


def _relative(U: np.ndarray) -> np.ndarray:
    num = 2.0 * np.abs(U[:, None] - U[None, :])
    den = np.abs(U[:, None] + U[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(num == 0, 0.0, num / den)
    return out


def study_utilities(data, utility="accuracy", *, model=None, repeat: int | None = 0,
                    subgroup=None) -> StudyUtilities:
    """Average utility ``U_k`` of a fixed rule in every study (Parmigiani 2023, eqs. 1, 2, 4).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        The rule's predictions on the units of every study.
    utility : str, Utility or callable, default 'accuracy'
        See :func:`parse_utility`.
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.
    subgroup : mask, column name or callable, optional
        Restrict to ``x ∈ X*`` (local replicability, sec. 7.2).

    Returns
    -------
    StudyUtilities
        ``U_k``, their standard errors and the confusion frequencies.

    See Also
    --------
    assess : The whole analysis of a fixed rule.
    epsilon_test : The test of ε-replicability of these utilities.
    unit_utilities : The utility of every unit.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Notes
    -----
    ``U_k = (1/n_k) Σ_i U(δ*(φ(x_ik)), x_ik, y_ik)``. For the cost utility the table also shows
    ``U_k = u01·f01_k + u10·f10_k`` (eq. 4) and its decomposition
    ``f01 = π_k(1 − sens_k)``, ``f10 = (1 − π_k)(1 − spec_k)`` with prevalence ``π_k``.

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> d = from_arrays([1, 1, 0, 0], [1, 0, 0, 0], ["a", "a", "b", "b"])
    >>> study_utilities(d).utility.tolist()
    [0.5, 1.0]
    """
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup)
    u = parse_utility(utility)
    values, thr = _unit_values(d, u)
    return _summarize(d, u, values, thr)


def _summarize(d: MultiStudyData, u: Utility, values: np.ndarray, thr) -> StudyUtilities:
    K = d.K
    n = d.sizes
    U = _group_mean(values, d.codes, K)
    sq = np.bincount(d.codes, weights=(values - U[d.codes]) ** 2, minlength=K)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(sq / np.maximum(n - 1, 1))
    se = sd / np.sqrt(n)
    table = pd.DataFrame({"study": list(d.studies), "n": n, "utility": U, "se": se})
    binary = u.kind in ("cost", "accuracy")
    if binary:
        try:
            if u.kind == "cost":
                phi1, y1, _, positive = _binary_decisions(d, u)
            else:
                positive, labels = _positive(d, None)
                phi1, y1 = d.pred == positive, d.y == positive
        except DataError:
            binary = False
    if binary:
        cells = {"f00": ~phi1 & ~y1, "f01": ~phi1 & y1, "f10": phi1 & ~y1, "f11": phi1 & y1}
        for name, m in cells.items():
            table[name] = np.bincount(d.codes, weights=m.astype(float), minlength=K) / n
        with np.errstate(invalid="ignore", divide="ignore"):
            table["prevalence"] = table["f01"] + table["f11"]
            table["sensitivity"] = table["f11"] / table["prevalence"]
            table["specificity"] = table["f00"] / (table["f00"] + table["f10"])
    return StudyUtilities(tuple(d.studies), n, U, se, u.name, thr, table)
