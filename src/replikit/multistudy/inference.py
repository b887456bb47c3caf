"""Uncertainty and tests for replicability (Parmigiani 2023, sec. 6), vectorized over resamples.

Resampling schemes (sec. 6.1):

``within``      bootstrap of units within each study (SEs of ``U_k`` and of ``U_k − U_k'``,
                conditional on the studies);
``cluster``     Davison & Hinkley's randomized cluster bootstrap: K studies drawn with
                replacement, then (``within=True``) units drawn with replacement inside each;
``studystrap``  Loewinger et al.'s study strap: each pseudo-study draws a bag of ``r`` study
                labels with replacement and takes ``round(c_k/r · n_k)`` units of study ``k``
                without replacement (``c_k`` = copies of k in the bag); ``r = 1`` reproduces
                the observed studies, large ``r`` makes units exchangeable across studies.

For each scheme the result holds the resampled ``max|U_k − U_k'|`` (Def. 3.1), its relative
form (Def. 3.2) and ``max TV(F_k, F_k')`` (Def. 5.1), and the share of resamples meeting
ε-replicability within a tolerance. The permutation test (sec. 6.2) permutes study labels.

Every scheme is an array expression over a block of resamples (index matrices, ``bincount``
group sums); blocks hold at most ~4 million unit draws so memory stays bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import renamed, renamed_fields
from .._format import number, pvalue
from .._random import check_random_state
from .._threads import single_blas
from .._validation import check_choice, check_confidence_level, check_float, check_int
from ..errors import DataError, ParameterError
from ..methods import PermutationMethod
from ..results import ConfidenceInterval, Result
from ._data import MultiStudyData, as_study_data
from ._names import utility_words
from .measures import joint_cells
from .utilities import _group_mean, _unit_values, parse_utility

__all__ = ["ResampleResult", "resample_replicability", "PermutationMethod", "PermutationResult",
           "permutation_test", "STATISTICS"]

STATISTICS = ("absolute", "relative", "tv")
_STATISTIC_WORDS = {"absolute": "max |U_k - U_k'|", "relative": "max relative difference",
                    "tv": "max TV(F_k, F_k')"}
_BLOCK = 4_000_000


# -- statistics of a block of resamples ------------------------------------------------------

def _stats(U: np.ndarray, F: np.ndarray | None) -> dict[str, np.ndarray]:
    """``U``: (n_resamples, K) study utilities; ``F``: (n_resamples, K, C) cell frequencies or
    None."""
    out = {"absolute": U.max(axis=1) - U.min(axis=1)}
    K = U.shape[1]
    rel = np.zeros(U.shape[0])
    tv = np.zeros(U.shape[0]) if F is not None else None
    for k in range(K - 1):  # loop over studies, vectorized over resamples and partners
        a, b = U[:, k:k + 1], U[:, k + 1:]
        num = 2.0 * np.abs(a - b)
        den = np.abs(a + b)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(num == 0, 0.0, num / den)
        rel = np.maximum(rel, r.max(axis=1))
        if F is not None:
            tv = np.maximum(tv, 0.5 * np.abs(F[:, k:k + 1, :] - F[:, k + 1:, :]).sum(-1).max(1))
    out["relative"] = rel
    if tv is not None:
        out["tv"] = tv
    return out


def _observed(d: MultiStudyData, u: np.ndarray, cells, C) -> tuple[np.ndarray, np.ndarray | None]:
    U = _group_mean(u, d.codes, d.K)
    F = None
    if cells is not None:
        F = np.bincount(d.codes * C + cells, minlength=d.K * C).reshape(d.K, C) / d.sizes[:, None]
    return U, F


# -- schemes: each yields blocks of (U (b, K), F (b, K, C) or None) ---------------------------

def _within_blocks(d, u, cells, C, n_res, rng):
    n, K, sizes, starts = d.n, d.K, d.sizes, d.starts
    codes = d.codes
    base, size = starts[codes], sizes[codes]
    step = max(1, _BLOCK // n)
    for b0 in range(0, n_res, step):
        bb = min(step, n_res - b0)
        idx = base + (rng.random((bb, n)) * size).astype(np.int64)
        U = np.add.reduceat(u[idx], starts[:-1], axis=1) / sizes
        F = None
        if cells is not None:
            flat = (np.arange(bb)[:, None] * K + codes) * C + cells[idx]
            F = np.bincount(flat.ravel(), minlength=bb * K * C).reshape(bb, K, C) / sizes[:, None]
        yield U, F


def _cluster_blocks(d, u, cells, C, n_res, rng, within):
    K, sizes, starts = d.K, d.sizes, d.starts
    U_obs, F_obs = _observed(d, u, cells, C)
    step = max(1, _BLOCK // d.n)
    for b0 in range(0, n_res, step):
        bb = min(step, n_res - b0)
        s = rng.integers(0, K, size=(bb, K))
        if not within:
            yield U_obs[s], (None if F_obs is None else F_obs[s])
            continue
        m = sizes[s].ravel()
        g = np.repeat(np.arange(bb * K), m)
        src = np.repeat(s.ravel(), m)
        idx = starts[src] + (rng.random(m.sum()) * sizes[src]).astype(np.int64)
        U = (np.bincount(g, weights=u[idx], minlength=bb * K) / m).reshape(bb, K)
        F = None
        if cells is not None:
            F = (np.bincount(g * C + cells[idx], minlength=bb * K * C).reshape(bb * K, C)
                 / m[:, None]).reshape(bb, K, C)
        yield U, F


def _strap_blocks(d, u, cells, C, n_res, rng, bag_size):
    K, sizes, starts = d.K, d.sizes, d.starts
    step = max(1, _BLOCK // (d.n * K))
    for b0 in range(0, n_res, step):
        bb = min(step, n_res - b0)
        P = bb * K  # pseudo-studies in this block
        bags = rng.multinomial(bag_size, np.full(K, 1.0 / K), size=P)  # (P, K) copies c_k
        m = np.rint(bags / bag_size * sizes).astype(np.int64)
        m = np.where(bags > 0, np.maximum(m, 1), 0)
        S = np.zeros(P)
        counts = np.zeros((P, C)) if cells is not None else None
        for k in range(K):
            block_u = u[starts[k]:starts[k + 1]]
            nk = block_u.size
            mk = m[:, k]
            full = mk == nk
            if full.any():
                S[full] += block_u.sum()
                if counts is not None:
                    counts[full] += np.bincount(cells[starts[k]:starts[k + 1]], minlength=C)
            part = np.flatnonzero((mk > 0) & ~full)
            if part.size == 0:
                continue
            perm = np.argsort(rng.random((part.size, nk)), axis=1)
            csum = np.cumsum(block_u[perm], axis=1)
            S[part] += csum[np.arange(part.size), mk[part] - 1]
            if counts is not None:
                chosen = np.arange(nk)[None, :] < mk[part][:, None]
                cell_k = cells[starts[k]:starts[k + 1]][perm]
                flat = (np.arange(part.size)[:, None] * C + cell_k)[chosen]
                counts[part] += np.bincount(flat, minlength=part.size * C).reshape(part.size, C)
        M = m.sum(axis=1)
        U = (S / M).reshape(bb, K)
        F = None if counts is None else (counts / M[:, None]).reshape(bb, K, C)
        yield U, F


def _permutation_blocks(d, u, cells, C, n_res, rng):
    n, K, sizes = d.n, d.K, d.sizes
    step = max(1, _BLOCK // n)
    for b0 in range(0, n_res, step):
        bb = min(step, n_res - b0)
        pc = rng.permuted(np.tile(d.codes, (bb, 1)), axis=1)
        g = (np.arange(bb)[:, None] * K + pc).ravel()
        U = (np.bincount(g, weights=np.tile(u, bb), minlength=bb * K) / np.tile(sizes, bb)
             ).reshape(bb, K)
        F = None
        if cells is not None:
            F = (np.bincount(g * C + np.tile(cells, bb), minlength=bb * K * C)
                 .reshape(bb, K, C) / sizes[:, None])
        yield U, F


# -- results ---------------------------------------------------------------------------------

@renamed_fields(epsilon="tolerance")
@dataclass(frozen=True, slots=True)
class ResampleResult(Result):
    """Resampling distribution of replicability measures (Parmigiani 2023, sec. 6.1).

    Attributes
    ----------
    bootstrap : str
        The resampling scheme: ``'within'``, ``'cluster'`` or ``'studystrap'``.
    n_resamples : int
        The number of resamples.
    studies : tuple
        Study labels.
    utility_name : str
        The utility.
    observed : dict
        Observed ``absolute`` (max|U_k − U_k'|), ``relative`` and ``tv`` statistics.
    draws : dict of ndarray
        Resampled values of each statistic, shape (n_resamples,).
    tolerance : float or None
        The tolerance ε of :meth:`proportion_replicable` in the table, when one was given.
    confidence_level : float
        Level of the percentile intervals in the table.
    utility_draws : ndarray of shape (n_resamples, K) or None
        Resampled ``U_k`` (within-study bootstrap only: pseudo-studies of the other schemes
        carry no study identity).
    utility : ndarray or None
        Observed ``U_k``.
    settings : dict
        ``bag_size``, ``within``, ``bins``, ``cells``.

    See Also
    --------
    resample_replicability : Computes it.
    permutation_test : The test of exact replicability.

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.multistudy import from_arrays, resample_replicability
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 200); p = np.where(rng.random(200) < .8, y, 1 - y)
    >>> r = resample_replicability(from_arrays(y, p, np.repeat(["a", "b"], 100)),
    ...                            n_resamples=100, random_state=0)
    >>> ci = r.confidence_interval()
    >>> bool(ci.low < r.observed["absolute"] < ci.high)
    True
    """

    bootstrap: str
    n_resamples: int
    studies: tuple
    utility_name: str
    observed: dict
    draws: dict = field(repr=False)
    tolerance: float | None = None
    confidence_level: float = 0.95
    utility_draws: np.ndarray | None = field(default=None, repr=False)
    utility: np.ndarray | None = field(default=None, repr=False)
    settings: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        return (f"Resampled replicability ({self.bootstrap} bootstrap, "
                f"{number(self.n_resamples)} resamples; {utility_words(self.utility_name)}; "
                "Parmigiani 2023, sec. 6.1)")

    @renamed(epsilon="tolerance")
    def proportion_replicable(self, tolerance: float, statistic: str = "absolute") -> float:
        """Share of resamples with ``statistic <= tolerance``.

        The resampling measure of whether φ meets Def. 3.1, 3.2 or 5.1 (sec. 6.1).

        Parameters
        ----------
        tolerance : float >= 0
            The tolerance ε.
        statistic : {'absolute', 'relative', 'tv'}, default 'absolute'
            Which statistic.

        Returns
        -------
        float
            In [0, 1].
        """
        eps = check_float(tolerance, "tolerance", min_value=0.0)
        check_choice(statistic, "statistic", tuple(self.draws))
        return float(np.mean(self.draws[statistic] <= eps))

    def confidence_interval(self, confidence_level: float = 0.95,
                            statistic: str = "absolute") -> ConfidenceInterval:
        """Percentile interval of a resampled statistic.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.
        statistic : {'absolute', 'relative', 'tv'}, default 'absolute'
            Which statistic.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        level = check_confidence_level(confidence_level)
        check_choice(statistic, "statistic", tuple(self.draws))
        a = (1 - level) / 2
        lo, hi = np.quantile(self.draws[statistic], [a, 1 - a])
        return ConfidenceInterval(float(lo), float(hi))

    def utility_se(self) -> np.ndarray:
        """Bootstrap SE of each ``U_k`` (within-study bootstrap).

        Returns
        -------
        ndarray of shape (K,)
            Standard deviation of the resampled ``U_k``.
        """
        self._need_within()
        return self.utility_draws.std(axis=0, ddof=1)

    def utility_interval(self, confidence_level: float | None = None) -> np.ndarray:
        """Percentile interval of each ``U_k`` (within-study bootstrap).

        Parameters
        ----------
        confidence_level : float, optional
            Level of the intervals (default: the result's ``confidence_level``).

        Returns
        -------
        ndarray of shape (K, 2)
            Low and high end per study.
        """
        self._need_within()
        level = check_confidence_level(confidence_level or self.confidence_level)
        a = (1 - level) / 2
        return np.quantile(self.utility_draws, [a, 1 - a], axis=0).T

    def difference_se(self) -> pd.DataFrame:
        """Bootstrap SE of every ``U_k − U_k'`` (the matrix of sec. 3.2).

        Studies are taken as independent (units are resampled within each study
        independently).

        Returns
        -------
        DataFrame
            K×K, rows and columns the studies.
        """
        self._need_within()
        D = self.utility_draws[:, :, None] - self.utility_draws[:, None, :]
        return pd.DataFrame(D.std(axis=0, ddof=1), index=list(self.studies),
                            columns=list(self.studies))

    def _need_within(self) -> None:
        if self.utility_draws is None:
            raise ParameterError(f"per-study utilities are resampled by `bootstrap`='within' "
                                 f"only; this result used {self.bootstrap!r}.")

    def study_frame(self) -> pd.DataFrame:
        """Per study: ``study, utility, se, ci_low, ci_high`` (within-study bootstrap).

        Returns
        -------
        DataFrame
            One row per study.
        """
        ci = self.utility_interval()
        return pd.DataFrame({"study": list(self.studies), "utility": self.utility,
                             "se": self.utility_se(), "ci_low": ci[:, 0], "ci_high": ci[:, 1]})

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic.

        Returns
        -------
        DataFrame
            ``bootstrap, statistic, estimate`` (observed), ``mean``, ``se``, ``ci_low``,
            ``ci_high`` (percentile interval at ``confidence_level``), ``n_resamples`` and, with
            ``tolerance``, ``tolerance`` and ``proportion_replicable``.
        """
        a = (1 - self.confidence_level) / 2
        rows = []
        for name, v in self.draws.items():
            lo, hi = np.quantile(v, [a, 1 - a])
            row = {"bootstrap": self.bootstrap, "statistic": name, "estimate": self.observed[name],
                   "mean": float(v.mean()), "se": float(v.std(ddof=1)), "ci_low": float(lo),
                   "ci_high": float(hi), "n_resamples": self.n_resamples}
            if self.tolerance is not None:
                row["tolerance"] = self.tolerance
                row["proportion_replicable"] = float(np.mean(v <= self.tolerance))
            rows.append(row)
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        lines = [self.title]
        for r in self.to_frame().itertuples(index=False):
            line = (f"  {_STATISTIC_WORDS[r.statistic]}: observed {number(r.estimate, 4)}, "
                    f"resampled mean {number(r.mean, 4)} (SE {number(r.se, 3)})")
            if self.tolerance is not None:
                line += (f", share within ε = {number(self.tolerance)}: "
                         f"{number(r.proportion_replicable, 3)}")
            lines.append(line)
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PermutationResult(Result):
    """Permutation test of study labels (Parmigiani 2023, sec. 6.2).

    ``pvalue = (1 + #{T_b >= T_obs}) / (n_resamples + 1)`` — the +1 counts the observed
    labeling among the permutations, so the test is exact (valid at every level) under
    exchangeability of units across studies.

    Attributes
    ----------
    statistic : float
        The observed statistic ``T_obs``.
    pvalue : float
        The permutation p-value.
    statistic_name : {'absolute', 'relative', 'tv'}
        Which statistic: ``max|U_k − U_k'|``, its relative form or ``max TV(F_k, F_k')``.
    n_resamples : int
        Random permutations.
    utility_name : str
        The utility.
    null_distribution : ndarray of shape (n_resamples,)
        The statistic under the permutations.
    alternative : str
        ``'greater'``: large statistics speak against exact replicability.

    See Also
    --------
    permutation_test : Computes it.

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.multistudy import from_arrays, permutation_test
    >>> rng = np.random.default_rng(1)
    >>> d = from_arrays(rng.normal(size=300), rng.normal(size=300), np.repeat([1, 2, 3], 100))
    >>> r = permutation_test(d, "squared", n_resamples=99, random_state=0)
    >>> r.alternative, r.null_distribution.shape
    ('greater', (99,))
    """

    statistic: float
    pvalue: float
    statistic_name: str
    n_resamples: int
    utility_name: str
    null_distribution: np.ndarray = field(repr=False)
    alternative: str = "greater"

    @property
    def title(self) -> str:
        return "Permutation test of study labels (Parmigiani 2023, sec. 6.2)"

    def to_frame(self) -> pd.DataFrame:
        """One row: the test.

        Returns
        -------
        DataFrame
            ``method, statistic_name, statistic, pvalue, alternative, n_resamples, null_mean,
            utility``.
        """
        return pd.DataFrame([{"method": "permutation of study labels",
                              "statistic_name": self.statistic_name, "statistic": self.statistic,
                              "pvalue": self.pvalue, "alternative": self.alternative,
                              "n_resamples": self.n_resamples,
                              "null_mean": float(self.null_distribution.mean()),
                              "utility": self.utility_name}])

    def __str__(self) -> str:
        return (f"{self.title}\n  {_STATISTIC_WORDS[self.statistic_name]} = "
                f"{number(self.statistic, 4)}, p = {pvalue(self.pvalue)} "
                f"({number(self.n_resamples)} permutations)")


# -- public functions ------------------------------------------------------------------------

def _distance_use(u) -> str:
    """φ(x) in the distance: the user's action when a cost utility thresholds risk scores."""
    return "decision" if (u.kind == "cost" and u.threshold is not None) else "pred"


