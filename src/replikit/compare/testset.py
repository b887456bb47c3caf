"""Two fitted models on one test set, for any metric: the paired bootstrap and the approximate
randomization test.

McNemar's test (:mod:`replikit.compare.predictions`) compares two classifiers' *accuracies*
on the same test rows. Most metrics people report — F1, the Matthews correlation, ROC AUC, R² —
are not means of per-row values, so no McNemar-type table exists for them. The two tests here
resample the test rows instead and work for any metric ``m(y_true, y_pred)``:

* :func:`paired_bootstrap_test` — resample the test rows with replacement, keeping each row's
  two predictions together, and recompute ``m(a) - m(b)`` (Efron & Tibshirani 1993;
  Berg-Kirkpatrick, Burkett & Klein 2012). It gives a percentile confidence interval of the
  difference and a p-value from the bootstrap distribution shifted to the null.
* :func:`randomization_test` — under the null that the two models are exchangeable, swap the
  two predictions of each row with probability 1/2 and recompute the difference (Noreen 1989;
  Dror, Baumer, Shlomov & Reichart 2018). Its p-value is valid in finite samples.

Both compare two *fitted* models on one sample of test rows; like McNemar's test they see no
variation due to the training set, so they do not compare learning algorithms (Dietterich
1998; Gardner & Brooks 2017, section 6) — for that, use the corrected tests on resampled
scores.

Vectorised engine. A metric is built from per-row statistics that add up over the rows (the
row's correctness for accuracy; its squared error for MSE; whether it is a true positive, a
predicted positive, a positive for F1, precision, recall and the Matthews correlation; the
per-class hits and counts for balanced accuracy; the moments of y and the prediction for R²).
A bootstrap resample is a vector of counts ``w`` (how often each row is drawn), so the sums of
all resamples of a chunk are one matrix product ``W @ U``; a randomization swaps the rows where
``z = 1``, so its sums are ``U_a.sum() + Z @ (U_b - U_a)``. ROC AUC is computed from the
mid-ranks of each resample's scores (``scipy.stats.rankdata`` along rows). Only an arbitrary
callable is evaluated in a Python loop over resamples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._format import interval as _interval_text
from .._format import number
from .._format import pvalue as _pvalue_text
from .._random import check_random_state
from .._validation import check_alternative, check_confidence_level, check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval
from ._result import FRAME_COLUMNS, ComparisonResult
from ._words import fill_doc
from .predictions import _labels_1d, _names

__all__ = ["TestSetResult", "paired_bootstrap_test", "randomization_test",
           "paired_bootstrap_test_from_predictions", "randomization_test_from_predictions",
           "SCORINGS", "MIN_RESAMPLES"]

#: Fewest resamples accepted: with fewer, a 95% percentile interval rests on 2 or 3 values
#: per tail and the smallest possible p-value is above 0.01.
MIN_RESAMPLES = 100
_REQUIRES = "one test set (paired predictions)"
#: Elements of one chunk of the resample matrix (rows x test rows): 32 MB of float64.
_CHUNK = 2**22


# ---------------------------------------------------------------------------------------------
# the result


@fill_doc()
@dataclass(frozen=True, slots=True)
class TestSetResult(ComparisonResult):
    """A resampling test of two fitted models on the same test rows, for any metric.

    A :class:`~replikit.compare.ComparisonResult` whose ``statistic`` and ``estimate`` are the
    observed difference of the metric on the test set, model ``a`` minus model ``b`` (for a
    loss, a positive difference means ``a`` is worse), with the number of resamples and the
    Monte Carlo standard error of the p-value.

    Attributes
    ----------
    statistic, estimate : float
        ``metric(a) - metric(b)`` on the whole test set.
    pvalue, alternative : float, str
        The resampling p-value under ``alternative`` (for ``a - b`` against 0).
    df : None
        No reference distribution.
    se : float
        The bootstrap standard error of the difference (SD of the resampled differences); NaN
        for the randomization test.
    method : str
        The test's name in words, with its paper.
    extra : dict
        ``metric_a``, ``metric_b``, the positive label where one is used, notes.
    test : str
        ``'paired_bootstrap'`` or ``'randomization'``.
    valid : bool
        True: valid for two fitted models on one test set.
    requires : str
        ``'one test set (paired predictions)'``.
    df2 : None
        Not an F test.
    n : int
        Number of test rows.
    a, b, metric : str
        The two models and the metric.
    n_resamples : int
        Resamples the p-value rests on (those where the metric is defined).
    pvalue_mcse : float
        Monte Carlo standard error of the p-value, ``sqrt(p (1 - p) / n_resamples)``: how much
        the p-value would move with another ``random_state``.
    confidence_level : float
        Level of the interval shown by ``str()`` and ``to_frame()``.
    _replicates : numpy.ndarray or None
        The bootstrap differences the interval is read from (None for the randomization
        test); private, not in ``to_dict()``.

    See Also
    --------
    paired_bootstrap_test : The bootstrap test and interval.
    randomization_test : The approximate randomization test.
    replikit.compare.mcnemar_test : Accuracy only, from the 2 x 2 table.

    References
    ----------
    {refs:bergkirkpatrick2012,noreen1989,dror2018}

    Examples
    --------
    >>> r = paired_bootstrap_test([0, 1, 1, 0, 1] * 20, [0, 1, 1, 1, 1] * 20,
    ...                           [0, 1, 0, 0, 1] * 20, scoring="f1", n_resamples=200,
    ...                           random_state=0)
    >>> r.test, r.n_resamples, round(r.statistic, 4)
    ('paired_bootstrap', 200, 0.0571)
    """

    n_resamples: int = 0
    pvalue_mcse: float = math.nan
    confidence_level: float = 0.95
    _replicates: np.ndarray | None = field(default=None, compare=False, repr=False)

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Percentile bootstrap interval of the difference ``a - b`` (NaN for randomization).

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval; default the result's ``confidence_level``.

        Returns
        -------
        ConfidenceInterval
            The ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the resampled differences;
            one-sided (an infinite end) for a one-sided ``alternative``, as scipy.stats does.
            ``[nan, nan]`` for the randomization test, which resamples under the null and so
            has no interval.
        """
        level = check_confidence_level(self.confidence_level if confidence_level is None
                                       else confidence_level)
        reps = self._replicates
        if reps is None or reps.size == 0:
            return ConfidenceInterval(math.nan, math.nan)
        if self.alternative == "greater":
            return ConfidenceInterval(float(np.quantile(reps, 1.0 - level)), math.inf)
        if self.alternative == "less":
            return ConfidenceInterval(-math.inf, float(np.quantile(reps, level)))
        lo, hi = np.quantile(reps, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        return ConfidenceInterval(float(lo), float(hi))

    def to_frame(self, confidence_level: float | None = None) -> pd.DataFrame:
        """One tidy row: the columns of a ComparisonResult plus the resampling's own.

        Parameters
        ----------
        confidence_level : float, optional
            Level of ``ci_low`` and ``ci_high``; default the result's ``confidence_level``.

        Returns
        -------
        pandas.DataFrame
            The columns of :data:`~replikit.compare._result.FRAME_COLUMNS`, then
            ``n_resamples``, ``pvalue_mcse``, ``confidence_level``.
        """
        level = self.confidence_level if confidence_level is None else confidence_level
        ci = self.confidence_interval(level)
        row = {
            "test": self.test, "method": self.method, "a": self.a, "b": self.b,
            "metric": self.metric, "estimate": self.estimate, "se": self.se,
            "statistic": self.statistic, "df": self.df, "df2": self.df2,
            "pvalue": self.pvalue, "ci_low": ci.low, "ci_high": ci.high, "valid": self.valid,
            "requires": self.requires, "n": self.n, "alternative": self.alternative,
            "n_resamples": self.n_resamples, "pvalue_mcse": self.pvalue_mcse,
            "confidence_level": level,
        }
        columns = [*FRAME_COLUMNS, "n_resamples", "pvalue_mcse", "confidence_level"]
        return pd.DataFrame([row], columns=columns).astype({"df": float, "df2": float})

    def __str__(self) -> str:
        pair = f"{self.a} - {self.b}" if (self.a or self.b) else "a - b"
        metric = f" ({self.metric})" if self.metric else ""
        se = "" if not np.isfinite(self.se) else f" (bootstrap SE {number(self.se, 4)})"
        lines = [self.title,
                 f"  {pair}{metric}: difference = {number(self.estimate, 4)}{se}, "
                 f"n = {number(self.n)} test rows"]
        if self._replicates is not None:
            ci = self.confidence_interval()
            lines.append(f"  {number(self.confidence_level * 100, 4)}% percentile CI "
                         f"{_interval_text(ci.low, ci.high, 4)}")
        lines.append(f"  p = {_pvalue_text(self.pvalue, table=True)} ({self.alternative}), "
                     f"Monte Carlo SE of p {number(self.pvalue_mcse, 2)}, "
                     f"{number(self.n_resamples)} resamples")
        lines.append(f"  requires: {self.requires}")
        note = self.extra.get("note") if isinstance(self.extra, dict) else None
        if note:
            lines.append(f"  note: {note}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# metrics as sums of per-row statistics
#
# ``stats(y, pred)`` -> (n, k) per-row statistics; ``finish(sums, n)`` -> the metric of rows
# whose statistics add up to ``sums`` (shape (..., k)), ``n`` rows (scalar or (...)).


def _safe_div(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def _finish_mean(s, n):
    return s[..., 0] / n


def _finish_rmse(s, n):
    return np.sqrt(s[..., 0] / n)


def _finish_r2(s, n):
    sst = s[..., 2] - s[..., 1] ** 2 / n
    ok = sst > 1e-12 * np.maximum(s[..., 2], 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, 1.0 - s[..., 0] / np.where(ok, sst, 1.0), np.nan)


def _finish_r2_corr(s, n):
    sy, sp, syy, spp, syp = (s[..., j] for j in range(5))
    vy, vp, cov = syy - sy**2 / n, spp - sp**2 / n, syp - sy * sp / n
    ok = (vy > 1e-12 * np.maximum(syy, 1e-300)) & (vp > 1e-12 * np.maximum(spp, 1e-300))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, cov**2 / np.where(ok, vy * vp, 1.0), np.nan)


def _finish_precision(s, n):
    return _safe_div(s[..., 0], s[..., 1])


def _finish_recall(s, n):
    return _safe_div(s[..., 0], s[..., 2])


def _finish_f1(s, n):
    return _safe_div(2.0 * s[..., 0], s[..., 1] + s[..., 2])


def _finish_mcc(s, n):
    tp, pp, ap = s[..., 0], s[..., 1], s[..., 2]
    fp, fn = pp - tp, ap - tp
    tn = n - tp - fp - fn
    den = pp * ap * (n - pp) * (n - ap)
    with np.errstate(invalid="ignore"):
        return _safe_div(tp * tn - fp * fn, np.sqrt(np.maximum(den, 0.0)))


def _finish_balanced(s, n):
    k = s.shape[-1] // 2
    hits, counts = s[..., :k], s[..., k:]
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(counts > 0, hits / np.where(counts > 0, counts, 1.0), np.nan)
        return np.nanmean(recall, axis=-1)


def _label_stats(kind):
    def stats(y, p, ctx):
        if kind == "accuracy":
            return (y == p)[:, None].astype(float)
        if kind == "error_rate":
            return (y != p)[:, None].astype(float)
        if kind == "balanced_accuracy":
            cls = ctx["classes"]
            return np.column_stack([(y == c) & (p == c) for c in cls]
                                   + [y == c for c in cls]).astype(float)
        pos = ctx["pos_label"]
        return np.column_stack([(y == pos) & (p == pos), p == pos, y == pos]).astype(float)
    return stats


def _numeric_stats(kind):
    def stats(y, p, ctx):
        e = y - p
        if kind == "mse" or kind == "rmse":
            return (e**2)[:, None]
        if kind == "mae":
            return np.abs(e)[:, None]
        if kind == "r2":
            return np.column_stack([e**2, y, y**2])
        return np.column_stack([y, p, y**2, p**2, y * p])  # r2_corr
    return stats


def _log_loss_stats(y, p, ctx):
    proba = np.clip(p, 1e-15, 1.0)
    proba = proba / proba.sum(axis=1, keepdims=True)
    col = np.searchsorted(ctx["classes"], y)
    return (-np.log(proba[np.arange(y.size), col]))[:, None]


@dataclass(frozen=True)
class _Scoring:
    name: str
    family: str  # 'labels', 'numeric', 'proba', 'binary', 'rank', 'callable'
    stats: Callable | None = None
    finish: Callable | None = None
    func: Callable | None = None


_SCORINGS: dict[str, _Scoring] = {
    "accuracy": _Scoring("accuracy", "labels", _label_stats("accuracy"), _finish_mean),
    "error_rate": _Scoring("error_rate", "labels", _label_stats("error_rate"), _finish_mean),
    "balanced_accuracy": _Scoring("balanced_accuracy", "labels",
                                  _label_stats("balanced_accuracy"), _finish_balanced),
    "f1": _Scoring("f1", "binary", _label_stats("binary"), _finish_f1),
    "precision": _Scoring("precision", "binary", _label_stats("binary"), _finish_precision),
    "recall": _Scoring("recall", "binary", _label_stats("binary"), _finish_recall),
    "matthews_corrcoef": _Scoring("matthews_corrcoef", "binary", _label_stats("binary"),
                                  _finish_mcc),
    "mse": _Scoring("mse", "numeric", _numeric_stats("mse"), _finish_mean),
    "rmse": _Scoring("rmse", "numeric", _numeric_stats("rmse"), _finish_rmse),
    "mae": _Scoring("mae", "numeric", _numeric_stats("mae"), _finish_mean),
    "r2": _Scoring("r2", "numeric", _numeric_stats("r2"), _finish_r2),
    "r2_corr": _Scoring("r2_corr", "numeric", _numeric_stats("r2_corr"), _finish_r2_corr),
    "log_loss": _Scoring("log_loss", "proba", _log_loss_stats, _finish_mean),
    "roc_auc": _Scoring("roc_auc", "rank"),
}
#: The metric names ``scoring`` accepts: replikit's built-in metrics
#: (:data:`replikit.experiment.metrics.METRICS`) and the scikit-learn scorer names ``'f1'``,
#: ``'precision'``, ``'recall'`` and ``'matthews_corrcoef'`` (binary, positive class the
#: second label in sorted order: 1 of 0/1).
SCORINGS = tuple(_SCORINGS)
_SKLEARN = {"f1": "f1_score", "precision": "precision_score", "recall": "recall_score",
            "matthews_corrcoef": "matthews_corrcoef"}


# ---------------------------------------------------------------------------------------------
# input validation


@dataclass(frozen=True)
class _Inputs:
    y: np.ndarray
    pred_a: np.ndarray
    pred_b: np.ndarray
    scoring: _Scoring
    ctx: dict
    a: str
    b: str
    n_resamples: int
    alternative: str


def _scoring_iv(scoring) -> _Scoring:
    if callable(scoring) and not isinstance(scoring, str):
        name = getattr(scoring, "__name__", None) or type(scoring).__name__
        return _Scoring(str(name), "callable", func=scoring)
    if not isinstance(scoring, str):
        raise ParameterTypeError(f"`scoring` must be a metric name or a callable "
                                 f"metric(y_true, y_pred) -> float; got "
                                 f"{type(scoring).__name__} {scoring!r}.")
    if scoring not in _SCORINGS:
        raise ParameterError(f"`scoring` must be one of {', '.join(SCORINGS)} or a callable "
                             f"metric(y_true, y_pred) -> float; got {scoring!r}.")
    return _SCORINGS[scoring]


def _numeric(values, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"`{name}` must be numeric for this metric; got values such as "
                        f"{np.asarray(values).ravel()[:3].tolist()}.") from None
    if not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr.reshape(arr.shape[0], -1)).all(axis=1))
        raise DataError(f"`{name}` has {bad.size} missing or infinite value(s) at rows "
                        f"{bad[:5].tolist()}.")
    return arr


