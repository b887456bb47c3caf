"""One original and several replications: the three aims for every model at once.

:func:`estimates_from_table` turns a table of study estimates (reported numbers) or a Scores
table of CV folds into :class:`~replikit.replicate.Estimate` objects;
:func:`analyze_replications` runs inconsistency, consistency and the FE/RE combination for each
group (model x CV/test); :func:`meta_from_table` is the meta-analysis of a table of effects. The
command line and the audit report are thin layers over these.

Tables are validated on entry: every value a statistic rests on must be a finite number in its
range, and an error names the column, the study and the value at fault (never a position in an
array the user did not build).
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import renamed
from .._format import interval as _interval_text
from .._format import number
from .._validation import check_choice
from ..errors import DataError, ParameterError, warn
from ..results import Result, to_jsonable
from .aims import _OLD_INTERVALS, consistency, inconsistency, replication_row
from .estimates import SAMPLES, SE_METHODS, Estimate, from_folds, from_summary
from .meta import MetaResult, meta_analysis

__all__ = ["ReplicationAnalysis", "analyze_replications", "estimates_from_table",
           "meta_from_table", "multilevel_from_table"]

_VALUE_COLS = ("value", "r2", "estimate", "yi", "c_index")
_BIG = 1e100  # effects and variances beyond this overflow inverse-variance sums
_N_COLS = ("n", "n_test")


def _label(value) -> str:
    """A study label as text; integer-valued floats (2002.0 from a CSV reader) print as 2002."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "item"):
        return _label(value.item())
    return str(value)


def _pick(frame: pd.DataFrame, wanted: str | None, options, what: str, param: str,
          required=True):
    if wanted is not None:
        if wanted not in frame.columns:
            raise DataError(f"`{param}`: column {wanted!r} ({what}) not found; columns are "
                            f"{list(frame.columns)}.")
        return wanted
    for c in options:
        if c in frame.columns:
            return c
    if required:
        raise DataError(f"no {what} column: expected one of {list(options)} (or name it with "
                        f"`{param}`); got {list(frame.columns)}.")
    return None


def _where(labels, i: int) -> str:
    return f"study {labels[i]!r} (row {i + 1})"


def _numbers(frame: pd.DataFrame, col: str, what: str, labels, *, allow_missing=False):
    """Column ``col`` as floats; a cell that is not a number is an error naming the column, the
    study and the text (a stray ``n/a?`` never turns a column into text or dummies)."""
    raw = frame[col]
    num = pd.to_numeric(raw, errors="coerce").astype(float)
    text = raw.astype(str).str.strip()
    bad = num.isna() & raw.notna() & (text != "") & ~text.str.lower().isin(["nan", "na"])
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"column {col!r} ({what}) holds {raw.iloc[i]!r} for "
                        f"{_where(labels, i)}; expected a number.")
    values = num.to_numpy()
    if not allow_missing and np.isnan(values).any():
        i = int(np.flatnonzero(np.isnan(values))[0])
        raise DataError(f"column {col!r} ({what}) is empty for {_where(labels, i)}.")
    return values


def _check_range(values, col: str, what: str, labels, ok, expected: str):
    """Raise naming the first value (not NaN) outside ``ok``."""
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(values) & ~ok(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"column {col!r} ({what}) = {number(values[i], 6)} for {_where(labels, i)}: "
                        f"{expected}.")


def _positive_se(values, col, labels, what="standard errors"):
    _check_range(values, col, what, labels, lambda s: (s > 0) & np.isfinite(s),
                 "a standard error must be finite and > 0 (a negative or zero SE is an error in "
                 "the table, not a weight)")


def _unique_labels(labels, col: str, group: str = "") -> None:
    seen: dict[str, int] = {}
    for i, lab in enumerate(labels):
        if lab in seen:
            where = f" in {group}" if group else ""
            raise DataError(f"study label {lab!r} appears more than once{where} (rows "
                            f"{seen[lab] + 1} and {i + 1} of column {col!r}); each study needs "
                            "its own label, or name the right column with `study`.")
        seen[lab] = i