def _prepare(data, utility, bins, model, repeat, subgroup, need_cells):
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup)
    if d.K < 2:
        raise DataError(f"replicability across studies needs at least 2 studies; got {d.K} "
                        "(for one study compare with a benchmark: benchmark_comparison).")
    u_spec = parse_utility(utility)
    u, _ = _unit_values(d, u_spec)
    cells = C = None
    desc = ""
    if need_cells:
        cells, C, desc = joint_cells(d, bins=bins, use=_distance_use(u_spec), utility=u_spec)
    return d, u_spec, u, cells, C, desc


@renamed(epsilon="tolerance")
@single_blas
def resample_replicability(data, utility="accuracy", *, bootstrap: str = "within",
                           n_resamples: int = 1000, tolerance: float | None = None,
                           distance: bool = True, bins: int = 10, bag_size: int | None = None,
                           within: bool = True, confidence_level: float = 0.95,
                           random_state=None, model=None, repeat: int | None = 0,
                           subgroup=None) -> ResampleResult:
    """Resampling uncertainty of ε-replicability (Parmigiani 2023, sec. 6.1).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        The rule's predictions on the units of every study.
    utility : str, Utility or callable, default 'accuracy'
        See :func:`~replikit.multistudy.parse_utility`. A data-driven threshold
        (``'empirical'``) is computed once on the observed data and held fixed.
    bootstrap : {'within', 'cluster', 'studystrap'}, default 'within'
        The resampling scheme. ``'within'``: units resampled with replacement inside each
        study (conditional on the studies; gives SEs of ``U_k`` and of the difference matrix).
        ``'cluster'``: randomized cluster bootstrap (Davison & Hinkley 1997, sec. 3.8): K
        studies drawn with replacement, then units within each (``within=False`` keeps drawn
        studies intact). ``'studystrap'``: the study strap of Loewinger et al. (2022),
        pseudo-studies with bag size ``bag_size``.
    n_resamples : int, default 1000
        The number of resamples.
    tolerance : float, optional
        The tolerance ε: report the share of resamples meeting ε-replicability.
    distance : bool, default True
        Also resample ``max TV(F_k, F_k')`` (cells as in :func:`distance_matrix`).
    bins : int, default 10
        Quantile bins of continuous predictions/outcomes for the distance.
    bag_size : int, optional
        Study strap bag size ``r`` (default: K). ``r = 1`` gives back the observed studies;
        larger ``r`` mixes studies, down to full exchangeability.
    within : bool, default True
        Cluster bootstrap: also resample units within the drawn studies.
    confidence_level : float, default 0.95
        Level of the percentile intervals.
    random_state : None, int or Generator
        Same value, same draws (bit-identical).
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.
    subgroup : mask, column name or callable, optional
        Restrict to ``x ∈ X*`` (see :func:`study_utilities`).

    Returns
    -------
    ResampleResult
        The resampled statistics and, for ``'within'``, the resampled ``U_k``.

    See Also
    --------
    permutation_test : The test of exact replicability.
    epsilon_test : An upper confidence bound of the spread from the delta method.
    assess : Runs this with the rest of the analysis.

    Notes
    -----
    With ``m_k`` draws from study k, a pseudo-study's utility is ``Σ_k Σ_{i∈draw_k} U_i /
    Σ_k m_k``; the statistics are ``max_{j,j'} |U_j − U_j'|`` (Def. 3.1),
    ``max 2|U_j − U_j'|/|U_j + U_j'|`` (Def. 3.2) and ``max TV(F_j, F_j')`` (Def. 5.1) over the
    K pseudo-studies of a resample.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and Their Application.
       Cambridge University Press.
    .. [3] Loewinger, G., Patil, P., Kishida, K. T. & Parmigiani, G. (2022). Hierarchical
       Resampling for Bagging in Multistudy Prediction with Applications to Human
       Neurochemical Sensing. The Annals of Applied Statistics, 16(4), 2145–2165.
       https://doi.org/10.1214/21-AOAS1574

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400); p = np.where(rng.random(400) < .8, y, 1 - y)
    >>> r = resample_replicability(from_arrays(y, p, np.repeat(["a", "b"], 200)),
    ...                            n_resamples=200, random_state=0)
    >>> r.utility_se().round(2).tolist()
    [0.03, 0.03]
    """
    check_choice(bootstrap, "bootstrap", ("within", "cluster", "studystrap"))
    n_res = check_int(n_resamples, "n_resamples", min_value=2)
    eps = None if tolerance is None else check_float(tolerance, "tolerance", min_value=0.0)
    level = check_confidence_level(confidence_level)
    d, u_spec, u, cells, C, desc = _prepare(data, utility, bins, model, repeat, subgroup, distance)
    if bag_size is None:
        bag_size = d.K
    bag_size = check_int(bag_size, "bag_size", min_value=1)
    rng = check_random_state(random_state)
    if bootstrap == "within":
        blocks = _within_blocks(d, u, cells, C, n_res, rng)
    elif bootstrap == "cluster":
        blocks = _cluster_blocks(d, u, cells, C, n_res, rng, bool(within))
    else:
        blocks = _strap_blocks(d, u, cells, C, n_res, rng, bag_size)
    parts: dict[str, list] = {}
    Us = []
    for U, F in blocks:
        for k, v in _stats(U, F).items():
            parts.setdefault(k, []).append(v)
        if bootstrap == "within":
            Us.append(U)
    draws = {k: np.concatenate(v) for k, v in parts.items()}
    U_obs, F_obs = _observed(d, u, cells, C)
    observed = {k: float(v[0]) for k, v in _stats(U_obs[None], None if F_obs is None
                                                    else F_obs[None]).items()}
    settings = {"bins": bins, "cells": desc}
    if bootstrap == "studystrap":
        settings["bag_size"] = bag_size
    if bootstrap == "cluster":
        settings["within"] = bool(within)
    return ResampleResult(bootstrap, n_res, tuple(d.studies), u_spec.name, observed, draws, eps,
                          level, np.concatenate(Us) if Us else None, U_obs, settings)


