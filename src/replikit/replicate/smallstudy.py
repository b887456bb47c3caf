"""Do small studies tell a different story? Funnel-plot asymmetry and trim-and-fill.

* :func:`regression_test` — Egger's regression test and its relatives (metafor's ``regtest``):
  the estimates regressed on a measure of precision (SE, variance, n, 1/n, sqrt(n),
  1/sqrt(n)) in a mixed-effects meta-regression (``model='rma'``, the default) or in a weighted
  regression with a multiplicative dispersion (``model='lm'``, Egger et al. 1997);
* :func:`rank_test` — Begg & Mazumdar's (1994) rank correlation test (metafor's ``ranktest``);
* :func:`trim_and_fill` — Duval & Tweedie's (2000) trim-and-fill with the L0 and R0
  estimators of the number of missing studies, the side chosen as metafor does;
* :func:`small_study_effects` — the three together, with the funnel plot (contour-enhanced on
  request) and the filled studies drawn.

Asymmetry is not proof of publication bias: heterogeneity, a true difference between small and
large studies, or chance give the same picture (Sterne et al. 2011, who also advise against
these tests with fewer than 10 studies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._format import number
from .._format import pvalue as p_text
from .._validation import check_choice, check_confidence_level, check_int
from ..errors import ConvergenceError, DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval, Result, TestResult
from . import _draw, _rma
from .influence import _model_of
from .meta import MetaResult, meta_analysis
from .metareg import MetaRegression, meta_regression

__all__ = ["PREDICTORS", "RegressionTest", "regression_test", "RankTest", "rank_test",
           "TrimAndFill", "trim_and_fill", "SmallStudyEffects", "small_study_effects"]

PREDICTORS = ("se", "variance", "n", "inv_n", "sqrt_n", "inv_sqrt_n")
_PREDICTOR_NAMES = {"se": "standard error", "variance": "sampling variance",
                    "n": "sample size", "inv_n": "inverse of the sample size",
                    "sqrt_n": "square root of the sample size",
                    "inv_sqrt_n": "inverse of the square root of the sample size"}
_LIMIT = {"se": "as the SE goes to 0", "variance": "as the variance goes to 0",
          "inv_n": "as n grows", "inv_sqrt_n": "as n grows"}
_NAN = float("nan")


def _p(p: float) -> str:
    """``'= 0.031'`` or ``'< 0.001'`` for a sentence."""
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


@dataclass(frozen=True, slots=True)
class RegressionTest(TestResult):
    """Regression test for funnel-plot asymmetry (metafor's ``regtest``).

    Parameters
    ----------
    statistic : float
        z (``model='rma'`` with Wald tests) or t of the predictor's coefficient.
    pvalue : float
        Two-sided p-value of the test of no asymmetry.
    df : float or None
        Residual df of a t test (k - p - 1), None for z.
    estimate, se : float
        The limit estimate — the intercept, i.e. the effect predicted for a study of infinite
        precision (predictors se, variance, inv_n and inv_sqrt_n in a model without other
        moderators), as metafor reports it — and its SE; NaN otherwise.
    alternative : str, default 'two-sided'
        The test is two-sided.
    method : str
        Name of the test.
    extra : dict
        Nothing else.
    slope, slope_se : float
        The predictor's coefficient and its SE.
    predictor : str
        The measure of precision (see :data:`PREDICTORS`).
    model : {'rma', 'lm'}
        Meta-regression, or weighted regression with multiplicative dispersion.
    tau2_method : str
        The τ² estimator of the test's model (``'FE'`` for ``model='lm'``).
    fit : MetaRegression
        The fitted regression (its line is drawn on the funnel plot).

    See Also
    --------
    regression_test : Builds it.
    RankTest : The rank correlation test.

    References
    ----------
    .. [1] Egger, M., Davey Smith, G., Schneider, M. & Minder, C. (1997). Bias in Meta-Analysis
       Detected by a Simple, Graphical Test. BMJ, 315(7109), 629–634.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08])
    >>> test = regression_test(res, model="lm")
    >>> round(test.statistic, 3), test.df, round(test.estimate, 3)
    (15.149, 4.0, 0.05)
    """

    slope: float = _NAN
    slope_se: float = _NAN
    predictor: str = "se"
    model: str = "rma"
    tau2_method: str = "FE"
    fit: MetaRegression | None = field(default=None, repr=False, compare=False)

    @property
    def has_limit(self) -> bool:
        """The test's model gives a limit estimate (see :attr:`estimate`)."""
        return math.isfinite(self.estimate)

    def to_frame(self, confidence_level: float = 0.95):
        """One row: ``test, model, predictor``, the test and the limit estimate with its
        interval.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low, ci_high``.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        frame = TestResult.to_frame(self, confidence_level)
        frame.insert(0, "test", "regression")
        return frame

    def __str__(self) -> str:
        model = ("weighted regression with multiplicative dispersion" if self.model == "lm"
                 else "mixed-effects meta-regression model" if self.tau2_method != "FE"
                 else "fixed-effects meta-regression model")
        stat = (f"t = {number(self.statistic, 5)}, df = {number(self.df)}"
                if self.df is not None else f"z = {number(self.statistic, 5)}")
        lines = [f"Regression test for funnel-plot asymmetry ({model}; predictor: "
                 f"{_PREDICTOR_NAMES[self.predictor]}): {stat}, p {_p(self.pvalue)}"]
        if self.has_limit:
            ci = self.confidence_interval()
            lines.append(f"  limit estimate ({_LIMIT[self.predictor]}): "
                         f"{number(self.estimate, 4)}, 95% CI {ci}")
        return "\n".join(lines)


def regression_test(result, *, predictor: str = "se", model: str = "rma", n=None
                    ) -> RegressionTest:
    """Egger-type regression test for funnel-plot asymmetry (metafor's ``regtest``).

    Parameters
    ----------
    result : MetaResult or MetaRegression
        The model; its moderators stay in the test's model.
    predictor : {'se', 'variance', 'n', 'inv_n', 'sqrt_n', 'inv_sqrt_n'}, default 'se'
        The measure of precision added as a moderator (metafor's ``sei``, ``vi``, ``ni``,
        ``ninv``, ``sqrtni``, ``sqrtninv``).
    model : {'rma', 'lm'}, default 'rma'
        ``'rma'``: a meta-regression with the model's τ² estimator and test (metafor's
        default); ``'lm'``: weighted least squares with weights ``1/v`` and a multiplicative
        dispersion parameter, t(k - p - 1) — the classical Egger test (Egger et al. 1997).
    n : array-like of shape (k,), optional
        Sample sizes, for the n-based predictors.

    Returns
    -------
    RegressionTest
        The test of the predictor's coefficient and, for SE, variance, 1/n and 1/sqrt(n) in
        a model without other moderators, the limit estimate (intercept) with its interval.

    Raises
    ------
    ParameterError
        An n-based predictor without ``n``.
    DataError
        Sample sizes that are not finite and > 0, or a model matrix not of full rank once the
        predictor is added.

    See Also
    --------
    rank_test : Begg & Mazumdar's rank correlation test.
    trim_and_fill : How many studies are missing.
    small_study_effects : The tests and trim-and-fill together.

    Notes
    -----
    Egger's test regresses ``y_i / se_i`` on ``1 / se_i``; with weights ``1/v`` the regression
    of ``y_i`` on ``se_i`` is the same model, whose slope is Egger's intercept. The
    mixed-effects version adds τ² (Thompson & Sharp 1999).

    References
    ----------
    .. [1] Egger, M., Davey Smith, G., Schneider, M. & Minder, C. (1997). Bias in Meta-Analysis
       Detected by a Simple, Graphical Test. BMJ, 315(7109), 629–634.
    .. [2] Thompson, S. G. & Sharp, S. J. (1999). Explaining Heterogeneity in Meta-Analysis: A
       Comparison of Methods. Statistics in Medicine, 18(20), 2693–2708.
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08])
    >>> test = regression_test(res, model="lm")
    >>> round(test.statistic, 3), test.df
    (15.149, 4.0)
    """
    predictor = check_choice(str(predictor).lower(), "predictor", PREDICTORS)
    model = check_choice(str(model).lower(), "model", ("rma", "lm"))
    m = _model_of(result)
    mods = {nm: m.X[:, j] for j, nm in enumerate(m.names) if nm != "intercept"}
    has_int = "intercept" in m.names
    k = m.y.size
    if predictor in ("se", "variance"):
        x = np.sqrt(m.v) if predictor == "se" else m.v
    else:
        if n is None:
            raise ParameterError(f"`predictor`={predictor!r} needs the sample sizes `n`.")
        n = np.asarray(n, float)
        if n.shape != (k,) or not np.all(np.isfinite(n) & (n > 0)):
            raise DataError(f"`n` must hold {k} finite sample sizes > 0; got "
                            f"{np.asarray(n).ravel()[:5].tolist()}...")
        x = {"n": n, "inv_n": 1 / n, "sqrt_n": np.sqrt(n), "inv_sqrt_n": 1 / np.sqrt(n)}[
            predictor]
    name = f"predictor ({predictor})"
    X = np.column_stack([m.X, x])
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise DataError(f"the model matrix is not of full rank once the {predictor!r} "
                        "predictor is added (equal precision in every study, or a moderator "
                        "that already is a function of it); the test is undefined.")
    if k - X.shape[1] < 1:
        raise DataError(f"the regression test needs more than {X.shape[1]} studies; got "
                        f"k = {k}.")
    mods[name] = x
    if model == "rma":
        fit = meta_regression(m.y, m.v, moderators=mods, intercept=has_int, labels=m.labels,
                              tau2_method=m.method, interval=m.interval,
                              knha_floor=m.knha_floor, tol=m.tol)
    else:
        fit = meta_regression(m.y, m.v, moderators=mods, intercept=has_int, labels=m.labels,
                              tau2_method="FE", interval="knha")
    j = fit.names.index(name)
    has_limit = predictor in _LIMIT and has_int and len(mods) == 1
    return RegressionTest(
        statistic=float(fit.statistic[j]), pvalue=float(fit.pvalue[j]), df=fit.df,
        estimate=float(fit.beta[0]) if has_limit else _NAN,
        se=float(fit.se[0]) if has_limit else _NAN,
        method="Regression test for funnel-plot asymmetry", slope=float(fit.beta[j]),
        slope_se=float(fit.se[j]), predictor=predictor, model=model,
        tau2_method=fit.tau2_method if model == "rma" else "FE", fit=fit)


@dataclass(frozen=True, slots=True)
class RankTest(TestResult):
    """Begg & Mazumdar's rank correlation test (metafor's ``ranktest``).

    Parameters
    ----------
    statistic : float
        Kendall's tau (tau-b) between the standardized deviates and the sampling variances.
    pvalue : float
        Exact (fewer than 50 studies, no ties, as R's ``cor.test``) or the normal
        approximation with the tie correction.
    df : None
        No degrees of freedom.
    estimate : float
        Kendall's tau again (the quantity tested).
    se : float
        NaN: the test gives no standard error, so no interval.
    alternative : str, default 'two-sided'
        The test is two-sided.
    method : str
        Name of the test.
    extra : dict
        Nothing else.
    exact : bool, default False
        The p-value is exact.

    See Also
    --------
    rank_test : Builds it.
    RegressionTest : The regression test.

    References
    ----------
    .. [1] Begg, C. B. & Mazumdar, M. (1994). Operating Characteristics of a Rank Correlation
       Test for Publication Bias. Biometrics, 50(4), 1088–1101.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08])
    >>> r = rank_test(res)
    >>> round(r.statistic, 4), round(r.pvalue, 4), r.exact
    (1.0, 0.0028, True)
    """

    exact: bool = False

    def to_frame(self, confidence_level: float = 0.95):
        """One row: ``test``, Kendall's tau, its p-value and whether it is exact.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low, ci_high`` (NaN: the test gives no interval).

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        frame = TestResult.to_frame(self, confidence_level)
        frame.insert(0, "test", "rank correlation")
        return frame

    def __str__(self) -> str:
        return (f"Rank correlation test for funnel-plot asymmetry: Kendall's tau = "
                f"{number(self.statistic, 4)}, p {_p(self.pvalue)}"
                + (" (exact)" if self.exact else " (normal approximation)"))


