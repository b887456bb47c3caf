"""Fixed- and random-effects meta-analysis of independent estimates, with metafor's numbers.

Vijayakumar & Cheung (2021) combine cross-validation folds into a study estimate and studies into
a population estimate by inverse-variance fixed-effect and random-effects meta-analysis. This
module follows the definitions of R's metafor (Viechtbauer 2010), the reference the tests check
against; the numbers come from the one engine :mod:`replikit.replicate._rma` (the
intercept-only case of its ``rma`` fit, shared with meta-regression, influence and the plots):

* weights ``w_i = 1 / (v_i + tau2)``; pooled ``mu = sum(w y) / sum(w)``, ``se = sum(w)^-1/2``;
* Cochran's ``Q = sum(w0 (y - mu0)^2)`` with fixed-effect weights ``w0 = 1 / v``;
* the tau2 estimators DL, HE, HS, SJ, ML, REML and PM, all truncated at 0 (statsmodels'
  ``combine_effects`` does not truncate DL, which gives a negative tau2 on homogeneous folds);
* Knapp & Hartung (2003) intervals with t(k - 1), optionally floored at the Wald standard error
  (metafor's ``test='adhoc'``);
* prediction intervals as metafor's ``predict.rma`` (Higgins, Thompson & Spiegelhalter 2009's
  t(k - 2) on request);
* I² and H² (Higgins & Thompson 2002), the Q-profile interval of tau2 (Viechtbauer 2007) and a
  leave-one-out table.

:func:`tau2_estimate`, :func:`q_statistic` and :func:`tau2_qprofile_ci` accept arrays of shape
``(..., k)`` and work on the last axis, so thousands of meta-analyses (simulation repetitions,
models, studies) are estimated in one array expression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._compat import renamed, renamed_fields
from .._format import interval as interval_text
from .._format import number, percent
from .._format import pvalue as p_text
from .._validation import check_confidence_level
from ..errors import DataError, ParameterTypeError
from ..results import ConfidenceInterval, Result, WaldInterval
from . import _draw, _rma
from ._rma import PI_DISTS, TAU2_METHODS
from ._rma import ComputedOnRead as _ComputedOnRead

__all__ = ["TAU2_METHODS", "PI_DISTS", "MetaResult", "Heterogeneity", "meta_analysis",
           "tau2_estimate", "q_statistic", "tau2_qprofile_ci", "leave_one_out"]

_ESTIMATOR_NAMES = {
    "DL": "DerSimonian-Laird", "HE": "Hedges", "HS": "Hunter-Schmidt", "SJ": "Sidik-Jonkman",
    "ML": "maximum likelihood", "REML": "restricted maximum likelihood", "PM": "Paule-Mandel",
}


def model_name(tau2_method: str) -> str:
    """How the model weighs the studies, in words every meta-analysis result prints:
    ``'inverse-variance weights (fixed effect)'`` or ``'τ² by restricted maximum likelihood
    (REML)'``."""
    if tau2_method == "FE":
        return "inverse-variance weights (fixed effect)"
    return (f"τ² by {_ESTIMATOR_NAMES[tau2_method]} ({tau2_method})"
            + (", truncated at 0" if tau2_method in ("DL", "HE", "HS") else ""))


