"""Words for the multistudy package: utilities as a reader says them, and old names that warn.

Figures, sentences and verdicts name a utility in words (``'minus the squared error'``, not
``'squared'``); :func:`utility_words` is the one place that says how. :func:`warn_old_name`
is the warning of a renamed method or property (parameters and fields use
:mod:`replikit._compat`).
"""

from __future__ import annotations

from .._compat import _warn

__all__ = ["utility_words", "warn_old_name", "PAPER"]

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
