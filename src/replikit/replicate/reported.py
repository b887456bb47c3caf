"""Reported study-level estimates: effect sizes as metafor's ``escalc`` computes them, and the
replication of a reported result from them.

A replication study often has only what papers print: a correlation, an R², an accuracy or an
AUC with its sample size. :func:`effects_from_reported` turns such numbers into an effect ``yi``
and its sampling variance ``vi`` (metafor's ``escalc``, Viechtbauer 2010; names of the measures
as metafor's):

=========  ==========  ==========================================  ===================================
measure    statistic   ``yi``                                      ``vi``
=========  ==========  ==========================================  ===================================
``COR``    r           r                                           (1 − r²)² / (n − 1)
``ZCOR``   r           atanh(r) (Fisher 1921)                      1 / (n − 3)
``R2``     R²          R²                                          4 R² (1 − R²)² / n (Olkin & Finn 1995)
``ZR2``    R²          atanh(√R²)                                  1 / n
``PR``     accuracy    p                                           p (1 − p) / n
``PLO``    accuracy    log(p / (1 − p))                            1 / (n p) + 1 / (n (1 − p))
``PAS``    accuracy    asin(√p)                                    1 / (4 n)
``AUC``    AUC         A                                           Hanley & McNeil (1982), below
``AUCLO``  AUC         log(A / (1 − A))                            the AUC variance / (A (1 − A))²
``C``      C-index     C                                           reported SE², or from the interval
``CLO``    C-index     log(C / (1 − C))                            (SE / (C (1 − C)))², or interval
=========  ==========  ==========================================  ===================================

With an accuracy ``p`` of ``n`` cases, the counts are ``x = n p`` correct and ``n − x`` wrong;
as metafor (``add=1/2, to="only0"``), ``PR`` and ``PLO`` add 1/2 to both counts of a study where
one is 0. ``R2`` and ``ZR2`` are metafor's measures of that name from version 4.0 on (``R2``
with its default ``vtype="LS"``; Debian's metafor 3.8 has neither). The AUC's variance is
Hanley & McNeil's (1982) closed form with ``n_pos`` positives and ``n_neg`` negatives,

    V = [A (1 − A) + (n_pos − 1)(Q1 − A²) + (n_neg − 1)(Q2 − A²)] / (n_pos n_neg),
    Q1 = A / (2 − A),  Q2 = 2 A² / (1 + A);

metafor 5's ``AUC`` measure with ``vtype="LS2"`` is the same formula over
``(n_pos − 1)(n_neg − 1)`` (Cho et al. 2019), its default ``"LS"`` Newcombe's (2006). ``AUCLO``
is replikit's: the logit of the AUC with the delta-method variance.

A concordance (C) index of a survival model — Harrell's or Uno's, as papers report it — has no
closed-form variance from its sample size and number of events, so ``C`` and ``CLO`` take the
reported standard error ``se`` or, failing that, the reported interval
``[ci_low, ci_high]`` at ``confidence_level``, read as a Wald interval on the logit scale
(the scale of R's ``survival::concordance`` and of replikit's
:func:`~replikit.experiment.survival.concordance_index`):

    SE(logit C) = (logit(ci_high) − logit(ci_low)) / (2 z),   SE(C) = C (1 − C) SE(logit C),

as metamisc's ``ccalc`` does for the meta-analysis of C-statistics on the logit scale (Debray
et al. 2017; 2019). The Hanley–McNeil form with ``N/2 − 1`` (Newcombe 2006, method 4) that
those authors use when only N and the number of events are known is not offered: for
Harrell's C of a censored outcome it was 1.6–1.7 times the true SD with 30% censored, 1.2
times with 60% and 0.95 times with 87% in replikit's simulations (docs/replicate.md,
"Reported C-indices").

:func:`analyze_reported` is the replication of Vijayakumar & Cheung (2021) on such a table:
the difference of each replication from the original (inconsistency), its equivalence within
a tolerance (consistency, TOST) and the meta-analysis of all studies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._format import interval as _interval_text
from .._format import number, percent
from .._validation import check_choice
from ..errors import DataError, ParameterError
from ..results import Result, Verdict, to_jsonable

__all__ = ["MEASURES", "METRIC_MEASURES", "MEASURE_SCALES", "DEFAULT_REPORTED_TOLERANCE",
           "INNER_COLUMNS", "ROBUST_FROM", "effects_from_reported", "ReportedAnalysis",
           "analyze_reported"]

#: The default region of equivalence ±tolerance of a reported result, in the metric's units
#: (as the data path's test R², :data:`replikit.replicate.audit.DEFAULT_TOLERANCE`).
DEFAULT_REPORTED_TOLERANCE = 0.05

#: The measures of :func:`effects_from_reported`: code -> (statistic, what ``yi`` is).
MEASURES = {
    "COR": ("r", "raw correlation coefficient"),
    "ZCOR": ("r", "Fisher's r-to-z transformed correlation coefficient"),
    "R2": ("r2", "coefficient of determination (R²)"),
    "ZR2": ("r2", "r-to-z transformed square root of R² (multiple correlation)"),
    "PR": ("accuracy", "raw proportion (accuracy)"),
    "PLO": ("accuracy", "logit transformed proportion (log odds of accuracy)"),
    "PAS": ("accuracy", "arcsine square root transformed proportion"),
    "AUC": ("auc", "area under the ROC curve (Hanley & McNeil (1982) variance)"),
    "AUCLO": ("auc", "logit transformed area under the ROC curve"),
    "C": ("c_index", "concordance (C) index (variance from its reported SE or interval)"),
    "CLO": ("c_index", "logit transformed concordance (C) index (Debray et al. 2017)"),
}
#: Per metric column of a table of reported estimates: (measure on the metric's scale,
#: measure it is pooled on, the scale's name in :func:`~replikit.replicate.to_scale`).
METRIC_MEASURES = {"r": ("COR", "ZCOR", "fisher_z"), "r2": ("R2", "ZR2", "r2_z"),
                   "accuracy": ("PR", "PLO", "logit"), "auc": ("AUC", "AUCLO", "logit"),
                   "c_index": ("C", "CLO", "logit"), "estimate": (None, None, "identity")}
#: The transformed measures and the scale of :func:`~replikit.replicate.from_scale` that
#: undoes them (each transform is monotone).
MEASURE_SCALES = {"ZCOR": "fisher_z", "ZR2": "r2_z", "PLO": "logit", "AUCLO": "logit",
                  "CLO": "logit"}
#: How a verdict names each metric.
_METRIC_WORDS = {"r": "correlation r", "r2": "R²", "accuracy": "accuracy", "auc": "AUC",
                 "c_index": "C-index", "estimate": "estimate"}
#: The measures whose variance comes from a reported SE or interval, never from sizes.
_SPREAD_MEASURES = ("C", "CLO")
_SIZE_COLUMNS = ("n", "n_pos", "n_neg", "prevalence")
#: Columns that name the effects within a study (several rows per study), first found wins
#: when ``inner`` is not given; without one, the effects are numbered within each study.
INNER_COLUMNS = ("effect_id", "outcome", "sample", "fold", "model")
#: With several effects per study and at least this many studies, the pooled interval (and the
#: light's) is the cluster-robust CR2 interval by study with Satterthwaite df (Tipton 2015);
#: with fewer, the model-based SE with t(J - 1), J the number of studies (CR2's df fall
#: below about 4 there). Coverage of both in docs/meta.md.
ROBUST_FROM = 10


# ---------------------------------------------------------------------------------------------
# conversions


@dataclass(frozen=True)
class _Inputs:
    """Validated inputs of :func:`effects_from_reported`."""

    measure: str
    statistic: str
    column: str
    values: np.ndarray
    n: np.ndarray | None
    n_pos: np.ndarray | None
    n_neg: np.ndarray | None
    labels: list
    frame: pd.DataFrame | None
    se: np.ndarray | None = None  # C, CLO: reported SEs (NaN where absent)
    ci_low: np.ndarray | None = None  # C, CLO: reported intervals (NaN where absent)
    ci_high: np.ndarray | None = None
    level: np.ndarray | None = None  # their confidence levels


def _where(labels, i: int, frame) -> str:
    return f"study {labels[i]!r} (row {i + 1})" if frame is not None else f"position {i}"


def _resolve(frame, given, default, name, labels, k, allow_missing=False):
    """Values of one input: a column of ``frame`` (named by ``given`` or ``default``), or
    numbers given directly (one number for all studies); ``None`` when absent."""
    from .analysis import _numbers

    if frame is not None and (isinstance(given, str) or (given is None and default in frame)):
        col = given if isinstance(given, str) else default
        if col not in frame.columns:
            raise DataError(f"`{name}`: column {col!r} not found; columns are "
                            f"{list(map(str, frame.columns))}.")
        return col, _numbers(frame, col, name, labels, allow_missing=allow_missing)
    if given is None:
        return None, None
    if isinstance(given, str):
        raise ParameterError(f"`{name}`: a column name ({given!r}) needs a table as `data`.")
    try:
        arr = np.asarray(given, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be numbers (or a column name with a table); got "
                             f"{given!r}.") from None
    if arr.ndim == 0:
        arr = np.full(k, float(arr))
    if arr.shape != (k,):
        raise ParameterError(f"`{name}` must be one number or {k} numbers (one per study); got "
                             f"shape {arr.shape}.")
    return None, arr


def _check(values, ok, name, col, labels, frame, expected):
    with np.errstate(invalid="ignore"):
        bad = ~ok(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = f"column {col!r} (`{name}`)" if col else f"`{name}`"
        raise DataError(f"{what} = {number(values[i], 6)} for {_where(labels, i, frame)}: "
                        f"{expected}.")


def _reported_iv(data, measure, estimate, n, n_pos, n_neg, prevalence, study, se=None,
                 ci_low=None, ci_high=None, confidence_level=None) -> _Inputs:
    measure = check_choice(str(measure).upper(), "measure", tuple(MEASURES))
    statistic = MEASURES[measure][0]
    if measure not in _SPREAD_MEASURES:
        given = [name for name, v in (("se", se), ("ci_low", ci_low), ("ci_high", ci_high),
                                      ("confidence_level", confidence_level)) if v is not None]
        if given:
            raise ParameterError(f"`{given[0]}` goes with measures 'C' and 'CLO' (a C-index); "
                                 f"measure {measure!r} derives its variance from the sizes.")
    if isinstance(data, pd.DataFrame):
        frame = data.reset_index(drop=True)
        if frame.empty:
            raise DataError("`data`: the table has no rows.")
        from .analysis import _label

        labels = ([_label(s) for s in frame[study]] if study in frame.columns
                  else [str(i + 1) for i in range(len(frame))])
        col = estimate if estimate is not None else statistic
        if col not in frame.columns:
            raise DataError(f"`estimate`: no column {col!r} of {statistic} values (measure "
                            f"{measure!r}); columns are {list(map(str, frame.columns))}"
                            + ("" if estimate else "; name it with `estimate`") + ".")
        from .analysis import _numbers

        values = _numbers(frame, col, "estimate", labels)
    else:
        if estimate is not None:
            raise ParameterError("`estimate` names a column of a table; with numbers as "
                                 "`data` leave it out.")
        frame, col = None, ""
        try:
            values = np.atleast_1d(np.asarray(data, dtype=float))
        except (TypeError, ValueError):
            raise ParameterError("`data` must be a table or numbers (the reported "
                                 f"{statistic} values); got {type(data).__name__}.") from None
        if values.ndim != 1 or values.size == 0:
            raise ParameterError(f"`data` must be one number or a 1-d sequence; got shape "
                                 f"{values.shape}.")
        labels = [str(i) for i in range(values.size)]
    k = values.size
    if measure in _SPREAD_MEASURES:
        return _c_index_iv(measure, statistic, col, values, frame, labels, n, se, ci_low,
                           ci_high, confidence_level)
    ncol, nv = _resolve(frame, n, "n", "n", labels, k)
    pcol, pos = _resolve(frame, n_pos, "n_pos", "n_pos", labels, k)
    qcol, neg = _resolve(frame, n_neg, "n_neg", "n_neg", labels, k)
    vcol, prev = _resolve(frame, prevalence, "prevalence", "prevalence", labels, k)
    finite = np.isfinite
    _check(values, finite, "estimate", col, labels, frame, "expected a finite number")
    ranges = {"r": (lambda v: (v > -1) & (v < 1), "a correlation must lie in (-1, 1)"),
              "r2": ((lambda v: (v > 0) & (v < 1), "measure 'R2' needs 0 < R² < 1 (its "
                     "variance is 0 at the bounds)") if measure == "R2" else
                     (lambda v: (v >= 0) & (v < 1), "an R² must lie in [0, 1)")),
              "accuracy": (lambda v: (v >= 0) & (v <= 1), "an accuracy is a proportion in "
                           "[0, 1]"),
              "auc": (lambda v: (v > 0) & (v < 1), "an AUC must lie in (0, 1) (its variance "
                      "is 0 at the bounds)")}
    ok, expected = ranges[statistic]
    if statistic == "auc":
        if pos is None or neg is None:
            if (pos is None) != (neg is None):
                raise ParameterError("`n_pos` and `n_neg` go together (the numbers of positive "
                                     "and negative cases).")
            if nv is None or prev is None:
                raise ParameterError(f"measure {measure!r} needs the numbers of positives and "
                                     "negatives (`n_pos`, `n_neg`), or `n` with the share of "
                                     "positives (`prevalence`) (Hanley & McNeil (1982)).")
            _check(nv, lambda v: finite(v) & (v >= 2), "n", ncol, labels, frame,
                   "a sample size must be a number >= 2")
            _check(prev, lambda v: (v > 0) & (v < 1), "prevalence", vcol, labels, frame,
                   "the share of positives must lie in (0, 1)")
            pos, neg = nv * prev, nv * (1 - prev)
            pcol = qcol = ""
        for arr, name, c in ((pos, "n_pos", pcol), (neg, "n_neg", qcol)):
            _check(arr, lambda v: finite(v) & (v >= 1), name, c, labels, frame,
                   "each class needs at least one case")
        _check(values, ok, "estimate", col, labels, frame, expected)
        return _Inputs(measure, statistic, col, values, nv, pos, neg, labels, frame)
    if nv is None:
        raise ParameterError(f"measure {measure!r} needs the sample sizes `n`.")
    least = {"COR": 2, "ZCOR": 4}.get(measure, 1)
    _check(nv, lambda v: finite(v) & (v >= least) & (v == np.round(v)), "n", ncol, labels,
           frame, f"a sample size must be a whole number >= {least} for measure {measure!r}")
    _check(values, ok, "estimate", col, labels, frame, expected)
    return _Inputs(measure, statistic, col, values, nv, None, None, labels, frame)


def _c_index_iv(measure, statistic, col, values, frame, labels, n, se, ci_low, ci_high,
                confidence_level) -> _Inputs:
    """The inputs of a C-index: each study's reported SE, else its interval (and level)."""
    k = values.size
    finite = np.isfinite
    _check(values, finite, "estimate", col, labels, frame, "expected a finite number")
    _check(values, lambda v: (v > 0) & (v < 1), "estimate", col, labels, frame,
           "a C-index must lie in (0, 1) (its logit is infinite at the bounds)")
    ncol, nv = _resolve(frame, n, "n", "n", labels, k, allow_missing=True)
    scol, sv = _resolve(frame, se, "se", "se", labels, k, allow_missing=True)
    lcol, lo = _resolve(frame, ci_low, "ci_low", "ci_low", labels, k, allow_missing=True)
    hcol, hi = _resolve(frame, ci_high, "ci_high", "ci_high", labels, k, allow_missing=True)
    vcol, lev = _resolve(frame, confidence_level, "confidence_level", "confidence_level",
                         labels, k, allow_missing=True)
    nan = np.full(k, np.nan)
    sv, lo, hi = (nan if a is None else a for a in (sv, lo, hi))
    lev = np.full(k, 0.95) if lev is None else np.where(np.isnan(lev), 0.95, lev)
    if nv is not None:
        _check(nv, lambda v: np.isnan(v) | ((v >= 2) & (v == np.round(v))), "n", ncol, labels,
               frame, "a sample size must be a whole number >= 2")
    _check(sv, lambda v: np.isnan(v) | (finite(v) & (v > 0)), "se", scol, labels, frame,
           "a standard error must be finite and > 0")
    _check(lev, lambda v: (v > 0) & (v < 1), "confidence_level", vcol, labels, frame,
           "the level of a reported interval must lie in (0, 1), e.g. 0.95")
    use = np.isnan(sv)  # the interval is read only where no SE is reported
    one = use & (np.isnan(lo) != np.isnan(hi))
    if one.any():
        i = int(np.flatnonzero(one)[0])
        raise DataError(f"{_where(labels, i, frame)}: the interval of its C-index has one bound "
                        "only; give both 'ci_low' and 'ci_high' (or its 'se').")
    none = use & np.isnan(lo)
    if none.any():
        i = int(np.flatnonzero(none)[0])
        raise DataError(f"{_where(labels, i, frame)}: a C-index needs its standard error "
                        "(column 'se') or its confidence interval (columns 'ci_low' and "
                        "'ci_high'); it has neither, and a C-index has no closed-form variance "
                        "from n and the number of events.")
    for arr, name, c in ((lo, "ci_low", lcol), (hi, "ci_high", hcol)):
        _check(np.where(use, arr, 0.5), lambda v: (v > 0) & (v < 1), name, c, labels, frame,
               "an interval of a C-index must lie inside (0, 1) (it is read on the logit "
               "scale)")
    bad = use & ~((lo <= values) & (values <= hi) & (lo < hi))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{_where(labels, i, frame)}: its C-index {number(values[i], 6)} is not "
                        f"inside its interval [{number(lo[i], 6)}, {number(hi[i], 6)}] "
                        "(`ci_low` < C-index < `ci_high` expected).")
    return _Inputs(measure, statistic, col, values, nv, None, None, labels, frame, sv,
                   np.where(use, lo, np.nan), np.where(use, hi, np.nan), lev)


