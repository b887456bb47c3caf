"""Rankings with ties from scores (Matteucci et al. 2024, Def. 4.2).

A ranking of ``n_a`` alternatives is stored as an integer vector of dense tier indices — Def.
4.2's ``r(a)``, the number of better score levels: 0 is the best tier, 1 the next, and
alternatives with equal scores share a tier. A sample of rankings is an ``(n_experiments, n_a)``
integer array. These arrays are the kernels' input; every table replikit shows people
(:meth:`~replikit.generalize.RankingSample.to_frame`, ``summary``, the command line) gives
``rank = tier + 1``, so that 1 = best.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_float
from ..errors import DataError, ParameterError

__all__ = ["rank_scores"]


def rank_scores(scores, *, higher_is_better: bool = True, tol: float = 0.0,
                missing: str = "worst") -> np.ndarray:
    """Dense rankings with ties of every row of a score matrix.

    Parameters
    ----------
    scores : array_like, shape (n_experiments, n_a) or (n_a,)
        Score of every alternative (columns) in every experiment (rows). NaN marks a missing
        evaluation.
    higher_is_better : bool, default True
        ``False`` for errors/losses, ``True`` for accuracies and other scores.
    tol : float, default 0.0
        Scores whose sorted neighbours differ by at most ``tol`` share a tier (ties are chained
        along the sorted scores, so a tier may span more than ``tol``). ``0`` means exact ties.
    missing : {'worst'}, default 'worst'
        Missing evaluations form one extra tier below every observed score (the paper's
        "missing = worst rank" imputation); a row with no score at all gets rank 0 everywhere.
        Infinite scores are observed scores (``-inf`` is the worst possible one when higher is
        better, e.g. the log-likelihood of an impossible answer) and equal infinities tie.

    Returns
    -------
    numpy.ndarray of int64, same shape as ``scores``
        ``r[i, a]`` is the tier index of alternative ``a`` in experiment ``i`` (0 = best tier;
        add 1 for a rank with 1 = best).

    See Also
    --------
    replikit.generalize.prepare : Rankings of every condition of a long results table.
    replikit.generalize.RankingSample.to_frame : The same ranks for people (1 = best).

    Notes
    -----
    The rankings with ties of Matteucci et al. (2024), Definition 4.2:
    ``r(a) = #{distinct better score levels}``. Vectorized over rows: sort once, mark the
    positions where the sorted score jumps by more than ``tol``, take the cumulative sum and
    scatter back.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> rank_scores([[0.9, 0.7, 0.9]])
    array([[0, 1, 0]])
    """
    x = np.asarray(scores, dtype=float)
    one = x.ndim == 1
    if one:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] == 0:
        raise DataError(f"`scores` must be a 2-d array (experiments x alternatives); got shape "
                        f"{np.shape(scores)}.")
    tol = check_float(tol, "tol", min_value=0.0)
    if missing != "worst":
        raise ParameterError(f"`missing` must be 'worst'; got {missing!r}.")
    key = -x if higher_is_better else x
    nan = np.isnan(key)
    key = np.where(nan, 0.0, key)
    # missing evaluations sort after every observed score, infinite ones included
    order = np.lexsort((key, nan), axis=1)
    s = np.take_along_axis(key, order, axis=1)
    snan = np.take_along_axis(nan, order, axis=1)
    jump = np.zeros_like(s, dtype=bool)
    with np.errstate(invalid="ignore"):
        d = np.diff(s, axis=1)  # inf - inf is NaN: equal infinite scores tie
    jump[:, 1:] = (d > tol) & ~snan[:, 1:]
    # the first missing entry after an observed one opens the "missing" tier
    jump[:, 1:] |= snan[:, 1:] & ~snan[:, :-1]
    tiers = np.cumsum(jump, axis=1)
    out = np.empty_like(tiers)
    np.put_along_axis(out, order, tiers, axis=1)
    return out[0] if one else out


def check_rankings(ranks, name: str = "rankings") -> np.ndarray:
    """Validate a sample of rank vectors: 2-d, integer, dense tiers starting at 0."""
    r = np.asarray(ranks)
    if r.ndim == 1:
        r = r[None, :]
    if r.ndim != 2 or r.shape[0] == 0 or r.shape[1] == 0:
        raise DataError(f"`{name}` must be a 2-d array (experiments x alternatives); got shape "
                        f"{np.shape(ranks)}.")
    if not np.issubdtype(r.dtype, np.integer):
        if not np.all(np.isfinite(r)) or np.any(r != np.round(r)):
            raise DataError(f"`{name}` must hold integer ranks; got dtype {r.dtype}.")
        r = r.astype(np.int64)
    if r.min() < 0:
        raise DataError(f"`{name}` must hold non-negative ranks (0 = best); found {r.min()}.")
    return r.astype(np.int64, copy=False)
