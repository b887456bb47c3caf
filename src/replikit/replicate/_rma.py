"""The one meta-analysis engine of :mod:`replikit.replicate`: metafor's ``rma`` fit, written once.

Every view of a meta-analysis — the pooled estimate (:mod:`.meta`), meta-regression
(:mod:`.metareg`), leave-one-out, cumulative and influence refits (:mod:`.influence`), the
small-study tests (:mod:`.smallstudy`), bounded metrics (:mod:`.transforms`) and the figures —
calls the functions here, as every metafor function takes or returns one fitted ``rma`` object.
This module imports numpy and scipy only (and replikit's core errors and validators), nothing
from :mod:`replikit.replicate`.

The model is ``y_i = x_i' beta + u_i + e_i``, ``u_i ~ N(0, tau2)``, ``e_i ~ N(0, v_i)``
(Raudenbush 2009, eq. 16.9; Viechtbauer 2005, 2010). Without moderators (``X=None``) it is the
random-effects model, the intercept-only case; with ``method='FE'`` it is the fixed-effect model
(``tau2 = 0``). Arrays of shape ``(..., k)`` (``y``, ``v``, a 0/1 ``mask`` of the studies each
problem uses) and ``(..., k, p)`` (``X``) are stacks of problems fitted in one call; a mask entry
of 0 drops a study from every sum.

* weighted least squares (:func:`wls`): the weighted mean in closed form without moderators,
  otherwise through the QR decomposition of ``W^(1/2) X`` (never the normal equations), which
  gives ``beta``, ``(X'WX)^-1``, residuals and hat values ``h_i`` (the diagonal of
  ``X (X'WX)^-1 X' W``); ``tr(P) = sum w_i (1 - h_i)`` with ``P = W - W X (X'WX)^-1 X' W``;
* the generalized Q statistic ``QE(tau2) = sum w_i e_i^2``, ``w_i = 1 / (v_i + tau2)``
  (:func:`qe`; Cochran's Q at ``tau2 = 0``);
* the tau2 estimators (:func:`tau2`, all truncated at 0): DL ``(QE - (k - p)) / tr(P)``
  (DerSimonian & Laird 1986), HS ``(QE - k) / sum w`` (Hunter & Schmidt 2004), HE
  ``(RSS_OLS - tr(P_OLS V)) / (k - p)`` (Hedges 1983), SJ ``tau0 RSS_tau0 / (k - p)`` with
  ``tau0 = mean((y - ybar)^2)`` (Sidik & Jonkman 2005), PM the root of ``QE(tau2) = k - p``
  (Paule & Mandel 1982), ML and REML by Fisher scoring started at HE with step halving
  (metafor's ``rma.uni``), finished by bisection on the score where scoring cycles;
* the standard error of tau2 as ``rma.uni`` reports it (:func:`se_tau2`);
* the Knapp & Hartung (2003) variance ``QE(tau2) / (k - p) (X'WX)^-1``, optionally floored at
  the Wald variance (:func:`fit`);
* the Q-profile interval of tau2 (Viechtbauer 2007; :func:`qprofile`) and its images tau, I²
  and H² (Higgins & Thompson 2002; :func:`i2_h2`);
* prediction intervals as metafor's ``predict.rma`` (:func:`pi_quantile`);
* refits of one model on many subsets of its studies (leave-one-out, cumulative) in blocks of
  bounded memory (:func:`refits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice
from ..errors import ConvergenceError, DataError, ParameterError

__all__: list[str] = []

TAU2_METHODS = ("DL", "HE", "HS", "SJ", "ML", "REML", "PM")
#: ``'FE'`` (the fixed-effect model) and the tau2 estimators of the random-effects model
METHODS = ("FE",) + TAU2_METHODS
#: the pooled intervals of a meta-analysis (names from replikit._validation.INTERVALS)
META_INTERVALS = ("wald", "knha")
PI_DISTS = ("z", "t(k-1)", "t(k-2)")
_PI_ALIASES = {"t": "t(k-1)", "norm": "z"}
#: a column adds nothing to the column space below this relative singular value
RANK_TOL = 1e-9
#: Fisher-scoring steps of ML/REML before the remaining problems go to bisection on the score
FISHER_STEPS = 100
#: influence, baujat, cumulative and leave-one-out refit the model k times on up to k studies
#: (k^2 work, in blocks of bounded memory); above this many studies they are refused
MAX_REFIT_K = 20_000
#: memory of one block of refits (the stack of k-study problems fitted at once)
_BLOCK_BYTES = 128 * 2 ** 20
#: k-length float arrays alive per problem of a stack in fit (with p columns: x (p + 1));
#: measured with tracemalloc (about 25 for p = 1), rounded up
_ARRAYS_PER_PROBLEM = 40


# ---------------------------------------------------------------------------------------------
# inputs

def check_method(value, name: str = "tau2_method", allowed=METHODS) -> str:
    """``value`` upper-cased if it is one of ``allowed`` (``'FE'`` and the tau2 estimators)."""
    return check_choice(str(value).upper(), name, allowed)


def check_meta_interval(value, name: str = "interval") -> str:
    """``'wald'`` or ``'knha'`` (case ignored)."""
    return check_choice(str(value).lower(), name, META_INTERVALS)


def check_pi_dist(value, name: str = "pi_dist") -> str:
    """One of PI_DISTS (spaces and case ignored; ``'t'`` is the old spelling of ``'t(k-1)'``)."""
    key = "".join(str(value).split()).lower()
    key = _PI_ALIASES.get(key, key)
    return check_choice(key, name, PI_DISTS)


def default_pi_dist(interval: str) -> str:
    """metafor's ``predict.rma``: z with Wald tests, t(k - p) with Knapp-Hartung."""
    return "t(k-1)" if interval == "knha" else "z"


