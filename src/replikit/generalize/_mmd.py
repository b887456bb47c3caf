"""Maximum Mean Discrepancy (Matteucci et al. 2024, Def. 4.3) and its distribution over disjoint
subsamples.

The Gram matrix of the N observed results is computed once; the MMD of any pair of index
subsets is then a quadratic form ``w K w^T`` with ``w = 1_x / n - 1_y / n``, evaluated for all
repetitions at once as ``sum((W @ K) * W, axis=1)``.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._compat import renamed, renamed_fields
from .._random import check_random_state
from .._threads import single_blas
from .._validation import check_choice, check_int
from ..errors import DataError, ParameterError
from ..results import Result

__all__ = ["mmd", "mmd_from_gram", "subsample_pairs", "MMDDistribution", "mmd_distribution"]

#: The MMD estimators: the V-statistic of the paper (and genexpy) and the U-statistic.
MMD_ESTIMATORS = ("biased", "unbiased")
# MMD^2 below this is rounding error of sums of O(1) kernel values: identical samples (in the
# kernel's eyes) must give MMD = 0 exactly, or a zero alpha*-quantile would look positive.
_ZERO = 1e-12
# mmd_distribution draws the subsamples of several sizes at once, in chunks of at most this many
# bytes per (sizes, n_resamples, N) float array; about _CHUNK_ARRAYS such arrays are alive at once
_CHUNK_BYTES = 512 * 1024  # larger arrays come from fresh mmap pages: page faults, sys time
_CHUNK_ARRAYS = 5
# set by analyze() around its analyses, once it has checked the largest one's memory
_CHECKED: ContextVar[bool] = ContextVar("replikit_generalize_memory_checked", default=False)


@renamed(method="mmd_estimator")
@single_blas
def mmd_from_gram(K, x_idx, y_idx, *, mmd_estimator: str = "biased") -> np.ndarray:
    """MMD between index subsets of one set of results, from its Gram matrix.

    Parameters
    ----------
    K : array_like, shape (N, N)
        Gram matrix of the N results.
    x_idx, y_idx : array_like of int, shapes (R, n) and (R, m)
        Indices of the two samples in each of R repetitions (a 1-d array is one repetition).
    mmd_estimator : {'biased', 'unbiased'}, default 'biased'
        The MMD statistic. ``'biased'``: the V-statistic of Matteucci et al. (2024), Def. 4.3
        (also genexpy's); ``'unbiased'``: the U-statistic of Gretton et al. (2012), eq. 3,
        dropping the diagonal terms of the two within-sample sums; it can be negative, and the
        returned value is then ``sign(MMD_u^2) sqrt(|MMD_u^2|)``. ``|MMD^2| < 1e-12``
        (rounding error) is set to 0.

    Returns
    -------
    numpy.ndarray, shape (R,)
        ``MMD(x, y) = sqrt(mean K_xx + mean K_yy - 2 mean K_xy)`` per repetition.

    See Also
    --------
    mmd : The MMD of two samples of rankings under a kernel.
    mmd_distribution : The MMD of disjoint subsamples for every subsample size.

    Notes
    -----
    Matteucci et al. (2024), Definition 4.3. With count vectors ``c_x, c_y`` (length N) the
    three block means are ``c_x K c_x / n^2`` etc., so ``MMD^2 = w K w`` with
    ``w = c_x / n - c_y / m``; all R repetitions are one product ``(W @ K) * W``. Indices may
    repeat (sampling with replacement).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.

    Examples
    --------
    >>> K = np.eye(2)
    >>> mmd_from_gram(K, [0], [1])
    array([1.41421356])
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise DataError(f"`K` must be a square Gram matrix; got shape {K.shape}.")
    check_choice(mmd_estimator, "mmd_estimator", MMD_ESTIMATORS)
    xi = np.atleast_2d(np.asarray(x_idx, dtype=np.int64))
    yi = np.atleast_2d(np.asarray(y_idx, dtype=np.int64))
    if xi.shape[0] != yi.shape[0]:
        raise DataError(f"`x_idx` and `y_idx` must have the same number of repetitions; got "
                        f"{xi.shape[0]} and {yi.shape[0]}.")
    N = K.shape[0]
    for name, ix in (("x_idx", xi), ("y_idx", yi)):
        if ix.size and (ix.min() < 0 or ix.max() >= N):
            raise DataError(f"`{name}` must index rows of `K` (0..{N - 1}); found "
                            f"{ix.min()}..{ix.max()}.")
    R, n = xi.shape
    m = yi.shape[1]
    rows = np.arange(R)[:, None]
    cx = np.zeros((R, N))
    cy = np.zeros((R, N))
    np.add.at(cx, (np.broadcast_to(rows, xi.shape), xi), 1.0)
    np.add.at(cy, (np.broadcast_to(rows, yi.shape), yi), 1.0)
    return _mmd_counts(K, cx, cy, n, m, mmd_estimator)


def _mmd_counts(K, cx, cy, n, m, mmd_estimator):
    if mmd_estimator == "biased":
        w = cx / n - cy / m
        sq = np.einsum("rj,rj->r", w @ K, w)
        return np.sqrt(np.where(sq < _ZERO, 0.0, sq))
    if n < 2 or m < 2:
        raise ParameterError(f"The unbiased MMD needs samples of size >= 2; got {n} and {m}.")
    d = np.diag(K)
    sxx = np.einsum("rj,rj->r", cx @ K, cx) - cx @ d
    syy = np.einsum("rj,rj->r", cy @ K, cy) - cy @ d
    sxy = np.einsum("rj,rj->r", cx @ K, cy)
    sq = sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2.0 * sxy / (n * m)
    sq = np.where(np.abs(sq) < _ZERO, 0.0, sq)
    return np.sign(sq) * np.sqrt(np.abs(sq))


@renamed(method="mmd_estimator")
@single_blas
def mmd(x, y, kernel, *, mmd_estimator: str = "biased", alternatives=None) -> float:
    """MMD between two samples of results under a kernel.

    Parameters
    ----------
    x, y : array_like, shapes (n, n_a), (m, n_a)
        Rank vectors (or score vectors for the RBF kernel).
    kernel : Kernel
        The goal of the study (the kernel and its parameters).
    mmd_estimator : {'biased', 'unbiased'}, default 'biased'
        The MMD statistic (see :func:`mmd_from_gram`).
    alternatives : sequence, optional
        Alternative names (columns), to resolve a Borda alternative given by name.

    Returns
    -------
    float
        ``MMD(x, y)`` under ``kernel``.

    See Also
    --------
    mmd_from_gram : The MMD of index subsets from a precomputed Gram matrix.
    mmd_distribution : The MMD of disjoint subsamples for every subsample size.

    Notes
    -----
    Matteucci et al. (2024), Definition 4.3: the distance between the kernel mean embeddings
    of the two samples, computed from one Gram matrix of both.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.

    Examples
    --------
    >>> from replikit.generalize import Kernel
    >>> round(mmd([[0, 0, 0]], [[0, 1, 1]], Kernel("jaccard")), 4)
    1.1547
    """
    x = np.asarray(x)
    y = np.asarray(y)
    if x.ndim != 2 or y.ndim != 2:
        raise DataError(f"`x` and `y` must be 2-d (samples x alternatives); got {x.shape}, {y.shape}.")
    both = np.concatenate([x, y], axis=0)
    K = kernel.gram(both, alternatives=alternatives)
    n = len(x)
    return float(mmd_from_gram(K, np.arange(n), np.arange(n, n + len(y)),
                               mmd_estimator=mmd_estimator)[0])


def subsample_pairs(N: int, n: int, n_resamples: int, random_state=None, *,
                    disjoint: bool = True, replace: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs of subsamples of size n from N results, for ``n_resamples`` repetitions.

    Parameters
    ----------
    N : int
        Number of results to draw from.
    n : int
        Size of each subsample.
    n_resamples : int
        Repetitions (pairs of subsamples).
    random_state : None, int or numpy.random.Generator
        Source of randomness.
    disjoint : bool, default True
        Draw ``2n`` of the N results without replacement and split them into two disjoint
        halves (Algorithm 1 of Matteucci et al. 2024). ``False`` draws the two samples
        independently (each without replacement unless ``replace``).
    replace : bool, default False
        With ``disjoint=True``, draw each sample with replacement from its own half of a
        random split (the variant of genexpy, the authors' code).

    Returns
    -------
    x_idx, y_idx : numpy.ndarray of int, shape (n_resamples, n)
        Indices of the two subsamples of every repetition.

    See Also
    --------
    mmd_distribution : The MMD of every such pair, for every subsample size.
    mmd_from_gram : The MMD of given index subsets.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> x, y = subsample_pairs(10, 3, 4, random_state=0)
    >>> x.shape, bool(np.intersect1d(x[0], y[0]).size == 0)
    ((4, 3), True)
    """
    rng = check_random_state(random_state)
    R = check_int(n_resamples, "n_resamples", min_value=1)
    if disjoint and not replace:
        if 2 * n > N:
            raise ParameterError(f"`n` must be <= N/2 = {N // 2} for disjoint samples; got {n}.")
        perm = np.argsort(rng.random((R, N)), axis=1)
        return perm[:, :n], perm[:, n:2 * n]
    if disjoint and replace:
        perm = np.argsort(rng.random((R, N)), axis=1)
        h = N // 2
        a = perm[:, :h][np.arange(R)[:, None], rng.integers(0, h, (R, n))]
        b = perm[:, h:][np.arange(R)[:, None], rng.integers(0, N - h, (R, n))]
        return a, b
    if replace:
        return rng.integers(0, N, (R, n)), rng.integers(0, N, (R, n))
    a = np.argsort(rng.random((R, N)), axis=1)[:, :n]
    b = np.argsort(rng.random((R, N)), axis=1)[:, :n]
    return a, b


@renamed_fields(method="mmd_estimator")
@dataclass(frozen=True, slots=True)
class MMDDistribution(Result):
    """MMD values over repetitions for each subsample size n.

    Parameters
    ----------
    n : numpy.ndarray, shape (L,)
        Subsample sizes.
    values : numpy.ndarray, shape (L, n_resamples)
        ``values[i, r]`` is the MMD of repetition r at size ``n[i]``.
    N : int
        Number of results the subsamples were drawn from.
    mmd_estimator : str
        The MMD statistic (``'biased'`` or ``'unbiased'``).

    See Also
    --------
    mmd_distribution : The function that computes it.
    NStarResult : n* estimated from it.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> d = mmd_distribution(np.eye(6), n_resamples=10, random_state=0)
    >>> d.n.tolist(), d.values.shape
    ([1, 2, 3], (3, 10))
    >>> [round(float(v), 4) for v in d.quantile(0.95)]
    [1.4142, 1.0, 0.8165]
    """

    n: np.ndarray
    values: np.ndarray
    N: int
    mmd_estimator: str = "biased"

    @property
    def title(self) -> str:
        """A heading: the MMD distribution and what it was drawn from."""
        return (f"MMD of disjoint subsamples ({self.mmd_estimator} statistic, "
                f"N = {self.N:,} results)")

    def quantile(self, level, *, quantile_method: str = "higher") -> np.ndarray:
        """The ``level``-quantile of the MMD at each subsample size.

        It is ``epsilon_n^{alpha*}`` of Algorithm 1 (Matteucci et al. 2024) for
        ``level = alpha*``.

        Parameters
        ----------
        level : float or sequence of float
            Probability level(s) in [0, 1].
        quantile_method : str, default 'higher'
            numpy's quantile method; ``'higher'`` (an observed MMD value) is the authors'
            choice.

        Returns
        -------
        numpy.ndarray
            Shape (L,), or (len(level), L) for a sequence of levels.
        """
        return np.quantile(self.values, level, axis=1, method=quantile_method)

    def generalizability(self, eps) -> np.ndarray:
        """n-Gen(eps): the share of repetitions with MMD <= eps at each subsample size.

        Parameters
        ----------
        eps : float
            The MMD threshold ``epsilon``.

        Returns
        -------
        numpy.ndarray, shape (L,)
            Matteucci et al. (2024), Def. 4.1, estimated at each ``n``.
        """
        return np.mean(self.values <= eps, axis=1)

    def to_frame(self) -> pd.DataFrame:
        """The MMD values as a long table.

        Returns
        -------
        pandas.DataFrame
            Columns ``n``, ``resample``, ``mmd``.
        """
        L, R = self.values.shape
        return pd.DataFrame({"n": np.repeat(self.n, R), "resample": np.tile(np.arange(R), L),
                             "mmd": self.values.ravel()})

    def __str__(self) -> str:
        from .._format import number

        q = self.quantile(0.95)
        body = ", ".join(f"n = {a}: {number(b)}" for a, b in zip(self.n[:6], q[:6],
                                                                  strict=False))
        return (f"MMD distribution from N = {self.N:,} results, {self.values.shape[1]:,} "
                f"repetitions per n ({self.mmd_estimator} statistic); 95% quantiles "
                f"{body}{' ...' if len(q) > 6 else ''}")


@renamed(method="mmd_estimator")
@single_blas
def mmd_distribution(K, *, n=None, n_resamples: int = 1000, mmd_estimator: str = "biased",
                     disjoint: bool = True, replace: bool = False,
                     random_state=None) -> MMDDistribution:
    """Distribution of the MMD between two subsamples of size n, for every n.

    Parameters
    ----------
    K : array_like, shape (N, N)
        Gram matrix of the N observed results (computed once).
    n : sequence of int, None or 'even', optional
        Subsample sizes; default ``1, ..., floor(N/2)`` as in Algorithm 1. ``'even'`` is the grid
        of the authors' code (genexpy): ``2, 4, ...`` strictly below ``N/2``; it is the grid that
        reproduces the paper's published n* values. For N < 6 that grid is empty and the full one
        is used.
    n_resamples : int, default 1000
        Repetitions (subsample pairs) per n.
    mmd_estimator : {'biased', 'unbiased'}, default 'biased'
        The MMD statistic (see :func:`mmd_from_gram`).
    disjoint, replace : bool
        Sampling scheme, see :func:`subsample_pairs` (default: Algorithm 1's disjoint samples
        without replacement).
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    MMDDistribution
        The MMD of every repetition at every subsample size.

    See Also
    --------
    subsample_pairs : The subsamples drawn.
    estimate_nstar : n* from this distribution.

    Notes
    -----
    Matteucci et al. (2024), Algorithm 1 (inner loops) and Def. 4.3. Every repetition of every
    n is one row of a weight matrix ``W`` (``+1/n`` on x, ``-1/n`` on y) and
    ``MMD^2 = rowsum((W @ K) * W)``: the kernel is never re-evaluated.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> d = mmd_distribution(np.eye(6), n_resamples=10, random_state=0)
    >>> d.values.shape
    (3, 10)
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise DataError(f"`K` must be a square Gram matrix; got shape {K.shape}.")
    N = K.shape[0]
    R = check_int(n_resamples, "n_resamples", min_value=1)
    check_choice(mmd_estimator, "mmd_estimator", MMD_ESTIMATORS)
    if isinstance(n, str):
        if n != "even":
            raise ParameterError(f"`n` must be a sequence of sizes, None or 'even'; got {n!r}.")
        ns = np.arange(2, N // 2, 2)
        if ns.size == 0:  # N < 6: fall back to Algorithm 1's grid rather than fail
            if N < 2:
                raise DataError(f"At least 2 results are needed; got N={N}.")
            ns = np.arange(1, N // 2 + 1)
    elif n is None:
        if N < 2:
            raise DataError(f"At least 2 results are needed for two disjoint samples; got N={N}.")
        ns = np.arange(1, N // 2 + 1)
    else:
        ns = np.unique(np.asarray(n, dtype=np.int64))
        if ns.size == 0 or ns.min() < 1:
            raise ParameterError(f"`n` must hold positive sizes; got {n!r}.")
    if mmd_estimator == "unbiased":
        ns = ns[ns >= 2]
        if ns.size == 0:
            raise DataError(f"The unbiased MMD needs n >= 2, i.e. N >= 4; got N={N}.")
    rng = check_random_state(random_state)
    if disjoint and not replace:
        if 2 * int(ns.max()) > N:
            raise ParameterError(f"`n` must be <= N/2 = {N // 2} for disjoint samples; got "
                                 f"{int(ns.max())}.")
        out = _mmd_disjoint(K, ns, R, rng, mmd_estimator)
        return MMDDistribution(n=ns, values=out, N=N, mmd_estimator=mmd_estimator)
    out = np.empty((len(ns), R))
    rows = np.arange(R)[:, None]
    for i, size in enumerate(ns):
        xi, yi = subsample_pairs(N, int(size), R, rng, disjoint=disjoint, replace=replace)
        cx = np.zeros((R, N))
        cy = np.zeros((R, N))
        np.add.at(cx, (np.broadcast_to(rows, xi.shape), xi), 1.0)
        np.add.at(cy, (np.broadcast_to(rows, yi.shape), yi), 1.0)
        out[i] = _mmd_counts(K, cx, cy, int(size), int(size), mmd_estimator)
    return MMDDistribution(n=ns, values=out, N=N, mmd_estimator=mmd_estimator)


def mmd_chunk_sizes(N: int, n_resamples: int, n_sizes: int) -> int:
    """Subsample sizes processed together by :func:`mmd_distribution`: as many as keep one
    ``(sizes, n_resamples, N)`` float array within ``_CHUNK_BYTES`` (at least one)."""
    return int(max(1, min(n_sizes, _CHUNK_BYTES // max(1, 8 * n_resamples * N))))


def mmd_peak_bytes(N: int, n_resamples: int, n_sizes: int | None = None) -> int:
    """Estimated peak working memory of :func:`mmd_distribution` (bytes): the Gram matrix, the
    output and ``_CHUNK_ARRAYS`` chunk arrays of ``(sizes, n_resamples, N)`` floats."""
    L = max(1, N // 2 if n_sizes is None else n_sizes)
    c = mmd_chunk_sizes(N, n_resamples, L)
    return int(8 * (N * N + L * n_resamples + _CHUNK_ARRAYS * c * n_resamples * N))


def n_sizes(N: int, n=None) -> int:
    """Number of subsample sizes :func:`mmd_distribution` uses for N results and ``n``."""
    if isinstance(n, str):
        return max(len(range(2, N // 2, 2)) or N // 2, 1)
    if n is None:
        return max(N // 2, 1)
    try:
        return max(np.unique(np.asarray(n)).size, 1)
    except (TypeError, ValueError):  # mmd_distribution names the problem
        return max(N // 2, 1)


def analysis_peak_bytes(N: int, n_a: int, n_resamples: int, n_sizes: int | None = None,
                        kind: str = "mallows") -> int:
    """Estimated peak working memory of one n* analysis (bytes): the Gram matrix and its
    temporaries (kernel, moments, jackknife), the kernel's per-ranking codes (alternative
    pairs for Mallows, in blocks) and the MMD distribution (:func:`mmd_peak_bytes`)."""
    gram = 5 * 8 * N * N
    if kind == "mallows":
        from .kernels import _PAIR_BLOCK_BYTES

        pairs = n_a * (n_a - 1) // 2
        codes = 3 * min(16 * N * pairs, max(_PAIR_BLOCK_BYTES, 16 * N))
    else:
        codes = 3 * 8 * N * n_a
    return int(gram + codes + mmd_peak_bytes(N, n_resamples, n_sizes))


def check_analysis_memory(N: int, n_a: int, n_resamples: int, n_sizes: int | None = None,
                          kinds=("mallows",), *, retained: int = 0,
                          conditions: str = "fewer conditions", resamples: str = "n_resamples"
                          ) -> None:
    """Refuse (:class:`~replikit.errors.ResourceLimitError`) an analysis of N results whose
    working set (:func:`analysis_peak_bytes`, plus ``retained`` bytes kept across analyses)
    would not fit in the available memory, naming what to reduce."""
    from .._memory import check_memory

    if _CHECKED.get():  # analyze() checked its largest analysis already
        return
    peak = max(analysis_peak_bytes(N, n_a, n_resamples, n_sizes, k) for k in kinds)
    mmd = mmd_peak_bytes(N, n_resamples, n_sizes) - 8 * N * N + retained
    by_n = f"the conditions per analysis (N = {N:,}, an N x N Gram matrix: {conditions})"
    by_r = f"{resamples} ({n_resamples:,} subsample pairs per size)"
    reduce = f"{by_n} or {by_r}" if peak - mmd >= mmd else f"{by_r} or {by_n}"
    check_memory(peak + retained, reduce=reduce,
                 what=f"the generalizability analysis of N = {N:,} conditions x {n_a:,} "
                      f"alternatives with {n_resamples:,} resamples")


def _mmd_disjoint(K, ns, R, rng, mmd_estimator):
    """MMD of Algorithm 1's disjoint subsamples for every size in ``ns`` (shape (L, R)).

    The draws are those of :func:`subsample_pairs` (one ``rng.random((R, N))`` per size, in
    order; x = the n smallest keys, y = the next n), done for a chunk of sizes at once: a
    result is in x when its key is at most the n-th smallest key of its row, in y when above
    that and at most the 2n-th. Keys tie with probability ~N^2 2^-53 per row; such rows are
    redone with ``argsort`` exactly as :func:`subsample_pairs` does, so the values are
    identical to the per-size loop (for the same generator state).
    """
    N = K.shape[0]
    L = len(ns)
    out = np.empty((L, R))
    step = mmd_chunk_sizes(N, R, L)
    for start in range(0, L, step):
        sizes = ns[start:start + step]
        Lc = len(sizes)
        u = rng.random((Lc, R, N))
        srt = np.sort(u, axis=-1)
        k1 = (sizes - 1)[:, None, None]
        t1 = np.take_along_axis(srt, k1, axis=-1)
        t2 = np.take_along_axis(srt, 2 * k1 + 1, axis=-1)
        # a key equal to its neighbour across a cut (n-th/(n+1)-th, 2n-th/(2n+1)-th smallest)
        # makes the split ambiguous: such rows are redone below
        tie = t1 == np.take_along_axis(srt, k1 + 1, axis=-1)
        tie |= ((t2 == np.take_along_axis(srt, np.minimum(2 * k1 + 2, N - 1), axis=-1))
                & (2 * sizes < N)[:, None, None])
        del srt
        # +1 on x (the n smallest keys), -1 on y (the next n), 0 elsewhere
        sign = (u <= t1).view(np.int8)
        sign = sign + sign
        sign -= (u <= t2).view(np.int8)
        for li, r, _ in zip(*np.nonzero(tie), strict=True):  # subsample_pairs' argsort
            perm = np.argsort(u[li, r])
            n = int(sizes[li])
            sign[li, r] = 0
            sign[li, r, perm[:n]] = 1
            sign[li, r, perm[n:2 * n]] = -1
        del u
        if mmd_estimator == "biased":
            # sign * (1/n) is exactly the c_x / n - c_y / n of mmd_from_gram
            w = sign * (1.0 / sizes)[:, None, None]
            wk = np.empty_like(w)
            for li in range(Lc):  # one product per size: BLAS sums depend on the row count
                np.matmul(w[li], K, out=wk[li])
            sq = np.einsum("lrj,lrj->lr", wk, w)
            out[start:start + Lc] = np.sqrt(np.where(sq < _ZERO, 0.0, sq))
        else:
            for li, size in enumerate(sizes):
                out[start + li] = _mmd_counts(K, (sign[li] == 1).astype(float),
                                              (sign[li] == -1).astype(float),
                                              int(size), int(size), mmd_estimator)
    return out
