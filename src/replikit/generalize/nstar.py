"""How many experiments are needed: n-Gen and n* (Matteucci et al. 2024, Algorithm 1), by
default from the asymptotic law of the MMD (Gretton et al. 2012)."""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import REMOVED_IN, renamed
from .._format import number
from .._random import check_random_state
from .._threads import single_blas
from .._validation import check_int, check_probability
from ..errors import DataError, ParameterError, ParameterTypeError
from ..methods import BootstrapMethod
from ..results import Result
from ._mmd import MMDDistribution, check_analysis_memory, mmd_distribution, n_sizes
from .kernels import Kernel

__all__ = ["NStarResult", "fit_nstar", "estimate_nstar", "nstar_bound", "iterate_nstar",
           "agreement_bound",
           "check_levels", "check_tolerance", "kernel_moments", "gamma_nstar", "ESTIMATORS"]

#: Why the jackknife fails (``ci_kind`` ``'at bound'``; the interval is then the conservative
#: :func:`agreement_bound`).
NO_JACKKNIFE = ("the kernel's moments sit at a bound of their law (h = 1) when an experiment "
                "is left out, so the jackknife cannot measure how uncertain n* is (it would "
                "give a zero-width interval)")

#: Why the jackknife fails (``ci_kind`` ``'flat'``; the interval is then the conservative
#: :func:`agreement_bound`).
FLAT_JACKKNIFE = ("n* barely moves when an experiment is left out (a stationary point of the "
                  "results' law, e.g. two camps of equal size), so the jackknife would give a "
                  "near-zero-width interval that covers far below its level")

#: The jackknife of log n* is taken as failed below this per-experiment SD (``se_log *
#: sqrt(N)``): a flat leave-one-out curve, where the interval is near zero width and covers
#: 0.74-0.79 (docs/generalize.md, few models), not the sampling noise it should measure.
FLAT_SD = 0.05

#: n* estimators: the moment-matched asymptotic quantile (default) and Algorithm 1's log-log fit.
ESTIMATORS = ("gamma", "loglog")


def check_levels(confidence_level, name: str = "confidence_level") -> np.ndarray:
    """Levels ``alpha*`` of the generalizability statement (one or a grid), each strictly
    between 0 and 1.

    ``name`` is the parameter named in error messages.
    """
    try:
        a = np.atleast_1d(np.asarray(confidence_level, dtype=float))
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be numbers strictly between 0 and 1; got "
                             f"{confidence_level!r}.") from None
    if a.ndim != 1 or a.size == 0:
        raise ParameterError(f"`{name}` needs at least one value strictly between 0 and 1; "
                             f"got {confidence_level!r}.")
    for v in a:
        check_probability(float(v), name)
    return a


def check_tolerance(tolerance, name: str = "tolerance") -> np.ndarray:
    """Tolerances ``delta*`` (one or a grid), each strictly between 0 and 1 (eq. 2 maps them to
    ``epsilon*``; 0 asks for identical distributions, 1 accepts anything).

    ``name`` is the parameter named in error messages.
    """
    try:
        d = np.atleast_1d(np.asarray(tolerance, dtype=float))
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be numbers strictly between 0 and 1; got "
                             f"{tolerance!r}.") from None
    if d.ndim != 1 or d.size == 0:
        raise ParameterError(f"`{name}` needs at least one value strictly between 0 and 1; "
                             f"got {tolerance!r}.")
    if np.any(~np.isfinite(d)) or np.any((d <= 0) | (d >= 1)):
        raise ParameterError(f"`{name}` must lie strictly between 0 and 1; got "
                             f"{', '.join(number(v) for v in d)}.")
    return d


def check_delta(delta, name: str = "tolerance") -> np.ndarray:
    """Old name of :func:`check_tolerance` (warns)."""
    warnings.warn("`check_delta` is now `check_tolerance`; the old name will stop working in "
                  f"replikit {REMOVED_IN}.", FutureWarning, stacklevel=2)
    return check_tolerance(delta, name)


def _old_ci_resamples(func):
    """``ci_resamples=B`` (the old form) as ``bootstrap=BootstrapMethod(n_resamples=B)``, or
    ``bootstrap=None`` for 0, with a warning."""
    where = f"{func.__name__}()"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if "ci_resamples" in kwargs:
            if "bootstrap" in kwargs:
                raise ParameterTypeError(f"`ci_resamples` is the old form of `bootstrap` in "
                                         f"{where}; give `bootstrap` only.")
            B = check_int(kwargs.pop("ci_resamples"), "ci_resamples", min_value=0)
            new = f"BootstrapMethod(n_resamples={B})" if B else "None"
            warnings.warn(f"`ci_resamples={B}` is now `bootstrap={new}` in {where}; the old "
                          f"name will stop working in replikit {REMOVED_IN}.", FutureWarning,
                          stacklevel=3)
            kwargs["bootstrap"] = BootstrapMethod(n_resamples=B) if B else None
        return func(*args, **kwargs)

    return wrapper


def check_bootstrap(bootstrap) -> int:
    """The bootstrap resamples of ``bootstrap`` (None or a :class:`~replikit.BootstrapMethod`):
    0 for None."""
    if bootstrap is None:
        return 0
    if not isinstance(bootstrap, BootstrapMethod):
        raise ParameterTypeError("`bootstrap` must be None or "
                                 "replikit.BootstrapMethod(n_resamples=...); got "
                                 f"{type(bootstrap).__name__}.")
    return int(bootstrap.n_resamples)


