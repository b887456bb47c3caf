"""Several effects per study: multilevel (multivariate) meta-analysis and cluster-robust
standard errors, with metafor's numbers.

Cross-validated results come as several correlated effects per study (one per fold, repeat,
metric or dataset). Pooling them as if independent understates the standard error. The
multilevel model of :func:`multilevel_meta_analysis` (metafor's
``rma.mv(yi, V, random = ~ 1 | outer/inner)``; Konstantopoulos 2011; Van den Noortgate et al.
2013) gives each nesting level its own random intercept,

``y = X beta + u_1 + ... + u_L + e``, ``u_l ~ N(0, sigma2_l Z_l Z_l')``, ``e ~ N(0, V)``,

where ``Z_l`` maps the effects to the clusters of level ``l`` (outermost first; a cluster of an
inner level is the path ``outer/inner``, as R's ``/``) and ``V`` is the known sampling
covariance (diagonal ``v``, or dense: block-diagonal by study when a study's effects share
data). The marginal covariance is ``M = V + sum_l sigma2_l Z_l Z_l'``; ``beta`` is the
generalized least-squares estimate with ``W = M^-1``, ``Var(beta) = (X'WX)^-1``. The variances
maximise the restricted (REML, the default) or full (ML) log-likelihood; their intervals are
profile-likelihood intervals (metafor's ``confint``).

:meth:`MultilevelMeta.robust` replaces the model-based ``Var(beta)`` with the cluster-robust
(sandwich) estimator of Hedges, Tipton & Johnson (2010): ``CR1`` with the small-sample factor
``J / (J - p)`` and t(J - p) tests (metafor's ``robust``), or the bias-reduced ``CR2``
(Bell & McCaffrey 2002; Tipton 2015; Pustejovsky & Tipton 2018) with Satterthwaite degrees of
freedom (clubSandwich's ``coef_test(fit, vcov = "CR2")``, metafor's
``robust(..., clubSandwich = TRUE)``). Robust inference stays valid when the working model
(which levels, which ``V``) is wrong, provided the clusters are independent.

Computation: the effects split into blocks that no covariance links (the outer clusters, joined
where ``V`` links them); ``M`` is block-diagonal, so every likelihood, gradient and information
evaluation is a batch of small Cholesky factorizations (blocks of equal size are stacked into one
array), never an ``N x N`` matrix. The log-variances are maximised by L-BFGS-B with the analytic
gradient, then polished by Fisher scoring on the variance scale with step halving (components on
the boundary 0 are held there while their score is negative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._format import interval as interval_text
from .._format import number
from .._validation import check_choice, check_confidence_level, check_float, check_interval
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import Result
from . import _rma

__all__ = ["MultilevelMeta", "RobustResult", "multilevel_meta_analysis", "ROBUST_METHODS"]

from ._mv import (
    MULTILEVEL_METHODS,
    ROBUST_METHODS,
    CoefficientViews,
    RobustResult,
    _codes_iv,
    _Model,
    _p,
    robust_vcov,
)

# ---------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, slots=True)
class MultilevelMeta(CoefficientViews, Result):
    """A multilevel (multivariate) meta-analysis: metafor's ``rma.mv`` with nested random
    intercepts.

    Parameters
    ----------
    names : tuple of str
        Coefficient names (``('intercept',)`` without moderators).
    beta : ndarray of shape (p,)
        Generalized least-squares coefficients.
    vcov : ndarray of shape (p, p)
        Their model-based covariance ``(X'WX)^-1``.
    sigma2 : tuple of float
        One variance per level, outermost first.
    levels : tuple of str
        The names of the levels (outermost first).
    n_clusters : tuple of int
        The number of clusters at each level (metafor's ``nlvls``).
    tau2_method : {'REML', 'ML'}
        The estimator of the variances.
    interval : {'wald', 't'}
        z tests and intervals, or t(k - p) (metafor's ``test = "t"``).
    df : float or None
        ``k - p`` with ``interval='t'``.
    k : int
        The number of effects.
    qe, qe_df, qe_pvalue : float, int, float
        The test of residual heterogeneity ``QE = e' V^-1 e`` of the fit with ``W = V^-1``,
        chi-square with ``k - p`` df.
    loglik : float
        The (restricted) log-likelihood at the estimate (metafor's ``logLik``).
    confidence_level : float
        Level of ``ci_low``, ``ci_high``.
    sigma2_ci : tuple of ConfidenceInterval
        Profile-likelihood intervals of the variances at ``confidence_level`` (computed when
        first read).
    labels : tuple of str
        Effect labels.
    _model : object
        The data of the fit (private): what :meth:`robust` and the profile intervals need.

    See Also
    --------
    multilevel_meta_analysis : Builds it.
    MultilevelMeta.robust : Cluster-robust standard errors.

    References
    ----------
    .. [1] Konstantopoulos, S. (2011). Fixed Effects and Variance Components Estimation in
       Three-Level Meta-Analysis. Research Synthesis Methods, 2(1), 61–76.
    .. [2] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> fit = multilevel_meta_analysis([0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.0, 0.2],
    ...                                [0.01] * 8, clusters=[[1, 1, 2, 2, 3, 3, 4, 4]])
    >>> round(fit.estimate, 4), fit.levels
    (0.2875, ('level1',))
    """

    names: tuple
    beta: np.ndarray
    vcov: np.ndarray
    sigma2: tuple
    levels: tuple
    n_clusters: tuple
    tau2_method: str
    interval: str
    df: float | None
    k: int
    qe: float
    qe_df: int
    qe_pvalue: float
    loglik: float
    confidence_level: float = 0.95
    sigma2_ci: tuple | None = None
    labels: tuple = field(default=(), repr=False)
    _model: object = field(default=None, repr=False, compare=False)

    # -- coefficients ------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return (f"Multilevel meta-analysis ({self.tau2_method}, k = {self.k}, levels "
                f"{'/'.join(self.levels)})")

    # estimate, se, statistic, pvalue, confidence_interval, ci_low, ci_high: CoefficientViews
    # (model-based: vcov = (X'WX)^-1; the normal, or t(k - p) with interval='t')

    @property
    def sigma(self) -> tuple:
        """The standard deviation of each level, ``sqrt(sigma2)``."""
        return tuple(math.sqrt(s) for s in self.sigma2)

    # -- variances ---------------------------------------------------------------------------
    def sigma2_confidence_interval(self, confidence_level: float = 0.95) -> tuple:
        """Profile-likelihood intervals of the level variances (metafor's ``confint`` of an
        ``rma.mv`` model).

        Each bound is the value of ``sigma2_l`` at which the (restricted) log-likelihood,
        maximised over the other variances, is ``chi2_1(level) / 2`` below its maximum; a
        lower bound is 0 when the profile at 0 is still above that.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        tuple of ConfidenceInterval
            One per level, outermost first.
        """
        level = check_confidence_level(confidence_level)
        m = self._model
        reml = self.tau2_method == "REML"
        s = np.asarray(self.sigma2, float)
        return tuple(m.profile_ci(i, s, self.loglik, reml, level) for i in range(s.size))

    # -- robust ------------------------------------------------------------------------------
    def robust(self, cluster=None, *, adjust: bool = True, method: str = "CR1",
               confidence_level: float | None = None) -> RobustResult:
        """Cluster-robust (sandwich) standard errors, t tests and intervals.

        Parameters
        ----------
        cluster : array-like of shape (k,), optional
            The cluster of each effect (default: the outermost level). Clusters are assumed
            independent; effects within one may be correlated in any way.
        adjust : bool, default True
            CR1: multiply by ``J / (J - p)`` (metafor's default). Ignored by CR2.
        method : {'CR1', 'CR2'}, default 'CR1'
            ``'CR1'``: ``A (sum_c X_c' W_c e_c e_c' W_c X_c) A``, ``A = (X'WX)^-1``, with
            t(J - p) (Hedges, Tipton & Johnson 2010; metafor's ``robust``). ``'CR2'``: the
            bias-reduced estimator with Satterthwaite df (Tipton 2015; Pustejovsky & Tipton
            2018; clubSandwich's ``coef_test(fit, vcov = "CR2")``, metafor's
            ``robust(..., clubSandwich = TRUE)``), better calibrated with few clusters.
        confidence_level : float, optional
            Level of the intervals (default the model's).

        Returns
        -------
        RobustResult
            The coefficients with robust SEs, df, t tests and intervals.

        Raises
        ------
        DataError
            ``cluster`` of the wrong length or with missing values, or no more clusters than
            coefficients.
        ParameterError
            ``method`` unknown; CR2 with clusters that split a block of correlated effects.

        References
        ----------
        .. [1] Hedges, L. V., Tipton, E. & Johnson, M. C. (2010). Robust Variance Estimation
           in Meta-Regression with Dependent Effect Size Estimates. Research Synthesis Methods,
           1(1), 39–65.
        .. [2] Tipton, E. (2015). Small Sample Adjustments for Robust Variance Estimation with
           Meta-Regression. Psychological Methods, 20(3), 375–393.
        .. [3] Pustejovsky, J. E. & Tipton, E. (2018). Small-Sample Methods for Cluster-Robust
           Variance Estimation and Hypothesis Testing in Fixed Effects Models. Journal of
           Business & Economic Statistics, 36(4), 672–683.

        Examples
        --------
        >>> fit = multilevel_meta_analysis([0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.0, 0.2],
        ...                                [0.01] * 8, clusters=[[1, 1, 2, 2, 3, 3, 4, 4]])
        >>> rob = fit.robust(method="CR2")
        >>> round(rob.se, 4) > 0
        True
        """
        m = self._model
        method = check_choice(str(method).upper(), "method", ROBUST_METHODS)
        level = check_confidence_level(confidence_level if confidence_level is not None
                                       else self.confidence_level)
        codes = m.codes[0] if cluster is None else _codes_iv(cluster, m.n, "cluster")
        s = np.asarray(self.sigma2, float)
        ev = m.evaluate(s, self.tau2_method == "REML")
        vb, df, J = robust_vcov(m, s, ev, codes, method, bool(adjust))
        return RobustResult(names=self.names, beta=self.beta, vcov=vb, df=df, method=method,
                            adjust=bool(adjust), n_clusters=J, confidence_level=level)

    # -- tables ------------------------------------------------------------------------------
    def to_frame(self):
        """The coefficients and the level variances in one tidy table.

        Columns ``quantity, estimate, se, statistic, df, pvalue, ci_low, ci_high`` and
        ``n_clusters``: one row per coefficient, then one ``sigma2.<level>`` row per level
        (its profile-likelihood interval; no SE).

        Returns
        -------
        pandas.DataFrame
            p + L rows.
        """
        import pandas as pd

        ci = self.confidence_interval()
        se = np.sqrt(np.diag(self.vcov))
        rows = [{"quantity": n, "estimate": b, "se": s, "statistic": b / s, "df": self.df,
                 "pvalue": float(_rma.two_sided_p(b / s, self.df)), "ci_low": lo,
                 "ci_high": hi, "n_clusters": None}
                for n, b, s, lo, hi in zip(self.names, self.beta, se, np.atleast_1d(ci.low),
                                           np.atleast_1d(ci.high), strict=True)]
        rows += [{"quantity": f"sigma2.{name}", "estimate": s2, "se": float("nan"),
                  "statistic": float("nan"), "df": None, "pvalue": float("nan"),
                  "ci_low": c.low, "ci_high": c.high, "n_clusters": n}
                 for name, s2, c, n in zip(self.levels, self.sigma2, self.sigma2_ci,
                                           self.n_clusters, strict=True)]
        out = pd.DataFrame(rows)
        out["confidence_level"] = self.confidence_level
        return out

    def summary_frame(self):
        """One row of model statistics: k, p, the estimator, QE and its test, the
        log-likelihood, the variances.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        import pandas as pd

        row = {"tau2_method": self.tau2_method, "interval": self.interval, "k": self.k,
               "n_coefficients": len(self.names), "qe": self.qe, "qe_df": self.qe_df,
               "qe_pvalue": self.qe_pvalue, "loglik": self.loglik}
        for name, s2 in zip(self.levels, self.sigma2, strict=True):
            row[f"sigma2.{name}"] = s2
        return pd.DataFrame([row])

    def to_dict(self) -> dict:
        """The model statistics and the table of :meth:`to_frame` in JSON types.

        Returns
        -------
        dict
            ``summary`` and ``coefficients`` (the rows of :meth:`to_frame`).
        """
        from ..results import to_jsonable

        return {"summary": to_jsonable(self.summary_frame().iloc[0].to_dict()),
                "coefficients": to_jsonable(self.to_frame())}

    def plot(self, ax=None, *, robust=None, transform=None, refline: float | None = None,
             xlabel: str = "estimate", digits: int = 2, title: str | None = None):
        """Forest plot of the effects, grouped by study, with the pooled estimate.

        metafor's ``forest.rma`` layout (``forest(rma.mv(...))``): one row per effect (labels
        ``study / effect``, the effects of one study together, studies in order of first
        appearance) with its 95% Wald interval ``y ± 1.96 sqrt(v)``; squares with area
        proportional to ``1 / (v + sum_l sigma2_l)``, the effect's marginal precision; the
        diamond is the pooled estimate with the model's interval or, given ``robust``, the
        cluster-robust one.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        robust : RobustResult, optional
            A :meth:`robust` result whose interval the diamond shows.
        transform : callable or str, optional
            Back-transform of every drawn value (metafor's ``transf``): a function, or a
            scale of :mod:`replikit.replicate.transforms` (``'logit'``, ``'fisher_z'`` ...)
            whose inverse is applied.
        refline : float or None, default None
            x of a dotted reference line, on the drawn scale.
        xlabel : str, default 'estimate'
            Label of the x axis.
        digits : int, default 2
            Decimals of the right-hand text.
        title : str, optional
            A title above the caption line.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Raises
        ------
        ParameterError
            A model with moderators (no single pooled estimate to draw).

        Examples
        --------
        >>> fit = multilevel_meta_analysis([0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.0, 0.2],
        ...                                [0.01] * 8, clusters=[[1, 1, 2, 2, 3, 3, 4, 4]])
        >>> ax = fit.plot(robust=fit.robust(method="CR2"))
        >>> ax.get_xlabel()
        'estimate'
        """
        from .._plotting import axes_or_new
        from . import _draw
        from .transforms import _inverse

        if len(self.names) != 1:
            raise ParameterError("`plot` draws the pooled estimate of an intercept-only model; "
                                 f"this one has {len(self.names)} coefficients.")
        tf = _inverse(transform) or (lambda a: np.asarray(a, float))
        m = self._model
        order = np.argsort(m.codes[0], kind="stable")
        y, v = np.asarray(m.y, float)[order], np.asarray(m.v, float)[order]
        z = _rma.quantile(0.95)
        ci = self.confidence_interval(0.95) if robust is None else \
            robust.confidence_interval(0.95)
        if robust is None:
            how = "Wald z" if self.df is None else f"t({number(self.df, 3)})"
        else:
            how = f"robust {robust.method} t({number(float(np.atleast_1d(robust.df)[0]), 3)})"
        # short: a figure's text over 120 characters is cut (replikit._plotting.LONG_TEXT)
        note = (f"Multilevel model ({self.tau2_method}), {how} interval; σ² "
                + ", ".join(f"{name} = {number(s2, 3)}" for name, s2 in
                            zip(self.levels, self.sigma2, strict=True)))
        ax = axes_or_new(ax, 7.2, 1.3 + 0.28 * (self.k + 3))
        return _draw.forest(
            ax, labels=[self.labels[i] for i in order], y=tf(y), lo=tf(y - z * np.sqrt(v)),
            hi=tf(y + z * np.sqrt(v)), weights=1 / (v + sum(self.sigma2)),
            estimate=float(tf(float(self.beta[0]))),
            ci=(float(tf(float(np.atleast_1d(ci.low)[0]))),
                float(tf(float(np.atleast_1d(ci.high)[0])))),
            pi=None, model_label="Multilevel model", refline=refline, xlabel=xlabel,
            digits=digits, level=0.95, note=note, title=title)

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        kind = f"t({number(self.df, 3)})" if self.df is not None else "Wald z"
        stat = "t" if self.df is not None else "z"
        lines = [f"{self.title}; variances by {self.tau2_method}"]
        for name, s2, c, n in zip(self.levels, self.sigma2, self.sigma2_ci, self.n_clusters,
                                  strict=True):
            lines.append(f"  σ² {name} ({n} clusters) = {number(s2, 4)} (σ = "
                         f"{number(math.sqrt(s2), 4)}), {lvl}% profile CI "
                         f"{interval_text(c.low, c.high, 4)}")
        lines.append(f"  Test of residual heterogeneity: QE({self.qe_df}) = "
                     f"{number(self.qe, 5)}, p {_p(self.qe_pvalue)}; log-likelihood "
                     f"{number(self.loglik, 5)}")
        ci = self.confidence_interval()
        se = np.sqrt(np.diag(self.vcov))
        for n, b, s, lo, hi in zip(self.names, self.beta, se, np.atleast_1d(ci.low),
                                   np.atleast_1d(ci.high), strict=True):
            lines.append(f"  {n} = {number(b, 4)} (SE {number(s, 4)}), {lvl}% CI "
                         f"{interval_text(lo, hi, 4)} ({kind}); {stat} = {number(b / s, 4)}, "
                         f"p {_p(float(_rma.two_sided_p(b / s, self.df)))}")
        return "\n".join(lines)


def _sigma2_ci_95(result: MultilevelMeta) -> tuple:
    return result.sigma2_confidence_interval(result.confidence_level)


def _install_lazy():
    MultilevelMeta.sigma2_ci = _rma.ComputedOnRead(MultilevelMeta.__dict__["sigma2_ci"],
                                               _sigma2_ci_95)


_install_lazy()


# ---------------------------------------------------------------------------------------------
# the analysis


def _clusters_iv(clusters, n: int):
    """Levels (outermost first) as integer codes of their paths, and their names."""
    import pandas as pd

    if clusters is None:
        raise ParameterError("`clusters` must give the cluster of each effect at each level, "
                             "outermost first (e.g. clusters=[study, fold]); got None.")
    if isinstance(clusters, pd.DataFrame):
        names = [str(c) for c in clusters.columns]
        cols = [clusters[c].to_numpy() for c in clusters.columns]
    elif isinstance(clusters, dict):
        names = [str(c) for c in clusters]
        cols = list(clusters.values())
    else:
        if isinstance(clusters, (str, bytes)):
            raise ParameterTypeError("`clusters` must be a list of per-effect labels (one "
                                     f"array per level); got the string {clusters!r}.")
        cols = list(clusters)
        if cols and np.ndim(cols[0]) == 0:  # one level given as a flat sequence
            cols = [cols]
        names = [str(getattr(c, "name", None) or f"level{i + 1}") for i, c in enumerate(cols)]
    if not cols:
        raise ParameterError("`clusters` must give at least one level; got none.")
    codes = []
    path = None
    for i, (name, col) in enumerate(zip(names, cols, strict=True)):
        c = _codes_iv(col, n, f"clusters[{i}]" if name.startswith("level") else
                      f"clusters[{name!r}]")
        # an inner cluster is the path outer/inner (R's `/`): the same inner label under two
        # outer clusters is two clusters
        path = c if path is None else np.unique(np.stack([path, c]), axis=1,
                                                return_inverse=True)[1].ravel()
        codes.append(path.astype(np.intp))
    n_outer = int(codes[0].max()) + 1
    if n_outer < 2:
        raise DataError(f"`clusters`: the outermost level needs at least 2 clusters; got "
                        f"{n_outer}.")
    return codes, tuple(names)


def _covariance_iv(v, V, n: int):
    if (v is None) == (V is None):
        raise ParameterError("give exactly one of `v` (sampling variances) or `V` (the "
                             "sampling covariance matrix); got "
                             f"v={'set' if v is not None else None}, "
                             f"V={'set' if V is not None else None}.")
    if v is not None:
        v = np.asarray(v, float)
        if v.shape != (n,):
            raise DataError(f"`v` must have the shape of `y` ({n},); got {v.shape}.")
        bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
        if bad.size:
            raise DataError(f"sampling variances `v` must be finite and > 0; found invalid "
                            f"values at positions {bad[:5].tolist()}.")
        return v, None
    V = np.asarray(V, float)
    if V.shape != (n, n):
        raise DataError(f"`V` must be a ({n}, {n}) matrix (one row and column per effect); "
                        f"got shape {V.shape}.")
    if not np.isfinite(V).all():
        raise DataError("`V` must be finite; found NaN or infinity.")
    scale = float(np.abs(V).max()) or 1.0
    if not np.allclose(V, V.T, rtol=0, atol=1e-10 * scale):
        raise DataError("`V` must be symmetric; it differs from its transpose by "
                        f"{float(np.abs(V - V.T).max()):.3g}.")
    V = 0.5 * (V + V.T)
    diag = np.diag(V)
    if not (diag > 0).all():
        bad = np.flatnonzero(~(diag > 0))
        raise DataError(f"`V` must have positive sampling variances on its diagonal; found "
                        f"{diag[bad[:5]].tolist()} at positions {bad[:5].tolist()}.")
    return np.ascontiguousarray(diag), V


def multilevel_meta_analysis(y, v=None, *, V=None, clusters=None, moderators=None, data=None,
                             intercept: bool = True, labels=None, tau2_method: str = "REML",
                             interval: str = "wald", confidence_level: float = 0.95,
                             tol: float = 1e-10) -> MultilevelMeta:
    """Multilevel (multivariate) random-effects meta-analysis of several effects per study.

    Fits ``y = X beta + u_1 + ... + u_L + e`` with one random intercept per nesting level,
    ``u_l ~ N(0, sigma2_l Z_l Z_l')``, and known sampling covariance ``e ~ N(0, V)``: metafor's
    ``rma.mv(yi, V, mods, random = ~ 1 | outer/inner)``.

    Parameters
    ----------
    y : array-like of shape (k,)
        The effects (e.g. a score per fold, per repeat, per dataset).
    v : array-like of shape (k,), optional
        Sampling variances (``V`` diagonal). Give ``v`` or ``V``.
    V : array-like of shape (k, k), optional
        The known sampling covariance, symmetric positive definite (typically block-diagonal
        by study: effects of one study that share data are correlated).
    clusters : list of array-like, dict or DataFrame
        The cluster of each effect at each level, outermost first: ``[study]`` for two levels
        (studies, effects), ``[district, school]`` for three. An inner cluster is the path
        ``outer/inner`` (R's ``/``), so inner labels need only be unique within their outer
        cluster. The outermost level needs at least 2 clusters.
    moderators, data, intercept : optional
        Effect-level moderators as for :func:`~replikit.replicate.meta_regression` (a frame,
        dict, array or formula on ``data``); None fits the intercept only.
    labels : sequence of str, optional
        Effect labels.
    tau2_method : {'REML', 'ML'}, default 'REML'
        Restricted or full maximum likelihood for the level variances.
    interval : {'wald', 't'}, default 'wald'
        z tests and intervals, or t(k - p) (metafor's ``test = "t"``).
    confidence_level : float, default 0.95
        Level of ``ci_low``, ``ci_high`` and of the profile intervals ``sigma2_ci``.
    tol : float, default 1e-10
        Fisher scoring stops when no variance changes by more than ``tol`` times
        ``max(scale, sigma2)`` (``scale`` the variance of ``y``).

    Returns
    -------
    MultilevelMeta
        Coefficients, variances per level with profile intervals, QE, the log-likelihood;
        ``.robust()`` for cluster-robust inference.

    Raises
    ------
    ParameterError
        Neither or both of ``v`` and ``V``; an unknown ``tau2_method`` or ``interval``.
    DataError
        Lengths that do not match ``y``; ``V`` not symmetric positive definite; missing
        cluster labels; fewer than 2 outer clusters; collinear moderators.

    See Also
    --------
    meta_analysis : One effect per study.
    meta_regression : One effect per study, with moderators.

    Notes
    -----
    ``M = V + sum_l sigma2_l Z_l Z_l'``, ``W = M^-1``, ``beta = (X'WX)^-1 X'Wy``,
    ``Var(beta) = (X'WX)^-1``. The REML log-likelihood is ``-1/2 [(k - p) log 2 pi + log|M| +
    log|X'WX| + (y - X beta)' W (y - X beta)] + 1/2 log|X'X|`` (metafor's, with its
    ``log|X'X|`` term), ML ``-1/2 [k log 2 pi + log|M| + (y - X beta)' W (y - X beta)]``
    (Viechtbauer 2010; Konstantopoulos 2011, eqs. 3-6; Van den Noortgate et al. 2013).
    Several effects per study in a two-level random-effects model pretend to be independent
    studies; the multilevel model attributes their agreement to the study they share, and
    its SE grows accordingly.

    References
    ----------
    .. [1] Konstantopoulos, S. (2011). Fixed Effects and Variance Components Estimation in
       Three-Level Meta-Analysis. Research Synthesis Methods, 2(1), 61–76.
    .. [2] Van den Noortgate, W., López-López, J. A., Marín-Martínez, F. & Sánchez-Meca, J.
       (2013). Three-Level Meta-Analysis of Dependent Effect Sizes. Behavior Research Methods,
       45(2), 576–594.
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.
    .. [4] Berkey, C. S., Hoaglin, D. C., Antczak-Bouckoms, A., Mosteller, F. & Colditz, G. A.
       (1998). Meta-Analysis of Multiple Outcomes by Regression with Random Effects.
       Statistics in Medicine, 17(22), 2537–2550.

    Examples
    --------
    >>> y = [0.10, 0.30, 0.20, 0.50, 0.40, 0.60, 0.00, 0.20, 0.35, 0.15]
    >>> study = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    >>> fit = multilevel_meta_analysis(y, [0.01] * 10, clusters=[study])
    >>> round(fit.estimate, 4), round(fit.se, 4), round(fit.sigma2[0], 5)
    (0.28, 0.0682, 0.01825)
    >>> rob = fit.robust(method="CR2")
    >>> round(rob.se, 4), round(float(rob.df[0]), 2)
    (0.0682, 4.0)
    """
    import pandas as pd

    method = check_choice(str(tau2_method).upper(), "tau2_method", MULTILEVEL_METHODS)
    kind = check_interval(str(interval).lower(), ("wald", "t"))
    level = check_confidence_level(confidence_level)
    tol = check_float(tol, "tol")
    if not tol > 0:
        raise ParameterError(f"`tol` must be > 0; got {tol}.")
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise DataError(f"`y` must be one-dimensional; got shape {y.shape}.")
    n = y.size
    if n < 2:
        raise DataError(f"a meta-analysis needs at least 2 effects in `y`; got {n}.")
    if not np.isfinite(y).all():
        raise DataError("`y` must be finite; found NaN or infinity.")
    v, V = _covariance_iv(v, V, n)
    codes, names = _clusters_iv(clusters, n)
    from .metareg import _design_iv

    if isinstance(moderators, pd.Series):
        moderators = moderators.to_frame()
    design = _design_iv(moderators, data, n, bool(intercept))
    X = np.asarray(design.X, float)
    p = X.shape[1]
    if n <= p:
        raise DataError(f"{p} coefficients need more than {p} effects; got {n}.")
    if labels is None:
        labels = [f"Effect {i}" for i in range(1, n + 1)]
    labels = [str(s) for s in labels]
    if len(labels) != n:
        raise DataError(f"`labels` must have {n} entries; got {len(labels)}.")
    model = _Model(y, X, v, V, codes)
    if V is not None:  # positive definiteness, block by block
        for grp in model.groups:
            try:
                np.linalg.cholesky(grp.V)
            except np.linalg.LinAlgError:
                raise DataError("`V` must be positive definite; a block of correlated "
                                "effects has a singular or indefinite covariance.") from None
    reml = method == "REML"
    sigma2, ev = model.maximise(reml, tol=tol)
    beta, A = ev["beta"], ev["A"]
    if not (np.isfinite(beta).all() and np.isfinite(A).all()):
        raise DataError("the effects and covariances are too extreme to combine (rescale the "
                        "effects).")
    qe = float(model.evaluate(np.zeros(model.n_levels), reml)["rss"])
    return MultilevelMeta(
        names=tuple(design.names), beta=np.asarray(beta, float), vcov=np.asarray(A, float),
        sigma2=tuple(float(s) for s in sigma2), levels=names,
        n_clusters=tuple(int(c.max()) + 1 for c in codes), tau2_method=method, interval=kind,
        df=float(n - p) if kind == "t" else None, k=n, qe=qe, qe_df=n - p,
        qe_pvalue=float(_rma.chi2_sf(qe, n - p)), loglik=float(ev["ll"]),
        confidence_level=level, sigma2_ci=None, labels=tuple(labels), _model=model)
