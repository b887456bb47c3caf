"""The three aims of a replication (seed 000, after Anderson & Maxwell 2016).

1. :func:`inconsistency` — does the replication contradict the original? The CI of the
   difference (replication - original) excludes 0 -> ``'inconsistent'``; otherwise
   ``'not shown inconsistent'`` (never "consistent": failing to reject is not acceptance).
2. :func:`consistency` — does it confirm the original? Two one-sided z tests with known SE
   (TOST, as R's ``TOSTER::TOSTmeta``): ``'consistent'`` iff the (default 90%) CI of the
   difference lies inside the region of equivalence.
3. :func:`combine` — pool original and replications by meta-analysis.

Differences of two independent estimates (:func:`difference`) use the simple asymptotic interval
(seed eq. 2), Zou's (2007) modified asymptotic interval (MOVER) or the bootstrap.

Calibrated defaults for test-set R2 (docs/replicate.md, "R2 by sample type"): the difference
interval is the bootstrap when both estimates carry bootstrap replicates (the seed's
recommendation; size .03-.05 at n = 100-667) and otherwise the simple asymptotic interval with
the estimates' own SEs — calibrated with the delta-method SEs that
:func:`~replikit.replicate.from_predictions` gives a test-set R2 by default (size .045-.051).
The seed's literal test — simple asymptotic with Olkin-Finn SEs of reported R2s — is kept (it is
what :func:`~replikit.replicate.from_summary` estimates allow) but rejects a true null .15-.38
of the time when the models are fitted with estimation error (n = 100-133), .07 at n = 667;
it emits a :class:`~replikit.errors.ValidityWarning`. MOVER uses Lee's single-study limits only
for in-sample R2 (on a test-set R2 its size was .09-.18 at n = 100-133).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._compat import renamed
from .._validation import check_choice, check_confidence_level, check_float
from ..errors import DataError, ParameterError, ParameterTypeError, ValidityWarning, warn
from ..results import ConfidenceInterval
from .estimates import Estimate, _quiet, bootstrap_interval
from .meta import MetaResult, meta_analysis

__all__ = ["Difference", "difference", "Inconsistency", "inconsistency", "Consistency",
           "consistency", "combine", "replication_table", "DIFF_INTERVALS"]

DIFF_INTERVALS = ("sa", "mover", "bootstrap")
_DIFF_NAMES = {"sa": "simple asymptotic (Wald)", "mover": "modified asymptotic (Zou 2007)",
               "bootstrap": "bootstrap"}


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
    """The bootstrap when both estimates carry bootstrap replicates (seed 000's
    recommendation), else the simple asymptotic interval with the estimates' SEs."""
    if len(original.replicates) >= 10 and len(replication.replicates) >= 10:
        return "bootstrap"
    return "sa"


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
    if interval in ("sa", "mover"):
        bad = sorted({e.source for e in (original, replication)
                      if e.sample == "test_set" and e.source in ("olkin_finn", "cohen")})
        if bad:
            issues.append(f"interval={interval!r} with {'/'.join(bad)} SEs of a test-set R2 "
                          "assumes calibrated predictions (yhat = E[y|x]); with a fitted model "
                          "it rejects a true null .14-.38 of the time at n = 100-133 (nominal .05). "
                          "Give the predictions: from_predictions() uses the delta-method SE, "
                          "or se_method='bootstrap' with interval='bootstrap'")
    return issues


