"""How to resample, for functions that resample in more than one way.

A function with one resampling takes ``n_resamples`` (and ``random_state``). A function that
runs a second resampling beside its main one (a permutation test beside a bootstrap, a
bootstrap interval of an estimate that itself comes from resampled pairs) takes a small method
object for the second, in the shape of :class:`scipy.stats.PermutationMethod` and
:class:`scipy.stats.BootstrapMethod`: ``permutation=PermutationMethod(n_resamples=999)``,
``bootstrap=BootstrapMethod(n_resamples=500)``. Both share the function's ``random_state``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validation import check_int, check_interval

__all__ = ["PermutationMethod", "BootstrapMethod"]


@dataclass(frozen=True, slots=True)
class PermutationMethod:
    """How to run a permutation test beside a function's own resampling.

    Parameters
    ----------
    n_resamples : int >= 1, default 999
        Random permutations; the p-value is ``(1 + #{T_b >= T_obs}) / (n_resamples + 1)``, so
        999 gives p-values on a grid of 1/1000 (exact at every level under exchangeability).

    See Also
    --------
    BootstrapMethod : The same for a bootstrap.
    scipy.stats.PermutationMethod : The shape this follows.

    Examples
    --------
    >>> PermutationMethod(199)
    PermutationMethod(n_resamples=199)
    """

    n_resamples: int = 999

    def __post_init__(self) -> None:
        check_int(self.n_resamples, "n_resamples", min_value=1)


@dataclass(frozen=True, slots=True)
class BootstrapMethod:
    """How to bootstrap beside a function's own resampling.

    Parameters
    ----------
    n_resamples : int >= 1, default 1000
        Bootstrap resamples.
    interval : {'percentile', 'basic'}, default 'percentile'
        The kind of bootstrap interval.

    See Also
    --------
    PermutationMethod : The same for a permutation test.
    scipy.stats.BootstrapMethod : The shape this follows.

    Examples
    --------
    >>> BootstrapMethod(500)
    BootstrapMethod(n_resamples=500, interval='percentile')
    """

    n_resamples: int = 1000
    interval: str = "percentile"

    def __post_init__(self) -> None:
        check_int(self.n_resamples, "n_resamples", min_value=1)
        check_interval(self.interval, ("percentile", "basic"))
