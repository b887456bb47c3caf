"""Unpaired comparisons: two models evaluated on different splits or different samples.

The tests of :mod:`replikit.compare.resampled` need both models scored on the *same* splits
(paired differences). When the two sets of scores come from different splits of one dataset,
from two different datasets drawn from the same population, or from two papers that each ran
their own resampling, there is nothing to pair: the comparison is a two-sample one.

* :func:`unpaired_corrected_ttest` — Welch's t on the two means of resampled scores, each
  side's variance inflated by the resampling correction of Nadeau & Bengio (2003):
  ``V_a = s_a² (1/J_a + n_test_a/n_train_a)``, ``V_b`` likewise,
  ``t = (mean_a - mean_b) / sqrt(V_a + V_b)`` on the Welch–Satterthwaite df.
* :func:`welch_ttest` — the plain Welch (1947) test for scores that are independent within
  each side (each from its own independent sample: one score per disjoint dataset). On
  resampled scores of one dataset it is as invalid as the naive paired t; it says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from .._validation import check_1d_array, check_alternative, check_float
from ..errors import ParameterError, ParameterTypeError
from ..results import get_pvalue
from ._result import ComparisonResult
from ._words import fill_doc
from .resampled import _Labels, _result

__all__ = ["unpaired_corrected_ttest", "welch_ttest", "welch_satterthwaite"]


@fill_doc()
def welch_satterthwaite(v_a, v_b, df_a, df_b):
    """Welch–Satterthwaite degrees of freedom of ``V_a + V_b``.

    ``df = (V_a + V_b)² / (V_a²/df_a + V_b²/df_b)`` for two independent variance estimates
    ``V_a``, ``V_b`` on ``df_a``, ``df_b`` degrees of freedom (Satterthwaite 1946; Welch 1947).
    Vectorised over leading axes.

    Parameters
    ----------
    v_a, v_b : float or array-like
        The two variance components (``c_a s_a²``, ``c_b s_b²``), >= 0.
    df_a, df_b : float or array-like
        Their degrees of freedom (``J - 1``).

    Returns
    -------
    float or ndarray
        The degrees of freedom; NaN when both components are 0.

    See Also
    --------
    unpaired_corrected_ttest : The test that uses it.

    References
    ----------
    {refs:satterthwaite1946,welch1947}

    Examples
    --------
    >>> round(float(welch_satterthwaite(0.5, 0.5, 9, 9)), 6)
    18.0
    """
    v_a, v_b = np.asarray(v_a, float), np.asarray(v_b, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (v_a + v_b) ** 2 / (v_a**2 / np.asarray(df_a, float)
                                  + v_b**2 / np.asarray(df_b, float))
    return out[()] if out.ndim == 0 else out


def _pair_iv(value, name: str, *, kind: str) -> tuple[float, float] | None:
    """A number for both sides or a pair ``(a, b)``; ``kind`` 'size' (> 0) or 'ratio' (>= 0)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise ParameterTypeError(f"`{name}` must be a number or a pair (a, b) of numbers; got "
                                 f"{value!r}.")
    items = list(value) if isinstance(value, (Sequence, np.ndarray)) else [value, value]
    if len(items) != 2:
        raise ParameterError(f"`{name}` must be a number or a pair (a, b); got {len(items)} "
                             f"values: {value!r}.")
    out = []
    for side, v in zip("ab", items, strict=True):
        x = check_float(v, f"{name}[{'01'['ab'.index(side)]}]", min_value=0.0)
        if kind == "size" and x <= 0:
            raise ParameterError(f"`{name}` must be > 0 (a number of rows); got {value!r}.")
        out.append(x)
    return out[0], out[1]


def _ratios_iv(n_train, n_test, ratio) -> tuple[tuple[float, float], str]:
    if ratio is not None:
        if n_train is not None or n_test is not None:
            raise ParameterError("give either `ratio` (n_test / n_train) or `n_train` and "
                                 f"`n_test`, not both; got ratio={ratio!r}, "
                                 f"n_train={n_train!r}, n_test={n_test!r}.")
        return _pair_iv(ratio, "ratio", kind="ratio"), "given"
    if n_train is None or n_test is None:
        raise ParameterError("the corrected variance needs the split sizes: give `n_train` "
                             "and `n_test` (numbers, or pairs (a, b) when the two sides "
                             f"differ) or `ratio`; got n_train={n_train!r}, n_test={n_test!r}.")
    tr = _pair_iv(n_train, "n_train", kind="size")
    te = _pair_iv(n_test, "n_test", kind="size")
    return (te[0] / tr[0], te[1] / tr[1]), "n_test / n_train"


