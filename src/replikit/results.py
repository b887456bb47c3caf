"""Shared result types: confidence intervals, a base for test results, and verdicts.

Results are frozen, slotted dataclasses. A test result carries what a reader needs next — the
statistic, its degrees of freedom, the p-value, the estimate and its standard error — and computes
its confidence interval at whatever level is asked (:meth:`TestResult.confidence_interval`).
Every capability's analysis entry returns a result with a :class:`Verdict`: one plain sentence,
the metric it is about, a traffic-light level and the caveats.

scipy and pandas are imported when first needed, so ``import replikit`` stays cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ._validation import check_alternative, check_choice, check_confidence_level

__all__ = ["ConfidenceInterval", "TestResult", "Verdict", "get_pvalue", "two_sided_quantile",
           "LEVELS"]

LEVELS = ("good", "info", "warn", "bad")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The conclusion of an analysis, in words a coauthor can read.

    Attributes
    ----------
    sentence : str
        One plain sentence (the headline).
    metric : str
        The metric or quantity the sentence is about (``'R²'``, ``'ROC AUC'``, ``'test R²'``).
    level : {'good', 'info', 'warn', 'bad'}
        Traffic light: ``'good'`` the result holds up, ``'warn'`` it is uncertain or partly
        fails, ``'bad'`` it does not hold up, ``'info'`` nothing to judge.
    estimate, ci_low, ci_high : float or None
        The key number and its interval, where there is one.
    caveats : tuple of str
        What limits the conclusion (subsamples, left-out studies, quick mode, ...).
    """

    sentence: str
    metric: str
    level: str = "info"
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    caveats: tuple = ()

    def __post_init__(self) -> None:
        check_choice(self.level, "level", LEVELS)
        if isinstance(self.caveats, str) or not isinstance(self.caveats, tuple):
            object.__setattr__(self, "caveats", tuple([self.caveats] if isinstance(
                self.caveats, str) else self.caveats))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields (the report's JSON twin uses these keys)."""
        return {"sentence": self.sentence, "metric": self.metric, "level": self.level,
                "estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "caveats": list(self.caveats)}

    def __str__(self) -> str:
        text = self.sentence
        if self.caveats:
            text += " Caveats: " + "; ".join(self.caveats) + "."
        return text


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]``.

    Unpacks like a tuple: ``low, high = ci``.
    """

    low: float
    high: float

    def __iter__(self):
        yield self.low
        yield self.high

    def __contains__(self, value: float) -> bool:
        return bool(self.low <= value <= self.high)

    @property
    def width(self) -> float:
        return float(self.high - self.low)

    def __str__(self) -> str:
        return f"[{self.low:.4g}, {self.high:.4g}]"


def get_pvalue(statistic: float | np.ndarray, distribution: Any, alternative: str = "two-sided"):
    """P-value of ``statistic`` under a frozen scipy ``distribution``.

    ``alternative='less'`` is ``P(T <= t)``, ``'greater'`` is ``P(T >= t)`` and ``'two-sided'``
    doubles the smaller tail (clipped at 1), as scipy.stats does for symmetric nulls.
    """
    alternative = check_alternative(alternative)
    if alternative == "less":
        return distribution.cdf(statistic)
    if alternative == "greater":
        return distribution.sf(statistic)
    return np.minimum(1.0, 2.0 * np.minimum(distribution.cdf(statistic), distribution.sf(statistic)))


def two_sided_quantile(confidence_level: float, df: float | None = None) -> float:
    """The ``(1 + level) / 2`` quantile of Student's t (``df``) or the standard normal."""
    from scipy import stats

    q = (1.0 + confidence_level) / 2.0
    if df is None or not np.isfinite(df):
        return float(stats.norm.ppf(q))
    return float(stats.t.ppf(q, df))


@dataclass(frozen=True, slots=True)
class TestResult:
    """Base of replikit's hypothesis-test results.

    Attributes
    ----------
    statistic : float
        The test statistic.
    pvalue : float
        The p-value under ``alternative``.
    df : float or None
        Degrees of freedom of the reference distribution (``None`` for z, ``inf`` is also read
        as normal). For F tests, the numerator df; see the subclass for the denominator.
    estimate : float
        The quantity tested (e.g. a mean difference).
    se : float
        Standard error of ``estimate`` under the test's own variance.
    alternative : str
        ``'two-sided'``, ``'less'`` or ``'greater'`` (in terms of ``estimate`` vs. 0).
    method : str
        Human-readable name of the test.
    """

    __test__ = False  # not a pytest test class

    statistic: float
    pvalue: float
    df: float | None
    estimate: float
    se: float
    alternative: str = "two-sided"
    method: str = ""
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for ``estimate`` under the test's reference distribution.

        ``estimate ± q · se`` with ``q`` from Student's t with ``df`` degrees of freedom (normal
        when ``df`` is ``None`` or infinite). One-sided alternatives give a one-sided interval,
        as scipy.stats does.
        """
        from scipy import stats

        level = check_confidence_level(confidence_level)
        if self.df is None or not np.isfinite(self.df):
            dist = stats.norm
        else:
            dist = stats.t(self.df)
        if self.alternative == "two-sided":
            q = dist.ppf((1 + level) / 2)
            return ConfidenceInterval(self.estimate - q * self.se, self.estimate + q * self.se)
        q = dist.ppf(level)
        if self.alternative == "less":
            return ConfidenceInterval(-math.inf, self.estimate + q * self.se)
        return ConfidenceInterval(self.estimate - q * self.se, math.inf)

    def _frame_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if np.isscalar(value) or value is None:
                out[f.name] = value
        return out

    def to_frame(self, confidence_level: float = 0.95):
        """One tidy row: ``method, estimate, se, ci_low, ci_high, statistic, df, pvalue, ...``."""
        import pandas as pd

        ci = self.confidence_interval(confidence_level)
        row = self._frame_fields()
        ordered = {
            "method": row.pop("method"),
            "estimate": row.pop("estimate"),
            "se": row.pop("se"),
            "ci_low": ci.low,
            "ci_high": ci.high,
            "confidence_level": confidence_level,
            "statistic": row.pop("statistic"),
            "df": row.pop("df"),
            "pvalue": row.pop("pvalue"),
            "alternative": row.pop("alternative"),
        }
        ordered.update(row)
        return pd.DataFrame([ordered])

    def __str__(self) -> str:
        ci = self.confidence_interval()
        df = "" if self.df is None else f", df = {self.df:.4g}"
        name = self.method or type(self).__name__
        return (
            f"{name}\n  estimate = {self.estimate:.4g} (SE {self.se:.4g}), 95% CI {ci}\n"
            f"  statistic = {self.statistic:.4g}{df}, p = {self.pvalue:.4g} ({self.alternative})"
        )
