"""Numbers in words a reader sees: sentences, verdicts, captions, tables and the command line.

One place decides how a number is written, so a verdict, the report and the terminal agree:

* :func:`number` — significant digits in plain notation (``1,110``, ``0.0213``, never
  ``1.11e+03``) for sentences and captions; an exponent only outside ``[1e-4, 1e15)``;
* :func:`pvalue` — ``0.031``, ``< 0.001`` (sentences) or four decimals (tables);
* :func:`interval` — ``[0.12, 0.31]``.

NaN and None are written ``–``. Nothing here imports numpy: the command line's ``--help`` and
``--version`` stay fast.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["MISSING", "number", "pvalue", "interval", "percent"]

#: How a missing number (None, NaN) is written.
MISSING = "–"


def _real(value: Any) -> float | None:
    """``value`` as a float when it is a real number (not a bool), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    try:  # numpy scalars that are not registered as numbers.Real
        import numpy as np
    except ImportError:  # pragma: no cover
        return None
    if isinstance(value, np.bool_):
        return None
    if isinstance(value, np.number):
        return float(value)
    return None


def number(value: Any, digits: int = 3, *, grouping: bool = True) -> str:
    """``value`` to ``digits`` significant digits in plain notation.

    Integers (and floats with no fractional part at or above ``10 ** digits``) are written
    whole, with thousands separators when ``grouping``; other numbers keep ``digits``
    significant digits without trailing zeros. Only numbers below ``1e-4`` or from ``1e15`` up
    take an exponent. NaN and None are ``–``; anything that is not a number is ``str(value)``.

    Parameters
    ----------
    value : float, int or None
        The number.
    digits : int, default 3
        Significant digits.
    grouping : bool, default True
        Thousands separators (``1,110``); tables on the command line leave them out.

    Returns
    -------
    str
        The number as text.

    See Also
    --------
    pvalue : A p-value in words.
    interval : An interval ``[low, high]``.

    Examples
    --------
    >>> [number(v) for v in (1110.3, 0.021345, 132, 13440, -0.5, 7.2e-9, float("nan"))]
    ['1,110', '0.0213', '132', '13,440', '-0.5', '7.2e-09', '–']
    >>> number(5795.3, 4, grouping=False)
    '5795'
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"{int(value):,}" if grouping else str(int(value))
    v = _real(value)
    if v is None:
        return MISSING if value is None else str(value)
    if math.isnan(v):
        return MISSING
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    a = abs(v)
    if not 1e-4 <= a < 1e15:
        return f"{v:.{digits}g}"  # 7.2e-09
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    text = f"{v:,.{decimals}f}" if grouping else f"{v:.{decimals}f}"
    if "." in text:  # significant digits only: 0.28, not 0.2800
        text = text.rstrip("0").rstrip(".")
    return "0" if float(text.replace(",", "")) == 0 else text


def pvalue(value: Any, *, table: bool = False) -> str:
    """A p-value in words: ``0.031``, ``0.0012``, ``< 0.001``; in a table four decimals.

    Parameters
    ----------
    value : float
        The p-value.
    table : bool, default False
        Four decimals (``0.0310``) and three significant digits in scientific form below
        ``1e-4``, as the command line's tables print them.

    Returns
    -------
    str
        The p-value as text (``–`` when missing).

    See Also
    --------
    number : A number in plain notation.

    Examples
    --------
    >>> pvalue(0.03104), pvalue(0.00123), pvalue(2e-9), pvalue(float("nan"))
    ('0.031', '0.0012', '< 0.001', '–')
    >>> pvalue(7.2e-9, table=True), pvalue(0.31024, table=True)
    ('7.20e-09', '0.3102')
    """
    v = _real(value)
    if v is None or not math.isfinite(v):
        return MISSING
    if table:
        return f"{v:.2e}" if 0 < v < 1e-4 else f"{v:.4f}"
    if v < 0.001:
        return "< 0.001"
    return number(v, 2)


def interval(low: Any, high: Any, digits: int = 3, *, grouping: bool = True) -> str:
    """``[low, high]`` with :func:`number`; ``–`` when either end is missing.

    Parameters
    ----------
    low, high : float
        The ends.
    digits : int, default 3
        Significant digits of each end.
    grouping : bool, default True
        Thousands separators.

    Returns
    -------
    str
        The interval as text.

    See Also
    --------
    number : A number in plain notation.

    Examples
    --------
    >>> interval(0.1234, 1170.2)
    '[0.123, 1,170]'
    >>> interval(float("-inf"), 0.5)
    '[-∞, 0.5]'
    """
    lo, hi = _real(low), _real(high)
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return MISSING
    return f"[{number(lo, digits, grouping=grouping)}, {number(hi, digits, grouping=grouping)}]"


def percent(value: Any, digits: int = 2) -> str:
    """A proportion as a percentage: ``0.0523`` → ``'5.2%'``.

    Parameters
    ----------
    value : float
        A proportion.
    digits : int, default 2
        Significant digits.

    Returns
    -------
    str
        The percentage (``–`` when missing).

    Examples
    --------
    >>> percent(0.0523), percent(0.95), percent(1.0)
    ('5.2%', '95%', '100%')
    """
    v = _real(value)
    if v is None or math.isnan(v):
        return MISSING
    return f"{number(100 * v, digits)}%"