def _scores_iv(scores, name: str) -> np.ndarray:
    x = check_1d_array(scores, name, min_size=2)
    return x


def _welch(xa, xb, ca, cb):
    """Mean difference, its SE, the t and the df with variance components ``c s²``."""
    ja, jb = xa.size, xb.size
    va = xa.var(ddof=1) * ca
    vb = xb.var(ddof=1) * cb
    se = math.sqrt(va + vb)
    est = float(xa.mean() - xb.mean())
    df = float(welch_satterthwaite(va, vb, ja - 1, jb - 1)) if se > 0 else float(ja + jb - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = float(np.true_divide(est, se))
    return est, se, stat, df, va, vb


@fill_doc()
def unpaired_corrected_ttest(scores_a, scores_b, *, n_train=None, n_test=None, ratio=None,
                             alternative: str = "two-sided", a: str = "a", b: str = "b",
                             metric: str = "") -> ComparisonResult:
    """Welch-type t-test of two models' resampled scores from different splits or samples.

    Model ``a`` has ``J_a`` scores from random train/test splits (repeated hold-out, or
    ``k``-fold cross-validation folds) of its data and model ``b`` ``J_b`` scores from splits of
    other data — different splits of one dataset, or another sample of the same population.
    Each side's variance of its mean score is inflated for the overlap of its splits as in the
    corrected resampled t (Nadeau & Bengio 2003; Gardner & Brooks 2017, eq. 3), and the two
    are combined as in Welch's (1947) test:

    ``V_a = s_a² (1/J_a + n_test_a/n_train_a)``, ``V_b = s_b² (1/J_b + n_test_b/n_train_b)``,

    ``t = (mean(a) - mean(b)) / sqrt(V_a + V_b)``, Student t with the Welch–Satterthwaite
    df ``(V_a + V_b)² / (V_a²/(J_a - 1) + V_b²/(J_b - 1))``.

    With ``ratio=0`` (no correction) it is Welch's test, equal to
    ``scipy.stats.ttest_ind(scores_a, scores_b, equal_var=False)``; that is right only for
    scores that are independent within each side (:func:`welch_ttest`).

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (J_a,), (J_b,)
        The per-split scores of each model (J >= 2 each); not paired, lengths may differ.
    n_train, n_test : float or (float, float), optional
        Training and test rows of one split, the same for both sides or a pair ``(a, b)``;
        for k-fold cross-validation ``n_test/n_train = 1/(k - 1)``.
    ratio : float or (float, float), optional
        ``n_test / n_train`` directly (one for both sides, or a pair); instead of the sizes.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For ``mean(a) - mean(b)`` against 0: ``'greater'`` tests whether ``a`` scores higher.
    a, b, metric : str
        Names of the two models and the metric, carried into the result.

    Returns
    -------
    ComparisonResult
        ``test='unpaired_corrected_t'``, ``estimate`` the difference of the mean scores,
        ``se = sqrt(V_a + V_b)``, ``df`` the Welch–Satterthwaite df,
        ``confidence_interval(confidence_level)`` the matching t interval; ``n = J_a + J_b``;
        ``extra`` the two ratios and variance components.

    Raises
    ------
    ParameterError
        Neither the sizes nor ``ratio``, both, or a size <= 0.
    DataError
        Fewer than 2 scores on a side, or missing values.

    See Also
    --------
    welch_ttest : The uncorrected test, for independent scores.
    replikit.compare.corrected_resampled_ttest : The paired test, when both models share the
        splits (more powerful: use it whenever the splits can be shared).

    Notes
    -----
    The correction is the heuristic of Nadeau & Bengio (2003), applied to each side on its
    own; as for the paired test it is somewhat conservative for deterministic learners. The
    null hypothesis is that the two models have the same expected performance when trained on
    ``n_train`` rows of their data-generating distributions. In replikit's simulation (two
    independent samples of one population, 15 random 2/3 : 1/3 subsamples each, the same
    learner on both, 4,000 data sets) the corrected test rejected 4.5% at alpha = 0.05, the
    uncorrected Welch test 49.9% (docs/compare.md).

    References
    ----------
    {refs:nadeau2003,welch1947,satterthwaite1946,gardner2017}

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> acc_a = 0.82 + 0.02 * rng.standard_normal(15)   # 15 hold-outs of its own data
    >>> acc_b = 0.80 + 0.03 * rng.standard_normal(20)   # 20 hold-outs of other data
    >>> r = unpaired_corrected_ttest(acc_a, acc_b, n_train=(200, 300), n_test=(100, 150))
    >>> r.test, round(r.df, 2) > 0
    ('unpaired_corrected_t', True)
    """
    alternative = check_alternative(alternative)
    xa, xb = _scores_iv(scores_a, "scores_a"), _scores_iv(scores_b, "scores_b")
    (ra, rb), source = _ratios_iv(n_train, n_test, ratio)
    est, se, stat, df, va, vb = _welch(xa, xb, 1.0 / xa.size + ra, 1.0 / xb.size + rb)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    corrected = ra > 0 or rb > 0
    method = ("Unpaired corrected resampled t-test (Nadeau & Bengio 2003 variance, Welch df)"
              if corrected else "Welch t-test (ratio 0: no resampling correction)")
    return _result(stat, se, df, _Labels(a, b, metric), estimate=est, pvalue=pvalue,
                   test="unpaired_corrected_t", method=method, alternative=alternative,
                   valid=True, requires="random splits on each side (not shared)",
                   n=xa.size + xb.size,
                   extra={"ratio_a": ra, "ratio_b": rb, "ratio_source": source,
                          "var_a": float(va), "var_b": float(vb),
                          "n_a": int(xa.size), "n_b": int(xb.size)})


@fill_doc()
def welch_ttest(scores_a, scores_b, *, alternative: str = "two-sided", a: str = "a",
                b: str = "b", metric: str = "") -> ComparisonResult:
    """Welch's t-test of two models' scores on independent samples — no resampling correction.

    ``t = (mean(a) - mean(b)) / sqrt(s_a²/J_a + s_b²/J_b)``, Student t with the
    Welch–Satterthwaite df (Welch 1947). Valid when every score is independent of the others:
    each model scored once on each of several *independent* samples (disjoint datasets, or
    disjoint training and test sets). On resampled scores of one dataset (cross-validation
    folds, repeated hold-outs) the scores of a side are positively correlated and this test
    rejects a true null far too often — use :func:`unpaired_corrected_ttest` there. It equals
    ``scipy.stats.ttest_ind(scores_a, scores_b, equal_var=False)``.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (J_a,), (J_b,)
        Independent scores of each model (J >= 2 each).
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For ``mean(a) - mean(b)`` against 0.
    a, b, metric : str
        Names of the two models and the metric.

    Returns
    -------
    ComparisonResult
        ``test='welch_t'``, ``requires='independent scores (no shared data)'``.

    See Also
    --------
    unpaired_corrected_ttest : With the resampling correction.

    References
    ----------
    {refs:welch1947,satterthwaite1946}

    Examples
    --------
    >>> r = welch_ttest([0.81, 0.84, 0.79, 0.83], [0.78, 0.80, 0.77, 0.79, 0.76])
    >>> round(r.statistic, 3), round(r.df, 2)
    (2.852, 5.28)
    """
    alternative = check_alternative(alternative)
    xa, xb = _scores_iv(scores_a, "scores_a"), _scores_iv(scores_b, "scores_b")
    est, se, stat, df, va, vb = _welch(xa, xb, 1.0 / xa.size, 1.0 / xb.size)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    return _result(stat, se, df, _Labels(a, b, metric), estimate=est, pvalue=pvalue,
                   test="welch_t",
                   method="Welch t-test (independent scores; no resampling correction)",
                   alternative=alternative, valid=True,
                   requires="independent scores (no shared data)", n=xa.size + xb.size,
                   extra={"var_a": float(va), "var_b": float(vb), "n_a": int(xa.size),
                          "n_b": int(xb.size)})