#: R's cor.test(method = "kendall") computes the exact p-value below 50 pairs (without ties)
_RANK_EXACT_BELOW = 50


def rank_test(result) -> RankTest:
    """Begg & Mazumdar's (1994) rank correlation test for funnel-plot asymmetry.

    Parameters
    ----------
    result : MetaResult
        A model without moderators.

    Returns
    -------
    RankTest
        Kendall's tau and its p-value.

    Raises
    ------
    ParameterTypeError
        A model with moderators.

    See Also
    --------
    regression_test : Egger-type regression tests.
    small_study_effects : The tests and trim-and-fill together.

    Notes
    -----
    Kendall's tau between ``(y_i - b) / sqrt(v_i - 1 / sum w)`` (b the fixed-effect estimate,
    ``w = 1/v``) and ``v_i`` (Begg & Mazumdar 1994, eq. 1); exact p-value below 50 studies
    without ties, else the normal approximation with tie-corrected variance, as R's
    ``cor.test(method='kendall')`` called by metafor.

    References
    ----------
    .. [1] Begg, C. B. & Mazumdar, M. (1994). Operating Characteristics of a Rank Correlation
       Test for Publication Bias. Biometrics, 50(4), 1088–1101.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08])
    >>> round(rank_test(res).statistic, 4)
    1.0
    """
    from scipy import stats

    m = _model_of(result)
    if not m.intercept_only:
        raise ParameterTypeError("the rank test applies to models without moderators.")
    w = 1.0 / m.v
    theta = float((w * m.y).sum() / w.sum())
    v_star = m.v - 1.0 / w.sum()
    y_star = (m.y - theta) / np.sqrt(v_star)
    ties = len(np.unique(y_star)) < y_star.size or len(np.unique(m.v)) < m.v.size
    # R's cor.test (exact = NULL) is exact only below 50 pairs without ties; scipy's exact
    # distribution is also O(k^3)-slow (42 s at k = 2,000, hours at k = 100,000)
    exact = not ties and m.y.size < _RANK_EXACT_BELOW
    res = stats.kendalltau(y_star, m.v, method="exact" if exact else "asymptotic")
    tau = float(res.statistic)
    return RankTest(statistic=tau, pvalue=float(res.pvalue), df=None, estimate=tau, se=_NAN,
                    method="Rank correlation test for funnel-plot asymmetry", exact=exact)