@dataclass(frozen=True, slots=True)
class Difference:
    """Difference ``replication - original`` of two independent estimates.

    Attributes
    ----------
    estimate : float
        ``d = replication.estimate - original.estimate``.
    se : float
        ``sqrt(se_orig^2 + se_rep^2)`` (SD of the bootstrap differences for 'bootstrap').
    interval : str
        The interval of the difference: ``'sa'``, ``'mover'`` or ``'bootstrap'``.
    original, replication : Estimate
    boot_interval : str
        ``'basic'`` or ``'percentile'`` (bootstrap only).
    """

    estimate: float
    se: float
    interval: str
    original: Estimate
    replication: Estimate
    boot_interval: str = "basic"

    @property
    def statistic(self) -> float:
        return self.estimate / self.se if self.se > 0 else math.copysign(math.inf, self.estimate)

    @property
    def pvalue(self) -> float:
        """Two-sided z p-value of ``d = 0``."""
        return float(min(1.0, 2 * stats.norm.sf(abs(self.statistic))))

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Two-sided interval of the difference by the result's ``interval``.

        ``'sa'``: ``d +- z SE_d`` (seed eq. 2). ``'mover'``: ``L = d - sqrt((r - l_r)^2 +
        (u_o - o)^2)``, ``U = d + sqrt((u_r - r)^2 + (o - l_o)^2)`` with r/o the replication and
        original values and (l, u) their single-study limits (Zou 2007). ``'bootstrap'``: basic
        or percentile interval of the paired bootstrap differences.
        """
        level = check_confidence_level(confidence_level)
        d = self.estimate
        if self.interval == "sa":
            z = stats.norm.ppf((1 + level) / 2)
            return ConfidenceInterval(d - z * self.se, d + z * self.se)
        if self.interval == "mover":
            o, r = self.original, self.replication
            lo_o, hi_o = _single_limits(o, level)
            lo_r, hi_r = _single_limits(r, level)
            low = d - math.sqrt((r.estimate - lo_r) ** 2 + (hi_o - o.estimate) ** 2)
            high = d + math.sqrt((hi_r - r.estimate) ** 2 + (o.estimate - lo_o) ** 2)
            return ConfidenceInterval(low, high)
        reps = self._boot_diffs()
        return bootstrap_interval(reps, d, level, self.boot_interval)

    def _boot_diffs(self) -> np.ndarray:
        a = np.asarray(self.replication.replicates, float)
        b = np.asarray(self.original.replicates, float)
        m = min(a.size, b.size)
        return a[:m] - b[:m]

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row: ``original, replication, estimate, se, ci_low, ci_high, statistic, pvalue``."""
        ci = self.confidence_interval(confidence_level)
        return pd.DataFrame([{"original": self.original.label,
                              "replication": self.replication.label, "interval": self.interval,
                              "estimate": self.estimate, "se": self.se, "ci_low": ci.low,
                              "ci_high": ci.high, "confidence_level": confidence_level,
                              "statistic": self.statistic, "pvalue": self.pvalue}])

    def __str__(self) -> str:
        ci = self.confidence_interval()
        return (f"Difference replication - original ({_DIFF_NAMES[self.interval]}): "
                f"{self.estimate:.4g} (SE {self.se:.4g}), 95% CI {ci}, z = {self.statistic:.3g},"
                f" p = {self.pvalue:.3g}")


def difference(original: Estimate, replication: Estimate, *, interval: str | None = None,
               boot_interval: str = "basic") -> Difference:
    """Difference of two independent estimates, ``replication - original``.

    Parameters
    ----------
    original, replication : Estimate
    interval : {'sa', 'mover', 'bootstrap'}, optional
        Interval of the difference. 'sa': simple asymptotic, ``SE_d = sqrt(se_1^2 + se_2^2)`` (seed 000 eq. 2, Chan 2008).
        'mover': Zou's (2007) modified asymptotic interval with single-study limits from Lee's
        approximation (in-sample R2 with n, k) or the estimates' own intervals (seed's "MA
        method").
        'bootstrap': both estimates must carry bootstrap replicates (:func:`from_predictions`
        with ``se_method='bootstrap'``); replicate b of one minus replicate b of the other.
        Default: 'bootstrap' when both estimates carry replicates, else 'sa' (see the module
        notes for where each is calibrated). A combination known to be miscalibrated for R2
        (Olkin-Finn/Cohen SEs of test-set R2s with 'sa'/'mover'; an in-sample R2 against a
        test-set one) emits a :class:`~replikit.errors.ValidityWarning`.
    boot_interval : {'basic', 'percentile'}
        'basic' is the seed's "empirical bootstrap".

    Returns
    -------
    Difference

    Notes
    -----
    The seed writes ``d = R1^2 - R2^2``; replikit reports replication - original throughout, as
    the seed's figures do ("Replication - Original"). Example:
    ``difference(from_summary(r2=.41, n=667), from_summary(r2=.35, n=700))``.
    """
    _check_estimate(original, "original")
    _check_estimate(replication, "replication")
    if interval is None:
        interval = _default_interval(original, replication)
    interval = check_choice(interval, "interval", DIFF_INTERVALS)
    boot_interval = check_choice(boot_interval, "boot_interval", ("basic", "percentile"))
    if original.metric != replication.metric:
        raise DataError(f"`original` and `replication` must share a metric; got "
                        f"{original.metric!r} and {replication.metric!r}.")
    for issue in _difference_issues(original, replication, interval):
        warn(f"difference of R2s: {issue}.", ValidityWarning)
    d = replication.estimate - original.estimate
    se = math.hypot(original.se, replication.se)
    if interval == "bootstrap":
        for name, e in (("original", original), ("replication", replication)):
            if len(e.replicates) < 10:
                raise ParameterError(f"interval='bootstrap' needs bootstrap replicates in "
                                     f"`{name}` (from_predictions(..., se_method='bootstrap')); "
                                     f"it has {len(e.replicates)}.")
        res = Difference(d, se, interval, original, replication, boot_interval)
        se = float(np.nanstd(res._boot_diffs(), ddof=1))
    return Difference(d, se, interval, original, replication, boot_interval)


