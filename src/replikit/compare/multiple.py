"""Several models, several metrics, several datasets: multiple comparisons (Demšar 2006).

Gardner & Brooks (2017, section 5) note that comparing models on several metrics "would
require a correction for multiple comparisons, such as a Bonferroni correction, and would
effectively be moving beyond the two-model comparison task". This module provides that step:

* :func:`adjust_pvalues` — Holm's step-down, Bonferroni and Hochberg's step-up family-wise
  corrections across metrics and pairs of models;
* :func:`friedman_test` — the Friedman rank test with the Iman–Davenport F (Demšar 2006,
  section 3.2.2) for k models on N datasets;
* :func:`skillings_mack_test` — the Friedman test when some models miss some datasets
  (Skillings & Mack 1981); :func:`friedman_test` runs it on a table with NaN cells, and the
  post-hoc tests below use its adjusted rank sums or each pair's complete datasets;
* :func:`nemenyi_test` / :func:`critical_difference` — the Nemenyi post-hoc test and its critical
  difference, whose cliques the CD diagram (:func:`replikit.compare.plots.plot_cd_diagram`) draws;
* :func:`wilcoxon_holm` — pairwise Wilcoxon signed-rank tests across datasets with Holm's
  correction (Demšar 2006, section 3.1.3);
* :func:`scores_to_table` — the datasets x models table these tests read, from a Scores table.

Datasets (not resamples) are the independent units here: Demšar (2006, section 3.2.3) warns that
folds of one dataset overlap and must be averaged before ranking, which :func:`scores_to_table`
does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from .._format import number
from .._format import pvalue as _pvalue_text
from .._validation import check_alternative, check_choice, check_int, check_probability
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import Result
from ._kernels import range_isf, range_sf
from ._words import fill_doc

__all__ = [
    "CORRECTIONS",
    "adjust_pvalues",
    "FriedmanResult",
    "friedman_test",
    "skillings_mack_test",
    "NemenyiResult",
    "nemenyi_test",
    "critical_difference",
    "wilcoxon_holm",
    "scores_to_table",
]

#: The family-wise corrections :func:`adjust_pvalues` applies.
CORRECTIONS = ("holm", "bonferroni", "hochberg")


# ---------------------------------------------------------------------------------------------
# p-value adjustment
# ---------------------------------------------------------------------------------------------
def _adjust_iv(pvalues, correction):
    correction = check_choice(correction, "correction", CORRECTIONS)
    try:
        p = np.asarray(pvalues, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"`pvalues` must be numeric; could not convert it ({exc}).") from None
    finite = np.isfinite(p)
    bad = finite & ((p < 0) | (p > 1))
    if bad.any():
        raise DataError(f"`pvalues` must lie in [0, 1]; found {p[bad][:5].tolist()}.")
    if np.isinf(p).any():
        raise DataError("`pvalues` must lie in [0, 1]; found inf.")
    return p, correction


@fill_doc()
def adjust_pvalues(pvalues, *, correction: str = "holm") -> np.ndarray:
    """Family-wise adjusted p-values (Holm, Bonferroni or Hochberg).

    All entries of ``pvalues`` form one family (for example every metric x pair of models of a
    comparison). NaN entries are left out of the family and stay NaN.

    Parameters
    ----------
    pvalues : array-like of any shape
        Unadjusted p-values in [0, 1].
    correction : {'holm', 'bonferroni', 'hochberg'}, default 'holm'
        ``'bonferroni'``: ``min(1, m p_i)``. ``'holm'`` (step-down, Holm 1979): with the
        p-values sorted ``p_(1) <= ... <= p_(m)``, ``p~_(i) = max_{j <= i} min(1, (m - j + 1)
        p_(j))``. ``'hochberg'`` (step-up, Hochberg 1988): ``p~_(i) = min_{j >= i} min(1,
        (m - j + 1) p_(j))``. Rejecting where the adjusted p-value is ``<= alpha`` controls the
        family-wise error at ``alpha`` (Hochberg under independence or positive dependence).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, same shape as ``pvalues``.

    See Also
    --------
    wilcoxon_holm : Pairwise signed-rank tests over datasets, Holm-adjusted.
    replikit.compare.compare_scores : Adjusts the p-values of every test this way.

    Notes
    -----
    Gardner & Brooks (2017, section 5) call for a Bonferroni-type correction when several
    metrics are compared; Demšar (2006, section 3.2.2) recommends Holm's procedure as uniformly
    more powerful than Bonferroni with the same guarantee.

    References
    ----------
    {refs:holm1979,hochberg1988,demsar2006,gardner2017}

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], correction="holm")
    array([0.03, 0.06, 0.06])
    """
    p, correction = _adjust_iv(pvalues, correction)
    out = np.full(p.shape, np.nan)
    flat = p.ravel()
    keep = np.flatnonzero(np.isfinite(flat))
    m = keep.size
    if m == 0:
        return out
    vals = flat[keep]
    if correction == "bonferroni":
        adj = np.minimum(1.0, m * vals)
    else:
        order = np.argsort(vals, kind="stable")
        factors = m - np.arange(m)
        scaled = factors * vals[order]
        if correction == "holm":
            sorted_adj = np.minimum(1.0, np.maximum.accumulate(scaled))
        else:  # hochberg: running minimum from the largest p-value down
            sorted_adj = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
        adj = np.empty(m)
        adj[order] = sorted_adj
    out_flat = out.ravel()
    out_flat[keep] = adj
    return out_flat.reshape(p.shape)


# ---------------------------------------------------------------------------------------------
# the datasets x models table
# ---------------------------------------------------------------------------------------------
def _table_iv(table, name: str = "table", *, min_rows: int = 2, min_cols: int = 2,
              allow_missing: bool = False) -> pd.DataFrame:
    """A numeric DataFrame (rows = datasets, columns = models): complete, or with NaN cells
    (a model not scored on a dataset) when ``allow_missing``; infinite scores never pass."""
    if isinstance(table, pd.DataFrame):
        frame = table.copy()
    elif isinstance(table, np.ndarray) or isinstance(table, (list, tuple)):
        arr = np.asarray(table, dtype=float) if len(table) else np.empty((0, 0))
        if arr.ndim != 2:
            raise DataError(f"`{name}` must be two-dimensional (datasets x models); got shape "
                            f"{arr.shape}.")
        frame = pd.DataFrame(arr, columns=[f"model {j}" for j in range(arr.shape[1])])
    else:
        raise ParameterTypeError(f"`{name}` must be a pandas DataFrame or a 2-D array "
                                 f"(datasets x models); got {type(table).__name__}.")
    if frame.shape[1] < min_cols:
        raise DataError(f"`{name}` needs at least {min_cols} models (columns); got "
                        f"{frame.shape[1]}.")
    if frame.shape[0] < min_rows:
        raise DataError(f"`{name}` needs at least {min_rows} datasets (rows); got "
                        f"{frame.shape[0]}.")
    if frame.columns.duplicated().any():
        raise DataError(f"`{name}` has duplicated model column(s) "
                        f"{frame.columns[frame.columns.duplicated()].tolist()}.")
    nonnum = [c for c, dt in zip(frame.columns, frame.dtypes, strict=True)
              if not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt)]
    if nonnum:
        raise DataError(f"`{name}` must hold numeric scores; column(s) {nonnum} are not numeric.")
    values = frame.to_numpy(dtype=float)
    bad = np.isinf(values) if allow_missing else ~np.isfinite(values)
    if bad.any():
        rows, cols = np.nonzero(bad)
        cells = [(frame.index[r], frame.columns[c]) for r, c in zip(rows[:5], cols[:5], strict=True)]
        if allow_missing:
            raise DataError(f"`{name}` must hold finite scores (NaN marks a missing cell); found "
                            f"{int(bad.sum())} infinite cell(s), first (dataset, model): {cells}.")
        raise DataError(
            f"`{name}` must be complete and finite (every model scored on every dataset); found "
            f"{int(bad.sum())} missing/non-finite cell(s), first (dataset, model): {cells}."
        )
    return frame.astype(float)


def _missing_cells(frame: pd.DataFrame) -> tuple:
    """The ``(dataset, model)`` cells of a table that hold no score (NaN), row by row."""
    rows, cols = np.nonzero(np.isnan(frame.to_numpy(dtype=float)))
    return tuple((frame.index[r], frame.columns[c]) for r, c in zip(rows, cols, strict=True))


def _cells_text(cells, limit: int = 6) -> str:
    """``'d1/m2, d3/m1 (and 4 more)'``: missing cells in a sentence."""
    shown = ", ".join(f"{d}/{m}" for d, m in cells[:limit])
    return shown + (f" (and {len(cells) - limit} more)" if len(cells) > limit else "")


def _row_ranks(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Ranks within each row, 1 = best, average ranks for ties (Demšar 2006, section 3.2.2).

    The same numbers as ``scipy.stats.rankdata(..., method="average", axis=1)``, from one
    argsort of the whole table: a tied run of sorted positions ``i..j`` (1-based) gets
    ``(i + j) / 2``.
    """
    x = -values if higher_is_better else values
    n, k = x.shape
    order = np.argsort(x, axis=1, kind="stable")
    srt = np.take_along_axis(x, order, axis=1)
    pos = np.broadcast_to(np.arange(1.0, k + 1.0), (n, k))
    if n * k and np.any(srt[:, 1:] == srt[:, :-1]):
        new = np.ones((n, k), dtype=bool)
        new[:, 1:] = srt[:, 1:] != srt[:, :-1]
        flat_new = new.ravel()
        group = np.cumsum(flat_new) - 1                        # run id of each sorted cell
        starts = np.flatnonzero(flat_new)
        ends = np.append(starts[1:], flat_new.size) - 1        # last cell of each run
        col = np.tile(np.arange(1.0, k + 1.0), n)
        pos = (0.5 * (col[starts] + col[ends]))[group].reshape(n, k)
    ranks = np.empty((n, k))
    np.put_along_axis(ranks, order, pos, axis=1)
    return ranks