@renamed(method="tau2_method")
def tau2_estimate(y, v, tau2_method: str = "REML", *, max_iter: int = 1000,
                  tol: float = 1e-12):
    """Between-study variance τ² by one of metafor's estimators, truncated at 0.

    Parameters
    ----------
    y, v : array-like of shape (..., k)
        Estimates and sampling variances; the last axis holds the k >= 2 studies.
    tau2_method : {'DL', 'HE', 'HS', 'SJ', 'ML', 'REML', 'PM'}, default 'REML'
        DL: ``(Q - (k-1)) / (sum w - sum w^2 / sum w)`` (DerSimonian & Laird 1986).
        HE: ``sum (y - ybar)^2 / (k-1) - mean(v)`` (Hedges 1983, unweighted moments).
        HS: ``(Q - k) / sum w`` (Hunter & Schmidt 2004).
        SJ: ``tau0 * sum w (y - mu_w)^2 / (k-1)`` with ``tau0 = var(y) (k-1)/k`` and
        ``w = 1/(v + tau0)`` (Sidik & Jonkman 2005).
        ML, REML: roots of the (restricted) likelihood score by Fisher scoring with step
        halving, as metafor's ``rma.uni`` (Viechtbauer 2005), finished by bisection on the
        score where scoring cycles.
        PM: the root of ``Q(tau2) = k - 1`` (Paule & Mandel 1982), 0 if ``Q(0) < k - 1``.
    max_iter : int, default 1000
        Fisher-scoring steps of ML and REML.
    tol : float, default 1e-12
        ML and REML stop when a step changes τ² by at most ``tol`` (relative above 1).

    Returns
    -------
    ndarray of shape (...)
        τ² >= 0, one per meta-analysis of the stack.

    Raises
    ------
    ConvergenceError
        ML or REML did not converge in ``max_iter`` steps (only when ``max_iter`` < 100:
        from step 100 on, the remaining problems are solved by bisection).

    See Also
    --------
    meta_analysis : The pooled estimate with τ², its interval, I² and the Q test.
    tau2_qprofile_ci : The Q-profile confidence interval of τ².
    q_statistic : The generalized Q statistic the moment estimators use.

    Notes
    -----
    Vijayakumar & Cheung (2021) use random-effects meta-analysis without naming the estimator;
    the R package meta they used defaulted to DL. replikit defaults to REML, as metafor does.

    References
    ----------
    .. [1] DerSimonian, R. & Laird, N. (1986). Meta-Analysis in Clinical Trials. Controlled
       Clinical Trials, 7(3), 177–188.
    .. [2] Hedges, L. V. (1983). A Random Effects Model for Effect Sizes. Psychological
       Bulletin, 93(2), 388–395.
    .. [3] Hunter, J. E. & Schmidt, F. L. (2004). Methods of Meta-Analysis: Correcting Error and
       Bias in Research Findings (2nd ed.). Sage.
    .. [4] Sidik, K. & Jonkman, J. N. (2005). Simple Heterogeneity Variance Estimation for
       Meta-Analysis. Journal of the Royal Statistical Society: Series C, 54(2), 367–384.
    .. [5] Paule, R. C. & Mandel, J. (1982). Consensus Values and Weighting Factors. Journal of
       Research of the National Bureau of Standards, 87(5), 377–385.
    .. [6] Viechtbauer, W. (2005). Bias and Efficiency of Meta-Analytic Variance Estimators in
       the Random-Effects Model. Journal of Educational and Behavioral Statistics, 30(3),
       261–293.

    Examples
    --------
    >>> round(float(tau2_estimate([0.0, 1.0, 2.0], [0.1, 0.1, 0.1], "DL")), 4)
    0.9
    >>> tau2_estimate([[0.0, 1.0, 2.0], [0.5, 0.5, 0.5]], [[0.1] * 3] * 2, "REML")
    array([0.9, 0. ])
    """
    method = _rma.check_method(tau2_method, allowed=TAU2_METHODS)
    return _rma.tau2(np.asarray(y, float), np.asarray(v, float), method=method, tol=tol,
                     max_iter=max_iter)



def q_statistic(y, v, tau2=0.0) -> np.ndarray:
    """Generalized Cochran's Q, ``sum w_i (y_i - mu_w)^2`` with ``w_i = 1/(v_i + tau2)``.

    Parameters
    ----------
    y, v : array-like of shape (..., k)
        Estimates and their sampling variances (last axis: the studies).
    tau2 : float or array-like of shape (...), default 0.0
        Between-study variance; 0 gives Cochran's Q.

    Returns
    -------
    ndarray of shape (...)
        The statistic, one per meta-analysis.

    See Also
    --------
    tau2_qprofile_ci : Solves ``Q(tau2)`` equal to chi-square quantiles.
    meta_analysis : Reports Q with its test of homogeneity.

    References
    ----------
    .. [1] DerSimonian, R. & Laird, N. (1986). Meta-Analysis in Clinical Trials. Controlled
       Clinical Trials, 7(3), 177–188.
    .. [2] Viechtbauer, W. (2007). Confidence Intervals for the Amount of Heterogeneity in
       Meta-Analysis. Statistics in Medicine, 26(1), 37–52.

    Examples
    --------
    >>> float(q_statistic([0.0, 1.0], [1.0, 1.0]))
    0.5
    """
    y = np.asarray(y, float)
    return _rma.qe(y, np.asarray(v, float), None, None, np.broadcast_to(
        np.asarray(tau2, float), y.shape[:-1]))


