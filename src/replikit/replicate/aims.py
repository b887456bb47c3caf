"""The three aims of a replication (Vijayakumar & Cheung 2021, after Anderson & Maxwell 2016).

1. :func:`inconsistency` — does the replication contradict the original? The interval of the
   difference (replication − original) excludes 0 → ``'inconsistent'``; otherwise
   ``'not shown inconsistent'`` (never "consistent": failing to reject is not acceptance).
2. :func:`consistency` — does it confirm the original? Two one-sided z tests with known SE
   (Schuirmann 1987; as R's ``TOSTER::TOSTmeta``): ``'consistent'`` iff the (default 90%)
   interval of the difference lies inside the region of equivalence ``±tolerance``.
3. :func:`combine` — pool original and replications by meta-analysis.

Differences of two independent estimates (:func:`difference`) take one ``interval`` from
:data:`DIFF_INTERVALS`: ``'wald'`` (the simple asymptotic interval, eq. 2 of the paper),
``'mover'`` (Zou's (2007) modified asymptotic interval) or a bootstrap interval
(``'percentile'``, ``'basic'``).

Calibrated defaults for a test-set R² (docs/replicate.md, "R² by sample type"): the difference
interval is the basic bootstrap when both estimates carry bootstrap replicates (the paper's
recommendation; size .03–.05 at n = 100–667) and otherwise the Wald interval with the estimates'
own SEs — calibrated with the delta-method SEs that :func:`~replikit.replicate.from_predictions`
gives a test-set R² by default (size .045–.051). The paper's literal test — the Wald interval with
Olkin–Finn SEs of reported R²s — is kept (it is what :func:`~replikit.replicate.from_summary`
estimates allow) but rejects a true null .15–.38 of the time when the models are fitted with
estimation error (n = 100–133), .07 at n = 667; it emits a
:class:`~replikit.errors.ValidityWarning`. MOVER uses Lee's (1971) single-study limits only for
an in-sample R² (on a test-set R² its size was .09–.18 at n = 100–133).

Old spellings keep working for one release, with a FutureWarning: ``interval='sa'`` is
``'wald'``; ``interval='bootstrap'`` with ``boot_interval='basic'`` or ``'percentile'`` is
``interval='basic'`` or ``'percentile'``; ``margin=`` is ``tolerance=``.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._compat import REMOVED_IN, old_value, renamed
from .._format import interval as _interval_text
from .._format import number, pvalue
from .._validation import check_confidence_level, check_float, check_interval
from ..errors import DataError, ParameterError, ParameterTypeError, ValidityWarning, warn
from ..results import ConfidenceInterval, Result, to_jsonable, wald_interval
from .estimates import Estimate, _quiet, bootstrap_interval
from .meta import MetaResult, meta_analysis

__all__ = ["Difference", "difference", "Inconsistency", "inconsistency", "Consistency",
           "consistency", "combine", "replication_table", "DIFF_INTERVALS"]

#: The intervals of a difference of two independent estimates.
DIFF_INTERVALS = ("wald", "mover", "percentile", "basic")
_BOOT = ("percentile", "basic")
_DIFF_NAMES = {"wald": "simple asymptotic (Wald)", "mover": "modified asymptotic (Zou 2007)",
               "percentile": "bootstrap, percentile", "basic": "bootstrap, basic"}
#: Old values of ``interval`` (before replikit 0.2) -> new ones.
_OLD_INTERVALS = {"sa": "wald", "bootstrap": "basic"}

def _future(message: str, stacklevel: int) -> None:
    warnings.warn(f"{message}; the old name will stop working in replikit {REMOVED_IN}.",
                  FutureWarning, stacklevel=stacklevel + 1)


def _old_difference_interval(func):
    """Accept the old spellings of a difference's interval, with a FutureWarning each:
    ``interval='sa'`` (now ``'wald'``), ``interval='bootstrap'`` (now ``'basic'``) and
    ``boot_interval=`` (now the value of ``interval`` itself; with ``interval=None`` the kind
    the default bootstrap takes)."""
    where = f"{func.__qualname__.replace('.__init__', '')}()"
    signature = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        boot = kwargs.pop("boot_interval", None)
        bound = signature.bind_partial(*args, **kwargs)
        value = bound.arguments.get("interval")
        if boot is not None:
            _future(f"`boot_interval` is now part of `interval` in {where} "
                    f"(interval={boot!r})", stacklevel=2)
            o, r = bound.arguments.get("original"), bound.arguments.get("replication")
            if value == "bootstrap" or (
                    value is None and isinstance(o, Estimate) and isinstance(r, Estimate)
                    and _default_interval(o, r) in _BOOT):
                bound.arguments["interval"] = boot
        elif isinstance(value, str):
            bound.arguments["interval"] = old_value(value, "interval", _OLD_INTERVALS, where)
        return func(*bound.args, **bound.kwargs)

    return wrapper


def _check_estimate(obj, name):
    if not isinstance(obj, Estimate):
        raise ParameterTypeError(f"`{name}` must be a replikit.replicate.Estimate; got "
                                 f"{type(obj).__name__}.")
    return obj


def _single_limits(e: Estimate, level: float) -> ConfidenceInterval:
    """Single-study limits for MOVER: Lee's approximation for an in-sample R2 with n and k
    (random predictors, or fixed for ``interval='lee_fixed'``); otherwise the estimate's own
    interval (bootstrap, Wilson, Wald, or Lee where the estimate asked for it).

    Lee's limits model an in-sample R2; on a test-set R2 they made MOVER never reject (size 0
    at n = 133, k = 36 with a calibrated model), so a test-set or cross-validated R2 keeps its
    own (calibrated) interval."""
    use_lee = (e.metric == "r2" and e.sample == "in_sample" and e.n is not None
               and e.k is not None and e.interval in ("wald", "lee", "lee_fixed")
               and 0 <= e.estimate < 1)
    if use_lee:
        from .estimates import r2_confidence_interval

        pred = "fixed" if e.interval == "lee_fixed" else "random"
        return r2_confidence_interval(e.estimate, e.n, e.k, level, method="lee", predictors=pred,
                                      sample="in_sample")
    with _quiet():
        return e.confidence_interval(level)


def _default_interval(original: Estimate, replication: Estimate) -> str:
    """The basic bootstrap when both estimates carry bootstrap replicates (the paper's
    recommendation), else the Wald interval with the estimates' SEs."""
    if len(original.replicates) >= 10 and len(replication.replicates) >= 10:
        return "basic"
    return "wald"