def _funnel(original: MetaResult, ax=None, *, trimfill=None, regression=None, contours=None,
            refline=None, confidence_level: float = 0.95, xlabel: str = "estimate",
            title: str | None = None):
    """The funnel plot of ``original`` with the filled studies of ``trimfill`` and the line of
    ``regression`` (see :func:`replikit.replicate.funnel_plot`)."""
    from .._plotting import axes_or_new

    level = check_confidence_level(confidence_level)
    if contours is not None:
        contours = [check_confidence_level(c, "contours") for c in contours]
        centre = 0.0 if refline is None else float(refline)
    else:
        centre = original.estimate if refline is None else float(refline)
    filled = None
    if trimfill is not None:
        f = trimfill.filled[trimfill.filled["filled"]]
        filled = (f["estimate"].to_numpy(float), np.sqrt(f["v"].to_numpy(float)),
                  trimfill.estimate, f"filled ({trimfill.estimator}, k0 = {trimfill.k0})")
    line = None
    if regression is not None and regression.predictor == "se" and regression.has_limit:
        line = (regression.estimate, regression.slope,
                f"regression test (p {_p(regression.pvalue)})")
    ax = axes_or_new(ax, 5.6, 4.2)
    return _draw.funnel(ax, y=original.y, se=np.sqrt(np.asarray(original.v)),
                        estimate=original.estimate, centre=centre, level=level,
                        contours=contours, filled=filled, line=line, xlabel=xlabel,
                        title=title or f"Funnel plot, {original.model_label}, k = "
                                       f"{original.k}")