def _scores_iv(values, name: str, n_classes: int) -> np.ndarray:
    """Predicted probabilities: (n,) of the positive class (binary) or (n, n_classes)."""
    arr = _numeric(values, name)
    if arr.ndim == 2 and arr.shape[1] == 2 and n_classes == 2:
        return arr
    if arr.ndim == 2 and arr.shape[1] != n_classes:
        raise DataError(f"`{name}` must hold one column of probabilities per class of "
                        f"`y_true` ({n_classes}); got shape {arr.shape}.")
    if arr.ndim == 1 and n_classes != 2:
        raise DataError(f"`{name}`: one column of scores needs a binary `y_true`; it has "
                        f"{n_classes} classes (give an (n, {n_classes}) probability matrix).")
    if arr.ndim > 2:
        raise DataError(f"`{name}` must be 1- or 2-dimensional; got shape {arr.shape}.")
    return arr


def _testset_iv(y_true, pred_a, pred_b, scoring, n_resamples, alternative, labels) -> _Inputs:
    alternative = check_alternative(alternative)
    n_resamples = check_int(n_resamples, "n_resamples", min_value=MIN_RESAMPLES)
    spec = _scoring_iv(scoring)
    a, b = _names(labels, 2, ("a", "b"))
    y = _labels_1d(y_true, "y_true")
    raw = {"pred_a": pred_a, "pred_b": pred_b}
    sizes = {"y_true": y.size} | {k: len(np.asarray(v)) for k, v in raw.items()}
    if len(set(sizes.values())) > 1:
        desc = ", ".join(f"`{k}` has {v}" for k, v in sizes.items())
        raise DataError(f"`y_true`, `pred_a` and `pred_b` must have the same length (one "
                        f"prediction of each model per test row): {desc}.")
    if y.size < 2:
        raise DataError(f"`y_true`: resampling needs at least 2 test rows; got {y.size}.")
    ctx: dict = {}
    if spec.family in ("labels", "binary"):
        pa, pb = _labels_1d(pred_a, "pred_a"), _labels_1d(pred_b, "pred_b")
        if spec.family == "binary":
            classes = np.unique(np.concatenate([y, pa, pb]))
            if classes.size > 2:
                raise ParameterError(
                    f"`scoring`: {spec.name!r} is defined here for two classes; `y_true` and "
                    f"the predictions hold {classes.size} labels "
                    f"({', '.join(map(str, classes[:5].tolist()))}). Use 'balanced_accuracy' "
                    "or pass a callable metric(y_true, y_pred).")
            ctx["pos_label"] = classes[-1]
        else:
            ctx["classes"] = np.unique(y)
    elif spec.family == "numeric":
        y = _numeric(y, "y_true")
        pa, pb = _numeric(pred_a, "pred_a"), _numeric(pred_b, "pred_b")
        for name, arr in (("pred_a", pa), ("pred_b", pb)):
            if arr.ndim != 1:
                raise DataError(f"`{name}` must be one-dimensional for {spec.name!r}; got "
                                f"shape {arr.shape}.")
    elif spec.family in ("proba", "rank"):
        classes = np.unique(y)
        if spec.family == "rank" and classes.size != 2:
            raise DataError(f"`y_true`: 'roc_auc' needs exactly two classes; found "
                            f"{classes.size} ({', '.join(map(str, classes[:5].tolist()))}).")
        pa = _scores_iv(pred_a, "pred_a", classes.size)
        pb = _scores_iv(pred_b, "pred_b", classes.size)
        if spec.family == "proba":
            for name, arr in (("pred_a", pa), ("pred_b", pb)):
                if (arr < 0).any() or (arr > 1).any():
                    raise DataError(f"`{name}` must hold probabilities in [0, 1] for "
                                    f"'log_loss'; found values in [{arr.min():g}, "
                                    f"{arr.max():g}].")
            if pa.ndim == 1:
                pa, pb = np.column_stack([1 - pa, pa]), np.column_stack([1 - pb, pb])
        elif pa.ndim == 2:
            pa, pb = pa[:, 1], pb[:, 1]
        if pa.ndim != pb.ndim:
            raise DataError(f"`pred_a` and `pred_b` must have the same shape; got "
                            f"{pa.shape} and {pb.shape}.")
        ctx["classes"] = classes
        ctx["pos_label"] = classes[-1]
    else:  # a callable: whatever the user's metric takes
        pa, pb = np.asarray(pred_a), np.asarray(pred_b)
        if pa.shape != pb.shape:
            raise DataError(f"`pred_a` and `pred_b` must have the same shape; got {pa.shape} "
                            f"and {pb.shape}.")
    return _Inputs(y, pa, pb, spec, ctx, a, b, n_resamples, alternative)


