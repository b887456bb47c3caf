"""Fixed- and random-effects meta-analysis of independent estimates (seed 000, "third aim").

Vijayakumar & Cheung (2021) combine cross-validation folds into a study estimate and studies into
a population estimate with inverse-variance fixed-effect (FE) and random-effects (RE)
meta-analysis (the R package *meta*). This module follows the definitions of R's *metafor*
(Viechtbauer 2010), which is the reference the tests check against:

* weights ``w_i = 1 / (v_i + tau2)``; pooled ``mu = sum(w y) / sum(w)``, ``se = sum(w)^-1/2``;
* Cochran's ``Q = sum(w0 (y - mu0)^2)`` with FE weights ``w0 = 1 / v``;
* tau2 estimators DL, HE, HS, SJ, ML, REML, PM (all truncated at 0; statsmodels'
  ``combine_effects`` does *not* truncate DL, which gives negative tau2 on homogeneous CV folds);
* Knapp-Hartung (``ci='knha'``) intervals with t(k-1), optionally floored at the z standard error
  (metafor's ``test='adhoc'``);
* prediction intervals as metafor's ``predict.rma``: a z quantile with z tests, t(k-1) with the
  Knapp-Hartung variance with ``ci='knha'``; Higgins, Thompson & Spiegelhalter's (2009) t(k-2)
  on request (``pi_dist``);
* I2, H2 (both the Q-based and metafor's tau2-based definitions), the Q-profile CI of tau2,
  prediction intervals and a leave-one-out table.

The tau2 estimators accept arrays of shape ``(..., k)`` and work on the last axis, so thousands of
meta-analyses (simulation repetitions, models, studies) are estimated in one array expression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._compat import renamed, renamed_fields
from .._validation import check_choice, check_confidence_level
from ..errors import ConvergenceError, DataError, ParameterError
from ..results import ConfidenceInterval
from .metareg import _bisect_decreasing, _scoring_step  # shared tau2 root finders

__all__ = ["TAU2_METHODS", "PI_DISTS", "MetaResult", "meta_analysis", "tau2_estimate",
           "q_statistic", "tau2_qprofile_ci"]

TAU2_METHODS = ("DL", "HE", "HS", "SJ", "ML", "REML", "PM")
PI_DISTS = ("z", "t(k-1)", "t(k-2)")
_PI_ALIASES = {"t": "t(k-1)", "norm": "z"}
_METHODS = ("FE",) + TAU2_METHODS
_METHOD_NAMES = {
    "FE": "fixed effect (inverse variance)",
    "DL": "random effects, DerSimonian-Laird tau2 (truncated at 0)",
    "HE": "random effects, Hedges (variance-components) tau2",
    "HS": "random effects, Hunter-Schmidt tau2",
    "SJ": "random effects, Sidik-Jonkman tau2",
    "ML": "random effects, maximum-likelihood tau2",
    "REML": "random effects, restricted maximum-likelihood tau2",
    "PM": "random effects, Paule-Mandel tau2",
}


def _fe(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sw = w.sum(axis=-1)
    mu = (w * y).sum(axis=-1) / sw
    return mu, sw


def q_statistic(y, v, tau2=0.0) -> np.ndarray:
    """Generalized Cochran Q, ``sum w_i (y_i - mu_w)^2`` with ``w_i = 1/(v_i + tau2)``.

    Parameters
    ----------
    y, v : array-like of shape (..., k)
        Estimates and their sampling variances (last axis = studies).
    tau2 : float or array-like of shape (...)
        Between-study variance; 0 gives Cochran's Q (DerSimonian & Laird 1986, eq. 4).

    Returns
    -------
    ndarray of shape (...)

    Notes
    -----
    Seed 000 uses Q implicitly through the R package *meta*; the Q-profile of Viechtbauer (2007)
    solves ``Q(tau2) = chi2 quantile``. Example: ``q_statistic([0, 1], [1, 1])`` is 0.5.
    """
    y = np.asarray(y, float)
    v = np.asarray(v, float)
    w = 1.0 / (v + np.asarray(tau2, float)[..., None])
    mu, _ = _fe(y, w)
    return (w * (y - mu[..., None]) ** 2).sum(axis=-1)


def _upper_bracket(y, v):
    """A tau2 large enough that the generalized Q is below any useful target."""
    spread = np.var(y, axis=-1) * y.shape[-1]
    return 100.0 * (spread + v.max(axis=-1)) + 1.0


@renamed(method="tau2_method")
def tau2_estimate(y, v, tau2_method: str = "REML", *, max_iter: int = 1000,
                  tol: float = 1e-12):
    """Between-study variance tau2 by one of metafor's estimators, truncated at 0.

    Parameters
    ----------
    y, v : array-like of shape (..., k)
        Estimates and sampling variances; the last axis holds the k >= 2 studies.
    method : {'DL', 'HE', 'HS', 'SJ', 'ML', 'REML', 'PM'}
        DL: ``(Q - (k-1)) / (sum w - sum w^2 / sum w)`` (DerSimonian & Laird 1986).
        HE: ``sum (y - ybar)^2 / (k-1) - mean(v)`` (Hedges 1983, unweighted moments).
        HS: ``(Q - k) / sum w`` (Hunter & Schmidt 2004).
        SJ: ``tau0 * sum w (y - mu_w)^2 / (k-1)`` with ``tau0 = var(y)*(k-1)/k`` and
        ``w = 1/(v + tau0)`` (Sidik & Jonkman 2005).
        ML, REML: roots of the (restricted) likelihood score, by Fisher scoring with step
        halving (metafor's ``rma.uni``): ``tau2 <- tau2 + (sum w^2 (y-mu)^2 - tr P) / tr PP``
        (ML: ``tr P = sum w``, ``tr PP = sum w^2``).
        PM: the root of ``Q(tau2) = k - 1`` (Paule & Mandel 1982), 0 if ``Q(0) < k - 1``.
    max_iter, tol : int, float
        Iteration control of ML/REML.

    Returns
    -------
    ndarray of shape (...)
        tau2 >= 0. DL is truncated at 0 (statsmodels' ``combine_effects`` is not).

    Notes
    -----
    Seed 000 (Vijayakumar & Cheung 2021, "Meta-analytic methods") uses random-effects
    meta-analysis without naming the estimator; the R package *meta* it used defaulted to DL at
    the time. replikit defaults to REML, as metafor does. Example:
    ``tau2_estimate([0., 1., 2.], [.1, .1, .1], 'DL')`` is 0.9.
    """
    method = check_choice(str(tau2_method).upper(), "tau2_method", TAU2_METHODS)
    y = np.asarray(y, float)
    v = np.asarray(v, float)
    k = y.shape[-1]
    if method == "DL" or method == "HS":
        w = 1.0 / v
        mu, sw = _fe(y, w)
        q = (w * (y - mu[..., None]) ** 2).sum(axis=-1)
        if method == "HS":
            return np.maximum(0.0, (q - k) / sw)
        c = sw - (w ** 2).sum(axis=-1) / sw
        return np.maximum(0.0, (q - (k - 1)) / c)
    if method == "HE":
        ss = ((y - y.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
        return np.maximum(0.0, ss / (k - 1) - v.mean(axis=-1))
    if method == "SJ":
        tau0 = np.var(y, axis=-1)  # ddof=0: var(y)*(k-1)/k
        tau0 = np.where(tau0 <= 0, 1e-4, tau0)
        w = 1.0 / (v + tau0[..., None])
        mu, _ = _fe(y, w)
        return tau0 * (w * (y - mu[..., None]) ** 2).sum(axis=-1) / (k - 1)
    if method == "PM":
        q0 = q_statistic(y, v, np.zeros(y.shape[:-1]))
        hi = _upper_bracket(y, v)
        root = _bisect_decreasing(lambda t: q_statistic(y, v, t), k - 1.0,
                                  np.zeros(y.shape[:-1]), hi)
        return np.where(q0 <= k - 1, 0.0, root)
    # ML / REML by Fisher scoring (metafor's rma.uni) started at the HE estimate: the step is
    # the score over the expected information, tr(P) and tr(PP) in closed form for the
    # intercept-only model; a step that would make tau2 negative is halved (not truncated),
    # as metareg does with moderators. Where scoring has not converged after _FISHER_STEPS
    # steps (it can cycle), the score's root is found by bisection. (The earlier fixed-point
    # form needed over 1,000 steps on some data, e.g. one outlying study, small variances.)
    tau2 = np.asarray(tau2_estimate(y, v, "HE"), float)
    done = np.zeros(tau2.shape, bool)
    for it in range(max_iter):
        if it == _FISHER_STEPS:  # Fisher scoring can cycle (e.g. one outlying study):
            rest = ~done         # the rest by bisection on the score, which always converges
            tau2 = np.where(rest, _score_root(y, v, method, tol), tau2)
            return tau2
        score, info = _likelihood_score(y, v, tau2, method)
        new = _scoring_step(tau2, score / info)
        conv = np.abs(new - tau2) <= tol * np.maximum(1.0, new)
        tau2 = np.where(done, tau2, new)
        done = done | conv
        if np.all(done):
            return tau2
    raise ConvergenceError(f"`tau2_method`={method!r}: tau2 did not converge in {max_iter} "
                           "iterations; raise `max_iter`.")


_FISHER_STEPS = 100


def _likelihood_score(y, v, tau2, method: str):
    """The (restricted) likelihood score of tau2 and its expected information (up to the
    same factor 1/2): ``sum w^2 (y - mu)^2 - tr P`` and ``tr PP`` (ML: ``sum w``, ``sum w^2``)."""
    w = 1.0 / (v + np.asarray(tau2, float)[..., None])
    mu, sw = _fe(y, w)
    s2 = (w ** 2).sum(axis=-1)
    q = (w ** 2 * (y - mu[..., None]) ** 2).sum(axis=-1)
    if method == "REML":
        s3 = (w ** 3).sum(axis=-1)
        return q - (sw - s2 / sw), s2 - 2.0 * s3 / sw + (s2 / sw) ** 2
    return q - sw, s2


def _score_root(y, v, method: str, tol: float):
    """tau2 where the score changes sign from + to - (0 when the score at 0 is <= 0), by
    bisection over the stack: the estimate Fisher scoring seeks, found without cycling."""
    shape = y.shape[:-1]
    lo = np.zeros(shape)
    s0, _ = _likelihood_score(y, v, lo, method)
    hi = np.maximum(np.var(y, axis=-1) * 4.0 + v.max(axis=-1), 1e-8)
    for _ in range(200):  # grow the bracket until the score is negative
        s_hi, _ = _likelihood_score(y, v, hi, method)
        if np.all((s_hi < 0) | (s0 <= 0)):
            break
        hi = np.where(s_hi < 0, hi, hi * 2.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        s_mid, _ = _likelihood_score(y, v, mid, method)
        lo = np.where(s_mid > 0, mid, lo)
        hi = np.where(s_mid > 0, hi, mid)
        if np.all(hi - lo <= tol * np.maximum(1.0, hi)):
            break
    return np.where(s0 <= 0, 0.0, 0.5 * (lo + hi))


def tau2_qprofile_ci(y, v, confidence_level: float = 0.95):
    """Q-profile confidence interval of tau2 (Viechtbauer 2007).

    The bounds solve ``Q(tau2) = chi2_{k-1}(1 - a/2)`` (lower) and ``chi2_{k-1}(a/2)`` (upper),
    with ``a = 1 - confidence_level``; a bound is 0 when ``Q(0)`` is already below its target.

    Parameters
    ----------
    y, v : array-like of shape (..., k)
    confidence_level : float

    Returns
    -------
    (low, high) : tuple of ndarrays of shape (...)

    Notes
    -----
    Supports the seed's random-effects meta-analyses (seed 000, Figures 1, 7, 8) with an
    interval for the heterogeneity they model. Example: ``tau2_qprofile_ci(y, v, 0.95)``.
    """
    level = check_confidence_level(confidence_level)
    y = np.asarray(y, float)
    v = np.asarray(v, float)
    k = y.shape[-1]
    a = 1.0 - level
    q_lo = stats.chi2.ppf(1 - a / 2, k - 1)
    q_hi = stats.chi2.ppf(a / 2, k - 1)
    zeros = np.zeros(y.shape[:-1])
    q0 = q_statistic(y, v, zeros)
    hi = _upper_bracket(y, v)
    fun = lambda t: q_statistic(y, v, t)  # noqa: E731
    low = np.where(q0 <= q_lo, 0.0, _bisect_decreasing(fun, q_lo, zeros, hi))
    high = np.where(q0 <= q_hi, 0.0, _bisect_decreasing(fun, q_hi, zeros, hi * 10))
    return low, high


@renamed_fields(method="tau2_method", ci_method="interval",
                values={"interval": {"z": "wald"}})
@dataclass(frozen=True, slots=True)
class MetaResult:
    """A pooled estimate with its heterogeneity statistics.

    Attributes
    ----------
    estimate, se : float
        Pooled estimate and its standard error (Knapp-Hartung SE when ``ci='knha'``).
    method : str
        ``'FE'`` or the tau2 estimator (``'DL'``, ``'REML'``, ...).
    ci_method : str
        ``'z'`` or ``'knha'`` (t with k-1 df).
    tau2, tau2_ci : float, ConfidenceInterval
        Between-study variance (0 for FE) and its Q-profile interval.
    q, q_df, q_pvalue : float
        Cochran's Q test of homogeneity.
    i2_q, h2_q : float
        Higgins & Thompson's ``I2 = 100 max(0, (Q-df)/Q)`` and ``H2 = Q/df``.
    i2_tau, h2_tau : float
        What metafor prints: for random effects ``I2 = 100 tau2/(tau2 + s2)``,
        ``H2 = (tau2 + s2)/s2`` with the typical within-study variance
        ``s2 = (k-1) sum w/((sum w)^2 - sum w^2)``; for FE the Q-based ``i2_q`` and ``h2_q``
        (so ``h2_tau = Q/df`` may be below 1 when ``Q < df``, as metafor prints it).
    k : int
    labels, y, v, weights : tuple
        Inputs and the normalized weights (percent).
    pi_dist : {'z', 't(k-1)', 't(k-2)'}
        Reference distribution of :meth:`prediction_interval`.
    """

    estimate: float
    se: float
    tau2_method: str
    interval: str
    df: float | None
    tau2: float
    tau2_ci: ConfidenceInterval
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
        """z (or t for Knapp-Hartung) of the pooled estimate against 0."""
        return self.estimate / self.se

    @property
    def pvalue(self) -> float:
        dist = stats.norm if self.df is None else stats.t(self.df)
        return float(min(1.0, 2 * dist.sf(abs(self.statistic))))

    @property
    def model_label(self) -> str:
        """metafor-style model label: 'FE Model' or 'RE Model (REML)'."""
        return "FE Model" if self.tau2_method == "FE" else f"RE Model ({self.tau2_method})"

    def _q(self, confidence_level: float) -> float:
        level = check_confidence_level(confidence_level)
        dist = stats.norm if self.df is None else stats.t(self.df)
        return float(dist.ppf((1 + level) / 2))

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """``estimate +- q se`` with q from N(0,1) (``ci='z'``) or t(k-1) (``ci='knha'``)."""
        q = self._q(confidence_level)
        return ConfidenceInterval(self.estimate - q * self.se, self.estimate + q * self.se)

    def prediction_interval(self, confidence_level: float = 0.95,
                            dist: str | None = None) -> ConfidenceInterval:
        """Interval for the true effect of a new study: ``estimate +- q sqrt(se^2 + tau2)``.

        ``se`` is the result's standard error (the Knapp-Hartung one with ``ci='knha'``) and
        ``q`` the quantile of ``dist`` (default: the result's ``pi_dist``): ``'z'``, ``'t(k-1)'``
        (metafor's ``predict.rma`` for t-based tests) or ``'t(k-2)'`` (Higgins, Thompson &
        Spiegelhalter 2009, JRSS A 172; metafor's ``predtype='Riley'``; with k = 2 the df is floored
        at 1, as metafor does).
        """
        level = check_confidence_level(confidence_level)
        dist = _check_pi_dist(dist or self.pi_dist, "dist")
        if dist == "z":
            d = stats.norm
        else:
            d = stats.t(max(1, self.k - (1 if dist == "t(k-1)" else 2)))
        q = float(d.ppf((1 + level) / 2))
        half = q * math.sqrt(self.se ** 2 + self.tau2)
        return ConfidenceInterval(self.estimate - half, self.estimate + half)

    def tau2_confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Q-profile interval of tau2 at ``confidence_level`` (``tau2_ci`` holds the 95% one)."""
        lo, hi = tau2_qprofile_ci(np.asarray(self.y), np.asarray(self.v), confidence_level)
        return ConfidenceInterval(float(lo), float(hi))

    def heterogeneity(self, confidence_level: float = 0.95):
        """tau2 with its SE, tau, I2 and H2 with Q-profile intervals (metafor's ``confint``).

        Returns
        -------
        Heterogeneity
            The interval of tau2 solves ``Q(tau2) = chi2_{k-1}`` quantiles (Viechtbauer 2007);
            tau, I2 and H2 are its images (``I2 = 100 tau2/(s2 + tau2)``,
            ``H2 = 1 + tau2/s2`` with the typical within-study variance ``s2``, Higgins &
            Thompson 2002). The SE of tau2 is the one ``rma.uni`` reports for the estimator
            (inverse Fisher information for ML/REML, the variance of the quadratic form for
            DL/HE/HS/SJ). Estimates I2, H2 as :attr:`i2_tau`, :attr:`h2_tau`.
        """
        from .metareg import _fit_stack, _heterogeneity

        y, v = np.asarray(self.y), np.asarray(self.v)
        X = np.ones((self.k, 1))
        trp0 = float(_fit_stack(y, v, X, method="FE").trp0)
        return _heterogeneity(y, v, X, method=self.tau2_method, tau2=self.tau2, qe=self.q,
                              trp0=trp0, i2=self.i2_tau, h2=self.h2_tau,
                              level=check_confidence_level(confidence_level), residual=False)

    def study_frame(self) -> pd.DataFrame:
        """One row per input: ``label, estimate, se, ci_low, ci_high, weight`` (z 95% CIs)."""
        y = np.asarray(self.y)
        se = np.sqrt(np.asarray(self.v))
        z = stats.norm.ppf(0.975)
        return pd.DataFrame({"label": list(self.labels), "estimate": y, "se": se,
                             "ci_low": y - z * se, "ci_high": y + z * se,
                             "weight": np.asarray(self.weights)})

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One tidy row: estimate, se, ci, pi, tau2 (+CI), Q test, I2/H2, estimator and method."""
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

    def __str__(self) -> str:
        ci = self.confidence_interval()
        pi = self.prediction_interval()
        ci_name = f"Knapp-Hartung t({self.k - 1})" if self.interval == "knha" else "z"
        lines = [
            f"{_METHOD_NAMES[self.tau2_method]}; k = {self.k}; CI: {ci_name}",
            f"  estimate = {self.estimate:.4g} (SE {self.se:.4g}), 95% CI {ci}, "
            f"p = {self.pvalue:.3g}",
        ]
        if self.tau2_method != "FE":
            lines.append(f"  tau2 = {self.tau2:.4g} (Q-profile 95% CI {self.tau2_ci}), "
                         f"tau = {math.sqrt(self.tau2):.4g}; 95% prediction interval {pi} "
                         f"({self.pi_dist})")
        if self.tau2_method == "FE":
            het = f"I2 = {self.i2_q:.1f}%; H2 = {self.h2_q:.3g} (Q/df, as metafor prints)"
        else:
            het = (f"I2 = {self.i2_q:.1f}% (Q-based), {self.i2_tau:.1f}% (tau2-based); "
                   f"H2 = {self.h2_q:.3g} (Q-based), {self.h2_tau:.3g} (tau2-based)")
        lines.append(f"  Q({self.q_df}) = {self.q:.4g}, p = {self.q_pvalue:.3g}; {het}")
        return "\n".join(lines)


def _check_pi_dist(value, name: str = "pi_dist") -> str:
    """One of PI_DISTS (spaces and case ignored; 't' is the old spelling of 't(k-1)')."""
    key = "".join(str(value).split()).lower()
    key = _PI_ALIASES.get(key, key)
    return check_choice(key, name, PI_DISTS)


def _meta_iv(y, v, se, labels, method, ci, pi_dist):
    method = check_choice(str(method).upper(), "tau2_method", _METHODS)
    ci = check_choice(str(ci).lower(), "interval", ("wald", "knha"))
    if pi_dist is None:
        pi_dist = "t(k-1)" if ci == "knha" else "z"
    pi_dist = _check_pi_dist(pi_dist)
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise DataError(f"`y` must be one-dimensional; got shape {y.shape}.")
    if (v is None) == (se is None):
        raise ParameterError("give exactly one of `v` (sampling variances) or `se` "
                             f"(standard errors); got v={'set' if v is not None else None}, "
                             f"se={'set' if se is not None else None}.")
    if se is not None:
        se = np.asarray(se, float)
        bad = np.flatnonzero(~(np.isfinite(se) & (se > 0)))
        if bad.size:
            raise DataError(f"standard errors `se` must be finite and > 0 (a negative SE is not "
                            f"squared into a variance); found {se.ravel()[bad[:5]].tolist()} at "
                            f"positions {bad[:5].tolist()}.")
    v = np.asarray(v, float) if v is not None else se ** 2
    if v.shape != y.shape:
        raise DataError(f"`v`/`se` must have the shape of `y` {y.shape}; got {v.shape}.")
    if y.size < 2:
        raise DataError(f"meta-analysis needs at least 2 estimates in `y`; got {y.size}.")
    if not np.all(np.isfinite(y)):
        raise DataError("`y` must be finite; found NaN/inf.")
    if not np.all(np.isfinite(v)) or np.any(v <= 0):
        bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
        raise DataError(f"sampling variances (`v` or `se`**2) must be finite and > 0; found "
                        f"invalid value(s) at positions {bad[:5].tolist()}.")
    if labels is None:
        labels = [f"Study {i + 1}" for i in range(y.size)]
    labels = [str(s) for s in labels]
    if len(labels) != y.size:
        raise DataError(f"`labels` must have {y.size} entries; got {len(labels)}.")
    return y, v, labels, method, ci, pi_dist


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def meta_analysis(y, v=None, *, se=None, labels=None, tau2_method: str = "REML",
                  interval: str = "wald", knha_floor: bool = False,
                  pi_dist: str | None = None) -> MetaResult:
    """Inverse-variance fixed- or random-effects meta-analysis (seed 000's third aim).

    Parameters
    ----------
    y : array-like of shape (k,)
        Estimates (e.g. R2 of CV folds or of studies).
    v : array-like of shape (k,), optional
        Sampling variances. Give ``v`` or ``se``.
    se : array-like of shape (k,), optional
        Standard errors.
    labels : sequence of str, optional
        Study labels (for tables and the forest plot).
    method : {'FE', 'DL', 'REML', 'ML', 'PM', 'HE', 'SJ', 'HS'}
        'FE' = fixed (common) effect; else the tau2 estimator of the random-effects model (see
        :func:`tau2_estimate`). Default 'REML'.
    ci : {'z', 'knha'}
        Wald z interval, or Knapp & Hartung (2003): ``se^2 = sum w (y-mu)^2 / ((k-1) sum w)``
        and t(k-1) quantiles.
    knha_floor : bool
        With ``ci='knha'``, never let the Knapp-Hartung SE fall below the z SE (metafor's
        ``test='adhoc'``, Jackson et al. 2017).
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Reference distribution of the prediction interval ``mu +- q sqrt(se^2 + tau2)``, with
        the result's ``se`` (Knapp-Hartung with ``ci='knha'``). Default as metafor's
        ``predict.rma``: ``'z'`` with ``ci='z'``, ``'t(k-1)'`` with ``ci='knha'``. ``'t(k-2)'``
        is Higgins, Thompson & Spiegelhalter (2009, JRSS A 172) / Riley et al. (2011), metafor's
        ``predtype='Riley'``. (``'t'`` is accepted as the old spelling of ``'t(k-1)'``.)

    Returns
    -------
    MetaResult

    Notes
    -----
    ``mu = sum(w y)/sum(w)``, ``w = 1/(v + tau2)``, ``se = 1/sqrt(sum w)`` (tau2 = 0 for FE).
    Implements the fixed- and random-effects combinations of seed 000 (Vijayakumar & Cheung
    2021, "Meta-analytic methods"; Figures 1, 2, 7, 8) with metafor's definitions.

    Examples
    --------
    >>> res = meta_analysis([0.41, 0.38, 0.45], se=[0.03, 0.04, 0.03], method="DL")
    >>> round(res.estimate, 3)
    0.419
    """
    y, v, labels, method, ci, pi_dist = _meta_iv(y, v, se, labels, tau2_method, interval,
                                                 pi_dist)
    k = y.size
    w0 = 1.0 / v
    sw0 = w0.sum()
    mu0 = float((w0 * y).sum() / sw0)
    q = float((w0 * (y - mu0) ** 2).sum())
    q_df = k - 1
    q_p = float(stats.chi2.sf(q, q_df))
    tau2 = 0.0 if method == "FE" else float(tau2_estimate(y, v, method))
    w = 1.0 / (v + tau2)
    sw = w.sum()
    mu = float((w * y).sum() / sw)
    se_z = float(1.0 / math.sqrt(sw))
    se_out = se_z
    df = None
    if ci == "knha":
        s2 = float((w * (y - mu) ** 2).sum() / ((k - 1) * sw))
        se_out = math.sqrt(s2)
        if knha_floor:
            se_out = max(se_out, se_z)
        df = float(k - 1)
    s2_typ = (k - 1) * sw0 / (sw0 ** 2 - (w0 ** 2).sum())
    i2_q = 100.0 * max(0.0, (q - q_df) / q) if q > 0 else 0.0
    h2_q = q / q_df
    if method == "FE":
        i2_tau, h2_tau = i2_q, h2_q  # metafor: I2 = max(0, 100 (Q-df)/Q), H2 = Q/df
    else:
        i2_tau = 100.0 * tau2 / (tau2 + s2_typ)
        h2_tau = (tau2 + s2_typ) / s2_typ
    if not all(math.isfinite(x) for x in (q, tau2, mu, se_z, se_out)):
        raise DataError("the effects and sampling variances are too extreme to combine: the "
                        "inverse-variance sums overflow (rescale the effects, e.g. to other "
                        "units).")
    lo, hi = tau2_qprofile_ci(y, v, 0.95)
    return MetaResult(
        estimate=mu, se=se_out, tau2_method=method, interval=ci, df=df, tau2=tau2,
        tau2_ci=ConfidenceInterval(float(lo), float(hi)), q=q, q_df=q_df, q_pvalue=q_p,
        i2_q=i2_q, h2_q=h2_q, i2_tau=float(i2_tau), h2_tau=float(h2_tau), k=k,
        labels=tuple(labels), y=tuple(y.tolist()), v=tuple(v.tolist()),
        weights=tuple((100 * w / sw).tolist()), pi_dist=pi_dist, se_z=se_z,
        knha_floor=bool(knha_floor),
    )


def leave_one_out(result: MetaResult, confidence_level: float = 0.95) -> pd.DataFrame:
    """Refit ``result``'s model without each study in turn (metafor's ``leave1out``).

    Parameters
    ----------
    result : MetaResult
    confidence_level : float

    Returns
    -------
    DataFrame with one row per omitted study: ``omitted, estimate, se, ci_low, ci_high, tau2,
    q, i2_q``.

    Notes
    -----
    A sensitivity check for the seed's population estimates (seed 000, Figures 7-8: how far one
    non-replicating study moves the pooled interval). The k refits take O(k^2) time (about
    12 s for k = 4,000 on a 2-core machine); above k = 20,000 studies
    (``replikit.replicate.influence.MAX_REFIT_K``) they are refused with a
    :class:`~replikit.errors.ParameterError`. Example: ``leave_one_out(res)``.
    """
    from .influence import _check_refits

    if result.k < 3:
        raise DataError(f"leave-one-out needs k >= 3 studies; got k = {result.k}.")
    _check_refits(result.k, 1, "leave-one-out fits", blocks=False)  # one fit at a time
    y = np.asarray(result.y)
    v = np.asarray(result.v)
    rows = []
    for i, lab in enumerate(result.labels):
        keep = np.arange(result.k) != i
        r = meta_analysis(y[keep], v[keep], tau2_method=result.tau2_method,
                          interval=result.interval,
                          knha_floor=result.knha_floor, pi_dist=result.pi_dist)
        c = r.confidence_interval(confidence_level)
        rows.append({"omitted": lab, "estimate": r.estimate, "se": r.se, "ci_low": c.low,
                     "ci_high": c.high, "tau2": r.tau2, "q": r.q, "i2_q": r.i2_q})
    return pd.DataFrame(rows)


__all__.append("leave_one_out")
