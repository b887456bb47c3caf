"""Kernels over rankings (Matteucci et al. 2024, sec. 4.2) as vectorized Gram-matrix functions.

Each ``*_gram`` function takes two samples of rank vectors, shapes ``(n1, n_a)`` and
``(n2, n_a)``, and returns the ``(n1, n2)`` Gram matrix with array expressions only (no Python
loop over pairs). :class:`Kernel` bundles a kernel with its parameters, its range (Prop. 4.1) and
the MMD threshold ``epsilon*`` of a tolerance ``delta*`` (eq. 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._compat import dropped, renamed
from .._format import number
from .._threads import single_blas
from .._validation import check_float, check_int
from ..errors import DataError, ParameterError
from .rankings import check_rankings

__all__ = ["borda_gram", "jaccard_gram", "mallows_gram", "rbf_gram", "Kernel", "parse_goal",
           "discordant_pairs"]

# |score| above this overflows when squared and summed over alternatives (RBF kernel)
RBF_MAX_SCORE = 1e150
# discordant_pairs codes this many bytes of alternative pairs per ranking block at most
_PAIR_BLOCK_BYTES = 32 * 1024**2


def _pair(r1, r2):
    a = check_rankings(r1, "r1")
    b = a if r2 is None else check_rankings(r2, "r2")
    if a.shape[1] != b.shape[1]:
        raise DataError(f"`r1` and `r2` must rank the same number of alternatives; got "
                        f"{a.shape[1]} and {b.shape[1]}.")
    return a, b


@single_blas
def borda_gram(r1, r2=None, *, idx: int, nu: float | None = None) -> np.ndarray:
    """Gram matrix of the Borda kernel.

    ``kappa_b(r1, r2) = exp(-nu |b_1 - b_2|)`` with ``b_l = #{a : r_l(a) >= r_l(a*)}``, the number
    of alternatives (weakly) dominated by ``a*`` (itself included).

    Parameters
    ----------
    r1, r2 : array_like of int, shapes (n1, n_a), (n2, n_a)
        Rank vectors (0 = best). ``r2=None`` means ``r2 = r1``.
    idx : int
        Column of the alternative ``a*``.
    nu : float, optional
        Bandwidth; default ``1 / n_a`` (the paper's recommendation).

    Returns
    -------
    numpy.ndarray, shape (n1, n2)
        The kernel between every ranking of ``r1`` and every ranking of ``r2``.

    See Also
    --------
    jaccard_gram : The goal "are the best alternatives the same?".
    mallows_gram : The goal "are the alternatives ordered the same?".
    Kernel : A goal with its parameters.

    Notes
    -----
    Matteucci et al. (2024), sec. 4.2 and Definition A.1 (eq. 5). Range ``[exp(-nu n_a), 1]``.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> borda_gram([[0, 0, 0]], [[0, 1, 1]], idx=0)
    array([[1.]])
    """
    a, b = _pair(r1, r2)
    n_a = a.shape[1]
    idx = check_int(idx, "idx", min_value=0, max_value=n_a - 1)
    nu = 1.0 / n_a if nu is None else check_float(nu, "nu", min_value=0.0)
    b1 = (a >= a[:, [idx]]).sum(axis=1)
    b2 = (b >= b[:, [idx]]).sum(axis=1)
    return np.exp(-nu * np.abs(b1[:, None] - b2[None, :]))


@single_blas
def jaccard_gram(r1, r2=None, *, k: int = 1) -> np.ndarray:
    """Gram matrix of the Jaccard kernel on the top-``k`` tiers.

    ``kappa_j(r1, r2) = |T_1 ∩ T_2| / |T_1 ∪ T_2|`` with ``T_l = {a : r_l(a) < k}``, the
    alternatives in the best ``k`` tiers (tiers are numbered from 0).

    Parameters
    ----------
    r1, r2 : array_like of int
        Rank vectors (0 = best); ``r2=None`` means ``r2 = r1``.
    k : int, default 1
        Number of top tiers.

    Returns
    -------
    numpy.ndarray, shape (n1, n2)
        The kernel between every ranking of ``r1`` and every ranking of ``r2``.

    See Also
    --------
    borda_gram : The goal "is a* ranked consistently?".
    mallows_gram : The goal "are the alternatives ordered the same?".
    Kernel : A goal with its parameters.

    Notes
    -----
    Matteucci et al. (2024), sec. 4.2 and Definition A.2 (eq. 6). Intersections are one matrix
    product of the top-k indicator matrices; unions follow from
    ``|T_1| + |T_2| - |T_1 ∩ T_2|``. The paper writes ``r(a) <= k``; with tiers counted from 0
    the top-``k`` tiers are ``r(a) < k``, which is the reading that gives Example 4.1's value
    1/3 (and genexpy's).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> jaccard_gram([[0, 0, 0]], [[0, 1, 1]], k=1)
    array([[0.33333333]])
    """
    a, b = _pair(r1, r2)
    k = check_int(k, "k", min_value=1)
    t1 = (a < k).astype(float)
    t2 = (b < k).astype(float)
    inter = t1 @ t2.T
    union = t1.sum(1)[:, None] + t2.sum(1)[None, :] - inter
    return inter / union


def _sign_onehot(r: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """One-hot coding of sign(r(a_i) - r(a_j)) over the pairs (i, j): columns [+1 | -1]."""
    s = np.sign(r[:, i] - r[:, j])
    return np.concatenate([s > 0, s < 0], axis=1).astype(float)


@single_blas
def discordant_pairs(r1, r2=None) -> np.ndarray:
    """Number of discordant pairs ``n_d`` between every pair of rankings.

    A pair ordered oppositely counts 1, a pair tied in one ranking and not in the other counts
    1/2: ``n_d = 1/2 sum_{i<j} |sign(r1_i - r1_j) - sign(r2_i - r2_j)|``.

    Parameters
    ----------
    r1, r2 : array_like of int, shapes (n1, n_a), (n2, n_a)
        Rank vectors (0 = best); ``r2=None`` means ``r2 = r1``.

    Returns
    -------
    numpy.ndarray, shape (n1, n2)
        ``n_d`` between every ranking of ``r1`` and every ranking of ``r2``.

    See Also
    --------
    mallows_gram : The Mallows kernel ``exp(-nu n_d)``.

    Notes
    -----
    Matteucci et al. (2024), sec. 4.2 (Mallows kernel). With the one-hot coding ``E`` of the
    pair signs, ``|s - t| = |E_s|_1 + |E_t|_1 - 2 E_s . E_t``, so all pairs come from one
    matrix product.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> discordant_pairs([[0, 0, 0]], [[0, 1, 1]])
    array([[1.]])
    """
    a, b = _pair(r1, r2)
    n_a = a.shape[1]
    i, j = np.triu_indices(n_a, 1)
    # the one-hot codes take 2 C(n_a, 2) floats per ranking (320 KiB each for 200
    # alternatives): built for a block of pairs at a time; every sum is of 0/1 terms, an exact
    # integer, so the blocks add up to the same matrix bit for bit
    step = max(1, _PAIR_BLOCK_BYTES // (16 * max(len(a), len(b), 1)))
    ham = None
    for start in range(0, len(i), step):
        pb = slice(start, start + step)
        e1 = _sign_onehot(a, i[pb], j[pb])
        e2 = e1 if b is a else _sign_onehot(b, i[pb], j[pb])
        part = e1.sum(1)[:, None] + e2.sum(1)[None, :] - 2.0 * (e1 @ e2.T)
        ham = part if ham is None else ham + part
    if ham is None:
        ham = np.zeros((len(a), len(b)))
    return np.maximum(ham, 0.0) / 2.0


@single_blas
def mallows_gram(r1, r2=None, *, nu: float | None = None) -> np.ndarray:
    """Gram matrix of the Mallows kernel for rankings with ties.

    ``kappa_m(r1, r2) = exp(-nu n_d)`` with ``n_d`` from :func:`discordant_pairs`.

    Parameters
    ----------
    r1, r2 : array_like of int
        Rank vectors; ``r2=None`` means ``r2 = r1``.
    nu : float, optional
        Bandwidth; default ``1 / C(n_a, 2)`` (the paper's recommendation).

    Returns
    -------
    numpy.ndarray, shape (n1, n2)
        The kernel between every ranking of ``r1`` and every ranking of ``r2``.

    See Also
    --------
    discordant_pairs : The ``n_d`` it is built on.
    borda_gram : The goal "is a* ranked consistently?".
    jaccard_gram : The goal "are the best alternatives the same?".
    Kernel : A goal with its parameters.

    Notes
    -----
    Matteucci et al. (2024), sec. 4.2 and Definition A.3 (eq. 7). Since ``n_d <= C(n_a, 2)``,
    the range is ``[exp(-nu C(n_a, 2)), 1]`` (the paper prints ``exp(-2 nu C(n_a, 2))``, which
    holds for the unhalved sum of sign differences).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> np.round(mallows_gram([[0, 0, 0]], [[0, 1, 1]]), 4)
    array([[0.7165]])
    """
    a, b = _pair(r1, r2)
    n_a = a.shape[1]
    if n_a < 2:
        raise DataError("The Mallows kernel needs at least 2 alternatives; got 1.")
    nu = 1.0 / math.comb(n_a, 2) if nu is None else check_float(nu, "nu", min_value=0.0)
    return np.exp(-nu * discordant_pairs(a, b if r2 is not None else None))


@single_blas
def rbf_gram(x1, x2=None, *, gamma: float | None = None) -> np.ndarray:
    """Gaussian RBF Gram matrix on raw score vectors.

    ``kappa(x, y) = exp(-gamma ||x - y||^2)``, for users who prefer raw performances to rankings
    (Matteucci et al. 2024, sec. 6 "Limitations", suggests kernels on R^{n_a}).

    Parameters
    ----------
    x1, x2 : array_like of float, shapes (n1, n_a), (n2, n_a)
        Score vectors (no NaN); ``x2=None`` means ``x2 = x1``.
    gamma : float, optional
        Bandwidth; default ``1 / n_a``.

    Returns
    -------
    numpy.ndarray, shape (n1, n2)
        The kernel between every score vector of ``x1`` and every one of ``x2``.

    See Also
    --------
    mallows_gram : A kernel on the rankings instead of the scores.
    Kernel : A goal with its parameters.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.

    Examples
    --------
    >>> rbf_gram([[0.0, 1.0]], [[0.0, 1.0]])
    array([[1.]])
    """
    a = np.asarray(x1, dtype=float)
    b = a if x2 is None else np.asarray(x2, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise DataError(f"`x1` and `x2` must be 2-d with the same number of columns; got shapes "
                        f"{a.shape} and {b.shape}.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise DataError("`x1`/`x2` must be finite (impute or drop missing scores first).")
    big = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0))
    if big > RBF_MAX_SCORE:
        raise DataError(f"`x1`/`x2`: the RBF kernel squares score differences; scores beyond "
                        f"±{number(RBF_MAX_SCORE)} overflow (found {number(big)}); rescale them.")
    gamma = 1.0 / a.shape[1] if gamma is None else check_float(gamma, "gamma", min_value=0.0)
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return np.exp(-gamma * np.maximum(d2, 0.0))


_KINDS = ("borda", "jaccard", "mallows", "rbf")


@dataclass(frozen=True, slots=True)
class Kernel:
    """A goal of a study: a kernel over rankings with its parameters.

    Parameters
    ----------
    kind : {'borda', 'jaccard', 'mallows', 'rbf'}
        The goal: ``'borda'`` "is a* ranked consistently?", ``'jaccard'`` "are the best
        alternatives the same?", ``'mallows'`` "are the alternatives ordered the same?",
        ``'rbf'`` raw scores instead of rankings.
    alternative : str or int, optional
        Borda only: the alternative ``a*``, by name (resolved against the alternatives actually
        analyzed, after any filtering) or by column index.
    k : int, default 1
        Jaccard only: number of top tiers.
    nu : float, optional
        Borda/Mallows bandwidth (RBF: ``gamma``); ``None`` = the paper's default, resolved from
        ``n_a`` at use time and never rounded.

    See Also
    --------
    parse_goal : A kernel from a goal string such as ``'jaccard:1'``.
    borda_gram, jaccard_gram, mallows_gram, rbf_gram : The Gram matrices.

    Notes
    -----
    Matteucci et al. (2024), sec. 4.2: the kernels, their range (Prop. 4.1) and the MMD
    threshold ``epsilon*`` of a tolerance ``delta*`` (eq. 2).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> k = Kernel("jaccard", k=1)
    >>> k.label, round(float(k.epsilon(0.05, n_a=5)), 4)
    ('jaccard(k=1)', 0.3162)
    """

    kind: str
    alternative: str | int | None = None
    k: int = 1
    nu: float | None = None

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ParameterError(f"`kind` must be one of {', '.join(_KINDS)}; got {self.kind!r}.")
        if self.kind == "borda" and self.alternative is None:
            raise ParameterError("The Borda kernel needs `alternative` (the a* whose position "
                                 "is the goal); got None.")
        check_int(self.k, "k", min_value=1)
        if self.nu is not None:
            check_float(self.nu, "nu", min_value=0.0)

    @property
    def label(self) -> str:
        """A short name, e.g. ``borda(OHE)``, ``jaccard(k=1)``, ``mallows``."""
        nu = "" if self.nu is None else f", nu={self.nu:g}"
        if self.kind == "borda":
            return f"borda({self.alternative}{nu})"
        if self.kind == "jaccard":
            return f"jaccard(k={self.k})"
        return f"{self.kind}{'(' + nu[2:] + ')' if nu else ''}"

    @dropped("option")
    def resolve_index(self, alternatives=None, n_a: int | None = None) -> int:
        """The column of the Borda alternative among ``alternatives`` (names after filtering).

        Parameters
        ----------
        alternatives : sequence, optional
            Names of the analyzed alternatives (needed when ``alternative`` is a name).
        n_a : int, optional
            Number of alternatives, to check a column index.

        Returns
        -------
        int
            The column of ``a*``.
        """
        return self._resolve_index(alternatives, n_a, "alternative")

    def _resolve_index(self, alternatives, n_a, option: str) -> int:
        alt = self.alternative
        if alternatives is not None:
            names = [str(a) for a in alternatives]
            if str(alt) in names:
                return names.index(str(alt))
            if isinstance(alt, (int, np.integer)) and not isinstance(alt, bool):
                return check_int(int(alt), option, min_value=0, max_value=len(names) - 1)
            raise ParameterError(f"`{option}`: Borda alternative {alt!r} is not among the "
                                 f"analyzed alternatives ({', '.join(names[:10])}"
                                 f"{', ...' if len(names) > 10 else ''}).")
        if isinstance(alt, (int, np.integer)):
            return check_int(int(alt), option, min_value=0,
                             max_value=(n_a - 1) if n_a else None)
        raise ParameterError(f"`{option}`: Borda alternative {alt!r} is a name: pass "
                             "`alternatives`.")

    @dropped("option")
    def check(self, alternatives) -> Kernel:
        """Check that this goal makes sense for ``alternatives`` (the analyzed ones).

        Every goal needs at least 2 alternatives (one alternative has a single, trivial
        ranking); the Jaccard goal needs ``k`` below the number of alternatives (with
        ``k >= n_a`` every alternative is always in the top ``k`` tiers, the kernel is
        constantly 1 and n* = 1 whatever the data); a Borda alternative must be one of them.

        Parameters
        ----------
        alternatives : sequence
            Names of the analyzed alternatives.

        Returns
        -------
        Kernel
            ``self``.

        Raises
        ------
        DataError, ParameterError
            Naming ``kernels``, the parameter of :func:`~replikit.generalize.analyze` that
            takes the goals.
        """
        option = "kernels"
        names = list(alternatives)
        n_a = len(names)
        if n_a < 2:
            raise DataError(f"`{option}` {self.label}: rankings need at least 2 alternatives; "
                            f"got {n_a} ({', '.join(map(str, names))}).")
        if self.kind == "jaccard" and self.k >= n_a:
            raise ParameterError(
                f"`{option}` jaccard:{self.k}: k counts the top tiers and must be smaller than "
                f"the number of alternatives; with k >= {n_a} alternatives every alternative is "
                "always in the top k and n* = 1 means nothing. Use jaccard:1 for the best "
                f"alternative (k <= {n_a - 1}).")
        if self.kind == "borda":
            self._resolve_index(names, None, option)
        return self

    def effective_nu(self, n_a: int) -> float:
        """The bandwidth used for ``n_a`` alternatives (paper defaults when ``nu`` is None).

        Parameters
        ----------
        n_a : int
            Number of alternatives.

        Returns
        -------
        float
            ``nu`` (NaN for the Jaccard kernel, which has none).
        """
        if self.nu is not None:
            return float(self.nu)
        if n_a < 2 and self.kind in ("borda", "mallows", "rbf"):
            raise DataError(f"The {self.kind} kernel needs at least 2 alternatives; got {n_a}.")
        if self.kind == "borda":
            return 1.0 / n_a
        if self.kind == "mallows":
            return 1.0 / math.comb(n_a, 2)
        if self.kind == "rbf":
            return 1.0 / n_a
        return float("nan")

    def gram(self, r1, r2=None, *, alternatives=None) -> np.ndarray:
        """The Gram matrix between two samples (rank vectors; raw scores for ``rbf``).

        Parameters
        ----------
        r1, r2 : array_like, shapes (n1, n_a), (n2, n_a)
            The samples; ``r2=None`` means ``r2 = r1``.
        alternatives : sequence, optional
            Names of the columns (to resolve a Borda alternative by name).

        Returns
        -------
        numpy.ndarray, shape (n1, n2)
            The kernel between every pair.
        """
        n_a = np.shape(r1)[-1]
        if self.kind == "borda":
            idx = self._resolve_index(alternatives, n_a, "alternative")
            return borda_gram(r1, r2, idx=idx, nu=self.effective_nu(n_a))
        if self.kind == "jaccard":
            return jaccard_gram(r1, r2, k=self.k)
        if self.kind == "mallows":
            return mallows_gram(r1, r2, nu=self.effective_nu(n_a))
        return rbf_gram(r1, r2, gamma=self.effective_nu(n_a))

    def sup(self, n_a: int) -> float:
        """``kappa_sup`` (Prop. 4.1): 1 for all four kernels.

        Parameters
        ----------
        n_a : int
            Number of alternatives.

        Returns
        -------
        float
            The kernel's largest value.
        """
        return 1.0

    def inf(self, n_a: int) -> float:
        """``kappa_inf`` (Prop. 4.1) for ``n_a`` alternatives.

        Parameters
        ----------
        n_a : int
            Number of alternatives.

        Returns
        -------
        float
            The kernel's smallest value.
        """
        nu = self.effective_nu(n_a)
        if self.kind == "borda":
            return math.exp(-nu * n_a)
        if self.kind == "mallows":
            return math.exp(-nu * math.comb(n_a, 2))
        return 0.0

    def f(self, delta, n_a: int):
        """``f_kappa(delta)`` of eq. (2): the kernel value at dissimilarity ``delta``.

        Borda: ``delta = |b_1 - b_2| / n_a``, ``f = exp(-nu n_a delta)``; Jaccard:
        ``f = 1 - delta``; Mallows: ``delta = n_d / C(n_a, 2)``, ``f = exp(-nu C(n_a,2) delta)``;
        RBF: ``delta = ||x - y||^2 / n_a`` (mean squared score difference),
        ``f = exp(-gamma n_a delta)`` (genexpy's convention). At the default bandwidths the
        Borda and Mallows forms reduce to the paper's ``exp(-delta)``.

        Parameters
        ----------
        delta : float or array_like
            Dissimilarity in [0, 1].
        n_a : int
            Number of alternatives.

        Returns
        -------
        float or numpy.ndarray
            The kernel value.
        """
        d = np.asarray(delta, dtype=float)
        nu = self.effective_nu(n_a)
        if self.kind == "borda":
            return np.exp(-nu * n_a * d)
        if self.kind == "jaccard":
            return 1.0 - d
        if self.kind == "mallows":
            return np.exp(-nu * math.comb(n_a, 2) * d)
        return np.exp(-nu * n_a * d)

    @renamed(delta="tolerance")
    def epsilon(self, tolerance, n_a: int):
        """The MMD threshold of a tolerance: ``epsilon* = sqrt(2 (kappa_sup - f_kappa(delta*)))``.

        Matteucci et al. (2024), eq. (2), with ``delta* = tolerance``.

        Parameters
        ----------
        tolerance : float or array_like
            ``delta*``, the similarity threshold, in [0, 1].
        n_a : int
            Number of alternatives.

        Returns
        -------
        numpy.ndarray
            ``epsilon*`` for each tolerance.
        """
        d = np.asarray(tolerance, dtype=float)
        if np.any((d < 0) | (d > 1)):
            raise ParameterError(f"`tolerance` must lie in [0, 1]; got {tolerance!r}.")
        return np.sqrt(2.0 * np.maximum(self.sup(n_a) - self.f(d, n_a), 0.0))

    def mmd_max(self, n_a: int) -> float:
        """The upper bound of the MMD, ``sqrt(2 (kappa_sup - kappa_inf))`` (Prop. 4.1).

        Parameters
        ----------
        n_a : int
            Number of alternatives.

        Returns
        -------
        float
            The largest MMD this kernel allows.
        """
        return math.sqrt(2.0 * (self.sup(n_a) - self.inf(n_a)))


@renamed(text="goal")
@dropped("option")
def parse_goal(goal: str) -> Kernel:
    """Parse a goal string: ``borda:NAME``, ``jaccard[:K]``, ``mallows[:NU]``, ``rbf[:GAMMA]``.

    Parameters
    ----------
    goal : str
        The goal, as :func:`~replikit.generalize.analyze` takes it in ``kernels`` (and the
        command line in ``--goal``).

    Returns
    -------
    Kernel
        The kernel of the goal, with its parameters.

    See Also
    --------
    Kernel : The same goal built from its parts.

    Examples
    --------
    >>> parse_goal("jaccard:1")
    Kernel(kind='jaccard', alternative=None, k=1, nu=None)
    """
    return _parse_goal(goal, "goal")


def _parse_goal(text: str, option: str) -> Kernel:
    """:func:`parse_goal`, naming the parameter ``option`` in its messages."""
    usage = "borda:NAME, jaccard:K, mallows[:NU] or rbf[:GAMMA]"
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"`{option}` must be {usage}; got {text!r}.")
    kind, _, arg = text.partition(":")
    kind = kind.strip().lower()
    arg = arg.strip()
    if kind == "borda":
        if not arg:
            raise ParameterError(f"`{option}` borda needs an alternative: borda:NAME; got "
                                 f"{text!r}.")
        return Kernel("borda", alternative=arg)
    if kind == "jaccard":
        try:
            k = int(arg) if arg else 1
        except ValueError:
            raise ParameterError(f"`{option}` jaccard:K needs a whole number K >= 1; got "
                                 f"{text!r}.") from None
        if k < 1:
            raise ParameterError(f"`{option}` jaccard:K needs K >= 1 (the number of top "
                                 f"tiers); got {text!r}.")
        return Kernel("jaccard", k=k)
    if kind in ("mallows", "rbf"):
        try:
            nu = float(arg) if arg else None
        except ValueError:
            raise ParameterError(f"`{option}` {kind}:NU needs a number; got {text!r}.") from None
        if nu is not None and not (math.isfinite(nu) and nu > 0):
            raise ParameterError(f"`{option}` {kind}:NU needs a positive bandwidth; got "
                                 f"{text!r}.")
        return Kernel(kind, nu=nu)
    raise ParameterError(f"`{option}` must be {usage}; got {text!r}.")