def check_studies(y, v=None, se=None, labels=None):
    """Estimates, sampling variances (from ``v`` or ``se``) and labels of a meta-analysis,
    checked: ``(y, v, labels)`` as float arrays of shape ``(k,)`` and a list of str."""
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise DataError(f"`y` must be one-dimensional; got shape {y.shape}.")
    if (v is None) == (se is None):
        raise ParameterError("give exactly one of `v` (sampling variances) or `se` "
                             f"(standard errors); got v={'set' if v is not None else None}, "
                             f"se={'set' if se is not None else None}.")
    if se is not None:
        se = np.asarray(se, float)
        bad = np.flatnonzero(~(np.isfinite(se) & (se > 0)))
        if bad.size:
            raise DataError(f"standard errors `se` must be finite and > 0 (a negative SE is not "
                            f"squared into a variance); found {se.ravel()[bad[:5]].tolist()} at "
                            f"positions {bad[:5].tolist()}.")
    v = np.asarray(v, float) if v is not None else se ** 2
    if v.shape != y.shape:
        raise DataError(f"`v`/`se` must have the shape of `y` {y.shape}; got {v.shape}.")
    if y.size < 2:
        raise DataError(f"a meta-analysis needs at least 2 estimates in `y`; got {y.size}.")
    if not np.isfinite(y).all():
        raise DataError("`y` must be finite; found NaN or infinity.")
    good = np.isfinite(v) & (v > 0)
    if not good.all():
        bad = np.flatnonzero(~good)
        raise DataError(f"sampling variances (`v` or `se` squared) must be finite and > 0; "
                        f"found invalid values at positions {bad[:5].tolist()}.")
    if labels is None:
        labels = [f"Study {i}" for i in range(1, y.size + 1)]
    else:
        labels = [str(s) for s in labels]
    if len(labels) != y.size:
        raise DataError(f"`labels` must have {y.size} entries; got {len(labels)}.")
    return y, v, labels


# ---------------------------------------------------------------------------------------------
# weighted least squares

def _weights(v, tau2, mask):
    w = 1.0 / (v + np.asarray(tau2, float)[..., None])
    return w if mask is None else mask * w


def _count(y, mask):
    return y.shape[-1] if mask is None else mask.sum(axis=-1)


def wls(y, w, X=None):
    """Weighted least squares of ``y`` on ``X`` (``None``: the intercept) with weights ``w``.

    Returns ``beta (..., p)``, ``A = (X'WX)^-1 (..., p, p)``, residuals ``e (..., k)`` and hat
    values ``h (..., k)``. A weight of 0 drops a study.
    """
    if X is None:
        sw = w.sum(axis=-1)
        mu = (w * y).sum(axis=-1) / sw
        return mu[..., None], (1.0 / sw)[..., None, None], y - mu[..., None], w / sw[..., None]
    sw = np.sqrt(w)
    Z = X * sw[..., None]
    Q, R = np.linalg.qr(Z)
    Rinv = np.linalg.inv(R)
    qty = np.einsum("...kp,...k->...p", Q, sw * y)
    beta = np.einsum("...pq,...q->...p", Rinv, qty)
    A = Rinv @ np.swapaxes(Rinv, -1, -2)
    e = y - np.einsum("...kp,...p->...k", X, beta)
    h = (Q ** 2).sum(axis=-1)
    return beta, A, e, h


def n_coef(X) -> int:
    """Columns of the model matrix (1 for the intercept-only model ``X=None``)."""
    return 1 if X is None else X.shape[-1]


def full_rank(X, mask) -> np.ndarray:
    """True where the studies kept by ``mask`` leave ``X`` of full column rank."""
    Z = X * mask[..., None]
    s = np.linalg.svd(Z, compute_uv=False)
    p = X.shape[-1]
    return s[..., p - 1] > RANK_TOL * np.maximum(s[..., 0], 1e-300)


def qe(y, v, X=None, mask=None, tau2=0.0):
    """The generalized Q statistic ``sum w_i e_i^2`` with ``w_i = 1 / (v_i + tau2)`` and the
    residuals ``e`` of the weighted fit; Cochran's Q (QE with moderators) at ``tau2 = 0``."""
    w = _weights(v, tau2, mask)
    if X is None:
        mu = (w * y).sum(axis=-1) / w.sum(axis=-1)
        return (w * (y - mu[..., None]) ** 2).sum(axis=-1)
    _, _, e, _ = wls(y, w, X)
    return (w * e ** 2).sum(axis=-1)