@dataclass(frozen=True, slots=True)
class TrimAndFill(Result):
    """Trim-and-fill analysis (Duval & Tweedie 2000; metafor's ``trimfill``).

    Parameters
    ----------
    k0 : int
        Estimated number of missing studies.
    se_k0 : float
        Its standard error.
    pvalue_k0 : float or None
        Test of "no missing studies on the chosen side" (R0 only): ``0.5^(k0 + 1)``.
    side : {'left', 'right'}
        Side of the funnel where studies were imputed.
    estimator : {'L0', 'R0'}
        The estimator of k0.
    meta : MetaResult
        The model refitted to the observed and filled studies (labels ``Filled 1, ...``).
    original : MetaResult
        The model of the observed studies.
    filled : DataFrame
        ``label, estimate, v, filled`` of every study, observed first.

    See Also
    --------
    trim_and_fill : Builds it.

    References
    ----------
    .. [1] Duval, S. & Tweedie, R. (2000). Trim and Fill: A Simple Funnel-Plot-Based Method of
       Testing and Adjusting for Publication Bias in Meta-Analysis. Biometrics, 56(2),
       455–463.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2, 0.45],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08, 0.2], tau2_method="FE")
    >>> taf = trim_and_fill(res)
    >>> taf.k0, round(taf.estimate, 3)
    (3, 0.252)
    """

    k0: int
    se_k0: float
    pvalue_k0: float | None
    side: str
    estimator: str
    meta: MetaResult = field(repr=False)
    original: MetaResult = field(repr=False)
    filled: object = field(repr=False)

    @property
    def estimate(self) -> float:
        """The pooled estimate with the filled studies."""
        return self.meta.estimate

    @property
    def title(self) -> str:
        return f"Trim-and-fill ({self.estimator})"

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval of the pooled estimate with the filled studies.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        return self.meta.confidence_interval(confidence_level)

    def to_frame(self):
        """One row: estimator, side, k0 with its SE and p-value, the filled model's estimate
        and interval and the observed studies' estimate.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        import pandas as pd

        ci = self.confidence_interval()
        return pd.DataFrame([{"test": "trim-and-fill", "estimator": self.estimator,
                              "side": self.side, "k0": self.k0, "se_k0": self.se_k0,
                              "pvalue": self.pvalue_k0, "k": self.meta.k,
                              "estimate": self.meta.estimate, "se": self.meta.se,
                              "ci_low": ci.low, "ci_high": ci.high,
                              "estimate_observed": self.original.estimate}])

    def plot(self, ax=None, *, contours=None, refline=None, title: str | None = None,
             xlabel: str = "estimate"):
        """Funnel plot of the observed (filled dots) and imputed (open dots) studies.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        contours : sequence of float, optional
            Confidence levels of a contour-enhanced funnel (e.g. ``(0.90, 0.95, 0.99)``).
        refline : float, optional
            Centre of the pseudo confidence region (default: the observed estimate).
        title : str, optional
            The title.
        xlabel : str, default 'estimate'
            Label of the x axis.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.
        """
        return _funnel(self.original, ax, trimfill=self, contours=contours, refline=refline,
                       title=title, xlabel=xlabel)

    def __str__(self) -> str:
        ci = self.confidence_interval()
        lines = [f"Trim-and-fill ({self.estimator}): estimated number of missing studies on "
                 f"the {self.side} side: {self.k0} (SE = {number(self.se_k0, 4)})"]
        if self.pvalue_k0 is not None:
            lines.append(f"  test of no missing studies on the {self.side} side: "
                         f"p {_p(self.pvalue_k0)}")
        lines.append(f"  {self.meta.model_label}, k = {self.meta.k}: estimate "
                     f"{number(self.meta.estimate, 4)} (SE {number(self.meta.se, 4)}), 95% CI "
                     f"{ci} (observed studies: {number(self.original.estimate, 4)})")
        return "\n".join(lines)


def _side(m: _rma.Model) -> str:
    """metafor's rule: the slope of the estimates on sqrt(v) in the model's meta-regression;
    negative -> studies missing on the right."""
    X = np.column_stack([np.ones(m.y.size), np.sqrt(m.v)])
    fit = _rma.fit(m.y, m.v, X, method=m.method, tol=m.tol)
    return "right" if fit.beta[1] < 0 else "left"


def _k0(signed: np.ndarray, k: int, estimator: str) -> tuple[float, float]:
    """Duval & Tweedie's L0 or R0 estimate of the number of missing studies and its SE."""
    if estimator == "R0":
        neg = -signed[signed < 0]
        k0_raw = (k - neg.max()) - 1 if neg.size else 0.0
        return k0_raw, math.sqrt(2 * max(0.0, k0_raw) + 2)
    sr = signed[signed > 0].sum()
    k0_raw = (4 * sr - k * (k + 1)) / (2 * k - 1)
    var_sr = (k * (k + 1) * (2 * k + 1) + 10 * k0_raw ** 3 + 27 * k0_raw ** 2
              + 17 * k0_raw - 18 * k * k0_raw ** 2 - 18 * k * k0_raw
              + 6 * k ** 2 * k0_raw) / 24
    return k0_raw, 4 * math.sqrt(max(var_sr, 0.0)) / (2 * k - 1)


