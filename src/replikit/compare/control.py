"""Comparisons with a control over many datasets, and effect sizes beside the tests.

* :func:`bonferroni_dunn_test` — every model against one control model by mean ranks over the
  datasets (Demšar 2006, sec. 3.2.2): ``z = (R_i − R_c) / sqrt(k (k + 1) / (6 N))``, two-sided
  normal p-values, Bonferroni over the ``k − 1`` comparisons; equivalently a model differs from
  the control when its mean rank is more than the critical difference
  ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` away, with ``q_alpha`` the two-sided normal quantile
  at ``alpha / (k − 1)`` (Demšar 2006, Table 5b). Its diagram is
  :func:`replikit.compare.plots.plot_cd_control`.
* :func:`effect_sizes` — Cohen's d (pooled standard deviation) and Cliff's delta of each model
  against a reference over the datasets, with the magnitude labels of autorank (Herbold 2020):
  ``|d|`` < 0.2 negligible, < 0.5 small, < 0.8 medium, else large (Cohen 1988);
  ``|delta|`` < 0.147 negligible, < 0.33 small, < 0.474 medium, else large (Romano et al.
  2006).
* :func:`standardized_mean_difference` — within one dataset, the mean fold difference of two
  models over its standard deviation corrected for the overlap of training sets (Nadeau &
  Bengio 2003): the sample variance of the differences estimates ``(1 − rho) sigma^2`` with
  ``rho = n_test / n``, so ``sigma^2`` is estimated by ``s^2 (1 + n_test / n_train)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._format import number
from .._validation import check_int, check_probability
from ..errors import DataError, ParameterError
from ..results import Result
from ._words import fill_doc, p_is
from .multiple import (  # the labels live there: the post-hoc tables of both modules use them
    THRESHOLDS as THRESHOLDS,
)
from .multiple import (
    FriedmanResult,
    _cells_text,
    _friedman,
    _pair_effects,
    _pair_se,
    _table_iv,
    effect_magnitude,
    friedman_test,
)

__all__ = ["ControlResult", "bonferroni_dunn_test", "bonferroni_dunn_critical_difference",
           "cliffs_delta", "cohens_d", "effect_magnitude", "effect_sizes",
           "standardized_mean_difference", "SMDResult"]

@fill_doc()
def cliffs_delta(x, y) -> float:
    """Cliff's delta of two samples: ``P(X > Y) − P(X < Y)`` over all pairs (Cliff 1993).

    Parameters
    ----------
    x, y : array-like
        The two samples (flattened).

    Returns
    -------
    float
        In ``[-1, 1]``; positive when ``x`` tends to be larger.

    See Also
    --------
    cohens_d : The standardized mean difference.
    effect_magnitude : Its magnitude label.

    References
    ----------
    {refs:cliff1993}

    Examples
    --------
    >>> cliffs_delta([3, 4, 5], [1, 2, 4])
    0.6666666666666666
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.size == 0 or y.size == 0:
        raise DataError("Cliff's delta needs at least one value in each sample.")
    ys = np.sort(y)
    greater = np.searchsorted(ys, x, side="left").sum()          # y < x
    less = (y.size - np.searchsorted(ys, x, side="right")).sum()  # y > x
    return float((greater - less) / (x.size * y.size))