@dataclass(frozen=True, slots=True)
class Inconsistency:
    """Test of inconsistency: is 0 outside the CI of ``replication - original``?

    Attributes
    ----------
    difference : Difference
    confidence_level : float
    ci : ConfidenceInterval
    verdict : str
        ``'inconsistent'`` or ``'not shown inconsistent'``.
    """

    difference: Difference
    confidence_level: float
    ci: ConfidenceInterval
    verdict: str

    @property
    def estimate(self) -> float:
        return self.difference.estimate

    @property
    def se(self) -> float:
        return self.difference.se

    @property
    def ci_low(self) -> float:
        """Lower limit of :attr:`ci` (at :attr:`confidence_level`)."""
        return self.ci.low

    @property
    def ci_high(self) -> float:
        """Upper limit of :attr:`ci` (at :attr:`confidence_level`)."""
        return self.ci.high

    @property
    def statistic(self) -> float:
        return self.difference.statistic

    @property
    def pvalue(self) -> float:
        return self.difference.pvalue

    @property
    def inconsistent(self) -> bool:
        return self.verdict == "inconsistent"

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        return self.difference.confidence_interval(confidence_level or self.confidence_level)

    def to_frame(self) -> pd.DataFrame:
        """One row: the difference, its CI, the z test of ``difference = 0`` (``test``,
        ``statistic``, ``pvalue``) and the verdict."""
        out = self.difference.to_frame(self.confidence_level)
        out.insert(out.columns.get_loc("statistic"), "test", "difference = 0")
        out["verdict"] = self.verdict
        return out

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        return (f"Test of inconsistency ({_DIFF_NAMES[self.difference.interval]}): difference "
                f"{self.estimate:.4g}, {lvl}% CI {self.ci} -> {self.verdict}")


def inconsistency(original: Estimate, replication: Estimate, *, confidence_level: float = 0.95,
                  interval: str | None = None, boot_interval: str = "basic") -> Inconsistency:
    """Test whether a replication is inconsistent with the original (seed 000, first aim).

    Parameters
    ----------
    original, replication : Estimate
    confidence_level : float
        Default 0.95 (the seed's choice).
    interval, boot_interval : str
        Difference interval (see :func:`difference`; default: the bootstrap when both
        estimates carry replicates, else simple asymptotic).

    Returns
    -------
    Inconsistency
        ``verdict='inconsistent'`` iff the CI of ``replication - original`` excludes 0; else
        ``'not shown inconsistent'`` (asymmetric: this never establishes consistency).

    Notes
    -----
    Seed 000, "Test for inconsistency", Figures 3 and 6A (Anderson & Maxwell 2016). Example:
    ``inconsistency(from_summary(r2=.41, n=667), from_summary(r2=.30, n=700)).verdict``.
    """
    level = check_confidence_level(confidence_level)
    diff = difference(original, replication, interval=interval, boot_interval=boot_interval)
    ci = diff.confidence_interval(level)
    verdict = "inconsistent" if (ci.low > 0 or ci.high < 0) else "not shown inconsistent"
    return Inconsistency(diff, level, ci, verdict)


