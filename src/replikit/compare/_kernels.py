"""Test statistics of the resampled-score tests as array functions.

Each kernel is vectorised over leading axes, so a calibration study can compute thousands of
tests in one call (``d`` of shape ``(n_datasets, n_splits)``), and the per-pair functions of
:mod:`replikit.compare.resampled` are thin wrappers that call them on one pair: both give the
same numbers bit for bit.

Zero variance. When all differences of a sample are equal the standard error is 0: the
statistic is ``±inf`` if the mean difference is not 0 (a p-value of 0 two-sided) and ``NaN`` if
it is 0 (a p-value of NaN: the data cannot tell). No warning is raised by the kernels.

References
----------
Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine Learning 52.
Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance tests for
comparing learning algorithms. PAKDD.
Bouckaert, R. R. (2004). Estimating replicability of classifier learning experiments. ICML.
Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised classification
learning algorithms. Neural Computation 10(7).
Alpaydin, E. (1999). Combined 5x2 cv F test for comparing supervised classification learning
algorithms. Neural Computation 11(8).
Gardner, J. & Brooks, C. (2017). Statistical approaches to the model comparison task in
learning analytics (seed 002), eqs. 1-3 and Table 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["t_corrected", "t_naive", "t_5x2", "f_5x2", "t_sorted_runs", "z_proportions",
           "sorted_runs_sample", "SORTS"]

SORTS = ("difference", "learner")


def _div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


def t_corrected(d, ratio):
    """Corrected resampled t (Nadeau & Bengio 2003; Bouckaert & Frank 2004).

    ``t = mean(d) / sqrt((1/n + ratio) · s²)`` with ``s²`` the sample variance (ddof 1) of the
    ``n`` differences and ``ratio = n_test / n_train`` (seed eq. 3; Table 1 rows (2) and (3)).

    Parameters
    ----------
    d : array_like of shape (..., n)
        Score differences, one per split (``n = k · r`` for repeated k-fold).
    ratio : float or array_like of shape (...)
        ``n_test / n_train`` (``1/(k-1)`` for k-fold). ``0`` gives the naive t.

    Returns
    -------
    statistic, se, df : ndarray of shape (...)
        ``df = n - 1``.

    Examples
    --------
    Three simulated 10x10 cv comparisons at once:

    >>> import numpy as np
    >>> d = 0.01 + 0.02 * np.random.default_rng(0).standard_normal((3, 100))
    >>> stat, se, df = t_corrected(d, 1 / 9)
    >>> stat.shape, df.tolist()
    ((3,), [99.0, 99.0, 99.0])
    """
    d = np.asarray(d, dtype=float)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    var = d.var(axis=-1, ddof=1) if n > 1 else np.full(mean.shape, np.nan)
    se = np.sqrt(var * (1.0 / n + np.asarray(ratio, dtype=float)))
    stat = _div(mean, se)
    return stat, se, np.full(np.shape(stat), n - 1.0)


def t_naive(d):
    """Naive paired t: ``t = mean(d) / (s / sqrt(n))``, ``df = n - 1`` (seed eq. 2).

    Invalid on resampled or cross-validated scores (the differences are correlated); kept for
    comparison. ``d`` has shape ``(..., n)``; returns ``(statistic, se, df)``.
    """
    return t_corrected(d, 0.0)


def _check_5x2(d):
    d = np.asarray(d, dtype=float)
    if d.shape[-2:] != (5, 2):
        raise ValueError(f"5x2cv kernels need d of shape (..., 5, 2); got {d.shape}.")
    return d


def _s2_5x2(d):
    """Per-repeat variances ``s_i² = (d_i1 - m_i)² + (d_i2 - m_i)²`` (Dietterich 1998)."""
    m = d.mean(axis=-1, keepdims=True)
    return ((d - m) ** 2).sum(axis=-1)


def t_5x2(d):
    """Dietterich's (1998) 5x2cv paired t (seed Table 1 row (1)).

    ``t = d_11 / sqrt((1/5) Σ_i s_i²)`` with ``s_i² = Σ_j (d_ij - d̄_i)²``, Student t with 5 df.

    Parameters
    ----------
    d : array_like of shape (..., 5, 2)
        Differences for 5 repeats of 2-fold cross-validation; the numerator is ``d[..., 0, 0]``.

    Returns
    -------
    statistic, se, df : ndarray of shape (...)
        ``se = sqrt(mean_i s_i²)`` and ``df = 5``.
    """
    d = _check_5x2(d)
    se = np.sqrt(_s2_5x2(d).mean(axis=-1))
    stat = _div(d[..., 0, 0], se)
    return stat, se, np.full(np.shape(stat), 5.0)


def f_5x2(d):
    """Alpaydin's (1999) combined 5x2cv F.

    ``f = Σ_ij d_ij² / (2 Σ_i s_i²)``, F distributed with (10, 5) df under the null.

    Parameters
    ----------
    d : array_like of shape (..., 5, 2)

    Returns
    -------
    statistic, df1, df2 : ndarray of shape (...)
    """
    d = _check_5x2(d)
    num = (d ** 2).sum(axis=(-2, -1))
    den = 2.0 * _s2_5x2(d).sum(axis=-1)
    stat = _div(num, den)
    return stat, np.full(np.shape(stat), 10.0), np.full(np.shape(stat), 5.0)


def sorted_runs_sample(sa, sb, sort="difference"):
    """The k sorted-run differences of Bouckaert (2004), seed Table 1 row (4).

    ``sort='difference'``: sort the fold differences within each run and average the i-th
    smallest across runs. ``sort='learner'``: within each run sort each learner's fold scores,
    average the i-th smallest across the r runs (``P_i = (1/R) Σ_runs (i-th smallest)``, the
    seed's literal text), and take ``x_i = P_i(a) - P_i(b)`` — liberal, see
    :func:`replikit.compare.resampled.sorted_runs_ttest`. ``sa``, ``sb`` have shape ``(..., r, k)``;
    the result has shape ``(..., k)``.
    """
    sa = np.asarray(sa, dtype=float)
    sb = np.asarray(sb, dtype=float)
    if sort == "learner":
        return np.sort(sa, axis=-1).mean(axis=-2) - np.sort(sb, axis=-1).mean(axis=-2)
    if sort == "difference":
        return np.sort(sa - sb, axis=-1).mean(axis=-2)
    raise ValueError(f"`sort` must be one of {SORTS}; got {sort!r}.")


def t_sorted_runs(sa, sb, sort="difference"):
    """Paired t on the sorted-runs sample (Bouckaert 2004; seed Table 1 row (4)).

    ``t = mean(x) / (s_x / sqrt(k))`` on the ``k`` sorted-run differences ``x`` of
    :func:`sorted_runs_sample`, Student t with ``k - 1`` df (the seed prints ``df = r - 1``,
    the same number for its 10x10 design; the sample has ``k`` values, hence ``k - 1``).

    Parameters
    ----------
    sa, sb : array_like of shape (..., r, k)
        Scores of the two learners, ``r`` runs of ``k`` folds.
    sort : {'difference', 'learner'}

    Returns
    -------
    statistic, se, df : ndarray of shape (...)
    """
    return t_corrected(sorted_runs_sample(sa, sb, sort), 0.0)


def z_proportions(err_a, err_b, n_test):
    """Difference-of-proportions z with a pooled rate (seed eq. 1; Dietterich 1998 sec. 3.1).

    ``z = (p_A - p_B) / sqrt(2 p (1 - p) / n)`` with ``p = (p_A + p_B) / 2``. Invalid for
    comparing learners (the two rates share a test set and training-set variation is ignored);
    kept for comparison.

    Parameters
    ----------
    err_a, err_b : array_like of shape (...)
        Error rates (or accuracies: the statistic only changes sign) of the two models.
    n_test : array_like of shape (...)
        Number of test examples the rates rest on.

    Returns
    -------
    statistic : ndarray of shape (...)
    """
    pa = np.asarray(err_a, dtype=float)
    pb = np.asarray(err_b, dtype=float)
    p = (pa + pb) / 2.0
    se = np.sqrt(2.0 * p * (1.0 - p) / np.asarray(n_test, dtype=float))
    return _div(pa - pb, se)
