"""Replicability measures beyond the utility matrix (Parmigiani 2023).

Distances between the studies' joint distributions of ``(φ(x), y)`` (sec. 5, Def. 5.1),
dominance between rules (Def. 3.3, Fig. 1), the single-study comparison with a benchmark (sec.
4.3) and local replicability (sec. 7.2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._compat import renamed, renamed_fields
from .._format import number, pvalue
from .._random import check_random_state
from .._validation import check_choice, check_confidence_level, check_float, check_int
from ..errors import DataError, ParameterError
from ..results import Result
from ._data import MultiStudyData, as_study_data
from ._names import utility_words, warn_old_name
from .utilities import StudyUtilities, _binary_decisions, _summarize, _unit_values, parse_utility

__all__ = ["total_variation", "energy_distance", "DistanceMatrix", "distance_matrix",
           "DominanceResult", "dominance", "BenchmarkComparison", "benchmark_comparison",
           "local_replicability", "joint_cells"]


@renamed(p="a", q="b")
def total_variation(a, b) -> float:
    """Total variation distance ``½ Σ_c |a_c − b_c|`` between two discrete distributions.

    Parameters
    ----------
    a, b : array-like of shape (C,)
        Probabilities (non-negative, summing to 1) on the same cells.

    Returns
    -------
    float
        In ``[0, 1]``; 0 iff ``a = b`` (Def. 5.1 of Parmigiani (2023) with D the total
        variation).

    See Also
    --------
    energy_distance : A distance between samples of continuous values.
    distance_matrix : The distances between every pair of studies.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> total_variation([0.5, 0.5], [1.0, 0.0])
    0.5
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise DataError(f"`a` and `b` must be 1-D of the same length; got {a.shape} and {b.shape}.")
    for name, v in (("a", a), ("b", b)):
        if np.any(v < 0) or not np.isclose(v.sum(), 1.0):
            raise DataError(f"`{name}` must be a probability vector (>= 0, sum 1); sum is "
                            f"{number(float(v.sum()), 6)}.")
    return float(0.5 * np.abs(a - b).sum())


def energy_distance(a, b) -> float:
    """Energy distance ``sqrt(2E‖A−B‖ − E‖A−A'‖ − E‖B−B'‖)`` between two samples.

    The continuous alternative to total variation in Def. 5.1 of Parmigiani (2023): the
    maximum mean discrepancy with the distance kernel (Székely & Rizzo 2013).

    Parameters
    ----------
    a : array-like of shape (n, p) or (n,)
        The first sample.
    b : array-like of shape (m, p) or (m,)
        The second sample, with as many columns.

    Returns
    -------
    float
        Zero iff the empirical distributions coincide; for one dimension it equals
        :func:`scipy.stats.energy_distance`.

    See Also
    --------
    total_variation : The distance between discrete distributions.
    distance_matrix : The distances between every pair of studies.

    References
    ----------
    .. [1] Székely, G. J. & Rizzo, M. L. (2013). Energy Statistics: A Class of Statistics Based
       on Distances. Journal of Statistical Planning and Inference, 143(8), 1249–1272.
    .. [2] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> round(energy_distance([0.0, 1.0], [0.0, 1.0]), 6), round(energy_distance([0.0], [2.0]), 4)
    (0.0, 2.0)
    """
    from scipy.spatial.distance import cdist

    A = np.asarray(a, float)
    B = np.asarray(b, float)
    A = A[:, None] if A.ndim == 1 else A
    B = B[:, None] if B.ndim == 1 else B
    if A.shape[1] != B.shape[1] or len(A) == 0 or len(B) == 0:
        raise DataError(f"`a` and `b` must be non-empty with the same number of columns; got "
                        f"{A.shape} and {B.shape}.")
    ab = cdist(A, B).mean()
    aa = cdist(A, A).mean()
    bb = cdist(B, B).mean()
    return float(np.sqrt(max(2 * ab - aa - bb, 0.0)))