def estimates_from_table(frame: pd.DataFrame, *, study: str = "study",
                         estimate: str | None = None,
                         n: str | None = None, k: str | int | None = "k", se: str | None = "se",
                         metric: str = "r2", pooling: str = "random",
                         tau2_method: str = "REML", se_method: str = "olkin_finn",
                         sample: str = "test_set",
                         ) -> dict[tuple[str, str], list[Estimate]]:
    """Estimates per (model, source) from a table of study estimates or of CV folds.

    Parameters
    ----------
    frame : pandas.DataFrame
        Either one row per study (``study``, a column of estimates ``value``/``r2``/
        ``estimate``/``yi``/``c_index``, ``n`` and optionally ``k``, ``se``, ``model``; a
        C-index with ``metric='c_index'`` takes ``se`` or its interval ``ci_low``,
        ``ci_high``, read on the logit scale, with an optional ``confidence_level``), or a
        Scores table (``study``, ``model``, ``fold``, ``metric``, ``value``, ``n_test``) whose
        folds are pooled per study.
    study : str, default 'study'
        Column of study labels.
    estimate : str, optional
        Column of estimates (in a Scores table, the fold values; default ``value``); detected
        when None.
    n : str, optional
        Column of sample sizes (``n`` or ``n_test``); detected when None.
    k : str or int, optional, default 'k'
        Column of predictor counts, or one count for all rows.
    se : str, optional, default 'se'
        Column of reported SEs (used when present).
    metric : str, default 'r2'
        Metric of the estimates (rows of a Scores table with another metric are dropped); a
        column of estimates named ``c_index`` makes it ``'c_index'``.
    pooling : {'fixed', 'random'}, default 'random'
        Pooling of the folds within each study (Scores input only).
    tau2_method : str, default 'REML'
        τ² estimator of a random-effects pooling of folds.
    se_method : {'olkin_finn', 'cohen'}, default 'olkin_finn'
        SE formula of a reported R² or a fold R² without a reported SE.
    sample : {'test_set', 'in_sample', 'cross_validated'}, default 'test_set'
        Where the reported R²s of a study table come from (see
        :class:`~replikit.replicate.Estimate`): an in-sample R² gets Lee's interval and needs
        ``k``. Pooled folds of a Scores table are always ``'cross_validated'``.

    Returns
    -------
    dict
        ``(model, source)`` → list of :class:`~replikit.replicate.Estimate` in table order;
        ``source`` is ``'cv'`` for pooled folds and ``'reported'`` for a study table.

    Raises
    ------
    DataError
        Naming the column, study and value: a value that is not a number; an R2 outside
        [0, 1) whose SE must come from Olkin-Finn/Cohen (a negative R2 is accepted with a
        reported SE; above 1 never); ``n`` not a whole number >= 2, or ``n <= k + 1`` (a fit
        with at least as many coefficients as rows has R2 = 1 by construction, whatever SE is
        reported); an SE that is not finite and > 0; a study label used twice in a group; a
        study with fewer than 2 folds, or a fold R2 outside (0, 1) (no Olkin-Finn SE).

    See Also
    --------
    analyze_replications : The three aims for every group of estimates.
    meta_from_table : The meta-analysis of a table of effects.

    Notes
    -----
    The two entry points of Vijayakumar & Cheung (2021): a reported test R² and n, or CV fold
    R²s (the first stage, :func:`~replikit.replicate.from_folds`).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Olkin, I. & Finn, J. D. (1995). Correlations Redux. Psychological Bulletin, 118(1),
       155–164. https://doi.org/10.1037/0033-2909.118.1.155

    Examples
    --------
    >>> table = pd.DataFrame({"study": ["a", "b"], "r2": [0.40, 0.35], "n": [600, 700]})
    >>> groups = estimates_from_table(table)
    >>> [(e.label, round(e.se, 4)) for e in groups[("model", "reported")]]
    [('a', 0.031), ('b', 0.0291)]
    """
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise DataError("the estimates table is empty or not a table.")
    if study not in frame.columns:
        raise DataError(f"`study`: column {study!r} (study labels) not found; columns are "
                        f"{list(frame.columns)}.")
    pooling = check_choice(pooling, "pooling", ("fixed", "random"))
    se_method = check_choice(se_method, "se_method", SE_METHODS)
    sample = check_choice(sample, "sample", SAMPLES)
    is_scores = {"fold", "metric"} <= set(frame.columns)
    if is_scores:
        return _estimates_from_scores(frame, study, estimate, n, k, metric, pooling,
                                      tau2_method, se_method)
    frame = frame.reset_index(drop=True)
    labels = [_label(s) for s in frame[study]]
    vcol = _pick(frame, estimate, _VALUE_COLS, "estimate", "estimate")
    if vcol == "c_index" and metric == "r2":  # the column names its metric
        metric = "c_index"
    ncol = _pick(frame, n, _N_COLS, "sample size", "n", required=False)
    secol = se if (se is not None and se in frame.columns) else None
    kcol = k if (isinstance(k, str) and k in frame.columns) else None
    cicols = metric == "c_index" and {"ci_low", "ci_high"} <= set(frame.columns)
    if ncol is None and secol is None and not cicols:
        raise DataError("the estimates table needs a sample-size column (`n`) or an `se` column"
                        + (" (a C-index: `se`, or its interval `ci_low`, `ci_high`)"
                           if metric == "c_index" else "") + f"; got {list(frame.columns)}.")
    vals = _numbers(frame, vcol, "estimates", labels)
    ses = _numbers(frame, secol, "standard errors", labels, allow_missing=True) \
        if secol is not None else np.full(len(frame), np.nan)
    ns = _numbers(frame, ncol, "sample sizes", labels, allow_missing=secol is not None) \
        if ncol is not None else np.full(len(frame), np.nan)
    ks = _numbers(frame, kcol, "predictors", labels, allow_missing=True) \
        if kcol is not None else np.full(len(frame), float(k) if isinstance(k, int) else np.nan)
    _check_range(vals, vcol, "estimates", labels, np.isfinite, "an estimate must be finite")
    _positive_se(ses, secol or "se", labels)
    _check_range(ses, secol or "se", "standard errors", labels,
                 lambda a: (a >= _BIG ** -0.5) & (a <= _BIG ** 0.5),
                 f"a standard error outside [{number(_BIG ** -0.5)}, {number(_BIG ** 0.5)}] overflows the "
                 "inverse-variance weights")
    _check_range(ns, ncol or "n", "sample sizes", labels,
                 lambda v: (v >= 2) & (v == np.round(v)) & (v <= 1e12),
                 "a sample size must be a whole number from 2 to 1e12")
    _check_range(ks, kcol or "k", "predictors", labels,
                 lambda v: (v >= 1) & (v == np.round(v)) & np.isfinite(v),
                 "a predictor count must be a whole number >= 1")
    lows, highs, levels = (
        _numbers(frame, c, what, labels, allow_missing=True) if c in frame.columns
        else np.full(len(frame), np.nan)
        for c, what in (("ci_low", "interval bounds"), ("ci_high", "interval bounds"),
                        ("confidence_level", "interval levels"))) if cicols else (
        np.full(len(frame), np.nan),) * 3
    levels = np.where(np.isnan(levels), 0.95, levels)
    for i in range(len(frame)):
        if not (np.isnan(ns[i]) or np.isnan(ks[i])) and ns[i] <= ks[i] + 1:
            raise DataError(f"{_where(labels, i)}: n = {int(ns[i])} rows cannot support "
                            f"k = {int(ks[i])} predictors (need n > k + 1; such a fit has R2 = 1 "
                            "by construction, whatever SE is reported).")
        if metric == "c_index" and np.isnan(ses[i]) and (np.isnan(lows[i])
                                                         or np.isnan(highs[i])):
            raise DataError(f"{_where(labels, i)}: a C-index needs its standard error (column "
                            "`se`) or its confidence interval (columns `ci_low` and `ci_high`); "
                            "it has no closed-form SE from n and the number of events.")
        if metric != "c_index" and np.isnan(ses[i]) and np.isnan(ns[i]):
            raise DataError(f"{_where(labels, i)} has neither a sample size (column "
                            f"{ncol!r}) nor a standard error (column {secol!r}).")
    if metric == "r2":
        _check_range(vals, vcol, "R2", labels, lambda v: v <= 1,
                     "an R2 cannot exceed 1")
        olkin = np.isnan(ses)
        _check_range(np.where(olkin, vals, np.nan), vcol, "R2", labels,
                     lambda v: (v >= 0) & (v < 1),
                     f"the {se_method} SE needs an R2 in [0, 1) (a squared correlation); give "
                     "a reported SE in column `se` for a negative test R2")
    elif metric != "c_index" and np.isnan(ses).any():
        i = int(np.flatnonzero(np.isnan(ses))[0])
        raise DataError(f"`metric` {metric!r}: {_where(labels, i)} has no standard error; "
                        f"only R2 has a closed-form SE from n, so give an `se` column.")
    models = frame["model"] if "model" in frame.columns else pd.Series("model", index=frame.index)
    out: dict[tuple[str, str], list[Estimate]] = {}
    for m in pd.unique(models):
        rows = np.flatnonzero((models == m).to_numpy())
        _unique_labels([labels[i] for i in rows], study,
                       f"model {_label(m)!r}" if "model" in frame.columns else "")
        ests = []
        for i in rows:
            kk = None if np.isnan(ks[i]) else int(ks[i])
            nn = None if np.isnan(ns[i]) else int(ns[i])
            s = None if np.isnan(ses[i]) else float(ses[i])
            if metric == "r2":
                if sample == "in_sample" and (nn is None or kk is None):
                    raise DataError(f"{_where(labels, i)}: an in-sample R2 needs its `n` and "
                                    "`k` (Lee's interval); give both columns.")
                e = from_summary(r2=float(vals[i]), se=s, n=nn, k=kk, se_method=se_method,
                                 label=labels[i], sample=sample)
            elif metric == "c_index":  # the SE, else the interval on the logit scale
                ci = {} if s is not None else {"ci_low": float(lows[i]),
                                               "ci_high": float(highs[i]),
                                               "confidence_level": float(levels[i])}
                try:
                    e = from_summary(estimate=float(vals[i]), se=s, n=nn, k=kk, metric=metric,
                                     label=labels[i], **ci)
                except (DataError, ParameterError) as exc:
                    raise DataError(f"{_where(labels, i)}: {exc}") from None
            else:
                e = from_summary(estimate=float(vals[i]), se=s, n=nn, k=kk, metric=metric,
                                 label=labels[i])
            ests.append(e)
        out[(_label(m), "reported")] = ests
    return out