@single_blas
def permutation_test(data, utility="accuracy", *, statistic: str = "absolute",
                     n_resamples: int = 999, bins: int = 10, random_state=None, model=None,
                     repeat: int | None = 0, subgroup=None) -> PermutationResult:
    """Test exact replicability by permuting study labels (Parmigiani 2023, sec. 6.2).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        The rule's predictions on the units of every study.
    utility : str, Utility or callable, default 'accuracy'
        See :func:`~replikit.multistudy.parse_utility`.
    statistic : {'absolute', 'relative', 'tv'}, default 'absolute'
        ``max|U_k − U_k'|`` (Def. 3.1), its relative form (Def. 3.2), or
        ``max_{k,k'} TV(F_k, F_k')`` (Def. 5.1, the example of sec. 6.2).
    n_resamples : int, default 999
        Random permutations of the study labels.
    bins : int, default 10
        Quantile bins for continuous predictions/outcomes (``'tv'``).
    random_state : None, int or Generator
        Same value, same permutations.
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.
    subgroup : mask, column name or callable, optional
        Restrict to ``x ∈ X*`` (see :func:`study_utilities`).

    Returns
    -------
    PermutationResult
        ``pvalue = (1 + #{T_b >= T_obs}) / (n_resamples + 1)``.

    See Also
    --------
    resample_replicability : Resampling uncertainty of the same statistics.
    epsilon_test : Tests replicability within a tolerance instead of exact replicability.

    Notes
    -----
    The null hypothesis is exchangeability of units across studies, so that all ``F_k`` are
    equal (and therefore all expected ``U_k``). Study sizes are kept. A small relative tolerance
    (1e-12) counts ties as ``>=``.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> d = from_arrays(rng.normal(size=300), rng.normal(size=300), np.repeat([1, 2, 3], 100))
    >>> 0 < permutation_test(d, "squared", n_resamples=199, random_state=0).pvalue <= 1
    True
    """
    check_choice(statistic, "statistic", STATISTICS)
    n_res = check_int(n_resamples, "n_resamples", min_value=1)
    d, u_spec, u, cells, C, _ = _prepare(data, utility, bins, model, repeat, subgroup,
                                         statistic == "tv")
    rng = check_random_state(random_state)
    U_obs, F_obs = _observed(d, u, cells, C)
    t_obs = float(_stats(U_obs[None], None if F_obs is None else F_obs[None])[statistic][0])
    null = np.concatenate([_stats(U, F)[statistic]
                           for U, F in _permutation_blocks(d, u, cells, C, n_res, rng)])
    tol = 1e-12 * max(1.0, abs(t_obs))
    p = (1.0 + np.sum(null >= t_obs - tol)) / (n_res + 1.0)
    return PermutationResult(t_obs, float(p), statistic, n_res, u_spec.name, null)