def p2_sum(w, X, a=None, b=None):
    """``sum_ij P_ij^2 a_i b_j`` with ``P = W - W X (X'WX)^-1 X' W``, without forming P.

    With ``Q`` from the QR of ``W^1/2 X`` (hat matrix ``H = Q Q'``, ``h = diag H``),
    ``P = W^1/2 (I - H) W^1/2`` and ``(I - H)_ij^2 = delta_ij (1 - 2 h_i) + H_ij^2``, so the sum
    is ``sum_i a_i b_i w_i^2 (1 - 2 h_i) + <Q' diag(a w) Q, Q' diag(b w) Q>_F``: O(k p^2) time
    and memory instead of the k x k matrix (a meta-analysis of 100,000 studies would need 80 GB
    for P). Works on stacks ``w (..., k)``, ``X (..., k, p)``; ``a``, ``b`` default to ones.
    """
    sw = np.sqrt(w)
    Q, _ = np.linalg.qr(X * sw[..., None])
    h = (Q ** 2).sum(axis=-1)
    aw = w if a is None else a * w
    bw = w if b is None else b * w
    Ma = np.einsum("...ia,...i,...ib->...ab", Q, aw, Q)
    Mb = Ma if b is None and a is None else np.einsum("...ia,...i,...ib->...ab", Q, bw, Q)
    return (aw * bw * (1.0 - 2.0 * h)).sum(axis=-1) + (Ma * Mb).sum(axis=(-2, -1))


def tr_pp(w, X=None):
    """``tr(P P)``: in closed form without moderators
    (``sum w^2 - 2 sum w^3 / sum w + (sum w^2 / sum w)^2``), else by :func:`p2_sum`."""
    if X is None:
        sw = w.sum(axis=-1)
        s2 = (w ** 2).sum(axis=-1)
        return s2 - 2.0 * (w ** 3).sum(axis=-1) / sw + (s2 / sw) ** 2
    return p2_sum(w, X)


def p_diag(w, X):
    """The diagonal of ``P = W - W X (X'WX)^-1 X' W``: ``w_i (1 - h_i)`` (one problem)."""
    _, _, _, h = wls(np.zeros(w.shape), w, X)
    return w * (1.0 - h)


# ---------------------------------------------------------------------------------------------
# roots

def bisect_decreasing(fun, target, lo, hi, n_iter: int = 200):
    """Root of a decreasing ``fun(t) = target`` on ``[lo, hi]`` for a batch (bisection), or
    by Brent's method for a single problem."""
    from scipy import optimize

    target = np.asarray(target, float)
    if np.ndim(lo) == 0 and np.ndim(hi) == 0 and target.ndim == 0:
        f = lambda t: float(fun(np.asarray(t, float))) - float(target)  # noqa: E731
        if f(lo) <= 0:
            return np.asarray(float(lo))
        if f(hi) >= 0:
            return np.asarray(float(hi))
        return np.asarray(optimize.brentq(f, float(lo), float(hi), xtol=1e-15, rtol=1e-14))
    shape = np.broadcast_shapes(target.shape, np.shape(lo), np.shape(hi))
    lo = np.array(np.broadcast_to(lo, shape), float)
    hi = np.array(np.broadcast_to(hi, shape), float)
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        above = fun(mid) > target
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
        if np.all(hi - lo <= 1e-14 * np.maximum(1.0, hi)):
            break
    return 0.5 * (lo + hi)


def _upper_bracket(y, v, X, mask, target):
    """A tau2 with ``QE(tau2) < target`` for every problem (grown by quadrupling)."""
    k = _count(y, mask)
    m = 1.0 if mask is None else mask
    ybar = (m * y).sum(axis=-1) / k
    spread = (m * (y - ybar[..., None]) ** 2).sum(axis=-1)
    vmax = v.max(axis=-1) if mask is None else np.max(np.where(mask > 0, v, 0.0), axis=-1)
    hi = np.asarray(10.0 * (spread + vmax) + 1.0)
    for _ in range(200):
        bad = qe(y, v, X, mask, hi) >= target
        if not np.any(bad):
            break
        hi = np.where(bad, hi * 4.0, hi)
    return hi


def _qe_one(y, v):
    """``QE(tau2)`` of one problem without moderators (``y``, ``v`` of shape ``(k,)``) for a
    scalar tau2: the operations of :func:`qe` in the same order (so the same bits), without
    its broadcasting, for root finders that call it many times."""
    def fun(t):
        w = 1.0 / (v + t)
        mu = (w * y).sum() / w.sum()
        return (w * (y - mu) ** 2).sum()
    return fun


def _qe_root_one(y, v, target):
    """:func:`qe_root` of one problem without moderators, with the same operations (so the
    same bits) as the stacked code, less its broadcasting: the root finder of one meta-analysis
    (Paule-Mandel, the Q-profile bounds) calls QE a dozen times."""
    from scipy import optimize

    fun = _qe_one(y, v)
    target = float(target)
    q0 = fun(0.0)
    if q0 <= target:
        return np.asarray(0.0)
    ybar = y.sum() / y.shape[-1]  # the bracket of _upper_bracket
    hi = 10.0 * (((y - ybar) ** 2).sum() + v.max()) + 1.0
    for _ in range(200):
        q_hi = fun(hi)
        if not q_hi >= target:
            break
        hi = hi * 4.0
    else:
        return np.asarray(float(hi))  # bisect_decreasing: QE still above target at hi
    # bisect_decreasing's Brent root of QE - target on [0, hi], whose first two evaluations
    # (at 0 and hi) are known
    hi = float(hi)
    known = {0.0: float(q0) - target, hi: float(q_hi) - target}

    def f(t):
        value = known.pop(t, None)
        return float(fun(t)) - target if value is None else value

    return np.asarray(optimize.brentq(f, 0.0, hi, xtol=1e-15, rtol=1e-14))