def fit_nstar(n, q, eps):
    """Algorithm 1's regression: ``log n = beta1 log q_n + beta0``, ``n* = exp(beta1 log eps + beta0)``.

    Parameters
    ----------
    n : array_like
        Subsample sizes.
    q : array_like
        ``alpha*``-quantile of the MMD at each n (``alpha*`` = the confidence level).
    eps : float or array_like
        Threshold(s) ``epsilon*``.

    Returns
    -------
    nstar : numpy.ndarray
        n* for each ``eps`` (at least 1).
    beta0, beta1 : float
        Intercept and slope of the fit (NaN when every quantile is 0).

    See Also
    --------
    estimate_nstar : n* of a set of results, with this fit as ``nstar_loglog``.
    gamma_nstar : n* from the asymptotic law of the MMD (the default estimate).

    Notes
    -----
    Matteucci et al. (2024), eq. (4) and Algorithm 1. Sizes whose quantile is 0 (the two
    subsamples always coincide in the kernel's eyes) carry no information on the slope and are
    left out of the fit, and n* is capped at the smallest such n (there n-Gen(eps) >= alpha* for
    every eps > 0); if every quantile is 0 the study is perfectly generalizable and ``n* = 1``
    (beta's NaN). (genexpy sets n* = 1 as soon as any quantile is 0.) With one positive
    quantile left, the slope is fixed at the distribution-free value -2 (Prop. A.4). ``n*`` is
    never below 1.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    Quantiles that halve when n quadruples (slope -2 on the log-log scale):

    >>> ns, b0, b1 = fit_nstar([1, 4, 16], [0.8, 0.4, 0.2], 0.1)
    >>> round(float(ns[0]), 6), round(b1, 6)
    (64.0, -2.0)
    """
    n = np.asarray(n, dtype=float)
    q = np.asarray(q, dtype=float)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    pos = q > 0
    if not pos.any():
        return np.ones_like(eps), float("nan"), float("nan")
    x = np.log(q[pos])
    y = np.log(n[pos])
    if pos.sum() == 1 or np.ptp(x) == 0:
        b1 = -2.0
        b0 = float(np.mean(y - b1 * x))
    else:
        b1, b0 = np.polyfit(x, y, 1)
    with np.errstate(divide="ignore", over="ignore"):
        ns = np.exp(b1 * np.log(eps) + b0)
    if not pos.all():
        # a zero quantile at size n means n-Gen(eps) >= alpha* for every eps > 0 already
        ns = np.minimum(ns, n[~pos].min())
    return np.maximum(ns, 1.0), float(b0), float(b1)


def kernel_moments(K) -> tuple[float, float]:
    """Unbiased estimates of ``tr(C)`` and ``||C||_HS^2`` of the kernel covariance operator.

    ``C`` is the centred covariance operator of the feature map under the distribution of the
    results; its eigenvalues ``lambda_i`` give the asymptotic law of the MMD (see
    :func:`gamma_nstar`): ``tr(C) = sum lambda_i = E k(x, x) - E k(x, x')`` and
    ``||C||_HS^2 = sum lambda_i^2 = HSIC(X, X)``.

    Parameters
    ----------
    K : array_like, shape (N, N)
        Gram matrix of N >= 4 independent results.

    Returns
    -------
    (trace, hs) : (float, float)
        ``trace`` = mean of the diagonal minus mean of the off-diagonal entries (a U-statistic,
        unbiased); ``hs`` = the unbiased HSIC estimator of Song et al. (2012, eq. 5) with both
        kernels equal to ``K``, also unbiased. ``trace`` is floored at 0; ``hs`` is kept in
        ``[1e-9 trace^2, trace^2]`` (one eigenvalue at most, and not zero).

    Examples
    --------
    Four results, two of each of two rankings, under a 0/1 kernel (the feature map of a fair
    coin, whose covariance operator has the single eigenvalue 1/2): the unbiased trace is
    ``1 - 4/12 = 2/3`` and ``hs`` is capped at ``trace^2`` (one eigenvalue):

    >>> K = np.kron(np.eye(2), np.ones((2, 2)))
    >>> [round(v, 4) for v in kernel_moments(K)]
    [0.6667, 0.4444]

    See Also
    --------
    gamma_nstar : n* from these two moments.

    References
    ----------
    .. [1] Song, L., Smola, A., Gretton, A., Bedo, J. & Borgwardt, K. (2012). Feature Selection
       via Dependence Maximization. Journal of Machine Learning Research, 13, 1393–1434.
    """
    tr, hs = _moments(np.asarray(K, dtype=float))
    return float(tr), float(hs)


def _moments(K, clip: bool = True):
    """(trace, hs) of :func:`kernel_moments` for a Gram matrix or a stack of them (..., N, N);
    ``clip=False``: the unbiased estimates before :func:`_clip_moments`."""
    N = K.shape[-1]
    d = np.diagonal(K, axis1=-2, axis2=-1)
    Kt = K * (1.0 - np.eye(N))
    r = Kt.sum(axis=-1)
    s = r.sum(axis=-1)
    tr = d.mean(axis=-1) - s / (N * (N - 1))
    fro = (Kt * Kt).sum(axis=(-2, -1))
    hs = (fro + s * s / ((N - 1) * (N - 2)) - 2.0 / (N - 2) * (r * r).sum(axis=-1)) / (
        N * (N - 3))
    return _clip_moments(tr, hs) if clip else (tr, hs)


def _at_bound(tr, hs) -> np.ndarray:
    """Where :func:`_clip_moments` would move a positive trace's ``hs``: ``h = tr^2 / hs``
    outside ``(1, 1e9)`` (the Gamma law's shape at its bound). A zero trace (every experiment
    the same: n* = 1, the paper's degenerate case) is not a bound here."""
    tr, hs = np.asarray(tr, float), np.asarray(hs, float)
    return (tr > 0) & ((hs <= 1e-9 * tr * tr) | (hs >= tr * tr))


def _clip_moments(tr, hs):
    tr = np.maximum(tr, 0.0)
    hs = np.clip(hs, 1e-9 * tr * tr, tr * tr)
    return tr, hs