def tau2_qprofile_ci(y, v, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Q-profile confidence interval of τ² (Viechtbauer 2007).

    The bounds solve ``Q(tau2) = chi2_{k-1}(1 - a/2)`` (low) and ``chi2_{k-1}(a/2)`` (high),
    with ``a = 1 - confidence_level``; a bound is 0 when ``Q(0)`` is already below its target.

    Parameters
    ----------
    y, v : array-like of shape (..., k)
        Estimates and sampling variances (last axis: the studies).
    confidence_level : float, default 0.95
        Level of the interval.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)``: floats for one meta-analysis, arrays of shape ``(...)`` for a stack.

    See Also
    --------
    tau2_estimate : The point estimate.
    MetaResult.heterogeneity : The interval with those of τ, I² and H².

    References
    ----------
    .. [1] Viechtbauer, W. (2007). Confidence Intervals for the Amount of Heterogeneity in
       Meta-Analysis. Statistics in Medicine, 26(1), 37–52.

    Examples
    --------
    >>> ci = tau2_qprofile_ci([0.1, 0.5, 0.9, 0.3], [0.01, 0.02, 0.01, 0.03])
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0265, 1.6106)
    """
    level = check_confidence_level(confidence_level)
    y = np.asarray(y, float)
    lo, hi = _rma.qprofile(y, np.asarray(v, float), level=level)
    if y.ndim == 1:
        return ConfidenceInterval(float(lo), float(hi))
    return ConfidenceInterval(lo, hi)


# ---------------------------------------------------------------------------------------------
# heterogeneity

@renamed_fields(method="tau2_method")
@dataclass(frozen=True, slots=True)
class Heterogeneity(Result):
    """Between-study (or residual) heterogeneity with Q-profile intervals (metafor's
    ``confint`` of an ``rma.uni`` model).

    Parameters
    ----------
    tau2, se_tau2 : float
        The τ² estimate and its standard error (as ``rma.uni`` reports it; NaN for the
        fixed-effect model).
    tau2_ci : ConfidenceInterval
        Q-profile interval of τ² (Viechtbauer 2007).
    tau, tau_ci : float, ConfidenceInterval
        ``sqrt(tau2)`` and the image of the interval.
    i2, i2_ci : float, ConfidenceInterval
        I² in percent, ``100 tau2 / (vt + tau2)`` with the typical within-study variance
        ``vt = (k - p) / tr(P)`` (Higgins & Thompson 2002), and its interval; for the
        fixed-effect model the Q-based ``100 (Q - df) / Q``.
    h2, h2_ci : float, ConfidenceInterval
        H² = ``1 + tau2 / vt`` (fixed effect: ``Q / df``) and its interval.
    q, q_df, q_pvalue : float, int, float
        Cochran's Q (QE with moderators) and its test of homogeneity.
    vt : float
        The typical within-study variance.
    confidence_level : float
        Level of the intervals.
    residual : bool
        True for a meta-regression (heterogeneity the moderators leave unexplained).
    tau2_method : str
        The τ² estimator (``'FE'`` for the fixed-effect model).

    See Also
    --------
    MetaResult.heterogeneity : Builds it for a meta-analysis.
    MetaRegression.heterogeneity : Builds it for a meta-regression.

    References
    ----------
    .. [1] Viechtbauer, W. (2007). Confidence Intervals for the Amount of Heterogeneity in
       Meta-Analysis. Statistics in Medicine, 26(1), 37–52.
    .. [2] Higgins, J. P. T. & Thompson, S. G. (2002). Quantifying Heterogeneity in a
       Meta-Analysis. Statistics in Medicine, 21(11), 1539–1558.

    Examples
    --------
    >>> res = meta_analysis([0.1, 0.5, 0.9, 0.3], [0.01, 0.02, 0.01, 0.03], tau2_method="DL")
    >>> het = res.heterogeneity()
    >>> het.to_frame()["quantity"].tolist()
    ['tau2', 'tau', 'I2 (%)', 'H2']
    >>> round(het.tau2_ci.low, 4), round(het.tau2_ci.high, 4)
    (0.0265, 1.6106)
    """

    tau2: float
    se_tau2: float
    tau2_ci: ConfidenceInterval
    tau: float
    tau_ci: ConfidenceInterval
    i2: float
    i2_ci: ConfidenceInterval
    h2: float
    h2_ci: ConfidenceInterval
    q: float
    q_df: int
    q_pvalue: float
    vt: float
    confidence_level: float
    residual: bool
    tau2_method: str

    @property
    def title(self) -> str:
        what = "Residual heterogeneity" if self.residual else "Heterogeneity"
        return f"{what} ({self.tau2_method})"

    def to_frame(self):
        """Rows tau2, tau, I2 (%), H2 with ``estimate, se, ci_low, ci_high``.

        Returns
        -------
        pandas.DataFrame
            Four rows, one per quantity.
        """
        import pandas as pd

        rows = [("tau2", self.tau2, self.se_tau2, self.tau2_ci),
                ("tau", self.tau, float("nan"), self.tau_ci),
                ("I2 (%)", self.i2, float("nan"), self.i2_ci),
                ("H2", self.h2, float("nan"), self.h2_ci)]
        return pd.DataFrame([{"quantity": q, "estimate": e, "se": s, "ci_low": c.low,
                              "ci_high": c.high, "confidence_level": self.confidence_level}
                             for q, e, s, c in rows])

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        what = "residual heterogeneity" if self.residual else "heterogeneity"
        lines = [f"{what.capitalize()} ({self.tau2_method}; {lvl}% Q-profile intervals):"]
        names = {"tau2": "τ²", "tau": "τ", "I2 (%)": "I² (%)", "H2": "H²"}
        for r in self.to_frame().itertuples(index=False):
            se = "" if not np.isfinite(r.se) else f" (SE {number(r.se, 4)})"
            lines.append(f"  {names[r.quantity]:<7} {number(r.estimate, 4)}{se} "
                         f"{interval_text(r.ci_low, r.ci_high, 4)}")
        lines.append(f"  Q({self.q_df}) = {number(self.q, 5)}, p {_p(self.q_pvalue)}")
        return "\n".join(lines)


def _p(p: float) -> str:
    """``'= 0.031'`` or ``'< 0.001'`` for a sentence."""
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


def heterogeneity_of(model: _rma.Model, *, tau2: float, q: float, trp0: float, i2: float,
                     h2: float, level: float, residual: bool) -> Heterogeneity:
    """The :class:`Heterogeneity` of a fitted model (τ² SE, Q-profile interval and images)."""
    y, v, X = model.y, model.v, model.X
    k, p = X.shape
    lo, hi = (float(b) for b in _rma.qprofile(y, v, model.Xfit, level=level))
    vt = (k - p) / trp0
    method = model.method
    se = _rma.se_tau2(y, v, X, method, tau2) if method != "FE" else float("nan")
    return Heterogeneity(
        tau2=float(tau2), se_tau2=se, tau2_ci=ConfidenceInterval(lo, hi),
        tau=math.sqrt(max(tau2, 0.0)), tau_ci=ConfidenceInterval(math.sqrt(lo), math.sqrt(hi)),
        i2=float(i2), i2_ci=ConfidenceInterval(100 * lo / (vt + lo), 100 * hi / (vt + hi)),
        h2=float(h2), h2_ci=ConfidenceInterval(1 + lo / vt, 1 + hi / vt), q=float(q),
        q_df=int(k - p), q_pvalue=float(_rma.chi2_sf(q, k - p)), vt=float(vt),
        confidence_level=level, residual=residual, tau2_method=method)


# ---------------------------------------------------------------------------------------------
# the result

@renamed_fields(method="tau2_method", ci_method="interval",
                values={"interval": {"z": "wald"}})
@dataclass(frozen=True, slots=True)
class MetaResult(WaldInterval, Result):
    """A pooled estimate with its heterogeneity statistics (metafor's ``rma.uni`` without
    moderators).

    Parameters
    ----------
    estimate, se : float
        Pooled estimate and its standard error (Knapp-Hartung with ``interval='knha'``).
    tau2_method : str
        ``'FE'`` or the τ² estimator (``'DL'``, ``'REML'``, ...).
    interval : {'wald', 'knha'}
        Wald z intervals and tests, or Knapp-Hartung t(k - 1).
    df : float or None
        Degrees of freedom of the t reference (``k - 1``), None for z.
    tau2, tau2_ci : float, ConfidenceInterval
        Between-study variance (0 for the fixed-effect model) and its 95% Q-profile interval.
        ``tau2_ci=None`` (what :func:`meta_analysis` passes) computes the interval from ``y``
        and ``v`` when it is first read — by ``tau2_ci``, ``str()``, ``to_frame()``,
        ``to_dict()``, ``==`` or pickling — and keeps it; a caller who never reads it does not
        pay for its root finding.
    q, q_df, q_pvalue : float, int, float
        Cochran's Q test of homogeneity.
    i2_q, h2_q : float
        Higgins & Thompson's ``I2 = 100 max(0, (Q-df)/Q)`` and ``H2 = Q/df``.
    i2_tau, h2_tau : float
        What metafor prints: for random effects ``I2 = 100 tau2/(tau2 + s2)``,
        ``H2 = (tau2 + s2)/s2`` with the typical within-study variance
        ``s2 = (k-1) sum w/((sum w)^2 - sum w^2)``; for the fixed-effect model the Q-based
        ``i2_q`` and ``h2_q`` (so ``h2_tau = Q/df`` may be below 1, as metafor prints it).
    k : int
        Number of studies.
    labels, y, v, weights : tuple
        Study labels, estimates, sampling variances and weights (percent).
    pi_dist : {'z', 't(k-1)', 't(k-2)'}
        Reference distribution of :meth:`prediction_interval`.
    se_z : float
        The Wald standard error ``sum(w)^-1/2`` (equal to ``se`` with ``interval='wald'``).
    knha_floor : bool
        The Knapp-Hartung SE was floored at ``se_z``.

    See Also
    --------
    meta_analysis : Builds it.
    MetaRegression : The model with moderators.
    ScaledMeta : A meta-analysis on a transformed scale.

    References
    ----------
    .. [1] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> res = meta_analysis([0.41, 0.38, 0.45], se=[0.03, 0.04, 0.03], tau2_method="DL")
    >>> round(res.estimate, 4), res.k
    (0.4188, 3)
    >>> ci = res.confidence_interval(0.9)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.3871, 0.4505)
    """

    estimate: float
    se: float
    tau2_method: str
    interval: str
    df: float | None
    tau2: float
    tau2_ci: ConfidenceInterval | None
    q: float
    q_df: int
    q_pvalue: float
    i2_q: float
    h2_q: float
    i2_tau: float
    h2_tau: float
    k: int
    labels: tuple = field(default=(), repr=False)
    y: tuple = field(default=(), repr=False)
    v: tuple = field(default=(), repr=False)
    weights: tuple = field(default=(), repr=False)
    pi_dist: str = "z"
    se_z: float = float("nan")
    knha_floor: bool = False

    @property
    def statistic(self) -> float:
        """z (or t with Knapp-Hartung) of the pooled estimate against 0 (infinite when the
        Knapp-Hartung SE is 0: identical effects)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.float64(self.estimate) / self.se)

    @property
    def pvalue(self) -> float:
        """Two-sided p-value of :attr:`statistic`."""
        return float(_rma.two_sided_p(self.statistic, self.df))

    @property
    def model_label(self) -> str:
        """metafor's model label: ``'FE Model'`` or ``'RE Model (REML)'``."""
        return "FE Model" if self.tau2_method == "FE" else f"RE Model ({self.tau2_method})"

    @property
    def title(self) -> str:
        kind = "Fixed-effect" if self.tau2_method == "FE" else "Random-effects"
        return f"{kind} meta-analysis ({self.tau2_method}, k = {self.k})"

    def _model(self) -> _rma.Model:
        return _rma.Model(np.asarray(self.y, float), np.asarray(self.v, float),
                          np.ones((self.k, 1)), tuple(self.labels), ("intercept",),
                          self.tau2_method, self.interval, self.knha_floor, 1e-12, self.pi_dist)

    @renamed(dist="pi_dist")
    def prediction_interval(self, confidence_level: float = 0.95,
                            pi_dist: str | None = None) -> ConfidenceInterval:
        """Interval for the true effect of a new study: ``estimate ± q sqrt(se² + τ²)``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.
        pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
            Reference distribution of ``q``: normal, t(k - 1) (metafor's ``predict.rma`` for
            t-based tests) or t(k - 2) (Higgins, Thompson & Spiegelhalter 2009; metafor's
            ``predtype='Riley'``; with k = 2 the df is floored at 1). Default: the result's.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``; ``se`` is the result's (Knapp-Hartung with ``interval='knha'``).
        """
        level = check_confidence_level(confidence_level)
        dist = _rma.check_pi_dist(pi_dist or self.pi_dist, "pi_dist")
        half = _rma.pi_quantile(dist, level, self.k - 1) * math.sqrt(self.se ** 2 + self.tau2)
        return ConfidenceInterval(self.estimate - half, self.estimate + half)

    def robust(self, cluster=None, *, adjust: bool = True, method: str = "CR1",
               confidence_level: float = 0.95):
        """Cluster-robust (sandwich) SE, t test and interval of the pooled estimate (metafor's
        ``robust(fit, cluster = ...)``), for studies that come in dependent clusters.

        Parameters
        ----------
        cluster : array-like of shape (k,), optional
            The cluster of each study (default: each study its own).
        adjust : bool, default True
            CR1: multiply by ``J / (J - 1)``.
        method : {'CR1', 'CR2'}, default 'CR1'
            CR1 with t(J - 1) (Hedges, Tipton & Johnson 2010), or CR2 with Satterthwaite df
            (Tipton 2015; metafor's ``robust(..., clubSandwich = TRUE)``).
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        RobustResult
            See :meth:`MultilevelMeta.robust`.

        Examples
        --------
        >>> res = meta_analysis([0.1, 0.5, 0.9, 0.3, 0.4, 0.2], [0.01] * 6)
        >>> rob = res.robust(cluster=[1, 1, 2, 2, 3, 3])
        >>> rob.n_clusters, float(rob.df[0])
        (3, 2.0)
        """
        from ._mv import robust_of_random_effects

        return robust_of_random_effects(
            self.y, self.v, self.tau2, cluster, adjust=adjust, method=method,
            confidence_level=check_confidence_level(confidence_level))

    def tau2_confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Q-profile interval of τ² at ``confidence_level`` (``tau2_ci`` holds the 95% one).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        return tau2_qprofile_ci(np.asarray(self.y), np.asarray(self.v), confidence_level)

    def heterogeneity(self, confidence_level: float = 0.95) -> Heterogeneity:
        """τ² with its SE, τ, I² and H² with Q-profile intervals (metafor's ``confint``).

        The interval of τ² solves ``Q(tau2) = chi2_{k-1}`` quantiles (Viechtbauer 2007); τ, I²
        and H² are its images (``I2 = 100 tau2/(s2 + tau2)``, ``H2 = 1 + tau2/s2`` with the
        typical within-study variance ``s2``, Higgins & Thompson 2002). The SE of τ² is the
        one ``rma.uni`` reports for the estimator (inverse Fisher information for ML and REML,
        the variance of the quadratic form for DL, HE, HS and SJ).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        Heterogeneity
            The estimates and their intervals.
        """
        m = self._model()
        w0 = 1.0 / m.v
        trp0 = float(w0.sum() - (w0 ** 2).sum() / w0.sum())
        return heterogeneity_of(m, tau2=self.tau2, q=self.q, trp0=trp0, i2=self.i2_tau,
                                h2=self.h2_tau, level=check_confidence_level(confidence_level),
                                residual=False)

    def study_frame(self, confidence_level: float = 0.95):
        """One row per study: ``label, estimate, se, ci_low, ci_high, weight`` (Wald intervals).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the studies' intervals.

        Returns
        -------
        pandas.DataFrame
            k rows; ``weight`` in percent.
        """
        import pandas as pd

        y = np.asarray(self.y)
        se = np.sqrt(np.asarray(self.v))
        z = _rma.quantile(check_confidence_level(confidence_level))
        return pd.DataFrame({"label": list(self.labels), "estimate": y, "se": se,
                             "ci_low": y - z * se, "ci_high": y + z * se,
                             "weight": np.asarray(self.weights)})

    def to_frame(self, confidence_level: float = 0.95):
        """One tidy row: estimate, SE, interval, prediction interval, τ² and its interval, the
        Q test, I² and H², the estimator and the interval kind.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low, ci_high`` and ``pi_low, pi_high``.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        import pandas as pd

        ci = self.confidence_interval(confidence_level)
        pi = self.prediction_interval(confidence_level)
        return pd.DataFrame([{
            "tau2_method": self.tau2_method, "interval": self.interval, "k": self.k,
            "estimate": self.estimate, "se": self.se, "ci_low": ci.low, "ci_high": ci.high,
            "confidence_level": confidence_level, "statistic": self.statistic,
            "df": self.df, "pvalue": self.pvalue, "pi_low": pi.low, "pi_high": pi.high,
            "pi_dist": self.pi_dist,
            "tau2": self.tau2, "tau2_ci_low": self.tau2_ci.low, "tau2_ci_high": self.tau2_ci.high,
            "q": self.q, "q_df": self.q_df, "q_pvalue": self.q_pvalue,
            "i2_q": self.i2_q, "h2_q": self.h2_q, "i2_tau": self.i2_tau, "h2_tau": self.h2_tau,
        }])

    def plot(self, ax=None, *, confidence_level: float = 0.95, refline: float | None = 0.0,
             prediction_interval: bool = True, xlabel: str = "estimate", digits: int = 2,
             title: str | None = None, transform=None):
        """Forest plot in the layout of metafor's ``forest.rma``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        confidence_level : float, default 0.95
            Level of the study and pooled intervals.
        refline : float or None, default 0.0
            x of the dotted reference line (None: none), on the drawn scale.
        prediction_interval : bool, default True
            Draw the prediction interval of a random-effects model.
        xlabel : str, default 'estimate'
            Label of the x axis.
        digits : int, default 2
            Decimals of the right-hand text.
        title : str, optional
            A title above the caption line.
        transform : callable, optional
            Back-transform of every drawn value (metafor's ``transf``), e.g. ``numpy.exp``.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        See Also
        --------
        replikit.replicate.forest_plot : The same figure, with ``transform`` also a scale name.
        """
        from .._plotting import axes_or_new

        level = check_confidence_level(confidence_level)
        tf = transform or (lambda a: np.asarray(a, float))
        y0 = np.asarray(self.y)
        se = np.sqrt(np.asarray(self.v))
        z = _rma.quantile(level)
        ax = axes_or_new(ax, 7.2, 1.3 + 0.28 * (self.k + 3))
        ci = self.confidence_interval(level)
        pi = None
        if prediction_interval and self.tau2_method != "FE":
            p = self.prediction_interval(level)
            pi = (float(tf(p.low)), float(tf(p.high)))
        note = _draw.forest_note(self.model_label, self.interval, self.q, self.q_df,
                                 self.q_pvalue, self.i2_q,
                                 None if self.tau2_method == "FE" else self.tau2)
        return _draw.forest(
            ax, labels=self.labels, y=tf(y0), lo=tf(y0 - z * se), hi=tf(y0 + z * se),
            weights=self.weights, estimate=float(tf(self.estimate)),
            ci=(float(tf(ci.low)), float(tf(ci.high))), pi=pi, model_label=self.model_label,
            refline=refline, xlabel=xlabel, digits=digits, level=level, note=note, title=title)

    def __str__(self) -> str:
        ci = self.confidence_interval()
        kind = f"Knapp-Hartung t({self.k - 1})" if self.interval == "knha" else "Wald z"
        stat = "t" if self.df is not None else "z"
        lines = [
            f"{self.title}; {model_name(self.tau2_method)}",
            f"  estimate = {number(self.estimate, 4)} (SE {number(self.se, 4)}), 95% CI "
            f"{interval_text(ci.low, ci.high, 4)} ({kind}); {stat} = "
            f"{number(self.statistic, 4)}, p {_p(self.pvalue)}",
        ]
        if self.tau2_method != "FE":
            pi = self.prediction_interval()
            lines.append(f"  τ² = {number(self.tau2, 4)} (Q-profile 95% CI "
                         f"{interval_text(self.tau2_ci.low, self.tau2_ci.high, 4)}), τ = "
                         f"{number(math.sqrt(self.tau2), 4)}; 95% prediction interval "
                         f"{interval_text(pi.low, pi.high, 4)} ({self.pi_dist})")
            het = (f"I² = {percent(self.i2_tau / 100, 3)} (τ²-based), "
                   f"{percent(self.i2_q / 100, 3)} (Q-based); H² = {number(self.h2_tau, 3)}")
        else:
            het = f"I² = {percent(self.i2_q / 100, 3)}; H² = {number(self.h2_q, 3)} (Q/df)"
        lines.append(f"  Test of homogeneity: Q({self.q_df}) = {number(self.q, 5)}, "
                     f"p {_p(self.q_pvalue)}; {het}")
        return "\n".join(lines)


def _meta_tau2_ci(result: MetaResult) -> ConfidenceInterval:
    """The 95% Q-profile interval of τ² of a meta-analysis, from its ``y`` and ``v``."""
    lo, hi = _rma.qprofile(np.asarray(result.y, float), np.asarray(result.v, float), level=0.95)
    return ConfidenceInterval(float(lo), float(hi))


MetaResult.tau2_ci = _ComputedOnRead(MetaResult.__dict__["tau2_ci"], _meta_tau2_ci)


# ---------------------------------------------------------------------------------------------
# the analysis

@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def meta_analysis(y, v=None, *, se=None, labels=None, tau2_method: str = "REML",
                  interval: str = "wald", knha_floor: bool = False,
                  pi_dist: str | None = None) -> MetaResult:
    """Inverse-variance fixed-effect or random-effects meta-analysis.

    Parameters
    ----------
    y : array-like of shape (k,)
        Estimates (e.g. the R² of CV folds or of studies).
    v : array-like of shape (k,), optional
        Sampling variances. Give ``v`` or ``se``.
    se : array-like of shape (k,), optional
        Standard errors.
    labels : sequence of str, optional
        Study labels (for tables and the forest plot; default ``Study 1, ...``).
    tau2_method : {'FE', 'DL', 'REML', 'ML', 'PM', 'HE', 'SJ', 'HS'}, default 'REML'
        ``'FE'``: the fixed-effect (common-effect) model; else the τ² estimator of the
        random-effects model (see :func:`tau2_estimate`).
    interval : {'wald', 'knha'}, default 'wald'
        Wald z interval and test, or Knapp & Hartung (2003):
        ``se^2 = sum w (y-mu)^2 / ((k-1) sum w)`` and t(k-1) quantiles.
    knha_floor : bool, default False
        With ``interval='knha'``, never let the Knapp-Hartung SE fall below the Wald SE
        (metafor's ``test='adhoc'``).
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Reference distribution of the prediction interval ``mu ± q sqrt(se² + τ²)``, with the
        result's ``se``. Default as metafor's ``predict.rma``: ``'z'`` with Wald intervals,
        ``'t(k-1)'`` with Knapp-Hartung; ``'t(k-2)'`` is Higgins, Thompson & Spiegelhalter
        (2009), metafor's ``predtype='Riley'``.

    Returns
    -------
    MetaResult
        The pooled estimate, its interval, τ² with its Q-profile interval (computed when first
        read, so a caller who never reads it does not pay for it), Q, I² and H².

    Raises
    ------
    DataError
        Fewer than 2 estimates, a variance or SE that is not finite and > 0, labels of the
        wrong length, or sums that overflow.

    See Also
    --------
    meta_regression : The model with study-level moderators.
    meta_analysis_on_scale : Bounded metrics pooled on a transformed scale.
    leave_one_out : The analysis without each study in turn.
    influence : Which study drives the result.
    small_study_effects : Funnel-plot asymmetry and trim-and-fill.

    Notes
    -----
    ``mu = sum(w y) / sum(w)``, ``w = 1/(v + tau2)``, ``se = 1/sqrt(sum w)`` (``tau2 = 0`` for
    the fixed-effect model). The fixed-effect and random-effects combinations of
    Vijayakumar & Cheung (2021), with metafor's definitions (Viechtbauer 2010).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801.
    .. [2] DerSimonian, R. & Laird, N. (1986). Meta-Analysis in Clinical Trials. Controlled
       Clinical Trials, 7(3), 177–188.
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.
    .. [4] Knapp, G. & Hartung, J. (2003). Improved Tests for a Random Effects Meta-Regression
       with a Single Covariate. Statistics in Medicine, 22(17), 2693–2710.
    .. [5] IntHout, J., Ioannidis, J. P. A. & Borm, G. F. (2014). The Hartung-Knapp-Sidik-
       Jonkman Method for Random Effects Meta-Analysis Is Straightforward and Considerably
       Outperforms the Standard DerSimonian-Laird Method. BMC Medical Research Methodology,
       14, 25.
    .. [6] Higgins, J. P. T., Thompson, S. G. & Spiegelhalter, D. J. (2009). A Re-Evaluation of
       Random-Effects Meta-Analysis. Journal of the Royal Statistical Society: Series A,
       172(1), 137–159.

    Examples
    --------
    >>> res = meta_analysis([0.41, 0.38, 0.45], se=[0.03, 0.04, 0.03], tau2_method="DL")
    >>> round(res.estimate, 3)
    0.419
    >>> print(res)  # doctest: +NORMALIZE_WHITESPACE
    Random-effects meta-analysis (DL, k = 3); τ² by DerSimonian-Laird (DL), truncated at 0
      estimate = 0.4188 (SE 0.01929), 95% CI [0.381, 0.4566] (Wald z); z = 21.72, p < 0.001
      τ² = 5.882e-05 (Q-profile 95% CI [0, 0.0475]), τ = 0.00767; 95% prediction interval
      [0.3781, 0.4595] (z)
      Test of homogeneity: Q(2) = 2.1084, p = 0.35; I² = 5.14% (τ²-based), 5.14% (Q-based);
      H² = 1.05
    """
    method = _rma.check_method(tau2_method)
    kind = _rma.check_meta_interval(interval)
    pi_dist = _rma.check_pi_dist(pi_dist) if pi_dist is not None else \
        _rma.default_pi_dist(kind)
    y, v, labels = _rma.check_studies(y, v, se, labels)
    k = y.size
    f = _rma.fit(y, v, None, method=method, interval=kind, knha_floor=knha_floor)
    q = float(f.qe)
    tau2 = float(f.tau2)
    mu = float(f.beta[0])
    se_z = float(math.sqrt(f.A[0, 0]))
    se_out = float(math.sqrt(f.vb[0, 0]))
    if not all(math.isfinite(x) for x in (q, tau2, mu, se_z, se_out)):
        raise DataError("the effects and sampling variances are too extreme to combine: the "
                        "inverse-variance sums overflow (rescale the effects, e.g. to other "
                        "units).")
    i2_q, h2_q = (float(a) for a in _rma.i2_h2(q, k - 1, f.trp0, 0.0, fixed=True))
    i2_tau, h2_tau = (float(a) for a in _rma.i2_h2(q, k - 1, f.trp0, tau2,
                                                    fixed=method == "FE"))
    w = f.w
    return MetaResult(
        estimate=mu, se=se_out, tau2_method=method, interval=kind,
        df=float(k - 1) if kind == "knha" else None, tau2=tau2,
        tau2_ci=None, q=q, q_df=k - 1,  # the Q-profile interval: computed when first read
        q_pvalue=float(_rma.chi2_sf(q, k - 1)), i2_q=i2_q, h2_q=h2_q, i2_tau=i2_tau,
        h2_tau=h2_tau, k=k, labels=tuple(labels), y=tuple(y.tolist()), v=tuple(v.tolist()),
        weights=tuple((100 * w / w.sum()).tolist()), pi_dist=pi_dist, se_z=se_z,
        knha_floor=bool(knha_floor))



def leave_one_out(result: MetaResult, confidence_level: float = 0.95):
    """Refit a meta-analysis without each study in turn (metafor's ``leave1out``).

    Parameters
    ----------
    result : MetaResult
        The fitted model; every refit uses its τ² estimator and interval.
    confidence_level : float, default 0.95
        Level of the refits' intervals.

    Returns
    -------
    pandas.DataFrame
        One row per omitted study: ``omitted, estimate, se, ci_low, ci_high, tau2, q, i2_q``.

    Raises
    ------
    DataError
        Fewer than 3 studies.
    ParameterError
        More than ``MAX_REFIT_K`` = 20,000 studies (k refits of k studies: k² work).

    See Also
    --------
    influence : Leave-one-out diagnostics of every study.
    cumulative : The pooled result as studies are added.

    Notes
    -----
    A sensitivity check of a pooled estimate: how far one study moves it. The k refits are one
    batched call of the engine, in blocks of bounded memory.

    References
    ----------
    .. [1] Viechtbauer, W. & Cheung, M. W. (2010). Outlier and Influence Diagnostics for
       Meta-Analysis. Research Synthesis Methods, 1(2), 112–125.

    Examples
    --------
    >>> res = meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25], [0.01, 0.02, 0.015, 0.01, 0.02])
    >>> leave_one_out(res)["estimate"].round(3).tolist()
    [0.532, 0.478, 0.466, 0.232, 0.49]
    """
    import pandas as pd

    if not isinstance(result, MetaResult):
        raise ParameterTypeError("`result` must be a MetaResult (meta_analysis, no "
                                 f"moderators); got {type(result).__name__}.")
    if result.k < 3:
        raise DataError(f"leave-one-out needs at least 3 studies; got k = {result.k}.")
    level = check_confidence_level(confidence_level)
    m = result._model()
    k = result.k
    f = _rma.refits(m, lambda rows: _rma.deleted(rows, k), what="leave-one-out fits")
    est = f.beta[:, 0]
    se = np.sqrt(f.vb[:, 0, 0])
    crit = _rma.quantile(level, (k - 2) if m.interval == "knha" else None)
    i2_q, _ = _rma.i2_h2(f.qe, k - 2, f.trp0, 0.0, fixed=True)
    return pd.DataFrame({"omitted": list(result.labels), "estimate": est, "se": se,
                         "ci_low": est - crit * se, "ci_high": est + crit * se,
                         "tau2": f.tau2, "q": f.qe, "i2_q": i2_q})