# ---------------------------------------------------------------------------------------------
# effect-size labels and per-pair effect sizes of the post-hoc tables
# ---------------------------------------------------------------------------------------------
#: Magnitude thresholds of autorank's ``_effect_level``: upper bounds of negligible, small,
#: medium (Cohen 1988 for d; Romano et al. 2006 for Cliff's delta).
THRESHOLDS = {"cohen_d": (0.2, 0.5, 0.8), "cliffs_delta": (0.147, 0.33, 0.474)}
_LABELS = ("negligible", "small", "medium", "large")


@fill_doc()
def effect_magnitude(value: float, kind: str = "cohen_d") -> str:
    """The magnitude label of an effect size, with autorank's thresholds.

    ``|d|`` below 0.2 negligible, 0.5 small, 0.8 medium, else large (Cohen 1988); ``|delta|``
    below 0.147, 0.33, 0.474 (Romano et al. 2006). See :data:`THRESHOLDS`.

    Parameters
    ----------
    value : float
        The effect size.
    kind : {'cohen_d', 'cliffs_delta'}, default 'cohen_d'
        Which effect size it is.

    Returns
    -------
    str
        ``'negligible'``, ``'small'``, ``'medium'`` or ``'large'`` for ``|value|``;
        ``'undefined'`` for NaN.

    See Also
    --------
    cohens_d : Cohen's d.
    cliffs_delta : Cliff's delta.

    References
    ----------
    {refs:cohen1988,romano2006,herbold2020}

    Examples
    --------
    >>> effect_magnitude(0.35), effect_magnitude(-0.5, "cliffs_delta")
    ('small', 'large')
    """
    kind = check_choice(kind, "kind", tuple(THRESHOLDS))
    if not np.isfinite(value):
        return "undefined"
    return _LABELS[int(np.searchsorted(THRESHOLDS[kind], abs(float(value)), side="right"))]



# ---------------------------------------------------------------------------------------------
#: The effect-size columns every pairwise table of this module and of control.py carries.
EFFECT_COLUMNS = ("mean_difference", "mean_difference_ci_low", "mean_difference_ci_high",
                  "rank_biserial", "rank_biserial_ci_low", "rank_biserial_ci_high",
                  "rank_biserial_magnitude")


def _bounded_interval(est: float, se: float, z: float) -> tuple[float, float]:
    """Cliff's (1993, eq. 13) asymmetric interval for a parameter in [-1, 1]."""
    if not np.isfinite(se):
        return float("nan"), float("nan")
    root = z * se * np.sqrt((1 - est**2) ** 2 + z**2 * se**2)
    denom = 1 - est**2 + z**2 * se**2
    if denom <= 0:
        return est, est
    lo = (est - est**3 - root) / denom
    hi = (est - est**3 + root) / denom
    return float(max(-1.0, lo)), float(min(1.0, hi))