def joint_cells(d: MultiStudyData, *, bins: int = 10, use: str = "pred",
                utility=None) -> tuple[np.ndarray, int, str]:
    """Code each unit's ``(φ(x), y)`` as one cell of a pooled contingency table.

    Discrete predictions and labels are used as they are (exact total variation); a continuous
    coordinate is cut at the pooled quantiles into ``bins`` bins. ``use='proba'`` takes the
    positive-class probability as φ(x); ``use='decision'`` the user's action under a cost
    utility with a threshold.

    Returns
    -------
    cells : ndarray of int, shape (n,)
        The cell of each unit.
    n_cells : int
        The number of cells.
    description : str
        How the cells were formed, in words.
    """
    check_choice(use, "use", ("pred", "proba", "decision"))
    bins = check_int(bins, "bins", min_value=2)
    if use == "pred":
        phi = d.pred
    elif use == "proba":
        if d.proba is None:
            raise DataError("`use='proba'` needs class probabilities; none were given.")
        phi = d.proba[:, -1]
    else:
        u = parse_utility(utility if utility is not None else "accuracy")
        if u.kind != "cost":
            raise ParameterError("`use='decision'` needs a cost utility ('cost:u01,u10').")
        phi = _binary_decisions(d, u)[0].astype(int)
    parts = []
    desc = []
    for name, v in (("prediction", phi), ("outcome", d.y)):
        v = np.asarray(v)
        discrete = not np.issubdtype(v.dtype, np.floating) or (
            np.all(v == np.round(v)) and np.unique(v).size <= 20)
        if discrete:
            codes, uniq = pd.factorize(pd.Series(v), sort=True)
            parts.append((codes, len(uniq)))
            desc.append(f"{name}: {len(uniq)} values")
        else:
            edges = np.unique(np.quantile(v, np.linspace(0, 1, bins + 1)[1:-1]))
            codes = np.searchsorted(edges, v, side="right")
            parts.append((codes, edges.size + 1))
            desc.append(f"{name}: {edges.size + 1} quantile bins")
    (c1, n1), (c2, n2) = parts
    return c1 * n2 + c2, n1 * n2, "; ".join(desc)


def _tv_matrix(freq: np.ndarray) -> np.ndarray:
    """Pairwise TV of the rows of ``freq`` (K, C)."""
    return 0.5 * np.abs(freq[:, None, :] - freq[None, :, :]).sum(-1)