# ---------------------------------------------------------------------------------------------
# kernels: the metric of many resamples at once


def _auc_rows(scores: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """ROC AUC of each row (Mann–Whitney form, mid-ranks for ties); NaN for one class."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=-1)
    n1 = pos.sum(axis=-1).astype(float)
    n0 = pos.shape[-1] - n1
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = ((ranks * pos).sum(axis=-1) - n1 * (n1 + 1) / 2) / (n1 * n0)
    return np.where((n1 > 0) & (n0 > 0), auc, np.nan)


def _call(fn, y, p) -> float:
    try:
        value = float(fn(y, p))
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"`scoring`: the callable must return a number from "
                             f"metric(y_true, y_pred); it raised {type(exc).__name__}: "
                             f"{exc}") from None
    return value


def _observed(inp: _Inputs) -> tuple[float, float]:
    s, y = inp.scoring, inp.y
    if s.family == "callable":
        return _call(s.func, y, inp.pred_a), _call(s.func, y, inp.pred_b)
    if s.family == "rank":
        pos = (y == inp.ctx["pos_label"])[None, :]
        return (float(_auc_rows(inp.pred_a[None, :], pos)[0]),
                float(_auc_rows(inp.pred_b[None, :], pos)[0]))
    ua, ub = s.stats(y, inp.pred_a, inp.ctx), s.stats(y, inp.pred_b, inp.ctx)
    return float(s.finish(ua.sum(axis=0), y.size)), float(s.finish(ub.sum(axis=0), y.size))


def _chunks(total: int, n: int):
    rows = max(1, _CHUNK // max(n, 1))
    for start in range(0, total, rows):
        yield min(rows, total - start)


def _bootstrap_differences(inp: _Inputs, rng: np.random.Generator) -> np.ndarray:
    """``m(a) - m(b)`` on ``n_resamples`` bootstrap resamples of the test rows."""
    s, y, n = inp.scoring, inp.y, inp.y.size
    out = []
    if s.family not in ("rank", "callable"):
        u = np.hstack([s.stats(y, inp.pred_a, inp.ctx), s.stats(y, inp.pred_b, inp.ctx)])
        k = u.shape[1] // 2
    for rows in _chunks(inp.n_resamples, n):
        idx = rng.integers(0, n, size=(rows, n))
        if s.family == "rank":
            pos = y[idx] == inp.ctx["pos_label"]
            out.append(_auc_rows(inp.pred_a[idx], pos) - _auc_rows(inp.pred_b[idx], pos))
        elif s.family == "callable":
            out.append(np.array([_call(s.func, y[i], inp.pred_a[i])
                                 - _call(s.func, y[i], inp.pred_b[i]) for i in idx]))
        else:
            counts = np.bincount((idx + n * np.arange(rows)[:, None]).ravel(),
                                 minlength=rows * n).reshape(rows, n)
            sums = counts @ u
            out.append(s.finish(sums[:, :k], n) - s.finish(sums[:, k:], n))
    return np.concatenate(out)


def _swap(pa: np.ndarray, pb: np.ndarray, z: np.ndarray) -> np.ndarray:
    mask = z.reshape(z.shape + (1,) * (pa.ndim - 1)).astype(bool)
    return np.where(mask, pb, pa)


def _randomization_differences(inp: _Inputs, rng: np.random.Generator) -> np.ndarray:
    """``m(a*) - m(b*)`` after swapping each row's two predictions with probability 1/2."""
    s, y, n = inp.scoring, inp.y, inp.y.size
    out = []
    if s.family not in ("rank", "callable"):
        ua, ub = s.stats(y, inp.pred_a, inp.ctx), s.stats(y, inp.pred_b, inp.ctx)
        ta, tb, diff = ua.sum(axis=0), ub.sum(axis=0), ub - ua
    for rows in _chunks(inp.n_resamples, n):
        z = rng.integers(0, 2, size=(rows, n))
        if s.family == "rank":
            pos = (y == inp.ctx["pos_label"])[None, :]
            swapped = z.astype(bool)
            sa = np.where(swapped, inp.pred_b, inp.pred_a)
            sb = np.where(swapped, inp.pred_a, inp.pred_b)
            out.append(_auc_rows(sa, pos) - _auc_rows(sb, pos))
        elif s.family == "callable":
            out.append(np.array([
                _call(s.func, y, _swap(inp.pred_a, inp.pred_b, zi))
                - _call(s.func, y, _swap(inp.pred_b, inp.pred_a, zi)) for zi in z]))
        else:
            moved = z.astype(float) @ diff
            out.append(s.finish(ta + moved, n) - s.finish(tb - moved, n))
    return np.concatenate(out)


def _count(values: np.ndarray, observed: float, alternative: str, gamma: float) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(values >= observed - gamma))
    if alternative == "less":
        return int(np.count_nonzero(values <= observed + gamma))
    return int(np.count_nonzero(np.abs(values) >= abs(observed) - gamma))