def _difference_issues(original: Estimate, replication: Estimate, interval: str) -> list[str]:
    """Why this difference of R2s is not calibrated (empty when it is)."""
    issues = []
    if original.metric != "r2":
        return issues
    if original.sample != replication.sample:
        issues.append(f"the original is {original.sample.replace('_', '-')} and the replication "
                      f"{replication.sample.replace('_', '-')}: an in-sample R2 estimates rho2, "
                      "a test-set or cross-validated R2 the fitted model's out-of-sample R2, so "
                      "their difference tests no common parameter")
    if interval in ("wald", "mover"):
        bad = sorted({e.source for e in (original, replication)
                      if e.sample == "test_set" and e.source in ("olkin_finn", "cohen")})
        if bad:
            issues.append(f"`interval`={interval!r} with {'/'.join(bad)} SEs of a test-set R2 "
                          "assumes calibrated predictions (yhat = E[y|x]); with a fitted model "
                          "it rejects a true null .14-.38 of the time at n = 100-133 (nominal "
                          ".05). Give the predictions: from_predictions() uses the delta-method "
                          "SE, or se_method='bootstrap' with `interval`='basic'")
    return issues


def _boot_diffs(original: Estimate, replication: Estimate) -> np.ndarray:
    """Replicate b of the replication minus replicate b of the original."""
    a = np.asarray(replication.replicates, float)
    b = np.asarray(original.replicates, float)
    m = min(a.size, b.size)
    return a[:m] - b[:m]