@dataclass(frozen=True, slots=True)
class DistanceMatrix(Result):
    """Pairwise distances ``D(F_k, F_k')`` between the studies' joint distributions of
    ``(φ(x), y)`` (Parmigiani 2023, Def. 5.1).

    Attributes
    ----------
    studies : tuple
        Study labels, in the order of the matrix.
    matrix : ndarray of shape (K, K)
        Symmetric, zero diagonal.
    distance : str
        ``'tv'`` (total variation on the cells) or ``'energy'``.
    cells : str
        How the cells were formed (exact or binned), or the energy-distance settings.
    frequencies : DataFrame or None
        The per-study cell frequencies ``F_k`` (total variation only).

    See Also
    --------
    distance_matrix : Computes it.
    permutation_test : Tests that every ``F_k`` is the same.

    Examples
    --------
    >>> from replikit.multistudy import distance_matrix, from_arrays
    >>> dm = distance_matrix(from_arrays([0, 1, 0, 1], [0, 1, 1, 1], ["a", "a", "b", "b"]))
    >>> dm.max, dm.is_replicable(0.5)
    (0.5, True)
    """

    studies: tuple
    matrix: np.ndarray
    distance: str
    cells: str
    frequencies: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def title(self) -> str:
        name = "total variation" if self.distance == "tv" else "energy distance"
        return f"Distances between the studies ({name}; Parmigiani 2023, Def. 5.1)"

    @property
    def max(self) -> float:
        """``max_{k,k'} D(F_k, F_k')``: the smallest tolerance of distance replicability."""
        return float(self.matrix.max()) if self.matrix.size else 0.0

    def smallest_tolerance(self) -> float:
        """The smallest tolerance ε of distance replicability: :attr:`max`.

        Returns
        -------
        float
            ``max_{k,k'} D(F_k, F_k')``.
        """
        return self.max

    def smallest_epsilon(self) -> float:
        """Old name of :meth:`smallest_tolerance` (warns).

        Returns
        -------
        float
            :meth:`smallest_tolerance`.
        """
        warn_old_name("DistanceMatrix.smallest_epsilon()", "DistanceMatrix.smallest_tolerance()")
        return self.max

    @renamed(epsilon="tolerance")
    def is_replicable(self, tolerance: float) -> bool:
        """Def. 5.1: ``max_{k,k'} D(F_k, F_k') <= tolerance``.

        Parameters
        ----------
        tolerance : float >= 0
            The tolerance ε of distance replicability.

        Returns
        -------
        bool
            Every pair of studies is within ``tolerance``.
        """
        return bool(self.max <= check_float(tolerance, "tolerance", min_value=0.0))

    def to_frame(self) -> pd.DataFrame:
        """The K×K matrix as a DataFrame (rows: studies; columns: the studies as text).

        Returns
        -------
        DataFrame
            ``D(F_k, F_k')``.
        """
        return pd.DataFrame(self.matrix, index=list(self.studies),
                            columns=[str(s) for s in self.studies])

    def plot(self, ax=None):
        """The matrix as a heatmap.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_matrix

        name = "total variation" if self.distance == "tv" else "energy distance"
        return plot_matrix(self.to_frame(), ax=ax, symmetric=False,
                           title=f"{name} between the studies' (prediction, outcome)",
                           xlabel="study", ylabel="study")

    def __str__(self) -> str:
        i, j = np.unravel_index(np.argmax(self.matrix), self.matrix.shape)
        return (f"{self.title}\n  {self.cells}\n  largest distance "
                f"{number(self.max, 4)}, between {self.studies[i]!s} and {self.studies[j]!s}")


def distance_matrix(data, *, distance: str = "tv", bins: int = 10, use: str = "pred",
                    utility=None, max_units: int = 2000, random_state=None, model=None,
                    repeat: int | None = 0, subgroup=None) -> DistanceMatrix:
    """Distances between the studies' empirical joint distributions ``F_k`` of ``(φ(x), y)``.

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        The rule's predictions on the units of every study.
    distance : {'tv', 'energy'}, default 'tv'
        ``'tv'``: total variation ``½ Σ_c |F_k(c) − F_k'(c)|`` on the cells of the pooled
        contingency table of ``(φ(x), y)`` — exact when predictions and labels are discrete,
        on pooled-quantile bins otherwise. ``'energy'``: the energy distance of the
        standardized points ``(φ(x), y)``, no binning (each study subsampled to ``max_units``
        units).
    bins : int, default 10
        Quantile bins per continuous coordinate (total variation).
    use : {'pred', 'proba', 'decision'}, default 'pred'
        What φ(x) is: the predicted label or value, the positive-class probability, or the
        user's action under ``utility``.
    utility : str, Utility or callable, optional
        The user's utility, for ``use='decision'`` (a cost utility with a threshold).
    max_units : int, default 2000
        Energy distance: units per study at most (subsampled with ``random_state``).
    random_state : None, int or Generator
        The energy distance's subsample (only drawn when a study has more than ``max_units``
        units; total variation uses no randomness).
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.
    subgroup : mask, column name or callable, optional
        Restrict to ``x ∈ X*`` (see :func:`study_utilities`).

    Returns
    -------
    DistanceMatrix
        The K×K distances and, for total variation, the cell frequencies.

    See Also
    --------
    total_variation, energy_distance : The two distances.
    permutation_test : Tests that every ``F_k`` is the same (``statistic='tv'``).

    Notes
    -----
    Parmigiani (2023), Def. 5.1: φ is ε-replicable in distance if
    ``max_{k,k'} D(F_k, F_k') <= ε``. Exact distance replicability (ε = 0) implies exact
    replicability for every user (sec. 5), but not conversely.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Székely, G. J. & Rizzo, M. L. (2013). Energy Statistics: A Class of Statistics Based
       on Distances. Journal of Statistical Planning and Inference, 143(8), 1249–1272.

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> d = from_arrays([0, 1, 0, 1], [0, 1, 1, 1], ["a", "a", "b", "b"])
    >>> distance_matrix(d).max
    0.5
    """
    check_choice(distance, "distance", ("tv", "energy"))
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup)
    K = d.K
    if distance == "tv":
        cells, C, desc = joint_cells(d, bins=bins, use=use, utility=utility)
        freq = np.bincount(d.codes * C + cells, minlength=K * C).reshape(K, C) / d.sizes[:, None]
        frame = pd.DataFrame(freq, index=list(d.studies))
        return DistanceMatrix(tuple(d.studies), _tv_matrix(freq), "tv", desc, frame)
    max_units = check_int(max_units, "max_units", min_value=2)
    try:
        if use == "proba":
            if d.proba is None:
                raise DataError("`use='proba'` needs class probabilities; none were given.")
            phi = d.proba[:, -1]
        else:
            phi = d.pred.astype(float)
        Z = np.column_stack([phi, d.y.astype(float)])
    except (TypeError, ValueError):
        raise DataError("the energy distance needs numeric predictions and outcomes.") from None
    sd = Z.std(axis=0)
    Z = (Z - Z.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    rng = check_random_state(random_state)
    starts = d.starts
    samples = []
    for k in range(K):
        block = np.arange(starts[k], starts[k + 1])
        if block.size > max_units:
            block = np.sort(rng.choice(block, max_units, replace=False))
        samples.append(Z[block])
    M = np.zeros((K, K))
    for i in range(K):
        for j in range(i + 1, K):
            M[i, j] = M[j, i] = energy_distance(samples[i], samples[j])
    desc = f"standardized (prediction, outcome); at most {max_units} units per study"
    return DistanceMatrix(tuple(d.studies), M, "energy", desc, None)


# -- dominance ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DominanceResult(Result):
    """Comparison of rule ``a`` (φ) with rule ``b`` (φ') in utility and replicability
    (Parmigiani 2023, Def. 3.3 and Fig. 1).

    Attributes
    ----------
    a_dominates_b, b_dominates_a : bool
        Def. 3.3: smaller-or-equal spread ``max|U_k − U_k'|`` and utility at least as high in
        every study.
    spread_a, spread_b : float
        ``max|U_k − U_k'|`` of each rule.
    region : str
        Where ``b`` falls in Fig. 1 relative to ``a``: ``'B'`` better in every study and at
        least as replicable; ``'C'`` better in every study but less replicable; ``'A'`` at least
        as replicable but not better everywhere; ``'D'`` neither.
    names : tuple of str
        The two rules' names.
    table : DataFrame
        ``study, utility_<a>, utility_<b>, difference`` (``U_k`` of b minus that of a).

    See Also
    --------
    dominance : Computes it.

    Examples
    --------
    >>> from replikit.multistudy import dominance, from_arrays, study_utilities
    >>> s = ["x", "x", "y", "y"]
    >>> a = study_utilities(from_arrays([1, 1, 1, 1], [1, 1, 1, 0], s))
    >>> b = study_utilities(from_arrays([1, 1, 1, 1], [1, 0, 0, 0], s))
    >>> r = dominance(a, b, names=("lr", "rf"))
    >>> r.a_dominates_b, r.region
    (True, 'A')
    """

    a_dominates_b: bool
    b_dominates_a: bool
    spread_a: float
    spread_b: float
    region: str
    names: tuple = ("a", "b")
    table: pd.DataFrame = field(default=None, repr=False)

    @property
    def title(self) -> str:
        return "Dominance between two rules (Parmigiani 2023, Def. 3.3)"

    def to_frame(self) -> pd.DataFrame:
        """The utilities of both rules per study.

        Returns
        -------
        DataFrame
            ``study, utility_<a>, utility_<b>, difference``.
        """
        return self.table.copy()

    def plot(self, ax=None):
        """Both rules' utilities: the plane of Fig. 1 for two studies, else per study.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_dominance_table

        return plot_dominance_table(self.table, self.names, ax=ax)

    def __str__(self) -> str:
        a, b = self.names
        verdict = (f"{a} dominates {b}" if self.a_dominates_b else
                   f"{b} dominates {a}" if self.b_dominates_a else "neither rule dominates")
        return (f"{self.title}: {verdict}\n"
                f"  spread max|U_k - U_k'|: {a} {number(self.spread_a, 4)}, "
                f"{b} {number(self.spread_b, 4)}\n"
                f"  {b} lies in region {self.region} of Fig. 1 relative to {a}")


def dominance(a: StudyUtilities, b: StudyUtilities, *, names=("a", "b")) -> DominanceResult:
    """Whether rule ``a`` dominates rule ``b`` in absolute utility and replicability.

    Parameters
    ----------
    a, b : StudyUtilities
        Utilities of the two rules over the same studies and utility.
    names : tuple of str, default ('a', 'b')
        The rules' names in the table and the text.

    Returns
    -------
    DominanceResult
        Who dominates, the two spreads and the region of Fig. 1.

    See Also
    --------
    study_utilities : The utilities compared.

    Notes
    -----
    Parmigiani (2023), Def. 3.3: φ dominates φ' if ``max|U_k − U_k'| <= max|U'_k − U'_k'|``
    and ``U'_k <= U_k`` for every k. Fig. 1 partitions the plane of ``(U_1, U_2)`` around φ by
    the two 45° lines through φ's point and its mirror image: regions B (φ' better in both
    studies and more replicable), C (better in both, less replicable), A (more replicable
    only).

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> from replikit.multistudy import from_arrays, study_utilities
    >>> s = ["x", "x", "y", "y"]
    >>> a = study_utilities(from_arrays([1, 1, 1, 1], [1, 1, 1, 0], s))
    >>> b = study_utilities(from_arrays([1, 1, 1, 1], [1, 0, 0, 0], s))
    >>> dominance(a, b).a_dominates_b
    True
    """
    if not isinstance(a, StudyUtilities) or not isinstance(b, StudyUtilities):
        raise ParameterError("`a` and `b` must be StudyUtilities (from study_utilities).")
    if tuple(a.studies) != tuple(b.studies):
        raise DataError(f"`a` and `b` must cover the same studies in the same order; got "
                        f"{list(a.studies)} and {list(b.studies)}.")
    if a.utility_name != b.utility_name:
        raise DataError(f"`a` and `b` must use the same utility; got {a.utility_name!r} and "
                        f"{b.utility_name!r}.")
    sa, sb = a.smallest_tolerance(), b.smallest_tolerance()
    a_dom = bool(sa <= sb and np.all(b.utility <= a.utility))
    b_dom = bool(sb <= sa and np.all(a.utility <= b.utility))
    better = bool(np.all(b.utility >= a.utility))
    more_rep = sb <= sa
    region = ("B" if more_rep else "C") if better else ("A" if more_rep else "D")
    table = pd.DataFrame({"study": list(a.studies), f"utility_{names[0]}": a.utility,
                          f"utility_{names[1]}": b.utility,
                          "difference": b.utility - a.utility})
    return DominanceResult(a_dom, b_dom, float(sa), float(sb), region, tuple(names), table)


# -- K = 1: comparison with a benchmark --------------------------------------------------------

@renamed_fields(epsilon="tolerance")
@dataclass(frozen=True, slots=True)
class BenchmarkComparison(Result):
    """Each study's ``U_k`` against a benchmark ``U_0`` (Parmigiani 2023, sec. 4.3).

    Attributes
    ----------
    benchmark : float
        ``U_0``.
    tolerance : float or None
        The tolerance ε of ``|U_k − U_0| <= ε``, when one was given.
    utility_name : str
        The utility.
    confidence_level : float
        Level of the intervals.
    table : DataFrame
        One row per study: ``study, n, utility, benchmark, estimate`` (``U_k − U_0``), ``se``,
        ``ci_low``, ``ci_high``, ``statistic`` (t), ``df``, ``pvalue`` (two-sided t-test of
        ``E U = U_0``) and, with ``tolerance``, ``within_tolerance`` (``|U_k − U_0| <= ε``) and
        ``pvalue_equivalence`` (two one-sided t-tests of ``|E U − U_0| >= ε``).

    See Also
    --------
    benchmark_comparison : Computes it.

    Examples
    --------
    >>> from replikit.multistudy import benchmark_comparison, from_arrays
    >>> r = benchmark_comparison(from_arrays([1, 0, 1, 1], [1, 0, 0, 1], ["a"] * 4), 0.5)
    >>> r.table["estimate"].tolist()
    [0.25]
    """

    benchmark: float
    tolerance: float | None
    utility_name: str
    confidence_level: float
    table: pd.DataFrame = field(repr=False)

    @property
    def title(self) -> str:
        return (f"Comparison with the benchmark U_0 = {number(self.benchmark, 4)} "
                f"({utility_words(self.utility_name)}; Parmigiani 2023, sec. 4.3)")

    def to_frame(self) -> pd.DataFrame:
        """The table: one row per study.

        Returns
        -------
        DataFrame
            See :attr:`table`.
        """
        return self.table.copy()

    def __str__(self) -> str:
        level = f"{number(100 * self.confidence_level)}%"
        lines = [self.title]
        for r in self.table.itertuples(index=False):
            line = (f"  {str(r.study):>12}  U - U_0 = {number(r.estimate, 4)} ({level} CI "
                    f"[{number(r.ci_low, 4)}, {number(r.ci_high, 4)}]), "
                    f"p = {pvalue(r.pvalue)}")
            if self.tolerance is not None:
                line += f", within ε = {number(self.tolerance)}: " \
                        f"{'yes' if r.within_tolerance else 'no'}"
            lines.append(line)
        return "\n".join(lines)


@renamed(epsilon="tolerance")
def benchmark_comparison(data, benchmark: float, utility="accuracy", *, tolerance=None,
                         confidence_level: float = 0.95, model=None, repeat: int | None = 0,
                         subgroup=None) -> BenchmarkComparison:
    """Compare the average utility of each study with a benchmark ``U_0``.

    The case of a single study (K = 1) in Parmigiani (2023), sec. 4.3.

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        One or more studies (the K = 1 case is the point).
    benchmark : float
        ``U_0``, e.g. the modeler's validation utility.
    utility : str, Utility or callable, default 'accuracy'
        See :func:`parse_utility`.
    tolerance : float, optional
        The tolerance ε: report ``|U_k − U_0| <= ε`` and a TOST equivalence p-value.
    confidence_level : float, default 0.95
        Level of the t intervals.
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.
    subgroup : mask, column name or callable, optional
        Restrict to ``x ∈ X*`` (see :func:`study_utilities`).

    Returns
    -------
    BenchmarkComparison
        One row per study.

    See Also
    --------
    study_utilities : The utilities compared.
    epsilon_test : Replicability across two or more studies.

    Notes
    -----
    ``U_k − U_0`` with SE ``s_k/√n_k`` and a t interval on ``n_k − 1`` df; the unit utilities
    are taken as independent draws (the "appropriate summarization" of sec. 4.3). The
    equivalence p-value is the larger of the two one-sided t-tests (Schuirmann 1987).

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680.

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> d = from_arrays([1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 1], ["a"] * 6)
    >>> r = benchmark_comparison(d, 0.8, tolerance=0.1)
    >>> round(float(r.table["estimate"].iloc[0]), 4), bool(r.table["within_tolerance"].iloc[0])
    (0.0333, True)
    """
    U0 = check_float(benchmark, "benchmark")
    level = check_confidence_level(confidence_level)
    eps = None if tolerance is None else check_float(tolerance, "tolerance", min_value=0.0)
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup)
    u = parse_utility(utility)
    values, thr = _unit_values(d, u)
    s = _summarize(d, u, values, thr)
    n = s.n.astype(float)
    df = np.maximum(n - 1, 1)
    est = s.utility - U0
    se = s.se
    with np.errstate(divide="ignore", invalid="ignore"):
        t = est / se
    q = stats.t.ppf((1 + level) / 2, df)
    p = 2 * stats.t.sf(np.abs(t), df)
    table = pd.DataFrame({"study": list(d.studies), "n": s.n, "utility": s.utility,
                          "benchmark": U0, "estimate": est, "se": se, "ci_low": est - q * se,
                          "ci_high": est + q * se, "statistic": t, "df": df, "pvalue": p})
    if eps is not None:
        table["within_tolerance"] = np.abs(est) <= eps
        with np.errstate(divide="ignore", invalid="ignore"):
            p_low = stats.t.sf((est + eps) / se, df)
            p_up = stats.t.cdf((est - eps) / se, df)
        table["pvalue_equivalence"] = np.maximum(p_low, p_up)
    return BenchmarkComparison(U0, eps, u.name, level, table)


