"""Bounded metrics on a sensible scale: transform, meta-analyze, back-transform.

An R², AUC, accuracy or error rate lives in [0, 1]: near a bound its sampling distribution is
skewed and a symmetric ``estimate +- 1.96 se`` interval can leave the range. The usual remedy
(Borenstein et al. 2009, ch. 6; Viechtbauer 2010, sec. 3.1) is to pool on a scale where the
estimates are roughly normal with a stable variance, then back-transform the pooled estimate and
its interval for display:

==============  ===============================  ====================================  ========
scale           transform                        delta-method SE                       for
==============  ===============================  ====================================  ========
``logit``       ``log(p / (1 - p))``             ``se / (p (1 - p))``                  AUC, accuracy, error rates, proportions
``fisher_z``    ``atanh(r)``                     ``se / (1 - r^2)``                    correlations
``r2_z``        ``atanh(sqrt(R2))``              ``se / (2 sqrt(R2) (1 - R2))``        R², squared multiple correlations
``log``         ``log(x)``                       ``se / x``                            RMSE, MAE, log loss, ratios (> 0)
``identity``    ``x``                            ``se``                                unbounded differences
==============  ===============================  ====================================  ========

With the Olkin-Finn SE of R² (``4 R² (1 - R²)^2 / N``; Vijayakumar & Cheung 2021, eq. 1) the
``r2_z`` SE is
exactly ``1 / sqrt(N)``: Fisher's z of the multiple correlation, whose variance no longer
depends on R². Back-transformed intervals are asymmetric and stay inside the range; the
back-transformed pooled estimate is the median (not the mean) of the effect distribution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._compat import renamed
from .._format import interval as interval_text
from .._format import number, percent
from .._format import pvalue as p_text
from .._validation import check_choice, check_confidence_level
from ..errors import DataError
from ..results import ConfidenceInterval, Result
from .meta import MetaResult, meta_analysis, model_name

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SCALES", "to_scale", "from_scale", "default_scale", "ScaledMeta",
           "meta_analysis_on_scale"]

SCALES = ("logit", "fisher_z", "r2_z", "log", "identity")
_DOMAIN = {"logit": (0.0, 1.0, "in (0, 1)"), "fisher_z": (-1.0, 1.0, "in (-1, 1)"),
           "r2_z": (0.0, 1.0, "in (0, 1)"), "log": (0.0, np.inf, "> 0"),
           "identity": (-np.inf, np.inf, "finite")}
_METRIC_SCALES = {
    "r2": "r2_z", "roc_auc": "logit", "auc": "logit", "accuracy": "logit",
    "balanced_accuracy": "logit", "error_rate": "logit", "misclassification": "logit",
    "sensitivity": "logit", "specificity": "logit", "precision": "logit", "recall": "logit",
    "f1": "logit", "brier": "logit", "correlation": "fisher_z", "pearson_r": "fisher_z",
    "r": "fisher_z", "rmse": "log", "mae": "log", "mse": "log", "log_loss": "log",
}


def default_scale(metric: str) -> str:
    """The scale replikit pools a metric on.

    Parameters
    ----------
    metric : str
        A metric's name (``'r2'``, ``'roc_auc'``, ``'accuracy'``, ``'rmse'``, ...).

    Returns
    -------
    str
        ``'r2_z'`` for R², ``'logit'`` for AUC, accuracy and error rates, ``'fisher_z'`` for
        correlations, ``'log'`` for RMSE, MAE and log loss, ``'identity'`` for anything else.

    See Also
    --------
    to_scale : The transform with the delta-method SE.
    meta_analysis_on_scale : Pools on the scale.

    References
    ----------
    .. [1] Borenstein, M., Hedges, L. V., Higgins, J. P. T. & Rothstein, H. R. (2009).
       Introduction to Meta-Analysis (ch. 6). Wiley.

    Examples
    --------
    >>> default_scale("roc_auc"), default_scale("r2"), default_scale("rmse")
    ('logit', 'r2_z', 'log')
    """
    return _METRIC_SCALES.get(str(metric).strip().lower().replace("-", "_").replace(" ", "_"),
                              "identity")


def _check_domain(x: np.ndarray, scale: str, name: str) -> None:
    lo, hi, text = _DOMAIN[scale]
    bad = np.flatnonzero(~((x > lo) & (x < hi)))
    if bad.size:
        raise DataError(f"`{name}` on the {scale!r} scale must be {text}; found "
                        f"{x[bad[:5]].tolist()} at positions {bad[:5].tolist()}.")


def to_scale(estimate, se, scale: str):
    """Estimates and SEs on a transformed scale (first-order delta method).

    Parameters
    ----------
    estimate : array-like of shape (k,)
        The metric on its original scale.
    se : array-like of shape (k,)
        Its standard errors.
    scale : {'logit', 'fisher_z', 'r2_z', 'log', 'identity'}
        The transform ``g`` (see the module's table).

    Returns
    -------
    (y, se_y) : tuple of ndarray
        ``y = g(estimate)`` and ``se_y = |g'(estimate)| se``.

    Raises
    ------
    DataError
        An estimate outside the scale's domain or an SE that is not finite and > 0.

    See Also
    --------
    from_scale : The back-transform.
    meta_analysis_on_scale : Pools on the scale.

    Notes
    -----
    For R² with the Olkin-Finn SE, ``se_y = 1/sqrt(N)``: Fisher's z of the multiple
    correlation (Olkin & Finn 1995).

    References
    ----------
    .. [1] Borenstein, M., Hedges, L. V., Higgins, J. P. T. & Rothstein, H. R. (2009).
       Introduction to Meta-Analysis (ch. 6). Wiley.
    .. [2] Olkin, I. & Finn, J. D. (1995). Correlations Redux. Psychological Bulletin, 118(1),
       155–164.

    Examples
    --------
    >>> y, s = to_scale([0.8], [0.02], "logit")
    >>> round(float(y[0]), 4), round(float(s[0]), 4)
    (1.3863, 0.125)
    """
    scale = check_choice(str(scale).lower(), "scale", SCALES)
    x = np.asarray(estimate, float)
    s = np.asarray(se, float)
    _check_domain(x, scale, "estimate")
    if not np.all(np.isfinite(s) & (s > 0)):
        raise DataError("`se` must be finite and > 0.")
    if scale == "logit":
        return np.log(x / (1 - x)), s / (x * (1 - x))
    if scale == "fisher_z":
        return np.arctanh(x), s / (1 - x ** 2)
    if scale == "r2_z":
        r = np.sqrt(x)
        return np.arctanh(r), s / (2 * r * (1 - x))
    if scale == "log":
        return np.log(x), s / x
    return x.copy(), s.copy()


def from_scale(y, scale: str):
    """Back-transform values from ``scale`` (the inverse of :func:`to_scale`'s transform).

    Parameters
    ----------
    y : float or array-like
        Values on the transformed scale.
    scale : {'logit', 'fisher_z', 'r2_z', 'log', 'identity'}
        The transform to undo.

    Returns
    -------
    ndarray
        The values on the original scale (R² from ``r2_z`` is 0 for negative z).

    See Also
    --------
    to_scale : The transform.

    References
    ----------
    .. [1] Borenstein, M., Hedges, L. V., Higgins, J. P. T. & Rothstein, H. R. (2009).
       Introduction to Meta-Analysis (ch. 6). Wiley.

    Examples
    --------
    >>> round(float(from_scale(0.0, "logit")), 2), round(float(from_scale(0.5, "r2_z")), 4)
    (0.5, 0.2136)
    """
    scale = check_choice(str(scale).lower(), "scale", SCALES)
    y = np.asarray(y, float)
    if scale == "logit":
        return 1.0 / (1.0 + np.exp(-y))
    if scale == "fisher_z":
        return np.tanh(y)
    if scale == "r2_z":
        return np.tanh(np.maximum(y, 0.0)) ** 2
    if scale == "log":
        return np.exp(y)
    return y


@dataclass(frozen=True, slots=True)
class ScaledMeta(Result):
    """A meta-analysis pooled on a transformed scale, shown on the original one.

    Parameters
    ----------
    meta : MetaResult
        The meta-analysis on the transformed scale (every statistic, test and heterogeneity).
    scale : str
        The scale (``'logit'``, ``'fisher_z'``, ``'r2_z'``, ``'log'`` or ``'identity'``).
    estimates, se : tuple
        The inputs on the original scale.

    See Also
    --------
    meta_analysis_on_scale : Builds it.
    MetaResult : The meta-analysis on the transformed scale.

    References
    ----------
    .. [1] Borenstein, M., Hedges, L. V., Higgins, J. P. T. & Rothstein, H. R. (2009).
       Introduction to Meta-Analysis. Wiley.

    Examples
    --------
    >>> res = meta_analysis_on_scale([0.91, 0.95, 0.88, 0.97], [0.02, 0.01, 0.03, 0.01],
    ...                              metric="roc_auc", tau2_method="DL")
    >>> ci = res.confidence_interval()
    >>> round(ci.low, 3), round(ci.high, 3)
    (0.889, 0.962)
    """

    meta: MetaResult = field(repr=False)
    scale: str
    estimates: tuple = field(repr=False)
    se: tuple = field(repr=False)

    @property
    def estimate(self) -> float:
        """The back-transformed pooled estimate (the median effect on the original scale)."""
        return float(from_scale(self.meta.estimate, self.scale))

    @property
    def title(self) -> str:
        return f"{self.meta.title} on the {self.scale} scale"

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Back-transformed interval of the pooled estimate.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)`` on the original scale.
        """
        ci = self.meta.confidence_interval(confidence_level)
        return ConfidenceInterval(float(from_scale(ci.low, self.scale)),
                                  float(from_scale(ci.high, self.scale)))

    @renamed(dist="pi_dist")
    def prediction_interval(self, confidence_level: float = 0.95,
                            pi_dist: str | None = None) -> ConfidenceInterval:
        """Back-transformed prediction interval for the true value of a new study.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.
        pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
            Reference distribution (default: the meta-analysis's).

        Returns
        -------
        ConfidenceInterval
            ``(low, high)`` on the original scale.
        """
        pi = self.meta.prediction_interval(confidence_level, pi_dist)
        return ConfidenceInterval(float(from_scale(pi.low, self.scale)),
                                  float(from_scale(pi.high, self.scale)))

    def study_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """Studies with intervals computed on the transformed scale and back-transformed.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the studies' intervals.

        Returns
        -------
        pandas.DataFrame
            ``label, estimate, se, ci_low, ci_high, weight, scale``.
        """
        from scipy import stats

        level = check_confidence_level(confidence_level)
        f = self.meta.study_frame()
        z = stats.norm.ppf((1 + level) / 2)
        y = f["estimate"].to_numpy()
        s = f["se"].to_numpy()
        return f.assign(estimate=np.asarray(self.estimates), se=np.asarray(self.se),
                        ci_low=from_scale(y - z * s, self.scale),
                        ci_high=from_scale(y + z * s, self.scale), scale=self.scale)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """The transformed-scale row of :meth:`MetaResult.to_frame` with the back-transformed
        ``estimate_original, ci_low_original, ci_high_original, pi_low_original,
        pi_high_original`` and ``scale``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        out = self.meta.to_frame(confidence_level)
        ci = self.confidence_interval(confidence_level)
        pi = self.prediction_interval(confidence_level)
        return out.assign(scale=self.scale, estimate_original=self.estimate,
                          ci_low_original=ci.low, ci_high_original=ci.high,
                          pi_low_original=pi.low, pi_high_original=pi.high)

    def plot(self, ax=None, *, xlabel: str = "estimate", title: str | None = None, **kwargs):
        """Forest plot on the original scale (intervals back-transformed).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        xlabel : str, default 'estimate'
            Label of the x axis.
        title : str, optional
            A title above the caption line.
        **kwargs
            Other options of :meth:`MetaResult.plot` (``confidence_level``, ``digits``,
            ``prediction_interval``, ``refline``: none by default).

        Returns
        -------
        matplotlib Axes
            The axes drawn on.
        """
        kwargs.setdefault("refline", None)
        return self.meta.plot(ax, transform=_inverse(self.scale), xlabel=xlabel, title=title,
                              **kwargs)

    def __str__(self) -> str:
        ci = self.confidence_interval()
        pi = self.prediction_interval()
        m = self.meta
        return (f"{self.title}, back-transformed; {model_name(m.tau2_method)}\n"
                f"  estimate = {number(self.estimate, 4)}, 95% CI "
                f"{interval_text(ci.low, ci.high, 4)}, 95% prediction interval "
                f"{interval_text(pi.low, pi.high, 4)}\n"
                f"  on the {self.scale} scale: {number(m.estimate, 4)} (SE {number(m.se, 4)}), "
                f"τ² = {number(m.tau2, 4)}, I² = {percent(m.i2_tau / 100, 3)}, "
                f"Q({m.q_df}) = {number(m.q, 5)}, p {_p(m.q_pvalue)}")


def _p(p: float) -> str:
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def meta_analysis_on_scale(estimates, se, *, scale: str | None = None, metric: str | None = None,
                           labels=None, tau2_method: str = "REML", interval: str = "wald",
                           knha_floor: bool = False, pi_dist: str | None = None) -> ScaledMeta:
    """Meta-analysis of a bounded metric on a transformed scale, back-transformed for display.

    Parameters
    ----------
    estimates, se : array-like of shape (k,)
        The metric per study (R², AUC, accuracy, ...) and its SE on the original scale.
    scale : {'logit', 'fisher_z', 'r2_z', 'log', 'identity'}, optional
        Default: :func:`default_scale` of ``metric`` (``'identity'`` without a metric).
    metric : str, optional
        The metric's name, to choose the scale.
    labels : sequence of str, optional
        Study labels.
    tau2_method : {'FE', 'DL', 'REML', 'ML', 'PM', 'HE', 'SJ', 'HS'}, default 'REML'
        As :func:`~replikit.replicate.meta_analysis`.
    interval : {'wald', 'knha'}, default 'wald'
        As :func:`~replikit.replicate.meta_analysis`.
    knha_floor : bool, default False
        As :func:`~replikit.replicate.meta_analysis`.
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        As :func:`~replikit.replicate.meta_analysis`.

    Returns
    -------
    ScaledMeta
        The meta-analysis on the scale, with its estimate and intervals back-transformed.

    See Also
    --------
    meta_analysis : The meta-analysis on the original scale.
    to_scale : The transform.

    Notes
    -----
    Transform ``y = g(x)``, ``se_y = |g'(x)| se`` (delta method), pool by
    :func:`~replikit.replicate.meta_analysis`, report ``g^-1`` of the pooled estimate and of the
    interval bounds (metafor's ``transf=``). On R² (Vijayakumar & Cheung 2021) the pooled value
    stays inside [0, 1].

    References
    ----------
    .. [1] Borenstein, M., Hedges, L. V., Higgins, J. P. T. & Rothstein, H. R. (2009).
       Introduction to Meta-Analysis (ch. 6). Wiley.
    .. [2] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> res = meta_analysis_on_scale([0.91, 0.95, 0.88, 0.97], [0.02, 0.01, 0.03, 0.01],
    ...                              metric="roc_auc", tau2_method="DL")
    >>> res.scale, round(res.estimate, 3)
    ('logit', 0.935)
    """
    if scale is None:
        scale = default_scale(metric) if metric is not None else "identity"
    scale = check_choice(str(scale).lower(), "scale", SCALES)
    x = np.asarray(estimates, float)
    s = np.asarray(se, float)
    if x.shape != s.shape or x.ndim != 1:
        raise DataError(f"`estimates` and `se` must be 1-D of the same length; got "
                        f"{x.shape} and {s.shape}.")
    y, sy = to_scale(x, s, scale)
    meta = meta_analysis(y, se=sy, labels=labels, tau2_method=tau2_method, interval=interval,
                         knha_floor=knha_floor, pi_dist=pi_dist)
    return ScaledMeta(meta, scale, tuple(x.tolist()), tuple(s.tolist()))


def _inverse(transform):
    """A callable for ``transform``: a scale name (its back-transform) or a callable."""
    if transform is None:
        return None
    if callable(transform):
        return transform
    scale = check_choice(str(transform).lower(), "transform", SCALES)
    return lambda y: from_scale(y, scale)

