"""Meta-regression: mixed-effects models of study estimates on study-level moderators.

:func:`meta_regression` fits ``y_i = x_i' beta + u_i + e_i`` with ``u_i ~ N(0, tau2)`` and
``e_i ~ N(0, v_i)`` (Raudenbush 2009, eq. 16.9; Viechtbauer 2005, 2010; metafor's ``rma.uni``
with ``mods``), with every tau2 estimator of :func:`~replikit.replicate.meta_analysis`: the
coefficient table, the omnibus test of moderators QM (chi-square, or F under Knapp-Hartung), the
test of residual heterogeneity QE, residual tau2 with its SE and Q-profile interval, I2, H2, the
pseudo-R2 (proportion of tau2 explained), predicted effects with confidence and prediction
intervals, and a bubble plot.

The engine underneath is batched: arrays of shape ``(..., k)`` (``y``, ``v``, a 0/1 ``mask`` of
the studies each problem uses) and ``(..., k, p)`` (``X``) give a stack of fits in one call, so
leave-one-out fits (:mod:`~replikit.replicate.influence`), cumulative fits and the tests of
small-study effects share it. A mask entry of 0 drops a study from every sum.

Weighted least squares goes through the QR decomposition of ``W^(1/2) X`` (never the normal
equations), so a moderator such as a publication year next to the intercept loses no accuracy:

* ``beta = R^-1 Q' W^(1/2) y``, ``(X'WX)^-1 = R^-1 R^-T``;
* hat values ``h_i = ||Q_i||^2`` (the diagonal of ``X (X'WX)^-1 X' W``);
* ``tr(P) = sum w_i (1 - h_i)`` with ``P = W - W X (X'WX)^-1 X' W`` and ``y'Py = sum w e^2``.

The tau2 estimators are metafor's definitions with moderators (Viechtbauer 2005; Raudenbush
2009, sec. 16.4; the ``rma.uni`` help page): DL ``(QE - (k - p)) / tr(P)``, HS
``(QE - k) / sum w``, HE ``(RSS_OLS - tr(P_OLS V)) / (k - p)``, SJ ``tau0 RSS_tau0 / (k - p)``
with ``tau0 = mean((y - ybar)^2)``, PM the root of ``QE(tau2) = k - p``, ML and REML by Fisher
scoring started at HE; all truncated at 0. Without moderators they are the estimators of
:func:`~replikit.replicate.tau2_estimate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._compat import renamed, renamed_fields
from .._validation import check_confidence_level, check_float
from ..errors import ConvergenceError, DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval

if TYPE_CHECKING:
    import pandas as pd

__all__: list[str] = []

TAU2_METHODS = ("DL", "HE", "HS", "SJ", "ML", "REML", "PM")
RANK_TOL = 1e-9


def _wls(y, w, X):
    """Weighted least squares of ``y`` on ``X`` with weights ``w`` (0 drops a study).

    Returns ``beta (..., p)``, ``A = (X'WX)^-1 (..., p, p)``, residuals ``e (..., k)`` and hat
    values ``h (..., k)``.
    """
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


def _full_rank(X, mask) -> np.ndarray:
    """True where the studies kept by ``mask`` leave ``X`` of full column rank."""
    Z = X * mask[..., None]
    s = np.linalg.svd(Z, compute_uv=False)
    p = X.shape[-1]
    return s[..., p - 1] > RANK_TOL * np.maximum(s[..., 0], 1e-300)


def _rss(y, v, X, mask, tau2):
    w = mask / (v + np.asarray(tau2)[..., None])
    _, _, e, _ = _wls(y, w, X)
    return (w * e ** 2).sum(axis=-1)


def _bisect_decreasing(fun, target, lo, hi, n_iter=200):
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
    """A tau2 with ``QE(tau2) < target`` for every problem (grown by doubling)."""
    k = mask.sum(axis=-1)
    ybar = (mask * y).sum(axis=-1) / k
    spread = (mask * (y - ybar[..., None]) ** 2).sum(axis=-1)
    hi = np.asarray(10.0 * (spread + np.max(np.where(mask > 0, v, 0.0), axis=-1)) + 1.0)
    for _ in range(200):
        bad = _rss(y, v, X, mask, hi) >= target
        if not np.any(bad):
            break
        hi = np.where(bad, hi * 4.0, hi)
    return hi


def _qe_root(y, v, X, mask, target):
    """The tau2 where the generalized ``QE(tau2) = target``, 0 where ``QE(0) <= target``."""
    target = np.broadcast_to(np.asarray(target, float), y.shape[:-1])
    q0 = _rss(y, v, X, mask, np.zeros(y.shape[:-1]))
    hi = _upper_bracket(y, v, X, mask, target)
    fun = lambda t: _rss(y, v, X, mask, t)  # noqa: E731
    if target.ndim == 0:
        root = _bisect_decreasing(fun, target, 0.0, float(hi))
    else:
        root = _bisect_decreasing(fun, target, np.zeros(target.shape), hi)
    return np.where(q0 <= target, 0.0, root)


def _tau2_mixed(y, v, X, mask, method, *, max_iter=1000, tol=1e-12, strict=True):
    """tau2 by ``method`` for every problem of the stack (see the module docstring)."""
    k = mask.sum(axis=-1)
    p = X.shape[-1]
    dfr = k - p
    if method in ("DL", "HS"):
        w = mask / v
        _, _, e, h = _wls(y, w, X)
        qe = (w * e ** 2).sum(axis=-1)
        if method == "HS":
            return np.maximum(0.0, (qe - k) / w.sum(axis=-1))
        trp = (w * (1.0 - h)).sum(axis=-1)
        return np.maximum(0.0, (qe - dfr) / trp)
    if method == "SJ":
        ybar = (mask * y).sum(axis=-1) / k
        tau0 = (mask * (y - ybar[..., None]) ** 2).sum(axis=-1) / k
        w = mask / (v + tau0[..., None])
        _, _, e, _ = _wls(y, w, X)
        return tau0 * (w * e ** 2).sum(axis=-1) / dfr
    if method == "PM":
        return _qe_root(y, v, X, mask, dfr.astype(float))
    # HE, and the start of ML / REML
    _, _, e, h = _wls(y, mask.astype(float), X)
    he = ((mask * e ** 2).sum(axis=-1) - (mask * v * (1.0 - h)).sum(axis=-1)) / dfr
    he = np.maximum(0.0, he)
    if method == "HE":
        return he
    tau2 = np.array(he, float)
    done = np.zeros(tau2.shape, bool)
    for _ in range(max_iter):
        w = mask / (v + tau2[..., None])
        _, _, e, h = _wls(y, w, X)
        we2 = ((w * e) ** 2).sum(axis=-1)
        if method == "ML":
            new = tau2 + (we2 - w.sum(axis=-1)) / (w ** 2).sum(axis=-1)
        else:
            trp = (w * (1.0 - h)).sum(axis=-1)
            new = tau2 + (we2 - trp) / _tr_pp(w, X)
        # step halving instead of truncation keeps tau2 >= 0 on metafor's path (rma.uni's
        # Fisher scoring), so its 1e-5 stopping rule stops where metafor stops
        new = _scoring_step(tau2, new - tau2)
        conv = np.abs(new - tau2) <= tol * np.maximum(1.0, new)
        tau2 = np.where(done, tau2, new)
        done = done | conv
        if np.all(done):
            return tau2
    if strict:
        raise ConvergenceError(f"`method`={method!r}: tau2 did not converge in {max_iter} "
                               "iterations.")
    return np.where(done, tau2, np.nan)


def _scoring_step(tau2, step):
    """``tau2 + step`` of a Fisher-scoring iteration kept >= 0 by halving the step (rma.uni's
    step halving, not truncation); at ``tau2 = 0`` only an increase is taken."""
    step = np.where(tau2 > 0, step, np.maximum(step, 0.0))
    for _ in range(1100):
        neg = tau2 + step < 0
        if not np.any(neg):
            break
        step = np.where(neg, step / 2, step)
    return np.maximum(tau2 + step, 0.0)


def _p2_sum(w, X, a=None, b=None):
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


def _tr_pp(w, X):
    """``tr(P P)`` with ``P = W - W X (X'WX)^-1 X' W`` (see :func:`_p2_sum`)."""
    return _p2_sum(w, X)


def _p_diag(w, X):
    """The diagonal of ``P = W - W X (X'WX)^-1 X' W``: ``w_i (1 - h_i)`` (one problem)."""
    _, _, _, h = _wls(np.zeros(w.shape), w, X)
    return w * (1.0 - h)


def _se_tau2(y, v, X, method, tau2):
    """Standard error of tau2 as metafor's ``rma.uni`` reports it (one problem).

    The quadratic-form estimators ``tau2 = (y'Ay - c) / d`` with ``AX = 0`` have
    ``Var(y'Ay) = 2 tr(A S A S)``, ``S = V + tau2 I``; ML and REML use the inverse Fisher
    information (``2 / sum w^2``, ``2 / tr(P P)``) and PM ``sqrt(2 k^2 / (k - p)) / sum w``.
    The traces are computed without the k x k projection (:func:`_p2_sum`), so the SE of a
    meta-analysis of 100,000 studies needs O(k p^2) memory.
    """
    k, p = X.shape
    t = max(float(tau2), 0.0)
    if method in ("HS", "DL"):
        w = 1.0 / v
        trp = float(_p_diag(w, X).sum())
        num = 2 * (k - p) + 4 * t * trp + 2 * t ** 2 * _p2_sum(w, X)
        den = w.sum() if method == "HS" else trp
        return math.sqrt(num) / den
    if method == "HE":
        ones = np.ones(k)
        num = 2 * _p2_sum(ones, X, v, v) + 4 * t * float((_p_diag(ones, X) * v).sum()) \
            + 2 * t ** 2 * (k - p)
        return math.sqrt(num) / (k - p)
    if method == "SJ":
        tau0 = float(np.mean((y - y.mean()) ** 2))
        w = 1.0 / (v + tau0)
        num = 2 * _p2_sum(w, X, v, v) + 4 * t * _p2_sum(w, X, None, v) \
            + 2 * t ** 2 * _p2_sum(w, X)
        return tau0 / (k - p) * math.sqrt(num)
    w = 1.0 / (v + t)
    if method == "ML":
        return math.sqrt(2.0 / np.sum(w ** 2))
    if method == "REML":
        return math.sqrt(2.0 / _p2_sum(w, X))
    if method == "PM":
        return math.sqrt(2.0 * k ** 2 / (k - p)) / w.sum()
    return float("nan")


@dataclass(frozen=True, slots=True)
class _Fit:
    """The arrays of a stack of fitted models (leading shape ``(...)``).

    ``beta``, ``vb`` (with the Knapp-Hartung factor ``s2w``), ``A = (X'WX)^-1`` (without it),
    ``tau2``, residuals ``e = y - X beta``, RE weights ``w``, hat values ``h``, ``qe`` and
    ``trp0`` (Cochran's QE and ``tr(P)`` under FE weights), ``k`` studies used, ``rss`` (the
    generalized QE at tau2) and ``ok`` (X of full rank, tau2 found).
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


def _fit_stack(y, v, X, mask=None, *, method: str, ci: str = "wald", knha_floor: bool = False,
               strict: bool = True, tol: float = 1e-12) -> _Fit:
    """Fit the mixed-effects model (``method='FE'``: tau2 = 0) to every problem of the stack.

    Problems whose ``X`` is rank deficient on their studies (or whose tau2 did not converge,
    ``strict=False``) give NaN and ``ok = False``.
    """
    y = np.asarray(y, float)
    v = np.asarray(v, float)
    X = np.asarray(X, float)
    shape = np.broadcast_shapes(y.shape, v.shape, X.shape[:-1],
                                () if mask is None else np.shape(mask))
    mask = np.ones(shape) if mask is None else np.broadcast_to(np.asarray(mask, float), shape)
    y = np.broadcast_to(y, shape)
    v = np.broadcast_to(v, shape)
    X = np.broadcast_to(X, shape + X.shape[-1:])
    p = X.shape[-1]
    ok = _full_rank(X, mask) & (mask.sum(axis=-1) > p)
    if not np.all(ok):  # fit the rank-deficient problems on all studies, then blank them
        mask = np.where(ok[..., None], mask, 1.0)
    k = mask.sum(axis=-1)
    w0 = mask / v
    _, _, e0, h0 = _wls(y, w0, X)
    qe = (w0 * e0 ** 2).sum(axis=-1)
    trp0 = (w0 * (1.0 - h0)).sum(axis=-1)
    if method == "FE":
        tau2 = np.zeros(shape[:-1])
    else:
        tau2 = _tau2_mixed(y, v, X, mask, method, strict=strict, tol=tol)
    ok = ok & np.isfinite(tau2)
    tau2 = np.where(np.isfinite(tau2), tau2, 0.0)
    w = mask / (v + tau2[..., None])
    beta, A, e, h = _wls(y, w, X)
    rss = (w * e ** 2).sum(axis=-1)
    if ci == "knha":
        s2w = np.where(rss <= np.finfo(float).eps, 0.0, rss / (k - p))
        if knha_floor:
            s2w = np.maximum(s2w, 1.0)
    else:
        s2w = np.ones(shape[:-1])
    vb = s2w[..., None, None] * A
    bad = ~ok
    if np.any(bad):
        def blank(a):
            a = np.array(a, float)
            a[bad] = np.nan
            return a
        beta, vb, A, tau2, s2w, e, w, h, qe, trp0, rss = map(
            blank, (beta, vb, A, tau2, s2w, e, w, h, qe, trp0, rss))
    return _Fit(beta, vb, A, tau2, s2w, e, w, h, qe, trp0, k, rss, ok)


# ---------------------------------------------------------------------------------------------
# design matrices from moderators


@dataclass(frozen=True, slots=True)
class _Design:
    """A model matrix and how to rebuild it for new moderator values."""

    X: np.ndarray
    names: tuple
    terms: dict  # term -> tuple of column indices
    intercept: bool  # an intercept column was added (or the formula has one)
    encoders: tuple  # (term, 'numeric') or (term, 'categorical', levels) for frame input
    spec: object = None  # formulaic ModelSpec for formula input
    dropped: tuple = ()

    def matrix(self, newmods) -> np.ndarray:
        """Rows of the model matrix for new moderator values (see MetaRegression.predict)."""
        import pandas as pd

        p = len(self.names)
        if isinstance(newmods, dict):
            newmods = pd.DataFrame({key: np.atleast_1d(val) for key, val in newmods.items()})
        if isinstance(newmods, pd.Series):
            newmods = newmods.to_frame().T if newmods.name is None else newmods.to_frame()
        if isinstance(newmods, pd.DataFrame):
            if self.spec is not None:
                mm = self.spec.get_model_matrix(newmods)
                return np.asarray(mm, float)[:, [i for i in range(mm.shape[1])
                                                 if str(mm.columns[i]) in self.names]]
            cols = []
            if self.intercept:
                cols.append(np.ones(len(newmods)))
            for enc in self.encoders:
                term = enc[0]
                if term not in newmods.columns:
                    raise DataError(f"`newmods` needs the moderator column {term!r}; got "
                                    f"{list(newmods.columns)}.")
                if enc[1] == "numeric":
                    cols.append(pd.to_numeric(newmods[term], errors="raise").to_numpy(float))
                else:
                    values = newmods[term].astype(str).to_numpy()
                    unknown = sorted(set(values) - set(enc[2]))
                    if unknown:
                        raise DataError(f"`newmods`: {term!r} has level(s) {unknown} the model "
                                        f"was not fitted with; levels are {list(enc[2])}.")
                    cols.extend((values == lev).astype(float) for lev in enc[2][enc[3]:])
            X = np.column_stack(cols)
            keep = [i for i, nm in enumerate(self._all_names()) if nm in self.names]
            return X[:, keep]
        X = np.asarray(newmods, float)
        if X.ndim < 2:
            X = X.reshape(1, -1) if (X.size == p or (self.intercept and X.size == p - 1)) \
                else X.reshape(-1, 1)
        if self.intercept and X.shape[1] == p - 1:
            X = np.column_stack([np.ones(X.shape[0]), X])
        if X.shape[1] != p:
            raise DataError(f"`newmods` must have {p} columns ({', '.join(self.names)})"
                            + (f" or {p - 1} without the intercept" if self.intercept else "")
                            + f"; got {X.shape[1]}.")
        if not np.all(np.isfinite(X)):
            raise DataError("`newmods` must be finite.")
        return X

    def _all_names(self) -> list:
        names = ["intercept"] if self.intercept else []
        for enc in self.encoders:
            names += [enc[0]] if enc[1] == "numeric" else [f"{enc[0]}[{lev}]"
                                                            for lev in enc[2][enc[3]:]]
        return names


def _levels(values) -> tuple:
    import pandas as pd

    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(str(c) for c in values.cat.categories if c in set(values))
    uniq = pd.unique(values.astype(str))
    try:
        return tuple(sorted(uniq, key=float))
    except ValueError:
        return tuple(sorted(uniq))


def _frame_design(frame, k: int, intercept: bool) -> tuple[list, list, list]:
    import pandas as pd
    from pandas.api import types as ptypes

    cols, names, encoders = [], [], []
    for term in frame.columns:
        col = frame[term]
        name = str(term)
        if col.isna().any():
            bad = np.flatnonzero(col.isna().to_numpy())
            raise DataError(f"moderator {name!r} is missing for {bad.size} stud"
                            f"{'y' if bad.size == 1 else 'ies'} (positions "
                            f"{bad[:5].tolist()}); fill or drop them.")
        numeric = ptypes.is_numeric_dtype(col) and not ptypes.is_bool_dtype(col)
        if ptypes.is_bool_dtype(col):
            col = col.astype(int)
            numeric = True
        if not numeric and not isinstance(col.dtype, pd.CategoricalDtype):
            as_num = pd.to_numeric(col, errors="coerce")
            if as_num.notna().all():
                col, numeric = as_num, True
        if numeric:
            x = col.to_numpy(float)
            if not np.all(np.isfinite(x)):
                raise DataError(f"moderator {name!r} must be finite; found NaN/inf.")
            cols.append(x)
            names.append(name)
            encoders.append((name, "numeric"))
        else:
            levels = _levels(col)
            values = col.astype(str).to_numpy()
            # dummies against the first level; without an intercept the first factor gets one
            # column per level (as R's model.matrix for ``~ 0 + factor``)
            first = 1 if (intercept or any(e[1] == "categorical" for e in encoders)) else 0
            encoders.append((name, "categorical", levels, first))
            for lev in levels[first:]:
                cols.append((values == lev).astype(float))
                names.append(f"{name}[{lev}]")
    return cols, names, encoders


def _design_iv(moderators, data, k: int, intercept: bool) -> _Design:
    import pandas as pd

    spec = None
    if isinstance(moderators, str):
        if data is None or not isinstance(data, pd.DataFrame):
            raise ParameterTypeError("a formula in `moderators` needs `data`, the DataFrame of "
                                     "study-level columns it names.")
        try:
            import formulaic
        except ImportError as exc:  # pragma: no cover - formulaic ships with statsmodels
            raise ParameterError("formulas in `moderators` need the package 'formulaic' "
                                 "(pip install formulaic); or pass a DataFrame of moderator "
                                 "columns.") from exc
        formula = moderators.strip()
        if "~" in formula:
            lhs, formula = formula.split("~", 1)
            if lhs.strip():
                raise ParameterError(f"`moderators`: give the right-hand side only "
                                     f"('~ ablat + alloc'); got {moderators!r}.")
        if len(data) != k:
            raise DataError(f"`data` must have one row per study ({k}); got {len(data)}.")
        try:
            mm = formulaic.model_matrix(formula, data.reset_index(drop=True))
        except Exception as exc:  # formulaic raises many types for bad formulas
            raise ParameterError(f"`moderators`: cannot build the model matrix of "
                                 f"{moderators!r}: {exc}") from None
        X = np.asarray(mm, float)
        names = [("intercept" if str(c) == "Intercept" else str(c)) for c in mm.columns]
        has_int = "intercept" in names
        terms = {}
        for term, sl in mm.model_spec.term_slices.items():
            name = str(term)
            if name == "1":
                continue
            terms[name] = tuple(range(sl.start, sl.stop))
        spec = mm.model_spec
        encoders = ()
    else:
        if moderators is None:
            cols, names, encoders = [], [], []
        else:
            if isinstance(moderators, pd.Series):
                moderators = moderators.to_frame(moderators.name or "x")
            elif isinstance(moderators, dict):
                moderators = pd.DataFrame({str(key): np.asarray(val).ravel()
                                           for key, val in moderators.items()})
            elif not isinstance(moderators, pd.DataFrame):
                arr = np.asarray(moderators)
                if arr.ndim == 1:
                    arr = arr[:, None]
                if arr.ndim != 2:
                    raise DataError(f"`moderators` must be a DataFrame, a dict of columns, a "
                                    f"formula or an array of shape (k, m); got shape "
                                    f"{arr.shape}.")
                names0 = ["x"] if arr.shape[1] == 1 else [f"x{j + 1}"
                                                          for j in range(arr.shape[1])]
                moderators = pd.DataFrame(arr, columns=names0)
            if len(moderators) != k:
                raise DataError(f"`moderators` must have one row per study ({k}); got "
                                f"{len(moderators)}.")
            cols, names, encoders = _frame_design(moderators.reset_index(drop=True), k,
                                                  intercept)
        if intercept:
            cols.insert(0, np.ones(k))
            names.insert(0, "intercept")
        if not cols:
            raise ParameterError("a model without moderators needs the intercept "
                                 "(`intercept=True`).")
        X = np.column_stack(cols)
        has_int = bool(intercept)
        terms, j = {}, 1 if intercept else 0
        for enc in encoders:
            n = 1 if enc[1] == "numeric" else len(enc[2]) - enc[3]
            terms[enc[0]] = tuple(range(j, j + n))
            j += n
        encoders = tuple(encoders)
    # drop columns that add nothing to the column space (as metafor does, with a warning)
    keep, dropped = [], []
    for j in range(X.shape[1]):
        trial = X[:, keep + [j]]
        s = np.linalg.svd(trial, compute_uv=False)
        if s[-1] > RANK_TOL * s[0] and np.any(X[:, j] != 0):
            keep.append(j)
        else:
            dropped.append(names[j])
    if dropped:
        import warnings

        from ..errors import ReplikitWarning

        warnings.warn(f"redundant moderator column(s) dropped from the model (collinear with "
                      f"the others or constant): {', '.join(dropped)}.", ReplikitWarning,
                      stacklevel=4)
        remap = {old: new for new, old in enumerate(keep)}
        terms = {t: tuple(remap[i] for i in idx if i in remap) for t, idx in terms.items()}
        terms = {t: idx for t, idx in terms.items() if idx}
        X = X[:, keep]
        names = [names[j] for j in keep]
    if X.shape[0] <= X.shape[1]:
        raise DataError(f"a meta-regression with {X.shape[1]} coefficient(s) needs more than "
                        f"{X.shape[1]} studies; got {X.shape[0]}.")
    return _Design(X, tuple(names), terms, has_int, encoders, spec, tuple(dropped))


def _has_intercept_space(X) -> bool:
    """The constant vector lies in the column space of X (the model nests the intercept)."""
    ones = np.ones(X.shape[0])
    coef, *_ = np.linalg.lstsq(X, ones, rcond=None)
    return bool(np.allclose(X @ coef, ones, atol=1e-8))


# ---------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, slots=True)
class ModeratorTest:
    """Omnibus Wald test that a set of coefficients is zero (metafor's QM, ``anova(btt=)``).

    Attributes
    ----------
    statistic : float
        ``QM = b' Var(b)^-1 b`` over the tested coefficients (chi-square with ``df``), or
        ``QM / df`` (F with ``df`` and ``df2``) under Knapp-Hartung.
    df, df2 : int, int or None
    pvalue : float
    coefficients : tuple of str
        The tested coefficients.
    distribution : {'chi2', 'F'}
    """

    statistic: float
    df: int
    df2: int | None
    pvalue: float
    coefficients: tuple
    distribution: str

    def __str__(self) -> str:
        which = ", ".join(self.coefficients)
        if self.distribution == "F":
            return (f"Test of moderators ({which}): F({self.df}, {self.df2}) = "
                    f"{self.statistic:.4f}, {_p_is(self.pvalue)}")
        return (f"Test of moderators ({which}): QM({self.df}) = {self.statistic:.4f}, "
                f"{_p_is(self.pvalue)}")

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([{"coefficients": ", ".join(self.coefficients),
                              "statistic": self.statistic, "df": self.df, "df2": self.df2,
                              "pvalue": self.pvalue, "distribution": self.distribution}])


def _fmt_p(p: float) -> str:
    return "<.0001" if p < 1e-4 else f"{p:.4f}"


def _p_is(p: float) -> str:
    """``'p < .0001'`` or ``'p = 0.0123'`` (metafor's printing)."""
    return "p < .0001" if p < 1e-4 else f"p = {p:.4f}"


@renamed_fields(method="tau2_method")
@dataclass(frozen=True, slots=True)
class Heterogeneity:
    """Between-study (or residual) heterogeneity with Q-profile intervals (metafor ``confint``).

    Attributes
    ----------
    tau2, se_tau2 : float
        The tau2 estimate and its SE (as ``rma.uni`` reports it; NaN for FE).
    tau2_ci, tau_ci, i2_ci, h2_ci : ConfidenceInterval
        Q-profile interval of tau2 (Viechtbauer 2007) and its images: ``tau = sqrt(tau2)``,
        ``I2 = 100 tau2 / (vt + tau2)``, ``H2 = 1 + tau2 / vt`` with the typical within-study
        variance ``vt = (k - p) / tr(P)`` (Higgins & Thompson 2002; metafor's ``confint.rma``).
    i2, h2 : float
        The estimates as metafor prints them: tau2-based for random effects, Q-based
        (``100 (QE - df)/QE``, ``QE/df``) for FE.
    q, q_df, q_pvalue : float, int, float
        Cochran's Q (QE with moderators) and its test.
    confidence_level : float
    residual : bool
        True for a meta-regression (heterogeneity not explained by the moderators).
    method : str
    """

    tau2: float
    se_tau2: float
    tau2_ci: ConfidenceInterval
    tau: float
    tau_ci: ConfidenceInterval
    i2: float
    i2_ci: ConfidenceInterval
    h2: float
    h2_ci: ConfidenceInterval
    q: float
    q_df: int
    q_pvalue: float
    vt: float
    confidence_level: float
    residual: bool
    tau2_method: str

    def to_frame(self):
        """Rows tau2, tau, I2 (%), H2: ``estimate, se, ci_low, ci_high``."""
        import pandas as pd

        rows = [("tau2", self.tau2, self.se_tau2, self.tau2_ci),
                ("tau", self.tau, float("nan"), self.tau_ci),
                ("I2 (%)", self.i2, float("nan"), self.i2_ci),
                ("H2", self.h2, float("nan"), self.h2_ci)]
        return pd.DataFrame([{"quantity": q, "estimate": e, "se": s, "ci_low": c.low,
                              "ci_high": c.high, "confidence_level": self.confidence_level}
                             for q, e, s, c in rows])

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        what = "residual heterogeneity" if self.residual else "heterogeneity"
        lines = [f"{what} ({self.tau2_method}; {lvl}% Q-profile intervals):"]
        for r in self.to_frame().itertuples(index=False):
            se = "" if not np.isfinite(r.se) else f" (SE {r.se:.4f})"
            lines.append(f"  {r.quantity:<7} {r.estimate:9.4f}{se} [{r.ci_low:.4f}, "
                         f"{r.ci_high:.4f}]")
        lines.append(f"  Q({self.q_df}) = {self.q:.4f}, {_p_is(self.q_pvalue)}")
        return "\n".join(lines)


def _qprofile(y, v, X, level: float) -> tuple[float, float]:
    """Q-profile interval of tau2: ``QE(tau2) = chi2_{k-p}`` quantiles (Viechtbauer 2007)."""
    from scipy import stats

    k, p = X.shape
    a = 1.0 - level
    mask = np.ones(k)
    lo = _qe_root(y, v, X, mask, stats.chi2.ppf(1 - a / 2, k - p))
    hi = _qe_root(y, v, X, mask, stats.chi2.ppf(a / 2, k - p))
    return float(lo), float(hi)


def _heterogeneity(y, v, X, *, method, tau2, qe, trp0, i2, h2, level, residual):
    from scipy import stats

    k, p = X.shape
    lo, hi = _qprofile(y, v, X, level)
    vt = (k - p) / trp0
    se = float(_se_tau2(y, v, X, method, tau2)) if method != "FE" else float("nan")
    return Heterogeneity(
        tau2=float(tau2), se_tau2=se, tau2_ci=ConfidenceInterval(lo, hi),
        tau=math.sqrt(max(tau2, 0.0)), tau_ci=ConfidenceInterval(math.sqrt(lo), math.sqrt(hi)),
        i2=float(i2), i2_ci=ConfidenceInterval(100 * lo / (vt + lo), 100 * hi / (vt + hi)),
        h2=float(h2), h2_ci=ConfidenceInterval(1 + lo / vt, 1 + hi / vt), q=float(qe),
        q_df=int(k - p), q_pvalue=float(stats.chi2.sf(qe, k - p)), vt=float(vt),
        confidence_level=level, residual=residual, tau2_method=method)


@renamed_fields(method="tau2_method", ci_method="interval",
                values={"interval": {"z": "wald"}})
@dataclass(frozen=True, slots=True)
class MetaRegression:
    """A fitted meta-regression (mixed-effects model; fixed-effects with ``method='FE'``).

    Attributes
    ----------
    names : tuple of str
        Coefficient names (``'intercept'``, numeric moderators, ``'factor[level]'`` dummies
        against the first level).
    beta, vcov : ndarray
        Coefficients and their covariance (Knapp-Hartung-scaled with ``ci='knha'``).
    method, ci_method : str
        tau2 estimator (or ``'FE'``) and ``'z'`` / ``'knha'``.
    df : float or None
        Residual df ``k - p`` of the t and F tests (Knapp-Hartung), None for z tests.
    tau2, se_tau2 : float
        Residual between-study variance and its SE.
    qe, qe_df, qe_pvalue : float, int, float
        Test of residual heterogeneity (Cochran's QE with FE weights, chi2 with ``k - p`` df).
    qm_test : ModeratorTest
        Omnibus test of the moderators (every coefficient but the intercept by default).
    i2, h2 : float
        Residual I2 and H2 as metafor prints them.
    r2 : float or None
        Pseudo-R2, percent of tau2 explained: ``100 max(0, (tau2_0 - tau2) / tau2_0)`` with
        ``tau2_0`` from the model without moderators (Raudenbush 2009, eq. 16.17); for FE the
        adjusted R2 of the weighted regression. None for models without an intercept in their
        column space or without moderators.
    k, p : int
    labels, y, v, X : tuple, ndarray
        Study labels, estimates, sampling variances and the model matrix.
    terms : dict
        Moderator -> indices of its coefficients (for tests of a factor).
    dropped : tuple of str
        Redundant model-matrix columns left out.
    pi_dist : str
        Reference distribution of prediction intervals (see :meth:`predict`).
    """

    names: tuple
    beta: np.ndarray = field(repr=False)
    vcov: np.ndarray = field(repr=False)
    tau2_method: str
    interval: str
    df: float | None
    tau2: float
    se_tau2: float
    qe: float
    qe_df: int
    qe_pvalue: float
    qm_test: ModeratorTest
    i2: float
    h2: float
    r2: float | None
    k: int
    p: int
    labels: tuple = field(repr=False)
    y: np.ndarray = field(repr=False)
    v: np.ndarray = field(repr=False)
    X: np.ndarray = field(repr=False)
    terms: dict = field(repr=False)
    dropped: tuple = ()
    pi_dist: str = "z"
    knha_floor: bool = False
    tol: float = 1e-12
    trp0: float = field(default=float("nan"), repr=False)
    design: _Design | None = field(default=None, repr=False)

    # -- coefficients ---------------------------------------------------------------------
    @property
    def se(self) -> np.ndarray:
        """Standard errors of the coefficients."""
        return np.sqrt(np.diag(self.vcov))

    @property
    def statistic(self) -> np.ndarray:
        """z (or t) statistics of the coefficients."""
        return self.beta / self.se

    @property
    def pvalue(self) -> np.ndarray:
        """Two-sided p-values of the coefficients."""
        from scipy import stats

        dist = stats.norm if self.df is None else stats.t(self.df)
        return np.minimum(1.0, 2 * dist.sf(np.abs(self.statistic)))

    @property
    def qm(self) -> float:
        """The omnibus statistic of :attr:`qm_test` (QM, or F under Knapp-Hartung)."""
        return self.qm_test.statistic

    @property
    def qm_pvalue(self) -> float:
        return self.qm_test.pvalue

    @property
    def intercept(self) -> bool:
        return "intercept" in self.names

    @property
    def model_label(self) -> str:
        if self.p == 1 and self.intercept:
            return "FE Model" if self.tau2_method == "FE" else f"RE Model ({self.tau2_method})"
        return "FE Model with moderators" if self.tau2_method == "FE" else \
            f"Mixed-Effects Model ({self.tau2_method})"

    def _crit(self, confidence_level: float) -> float:
        from scipy import stats

        level = check_confidence_level(confidence_level)
        dist = stats.norm if self.df is None else stats.t(self.df)
        return float(dist.ppf((1 + level) / 2))

    def confidence_interval(self, confidence_level: float = 0.95):
        """Intervals of the coefficients: ``(low, high)`` arrays (z, or t(k-p) with KH)."""
        q = self._crit(confidence_level)
        return self.beta - q * self.se, self.beta + q * self.se

    def to_frame(self, confidence_level: float = 0.95):
        """The coefficient table: ``term, estimate, se, statistic, df, pvalue, ci_low,
        ci_high`` (one row per coefficient)."""
        import pandas as pd

        lo, hi = self.confidence_interval(confidence_level)
        return pd.DataFrame({"term": list(self.names), "estimate": self.beta, "se": self.se,
                             "statistic": self.statistic, "df": self.df,
                             "pvalue": self.pvalue, "ci_low": lo, "ci_high": hi})

    def summary_frame(self) -> pd.DataFrame:
        """One tidy row of model statistics (k, p, tau2, QE, QM, I2, H2, R2, estimator)."""
        import pandas as pd

        return pd.DataFrame([{
            "tau2_method": self.tau2_method, "interval": self.interval, "k": self.k,
            "p": self.p,
            "tau2": self.tau2, "se_tau2": self.se_tau2, "qe": self.qe, "qe_df": self.qe_df,
            "qe_pvalue": self.qe_pvalue, "qm": self.qm, "qm_df": self.qm_test.df,
            "qm_df2": self.qm_test.df2, "qm_pvalue": self.qm_pvalue,
            "qm_distribution": self.qm_test.distribution, "i2": self.i2, "h2": self.h2,
            "r2": self.r2, "moderators": ", ".join(self.terms)}])

    # -- tests, predictions, heterogeneity -------------------------------------------------
    def test_moderators(self, coefficients=None) -> ModeratorTest:
        """Wald test that the given coefficients are all zero (metafor's ``anova(btt=)``).

        Parameters
        ----------
        coefficients : None, str, int or sequence of them
            Coefficient names or 0-based positions, or moderator names (a factor's dummies
            together). Default: every coefficient but the intercept.

        Returns
        -------
        ModeratorTest
            ``QM ~ chi2(m)``, or ``QM / m ~ F(m, k - p)`` with Knapp-Hartung.
        """
        from scipy import stats

        idx = self._btt(coefficients)
        b = self.beta[idx]
        vb = self.vcov[np.ix_(idx, idx)]
        qm = float(b @ np.linalg.solve(vb, b))
        m = len(idx)
        names = tuple(self.names[i] for i in idx)
        if self.df is None:
            return ModeratorTest(qm, m, None, float(stats.chi2.sf(qm, m)), names, "chi2")
        f = qm / m
        return ModeratorTest(f, m, int(self.df), float(stats.f.sf(f, m, self.df)), names, "F")

    def _btt(self, coefficients) -> list:
        if coefficients is None:
            idx = [i for i, nm in enumerate(self.names) if nm != "intercept"]
            return idx or list(range(self.p))
        items = [coefficients] if isinstance(coefficients, (str, int, np.integer)) \
            else list(coefficients)
        idx = []
        for it in items:
            if isinstance(it, (int, np.integer)) and not isinstance(it, bool):
                if not 0 <= int(it) < self.p:
                    raise ParameterError(f"`coefficients`: position {it} outside 0..{self.p - 1}"
                                         f" (coefficients {list(self.names)}).")
                idx.append(int(it))
            elif str(it) in self.names:
                idx.append(self.names.index(str(it)))
            elif str(it) in self.terms:
                idx.extend(self.terms[str(it)])
            else:
                raise ParameterError(f"`coefficients`: {it!r} is not a coefficient or "
                                     f"moderator; coefficients are {list(self.names)}.")
        return sorted(set(idx))

    def predict(self, newmods=None, *, confidence_level: float = 0.95,
                pi_dist: str | None = None):
        """Predicted (average) effects with confidence and prediction intervals.

        Parameters
        ----------
        newmods : DataFrame, dict or array-like, optional
            Moderator values: a frame or dict with the moderator columns (categories by label),
            or a model-matrix array with or without the intercept column, as metafor's
            ``newmods``. Default: the fitted values of the studies.
        confidence_level : float
        pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
            Prediction-interval reference: normal, t with ``k - p`` df, or t with
            ``k - p - 1`` df (metafor's ``predtype='Riley'``). Default: the model's.

        Returns
        -------
        DataFrame
            ``estimate, se, ci_low, ci_high, pi_low, pi_high`` (``pi = estimate +-
            q sqrt(se^2 + tau2)``, metafor's ``predict.rma``) and the moderator columns.
        """
        import pandas as pd
        from scipy import stats

        from .meta import _check_pi_dist

        level = check_confidence_level(confidence_level)
        Xn = self.X if newmods is None else self.design.matrix(newmods)
        est = Xn @ self.beta
        se = np.sqrt(np.einsum("ij,jk,ik->i", Xn, self.vcov, Xn))
        q = self._crit(level)
        dist = _check_pi_dist(pi_dist or self.pi_dist, "pi_dist")
        if dist == "z":
            qp = float(stats.norm.ppf((1 + level) / 2))
        else:
            dfp = max(1, self.k - self.p - (0 if dist == "t(k-1)" else 1))
            qp = float(stats.t.ppf((1 + level) / 2, dfp))
        half = qp * np.sqrt(se ** 2 + self.tau2)
        out = pd.DataFrame({"estimate": est, "se": se, "ci_low": est - q * se,
                            "ci_high": est + q * se, "pi_low": est - half,
                            "pi_high": est + half})
        for j, nm in enumerate(self.names):
            if nm != "intercept":
                out[nm] = Xn[:, j]
        if newmods is None:
            out.insert(0, "label", list(self.labels))
        return out

    def heterogeneity(self, confidence_level: float = 0.95) -> Heterogeneity:
        """Residual tau2 (with SE), tau, I2 and H2 with Q-profile intervals (metafor's
        ``confint`` of an ``rma.uni`` model)."""
        level = check_confidence_level(confidence_level)
        return _heterogeneity(self.y, self.v, self.X, method=self.tau2_method, tau2=self.tau2,
                              qe=self.qe, trp0=self.trp0, i2=self.i2, h2=self.h2,
                              level=level, residual=self.p > 1 or not self.intercept)

    @property
    def fitted(self) -> np.ndarray:
        return self.X @ self.beta

    @property
    def residuals(self) -> np.ndarray:
        return self.y - self.fitted

    @property
    def weights(self) -> np.ndarray:
        """Weights in percent, ``100 w_i / sum w`` with ``w_i = 1 / (v_i + tau2)``."""
        w = 1.0 / (self.v + self.tau2)
        return 100 * w / w.sum()

    def plot(self, moderator: str | None = None, *, ax=None, confidence_level: float = 0.95,
             prediction_interval: bool = True, transform=None, xlabel: str | None = None,
             ylabel: str = "estimate", title: str | None = None):
        """Bubble plot of the estimates against one moderator (metafor's ``regplot``); see
        :func:`replikit.replicate.plots.bubble_plot`."""
        from .plots import bubble_plot

        return bubble_plot(self, moderator, ax=ax, confidence_level=confidence_level,
                           prediction_interval=prediction_interval, transform=transform,
                           xlabel=xlabel, ylabel=ylabel, title=title)

    def __str__(self) -> str:
        lo, hi = self.confidence_interval()
        resid = self.p > 1 or not self.intercept
        head = (f"{self.model_label}; k = {self.k}"
                + ("" if self.tau2_method == "FE" else f"; tau2 estimator: {self.tau2_method}")
                + ("; Knapp-Hartung t/F tests" if self.interval == "knha" else "; z tests"))
        lines = [head]
        if self.tau2_method != "FE":
            lines.append(f"  tau2 ({'residual' if resid else 'total'}) = {self.tau2:.4f} "
                         f"(SE = {self.se_tau2:.4f}), tau = {math.sqrt(self.tau2):.4f}")
        lines.append(f"  I2 = {self.i2:.2f}%; H2 = {self.h2:.2f}"
                     + ("" if self.r2 is None else f"; R2 (heterogeneity accounted for) = "
                                                   f"{self.r2:.2f}%"))
        lines.append(f"  Test for {'residual ' if resid else ''}heterogeneity: "
                     f"QE({self.qe_df}) = {self.qe:.4f}, {_p_is(self.qe_pvalue)}")
        if resid:
            lines.append("  " + str(self.qm_test))
        width = max(len(n) for n in self.names)
        stat = "t" if self.df is not None else "z"
        lines.append(f"  {'':<{width}}  {'estimate':>10} {'se':>9} {stat + 'val':>9} "
                     f"{'pval':>8} {'ci_low':>10} {'ci_high':>10}")
        for j, nm in enumerate(self.names):
            lines.append(f"  {nm:<{width}}  {self.beta[j]:10.4f} {self.se[j]:9.4f} "
                         f"{self.statistic[j]:9.4f} {_fmt_p(self.pvalue[j]):>8} "
                         f"{lo[j]:10.4f} {hi[j]:10.4f}")
        if self.dropped:
            lines.append(f"  redundant columns dropped: {', '.join(self.dropped)}")
        return "\n".join(lines)


def _meta_reg_iv(y, v, se, labels, method, ci, pi_dist):
    from .meta import _meta_iv

    return _meta_iv(y, v, se, labels, method, ci, pi_dist)


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def meta_regression(y, v=None, *, se=None, moderators=None, data=None, labels=None,
                    tau2_method: str = "REML", interval: str = "wald", knha_floor: bool = False,
                    intercept: bool = True, coefficients=None, pi_dist: str | None = None,
                    tol: float = 1e-12) -> MetaRegression:
    """Mixed-effects meta-regression of estimates on study-level moderators.

    Parameters
    ----------
    y : array-like of shape (k,)
        Study estimates.
    v, se : array-like of shape (k,)
        Sampling variances or standard errors (give one).
    moderators : DataFrame, dict, array-like or str, optional
        Study-level moderators, one row per study: numeric columns enter as they are,
        text/categorical columns as dummies against their first level (sorted); an array gives
        columns ``x1, x2, ...``; a formula string (``'~ ablat + C(alloc)'``, needs the package
        ``formulaic``) is evaluated on ``data``. None fits the model without moderators (the
        random-effects model of :func:`~replikit.replicate.meta_analysis`).
    data : DataFrame, optional
        The study-level table a formula refers to.
    labels : sequence of str, optional
    method : {'REML', 'ML', 'DL', 'HE', 'HS', 'SJ', 'PM', 'FE'}
        Residual tau2 estimator, or 'FE' for the fixed-effects meta-regression.
    ci : {'z', 'knha'}
        Wald z tests and a chi-square QM, or Knapp & Hartung (2003): ``Var(b)`` scaled by
        ``QE(tau2) / (k - p)``, t(k - p) tests and an F(m, k - p) omnibus test.
    knha_floor : bool
        Floor the Knapp-Hartung factor at 1 (metafor's ``test='adhoc'``).
    intercept : bool
        Add an intercept column (ignored for formulas, which say it themselves).
    coefficients : optional
        Coefficients of the omnibus test QM (metafor's ``btt``); default all but the intercept.
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Prediction intervals: z, t(k - p) or t(k - p - 1). Default z with ``ci='z'``, t(k - p)
        with ``ci='knha'``, as metafor's ``predict``.
    tol : float
        Convergence tolerance of ML/REML Fisher scoring (change of tau2). metafor stops at an
        absolute change of 1e-5, which moves the 4th decimal of some printed numbers.

    Returns
    -------
    MetaRegression

    Notes
    -----
    Weights ``w_i = 1/(v_i + tau2)``; ``b = (X'WX)^-1 X'Wy``, ``Var(b) = (X'WX)^-1``
    (Raudenbush 2009, eqs. 16.10-16.11); ``QE = sum (y - X b_FE)^2 / v`` ~ chi2(k - p) under
    homogeneity (eq. 16.7); ``QM = b_2' Var(b_2)^-1 b_2`` (eq. 16.12); pseudo-R2 eq. 16.17;
    residual ``I2 = 100 tau2 / (vt + tau2)`` with ``vt = (k - p) / tr(P)``. Viechtbauer (2010,
    JSS 36(3), sec. 3.3) and metafor's ``rma.uni`` define every printed number; the tests
    reproduce metafor's published examples (``tests/reference/replicate/README.md``).
    Implements the "why do studies differ" step after seed 000's random-effects combination.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.10, 0.30, 0.35, 0.65, 0.45, 0.15])
    >>> v = np.array([0.01, 0.02, 0.015, 0.01, 0.02, 0.03])
    >>> fit = meta_regression(y, v, moderators={"dose": [1, 2, 3, 6, 4, 1]})
    >>> fit.names
    ('intercept', 'dose')
    >>> round(float(fit.beta[1]), 4), round(fit.qe, 4)
    (0.105, 0.3206)
    """
    y, v, labels, method, ci, pi_dist = _meta_reg_iv(y, v, se, labels, tau2_method, interval,
                                                     pi_dist)
    tol = check_float(tol, "tol")
    if not tol > 0:
        raise ParameterError(f"`tol` must be > 0; got {tol}.")
    k = y.size
    design = _design_iv(moderators, data, k, bool(intercept))
    X = design.X
    p = X.shape[1]
    fit = _fit_stack(y, v, X, method=method, ci=ci, knha_floor=knha_floor, tol=tol)
    tau2 = float(fit.tau2)
    qe = float(fit.qe)
    trp0 = float(fit.trp0)
    from scipy import stats

    qe_p = float(stats.chi2.sf(qe, k - p))
    vt = (k - p) / trp0
    if method == "FE":
        i2 = max(0.0, 100 * (qe - (k - p)) / qe) if qe > 0 else 0.0
        h2 = qe / (k - p)
    else:
        i2 = 100 * tau2 / (vt + tau2)
        h2 = 1 + tau2 / vt
    r2 = None
    if p > 1 and _has_intercept_space(X):
        ones = np.ones((k, 1))
        if method == "FE":
            q_tot = float(_fit_stack(y, v, ones, method="FE").qe)
            r2 = 0.0 if q_tot <= 0 else 100 * max(0.0, 1 - (qe / (k - p)) / (q_tot / (k - 1)))
        else:
            tau2_0 = float(_fit_stack(y, v, ones, method=method, tol=tol).tau2)
            r2 = 0.0 if tau2_0 <= 0 else 100 * max(0.0, (tau2_0 - tau2) / tau2_0)
    se_t2 = float(_se_tau2(y, v, X, method, tau2)) if method != "FE" else float("nan")
    res = MetaRegression(
        names=design.names, beta=fit.beta, vcov=fit.vb, tau2_method=method, interval=ci,
        df=float(k - p) if ci == "knha" else None, tau2=tau2, se_tau2=se_t2, qe=qe,
        qe_df=int(k - p), qe_pvalue=qe_p, qm_test=ModeratorTest(0.0, 0, None, 1.0, (), "chi2"),
        i2=float(i2), h2=float(h2), r2=r2, k=k, p=p, labels=tuple(labels), y=y, v=v, X=X,
        terms=dict(design.terms), dropped=design.dropped, pi_dist=pi_dist,
        knha_floor=bool(knha_floor), tol=tol, trp0=trp0, design=design)
    object.__setattr__(res, "qm_test", res.test_moderators(coefficients))
    return res


__all__ += ["MetaRegression", "ModeratorTest", "Heterogeneity", "meta_regression"]
