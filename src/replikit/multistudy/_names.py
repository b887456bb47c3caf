"""Words for the multistudy package: utilities as a reader says them, and old names that warn.

Figures, sentences and verdicts name a utility in words (``'minus the squared error'``, not
``'squared'``); :func:`utility_words` is the one place that says how. :func:`warn_old_name`
is the warning of a renamed method or property (parameters and fields use
:mod:`replikit._compat`).
"""

from __future__ import annotations

from .._compat import _warn

__all__ = ["utility_words", "warn_old_name", "dropped", "PAPER"]

#: How the source paper is cited in words a user reads.
PAPER = "Parmigiani (2023)"

_WORDS = {
    "accuracy": "accuracy",
    "squared": "minus the squared error",
    "absolute": "minus the absolute error",
    "log": "log score",
    "brier": "minus the Brier score",
}


def utility_words(name: str) -> str:
    """A utility's name (:attr:`Utility.name`) as a reader says it.

    Examples
    --------
    >>> utility_words("squared"), utility_words("cost(u01=-5, u10=-1)")
    ('minus the squared error', 'error cost (u01=-5, u10=-1)')
    """
    if name in _WORDS:
        return _WORDS[name]
    if name.startswith("cost("):
        return "error cost " + name[len("cost"):]
    return f"utility {name}"


def warn_old_name(old: str, new: str) -> None:
    """Warn (FutureWarning, at the caller's caller) that ``old`` is now ``new``."""
    _warn(f"`{old}` is now `{new}`", stacklevel=3)


def dropped(name: str, why: str, *, stacklevel: int = 2):
    """Decorator: accept the keyword ``name`` no longer in the signature, ignore it and warn.

    For parameters that only told a function how to name things in messages (``options=``,
    ``option=``): messages now name the parameters, and the command line its flags. Apply it
    under :func:`replikit._compat.renamed` with ``stacklevel=3``, or alone with 2.
    """
    import functools

    def decorate(func):
        where = f"{func.__qualname__}()"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if name in kwargs:
                kwargs.pop(name)
                _warn(f"`{name}` is no longer a parameter of {where} ({why})",
                      stacklevel=stacklevel)
            return func(*args, **kwargs)

        return wrapper

    return decorate
