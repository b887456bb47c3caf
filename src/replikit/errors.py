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
    """Base class of every error replikit raises on purpose.

    The message names the parameter (in backticks), column or file at fault, what was expected
    and what was found. On the command line it is one line on stderr and exit code 2, with the
    parameter shown as the command's flag.

    See Also
    --------
    DataError, ParameterError, NotApplicableError : The common subclasses.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> try:
    ...     meta_analysis([0.1, 0.2], [0.01, -0.01])
    ... except ReplikitError as exc:
    ...     print(type(exc).__name__)
    DataError
    """


class DataError(ReplikitError, ValueError):
    """A table or array does not have the expected columns, dtypes or values.

    See Also
    --------
    ParameterError : A parameter's value is wrong, not the data.

    Examples
    --------
    >>> issubclass(DataError, ValueError)
    True
    """


class ModelFitError(DataError):
    """A model failed to fit or predict on some split.

    Parameters
    ----------
    message : str
        What failed, where.
    model : str, optional
        The model's name, so a caller with several models (the audit) can leave that one out
        and say why.

    See Also
    --------
    DataError : Its base.

    Examples
    --------
    >>> ModelFitError("fit failed on fold 3", model="rf").model
    'rf'
    """

    def __init__(self, message: str, model: str | None = None):
        super().__init__(message)
        self.model = model


class ParameterError(ReplikitError, ValueError):
    """A parameter has a value outside its allowed set or range.

    See Also
    --------
    ParameterTypeError : A parameter of the wrong type.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> try:
    ...     meta_analysis([0.1, 0.2, 0.3], [0.01, 0.02, 0.01], tau2_method="XX")
    ... except ParameterError as exc:
    ...     print(str(exc))
    `tau2_method` must be one of 'FE', 'DL', 'HE', 'HS', 'SJ', 'ML', 'REML', 'PM'; got 'XX'.
    """


class ParameterTypeError(ReplikitError, TypeError):
    """A parameter has the wrong type.

    See Also
    --------
    ParameterError : A parameter of the right type with a wrong value.

    Examples
    --------
    >>> issubclass(ParameterTypeError, TypeError)
    True
    """


class ConvergenceError(ReplikitError, RuntimeError):
    """An iterative estimator (e.g. REML) did not converge.

    See Also
    --------
    ReplikitError : Its base.

    Examples
    --------
    >>> issubclass(ConvergenceError, RuntimeError)
    True
    """


class StoreError(ReplikitError, RuntimeError):
    """A result store is inconsistent with the requested run.

    See Also
    --------
    replikit.experiment.TaskStore : The store.

    Examples
    --------
    >>> issubclass(StoreError, RuntimeError)
    True
    """


class InputFileError(ReplikitError, FileNotFoundError):
    """An input file is missing, empty or unreadable.

    See Also
    --------
    OutputError : An output that cannot be written.

    Examples
    --------
    >>> from replikit.data import read_frame
    >>> try:
    ...     read_frame("no-such-file.csv")
    ... except FileNotFoundError as exc:
    ...     print(type(exc).__name__)
    InputFileError
    """


class OutputError(ReplikitError, OSError):
    """An output path cannot be written (a directory where a file is expected, no permission).

    See Also
    --------
    OutputExistsError : An output that exists and may not be replaced.

    Examples
    --------
    >>> issubclass(OutputError, OSError)
    True
    """


class OutputExistsError(OutputError, FileExistsError):
    """An output file exists and replacing it was not asked for.

    Nothing a user stored is replaced unless they ask (``overwrite=True``, ``--overwrite``).

    See Also
    --------
    OutputError : Its base.

    Examples
    --------
    >>> issubclass(OutputExistsError, FileExistsError)
    True
    """


class NotApplicableError(ReplikitError, ValueError):
    """An analysis does not apply to these data (one study where it needs several, a
    classification target where it needs a continuous one, ...).

    Parameters
    ----------
    message : str
        Why the analysis does not apply.
    advice : str, optional
        What the user can do; the audit reports the section as skipped with both.

    See Also
    --------
    DataError : Data that are wrong rather than unsuited.

    Examples
    --------
    >>> err = NotApplicableError("one study", advice="give a study column")
    >>> err.advice
    'give a study column'
    """

    def __init__(self, message: str, advice: str = "") -> None:
        super().__init__(message)
        self.advice = advice


class ResourceLimitError(ReplikitError, MemoryError):
    """The work asked for would need more memory than the machine has available.

    Raised before the allocation, naming the parameter or input to reduce, so that a too-large
    job stops at once instead of swapping.

    See Also
    --------
    ReplikitError : Its base.

    Examples
    --------
    >>> issubclass(ResourceLimitError, MemoryError)
    True
    """


class ReplikitWarning(UserWarning):
    """Base class of replikit's warnings.

    See Also
    --------
    ValidityWarning : A procedure used where it is known to be invalid.

    Examples
    --------
    >>> issubclass(ReplikitWarning, UserWarning)
    True
    """


class ValidityWarning(ReplikitWarning):
    """A statistical procedure is known to be invalid in the way it is being used.

    See Also
    --------
    ReplikitWarning : Its base.

    Examples
    --------
    >>> issubclass(ValidityWarning, ReplikitWarning)
    True
    """


def warn(message: str, category: type[Warning] = ReplikitWarning, stacklevel: int = 3) -> None:
    """Emit a replikit warning pointing at the caller's caller.

    Parameters
    ----------
    message : str
        The warning, in plain words.
    category : type of Warning, default ReplikitWarning
        Its class.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn`: 3 points at the code that called the public function
        that warns.

    Returns
    -------
    None
        The warning is emitted.

    See Also
    --------
    ReplikitWarning : The default category.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("few studies", stacklevel=1)
    >>> caught[0].category.__name__
    'ReplikitWarning'
    """
    warnings.warn(message, category, stacklevel=stacklevel)