@dataclass(frozen=True, slots=True)
class Consistency:
    """Test of consistency (equivalence, TOST) of ``replication - original``.

    Attributes
    ----------
    difference : Difference
    bounds : tuple of float
        Region of equivalence ``(low, high)``.
    confidence_level : float
        Level of the CI compared with the region (0.90 = two one-sided tests at 5%).
    ci : ConfidenceInterval
    statistic_lower, pvalue_lower : float
        ``z = (d - low)/SE_d``, ``p = P(Z >= z)`` (H0: d <= low).
    statistic_upper, pvalue_upper : float
        ``z = (d - high)/SE_d``, ``p = P(Z <= z)`` (H0: d >= high).
    verdict : str
        ``'consistent'`` iff the CI lies inside ``bounds``, else ``'not shown consistent'``.
    """

    difference: Difference
    bounds: tuple
    confidence_level: float
    ci: ConfidenceInterval
    statistic_lower: float
    pvalue_lower: float
    statistic_upper: float
    pvalue_upper: float
    verdict: str

    @property
    def estimate(self) -> float:
        return self.difference.estimate

    @property
    def se(self) -> float:
        return self.difference.se

    @property
    def ci_low(self) -> float:
        """Lower limit of :attr:`ci` (at :attr:`confidence_level`)."""
        return self.ci.low

    @property
    def ci_high(self) -> float:
        """Upper limit of :attr:`ci` (at :attr:`confidence_level`)."""
        return self.ci.high

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
        return self.verdict == "consistent"

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        return self.difference.confidence_interval(confidence_level or self.confidence_level)

    def to_frame(self) -> pd.DataFrame:
        """One row: the difference and its CI at ``confidence_level``, the region, each
        one-sided test (``statistic_lower``/``pvalue_lower``: H0 d <= low;
        ``statistic_upper``/``pvalue_upper``: H0 d >= high), the TOST (``test='TOST'``,
        ``statistic`` and ``pvalue`` of the binding one-sided test) and the verdict. The z test
        of ``d = 0`` belongs to :class:`Inconsistency` and is not repeated here."""
        c = self.ci
        return pd.DataFrame([{
            "original": self.difference.original.label,
            "replication": self.difference.replication.label,
            "interval": self.difference.interval, "estimate": self.estimate, "se": self.se,
            "ci_low": c.low, "ci_high": c.high, "confidence_level": self.confidence_level,
            "bound_low": self.bounds[0], "bound_high": self.bounds[1],
            "statistic_lower": self.statistic_lower, "pvalue_lower": self.pvalue_lower,
            "statistic_upper": self.statistic_upper, "pvalue_upper": self.pvalue_upper,
            "test": "TOST", "statistic": self.statistic, "pvalue": self.pvalue,
            "verdict": self.verdict}])

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        return (f"Test of consistency (TOST, region [{self.bounds[0]:.4g}, {self.bounds[1]:.4g}]):"
                f" difference {self.estimate:.4g}, {lvl}% CI {self.ci}; "
                f"z_lower = {self.statistic_lower:.4g} (p {self.pvalue_lower:.3g}), "
                f"z_upper = {self.statistic_upper:.4g} (p {self.pvalue_upper:.3g}) -> "
                f"{self.verdict}")


