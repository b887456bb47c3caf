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
large studies, or chance give the same picture (Sterne et al. 2011, BMJ 343:d4002, who also
advise against these tests with fewer than 10 studies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_choice, check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval

if TYPE_CHECKING:
    import pandas as pd

    from .meta import MetaResult
    from .metareg import MetaRegression

__all__ = ["PREDICTORS", "RegressionTest", "regression_test", "RankTest", "rank_test",
           "TrimAndFill", "trim_and_fill", "SmallStudyEffects", "small_study_effects"]

PREDICTORS = ("se", "variance", "n", "inv_n", "sqrt_n", "inv_sqrt_n")
_PREDICTOR_NAMES = {"se": "standard error", "variance": "sampling variance",
                    "n": "sample size", "inv_n": "inverse of the sample size",
                    "sqrt_n": "square root of the sample size",
                    "inv_sqrt_n": "inverse of the square root of the sample size"}
_LIMIT = {"se": "as se -> 0", "variance": "as v -> 0", "inv_n": "as n -> inf",
          "inv_sqrt_n": "as n -> inf"}


def _p_is(p: float) -> str:
    return "p < .0001" if p < 1e-4 else f"p = {p:.4f}"


@dataclass(frozen=True, slots=True)
class RegressionTest:
    """Regression test for funnel-plot asymmetry (metafor's ``regtest``).

    Attributes
    ----------
    statistic : float
        z (``model='rma'`` with z tests) or t of the predictor's coefficient.
    df : float or None
        Residual df of a t test (k - p - 1), None for z.
    pvalue : float
    slope, slope_se : float
        The predictor's coefficient and its SE.
    estimate : float or None
        The limit estimate: the intercept, i.e. the effect predicted for a study of infinite
        precision (for the predictors se, variance, inv_n and inv_sqrt_n in a model without
        other moderators), as metafor reports it; None otherwise.
    predictor, model, method : str
    fit : MetaRegression
        The fitted regression (draw its line on the funnel plot).
    """

    statistic: float
    df: float | None
    pvalue: float
    slope: float
    slope_se: float
    estimate: float | None
    predictor: str
    model: str
    method: str
    fit: MetaRegression = field(repr=False)
    _limit_ci: tuple = field(default=(None, None), repr=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval of the limit estimate (z, or t with the test's df)."""
        if self.estimate is None:
            raise ParameterError(f"no limit estimate for predictor {self.predictor!r} or a "
                                 "model with moderators.")
        lo, hi = self.fit.confidence_interval(confidence_level)
        return ConfidenceInterval(float(lo[0]), float(hi[0]))

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        import pandas as pd

        ci = (self.confidence_interval(confidence_level) if self.estimate is not None
              else ConfidenceInterval(float("nan"), float("nan")))
        return pd.DataFrame([{"test": "regression", "model": self.model,
                              "predictor": self.predictor, "method": self.method,
                              "statistic": self.statistic, "df": self.df,
                              "pvalue": self.pvalue, "slope": self.slope,
                              "slope_se": self.slope_se, "estimate": self.estimate,
                              "ci_low": ci.low, "ci_high": ci.high}])

    def __str__(self) -> str:
        model = ("weighted regression with multiplicative dispersion" if self.model == "lm"
                 else "mixed-effects meta-regression model" if self.method != "FE"
                 else "fixed-effects meta-regression model")
        stat = (f"t = {self.statistic:.4f}, df = {self.df:g}" if self.df is not None
                else f"z = {self.statistic:.4f}")
        lines = [f"Regression test for funnel-plot asymmetry ({model}; predictor: "
                 f"{_PREDICTOR_NAMES[self.predictor]}): {stat}, {_p_is(self.pvalue)}"]
        if self.estimate is not None:
            ci = self.confidence_interval()
            lines.append(f"  limit estimate ({_LIMIT[self.predictor]}): b = "
                         f"{self.estimate:.4f} (CI: {ci.low:.4f}, {ci.high:.4f})")
        return "\n".join(lines)


def _base(result):
    """(y, v, X without the intercept as a dict, intercept?, labels, method, ci, floor, tol)."""
    from .influence import _model_of

    m = _model_of(result)
    mods = {nm: m.X[:, j] for j, nm in enumerate(m.names) if nm != "intercept"}
    return m, mods, "intercept" in m.names


def regression_test(result, *, predictor: str = "se", model: str = "rma", n=None
                    ) -> RegressionTest:
    """Egger-type regression test for funnel-plot asymmetry (metafor's ``regtest``).

    Parameters
    ----------
    result : MetaResult or MetaRegression
        The model; its moderators stay in the test's model.
    predictor : {'se', 'variance', 'n', 'inv_n', 'sqrt_n', 'inv_sqrt_n'}
        The measure of precision added as a moderator (metafor's ``sei``, ``vi``, ``ni``,
        ``ninv``, ``sqrtni``, ``sqrtninv``).
    model : {'rma', 'lm'}
        ``'rma'``: a meta-regression with the model's tau2 estimator and test (metafor's
        default); ``'lm'``: weighted least squares with weights ``1/v`` and a multiplicative
        dispersion parameter, t(k - p - 1) — the classical Egger test (Egger, Davey Smith,
        Schneider & Minder 1997, BMJ 315, 629-634; Sterne & Egger 2005).
    n : array-like of shape (k,), optional
        Sample sizes, for the n-based predictors.

    Returns
    -------
    RegressionTest
        The test of the predictor's coefficient and, for SE, variance, 1/n and 1/sqrt(n) in
        a model without other moderators, the limit estimate (intercept) with its interval.

    Notes
    -----
    Egger's test regresses ``y_i / se_i`` on ``1 / se_i``; with weights ``1/v`` the regression
    of ``y_i`` on ``se_i`` is the same model, whose slope is Egger's intercept (Sterne & Egger
    2005, in Rothstein et al., *Publication bias in meta-analysis*, ch. 6). The mixed-effects
    version adds tau2 (Thompson & Sharp 1999). Example:
    ``regression_test(meta_analysis(y, v), model='lm')``.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08])
    >>> test = regression_test(res, model="lm")
    >>> round(test.statistic, 3), test.df
    (15.149, 4.0)
    """
    from .metareg import meta_regression

    predictor = check_choice(str(predictor).lower(), "predictor", PREDICTORS)
    model = check_choice(str(model).lower(), "model", ("rma", "lm"))
    m, mods, has_int = _base(result)
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
    mods = dict(mods)
    mods[name] = x
    if model == "rma":
        fit = meta_regression(m.y, m.v, moderators=mods, intercept=has_int, labels=m.labels,
                              tau2_method=m.method, interval=m.ci, knha_floor=m.knha_floor,
                              tol=m.tol)
    else:
        fit = meta_regression(m.y, m.v, moderators=mods, intercept=has_int, labels=m.labels,
                              tau2_method="FE", interval="knha")
    j = fit.names.index(name)
    has_limit = predictor in _LIMIT and has_int and len(mods) == 1
    return RegressionTest(
        statistic=float(fit.statistic[j]), df=fit.df, pvalue=float(fit.pvalue[j]),
        slope=float(fit.beta[j]), slope_se=float(fit.se[j]),
        estimate=float(fit.beta[0]) if has_limit else None, predictor=predictor, model=model,
        method=fit.tau2_method if model == "rma" else "FE", fit=fit)


@dataclass(frozen=True, slots=True)
class RankTest:
    """Begg & Mazumdar's rank correlation test (metafor's ``ranktest``).

    Attributes
    ----------
    statistic : float
        Kendall's tau (tau-b) between the standardized deviates and the sampling variances.
    pvalue : float
        Exact (fewer than 50 studies, no ties, as R's ``cor.test``) or the normal
        approximation with the tie correction.
    exact : bool
    """

    statistic: float
    pvalue: float
    exact: bool

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([{"test": "rank correlation", "statistic": self.statistic,
                              "pvalue": self.pvalue, "exact": self.exact}])

    def __str__(self) -> str:
        return (f"Rank correlation test for funnel-plot asymmetry: Kendall's tau = "
                f"{self.statistic:.4f}, {_p_is(self.pvalue)}"
                + (" (exact)" if self.exact else " (normal approximation)"))


def rank_test(result) -> RankTest:
    """Begg & Mazumdar's (1994) rank correlation test for funnel-plot asymmetry.

    Parameters
    ----------
    result : MetaResult
        A model without moderators.

    Returns
    -------
    RankTest

    Notes
    -----
    Kendall's tau between ``(y_i - b) / sqrt(v_i - 1 / sum w)`` (b the fixed-effect estimate,
    ``w = 1/v``) and ``v_i`` (Begg & Mazumdar 1994, Biometrics 50, 1088-1101, eq. 1); exact
    p-value below 50 studies without ties, else the normal approximation with tie-corrected
    variance, as R's ``cor.test(method='kendall')`` (``exact = NULL``) called by metafor.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08])
    >>> round(rank_test(res).statistic, 4)
    1.0
    """
    from scipy import stats

    from .influence import _model_of

    m = _model_of(result)
    if m.X.shape[1] != 1 or "intercept" not in m.names:
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
    return RankTest(float(res.statistic), float(res.pvalue), exact)


#: R's cor.test(method = "kendall") computes the exact p-value below 50 pairs (without ties)
_RANK_EXACT_BELOW = 50


@dataclass(frozen=True, slots=True)
class TrimAndFill:
    """Trim-and-fill analysis (Duval & Tweedie 2000; metafor's ``trimfill``).

    Attributes
    ----------
    k0 : int
        Estimated number of missing studies.
    se_k0 : float
    pvalue_k0 : float or None
        Test of "no missing studies on the chosen side" (R0 only): ``0.5^(k0 + 1)``.
    side : {'left', 'right'}
        Side of the funnel where studies were imputed.
    estimator : {'L0', 'R0'}
    meta : MetaResult
        The model refitted to the observed and filled studies (labels ``Filled 1, ...``).
    original : MetaResult
    filled : DataFrame
        ``label, estimate, v, filled`` of every study, observed first.
    """

    k0: int
    se_k0: float
    pvalue_k0: float | None
    side: str
    estimator: str
    meta: MetaResult = field(repr=False)
    original: MetaResult = field(repr=False)
    filled: pd.DataFrame = field(repr=False)

    @property
    def estimate(self) -> float:
        return self.meta.estimate

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        return self.meta.confidence_interval(confidence_level)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        ci = self.confidence_interval()
        return pd.DataFrame([{"test": "trim-and-fill", "estimator": self.estimator,
                              "side": self.side, "k0": self.k0, "se_k0": self.se_k0,
                              "pvalue": self.pvalue_k0, "k": self.meta.k,
                              "estimate": self.meta.estimate, "se": self.meta.se,
                              "ci_low": ci.low, "ci_high": ci.high,
                              "estimate_observed": self.original.estimate}])

    def plot(self, *, ax=None, contours=None, refline=None, title: str | None = None,
             xlabel: str = "estimate"):
        """Funnel plot of the observed (filled dots) and imputed (open dots) studies."""
        from .plots import funnel_plot

        return funnel_plot(self.original, ax=ax, trimfill=self, contours=contours,
                           refline=refline, title=title, xlabel=xlabel)

    def __str__(self) -> str:
        ci = self.confidence_interval()
        lines = [f"Trim-and-fill ({self.estimator}): estimated number of missing studies on "
                 f"the {self.side} side: {self.k0} (SE = {self.se_k0:.4f})"]
        if self.pvalue_k0 is not None:
            lines.append(f"  test of H0 no missing studies on the {self.side} side: "
                         f"{_p_is(self.pvalue_k0)}")
        lines.append(f"  {self.meta.model_label}, k = {self.meta.k}: estimate "
                     f"{self.meta.estimate:.4f} (SE {self.meta.se:.4f}), 95% CI "
                     f"[{ci.low:.4f}, {ci.high:.4f}] (observed studies: "
                     f"{self.original.estimate:.4f})")
        return "\n".join(lines)


def _side(m) -> str:
    """metafor's rule: the slope of the estimates on sqrt(v) in the model's meta-regression;
    negative -> studies missing on the right."""
    from .metareg import _fit_stack

    X = np.column_stack([np.ones(m.y.size), np.sqrt(m.v)])
    fit = _fit_stack(m.y, m.v, X, method=m.method, tol=m.tol)
    return "right" if fit.beta[1] < 0 else "left"


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
    estimator : {'L0', 'R0'}
        Duval & Tweedie's estimators of the number of missing studies (both recommended;
        R0 gives a test of k0 = 0).
    max_iter : int

    Returns
    -------
    TrimAndFill

    Notes
    -----
    Duval & Tweedie (2000a, Biometrics 56, 455-463; 2000b, JASA 95, 89-98): iteratively trim
    the k0 most extreme studies on the chosen side, re-estimate the centre, rank the centred
    values (signed ranks ``r``); ``L0 = (4 S_r - k(k+1)) / (2k - 1)`` with ``S_r`` the sum of
    the positive ranks, ``R0 = gamma* - 1`` with ``gamma*`` the length of the rightmost run of
    positive ranks; finally mirror the k0 trimmed studies about the centre and refit. A
    sensitivity analysis for one selection mechanism, not a corrected estimate.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2, 0.45],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08, 0.2], method="FE")
    >>> taf = trim_and_fill(res)
    >>> taf.side, taf.k0
    ('left', 3)
    """
    from .influence import _model_of
    from .meta import MetaResult, meta_analysis
    from .metareg import _fit_stack

    if not isinstance(result, MetaResult):
        raise ParameterTypeError("trim-and-fill applies to a MetaResult (meta_analysis, no "
                                 f"moderators); got {type(result).__name__}.")
    estimator = check_choice(str(estimator).upper(), "estimator", ("L0", "R0"))
    max_iter = check_int(max_iter, "max_iter", min_value=1)
    m = _model_of(result)
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
    while k0 != k0_prev:
        k0_prev = k0
        it += 1
        if it > max_iter:
            from ..errors import ConvergenceError

            raise ConvergenceError(f"trim-and-fill did not converge in {max_iter} iterations; "
                                   "raise `max_iter`.")
        kt = k - k0
        fit = _fit_stack(ys[:kt], vs[:kt], np.ones((kt, 1)), method=m.method, tol=m.tol)
        beta = float(fit.beta[0])
        yc = ys - beta
        order = np.argsort(np.abs(yc), kind="stable")
        ranks = np.empty(k)
        ranks[order] = np.arange(1, k + 1)
        signed = np.sign(yc) * ranks
        if estimator == "R0":
            neg = -signed[signed < 0]
            k0_raw = (k - neg.max()) - 1 if neg.size else 0.0
            se_k0 = math.sqrt(2 * max(0.0, k0_raw) + 2)
        else:
            sr = signed[signed > 0].sum()
            k0_raw = (4 * sr - k * (k + 1)) / (2 * k - 1)
            var_sr = (k * (k + 1) * (2 * k + 1) + 10 * k0_raw ** 3 + 27 * k0_raw ** 2
                      + 17 * k0_raw - 18 * k * k0_raw ** 2 - 18 * k * k0_raw
                      + 6 * k ** 2 * k0_raw) / 24
            se_k0 = 4 * math.sqrt(max(var_sr, 0.0)) / (2 * k - 1)
        k0 = int(max(0, round(k0_raw)))
        se_k0 = max(0.0, se_k0)
        k0 = min(k0, k - 1)
    import pandas as pd

    labels = list(m.labels)
    if k0 > 0:
        # mirror the k0 largest (on the flipped scale) about the last centre
        y_fill = sign * (2 * beta - ys[k - k0:])
        v_fill = vs[k - k0:]
        new_labels = labels + [f"Filled {i + 1}" for i in range(k0)]
        meta = meta_analysis(np.r_[m.y, y_fill], np.r_[m.v, v_fill], labels=new_labels,
                             tau2_method=m.method, interval=m.ci, knha_floor=m.knha_floor,
                             pi_dist=result.pi_dist)
    else:
        y_fill, v_fill, new_labels, meta = np.empty(0), np.empty(0), labels, result
    filled = pd.DataFrame({"label": new_labels, "estimate": np.r_[m.y, y_fill],
                           "v": np.r_[m.v, v_fill],
                           "filled": [False] * k + [True] * k0})
    p_k0 = 0.5 ** (k0 + 1) if estimator == "R0" else None
    return TrimAndFill(k0, float(se_k0), p_k0, side, estimator, meta, result, filled)


@dataclass(frozen=True, slots=True)
class SmallStudyEffects:
    """The funnel-plot asymmetry tests and trim-and-fill of one meta-analysis.

    Attributes
    ----------
    regression : RegressionTest
        Egger-type test (``model='rma'`` with the model's estimator, predictor SE).
    egger : RegressionTest
        The classical Egger test (``model='lm'``).
    rank : RankTest
    trimfill : TrimAndFill
    k : int
    caveats : tuple of str
    """

    regression: RegressionTest
    egger: RegressionTest
    rank: RankTest
    trimfill: TrimAndFill
    k: int
    caveats: tuple = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per test: regression (rma), Egger (lm), rank, trim-and-fill."""
        import pandas as pd

        rows = [self.regression.to_frame(), self.egger.to_frame(), self.rank.to_frame(),
                self.trimfill.to_frame()]
        return pd.concat(rows, ignore_index=True)

    def plot(self, *, ax=None, contours=None, refline=None, title: str | None = None,
             xlabel: str = "estimate"):
        """Funnel plot with the filled studies (open dots) and the Egger line."""
        from .plots import funnel_plot

        return funnel_plot(self.trimfill.original, ax=ax, trimfill=self.trimfill,
                           regression=self.regression, contours=contours, refline=refline,
                           title=title, xlabel=xlabel)

    def __str__(self) -> str:
        lines = [str(self.regression), str(self.egger), str(self.rank), str(self.trimfill)]
        lines += [f"caveat: {c}" for c in self.caveats]
        return "\n".join(lines)


def small_study_effects(result, *, estimator: str = "L0") -> SmallStudyEffects:
    """Regression tests, rank test and trim-and-fill of a meta-analysis in one call.

    Parameters
    ----------
    result : MetaResult
    estimator : {'L0', 'R0'}
        Trim-and-fill estimator.

    Returns
    -------
    SmallStudyEffects
        With a caveat when k < 10 (Sterne et al. 2011: the tests have too little power) and a
        reminder that asymmetry has causes other than selective publication.

    Notes
    -----
    See :func:`regression_test`, :func:`rank_test`, :func:`trim_and_fill`. Example:
    ``small_study_effects(meta_analysis(y, v)).plot()``.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25, 0.2, 0.45],
    ...                     se=[0.40, 0.30, 0.25, 0.12, 0.10, 0.08, 0.2])
    >>> sse = small_study_effects(res)
    >>> sse.to_frame()["test"].tolist()
    ['regression', 'regression', 'rank correlation', 'trim-and-fill']
    """
    from .meta import MetaResult

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

