"""ε-replicability as an equivalence test, and a bias-aware estimate of the spread.

Parmigiani (2023) calls a rule ε-replicable when every pair of studies is within ε: in
utility (Def. 3.1, ``max_{k,k'} |U_k − U_k'| < ε``), in relative utility (Def. 3.2,
``2|U_k − U_k'| < ε |U_k + U_k'|``) or in distribution (Def. 5.1, total variation
``TV(F_k, F_k') < ε``). The observed smallest ε — the largest observed difference — is a
maximum of noisy differences and is biased upward: under exact replicability its mean grows
with the number of studies K (about 0.06, 0.13 and 0.17 for K = 2, 5, 10 studies of 50 units
with accuracy near 0.8). :func:`epsilon_test` answers the user's question instead, for a
practical tolerance ε (the parameter ``tolerance``):

* **The test.** ``H0: max_{k,k'} |Δ_kk'| ≥ ε`` against ``H1: max |Δ_kk'| < ε`` (``Δ`` the
  true difference) is an intersection–union test (Berger 1982; Berger & Hsu 1996, sec. 2):
  H1 is the intersection of the pairwise equivalences, so H0 is rejected at level α when every
  pairwise two one-sided test (TOST; Schuirmann 1987) rejects at level α — no multiplicity
  correction — and the p-value is the largest pairwise p-value. Its size is at most α for every
  configuration in H0, and α at the boundary when one pair sits at ε and the others are well
  inside.
* **The smallest ε shown at level α** inverts the test: the largest pairwise upper
  ``1 − α`` confidence bound of ``|Δ|``. It is an upper ``1 − α`` confidence bound of the
  maximal difference, because the pair attaining the true maximum is covered with probability
  ``1 − α`` (replikit's headline instead of the percentile bootstrap interval of the biased
  maximum).
* **A lower confidence bound of the spread** (absolute kind): the largest pairwise
  ``|d| − q·se`` with ``q`` the two-sided Bonferroni quantile over the ``K(K − 1)/2`` pairs.
  A pair's bound exceeds its own ``|Δ|`` only when ``|d − Δ| > q·se``, so by Bonferroni every
  pair's bound — and so their maximum — stays below ``max |Δ|`` with probability at least
  ``1 − α``. The audit's card is red when it exceeds the tolerance.
* **A bias-aware point estimate of the spread** (:data:`SPREAD_METHODS`): the empirical-Bayes
  posterior mean of the K studies' true range under a random-effects model (the default,
  chosen by the simulation of :mod:`replikit.multistudy.validity`, see docs/multistudy.md), a
  parametric-bootstrap bias correction of the maximum, the random-effects expected range
  ``τ̂·d_K``, or the plug-in maximum.

Standard errors of ``U_k`` are the delta-method ``sd_k/√n_k`` (Welch–Satterthwaite df per
pair) or the within-study bootstrap's; the studies are independent samples. The vectorised
kernels live in :mod:`replikit.multistudy.kernels`, shared with the calibration study.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import renamed, renamed_fields
from .._format import number, pvalue
from .._validation import check_choice, check_confidence_level, check_float, check_probability
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval, Result
from . import kernels as ek

__all__ = ["EpsilonTest", "epsilon_test", "spread_estimates", "KINDS", "SPREAD_METHODS"]

KINDS = ("absolute", "relative", "tv")
SPREAD_METHODS = ("eb", "bootstrap", "re_range", "plugin")
#: How each spread estimator is named in sentences.
_SPREAD_WORDS = {"eb": "empirical Bayes", "bootstrap": "bootstrap bias-corrected",
                 "re_range": "random-effects range", "plugin": "observed maximum"}


@renamed_fields(epsilon="tolerance", smallest_epsilon="smallest_tolerance")
@dataclass(frozen=True, slots=True)
class EpsilonTest(Result):
    """The intersection–union test of ε-replicability and the spread's estimates.

    Attributes
    ----------
    kind : {'absolute', 'relative', 'tv'}
        Def. 3.1, 3.2 or 5.1 of Parmigiani (2023).
    tolerance : float or None
        The tolerance ε tested (``None``: only the bound and the estimates).
    alpha : float
        Significance level of the verdict and of :attr:`smallest_tolerance`.
    statistic : float
        The observed maximal difference (the observed smallest ε; biased upward).
    pvalue : float
        The intersection–union p-value: the largest pairwise TOST p-value (NaN without
        ``tolerance``).
    smallest_tolerance : float
        The smallest ε for which replicability is shown at level ``alpha``: the upper
        ``1 − alpha`` confidence bound of the maximal difference.
    estimate : float
        The bias-aware point estimate of the spread (``spread_method``; for ``kind='tv'`` the
        multinomial-bootstrap bias correction of the maximal total variation).
    spread_method : str
        The estimator of :attr:`estimate`.
    spreads : dict
        Every spread estimator (:data:`SPREAD_METHODS`) -> its estimate (absolute and relative;
        ``plugin`` and ``bootstrap`` for total variation).
    se_method : {'delta', 'bootstrap'}
        How the standard errors of ``U_k`` were computed.
    studies : tuple
        Study labels.
    pairs : DataFrame
        One row per pair: ``study_a, study_b, difference`` (``U_a − U_b``, or total
        variation), ``se``, ``df``, ``upper_bound`` and with ``tolerance`` ``pvalue``.
    alternative : str
        ``'less'``: the alternative hypothesis is ``max |Δ| < ε``.
    lower_bound : float
        A lower ``1 − alpha`` confidence bound of the maximal difference (``kind='absolute'``):
        the largest pairwise ``|d| − q·se``, ``q`` the two-sided Bonferroni quantile over the
        ``K(K − 1)/2`` pairs; 0 for the other kinds (not built there).

    See Also
    --------
    epsilon_test : Computes it.
    spread_estimates : The spread's estimators.

    Examples
    --------
    >>> import pandas as pd
    >>> from replikit.multistudy import epsilon_test
    >>> t = pd.DataFrame({"study": ["a", "b", "c"], "utility": [0.80, 0.82, 0.79],
    ...                   "se": [0.01, 0.01, 0.01]})
    >>> r = epsilon_test(t, tolerance=0.08)
    >>> r.replicable, round(r.confidence_interval().high, 4)
    (True, 0.0533)
    """

    kind: str
    tolerance: float | None
    alpha: float
    statistic: float
    pvalue: float
    smallest_tolerance: float
    estimate: float
    spread_method: str
    spreads: dict
    se_method: str
    studies: tuple
    pairs: pd.DataFrame = field(repr=False)
    alternative: str = "less"
    lower_bound: float = 0.0
    _inputs: tuple = field(default=(), init=False, repr=False, compare=False)

    @property
    def title(self) -> str:
        head = {"absolute": "absolute, Def. 3.1", "relative": "relative, Def. 3.2",
                "tv": "total variation, Def. 5.1"}[self.kind]
        se = {"delta": "delta-method"}.get(self.se_method, self.se_method)
        return (f"ε-replicability test ({head} of Parmigiani 2023; {len(self.studies)} "
                f"studies; {se} standard errors)")

    @property
    def replicable(self) -> bool | None:
        """Whether ε-replicability is shown at level ``alpha`` (``None`` without ε)."""
        return None if self.tolerance is None else bool(self.pvalue <= self.alpha)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval ``[lower, upper]`` of the maximal difference, each end a ``confidence_level``
        confidence bound.

        ``upper`` is the largest pairwise upper bound (at ``1 − alpha`` it is
        :attr:`smallest_tolerance`); ``lower`` (``kind='absolute'``; 0 otherwise) the largest
        pairwise Bonferroni lower bound (at ``1 − alpha`` it is :attr:`lower_bound`).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(lower, upper)``.
        """
        level = check_confidence_level(confidence_level)
        low = 0.0
        if self.kind == "absolute":
            U, v, df = self._inputs
            low = float(ek.absolute_lower_bounds(U, v, df, level).max())
        return ConfidenceInterval(low, _bound(self.kind, self._inputs, level))

    def to_frame(self) -> pd.DataFrame:
        """One tidy row of the test.

        Returns
        -------
        DataFrame
            ``kind, tolerance, alpha, statistic, pvalue, alternative, smallest_tolerance,
            estimate, spread_method, se_method, replicable`` and every spread estimate
            (``spread_<name>``).
        """
        row = {"kind": self.kind, "tolerance": self.tolerance, "alpha": self.alpha,
               "statistic": self.statistic, "pvalue": self.pvalue,
               "alternative": self.alternative,
               "smallest_tolerance": self.smallest_tolerance, "lower_bound": self.lower_bound,
               "estimate": self.estimate,
               "spread_method": self.spread_method, "se_method": self.se_method,
               "replicable": self.replicable}
        row.update({f"spread_{k}": v for k, v in self.spreads.items()})
        return pd.DataFrame([row])

    def plot(self, ax=None):
        """Each pair's observed difference and upper bound, the smallest ε shown and the
        bias-aware spread.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_epsilon_test

        return plot_epsilon_test(self, ax=ax)

    def sentence(self) -> str:
        """The result in one sentence.

        Returns
        -------
        str
            The observed and bias-aware spread, the smallest ε shown and, with a tolerance,
            the verdict of the test.
        """
        name = {"absolute": "max |U_k - U_k'|", "relative": "max 2|U_k - U_k'|/|U_k + U_k'|",
                "tv": "max TV(F_k, F_k')"}[self.kind]
        level = f"{number(100 * (1 - self.alpha))}%"
        text = (f"{name}: observed {number(self.statistic, 4)}, bias-aware estimate "
                f"{number(self.estimate, 4)} ({_SPREAD_WORDS.get(self.spread_method, self.spread_method)}); "
                f"replicable within any ε >= {number(self.smallest_tolerance, 4)} ({level} upper "
                "confidence bound)")
        if self.tolerance is not None:
            text += (f"; ε = {number(self.tolerance)}: "
                     f"{'shown' if self.replicable else 'not shown'} at level "
                     f"{number(self.alpha)} (intersection-union p = {pvalue(self.pvalue)})")
        return text + "."

    def __str__(self) -> str:
        lines = [self.title, "  " + self.sentence()]
        if self.spreads:
            lines.append("  spread estimates: " + ", ".join(
                f"{_SPREAD_WORDS.get(k, k)} {number(v, 4)}" for k, v in self.spreads.items()))
        return "\n".join(lines)


def _bound(kind: str, inputs: tuple, level: float) -> float:
    if kind == "absolute":
        U, v, df = inputs
        return float(ek.absolute_bounds(U, v, df, level)[3].max())
    if kind == "relative":
        U, v, df = inputs
        return float(ek.relative_bounds(U, v, df, level)[1].max())
    F, n = inputs
    return float(ek.tv_bounds(F, n, level)[1].max())


def _inputs_iv(data, se_method):
    """``(studies, U, se_k, n, frequencies or None)`` from an Assessment, StudyUtilities or a
    DataFrame ``study, utility, se[, n]``."""
    from .analysis import Assessment
    from .utilities import StudyUtilities

    se = check_choice(se_method, "se_method", ("delta", "bootstrap"))
    F = None
    if hasattr(data, "assessment") and isinstance(data.assessment, Assessment):
        data = data.assessment  # a MultiStudyAudit
    if isinstance(data, Assessment):
        su = data.utilities
        if data.distance.frequencies is not None:
            F = data.distance.frequencies.to_numpy(dtype=float)
        if se == "bootstrap":
            boot = data.bootstrap
            if boot.utility_draws is None:
                raise ParameterError(f"`se_method`='bootstrap' needs per-study resampled "
                                     f"utilities (bootstrap='within'); this assessment used "
                                     f"{boot.bootstrap!r}.")
            s = boot.utility_se()
        else:
            s = su.se
        return tuple(su.studies), su.utility.astype(float), np.asarray(s, float), \
            su.n.astype(float), F
    if isinstance(data, StudyUtilities):
        if se == "bootstrap":
            raise ParameterError("`se_method`='bootstrap' needs an Assessment (assess(...)) "
                                 "with the within-study bootstrap; StudyUtilities carry "
                                 "delta-method SEs.")
        return tuple(data.studies), data.utility.astype(float), data.se.astype(float), \
            data.n.astype(float), None
    if isinstance(data, pd.DataFrame):
        missing = [c for c in ("study", "utility", "se") if c not in data.columns]
        if missing:
            raise DataError(f"`data`: a table needs columns study, utility, se (and optionally "
                            f"n); missing {', '.join(missing)}.")
        n = (data["n"].to_numpy(float) if "n" in data.columns
             else np.full(len(data), np.inf))
        return tuple(data["study"]), data["utility"].to_numpy(float), \
            data["se"].to_numpy(float), n, None
    raise ParameterTypeError(f"`data` must be an Assessment, a MultiStudyAudit, StudyUtilities "
                             f"or a DataFrame (study, utility, se); got {type(data).__name__}.")


def spread_estimates(U, se, *, kind: str = "absolute") -> dict:
    """Every estimator of the spread ``max_{k,k'} |θ_k − θ_k'|`` of the K true utilities.

    Parameters
    ----------
    U, se : array-like of shape (K,) or (R, K)
        Observed utilities and their standard errors (rows: replications).
    kind : {'absolute', 'relative'}, default 'absolute'
        The spread of Def. 3.1 or Def. 3.2 of Parmigiani (2023).

    Returns
    -------
    dict
        ``plugin`` (the observed maximum), ``eb`` (empirical-Bayes posterior mean of the range:
        ``U_k ~ N(θ_k, se_k²)``, ``θ_k ~ N(μ, τ²)``, τ² by Paule & Mandel 1982; Morris 1983),
        ``bootstrap`` (``2θ̂ − mean θ̂*`` with a parametric bootstrap ``U* = U + se·Z``; Efron
        & Tibshirani 1993, sec. 10.6) and, for ``'absolute'``, ``re_range`` (``τ̂·d_K``, the
        expected range of K draws from ``N(μ, τ²)``; Tippett 1925). Floats for 1-D input,
        arrays of shape (R,) otherwise. Deterministic: the posterior and bootstrap use fixed
        normal draws.

    See Also
    --------
    epsilon_test : Reports one of them as its estimate, with an upper confidence bound.

    References
    ----------
    .. [1] Paule, R. C. & Mandel, J. (1982). Consensus Values and Weighting Factors. Journal
       of Research of the National Bureau of Standards, 87(5), 377–385.
    .. [2] Morris, C. N. (1983). Parametric Empirical Bayes Inference: Theory and
       Applications. Journal of the American Statistical Association, 78(381), 47–55.
    .. [3] Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman &
       Hall.
    .. [4] Tippett, L. H. C. (1925). On the Extreme Individuals and the Range of Samples Taken
       from a Normal Population. Biometrika, 17(3/4), 364–387.

    Examples
    --------
    >>> e = spread_estimates([0.80, 0.82, 0.79], [0.03, 0.03, 0.03])
    >>> round(e["plugin"], 3), e["eb"] < e["plugin"]
    (0.03, True)
    """
    check_choice(kind, "kind", ("absolute", "relative"))
    U = np.asarray(U, float)
    v = np.asarray(se, float) ** 2
    if U.shape != v.shape or U.shape[-1] < 2:
        raise DataError(f"`U` and `se` must have the same shape with at least 2 studies; got "
                        f"{U.shape} and {v.shape}.")
    one = U.ndim == 1
    U2, v2 = np.atleast_2d(U), np.atleast_2d(v)
    out = {"plugin": (ek.spread_plugin(U2) if kind == "absolute"
                      else ek._range_stats(U2, "relative")),
           "eb": ek.spread_eb(U2, v2, statistic=kind),
           "bootstrap": ek.spread_bootstrap(U2, v2, statistic=kind)}
    if kind == "absolute":
        out["re_range"] = ek.spread_re_range(U2, v2)
    return {k: float(x[0]) if one else x for k, x in out.items()}


@renamed(epsilon="tolerance", se="se_method", spread="spread_method")
def epsilon_test(data, *, tolerance: float | None = None, kind: str = "absolute",
                 alpha: float = 0.05, se_method: str = "delta",
                 spread_method: str = "eb") -> EpsilonTest:
    """Is a rule ε-replicable across K studies? The intersection–union test of pairwise TOSTs.

    Parameters
    ----------
    data : Assessment, MultiStudyAudit, StudyUtilities or DataFrame
        The studies' utilities ``U_k`` and their SEs (:func:`~replikit.multistudy.assess`, the
        audit, :func:`~replikit.multistudy.study_utilities`, or a table with columns
        ``study, utility, se`` and optionally ``n``, the units behind each ``U_k``).
        ``kind='tv'`` needs an Assessment (its cell frequencies).
    tolerance : float, optional
        The practical tolerance ε: ``H0: max |Δ| >= ε`` vs ``H1: max |Δ| < ε``. Without it,
        only the smallest ε shown at level ``alpha`` and the spread's estimates.
    kind : {'absolute', 'relative', 'tv'}, default 'absolute'
        Def. 3.1, Def. 3.2 (Fieller-type linear contrasts ``±(a − b) − (ε/2)s(a + b)`` with
        ``s`` the sign of ``a + b``, which must itself be shown) or Def. 5.1 of Parmigiani
        (2023) (total variation on the assessment's cells: every set of cells ``A`` up to 12
        cells, TV being ``max_A P_k(A) − P_k'(A)``; a conservative bound above).
    alpha : float, default 0.05
        Significance level.
    se_method : {'delta', 'bootstrap'}, default 'delta'
        Standard errors of ``U_k``: ``sd_k/√n_k`` with Welch–Satterthwaite df per pair, or the
        within-study bootstrap's (normal quantiles). Total variation uses multinomial
        variances.
    spread_method : {'eb', 'bootstrap', 're_range', 'plugin'}, default 'eb'
        The estimator of the spread reported as :attr:`EpsilonTest.estimate` (all are in
        :attr:`EpsilonTest.spreads`). ``'eb'``: the least biased across K and n in the
        calibration study (docs/multistudy.md). Total variation: ``'bootstrap'`` (a
        multinomial parametric bootstrap, the default for ``kind='tv'``) or ``'plugin'``.

    Returns
    -------
    EpsilonTest
        The p-value with ``tolerance``, the smallest ε shown and the spread's estimates.

    See Also
    --------
    spread_estimates : The spread's estimators.
    permutation_test : Tests exact replicability.
    benchmark_comparison : The equivalence of one study with a benchmark.

    Notes
    -----
    Pair ``(k, k')``: ``d = U_k − U_k'``, ``se_d = sqrt(se_k² + se_k'²)``; the TOST p-value of
    ``|Δ| < ε`` is ``F_t((|d| − ε)/se_d)`` and its upper bound ``|d| + t_{1−α}·se_d``
    (Schuirmann 1987). The intersection–union test (Berger 1982) takes the largest p-value
    and the largest bound over the ``K(K − 1)/2`` pairs. Its size at the boundary (one pair at
    ε) is α; it is conservative elsewhere in H0. Studies are independent.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Berger, R. L. (1982). Multiparameter Hypothesis Testing and Acceptance Sampling.
       Technometrics, 24(4), 295–300.
    .. [3] Berger, R. L. & Hsu, J. C. (1996). Bioequivalence Trials, Intersection-Union Tests
       and Equivalence Confidence Sets. Statistical Science, 11(4), 283–319.
    .. [4] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"study": ["a", "b", "c"], "utility": [0.80, 0.82, 0.79],
    ...                   "se": [0.01, 0.01, 0.01]})
    >>> r = epsilon_test(t, tolerance=0.08)
    >>> round(r.statistic, 3), round(r.smallest_tolerance, 4), r.replicable
    (0.03, 0.0533, True)
    """
    check_choice(kind, "kind", KINDS)
    spread = check_choice(spread_method, "spread_method", SPREAD_METHODS)
    alpha = check_probability(alpha, "alpha")
    eps = None if tolerance is None else check_float(tolerance, "tolerance", min_value=0.0)
    se = se_method
    studies, U, s, n, F = _inputs_iv(data, se_method)
    K = U.size
    if K < 2:
        raise DataError(f"`data`: ε-replicability compares studies; got {K} study.")
    if not (np.all(np.isfinite(U)) and np.all(np.isfinite(s)) and np.all(s >= 0)):
        raise DataError("`data`: every utility and SE must be finite (SE >= 0).")
    i, j = ek.pair_index(K)
    level = 1 - alpha
    v = s ** 2
    df = (ek.welch_df(v[i], v[j], n[i], n[j]) if se == "delta"
          else np.full(i.size, np.inf))
    spreads: dict = {}
    lower = 0.0
    if kind == "tv":
        if F is None:
            raise ParameterError("`kind='tv'` needs an Assessment with total variation "
                                 "(assess(..., distance='tv')), whose cell frequencies it "
                                 "tests.")
        F3 = F[None]
        diff, bounds = ek.tv_bounds(F3, n, level)
        diff, bounds = diff[0], bounds[0]
        pv = ek.tv_pvalues(F3, n, eps)[0] if eps is not None else np.full(i.size, np.nan)
        se_pair = np.sqrt(0.25 / n[i] + 0.25 / n[j])
        df = np.full(i.size, np.inf)
        inputs: tuple = (F3, n)
        statistic = float(diff.max())
        spreads = {"plugin": statistic,
                   "bootstrap": float(ek.spread_tv_bootstrap(F3, n.astype(int))[0])}
        method = "plugin" if spread == "plugin" else "bootstrap"
        estimate = spreads[method]
    else:
        U2, v2, df2 = U[None], v[None], df[None]
        if kind == "absolute":
            d, se_pair, _, b = ek.absolute_bounds(U2, v2, df2, level)
            diff, se_pair, bounds = U[i] - U[j], se_pair[0], b[0]
            pv = (ek.absolute_pvalues(d, se_pair[None], df2, eps)[0] if eps is not None
                  else np.full(i.size, np.nan))
        else:
            obs, b, _ = ek.relative_bounds(U2, v2, df2, level)
            diff, bounds = obs[0], b[0]
            se_pair = np.sqrt(v[i] + v[j])
            pv = (ek.relative_pvalues(U2, v2, df2, eps)[0] if eps is not None
                  else np.full(i.size, np.nan))
        inputs = (U2, v2, df2)
        if kind == "absolute":
            lower = float(ek.absolute_lower_bounds(U2, v2, df2, level)[0].max())
        spreads = spread_estimates(U, s, kind=kind)
        statistic = spreads["plugin"]
        method = spread
        if spread not in spreads:
            raise ParameterError(f"`spread_method`={spread!r} estimates the absolute spread "
                                 "only.")
        estimate = spreads[spread]
    pairs = pd.DataFrame({"study_a": [studies[k] for k in i], "study_b": [studies[k] for k in j],
                          "difference": diff, "se": se_pair, "df": df, "upper_bound": bounds})
    if eps is not None:
        pairs["pvalue"] = pv
    result = EpsilonTest(kind=kind, tolerance=eps, alpha=alpha, statistic=float(statistic),
                         pvalue=float(np.max(pv)) if eps is not None else float("nan"),
                         smallest_tolerance=float(np.max(bounds)), estimate=float(estimate),
                         spread_method=method, spreads=spreads, se_method=se,
                         studies=tuple(studies), pairs=pairs, lower_bound=lower)
    object.__setattr__(result, "_inputs", inputs)  # the arrays behind confidence_interval()
    return result