def consistency(original: Estimate, replication: Estimate, *, margin: float | None = 0.05,
                bounds: tuple[float, float] | None = None, confidence_level: float = 0.90,
                interval: str | None = None, boot_interval: str = "basic") -> Consistency:
    """Test whether a replication is consistent with the original (seed 000, second aim).

    Parameters
    ----------
    original, replication : Estimate
    margin : float, optional
        Symmetric region of equivalence ``(-margin, +margin)``. The seed's "interval of width
        .05 around zero" is read as +-.05 (default).
    bounds : (float, float), optional
        An asymmetric region ``(low, high)``; overrides ``margin``.
    confidence_level : float
        Default 0.90: the CI inside the region is equivalent to two one-sided tests at 5%.
    interval, boot_interval : str
        Difference interval (see :func:`difference`). The TOST z and p-values always use
        ``SE_d``; the verdict uses the interval named by ``interval``.

    Returns
    -------
    Consistency

    Notes
    -----
    Seed 000, "Test for consistency", Figures 4 and 6B; two one-sided z tests with known SE as
    ``TOSTER::TOSTmeta``. Example:
    ``consistency(from_summary(r2=.41, n=667), from_summary(r2=.40, n=2000), margin=.05)``.
    """
    level = check_confidence_level(confidence_level)
    if bounds is None:
        if margin is None:
            raise ParameterError("give `margin` or `bounds`; got neither.")
        m = check_float(margin, "margin", min_value=0.0)
        if m <= 0:
            raise ParameterError(f"`margin` must be > 0; got {margin}.")
        bounds = (-m, m)
    else:
        if len(bounds) != 2:
            raise ParameterError(f"`bounds` must be (low, high); got {bounds!r}.")
        lo = check_float(bounds[0], "bounds[0]")
        hi = check_float(bounds[1], "bounds[1]")
        if not lo < hi:
            raise ParameterError(f"`bounds` must satisfy low < high; got ({lo}, {hi}).")
        bounds = (lo, hi)
    diff = difference(original, replication, interval=interval, boot_interval=boot_interval)
    ci = diff.confidence_interval(level)
    d, se = diff.estimate, diff.se
    with np.errstate(divide="ignore"):
        z_lo = (d - bounds[0]) / se if se > 0 else math.inf
        z_hi = (d - bounds[1]) / se if se > 0 else -math.inf
    p_lo = float(stats.norm.sf(z_lo))
    p_hi = float(stats.norm.cdf(z_hi))
    verdict = "consistent" if (ci.low > bounds[0] and ci.high < bounds[1]) else \
        "not shown consistent"
    return Consistency(diff, tuple(bounds), level, ci, float(z_lo), p_lo, float(z_hi), p_hi,
                       verdict)


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def combine(estimates, *, tau2_method: str = "REML", interval: str = "wald",
            knha_floor: bool = False, pi_dist: str | None = None) -> MetaResult:
    """Pool original and replications by meta-analysis (seed 000, third aim).

    Parameters
    ----------
    estimates : sequence of Estimate
    tau2_method : {'FE', 'DL', 'REML', 'ML', 'PM', 'HE', 'SJ', 'HS'}
    interval : {'wald', 'knha'}
    knha_floor : bool
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Prediction-interval distribution (default as metafor: z with ``ci='z'``, t(k-1) with
        ``ci='knha'``; see :func:`~replikit.replicate.meta_analysis`).

    Returns
    -------
    MetaResult

    Notes
    -----
    Seed 000, "Combining studies for population R2 estimates", Figures 7-8. Example:
    ``combine([from_summary(r2=.41, n=667), from_summary(r2=.38, n=700)], method='FE')``.
    """
    ests = list(estimates)
    for i, e in enumerate(ests):
        _check_estimate(e, f"estimates[{i}]")
    if len({e.metric for e in ests}) > 1:
        raise DataError(f"`estimates` must share one metric; got {sorted({e.metric for e in ests})}.")
    return meta_analysis([e.estimate for e in ests], se=[e.se for e in ests],
                         labels=[e.label or f"Study {i + 1}" for i, e in enumerate(ests)],
                         tau2_method=tau2_method, interval=interval, knha_floor=knha_floor,
                         pi_dist=pi_dist)


def replication_table(original: Estimate, replications, *, margin: float = 0.05,
                      bounds: tuple[float, float] | None = None, interval: str | None = None,
                      inconsistency_level: float = 0.95,
                      consistency_level: float = 0.90) -> pd.DataFrame:
    """The first two aims for each replication, one row per replication.

    Parameters
    ----------
    original : Estimate
    replications : sequence of Estimate
    margin, bounds : region of equivalence (see :func:`consistency`)
    interval : {'sa', 'mover', 'bootstrap'}, optional
        Difference interval (see :func:`difference`; default per pair).
    inconsistency_level, consistency_level : float

    Returns
    -------
    DataFrame with columns ``replication, original, estimate`` (the replication's estimate),
    ``difference, se, ci_low, ci_high, statistic, pvalue`` (replication − original, its SE,
    its inconsistency CI and the z test of difference = 0), ``inconsistency``,
    ``tost_ci_low, tost_ci_high`` (the consistency CI), ``statistic_tost, pvalue_tost`` (the
    binding one-sided test) and ``consistency``.

    Notes
    -----
    Seed 000, Figures 3-4 and 6 in tabular form. Example:
    ``replication_table(orig, [rep1, rep2])``.
    """
    rows = []
    for r in replications:
        inc = inconsistency(original, r, confidence_level=inconsistency_level,
                            interval=interval)
        con = consistency(original, r, margin=margin, bounds=bounds,
                          confidence_level=consistency_level, interval=interval)
        rows.append({"replication": r.label, "original": original.label,
                     **replication_row(r, inc, con)})
    return pd.DataFrame(rows)


def replication_row(replication: Estimate, inc: Inconsistency, con: Consistency) -> dict:
    """The columns of one replication in :func:`replication_table` (and
    :func:`~replikit.replicate.analyze_replications`)."""
    return {"estimate": replication.estimate, "difference": inc.estimate, "se": inc.se,
            "ci_low": inc.ci.low, "ci_high": inc.ci.high, "statistic": inc.statistic,
            "pvalue": inc.pvalue, "inconsistency": inc.verdict, "tost_ci_low": con.ci.low,
            "tost_ci_high": con.ci.high, "statistic_tost": con.statistic,
            "pvalue_tost": con.pvalue, "consistency": con.verdict}
