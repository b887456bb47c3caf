"""Keyword arguments that left a public signature, accepted for one more release.

The library's errors name its own parameters in backticks and the command line turns them into
flags, so the ``option=``-style keywords that once told a function which flag to name are no
longer needed. :func:`dropped` accepts them with a :class:`FutureWarning` (and returns their
values, so that an old caller's messages still name what it asked for) until replikit 0.3.
"""

from __future__ import annotations

import warnings

from .._compat import REMOVED_IN

__all__ = ["dropped"]


def dropped(kwargs: dict, allowed, where: str, *, stacklevel: int = 3) -> dict:
    """The old keywords in ``kwargs`` (each warned about), or a TypeError for an unknown one.

    Parameters
    ----------
    kwargs : dict
        The ``**old`` keywords a function received.
    allowed : iterable of str
        The keywords it used to take.
    where : str
        The function, for the message (``'make_models()'``).
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (3: the caller of the function that calls this).

    Returns
    -------
    dict
        Old keyword -> value.

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     dropped({"option": "--models"}, ("option",), "make_models()")
    {'option': '--models'}
    >>> type(w[0].message).__name__
    'FutureWarning'
    """
    allowed = tuple(allowed)
    unknown = [k for k in kwargs if k not in allowed]
    if unknown:
        raise TypeError(f"{where} got an unexpected keyword argument {unknown[0]!r}")
    for name in kwargs:
        warnings.warn(f"`{name}` of {where} is no longer needed (its errors name the parameter, "
                      "and the command line names the flag); it will stop working in replikit "
                      f"{REMOVED_IN}.", FutureWarning, stacklevel=stacklevel)
    return dict(kwargs)