@dataclass(frozen=True, slots=True)
class Difference(Result):
    """The difference ``replication − original`` of two independent estimates.

    Attributes
    ----------
    estimate : float
        ``d = replication.estimate − original.estimate``.
    se : float
        ``sqrt(se_original² + se_replication²)`` (the SD of the bootstrap differences for a
        bootstrap interval).
    interval : {'wald', 'mover', 'percentile', 'basic'}
        The interval of the difference (see :func:`difference`).
    original : Estimate
        The original study's estimate.
    replication : Estimate
        The replication's estimate.

    See Also
    --------
    difference : Builds it.
    Inconsistency : The first aim, on this difference.
    Consistency : The second aim, on this difference.

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> d = difference(from_summary(estimate=0.41, se=0.02), from_summary(estimate=0.38, se=0.02))
    >>> round(d.estimate, 2), d.interval
    (-0.03, 'wald')
    >>> print(d.confidence_interval())
    [-0.08544, 0.02544]
    """

    estimate: float
    se: float
    interval: str
    original: Estimate
    replication: Estimate

    @property
    def title(self) -> str:
        return f"Difference replication − original ({_DIFF_NAMES[self.interval]})"

    @property
    def statistic(self) -> float:
        """z of the test of ``difference = 0``: ``estimate / se``."""
        return self.estimate / self.se if self.se > 0 else math.copysign(math.inf, self.estimate)

    @property
    def pvalue(self) -> float:
        """Two-sided p-value of the z test of ``difference = 0``."""
        return float(min(1.0, 2 * stats.norm.sf(abs(self.statistic))))

    @property
    def alternative(self) -> str:
        """The alternative of the z test: ``'two-sided'``."""
        return "two-sided"

    @property
    def boot_interval(self) -> str:
        """Old name: the bootstrap interval is now the value of :attr:`interval` (warns)."""
        _future("`Difference.boot_interval` is now `Difference.interval`", stacklevel=2)
        return self.interval if self.interval in _BOOT else "basic"

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Two-sided interval of the difference by the result's ``interval``.

        ``'wald'``: ``d ± z SE_d`` (Vijayakumar & Cheung 2021, eq. 2). ``'mover'``:
        ``L = d − sqrt((r − l_r)² + (u_o − o)²)``, ``U = d + sqrt((u_r − r)² + (o − l_o)²)``
        with r, o the replication and original values and (l, u) their single-study limits
        (Zou 2007). ``'percentile'``, ``'basic'``: that bootstrap interval of the paired
        bootstrap differences.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        level = check_confidence_level(confidence_level)
        d = self.estimate
        if self.interval == "wald":
            return wald_interval(d, self.se, level)
        if self.interval == "mover":
            o, r = self.original, self.replication
            lo_o, hi_o = _single_limits(o, level)
            lo_r, hi_r = _single_limits(r, level)
            low = d - math.sqrt((r.estimate - lo_r) ** 2 + (hi_o - o.estimate) ** 2)
            high = d + math.sqrt((hi_r - r.estimate) ** 2 + (o.estimate - lo_o) ** 2)
            return ConfidenceInterval(low, high)
        return bootstrap_interval(_boot_diffs(self.original, self.replication), d, level,
                                  self.interval)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row: ``original, replication, interval, estimate, se, ci_low, ci_high,
        confidence_level, statistic, pvalue``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low``/``ci_high``.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        ci = self.confidence_interval(confidence_level)
        return pd.DataFrame([{"original": self.original.label,
                              "replication": self.replication.label, "interval": self.interval,
                              "estimate": self.estimate, "se": self.se, "ci_low": ci.low,
                              "ci_high": ci.high, "confidence_level": confidence_level,
                              "statistic": self.statistic, "pvalue": self.pvalue}])

    def to_dict(self) -> dict:
        """The row of :meth:`to_frame` in JSON types.

        Returns
        -------
        dict
            ``original, replication, interval, estimate, se, ci_low, ci_high, ...``.
        """
        return to_jsonable(self.to_frame().iloc[0].to_dict())

    def __str__(self) -> str:
        ci = self.confidence_interval()
        return (f"Difference replication − original ({_DIFF_NAMES[self.interval]}): "
                f"{number(self.estimate, 4)} (SE {number(self.se, 4)}), 95% CI {ci}, "
                f"z = {number(self.statistic)}, p = {pvalue(self.pvalue)}")