@fill_doc()
def cohens_d(x, y) -> float:
    """Cohen's d of two samples with the pooled standard deviation.

    ``(mean x − mean y) / s_pooled``, ``s_pooled^2 = ((n_x − 1) s_x^2 + (n_y − 1) s_y^2) /
    (n_x + n_y − 2)`` (autorank's ``_cohen_d``).

    Parameters
    ----------
    x, y : array-like
        The two samples (flattened); at least three values in all.

    Returns
    -------
    float
        NaN when both samples are constant and equal in mean; ±inf when they differ.

    See Also
    --------
    cliffs_delta : The rank-based effect size.
    effect_magnitude : Its magnitude label.

    References
    ----------
    {refs:cohen1988,herbold2020}

    Examples
    --------
    >>> round(cohens_d([1, 2, 3], [0, 1, 2]), 3)
    1.0
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.size + y.size < 3:
        raise DataError("Cohen's d needs at least three values in all.")
    pooled = np.sqrt(((x.size - 1) * np.var(x, ddof=1 if x.size > 1 else 0)
                      + (y.size - 1) * np.var(y, ddof=1 if y.size > 1 else 0))
                     / (x.size + y.size - 2))
    diff = float(x.mean() - y.mean())
    if pooled == 0:
        return float("nan") if diff == 0 else float(np.sign(diff) * np.inf)
    return diff / float(pooled)


# ---------------------------------------------------------------------------------------------
# Bonferroni-Dunn
# ---------------------------------------------------------------------------------------------
def _q_bonferroni_dunn(k: int, alpha: float) -> float:
    """Demšar's q_alpha for the Bonferroni–Dunn test: the two-sided normal quantile at
    ``alpha / (k − 1)`` (Table 5b: 2.394 for k = 4 at alpha = 0.05)."""
    return float(stats.norm.isf(alpha / (2.0 * (k - 1))))


@fill_doc()
def bonferroni_dunn_critical_difference(k: int, n: int, *, alpha: float = 0.05) -> float:
    """Critical difference of mean ranks of the Bonferroni–Dunn test (k models, n datasets).

    ``CD = q_alpha sqrt(k (k + 1) / (6 n))`` with ``q_alpha = z_{1 − alpha / (2 (k − 1))}``
    (Demšar 2006, sec. 3.2.2 and Table 5b).

    Parameters
    ----------
    k : int
        Number of models, the control included (>= 2).
    n : int
        Number of datasets (>= 1).
    alpha : float, default 0.05
        Family-wise significance level over the ``k − 1`` comparisons.

    Returns
    -------
    float
        The critical difference of mean ranks.

    See Also
    --------
    bonferroni_dunn_test : The test it decides.
    replikit.compare.critical_difference : The Nemenyi CD of every pair.

    References
    ----------
    {refs:dunn1961,demsar2006}

    Examples
    --------
    >>> round(bonferroni_dunn_critical_difference(4, 14), 3)   # Demšar (2006), sec. 3.2.2
    1.168
    """
    k = check_int(k, "k", min_value=2)
    n = check_int(n, "n", min_value=1)
    alpha = check_probability(alpha, "alpha")
    return _q_bonferroni_dunn(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


@fill_doc()
@dataclass(frozen=True, slots=True, eq=False)
class ControlResult(Result):
    """Every model against a control by mean ranks (Bonferroni–Dunn; Demšar 2006).

    Attributes
    ----------
    control : str
        The control model.
    critical_distance : float
        Models whose mean rank differs from the control's by more than it differ
        significantly (family-wise ``alpha`` over the ``k − 1`` comparisons).
    alpha : float
        Family-wise significance level.
    mean_ranks : pandas.Series
        Mean rank per model (1 = best).
    comparisons : pandas.DataFrame
        One row per non-control model: ``model, control, mean_rank, mean_rank_control,
        rank_difference`` (model − control; negative = better ranked than the control), ``z,
        pvalue, pvalue_adjusted`` (Bonferroni), ``significant``, ``cohen_d``,
        ``cohen_d_magnitude``, ``cliffs_delta``, ``cliffs_delta_magnitude`` (model against
        control over the datasets; positive = the model scores higher), ``statistic`` (=
        ``z``), ``n`` (datasets scoring both) and the effect sizes of
        :func:`~replikit.compare.wilcoxon_holm` for model − control (mean difference and
        matched-pairs rank-biserial correlation with intervals and label).
    missing : tuple of (dataset, model)
        Cells without a score. With missing cells ``z = (A_i − A_c) / sqrt(S_ii + S_cc −
        2 S_ic)`` on the Skillings–Mack adjusted rank sums, ``significant`` is
        ``pvalue_adjusted <= alpha``, and ``critical_distance`` is the largest of the pairs'
        critical differences.
    friedman : FriedmanResult
        The omnibus test on the same table.
    n_datasets, n_models : int
        ``N`` and ``k``.
    higher_is_better : bool
        The direction of the scores.
    method : str
        The test's name in words.
    statistic, pvalue, alternative : float, float, str
        Whether any model differs from the control (properties): the largest ``|z|``, its
        Bonferroni-adjusted p-value (the smallest of ``pvalue_adjusted``) and
        ``'two-sided'``.

    See Also
    --------
    bonferroni_dunn_test : The test that returns it.
    replikit.compare.NemenyiResult : The post-hoc test of every pair.
    replikit.compare.plot_cd_control : Its diagram (:meth:`plot`).

    References
    ----------
    {refs:dunn1961,demsar2006,herbold2020}

    Examples
    --------
    >>> import numpy as np
    >>> t = np.random.default_rng(0).normal(size=(20, 4)) + [1.5, 0.0, 0.2, 1.4]
    >>> res = bonferroni_dunn_test(t, control="model 0")
    >>> res.alternative, bool(res.pvalue < 0.05)
    ('two-sided', True)
    """

    control: str
    critical_distance: float
    alpha: float
    mean_ranks: pd.Series = field(repr=False)
    comparisons: pd.DataFrame = field(repr=False)
    friedman: FriedmanResult = field(repr=False)
    n_datasets: int = 0
    n_models: int = 0
    higher_is_better: bool = True
    method: str = "Bonferroni-Dunn test against a control (Demšar 2006)"
    missing: tuple = ()

    @property
    def title(self) -> str:
        """The test's name in words, with the control."""
        return f"{self.method}, control {self.control}"

    @property
    def statistic(self) -> float:
        """The largest ``|z|`` of the comparisons with the control."""
        z = self.comparisons["z"].to_numpy(dtype=float) if len(self.comparisons) else []
        return float(np.max(np.abs(z))) if len(z) else float("nan")

    @property
    def pvalue(self) -> float:
        """Whether any model differs from the control: the smallest Bonferroni-adjusted
        p-value."""
        p = self.comparisons["pvalue_adjusted"] if len(self.comparisons) else []
        return float(np.min(p)) if len(p) else float("nan")

    @property
    def alternative(self) -> str:
        """``'two-sided'``: a model may be better or worse ranked than the control."""
        return "two-sided"

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`comparisons`.

        Returns
        -------
        pandas.DataFrame
            One row per model compared with the control.
        """
        return self.comparisons.copy()

    def plot(self, ax=None, **kwargs):
        """The critical-difference diagram against the control (Demšar 2006, Figure 2).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        **kwargs
            Passed to :func:`~replikit.compare.plot_cd_control` (``title``, ``digits``).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_cd_control

        return plot_cd_control(self, ax=ax, **kwargs)

    def __str__(self) -> str:
        lines = [f"{self.method}, alpha = {number(self.alpha)}: {number(self.n_models)} models "
                 f"on {number(self.n_datasets)} datasets, control {self.control} (mean rank "
                 f"{self.mean_ranks[self.control]:.3f})",
                 f"  critical difference CD = {number(self.critical_distance, 4)}; Friedman "
                 f"{p_is(self.friedman.pvalue)}, Iman-Davenport "
                 f"{p_is(self.friedman.f_pvalue)}"]
        if self.missing:
            lines[1] = (f"  largest pairwise critical difference = "
                        f"{number(self.critical_distance, 4)}; Skillings-Mack "
                        f"{p_is(self.friedman.pvalue)}")
            lines.append(f"  missing cells ({len(self.missing)}, dataset/model): "
                         f"{_cells_text(self.missing)}")
        for r in self.comparisons.itertuples():
            verdict = ("differs" if r.significant else "no difference shown")
            side = "better" if r.rank_difference < 0 else "worse"
            lines.append(
                f"  {r.model}: mean rank {r.mean_rank:.3f} ({side} ranked by "
                f"{abs(r.rank_difference):.3f}), {p_is(r.pvalue_adjusted, 'Bonferroni p')}: "
                f"{verdict}; Cohen's d = {number(r.cohen_d)} ({r.cohen_d_magnitude}), Cliff's "
                f"delta = {number(r.cliffs_delta)} ({r.cliffs_delta_magnitude}); mean "
                f"difference {number(r.mean_difference)} [{number(r.mean_difference_ci_low)}, "
                f"{number(r.mean_difference_ci_high)}], rank-biserial "
                f"{number(r.rank_biserial)} [{number(r.rank_biserial_ci_low)}, "
                f"{number(r.rank_biserial_ci_high)}] ({r.rank_biserial_magnitude})")
        return "\n".join(lines)