def _walsh_dominance(d: np.ndarray) -> tuple[float, float]:
    """The mean sign of the Walsh sums ``d_i + d_j`` (``i <= j``) and its jackknife SE."""
    n = d.size
    sgn = np.sign(d[:, None] + d[None, :])               # Walsh sums' signs, i and j
    total = 0.5 * (sgn.sum() + np.trace(sgn))            # over i <= j
    est = float(total / (n * (n + 1) / 2.0))
    if n < 3:
        return est, float("nan")
    row = sgn.sum(axis=1)                                # leave difference i out: drop row i
    loo = (total - row) / ((n - 1) * n / 2.0)
    return est, float(np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def _pair_effects(x, y, confidence_level: float = 0.95) -> dict:
    """Effect sizes of ``x - y`` over the datasets where both are scored.

    * ``mean_difference`` with its t interval, the datasets as the units;
    * ``rank_biserial``: the matched-pairs rank-biserial correlation (Kerby 2014), ``(R+ -
      R-) / (n (n + 1) / 2)`` with Wilcoxon's signed-rank sums (zero differences split evenly),
      equal to the mean sign of the Walsh sums ``d_i + d_j`` (``i <= j``) — the paired analogue
      of Cliff's delta, labelled with its thresholds (Romano et al. 2006). Its interval is
      Cliff's (1993) asymmetric one with the jackknife standard error of the Walsh mean, taken
      no smaller than the jackknife SE with one zero difference added (a pseudo-observation
      at 0, as in Benavoli et al. 2014): without it the interval collapses to a point when all
      differences share a sign (simulated coverage 0.93-0.99 with it, down to 0.24 without,
      for 5-30 normal differences; docs/compare.md).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    both = ~(np.isnan(x) | np.isnan(y))
    d = x[both] - y[both]
    n = int(d.size)
    z = float(stats.norm.isf((1 - confidence_level) / 2))
    nan = float("nan")
    out = {"n": n, "mean_difference": float(d.mean()) if n else nan,
           "mean_difference_ci_low": nan, "mean_difference_ci_high": nan,
           "rank_biserial": nan, "rank_biserial_ci_low": nan, "rank_biserial_ci_high": nan,
           "rank_biserial_magnitude": "undefined"}
    if n == 0:
        return out
    if n >= 2:
        se = float(d.std(ddof=1) / np.sqrt(n))
        half = float(stats.t.isf((1 - confidence_level) / 2, n - 1)) * se
        out["mean_difference_ci_low"] = out["mean_difference"] - half
        out["mean_difference_ci_high"] = out["mean_difference"] + half
    est, se = _walsh_dominance(d)
    if n >= 2:
        se = max(np.nan_to_num(se), _walsh_dominance(np.append(d, 0.0))[1])
    lo, hi = _bounded_interval(est, se, z)
    out.update(rank_biserial=est, rank_biserial_ci_low=lo, rank_biserial_ci_high=hi,
               rank_biserial_magnitude=effect_magnitude(est, "cliffs_delta"))
    return out


# ---------------------------------------------------------------------------------------------
# Friedman
# ---------------------------------------------------------------------------------------------
@fill_doc()
@dataclass(frozen=True, slots=True)
class FriedmanResult(Result):
    """Friedman rank test of k models on N datasets, with the Iman–Davenport F.

    Attributes
    ----------
    statistic : float
        Friedman's chi-square ``chi2_F`` (tie-corrected when ``tie_correction``).
    pvalue : float
        ``P(chi2_{k-1} >= chi2_F)``.
    df : int
        ``k - 1``.
    f_statistic, f_pvalue : float
        Iman–Davenport ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` and its p-value from
        ``F(k - 1, (k - 1)(N - 1))`` — less conservative than chi2_F (Demšar 2006).
    f_df : tuple of int
        ``(k - 1, (k - 1)(N - 1))``.
    mean_ranks : pandas.Series
        Average rank of each model (1 = best), in the table's column order.
    ranks : pandas.DataFrame
        Rank of each model on each dataset.
    n_datasets, n_models : int
        ``N`` and ``k``.
    higher_is_better, tie_correction : bool
        The direction of the scores, and whether chi2_F was divided by the tie correction.
    method : str
        The test's name in words (``'Skillings-Mack test ...'`` when cells are missing).
    missing : tuple of (dataset, model)
        The cells without a score; empty for a complete table.
    dropped : tuple
        Datasets left out because fewer than 2 models have a score on them.
    adjusted_rank_sums, covariance : pandas.Series, pandas.DataFrame or None
        The Skillings–Mack adjusted rank sums ``A_j`` and their null covariance matrix
        (:func:`skillings_mack_test`); None from the Friedman path on a complete table.

    Notes
    -----
    With missing cells ``statistic`` is the Skillings–Mack ``T`` with ``df`` the rank of the
    covariance matrix, the Iman–Davenport ``F`` is not defined (NaN), and ``mean_ranks`` are
    *adjusted* mean ranks ``(k + 1) / 2 + A_j / (N sqrt(12 / (k + 1)))`` on the 1..k scale
    (equal to the mean ranks when nothing is missing).

    See Also
    --------
    friedman_test : The test that returns it.
    skillings_mack_test : The test with missing cells.
    NemenyiResult : The post-hoc test of every pair.

    References
    ----------
    {refs:friedman1937,iman1980,demsar2006}

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.9, 0.8, 0.85, 0.7], "b": [0.7, 0.75, 0.8, 0.6],
    ...                   "c": [0.6, 0.7, 0.9, 0.65]})
    >>> res = friedman_test(t)
    >>> res.df, round(res.statistic, 3), res.alternative
    (2, 3.5, 'two-sided')
    """

    statistic: float
    pvalue: float
    df: int
    f_statistic: float
    f_pvalue: float
    f_df: tuple[int, int]
    mean_ranks: pd.Series = field(repr=False)
    ranks: pd.DataFrame = field(repr=False)
    n_datasets: int = 0
    n_models: int = 0
    higher_is_better: bool = True
    tie_correction: bool = True
    method: str = "Friedman test (Iman-Davenport F)"
    missing: tuple = ()
    dropped: tuple = ()
    adjusted_rank_sums: pd.Series | None = field(default=None, repr=False)
    covariance: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def title(self) -> str:
        """The test's name in words."""
        return self.method

    @property
    def alternative(self) -> str:
        """``'two-sided'``: the omnibus test asks whether the mean ranks differ at all."""
        return "two-sided"

    def plot(self, ax=None, *, alpha: float = 0.05):
        """The critical-difference diagram of the mean ranks (Nemenyi test at ``alpha``).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        alpha : float, default 0.05
            Family-wise level of the Nemenyi critical difference drawn.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        return _nemenyi(self, check_probability(alpha, "alpha")).plot(ax=ax)

    def to_frame(self) -> pd.DataFrame:
        """One row of the two statistics.

        Returns
        -------
        pandas.DataFrame
            ``method, statistic, df, pvalue, f_statistic, f_df1, f_df2, f_pvalue, n_datasets,
            n_models, tie_correction``.
        """
        return pd.DataFrame([{
            "method": self.method, "statistic": self.statistic, "df": self.df,
            "pvalue": self.pvalue, "f_statistic": self.f_statistic, "f_df1": self.f_df[0],
            "f_df2": self.f_df[1], "f_pvalue": self.f_pvalue, "n_datasets": self.n_datasets,
            "n_models": self.n_models, "tie_correction": self.tie_correction,
            "n_missing": len(self.missing),
            "missing": "; ".join(f"{d}/{m}" for d, m in self.missing),
            "dropped": "; ".join(map(str, self.dropped)),
        }])

    def __str__(self) -> str:
        ranks = ", ".join(f"{m}: {r:.3f}" for m, r in self.mean_ranks.sort_values().items())
        if self.adjusted_rank_sums is not None and (self.missing or self.dropped):
            lines = [f"{self.method}, {number(self.n_models)} models on "
                     f"{number(self.n_datasets)} datasets",
                     f"  T = {number(self.statistic, 4)}, df = {self.df}, p = "
                     f"{_pvalue_text(self.pvalue, table=True)} (chi-square)",
                     f"  missing cells ({len(self.missing)}, dataset/model): "
                     f"{_cells_text(self.missing) or 'none'}"]
            if self.dropped:
                lines.append(f"  left out (fewer than 2 models scored): "
                             f"{', '.join(map(str, self.dropped))}")
            lines.append(f"  adjusted mean ranks (1 = best): {ranks}")
            return "\n".join(lines)
        return (
            f"{self.method}, {number(self.n_models)} models on {number(self.n_datasets)} "
            f"datasets\n"
            f"  chi2_F = {number(self.statistic, 4)}, df = {self.df}, p = "
            f"{_pvalue_text(self.pvalue, table=True)}\n"
            f"  F_F = {number(self.f_statistic, 4)}, df = ({self.f_df[0]}, {self.f_df[1]}), "
            f"p = {_pvalue_text(self.f_pvalue, table=True)}\n"
            f"  mean ranks (1 = best): {ranks}"
        )


def _friedman(frame: pd.DataFrame, higher_is_better: bool,
              tie_correction: bool) -> FriedmanResult:
    values = frame.to_numpy(dtype=float)
    n, k = values.shape
    ranks = _row_ranks(values, higher_is_better)
    mean_ranks = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * np.sum((mean_ranks - (k + 1) / 2.0) ** 2)
    if tie_correction:
        # sum over rows and tie groups of (t^3 - t), from the identity
        # sum_j r_ij^2 = k(k+1)(2k+1)/6 - sum_t (t^3 - t)/12 for average ranks
        ties = 12.0 * (n * k * (k + 1) * (2 * k + 1) / 6.0 - np.sum(ranks**2))
        ties = max(0.0, float(np.round(ties, 8)))
        c = 1.0 - ties / (n * k * (k * k - 1))
        if c <= 1e-12:  # every dataset ties every model: no evidence of any difference
            chi2 = 0.0
        else:
            chi2 /= c
    chi2 = float(chi2)
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denom = n * (k - 1) - chi2
    f_stat = float(np.inf) if denom <= 1e-12 * n * k else (n - 1) * chi2 / denom
    return FriedmanResult(
        statistic=chi2,
        pvalue=float(stats.chi2.sf(chi2, df1)),
        df=df1,
        f_statistic=float(f_stat),
        f_pvalue=float(stats.f.sf(f_stat, df1, df2)) if np.isfinite(f_stat) else 0.0,
        f_df=(df1, df2),
        mean_ranks=pd.Series(mean_ranks, index=frame.columns, name="mean_rank"),
        ranks=pd.DataFrame(ranks, index=frame.index, columns=frame.columns),
        n_datasets=n,
        n_models=k,
        higher_is_better=bool(higher_is_better),
        tie_correction=bool(tie_correction),
    )


@fill_doc()
def friedman_test(table, *, higher_is_better: bool = True,
                  tie_correction: bool = True) -> FriedmanResult:
    """Friedman rank test of k models on N datasets, with the Iman–Davenport F.

    Each dataset ranks the models (1 = best, average ranks for ties). With mean ranks ``R_j``,

    ``chi2_F = 12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4]``, divided by the tie
    correction ``C = 1 - sum (t^3 - t) / (N k (k^2 - 1))`` (t = sizes of tied groups) when
    ``tie_correction``; and ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` (Iman & Davenport
    1980) with ``(k - 1, (k - 1)(N - 1))`` degrees of freedom.

    Parameters
    ----------
    table : pandas.DataFrame or array-like of shape (n_datasets, n_models)
        One score per dataset and model, e.g. from :func:`scores_to_table`. Must be complete.
    higher_is_better : bool, default True
        False for errors/losses (the smallest score then gets rank 1).
    tie_correction : bool, default True
        Divide chi2_F by the tie correction, as ``scipy.stats.friedmanchisquare`` and R's
        ``friedman.test`` do. Demšar (2006) prints the uncorrected statistic; with no ties the
        two agree.

    Returns
    -------
    FriedmanResult
        Both statistics, the mean ranks and the ranks.

    Raises
    ------
    DataError
        Fewer than 2 datasets or models, non-numeric columns or missing cells (named).

    See Also
    --------
    nemenyi_test : Which pairs differ, after the omnibus test.
    scores_to_table : The datasets x models table from a Scores table.

    Notes
    -----
    Demšar (2006), section 3.2.2, equations for chi2_F and F_F. Gardner & Brooks (2017) point
    to this multiple-model, multiple-dataset setting as the extension of the two-model task.

    References
    ----------
    {refs:friedman1937,iman1980,demsar2006}

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.9, 0.8, 0.85], "b": [0.7, 0.75, 0.8], "c": [0.6, 0.7, 0.9]})
    >>> friedman_test(t).mean_ranks.round(3).tolist()
    [1.333, 2.333, 2.333]
    """
    frame = _table_iv(table, allow_missing=True)
    if np.isnan(frame.to_numpy(dtype=float)).any():
        return _skillings_mack(frame, bool(higher_is_better), bool(tie_correction))
    return _friedman(frame, bool(higher_is_better), bool(tie_correction))


# ---------------------------------------------------------------------------------------------
# Skillings-Mack: Friedman with missing cells
# ---------------------------------------------------------------------------------------------
def _skillings_mack(frame: pd.DataFrame, higher_is_better: bool, tie_correction: bool,
                    method: str | None = None) -> FriedmanResult:
    """Skillings & Mack (1981): adjusted rank sums, their covariance and ``T = A' S^- A``."""
    values = frame.to_numpy(dtype=float)
    n_all, k = values.shape
    present = ~np.isnan(values)
    k_i = present.sum(axis=1)
    use = k_i >= 2
    dropped = tuple(frame.index[~use])
    if use.sum() == 0:
        raise DataError("`table` has no dataset with scores of at least 2 models; the "
                        "Skillings-Mack test needs at least one.")
    x = np.where(present, -values if higher_is_better else values, np.inf)[use]
    p = present[use]
    kk = k_i[use].astype(float)
    ranks = _row_ranks(x, False)                        # missing cells rank last, tied
    centered = np.where(p, ranks - (kk[:, None] + 1) / 2, 0.0)
    weight = np.sqrt(12.0 / (kk + 1))
    a = weight @ centered                               # A_j, Skillings & Mack (1981) eq. 2.2
    pf = p.astype(float)
    if tie_correction:  # the permutation covariance of each block's ranks, ties included
        c = 12.0 * np.sum(centered**2, axis=1) / ((kk + 1) * (kk - 1))
    else:               # Skillings & Mack's no-ties covariance: c_i = k_i
        c = kk
    cov = np.diag(c @ pf) - (pf * (c / kk)[:, None]).T @ pf
    cov = 0.5 * (cov + cov.T)
    scale = max(1.0, float(np.abs(cov).max()))
    df = int(np.linalg.matrix_rank(cov, tol=1e-9 * scale, hermitian=True))
    if df == 0:
        t_stat, pval = 0.0, 1.0  # every block ties every model: no evidence of a difference
    else:
        t_stat = float(a @ np.linalg.pinv(cov, rcond=1e-9, hermitian=True) @ a)
        t_stat = max(0.0, t_stat)
        pval = float(stats.chi2.sf(t_stat, df))
    n = int(use.sum())
    missing = _missing_cells(frame)
    mean_ranks = (k + 1) / 2.0 + a / (n * np.sqrt(12.0 / (k + 1)))
    full_ranks = np.full(values.shape, np.nan)
    full_ranks[use] = np.where(p, ranks, np.nan)
    f_stat = f_p = float("nan")
    df1, df2 = k - 1, (k - 1) * (n - 1)
    if not missing and not dropped and df > 0:  # complete: the Iman-Davenport F as well
        denom = n * (k - 1) - t_stat
        f_stat = float(np.inf) if denom <= 1e-12 * n * k else (n - 1) * t_stat / denom
        f_p = float(stats.f.sf(f_stat, df1, df2)) if np.isfinite(f_stat) else 0.0
    if method is None:
        method = ("Skillings-Mack test (Friedman test with missing cells)" if missing
                  else "Skillings-Mack test")
    names = frame.columns
    return FriedmanResult(
        statistic=float(t_stat), pvalue=pval, df=df, f_statistic=f_stat, f_pvalue=f_p,
        f_df=(df1, df2),
        mean_ranks=pd.Series(mean_ranks, index=names, name="mean_rank"),
        ranks=pd.DataFrame(full_ranks, index=frame.index, columns=names),
        n_datasets=n, n_models=k, higher_is_better=bool(higher_is_better),
        tie_correction=bool(tie_correction), method=method, missing=missing, dropped=dropped,
        adjusted_rank_sums=pd.Series(a, index=names, name="adjusted_rank_sum"),
        covariance=pd.DataFrame(cov, index=names, columns=names),
    )