@_old_difference_interval
def difference(original: Estimate, replication: Estimate, *,
               interval: str | None = None) -> Difference:
    """The difference of two independent estimates, ``replication − original``.

    Parameters
    ----------
    original : Estimate
        The original study's estimate.
    replication : Estimate
        The replication's estimate (same metric).
    interval : {'wald', 'mover', 'percentile', 'basic'}, optional
        Interval of the difference. ``'wald'``: the simple asymptotic interval,
        ``SE_d = sqrt(se_1² + se_2²)`` (Vijayakumar & Cheung 2021, eq. 2). ``'mover'``: Zou's
        (2007) modified asymptotic interval with single-study limits from Lee's (1971)
        approximation (an in-sample R² with n and k) or the estimates' own intervals (the
        paper's "MA method"). ``'percentile'``, ``'basic'``: both estimates must carry
        bootstrap replicates (:func:`~replikit.replicate.from_predictions` with
        ``se_method='bootstrap'``); replicate b of one minus replicate b of the other, and
        that bootstrap interval (``'basic'`` is the paper's "empirical bootstrap"). Default:
        ``'basic'`` when both estimates carry replicates, else ``'wald'`` (see the module notes
        for where each is calibrated). A combination known to be miscalibrated for R²
        (Olkin–Finn or Cohen SEs of test-set R²s with ``'wald'``/``'mover'``; an in-sample R²
        against a test-set one) emits a :class:`~replikit.errors.ValidityWarning`.

    Returns
    -------
    Difference
        The difference, its SE and its interval.

    See Also
    --------
    inconsistency : Is 0 outside the interval of the difference?
    consistency : Is the interval inside the region of equivalence?

    Notes
    -----
    The paper writes ``d = R₁² − R₂²``; replikit reports replication − original throughout, as
    the paper's figures do ("Replication − Original").

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Zou, G. Y. (2007). Toward Using Confidence Intervals to Compare Correlations.
       Psychological Methods, 12(4), 399–413. https://doi.org/10.1037/1082-989X.12.4.399
    .. [3] Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and Their Application.
       Cambridge University Press.

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> o = from_summary(r2=0.45, n=200, k=10, sample="in_sample")
    >>> r = from_summary(r2=0.30, n=150, k=10, sample="in_sample")
    >>> print(difference(o, r, interval="mover").confidence_interval())  # Lee's limits
    [-0.3352, 0.01053]
    """
    _check_estimate(original, "original")
    _check_estimate(replication, "replication")
    if interval is None:
        interval = _default_interval(original, replication)
    interval = check_interval(interval, DIFF_INTERVALS)
    if original.metric != replication.metric:
        raise DataError(f"`original` and `replication` must share a metric; got "
                        f"{original.metric!r} and {replication.metric!r}.")
    for issue in _difference_issues(original, replication, interval):
        warn(f"difference of R2s: {issue}.", ValidityWarning, stacklevel=4)
    d = replication.estimate - original.estimate
    se = math.hypot(original.se, replication.se)
    if interval in _BOOT:
        for name, e in (("original", original), ("replication", replication)):
            if len(e.replicates) < 10:
                raise ParameterError(f"`interval`={interval!r} needs bootstrap replicates in "
                                     f"`{name}` (from_predictions(..., se_method='bootstrap')); "
                                     f"it has {len(e.replicates)}.")
        se = float(np.nanstd(_boot_diffs(original, replication), ddof=1))
    return Difference(d, se, interval, original, replication)


Difference.__init__ = _old_difference_interval(Difference.__init__)


def _interval_fields(cls):
    """The old ``ci`` field of a result, now ``ci_low`` and ``ci_high``: accepted as a
    constructor keyword and read as an attribute, each with a FutureWarning."""
    where = f"{cls.__name__}()"
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if "ci" in kwargs:
            _future(f"`ci` is now `ci_low` and `ci_high` in {where}", stacklevel=2)
            low, high = kwargs.pop("ci")
            kwargs.update(ci_low=low, ci_high=high)
        init(self, *args, **kwargs)

    def ci(self) -> ConfidenceInterval:
        _future(f"`{cls.__name__}.ci` is now `{cls.__name__}.confidence_interval()` (and "
                "`ci_low`, `ci_high`)", stacklevel=2)
        return ConfidenceInterval(self.ci_low, self.ci_high)

    cls.__init__ = __init__
    cls.ci = property(ci, doc="Old name of ``(ci_low, ci_high)`` (warns).")
    return cls