# -- local replicability ----------------------------------------------------------------------

def local_replicability(data, by, utility="accuracy", *, bins: int = 10, min_units: int = 1,
                        model=None, repeat: int | None = 0) -> pd.DataFrame:
    """Replicability within each subgroup ``X*`` of the feature space (Parmigiani 2023, sec.
    7.2).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        The rule's predictions on the units of every study.
    by : str or array-like
        An extra column of the Predictions table (or of ``X`` of a MultiStudyData), or one group
        label per input row (indexed like ``row``).
    utility : str, Utility or callable, default 'accuracy'
        See :func:`parse_utility`.
    bins : int, default 10
        For the distance (see :func:`distance_matrix`).
    min_units : int, default 1
        Studies with fewer units in a group are left out of that group's comparison.
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.

    Returns
    -------
    DataFrame
        One row per group: ``group, n, n_studies, utility_min, utility_max,
        smallest_tolerance_absolute, smallest_tolerance_relative, max_tv``.

    See Also
    --------
    study_utilities : The utilities of one group (``subgroup=``).
    distance_matrix : The distances of one group.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.multistudy import from_arrays
    >>> d = from_arrays([1, 0, 1, 0, 1, 1, 0, 0], [1, 0, 0, 0, 1, 1, 0, 1],
    ...                 ["a"] * 4 + ["b"] * 4)
    >>> t = local_replicability(d, np.array(["x", "y"] * 4))
    >>> t[["group", "n", "smallest_tolerance_absolute"]].values.tolist()
    [['x', 4, 0.5], ['y', 4, 0.5]]
    """
    d = as_study_data(data, model=model, repeat=repeat)
    min_units = check_int(min_units, "min_units", min_value=1)
    if isinstance(by, str):
        if d.extra is not None and by in d.extra.columns:
            g = d.extra[by].to_numpy()
        elif d.X is not None and by in d.X.columns:
            g = d.X[by].to_numpy()
        else:
            raise DataError(f"`by`: no column {by!r} among the extra columns or features.")
    else:
        g = np.asarray(by)
        if g.ndim != 1 or g.size <= int(d.row.max()):
            raise DataError(f"`by` must have one label per input row; got shape {g.shape}.")
        g = g[d.row]
    rows = []
    for level in pd.unique(pd.Series(g)):
        mask = g == level
        keep = mask & np.isin(d.codes, np.flatnonzero(np.bincount(d.codes[mask], minlength=d.K)
                                                       >= min_units))
        if keep.sum() == 0:
            continue
        sub = d.subset(keep)
        su = _study_utilities_from(sub, utility)
        dm = distance_matrix(sub, bins=bins) if sub.K > 1 else None
        rows.append({"group": level, "n": sub.n, "n_studies": sub.K,
                     "utility_min": float(su.utility.min()), "utility_max": float(su.utility.max()),
                     "smallest_tolerance_absolute": su.smallest_tolerance("absolute"),
                     "smallest_tolerance_relative": su.smallest_tolerance("relative"),
                     "max_tv": np.nan if dm is None else dm.max})
    return pd.DataFrame(rows)


def _study_utilities_from(d: MultiStudyData, utility) -> StudyUtilities:
    u = parse_utility(utility)
    values, thr = _unit_values(d, u)
    return _summarize(d, u, values, thr)