@fill_doc()
def bonferroni_dunn_test(table, control=None, *, alpha: float = 0.05,
                         higher_is_better: bool = True, tie_correction: bool = True,
                         confidence_level: float = 0.95) -> ControlResult:
    """Compare every model with a control model over many datasets (Bonferroni–Dunn).

    The models are ranked within each dataset (1 = best, average ranks for ties); with mean
    ranks ``R_j`` over N datasets and k models, model i differs from the control c when
    ``|R_i − R_c| > CD``, ``CD = q_alpha sqrt(k (k + 1) / (6 N))``
    (:func:`bonferroni_dunn_critical_difference`). Equivalently ``z = (R_i − R_c) / SE``,
    ``SE = sqrt(k (k + 1) / (6 N))``, has a two-sided normal p-value, Bonferroni-adjusted
    over the ``k − 1`` comparisons. With fewer comparisons than the Nemenyi test's
    ``k (k − 1) / 2`` it has more power when one model is of interest (Demšar 2006, sec.
    3.2.2). Effect sizes of each model against the control over the datasets (Cohen's d, Cliff's
    delta, with autorank's magnitude labels) are reported beside the test.

    Parameters
    ----------
    table : pandas.DataFrame or array-like of shape (n_datasets, n_models)
        One score per dataset and model, e.g. from :func:`~replikit.compare.scores_to_table`;
        NaN where a model has no score (the ranks are then the Skillings–Mack adjusted rank
        sums: see :class:`ControlResult`; effect sizes use each pair's complete datasets).
    control : str, optional
        The control model (a column); default the model with the best mean rank.
    alpha : float, default 0.05
        Family-wise significance level.
    higher_is_better : bool, default True
        False for errors and losses (the smallest score then ranks first).
    tie_correction : bool, default True
        Passed to the attached Friedman test.
    confidence_level : float, default 0.95
        Level of the effect-size intervals.

    Returns
    -------
    ControlResult
        The comparisons with the control, their effect sizes and the Friedman test.

    See Also
    --------
    bonferroni_dunn_critical_difference : The critical difference alone.
    effect_sizes : The effect sizes against a reference model.
    replikit.compare.nemenyi_test : Every pair, when no model is the control.

    Notes
    -----
    Demšar (2006), sec. 3.2.2 (Bonferroni–Dunn; Dunn 1961), Table 5b; sec. 3.2.4 (the CD
    diagram with a control, Figure 2).

    References
    ----------
    {refs:dunn1961,demsar2006,cohen1988,cliff1993,herbold2020}

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = rng.normal(size=(20, 4)) + [1.5, 0.0, 0.2, 1.4]
    >>> res = bonferroni_dunn_test(t, control="model 0")
    >>> res.comparisons[["model", "significant"]].values.tolist()
    [['model 1', True], ['model 2', True], ['model 3', False]]
    """
    alpha = check_probability(alpha, "alpha")
    confidence_level = check_probability(confidence_level, "confidence_level")
    frame = _table_iv(table, allow_missing=True)
    fried = friedman_test(frame, higher_is_better=higher_is_better,
                          tie_correction=tie_correction)
    incomplete = bool(fried.missing or fried.dropped)
    n, k = fried.n_datasets, fried.n_models
    ranks = fried.mean_ranks
    names = list(frame.columns)
    if control is None:
        control = ranks.idxmin()
    elif control not in names:
        raise ParameterError(f"`control` {control!r} is not a model of the table; models are "
                             f"{names}.")
    c = names.index(control)
    ses = _pair_se(fried)[:, c]
    if incomplete:  # each pair's own critical difference; the largest one is reported
        others = np.delete(ses, c)
        cd = (float(np.nanmax(_q_bonferroni_dunn(k, alpha) * others))
              if np.isfinite(others).any() else float("nan"))
    else:
        cd = bonferroni_dunn_critical_difference(k, n, alpha=alpha)
    tol = 1e-12 * max(1.0, cd) if np.isfinite(cd) else 0.0
    sign = 1.0 if higher_is_better else -1.0
    rows = []
    for j, m in enumerate(names):
        if m == control:
            continue
        diff = float(ranks[m] - ranks[control])
        z = diff / float(ses[j]) if np.isfinite(ses[j]) else float("nan")
        p = float(2 * stats.norm.sf(abs(z))) if np.isfinite(z) else float("nan")
        both = frame[[m, control]].dropna()
        x, y = both[m].to_numpy(), both[control].to_numpy()
        d = cohens_d(x, y) if x.size + y.size >= 3 else float("nan")
        delta = cliffs_delta(x, y) if x.size else float("nan")
        p_adj = min(1.0, p * (k - 1)) if np.isfinite(p) else float("nan")
        significant = bool(p_adj <= alpha) if incomplete else bool(abs(diff) > cd + tol)
        rows.append({"model": m, "control": control, "mean_rank": float(ranks[m]),
                     "mean_rank_control": float(ranks[control]), "rank_difference": diff,
                     "z": z, "pvalue": p, "pvalue_adjusted": p_adj,
                     "significant": significant,
                     "cohen_d": d, "cohen_d_magnitude": effect_magnitude(d, "cohen_d"),
                     "cliffs_delta": delta,
                     "cliffs_delta_magnitude": effect_magnitude(delta, "cliffs_delta"),
                     "better_than_control": bool(sign * d > 0) if np.isfinite(d) else None,
                     "statistic": z,
                     **_pair_effects(frame[m].to_numpy(), frame[control].to_numpy(),
                                     confidence_level)})
    return ControlResult(control=control, critical_distance=cd, alpha=alpha,
                         mean_ranks=ranks, comparisons=pd.DataFrame(rows), friedman=fried,
                         n_datasets=n, n_models=k, higher_is_better=bool(higher_is_better),
                         missing=fried.missing)