def _estimates_from_scores(frame, study, estimate, n, k, metric, pooling, tau2_method,
                           se_method):
    f = frame[frame["metric"] == metric].reset_index(drop=True)
    if f.empty:
        raise DataError(f"`metric`: the Scores table has no rows with metric {metric!r}; "
                        f"metrics are {sorted(frame['metric'].astype(str).unique())}.")
    labels = [_label(s) for s in f[study]]
    vcol = _pick(f, estimate, ("value",), "fold value", "estimate")
    ncol = _pick(f, n, ("n_test", "n"), "fold size", "n")
    vals = _numbers(f, vcol, "fold values", labels)
    sizes = _numbers(f, ncol, "fold sizes", labels)
    _check_range(vals, vcol, "fold values", labels, np.isfinite, "a fold value must be finite")
    _check_range(sizes, ncol, "fold sizes", labels,
                 lambda v: (v >= 2) & (v == np.round(v)) & np.isfinite(v),
                 "a fold size must be a whole number >= 2")
    if metric == "r2":
        _check_range(vals, vcol, "fold R2", labels, lambda v: (v > 0) & (v < 1),
                     f"a fold R2 needs 0 < R2 < 1 for its {se_method} SE (a fold predicted no "
                     "better than its mean cannot be weighted)")
    models = f["model"] if "model" in f.columns else pd.Series("model", index=f.index)
    kk = k if isinstance(k, int) else None
    out: dict[tuple[str, str], list[Estimate]] = {}
    for m in pd.unique(models):
        in_model = (models == m).to_numpy()
        ests = []
        for s in pd.unique(f.loc[in_model, study]):
            rows = np.flatnonzero(in_model & (f[study] == s).to_numpy())
            if rows.size < 2:
                raise DataError(f"study {_label(s)!r} (model {_label(m)!r}) has {rows.size} "
                                f"fold of metric {metric!r}; pooling folds needs at least 2.")
            if metric != "r2":
                raise DataError(f"`metric` {metric!r}: the folds of a Scores table carry no "
                                "standard errors; only R2 folds have a closed-form SE.")
            ests.append(from_folds(vals[rows], sizes[rows], pooling=pooling,
                                   tau2_method=tau2_method, k=kk, metric=metric,
                                   se_method=se_method, label=_label(s)))
        out[(_label(m), "cv")] = ests
    return out


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def meta_from_table(frame: pd.DataFrame, *, effect: str | None = None,
                    variance: str | None = None, se: str | None = None,
                    label: str | None = None, tau2_method: str = "REML",
                    interval: str = "wald", knha_floor: bool = False,
                    pi_dist: str | None = None) -> MetaResult:
    """Meta-analysis of a table of effects with sampling variances or standard errors.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per study.
    effect : str, optional
        Column of effects (default: the first of ``yi``, ``effect``, ``estimate``, ``value``).
    variance : str, optional
        Column of sampling variances (default ``vi``/``variance``/``var``). Name at most one of
        ``variance`` and ``se``.
    se : str, optional
        Column of standard errors (default ``se``/``sei``, used when there is no variance
        column).
    label : str, optional
        Column of study labels (default ``label``/``study``/``author``); repeated labels are
        allowed and flagged with a :class:`~replikit.errors.ReplikitWarning`.
    tau2_method : str, default 'REML'
        ``'FE'`` or the τ² estimator (as :func:`~replikit.replicate.meta_analysis`).
    interval : {'wald', 'knha'}, default 'wald'
        The pooled interval (as :func:`~replikit.replicate.meta_analysis`).
    knha_floor : bool, default False
        Never let the Knapp–Hartung SE fall below the Wald one.
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Reference distribution of the prediction interval.

    Returns
    -------
    MetaResult
        The meta-analysis of the table's effects.

    Raises
    ------
    DataError
        Naming the column, study and value: a cell that is not a number, an effect that is not
        finite, a variance or SE that is not finite and > 0 (a negative SE is never squared
        into a valid variance), fewer than 2 studies.

    See Also
    --------
    meta_analysis : The same on arrays.
    estimates_from_table : Study estimates from a table, for the three aims.

    Notes
    -----
    The table form of the third aim of Vijayakumar & Cheung (2021) (combination); metafor's
    ``rma(yi, vi)`` / ``rma(yi, sei=)`` (Viechtbauer 2010).

    References
    ----------
    .. [1] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03
    .. [2] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445

    Examples
    --------
    >>> table = pd.DataFrame({"study": ["a", "b", "c"], "yi": [0.40, 0.35, 0.45],
    ...                       "vi": [0.001, 0.002, 0.0015]})
    >>> res = meta_from_table(table, tau2_method="DL")
    >>> res.labels, round(res.estimate, 4)
    (('a', 'b', 'c'), 0.403)
    """
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise DataError("the effects table is empty or not a table.")
    if variance is not None and se is not None:
        raise ParameterError(f"name a variance column (`variance` = {variance!r}) or a "
                             f"standard-error column (`se` = {se!r}), not both.")
    frame = frame.reset_index(drop=True)
    ycol = _pick(frame, effect, ("yi", "effect", "estimate", "value"), "effect", "effect")
    vcol = _pick(frame, variance, ("vi", "variance", "var"), "variances", "variance",
                 required=False) if se is None else None
    scol = _pick(frame, se, ("se", "sei"), "standard errors", "se", required=False) \
        if vcol is None else None
    if vcol is None and scol is None:
        raise DataError(f"no sampling-variance column (vi, variance; `variance`) or "
                        f"standard-error column (se, sei; `se`); got {list(frame.columns)}.")
    lcol = _pick(frame, label, ("label", "study", "author"), "labels", "label",
                 required=False)
    labels = [_label(s) for s in frame[lcol]] if lcol else \
        [f"Study {i + 1}" for i in range(len(frame))]
    if len(frame) < 2:
        raise DataError(f"a meta-analysis needs at least 2 studies; the table has {len(frame)} "
                        "row.")
    y = _numbers(frame, ycol, "effects", labels)
    _check_range(y, ycol, "effects", labels, np.isfinite, "an effect must be finite")
    _check_range(y, ycol, "effects", labels, lambda a: np.abs(a) <= _BIG,
                 f"an effect beyond ±{number(_BIG)} overflows the weighted sums (rescale it)")
    if vcol is not None:
        v = _numbers(frame, vcol, "sampling variances", labels)
        _check_range(v, vcol, "sampling variances", labels,
                     lambda s: (s > 0) & np.isfinite(s),
                     "a sampling variance must be finite and > 0")
        _check_range(v, vcol, "sampling variances", labels,
                     lambda s: (s >= 1 / _BIG) & (s <= _BIG),
                     f"a sampling variance outside [{number(1 / _BIG)}, {number(_BIG)}] overflows the "
                     "inverse-variance weights (rescale the effects)")
        kwargs = {"v": v}
    else:
        s = _numbers(frame, scol, "standard errors", labels)
        _positive_se(s, scol, labels)
        _check_range(s, scol, "standard errors", labels,
                     lambda a: (a >= _BIG ** -0.5) & (a <= _BIG ** 0.5),
                     f"a standard error outside [{number(_BIG ** -0.5)}, {number(_BIG ** 0.5)}] overflows "
                     "the inverse-variance weights (rescale the effects)")
        kwargs = {"se": s}
    counts = Counter(labels)  # not labels.count per label: O(k^2) at 100,000 studies
    repeated = sorted(lab for lab, n in counts.items() if n > 1)
    if lcol and repeated:
        shown = ", ".join(repr(r) for r in repeated[:5])
        warn(f"study labels repeat in column {lcol!r} ({shown}); each row is pooled as its own "
             "study, and the forest plot shows the label more than once.")
    return meta_analysis(y, labels=labels, tau2_method=tau2_method, interval=interval,
                         knha_floor=knha_floor, pi_dist=pi_dist, **kwargs)


