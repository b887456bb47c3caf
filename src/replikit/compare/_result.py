"""Result types of the two-model comparisons: :class:`ComparisonResult` and :class:`BayesianResult`.

A :class:`ComparisonResult` is a :class:`~replikit.results.TestResult` (statistic, p-value, df,
the mean difference ``a - b`` and its standard error under the test's own variance) that also
says which test it is, whether the test is valid for resampled scores, which resampling scheme it
needs, how many paired units it rests on and which two models and metric it compares.

A :class:`BayesianResult` is the posterior of the mean difference of the Bayesian correlated
t-test (Corani & Benavoli 2015): the probabilities that ``a - b`` lies left of, inside or right of
a region of practical equivalence (ROPE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd
from scipy import stats

from .._validation import check_confidence_level
from ..results import ConfidenceInterval, TestResult

__all__ = ["ComparisonResult", "BayesianResult", "FRAME_COLUMNS"]

#: Column order of :meth:`ComparisonResult.to_frame`.
FRAME_COLUMNS = ("test", "method", "a", "b", "metric", "estimate", "se", "statistic", "df",
                 "df2", "pvalue", "ci_low", "ci_high", "valid", "requires", "n", "alternative")


def _fmt(x) -> str:
    if x is None:
        return "None"
    return f"{x:.4g}"


@dataclass(frozen=True, slots=True)
class ComparisonResult(TestResult):
    """A test of the difference in performance of two models, ``a - b``.

    Attributes
    ----------
    statistic, pvalue, df, estimate, se, alternative, method, extra
        As in :class:`~replikit.results.TestResult`. ``estimate`` is the mean difference of the
        metric, model ``a`` minus model ``b``, over the paired units (splits); ``se`` its
        standard error under the test's own variance, so that ``confidence_interval`` is the
        interval that goes with the test.
    test : str
        Short identifier, e.g. ``'corrected_repeated_kfold_t'``, ``'mcnemar_exact'``.
    valid : bool
        ``False`` for tests kept only for comparison and teaching (the naive paired t on
        resampled scores, the difference-of-proportions z), which emit a
        :class:`~replikit.errors.ValidityWarning`.
    requires : str
        The sampling scheme the test is calibrated for (``'repeated k-fold'``, ``'5x2'``, ...).
    df2 : float or None
        Denominator degrees of freedom of an F test (``df`` is then the numerator's).
    n : int
        Number of paired units the test rests on (splits, observations).
    a, b, metric : str
        The two models compared and the metric.

    Notes
    -----
    F tests (the 5x2cv combined F) have no interval for the mean difference: their
    :meth:`confidence_interval` is ``[nan, nan]``.
    """

    test: str = ""
    valid: bool = True
    requires: str = ""
    df2: float | None = None
    n: int = 0
    a: str = ""
    b: str = ""
    metric: str = ""

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for the mean difference ``estimate ± q · se`` (``[nan, nan]`` for F tests).

        ``q`` is the Student t quantile with the test's ``df`` (normal for z tests); one-sided
        alternatives give one-sided intervals, as in scipy.stats.
        """
        if self.df2 is not None:
            check_confidence_level(confidence_level)
            return ConfidenceInterval(math.nan, math.nan)
        return TestResult.confidence_interval(self, confidence_level)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One tidy row with the columns of :data:`FRAME_COLUMNS`."""
        ci = self.confidence_interval(confidence_level)
        row = {
            "test": self.test, "method": self.method, "a": self.a, "b": self.b,
            "metric": self.metric, "estimate": self.estimate, "se": self.se,
            "statistic": self.statistic, "df": self.df, "df2": self.df2,
            "pvalue": self.pvalue, "ci_low": ci.low, "ci_high": ci.high, "valid": self.valid,
            "requires": self.requires, "n": self.n, "alternative": self.alternative,
        }
        frame = pd.DataFrame([row], columns=list(FRAME_COLUMNS))
        return frame.astype({"df": float, "df2": float})

    def __str__(self) -> str:
        name = self.method or self.test or type(self).__name__
        pair = f"{self.a} - {self.b}" if (self.a or self.b) else "a - b"
        metric = f" ({self.metric})" if self.metric else ""
        lines = [f"{name}{'' if self.valid else '  [INVALID for resampled scores]'}",
                 f"  {pair}{metric}: mean difference = {_fmt(self.estimate)} "
                 f"(SE {_fmt(self.se)}), n = {self.n}"]
        if self.df2 is None:
            lines.append(f"  95% CI {self.confidence_interval()}")
            df = "" if self.df is None else f", df = {_fmt(self.df)}"
        else:
            df = f", df = ({_fmt(self.df)}, {_fmt(self.df2)})"
        lines.append(f"  statistic = {_fmt(self.statistic)}{df}, p = {_fmt(self.pvalue)} "
                     f"({self.alternative})")
        if self.requires:
            lines.append(f"  requires: {self.requires}")
        note = self.extra.get("note") if isinstance(self.extra, dict) else None
        if note:
            lines.append(f"  note: {note}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class BayesianResult:
    """Posterior of the mean difference ``a - b`` from the Bayesian correlated t-test.

    The posterior is Student's t with ``df`` degrees of freedom, location ``estimate`` and scale
    ``scale`` (Corani & Benavoli 2015, eq. 8). ``p_left``, ``p_rope`` and ``p_right`` are its
    masses on ``(-inf, -rope)``, ``[-rope, rope]`` and ``(rope, inf)``: the probabilities that
    ``a`` is practically worse than, equivalent to, or better than ``b`` (for a metric where
    higher is better).

    Attributes
    ----------
    p_left, p_rope, p_right : float
        Posterior probabilities; they sum to 1.
    rope : float
        Half-width of the region of practical equivalence, in metric units.
    estimate : float
        Mean difference ``a - b`` (the posterior location).
    scale : float
        Posterior scale ``sqrt((1/n + n_test/n_train) · s²)``; 0 when all differences are equal
        (the posterior is then a point mass at ``estimate``).
    df : float
        Posterior degrees of freedom, ``n - 1``.
    a, b, metric : str
        The two models and the metric.
    n : int
        Number of splits.
    """

    p_left: float
    p_rope: float
    p_right: float
    rope: float
    estimate: float
    scale: float
    df: float
    a: str = ""
    b: str = ""
    metric: str = ""
    n: int = 0
    method: str = "Bayesian correlated t-test (Corani & Benavoli 2015)"
    test: str = "bayesian_correlated_t"
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def posterior(self):
        """The posterior of the mean difference as a frozen ``scipy.stats.t`` distribution.

        With ``scale == 0`` (all differences equal) the posterior is a point mass at
        :attr:`estimate`, which scipy cannot represent: its methods then return NaN.
        """
        return stats.t(self.df, loc=self.estimate, scale=self.scale)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """The equal-tailed credible interval of the mean difference at ``confidence_level``
        (the posterior being symmetric, also its highest-density interval): the posterior
        probability that ``a - b`` lies inside it is ``confidence_level``."""
        level = check_confidence_level(confidence_level)
        if self.scale == 0:
            return ConfidenceInterval(self.estimate, self.estimate)
        half = float(stats.t.ppf((1 + level) / 2, self.df)) * self.scale
        return ConfidenceInterval(self.estimate - half, self.estimate + half)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row: ``test, method, a, b, metric, estimate, scale, df, n, rope, p_left, p_rope,
        p_right, ci_low, ci_high`` (the credible interval at ``confidence_level``)."""
        ci = self.confidence_interval(confidence_level)
        return pd.DataFrame([{
            "test": self.test, "method": self.method, "a": self.a, "b": self.b,
            "metric": self.metric, "estimate": self.estimate, "scale": self.scale,
            "df": float(self.df), "n": self.n, "rope": self.rope, "p_left": self.p_left,
            "p_rope": self.p_rope, "p_right": self.p_right, "ci_low": ci.low,
            "ci_high": ci.high,
        }])

    def __str__(self) -> str:
        pair = f"{self.a} - {self.b}" if (self.a or self.b) else "a - b"
        metric = f" ({self.metric})" if self.metric else ""
        return (
            f"{self.method}\n"
            f"  {pair}{metric}: posterior mean = {_fmt(self.estimate)}, scale = "
            f"{_fmt(self.scale)}, df = {_fmt(self.df)}, 95% credible interval "
            f"{self.confidence_interval()}\n"
            f"  rope = ±{_fmt(self.rope)}: P(a worse) = {self.p_left:.4f}, "
            f"P(equivalent) = {self.p_rope:.4f}, P(a better) = {self.p_right:.4f}"
        )