@fill_doc()
def skillings_mack_test(table, *, higher_is_better: bool = True,
                        tie_correction: bool = True) -> FriedmanResult:
    """Skillings–Mack test: the Friedman test when some models miss some datasets.

    A model that timed out on a dataset leaves a NaN cell. Each dataset ``i`` ranks its ``k_i``
    scored models (1 = best, average ranks for ties); a missing cell gets the mean rank
    ``(k_i + 1) / 2``. The adjusted rank sums are

    ``A_j = sum_i sqrt(12 / (k_i + 1)) (r_ij - (k_i + 1) / 2)``

    (Skillings & Mack 1981, eq. 2.2); under the null hypothesis that every dataset ranks its
    models at random their covariance matrix ``S`` has, without ties, ``S_jj = sum_i (k_i - 1)``
    over the datasets scoring ``j`` and ``S_jl = -lambda_jl``, the number of datasets scoring
    both ``j`` and ``l``. The statistic ``T = A' S^- A`` (``S^-`` a generalized inverse: the
    Moore–Penrose one) is referred to chi-square with ``rank(S)`` degrees of freedom (``k - 1``
    when the design is connected). Datasets with fewer than 2 scored models carry no ranking and
    drop out (``dropped``). With no missing cell ``T`` equals Friedman's ``chi2_F``.

    Parameters
    ----------
    table : pandas.DataFrame or array-like of shape (n_datasets, n_models)
        One score per dataset and model, NaN where a model has none.
    higher_is_better : bool, default True
        False for errors/losses (the smallest score then gets rank 1).
    tie_correction : bool, default True
        Use the permutation covariance of each dataset's ranks given its ties
        (``c_i (I - J / k_i)`` on the scored models with ``c_i = 12 sum_j (r_ij - (k_i + 1)/2)^2 /
        (k_i^2 - 1)``), so that ``T`` equals the tie-corrected Friedman statistic on a complete
        table. False: Skillings & Mack's no-ties covariance (``c_i = k_i``), as the R package
        Skillings.Mack; the two agree when no dataset has ties.

    Returns
    -------
    FriedmanResult
        ``statistic`` = T, ``df``, ``pvalue``, the adjusted rank sums and their covariance, the
        adjusted mean ranks, and ``missing`` / ``dropped`` naming the cells and datasets.

    Raises
    ------
    DataError
        Fewer than 2 datasets or models, non-numeric columns, infinite scores, or no dataset
        with at least 2 scored models.

    See Also
    --------
    friedman_test : Runs this test when the table has missing cells.
    nemenyi_test : The all-pairs post-hoc test, on the adjusted rank sums when cells miss.

    Notes
    -----
    Skillings & Mack (1981), section 2 (the statistic and its covariance); Chatfield & Mander
    (2009) on its use as the Friedman test with missing data. The chi-square reference is
    asymptotic; replikit's simulation (docs/compare.md) found sizes close to 0.05 with 10-30%
    of the cells missing at random.

    References
    ----------
    {refs:skillings1981,chatfield2009,friedman1937}

    Examples
    --------
    >>> import numpy as np
    >>> t = np.array([[0.9, 0.8, 0.7], [0.85, np.nan, 0.6], [0.8, 0.75, 0.7],
    ...               [np.nan, 0.7, 0.65]])
    >>> res = skillings_mack_test(t)
    >>> round(res.statistic, 3), res.df, len(res.missing)
    (5.833, 2, 2)
    """
    frame = _table_iv(table, allow_missing=True)
    return _skillings_mack(frame, bool(higher_is_better), bool(tie_correction))