def _finite(values: np.ndarray, extra: dict) -> np.ndarray:
    ok = np.isfinite(values)
    if not ok.all():
        extra["n_undefined"] = int((~ok).sum())
        extra["note"] = (f"the metric is undefined on {int((~ok).sum())} resample(s) (e.g. a "
                         "resample with one class); they are left out of the p-value")
    return values[ok]


def _pvalue(values, observed, alternative) -> tuple[float, int, float]:
    r = int(values.size)
    if r == 0:
        return math.nan, 0, math.nan
    scale = float(np.max(np.abs(values))) if r else 0.0
    gamma = 1e-10 * max(abs(observed), scale, 1e-300)
    p = (1 + _count(values, observed, alternative, gamma)) / (1 + r)
    return float(min(1.0, p)), r, math.sqrt(p * (1.0 - p) / r)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _check_observed(ma: float, mb: float, name: str) -> None:
    if not (np.isfinite(ma) and np.isfinite(mb)):
        raise DataError(f"`scoring`: {name!r} is undefined on this test set (model a: {ma}, "
                        f"model b: {mb}); e.g. ROC AUC or R² with a constant outcome.")


_DOC = {
    "common": """y_true : array-like of shape (n_rows,)
        True outcomes of the test rows (class labels or numbers).
    pred_a, pred_b : array-like of shape (n_rows,) or (n_rows, n_classes)
        The two models' predictions of the same rows, in the same order: labels for
        ``'accuracy'``, ``'error_rate'``, ``'balanced_accuracy'``, ``'f1'``, ``'precision'``,
        ``'recall'``, ``'matthews_corrcoef'``; numbers for ``'mse'``, ``'rmse'``, ``'mae'``,
        ``'r2'``, ``'r2_corr'``; scores or probabilities of the positive class (or an
        ``(n, 2)`` matrix) for ``'roc_auc'``; probabilities (of the positive class, or one
        column per class of ``y_true`` in sorted order) for ``'log_loss'``; whatever the
        callable takes otherwise.
    scoring : str or callable, default 'accuracy'
        A metric name (:data:`SCORINGS`: replikit's built-in metrics and the scikit-learn
        names ``'f1'``, ``'precision'``, ``'recall'``, ``'matthews_corrcoef'`` — binary, the
        positive class being the second label in sorted order, 1 of 0/1) or a callable
        ``metric(y_true, y_pred) -> float`` (any metric, evaluated once per resample).
    n_resamples : int, default 10000
        Number of resamples, at least :data:`MIN_RESAMPLES` (100).""",
    "labels": """labels : (str, str), optional
        Names of the two models (default ``('a', 'b')``).
    random_state : None, int or numpy.random.Generator
        Seed of the resampling.""",
}


