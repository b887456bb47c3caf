"""Replicability measures beyond the utility matrix: distances between the studies' joint
distributions of ``(φ(x), y)`` (seed 001, sec. 5, Def. 5.1), dominance between rules (Def. 3.3,
Fig. 1), the single-study comparison with a benchmark (sec. 4.3) and local replicability
(sec. 7.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._random import check_random_state
from .._validation import check_choice, check_confidence_level, check_float, check_int
from ..errors import DataError, ParameterError
from ._data import MultiStudyData, as_study_data
from .utilities import StudyUtilities, _binary_decisions, _summarize, _unit_values, parse_utility

__all__ = ["total_variation", "energy_distance", "DistanceMatrix", "distance_matrix",
           "DominanceResult", "dominance", "BenchmarkComparison", "benchmark_comparison",
           "local_replicability", "joint_cells"]


def total_variation(p, q) -> float:
    """Total variation distance ``½ Σ_c |p_c − q_c|`` between two discrete distributions.

    Parameters
    ----------
    p, q : array-like of shape (C,)
        Probabilities (non-negative, summing to 1) on the same cells.

    Returns
    -------
    float
        In ``[0, 1]``; 0 iff ``p = q`` (seed 001, Def. 5.1 with D = total variation).

    Examples
    --------
    >>> total_variation([0.5, 0.5], [1.0, 0.0])
    0.5
    """
    p = np.asarray(p, float)
    q = np.asarray(q, float)
    if p.shape != q.shape or p.ndim != 1:
        raise DataError(f"`p` and `q` must be 1-D of the same length; got {p.shape} and {q.shape}.")
    for name, v in (("p", p), ("q", q)):
        if np.any(v < 0) or not np.isclose(v.sum(), 1.0):
            raise DataError(f"`{name}` must be a probability vector (>= 0, sum 1); sum is {v.sum():.6g}.")
    return float(0.5 * np.abs(p - q).sum())


def energy_distance(a, b) -> float:
    """Energy distance ``sqrt(2E‖A−B‖ − E‖A−A'‖ − E‖B−B'‖)`` between two samples.

    Parameters
    ----------
    a : array-like of shape (n, p) or (n,)
    b : array-like of shape (m, p) or (m,)

    Returns
    -------
    float
        Zero iff the empirical distributions coincide; for one dimension equals
        :func:`scipy.stats.energy_distance`. Used as the continuous alternative to total variation
        in Def. 5.1 (seed 001) — it is the maximum mean discrepancy with the distance kernel.
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
    n_cells : int
    description : str
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
class DistanceMatrix:
    """Pairwise distances ``D(F_k, F_k')`` between the studies' empirical joint distributions of
    ``(φ(x), y)`` (seed 001, Def. 5.1).

    Attributes
    ----------
    studies : tuple
    matrix : ndarray of shape (K, K)
        Symmetric, zero diagonal.
    distance : str
        ``'tv'`` (total variation on the cells) or ``'energy'``.
    cells : str
        How the cells were formed (exact or binned), or the energy-distance settings.
    frequencies : DataFrame or None
        The per-study cell frequencies ``F_k`` (TV only).
    """

    studies: tuple
    matrix: np.ndarray
    distance: str
    cells: str
    frequencies: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def max(self) -> float:
        """``max_{k,k'} D(F_k, F_k')``: the smallest ε of distance replicability."""
        return float(self.matrix.max()) if self.matrix.size else 0.0

    def smallest_epsilon(self) -> float:
        return self.max

    def is_replicable(self, epsilon: float) -> bool:
        """Def. 5.1: ``max_{k,k'} D(F_k, F_k') <= ε``."""
        return bool(self.max <= check_float(epsilon, "epsilon", min_value=0.0))

    def to_frame(self) -> pd.DataFrame:
        """The K×K matrix as a DataFrame (rows and columns are studies)."""
        return pd.DataFrame(self.matrix, index=list(self.studies), columns=list(self.studies))

    def __str__(self) -> str:
        name = "total variation" if self.distance == "tv" else "energy distance"
        i, j = np.unravel_index(np.argmax(self.matrix), self.matrix.shape)
        return (f"Distance replicability ({name}; {self.cells}; seed 001, Def. 5.1)\n"
                f"  max D = {self.max:.4g} between {self.studies[i]!s} and {self.studies[j]!s}")