@fill_doc()
def effect_sizes(table, reference=None, *, higher_is_better: bool = True) -> pd.DataFrame:
    """Cohen's d and Cliff's delta of ``reference`` against every other model over the datasets.

    As autorank reports them beside its tests (Herbold 2020): the reference is by default the
    model with the best mean rank, and each effect is ``effect(reference, model)`` on the
    columns of scores over the datasets (positive: the reference scores higher), with the
    magnitude labels of :func:`effect_magnitude`.

    Parameters
    ----------
    table : pandas.DataFrame or array-like of shape (n_datasets, n_models)
        One score per dataset and model (complete).
    reference : str, optional
        The model every other is compared with; default the best mean rank.
    higher_is_better : bool, default True
        Only for the default reference (the best mean rank).

    Returns
    -------
    pandas.DataFrame
        ``reference, model, mean_rank, cohen_d, cohen_d_magnitude, cliffs_delta,
        cliffs_delta_magnitude``, the models by mean rank (the reference first, effect 0).

    See Also
    --------
    bonferroni_dunn_test : The test these effect sizes go beside.
    cohens_d : Cohen's d of two samples.
    cliffs_delta : Cliff's delta of two samples.

    References
    ----------
    {refs:cohen1988,cliff1993,romano2006,herbold2020}

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [0.9, 0.8, 0.85, 0.7], "b": [0.7, 0.75, 0.8, 0.6]})
    >>> effect_sizes(t)[["model", "cliffs_delta_magnitude"]].values.tolist()
    [['a', 'negligible'], ['b', 'large']]
    """
    frame = _table_iv(table)
    fried = _friedman(frame, bool(higher_is_better), True)
    ranks = fried.mean_ranks.sort_values(kind="stable")
    if reference is None:
        reference = ranks.index[0]
    elif reference not in frame.columns:
        raise ParameterError(f"`reference` {reference!r} is not a model of the table; models "
                             f"are {list(frame.columns)}.")
    rows = []
    for m in ranks.index:
        d = 0.0 if m == reference else cohens_d(frame[reference], frame[m])
        delta = 0.0 if m == reference else cliffs_delta(frame[reference], frame[m])
        rows.append({"reference": reference, "model": m, "mean_rank": float(ranks[m]),
                     "cohen_d": d, "cohen_d_magnitude": effect_magnitude(d, "cohen_d"),
                     "cliffs_delta": delta,
                     "cliffs_delta_magnitude": effect_magnitude(delta, "cliffs_delta")})
    out = pd.DataFrame(rows)
    first = out["model"] == reference
    return pd.concat([out[first], out[~first]], ignore_index=True)