# ---------------------------------------------------------------------------------------------
# the tests


@fill_doc(_DOC)
def paired_bootstrap_test(y_true, pred_a, pred_b, *, scoring="accuracy",
                          n_resamples: int = 10_000, alternative: str = "two-sided",
                          confidence_level: float = 0.95, labels: Sequence[str] | None = None,
                          random_state=None) -> TestSetResult:
    """Paired bootstrap test and interval of ``metric(a) - metric(b)`` on one test set.

    Draw ``R = n_resamples`` resamples of the ``n`` test rows with replacement, each row
    carrying its true value and both models' predictions, and compute
    ``delta*_r = m(a; x*_r) - m(b; x*_r)``. With ``delta`` the observed difference:

    * interval: the percentile interval, the ``(1 - level)/2`` and ``(1 + level)/2``
      quantiles of ``delta*`` (Efron & Tibshirani 1993, ch. 13);
    * p-value: the bootstrap distribution is centred on ``delta``, not on the null's 0, so it
      is shifted by ``-delta`` (Efron & Tibshirani 1993, sec. 16.4; Berg-Kirkpatrick et al.
      2012, sec. 2.2, who count resamples with ``delta* > 2 delta``):

      ``p = (1 + #{|delta*_r - delta| >= |delta|}) / (1 + R)`` (two-sided),
      ``(1 + #{delta*_r - delta >= delta}) / (1 + R)`` for ``'greater'`` and
      ``(1 + #{delta*_r - delta <= delta}) / (1 + R)`` for ``'less'``.

    Why the shifted p-value: the resamples are drawn from the observed test set, where the
    difference is ``delta``, not 0, so the bootstrap distribution must be moved to the null
    before the observed difference is compared with it (Berg-Kirkpatrick et al. 2012 count
    ``delta* > 2 delta``, the same event). The ``+1`` keeps the p-value above 0 (Phipson &
    Smyth 2010). The percentile interval and the shifted p-value can disagree near the
    boundary (an interval just covering 0 with p just below alpha) when the bootstrap
    distribution is skewed or discrete.

    Parameters
    ----------
    {common}
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For ``metric(a) - metric(b)`` against 0: ``'greater'`` tests whether ``a`` scores
        higher (for a loss: is worse).
    confidence_level : float, default 0.95
        Level of the interval (one-sided for a one-sided ``alternative``).
    {labels}

    Returns
    -------
    TestSetResult
        ``statistic`` = ``estimate`` = the observed difference ``a - b``; ``se`` the
        bootstrap SE (SD of ``delta*``); ``n_resamples``; ``pvalue_mcse`` =
        ``sqrt(p (1 - p) / R)``; ``confidence_interval()`` the percentile interval at any
        level; ``extra`` the two models' metrics.

    Raises
    ------
    ParameterError
        An unknown ``scoring``, a binary metric on more than two labels, ``n_resamples`` below
        the minimum.
    DataError
        Lengths differ, missing values, non-numeric values for a numeric metric, a metric
        undefined on the test set.

    See Also
    --------
    randomization_test : The test under exchangeability, valid in finite samples.
    replikit.compare.mcnemar_test : Accuracy from the 2 x 2 table.

    Notes
    -----
    In replikit's simulation (docs/compare.md; two exchangeable classifiers, n = 200 rows,
    999 resamples, 2,000 data sets) the shifted bootstrap test rejected a true null at
    alpha = 0.05 in 4.9% (accuracy) and 5.2% (F1) of data sets, and the 95% percentile
    interval covered the true difference 94.3% of the time; the randomization test is the
    one with a finite-sample guarantee. Both see one test set: they
    compare two fitted models, not learning algorithms (Gardner & Brooks 2017, sec. 6).

    References
    ----------
    {refs:bergkirkpatrick2012,efron1993,dror2018,phipson2010}

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 300)
    >>> a = np.where(rng.random(300) < 0.85, y, 1 - y)   # about 85% right
    >>> b = np.where(rng.random(300) < 0.75, y, 1 - y)   # about 75% right
    >>> r = paired_bootstrap_test(y, a, b, scoring="f1", n_resamples=999, random_state=1)
    >>> r.pvalue < 0.05, r.confidence_interval().low > 0
    (True, True)
    """
    level = check_confidence_level(confidence_level)
    inp = _testset_iv(y_true, pred_a, pred_b, scoring, n_resamples, alternative, labels)
    ma, mb = _observed(inp)
    _check_observed(ma, mb, inp.scoring.name)
    delta = ma - mb
    extra: dict = {"metric_a": ma, "metric_b": mb}
    if "pos_label" in inp.ctx and inp.scoring.family == "binary":
        extra["pos_label"] = _plain(inp.ctx["pos_label"])
    reps = _finite(_bootstrap_differences(inp, check_random_state(random_state)), extra)
    p, r, mcse = _pvalue(reps - delta, delta, inp.alternative)
    se = float(reps.std(ddof=1)) if reps.size > 1 else math.nan
    return TestSetResult(
        statistic=float(delta), pvalue=p, df=None, estimate=float(delta), se=se,
        alternative=inp.alternative,
        method="Paired bootstrap test (Berg-Kirkpatrick et al. 2012), shifted p-value",
        extra=extra, test="paired_bootstrap", valid=True, requires=_REQUIRES,
        n=int(inp.y.size), a=inp.a, b=inp.b, metric=inp.scoring.name, n_resamples=r,
        pvalue_mcse=mcse, confidence_level=level, _replicates=reps)


