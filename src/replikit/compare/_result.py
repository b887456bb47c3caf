"""Result types of the two-model comparisons: :class:`ComparisonResult` and :class:`BayesianResult`.

A :class:`ComparisonResult` is a :class:`~replikit.results.TestResult` (statistic, p-value, df,
the mean difference ``a - b`` and its standard error under the test's own variance) that also
says which test it is, whether the test is valid for resampled scores, which resampling scheme it
needs, how many paired units it rests on and which two models and metric it compares.

A :class:`BayesianResult` is the posterior of the mean difference of the Bayesian correlated
t-test (Corani & Benavoli 2015): the probabilities that ``a - b`` lies left of, inside or right of
the region of practical equivalence ``[-tolerance, tolerance]`` (the ROPE).

:data:`TEST_NAMES` (from :mod:`replikit.compare._words`) gives every test id of the package
(the ``test`` column of the tables) the name a reader sees in figures, captions, verdicts and
``str()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd
from scipy import stats

from .._compat import renamed_fields
from .._format import interval as _interval_text
from .._format import number, pvalue
from .._plotting import axes_or_new
from .._validation import check_confidence_level
from ..results import ConfidenceInterval, Result, TestResult, wald_interval
from ._words import TEST_NAMES, fill_doc, test_name

__all__ = ["ComparisonResult", "BayesianResult", "FRAME_COLUMNS", "TEST_NAMES", "test_name",
           "fill_doc"]

#: Column order of :meth:`ComparisonResult.to_frame`.
FRAME_COLUMNS = ("test", "method", "a", "b", "metric", "estimate", "se", "statistic", "df",
                 "df2", "pvalue", "ci_low", "ci_high", "valid", "requires", "n", "alternative")

def _fmt(x) -> str:
    return number(x, 4)


@fill_doc()
@dataclass(frozen=True, slots=True)
class ComparisonResult(TestResult):
    """A test of the difference in performance of two models, ``a - b``.

    Every test of :mod:`replikit.compare.resampled` returns one (and the permutation test);
    :func:`~replikit.compare.compare_scores` gathers them in one table.

    Attributes
    ----------
    statistic, pvalue, df, alternative : float, float, float or None, str
        The test statistic, its p-value under ``alternative`` (``'two-sided'``, ``'less'`` or
        ``'greater'``, for the mean of ``a - b`` against 0) and the degrees of freedom of its
        reference distribution (None for a normal one).
    estimate, se : float
        The mean difference of the metric, model ``a`` minus model ``b``, over the paired units
        (splits), and its standard error under the test's own variance, so that
        :meth:`confidence_interval` is the interval that goes with the test.
    method : str
        The test's name in words, with its paper (``'Corrected repeated k-fold cv t-test
        (Bouckaert & Frank 2004)'``).
    extra : dict
        Anything else the test computed (the ratio ``n_test / n_train``, notes).
    test : str
        Short identifier, e.g. ``'corrected_repeated_kfold_t'``, ``'mcnemar_exact'`` (the
        ``test`` column of the tables; :data:`TEST_NAMES` gives its name in words).
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

    See Also
    --------
    BayesianResult : The posterior of the Bayesian correlated t-test.
    replikit.compare.compare_scores : Every test of every pair, as one table.

    References
    ----------
    {refs:gardner2017,nadeau2003}

    Notes
    -----
    F tests (the 5x2cv combined F) have no interval for the mean difference: their
    :meth:`confidence_interval` is ``[nan, nan]``.

    Examples
    --------
    >>> from replikit.compare import corrected_ttest_from_stats
    >>> res = corrected_ttest_from_stats(0.0296, 0.0348, 100, 1 / 9, a="mlp", b="cart")
    >>> round(res.pvalue, 4), res.test
    (0.0163, 'corrected_resampled_t')
    >>> print(res)  # doctest: +NORMALIZE_WHITESPACE
    Corrected resampled t-test (Nadeau & Bengio 2003), from summary statistics
      mlp - cart: mean difference = 0.0296 (SE 0.01211), n = 100
      95% CI [0.00557, 0.05363]
      statistic = 2.444, df = 99, p = 0.0163 (two-sided)
      requires: any resampling
    """

    test: str = ""
    valid: bool = True
    requires: str = ""
    df2: float | None = None
    n: int = 0
    a: str = ""
    b: str = ""
    metric: str = ""

    @property
    def title(self) -> str:
        """The test's name in words (its ``method``)."""
        return self.method or test_name(self.test) or type(self).__name__

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for the mean difference ``estimate ± q · se`` (``[nan, nan]`` for F tests).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``q`` is the Student t quantile with the test's ``df`` (normal for z tests);
            one-sided alternatives give one-sided intervals, as in scipy.stats.
        """
        if self.df2 is not None:
            check_confidence_level(confidence_level)
            return ConfidenceInterval(math.nan, math.nan)
        return TestResult.confidence_interval(self, confidence_level)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One tidy row with the columns of :data:`FRAME_COLUMNS`.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low`` and ``ci_high``.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
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
        pair = f"{self.a} - {self.b}" if (self.a or self.b) else "a - b"
        metric = f" ({self.metric})" if self.metric else ""
        lines = [f"{self.title}{'' if self.valid else '  [INVALID for resampled scores]'}",
                 f"  {pair}{metric}: mean difference = {_fmt(self.estimate)} "
                 f"(SE {_fmt(self.se)}), n = {number(self.n)}"]
        if self.df2 is None:
            ci = self.confidence_interval()
            lines.append(f"  95% CI {_interval_text(ci.low, ci.high, 4)}")
            df = "" if self.df is None else f", df = {_fmt(self.df)}"
        else:
            df = f", df = ({_fmt(self.df)}, {_fmt(self.df2)})"
        lines.append(f"  statistic = {_fmt(self.statistic)}{df}, p = "
                     f"{pvalue(self.pvalue, table=True)} ({self.alternative})")
        if self.requires:
            lines.append(f"  requires: {self.requires}")
        note = self.extra.get("note") if isinstance(self.extra, dict) else None
        if note:
            lines.append(f"  note: {note}")
        return "\n".join(lines)


@renamed_fields(rope="tolerance")
@dataclass(frozen=True, slots=True)
class BayesianResult(Result):
    """Posterior of the mean difference ``a - b`` from the Bayesian correlated t-test.

    The posterior is Student's t with ``df`` degrees of freedom, location ``estimate`` and scale
    ``scale`` (Corani & Benavoli 2015, eq. 8). ``p_left``, ``p_rope`` and ``p_right`` are its
    masses on ``(-inf, -tolerance)``, ``[-tolerance, tolerance]`` (the region of practical
    equivalence, ROPE) and ``(tolerance, inf)``: the probabilities that ``a`` is practically
    worse than, equivalent to, or better than ``b`` (for a metric where higher is better).

    Attributes
    ----------
    p_left, p_rope, p_right : float
        Posterior probabilities; they sum to 1.
    tolerance : float
        Half-width of the region of practical equivalence, in metric units (``rope`` before
        replikit 0.2).
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
    method, test : str
        The test's name in words and its id (``'bayesian_correlated_t'``).
    extra : dict
        The ratio ``n_test / n_train`` used and where it came from; notes.

    See Also
    --------
    ComparisonResult : The result of the frequentist tests.
    replikit.compare.bayesian_correlated_ttest : The test that returns it.

    References
    ----------
    .. [1] Corani, G. & Benavoli, A. (2015). A Bayesian Approach for Comparing Cross-Validated
       Algorithms on Multiple Data Sets. Machine Learning, 100(2–3), 285–304.

    Examples
    --------
    >>> res = BayesianResult(p_left=0.01, p_rope=0.09, p_right=0.9, tolerance=0.01,
    ...                      estimate=0.03, scale=0.01, df=99, a="rf", b="lr")
    >>> ci = res.confidence_interval()
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0102, 0.0498)
    """

    p_left: float
    p_rope: float
    p_right: float
    tolerance: float
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

    @property
    def title(self) -> str:
        """The test's name in words."""
        return self.method

    def posterior(self):
        """The posterior of the mean difference as a frozen ``scipy.stats.t`` distribution.

        With ``scale == 0`` (all differences equal) the posterior is a point mass at
        :attr:`estimate`, which scipy cannot represent: its methods then return NaN.

        Returns
        -------
        scipy.stats.rv_continuous_frozen
            ``t(df, loc=estimate, scale=scale)``.
        """
        return stats.t(self.df, loc=self.estimate, scale=self.scale)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """The equal-tailed credible interval of the mean difference at ``confidence_level``.

        The posterior being a symmetric Student t, it is also the highest-density interval:
        ``estimate ± q · scale`` with ``q`` the t quantile on ``df`` degrees of freedom; the
        posterior probability that ``a - b`` lies inside it is ``confidence_level``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Posterior probability of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``; ``(estimate, estimate)`` for a point mass.
        """
        return wald_interval(self.estimate, self.scale, confidence_level, df=self.df)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row of the posterior and its credible interval.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low`` and ``ci_high``.

        Returns
        -------
        pandas.DataFrame
            ``test, method, a, b, metric, estimate, scale, df, n, tolerance, p_left, p_rope,
            p_right, ci_low, ci_high``.
        """
        ci = self.confidence_interval(confidence_level)
        return pd.DataFrame([{
            "test": self.test, "method": self.method, "a": self.a, "b": self.b,
            "metric": self.metric, "estimate": self.estimate, "scale": self.scale,
            "df": float(self.df), "n": self.n, "tolerance": self.tolerance,
            "p_left": self.p_left, "p_rope": self.p_rope, "p_right": self.p_right,
            "ci_low": ci.low, "ci_high": ci.high,
        }])

    def to_dict(self) -> dict:
        """The row of :meth:`to_frame` in JSON types.

        Returns
        -------
        dict
            Column name -> value.
        """
        from ..results import to_jsonable

        return to_jsonable(self.to_frame().iloc[0].to_dict())

    def plot(self, ax=None):
        """The posterior density of ``a - b`` with the region of practical equivalence shaded.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        import numpy as np

        ax = axes_or_new(ax, 6.4, 3.2)
        tol = float(self.tolerance)
        pair = f"{self.a} − {self.b}" if (self.a or self.b) else "a − b"
        if self.scale > 0:
            post = self.posterior()
            lo, hi = post.ppf([0.0005, 0.9995])
            lo, hi = min(lo, -1.5 * tol), max(hi, 1.5 * tol)
            x = np.linspace(lo, hi, 400)
            ax.plot(x, post.pdf(x), color="black", lw=1.2)
        else:  # a point mass
            ax.axvline(self.estimate, color="black", lw=1.2)
        if tol > 0:
            ax.axvspan(-tol, tol, color="#E69F00", alpha=0.25, lw=0,
                       label=f"practically equivalent (±{number(tol)})")
            ax.legend(fontsize=8, frameon=False, loc="upper left")
        ax.axvline(0.0, color="grey", lw=0.8, ls=":")
        metric = f" ({self.metric})" if self.metric else ""
        ax.set_xlabel(f"mean difference {pair}{metric}")
        ax.set_ylabel("posterior density")
        ax.set_title(f"{self.method}\nP({self.a or 'a'} worse) = {number(self.p_left, 2)}, "
                     f"P(equivalent) = {number(self.p_rope, 2)}, "
                     f"P({self.a or 'a'} better) = {number(self.p_right, 2)}",
                     fontsize=8, loc="left")
        for side in ("right", "top"):
            ax.spines[side].set_visible(False)
        return ax

    def __str__(self) -> str:
        pair = f"{self.a} - {self.b}" if (self.a or self.b) else "a - b"
        metric = f" ({self.metric})" if self.metric else ""
        ci = self.confidence_interval()
        return (
            f"{self.method}\n"
            f"  {pair}{metric}: posterior mean = {_fmt(self.estimate)}, scale = "
            f"{_fmt(self.scale)}, df = {_fmt(self.df)}, 95% credible interval "
            f"{_interval_text(ci.low, ci.high, 4)}\n"
            f"  practically equivalent within ±{_fmt(self.tolerance)}: "
            f"P(a worse) = {self.p_left:.4f}, P(equivalent) = {self.p_rope:.4f}, "
            f"P(a better) = {self.p_right:.4f}"
        )
