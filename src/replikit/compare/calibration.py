"""Calibration of the model-comparison tests by simulation: type I error, power, replicability.

Gardner & Brooks (2017, sec. 3-4) recommend tests for comparing two learners on one
dataset from the simulation studies of Dietterich (1998), Nadeau & Bengio (2003), Bouckaert &
Frank (2004) and Bouckaert (2004). :func:`simulate_tests` repeats those studies on data where the
truth is known, so that a user can see which tests hold their level, how much power they have
and how replicable their verdicts are.

Data-generating process
    Binary outcome ``y ~ Bernoulli(1/2)``; two Gaussian features with unit variance and
    class-conditional means ``x1 | y ~ N(+-mu_a, 1)``, ``x2 | y ~ N(+-mu_b, 1)`` (``+`` for
    ``y = 1``), correlated within class with correlation ``correlation`` (so that the two
    learners' errors are correlated, as real learners' are). ``mu_b`` is fixed by
    ``base_error = Phi(-mu_b)`` (the Bayes error of feature 2); ``mu_a`` is raised so that the
    Bayes error of feature 1 is ``base_error - difference`` for each difference in the grid.
    With ``difference = 0`` the two learners are exchangeable, so their population errors are
    equal at every training size (the null hypothesis holds exactly).

Learners
    A = nearest-centroid classifier on ``x1``, B = the same on ``x2``: the threshold is the
    midpoint of the two training class means, oriented by their order (a training set lacking
    a class predicts the class it has). Fits are class means, so every fit of every fold,
    repeat and dataset is one array expression (``numpy.add.reduceat`` over contiguous blocks
    of permuted rows); nothing loops over rows or folds in Python.

Population error
    For each difference and each training size used by a scheme, ``n_training_sets`` training
    sets are drawn and each fitted learner is evaluated on an independent sample of
    ``n_population`` (>= 100,000) rows; the table :attr:`CalibrationResult.population` reports
    the two population errors, their difference with a standard error, and the closed-form
    expected errors ``1/2 [Phi(t - mu) + Phi(-t - mu)]`` averaged over the same fits.

Schemes and tests (two-sided, level ``alpha``; the statistics are
:mod:`replikit.compare._kernels`)
    * 10 random 90/10 hold-outs: Nadeau & Bengio's corrected resampled t (valid) and the naive
      paired t (invalid);
    * 10x10 cross-validation: Bouckaert & Frank's corrected repeated k-fold t (valid), the naive
      paired t on all 100 folds (invalid), Bouckaert's sorted-runs t sorted by learner and
      by difference, and the Bayesian correlated t (Corani & Benavoli 2015; a difference is
      declared when the posterior probability that one learner is better by more than
      ``tolerance`` exceeds ``1 - alpha``);
    * 5x2 cross-validation: Dietterich's 5x2cv paired t and Alpaydin's combined 5x2cv F;
    * one 2/3-1/3 hold-out (Dietterich 1998): McNemar's test with Edwards' continuity
      correction, chi2 = max(|b - c| - 1, 0)^2 / (b + c), and the difference-in-proportions z
      (Gardner & Brooks 2017, eq. 1; invalid).

    Every vectorised p-value equals the p-value of replikit's public test
    (:mod:`replikit.compare.resampled`, :func:`replikit.compare.mcnemar_test_from_table`) on
    the same fold scores. The column ``valid`` is the literature's verdict (Gardner & Brooks
    2017): False
    for the naive t and the proportions z; the simulation checks it (in this design, for
    example, the sorted-runs t sorted by learner rejects far too often under the null).

Replicability (Bouckaert 2004)
    Each dataset is tested ``n_repeats = m`` times with new random partitions. Each run
    ends in one of three outcomes: A better, B better (rejection, by the sign of the observed
    difference) or no difference. With ``n_c`` runs in outcome ``c``, the replicability of the
    dataset is ``R = sum_c n_c (n_c - 1) / (m (m - 1))``, the share of pairs of runs that agree;
    it is averaged over datasets with its standard error.

Monte-Carlo error
    The rejection rate pools the ``m`` runs of every dataset; its standard error treats datasets
    as clusters, ``sqrt(mean_i (p_i - p)^2 / N)`` with ``p_i`` the rejection share of dataset
    ``i``, which equals the binomial ``sqrt(p (1 - p) / N)`` when ``m = 1``.

Reproducibility
    Dataset ``i`` (its rows and all its partitions) is drawn from its own stream
    ``task_rng(root, ('dataset', i))``, and the same datasets serve every difference (common
    random numbers), so results depend only on ``random_state`` — not on the chunk size or
    the number of workers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._compat import renamed, renamed_fields
from .._format import number
from .._plotting import axes_or_new
from .._random import root_seed_sequence, task_rng
from .._threads import single_blas, worker_limits
from .._validation import check_float, check_int, check_probability
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import Result, get_pvalue
from ._words import fill_doc, test_name

__all__ = ["CalibrationResult", "simulate_tests", "plot_calibration", "replicability",
           "CALIBRATED_TESTS"]


# --------------------------------------------------------------------------- schemes and tests

@dataclass(frozen=True, slots=True)
class _Scheme:
    """A resampling scheme of one replicate: ``r`` partitions of ``k`` contiguous blocks of a
    random permutation; the first ``n_eval`` blocks are test sets."""

    name: str
    label: str
    r: int
    k: int              # blocks per partition
    test_share: float   # test share of a hold-out scheme
    holdout: bool

    def bounds(self, n: int) -> np.ndarray:
        if self.holdout:
            n_test = int(min(n - 2, max(2, round(self.test_share * n))))
            return np.array([0, n_test, n])
        return (np.arange(self.k + 1) * n) // self.k

    @property
    def n_eval(self) -> int:
        return 1 if self.holdout else self.k

    def n_train(self, n: int) -> int:
        """Training-set size of the scheme (of its first test block)."""
        b = self.bounds(n)
        return int(n - (b[1] - b[0]))


_SCHEMES = {
    "holdout10": _Scheme("holdout10", "10 random 90/10 hold-outs", 10, 2, 0.1, True),
    "cv10x10": _Scheme("cv10x10", "10x10 cross-validation", 10, 10, 0.0, False),
    "cv5x2": _Scheme("cv5x2", "5x2 cross-validation", 5, 2, 0.0, False),
    "holdout1": _Scheme("holdout1", "one 2/3-1/3 hold-out", 1, 2, 1.0 / 3.0, True),
}
_SCHEME_ORDER = ("holdout10", "cv10x10", "cv5x2", "holdout1")


@dataclass(frozen=True, slots=True)
class _TestSpec:
    name: str
    scheme: str
    valid: bool
    method: str


_TEST_SPECS = (
    _TestSpec("corrected_resampled_t", "holdout10", True,
              "corrected resampled t (Nadeau & Bengio 2003)"),
    _TestSpec("naive_paired_t_holdout", "holdout10", False, "naive paired t on hold-outs"),
    _TestSpec("corrected_repeated_kfold_t", "cv10x10", True,
              "corrected repeated k-fold t (Bouckaert & Frank 2004)"),
    _TestSpec("naive_paired_t_kfold", "cv10x10", False, "naive paired t on 10x10 CV folds"),
    _TestSpec("sorted_runs_t_learner", "cv10x10", False,
              "sorted-runs t, sorted by learner (Bouckaert 2003)"),
    _TestSpec("sorted_runs_t_difference", "cv10x10", True,
              "sorted-runs t, sorted by difference (Bouckaert 2003)"),
    _TestSpec("bayesian_correlated_t", "cv10x10", True,
              "Bayesian correlated t, P(beyond the tolerance) > 1 - alpha (Corani & Benavoli "
              "2015)"),
    _TestSpec("paired_t_5x2cv", "cv5x2", True, "5x2cv paired t (Dietterich 1998)"),
    _TestSpec("combined_f_5x2cv", "cv5x2", True, "combined 5x2cv F (Alpaydin 1999)"),
    _TestSpec("mcnemar_edwards", "holdout1", True, "McNemar, continuity-corrected (Dietterich 1998)"),
    _TestSpec("mcnemar_uncorrected", "holdout1", True,
              "McNemar, uncorrected (= Cochran's Q for two models)"),
    _TestSpec("mcnemar_exact", "holdout1", True, "McNemar, exact binomial"),
    _TestSpec("proportions_z", "holdout1", False,
              "difference-in-proportions z (Gardner & Brooks 2017, eq. 1)"),
)
_SPEC = {s.name: s for s in _TEST_SPECS}
#: Names of the tests :func:`simulate_tests` can calibrate, in table order.
CALIBRATED_TESTS = tuple(s.name for s in _TEST_SPECS)

_OUTCOMES = ("none", "a_better", "b_better")


# --------------------------------------------------------------------------- replicability

@fill_doc()
def replicability(counts) -> np.ndarray:
    """Bouckaert's (2004) replicability of a test from its outcome counts on each dataset.

    ``R = sum_c n_c (n_c - 1) / (m (m - 1))`` with ``m = sum_c n_c``: the proportion of pairs of
    runs (on the same dataset, with new random partitions) that reach the same outcome.

    Parameters
    ----------
    counts : array-like of shape (..., n_classes)
        Number of runs of the test ending in each outcome class, e.g. (no difference, A
        better, B better). Every dataset must have at least two runs.

    Returns
    -------
    ndarray of shape (...)
        ``R = 1`` when all runs agree; with three classes ``R >= (m - 3) / (3 (m - 1))``,
        which tends to 1/3 as ``m`` grows.

    See Also
    --------
    simulate_tests : The calibration study that reports it for every test.

    References
    ----------
    {refs:bouckaert2004b,bouckaert2004,gardner2017}

    Examples
    --------
    >>> replicability([[10, 0, 0], [5, 5, 0]]).round(4).tolist()
    [1.0, 0.4444]
    """
    c = np.asarray(counts)
    if c.ndim == 0 or c.shape[-1] < 1:
        raise DataError(f"`counts` must have a last axis of outcome classes; got shape {c.shape}.")
    if not np.issubdtype(c.dtype, np.number) or np.any(c < 0) or np.any(c != np.round(c)):
        raise DataError("`counts` must be non-negative integer counts.")
    c = c.astype(np.float64)
    m = c.sum(axis=-1)
    if np.any(m < 2):
        raise DataError(f"replicability needs at least 2 runs per dataset; found "
                        f"{int(m.min())}.")
    return (c * (c - 1.0)).sum(axis=-1) / (m * (m - 1.0))


# --------------------------------------------------------------------------- learners

def _draw_dataset(rng: np.random.Generator, n: int, n_replications: int, rho: float):
    """One dataset's labels, feature noise and all partitions of all schemes.

    Returns ``y`` (n,) bool, ``e`` (n, 2) noise (within-class correlation ``rho``) and ``perm``
    (P, n) permutations: for each scheme in ``_SCHEME_ORDER``, ``n_replications * r`` rows. All
    schemes are always drawn, so a test's results do not depend on which other tests are simulated.
    """
    y = rng.random(n) < 0.5
    z = rng.standard_normal((n, 2))
    e = np.empty_like(z)
    e[:, 0] = z[:, 0]
    e[:, 1] = rho * z[:, 0] + np.sqrt(1.0 - rho * rho) * z[:, 1]
    n_partitions = n_replications * sum(_SCHEMES[s].r for s in _SCHEME_ORDER)
    base = np.broadcast_to(np.arange(n, dtype=np.int32), (n_partitions, n))
    perm = rng.permuted(base, axis=1)
    return y, e, perm


def _centroid_fits(y1, e, bounds):
    """Noise part of the nearest-centroid fits of both learners on every training set.

    ``y1`` (..., n) labels as floats and ``e`` (..., n, 2) noise, rows in permuted order; the
    test blocks are ``[bounds[f], bounds[f+1])`` and training set ``f`` is everything else.
    Returns the threshold ``t`` and the class-mean gap ``g`` of the noise, (..., k, 2), plus
    ``ok`` (both classes present) and ``majority`` (..., k). With signal ``+-mu`` the fitted
    class means are ``mu + m1`` and ``-mu + m0``, so the threshold is ``(m1 + m0) / 2`` and the
    orientation is ``sign(2 mu + m1 - m0)``.
    """
    n = y1.shape[-1]
    starts = bounds[:-1]
    size = np.diff(bounds)
    c1 = np.add.reduceat(y1, starts, axis=-1)
    s_all = np.add.reduceat(e, starts, axis=-2)
    s1 = np.add.reduceat(e * y1[..., None], starts, axis=-2)
    n1 = c1.sum(axis=-1, keepdims=True) - c1
    n0 = (n - size) - n1
    t1 = s1.sum(axis=-2, keepdims=True) - s1
    t0 = s_all.sum(axis=-2, keepdims=True) - s_all - t1
    with np.errstate(invalid="ignore", divide="ignore"):
        m1 = t1 / n1[..., None]
        m0 = t0 / n0[..., None]
    ok = (n1 > 0) & (n0 > 0)
    return 0.5 * (m1 + m0), m1 - m0, ok, n1 >= n0


def _predict(x, t, gap, ok, majority, mu):
    """Nearest-centroid predictions (bool) for features ``x`` given the noise fits."""
    sgn = np.sign(2.0 * mu + gap)
    pred = sgn * (x - t) > 0
    if not np.all(ok):
        pred = np.where(ok, pred, majority)
    return pred


def _block_errors(yp, ep, fits, bounds, n_eval, mu, j):
    """Row errors (..., rows in the first ``n_eval`` test blocks) of learner ``j`` (0 = A on
    x1, 1 = B on x2) with signal ``mu``."""
    t, gap, ok, majority = fits
    size = np.diff(bounds)[:n_eval]
    end = int(bounds[n_eval])
    yv = yp[..., :end]
    x = np.where(yv, mu, -mu) + ep[..., :end, j]
    if np.all(size == size[0]):
        shape = yv.shape[:-1] + (n_eval, int(size[0]))
        pred = _predict(x.reshape(shape), t[..., :n_eval, j, None], gap[..., :n_eval, j, None],
                        ok[..., :n_eval, None], majority[..., :n_eval, None], mu)
        return pred.reshape(yv.shape) != yv
    rep = lambda a: np.repeat(a[..., :n_eval], size, axis=-1)  # noqa: E731
    pred = _predict(x, rep(t[..., j]), rep(gap[..., j]), rep(ok), rep(majority), mu)
    return pred != yv


def _fold_rates(err, bounds, n_eval):
    """Error rate per test block (..., n_eval) from row errors."""
    size = np.diff(bounds)[:n_eval]
    counts = np.add.reduceat(err, bounds[:n_eval], axis=-1, dtype=np.int64)
    return counts / size


# --------------------------------------------------------------------------- tests

def _outcome(pvalue, direction, alpha):
    """0 = no difference, 1 = A better (direction < 0), 2 = B better."""
    reject = np.asarray(pvalue) < alpha  # NaN p-values (degenerate data) do not reject
    return np.where(reject, np.where(np.asarray(direction) < 0, 1, 2), 0).astype(np.int8)


def _two_sided_t(stat, df):
    return get_pvalue(np.asarray(stat, dtype=float), stats.t(df), "two-sided")


def _mcnemar_pvalue(only_a, only_b, correction: str = "edwards"):
    """McNemar's test vectorised over the discordant counts ``b``, ``c``; p = 1 when there is
    no discordant pair.

    ``'edwards'``: ``chi2 = max(|b - c| - 1, 0)^2 / (b + c)`` on 1 df (Dietterich 1998, sec. 3.2;
    the correction never overshoots, as in R's ``mcnemar.test``); ``'none'``:
    ``(b - c)^2 / (b + c)`` (equal to Cochran's Q for two models); ``'exact'``: two-sided
    binomial, ``min(1, 2 P(X <= min(b, c)))``, ``X ~ Bin(b + c, 1/2)``.
    """
    b = np.asarray(only_a, dtype=float)
    c = np.asarray(only_b, dtype=float)
    tot = b + c
    if correction == "exact":
        p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), tot, 0.5))
        return np.where(tot > 0, p, 1.0)
    shift = 1.0 if correction == "edwards" else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        chi2 = np.maximum(np.abs(b - c) - shift, 0.0) ** 2 / tot
    return np.where(tot > 0, stats.chi2.sf(chi2, 1), 1.0)


def _test_pvalues(name, ra, rb, ea, eb, n, rope=0.01):
    """Two-sided p-values and directions (< 0: A has the lower error) of test ``name``.

    ``ra``/``rb`` are error rates (..., r, n_eval) of learners A and B on the test blocks of
    ``r`` partitions; ``ea``/``eb`` row errors (..., r, rows), used by the single hold-out
    tests. The statistics are :mod:`replikit.compare._kernels`. For the Bayesian correlated t
    the "p-value" is ``1 - max(p_left, p_right)``, the posterior probability of not being
    practically better (outside ``+-rope``), so that ``p < alpha`` declares a difference when
    one side has posterior probability above ``1 - alpha`` (0.95: Benavoli et al. 2017).
    """
    from . import _kernels as K

    scheme = _SCHEMES[_SPEC[name].scheme]
    d = ra - rb
    lead = d.shape[:-2]
    with np.errstate(invalid="ignore", divide="ignore"):
        if name in ("corrected_resampled_t", "corrected_repeated_kfold_t"):
            size = np.diff(scheme.bounds(n))[: scheme.n_eval]
            ratio = float(np.mean(size) / np.mean(n - size))
            stat, _, df = K.t_corrected(d.reshape(lead + (-1,)), ratio)
            return _two_sided_t(stat, df), stat
        if name == "bayesian_correlated_t":
            size = np.diff(scheme.bounds(n))[: scheme.n_eval]
            ratio = float(np.mean(size) / np.mean(n - size))
            flat = d.reshape(lead + (-1,))
            _, scale, df = K.t_corrected(flat, ratio)
            mean = flat.mean(axis=-1)
            p_left = stats.t.cdf((-rope - mean) / scale, df)   # P(mu < -rope): A better
            p_right = stats.t.sf((rope - mean) / scale, df)    # P(mu > rope): B better
            return 1.0 - np.maximum(p_left, p_right), p_right - p_left
        if name in ("naive_paired_t_holdout", "naive_paired_t_kfold"):
            stat, _, df = K.t_naive(d.reshape(lead + (-1,)))
            return _two_sided_t(stat, df), stat
        if name.startswith("sorted_runs_t_"):
            stat, _, df = K.t_sorted_runs(ra, rb, sort=name.rsplit("_", 1)[1])
            return _two_sided_t(stat, df), stat
        if name == "paired_t_5x2cv":
            stat, _, df = K.t_5x2(d)
            return _two_sided_t(stat, df), stat
        if name == "combined_f_5x2cv":
            stat, df1, df2 = K.f_5x2(d)
            p = get_pvalue(np.asarray(stat, dtype=float), stats.f(df1, df2), "greater")
            return p, d.mean(axis=(-2, -1))
        if name == "proportions_z":
            n_test = int(np.diff(scheme.bounds(n))[0])
            stat = K.z_proportions(ra[..., 0, 0], rb[..., 0, 0], n_test)
            return get_pvalue(np.asarray(stat, dtype=float), stats.norm, "two-sided"), stat
        if name.startswith("mcnemar_"):
            only_b = (~ea & eb).sum(axis=(-2, -1))  # A right, B wrong
            only_a = (ea & ~eb).sum(axis=(-2, -1))  # A wrong, B right
            correction = {"mcnemar_edwards": "edwards", "mcnemar_uncorrected": "none",
                          "mcnemar_exact": "exact"}[name]
            return _mcnemar_pvalue(only_a, only_b, correction), only_a - only_b
    raise ParameterError(f"unknown test {name!r}.")  # unreachable after validation


def _scheme_design(y, e, perm, scheme, n):
    """Permuted labels and noise of a scheme's partitions and the fits on their training sets.

    ``y`` (B, n), ``e`` (B, n, 2), ``perm`` (B, P, n) -> ``yp`` (B, P, n), ``ep`` (B, P, n, 2),
    ``fits`` (see :func:`_centroid_fits`) and the block ``bounds``.
    """
    yp = np.take_along_axis(y[:, None, :], perm, axis=2)
    ep = np.stack([np.take_along_axis(e[:, None, :, j], perm, axis=2) for j in (0, 1)], -1)
    bounds = scheme.bounds(n)
    return yp, ep, _centroid_fits(yp.astype(np.float64), ep, bounds), bounds


def _learner_rates(design, scheme, n_replications, mu, j):
    """Error rates (B, n_replications, r, n_eval) and row errors (B, n_replications, r, rows)
    of learner ``j``."""
    yp, ep, fits, bounds = design
    err = _block_errors(yp, ep, fits, bounds, scheme.n_eval, mu, j)
    shape = (yp.shape[0], n_replications, scheme.r)
    rate = _fold_rates(err, bounds, scheme.n_eval).reshape(shape + (scheme.n_eval,))
    return rate, err.reshape(shape + (-1,))


def _simulate_chunk(root, indices, n, n_replications, rho, mus_a, mu_b, tests, alpha, rope):
    """Outcome counts (n_settings, n_tests, len(indices), 3) for the datasets ``indices``."""
    draws = [_draw_dataset(task_rng(root, ("dataset", int(i))), n, n_replications, rho)
             for i in indices]
    y = np.stack([dr[0] for dr in draws])                       # (B, n)
    e = np.stack([dr[1] for dr in draws])                       # (B, n, 2)
    perm = np.stack([dr[2] for dr in draws])                    # (B, P, n)
    out = np.zeros((len(mus_a), len(tests), len(indices), 3), dtype=np.int32)
    offset = 0
    for sname in _SCHEME_ORDER:
        scheme = _SCHEMES[sname]
        n_p = n_replications * scheme.r
        names = [t for t in tests if _SPEC[t].scheme == sname]
        p = perm[:, offset:offset + n_p]
        offset += n_p
        if not names:
            continue
        design = _scheme_design(y, e, p, scheme, n)
        rate_b, err_b = _learner_rates(design, scheme, n_replications, mu_b, 1)
        for s, mu_a in enumerate(mus_a):
            rate_a, err_a = _learner_rates(design, scheme, n_replications, mu_a, 0)
            for name in names:
                cls = _outcome(*_test_pvalues(name, rate_a, rate_b, err_a, err_b, n, rope),
                               alpha)
                ti = tests.index(name)
                for c in range(3):
                    out[s, ti, :, c] = (cls == c).sum(axis=1)
    return out


def _simulate_chunk_worker(*args):
    """:func:`_simulate_chunk` in a joblib worker: one BLAS and one OpenMP thread."""
    with worker_limits():
        return _simulate_chunk(*args)


# --------------------------------------------------------------------------- population errors

def _expected_error(t, gap, ok, majority, mu):
    """Closed-form error of fitted nearest-centroid rules on the population:
    ``1/2 [P(pred 0 | y=1) + P(pred 1 | y=0)]`` with ``x | y ~ N(+-mu, 1)``."""
    sgn = np.sign(2.0 * mu + gap)
    cdf = stats.norm.cdf
    e1 = np.where(sgn > 0, cdf(t - mu), np.where(sgn < 0, cdf(mu - t), 1.0))
    e0 = np.where(sgn > 0, cdf(-t - mu), np.where(sgn < 0, cdf(t + mu), 0.0))
    err = 0.5 * (e1 + e0)
    return np.where(ok, err, 0.5)


def _sample_errors(t, gap, ok, majority, mu, x1_sorted, x0_sorted, x_rows, y_rows):
    """Errors of T fitted rules on a fixed evaluation sample, two ways (both exact):

    * per rule: its error rate on the sample (T,), by binary search in the sorted class-wise
      features;
    * per row: the share of the T rules that misclassify the row (N,), by binary search in the
      sorted thresholds.
    """
    sgn = np.sign(2.0 * mu + gap)
    n1, n0 = x1_sorted.size, x0_sorted.size
    n_all = n1 + n0
    ss = np.searchsorted
    pos = ok & (sgn > 0)
    neg = ok & (sgn < 0)
    # per rule
    e_pos = ss(x1_sorted, t, "right") + (n0 - ss(x0_sorted, t, "right"))
    e_neg = (n1 - ss(x1_sorted, t, "left")) + ss(x0_sorted, t, "left")
    const = np.where(ok, n1, np.where(majority, n0, n1))  # sign 0 predicts 0; else majority
    per_rule = np.where(pos, e_pos, np.where(neg, e_neg, const)) / n_all
    # per row
    tp = np.sort(t[pos])
    tn = np.sort(t[neg])
    n_zero = int(np.sum(ok & (sgn == 0)))
    n_const1 = int(np.sum(~ok & majority))
    n_const0 = int(np.sum(~ok & ~majority))
    wrong1 = (tp.size - ss(tp, x_rows, "left")) + ss(tn, x_rows, "right") + n_zero + n_const0
    wrong0 = ss(tp, x_rows, "left") + (tn.size - ss(tn, x_rows, "right")) + n_const1
    per_row = np.where(y_rows, wrong1, wrong0) / t.size
    return per_rule, per_row


def _population(root, mus_a, mu_b, rho, sizes, n_population, n_sets):
    """Population errors of both learners for every setting and training size."""
    rng = task_rng(root, ("population",))
    y = rng.random(n_population) < 0.5
    z = rng.standard_normal((n_population, 2))
    e = np.column_stack([z[:, 0], rho * z[:, 0] + np.sqrt(1.0 - rho * rho) * z[:, 1]])
    srt = {(j, c): np.sort(e[y == c, j]) for j in (0, 1) for c in (True, False)}
    rows = []
    for n_tr in sizes:
        trng = task_rng(root, ("population-training", int(n_tr)))
        ty = (trng.random((n_sets, n_tr)) < 0.5).astype(np.float64)
        tz = trng.standard_normal((n_sets, n_tr, 2))
        te = np.stack([tz[..., 0], rho * tz[..., 0] + np.sqrt(1 - rho * rho) * tz[..., 1]], -1)
        # one "fold" holding no rows: the training set is the whole sample
        fits = _centroid_fits(np.concatenate([np.zeros((n_sets, 1)), ty], axis=1),
                              np.concatenate([np.zeros((n_sets, 1, 2)), te], axis=1),
                              np.array([0, 1, n_tr + 1]))
        t, gap = fits[0][:, 0], fits[1][:, 0]
        ok, maj = fits[2][:, 0], fits[3][:, 0]
        res = {}
        for j, mu in ((1, mu_b),) + tuple((0, m) for m in mus_a):
            if (j, mu) in res:
                continue
            x_rows = np.where(y, mu, -mu) + e[:, j]
            res[(j, mu)] = (
                _sample_errors(t[:, j], gap[:, j], ok, maj, mu, mu + srt[(j, True)],
                               -mu + srt[(j, False)], x_rows, y),
                _expected_error(t[:, j], gap[:, j], ok, maj, mu).mean(),
            )
        (rule_b, row_b), exact_b = res[(1, mu_b)]
        for s, mu_a in enumerate(mus_a):
            (rule_a, row_a), exact_a = res[(0, mu_a)]
            diff_rule = rule_b - rule_a
            var = diff_rule.var(ddof=1) / n_sets + (row_b - row_a).var(ddof=1) / n_population
            rows.append({
                "setting": s, "n_train": int(n_tr), "mu_a": mu_a, "mu_b": mu_b,
                "error_a": float(row_a.mean()), "error_b": float(row_b.mean()),
                "difference": float(row_b.mean() - row_a.mean()),
                "difference_se": float(np.sqrt(var)),
                "exact_error_a": float(exact_a), "exact_error_b": float(exact_b),
                "exact_difference": float(exact_b - exact_a),
                "bayes_error_a": float(stats.norm.cdf(-mu_a)),
                "bayes_error_b": float(stats.norm.cdf(-mu_b)),
                "n_population": int(n_population), "n_training_sets": int(n_sets),
            })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- result

@renamed_fields(n_replications="n_repeats")
@dataclass(frozen=True, slots=True)
class CalibrationResult(Result):
    """Type I error, power and replicability of the comparison tests: see :func:`simulate_tests`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (test, setting): ``test, method, scheme, valid`` (the literature's verdict:
        False for the naive t and the proportions z), ``setting, nominal_difference,
        true_difference, rejection_rate, mc_se, reject_a_better, reject_b_better,
        replicability, replicability_se, n_datasets, n_repeats``. ``true_difference`` is the
        population error of learner B minus that of learner A at the test's training-set size
        (from :attr:`population`); at ``nominal_difference = 0`` the rejection rate is the
        type I error, elsewhere the power.
    population : pandas.DataFrame
        Population errors per (setting, training size), estimated on an independent sample of
        ``n_population`` rows (see :func:`simulate_tests`).
    tests : tuple of str
        The tests simulated (ids of :data:`CALIBRATED_TESTS`).
    differences : tuple of float
        The nominal differences (Bayes-error differences) simulated; 0 is always included.
    alpha : float
        Significance level of every test.
    n_datasets, n_rows : int
        Datasets per setting and rows per dataset.
    n_repeats : int
        Runs of each test per dataset with new partitions (``n_replications`` before replikit
        0.2).
    runtime_seconds : float
        Time the simulation took.
    settings : dict
        All inputs, for provenance.

    See Also
    --------
    simulate_tests : The study that returns it.
    plot_calibration : Its figures (:meth:`plot`).

    References
    ----------
    {refs:bouckaert2004,bouckaert2004b,dietterich1998,nadeau2003}

    Examples
    --------
    >>> res = simulate_tests(n_datasets=20, n_rows=100, differences=(0.1,),
    ...                      tests=["corrected_repeated_kfold_t"], n_repeats=2,
    ...                      n_population=100_000, n_training_sets=200, random_state=0)
    >>> res.type_one_error()[["test", "valid"]].values.tolist()
    [['corrected_repeated_kfold_t', True]]
    """

    table: pd.DataFrame
    population: pd.DataFrame
    tests: tuple
    differences: tuple
    alpha: float
    n_datasets: int
    n_rows: int
    n_repeats: int
    runtime_seconds: float
    settings: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        """What was simulated."""
        return (f"Calibration of the comparison tests: {number(self.n_datasets)} datasets x "
                f"{number(self.n_rows)} rows, {number(self.n_repeats)} runs per dataset")

    def to_frame(self) -> pd.DataFrame:
        """The long table (a copy).

        Returns
        -------
        pandas.DataFrame
            One row per (test, setting).
        """
        return self.table.copy()

    def to_dict(self) -> dict:
        """The settings and both tables in JSON types.

        Returns
        -------
        dict
            ``runtime_seconds``, ``settings``, ``table`` and ``population`` (records).
        """
        from ..results import to_jsonable

        return to_jsonable({"runtime_seconds": self.runtime_seconds, "settings": self.settings,
                            "table": self.table, "population": self.population})

    def type_one_error(self) -> pd.DataFrame:
        """Rows of :attr:`table` at ``nominal_difference == 0`` (equal population errors).

        Returns
        -------
        pandas.DataFrame
            One row per test.
        """
        t = self.table
        return t[t["nominal_difference"] == 0.0].reset_index(drop=True)

    def power_table(self, values: str = "rejection_rate") -> pd.DataFrame:
        """Wide table of ``values``: one row per test, one column per nominal difference.

        Parameters
        ----------
        values : str, default 'rejection_rate'
            A column of :attr:`table` (``'replicability'``, ``'mc_se'``, ...).

        Returns
        -------
        pandas.DataFrame
            Tests (ids) as rows, nominal differences as columns.
        """
        t = self.table
        wide = t.pivot_table(index="test", columns="nominal_difference", values=values,
                             sort=False)
        return wide.reindex(list(self.tests))

    def plot(self, ax=None, *, measure: str = "rejection_rate"):
        """Rejection rate (or replicability) of each test against the true difference.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        measure : {'rejection_rate', 'replicability'}, default 'rejection_rate'
            What is drawn (:func:`plot_calibration`).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        return plot_calibration(self, measure=measure, ax=ax)

    def __str__(self) -> str:
        pop = self.population
        lines = [f"Calibration of comparison tests: {number(self.n_datasets)} datasets x "
                 f"{number(self.n_rows)} rows, {number(self.n_repeats)} runs per dataset, "
                 f"alpha = {number(self.alpha)}, runtime {self.runtime_seconds:.1f} s"]
        null = pop[pop["setting"] == 0]
        if not null.empty:
            lines.append("Population errors under the null (independent sample of "
                         f"{number(int(null['n_population'].iloc[0]))} rows):")
            for r in null.itertuples():
                lines.append(f"  n_train={r.n_train}: A {r.error_a:.4f}, B {r.error_b:.4f}, "
                             f"B - A = {r.difference:+.4f} (SE {r.difference_se:.4f})")
        fmt = lambda v: f"{v:.3f}"  # noqa: E731
        t1 = self.type_one_error()
        if not t1.empty:
            lines.append("Type I error (rejection rate at equal population errors) and "
                         "replicability:")
            show = t1[["test", "valid", "rejection_rate", "mc_se", "replicability",
                       "replicability_se"]].assign(test=[test_name(t) for t in t1["test"]])
            lines.append(show.to_string(index=False, float_format=fmt))
        if len(self.differences) > 1:
            n_tr = int(pop["n_train"].max())  # 90% of the rows, unless only 5x2/hold-out
            at = pop[pop["n_train"] == n_tr].sort_values("setting")["difference"]
            diffs = ", ".join(f"{number(d)} -> {v:.4f}" for d, v in
                              zip(self.differences, at, strict=True))
            lines.append(f"Rejection rate (type I error at 0, power elsewhere) by nominal "
                         f"difference (true difference B - A at n_train={n_tr}: {diffs}):")
            for values in ("rejection_rate", "replicability"):
                if values == "replicability":
                    lines.append("Replicability by nominal difference:")
                wide = self.power_table(values)
                wide.index = [test_name(t) for t in wide.index]
                lines.append(wide.to_string(float_format=fmt))
        return "\n".join(lines)


# --------------------------------------------------------------------------- public function

def _simulate_tests_iv(n_datasets, n_rows, differences, tests, n_repeats, base_error,
                       correlation, alpha, n_population, n_training_sets, n_jobs, chunk_size):
    n_datasets = check_int(n_datasets, "n_datasets", min_value=2)
    n_rows = check_int(n_rows, "n_rows", min_value=20, max_value=10_000)
    n_repeats = check_int(n_repeats, "n_repeats", min_value=1)
    base_error = check_probability(base_error, "base_error")
    if base_error >= 0.5:
        raise ParameterError(f"`base_error` must be below 0.5 (a chance-level learner has "
                             f"error 0.5); got {base_error}.")
    correlation = check_float(correlation, "correlation")
    if not -1.0 < correlation < 1.0:
        raise ParameterError(f"`correlation` must be strictly between -1 and 1; got "
                             f"{correlation}.")
    alpha = check_probability(alpha, "alpha")
    n_population = check_int(n_population, "n_population", min_value=100_000)
    n_training_sets = check_int(n_training_sets, "n_training_sets", min_value=100)
    n_jobs = 1 if n_jobs is None else check_int(n_jobs, "n_jobs", min_value=1)
    if chunk_size is not None:
        chunk_size = check_int(chunk_size, "chunk_size", min_value=1)
    if isinstance(differences, str | bytes) or np.ndim(differences) > 1:
        raise ParameterTypeError(f"`differences` must be a sequence of numbers; got "
                                 f"{differences!r}.")
    try:
        diffs = np.atleast_1d(np.asarray(differences, dtype=float))
    except (TypeError, ValueError):
        raise ParameterTypeError(f"`differences` must be a sequence of numbers; got "
                                 f"{differences!r}.") from None
    if not np.all(np.isfinite(diffs)) or np.any(diffs < 0) or np.any(diffs >= base_error):
        raise ParameterError(f"`differences` must be finite Bayes-error differences in "
                             f"[0, base_error={base_error:g}); got {diffs.tolist()}.")
    diffs = np.unique(np.concatenate([[0.0], diffs]))
    if isinstance(tests, str):
        tests = list(CALIBRATED_TESTS) if tests == "all" else [tests]
    try:
        tests = list(tests)
    except TypeError:
        raise ParameterTypeError(f"`tests` must be 'all' or a list of test names; got "
                                 f"{tests!r}.") from None
    unknown = [t for t in tests if t not in _SPEC]
    if not tests or unknown:
        raise ParameterError(f"`tests` must be 'all' or a list of {list(CALIBRATED_TESTS)}; "
                             f"got unknown {unknown if unknown else tests!r}.")
    tests = [t for t in CALIBRATED_TESTS if t in tests]  # table order, no duplicates
    return (n_datasets, n_rows, tuple(float(d) for d in diffs), tests, n_repeats,
            base_error, correlation, alpha, n_population, n_training_sets, n_jobs, chunk_size)


@renamed(n_replications="n_repeats", rope="tolerance")
@fill_doc()
@single_blas  # batched small products: BLAS threads only add contention
def simulate_tests(*, n_datasets: int = 1000, n_rows: int = 300,
                   differences=(0.0, 0.025, 0.05, 0.075, 0.1, 0.15), tests="all",
                   n_repeats: int = 10, base_error: float = 0.3,
                   correlation: float = 0.5, alpha: float = 0.05, tolerance: float = 0.01,
                   n_population: int = 1_000_000, n_training_sets: int = 2000,
                   random_state=None, n_jobs: int | None = 1, chunk_size: int | None = None,
                   progress=None) -> CalibrationResult:
    """Type I error, power and replicability of the comparison tests on simulated data.

    For each nominal difference, ``n_datasets`` datasets of ``n_rows`` rows are drawn; on each
    dataset every test is run ``n_repeats`` times with new random partitions, comparing a
    nearest-centroid learner on feature 1 (A) with one on feature 2 (B). See the module
    docstring for the data-generating process, the learners, the schemes and the estimators.

    Parameters
    ----------
    n_datasets : int, default 1000
        Datasets per setting (Monte-Carlo sample size).
    n_rows : int, default 300
        Rows per dataset (20 to 10,000).
    differences : sequence of float, default (0.0, 0.025, 0.05, 0.075, 0.1, 0.15)
        Nominal differences ``Phi(-mu_b) - Phi(-mu_a)`` of the Bayes errors of the two
        features (how much better learner A is), each in ``[0, base_error)``; 0, the null, is
        always added. The true difference at each training size is measured on an independent
        sample and reported.
    tests : 'all', str or list of str, default 'all'
        Names from :data:`CALIBRATED_TESTS`.
    n_repeats : int, default 10
        Runs ``m`` of each test per dataset with new partitions (Bouckaert's replicability
        needs ``m >= 2``; with ``m = 1`` it is NaN; ``n_replications`` before replikit 0.2).
    base_error : float, default 0.3
        Bayes error of learner B's feature.
    correlation : float, default 0.5
        Within-class correlation of the two features.
    alpha : float, default 0.05
        Significance level of every test; the Bayesian correlated t declares a difference when
        the posterior probability of one side beyond the tolerance exceeds ``1 - alpha``.
    tolerance : float, default 0.01
        Half-width of the Bayesian test's region of practical equivalence, in error rate
        (``rope`` before replikit 0.2).
    n_population : int, default 1000000
        Rows of the independent sample on which population errors are estimated (>= 100,000).
    n_training_sets : int, default 2000
        Training sets per size averaged for the population errors.
    random_state : None, int or numpy.random.Generator, default None
        Root of every dataset's stream; ``None`` draws fresh entropy (kept in
        ``settings["random_state_entropy"]`` to reproduce the run).
    n_jobs : int, default 1
        Worker processes (joblib) over chunks of datasets; results do not depend on it.
    chunk_size : int, optional
        Datasets per chunk (default: about 250 MB of arrays per chunk); results do not depend
        on it.
    progress : callable, optional
        Called with the number of datasets finished after each chunk.

    Returns
    -------
    CalibrationResult
        The rates per test and setting, and the population errors.

    See Also
    --------
    plot_calibration : The figures of the result.
    replicability : Bouckaert's replicability of one test.
    replikit.compare.corrected_repeated_kfold_ttest : The test the study recommends.

    Notes
    -----
    Statistics: Nadeau & Bengio (2003) corrected resampled t, ``t = mean(d) / sqrt((1/n +
    n_test/n_train) s^2)``, df = n - 1 (Gardner & Brooks 2017, Table 1 and eq. 3); Bouckaert &
    Frank (2004) the same on 10x10 CV; Dietterich (1998) 5x2cv t and McNemar; Alpaydın (1999)
    5x2cv F; Bouckaert (2003) sorted runs; the naive t (Gardner & Brooks 2017, eq. 2) and the
    proportions z (eq. 1) are included to show that they are invalid. Replicability ``R =
    sum_c n_c (n_c - 1) / (m (m - 1))`` (Bouckaert 2004).

    References
    ----------
    {refs:dietterich1998,nadeau2003,bouckaert2004,bouckaert2003,bouckaert2004b,alpaydin1999,corani2015,mcnemar1947,edwards1948,gardner2017}

    Examples
    --------
    >>> res = simulate_tests(n_datasets=20, n_rows=100, differences=(0.1,),
    ...                      tests=["corrected_repeated_kfold_t"], n_repeats=2,
    ...                      n_population=100_000, n_training_sets=200)
    >>> res.table[["test", "nominal_difference", "rejection_rate"]].shape
    (2, 3)
    """
    (n_datasets, n_rows, diffs, tests, m, base_error, rho, alpha, n_population, n_sets,
     n_jobs, chunk_size) = _simulate_tests_iv(
        n_datasets, n_rows, differences, tests, n_repeats, base_error, correlation,
        alpha, n_population, n_training_sets, n_jobs, chunk_size)
    rope = check_float(tolerance, "tolerance", min_value=0.0)
    start = time.perf_counter()
    root = root_seed_sequence(random_state)
    mu_b = float(-stats.norm.ppf(base_error))
    mus_a = [float(-stats.norm.ppf(base_error - d)) for d in diffs]
    if chunk_size is None:
        per_dataset = m * sum(s.r for s in _SCHEMES.values()) * n_rows * 80
        chunk_size = int(np.clip(250e6 // per_dataset, 1, 500))
    chunks = [np.arange(i, min(i + chunk_size, n_datasets))
              for i in range(0, n_datasets, chunk_size)]
    args = (n_rows, m, rho, mus_a, mu_b, tests, alpha, rope)
    if n_jobs == 1 or len(chunks) == 1:
        parts = []
        for idx in chunks:
            parts.append(_simulate_chunk(root, idx, *args))
            if progress is not None:
                progress(len(idx))
    else:
        from joblib import Parallel, delayed

        parts = []
        gen = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_simulate_chunk_worker)(root, idx, *args) for idx in chunks)
        for idx, part in zip(chunks, gen, strict=True):
            parts.append(part)
            if progress is not None:
                progress(len(idx))
    counts = np.concatenate(parts, axis=2)  # (settings, tests, datasets, 3)

    sizes = sorted({_SCHEMES[_SPEC[t].scheme].n_train(n_rows) for t in tests})
    population = _population(root, mus_a, mu_b, rho, sizes, n_population, n_sets)
    true_diff = population.set_index(["setting", "n_train"])["difference"]

    rejected = (counts[..., 1] + counts[..., 2]) / m        # (S, T, N) per-dataset shares
    rate = rejected.mean(axis=2)
    mc_se = np.sqrt(((rejected - rate[..., None]) ** 2).mean(axis=2) / n_datasets)
    rate_a = (counts[..., 1] / m).mean(axis=2)
    rate_b = (counts[..., 2] / m).mean(axis=2)
    if m >= 2:
        rep = replicability(counts)
        rep_mean = rep.mean(axis=2)
        rep_se = rep.std(axis=2, ddof=1) / np.sqrt(n_datasets)
    else:
        rep_mean = rep_se = np.full(rate.shape, np.nan)
    rows = []
    for ti, name in enumerate(tests):
        spec = _SPEC[name]
        scheme = _SCHEMES[spec.scheme]
        for s, d in enumerate(diffs):
            rows.append({
                "test": name, "method": spec.method, "scheme": scheme.label,
                "valid": spec.valid, "setting": s, "nominal_difference": d,
                "true_difference": float(true_diff.loc[(s, scheme.n_train(n_rows))]),
                "rejection_rate": float(rate[s, ti]), "mc_se": float(mc_se[s, ti]),
                "reject_a_better": float(rate_a[s, ti]),
                "reject_b_better": float(rate_b[s, ti]),
                "replicability": float(rep_mean[s, ti]),
                "replicability_se": float(rep_se[s, ti]),
                "n_datasets": n_datasets, "n_repeats": m,
            })
    settings: dict[str, Any] = {
        "n_datasets": n_datasets, "n_rows": n_rows, "differences": list(diffs),
        "tests": list(tests), "n_repeats": m, "base_error": base_error,
        "correlation": rho, "alpha": alpha, "tolerance": rope, "n_population": n_population,
        "n_training_sets": n_sets, "random_state_entropy": root.entropy,
        "learners": "nearest centroid on x1 (A) and on x2 (B)",
        "schemes": {k: v.label for k, v in _SCHEMES.items()},
    }
    return CalibrationResult(
        table=pd.DataFrame(rows), population=population, tests=tuple(tests),
        differences=diffs, alpha=alpha, n_datasets=n_datasets, n_rows=n_rows,
        n_repeats=m, runtime_seconds=time.perf_counter() - start, settings=settings)


# --------------------------------------------------------------------------- figure

@fill_doc()
def plot_calibration(result: CalibrationResult, *, measure: str = "rejection_rate",
                     tests=None, ax=None):
    """Rejection rate (or replicability) of each test against the true difference.

    In the style of Bouckaert & Frank (2004): one line per test, valid tests solid, invalid
    tests (naive t, proportions z) dashed; a band of +-1.96 Monte-Carlo SEs around each line;
    for the rejection rate a horizontal line at the level ``alpha`` (the type I error the
    valid tests should hold at difference 0). Each line is labelled by the test's name.

    Parameters
    ----------
    result : CalibrationResult
        From :func:`simulate_tests`.
    measure : {'rejection_rate', 'replicability'}, default 'rejection_rate'
        What is drawn.
    tests : list of str, optional
        Subset of ``result.tests`` to draw.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    See Also
    --------
    simulate_tests : The study.
    CalibrationResult.plot : The same figure from the result.

    References
    ----------
    {refs:bouckaert2004}

    Examples
    --------
    >>> res = simulate_tests(n_datasets=10, n_rows=60, differences=(),
    ...                      tests=["corrected_repeated_kfold_t", "naive_paired_t_kfold"],
    ...                      n_repeats=2, n_population=100_000, n_training_sets=100,
    ...                      random_state=0)
    >>> ax = plot_calibration(res)
    >>> ax.get_legend_handles_labels()[1]
    ['corrected repeated k-fold t-test', 'naive paired t-test, 10x10 CV (invalid)']
    """
    if not isinstance(result, CalibrationResult):
        raise ParameterTypeError(f"`result` must be a CalibrationResult; got "
                                 f"{type(result).__name__}.")
    if measure not in ("rejection_rate", "replicability"):
        raise ParameterError(f"`measure` must be 'rejection_rate' or 'replicability'; got "
                             f"{measure!r}.")
    names = list(result.tests) if tests is None else list(tests)
    unknown = [t for t in names if t not in result.tests]
    if unknown:
        raise ParameterError(f"`tests` {unknown} were not simulated; simulated: "
                             f"{list(result.tests)}.")
    se_col = "mc_se" if measure == "rejection_rate" else "replicability_se"
    ax = axes_or_new(ax, 8.0, 4.2)
    import matplotlib as mpl

    tab = mpl.colormaps["tab20"].colors
    colours = tab[0::2] + tab[1::2]  # 20 distinct colours, the strong ones first
    t = result.table
    for i, name in enumerate(names):
        g = t[t["test"] == name].sort_values("true_difference")
        x = g["true_difference"].to_numpy()
        y = g[measure].to_numpy()
        se = g[se_col].fillna(0.0).to_numpy()
        c = colours[i % len(colours)]
        valid = bool(g["valid"].iloc[0])
        ax.plot(x, y, ls="-" if valid else "--", marker="o", ms=3, color=c,
                label=test_name(name) + ("" if valid else " (invalid)"))
        ax.fill_between(x, y - 1.96 * se, y + 1.96 * se, color=c, alpha=0.15, lw=0)
    if measure == "rejection_rate":
        ax.axhline(result.alpha, color="black", lw=0.8, ls=":")
        ax.set_ylabel("rejection rate (type I error at 0, else power)")
    else:
        ax.set_ylabel("replicability R")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("true difference in population error (B - A)")
    ax.set_title(f"{number(result.n_datasets)} datasets x {number(result.n_rows)} rows, "
                 f"{number(result.n_repeats)} runs each", fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return ax