@fill_doc(_DOC)
def randomization_test(y_true, pred_a, pred_b, *, scoring="accuracy",
                       n_resamples: int = 10_000, alternative: str = "two-sided",
                       labels: Sequence[str] | None = None,
                       random_state=None) -> TestSetResult:
    """Approximate randomization test of ``metric(a) = metric(b)`` on one test set.

    Under the null hypothesis the two models' outputs are exchangeable on every row. Each of
    ``R = n_resamples`` randomizations swaps the predictions of ``a`` and ``b`` on each row
    independently with probability 1/2 and recomputes ``d*_r = m(a*) - m(b*)``; with ``d``
    the observed difference (Noreen 1989, ch. 2; Dror et al. 2018, sec. 3):

    ``p = (1 + #{|d*_r| >= |d|}) / (1 + R)`` (two-sided),
    ``(1 + #{d*_r >= d}) / (1 + R)`` for ``'greater'``, ``(1 + #{d*_r <= d}) / (1 + R)``
    for ``'less'``.

    Counting the observed arrangement (the ``+1``s) makes the test exact at every ``R``: its
    size never exceeds alpha (Phipson & Smyth 2010). For a metric that is a mean of per-row
    values (accuracy, squared error) it is the Monte Carlo version of the paired sign-flip
    permutation test of the per-row differences. Ties with ``d`` count as extreme (relative
    tolerance 1e-10), which matters for discrete metrics such as accuracy.

    Parameters
    ----------
    {common}
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For ``metric(a) - metric(b)`` against 0: ``'greater'`` tests whether ``a`` scores
        higher (for a loss: is worse).
    {labels}

    Returns
    -------
    TestSetResult
        ``statistic`` = ``estimate`` = the observed difference ``a - b``; ``se`` and the
        interval NaN (the resamples are drawn under the null: use
        :func:`paired_bootstrap_test` for an interval); ``n_resamples``; ``pvalue_mcse``.

    Raises
    ------
    ParameterError
        An unknown ``scoring``, a binary metric on more than two labels, ``n_resamples`` below
        the minimum.
    DataError
        Lengths differ, missing values, non-numeric values for a numeric metric, a metric
        undefined on the test set.

    See Also
    --------
    paired_bootstrap_test : The bootstrap test, with an interval of the difference.
    replikit.compare.permutation_test : The exact sign-flip test of a mean difference.

    References
    ----------
    {refs:noreen1989,dror2018,bergkirkpatrick2012,phipson2010}

    Examples
    --------
    >>> y = [0, 1] * 50
    >>> r = randomization_test(y, y, [0, 0] * 50, scoring="matthews_corrcoef",
    ...                        n_resamples=999, random_state=0)
    >>> round(r.statistic, 3), r.pvalue
    (1.0, 0.001)
    """
    inp = _testset_iv(y_true, pred_a, pred_b, scoring, n_resamples, alternative, labels)
    ma, mb = _observed(inp)
    _check_observed(ma, mb, inp.scoring.name)
    d = ma - mb
    extra: dict = {"metric_a": ma, "metric_b": mb}
    if inp.scoring.family == "binary":
        extra["pos_label"] = _plain(inp.ctx["pos_label"])
    null = _finite(_randomization_differences(inp, check_random_state(random_state)), extra)
    p, r, mcse = _pvalue(null, d, inp.alternative)
    return TestSetResult(
        statistic=float(d), pvalue=p, df=None, estimate=float(d), se=math.nan,
        alternative=inp.alternative,
        method="Approximate randomization test (Noreen 1989)", extra=extra,
        test="randomization", valid=True, requires=_REQUIRES, n=int(inp.y.size), a=inp.a,
        b=inp.b, metric=inp.scoring.name, n_resamples=r, pvalue_mcse=mcse,
        confidence_level=0.95, _replicates=None)


