"""Exceptions raised by replikit.

Every error a user can cause derives from :class:`ReplikitError`. Each subclass also derives
from the built-in exception a Python user would expect (``ValueError`` for bad values,
``TypeError`` for wrong types, ``FileNotFoundError`` for missing files), so ``except ValueError``
keeps working. Messages name the parameter or column, what was expected and what was found.
"""

from __future__ import annotations

import warnings

__all__ = [
    "ReplikitError",
    "DataError",
    "ModelFitError",
    "ParameterError",
    "ParameterTypeError",
    "ConvergenceError",
    "StoreError",
    "InputFileError",
    "OutputError",
    "OutputExistsError",
    "NotApplicableError",
    "ResourceLimitError",
    "ValidityWarning",
    "ReplikitWarning",
    "warn",
]


class ReplikitError(Exception):
    """Base class of every error replikit raises on purpose."""


class DataError(ReplikitError, ValueError):
    """A table or array does not have the expected columns, dtypes or values."""


class ModelFitError(DataError):
    """A model failed to fit or predict on some split; ``model`` names it, so a caller with
    several models (the audit) can leave that one out and say why."""

    def __init__(self, message: str, model: str | None = None):
        super().__init__(message)
        self.model = model


class ParameterError(ReplikitError, ValueError):
    """A parameter has a value outside its allowed set or range."""


class ParameterTypeError(ReplikitError, TypeError):
    """A parameter has the wrong type."""


class ConvergenceError(ReplikitError, RuntimeError):
    """An iterative estimator (e.g. REML) did not converge."""


class StoreError(ReplikitError, RuntimeError):
    """A result store is inconsistent with the requested run."""


class InputFileError(ReplikitError, FileNotFoundError):
    """An input file is missing, empty or unreadable."""


class OutputError(ReplikitError, OSError):
    """An output path cannot be written (a directory where a file is expected, no permission)."""


class OutputExistsError(OutputError, FileExistsError):
    """An output file exists and replacing it was not asked for."""


class NotApplicableError(ReplikitError, ValueError):
    """An analysis does not apply to these data (one study where it needs several, a
    classification target where it needs a continuous one, ...).

    ``advice`` says what the user can do; the audit reports the section as skipped with both.
    """

    def __init__(self, message: str, advice: str = "") -> None:
        super().__init__(message)
        self.advice = advice


class ResourceLimitError(ReplikitError, MemoryError):
    """The work asked for would need more memory than the machine has available; raised before
    the allocation (see :func:`replikit._memory.check_memory`), naming the parameter or input
    to reduce, so that a too-large job stops at once instead of swapping."""


class ReplikitWarning(UserWarning):
    """Base class of replikit's warnings."""


class ValidityWarning(ReplikitWarning):
    """A statistical procedure is known to be invalid in the way it is being used."""


def warn(message: str, category: type[Warning] = ReplikitWarning, stacklevel: int = 3) -> None:
    """Emit a replikit warning pointing at the caller's caller."""
    warnings.warn(message, category, stacklevel=stacklevel)
