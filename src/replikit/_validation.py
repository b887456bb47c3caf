"""Shared input validators. Each raises a :class:`~replikit.errors.ReplikitError` subclass whose
message names the parameter, what was expected and what was found."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import DataError, ParameterError, ParameterTypeError

__all__ = [
    "check_alternative",
    "check_confidence_level",
    "check_choice",
    "check_int",
    "check_float",
    "check_probability",
    "check_1d_array",
    "check_same_length",
    "lookalike_labels",
    "check_interval",
    "INTERVALS",
]

ALTERNATIVES = ("two-sided", "less", "greater")

#: The kinds of interval, one set of names for every ``interval=`` parameter and
#: ``--interval`` flag (each function accepts the subset that applies to its estimate).
INTERVALS: dict[str, str] = {
    "wald": "estimate ± z·SE (normal reference)",
    "t": "estimate ± t(df)·SE",
    "knha": "Knapp & Hartung (2003): t(k − p) with the adjusted variance",
    "mover": "Zou's (2007) method of variance estimates recovery, for a difference",
    "lee": "Lee's (1971) exact interval of R², random predictors",
    "lee_fixed": "Lee's (1971) exact interval of R², fixed predictors",
    "wilson": "Wilson's (1927) score interval of a proportion",
    "percentile": "bootstrap percentile interval",
    "basic": "basic (reverse-percentile) bootstrap interval",
    "bca": "bias-corrected and accelerated bootstrap interval (Efron 1987)",
    "jackknife": "jackknife interval",
    "qprofile": "Q-profile interval of τ² (Viechtbauer 2007)",
    "credible": "Bayesian credible interval",
}


def check_interval(value: Any, allowed: Sequence[str], name: str = "interval") -> str:
    """``value`` if it is one of the ``allowed`` kinds of :data:`INTERVALS`, else a
    ParameterError that lists them with what each is.

    Examples
    --------
    >>> check_interval("wald", ("wald", "knha"))
    'wald'
    """
    unknown = [a for a in allowed if a not in INTERVALS]
    if unknown:  # a programming error in replikit, not a user's
        raise ValueError(f"unknown interval kinds {unknown}; add them to INTERVALS")
    if value not in allowed:
        listed = "; ".join(f"{a!r} ({INTERVALS[a]})" for a in allowed)
        raise ParameterError(f"`{name}` must be one of: {listed}; got {value!r}.")
    return value


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """``value`` if it is one of ``choices``, else a ParameterError listing them."""
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ParameterError(f"`{name}` must be one of {listed}; got {value!r}.")
    return value


def check_alternative(alternative: str) -> str:
    if isinstance(alternative, str):
        alternative = alternative.lower()
    return check_choice(alternative, "alternative", ALTERNATIVES)


def check_confidence_level(confidence_level: float, name: str = "confidence_level") -> float:
    value = check_float(confidence_level, name)
    if not 0.0 < value < 1.0:
        raise ParameterError(f"`{name}` must be strictly between 0 and 1; got {confidence_level!r}.")
    return value


def check_int(value: Any, name: str, *, min_value: int | None = None,
              max_value: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(f"`{name}` must be an int; got {type(value).__name__} {value!r}.")
    value = int(value)
    if min_value is not None and value < min_value:
        raise ParameterError(f"`{name}` must be >= {min_value}; got {value}.")
    if max_value is not None and value > max_value:
        raise ParameterError(f"`{name}` must be <= {max_value}; got {value}.")
    return value


def check_float(value: Any, name: str, *, min_value: float | None = None,
                max_value: float | None = None, finite: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"`{name}` must be a number; got {type(value).__name__} {value!r}.")
    value = float(value)
    if finite and not np.isfinite(value):
        raise ParameterError(f"`{name}` must be finite; got {value}.")
    if min_value is not None and value < min_value:
        raise ParameterError(f"`{name}` must be >= {min_value}; got {value}.")
    if max_value is not None and value > max_value:
        raise ParameterError(f"`{name}` must be <= {max_value}; got {value}.")
    return value


def check_probability(value: Any, name: str, *, open_interval: bool = True) -> float:
    value = check_float(value, name)
    ok = 0.0 < value < 1.0 if open_interval else 0.0 <= value <= 1.0
    if not ok:
        bounds = "strictly between 0 and 1" if open_interval else "between 0 and 1"
        raise ParameterError(f"`{name}` must be {bounds}; got {value}.")
    return value


def check_1d_array(values: Any, name: str, *, dtype: type = float, min_size: int = 1,
                   allow_nan: bool = False) -> np.ndarray:
    """A 1-D numpy array of ``dtype`` with at least ``min_size`` elements and (by default) no NaN."""
    try:
        arr = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise DataError(f"`{name}` must be numeric; could not convert it ({exc}).") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DataError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    if arr.size < min_size:
        raise DataError(f"`{name}` must have at least {min_size} values; got {arr.size}.")
    if not allow_nan and np.issubdtype(arr.dtype, np.floating):
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise DataError(
                f"`{name}` must be finite; found {bad.size} NaN/inf value(s) at positions "
                f"{bad[:5].tolist()}."
            )
    return arr


def check_same_length(arrays: Iterable[tuple[str, Any]]) -> int:
    """All named arrays have the same length; return it."""
    lengths = {name: len(a) for name, a in arrays}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise DataError(f"inputs must have the same length: {desc}.")
    return next(iter(lengths.values()), 0)


def lookalike_labels(values) -> list[tuple]:
    """Groups of distinct text labels that read as the same number or differ only in case or in
    surrounding spaces (``'5'``, ``'05'``, ``'5.0'``; ``'a'``, ``'a '``) — kept apart as
    written, and worth a warning. Non-text values are ignored."""
    groups: dict = {}
    for v in values:
        if not isinstance(v, str):
            continue
        key: object = v.strip().casefold()
        try:
            f = float(key)
        except ValueError:
            pass
        else:
            if math.isfinite(f):
                key = ("number", f)
        groups.setdefault(key, []).append(v)
    return [tuple(sorted(g)) for g in groups.values() if len(g) > 1]