# ---------------------------------------------------------------------------------------------
# from a Predictions table


def _from_predictions(predictions, models, study, repeat, scoring):
    from .predictions import _aligned_predictions

    if isinstance(models, str) or models is None or len(models) != 2:
        raise ParameterError(f"`models` must name exactly two models (a, b); got {models!r}.")
    if isinstance(scoring, str) and scoring in ("roc_auc", "log_loss"):
        raise ParameterError(f"`scoring`: {scoring!r} needs predicted scores; from a "
                             "Predictions table the tests use the `y_pred` column (labels or "
                             "numbers). Pass the scores to paired_bootstrap_test / "
                             "randomization_test directly.")
    return _aligned_predictions(predictions, models, study=study, repeat=repeat, min_models=2)


@fill_doc(_DOC)
def paired_bootstrap_test_from_predictions(predictions, models: Sequence, *, study=None,
                                           repeat: int = 0, scoring="accuracy",
                                           n_resamples: int = 10_000,
                                           alternative: str = "two-sided",
                                           confidence_level: float = 0.95,
                                           random_state=None) -> TestSetResult:
    """Paired bootstrap test of two models from a Predictions table (one study, one repeat).

    The rows of ``repeat`` are paired by ``(fold, row)`` as in
    :func:`~replikit.compare.mcnemar_test_from_predictions`, and
    :func:`paired_bootstrap_test` is applied to their ``y_true`` and ``y_pred``.

    Parameters
    ----------
    predictions : Predictions, pandas.DataFrame or RunResult
        Predictions in the Predictions layout (``study, model, repeat, fold, row, y_true,
        y_pred``).
    models : (str, str)
        The two models ``a`` and ``b``.
    study : str, optional
        Required when the table holds several studies.
    repeat : int, default 0
        Which repeat of the resampling scheme.
    scoring : str or callable, default 'accuracy'
        As in :func:`paired_bootstrap_test`, on ``y_pred`` (not ``'roc_auc'``/``'log_loss'``).
    n_resamples : int, default 10000
        Number of resamples (>= 100).
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For ``metric(a) - metric(b)`` against 0.
    confidence_level : float, default 0.95
        Level of the percentile interval.
    random_state : None, int or numpy.random.Generator
        Seed of the resampling.

    Returns
    -------
    TestSetResult
        As :func:`paired_bootstrap_test`.

    See Also
    --------
    paired_bootstrap_test : The test from arrays.
    randomization_test_from_predictions : The randomization test from the same table.

    Notes
    -----
    Pooling the folds of a cross-validation gives each row one out-of-sample prediction, but
    from models trained on overlapping data: the test then ignores the training-set variance
    (Dietterich 1998; Gardner & Brooks 2017, section 6). It is exact in its own terms for one
    hold-out test set.

    References
    ----------
    {refs:bergkirkpatrick2012,efron1993}

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": ["a"] * 8 + ["b"] * 8, "repeat": 0,
    ...                   "fold": 0, "row": list(range(8)) * 2, "y_true": [0, 1] * 8,
    ...                   "y_pred": [0, 1] * 4 + [1, 1] * 4})
    >>> r = paired_bootstrap_test_from_predictions(f, ["a", "b"], n_resamples=200,
    ...                                            random_state=0)
    >>> r.statistic, r.a, r.b
    (0.5, 'a', 'b')
    """
    y, preds, names = _from_predictions(predictions, models, study, repeat, scoring)
    return paired_bootstrap_test(y, preds[0], preds[1], scoring=scoring,
                                 n_resamples=n_resamples, alternative=alternative,
                                 confidence_level=confidence_level, labels=names,
                                 random_state=random_state)