def distance_matrix(data, *, distance: str = "tv", bins: int = 10, use: str = "pred",
                    utility=None, max_units: int = 2000, random_state=None, model=None,
                    repeat: int | None = 0, subgroup=None) -> DistanceMatrix:
    """Distances between the studies' empirical joint distributions ``F_k`` of ``(φ(x), y)``.

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
    distance : {'tv', 'energy'}
        ``'tv'``: total variation ``½ Σ_c |F_k(c) − F_k'(c)|`` on the cells of
        :func:`joint_cells` — exact when predictions and labels are discrete, on pooled-quantile
        bins otherwise. ``'energy'``: the energy distance of the standardized points
        ``(φ(x), y)``, no binning (each study subsampled to ``max_units`` units).
    bins : int
        Quantile bins per continuous coordinate (TV).
    use : {'pred', 'proba', 'decision'}
        What φ(x) is: the predicted label/value, the positive-class probability, or the
        user's action under ``utility``.
    max_units : int
        Energy distance: units per study at most (subsampled with ``random_state``).
    random_state : None, int or Generator
        The energy distance's subsample (only drawn when a study has more than ``max_units``
        units; total variation uses no randomness).

    Returns
    -------
    DistanceMatrix

    Notes
    -----
    Seed 001, Def. 5.1: φ is ε-replicable in distance if ``max_{k,k'} D(F_k, F_k') <= ε``.
    Exact distance replicability (ε = 0) implies exact replicability for every user (sec. 5),
    but not conversely.

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
class DominanceResult:
    """Comparison of rule ``a`` (φ) with rule ``b`` (φ') in utility and replicability
    (seed 001, Def. 3.3 and Fig. 1).

    Attributes
    ----------
    a_dominates_b, b_dominates_a : bool
        Def. 3.3: smaller-or-equal spread ``max|U_k − U_k'|`` and utility at least as high in
        every study.
    spread_a, spread_b : float
    region : str
        Where ``b`` falls in Fig. 1 relative to ``a``: ``'B'`` better in every study and at
        least as replicable; ``'C'`` better in every study but less replicable; ``'A'`` at least
        as replicable but not better everywhere; ``'D'`` neither.
    table : DataFrame
        ``study, utility_a, utility_b, difference``.
    """

    a_dominates_b: bool
    b_dominates_a: bool
    spread_a: float
    spread_b: float
    region: str
    names: tuple = ("a", "b")
    table: pd.DataFrame = field(default=None, repr=False)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def __str__(self) -> str:
        a, b = self.names
        verdict = (f"{a} dominates {b}" if self.a_dominates_b else
                   f"{b} dominates {a}" if self.b_dominates_a else "neither rule dominates")
        return (f"Dominance (seed 001, Def. 3.3): {verdict}\n"
                f"  spread max|U_k - U_k'|: {a} {self.spread_a:.4g}, {b} {self.spread_b:.4g}\n"
                f"  {b} lies in region {self.region} of Fig. 1 relative to {a}")


def dominance(a: StudyUtilities, b: StudyUtilities, *, names=("a", "b")) -> DominanceResult:
    """Does rule ``a`` dominate rule ``b`` in absolute utility and replicability?

    Parameters
    ----------
    a, b : StudyUtilities
        Utilities of the two rules over the same studies and utility.
    names : tuple of str

    Returns
    -------
    DominanceResult

    Notes
    -----
    Seed 001, Def. 3.3: φ dominates φ' if ``max|U_k − U_k'| <= max|U'_k − U'_k'|`` and
    ``U'_k <= U_k`` for every k. Fig. 1 partitions the plane of ``(U_1, U_2)`` around φ by the
    two 45° lines through φ's point and its mirror image: regions B (φ' better in both studies
    and more replicable), C (better in both, less replicable), A (more replicable only).

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
    sa, sb = a.smallest_epsilon(), b.smallest_epsilon()
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