def _c_index_vi(iv: _Inputs) -> tuple[np.ndarray, np.ndarray]:
    """Per study: SE of the C-index on its own scale and of its logit (the reported SE by
    the delta method, else the reported interval read on the logit scale)."""
    from scipy import stats

    c = iv.values
    slope = c * (1 - c)  # d C / d logit(C)
    z = stats.norm.ppf((1 + iv.level) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        from_ci = (np.log(iv.ci_high / (1 - iv.ci_high))
                   - np.log(iv.ci_low / (1 - iv.ci_low))) / (2 * z)
    have = ~np.isnan(iv.se)
    se_logit = np.where(have, iv.se / slope, from_ci)
    se_c = np.where(have, iv.se, from_ci * slope)
    return se_c, se_logit


def _hanley_mcneil(a, n_pos, n_neg):
    q1, q2 = a / (2 - a), 2 * a ** 2 / (1 + a)
    return (a * (1 - a) + (n_pos - 1) * (q1 - a ** 2) + (n_neg - 1) * (q2 - a ** 2)) \
        / (n_pos * n_neg)


def _yi_vi(iv: _Inputs) -> tuple[np.ndarray, np.ndarray]:
    x, n, m = iv.values, iv.n, iv.measure
    if m == "COR":
        return x.copy(), (1 - x ** 2) ** 2 / (n - 1)
    if m == "ZCOR":
        return np.arctanh(x), 1 / (n - 3)
    if m == "R2":
        return x.copy(), 4 * x * (1 - x) ** 2 / n
    if m == "ZR2":
        return np.arctanh(np.sqrt(x)), 1 / n
    if m in ("PR", "PLO"):
        xi, mi = n * x, n * (1 - x)
        zero = (xi == 0) | (mi == 0)  # metafor: add=1/2, to="only0"
        xi, mi = xi + 0.5 * zero, mi + 0.5 * zero
        ni, p = xi + mi, xi / (xi + mi)
        if m == "PR":
            return p, p * (1 - p) / ni
        return np.log(xi / mi), 1 / xi + 1 / mi
    if m == "PAS":
        return np.arcsin(np.sqrt(x)), 1 / (4 * n)
    if m in _SPREAD_MEASURES:
        se_c, se_logit = _c_index_vi(iv)
        return (x.copy(), se_c ** 2) if m == "C" else (np.log(x / (1 - x)), se_logit ** 2)
    v = _hanley_mcneil(x, iv.n_pos, iv.n_neg)
    if m == "AUC":
        return x.copy(), v
    return np.log(x / (1 - x)), v / (x * (1 - x)) ** 2


def effects_from_reported(data, *, measure: str, estimate: str | None = None, n=None,
                          n_pos=None, n_neg=None, prevalence=None, se=None, ci_low=None,
                          ci_high=None, confidence_level=None,
                          study: str = "study") -> pd.DataFrame:
    """Effects and sampling variances from reported statistics, as metafor's ``escalc``.

    Parameters
    ----------
    data : pandas.DataFrame or array-like of shape (k,)
        A table with one row per study, or the reported values themselves.
    measure : {'COR', 'ZCOR', 'R2', 'ZR2', 'PR', 'PLO', 'PAS', 'AUC', 'AUCLO', 'C', 'CLO'}
        The effect to compute (see the module's table): correlations ``r`` (COR, ZCOR),
        R² (R2, ZR2), an accuracy (PR, PLO, PAS), an AUC (AUC, AUCLO), a concordance index
        of a survival model (C, CLO).
    estimate : str, optional
        With a table: the column of reported values (default: the measure's statistic, ``r``,
        ``r2``, ``accuracy``, ``auc`` or ``c_index``).
    n : str, int or array-like, optional
        Sample sizes: a column of the table (default ``n`` when present), one number or one
        per study. Needed by every measure but AUC's, where it goes with ``prevalence``.
    n_pos, n_neg : str, int or array-like, optional
        Numbers of positive and negative cases behind an AUC (default: columns ``n_pos`` and
        ``n_neg`` when present).
    prevalence : str, float or array-like, optional
        Share of positives, with ``n``, for an AUC without ``n_pos``/``n_neg``.
    se : str, float or array-like, optional
        C and CLO only: the reported standard errors of the C-indices (default: column ``se``
        when present); a missing one (NaN) falls back on the interval.
    ci_low, ci_high : str, float or array-like, optional
        C and CLO only: the reported interval of each C-index (default: columns ``ci_low``
        and ``ci_high`` when present), read as a Wald interval on the logit scale.
    confidence_level : str, float or array-like, optional
        C and CLO only: the level of those intervals (default: column ``confidence_level``
        when present, else 0.95).
    study : str, default 'study'
        Column of study labels of a table (kept in the output when present).

    Returns
    -------
    pandas.DataFrame
        One row per study: the study label (with a table that has one), the reported value
        under its statistic's name, the sizes used, ``yi``, ``vi`` and ``measure`` (the code);
        ``attrs['measure']`` says in words what ``yi`` is.

    Raises
    ------
    ParameterError
        An unknown ``measure``, a size the measure needs that is missing, numbers of the wrong
        length; ``se``, ``ci_low``, ``ci_high`` or ``confidence_level`` with a measure other
        than C or CLO.
    DataError
        A value outside its range, naming the column (or parameter) and the study: a
        correlation outside (-1, 1), an R² outside [0, 1) (0 too for ``R2``), an accuracy
        outside [0, 1], an AUC or a C-index outside (0, 1), a size that is not a whole number
        large enough for the measure (``n >= 4`` for ZCOR), a prevalence outside (0, 1); a
        C-index with neither an SE nor both bounds of an interval, or outside its interval.

    See Also
    --------
    analyze_reported : The replication of a reported result from such a table.
    meta_from_table : The meta-analysis of ``yi`` and ``vi``.

    Notes
    -----
    The formulas are in the module's table; each matches ``metafor::escalc`` (version 5.1)
    to floating-point precision, checked in the test suite against values R printed. For
    an AUC, metafor's ``AUC`` measure with ``vtype="LS2"`` and ``mi=0`` equals ``AUC`` here
    times ``n_pos n_neg / ((n_pos - 1)(n_neg - 1))``. C and CLO (not in metafor) are the
    reported C-index with the variance of its reported SE, or of its interval read on the
    logit scale, ``SE(logit C) = (logit(ci_high) − logit(ci_low)) / (2 z)`` — metamisc's
    ``ccalc`` (Debray et al. 2017; 2019); CLO is the logit scale on which Debray et al.
    (2017) pool C-statistics.

    References
    ----------
    .. [1] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03
    .. [2] Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation
       deduced from a small sample. Metron, 1, 3–32.
    .. [3] Olkin, I. & Finn, J. D. (1995). Correlations Redux. Psychological Bulletin, 118(1),
       155–164. https://doi.org/10.1037/0033-2909.118.1.155
    .. [4] Hanley, J. A. & McNeil, B. J. (1982). The Meaning and Use of the Area under a
       Receiver Operating Characteristic (ROC) Curve. Radiology, 143(1), 29–36.
       https://doi.org/10.1148/radiology.143.1.7063747
    .. [5] Cho, H., Matthews, G. J. & Harel, O. (2019). Confidence intervals for the area
       under the receiver operating characteristic curve in the presence of ignorable missing
       data. International Statistical Review, 87(1), 152–177.
    .. [6] Debray, T. P. A., Damen, J. A. A. G., Snell, K. I. E., Ensor, J., Hooft, L.,
       Reitsma, J. B., Riley, R. D. & Moons, K. G. M. (2017). A guide to systematic review and
       meta-analysis of prediction model performance. BMJ, 356, i6460.
       https://doi.org/10.1136/bmj.i6460
    .. [7] Debray, T. P. A., Damen, J. A. A. G., Riley, R. D., Snell, K., Reitsma, J. B.,
       Hooft, L., Collins, G. S. & Moons, K. G. M. (2019). A framework for meta-analysis of
       prediction model studies with binary and time-to-event outcomes. Statistical Methods
       in Medical Research, 28(9), 2768–2786. https://doi.org/10.1177/0962280218785504

    Examples
    --------
    >>> table = pd.DataFrame({"study": ["a", "b"], "r": [0.30, 0.45], "n": [103, 53]})
    >>> effects_from_reported(table, measure="ZCOR")[["study", "yi", "vi"]].round(4)
      study      yi    vi
    0     a  0.3095  0.01
    1     b  0.4847  0.02
    >>> effects_from_reported([0.85], measure="AUC", n_pos=51, n_neg=58)["vi"].round(6).tolist()
    [0.001453]
    >>> cs = pd.DataFrame({"study": ["a", "b"], "c_index": [0.72, 0.68],
    ...                    "se": [0.02, None], "ci_low": [None, 0.63], "ci_high": [None, 0.73]})
    >>> effects_from_reported(cs, measure="CLO")[["study", "yi", "vi"]].round(4)
      study      yi      vi
    0     a  0.9445  0.0098
    1     b  0.7538  0.0139
    """
    iv = _reported_iv(data, measure, estimate, n, n_pos, n_neg, prevalence, study, se, ci_low,
                      ci_high, confidence_level)
    yi, vi = _yi_vi(iv)
    out = {}
    if iv.frame is not None and study in iv.frame.columns:
        out["study"] = iv.labels
    out[iv.statistic] = iv.values
    if iv.statistic == "auc":
        out["n_pos"], out["n_neg"] = iv.n_pos, iv.n_neg
    elif iv.statistic == "c_index":
        if iv.n is not None:
            out["n"] = iv.n
        out.update(se=iv.se, ci_low=iv.ci_low, ci_high=iv.ci_high,
                   confidence_level=np.where(np.isnan(iv.ci_low), np.nan, iv.level))
    else:
        out["n"] = iv.n
    frame = pd.DataFrame({**out, "yi": yi, "vi": vi, "measure": iv.measure})
    frame.attrs["measure"] = MEASURES[iv.measure][1]
    return frame


# ---------------------------------------------------------------------------------------------
# the replication of a reported result


@dataclass(frozen=True, slots=True)
class ReportedAnalysis(Result):
    """The replication of a reported result from study-level estimates.

    Attributes
    ----------
    metric : str
        The metric column (``'r2'``, ``'r'``, ``'auc'``, ``'accuracy'``, ``'c_index'`` or
        ``'estimate'``).
    studies : pandas.DataFrame
        One row per study (per effect when a study has several, with its ``effect`` label
        within the study): ``study``, ``estimate`` and ``se`` on the metric's scale (with
        ``ci_low``, ``ci_high``), ``variance_from`` (the measure or the reported SE/variance),
        ``yi`` and ``vi`` on the pooling scale, ``original``.
    pooled : ScaledMeta or None
        Random-effects meta-analysis of all studies on the pooling scale, back-transformed;
        None when a study has several effects (see :attr:`multilevel`).
    scale : str
        The pooling scale (``'fisher_z'``, ``'r2_z'``, ``'logit'`` or ``'identity'``).
    original : str or None
        The original study; ``None`` when the table marks none (then the analysis is the
        meta-analysis only).
    replication : ReplicationAnalysis or None
        The three aims on the metric's scale (with an original).
    light : dict or None
        The replication light's numbers: the pooled difference and its 90% interval.
    tolerance : float
        The region of equivalence ±tolerance in the metric's units.
    verdict : Verdict
        The conclusion.
    notes : tuple of str
        How each number was made.
    multilevel : MultilevelMeta or None
        With several effects per study: the multilevel model of all effects on the pooling
        scale, clusters ``[study, effect]`` (Konstantopoulos 2011); else None.
    robust : RobustResult or None
        Its cluster-robust CR2 inference by study (Tipton 2015).

    See Also
    --------
    analyze_reported : Makes it.
    effects_from_reported : The conversions it uses.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"study": ["orig", "rep1", "rep2"], "r2": [0.31, 0.25, 0.28],
    ...                       "n": [400, 650, 520],
    ...                       "role": ["original", "replication", "replication"]})
    >>> res = analyze_reported(table)
    >>> res.metric, res.verdict.level in ("good", "warn", "bad")
    ('r2', True)
    """

    metric: str
    studies: pd.DataFrame
    pooled: object = field(repr=False)
    scale: str = "identity"
    original: str | None = None
    replication: object = field(default=None, repr=False)
    light: dict | None = field(default=None, repr=False)
    tolerance: float = 0.05
    verdict: Verdict | None = None
    notes: tuple = ()
    multilevel: object = field(default=None, repr=False)
    robust: object = field(default=None, repr=False)

    @property
    def title(self) -> str:
        what = _METRIC_WORDS[self.metric]
        return (f"Replication of the reported {what} of {self.original!r}"
                if self.original else f"Meta-analysis of the reported {what}")

    def to_frame(self) -> pd.DataFrame:
        """The per-study table (a copy of :attr:`studies`)."""
        return self.studies.copy()

    @property
    def several_effects(self) -> bool:
        """Whether some study has several effects (pooled by the multilevel model)."""
        return self.multilevel is not None

    def pooled_frame(self) -> pd.DataFrame:
        """The pooled estimate of all studies with its intervals, on the metric's scale.

        One effect per study: the rows of :meth:`ScaledMeta.to_frame`. Several: one row per
        interval of the multilevel estimate (model-based z, model-based t(J − 1) with J
        studies, cluster-robust CR2 by study with Satterthwaite df), each with ``estimate``,
        ``ci_low``, ``ci_high`` back-transformed to the metric's scale, ``se`` and ``df`` on
        the pooling scale, and ``used`` marking the interval the verdict rests on.

        Returns
        -------
        pandas.DataFrame
            The pooled rows.
        """
        if self.multilevel is None:
            return self.pooled.to_frame()
        return _multilevel_rows(self.multilevel, self.robust, self.scale)

    def confidence_interval(self, confidence_level: float = 0.95):
        """The 95% interval of the pooled estimate the verdict rests on (metric's scale).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Only 0.95 with several effects per study.

        Returns
        -------
        ConfidenceInterval
            Its bounds.
        """
        from ..results import ConfidenceInterval

        if self.multilevel is None:
            return self.pooled.confidence_interval(confidence_level)
        if confidence_level != 0.95:
            raise ParameterError("`confidence_level`: the multilevel pooling reports 95% "
                                 f"intervals; got {confidence_level}.")
        row = self.pooled_frame().query("used").iloc[0]
        return ConfidenceInterval(float(row["ci_low"]), float(row["ci_high"]))

    def to_dict(self) -> dict:
        """The analysis in JSON types."""
        rep = None if self.replication is None else self.replication.to_dict()
        out = {"metric": self.metric, "original": self.original, "scale": self.scale,
               "tolerance": self.tolerance, "studies": self.studies,
               "pooled": self.pooled_frame(), "replication": rep, "light": self.light,
               "verdict": self.verdict.to_dict(), "notes": list(self.notes)}
        if self.multilevel is not None:
            out["multilevel"] = self.multilevel.to_frame()
        return to_jsonable(out)

    def plot(self, ax=None, *, kind: str = "forest", title: str | None = None):
        """The forest plot of all studies (``kind='forest'``), or each replication's difference
        from the original with its 90% interval and the region of equivalence
        (``kind='differences'``, with an original).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        kind = check_choice(kind, "kind", ("forest", "differences"))
        if kind == "forest":
            if self.multilevel is not None:
                from .transforms import _inverse

                return self.multilevel.plot(
                    ax, robust=self.robust if _use_robust(self.multilevel) else None,
                    transform=_inverse(self.scale), xlabel=_METRIC_WORDS[self.metric],
                    title=title)
            return self.pooled.plot(ax, xlabel=_METRIC_WORDS[self.metric], title=title)
        if self.replication is None:
            raise ParameterError("`kind`='differences' needs an original study; the table "
                                 "marks none.")
        return self.replication.plot(ax, aim="consistency", title=title)

    def __str__(self) -> str:
        lines = [self.verdict.sentence,
                 str(self.pooled if self.multilevel is None else self.multilevel)]
        if self.replication is not None:
            lines.append(str(self.replication))
        return "\n".join(lines)


def _pick_metric(frame: pd.DataFrame, metric: str | None) -> str:
    found = [c for c in METRIC_MEASURES if c in frame.columns]
    if metric is not None:
        metric = check_choice(str(metric), "metric", tuple(METRIC_MEASURES))
        if metric not in frame.columns:
            raise DataError(f"`metric`: no column {metric!r} in the estimates; columns are "
                            f"{list(map(str, frame.columns))}.")
        return metric
    if len(found) != 1:
        raise DataError("`estimates`: expected one column named by its metric ("
                        + ", ".join(METRIC_MEASURES) + "); found "
                        + (", ".join(found) if found else "none") + ".")
    return found[0]


def _original_iv(frame, labels, original):
    if "role" in frame.columns:
        role = frame["role"].astype(str).str.strip().str.lower().to_numpy()
        bad = sorted(set(role) - {"original", "replication"})
        if bad:
            raise DataError(f"`estimates`: column `role` holds {bad[0]!r}; expected 'original' "
                            "or 'replication'.")
        marked = list(dict.fromkeys(lab for lab, r in zip(labels, role, strict=True)
                                    if r == "original"))
        mixed = [lab for lab, r in zip(labels, role, strict=True)
                 if r != "original" and lab in marked]
        if mixed:
            raise DataError(f"`estimates`: column `role` marks study {mixed[0]!r} both "
                            "'original' and 'replication'; give every row of a study the same "
                            "role.")
        if len(marked) != 1:
            raise DataError("`estimates`: column `role` must mark exactly one study 'original'; "
                            f"it marks {len(marked)}.")
        if original is not None and str(original) != marked[0]:
            raise ParameterError(f"`original` = {original!r}, but column `role` marks "
                                 f"{marked[0]!r}.")
        return marked[0]
    if original is not None and str(original) not in labels:
        raise ParameterError(f"`original`: no study {original!r} in the estimates; studies are "
                             f"{', '.join(labels[:8])}{', ...' if len(labels) > 8 else ''}.")
    return None if original is None else str(original)


def _study_variances(frame, metric, labels):
    """Per study: the estimate, its variance on the metric's scale, ``yi``/``vi`` on the
    pooling scale, and where the variance comes from."""
    from .analysis import _check_range, _numbers, _positive_se
    from .transforms import to_scale

    raw, pooled, scale = METRIC_MEASURES[metric]
    k = len(frame)
    est = _numbers(frame, metric, metric, labels)
    se = (_numbers(frame, "se", "standard errors", labels, allow_missing=True)
          if "se" in frame.columns else np.full(k, np.nan))
    var = (_numbers(frame, "variance", "sampling variances", labels, allow_missing=True)
           if "variance" in frame.columns else np.full(k, np.nan))
    _positive_se(se, "se", labels)
    _positive_se(var, "variance", labels, "sampling variances")
    given = np.where(np.isnan(se), var, se ** 2)
    source = np.where(~np.isnan(se), "reported se",
                      np.where(~np.isnan(var), "reported variance", raw or "")).astype(object)
    need = np.isnan(given)
    yi, vi = np.full(k, np.nan), np.full(k, np.nan)
    if metric == "c_index":
        _check_range(est, metric, "C-indices", labels, lambda v: (v > 0) & (v < 1),
                     "a C-index must lie in (0, 1) (it is pooled on the logit scale)")
    if need.any() and metric == "c_index":
        have_ci = np.zeros(k, bool)  # a bound (one alone is refused with its own message)
        for col in ("ci_low", "ci_high"):
            if col in frame.columns:
                have_ci |= ~np.isnan(_numbers(frame, col, "interval bounds", labels,
                                              allow_missing=True))
        if (need & ~have_ci).any():
            i = int(np.flatnonzero(need & ~have_ci)[0])
            raise DataError(f"study {labels[i]!r} (row {i + 1}): a C-index needs its standard "
                            "error (column `se`), its sampling variance (`variance`) or its "
                            "confidence interval (`ci_low` and `ci_high`); it has none, and a "
                            "C-index has no closed-form variance from n and the number of "
                            "events.")
        # the whole table (its row numbers in messages), each reported SE or variance kept
        named = frame.assign(**{"\x00study": labels})
        kw = {"estimate": metric, "se": np.sqrt(given), "study": "\x00study"}
        on_raw = effects_from_reported(named, measure=raw, **kw)
        on_pool = effects_from_reported(named, measure=pooled, **kw)
        given[need] = on_raw["vi"].to_numpy()[need]
        yi[need], vi[need] = on_pool["yi"].to_numpy()[need], on_pool["vi"].to_numpy()[need]
        source[need] = "reported interval (logit scale)"
        need = np.zeros(k, bool)
    if need.any():
        if raw is None:
            i = int(np.flatnonzero(need)[0])
            raise DataError(f"study {labels[i]!r} (row {i + 1}): an `estimate` column needs its "
                            "standard error (`se`) or sampling variance (`variance`): it has no "
                            "closed form from n.")
        sub = frame.loc[need].reset_index(drop=True)
        sizes = {c: c for c in _SIZE_COLUMNS if c in sub.columns}
        if metric == "auc" and not ({"n_pos", "n_neg"} <= set(sizes)
                                    or {"n", "prevalence"} <= set(sizes)):
            i = int(np.flatnonzero(need)[0])
            raise DataError(f"study {labels[i]!r} (row {i + 1}): an AUC without `se` needs the "
                            "numbers of positives and negatives (columns `n_pos`, `n_neg`) or "
                            "`n` with `prevalence` (Hanley & McNeil (1982)).")
        if metric != "auc" and "n" not in sizes:
            i = int(np.flatnonzero(need)[0])
            raise DataError(f"study {labels[i]!r} (row {i + 1}) has neither `se`, `variance` "
                            "nor a sample size `n`.")
        kw = {c: sizes.get(c) for c in _SIZE_COLUMNS} if metric == "auc" else {"n": "n"}
        if metric == "auc" and {"n_pos", "n_neg"} <= set(sizes):
            kw.update(n=None, prevalence=None)
        on_raw = effects_from_reported(sub, measure=raw, estimate=metric, **kw)
        on_pool = effects_from_reported(sub, measure=pooled, estimate=metric, **kw)
        given[need] = on_raw["vi"].to_numpy()
        yi[need], vi[need] = on_pool["yi"].to_numpy(), on_pool["vi"].to_numpy()
    have = ~need
    if have.any():
        y, s = to_scale(est[have], np.sqrt(given[have]), scale)
        yi[have], vi[have] = y, s ** 2
    return est, np.sqrt(given), yi, vi, source, scale


def analyze_reported(estimates: pd.DataFrame, *, metric: str | None = None,
                     original: str | None = None,
                     tolerance: float = DEFAULT_REPORTED_TOLERANCE, tau2_method: str = "REML",
                     study: str = "study", inner: str | None = None) -> ReportedAnalysis:
    """The replication of a reported result from study-level estimates (Vijayakumar & Cheung
    2021), or their meta-analysis when no study is the original.

    Parameters
    ----------
    estimates : pandas.DataFrame
        One row per study, or per effect when a study reports several (then pooled by the
        multilevel model, Notes): ``study``; one metric column ``r2``, ``r``, ``auc``,
        ``accuracy``, ``c_index`` or ``estimate``; ``n`` (an AUC: ``n_pos`` and ``n_neg``, or
        ``n`` and ``prevalence``) and/or ``se`` or ``variance`` (a C-index: ``se``,
        ``variance`` or its interval ``ci_low``, ``ci_high``, with ``confidence_level`` when
        not 0.95); optionally ``role`` (``original`` / ``replication``, the same for every row
        of a study).
    metric : str, optional
        The metric column (default: the one present).
    original : str, optional
        The original study (default: the one column ``role`` marks; none: meta-analysis only).
    tolerance : float, default 0.05
        The region of equivalence ±tolerance, in the metric's units.
    tau2_method : str, default 'REML'
        τ² estimator of the random-effects models.
    study : str, default 'study'
        Column of study labels.
    inner : str, optional
        With several effects per study: the column naming each effect within its study
        (default: the first of :data:`INNER_COLUMNS` that names each of a study's effects
        once, else the effects' order within the study).

    Returns
    -------
    ReportedAnalysis
        Studies, the pooled meta-analysis, the three aims and the verdict.

    Raises
    ------
    DataError
        Naming the column and the study: a value outside its range, a study with neither a
        size nor an SE, an ``estimate`` without ``se``/``variance``, repeated study labels.
    ParameterError
        An ``original`` that is not a study or contradicts ``role``; a negative tolerance.

    See Also
    --------
    effects_from_reported : The conversions.
    analyze_replications : The three aims on any estimates.

    Notes
    -----
    Each study's variance on the metric's scale is its reported SE (or variance), else the
    measure of :func:`effects_from_reported` (R² with n: Olkin & Finn (1995), as
    :func:`~replikit.replicate.from_summary`; r: COR; accuracy: PR; AUC: Hanley & McNeil
    (1982); a C-index: its reported interval read on the logit scale, measure C — it has no
    closed form from n). A C-index (Harrell's or Uno's, higher is better) is pooled on the
    logit scale by random effects, as Debray et al. (2017) recommend. The first two aims run on the metric's scale, where the tolerance is stated:
    inconsistency when the 95% interval of replication − original excludes 0; consistency when
    its 90% interval lies inside ±tolerance (TOST, Schuirmann 1987). The light is the data
    path's rule (:func:`~replikit.replicate.audit`): the replications are pooled by random
    effects (Knapp–Hartung t with fewer than 20 studies); green when the 90% interval of
    (pooled replications − original) lies inside ±tolerance or every replication is shown
    consistent (intersection–union test, Berger 1982); red when that interval lies entirely
    outside; amber otherwise. All studies are pooled on a scale where the estimates are close
    to normal (ZCOR, ZR2, PLO, logit AUC; an ``estimate`` as it is) and the pooled estimate,
    its confidence and prediction intervals are back-transformed (each transform is monotone,
    so the intervals keep their coverage; the back-transformed estimate is the median effect).

    Several effects per study (repeated ``study`` labels) are neither averaged nor treated as
    independent: the multilevel model ``y = mu + u_study + u_effect + e``
    (:func:`~replikit.replicate.multilevel_meta_analysis`; Konstantopoulos 2011, eqs. 3-6)
    pools them on the pooling scale, with the cluster-robust CR2 interval by study (Tipton
    2015) from :data:`ROBUST_FROM` studies on and the model-based SE with t(J − 1) below. With
    an original, each study enters the per-study tests as the mean of its effects with the
    mean of their SEs (the SE of a mean at within-study correlation 1, never too small); the
    light pools the replications' effects by the same model and compares them with the
    original's mean.

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680.
    .. [3] Berger, R. L. (1982). Multiparameter Hypothesis Testing and Acceptance Sampling.
       Technometrics, 24(4), 295–300.
    .. [4] Hanley, J. A. & McNeil, B. J. (1982). The Meaning and Use of the Area under a
       Receiver Operating Characteristic (ROC) Curve. Radiology, 143(1), 29–36.
    .. [5] Konstantopoulos, S. (2011). Fixed Effects and Variance Components Estimation in
       Three-Level Meta-Analysis. Research Synthesis Methods, 2(1), 61–76.
    .. [6] Tipton, E. (2015). Small Sample Adjustments for Robust Variance Estimation with
       Meta-Regression. Psychological Methods, 20(3), 375–393.
    .. [7] Debray, T. P. A., Damen, J. A. A. G., Snell, K. I. E., Ensor, J., Hooft, L.,
       Reitsma, J. B., Riley, R. D. & Moons, K. G. M. (2017). A guide to systematic review and
       meta-analysis of prediction model performance. BMJ, 356, i6460.

    Examples
    --------
    >>> table = pd.DataFrame({"study": ["orig", "rep1", "rep2"], "r": [0.40, 0.37, 0.42],
    ...                       "n": [2000, 3000, 2500],
    ...                       "role": ["original", "replication", "replication"]})
    >>> res = analyze_reported(table, tolerance=0.1)
    >>> res.verdict.level, res.scale
    ('good', 'fisher_z')
    >>> cs = pd.DataFrame({"study": ["orig", "rep"], "c_index": [0.74, 0.71],
    ...                    "se": [0.015, None], "ci_low": [None, 0.68], "ci_high": [None, 0.74],
    ...                    "role": ["original", "replication"]})
    >>> res = analyze_reported(cs)
    >>> res.scale, res.verdict.metric, res.studies["variance_from"].tolist()
    ('logit', 'C-index', ['reported se', 'reported interval (logit scale)'])
    """
    from .analysis import _label, _unique_labels, analyze_replications
    from .audit import KNHA_BELOW, _light
    from .estimates import from_summary
    from .meta import meta_analysis, model_name
    from .transforms import ScaledMeta

    if not isinstance(estimates, pd.DataFrame) or estimates.empty:
        raise DataError("`estimates` must be a table with one row per study; got "
                        + ("an empty table." if isinstance(estimates, pd.DataFrame)
                           else f"{type(estimates).__name__}."))
    tolerance = float(tolerance)
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise ParameterError(f"`tolerance` must be a finite number >= 0; got {tolerance!r}.")
    frame = estimates.reset_index(drop=True)
    if study not in frame.columns:
        raise DataError(f"`study`: no column {study!r} of study labels; columns are "
                        f"{list(map(str, frame.columns))}.")
    labels = [_label(s) for s in frame[study]]
    if len(set(labels)) < len(labels):  # several effects per study: the multilevel model
        return _analyze_multilevel(frame, labels, metric, original, tolerance, tau2_method,
                                   study, inner)
    if inner is not None:
        _inner_iv(frame, labels, inner)  # a column that is not there is refused all the same
    _unique_labels(labels, study)
    if len(frame) < 2:
        raise DataError(f"`estimates`: {len(frame)} study; a replication or a meta-analysis "
                        "needs at least 2.")
    metric = _pick_metric(frame, metric)
    original = _original_iv(frame, labels, original)
    est, se, yi, vi, source, scale = _study_variances(frame, metric, labels)
    k = len(frame)
    interval = "knha" if k < KNHA_BELOW else "wald"
    meta = meta_analysis(yi, vi, labels=labels, tau2_method=tau2_method, interval=interval)
    pooled = ScaledMeta(meta, scale, tuple(est), tuple(se))
    ci = pooled.confidence_interval()
    studies = pd.DataFrame({"study": labels, "estimate": est, "se": se,
                            "ci_low": est - 1.959963984540054 * se,
                            "ci_high": est + 1.959963984540054 * se,
                            "variance_from": source, "yi": yi, "vi": vi,
                            "original": [lab == original for lab in labels]})
    what = _METRIC_WORDS[metric]
    raw, pool_measure, _ = METRIC_MEASURES[metric]
    on = ("as given" if scale == "identity" else
          f"on the {pool_measure} scale, back-transformed (a monotone transform)")
    notes = [f"variances: {', '.join(sorted(set(source)))}",
             f"all studies pooled by random effects ({model_name(tau2_method)}) {on}, "
             + ("Knapp–Hartung t intervals" if interval == "knha" else "normal intervals")]
    pi = pooled.prediction_interval()
    pooled_words = (f"{number(pooled.estimate, 4)} {_interval_text(ci.low, ci.high, 4)}, "
                    f"95% prediction interval {_interval_text(pi.low, pi.high, 4)}, I² = "
                    f"{percent(meta.i2_tau / 100, 3)}, τ² = {number(meta.tau2, 4)}"
                    + ("" if scale == "identity" else f" ({pool_measure} scale)"))
    if original is None:
        verdict = Verdict(f"No original marked: nothing to replicate. The {k} studies' {what}, "
                          f"pooled by random effects: {pooled_words}.", what, "info",
                          pooled.estimate, ci.low, ci.high,
                          ("mark the original study (a `role` column, or `original`) to "
                           "judge a replication",),
                          label=f"random-effects pooled {what}, 95% CI")
        return ReportedAnalysis(metric, studies, pooled, scale, None, None, None, tolerance,
                                verdict, tuple(notes))
    ests = []
    for i in range(k):
        if metric == "r2":
            ests.append(from_summary(r2=float(est[i]), se=float(se[i]), label=labels[i]))
        else:
            ests.append(from_summary(estimate=float(est[i]), se=float(se[i]), metric=metric,
                                     label=labels[i]))
    rep = analyze_replications({(what, "reported"): ests}, original, tolerance=tolerance,
                               tau2_method=tau2_method, interval="wald",
                               meta_interval=interval)
    o = labels.index(original)
    others = [i for i in range(k) if i != o]
    light = _light(est[o], se[o] ** 2, est[others], se[others] ** 2, tolerance,
                   tau2_method=tau2_method, interval=interval)
    light = {key: (v.item() if hasattr(v, "item") else v) for key, v in light.items()}
    caveats = []
    if metric == "r2" and (source == "R2").any():
        caveats.append("the SE of an R² from n alone (Olkin & Finn (1995)) is right for "
                       "calibrated predictions and too small for an overfitted model's test R²")
    caveats += _c_index_caveats(metric, source)
    verdict = _reported_verdict(light, what, original, tolerance, len(others), tuple(caveats))
    notes.append("differences replication − original on the metric's scale (Wald, "
                 "Vijayakumar & Cheung (2021), eq. 2); replications pooled by random effects "
                 f"({model_name(tau2_method)}) for the light")
    return ReportedAnalysis(metric, studies, pooled, scale, original, rep, light, tolerance,
                            verdict, tuple(notes))


def _c_index_caveats(metric, source) -> list[str]:
    """What limits a comparison of reported C-indices."""
    if metric != "c_index":
        return []
    out = ["higher C is better: a negative difference (replication − original) means the "
           "replication discriminates less well; Harrell's C depends on each study's censoring "
           "(follow-up), so studies can differ for that reason alone (Uno's C with a common "
           "truncation time does not)"]
    if (source == "reported interval (logit scale)").any():
        out.append("SEs from reported intervals assume each interval is a Wald interval on the "
                   "logit scale (as R's survival::concordance and replikit give it); one "
                   "symmetric on the C scale gives a larger, conservative SE (by 2% at "
                   "0.75 ± 0.06, 18% at 0.85 ± 0.10)")
    return out


def _reported_verdict(light, what, original, tolerance, k, caveats=()) -> Verdict:
    level = str(light["level"])
    diff, lo, hi = light["difference"], light["low"], light["high"]
    n_con, n_inc = int(light["n_consistent"]), int(light["n_inconsistent"])
    tol = f"±{number(tolerance)}"
    ci90 = f"90% CI {_interval_text(lo, hi)}"
    reps = "replication" if k == 1 else "replications"
    pooled = (f"the {k} {reps}" + (", pooled," if k > 1 else "")
              + f" {'differs' if k == 1 else 'differ'} from the original ({original}) by "
              f"{number(diff)} ({ci90})")
    counts = (f"{n_inc} of {k} {'is' if k == 1 else 'are'} inconsistent with it (95% CI of the "
              f"difference excludes 0) and {n_con} {'is' if n_con == 1 else 'are'} shown "
              f"consistent within {tol}")
    if level == "good":
        why = (f"shown within {tol}" if light["pooled_in"]
               else f"beyond the pooled test, every replication is shown consistent within {tol}")
        sentence = f"The reported {what} replicates: {pooled}, {why}; {counts}."
    elif level == "bad":
        sentence = f"The reported {what} does not replicate: {pooled}, beyond {tol}; {counts}."
    else:
        sentence = (f"The reported {what}, replication undecided: {pooled}, neither shown "
                    f"within {tol} nor beyond it; {counts}.")
    basis = ("pooled difference" if k > 1 else "difference") + f" {number(diff)}, {ci90}"
    if level == "good" and not light["pooled_in"]:
        basis += f"; every replication's 90% CI inside {tol}"
    return Verdict(sentence, what, level, diff, lo, hi, caveats,
                   label=f"{'pooled replications' if k > 1 else 'replication'} − original, "
                         f"{what} (90% CI)",
                   tolerance=f"judged against {tol} in {what}: {basis}")


# ---------------------------------------------------------------------------------------------
# several effects per study


def _use_robust(fit) -> bool:
    """Whether the pooled interval of a multilevel fit is its CR2 interval (enough studies)."""
    return fit.n_clusters[0] >= ROBUST_FROM


def _inner_iv(frame: pd.DataFrame, labels, inner):
    """The label of each effect within its study and the column it comes from (None: the
    effects are numbered within each study in table order)."""
    if inner is not None:
        if inner not in frame.columns:
            raise DataError(f"`inner`: no column {inner!r} naming the effects within a study; "
                            f"columns are {list(map(str, frame.columns))}.")
        candidates = [str(inner)]
    else:
        candidates = [c for c in INNER_COLUMNS if c in frame.columns]
    for col in candidates:
        if frame[col].isna().any():
            if inner is None:
                continue
            i = int(np.flatnonzero(frame[col].isna().to_numpy())[0])
            raise DataError(f"`inner`: column {col!r} is empty for study {labels[i]!r} (row "
                            f"{i + 1}); it must name every effect.")
        values = [str(v) for v in frame[col]]
        pairs = pd.Series([f"{lab}\x00{v}" for lab, v in zip(labels, values, strict=True)])
        if pairs.duplicated().any():
            if inner is None:
                continue
            i = int(np.flatnonzero(pairs.duplicated().to_numpy())[0])
            raise DataError(f"`inner`: column {col!r} holds {values[i]!r} twice in study "
                            f"{labels[i]!r} (row {i + 1}); it must name each effect of a study "
                            "once.")
        return col, values
    numbers = pd.Series(labels).groupby(labels, sort=False).cumcount() + 1
    return None, [str(n) for n in numbers]


def _multilevel_rows(fit, rob, scale: str) -> pd.DataFrame:
    """The multilevel estimate with its three 95% intervals, back-transformed."""
    from scipy import stats

    from .transforms import from_scale

    J = fit.n_clusters[0]
    b = float(fit.beta[0])
    se_model, se_rob = float(np.sqrt(fit.vcov[0, 0])), float(np.sqrt(rob.vcov[0, 0]))
    df_rob = float(np.atleast_1d(rob.df)[0])
    robust = _use_robust(fit)

    def back(x):
        return float(x) if scale == "identity" else float(from_scale(x, scale))

    rows = []
    for name, se, df, used in (
            ("model-based, z", se_model, None, False),
            (f"model-based, t({J - 1})", se_model, float(J - 1), not robust),
            ("cluster-robust CR2 by study, Satterthwaite t", se_rob, df_rob, robust)):
        q = stats.norm.ppf(0.975) if df is None else stats.t.ppf(0.975, df)
        rows.append({"interval": name, "estimate": back(b), "ci_low": back(b - q * se),
                     "ci_high": back(b + q * se), "yi": b, "se": se, "df": df,
                     "n_studies": J, "k": fit.k, "used": used})
    return pd.DataFrame(rows)


def _fit_multilevel(y, v, labels, effects, level: str, tau2_method: str, what: str):
    from ..errors import ConvergenceError
    from .multilevel import multilevel_meta_analysis

    counts = pd.Series(labels).value_counts()
    names = [lab if counts[lab] == 1 else f"{lab} / {e}"
             for lab, e in zip(labels, effects, strict=True)]
    try:
        return multilevel_meta_analysis(y, v, clusters={"study": list(labels),
                                                       level: list(effects)},
                                        labels=names, tau2_method=tau2_method)
    except ConvergenceError as exc:
        raise ConvergenceError(f"the multilevel model of the {what} ({len(y)} effects in "
                               f"{counts.size} studies) did not converge: {exc} Try "
                               "`tau2_method='ML'`, or give one row per study.") from None


def _analyze_multilevel(frame, labels, metric, original, tolerance, tau2_method, study,
                        inner) -> ReportedAnalysis:
    """:func:`analyze_reported` when some study has several effects."""
    from scipy import stats

    from .analysis import analyze_replications
    from .audit import KNHA_BELOW, LIGHT_ALPHA, _light
    from .estimates import from_summary

    tau2_method = check_choice(str(tau2_method).upper(), "tau2_method", ("REML", "ML"))
    metric = _pick_metric(frame, metric)
    original = _original_iv(frame, labels, original)
    inner_col, effects = _inner_iv(frame, labels, inner)
    names = list(dict.fromkeys(labels))
    J = len(names)
    if J < 2:
        raise DataError(f"`{study}`: every row belongs to study {names[0]!r}; several effects "
                        "per study are pooled across at least 2 studies.")
    est, se, yi, vi, source, scale = _study_variances(frame, metric, labels)
    what = _METRIC_WORDS[metric]
    level = inner_col or "effect"
    fit = _fit_multilevel(yi, vi, labels, effects, level, tau2_method, f"reported {what}")
    rob = fit.robust(method="CR2")
    rows = _multilevel_rows(fit, rob, scale)
    used = rows.query("used").iloc[0]
    z = 1.959963984540054
    studies = pd.DataFrame({"study": labels, "effect": effects, "estimate": est, "se": se,
                            "ci_low": est - z * se, "ci_high": est + z * se,
                            "variance_from": source, "yi": yi, "vi": vi,
                            "original": [lab == original for lab in labels]})
    raw, pool_measure, _ = METRIC_MEASURES[metric]
    on = ("as given" if scale == "identity" else
          f"on the {pool_measure} scale, back-transformed (a monotone transform)")
    how_ci = (f"the cluster-robust CR2 interval by study with Satterthwaite t (Tipton (2015); "
              f"{J} studies, at least {ROBUST_FROM})" if _use_robust(fit)
              else f"the model-based interval with t({J} − 1) ({J} studies, fewer than "
                   f"{ROBUST_FROM}: the CR2 degrees of freedom are too few to trust)")
    by = (f"column `{inner_col}`" if inner_col else "their order within the study")
    notes = [f"variances: {', '.join(sorted(set(source)))}",
             f"several effects per study ({fit.k} effects in {J} studies, told apart by {by}): "
             "pooled by a multilevel model with random intercepts for studies and for effects "
             f"within studies (Konstantopoulos (2011); metafor's rma.mv, variances by "
             f"{tau2_method}) {on}, neither averaged within studies nor treated "
             f"as independent studies; 95% interval: {how_ci}"]
    s2 = fit.sigma2
    pooled_words = (f"{number(used['estimate'], 4)} "
                    f"{_interval_text(used['ci_low'], used['ci_high'], 4)} ({used['interval']}), "
                    f"σ² between studies = {number(s2[0], 4)}, between effects within a study "
                    f"= {number(s2[1], 4)}"
                    + ("" if scale == "identity" else f" ({pool_measure} scale)"))
    ml = {"multilevel": fit, "robust": rob}
    if original is None:
        verdict = Verdict(f"No original marked: nothing to replicate. The {J} studies' "
                          f"{fit.k} effects ({what}), pooled by a multilevel model: "
                          f"{pooled_words}.", what, "info", float(used["estimate"]),
                          float(used["ci_low"]), float(used["ci_high"]),
                          ("several effects per study, pooled by a multilevel model "
                           "(Konstantopoulos (2011)), not averaged nor treated as "
                           f"independent; interval: {used['interval']}",
                           "mark the original study (a `role` column, or `original`) to "
                           "judge a replication"),
                          label=f"multilevel pooled {what}, 95% CI")
        return ReportedAnalysis(metric, studies, None, scale, None, None, None, tolerance,
                                verdict, tuple(notes), **ml)
    # each study's effects for the per-study tests: their mean, with the SE of the mean at
    # correlation 1 (the mean of their SEs) -- never too small whatever the correlation
    idx = {n: [i for i, lab in enumerate(labels) if lab == n] for n in names}
    ybar = np.array([est[idx[n]].mean() for n in names])
    sbar = np.array([se[idx[n]].mean() for n in names])
    ests = [from_summary(r2=float(m), se=float(s), label=n) if metric == "r2" else
            from_summary(estimate=float(m), se=float(s), metric=metric, label=n)
            for n, m, s in zip(names, ybar, sbar, strict=True)]
    interval = "knha" if J < KNHA_BELOW else "wald"
    rep = analyze_replications({(what, "reported"): ests}, original, tolerance=tolerance,
                               tau2_method=tau2_method, interval="wald",
                               meta_interval=interval)
    o = names.index(original)
    others = [i for i in range(J) if i != o]
    light = _light(ybar[o], sbar[o] ** 2, ybar[others], sbar[others] ** 2, tolerance,
                   tau2_method=tau2_method, interval=interval)
    light = {key: (v.item() if hasattr(v, "item") else v) for key, v in light.items()}
    reps = [i for i, lab in enumerate(labels) if lab != original]
    J_rep = len(others)
    several_reps = any(len(idx[names[i]]) > 1 for i in others)
    light_how = "each replication study's effects averaged (SE: the mean of their SEs)"
    if J_rep >= 2 and several_reps:  # the replications pooled by the multilevel model
        sub = _fit_multilevel(est[reps], se[reps] ** 2, [labels[i] for i in reps],
                              [effects[i] for i in reps], level, tau2_method,
                              f"replications' {what}")
        if J_rep >= ROBUST_FROM:
            r = sub.robust(method="CR2")
            var, df = float(r.vcov[0, 0]), float(np.atleast_1d(r.df)[0])
            light_how = (f"the replications' {sub.k} effects pooled by the multilevel model, "
                         f"CR2 interval by study (Satterthwaite t({number(df, 3)}))")
        else:
            var, df = float(sub.vcov[0, 0]), float(J_rep - 1)
            light_how = (f"the replications' {sub.k} effects pooled by the multilevel model, "
                         f"model-based SE with t({J_rep - 1})")
        diff = float(sub.beta[0]) - float(ybar[o])
        half = float(stats.t.ppf(1 - LIGHT_ALPHA, df)) * np.sqrt(var + sbar[o] ** 2)
        lo, hi = diff - half, diff + half
        pooled_in = bool(lo > -tolerance and hi < tolerance)
        outside = bool(lo > tolerance or hi < -tolerance)
        level_ = ("good" if pooled_in or light["all_in"] else "bad" if outside else "warn")
        light.update(difference=diff, low=float(lo), high=float(hi), pooled_in=pooled_in,
                     level=level_)
    light["how"] = light_how
    o_m = len(idx[original])
    caveats = [f"several effects per study, pooled by a multilevel model (Konstantopoulos "
               f"(2011)), not averaged nor treated as independent; light: {light_how}; per "
               "study, the mean of its effects with the mean of their SEs"]
    if o_m > 1:
        caveats.append(f"the original ({original}) reports {o_m} effects: compared as their "
                       f"mean {number(ybar[o], 4)} with SE {number(sbar[o], 4)} (the SE of a "
                       "mean at within-study correlation 1, never too small)")
    if metric == "r2" and (source == "R2").any():
        caveats.append("the SE of an R² from n alone (Olkin & Finn (1995)) is right for "
                       "calibrated predictions and too small for an overfitted model's test R²")
    caveats += _c_index_caveats(metric, source)
    verdict = _reported_verdict(light, what, original, tolerance, J_rep, tuple(caveats))
    notes.append("replication − original per study on the metric's scale (Wald, Vijayakumar & "
                 "Cheung (2021), eq. 2), a study's several effects as their mean with the mean "
                 "of their SEs (the SE of the mean at within-study correlation 1); for the "
                 f"light: {light_how}")
    return ReportedAnalysis(metric, studies, None, scale, original, rep, light, tolerance,
                            verdict, tuple(notes), **ml)