def trim_and_fill(result, *, side: str | None = None, estimator: str = "L0",
                  max_iter: int = 100) -> TrimAndFill:
    """Trim-and-fill: how many studies are missing, and the estimate with them filled in.

    Parameters
    ----------
    result : MetaResult
        A model without moderators; the same model (estimator, test) is used throughout
        (metafor's "equal-equal" / "random-random" approach).
    side : {'left', 'right'}, optional
        Side of the funnel plot where studies are missing. Default as metafor: from the sign of
        the slope in the regression of the estimates on their standard errors (negative ->
        right).
    estimator : {'L0', 'R0'}, default 'L0'
        Duval & Tweedie's estimators of the number of missing studies (both recommended;
        R0 gives a test of k0 = 0).
    max_iter : int, default 100
        Trim-and-refit rounds before giving up.

    Returns
    -------
    TrimAndFill
        k0, the side, and the model refitted with the filled studies.

    Raises
    ------
    ParameterTypeError
        A model with moderators.
    ConvergenceError
        k0 did not settle in ``max_iter`` rounds.

    See Also
    --------
    regression_test : Egger-type regression tests.
    rank_test : Begg & Mazumdar's rank correlation test.
    funnel_plot : Draws the filled studies.

    Notes
    -----
    Iteratively trim the k0 most extreme studies on the chosen side, re-estimate the centre,
    rank the centred values (signed ranks ``r``); ``L0 = (4 S_r - k(k+1)) / (2k - 1)`` with
    ``S_r`` the sum of the positive ranks, ``R0 = gamma* - 1`` with ``gamma*`` the length of
    the rightmost run of positive ranks; finally mirror the k0 trimmed studies about the centre
    and refit. A sensitivity analysis for one selection mechanism, not a corrected estimate.
    Identical effects give k0 = 0 at once (every study is the centre; metafor's iteration does
    not converge there).

    References
    ----------
    .. [1] Duval, S. & Tweedie, R. (2000). Trim and Fill: A Simple Funnel-Plot-Based Method of
       Testing and Adjusting for Publication Bias in Meta-Analysis. Biometrics, 56(2),
       455–463.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2, 0.45],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08, 0.2], tau2_method="FE")
    >>> taf = trim_and_fill(res)
    >>> taf.side, taf.k0
    ('left', 3)
    """
    import pandas as pd

    if not isinstance(result, MetaResult):
        raise ParameterTypeError("trim-and-fill applies to a MetaResult (meta_analysis, no "
                                 f"moderators); got {type(result).__name__}.")
    estimator = check_choice(str(estimator).upper(), "estimator", ("L0", "R0"))
    max_iter = check_int(max_iter, "max_iter", min_value=1)
    m = result._model()
    if side is None:
        side = _side(m)
    side = check_choice(str(side).lower(), "side", ("left", "right"))
    sign = -1.0 if side == "right" else 1.0
    ys = sign * m.y
    idx = np.argsort(ys, kind="stable")
    ys, vs = ys[idx], m.v[idx]
    k = ys.size
    k0, k0_prev, it = 0, -1, 0
    se_k0 = 0.0
    beta = 0.0
    if np.ptp(m.y) == 0:  # identical effects: nothing is missing (the signs of their
        k0_prev = 0       # rounding errors about the centre never settle; metafor stops)
    while k0 != k0_prev:
        k0_prev = k0
        it += 1
        if it > max_iter:
            raise ConvergenceError(f"trim-and-fill did not converge in {max_iter} rounds; "
                                   "raise `max_iter`.")
        kt = k - k0
        # the centre by the QR path (an explicit column of ones): on a mirrored funnel its
        # rounding leaves the tied |y - centre| in the order trim-and-fill has always used
        beta = float(_rma.fit(ys[:kt], vs[:kt], np.ones((kt, 1)), method=m.method,
                              tol=m.tol).beta[0])
        yc = ys - beta
        order = np.argsort(np.abs(yc), kind="stable")
        ranks = np.empty(k)
        ranks[order] = np.arange(1, k + 1)
        k0_raw, se_k0 = _k0(np.sign(yc) * ranks, k, estimator)
        k0 = min(int(max(0, round(k0_raw))), k - 1)
        se_k0 = max(0.0, se_k0)
    labels = list(m.labels)
    if k0 > 0:
        # mirror the k0 largest (on the flipped scale) about the last centre
        y_fill = sign * (2 * beta - ys[k - k0:])
        v_fill = vs[k - k0:]
        new_labels = labels + [f"Filled {i + 1}" for i in range(k0)]
        meta = meta_analysis(np.r_[m.y, y_fill], np.r_[m.v, v_fill], labels=new_labels,
                             tau2_method=m.method, interval=m.interval,
                             knha_floor=m.knha_floor, pi_dist=result.pi_dist)
    else:
        y_fill, v_fill, new_labels, meta = np.empty(0), np.empty(0), labels, result
    filled = pd.DataFrame({"label": new_labels, "estimate": np.r_[m.y, y_fill],
                           "v": np.r_[m.v, v_fill],
                           "filled": [False] * k + [True] * k0})
    p_k0 = 0.5 ** (k0 + 1) if estimator == "R0" else None
    return TrimAndFill(k0, float(se_k0), p_k0, side, estimator, meta, result, filled)