def _moments_leave_one_out(K, clip: bool = True):
    """(trace, hs) of :func:`kernel_moments` with each result left out in turn: two (N,) arrays,
    from closed-form updates of the sums (O(N^2), not N re-evaluations); ``clip=False``: before
    :func:`_clip_moments`."""
    N = K.shape[0]
    d = np.diag(K)
    Kt = K * (1.0 - np.eye(N))
    r = Kt.sum(axis=1)
    s = r.sum()
    q = (Kt * Kt).sum(axis=1)
    fro = q.sum()
    r2 = (r * r).sum()
    m = N - 1
    s_i = s - 2.0 * r
    fro_i = fro - 2.0 * q
    r2_i = r2 - 2.0 * (Kt @ r) + q - r * r
    tr = (d.sum() - d) / m - s_i / (m * (m - 1))
    hs = (fro_i + s_i * s_i / ((m - 1) * (m - 2)) - 2.0 / (m - 2) * r2_i) / (m * (m - 3))
    return _clip_moments(tr, hs) if clip else (tr, hs)


def gamma_nstar(trace, hs, eps, confidence_level=0.95):
    """n* from the asymptotic law of the MMD with a moment-matched Gamma quantile.

    For two independent samples of size n from the same distribution, the squared (biased)
    MMD satisfies ``n MMD^2 -> 2 sum_i lambda_i Z_i^2`` (Gretton et al. (2012), Thm. 12, with
    ``m = n``), ``lambda_i`` the eigenvalues of the kernel covariance operator and ``Z_i`` iid
    N(0, 1); its mean ``2 tr(C) / n`` is exact at every n. Matching the mean and variance of
    ``sum lambda_i Z_i^2`` with a scaled chi-square ``g chi2_h`` (Satterthwaite (1946); the Gamma
    approximation of the MMD's null law of Gretton et al. (2009)), ``g = ||C||^2_HS / tr(C)``,
    ``h = tr(C)^2 / ||C||^2_HS``, the alpha*-quantile of the MMD at n is
    ``sqrt(2 g chi2_h^{-1}(alpha*) / n)``, and it equals ``epsilon*`` at

    ``n* = 2 g chi2_h^{-1}(alpha*) / epsilon*^2``.

    Parameters
    ----------
    trace, hs : float or array_like
        ``tr(C)`` and ``||C||^2_HS`` (:func:`kernel_moments`); broadcast together.
    eps : float or array_like
        ``epsilon*``.
    confidence_level : float or array_like, default 0.95
        ``alpha*``.

    Returns
    -------
    numpy.ndarray
        n*, at least 1 (``trace = 0``: every result is the same in the kernel's eyes, n* = 1).

    See Also
    --------
    kernel_moments : The two moments, estimated without bias.
    fit_nstar : Algorithm 1's log-log extrapolation instead.

    References
    ----------
    .. [1] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.
    .. [2] Gretton, A., Fukumizu, K., Harchaoui, Z. & Sriperumbudur, B. K. (2009). A Fast,
       Consistent Kernel Two-Sample Test. Advances in Neural Information Processing Systems
       22, 673–681.
    .. [3] Satterthwaite, F. E. (1946). An Approximate Distribution of Estimates of Variance
       Components. Biometrics Bulletin, 2(6), 110–114.
    .. [4] Song, L., Smola, A., Gretton, A., Bedo, J. & Borgwardt, K. (2012). Feature Selection
       via Dependence Maximization. Journal of Machine Learning Research, 13, 1393–1434.

    Examples
    --------
    >>> round(float(gamma_nstar(0.5, 0.25, 0.3162, 0.95)), 2)  # one eigenvalue: 2 chi2_1 / 2
    38.42
    """
    from scipy import special  # chi2.ppf(a, h) is 2 gammaincinv(h/2, a); scipy.stats is slow
    # to import

    tr = np.asarray(trace, dtype=float)
    hs = np.asarray(hs, dtype=float)
    e = np.asarray(eps, dtype=float)
    a = np.asarray(confidence_level, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(tr > 0, hs / np.where(tr > 0, tr, 1.0), 0.0)
        h = np.where(tr > 0, tr * tr / np.where(hs > 0, hs, 1.0), 1.0)
        ns = 2.0 * g * (2 * special.gammaincinv(h / 2, a)) / (e * e)
    return np.maximum(np.where(tr > 0, ns, 1.0), 1.0)


def nstar_bound(confidence_level, eps, kappa_sup: float = 1.0):
    """Distribution-free n* (Matteucci et al. 2024, Prop. A.4): a conservative upper bound.

    ``n_bar* = 2 kappa_sup (sqrt(-2 log(1 - alpha*)) + 1)^2 / eps^2`` with
    ``alpha* = confidence_level``, from the concentration bound of Gretton et al. (2012),
    Thm. 8. Eq. (10) of the paper prints
    ``beta0 = log(2 kappa_sup) + log(sqrt(-2 log(1-alpha)) + 1)``; the derivation just above it
    squares the second factor, which is what is implemented.

    Parameters
    ----------
    confidence_level : float or array_like
        ``alpha*``.
    eps : float or array_like
        ``epsilon*``.
    kappa_sup : float, default 1.0
        The kernel's largest value (1 for the four kernels of replikit).

    Returns
    -------
    numpy.ndarray
        The bound on n*.

    See Also
    --------
    estimate_nstar : The data-driven n* (one to two orders of magnitude smaller).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.

    Examples
    --------
    >>> round(float(nstar_bound(0.95, 0.1)), 1)
    2377.4
    """
    a = np.asarray(confidence_level, dtype=float)
    e = np.asarray(eps, dtype=float)
    return 2.0 * kappa_sup * (np.sqrt(-2.0 * np.log1p(-a)) + 1.0) ** 2 / e ** 2


@dataclass(frozen=True, slots=True)
class NStarResult(Result):
    """The n* of one set of results and one kernel, over a grid of alpha* and delta*.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per (alpha*, delta*): ``confidence_level`` (alpha*), ``tolerance`` (delta*),
        ``eps`` (epsilon*), ``nstar`` (the chosen estimator's), ``estimator``, ``nstar_loglog``
        (Algorithm 1's log-log extrapolation, kept for contrast: biased upward at small N),
        ``beta0``, ``beta1`` (its fit), ``nstar_observed`` (smallest n <= N/2 with
        n-Gen(eps) >= alpha*, NaN if none), ``nstar_bound`` (Prop. A.4), ``sufficient``
        (N >= nstar), ``se_log`` (jackknife SE of log n*) and ``ci_low``/``ci_high`` (the 95%
        interval ``exp(log n* ± t_{N-1} se_log)``; NaN for the log-log estimator, which has no
        calibrated interval, and when N < 5), ``ci_kind`` (``'jackknife'``; ``'agreement'``
        when every result is the same in the kernel's eyes — n* = 1, the interval ``[1,
        agreement_bound]``, what N agreeing results cannot rule out; where the jackknife
        fails, ``'at bound'`` (:data:`NO_JACKKNIFE`) and ``'flat'`` (:data:`FLAT_JACKKNIFE`:
        the leave-one-out estimates barely move, ``se_log * sqrt(N) <`` :data:`FLAT_SD`), the
        interval is ``[1, agreement_bound(n_other=...)]``, conservative; ``'few'`` (N < 5: no
        interval); ``'none'`` for the log-log estimator), ``kappa_inf`` (the kernel's smallest
        value) and ``n_other`` (results unlike the most common one), for that bound.
        :meth:`confidence_interval` gives other levels.
    quantiles : pandas.DataFrame
        ``n``, ``confidence_level``, ``q`` (the alpha*-quantile of the MMD at n).
    distribution : MMDDistribution
        The MMD of disjoint subsample pairs at every subsample size.
    N : int
        Number of experiments (results) used.
    kernel : str
        The goal's label (e.g. ``'jaccard(k=1)'``).
    bootstrap : numpy.ndarray or None, shape (n_resamples, len(table))
        n* of every bootstrap resample of the N experiments (the whole estimator re-run), one
        column per table row, when ``bootstrap`` was given to :func:`estimate_nstar`. Not used
        for the interval: its percentiles are not calibrated (docs/generalize.md).

    See Also
    --------
    estimate_nstar : The function that computes it.
    GeneralizabilityResult : n* for every design combination and goal of a study.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> r = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [0, 1, 2]] * 5)
    >>> res = estimate_nstar(r, Kernel("jaccard"), n_resamples=200, random_state=0)
    >>> round(res.nstar, 1), res.confidence_interval().low < res.nstar
    (29.5, True)
    """

    table: pd.DataFrame
    quantiles: pd.DataFrame
    distribution: MMDDistribution = field(repr=False)
    N: int
    kernel: str
    bootstrap: np.ndarray | None = field(default=None, repr=False)

    @property
    def title(self) -> str:
        """A heading: the goal and the number of experiments."""
        return f"Experiments needed (n*), goal {self.kernel}, from N = {self.N:,} experiments"

    @property
    def nstar(self) -> float:
        """n* at the first (alpha*, delta*) of the grid."""
        return float(self.table["nstar"].iloc[0])

    def confidence_interval(self, confidence_level: float = 0.95):
        """Interval for :attr:`nstar` (the first row of the grid): jackknife on the log scale.

        ``exp(log n* ± t_{N-1, (1+level)/2} · se_log)``, ``se_log`` the jackknife standard error
        of ``log n*`` over the N experiments (Efron & Stein (1981)). Its coverage on the Mallows
        design of docs/generalize.md is .93–.98 for N = 10–40.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        replikit.results.ConfidenceInterval
            ``(low, high)``.

        Raises
        ------
        ParameterError
            The log-log estimator (no calibrated interval), or N < 5 (no jackknife).
        """
        from scipy import special

        from ..results import ConfidenceInterval

        conf = check_probability(confidence_level, "confidence_level")
        row = self.table.iloc[0]
        if row["estimator"] != "gamma":
            raise ParameterError("n* by the log-log extrapolation (`estimator` 'loglog') has "
                                 "no calibrated interval (its bootstrap percentiles miss the "
                                 "truth in most datasets at N <= 40); use `estimator` 'gamma'.")
        if row.get("ci_kind") in ("agreement", "flat", "at bound"):  # [1, agreement_bound]
            return ConfidenceInterval(1.0, float(agreement_bound(
                self.N, row["kappa_inf"], row["eps"], row["confidence_level"], conf,
                n_other=int(row["n_other"]))))
        if not np.isfinite(row["se_log"]) and self.N < 5:
            raise ParameterError(f"An interval for n* needs N >= 5 experiments for the "
                                 f"jackknife; got N = {self.N}.")
        half = special.stdtrit(self.N - 1, (1 + conf) / 2) * row["se_log"]  # t.ppf
        return ConfidenceInterval(float(row["nstar"] * math.exp(-half)),
                                  float(row["nstar"] * math.exp(half)))

    def to_frame(self) -> pd.DataFrame:
        """The n* table with ``kernel`` and ``N`` columns.

        Returns
        -------
        pandas.DataFrame
            One row per (alpha*, delta*); see :attr:`table`.
        """
        t = self.table.copy()
        t.insert(0, "kernel", self.kernel)
        t.insert(1, "N", self.N)
        return t

    def generalizability(self, eps) -> pd.DataFrame:
        """The n-Gen(eps) curve of Matteucci et al. (2024), Def. 4.1.

        Parameters
        ----------
        eps : float
            The MMD threshold ``epsilon``.

        Returns
        -------
        pandas.DataFrame
            Columns ``n``, ``ngen``.
        """
        return pd.DataFrame({"n": self.distribution.n,
                             "ngen": self.distribution.generalizability(eps)})

    def plot(self, ax=None, *, confidence_level=None, tolerance=None):
        """The MMD quantiles against n on log-log axes, with n* and its interval.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        confidence_level, tolerance : float, optional
            Which (alpha*, delta*) row of :attr:`table` (default: the first).

        Returns
        -------
        matplotlib.axes.Axes
            See :func:`replikit.generalize.plots.plot_quantile_fit`.
        """
        from .plots import plot_quantile_fit

        return plot_quantile_fit(self, confidence_level=confidence_level, tolerance=tolerance,
                                 ax=ax)

    def __str__(self) -> str:
        from .._format import interval, number

        lines = [self.title]
        for r in self.table.itertuples():
            ci = "" if not np.isfinite(r.ci_low) else f" {interval(r.ci_low, r.ci_high)}"
            how = ("moment-matched asymptotic quantile" if r.estimator == "gamma" else
                   f"log n = {number(r.beta1)} log ε {'−' if r.beta0 < 0 else '+'} "
                   f"{number(abs(r.beta0))}")
            lines.append(f"  α* = {number(r.confidence_level)}, δ* = {number(r.tolerance)} "
                         f"(ε* = {number(r.eps, 4)}): n* = {number(r.nstar)}{ci} ({how}); "
                         f"{'N suffices' if r.sufficient else 'more experiments needed'}")
        return "\n".join(lines)


def _gamma_rows(K, eps, levels):
    """Gamma n* for every (level, eps) pair (flattened level-major) and the jackknife SE of
    its log; SE NaN when N < 5, and when every leave-one-out estimate of the moments sits at
    a bound of the law (:func:`_at_bound`): the clipped estimates then do not move when a
    result is left out, and the jackknife would give a zero-width interval — a bound, not
    certainty (e.g. a best model shared by two halves of 10 studies: n* 42.7 [42.7, 42.7])."""
    N = K.shape[0]
    a = np.repeat(levels, len(eps))
    e = np.tile(eps, len(levels))
    if N < 4:  # no unbiased HS estimate: plug-in moments with 1/(N-1)
        H = np.eye(N) - 1.0 / N
        C = H @ K @ H
        tr, hs = _clip_moments(np.trace(C) / max(N - 1, 1), (C * C).sum() / max(N - 1, 1) ** 2)
        return gamma_nstar(tr, hs, e, a), np.full(a.size, np.nan)
    tr, hs = _moments(K)
    ns = gamma_nstar(tr, hs, e, a)
    if N < 5:
        return ns, np.full(a.size, np.nan)
    if _at_bound(*_moments_leave_one_out(K, clip=False)).all():
        return ns, np.full(a.size, np.nan)
    tri, hsi = _moments_leave_one_out(K)
    lj = np.log(gamma_nstar(tri[:, None], hsi[:, None], e[None, :], a[None, :]))
    se = np.sqrt((N - 1) / N * ((lj - lj.mean(axis=0)) ** 2).sum(axis=0))
    flat = (se * np.sqrt(N) < FLAT_SD) & (not _agree(K))  # stationary: FLAT_JACKKNIFE
    return ns, np.where(flat, np.nan, se)


def agreement_bound(N, kappa_inf, eps, confidence_level=0.95, level: float = 0.95,
                    n_other: int = 0):
    """Upper confidence bound of n* from how often the results agree with the most common one.

    When all N results are the same in the kernel's eyes the moments are zero, n* = 1 and the
    jackknife has nothing to vary: the interval would be [1, 1], which is not certainty — N
    agreeing studies cannot rule out a law that gives another result now and then. After N
    studies, ``n_other`` of them unlike the most common result, the probability ``p`` that a
    new study gives another result is at most ``p_u``, the exact one-sided Clopper & Pearson
    (1934) bound (``1 - (1 - level)^(1/N)`` after 0 of N). Every law that puts at least
    ``1 - p_u`` on the observed result has ``E k(X, X') >= (1 - p_u)^2 + (1 - (1 - p_u)^2)
    kappa_inf``, so ``tr(C) <= (1 - kappa_inf) (1 - (1 - p_u)^2)``; and the Gamma n* of
    :func:`gamma_nstar`, ``2 tr(C) q_h / (h eps^2)`` with ``q_h`` the ``alpha*``-quantile of
    chi2 with h >= 1 degrees of freedom, is at most that with ``s = sup_{h >= 1} q_h / h``
    (``q_1`` for alpha* >= 0.85, e.g. 3.84 at 0.95; found on a grid of h otherwise). Hence

    ``n*_upper = 2 (1 - kappa_inf) (1 - (1 - level)^(2/N)) s / eps^2``,

    an upper bound at ``level`` over every such law (within the asymptotic Gamma law the
    estimate itself rests on), at least 1. It shrinks as N grows: on the Mallows goal of three
    models at delta* = 0.05, about 35 studies after 5 agreeing ones, 13 after 20.

    Parameters
    ----------
    N : int
        The results (at least 1).
    kappa_inf : float
        The kernel's smallest value (:meth:`Kernel.inf`): the furthest other result.
    eps : float or array_like
        ``epsilon*``.
    confidence_level : float or array_like, default 0.95
        ``alpha*``; broadcast with ``eps``.
    level : float, default 0.95
        Confidence of the bound.
    n_other : int, default 0
        Results unlike the most common one. The bound holds for every law whatever it does
        away from that result, so it also serves where the jackknife fails (a flat leave-one-out
        curve, moments at a bound): conservative, never zero width. The most common result is
        picked from the same data, which the bound does not account for (negligible unless
        two results tie for most common).

    Returns
    -------
    numpy.ndarray
        The upper bound of n*.

    Examples
    --------
    >>> round(float(agreement_bound(5, math.exp(-1), Kernel("mallows").epsilon(0.05, 3))), 1)
    34.8
    """
    from scipy import special

    a = np.asarray(confidence_level, dtype=float)
    e = np.asarray(eps, dtype=float)
    if n_other == 0:  # 1 - (1 - p_u)^2, exactly
        tr = (1.0 - kappa_inf) * -np.expm1(2.0 / N * math.log1p(-level))
    else:
        p_u = special.betaincinv(n_other + 1, N - n_other, level) if n_other < N else 1.0
        tr = (1.0 - kappa_inf) * (1.0 - (1.0 - p_u) ** 2)
    h = np.geomspace(1.0, 1e6, 600)  # q_h / h -> 1 as h -> infinity
    q = np.maximum((special.chdtri(h, 1.0 - a[..., None]) / h).max(axis=-1), 1.0)
    return np.maximum(2.0 * tr * q / e ** 2, 1.0)


def _agree(K) -> bool:
    """Whether every result is the same in the kernel's eyes (a constant Gram matrix)."""
    return K.shape[0] > 1 and bool(np.ptp(K) <= 1e-12 * max(1.0, abs(float(K[0, 0]))))


def _n_other(K) -> int:
    """Results unlike the most common one (in the kernel's eyes: ``K_ij`` at its largest)."""
    same = K >= K.max() - 1e-12 * max(1.0, abs(float(K.max())))
    return int(K.shape[0] - same.sum(axis=1).max())


def _nstar_table(dist, kernel, n_a, levels, deltas, quantile_method, K, estimator):
    from scipy import special

    names = ("confidence_level", "tolerance", "eps", "nstar", "estimator", "nstar_loglog", "beta0",
             "beta1", "nstar_observed", "nstar_bound", "sufficient", "se_log", "ci_low",
             "ci_high", "ci_kind", "kappa_inf", "n_other")
    cols: dict = {c: [] for c in names}  # one frame from columns, not from a list of dicts
    qs = np.atleast_2d(dist.quantile(levels, quantile_method=quantile_method))
    eps_all = np.atleast_1d(kernel.epsilon(deltas, n_a)).astype(float)
    t975 = special.stdtrit(dist.N - 1, 0.975) if dist.N > 1 else np.nan  # stats.t.ppf
    gen = [dist.generalizability(e) for e in eps_all]
    sup = kernel.sup(n_a)
    if estimator == "gamma":
        g_ns, g_se = _gamma_rows(K, eps_all, levels)
    # every result alike: n* = 1 and the jackknife would give [1, 1]; the interval is then
    # [1, agreement_bound] (what N agreeing results cannot rule out), not a zero width
    agree = estimator == "gamma" and _agree(K)
    inf = float(kernel.inf(n_a))
    other = _n_other(K) if estimator == "gamma" else -1
    # why a jackknife SE is missing: asked only when one is (the leave-one-out moments are
    # _gamma_rows' work, repeated here only then)
    why_none = ("few" if dist.N < 5 else "flat" if estimator != "gamma"
                or np.isfinite(g_se).all() or not _at_bound(
                    *_moments_leave_one_out(K, clip=False)).all() else "at bound")
    for i, (a, q) in enumerate(zip(levels, qs, strict=False)):
        ns, b0, b1 = fit_nstar(dist.n, q, eps_all)
        for j, (d, e, ns_) in enumerate(zip(deltas, eps_all, ns, strict=False)):
            ok = gen[j] >= a
            kind = "none"
            if agree:
                est, se, lo = float(g_ns[i * len(eps_all) + j]), np.nan, 1.0
                hi, kind = float(agreement_bound(dist.N, inf, e, a)), "agreement"
            elif estimator == "gamma":
                est, se = float(g_ns[i * len(eps_all) + j]), float(g_se[i * len(eps_all) + j])
                half = t975 * se if np.isfinite(se) else np.nan
                lo, hi = est * math.exp(-half), est * math.exp(half)
                kind = "jackknife" if np.isfinite(se) else why_none
                if kind in ("flat", "at bound"):  # the jackknife failed: the mode bound
                    lo, hi = 1.0, float(agreement_bound(dist.N, inf, e, a, n_other=other))
            else:
                est, se, lo, hi = float(ns_), np.nan, np.nan, np.nan
            for c, v in zip(names, (
                    a, d, float(e), est, estimator, float(ns_), b0, b1,
                    float(dist.n[ok][0]) if ok.any() else float("nan"),
                    float(nstar_bound(a, e, sup)), bool(dist.N >= est), se, lo, hi, kind, inf,
                    other),
                    strict=True):
                cols[c].append(v)
    L = len(dist.n)
    qtab = pd.DataFrame({"n": np.tile(dist.n, len(qs)),
                         "confidence_level": np.repeat(np.asarray(levels, dtype=float), L),
                         "q": qs.ravel()})
    return pd.DataFrame(cols), qtab


@renamed(delta="tolerance", method="mmd_estimator")
@_old_ci_resamples
@single_blas
def estimate_nstar(results, kernel: Kernel, *, confidence_level=0.95, tolerance=0.05,
                   n_resamples: int = 1000, n=None, mmd_estimator: str = "biased",
                   estimator: str | None = None, quantile_method: str = "higher",
                   alternatives=None, gram=None, bootstrap: BootstrapMethod | None = None,
                   random_state=None) -> NStarResult:
    """Estimate n*, the number of experiments needed for (alpha*, delta*)-generalizability.

    Parameters
    ----------
    results : array_like, shape (N, n_a)
        Rank vectors of the N experiments (score vectors for the RBF kernel).
    kernel : Kernel
        The goal of the study.
    confidence_level : float or sequence of float, default 0.95
        The paper's desired generalizability ``alpha*``: the probability with which two
        independent studies of n* experiments must give results within ``epsilon*``. A grid
        is computed from one MMD distribution.
    tolerance : float or sequence of float, default 0.05
        The similarity threshold ``delta*`` of the paper, a practical tolerance on the
        dissimilarity of two studies' results (mapped to the MMD threshold ``epsilon*`` by
        eq. 2).
    n_resamples : int, default 1000
        Repetitions (pairs of disjoint subsamples) per subsample size, for the MMD
        distribution (the n-Gen curve, ``nstar_observed`` and the log-log fit).
    n : sequence of int, optional
        Subsample sizes; default all of ``1..floor(N/2)``.
    mmd_estimator : {'biased', 'unbiased'}, default 'biased'
        The MMD statistic (see :func:`mmd_from_gram`).
    estimator : {'gamma', 'loglog'}, optional
        How n* is estimated. ``'gamma'`` (the default with the biased MMD): the
        moment-matched asymptotic quantile of :func:`gamma_nstar` with the unbiased moments of
        :func:`kernel_moments` — nearly unbiased from N = 10 on, with a calibrated jackknife
        interval. ``'loglog'`` (the default with ``mmd_estimator='unbiased'``, whose law the
        Gamma form does not model): Algorithm 1's extrapolation of the log-log fit of the
        empirical quantiles, biased upward when N/2 is far below n* (+150% at N = 10 on the
        Mallows design of docs/generalize.md), with no interval.
    quantile_method : str, default 'higher'
        numpy quantile method for ``epsilon_n^{alpha*}``; 'higher' (an observed MMD value, never
        below the interpolated one) as in the authors' code.
    alternatives : sequence, optional
        Names of the columns (to resolve a Borda alternative by name).
    gram : array_like, optional
        Precomputed Gram matrix of ``results``.
    bootstrap : replikit.BootstrapMethod, optional
        Resample the N experiments ``bootstrap.n_resamples`` times and re-run the whole
        estimator on each; the values are kept in :attr:`NStarResult.bootstrap` for
        inspection (default None: no bootstrap). The interval in the table does not use them:
        bootstrap percentiles of n* cover .53–.66 for the Mallows goal on the design of
        docs/generalize.md (resampling duplicates experiments, which the kernel sees as perfect
        agreement); the jackknife interval covers .93–.98.
    random_state : None, int or numpy.random.Generator
        Source of randomness (the subsamples and the bootstrap).

    Returns
    -------
    NStarResult
        n* for every (alpha*, delta*), with the quantile table and the MMD distribution.

    See Also
    --------
    analyze : n* for every design combination and goal of a long results table.
    iterate_nstar : Algorithm 1's outer loop: more experiments until N >= n*.
    gamma_nstar : The default estimate's formula.
    fit_nstar : Algorithm 1's log-log extrapolation.

    Notes
    -----
    Matteucci et al. (2024), Algorithm 1 and eqs. (2)-(4) for the MMD distribution: for every
    n the ``alpha*``-quantile of the MMD of two disjoint subsamples of size n drawn without
    replacement; ``epsilon* = sqrt(2 (kappa_sup - f_kappa(delta*)))``. Algorithm 1 then fits
    ``log n = beta1 log epsilon_n + beta0`` and extrapolates to ``epsilon*``; when the data
    reach only n <= N/2 << n*, the curvature of the small-n quantiles (discrete, far from their
    asymptotic ``n^{-1/2}`` slope) makes that extrapolation overshoot. The Gamma estimator uses
    the asymptotic law of the MMD instead, whose two moments are estimated without bias from
    all N(N-1)/2 pairs of results (Gretton et al. (2012), Thm. 12; Song et al. (2012), eq. 5);
    its interval is the jackknife's (Efron & Stein (1981)).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.
    .. [3] Song, L., Smola, A., Gretton, A., Bedo, J. & Borgwardt, K. (2012). Feature Selection
       via Dependence Maximization. Journal of Machine Learning Research, 13, 1393–1434.
    .. [4] Efron, B. & Stein, C. (1981). The Jackknife Estimate of Variance. The Annals of
       Statistics, 9(3), 586–596.

    Examples
    --------
    >>> r = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [0, 1, 2]] * 5)
    >>> res = estimate_nstar(r, Kernel("jaccard"), n_resamples=200, random_state=0)
    >>> res.N, res.table["estimator"][0]
    (20, 'gamma')
    >>> round(res.nstar, 1)
    29.5
    """
    from .._validation import check_choice

    R = np.asarray(results)
    if R.ndim != 2:
        raise DataError(f"`results` must be 2-d (experiments x alternatives); got shape {R.shape}.")
    N, n_a = R.shape
    if N < 2:
        raise DataError(f"At least 2 experiments are needed; got N={N}.")
    if n_a < 2:
        raise DataError(f"`results` must rank at least 2 alternatives; got {n_a}.")
    levels = check_levels(confidence_level)
    deltas = check_tolerance(tolerance)
    n_ci = check_bootstrap(bootstrap)
    if estimator is None:
        estimator = "gamma" if mmd_estimator == "biased" else "loglog"
    check_choice(estimator, "estimator", ESTIMATORS)
    if estimator == "gamma" and mmd_estimator != "biased":
        raise ParameterError("`estimator` 'gamma' models the biased MMD (the paper's); with "
                             "`mmd_estimator` 'unbiased' use `estimator` 'loglog'.")
    check_analysis_memory(N, n_a, check_int(n_resamples, "n_resamples", min_value=1),
                          n_sizes(N, n), (kernel.kind,),
                          conditions="fewer rows of `results`")
    rng = check_random_state(random_state)
    K = kernel.gram(R, alternatives=alternatives) if gram is None else np.asarray(gram, float)
    if K.shape != (N, N):
        raise DataError(f"`gram` must have shape ({N}, {N}); got {K.shape}.")
    if not np.isfinite(K).all():
        bad = int(np.flatnonzero(~np.isfinite(K).all(axis=1))[0])
        hint = (" Ranks count tiers from 0 (the best); rank vectors from 1 leave a Jaccard "
                "kernel's top tiers empty — subtract 1." if gram is None
                and kernel.kind == "jaccard" and np.nanmin(R) >= kernel.k else "")
        raise DataError(f"`results`: the {kernel.kind} kernel is undefined for experiment "
                        f"{bad} (row {bad} of the Gram matrix is not finite).{hint}")
    dist = mmd_distribution(K, n=n, n_resamples=n_resamples, mmd_estimator=mmd_estimator,
                            random_state=rng)
    table, qtab = _nstar_table(dist, kernel, n_a, levels, deltas, quantile_method, K, estimator)
    boots = None
    if n_ci:
        boots = np.empty((n_ci, len(table)))
        eps_all = np.atleast_1d(kernel.epsilon(deltas, n_a)).astype(float)
        for b in range(n_ci):
            idx = rng.integers(0, N, N)
            Kb = K[np.ix_(idx, idx)]
            if estimator == "gamma":
                boots[b] = _gamma_rows(Kb, eps_all, levels)[0] if N < 4 else gamma_nstar(
                    *_moments(Kb), np.tile(eps_all, len(levels)),
                    np.repeat(levels, len(eps_all)))
            else:
                db = mmd_distribution(Kb, n=n, n_resamples=n_resamples,
                                      mmd_estimator=mmd_estimator, random_state=rng)
                boots[b] = _nstar_table(db, kernel, n_a, levels, deltas, quantile_method, Kb,
                                        estimator)[0]["nstar"].to_numpy()
    return NStarResult(table=table, quantiles=qtab, distribution=dist, N=N, kernel=kernel.label,
                       bootstrap=boots)


@renamed(delta="tolerance")
@single_blas
def iterate_nstar(run_experiment, initial, kernel: Kernel, *, n_step: int = 5,
                  max_experiments: int = 1000, confidence_level: float = 0.95,
                  tolerance: float = 0.05, n_resamples: int = 1000, alternatives=None,
                  random_state=None):
    """The outer loop of Algorithm 1: run ``n_step`` more experiments until N >= n*.

    Parameters
    ----------
    run_experiment : callable
        ``run_experiment(rng) -> array (n_a,)``: the result (rank vector) of one more
        experiment under a new random condition.
    initial : array_like, shape (N0, n_a)
        Results already available (N0 >= 2).
    kernel : Kernel
        The goal of the study.
    n_step : int, default 5
        Experiments added per iteration (``N_step``).
    max_experiments : int, default 1000
        Stop (and return) once this many experiments have been run.
    confidence_level : float, default 0.95
        ``alpha*``, as in :func:`estimate_nstar`.
    tolerance : float, default 0.05
        ``delta*``, as in :func:`estimate_nstar`.
    n_resamples : int, default 1000
        Pairs of disjoint subsamples per subsample size, as in :func:`estimate_nstar`.
    alternatives : sequence, optional
        Names of the columns (to resolve a Borda alternative by name).
    random_state : None, int or numpy.random.Generator
        Source of randomness, also passed to ``run_experiment``.

    Returns
    -------
    result : NStarResult
        The last estimate.
    results : numpy.ndarray
        All the results gathered. Only the kernel rows of the new experiments are computed at
        each step (the Gram matrix is extended, not rebuilt).

    See Also
    --------
    estimate_nstar : One estimate of n* from the results at hand.

    Notes
    -----
    Matteucci et al. (2024), Algorithm 1 (``while N < n*_N: run N_step more experiments``).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    Rankings of 3 alternatives where the first is usually best:

    >>> def one_more(rng):
    ...     return np.array([0, 1, 2]) if rng.random() < 0.8 else np.array([1, 0, 2])
    >>> first = np.array([[0, 1, 2], [1, 0, 2], [0, 1, 2], [0, 1, 2]])
    >>> res, results = iterate_nstar(one_more, first, Kernel("jaccard"), n_resamples=50,
    ...                              random_state=0)
    >>> len(results) >= res.nstar or len(results) >= 1000
    True
    """
    rng = check_random_state(random_state)
    n_step = check_int(n_step, "n_step", min_value=1)
    R = np.asarray(initial)
    if R.ndim != 2 or len(R) < 2:
        raise DataError(f"`initial` must hold at least 2 results (2-d); got shape {R.shape}.")
    K = kernel.gram(R, alternatives=alternatives)
    while True:
        res = estimate_nstar(R, kernel, confidence_level=confidence_level, tolerance=tolerance,
                             n_resamples=n_resamples, alternatives=alternatives, gram=K,
                             random_state=rng)
        if len(R) >= res.nstar or len(R) >= max_experiments or not math.isfinite(res.nstar):
            return res, R
        new = np.vstack([np.asarray(run_experiment(rng)) for _ in range(n_step)])
        if new.shape[1] != R.shape[1]:
            raise DataError(f"`run_experiment` returned {new.shape[1]} alternatives; expected "
                            f"{R.shape[1]}.")
        k_new = kernel.gram(new, R, alternatives=alternatives)
        k_nn = kernel.gram(new, alternatives=alternatives)
        K = np.block([[K, k_new.T], [k_new, k_nn]])
        R = np.vstack([R, new])