# ---------------------------------------------------------------------------------------------
# Nemenyi
# ---------------------------------------------------------------------------------------------
def _q_alpha(k: int, alpha: float) -> float:
    """Demšar's q_alpha: studentized range quantile (k groups, infinite df) / sqrt(2)."""
    return range_isf(alpha, k) / float(np.sqrt(2.0))


@fill_doc()
def critical_difference(k: int, n: int, *, alpha: float = 0.05) -> float:
    """Nemenyi critical difference of mean ranks for k models on n datasets.

    ``CD = q_alpha sqrt(k (k + 1) / (6 n))``, where ``q_alpha`` is the ``1 - alpha`` quantile of
    the studentized range with k groups and infinite degrees of freedom divided by ``sqrt(2)``
    (Demšar 2006, section 3.2.2 and Table 5a: q_0.05 = 2.569 for k = 4).

    Parameters
    ----------
    k : int
        Number of models (>= 2).
    n : int
        Number of datasets (>= 1).
    alpha : float, default 0.05
        Family-wise significance level, in (0, 1).

    Returns
    -------
    float
        The critical difference of mean ranks.

    See Also
    --------
    nemenyi_test : The test it decides.
    replikit.compare.bonferroni_dunn_critical_difference : The CD against a control.

    References
    ----------
    {refs:nemenyi1963,demsar2006}

    Examples
    --------
    >>> round(critical_difference(4, 14), 3)   # Demšar (2006): 1.25
    1.254
    """
    k = check_int(k, "k", min_value=2)
    n = check_int(n, "n", min_value=1)
    alpha = check_probability(alpha, "alpha")
    return float(_q_alpha(k, alpha) * np.sqrt(k * (k + 1) / (6.0 * n)))