def qe_root(y, v, X, mask, target):
    """The tau2 where ``QE(tau2) = target``, 0 where ``QE(0) <= target`` (``QE`` decreases)."""
    if X is None and mask is None and y.ndim == 1:
        return _qe_root_one(y, v, target)
    shape = y.shape[:-1]
    target = np.broadcast_to(np.asarray(target, float), shape)
    q0 = qe(y, v, X, mask, np.zeros(shape))
    hi = _upper_bracket(y, v, X, mask, target)
    fun = lambda t: qe(y, v, X, mask, t)  # noqa: E731
    if target.ndim == 0:
        root = bisect_decreasing(fun, target, 0.0, float(hi))
    else:
        root = bisect_decreasing(fun, target, np.zeros(target.shape), hi)
    return np.where(q0 <= target, 0.0, root)


def scoring_step(tau2, step):
    """``tau2 + step`` of a Fisher-scoring iteration kept >= 0 by halving the step (rma.uni's
    step halving, not truncation); at ``tau2 = 0`` only an increase is taken.

    The number of halvings is the smallest ``m`` with ``tau2 + step / 2^m >= 0``, found in
    closed form (halving is exact in binary floating point, and the sum is monotone in ``m``,
    so this is the ``m`` of halving one step at a time).
    """
    step = np.where(tau2 > 0, step, np.maximum(step, 0.0))
    neg = tau2 + step < 0
    if np.any(neg):
        t, s = np.broadcast_to(tau2, step.shape)[neg], step[neg]
        m = np.clip(np.ceil(np.log2(-s / t)), 0, _MAX_HALVINGS).astype(int)
        for _ in range(3):  # the logarithm's rounding: settle on the smallest m that holds
            low = t + np.ldexp(s, -m) < 0
            m = np.where(low, np.minimum(m + 1, _MAX_HALVINGS), m)
            high = (m > 0) & (t + np.ldexp(s, -(m - 1)) >= 0)
            m = np.where(high, m - 1, m)
            if not (np.any(low) or np.any(high)):
                break
        step = step.copy()
        step[neg] = np.ldexp(s, -m)
    return np.maximum(tau2 + step, 0.0)


#: at most this many halvings of one Fisher-scoring step
_MAX_HALVINGS = 1100


def score(y, v, X, mask, tau2, method: str):
    """The (restricted) likelihood score of tau2 and its expected information, both up to the
    same factor 1/2: ``sum w^2 e^2 - tr P`` and ``tr PP`` (ML: ``sum w`` and ``sum w^2``);
    without moderators ``tr P = sum w - sum w^2 / sum w`` and ``tr PP`` in closed form."""
    w = _weights(v, tau2, mask)
    if X is None:
        sw = w.sum(axis=-1)
        mu = (w * y).sum(axis=-1) / sw
        s2 = (w ** 2).sum(axis=-1)
        q = (w ** 2 * (y - mu[..., None]) ** 2).sum(axis=-1)
        if method == "ML":
            return q - sw, s2
        s3 = (w ** 3).sum(axis=-1)
        return q - (sw - s2 / sw), s2 - 2.0 * s3 / sw + (s2 / sw) ** 2
    _, _, e, h = wls(y, w, X)
    we2 = ((w * e) ** 2).sum(axis=-1)
    if method == "ML":
        return we2 - w.sum(axis=-1), (w ** 2).sum(axis=-1)
    return we2 - (w * (1.0 - h)).sum(axis=-1), tr_pp(w, X)


