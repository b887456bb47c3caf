"""Maximum Mean Discrepancy (seed 004, Def. 4.3) and its distribution over disjoint subsamples.

The Gram matrix of the N observed results is computed once; the MMD of any pair of index
subsets is then a quadratic form ``w K w^T`` with ``w = 1_x / n - 1_y / n``, evaluated for all
repetitions at once as ``sum((W @ K) * W, axis=1)``.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._random import check_random_state
from .._threads import single_blas
from .._validation import check_choice, check_int
from ..errors import DataError, ParameterError

__all__ = ["mmd", "mmd_from_gram", "subsample_pairs", "MMDDistribution", "mmd_distribution"]

_METHODS = ("biased", "unbiased")
# MMD^2 below this is rounding error of sums of O(1) kernel values: identical samples (in the
# kernel's eyes) must give MMD = 0 exactly, or a zero alpha*-quantile would look positive.
_ZERO = 1e-12
# mmd_distribution draws the subsamples of several sizes at once, in chunks of at most this many
# bytes per (sizes, n_resamples, N) float array; about _CHUNK_ARRAYS such arrays are alive at once
_CHUNK_BYTES = 512 * 1024  # larger arrays come from fresh mmap pages: page faults, sys time
_CHUNK_ARRAYS = 5
# set by analyze() around its analyses, once it has checked the largest one's memory
_CHECKED: ContextVar[bool] = ContextVar("replikit_generalize_memory_checked", default=False)


@single_blas
def mmd_from_gram(K, x_idx, y_idx, *, method: str = "biased") -> np.ndarray:
    """MMD between index subsets of one set of results, from its Gram matrix.

    Parameters
    ----------
    K : array_like, shape (N, N)
        Gram matrix of the N results.
    x_idx, y_idx : array_like of int, shapes (R, n) and (R, m)
        Indices of the two samples in each of R repetitions (a 1-d array is one repetition).
    method : {'biased', 'unbiased'}, default 'biased'
        The MMD estimator. ``'biased'``: the V-statistic of Def. 4.3 (the paper's and
        genexpy's); ``'unbiased'``: the U-statistic (Gretton et al. 2012, eq. 3) dropping the
        diagonal terms of the two within-sample sums; it can be negative, and the returned value is then
        ``sign(MMD_u^2) sqrt(|MMD_u^2|)``. ``|MMD^2| < 1e-12`` (rounding error) is set to 0.

    Returns
    -------
    numpy.ndarray, shape (R,)
        ``MMD(x, y) = sqrt(mean K_xx + mean K_yy - 2 mean K_xy)`` per repetition.

    Notes
    -----
    Seed 004, Definition 4.3. With count vectors ``c_x, c_y`` (length N) the three block means
    are ``c_x K c_x / n^2`` etc., so ``MMD^2 = w K w`` with ``w = c_x / n - c_y / m``; all R
    repetitions are one product ``(W @ K) * W``. Indices may repeat (sampling with replacement).

    Examples
    --------
    >>> K = np.eye(2)
    >>> mmd_from_gram(K, [0], [1])
    array([1.41421356])
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise DataError(f"`K` must be a square Gram matrix; got shape {K.shape}.")
    check_choice(method, "method", _METHODS)
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
    return _mmd_counts(K, cx, cy, n, m, method)


def _mmd_counts(K, cx, cy, n, m, method):
    if method == "biased":
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


@single_blas
def mmd(x, y, kernel, *, method: str = "biased", alternatives=None) -> float:
    """MMD between two samples of results under a kernel (seed 004, Def. 4.3).

    Parameters
    ----------
    x, y : array_like, shapes (n, n_a), (m, n_a)
        Rank vectors (or score vectors for the RBF kernel).
    kernel : Kernel
    method : {'biased', 'unbiased'}, default 'biased'
        The MMD estimator (see :func:`mmd_from_gram`).
    alternatives : sequence, optional
        Alternative names (columns), to resolve a Borda alternative given by name.

    Returns
    -------
    float

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
                               method=method)[0])


def subsample_pairs(N: int, n: int, n_resamples: int, random_state=None, *,
                    disjoint: bool = True, replace: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs of subsamples of size n from N results, for ``n_resamples`` repetitions.

    Default (Algorithm 1 of seed 004): draw ``2n`` of the N results without replacement and
    split them into two disjoint halves. ``disjoint=False`` draws the two samples independently
    (each without replacement unless ``replace``); ``replace=True`` with ``disjoint=True`` draws
    each sample with replacement from its own half of a random split (genexpy's variant).

    Returns
    -------
    (x_idx, y_idx) : two int arrays of shape (n_resamples, n)

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


@dataclass(frozen=True, slots=True)
class MMDDistribution:
    """MMD values over repetitions for each subsample size n.

    Attributes
    ----------
    n : numpy.ndarray, shape (L,)
        Subsample sizes.
    values : numpy.ndarray, shape (L, n_resamples)
        ``values[i, r]`` is the MMD of repetition r at size ``n[i]``.
    N : int
        Number of results the subsamples were drawn from.
    method : str
        The MMD estimator (``'biased'`` or ``'unbiased'``).
    """

    n: np.ndarray
    values: np.ndarray
    N: int
    method: str = "biased"

    def quantile(self, level, *, quantile_method: str = "higher") -> np.ndarray:
        """``level``-quantile of the MMD at each n (shape (L,), or (len(level), L) for a
        sequence of levels): ``epsilon_n^{alpha*}`` of Algorithm 1 for ``level = alpha*``.

        ``quantile_method`` is numpy's quantile method; ``'higher'`` (an observed MMD value)
        is the authors' choice."""
        return np.quantile(self.values, level, axis=1, method=quantile_method)

    def generalizability(self, eps) -> np.ndarray:
        """n-Gen(eps): share of repetitions with MMD <= eps at each n (seed 004, Def. 4.1)."""
        return np.mean(self.values <= eps, axis=1)

    def to_frame(self) -> pd.DataFrame:
        """Long table: columns ``n``, ``resample``, ``mmd``."""
        L, R = self.values.shape
        return pd.DataFrame({"n": np.repeat(self.n, R), "resample": np.tile(np.arange(R), L),
                             "mmd": self.values.ravel()})

    def __str__(self) -> str:
        q = self.quantile(0.95)
        body = ", ".join(f"n={a}: {b:.3g}" for a, b in zip(self.n[:6], q[:6], strict=False))
        return (f"MMD distribution from N={self.N} results, {self.values.shape[1]} repetitions "
                f"per n ({self.method}); 95% quantiles {body}{' ...' if len(q) > 6 else ''}")


@single_blas
def mmd_distribution(K, *, n=None, n_resamples: int = 1000, method: str = "biased",
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
    method : {'biased', 'unbiased'}, default 'biased'
        The MMD estimator (see :func:`mmd_from_gram`).
    disjoint, replace : bool
        Sampling scheme, see :func:`subsample_pairs` (default: Algorithm 1's disjoint samples
        without replacement).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    MMDDistribution

    Notes
    -----
    Seed 004, Algorithm 1 (inner loops) and Def. 4.3. Every repetition of every n is one row of a
    weight matrix ``W`` (``+1/n`` on x, ``-1/n`` on y) and ``MMD^2 = rowsum((W @ K) * W)``: the
    kernel is never re-evaluated.

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
    check_choice(method, "method", _METHODS)
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
    if method == "unbiased":
        ns = ns[ns >= 2]
        if ns.size == 0:
            raise DataError(f"The unbiased MMD needs n >= 2, i.e. N >= 4; got N={N}.")
    rng = check_random_state(random_state)
    if disjoint and not replace:
        if 2 * int(ns.max()) > N:
            raise ParameterError(f"`n` must be <= N/2 = {N // 2} for disjoint samples; got "
                                 f"{int(ns.max())}.")
        out = _mmd_disjoint(K, ns, R, rng, method)
        return MMDDistribution(n=ns, values=out, N=N, method=method)
    out = np.empty((len(ns), R))
    rows = np.arange(R)[:, None]
    for i, size in enumerate(ns):
        xi, yi = subsample_pairs(N, int(size), R, rng, disjoint=disjoint, replace=replace)
        cx = np.zeros((R, N))
        cy = np.zeros((R, N))
        np.add.at(cx, (np.broadcast_to(rows, xi.shape), xi), 1.0)
        np.add.at(cy, (np.broadcast_to(rows, yi.shape), yi), 1.0)
        out[i] = _mmd_counts(K, cx, cy, int(size), int(size), method)
    return MMDDistribution(n=ns, values=out, N=N, method=method)


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


def _mmd_disjoint(K, ns, R, rng, method):
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
        if method == "biased":
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
                                              int(size), int(size), method)
    return out