# ---------------------------------------------------------------------------------------------
# within one dataset: standardized mean difference with the corrected variance
# ---------------------------------------------------------------------------------------------
@fill_doc()
@dataclass(frozen=True, slots=True)
class SMDResult(Result):
    """Standardized mean difference of two models' resampled scores.

    See :func:`standardized_mean_difference`.

    Attributes
    ----------
    estimate : float
        ``mean(d) / sqrt(s^2 (1 + n_test / n_train))``.
    magnitude : str
        Cohen's label (autorank's thresholds).
    naive : float
        ``mean(d) / s``, which overstates the effect because ``s^2`` is shrunk by the overlap of
        training sets.
    cliffs_delta : float
        Cliff's delta of ``a``'s against ``b``'s split scores.
    cliffs_delta_magnitude : str
        Its label.
    ratio : float
        ``n_test / n_train`` used.
    a, b, metric : str
        The two models and the metric.
    n : int
        Number of splits.

    See Also
    --------
    standardized_mean_difference : The function that returns it.
    cohens_d : The effect size over datasets.

    References
    ----------
    {refs:nadeau2003,cohen1988,cliff1993}

    Examples
    --------
    >>> from replikit.compare import Paired
    >>> r = standardized_mean_difference(Paired([[0.82, 0.80, 0.84, 0.81]],
    ...                                         [[0.80, 0.80, 0.81, 0.80]]))
    >>> r.magnitude, r.cliffs_delta_magnitude
    ('large', 'large')
    """

    estimate: float
    magnitude: str
    naive: float
    cliffs_delta: float
    cliffs_delta_magnitude: str
    ratio: float
    a: str = "a"
    b: str = "b"
    metric: str = ""
    n: int = 0

    @property
    def title(self) -> str:
        """What the effect size is of."""
        metric = f" ({self.metric})" if self.metric else ""
        return f"Standardized mean difference {self.a} − {self.b}{metric}"


