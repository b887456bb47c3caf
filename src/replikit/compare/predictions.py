"""Tests on hold-out predictions: McNemar for two classifiers, Cochran's Q and Looney's F for m.

When two (or m) classifiers predict the same test rows, each row is a paired (blocked)
observation: was each model right or wrong? These tests compare accuracies through those paired
outcomes.

* :func:`mcnemar_test` — McNemar (1947) on the discordant counts ``b`` (a right, b wrong) and
  ``c`` (a wrong, b right): Edwards' continuity-corrected chi-square (default), the uncorrected
  chi-square, or the exact binomial test; ``b + c = 0`` (the models never disagree) gives
  statistic 0 and p-value 1.
* :func:`cochrans_q_test` — Cochran's (1950) Q for m classifiers (Q reduces to the uncorrected
  McNemar chi-square when m = 2);
* :func:`looney_ftest` — Looney's (1988) F for m classifiers, an ANOVA on the 0/1 correctness
  table.

Gardner & Brooks (2017, section 6) note that McNemar's test, like the difference of
proportions, sees only one test set and so cannot account for the variance due to the choice of
training set (Dietterich 1998): it compares two *fitted* classifiers on one sample of rows, not
two learning algorithms. Use the corrected resampled tests of :mod:`replikit.compare.resampled`
to compare algorithms; use these to compare fitted models on an independent test set.

The 2 x 2 table follows mlxtend's layout: ``[[both right, a right & b wrong], [a wrong & b
right, both wrong]]``, so ``b = table[0, 1]`` and ``c = table[1, 0]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._format import number
from .._format import pvalue as _pvalue_text
from .._validation import check_alternative, check_choice, check_confidence_level, check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval, get_pvalue, wald_interval
from ._result import ComparisonResult
from ._words import fill_doc

__all__ = [
    "PredictionTestResult",
    "mcnemar_table",
    "mcnemar_test",
    "mcnemar_test_from_table",
    "mcnemar_test_from_predictions",
    "cochrans_q_test",
    "cochrans_q_test_from_predictions",
    "looney_ftest",
    "looney_ftest_from_predictions",
]

CORRECTIONS = ("edwards", "none", "exact")
_REQUIRES = "hold-out predictions"


@fill_doc()
@dataclass(frozen=True, slots=True)
class PredictionTestResult(ComparisonResult):
    """A test of equal accuracy of classifiers on the same hold-out predictions.

    A :class:`~replikit.compare.ComparisonResult` whose ``estimate`` is the difference in
    accuracy ``acc_a - acc_b`` over the ``n`` test rows and ``se`` its standard error for
    paired proportions, ``sqrt((b + c) - (b - c)^2 / n) / n``. The chi-square/F reference
    distribution of the test says nothing about an interval for the difference, so
    :meth:`confidence_interval` is the Wald interval ``estimate ± z se`` (NaN when ``se`` is
    NaN, as for Cochran's Q and Looney's F with more than two models).

    Attributes
    ----------
    statistic, pvalue, df, alternative : float, float, float or None, str
        The test statistic, its p-value under ``alternative``, the degrees of freedom of its
        reference distribution (None for a normal one).
    estimate, se : float
        Accuracy of ``a`` minus accuracy of ``b``, and its paired standard error (NaN for more
        than two models).
    method : str
        The test's name in words.
    extra : dict
        The 2 x 2 table and the discordant counts (McNemar), the accuracy of each model
        (Cochran, Looney), notes.
    test : str
        Short identifier (``'mcnemar_edwards'``, ``'mcnemar'``, ``'mcnemar_exact'``,
        ``'cochran_q'``, ``'looney_f'``).
    valid : bool
        True: the tests are valid for fitted models on one test set.
    requires : str
        ``'hold-out predictions'``.
    df2 : float or None
        Denominator degrees of freedom of Looney's F.
    n : int
        Number of test rows.
    a, b, metric : str
        The models (``b`` empty and ``a`` every name for more than two) and ``'accuracy'``.

    See Also
    --------
    mcnemar_test : McNemar's test of two classifiers.
    cochrans_q_test : Cochran's Q of several classifiers.
    looney_ftest : Looney's F of several classifiers.

    References
    ----------
    {refs:mcnemar1947,cochran1950,looney1988}

    Examples
    --------
    >>> r = mcnemar_test_from_table([[101, 121], [59, 33]])
    >>> r.test, round(r.estimate, 4)
    ('mcnemar_edwards', 0.1975)
    """

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Wald interval of the paired difference in accuracy (one-sided for one-sided tests).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``estimate ± z se`` with the normal quantile; ``[nan, nan]`` when ``se`` is NaN.
        """
        if not (np.isfinite(self.se) and np.isfinite(self.estimate)):
            check_confidence_level(confidence_level)
            return ConfidenceInterval(math.nan, math.nan)
        return wald_interval(self.estimate, self.se, confidence_level,
                             alternative=self.alternative)

    def __str__(self) -> str:
        acc = self.extra.get("accuracy") if isinstance(self.extra, dict) else None
        if self.b or not acc:
            return ComparisonResult.__str__(self)
        # an omnibus test of more than two models: no single difference to report
        df = (f"df = {number(self.df, 4)}" if self.df2 is None
              else f"df = ({number(self.df, 4)}, {number(self.df2, 4)})")
        accs = ", ".join(f"{k}: {number(v, 4)}" for k, v in acc.items())
        lines = [self.method, f"  accuracy over n = {number(self.n)} rows: {accs}",
                 f"  statistic = {number(self.statistic, 4)}, {df}, p = "
                 f"{_pvalue_text(self.pvalue, table=True)}"]
        if self.extra.get("note"):
            lines.append(f"  note: {self.extra['note']}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------
def _labels_1d(values, name: str) -> np.ndarray:
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise DataError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    if arr.size == 0:
        raise DataError(f"`{name}` is empty.")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        bad = np.flatnonzero(np.isnan(arr))
        raise DataError(f"`{name}` has {bad.size} missing value(s) at positions "
                        f"{bad[:5].tolist()}.")
    if arr.dtype == object and pd.isna(arr).any():
        bad = np.flatnonzero(pd.isna(arr))
        raise DataError(f"`{name}` has {bad.size} missing value(s) at positions "
                        f"{bad[:5].tolist()}.")
    return arr


def _correct_matrix(y_true, preds: Sequence, names: Sequence[str]) -> np.ndarray:
    """Boolean (n_rows, m) matrix: model j predicted row i correctly."""
    y = _labels_1d(y_true, "y_true")
    arrays = [_labels_1d(p, name) for p, name in zip(preds, names, strict=True)]
    lengths = {"y_true": y.size} | {n: a.size for n, a in zip(names, arrays, strict=True)}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise DataError(f"`y_true` and the predictions must have the same length: {desc}.")
    return np.column_stack([a == y for a in arrays])


def _names(labels, m: int, default: Sequence[str]) -> list[str]:
    if labels is None:
        return list(default)
    if isinstance(labels, str) or len(labels) != m:
        raise ParameterError(f"`labels` must give {m} model names; got {labels!r}.")
    return [str(x) for x in labels]


def _table_iv(table) -> np.ndarray:
    try:
        arr = np.asarray(table, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"`table` must be a 2 x 2 table of counts; could not convert it "
                        f"({exc}).") from None
    if arr.shape != (2, 2):
        raise DataError(f"`table` must be a 2 x 2 table of counts; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or (arr < 0).any() or (arr != np.round(arr)).any():
        raise DataError(f"`table` must hold non-negative integer counts; got "
                        f"{arr.tolist()}.")
    if arr.sum() == 0:
        raise DataError("`table` is empty (all counts are 0).")
    return arr.astype(np.int64)


# ---------------------------------------------------------------------------------------------
# McNemar
# ---------------------------------------------------------------------------------------------
def mcnemar_table(y_true, pred_a, pred_b) -> np.ndarray:
    """The 2 x 2 table of paired correctness of two classifiers.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        True class labels.
    pred_a, pred_b : array-like of shape (n_rows,)
        Predicted labels of models ``a`` and ``b``.

    Returns
    -------
    numpy.ndarray of shape (2, 2)
        ``[[n11, n10], [n01, n00]]``: both right, only ``a`` right, only ``b`` right, both
        wrong (mlxtend's ``mcnemar_table`` layout).

    See Also
    --------
    mcnemar_test_from_table : McNemar's test from this table.
    mcnemar_test : The test from the labels.

    Examples
    --------
    >>> mcnemar_table([0, 1, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1]).tolist()
    [[1, 1], [1, 1]]
    """
    ok = _correct_matrix(y_true, [pred_a, pred_b], ["pred_a", "pred_b"])
    ca, cb = ok[:, 0], ok[:, 1]
    return np.array([[np.sum(ca & cb), np.sum(ca & ~cb)],
                     [np.sum(~ca & cb), np.sum(~ca & ~cb)]], dtype=np.int64)


def _mcnemar(table: np.ndarray, correction: str, alternative: str, a: str, b: str,
             metric: str = "accuracy") -> PredictionTestResult:
    n = int(table.sum())
    nb, nc = int(table[0, 1]), int(table[1, 0])
    nd = nb + nc
    estimate = (nb - nc) / n
    se = math.sqrt(max(nd - (nb - nc) ** 2 / n, 0.0)) / n
    extra = {"table": table.tolist(), "b": nb, "c": nc, "discordant": nd}
    df: float | None
    if correction == "exact":
        # conditional on b + c discordant rows, b ~ Binomial(b + c, 1/2) under H0
        if nd == 0:
            p = 1.0
        elif alternative == "greater":
            p = float(stats.binom.sf(nb - 1, nd, 0.5))
        elif alternative == "less":
            p = float(stats.binom.cdf(nb, nd, 0.5))
        else:
            p = min(1.0, 2.0 * float(stats.binom.cdf(min(nb, nc), nd, 0.5)))
        statistic, df = float(nb), None
        test, method = "mcnemar_exact", "McNemar exact binomial test"
        extra["note"] = "statistic = b, the rows only model a predicts correctly"
    else:
        cc = 1.0 if correction == "edwards" else 0.0
        test = "mcnemar_edwards" if cc else "mcnemar"
        method = ("McNemar chi-square test (Edwards continuity correction)" if cc
                  else "McNemar chi-square test (no continuity correction)")
        if nd == 0:
            statistic, p = 0.0, 1.0
            df = 1.0 if alternative == "two-sided" else None
        elif alternative == "two-sided":
            # the correction never overshoots: |b - c| < 1 gives 0, as in R's mcnemar.test
            statistic = max(abs(nb - nc) - cc, 0.0) ** 2 / nd
            df = 1.0
            p = float(stats.chi2.sf(statistic, 1))
        else:
            # one-sided: the signed normal deviate, corrected towards the null tail
            shift = -cc if alternative == "greater" else cc
            statistic = (nb - nc + shift) / math.sqrt(nd)
            df = None
            p = float(get_pvalue(statistic, stats.norm, alternative))
            extra["note"] = "one-sided: statistic is the continuity-corrected z" if cc else \
                "one-sided: statistic is z = (b - c) / sqrt(b + c)"
    if nd == 0:
        extra["note"] = "the two models never disagree (b + c = 0): no evidence of a difference"
    return PredictionTestResult(
        statistic=float(statistic), pvalue=float(p), df=df, estimate=float(estimate),
        se=float(se), alternative=alternative, method=method, extra=extra, test=test,
        valid=True, requires=_REQUIRES, n=n, a=a, b=b, metric=metric,
    )


@fill_doc()
def mcnemar_test_from_table(table, *, correction: str = "edwards",
                            alternative: str = "two-sided",
                            labels: Sequence[str] | None = None) -> PredictionTestResult:
    """McNemar's test from a 2 x 2 table of paired correctness.

    Parameters
    ----------
    table : array-like of shape (2, 2)
        ``[[both right, a right & b wrong], [a wrong & b right, both wrong]]`` (counts), as
        returned by :func:`mcnemar_table`. Only the discordant cells ``b = table[0, 1]`` and
        ``c = table[1, 0]`` enter the test.
    correction : {'edwards', 'none', 'exact'}, default 'edwards'
        ``'edwards'``: ``chi2 = max(|b - c| - 1, 0)^2 / (b + c)`` (Edwards 1948);
        ``'none'``: ``chi2 = (b - c)^2 / (b + c)`` (McNemar 1947), both on 1 df;
        ``'exact'``: ``b ~ Binomial(b + c, 1/2)`` under H0, two-sided p ``min(1, 2 P(X <=
        min(b, c)))``.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        ``'greater'``: model ``a`` is more accurate. One-sided chi-square variants use the
        signed deviate ``z = (b - c ∓ 1) / sqrt(b + c)`` (∓ 0 without correction), reported as
        the statistic with ``df = None``.
    labels : (str, str), optional
        Names of the two models (default ``('a', 'b')``).

    Returns
    -------
    PredictionTestResult
        ``estimate`` = accuracy of a minus accuracy of b = ``(b - c) / n``; ``extra`` holds the
        table and the discordant counts. ``b + c = 0`` gives statistic 0 and p-value 1.

    See Also
    --------
    mcnemar_test : The same test from the labels.
    mcnemar_table : The table.
    cochrans_q_test : The test of more than two classifiers.

    Notes
    -----
    Dietterich (1998), section 3.1, on its use for comparing classifiers. Gardner & Brooks
    (2017, section 6) discuss its limits: it sees one test set, so it does not measure the
    variance due to the training set.

    References
    ----------
    {refs:mcnemar1947,edwards1948,dietterich1998,gardner2017}

    Examples
    --------
    >>> r = mcnemar_test_from_table([[101, 121], [59, 33]])
    >>> round(r.statistic, 4), round(r.pvalue, 8)
    (20.6722, 5.45e-06)
    """
    correction = check_choice(correction, "correction", CORRECTIONS)
    alternative = check_alternative(alternative)
    arr = _table_iv(table)
    a, b = _names(labels, 2, ("a", "b"))
    return _mcnemar(arr, correction, alternative, a, b)


@fill_doc()
def mcnemar_test(y_true, pred_a, pred_b, *, correction: str = "edwards",
                 alternative: str = "two-sided",
                 labels: Sequence[str] | None = None) -> PredictionTestResult:
    """McNemar's test of equal accuracy of two classifiers on the same test rows.

    A test of two *fitted* models on one test set: it ignores the variance due to the choice
    of training set (Dietterich 1998; Gardner & Brooks 2017, section 6).

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        True class labels.
    pred_a, pred_b : array-like of shape (n_rows,)
        Predicted labels of models ``a`` and ``b``.
    correction : {'edwards', 'none', 'exact'}, default 'edwards'
        See :func:`mcnemar_test_from_table`.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        ``'greater'``: ``a`` is more accurate than ``b``.
    labels : (str, str), optional
        Names of the two models.

    Returns
    -------
    PredictionTestResult
        The statistic, the p-value and the difference in accuracy with its paired SE.

    See Also
    --------
    mcnemar_test_from_table : The same test from the 2 x 2 table.
    mcnemar_test_from_predictions : The same test from a Predictions table.
    cochrans_q_test : The test of more than two classifiers.

    References
    ----------
    {refs:mcnemar1947,edwards1948,dietterich1998,gardner2017}

    Examples
    --------
    >>> y = [0, 1, 1, 0, 1, 1, 0, 1]
    >>> r = mcnemar_test(y, [0, 1, 1, 0, 1, 1, 0, 0], [1, 0, 1, 1, 0, 1, 0, 0],
    ...                  correction="exact")
    >>> r.estimate, round(r.pvalue, 4)
    (0.5, 0.125)
    """
    correction = check_choice(correction, "correction", CORRECTIONS)
    alternative = check_alternative(alternative)
    a, b = _names(labels, 2, ("a", "b"))
    table = mcnemar_table(y_true, pred_a, pred_b)
    return _mcnemar(table, correction, alternative, a, b)


# ---------------------------------------------------------------------------------------------
# Cochran's Q and Looney's F
# ---------------------------------------------------------------------------------------------
def _accuracy_difference(ok: np.ndarray) -> tuple[float, float]:
    """Estimate and paired SE of acc_0 - acc_1 for m = 2; NaN otherwise."""
    if ok.shape[1] != 2:
        return math.nan, math.nan
    n = ok.shape[0]
    nb = int(np.sum(ok[:, 0] & ~ok[:, 1]))
    nc = int(np.sum(~ok[:, 0] & ok[:, 1]))
    return (nb - nc) / n, math.sqrt(max(nb + nc - (nb - nc) ** 2 / n, 0.0)) / n


def _multi_names(names: list[str]) -> tuple[str, str]:
    return (names[0], names[1]) if len(names) == 2 else (", ".join(names), "")


def _cochran(ok: np.ndarray, names: list[str]) -> PredictionTestResult:
    n, m = ok.shape
    x = ok.astype(float)
    col = x.sum(axis=0)            # C_j: rows model j gets right
    row = x.sum(axis=1)            # R_i: models right on row i
    total = col.sum()
    denom = m * total - np.sum(row**2)
    numer = (m - 1) * (m * np.sum(col**2) - total**2)
    extra = {"accuracy": dict(zip(names, (col / n).tolist(), strict=True))}
    if denom <= 0:  # every row: all models right or all wrong — no disagreement at all
        q, p = 0.0, 1.0
        extra["note"] = "the models never disagree: no evidence of a difference"
    else:
        q = float(numer / denom)
        p = float(stats.chi2.sf(q, m - 1))
    est, se = _accuracy_difference(ok)
    a, b = _multi_names(names)
    return PredictionTestResult(
        statistic=q, pvalue=p, df=float(m - 1), estimate=est, se=se, alternative="two-sided",
        method=f"Cochran's Q test ({m} models)", extra=extra, test="cochran_q", valid=True,
        requires=_REQUIRES, n=n, a=a, b=b, metric="accuracy",
    )


def _looney(ok: np.ndarray, names: list[str]) -> PredictionTestResult:
    n, m = ok.shape
    x = ok.astype(float)
    acc = x.mean(axis=0)
    mean_acc = acc.mean()
    ss_models = n * np.sum(acc**2) - n * m * mean_acc**2
    ss_rows = np.sum(x.sum(axis=1) ** 2) / m - n * m * mean_acc**2
    ss_total = n * m * mean_acc * (1.0 - mean_acc)
    ss_inter = ss_total - ss_models - ss_rows
    df1, df2 = m - 1, (m - 1) * (n - 1)
    ms_models = ss_models / df1
    ms_inter = ss_inter / df2 if df2 > 0 else math.nan
    extra = {"accuracy": dict(zip(names, acc.tolist(), strict=True)),
             "note": "denominator df (m - 1)(n - 1) as in Looney (1988); mlxtend's ftest uses "
                     "(m - 1) n"}
    tol = 1e-12 * max(1.0, n * m)
    if ms_models <= tol:
        f, p = 0.0, 1.0
    elif not ms_inter > tol:
        f, p = math.inf, 0.0
    else:
        f = float(ms_models / ms_inter)
        p = float(stats.f.sf(f, df1, df2))
    est, se = _accuracy_difference(ok)
    a, b = _multi_names(names)
    return PredictionTestResult(
        statistic=f, pvalue=p, df=float(df1), estimate=est, se=se, alternative="two-sided",
        method=f"Looney's F test ({m} models)", extra=extra, test="looney_f", valid=True,
        requires=_REQUIRES, df2=float(df2), n=n, a=a, b=b, metric="accuracy",
    )


def _multi_iv(y_true, preds, labels):
    if len(preds) < 2:
        raise ParameterError(f"give the predictions of at least 2 models; got {len(preds)}.")
    names = _names(labels, len(preds), [f"model {j}" for j in range(len(preds))])
    ok = _correct_matrix(y_true, preds, [f"preds[{j}]" for j in range(len(preds))])
    return ok, names


@fill_doc()
def cochrans_q_test(y_true, *preds, labels: Sequence[str] | None = None) -> PredictionTestResult:
    """Cochran's Q test of equal accuracy of m classifiers on the same test rows.

    With ``x_ij = 1`` when model j predicts row i correctly, ``C_j = sum_i x_ij``,
    ``R_i = sum_j x_ij`` and ``T = sum_j C_j``,

    ``Q = (m - 1) (m sum_j C_j^2 - T^2) / (m T - sum_i R_i^2)``, approximately chi-square with
    ``m - 1`` df under H0 (all models equally accurate). With m = 2, Q is the uncorrected
    McNemar chi-square. When no row separates the models (the denominator is 0), Q = 0, p = 1.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        True class labels.
    *preds : array-like of shape (n_rows,)
        Predicted labels of two or more models.
    labels : sequence of str, optional
        Model names (default ``'model 0'``, ``'model 1'``, ...).

    Returns
    -------
    PredictionTestResult
        ``statistic`` Q, ``df`` m - 1; ``extra['accuracy']`` per model. For m = 2 ``estimate``
        is ``acc_a - acc_b`` with its paired SE; for m > 2 both are NaN (an omnibus test).

    See Also
    --------
    looney_ftest : Looney's F on the same table.
    mcnemar_test : The test of two classifiers.
    cochrans_q_test_from_predictions : The same test from a Predictions table.

    References
    ----------
    {refs:cochran1950,kuncheva2004}

    Examples
    --------
    >>> y = [1] * 10
    >>> r = cochrans_q_test(y, [1] * 10, [1] * 5 + [0] * 5, [0] * 10)
    >>> round(r.statistic, 3), r.df
    (15.0, 2.0)
    """
    ok, names = _multi_iv(y_true, preds, labels)
    return _cochran(ok, names)


@fill_doc()
def looney_ftest(y_true, *preds, labels: Sequence[str] | None = None) -> PredictionTestResult:
    """Looney's F test of equal accuracy of m classifiers on the same test rows.

    A two-way ANOVA of the 0/1 correctness table (models x rows) without replication. With
    accuracies ``p_j``, their mean ``p``, ``L_i`` the number of models right on row i:
    ``SSA = n sum_j p_j^2 - n m p^2``, ``SSB = (1/m) sum_i L_i^2 - n m p^2``,
    ``SST = n m p (1 - p)``, ``SSAB = SST - SSA - SSB`` and
    ``F = [SSA / (m - 1)] / [SSAB / ((m - 1)(n - 1))]`` on ``(m - 1, (m - 1)(n - 1))`` df.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        True class labels.
    *preds : array-like of shape (n_rows,)
        Predicted labels of two or more models.
    labels : sequence of str, optional
        Model names (default ``'model 0'``, ``'model 1'``, ...).

    Returns
    -------
    PredictionTestResult
        ``statistic`` F, ``df`` and ``df2`` its degrees of freedom.

    See Also
    --------
    cochrans_q_test : Cochran's Q on the same table.
    looney_ftest_from_predictions : The same test from a Predictions table.

    Notes
    -----
    mlxtend's ``ftest`` computes the same F but takes its p-value on ``(m - 1) n``
    denominator df.

    References
    ----------
    {refs:looney1988,kuncheva2004}

    Examples
    --------
    >>> y = [1] * 10
    >>> r = looney_ftest(y, [1] * 10, [1] * 5 + [0] * 5, [0] * 10)
    >>> (r.df, r.df2)
    (2.0, 18.0)
    """
    ok, names = _multi_iv(y_true, preds, labels)
    return _looney(ok, names)


# ---------------------------------------------------------------------------------------------
# from a Predictions table
# ---------------------------------------------------------------------------------------------
def _aligned_predictions(predictions, models, *, study, repeat, min_models: int):
    """y_true and one y_pred column per model, aligned on (fold, row) of one study and repeat."""
    from ..data import Predictions

    if hasattr(predictions, "predictions") and not isinstance(predictions, pd.DataFrame):
        predictions = predictions.predictions
        if predictions is None:
            raise DataError("the run holds no predictions (it was run without keeping them).")
    if isinstance(predictions, Predictions):
        frame = predictions.frame
    elif isinstance(predictions, pd.DataFrame):
        frame = Predictions(predictions).frame
    else:
        raise ParameterTypeError(f"`predictions` must be a Predictions table, a DataFrame in its "
                                 f"layout or a RunResult; got {type(predictions).__name__}.")
    studies = list(pd.unique(frame["study"]))
    if study is None:
        if len(studies) != 1:
            raise ParameterError(f"`study` must be given when the predictions hold several "
                                 f"studies; found {studies}.")
        study = studies[0]
    elif study not in studies:
        raise DataError(f"study {study!r} is not in the predictions; found {studies}.")
    frame = frame[frame["study"] == study]
    present = list(pd.unique(frame["model"]))
    if models is None:
        models = present
    elif isinstance(models, str):
        raise ParameterTypeError(f"`models` must be a sequence of model names; got the string "
                                 f"{models!r}.")
    models = list(models)
    if len(models) < min_models:
        raise ParameterError(f"`models` must name at least {min_models} models; got {models}.")
    if len(set(models)) != len(models):
        raise ParameterError(f"`models` names a model twice: {models}.")
    missing = [m for m in models if m not in present]
    if missing:
        raise DataError(f"model(s) {missing} are not in the predictions of study {study!r}; "
                        f"models present: {present}.")
    repeat = check_int(repeat, "repeat", min_value=0)
    repeats = sorted(pd.unique(frame["repeat"]).tolist())
    if repeat not in repeats:
        raise DataError(f"repeat {repeat} is not in the predictions of study {study!r}; "
                        f"repeats present: {repeats}.")
    sub = frame[(frame["repeat"] == repeat) & frame["model"].isin(models)]
    keys = ["fold", "row"]
    y_pred = sub.pivot(index=keys, columns="model", values="y_pred")
    incomplete = y_pred[models].isna().any(axis=1)
    if incomplete.any():
        first = y_pred.index[incomplete.to_numpy()][:5].tolist()
        raise DataError(f"the models were not all evaluated on the same test rows of repeat "
                        f"{repeat}: {int(incomplete.sum())} (fold, row) pair(s) lack a "
                        f"prediction, first {first}.")
    y_true = sub.pivot(index=keys, columns="model", values="y_true")
    truth = y_true[models[0]]
    differs = (y_true[models].ne(truth, axis=0)).any(axis=1)
    if differs.any():
        first = y_true.index[differs.to_numpy()][:5].tolist()
        raise DataError(f"`y_true` differs between models on the same (fold, row): first {first}.")
    return truth.to_numpy(), [y_pred[m].to_numpy() for m in models], [str(m) for m in models]


@fill_doc()
def mcnemar_test_from_predictions(predictions, models: Sequence, *, study=None, repeat: int = 0,
                                  correction: str = "edwards",
                                  alternative: str = "two-sided") -> PredictionTestResult:
    """McNemar's test of two models from a Predictions table (one study, one repeat).

    The rows of all folds of ``repeat`` are pooled (each row is predicted once per repeat by a
    cross-validation scheme, or the hold-out set of a split) and paired by ``(fold, row)``.

    Parameters
    ----------
    predictions : Predictions, pandas.DataFrame or RunResult
        Out-of-fold predictions in the Predictions layout (``study, model, repeat, fold, row,
        y_true, y_pred``).
    models : (str, str)
        The two models ``a`` and ``b``.
    study : str, optional
        Required when the table holds several studies.
    repeat : int, default 0
        Which repeat of the resampling scheme.
    correction : {'edwards', 'none', 'exact'}, default 'edwards'
        See :func:`mcnemar_test_from_table`.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        ``'greater'``: ``a`` is more accurate than ``b``.

    Returns
    -------
    PredictionTestResult
        As :func:`mcnemar_test`.

    See Also
    --------
    mcnemar_test : The test from the labels.
    cochrans_q_test_from_predictions : Several models from the same table.

    Notes
    -----
    Pooling the folds of a cross-validation gives every row one out-of-sample prediction, but
    the models behind them were trained on overlapping data: Dietterich (1998) and Gardner &
    Brooks (2017, section 6) warn that McNemar then ignores the training-set variance.

    References
    ----------
    {refs:mcnemar1947,edwards1948,dietterich1998,gardner2017}

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": ["a"] * 4 + ["b"] * 4, "repeat": 0,
    ...                   "fold": 0, "row": [0, 1, 2, 3] * 2, "y_true": [0, 1, 1, 0] * 2,
    ...                   "y_pred": [0, 1, 1, 1, 1, 0, 1, 1]})
    >>> mcnemar_test_from_predictions(f, ["a", "b"], correction="exact").extra["table"]
    [[1, 2], [0, 1]]
    """
    correction = check_choice(correction, "correction", CORRECTIONS)
    alternative = check_alternative(alternative)
    if isinstance(models, str) or len(models) != 2:
        raise ParameterError(f"`models` must name exactly two models (a, b); got {models!r}.")
    y, preds, names = _aligned_predictions(predictions, models, study=study, repeat=repeat,
                                           min_models=2)
    table = mcnemar_table(y, preds[0], preds[1])
    return _mcnemar(table, correction, alternative, names[0], names[1])


@fill_doc()
def cochrans_q_test_from_predictions(predictions, models: Sequence | None = None, *, study=None,
                                     repeat: int = 0) -> PredictionTestResult:
    """Cochran's Q of several models from a Predictions table (one study, one repeat).

    Rows are paired by ``(fold, row)`` as in :func:`mcnemar_test_from_predictions`; see
    :func:`cochrans_q_test` for the statistic.

    Parameters
    ----------
    predictions : Predictions, pandas.DataFrame or RunResult
        Out-of-fold predictions in the Predictions layout.
    models : sequence of str, optional
        The models compared; default every model of the study.
    study : str, optional
        Required when the table holds several studies.
    repeat : int, default 0
        Which repeat of the resampling scheme.

    Returns
    -------
    PredictionTestResult
        As :func:`cochrans_q_test`.

    See Also
    --------
    cochrans_q_test : The test from the labels.
    looney_ftest_from_predictions : Looney's F from the same table.

    References
    ----------
    {refs:cochran1950,kuncheva2004}

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": ["a"] * 3 + ["b"] * 3, "repeat": 0,
    ...                   "fold": 0, "row": [0, 1, 2] * 2, "y_true": [1, 1, 1] * 2,
    ...                   "y_pred": [1, 1, 1, 0, 0, 1]})
    >>> round(cochrans_q_test_from_predictions(f).statistic, 3)
    2.0
    """
    y, preds, names = _aligned_predictions(predictions, models, study=study, repeat=repeat,
                                           min_models=2)
    ok = _correct_matrix(y, preds, names)
    return _cochran(ok, names)


@fill_doc()
def looney_ftest_from_predictions(predictions, models: Sequence | None = None, *, study=None,
                                  repeat: int = 0) -> PredictionTestResult:
    """Looney's F of several models from a Predictions table (one study, one repeat).

    Rows are paired by ``(fold, row)`` as in :func:`mcnemar_test_from_predictions`; see
    :func:`looney_ftest` for the statistic.

    Parameters
    ----------
    predictions : Predictions, pandas.DataFrame or RunResult
        Out-of-fold predictions in the Predictions layout.
    models : sequence of str, optional
        The models compared; default every model of the study.
    study : str, optional
        Required when the table holds several studies.
    repeat : int, default 0
        Which repeat of the resampling scheme.

    Returns
    -------
    PredictionTestResult
        As :func:`looney_ftest`.

    See Also
    --------
    looney_ftest : The test from the labels.
    cochrans_q_test_from_predictions : Cochran's Q from the same table.

    References
    ----------
    {refs:looney1988,kuncheva2004}

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s", "model": ["a"] * 3 + ["b"] * 3, "repeat": 0,
    ...                   "fold": 0, "row": [0, 1, 2] * 2, "y_true": [1, 1, 1] * 2,
    ...                   "y_pred": [1, 1, 1, 0, 0, 1]})
    >>> looney_ftest_from_predictions(f).df2
    2.0
    """
    y, preds, names = _aligned_predictions(predictions, models, study=study, repeat=repeat,
                                           min_models=2)
    ok = _correct_matrix(y, preds, names)
    return _looney(ok, names)