@dataclass(frozen=True, slots=True)
class SmallStudyEffects(Result):
    """The funnel-plot asymmetry tests and trim-and-fill of one meta-analysis.

    Parameters
    ----------
    regression : RegressionTest
        Egger-type test (``model='rma'`` with the model's estimator, predictor SE).
    egger : RegressionTest
        The classical Egger test (``model='lm'``).
    rank : RankTest
        Begg & Mazumdar's test.
    trimfill : TrimAndFill
        Trim-and-fill.
    k : int
        Number of studies.
    caveats : tuple of str
        What limits the conclusions.

    See Also
    --------
    small_study_effects : Builds it.

    References
    ----------
    .. [1] Sterne, J. A. C., Sutton, A. J., Ioannidis, J. P. A., Terrin, N., Jones, D. R., Lau,
       J., Carpenter, J., Rücker, G., Harbord, R. M., Schmid, C. H. et al. (2011).
       Recommendations for Examining and Interpreting Funnel Plot Asymmetry in Meta-Analyses
       of Randomised Controlled Trials. BMJ, 343, d4002.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> sse = small_study_effects(meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2, 0.45],
    ...                           se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08, 0.2]))
    >>> sse.trimfill.k0
    3
    """

    regression: RegressionTest
    egger: RegressionTest
    rank: RankTest
    trimfill: TrimAndFill
    k: int
    caveats: tuple = ()

    @property
    def title(self) -> str:
        return f"Small-study effects (k = {self.k})"

    def to_frame(self):
        """One row per test: regression (meta-regression), Egger (weighted regression), rank,
        trim-and-fill.

        Returns
        -------
        pandas.DataFrame
            Four rows.
        """
        import pandas as pd

        rows = [self.regression.to_frame(), self.egger.to_frame(), self.rank.to_frame(),
                self.trimfill.to_frame()]
        return pd.concat(rows, ignore_index=True)

    def plot(self, ax=None, *, contours=None, refline=None, title: str | None = None,
             xlabel: str = "estimate"):
        """Funnel plot with the filled studies (open dots) and the regression test's line.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        contours : sequence of float, optional
            Confidence levels of a contour-enhanced funnel (e.g. ``(0.90, 0.95, 0.99)``).
        refline : float, optional
            Centre of the pseudo confidence region (default: the observed estimate).
        title : str, optional
            The title.
        xlabel : str, default 'estimate'
            Label of the x axis.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.
        """
        return _funnel(self.trimfill.original, ax, trimfill=self.trimfill,
                       regression=self.regression, contours=contours, refline=refline,
                       title=title, xlabel=xlabel)

    def __str__(self) -> str:
        lines = [str(self.regression), str(self.egger), str(self.rank), str(self.trimfill)]
        lines += [f"Caveat: {c}." for c in self.caveats]
        return "\n".join(lines)