@dataclass(frozen=True, slots=True)
class BenchmarkComparison:
    """Each study's ``U_k`` against a benchmark ``U_0`` (seed 001, sec. 4.3).

    ``table`` has one row per study: ``study, n, utility, benchmark, estimate`` (``U_k − U_0``),
    ``se``, ``ci_low``, ``ci_high``, ``statistic`` (t), ``df``, ``pvalue`` (two-sided t-test of
    ``E U = U_0``) and, with ``epsilon``, ``within_epsilon`` (``|U_k − U_0| <= ε``) and
    ``pvalue_equivalence`` (two one-sided t-tests of ``|E U − U_0| >= ε``).
    """

    benchmark: float
    epsilon: float | None
    utility_name: str
    confidence_level: float
    table: pd.DataFrame = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def __str__(self) -> str:
        lines = [f"Comparison with benchmark U0 = {self.benchmark:.4g} ({self.utility_name}; "
                 "seed 001, sec. 4.3)"]
        for r in self.table.itertuples(index=False):
            line = (f"  {str(r.study):>12}  U - U0 = {r.estimate: .4f} "
                    f"[{r.ci_low:.4f}, {r.ci_high:.4f}], p = {r.pvalue:.3g}")
            if self.epsilon is not None:
                line += f", within eps: {'yes' if r.within_epsilon else 'no'}"
            lines.append(line)
        return "\n".join(lines)


def benchmark_comparison(data, benchmark: float, utility="accuracy", *, epsilon=None,
                         confidence_level: float = 0.95, model=None, repeat: int | None = 0,
                         subgroup=None) -> BenchmarkComparison:
    """Compare the utility vector of each study with a benchmark ``U_0`` (seed 001, sec. 4.3).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        One or more studies (the K = 1 case is the point).
    benchmark : float
        ``U_0``, e.g. the modeler's validation utility.
    utility : str, Utility or callable
    epsilon : float, optional
        Tolerance: report ``|U_k − U_0| <= ε`` and a TOST equivalence p-value.
    confidence_level : float

    Returns
    -------
    BenchmarkComparison

    Notes
    -----
    ``U_k − U_0`` with SE ``s_k/√n_k`` and a t interval on ``n_k − 1`` df; the unit utilities
    are taken as independent draws (the "appropriate summarization" of sec. 4.3).
    """
    U0 = check_float(benchmark, "benchmark")
    level = check_confidence_level(confidence_level)
    eps = None if epsilon is None else check_float(epsilon, "epsilon", min_value=0.0)
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
        table["within_epsilon"] = np.abs(est) <= eps
        with np.errstate(divide="ignore", invalid="ignore"):
            p_low = stats.t.sf((est + eps) / se, df)
            p_up = stats.t.cdf((est - eps) / se, df)
        table["pvalue_equivalence"] = np.maximum(p_low, p_up)
    return BenchmarkComparison(U0, eps, u.name, level, table)


# -- local replicability ----------------------------------------------------------------------

def local_replicability(data, by, utility="accuracy", *, bins: int = 10, min_units: int = 1,
                        model=None, repeat: int | None = 0) -> pd.DataFrame:
    """Replicability within each subgroup ``X*`` of the feature space (seed 001, sec. 7.2).

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
    by : str or array-like
        An extra column of the Predictions table (or of ``X`` of a MultiStudyData), or one group
        label per input row (indexed like ``row``).
    utility : str, Utility or callable
    bins : int
        For the distance (see :func:`distance_matrix`).
    min_units : int
        Studies with fewer units in a group are left out of that group's comparison.

    Returns
    -------
    DataFrame
        One row per group: ``group, n, n_studies, utility_min, utility_max, epsilon_absolute,
        epsilon_relative, max_tv``.
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
                     "epsilon_absolute": su.smallest_epsilon("absolute"),
                     "epsilon_relative": su.smallest_epsilon("relative"),
                     "max_tv": np.nan if dm is None else dm.max})
    return pd.DataFrame(rows)


def _study_utilities_from(d: MultiStudyData, utility) -> StudyUtilities:
    u = parse_utility(utility)
    values, thr = _unit_values(d, u)
    return _summarize(d, u, values, thr)
