"""How many experiments are needed: n-Gen and n* by Algorithm 1 of seed 004."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._random import check_random_state
from .._threads import single_blas
from .._validation import check_int, check_probability
from ..errors import DataError, ParameterError
from ._mmd import MMDDistribution, mmd_distribution
from .kernels import Kernel

__all__ = ["NStarResult", "fit_nstar", "estimate_nstar", "nstar_bound", "iterate_nstar",
           "check_levels", "check_delta"]


def check_levels(confidence_level, name: str = "confidence_level") -> np.ndarray:
    """Levels ``alpha*`` of the generalizability statement (one or a grid), each strictly
    between 0 and 1.

    ``name`` is the parameter (or command-line flag) named in error messages.
    """
    try:
        a = np.atleast_1d(np.asarray(confidence_level, dtype=float))
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be numbers strictly between 0 and 1; got "
                             f"{confidence_level!r}.") from None
    if a.ndim != 1 or a.size == 0:
        raise ParameterError(f"`{name}` needs at least one value strictly between 0 and 1; "
                             f"got {confidence_level!r}.")
    for v in a:
        check_probability(float(v), name)
    return a


def check_delta(delta, name: str = "delta") -> np.ndarray:
    """``delta*`` values (one or a grid), each strictly between 0 and 1 (eq. 2 maps them to
    ``epsilon*``; 0 asks for identical distributions, 1 accepts anything)."""
    try:
        d = np.atleast_1d(np.asarray(delta, dtype=float))
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be numbers strictly between 0 and 1; got "
                             f"{delta!r}.") from None
    if d.ndim != 1 or d.size == 0:
        raise ParameterError(f"`{name}` needs at least one value strictly between 0 and 1; "
                             f"got {delta!r}.")
    if np.any(~np.isfinite(d)) or np.any((d <= 0) | (d >= 1)):
        raise ParameterError(f"`{name}` must lie strictly between 0 and 1; got "
                             f"{', '.join(f'{v:g}' for v in d)}.")
    return d


def fit_nstar(n, q, eps):
    """Algorithm 1's regression: ``log n = beta1 log q_n + beta0``, ``n* = exp(beta1 log eps + beta0)``.

    Parameters
    ----------
    n : array_like
        Subsample sizes.
    q : array_like
        ``alpha*``-quantile of the MMD at each n (``alpha*`` = the confidence level).
    eps : float or array_like
        Threshold(s) ``epsilon*``.

    Returns
    -------
    (nstar, beta0, beta1) : (numpy.ndarray, float, float)

    Notes
    -----
    Seed 004, eq. (4) and Algorithm 1. Sizes whose quantile is 0 (the two subsamples always
    coincide in the kernel's eyes) carry no information on the slope and are left out of the
    fit, and n* is capped at the smallest such n (there n-Gen(eps) >= alpha* for every eps > 0);
    if every quantile is 0 the study is perfectly generalizable and ``n* = 1`` (beta's NaN).
    (genexpy sets n* = 1 as soon as any quantile is 0.)
    With one positive quantile left, the slope is fixed at the distribution-free value -2
    (Prop. A.4). ``n*`` is never below 1.
    """
    n = np.asarray(n, dtype=float)
    q = np.asarray(q, dtype=float)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    pos = q > 0
    if not pos.any():
        return np.ones_like(eps), float("nan"), float("nan")
    x = np.log(q[pos])
    y = np.log(n[pos])
    if pos.sum() == 1 or np.ptp(x) == 0:
        b1 = -2.0
        b0 = float(np.mean(y - b1 * x))
    else:
        b1, b0 = np.polyfit(x, y, 1)
    with np.errstate(divide="ignore", over="ignore"):
        ns = np.exp(b1 * np.log(eps) + b0)
    if not pos.all():
        # a zero quantile at size n means n-Gen(eps) >= alpha* for every eps > 0 already
        ns = np.minimum(ns, n[~pos].min())
    return np.maximum(ns, 1.0), float(b0), float(b1)


def nstar_bound(confidence_level, eps, kappa_sup: float = 1.0):
    """Distribution-free n* from Prop. A.4 of seed 004 (a conservative upper bound).

    ``n_bar* = 2 kappa_sup (sqrt(-2 log(1 - alpha*)) + 1)^2 / eps^2`` with
    ``alpha* = confidence_level``, from the concentration bound of Gretton et al. (2012,
    Thm. 8). Eq. (10) of the paper prints
    ``beta0 = log(2 kappa_sup) + log(sqrt(-2 log(1-alpha)) + 1)``; the derivation just above it
    squares the second factor, which is what is implemented.

    Examples
    --------
    >>> round(float(nstar_bound(0.95, 0.1)), 1)
    2377.4
    """
    a = np.asarray(confidence_level, dtype=float)
    e = np.asarray(eps, dtype=float)
    return 2.0 * kappa_sup * (np.sqrt(-2.0 * np.log1p(-a)) + 1.0) ** 2 / e ** 2


@dataclass(frozen=True, slots=True)
class NStarResult:
    """n* for one set of results and one kernel, over a grid of alpha* and delta*.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (alpha*, delta*): ``confidence_level`` (alpha*), ``delta``, ``eps``,
        ``nstar``, ``beta0``, ``beta1``, ``nstar_observed`` (smallest n <= N/2 with
        n-Gen(eps) >= alpha*, NaN if none), ``nstar_bound`` (Prop. A.4), ``sufficient``
        (N >= nstar), ``ci_low``/``ci_high`` (95% percentile bootstrap interval, NaN unless
        ``ci_resamples`` was given; :meth:`confidence_interval` for other levels).
    quantiles : pandas.DataFrame
        ``n``, ``confidence_level``, ``q`` (the alpha*-quantile of the MMD at n).
    distribution : MMDDistribution
    N : int
        Number of experiments (results) used.
    kernel : str
    bootstrap : numpy.ndarray or None, shape (ci_resamples, len(table))
        n* of every bootstrap resample of the N experiments, one column per table row.
    """

    table: pd.DataFrame
    quantiles: pd.DataFrame
    distribution: MMDDistribution = field(repr=False)
    N: int
    kernel: str
    bootstrap: np.ndarray | None = field(default=None, repr=False)

    @property
    def nstar(self) -> float:
        """n* at the first (alpha*, delta*) of the grid."""
        return float(self.table["nstar"].iloc[0])

    def confidence_interval(self, confidence_level: float = 0.95):
        """Percentile bootstrap interval of :attr:`nstar` (the first row of the grid).

        Needs ``ci_resamples > 0`` in :func:`estimate_nstar`; the bootstrap n* values of every
        row are in :attr:`bootstrap`.

        Returns
        -------
        replikit.results.ConfidenceInterval
        """
        from ..results import ConfidenceInterval

        conf = check_probability(confidence_level, "confidence_level")
        if self.bootstrap is None or len(self.bootstrap) == 0:
            raise ParameterError("No bootstrap of n* was drawn: give `ci_resamples` (e.g. 200) "
                                 "to estimate_nstar or analyze for an interval.")
        lo, hi = np.quantile(self.bootstrap[:, 0], [(1 - conf) / 2, (1 + conf) / 2])
        return ConfidenceInterval(float(lo), float(hi))

    def to_frame(self) -> pd.DataFrame:
        """The n* table with ``kernel`` and ``N`` columns."""
        t = self.table.copy()
        t.insert(0, "kernel", self.kernel)
        t.insert(1, "N", self.N)
        return t

    def generalizability(self, eps) -> pd.DataFrame:
        """n-Gen(eps) curve: columns ``n``, ``ngen``."""
        return pd.DataFrame({"n": self.distribution.n,
                             "ngen": self.distribution.generalizability(eps)})

    def __str__(self) -> str:
        lines = [f"n* ({self.kernel}, N={self.N} experiments)"]
        for r in self.table.itertuples():
            ci = ("" if not np.isfinite(r.ci_low) else
                  f" [{r.ci_low:.3g}, {r.ci_high:.3g}]")
            lines.append(f"  alpha*={r.confidence_level:g} delta*={r.delta:g} "
                         f"eps*={r.eps:.4g}: "
                         f"n*={r.nstar:.3g}{ci} (log n = {r.beta1:.3g} log eps + {r.beta0:.3g}); "
                         f"{'N suffices' if r.sufficient else 'more experiments needed'}")
        return "\n".join(lines)


def _nstar_table(dist, kernel, n_a, levels, deltas, quantile_method):
    rows, qrows = [], []
    qs = np.atleast_2d(dist.quantile(levels, quantile_method=quantile_method))
    for a, q in zip(levels, qs, strict=False):
        qrows.append(pd.DataFrame({"n": dist.n, "confidence_level": a, "q": q}))
        eps = kernel.epsilon(deltas, n_a)
        ns, b0, b1 = fit_nstar(dist.n, q, eps)
        for d, e, ns_ in zip(deltas, np.atleast_1d(eps), ns, strict=False):
            ok = dist.generalizability(e) >= a
            rows.append({"confidence_level": a, "delta": d, "eps": float(e), "nstar": float(ns_),
                         "beta0": b0, "beta1": b1,
                         "nstar_observed": float(dist.n[ok][0]) if ok.any() else float("nan"),
                         "nstar_bound": float(nstar_bound(a, e, kernel.sup(n_a))),
                         "sufficient": bool(dist.N >= ns_)})
    return pd.DataFrame(rows), pd.concat(qrows, ignore_index=True)


@single_blas
def estimate_nstar(results, kernel: Kernel, *, confidence_level=0.95, delta=0.05,
                   n_resamples: int = 1000, n=None, method: str = "biased",
                   quantile_method: str = "higher", alternatives=None, gram=None,
                   ci_resamples: int = 0, random_state=None) -> NStarResult:
    """Estimate n*, the number of experiments needed for (alpha*, delta*)-generalizability.

    Parameters
    ----------
    results : array_like, shape (N, n_a)
        Rank vectors of the N experiments (score vectors for the RBF kernel).
    kernel : Kernel
        The goal of the study.
    confidence_level : float or sequence of float, default 0.95
        The paper's desired generalizability ``alpha*``: the probability with which two
        independent studies of n* experiments must give results within ``epsilon*``. A grid
        is computed from one MMD distribution.
    delta : float or sequence of float, default 0.05
        Similarity threshold ``delta*`` (mapped to ``epsilon*`` by eq. 2).
    n_resamples : int, default 1000
        Repetitions (pairs of disjoint subsamples) per subsample size.
    n : sequence of int, optional
        Subsample sizes; default all of ``1..floor(N/2)``.
    method : {'biased', 'unbiased'}, default 'biased'
        The MMD estimator (see :func:`mmd_from_gram`).
    quantile_method : str, default 'higher'
        numpy quantile method for ``epsilon_n^{alpha*}``; 'higher' (an observed MMD value, never
        below the interpolated one) as in the authors' code.
    alternatives : sequence, optional
        Names of the columns (to resolve a Borda alternative by name).
    gram : array_like, optional
        Precomputed Gram matrix of ``results``.
    ci_resamples : int, default 0
        Bootstrap resamples of the N experiments for a percentile interval of n* (0 = none);
        the table's ``ci_low``/``ci_high`` are the 95% interval and
        :meth:`NStarResult.confidence_interval` gives any other level. Each resample reindexes
        the Gram matrix; kernels are not re-evaluated.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    NStarResult

    Notes
    -----
    Seed 004, Algorithm 1 and eqs. (2)-(4): for every n the ``alpha*``-quantile
    (``alpha* = confidence_level``) of the MMD of two disjoint subsamples of size n drawn
    without replacement; fit
    ``log n = beta1 log epsilon_n + beta0``; ``n* = exp(beta1 log epsilon* + beta0)`` with
    ``epsilon* = sqrt(2 (kappa_sup - f_kappa(delta*)))``.

    Examples
    --------
    >>> r = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [0, 1, 2]] * 5)
    >>> res = estimate_nstar(r, Kernel("jaccard"), n_resamples=200, random_state=0)
    >>> res.N
    20
    """
    R = np.asarray(results)
    if R.ndim != 2:
        raise DataError(f"`results` must be 2-d (experiments x alternatives); got shape {R.shape}.")
    N, n_a = R.shape
    if N < 2:
        raise DataError(f"At least 2 experiments are needed; got N={N}.")
    if n_a < 2:
        raise DataError(f"`results` must rank at least 2 alternatives; got {n_a}.")
    levels = check_levels(confidence_level)
    deltas = check_delta(delta)
    n_ci = check_int(ci_resamples, "ci_resamples", min_value=0)
    rng = check_random_state(random_state)
    K = kernel.gram(R, alternatives=alternatives) if gram is None else np.asarray(gram, float)
    if K.shape != (N, N):
        raise DataError(f"`gram` must have shape ({N}, {N}); got {K.shape}.")
    dist = mmd_distribution(K, n=n, n_resamples=n_resamples, method=method, random_state=rng)
    table, qtab = _nstar_table(dist, kernel, n_a, levels, deltas, quantile_method)
    table["ci_low"] = np.nan
    table["ci_high"] = np.nan
    boots = None
    if n_ci:
        boots = np.empty((n_ci, len(table)))
        for b in range(n_ci):  # each resample is one vectorized MMD distribution
            idx = rng.integers(0, N, N)
            db = mmd_distribution(K[np.ix_(idx, idx)], n=n, n_resamples=n_resamples,
                                  method=method, random_state=rng)
            boots[b] = _nstar_table(db, kernel, n_a, levels, deltas,
                                    quantile_method)[0]["nstar"].to_numpy()
        lo, hi = np.quantile(boots, [0.025, 0.975], axis=0)
        table["ci_low"] = lo
        table["ci_high"] = hi
    return NStarResult(table=table, quantiles=qtab, distribution=dist, N=N, kernel=kernel.label,
                       bootstrap=boots)


@single_blas
def iterate_nstar(run_experiment, initial, kernel: Kernel, *, n_step: int = 5,
                  max_experiments: int = 1000, confidence_level: float = 0.95,
                  delta: float = 0.05, n_resamples: int = 1000, alternatives=None,
                  random_state=None):
    """The outer loop of Algorithm 1: run ``n_step`` more experiments until N >= n*.

    Parameters
    ----------
    run_experiment : callable
        ``run_experiment(rng) -> array (n_a,)``: the result (rank vector) of one more
        experiment under a new random condition.
    initial : array_like, shape (N0, n_a)
        Results already available (N0 >= 2).
    kernel : Kernel
    n_step : int, default 5
        Experiments added per iteration (``N_step``).
    max_experiments : int, default 1000
        Stop (and return) once this many experiments have been run.
    confidence_level, delta, n_resamples, alternatives, random_state
        As in :func:`estimate_nstar`.

    Returns
    -------
    (NStarResult, numpy.ndarray)
        The last estimate and all the results gathered. Only the kernel rows of the new
        experiments are computed at each step (the Gram matrix is extended, not rebuilt).

    Notes
    -----
    Seed 004, Algorithm 1 (``while N < n*_N: run N_step more experiments``).
    """
    rng = check_random_state(random_state)
    n_step = check_int(n_step, "n_step", min_value=1)
    R = np.asarray(initial)
    if R.ndim != 2 or len(R) < 2:
        raise DataError(f"`initial` must hold at least 2 results (2-d); got shape {R.shape}.")
    K = kernel.gram(R, alternatives=alternatives)
    while True:
        res = estimate_nstar(R, kernel, confidence_level=confidence_level, delta=delta,
                             n_resamples=n_resamples, alternatives=alternatives, gram=K,
                             random_state=rng)
        if len(R) >= res.nstar or len(R) >= max_experiments or not math.isfinite(res.nstar):
            return res, R
        new = np.vstack([np.asarray(run_experiment(rng)) for _ in range(n_step)])
        if new.shape[1] != R.shape[1]:
            raise DataError(f"`run_experiment` returned {new.shape[1]} alternatives; expected "
                            f"{R.shape[1]}.")
        k_new = kernel.gram(new, R, alternatives=alternatives)
        k_nn = kernel.gram(new, alternatives=alternatives)
        K = np.block([[K, k_new.T], [k_new, k_nn]])
        R = np.vstack([R, new])
