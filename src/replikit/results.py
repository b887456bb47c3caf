"""The one base of replikit's results, with confidence intervals, test results and verdicts.

Every public result is a frozen dataclass on :class:`Result`, which gives it

* ``to_frame()`` — a tidy :class:`pandas.DataFrame` with stable column names (``estimate``,
  ``se``, ``ci_low``, ``ci_high``, ``statistic``, ``pvalue`` ...);
* ``to_dict()`` — plain JSON types (strict JSON: NaN and infinity become ``None``);
* a readable ``str()`` and ``_repr_html_()`` — what a notebook shows when the result is the
  last line of a cell: its title, its verdict where it has one, its table and, where the
  result can draw itself, its figure as inline SVG;
* where they apply, ``confidence_interval(confidence_level=0.95)`` returning a
  :class:`ConfidenceInterval` ``(low, high)`` and ``plot(ax=None)`` returning the matplotlib
  Axes (drawn through pyplot in a notebook, so it shows inline; outside pyplot otherwise).

Hypothesis tests derive from :class:`TestResult` (``statistic``, ``pvalue``, ``df``,
``alternative``, ``estimate``, ``se``; the interval at any level). Every analysis entry returns
a result with a :class:`Verdict`: one plain sentence, the metric, a light and the caveats.

scipy, pandas and matplotlib are imported when first needed, so ``import replikit`` stays
cheap.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np

from ._validation import check_alternative, check_choice, check_confidence_level

__all__ = ["Result", "ConfidenceInterval", "TestResult", "Verdict", "WaldInterval",
           "get_pvalue", "two_sided_quantile", "wald_interval", "to_jsonable", "LEVELS"]

#: The lights of a verdict: earned green, red, amber, and "nothing to judge".
LEVELS = ("good", "info", "warn", "bad")

#: Rows of a result's table shown by ``str()`` and in a notebook before the rest is elided.
MAX_ROWS = 30


def to_jsonable(obj: Any) -> Any:
    """``obj`` with numpy, pandas and replikit values turned into plain JSON types.

    NaN and infinities become ``None`` (strict JSON); a :class:`Result` becomes its
    ``to_dict()``; a DataFrame its records; a :class:`ConfidenceInterval` ``[low, high]``.

    Parameters
    ----------
    obj : object
        Any nesting of dicts, lists, tuples, arrays, frames, series, scalars and results.

    Returns
    -------
    object
        The same structure in ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` and
        ``None`` only.

    See Also
    --------
    Result.to_dict : A result in JSON types.

    Examples
    --------
    >>> to_jsonable({"a": np.float64("nan"), "b": np.arange(2), "c": (1.5, np.inf)})
    {'a': None, 'b': [0, 1], 'c': [1.5, None]}
    """
    if isinstance(obj, Result):
        return obj.to_dict()
    if isinstance(obj, ConfidenceInterval):
        return [to_jsonable(obj.low), to_jsonable(obj.high)]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, (str, int)) or obj is None:
        return obj
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        return obj
    if isinstance(obj, pd.DataFrame):
        return to_jsonable(obj.to_dict("records"))
    if isinstance(obj, pd.Series):
        return to_jsonable(obj.to_dict())
    if obj is pd.NA or obj is pd.NaT:
        return None
    if isinstance(obj, pd.Timestamp):
        return obj.isoformat()
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in fields(obj)
                if not f.name.startswith("_")}
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    return str(obj)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float, np.generic))


class Result:
    """Base of every public result of replikit.

    A subclass is a frozen dataclass. It inherits a one-row ``to_frame()`` of its scalar
    fields, a ``to_dict()`` of all its fields in JSON types, ``str()`` and ``_repr_html_()``
    built from them, and overrides what it can say better (most results have a table of many
    rows). A result that can draw itself defines ``plot(ax=None)`` returning the Axes; its
    figure then shows in a notebook under its table.

    See Also
    --------
    TestResult : The base of hypothesis-test results.
    Verdict : The conclusion an analysis entry returns with its result.
    to_jsonable : What ``to_dict`` uses.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Mean(Result):
    ...     estimate: float
    ...     se: float
    >>> Mean(0.25, 0.01).to_dict()
    {'estimate': 0.25, 'se': 0.01}
    >>> print(Mean(0.25, 0.01))
    Mean
     estimate   se
         0.25 0.01
    """

    __slots__ = ()
    __test__ = False  # not a pytest test class

    # -- what a subclass overrides -------------------------------------------------------
    def to_frame(self):
        """The result as a tidy table: here one row of its scalar fields.

        Returns
        -------
        pandas.DataFrame
            One row; subclasses with several rows (per study, pair, model) override this.
        """
        import pandas as pd

        row = {f.name: getattr(self, f.name) for f in fields(self)
               if not f.name.startswith("_") and _scalar(getattr(self, f.name))}
        return pd.DataFrame([row])

    def to_dict(self) -> dict[str, Any]:
        """Every public field in plain JSON types (``json.dumps(..., allow_nan=False)`` works).

        Returns
        -------
        dict
            Field name → value; nested results, frames and arrays converted
            (:func:`to_jsonable`).
        """
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)
                if not f.name.startswith("_")}

    # -- shown to a reader ------------------------------------------------------------------
    @property
    def title(self) -> str:
        """A short name of the result for headings (the class's name unless overridden)."""
        return type(self).__name__

    def _verdict_sentence(self) -> str:
        verdict = getattr(self, "verdict", None)
        if isinstance(verdict, Verdict):
            return str(verdict)
        return verdict if isinstance(verdict, str) else ""

    def __str__(self) -> str:
        lines = [self.title]
        sentence = self._verdict_sentence()
        if sentence:
            lines.append(sentence)
        try:
            frame = self.to_frame()
        except Exception as exc:  # a result must print even when its table cannot be built
            lines.append(f"(no table: {type(exc).__name__}: {exc})")
        else:
            lines.append(_frame_text(frame))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [f"<div class='replikit-result'><strong>{html.escape(self.title)}</strong>"]
        sentence = self._verdict_sentence()
        if sentence:
            parts.append(f"<p>{html.escape(sentence)}</p>")
        try:
            frame = self.to_frame()
        except Exception as exc:
            parts.append(f"<p>(no table: {html.escape(type(exc).__name__)})</p>")
        else:
            parts.append(_frame_html(frame))
        svg = self._figure_svg()
        if svg:
            parts.append(f"<details open><summary>figure</summary>{svg}</details>")
        parts.append("</div>")
        return "".join(parts)

    def _figure_svg(self) -> str:
        """The result's figure as inline SVG, or '' when it has none or cannot draw it."""
        plot = getattr(self, "plot", None)
        if plot is None:
            return ""
        from ._plotting import new_axes, off_pyplot, svg_inline

        try:
            with off_pyplot():  # the notebook shows the SVG, not a second pyplot figure
                drawn = plot(ax=new_axes())
        except Exception:  # a figure is a bonus in a notebook; the table is the result
            return ""
        figure = _figure_of(drawn)
        return svg_inline(figure) if figure is not None else ""


def _figure_of(drawn):
    """The figure behind what a plot method returned (Axes, array of Axes, Figure, Display)."""
    if drawn is None:
        return None
    if hasattr(drawn, "figure_"):
        return drawn.figure_
    if isinstance(drawn, np.ndarray) and drawn.size:
        drawn = drawn.flat[0]
    if hasattr(drawn, "savefig"):
        return drawn
    return getattr(drawn, "figure", None)


def _frame_text(frame) -> str:
    import pandas as pd

    with pd.option_context("display.max_columns", 20, "display.width", 120,
                           "display.max_colwidth", 40):
        text = frame.head(MAX_ROWS).to_string(index=False)
    if len(frame) > MAX_ROWS:
        text += f"\n... {len(frame) - MAX_ROWS:,} more rows (to_frame() has them all)"
    return text


def _frame_html(frame) -> str:
    text = frame.head(MAX_ROWS).to_html(index=False, escape=True, border=0, na_rep="–",
                                        float_format=lambda v: f"{v:.4g}")
    if len(frame) > MAX_ROWS:
        text += (f"<p>... {len(frame) - MAX_ROWS:,} more rows "
                 "(<code>to_frame()</code> has them all)</p>")
    return text


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]``.

    Unpacks like a tuple: ``low, high = ci``. A one-sided interval has an infinite end.

    Parameters
    ----------
    low, high : float
        The ends.

    See Also
    --------
    wald_interval : The interval estimate ± q·SE.

    Examples
    --------
    >>> ci = ConfidenceInterval(0.1, 0.3)
    >>> low, high = ci
    >>> 0.2 in ci, round(ci.width, 10)
    (True, 0.2)
    """

    low: float
    high: float

    def __post_init__(self) -> None:
        for name in ("low", "high"):  # numpy scalars as Python floats: they print and serialize
            value = getattr(self, name)
            if isinstance(value, np.generic):
                object.__setattr__(self, name, value.item())

    def __iter__(self):
        yield self.low
        yield self.high

    def __contains__(self, value: float) -> bool:
        return bool(self.low <= value <= self.high)

    @property
    def width(self) -> float:
        """``high - low``."""
        return float(self.high - self.low)

    def __str__(self) -> str:
        from ._format import interval

        return interval(self.low, self.high, 4)


@dataclass(frozen=True, slots=True)
class Verdict(Result):
    """The conclusion of an analysis, in words a coauthor can read.

    A light is earned (DESIGN.md): ``'good'`` only when the data show the result holds within a
    stated tolerance (an upper confidence bound inside it, an equivalence test passed),
    ``'bad'`` only when they show it does not, ``'warn'`` when they cannot tell; a test that
    fails to reject is never ``'good'``.

    Parameters
    ----------
    sentence : str
        One plain sentence (the headline).
    metric : str
        The metric or quantity the sentence is about (``'R²'``, ``'ROC AUC'``, ``'test R²'``).
    level : {'good', 'info', 'warn', 'bad'}
        The light: ``'good'`` the result holds up, ``'warn'`` the data cannot tell or it partly
        fails, ``'bad'`` it does not hold up, ``'info'`` nothing to judge.
    estimate, ci_low, ci_high : float or None
        The key number and its interval, where there is one.
    caveats : tuple of str
        What limits the conclusion (fewer repeats on large data, left-out studies, ...).
    label : str
        What the key number is (``'best minus runner-up, ROC AUC'``): every key number a
        reader sees is labelled.
    tolerance : str
        The tolerance the light was judged against and the bound it rests on, in words
        (``'judged against ±28 (10% of the pooled mean squared error): upper 95% bound 19'``);
        empty for an ``'info'`` verdict that judges nothing.

    See Also
    --------
    Result : The base of every result.

    Examples
    --------
    >>> v = Verdict("lr is better than dummy.", "ROC AUC", "good", 0.12, 0.08, 0.16,
    ...             label="difference in ROC AUC")
    >>> print(v)
    lr is better than dummy.
    >>> v.to_dict()["level"]
    'good'
    """

    sentence: str
    metric: str
    level: str = "info"
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    caveats: tuple = ()
    label: str = ""
    tolerance: str = ""

    def __post_init__(self) -> None:
        check_choice(self.level, "level", LEVELS)
        if isinstance(self.caveats, str) or not isinstance(self.caveats, tuple):
            object.__setattr__(self, "caveats", tuple([self.caveats] if isinstance(
                self.caveats, str) else self.caveats))

    @property
    def title(self) -> str:
        return "Verdict"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON fields (the report's JSON twin uses these keys).

        Returns
        -------
        dict
            ``sentence, metric, level, estimate, ci_low, ci_high, label, tolerance, caveats``.
        """
        return {"sentence": self.sentence, "metric": self.metric, "level": self.level,
                "estimate": to_jsonable(self.estimate), "ci_low": to_jsonable(self.ci_low),
                "ci_high": to_jsonable(self.ci_high), "label": self.label,
                "tolerance": self.tolerance, "caveats": list(self.caveats)}

    def __str__(self) -> str:
        text = self.sentence
        if self.tolerance:
            text += f" ({self.tolerance.rstrip('.')}.)"
        if self.caveats:
            text += " Caveats: " + "; ".join(c.rstrip(".") for c in self.caveats) + "."
        return text

    def _repr_html_(self) -> str:
        from ._format import interval, number

        colour = {"good": "#1b7f3b", "bad": "#b00020", "warn": "#a15c00"}.get(self.level, "#444")
        key = ""
        if self.estimate is not None:
            key = (f"<br><small>{html.escape(self.label or self.metric)}: "
                   f"{html.escape(number(self.estimate))}")
            if self.ci_low is not None and self.ci_high is not None:
                key += f" {html.escape(interval(self.ci_low, self.ci_high))}"
            key += "</small>"
        if self.tolerance:
            key += f"<br><small>{html.escape(self.tolerance)}</small>"
        caveats = "".join(f"<li>{html.escape(c)}</li>" for c in self.caveats)
        return (f"<div class='replikit-verdict' style='border-left:4px solid {colour};"
                f"padding-left:8px'>{html.escape(self.sentence)}{key}"
                + (f"<ul>{caveats}</ul>" if caveats else "") + "</div>")


def get_pvalue(statistic: float | np.ndarray, distribution: Any, alternative: str = "two-sided"):
    """P-value of ``statistic`` under a frozen scipy ``distribution``.

    ``alternative='less'`` is ``P(T <= t)``, ``'greater'`` is ``P(T >= t)`` and ``'two-sided'``
    doubles the smaller tail (clipped at 1), as scipy.stats does for symmetric nulls.

    Parameters
    ----------
    statistic : float or ndarray
        Observed statistic(s).
    distribution : scipy.stats frozen distribution
        The null distribution of the statistic.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        The alternative hypothesis.

    Returns
    -------
    float or ndarray
        The p-value(s).

    See Also
    --------
    two_sided_quantile : The quantile for a two-sided interval.

    Examples
    --------
    >>> from scipy import stats
    >>> round(float(get_pvalue(1.96, stats.norm)), 4)
    0.05
    """
    alternative = check_alternative(alternative)
    if alternative == "less":
        return distribution.cdf(statistic)
    if alternative == "greater":
        return distribution.sf(statistic)
    return np.minimum(1.0, 2.0 * np.minimum(distribution.cdf(statistic), distribution.sf(statistic)))


def two_sided_quantile(confidence_level: float, df: float | None = None) -> float:
    """The ``(1 + level) / 2`` quantile of Student's t (``df``) or the standard normal.

    Parameters
    ----------
    confidence_level : float
        Level of the two-sided interval.
    df : float or None
        Degrees of freedom; None or infinite for the normal.

    Returns
    -------
    float
        The quantile.

    See Also
    --------
    wald_interval : The interval built from it.

    Examples
    --------
    >>> round(two_sided_quantile(0.95), 4), round(two_sided_quantile(0.95, 9), 4)
    (1.96, 2.2622)
    """
    from scipy import stats

    q = (1.0 + confidence_level) / 2.0
    if df is None or not np.isfinite(df):
        return float(stats.norm.ppf(q))
    return float(stats.t.ppf(q, df))


def wald_interval(estimate: float, se: float, confidence_level: float = 0.95, *,
                  df: float | None = None, alternative: str = "two-sided") -> ConfidenceInterval:
    """``estimate ± q · se`` with ``q`` from Student's t (``df``) or the standard normal.

    One-sided alternatives give one-sided intervals (an infinite end), as scipy.stats does:
    ``'less'`` bounds the estimate from above, ``'greater'`` from below.

    Parameters
    ----------
    estimate, se : float
        The estimate and its standard error.
    confidence_level : float, default 0.95
        Level of the interval.
    df : float or None
        Degrees of freedom of the reference t distribution; None or infinite for the normal.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        Which interval.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)``.

    See Also
    --------
    TestResult.confidence_interval : The interval of a test's estimate.

    Examples
    --------
    >>> ci = wald_interval(1.0, 0.5, df=10)
    >>> round(ci.low, 4), round(ci.high, 4)
    (-0.1141, 2.1141)
    """
    from scipy import stats

    level = check_confidence_level(confidence_level)
    alternative = check_alternative(alternative)
    dist = stats.norm if df is None or not np.isfinite(df) else stats.t(df)
    if alternative == "two-sided":
        q = dist.ppf((1 + level) / 2)
        return ConfidenceInterval(estimate - q * se, estimate + q * se)
    q = dist.ppf(level)
    if alternative == "less":
        return ConfidenceInterval(-math.inf, estimate + q * se)
    return ConfidenceInterval(estimate - q * se, math.inf)


class WaldInterval:
    """Mixin: ``confidence_interval`` of an ``estimate`` with its ``se``.

    The result's ``df`` and ``alternative`` are used where it has them (:func:`wald_interval`).

    See Also
    --------
    wald_interval : The interval it computes.
    TestResult : A result that uses it.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Mean(WaldInterval, Result):
    ...     estimate: float
    ...     se: float
    >>> print(Mean(1.0, 0.5).confidence_interval())
    [0.02002, 1.98]
    """

    __slots__ = ()

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for ``estimate``: ``estimate ± q · se``.

        ``q`` is from Student's t with the result's ``df`` (the normal when it has none), and
        one-sided for a one-sided ``alternative``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        return wald_interval(self.estimate, self.se, confidence_level,
                             df=getattr(self, "df", None),
                             alternative=getattr(self, "alternative", "two-sided"))


@dataclass(frozen=True, slots=True)
class TestResult(WaldInterval, Result):
    """Base of replikit's hypothesis-test results.

    Parameters
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
    extra : dict
        Anything else the test computed.

    See Also
    --------
    Result : The base of every result.
    wald_interval : The interval of ``estimate``.

    Examples
    --------
    >>> r = TestResult(statistic=2.0, pvalue=0.0734, df=9, estimate=1.0, se=0.5,
    ...                method="paired t-test")
    >>> bool(r.confidence_interval(0.9).low > 0)
    True
    >>> list(r.to_frame().columns[:6])
    ['method', 'estimate', 'se', 'ci_low', 'ci_high', 'confidence_level']
    """

    statistic: float
    pvalue: float
    df: float | None
    estimate: float
    se: float
    alternative: str = "two-sided"
    method: str = ""
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def title(self) -> str:
        return self.method or type(self).__name__

    def _frame_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "extra" or f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            if _scalar(value):
                out[f.name] = value
        return out

    def to_frame(self, confidence_level: float = 0.95):
        """One tidy row: ``method, estimate, se, ci_low, ci_high, statistic, df, pvalue, ...``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low``/``ci_high``.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
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

    def to_dict(self) -> dict[str, Any]:
        """The fields and the 95% interval in JSON types.

        Returns
        -------
        dict
            The row of :meth:`to_frame` (``extra`` left out).
        """
        return to_jsonable(self.to_frame().iloc[0].to_dict())

    def __str__(self) -> str:
        from ._format import number, pvalue

        ci = self.confidence_interval()
        df = "" if self.df is None else f", df = {number(self.df, 4)}"
        return (
            f"{self.title}\n  estimate = {number(self.estimate, 4)} (SE {number(self.se, 4)}), "
            f"95% CI {ci}\n  statistic = {number(self.statistic, 4)}{df}, "
            f"p = {pvalue(self.pvalue, table=True)} ({self.alternative})"
        )