def multilevel_from_table(frame: pd.DataFrame, *, clusters, effect: str | None = None,
                          variance: str | None = None, se: str | None = None,
                          label: str | None = None, moderators=None,
                          tau2_method: str = "REML", interval: str = "wald"):
    """Multilevel meta-analysis of a table with several effects per study.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per effect.
    clusters : sequence of str
        Columns of the nesting levels, outermost first (``['study', 'fold']``); an inner
        label need only be unique within its outer cluster.
    effect, variance, se, label : str, optional
        Columns as for :func:`meta_from_table` (defaults ``yi``/``effect``/``estimate``/
        ``value``, ``vi``/``variance``/``var``, ``se``/``sei``, ``label``).
    moderators : DataFrame, optional
        Effect-level moderators (one row per row of ``frame``).
    tau2_method : {'REML', 'ML'}, default 'REML'
        Estimator of the level variances.
    interval : {'wald', 't'}, default 'wald'
        z or t(k - p) tests and intervals.

    Returns
    -------
    MultilevelMeta
        The fit (see :func:`~replikit.replicate.multilevel_meta_analysis`).

    Raises
    ------
    DataError
        A missing column, a cell that is not a number, a variance or SE not finite and > 0.

    See Also
    --------
    multilevel_meta_analysis : The model.
    meta_from_table : One effect per study.

    References
    ----------
    .. [1] Konstantopoulos, S. (2011). Fixed Effects and Variance Components Estimation in
       Three-Level Meta-Analysis. Research Synthesis Methods, 2(1), 61–76.

    Examples
    --------
    >>> table = pd.DataFrame({"study": [1, 1, 2, 2, 3, 3], "yi": [.1, .3, .2, .5, .4, .6],
    ...                       "vi": [.01] * 6})
    >>> fit = multilevel_from_table(table, clusters=["study"])
    >>> fit.levels, round(fit.estimate, 4)
    (('study',), 0.35)
    """
    from .multilevel import multilevel_meta_analysis

    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise DataError("the effects table is empty or not a table.")
    if variance is not None and se is not None:
        raise ParameterError(f"name a variance column (`variance` = {variance!r}) or a "
                             f"standard-error column (`se` = {se!r}), not both.")
    frame = frame.reset_index(drop=True)
    if isinstance(clusters, str):
        clusters = [clusters]
    clusters = list(clusters or ())
    if not clusters:
        raise ParameterError("`clusters`: name at least one column of clusters (the study).")
    for c in clusters:
        if c not in frame.columns:
            raise DataError(f"`clusters`: column {c!r} not found; columns are "
                            f"{list(frame.columns)}.")
    ycol = _pick(frame, effect, ("yi", "effect", "estimate", "value"), "effect", "effect")
    vcol = _pick(frame, variance, ("vi", "variance", "var"), "variances", "variance",
                 required=False) if se is None else None
    scol = _pick(frame, se, ("se", "sei"), "standard errors", "se", required=False) \
        if vcol is None else None
    if vcol is None and scol is None:
        raise DataError(f"no sampling-variance column (vi, variance; `variance`) or "
                        f"standard-error column (se, sei; `se`); got {list(frame.columns)}.")
    lcol = _pick(frame, label, ("label",), "labels", "label", required=False)
    labels = [_label(s) for s in frame[lcol]] if lcol else \
        [f"Effect {i + 1}" for i in range(len(frame))]
    y = _numbers(frame, ycol, "effects", labels)
    _check_range(y, ycol, "effects", labels, np.isfinite, "an effect must be finite")
    if vcol is not None:
        v = _numbers(frame, vcol, "sampling variances", labels)
        _check_range(v, vcol, "sampling variances", labels,
                     lambda s: (s > 0) & np.isfinite(s),
                     "a sampling variance must be finite and > 0")
    else:
        s = _numbers(frame, scol, "standard errors", labels)
        _positive_se(s, scol, labels)
        v = s ** 2
    return multilevel_meta_analysis(y, v, clusters=frame[clusters], moderators=moderators,
                                    labels=labels, tau2_method=tau2_method,
                                    interval=interval)