@_interval_fields
@dataclass(frozen=True, slots=True)
class Inconsistency(Result):
    """The test of inconsistency: whether 0 lies outside the interval of the difference.

    Attributes
    ----------
    difference : Difference
        The difference and its interval.
    confidence_level : float
        Level of the interval (0.95 by default).
    ci_low, ci_high : float
        The interval of the difference at ``confidence_level``.
    verdict : str
        ``'inconsistent'`` or ``'not shown inconsistent'``.

    See Also
    --------
    inconsistency : Builds it.
    Consistency : The second aim.

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> res = inconsistency(from_summary(estimate=0.41, se=0.03),
    ...                     from_summary(estimate=0.30, se=0.03))
    >>> res.verdict, res.inconsistent
    ('inconsistent', True)
    """

    difference: Difference
    confidence_level: float
    ci_low: float
    ci_high: float
    verdict: str

    @property
    def title(self) -> str:
        return "Test of inconsistency"

    @property
    def estimate(self) -> float:
        """The difference ``replication − original``."""
        return self.difference.estimate

    @property
    def se(self) -> float:
        """The SE of the difference."""
        return self.difference.se

    @property
    def statistic(self) -> float:
        """z of the test of ``difference = 0``."""
        return self.difference.statistic

    @property
    def pvalue(self) -> float:
        """Two-sided p-value of the test of ``difference = 0``."""
        return self.difference.pvalue

    @property
    def alternative(self) -> str:
        """``'two-sided'``."""
        return "two-sided"

    @property
    def inconsistent(self) -> bool:
        """True when the verdict is ``'inconsistent'``."""
        return self.verdict == "inconsistent"

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the difference.

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval; default: the test's own :attr:`confidence_level`.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        if confidence_level is None:
            return ConfidenceInterval(self.ci_low, self.ci_high)
        return self.difference.confidence_interval(confidence_level)

    def to_frame(self) -> pd.DataFrame:
        """One row: the difference, its interval, the z test of ``difference = 0``
        (``test``, ``statistic``, ``pvalue``) and the verdict.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        out = self.difference.to_frame(self.confidence_level)
        out.insert(out.columns.get_loc("statistic"), "test", "difference = 0")
        out["verdict"] = self.verdict
        return out

    def to_dict(self) -> dict:
        """The row of :meth:`to_frame` in JSON types.

        Returns
        -------
        dict
            ``original, replication, interval, estimate, se, ci_low, ci_high, ..., verdict``.
        """
        return to_jsonable(self.to_frame().iloc[0].to_dict())

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        return (f"Test of inconsistency ({_DIFF_NAMES[self.difference.interval]}): difference "
                f"{number(self.estimate, 4)}, {lvl}% CI "
                f"{_interval_text(self.ci_low, self.ci_high, 4)} -> {self.verdict}")


@_old_difference_interval
def inconsistency(original: Estimate, replication: Estimate, *, confidence_level: float = 0.95,
                  interval: str | None = None) -> Inconsistency:
    """Test whether a replication is inconsistent with the original (the first aim).

    Parameters
    ----------
    original : Estimate
        The original study's estimate.
    replication : Estimate
        The replication's estimate.
    confidence_level : float, default 0.95
        Level of the interval of the difference (the paper's choice).
    interval : {'wald', 'mover', 'percentile', 'basic'}, optional
        The interval of the difference (see :func:`difference`; default: the basic bootstrap
        when both estimates carry replicates, else Wald).

    Returns
    -------
    Inconsistency
        ``verdict='inconsistent'`` iff the interval of ``replication − original`` excludes 0;
        else ``'not shown inconsistent'`` (asymmetric: this never establishes consistency).

    See Also
    --------
    consistency : The second aim: is the replication shown consistent?
    difference : The difference and its interval.

    Notes
    -----
    Vijayakumar & Cheung (2021), "Test for inconsistency", Figures 3 and 6A, after Anderson &
    Maxwell (2016).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Anderson, S. F. & Maxwell, S. E. (2016). There's More Than One Way to Conduct a
       Replication Study: Beyond Statistical Significance. Psychological Methods, 21(1), 1–12.
       https://doi.org/10.1037/met0000051

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> res = inconsistency(from_summary(estimate=0.41, se=0.03),
    ...                     from_summary(estimate=0.30, se=0.03))
    >>> print(res.verdict, res.confidence_interval())
    inconsistent [-0.1932, -0.02685]
    """
    level = check_confidence_level(confidence_level)
    diff = difference(original, replication, interval=interval)
    ci = diff.confidence_interval(level)
    verdict = "inconsistent" if (ci.low > 0 or ci.high < 0) else "not shown inconsistent"
    return Inconsistency(diff, level, ci.low, ci.high, verdict)


@_interval_fields
@dataclass(frozen=True, slots=True)
class Consistency(Result):
    """The test of consistency (equivalence, TOST) of ``replication − original``.

    Attributes
    ----------
    difference : Difference
        The difference and its interval.
    bounds : tuple of float
        Region of equivalence ``(low, high)``.
    confidence_level : float
        Level of the interval compared with the region (0.90 = two one-sided tests at 5%).
    ci_low, ci_high : float
        The interval of the difference at ``confidence_level``.
    statistic_lower, pvalue_lower : float
        ``z = (d − low)/SE_d``, ``p = P(Z >= z)`` (H0: d <= low).
    statistic_upper, pvalue_upper : float
        ``z = (d − high)/SE_d``, ``p = P(Z <= z)`` (H0: d >= high).
    verdict : str
        ``'consistent'`` iff the interval lies inside ``bounds``, else
        ``'not shown consistent'``.

    See Also
    --------
    consistency : Builds it.
    Inconsistency : The first aim.

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> res = consistency(from_summary(estimate=0.41, se=0.01),
    ...                   from_summary(estimate=0.40, se=0.01))
    >>> res.verdict, round(res.pvalue, 4)
    ('consistent', 0.0023)
    """

    difference: Difference
    bounds: tuple
    confidence_level: float
    ci_low: float
    ci_high: float
    statistic_lower: float
    pvalue_lower: float
    statistic_upper: float
    pvalue_upper: float
    verdict: str

    @property
    def title(self) -> str:
        return "Test of consistency (TOST)"

    @property
    def estimate(self) -> float:
        """The difference ``replication − original``."""
        return self.difference.estimate

    @property
    def se(self) -> float:
        """The SE of the difference."""
        return self.difference.se

    @property
    def pvalue(self) -> float:
        """TOST p-value: the larger of the two one-sided p-values."""
        return max(self.pvalue_lower, self.pvalue_upper)

    @property
    def statistic(self) -> float:
        """z of the binding one-sided test (the one whose p-value is :attr:`pvalue`)."""
        return (self.statistic_lower if self.pvalue_lower >= self.pvalue_upper
                else self.statistic_upper)

    @property
    def consistent(self) -> bool:
        """True when the verdict is ``'consistent'``."""
        return self.verdict == "consistent"

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval of the difference.

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval; default: the test's own :attr:`confidence_level` (0.90 for
            two one-sided tests at 5%).

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        if confidence_level is None:
            return ConfidenceInterval(self.ci_low, self.ci_high)
        return self.difference.confidence_interval(confidence_level)

    def to_frame(self) -> pd.DataFrame:
        """One row: the difference and its interval at ``confidence_level``, the region, each
        one-sided test (``statistic_lower``/``pvalue_lower``: H0 d <= low;
        ``statistic_upper``/``pvalue_upper``: H0 d >= high), the TOST (``test='TOST'``,
        ``statistic`` and ``pvalue`` of the binding one-sided test) and the verdict.

        The z test of ``d = 0`` belongs to :class:`Inconsistency` and is not repeated here.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        return pd.DataFrame([{
            "original": self.difference.original.label,
            "replication": self.difference.replication.label,
            "interval": self.difference.interval, "estimate": self.estimate, "se": self.se,
            "ci_low": self.ci_low, "ci_high": self.ci_high,
            "confidence_level": self.confidence_level,
            "bound_low": self.bounds[0], "bound_high": self.bounds[1],
            "statistic_lower": self.statistic_lower, "pvalue_lower": self.pvalue_lower,
            "statistic_upper": self.statistic_upper, "pvalue_upper": self.pvalue_upper,
            "test": "TOST", "statistic": self.statistic, "pvalue": self.pvalue,
            "verdict": self.verdict}])

    def to_dict(self) -> dict:
        """The row of :meth:`to_frame` in JSON types.

        Returns
        -------
        dict
            ``original, replication, interval, estimate, se, ci_low, ci_high, ..., verdict``.
        """
        return to_jsonable(self.to_frame().iloc[0].to_dict())

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        return (f"Test of consistency (TOST, region {_interval_text(*self.bounds, 4)}): "
                f"difference {number(self.estimate, 4)}, {lvl}% CI "
                f"{_interval_text(self.ci_low, self.ci_high, 4)}; "
                f"z_lower = {number(self.statistic_lower, 4)} (p {pvalue(self.pvalue_lower)}), "
                f"z_upper = {number(self.statistic_upper, 4)} (p {pvalue(self.pvalue_upper)})"
                f" -> {self.verdict}")


@renamed(margin="tolerance")
@_old_difference_interval
def consistency(original: Estimate, replication: Estimate, *, tolerance: float | None = 0.05,
                bounds: tuple[float, float] | None = None, confidence_level: float = 0.90,
                interval: str | None = None) -> Consistency:
    """Test whether a replication is consistent with the original (the second aim).

    Parameters
    ----------
    original : Estimate
        The original study's estimate.
    replication : Estimate
        The replication's estimate.
    tolerance : float, optional, default 0.05
        Symmetric region of equivalence ``(−tolerance, +tolerance)``, in the metric's units.
        The paper's "interval of width .05 around zero" is read as ±.05 (the default).
    bounds : (float, float), optional
        An asymmetric region ``(low, high)``; overrides ``tolerance``.
    confidence_level : float, default 0.90
        The interval inside the region is equivalent to two one-sided tests at
        ``(1 − confidence_level) / 2``: 5% by default.
    interval : {'wald', 'mover', 'percentile', 'basic'}, optional
        The interval of the difference (see :func:`difference`). The TOST z and p-values
        always use ``SE_d``; the verdict uses the interval named by ``interval``.

    Returns
    -------
    Consistency
        The two one-sided tests, the interval and the verdict (``'consistent'`` iff the
        interval lies inside the region).

    See Also
    --------
    inconsistency : The first aim: does the replication contradict the original?
    difference : The difference and its interval.

    Notes
    -----
    Vijayakumar & Cheung (2021), "Test for consistency", Figures 4 and 6B: two one-sided z
    tests with known SE (Schuirmann 1987), as R's ``TOSTER::TOSTmeta``.

    References
    ----------
    .. [1] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680.
       https://doi.org/10.1007/BF01068419
    .. [2] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [3] Anderson, S. F. & Maxwell, S. E. (2016). There's More Than One Way to Conduct a
       Replication Study: Beyond Statistical Significance. Psychological Methods, 21(1), 1–12.
       https://doi.org/10.1037/met0000051

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> res = consistency(from_summary(estimate=0.41, se=0.03),
    ...                   from_summary(estimate=0.40, se=0.02), tolerance=0.05)
    >>> print(res.verdict, res.confidence_interval())
    not shown consistent [-0.06931, 0.04931]
    """
    level = check_confidence_level(confidence_level)
    if bounds is None:
        if tolerance is None:
            raise ParameterError("give `tolerance` or `bounds`; got neither.")
        m = check_float(tolerance, "tolerance", min_value=0.0)
        if m <= 0:
            raise ParameterError(f"`tolerance` must be > 0; got {tolerance}.")
        bounds = (-m, m)
    else:
        if len(bounds) != 2:
            raise ParameterError(f"`bounds` must be (low, high); got {bounds!r}.")
        lo = check_float(bounds[0], "bounds[0]")
        hi = check_float(bounds[1], "bounds[1]")
        if not lo < hi:
            raise ParameterError(f"`bounds` must satisfy low < high; got ({lo}, {hi}).")
        bounds = (lo, hi)
    diff = difference(original, replication, interval=interval)
    ci = diff.confidence_interval(level)
    d, se = diff.estimate, diff.se
    with np.errstate(divide="ignore"):
        z_lo = (d - bounds[0]) / se if se > 0 else math.inf
        z_hi = (d - bounds[1]) / se if se > 0 else -math.inf
    p_lo = float(stats.norm.sf(z_lo))
    p_hi = float(stats.norm.cdf(z_hi))
    verdict = "consistent" if (ci.low > bounds[0] and ci.high < bounds[1]) else \
        "not shown consistent"
    return Consistency(diff, tuple(bounds), level, ci.low, ci.high, float(z_lo), p_lo,
                       float(z_hi), p_hi, verdict)


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def combine(estimates, *, tau2_method: str = "REML", interval: str = "wald",
            knha_floor: bool = False, pi_dist: str | None = None) -> MetaResult:
    """Pool original and replications by meta-analysis (the third aim).

    Parameters
    ----------
    estimates : sequence of Estimate
        The studies' estimates (one metric).
    tau2_method : {'FE', 'DL', 'REML', 'ML', 'PM', 'HE', 'SJ', 'HS'}, default 'REML'
        Fixed effect, or the τ² estimator of the random-effects model.
    interval : {'wald', 'knha'}, default 'wald'
        The pooled interval: Wald (z) or Knapp & Hartung (2003), t(k − 1).
    knha_floor : bool, default False
        Never let the Knapp–Hartung SE fall below the Wald one (metafor's ``test='adhoc'``).
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Reference distribution of the prediction interval (default as metafor: z with
        ``interval='wald'``, t(k − 1) with ``'knha'``; see
        :func:`~replikit.replicate.meta_analysis`).

    Returns
    -------
    MetaResult
        The pooled estimate, its interval, τ², Q, I² and the prediction interval.

    See Also
    --------
    meta_analysis : The meta-analysis of any effects with their SEs.
    inconsistency : The first aim.
    consistency : The second aim.

    Notes
    -----
    Vijayakumar & Cheung (2021), "Combining studies for population R² estimates", Figures
    7–8.

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03
    .. [3] Knapp, G. & Hartung, J. (2003). Improved Tests for a Random Effects Meta-Regression
       with a Single Covariate. Statistics in Medicine, 22(17), 2693–2710.
       https://doi.org/10.1002/sim.1482

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> res = combine([from_summary(estimate=0.41, se=0.03, label="original"),
    ...                from_summary(estimate=0.38, se=0.02, label="replication")],
    ...               tau2_method="FE")
    >>> round(res.estimate, 4), res.labels
    (0.3892, ('original', 'replication'))
    """
    ests = list(estimates)
    for i, e in enumerate(ests):
        _check_estimate(e, f"estimates[{i}]")
    if len({e.metric for e in ests}) > 1:
        raise DataError("`estimates` must share one metric; got "
                        f"{sorted({e.metric for e in ests})}.")
    return meta_analysis([e.estimate for e in ests], se=[e.se for e in ests],
                         labels=[e.label or f"Study {i + 1}" for i, e in enumerate(ests)],
                         tau2_method=tau2_method, interval=interval, knha_floor=knha_floor,
                         pi_dist=pi_dist)


@renamed(margin="tolerance", values={"interval": _OLD_INTERVALS})
def replication_table(original: Estimate, replications, *, tolerance: float = 0.05,
                      bounds: tuple[float, float] | None = None, interval: str | None = None,
                      inconsistency_level: float = 0.95,
                      consistency_level: float = 0.90) -> pd.DataFrame:
    """The first two aims for each replication, one row per replication.

    Parameters
    ----------
    original : Estimate
        The original study's estimate.
    replications : sequence of Estimate
        The replications' estimates.
    tolerance : float, default 0.05
        Region of equivalence ``±tolerance`` of the consistency test.
    bounds : (float, float), optional
        An asymmetric region ``(low, high)``; overrides ``tolerance``.
    interval : {'wald', 'mover', 'percentile', 'basic'}, optional
        The interval of each difference (see :func:`difference`; default per pair).
    inconsistency_level : float, default 0.95
        Level of the interval of the test of inconsistency.
    consistency_level : float, default 0.90
        Level of the interval of the test of consistency.

    Returns
    -------
    pandas.DataFrame
        Columns ``replication, original, estimate`` (the replication's estimate),
        ``difference, se, ci_low, ci_high, statistic, pvalue`` (replication − original, its SE,
        its inconsistency interval and the z test of difference = 0), ``inconsistency``,
        ``tost_ci_low, tost_ci_high`` (the consistency interval), ``statistic_tost,
        pvalue_tost`` (the binding one-sided test) and ``consistency``.

    See Also
    --------
    inconsistency : The first aim for one replication.
    consistency : The second aim for one replication.
    analyze_replications : Both aims and the combination, for every model at once.

    Notes
    -----
    Figures 3–4 and 6 of Vijayakumar & Cheung (2021) in tabular form.

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680.
       https://doi.org/10.1007/BF01068419

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> o = from_summary(estimate=0.45, se=0.01, label="original")
    >>> reps = [from_summary(estimate=0.30, se=0.01, label="far"),
    ...         from_summary(estimate=0.449, se=0.003, label="near")]
    >>> replication_table(o, reps)[["replication", "inconsistency", "consistency"]]
      replication           inconsistency           consistency
    0         far            inconsistent  not shown consistent
    1        near  not shown inconsistent            consistent
    """
    rows = []
    for r in replications:
        inc = inconsistency(original, r, confidence_level=inconsistency_level,
                            interval=interval)
        con = consistency(original, r, tolerance=tolerance, bounds=bounds,
                          confidence_level=consistency_level, interval=interval)
        rows.append({"replication": r.label, "original": original.label,
                     **replication_row(r, inc, con)})
    return pd.DataFrame(rows)


def replication_row(replication: Estimate, inc: Inconsistency, con: Consistency) -> dict:
    """The columns of one replication in :func:`replication_table` (and
    :func:`~replikit.replicate.analyze_replications`)."""
    return {"estimate": replication.estimate, "difference": inc.estimate, "se": inc.se,
            "ci_low": inc.ci_low, "ci_high": inc.ci_high, "statistic": inc.statistic,
            "pvalue": inc.pvalue, "inconsistency": inc.verdict, "tost_ci_low": con.ci_low,
            "tost_ci_high": con.ci_high, "statistic_tost": con.statistic,
            "pvalue_tost": con.pvalue, "consistency": con.verdict}