@fill_doc(_DOC)
def randomization_test_from_predictions(predictions, models: Sequence, *, study=None,
                                        repeat: int = 0, scoring="accuracy",
                                        n_resamples: int = 10_000,
                                        alternative: str = "two-sided",
                                        random_state=None) -> TestSetResult:
    """Approximate randomization test of two models from a Predictions table.

    The rows of ``repeat`` are paired by ``(fold, row)`` as in
    :func:`~replikit.compare.mcnemar_test_from_predictions`, and :func:`randomization_test`
    is applied to their ``y_true`` and ``y_pred``.

    Parameters
    ----------
    predictions : Predictions, pandas.DataFrame or RunResult
        Predictions in the Predictions layout.
    models : (str, str)
        The two models ``a`` and ``b``.
    study : str, optional
        Required when the table holds several studies.
    repeat : int, default 0
        Which repeat of the resampling scheme.
    scoring : str or callable, default 'accuracy'
        As in :func:`randomization_test`, on ``y_pred`` (not ``'roc_auc'``/``'log_loss'``).
    n_resamples : int, default 10000
        Number of randomizations (>= 100).
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For ``metric(a) - metric(b)`` against 0.
    random_state : None, int or numpy.random.Generator
        Seed of the randomizations.

    Returns
    -------
    TestSetResult
        As :func:`randomization_test`.

    See Also
    --------
    randomization_test : The test from arrays.
    paired_bootstrap_test_from_predictions : The bootstrap test from the same table.

    References
    ----------
    {refs:noreen1989,dror2018}

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": ["a"] * 8 + ["b"] * 8, "repeat": 0,
    ...                   "fold": 0, "row": list(range(8)) * 2, "y_true": [0, 1] * 8,
    ...                   "y_pred": [0, 1] * 4 + [1, 1] * 4})
    >>> randomization_test_from_predictions(f, ["a", "b"], n_resamples=200,
    ...                                     random_state=0).n
    8
    """
    y, preds, names = _from_predictions(predictions, models, study, repeat, scoring)
    return randomization_test(y, preds[0], preds[1], scoring=scoring, n_resamples=n_resamples,
                              alternative=alternative, labels=names, random_state=random_state)