def _score_root(y, v, X, mask, method: str, tol: float):
    """tau2 where the score changes sign from + to - (0 when the score at 0 is <= 0), by
    bisection over the stack: the estimate Fisher scoring seeks, found without cycling."""
    shape = y.shape[:-1]
    lo = np.zeros(shape)
    s0, _ = score(y, v, X, mask, lo, method)
    vmax = v.max(axis=-1) if mask is None else np.max(np.where(mask > 0, v, 0.0), axis=-1)
    k = _count(y, mask)
    m = 1.0 if mask is None else mask
    ybar = (m * y).sum(axis=-1) / k
    var = (m * (y - ybar[..., None]) ** 2).sum(axis=-1) / k
    hi = np.maximum(var * 4.0 + vmax, 1e-8)
    for _ in range(200):  # grow the bracket until the score is negative
        s_hi, _ = score(y, v, X, mask, hi, method)
        if np.all((s_hi < 0) | (s0 <= 0)):
            break
        hi = np.where(s_hi < 0, hi, hi * 2.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        s_mid, _ = score(y, v, X, mask, mid, method)
        lo = np.where(s_mid > 0, mid, lo)
        hi = np.where(s_mid > 0, hi, mid)
        if np.all(hi - lo <= tol * np.maximum(1.0, hi)):
            break
    return np.where(s0 <= 0, 0.0, 0.5 * (lo + hi))


# ---------------------------------------------------------------------------------------------
# tau2

def tau2(y, v, X=None, mask=None, *, method: str, tol: float = 1e-12, max_iter: int = 1000):
    """tau2 by ``method`` (one of TAU2_METHODS) for every problem of the stack, >= 0.

    See the module docstring for the estimators. ML and REML stop when a Fisher-scoring step
    changes tau2 by at most ``tol`` (relative above 1); problems still moving after
    ``FISHER_STEPS`` steps (scoring can cycle, e.g. with one outlying study) are solved by
    bisection on the score. Fewer than ``FISHER_STEPS`` ``max_iter`` steps that do not converge
    raise :class:`~replikit.errors.ConvergenceError`.
    """
    k = _count(y, mask)
    p = n_coef(X)
    dfr = k - p
    if method in ("DL", "HS"):
        w = 1.0 / v if mask is None else mask / v
        if X is None:  # the weighted mean: tr(P) = sum w - sum w^2 / sum w
            sw = w.sum(axis=-1)
            mu = (w * y).sum(axis=-1) / sw
            q = (w * (y - mu[..., None]) ** 2).sum(axis=-1)
            trp = sw - (w ** 2).sum(axis=-1) / sw
        else:
            _, _, e, h = wls(y, w, X)
            q = (w * e ** 2).sum(axis=-1)
            trp = (w * (1.0 - h)).sum(axis=-1)
        if method == "HS":
            return np.maximum(0.0, (q - k) / w.sum(axis=-1))
        return np.maximum(0.0, (q - dfr) / trp)
    if method == "SJ":
        m = 1.0 if mask is None else mask
        ybar = (m * y).sum(axis=-1) / k
        tau0 = (m * (y - ybar[..., None]) ** 2).sum(axis=-1) / k
        return tau0 * qe(y, v, X, mask, tau0) / dfr
    if method == "PM":
        return qe_root(y, v, X, mask, np.asarray(dfr, float))
    # HE, and the start of ML / REML
    if X is None and mask is None:  # unweighted moments: sum (y - ybar)^2 / (k-1) - mean(v)
        ss = ((y - y.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
        he = np.maximum(0.0, ss / dfr - v.mean(axis=-1))
    else:
        m = np.ones(y.shape) if mask is None else mask
        _, _, e, h = wls(y, m, X)
        he = np.maximum(0.0, ((m * e ** 2).sum(axis=-1)
                              - (m * v * (1.0 - h)).sum(axis=-1)) / dfr)
    if method == "HE":
        return he
    if X is None and mask is None and y.ndim == 1:
        return _scoring_one(y, v, he, method, tol, max_iter)
    t = np.array(he, float)
    done = np.zeros(t.shape, bool)
    for it in range(max_iter):
        if it == FISHER_STEPS:  # Fisher scoring can cycle (e.g. one outlying study):
            return np.where(done, t, _score_root(y, v, X, mask, method, tol))
        s, info = score(y, v, X, mask, t, method)
        # step halving instead of truncation keeps tau2 >= 0 on metafor's path (rma.uni's
        # Fisher scoring), so its stopping rule stops where metafor stops
        new = scoring_step(t, s / info)
        conv = np.abs(new - t) <= tol * np.maximum(1.0, new)
        t = np.where(done, t, new)
        done = done | conv
        if np.all(done):
            return t
    raise ConvergenceError(f"`tau2_method`={method!r}: tau2 did not converge in {max_iter} "
                           "iterations; raise `max_iter`.")


def _scoring_one(y, v, he, method: str, tol: float, max_iter: int):
    """The ML / REML loop of :func:`tau2` for one problem without moderators: the same
    operations in the same order on scalars (so the same bits: ``max(a, c)`` keeps ``a`` when
    it is NaN or not below ``c``, as ``np.maximum(a, c)``), without the stacked code's masks
    and reductions over the stack, which cost more than the arithmetic of one meta-analysis."""
    t = he
    for it in range(max_iter):
        if it == FISHER_STEPS:
            return _score_root(y, v, None, None, method, tol)
        w = 1.0 / (v + t)  # score(): the score and information, up to the same factor 1/2
        sw = w.sum()
        mu = (w * y).sum() / sw
        w2 = w ** 2
        s2 = w2.sum()
        q = (w2 * (y - mu) ** 2).sum()
        if method == "ML":
            s, info = q - sw, s2
        else:
            s3 = (w ** 3).sum()
            s, info = q - (sw - s2 / sw), s2 - 2.0 * s3 / sw + (s2 / sw) ** 2
        raw = s / info
        step = raw if t > 0 else max(raw, 0.0)  # scoring_step(), without halving ...
        if t + step < 0:  # ... which it needs here
            new = scoring_step(np.asarray(t, float), np.asarray(raw, float))
        else:
            new = max(t + step, 0.0)
        conv = abs(new - t) <= tol * max(new, 1.0)
        t = new
        if conv:
            return np.asarray(t, float)
    raise ConvergenceError(f"`tau2_method`={method!r}: tau2 did not converge in {max_iter} "
                           "iterations; raise `max_iter`.")


def se_tau2(y, v, X, method: str, tau2_value: float) -> float:
    """Standard error of tau2 as metafor's ``rma.uni`` reports it (one problem, ``X`` given).

    The quadratic-form estimators ``tau2 = (y'Ay - c) / d`` with ``AX = 0`` have
    ``Var(y'Ay) = 2 tr(A S A S)``, ``S = V + tau2 I``; ML and REML use the inverse Fisher
    information (``2 / sum w^2``, ``2 / tr(P P)``) and PM ``sqrt(2 k^2 / (k - p)) / sum w``.
    The traces are computed without the k x k projection (:func:`p2_sum`), so the SE of a
    meta-analysis of 100,000 studies needs O(k p^2) memory. NaN for FE.
    """
    k, p = X.shape
    t = max(float(tau2_value), 0.0)
    if method in ("HS", "DL"):
        w = 1.0 / v
        trp = float(p_diag(w, X).sum())
        num = 2 * (k - p) + 4 * t * trp + 2 * t ** 2 * p2_sum(w, X)
        den = w.sum() if method == "HS" else trp
        return float(math.sqrt(num) / den)
    if method == "HE":
        ones = np.ones(k)
        num = 2 * p2_sum(ones, X, v, v) + 4 * t * float((p_diag(ones, X) * v).sum()) \
            + 2 * t ** 2 * (k - p)
        return float(math.sqrt(num) / (k - p))
    if method == "SJ":
        tau0 = float(np.mean((y - y.mean()) ** 2))
        w = 1.0 / (v + tau0)
        num = 2 * p2_sum(w, X, v, v) + 4 * t * p2_sum(w, X, None, v) \
            + 2 * t ** 2 * p2_sum(w, X)
        return float(tau0 / (k - p) * math.sqrt(num))
    w = 1.0 / (v + t)
    if method == "ML":
        return float(math.sqrt(2.0 / np.sum(w ** 2)))
    if method == "REML":
        return float(math.sqrt(2.0 / p2_sum(w, X)))
    if method == "PM":
        return float(math.sqrt(2.0 * k ** 2 / (k - p)) / w.sum())
    return float("nan")


# ---------------------------------------------------------------------------------------------
# the fit

@dataclass(frozen=True, slots=True)
class Fit:
    """The arrays of a stack of fitted models (leading shape ``(...)``).

    ``beta``, ``vb`` (with the Knapp-Hartung factor ``s2w``), ``A = (X'WX)^-1`` (without it),
    ``tau2``, residuals ``e = y - X beta``, weights ``w`` of the model, hat values ``h``, ``qe``
    and ``trp0`` (Cochran's QE and ``tr(P)`` under fixed-effect weights), ``k`` studies used,
    ``rss`` (the generalized QE at tau2) and ``ok`` (X of full rank).
    """

    beta: np.ndarray
    vb: np.ndarray
    A: np.ndarray
    tau2: np.ndarray
    s2w: np.ndarray
    e: np.ndarray
    w: np.ndarray
    h: np.ndarray
    qe: np.ndarray
    trp0: np.ndarray
    k: np.ndarray
    rss: np.ndarray
    ok: np.ndarray


def fit(y, v, X=None, mask=None, *, method: str, interval: str = "wald",
        knha_floor: bool = False, tol: float = 1e-12) -> Fit:
    """Fit the model (``method='FE'``: tau2 = 0) to every problem of the stack.

    ``X=None`` is the model without moderators. ``interval='knha'`` scales ``(X'WX)^-1`` by
    ``s2w = QE(tau2) / (k - p)`` (0 when QE is 0 to machine precision, as metafor; at least 1
    with ``knha_floor``, metafor's ``test='adhoc'``). Problems whose ``X`` is rank deficient on
    their studies give NaN and ``ok = False``.
    """
    y = np.asarray(y, float)
    v = np.asarray(v, float)
    if X is not None:
        X = np.asarray(X, float)
    p = n_coef(X)
    if X is None and mask is None and y.shape == v.shape:
        # no moderators, every study used (one meta-analysis, or a stack of them): nothing to
        # broadcast, and the model is of full rank wherever there are more studies than p
        shape = y.shape
        all_ok = shape[-1] > p
        ok = np.asarray(all_ok) if y.ndim == 1 else np.full(shape[:-1], all_ok)
    else:
        shape = np.broadcast_shapes(y.shape, v.shape, () if X is None else X.shape[:-1],
                                    () if mask is None else np.shape(mask))
        y = np.broadcast_to(y, shape)
        v = np.broadcast_to(v, shape)
        if X is not None or mask is not None:
            mask = np.ones(shape) if mask is None else np.broadcast_to(np.asarray(mask, float),
                                                                       shape)
        if X is not None:
            X = np.broadcast_to(X, shape + X.shape[-1:])
            ok = full_rank(X, mask) & (mask.sum(axis=-1) > p)
        else:
            ok = np.broadcast_to(_count(y, mask) > p, shape[:-1])
        all_ok = bool(ok.all())
        if mask is not None and not all_ok:  # fit the rank-deficient problems on all
            mask = np.where(ok[..., None], mask, 1.0)  # studies, then blank them
    k = _count(y, mask)
    w0 = 1.0 / v if mask is None else mask / v
    _, _, e0, h0 = wls(y, w0, X)
    q = (w0 * e0 ** 2).sum(axis=-1)
    trp0 = (w0 * (1.0 - h0)).sum(axis=-1)
    if method == "FE":
        t2 = np.zeros(shape[:-1])
        w = w0
    else:
        t2 = tau2(y, v, X, mask, method=method, tol=tol)
        w = _weights(v, t2, mask)
    beta, A, e, h = wls(y, w, X)
    rss = (w * e ** 2).sum(axis=-1)
    if interval == "knha":
        s2w = np.where(rss <= np.finfo(float).eps, 0.0, rss / (k - p))
        if knha_floor:
            s2w = np.maximum(s2w, 1.0)
    else:
        s2w = np.ones(shape[:-1])
    vb = s2w[..., None, None] * A
    if not all_ok:
        bad = ~ok

        def blank(a):
            a = np.array(a, float)
            a[bad] = np.nan
            return a
        beta, vb, A, t2, s2w, e, w, h, q, trp0, rss = map(
            blank, (beta, vb, A, t2, s2w, e, w, h, q, trp0, rss))
    return Fit(beta, vb, A, t2, s2w, e, w, h, q, trp0, np.asarray(k), rss, np.asarray(ok))


def qprofile(y, v, X=None, mask=None, *, level: float):
    """Q-profile interval of tau2 (Viechtbauer 2007): the bounds solve
    ``QE(tau2) = chi2_{k-p}(1 - a/2)`` (low) and ``chi2_{k-p}(a/2)`` (high), ``a = 1 - level``;
    a bound is 0 when ``QE(0)`` is already below its target. Returns ``(low, high)`` arrays."""
    from scipy import special

    k = _count(y, mask)
    a = 1.0 - level
    df = np.asarray(k - n_coef(X), float)
    q_lo = special.chdtri(df, a / 2)      # the 1 - a/2 quantile of chi2(df)
    q_hi = special.chdtri(df, 1 - a / 2)  # the a/2 quantile
    return qe_root(y, v, X, mask, q_lo), qe_root(y, v, X, mask, q_hi)


def i2_h2(q, df, trp0, tau2_value, fixed: bool):
    """I² (percent) and H² as metafor prints them.

    Random effects: ``I2 = 100 tau2 / (vt + tau2)``, ``H2 = 1 + tau2 / vt`` with the typical
    within-study variance ``vt = df / tr(P)`` under fixed-effect weights (Higgins & Thompson
    2002); fixed effect: the Q-based ``I2 = 100 max(0, (Q - df) / Q)`` and ``H2 = Q / df``.
    """
    if (np.ndim(q) == 0 and np.ndim(df) == 0 and np.ndim(trp0) == 0 and np.ndim(tau2_value) == 0
            and 0 < df and 0.0 < trp0 < math.inf):
        # one model: the same operations on scalars, with no division by 0 to silence
        if fixed:
            i2 = np.maximum(0.0, 100 * (q - df) / q) if q > 0 else 0.0
            return np.asarray(i2, float), q / df
        vt = df / trp0
        return 100 * tau2_value / (vt + tau2_value), 1 + tau2_value / vt
    with np.errstate(invalid="ignore", divide="ignore"):
        if fixed:
            i2 = np.where(q > 0, np.maximum(0.0, 100 * (q - df) / np.where(q > 0, q, 1.0)), 0.0)
            return i2, q / df
        vt = df / trp0
        return 100 * tau2_value / (vt + tau2_value), 1 + tau2_value / vt


def pi_quantile(dist: str, level: float, df_resid) -> float:
    """The quantile of a prediction interval ``estimate +- q sqrt(se^2 + tau2)``: normal
    (``'z'``), t(k - p) (``'t(k-1)'``, metafor's ``predict.rma`` with t tests) or t(k - p - 1)
    (``'t(k-2)'``, Higgins, Thompson & Spiegelhalter 2009; floored at 1 df as metafor)."""
    from scipy import special

    q = (1 + level) / 2
    if dist == "z":
        return float(special.ndtri(q))
    df = max(1, int(df_resid) - (0 if dist == "t(k-1)" else 1))
    return float(special.stdtrit(df, q))


def quantile(level: float, df=None) -> float:
    """The two-sided ``level`` quantile of the normal (``df`` None) or of t(df)."""
    from scipy import special

    q = (1 + level) / 2
    return float(special.ndtri(q) if df is None else special.stdtrit(df, q))


def two_sided_p(statistic, df=None):
    """Two-sided p-value(s) of z (``df`` None) or t(df) statistics."""
    from scipy import special

    a = np.abs(np.asarray(statistic, float))
    if df is None:
        return np.minimum(1.0, 2 * special.ndtr(-a))
    return np.minimum(1.0, 2 * special.stdtr(df, -a))


def chi2_sf(q, df):
    """The upper tail of chi2(df) at ``q``."""
    from scipy import special

    return special.chdtrc(df, q)


# ---------------------------------------------------------------------------------------------
# refits: leave-one-out, cumulative, influence

@dataclass(frozen=True, slots=True)
class Model:
    """The data and settings of a fitted model: what every refit needs.

    ``X`` always holds the model matrix (a column of ones without moderators); ``intercept_only``
    says the model has no moderators, so the engine takes its closed-form path (``X=None``).
    """

    y: np.ndarray
    v: np.ndarray
    X: np.ndarray
    labels: tuple
    names: tuple
    method: str
    interval: str
    knha_floor: bool
    tol: float
    pi_dist: str = "z"

    @property
    def intercept_only(self) -> bool:
        return self.names == ("intercept",)

    @property
    def Xfit(self):
        """``X`` for the engine: None without moderators."""
        return None if self.intercept_only else self.X

    def settings(self) -> dict:
        """Keyword arguments of :func:`fit` that reproduce this model."""
        return dict(method=self.method, interval=self.interval, knha_floor=self.knha_floor,
                    tol=self.tol)


def _block_rows(k: int, p: int) -> int:
    """Problems of k studies fitted at once so that a block stays near ``_BLOCK_BYTES``."""
    per_problem = 8 * k * _ARRAYS_PER_PROBLEM * (p + 1)
    return int(max(1, min(k, _BLOCK_BYTES // per_problem)))


def check_refits(k: int, p: int, what: str, *, blocks: bool = True) -> None:
    """Refuse k leave-one-out or cumulative refits above ``MAX_REFIT_K`` studies, and (with
    ``blocks``) a block of refits that would not fit in the available memory."""
    from .._memory import check_memory

    if k > MAX_REFIT_K:
        raise ParameterError(
            f"{what} refit the model once per study: k = {k:,} studies means {k:,} fits of "
            f"{k:,} studies (k^2 work); replikit refuses above k = {MAX_REFIT_K:,} "
            f"(replikit.replicate.influence.MAX_REFIT_K). Reduce the number of studies (e.g. "
            f"pool them into groups) or leave out the per-study diagnostics.")
    if not blocks:
        return
    rows = _block_rows(k, p)
    check_memory(8.0 * rows * k * _ARRAYS_PER_PROBLEM * (p + 1),
                 what=f"{what} of k = {k:,} studies ({rows} refits at a time)",
                 reduce="the number of studies k")


def deleted(rows: np.ndarray, k: int) -> np.ndarray:
    """Masks of the fits without study ``i`` for ``i`` in ``rows`` (rows of ``1 - I``)."""
    return (np.arange(k)[None, :] != rows[:, None]).astype(float)


def first(rows: np.ndarray, k: int) -> np.ndarray:
    """Masks of the fits on the first ``i + 1`` studies for ``i`` in ``rows``."""
    return (np.arange(k)[None, :] <= rows[:, None]).astype(float)


def refits(m: Model, masks, *, dfbetas: bool = False, what: str = "the refits"):
    """:func:`fit` of the k problems ``masks(rows)`` (rows ``0..k-1``), in blocks of bounded
    memory; returns the per-problem results (no k x k array is kept) and, with ``dfbetas``,
    ``diag((X' W_(-i) X)^-1)`` with ``W_(-i) = diag(1 / (v + tau2_(-i)))`` over all k
    studies."""
    from types import SimpleNamespace

    k, p = m.X.shape
    check_refits(k, p, what)
    step = _block_rows(k, p)
    keep = ("beta", "vb", "tau2", "s2w", "qe", "trp0", "ok")
    parts: dict = {name: [] for name in keep + ("a_diag",)}
    X = m.Xfit
    for start in range(0, k, step):
        rows = np.arange(start, min(k, start + step))
        f = fit(m.y, m.v, X, masks(rows), **m.settings())
        for name in keep:
            parts[name].append(getattr(f, name))
        if dfbetas:
            n = rows.size
            w_all = 1.0 / (m.v[None, :] + f.tau2[:, None])
            _, A_all, _, _ = wls(np.broadcast_to(m.y, (n, k)),
                                 np.where(np.isfinite(w_all), w_all, 1.0),
                                 None if X is None else np.broadcast_to(X, (n, k, p)))
            parts["a_diag"].append(np.diagonal(A_all, axis1=-2, axis2=-1))
    out = {name: np.concatenate(parts[name]) for name in keep}
    if dfbetas:
        out["a_diag"] = np.concatenate(parts["a_diag"])
    return SimpleNamespace(**out)


# ---------------------------------------------------------------------------------------------
# fields of results computed when first read (the τ² interval of a meta-analysis, the profile
# intervals of a multilevel model)

class ComputedOnRead:
    """A field of a frozen, slotted dataclass whose value ``None`` means "not computed yet".

    The first read computes the value with ``compute(obj)`` and keeps it in the field's slot;
    everything that reads the field (``str``, ``to_dict``, ``==``, ``hash``, ``repr``, pickling,
    :func:`dataclasses.replace`) sees it as if it had been given, so only a caller who never
    reads it skips the work. Writing still goes through the dataclass (frozen: refused).
    """

    __slots__ = ("_slot", "_compute")

    def __init__(self, slot, compute):
        self._slot = slot  # the member descriptor the dataclass made for the field
        self._compute = compute

    def __get__(self, obj, owner=None):
        if obj is None:
            return self._slot
        value = self._slot.__get__(obj, owner)
        if value is None:
            value = self._compute(obj)
            self._slot.__set__(obj, value)
        return value

    def __set__(self, obj, value):  # the dataclass's __init__ and unpickling
        self._slot.__set__(obj, value)