def small_study_effects(result, *, estimator: str = "L0") -> SmallStudyEffects:
    """Regression tests, rank test and trim-and-fill of a meta-analysis in one call.

    Parameters
    ----------
    result : MetaResult
        A model without moderators.
    estimator : {'L0', 'R0'}, default 'L0'
        Trim-and-fill estimator.

    Returns
    -------
    SmallStudyEffects
        With a caveat when k < 10 (Sterne et al. 2011: the tests have too little power) and a
        reminder that asymmetry has causes other than selective publication.

    Raises
    ------
    ParameterTypeError
        A model with moderators.
    DataError
        Fewer than 3 studies.

    See Also
    --------
    regression_test : The regression tests.
    rank_test : The rank correlation test.
    trim_and_fill : Trim-and-fill.
    funnel_plot : The funnel plot.

    References
    ----------
    .. [1] Egger, M., Davey Smith, G., Schneider, M. & Minder, C. (1997). Bias in Meta-Analysis
       Detected by a Simple, Graphical Test. BMJ, 315(7109), 629–634.
    .. [2] Begg, C. B. & Mazumdar, M. (1994). Operating Characteristics of a Rank Correlation
       Test for Publication Bias. Biometrics, 50(4), 1088–1101.
    .. [3] Duval, S. & Tweedie, R. (2000). Trim and Fill: A Simple Funnel-Plot-Based Method of
       Testing and Adjusting for Publication Bias in Meta-Analysis. Biometrics, 56(2),
       455–463.
    .. [4] Sterne, J. A. C., Sutton, A. J., Ioannidis, J. P. A., Terrin, N., Jones, D. R., Lau,
       J., Carpenter, J., Rücker, G., Harbord, R. M., Schmid, C. H. et al. (2011).
       Recommendations for Examining and Interpreting Funnel Plot Asymmetry in Meta-Analyses
       of Randomised Controlled Trials. BMJ, 343, d4002.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2, 0.45],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08, 0.2])
    >>> sse = small_study_effects(res)
    >>> sse.to_frame()["test"].tolist()
    ['regression', 'regression', 'rank correlation', 'trim-and-fill']
    """
    if not isinstance(result, MetaResult):
        raise ParameterTypeError("`result` must be a MetaResult (meta_analysis); got "
                                 f"{type(result).__name__}.")
    if result.k < 3:
        raise DataError(f"small-study tests need at least 3 studies; got k = {result.k}.")
    caveats = []
    if result.k < 10:
        caveats.append(f"only {result.k} studies: funnel-plot tests have little power with "
                       "fewer than 10 (Sterne et al. 2011)")
    caveats.append("asymmetry can come from heterogeneity or true small-study differences, "
                   "not only from selective publication")
    return SmallStudyEffects(regression_test(result), regression_test(result, model="lm"),
                             rank_test(result), trim_and_fill(result, estimator=estimator),
                             result.k, tuple(caveats))