@fill_doc()
def standardized_mean_difference(scores, a=None, b=None, *, metric=None, study=None,
                                 ratio=None) -> SMDResult:
    """Standardized mean difference of two models on one dataset's resampled scores.

    With split differences ``d_j = a_j − b_j`` (n splits), ``Var(d_j) = sigma^2`` and
    ``Corr(d_j, d_j') = rho = n_test / n`` (training sets overlap), the sample variance has
    expectation ``(1 − rho) sigma^2`` (Nadeau & Bengio 2003, sec. 4). The effect size is
    therefore ``mean(d) / sigma_hat`` with ``sigma_hat^2 = s^2 / (1 − rho) = s^2 (1 + n_test /
    n_train)`` — the same correction as the corrected resampled t-test, applied to the scale
    instead of the standard error.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        Scores of both models on the same splits (see :func:`~replikit.compare.paired_scores`).
    a, b : str, optional
        The two models; both may be omitted when the scores hold exactly two.
    metric : str, optional
        The metric; required when the scores hold several.
    study : str, optional
        The study; required when the scores hold several.
    ratio : float, optional
        ``n_test / n_train``; default from the recorded sizes, or ``1 / (k − 1)`` for k folds.

    Returns
    -------
    SMDResult
        The corrected and the naive effect, Cliff's delta and their labels.

    See Also
    --------
    cohens_d : The effect size over datasets.
    replikit.compare.corrected_resampled_ttest : The same correction, on the standard error.

    Notes
    -----
    Nadeau & Bengio (2003), sec. 4, for the correlation of the split differences; Cohen
    (1988) for the labels.

    References
    ----------
    {refs:nadeau2003,cohen1988,cliff1993}

    Examples
    --------
    >>> from replikit.compare import Paired
    >>> p = Paired([[0.82, 0.80, 0.84, 0.81]], [[0.80, 0.80, 0.81, 0.80]])
    >>> r = standardized_mean_difference(p)
    >>> round(r.estimate, 3), r.magnitude
    (1.006, 'large')
    """
    from ._pairing import Paired, paired_scores

    p = scores if isinstance(scores, Paired) else paired_scores(scores, a, b, metric=metric,
                                                               study=study)
    d = p.d.ravel()
    if d.size < 2:
        raise DataError("the standardized mean difference needs at least 2 splits.")
    if ratio is None:
        ratio = p.ratio
        if not np.isfinite(ratio):
            k = p.shape[1]
            if k < 2:
                raise DataError("cannot tell n_test / n_train: give `ratio` (no recorded sizes "
                                "and one fold per repeat).")
            ratio = 1.0 / (k - 1)
    ratio = float(ratio)
    if not ratio >= 0:
        raise ParameterError(f"`ratio` must be >= 0; got {ratio!r}.")
    s = float(np.std(d, ddof=1))
    mean = float(d.mean())
    if s == 0:
        est = naive = float("nan") if mean == 0 else float(np.sign(mean) * np.inf)
    else:
        est = mean / (s * np.sqrt(1.0 + ratio))
        naive = mean / s
    delta = cliffs_delta(p.a_scores, p.b_scores)
    return SMDResult(estimate=float(est), magnitude=effect_magnitude(est, "cohen_d"),
                     naive=float(naive), cliffs_delta=delta,
                     cliffs_delta_magnitude=effect_magnitude(delta, "cliffs_delta"),
                     ratio=ratio, a=p.a, b=p.b, metric=str(p.metric), n=int(d.size))