@fill_doc()
@dataclass(frozen=True, slots=True)
class NemenyiResult(Result):
    """Nemenyi all-pairs post-hoc test after a Friedman test (Demšar 2006).

    Attributes
    ----------
    critical_distance : float
        The CD: two models differ significantly when their mean ranks differ by more than it.
    alpha : float
        Family-wise significance level of the decisions.
    mean_ranks : pandas.Series
        Mean rank per model (1 = best), table column order.
    rank_differences : pandas.DataFrame
        ``|R_i - R_j|`` for every pair (k x k).
    significant : pandas.DataFrame
        ``|R_i - R_j| > CD`` (k x k booleans; False on the diagonal).
    pvalues : pandas.DataFrame
        Nemenyi p-values, ``P(Q_{k,inf} >= sqrt(2) |R_i - R_j| / SE)`` with
        ``SE = sqrt(k (k + 1) / (6 N))`` (studentized range); ``p < alpha`` iff significant.
    friedman : FriedmanResult
        The omnibus test on the same table.
    n_datasets, n_models : int
        ``N`` and ``k``.
    method : str
        The test's name in words.
    statistics : pandas.DataFrame
        The signed pairwise ``z = (R_i - R_j) / SE_ij`` (k x k); the studentized range of a pair
        is ``sqrt(2) |z|``.
    effects : pandas.DataFrame or None
        One row per pair ``a, b``: ``n`` (datasets scoring both), the mean score difference
        ``a - b`` with its t interval and the matched-pairs rank-biserial correlation with its
        interval and magnitude label (see :func:`wilcoxon_holm`); None when the result was
        built from a Friedman result alone (:meth:`FriedmanResult.plot`).
    missing : tuple of (dataset, model)
        The cells without a score. With missing cells the test runs on the Skillings–Mack
        adjusted rank sums ``A`` and their covariance ``S``: ``z = (A_i - A_j) / sqrt(S_ii +
        S_jj - 2 S_ij)`` with the studentized-range p-value of ``sqrt(2) |z|`` (a
        Tukey–Kramer-type use of the range distribution), ``significant`` is ``p < alpha``,
        ``mean_ranks`` are the adjusted mean ranks, and ``critical_distance`` is the largest
        pairwise critical difference (what the CD diagram draws: conservative for the pairs
        with a smaller standard error).
    statistic, pvalue, alternative : float, float, str
        The range test of equal mean ranks the pairwise decisions rest on (properties): the
        studentized range of the mean ranks, ``sqrt(2) max |R_i - R_j| / SE``, its p-value
        (the smallest pairwise p-value) and ``'two-sided'``.

    See Also
    --------
    nemenyi_test : The test that returns it.
    FriedmanResult : The omnibus test.
    replikit.compare.plot_cd_diagram : Its critical-difference diagram (:meth:`plot`).

    References
    ----------
    {refs:nemenyi1963,demsar2006}

    Examples
    --------
    >>> import numpy as np
    >>> t = np.random.default_rng(0).normal(size=(20, 3)) + [0.0, 0.5, 2.0]
    >>> res = nemenyi_test(t)
    >>> res.cliques(), bool(res.pvalue < 0.05)
    ([('model 1', 'model 0')], True)
    """

    critical_distance: float
    alpha: float
    mean_ranks: pd.Series = field(repr=False)
    rank_differences: pd.DataFrame = field(repr=False)
    significant: pd.DataFrame = field(repr=False)
    pvalues: pd.DataFrame = field(repr=False)
    friedman: FriedmanResult = field(repr=False)
    n_datasets: int = 0
    n_models: int = 0
    method: str = "Nemenyi post-hoc test"
    statistics: pd.DataFrame | None = field(default=None, repr=False)
    effects: pd.DataFrame | None = field(default=None, repr=False)
    missing: tuple = ()

    @property
    def title(self) -> str:
        """The test's name in words."""
        return self.method

    @property
    def statistic(self) -> float:
        """The studentized range of the mean ranks, ``sqrt(2) max |R_i - R_j| / SE``."""
        if self.missing and self.statistics is not None:
            z = np.abs(self.statistics.to_numpy(dtype=float))
            return float(np.sqrt(2.0) * np.nanmax(z)) if np.isfinite(z).any() else float("nan")
        k, n = self.n_models, self.n_datasets
        se = np.sqrt(k * (k + 1) / (6.0 * n))
        return float(np.sqrt(2.0) * self.rank_differences.to_numpy().max() / se)

    @property
    def pvalue(self) -> float:
        """The p-value of the range test of equal mean ranks: the smallest pairwise p-value."""
        p = self.pvalues.to_numpy()
        off = ~np.eye(p.shape[0], dtype=bool)
        return float(p[off].min()) if off.any() else 1.0

    @property
    def alternative(self) -> str:
        """``'two-sided'``: the pairs may differ in either direction."""
        return "two-sided"

    def plot(self, ax=None, **kwargs):
        """The critical-difference diagram (Demšar 2006, Figure 1a).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        **kwargs
            Passed to :func:`~replikit.compare.plot_cd_diagram` (``title``, ``digits``).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_cd_diagram

        return plot_cd_diagram(self, ax=ax, **kwargs)

    def cliques(self) -> list[tuple]:
        """Maximal groups of models whose mean ranks all lie within one CD of each other.

        These are the groups a CD diagram joins with a thick bar (Demšar 2006, Figure 1a): the
        models are sorted by mean rank and each run ``[i, j]`` with ``R_j - R_i <= CD`` that is
        not contained in an earlier run is kept. Groups of one model are not returned.

        Returns
        -------
        list of tuple
            The groups, best ranked first.
        """
        order = np.argsort(self.mean_ranks.to_numpy(), kind="stable")
        r = self.mean_ranks.to_numpy()[order]
        names = self.mean_ranks.index[order]
        tol = 1e-12 * max(1.0, self.critical_distance)
        ends = np.searchsorted(r, r + self.critical_distance + tol, side="right") - 1
        prev_max = np.concatenate([[-1], np.maximum.accumulate(ends)[:-1]])
        keep = (ends > np.arange(r.size)) & (ends > prev_max)
        return [tuple(names[i:ends[i] + 1]) for i in np.flatnonzero(keep)]

    def to_frame(self) -> pd.DataFrame:
        """One row per pair.

        Returns
        -------
        pandas.DataFrame
            ``a, b, mean_rank_a, mean_rank_b, rank_difference, statistic`` (``z``), ``pvalue,
            pvalue_adjusted`` (the same number: the studentized range p-value already holds the
            family-wise level), ``significant, critical_distance``, then the effect sizes of
            :attr:`effects` (``n``, mean difference and rank-biserial correlation with their
            intervals and label) when known.
        """
        names = list(self.mean_ranks.index)
        z = self.statistics
        rows = []
        for i, j in combinations(range(len(names)), 2):
            a, b = names[i], names[j]
            p = float(self.pvalues.iloc[i, j])
            rows.append({
                "a": a, "b": b,
                "mean_rank_a": float(self.mean_ranks.iloc[i]),
                "mean_rank_b": float(self.mean_ranks.iloc[j]),
                "rank_difference": float(self.mean_ranks.iloc[i] - self.mean_ranks.iloc[j]),
                "statistic": float(z.iloc[i, j]) if z is not None else float("nan"),
                "pvalue": p, "pvalue_adjusted": p,
                "significant": bool(self.significant.iloc[i, j]),
                "critical_distance": self.critical_distance,
            })
        out = pd.DataFrame(rows)
        if self.effects is not None and len(out):
            out = out.merge(self.effects, on=["a", "b"], how="left")
        return out

    def __str__(self) -> str:
        ranks = ", ".join(f"{m}: {r:.3f}" for m, r in self.mean_ranks.sort_values().items())
        pairs = self.to_frame()
        sig = pairs[pairs["significant"]]
        listed = "; ".join(f"{a} vs {b}" for a, b in zip(sig["a"], sig["b"], strict=True))
        groups = " | ".join(", ".join(map(str, g)) for g in self.cliques()) or "none"
        text = (
            f"{self.method} (alpha = {number(self.alpha)}), {number(self.n_models)} models on "
            f"{number(self.n_datasets)} datasets\n"
            f"  critical difference CD = {number(self.critical_distance, 4)}"
            + (" (the largest of the pairs')" if self.missing else "") + "\n"
            f"  {'adjusted ' if self.missing else ''}mean ranks (1 = best): {ranks}\n"
            f"  significant pairs: {listed or 'none'}\n"
            f"  groups not significantly different: {groups}"
        )
        if self.missing:
            text += (f"\n  missing cells ({len(self.missing)}, dataset/model): "
                     f"{_cells_text(self.missing)}")
        if self.effects is not None and len(pairs):
            text += "\n  effect sizes (a - b over the datasets scoring both):"
            for r in pairs.itertuples():
                text += (f"\n    {r.a} vs {r.b}: mean difference {number(r.mean_difference)} "
                         f"[{number(r.mean_difference_ci_low)}, "
                         f"{number(r.mean_difference_ci_high)}], rank-biserial "
                         f"{number(r.rank_biserial)} [{number(r.rank_biserial_ci_low)}, "
                         f"{number(r.rank_biserial_ci_high)}] ({r.rank_biserial_magnitude})")
        return text


@fill_doc()
def nemenyi_test(table, *, alpha: float = 0.05, higher_is_better: bool = True,
                 tie_correction: bool = True, confidence_level: float = 0.95) -> NemenyiResult:
    """Nemenyi post-hoc test: which pairs of models differ in mean rank across datasets.

    Two models differ significantly when ``|R_i - R_j| > CD`` with
    ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` (see :func:`critical_difference`). The Friedman
    test on the same table is run and attached (``.friedman``); Demšar (2006) advises reading
    the post-hoc test only after the omnibus test rejects.

    Parameters
    ----------
    table : pandas.DataFrame or array-like of shape (n_datasets, n_models)
        One score per dataset and model; NaN where a model has none (the test then runs on
        the Skillings–Mack adjusted rank sums: see :class:`NemenyiResult`).
    alpha : float, default 0.05
        Family-wise significance level of the pairwise decisions.
    higher_is_better : bool, default True
        False for errors/losses.
    tie_correction : bool, default True
        Passed to the attached :func:`friedman_test`.
    confidence_level : float, default 0.95
        Level of the per-pair effect-size intervals.

    Returns
    -------
    NemenyiResult
        The critical difference, the pairwise decisions, statistics and p-values, the per-pair
        effect sizes, and the Friedman (or Skillings–Mack) test.

    See Also
    --------
    friedman_test : The omnibus test it follows.
    critical_difference : The critical difference alone.
    replikit.compare.bonferroni_dunn_test : Every model against one control.
    replikit.compare.plot_cd_diagram : The critical-difference diagram.

    Notes
    -----
    Demšar (2006), section 3.2.2 (Nemenyi test, Table 5a) and section 3.2.4 (CD diagrams);
    Gardner & Brooks (2017), section 5, on comparisons beyond two models.

    References
    ----------
    {refs:nemenyi1963,demsar2006,friedman1937}

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = rng.normal(size=(20, 3)) + [0.0, 0.5, 2.0]
    >>> res = nemenyi_test(t)
    >>> bool(res.significant.loc["model 0", "model 2"])
    True
    """
    alpha = check_probability(alpha, "alpha")
    confidence_level = check_probability(confidence_level, "confidence_level")
    frame = _table_iv(table, allow_missing=True)
    fried = friedman_test(frame, higher_is_better=higher_is_better,
                          tie_correction=tie_correction)
    return _nemenyi(fried, alpha, frame, confidence_level)


def _effects_frame(frame: pd.DataFrame, confidence_level: float) -> pd.DataFrame:
    """One row of :func:`_pair_effects` per pair of columns ``a < b``, table order."""
    names = list(frame.columns)
    values = frame.to_numpy(dtype=float)
    rows = [{"a": names[i], "b": names[j],
             **_pair_effects(values[:, i], values[:, j], confidence_level)}
            for i, j in combinations(range(len(names)), 2)]
    return pd.DataFrame(rows, columns=["a", "b", "n", *EFFECT_COLUMNS])


def _pair_se(fried: FriedmanResult) -> np.ndarray:
    """k x k standard errors of the differences of (adjusted) mean ranks."""
    n, k = fried.n_datasets, fried.n_models
    if fried.covariance is None or not (fried.missing or fried.dropped):
        return np.full((k, k), np.sqrt(k * (k + 1) / (6.0 * n)))
    s = fried.covariance.to_numpy(dtype=float)
    d = np.diag(s)
    var = np.maximum(d[:, None] + d[None, :] - 2 * s, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var) / (n * np.sqrt(12.0 / (k + 1)))
    return np.where(se > 0, se, np.nan)


def _nemenyi(fried: FriedmanResult, alpha: float, frame: pd.DataFrame | None = None,
             confidence_level: float = 0.95) -> NemenyiResult:
    """The Nemenyi test of the mean ranks of a Friedman test, at ``alpha``; with missing
    cells, of the Skillings–Mack adjusted mean ranks with each pair's own standard error."""
    n, k = fried.n_datasets, fried.n_models
    incomplete = bool(fried.missing or fried.dropped) and fried.covariance is not None
    r = fried.mean_ranks.to_numpy()
    signed = r[:, None] - r[None, :]
    diff = np.abs(signed)
    se = _pair_se(fried)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(np.isfinite(se), signed / se, np.nan)
    np.fill_diagonal(z, 0.0)
    iu = np.triu_indices(k, 1)
    p = np.ones((k, k))
    q = np.sqrt(2.0) * np.abs(z[iu])
    ok = np.isfinite(q)
    p_upper = np.full(q.shape, np.nan)
    p_upper[ok] = range_sf(q[ok], k)  # = stats.studentized_range.sf(., k, inf)
    p[iu] = p_upper
    p[(iu[1], iu[0])] = p_upper
    names = fried.mean_ranks.index
    if incomplete:
        cds = _q_alpha(k, alpha) * se
        cd = float(np.nanmax(cds)) if np.isfinite(cds).any() else float("nan")
        sig = np.nan_to_num(p, nan=1.0) < alpha
        np.fill_diagonal(sig, False)
    else:
        cd = critical_difference(k, n, alpha=alpha)
        tol = 1e-12 * max(1.0, cd)
        sig = diff > cd + tol
    return NemenyiResult(
        critical_distance=cd,
        alpha=alpha,
        mean_ranks=fried.mean_ranks,
        rank_differences=pd.DataFrame(diff, index=names, columns=names),
        significant=pd.DataFrame(sig, index=names, columns=names),
        pvalues=pd.DataFrame(np.clip(p, 0.0, 1.0), index=names, columns=names),
        friedman=fried,
        n_datasets=n,
        n_models=k,
        method=("Nemenyi-type post-hoc test on Skillings-Mack rank sums" if incomplete
                else "Nemenyi post-hoc test"),
        statistics=pd.DataFrame(z, index=names, columns=names),
        effects=None if frame is None else _effects_frame(frame, confidence_level),
        missing=fried.missing,
    )


# ---------------------------------------------------------------------------------------------
# Wilcoxon-Holm
# ---------------------------------------------------------------------------------------------
@fill_doc()
def wilcoxon_holm(table, *, alpha: float = 0.05, alternative: str = "two-sided",
                  zero_method: str = "demsar", correction: str = "holm",
                  confidence_level: float = 0.95) -> pd.DataFrame:
    """Pairwise Wilcoxon signed-rank tests across datasets, Holm-corrected over the pairs.

    For every pair of models ``(a, b)`` the differences ``d_i = score_a - score_b`` over the N
    datasets are ranked by ``|d_i|`` (average ranks for ties); ``R+`` and ``R-`` sum the ranks of
    positive and negative differences, and the statistic is ``T = min(R+, R-)`` (two-sided) with
    the exact null distribution for small N without ties, else the normal approximation
    (``scipy.stats.wilcoxon``). The ``k (k - 1) / 2`` p-values are then adjusted with Holm's
    procedure (:func:`adjust_pvalues`).

    Parameters
    ----------
    table : pandas.DataFrame or array-like of shape (n_datasets, n_models)
        One score per dataset and model, at least 2 datasets; NaN where a model has no score.
        Each pair is tested on the datasets that score both (its ``n``); a pair with none gets
        a NaN p-value and stays out of the family.
    alpha : float, default 0.05
        Family-wise level for the ``significant`` column (adjusted p <= alpha).
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        In terms of ``d = score_a - score_b``.
    zero_method : {'demsar', 'zsplit', 'wilcox', 'pratt'}, default 'demsar'
        Datasets where both models score the same. ``'demsar'`` (Demšar 2006, section 3.1.3):
        rank them and split their ranks evenly between R+ and R-, ignoring one of them if their
        number is odd; ``'zsplit'``: the same without ignoring one; ``'wilcox'``: drop them;
        ``'pratt'``: rank them, then drop their ranks.
    correction : {'holm', 'bonferroni', 'hochberg'}, default 'holm'
        The family-wise adjustment over pairs.
    confidence_level : float, default 0.95
        Level of the effect-size intervals.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``a, b, n, wins, losses, ties, mean_difference, median_difference,
        statistic, pvalue, pvalue_adjusted, significant``, then the effect sizes
        ``mean_difference_ci_low, mean_difference_ci_high`` (t interval of the mean of
        ``d``, the datasets as units), ``rank_biserial`` — the matched-pairs rank-biserial
        correlation ``(R+ - R-) / (n (n + 1) / 2)`` (Kerby 2014; zero differences split
        evenly), the mean sign of the Walsh sums ``d_i + d_j``, ``i <= j``, a paired analogue
        of Cliff's delta — with ``rank_biserial_ci_low, rank_biserial_ci_high`` (Cliff's 1993
        asymmetric interval with a jackknife standard error) and ``rank_biserial_magnitude``
        (Romano et al. 2006 thresholds for Cliff's delta). ``wins`` counts datasets where
        ``a`` scores higher. ``.attrs["missing"]`` lists the ``(dataset, model)`` cells
        without a score.

    See Also
    --------
    nemenyi_test : The rank-based post-hoc test of every pair.
    adjust_pvalues : The adjustment.
    replikit.compare.bayesian_signed_rank_test : The Bayesian signed-rank test with a tolerance.

    Notes
    -----
    Demšar (2006), section 3.1.3 (Wilcoxon 1945) and section 3.2.2 (Holm 1979); the
    combination is the "Wilcoxon-Holm" analysis of Benavoli et al. (2016); Gardner & Brooks
    (2017), section 5.

    References
    ----------
    {refs:wilcoxon1945,holm1979,demsar2006,kerby2014,cliff1993,romano2006}

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.90, 0.81, 0.77, 0.95, 0.70, 0.88],
    ...                   "b": [0.85, 0.80, 0.70, 0.91, 0.64, 0.80]})
    >>> wilcoxon_holm(t)[["a", "b", "wins", "pvalue"]].round(4).to_dict("records")
    [{'a': 'a', 'b': 'b', 'wins': 6, 'pvalue': 0.0312}]
    """
    alpha = check_probability(alpha, "alpha")
    alternative = check_alternative(alternative)
    zero_method = check_choice(zero_method, "zero_method", ("demsar", "zsplit", "wilcox", "pratt"))
    correction = check_choice(correction, "correction", CORRECTIONS)
    confidence_level = check_probability(confidence_level, "confidence_level")
    frame = _table_iv(table, allow_missing=True)
    values = frame.to_numpy(dtype=float)
    names = list(frame.columns)
    rows = []
    for i, j in combinations(range(len(names)), 2):
        d = values[:, i] - values[:, j]
        d = d[~np.isnan(d)]                                # the datasets scoring both
        nonzero = d != 0
        if d.size == 0:
            stat, p = np.nan, np.nan  # never scored together: left out of the family
        elif not nonzero.any():
            stat, p = np.nan, 1.0  # identical on every dataset: no evidence of a difference
        else:
            used, zm = d, zero_method
            if zero_method == "demsar":
                zm = "zsplit"
                zeros = np.flatnonzero(d == 0)
                if zeros.size % 2:
                    used = np.delete(d, zeros[0])
            stat, p = _wilcoxon(used, zm, alternative)
        rows.append({
            "a": names[i], "b": names[j], "n": int(d.size),
            "wins": int((d > 0).sum()), "losses": int((d < 0).sum()),
            "ties": int((d == 0).sum()),
            "mean_difference": float(d.mean()) if d.size else np.nan,
            "median_difference": float(np.median(d)) if d.size else np.nan,
            "statistic": stat, "pvalue": p,
        })
    out = pd.DataFrame(rows)
    out["pvalue_adjusted"] = adjust_pvalues(out["pvalue"].to_numpy(), correction=correction)
    out["significant"] = out["pvalue_adjusted"] <= alpha
    eff = _effects_frame(frame, confidence_level).drop(columns=["a", "b", "n",
                                                               "mean_difference"])
    out = pd.concat([out, eff], axis=1)
    out.attrs["missing"] = list(_missing_cells(frame))
    return out


def _wilcoxon(d: np.ndarray, zero_method: str, alternative: str) -> tuple[float, float]:
    """``(statistic, pvalue)`` of ``scipy.stats.wilcoxon(d, zero_method=..., alternative=...)``.

    The same numbers, faster where scipy is slow: with ties or zeros and at most 13
    differences, scipy's default enumerates all ``2**n`` sign flips with a permutation test
    (about a second per test). Here the same exact null distribution of ``R+`` is counted
    instead: the ranks of ``|d|`` do not change when signs flip, so ``R+`` is a constant (the
    zero-split half of the zeros' ranks) plus the sum of a random subset of the non-zero
    differences' mid-ranks — a convolution over the doubled (integer) ranks. Its p-value is
    scipy's: the share of the ``2**n`` sign patterns at or beyond the observed ``R+``
    (two-sided: twice the smaller tail, at most 1). Elsewhere scipy is called.
    """
    n = d.size
    zeros = d == 0
    absd = np.abs(d)
    _, counts = np.unique(absd, return_counts=True)
    if zero_method not in ("zsplit", "pratt") or n > 13 or not (
            zeros.any() or (counts > 1).any()):
        res = stats.wilcoxon(d, zero_method=zero_method, alternative=alternative)
        return float(res.statistic), float(res.pvalue)
    r = stats.rankdata(absd)
    const = float(r[zeros].sum()) / 2 if zero_method == "zsplit" else 0.0
    r_plus = float(r[d > 0].sum()) + const
    r_minus = float(r[d < 0].sum()) + const
    twice = np.rint(2 * r[~zeros]).astype(np.int64)
    ways = np.zeros(int(twice.sum()) + 1, dtype=np.int64)  # sign patterns per 2 R+
    ways[0] = 1
    for t in twice:  # one convolution step per non-zero difference (at most 13; t >= 2)
        ways[t:] = ways[t:] + ways[:-t].copy()
    total = float(ways.sum())
    null = const + np.arange(ways.size) / 2.0
    gamma = abs(np.finfo(float).eps * 100 * r_plus)  # scipy's tolerance for equal values
    less = float(ways[null <= r_plus + gamma].sum()) / total
    greater = float(ways[null >= r_plus - gamma].sum()) / total
    p = {"less": less, "greater": greater,
         "two-sided": 2 * min(less, greater)}[alternative]
    stat = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    return float(stat), float(min(max(p, 0.0), 1.0))


# ---------------------------------------------------------------------------------------------
# Scores -> datasets x models
# ---------------------------------------------------------------------------------------------
def scores_to_table(scores, *, metric: str | None = None, by: str = "study") -> pd.DataFrame:
    """The datasets x models table of mean scores that the multiple-dataset tests read.

    Averages ``value`` over repeats, folds and any other key per ``(by, model)`` — each cell is
    one dataset's estimate, as in Demšar (2006, section 3.2.3), who warns that folds of one
    dataset are not independent and must not enter the Friedman test as separate blocks.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame or RunResult
        Scores in the Scores layout (``study, model, repeat, fold, metric, value``).
    metric : str, optional
        Which metric. May be omitted only when the table holds a single metric.
    by : str, default 'study'
        The column whose values are the datasets (rows): ``'study'`` or any factor column such
        as ``'dataset'``.

    Returns
    -------
    pandas.DataFrame
        Index = values of ``by`` (order of first appearance), columns = models (order of first
        appearance), cells = mean score; NaN where a model was not scored on a dataset.

    See Also
    --------
    friedman_test : Reads the table.
    nemenyi_test : Reads the table.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": ["s1"] * 4 + ["s2"] * 4, "model": ["a", "a", "b", "b"] * 2,
    ...                   "repeat": 0, "fold": [0, 1] * 4, "metric": "acc",
    ...                   "value": [0.8, 0.9, 0.7, 0.7, 0.6, 0.6, 0.5, 0.7]})
    >>> scores_to_table(f).round(3).to_dict("index")
    {'s1': {'a': 0.85, 'b': 0.7}, 's2': {'a': 0.6, 'b': 0.6}}
    """
    from ..data import Scores

    if hasattr(scores, "scores") and not isinstance(scores, pd.DataFrame):
        scores = scores.scores
    if isinstance(scores, Scores):
        frame = scores.frame
    elif isinstance(scores, pd.DataFrame):
        frame = Scores(scores).frame
    else:
        raise ParameterTypeError(f"`scores` must be a Scores table, a DataFrame in the Scores "
                                 f"layout or a RunResult; got {type(scores).__name__}.")
    if not isinstance(by, str) or by not in frame.columns:
        raise ParameterError(f"`by` must name a column of the scores table; got {by!r}, "
                             f"columns are {list(frame.columns)}.")
    if by in ("model", "metric", "value"):
        raise ParameterError(f"`by` must be the dataset column (e.g. 'study'); got {by!r}.")
    metrics = list(pd.unique(frame["metric"]))
    if metric is None:
        if len(metrics) != 1:
            raise ParameterError(f"`metric` must be given when the scores hold several metrics; "
                                 f"found {metrics}.")
        metric = metrics[0]
    elif metric not in metrics:
        raise ParameterError(f"`metric` {metric!r} is not in the scores; found {metrics}.")
    sub = frame[frame["metric"] == metric]
    table = sub.pivot_table(index=by, columns="model", values="value", aggfunc="mean",
                            sort=False)
    table.columns.name = "model"
    return table