@dataclass(frozen=True, slots=True)
class ReplicationAnalysis(Result):
    """The three aims for each group of estimates (model × kind of estimate).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (model, source, replication): the replication's ``estimate``; the
        ``difference`` replication − original, its ``se``, its 95% interval (``ci_low``,
        ``ci_high``), the z test of difference = 0 (``statistic``, ``pvalue``) and the
        ``inconsistency`` verdict; the 90% interval (``tost_ci_low``, ``tost_ci_high``), the
        binding one-sided test of the TOST (``statistic_tost``, ``pvalue_tost``) and the
        ``consistency`` verdict.
    pooled : pandas.DataFrame
        One row per (model, source, pooling): estimate, SE, interval, τ², Q, I², the τ²
        estimator (``tau2_method``) and the pooled interval (``interval``).
    estimates : pandas.DataFrame
        One row per (model, source, study): estimate, SE and 95% interval.
    meta : dict
        ``(model, source, 'fixed' | 'random')`` → :class:`~replikit.replicate.MetaResult`.
    original : str
        The original study.
    bounds : tuple of float
        The region of equivalence.
    interval : str
        The interval of the differences (``'wald'``, ``'mover'``, ``'percentile'``,
        ``'basic'``; ``'basic/wald'`` when the default chose per pair).
    tau2_method : str
        τ² estimator of the random-effects pooling.
    meta_interval : {'wald', 'knha'}
        The pooled interval.

    See Also
    --------
    analyze_replications : Builds it.
    replication_table : The first two aims for one group.

    Examples
    --------
    >>> table = pd.DataFrame({"study": ["2002", "2004", "2006"], "r2": [0.41, 0.39, 0.30],
    ...                       "se": [0.02, 0.02, 0.02], "n": [667, 650, 700]})
    >>> res = analyze_replications(estimates_from_table(table), "2002")
    >>> res.table[["replication", "inconsistency"]]
      replication           inconsistency
    0        2004  not shown inconsistent
    1        2006            inconsistent
    """

    table: pd.DataFrame
    pooled: pd.DataFrame
    estimates: pd.DataFrame
    meta: dict = field(repr=False)
    original: str = ""
    bounds: tuple = (-0.05, 0.05)
    interval: str = "wald"
    tau2_method: str = "REML"
    meta_interval: str = "wald"

    @property
    def title(self) -> str:
        return f"Replication of {self.original!r}"

    def to_frame(self) -> pd.DataFrame:
        """The per-replication table (a copy of :attr:`table`).

        Returns
        -------
        pandas.DataFrame
            One row per (model, source, replication).
        """
        return self.table.copy()

    def to_dict(self) -> dict:
        """The analysis in JSON types (what ``replikit replicate --format json`` prints).

        Returns
        -------
        dict
            ``original, bounds, interval, tau2_method, meta_interval, replications, pooled,
            estimates``.
        """
        return to_jsonable({"original": self.original, "bounds": list(self.bounds),
                            "interval": self.interval, "tau2_method": self.tau2_method,
                            "meta_interval": self.meta_interval, "replications": self.table,
                            "pooled": self.pooled, "estimates": self.estimates})

    def plot(self, ax=None, *, model: str | None = None, source: str | None = None,
             aim: str = "inconsistency", title: str | None = None):
        """The differences replication − original of one group with their intervals.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        model : str, optional
            The model (default: the first).
        source : str, optional
            The kind of estimate (default: the model's first).
        aim : {'inconsistency', 'consistency'}, default 'inconsistency'
            The 95% intervals (an interval that misses 0 is an inconsistent replication) or
            the 90% intervals with the region of equivalence (one inside it is consistent).
        title : str, optional
            A title (default: the group and the aim).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_differences

        aim = check_choice(aim, "aim", ("inconsistency", "consistency"))
        t = self.table
        model = t["model"].iloc[0] if model is None else model
        rows = t[t["model"] == model]
        source = rows["source"].iloc[0] if source is None and not rows.empty else source
        rows = rows[rows["source"] == source]
        if rows.empty:
            raise ParameterError(f"no replications for `model` {model!r} and `source` "
                                 f"{source!r}; the groups are "
                                 f"{sorted(set(zip(t['model'], t['source'], strict=True)))}.")
        if aim == "inconsistency":
            return plot_differences(rows, ax=ax, title=title or f"{model} ({source}): "
                                    "inconsistency, 95% CI")
        return plot_differences(rows, ax=ax, low="tost_ci_low", high="tost_ci_high",
                                bounds=self.bounds,
                                title=title or f"{model} ({source}): consistency, 90% CI")

    def __str__(self) -> str:
        lines = [f"Replication of {self.original!r}: difference = replication - original; "
                 f"inconsistency: 95% CI excludes 0; consistency: 90% CI inside "
                 f"{_interval_text(*self.bounds)} (difference CI: {self.interval})"]
        show = ["model", "source", "replication", "estimate", "difference", "ci_low", "ci_high",
                "inconsistency", "pvalue_tost", "consistency"]
        lines.append(self.table[show].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        lines.append("Pooled (original + replications):")
        cols = ["model", "source", "pooling", "tau2_method", "interval", "estimate", "ci_low",
                "ci_high", "tau2", "i2_q"]
        lines.append(self.pooled[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        return "\n".join(lines)


@renamed(margin="tolerance", ci="meta_interval",
         values={"interval": _OLD_INTERVALS, "meta_interval": {"z": "wald"}})
def analyze_replications(groups: dict, original: str, *, tolerance: float = 0.05,
                         bounds: tuple[float, float] | None = None,
                         interval: str | None = None,
                         tau2_method: str = "REML",
                         meta_interval: str = "wald") -> ReplicationAnalysis:
    """Inconsistency, consistency and combination for each group of study estimates.

    Parameters
    ----------
    groups : dict
        ``(model, source)`` → list of :class:`~replikit.replicate.Estimate` (e.g. from
        :func:`estimates_from_table`).
    original : str
        Label of the original study; every other study is a replication.
    tolerance : float, default 0.05
        Region of equivalence ``±tolerance`` of the consistency test.
    bounds : (float, float), optional
        An asymmetric region ``(low, high)``; overrides ``tolerance``.
    interval : {'wald', 'mover', 'percentile', 'basic'}, optional
        The interval of each difference (see :func:`~replikit.replicate.difference`; default
        per pair: the basic bootstrap when both estimates carry replicates, else Wald).
    tau2_method : str, default 'REML'
        τ² estimator of the random-effects combination.
    meta_interval : {'wald', 'knha'}, default 'wald'
        The pooled interval: Wald (z) or Knapp & Hartung (2003), t(k − 1).

    Returns
    -------
    ReplicationAnalysis
        The per-replication table, the pooled results and the study estimates.

    See Also
    --------
    estimates_from_table : The groups of estimates from a table.
    replication_table : The first two aims for one group.
    combine : The third aim for one group.

    Notes
    -----
    Study 1 of Vijayakumar & Cheung (2021): the three aims applied to each method's CV and test
    R² (Figures 3–8).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680.
       https://doi.org/10.1007/BF01068419
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03

    Examples
    --------
    >>> table = pd.DataFrame({"study": ["2002", "2004", "2006"], "r2": [0.41, 0.39, 0.30],
    ...                       "se": [0.02, 0.02, 0.02], "n": [667, 650, 700]})
    >>> res = analyze_replications(estimates_from_table(table), "2002", tolerance=0.05)
    >>> res.pooled[["pooling", "tau2_method", "interval"]]
      pooling tau2_method interval
    0   fixed          FE     wald
    1  random        REML     wald
    """
    if not groups:
        raise DataError("no estimates to analyze.")
    rows, pooled, est_rows, meta, used, said = [], [], [], {}, set(), {}
    reg_bounds = None
    for (model, source), ests in groups.items():
        labels = [e.label for e in ests]
        if str(original) not in labels:
            shown = ", ".join(repr(x) for x in labels[:12]) + (" ..." if len(labels) > 12 else "")
            raise ParameterError(f"`original`: study {str(original)!r} not found; the studies "
                                 f"are {shown}.")
        if len(ests) < 2:
            raise DataError(f"group {model}/{source} needs at least 2 studies (an original and a "
                            f"replication); got {len(ests)}.")
        _unique_labels(labels, "label", f"group {model}/{source}")
        orig = ests[labels.index(str(original))]
        for e in ests:
            c = e.confidence_interval()
            est_rows.append({"model": model, "source": source, "study": e.label,
                             "estimate": e.estimate, "se": e.se, "ci_low": c.low, "ci_high": c.high,
                             "se_source": e.source, "original": e.label == str(original)})
        for e in ests:
            if e is orig:
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                inc = inconsistency(orig, e, interval=interval)
                con = consistency(orig, e, tolerance=tolerance, bounds=bounds, interval=interval)
            for w in caught:  # once per message, not once per pair and aim
                said.setdefault((w.category, str(w.message)), None)
            used.add(inc.difference.interval)
            reg_bounds = con.bounds
            rows.append({"model": model, "source": source, "replication": e.label,
                         **replication_row(e, inc, con)})
        for pooling, mth in (("fixed", "FE"), ("random", tau2_method)):
            res: MetaResult = meta_analysis([e.estimate for e in ests], se=[e.se for e in ests],
                                            labels=labels, tau2_method=mth,
                                            interval=meta_interval)
            meta[(model, source, pooling)] = res
            c = res.confidence_interval()
            pooled.append({"model": model, "source": source, "pooling": pooling,
                           "tau2_method": res.tau2_method, "interval": res.interval, "k": res.k,
                           "estimate": res.estimate, "se": res.se, "ci_low": c.low,
                           "ci_high": c.high, "tau2": res.tau2, "q": res.q,
                           "q_pvalue": res.q_pvalue, "i2_q": res.i2_q})
    for category, message in said:
        warn(message, category)
    return ReplicationAnalysis(pd.DataFrame(rows), pd.DataFrame(pooled), pd.DataFrame(est_rows),
                               meta, str(original), tuple(reg_bounds or (-tolerance, tolerance)),
                               "/".join(sorted(used)) or (interval or "wald"), tau2_method,
                               meta_interval)
