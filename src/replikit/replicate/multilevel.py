"""Several effects per study: multilevel (multivariate) meta-analysis and cluster-robust
standard errors, with metafor's numbers.

Cross-validated results come as several correlated effects per study (one per fold, repeat,
metric or dataset). Pooling them as if independent understates the standard error. The
multilevel model of :func:`multilevel_meta_analysis` (metafor's
``rma.mv(yi, V, random = ~ 1 | outer/inner)``; Konstantopoulos 2011; Van den Noortgate et al.
2013) gives each nesting level its own random intercept,

``y = X beta + u_1 + ... + u_L + e``, ``u_l ~ N(0, sigma2_l Z_l Z_l')``, ``e ~ N(0, V)``,

where ``Z_l`` maps the effects to the clusters of level ``l`` (outermost first; a cluster of an
inner level is the path ``outer/inner``, as R's ``/``) and ``V`` is the known sampling
covariance (diagonal ``v``, or dense: block-diagonal by study when a study's effects share
data). The marginal covariance is ``M = V + sum_l sigma2_l Z_l Z_l'``; ``beta`` is the
generalized least-squares estimate with ``W = M^-1``, ``Var(beta) = (X'WX)^-1``. The variances
maximise the restricted (REML, the default) or full (ML) log-likelihood; their intervals are
profile-likelihood intervals (metafor's ``confint``).

:meth:`MultilevelMeta.robust` replaces the model-based ``Var(beta)`` with the cluster-robust
(sandwich) estimator of Hedges, Tipton & Johnson (2010): ``CR1`` with the small-sample factor
``J / (J - p)`` and t(J - p) tests (metafor's ``robust``), or the bias-reduced ``CR2``
(Bell & McCaffrey 2002; Tipton 2015; Pustejovsky & Tipton 2018) with Satterthwaite degrees of
freedom (clubSandwich's ``coef_test(fit, vcov = "CR2")``, metafor's
``robust(..., clubSandwich = TRUE)``). Robust inference stays valid when the working model
(which levels, which ``V``) is wrong, provided the clusters are independent.

Computation: the effects split into blocks that no covariance links (the outer clusters, joined
where ``V`` links them); ``M`` is block-diagonal, so every likelihood, gradient and information
evaluation is a batch of small Cholesky factorizations (blocks of equal size are stacked into one
array), never an ``N x N`` matrix. The log-variances are maximised by L-BFGS-B with the analytic
gradient, then polished by Fisher scoring on the variance scale with step halving (components on
the boundary 0 are held there while their score is negative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._format import interval as interval_text
from .._format import number
from .._format import pvalue as p_text
from .._validation import check_choice, check_confidence_level, check_float, check_interval
from ..errors import ConvergenceError, DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval, Result
from . import _rma

__all__ = ["MultilevelMeta", "RobustResult", "multilevel_meta_analysis", "ROBUST_METHODS"]

#: the estimators of the level variances
MULTILEVEL_METHODS = ("REML", "ML")
#: the cluster-robust variance estimators of :meth:`MultilevelMeta.robust`
ROBUST_METHODS = ("CR1", "CR2")
_LOG_2PI = math.log(2 * math.pi)


# ---------------------------------------------------------------------------------------------
# the engine: blocks of the marginal covariance, likelihood, score and information


class _Group:
    """Blocks of one size ``s``: effect indices ``idx (g, s)``, sampling covariances
    ``V (g, s, s)``, same-cluster indicators ``G (L, g, s, s)``, ``y (g, s)``, ``X (g, s, p)``."""

    __slots__ = ("idx", "V", "G", "y", "X")

    def __init__(self, idx, V, G, y, X):
        self.idx, self.V, self.G, self.y, self.X = idx, V, G, y, X


class _Model:
    """The data of a multilevel model, split into independent blocks of ``M``."""

    def __init__(self, y, X, v, V, codes):
        self.y, self.X, self.v, self.V, self.codes = y, X, v, V, codes
        n = y.size
        self.n, self.p, self.n_levels = n, X.shape[1], len(codes)
        self.block = _blocks(codes[0], V, n)
        self.groups = _groups(self.block, y, X, v, V, codes)
        _, self.logdet_xtx = np.linalg.slogdet(X.T @ X)

    def evaluate(self, sigma2, reml: bool, order: int = 0):
        """Log-likelihood (``order`` 0), with its gradient in ``sigma2`` (1) and the expected
        information (2); also ``beta``, ``A = (X'WX)^-1``, ``rss`` and the per-group ``W``."""
        sigma2 = np.asarray(sigma2, float)
        p, L = self.p, self.n_levels
        xtwx = np.zeros((p, p))
        xtwy = np.zeros(p)
        logdet = 0.0
        cache = []
        for grp in self.groups:
            M = grp.V + np.tensordot(sigma2, grp.G, axes=1)
            try:
                chol = np.linalg.cholesky(M)
            except np.linalg.LinAlgError:
                raise DataError("`V`: the sampling covariance is not positive definite (a "
                                "block of effects has a singular covariance).") from None
            logdet += 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum()
            W = np.linalg.inv(M)
            W = 0.5 * (W + np.swapaxes(W, 1, 2))
            WX = W @ grp.X
            xtwx += np.einsum("gsp,gsq->pq", grp.X, WX)
            xtwy += np.einsum("gsp,gs->p", WX, grp.y)
            cache.append((W, WX))
        try:
            cf = np.linalg.cholesky(xtwx)
        except np.linalg.LinAlgError:
            raise DataError("the moderators are collinear: X'WX is singular.") from None
        A = np.linalg.inv(xtwx)
        A = 0.5 * (A + A.T)
        beta = A @ xtwy
        rss = 0.0
        wr_list = []
        for grp, (W, _) in zip(self.groups, cache, strict=True):
            r = grp.y - grp.X @ beta
            Wr = np.einsum("gst,gt->gs", W, r)
            rss += float((r * Wr).sum())
            wr_list.append(Wr)
        logdet_xtwx = 2.0 * float(np.log(np.diag(cf)).sum())
        if reml:
            ll = -0.5 * ((self.n - p) * _LOG_2PI + logdet + logdet_xtwx + rss) \
                + 0.5 * self.logdet_xtx
        else:
            ll = -0.5 * (self.n * _LOG_2PI + logdet + rss)
        out = {"ll": float(ll), "beta": beta, "A": A, "rss": rss, "cache": cache,
               "wr": wr_list}
        if order == 0:
            return out
        tr_wg = np.zeros(L)
        q = np.zeros(L)
        S = np.zeros((L, p, p))
        T1 = np.zeros((L, L))
        K = np.zeros((L, L, p, p))
        for grp, (W, WX), Wr in zip(self.groups, cache, wr_list, strict=True):
            GWX = np.einsum("lgst,gtp->lgsp", grp.G, WX)
            tr_wg += np.einsum("gst,lgst->l", W, grp.G)
            q += np.einsum("gs,lgst,gt->l", Wr, grp.G, Wr)
            S += np.einsum("gsp,lgsq->lpq", WX, GWX)
            if order >= 2:
                WG = W[None] @ grp.G
                T1 += np.einsum("lgij,mgji->lm", WG, WG)
                if reml:
                    K += np.einsum("lgsp,gst,mgtq->lmpq", GWX, W, GWX)
        tr_pg = tr_wg - np.einsum("pq,lqp->l", A, S) if reml else tr_wg
        out["grad"] = 0.5 * (q - tr_pg)
        if order >= 2:
            if reml:
                AS = A[None] @ S  # (L, p, p)
                cross = np.einsum("lpq,mqp->lm", AS, AS)
                trak = np.einsum("pq,lmqp->lm", A, K)
                out["info"] = 0.5 * (T1 - 2.0 * trak + cross)
            else:
                out["info"] = 0.5 * T1
        return out

    # -- maximisation ----------------------------------------------------------------------
    def scale(self) -> float:
        var = float(np.var(self.y)) if self.n > 1 else 1.0
        return max(var, float(np.mean(self.v if self.V is None else np.diag(self.V))), 1e-12)

    def maximise(self, reml: bool, fixed=None, start=None, tol: float = 1e-10,
                 warm: bool = False):
        """The (restricted) ML estimate of the free variances (``fixed``: NaN where free);
        ``warm``: Fisher scoring from ``start`` alone (a profile moves the estimate little),
        the quasi-Newton search only if it fails."""
        from scipy import optimize

        L = self.n_levels
        fixed = np.full(L, np.nan) if fixed is None else np.asarray(fixed, float)
        free = np.isnan(fixed)
        scale = self.scale()
        if start is None:
            start = np.full(L, max(float(np.var(self.y)) - float(
                np.mean(self.v if self.V is None else np.diag(self.V))), 0.1 * scale) / L)
        s = np.where(free, np.maximum(np.asarray(start, float), 1e-4 * scale), fixed)
        if not free.any():
            return s, self.evaluate(s, reml)
        if warm:
            try:
                return self._polish(np.where(free, np.asarray(start, float), fixed), free,
                                    reml, tol, max_iter=50)
            except ConvergenceError:
                pass
        lo, hi = math.log(1e-12 * scale), math.log(1e8 * scale)

        def negll(theta):
            full = s.copy()
            full[free] = np.exp(theta)
            ev = self.evaluate(full, reml, order=1)
            return -ev["ll"], -ev["grad"][free] * full[free]

        res = optimize.minimize(negll, np.clip(np.log(s[free]), lo, hi), jac=True,
                                method="L-BFGS-B", bounds=[(lo, hi)] * int(free.sum()),
                                options={"ftol": 1e-14, "gtol": 1e-10, "maxiter": 2000})
        s = s.copy()
        s[free] = np.exp(res.x)
        return self._polish(s, free, reml, tol)

    def _polish(self, s, free, reml: bool, tol: float, max_iter: int = 200):
        """Fisher scoring on the variance scale from ``s``, kept >= 0 (active set at 0) and
        with step halving until the log-likelihood does not fall."""
        ev = self.evaluate(s, reml, order=2)
        for _ in range(max_iter):
            g, info = ev["grad"], ev["info"]
            act = free & ~((s <= 0) & (g <= 0))
            step = np.zeros_like(s)
            if act.any():
                sub = info[np.ix_(act, act)]
                try:
                    step[act] = np.linalg.solve(sub, g[act])
                except np.linalg.LinAlgError:
                    step[act] = np.linalg.lstsq(sub, g[act], rcond=None)[0]
            new = np.maximum(s + step, 0.0)
            for _halving in range(60):
                ev_new = self.evaluate(new, reml, order=2)
                if ev_new["ll"] >= ev["ll"] - 1e-12 * max(1.0, abs(ev["ll"])):
                    break
                step = step / 2
                new = np.maximum(s + step, 0.0)
            done = np.all(np.abs(new - s) <= tol * np.maximum(self.scale(), new))
            s, ev = new, ev_new
            if done:
                return s, ev
        raise ConvergenceError("the level variances did not converge in "
                               f"{max_iter} Fisher-scoring steps.")

    def profile_ci(self, level_index: int, sigma2, ll_max: float, reml: bool,
                   confidence_level: float):
        """Profile-likelihood interval of one level variance: where the log-likelihood
        maximised over the other variances falls ``chi2_1(level) / 2`` below its maximum."""
        from scipy import optimize, special

        target = ll_max - 0.5 * float(special.chdtri(1, 1 - confidence_level))
        est = float(sigma2[level_index])

        def prof(value):
            fixed = np.full(self.n_levels, np.nan)
            fixed[level_index] = value
            if self.n_levels == 1:
                return self.evaluate(fixed, reml)["ll"] - target
            found, ev = self.maximise(reml, fixed=fixed, start=last[0], tol=1e-12, warm=True)
            last[0] = found
            return ev["ll"] - target

        last = [np.asarray(sigma2, float).copy()]

        f0 = prof(0.0)
        if f0 >= 0:
            low = 0.0
        else:
            low = optimize.brentq(prof, 0.0, est, xtol=1e-14, rtol=1e-12)
        hi = max(est, 1e-4 * self.scale()) * 2.0
        for _ in range(100):
            if prof(hi) < 0:
                break
            hi *= 2.0
        else:  # pragma: no cover - the likelihood always falls eventually
            return ConfidenceInterval(low, math.inf)
        high = optimize.brentq(prof, est, hi, xtol=1e-14, rtol=1e-12)
        return ConfidenceInterval(float(low), float(high))

    # -- cluster-robust variances ------------------------------------------------------------
    def marginal_blocks(self, sigma2, members):
        """``M`` restricted to each list of effect indices in ``members`` (the robust
        clusters)."""
        out = []
        for idx in members:
            if self.V is None:
                Vc = np.diag(self.v[idx])
            else:
                Vc = self.V[np.ix_(idx, idx)]
            Mc = Vc.copy()
            for lvl, codes in enumerate(self.codes):
                c = codes[idx]
                Mc += sigma2[lvl] * (c[:, None] == c[None, :])
            out.append(Mc)
        return out

    def weighted_x(self, ev):
        """``W X`` (n, p) and the residuals ``y - X beta`` (n,) of an evaluation."""
        WX = np.empty((self.n, self.p))
        for grp, (_, wx) in zip(self.groups, ev["cache"], strict=True):
            WX[grp.idx.ravel()] = wx.reshape(-1, self.p)
        return WX, self.y - self.X @ ev["beta"]


def _blocks(outer, V, n):
    """Block labels: effects linked by a common outer cluster or a nonzero covariance."""
    if V is None:
        return outer
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    i, j = np.nonzero(V)
    _, first = np.unique(outer, return_index=True)
    lead = first[outer]
    rows = np.concatenate([i, np.arange(n)])
    cols = np.concatenate([j, lead])
    graph = sparse.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels


def _groups(block, y, X, v, V, codes):
    order = np.argsort(block, kind="stable")
    _, starts, sizes = np.unique(block[order], return_index=True, return_counts=True)
    groups = []
    for s in np.unique(sizes):
        which = starts[sizes == s]
        idx = order[which[:, None] + np.arange(s)[None, :]]
        if V is None:
            Vb = np.zeros((idx.shape[0], s, s))
            ar = np.arange(s)
            Vb[:, ar, ar] = v[idx]
        else:
            Vb = V[idx[:, :, None], idx[:, None, :]]
        G = np.stack([(c[idx][:, :, None] == c[idx][:, None, :]).astype(float) for c in codes])
        groups.append(_Group(idx, Vb, G, y[idx], X[idx]))
    return groups


def _inv_sqrt(B):
    """Symmetric inverse square roots of a stack of positive semi-definite matrices (the
    pseudo-inverse root on a null space, as clubSandwich)."""
    vals, vecs = np.linalg.eigh(B)
    tol = vals.max(axis=-1, keepdims=True) * 1e-12
    root = np.where(vals > tol, 1.0 / np.sqrt(np.where(vals > tol, vals, 1.0)), 0.0)
    return (vecs * root[..., None, :]) @ np.swapaxes(vecs, -1, -2)


def robust_vcov(model: _Model, sigma2, ev, cluster_codes, method: str, adjust: bool):
    """Cluster-robust ``Var(beta)`` and the degrees of freedom of each coefficient.

    CR1: ``A (sum_c X_c' W_c e_c e_c' W_c X_c) A`` times ``J / (J - p)`` (with ``adjust``),
    df ``J - p`` (Hedges, Tipton & Johnson 2010; metafor's ``robust``). CR2: the cluster
    residuals pre-multiplied by ``A_c = D_c' B_c^(-1/2) D_c``, ``B_c = D_c (M_c - X_c A X_c')
    D_c'``, ``M_c = D_c' D_c``, and Satterthwaite df (Tipton 2015; Pustejovsky & Tipton 2018,
    clubSandwich's ``coef_test``).
    """
    p = model.p
    A = ev["A"]
    WX, e = model.weighted_x(ev)
    _, inv = np.unique(cluster_codes, return_inverse=True)
    J = int(inv.max()) + 1
    if J <= p:
        raise DataError(f"cluster-robust standard errors need more clusters than "
                        f"coefficients; got {J} clusters for {p} coefficients.")
    if method == "CR1":
        U = np.zeros((J, p))
        np.add.at(U, inv, WX * e[:, None])
        meat = U.T @ U
        vb = A @ meat @ A
        if adjust:
            vb = vb * J / (J - p)
        return vb, np.full(p, float(J - p)), J
    # CR2: M must not link two clusters
    linked = np.unique(np.stack([model.block, inv]), axis=1)
    if np.unique(linked[0]).size != linked.shape[1]:
        raise ParameterError("`cluster`: CR2 needs every block of correlated effects (an "
                             "outer cluster, or effects linked by `V`) inside one cluster; "
                             "use coarser clusters (e.g. the outermost level) or "
                             "method='CR1'.")
    order = np.argsort(inv, kind="stable")
    _, starts, sizes = np.unique(inv[order], return_index=True, return_counts=True)
    members = [order[a:a + b] for a, b in zip(starts, sizes, strict=True)]
    Ms = model.marginal_blocks(sigma2, members)
    T = np.zeros((J, p))        # (W X)_c' A_c e_c
    Gs = []                    # A_c (W X)_c A (n_c, p): g_c for each coefficient
    d = np.zeros((J, p))        # g_c' M_c g_c per coefficient
    F = np.zeros((J, p, p))     # X_c' g_c (p) per coefficient
    for c, (idx, Mc) in enumerate(zip(members, Ms, strict=True)):
        Lc = np.linalg.cholesky(Mc)           # M_c = L L'; D_c = L'
        Xc = model.X[idx]
        S = Mc - Xc @ A @ Xc.T
        Bc = Lc.T @ S @ Lc
        Ac = Lc @ _inv_sqrt(Bc) @ Lc.T
        wx = WX[idx]
        T[c] = wx.T @ (Ac @ e[idx])
        g = Ac @ wx @ A                         # (n_c, p)
        Gs.append(g)
        d[c] = np.einsum("ip,ij,jp->p", g, Mc, g)
        F[c] = Xc.T @ g                          # (p_x, p_coef)
    vb = A @ (T.T @ T) @ A
    df = np.empty(p)
    for k in range(p):
        f = F[:, :, k]                          # (J, p)
        fa = f @ A
        diag_k = np.einsum("jp,jp->j", fa, f)
        P_diag = d[:, k] - diag_k
        cross = fa @ f.T                        # F A F'
        ssq = (d[:, k] ** 2).sum() - 2.0 * (d[:, k] * diag_k).sum() + (cross ** 2).sum()
        df[k] = P_diag.sum() ** 2 / ssq
    return vb, df, J


def robust_of_random_effects(y, v, tau2: float, cluster, *, adjust: bool, method: str,
                             confidence_level: float) -> RobustResult:
    """Cluster-robust inference on the pooled estimate of a random-effects (or fixed-effect)
    meta-analysis: the marginal covariance ``diag(v + tau2)`` of ``rma.uni`` in the engine of
    the multilevel model (one level, one study per cluster)."""
    y = np.asarray(y, float)
    v = np.asarray(v, float)
    k = y.size
    method = check_choice(str(method).upper(), "method", ROBUST_METHODS)
    codes = np.arange(k) if cluster is None else _codes_iv(cluster, k, "cluster")
    model = _Model(y, np.ones((k, 1)), v, None, [np.arange(k)])
    s = np.array([float(tau2)])
    ev = model.evaluate(s, True)
    vb, df, J = robust_vcov(model, s, ev, codes, method, bool(adjust))
    return RobustResult(names=("intercept",), beta=ev["beta"], vcov=vb, df=df, method=method,
                        adjust=bool(adjust), n_clusters=J, confidence_level=confidence_level)


# ---------------------------------------------------------------------------------------------
# results


def _float_or_array(a):
    a = np.asarray(a, float)
    return float(a[0]) if a.size == 1 else a


@dataclass(frozen=True, slots=True)
class RobustResult(Result):
    """Cluster-robust (sandwich) inference on the coefficients of a fitted model (metafor's
    ``robust``; clubSandwich's ``coef_test`` for CR2).

    Parameters
    ----------
    names : tuple of str
        Coefficient names (``('intercept',)`` without moderators).
    beta : ndarray of shape (p,)
        The model's coefficients (unchanged by robust inference).
    vcov : ndarray of shape (p, p)
        The cluster-robust covariance.
    df : ndarray of shape (p,)
        Degrees of freedom of each t test: ``J - p`` (CR1) or Satterthwaite's (CR2).
    method : {'CR1', 'CR2'}
        The estimator.
    adjust : bool
        CR1 multiplied by ``J / (J - p)``.
    n_clusters : int
        The number of clusters ``J``.
    confidence_level : float
        Level of ``ci_low``, ``ci_high``.

    See Also
    --------
    MultilevelMeta.robust : Builds it.

    References
    ----------
    .. [1] Hedges, L. V., Tipton, E. & Johnson, M. C. (2010). Robust Variance Estimation in
       Meta-Regression with Dependent Effect Size Estimates. Research Synthesis Methods, 1(1),
       39–65.
    .. [2] Tipton, E. (2015). Small Sample Adjustments for Robust Variance Estimation with
       Meta-Regression. Psychological Methods, 20(3), 375–393.

    Examples
    --------
    >>> fit = multilevel_meta_analysis([0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.0, 0.2],
    ...                                [0.01] * 8, clusters=[[1, 1, 2, 2, 3, 3, 4, 4]])
    >>> rob = fit.robust()
    >>> rob.method, rob.n_clusters, float(rob.df[0])
    ('CR1', 4, 3.0)
    """

    names: tuple
    beta: np.ndarray
    vcov: np.ndarray
    df: np.ndarray
    method: str
    adjust: bool
    n_clusters: int
    confidence_level: float = 0.95

    @property
    def title(self) -> str:
        return f"Cluster-robust inference ({self.method}, {self.n_clusters} clusters)"

    @property
    def estimate(self):
        """The coefficient (a float without moderators, else an array)."""
        return _float_or_array(self.beta)

    @property
    def se(self):
        """Robust standard errors."""
        return _float_or_array(np.sqrt(np.diag(self.vcov)))

    @property
    def statistic(self):
        """t statistics ``beta / se``."""
        return _float_or_array(self.beta / np.sqrt(np.diag(self.vcov)))

    @property
    def pvalue(self):
        """Two-sided p-values of t(df)."""
        t = self.beta / np.sqrt(np.diag(self.vcov))
        return _float_or_array(_rma.two_sided_p(t, self.df))

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """``beta ± t(df) se`` at ``confidence_level`` (default the result's).

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            Floats without moderators, arrays otherwise.
        """
        from scipy import special

        level = check_confidence_level(confidence_level if confidence_level is not None
                                       else self.confidence_level)
        q = special.stdtrit(self.df, (1 + level) / 2)
        se = np.sqrt(np.diag(self.vcov))
        return ConfidenceInterval(_float_or_array(self.beta - q * se),
                                  _float_or_array(self.beta + q * se))

    @property
    def ci_low(self):
        return self.confidence_interval().low

    @property
    def ci_high(self):
        return self.confidence_interval().high

    def to_frame(self):
        """One row per coefficient: ``term, estimate, se, statistic, df, pvalue, ci_low,
        ci_high`` and the method.

        Returns
        -------
        pandas.DataFrame
            p rows.
        """
        import pandas as pd

        ci = self.confidence_interval()
        se = np.sqrt(np.diag(self.vcov))
        return pd.DataFrame({
            "term": list(self.names), "estimate": self.beta, "se": se,
            "statistic": self.beta / se, "df": self.df,
            "pvalue": _rma.two_sided_p(self.beta / se, self.df),
            "ci_low": np.atleast_1d(ci.low), "ci_high": np.atleast_1d(ci.high),
            "confidence_level": self.confidence_level, "method": self.method,
            "n_clusters": self.n_clusters})

    def __str__(self) -> str:
        how = ("CR1, J/(J-p) factor, t(J - p)" if self.method == "CR1" and self.adjust
               else "CR1, t(J - p)" if self.method == "CR1"
               else "CR2, Satterthwaite df")
        lines = [f"{self.title}: {how}"]
        lvl = round(100 * self.confidence_level)
        for r in self.to_frame().itertuples(index=False):
            lines.append(f"  {r.term}: {number(r.estimate, 4)} (SE {number(r.se, 4)}), t("
                         f"{number(r.df, 3)}) = {number(r.statistic, 4)}, p {_p(r.pvalue)}, "
                         f"{lvl}% CI {interval_text(r.ci_low, r.ci_high, 4)}")
        return "\n".join(lines)


def _p(p: float) -> str:
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


@dataclass(frozen=True, slots=True)
class MultilevelMeta(Result):
    """A multilevel (multivariate) meta-analysis: metafor's ``rma.mv`` with nested random
    intercepts.

    Parameters
    ----------
    names : tuple of str
        Coefficient names (``('intercept',)`` without moderators).
    beta : ndarray of shape (p,)
        Generalized least-squares coefficients.
    vcov : ndarray of shape (p, p)
        Their model-based covariance ``(X'WX)^-1``.
    sigma2 : tuple of float
        One variance per level, outermost first.
    levels : tuple of str
        The names of the levels (outermost first).
    n_clusters : tuple of int
        The number of clusters at each level (metafor's ``nlvls``).
    tau2_method : {'REML', 'ML'}
        The estimator of the variances.
    interval : {'wald', 't'}
        z tests and intervals, or t(k - p) (metafor's ``test = "t"``).
    df : float or None
        ``k - p`` with ``interval='t'``.
    k : int
        The number of effects.
    qe, qe_df, qe_pvalue : float, int, float
        The test of residual heterogeneity ``QE = e' V^-1 e`` of the fit with ``W = V^-1``,
        chi-square with ``k - p`` df.
    loglik : float
        The (restricted) log-likelihood at the estimate (metafor's ``logLik``).
    confidence_level : float
        Level of ``ci_low``, ``ci_high``.
    sigma2_ci : tuple of ConfidenceInterval
        Profile-likelihood intervals of the variances at ``confidence_level`` (computed when
        first read).
    labels : tuple of str
        Effect labels.
    _model : object
        The data of the fit (private): what :meth:`robust` and the profile intervals need.

    See Also
    --------
    multilevel_meta_analysis : Builds it.
    MultilevelMeta.robust : Cluster-robust standard errors.

    References
    ----------
    .. [1] Konstantopoulos, S. (2011). Fixed Effects and Variance Components Estimation in
       Three-Level Meta-Analysis. Research Synthesis Methods, 2(1), 61–76.
    .. [2] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> fit = multilevel_meta_analysis([0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.0, 0.2],
    ...                                [0.01] * 8, clusters=[[1, 1, 2, 2, 3, 3, 4, 4]])
    >>> round(fit.estimate, 4), fit.levels
    (0.2875, ('level1',))
    """

    names: tuple
    beta: np.ndarray
    vcov: np.ndarray
    sigma2: tuple
    levels: tuple
    n_clusters: tuple
    tau2_method: str
    interval: str
    df: float | None
    k: int
    qe: float
    qe_df: int
    qe_pvalue: float
    loglik: float
    confidence_level: float = 0.95
    sigma2_ci: tuple | None = None
    labels: tuple = field(default=(), repr=False)
    _model: object = field(default=None, repr=False, compare=False)

    # -- coefficients ------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return (f"Multilevel meta-analysis ({self.tau2_method}, k = {self.k}, levels "
                f"{'/'.join(self.levels)})")

    @property
    def estimate(self):
        """The pooled estimate (a float without moderators, else the coefficient array)."""
        return _float_or_array(self.beta)

    @property
    def se(self):
        """Model-based standard errors ``sqrt(diag((X'WX)^-1))``."""
        return _float_or_array(np.sqrt(np.diag(self.vcov)))

    @property
    def statistic(self):
        """z (or t) statistics ``beta / se``."""
        return _float_or_array(self.beta / np.sqrt(np.diag(self.vcov)))

    @property
    def pvalue(self):
        """Two-sided p-values (normal, or t(k - p) with ``interval='t'``)."""
        t = self.beta / np.sqrt(np.diag(self.vcov))
        return _float_or_array(_rma.two_sided_p(t, self.df))

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """``beta ± q se``: q normal, or t(k - p) with ``interval='t'``.

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval (default the result's).

        Returns
        -------
        ConfidenceInterval
            Floats without moderators, arrays otherwise.
        """
        level = check_confidence_level(confidence_level if confidence_level is not None
                                       else self.confidence_level)
        q = _rma.quantile(level, self.df)
        se = np.sqrt(np.diag(self.vcov))
        return ConfidenceInterval(_float_or_array(self.beta - q * se),
                                  _float_or_array(self.beta + q * se))

    @property
    def ci_low(self):
        return self.confidence_interval().low

    @property
    def ci_high(self):
        return self.confidence_interval().high

    @property
    def sigma(self) -> tuple:
        """The standard deviation of each level, ``sqrt(sigma2)``."""
        return tuple(math.sqrt(s) for s in self.sigma2)

    # -- variances ---------------------------------------------------------------------------
    def sigma2_confidence_interval(self, confidence_level: float = 0.95) -> tuple:
        """Profile-likelihood intervals of the level variances (metafor's ``confint`` of an
        ``rma.mv`` model).

        Each bound is the value of ``sigma2_l`` at which the (restricted) log-likelihood,
        maximised over the other variances, is ``chi2_1(level) / 2`` below its maximum; a
        lower bound is 0 when the profile at 0 is still above that.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        tuple of ConfidenceInterval
            One per level, outermost first.
        """
        level = check_confidence_level(confidence_level)
        m = self._model
        reml = self.tau2_method == "REML"
        s = np.asarray(self.sigma2, float)
        return tuple(m.profile_ci(i, s, self.loglik, reml, level) for i in range(s.size))

    # -- robust ------------------------------------------------------------------------------
    def robust(self, cluster=None, *, adjust: bool = True, method: str = "CR1",
               confidence_level: float | None = None) -> RobustResult:
        """Cluster-robust (sandwich) standard errors, t tests and intervals.

        Parameters
        ----------
        cluster : array-like of shape (k,), optional
            The cluster of each effect (default: the outermost level). Clusters are assumed
            independent; effects within one may be correlated in any way.
        adjust : bool, default True
            CR1: multiply by ``J / (J - p)`` (metafor's default). Ignored by CR2.
        method : {'CR1', 'CR2'}, default 'CR1'
            ``'CR1'``: ``A (sum_c X_c' W_c e_c e_c' W_c X_c) A``, ``A = (X'WX)^-1``, with
            t(J - p) (Hedges, Tipton & Johnson 2010; metafor's ``robust``). ``'CR2'``: the
            bias-reduced estimator with Satterthwaite df (Tipton 2015; Pustejovsky & Tipton
            2018; clubSandwich's ``coef_test(fit, vcov = "CR2")``, metafor's
            ``robust(..., clubSandwich = TRUE)``), better calibrated with few clusters.
        confidence_level : float, optional
            Level of the intervals (default the model's).

        Returns
        -------
        RobustResult
            The coefficients with robust SEs, df, t tests and intervals.

        Raises
        ------
        DataError
            ``cluster`` of the wrong length or with missing values, or no more clusters than
            coefficients.
        ParameterError
            ``method`` unknown; CR2 with clusters that split a block of correlated effects.

        References
        ----------
        .. [1] Hedges, L. V., Tipton, E. & Johnson, M. C. (2010). Robust Variance Estimation
           in Meta-Regression with Dependent Effect Size Estimates. Research Synthesis Methods,
           1(1), 39–65.
        .. [2] Tipton, E. (2015). Small Sample Adjustments for Robust Variance Estimation with
           Meta-Regression. Psychological Methods, 20(3), 375–393.
        .. [3] Pustejovsky, J. E. & Tipton, E. (2018). Small-Sample Methods for Cluster-Robust
           Variance Estimation and Hypothesis Testing in Fixed Effects Models. Journal of
           Business & Economic Statistics, 36(4), 672–683.

        Examples
        --------
        >>> fit = multilevel_meta_analysis([0.1, 0.3, 0.2, 0.5, 0.4, 0.6, 0.0, 0.2],
        ...                                [0.01] * 8, clusters=[[1, 1, 2, 2, 3, 3, 4, 4]])
        >>> rob = fit.robust(method="CR2")
        >>> round(rob.se, 4) > 0
        True
        """
        m = self._model
        method = check_choice(str(method).upper(), "method", ROBUST_METHODS)
        level = check_confidence_level(confidence_level if confidence_level is not None
                                       else self.confidence_level)
        codes = m.codes[0] if cluster is None else _codes_iv(cluster, m.n, "cluster")
        s = np.asarray(self.sigma2, float)
        ev = m.evaluate(s, self.tau2_method == "REML")
        vb, df, J = robust_vcov(m, s, ev, codes, method, bool(adjust))
        return RobustResult(names=self.names, beta=self.beta, vcov=vb, df=df, method=method,
                            adjust=bool(adjust), n_clusters=J, confidence_level=level)

    # -- tables ------------------------------------------------------------------------------
    def to_frame(self):
        """The coefficients and the level variances in one tidy table.

        Columns ``quantity, estimate, se, statistic, df, pvalue, ci_low, ci_high`` and
        ``n_clusters``: one row per coefficient, then one ``sigma2.<level>`` row per level
        (its profile-likelihood interval; no SE).

        Returns
        -------
        pandas.DataFrame
            p + L rows.
        """
        import pandas as pd

        ci = self.confidence_interval()
        se = np.sqrt(np.diag(self.vcov))
        rows = [{"quantity": n, "estimate": b, "se": s, "statistic": b / s, "df": self.df,
                 "pvalue": float(_rma.two_sided_p(b / s, self.df)), "ci_low": lo,
                 "ci_high": hi, "n_clusters": None}
                for n, b, s, lo, hi in zip(self.names, self.beta, se, np.atleast_1d(ci.low),
                                           np.atleast_1d(ci.high), strict=True)]
        rows += [{"quantity": f"sigma2.{name}", "estimate": s2, "se": float("nan"),
                  "statistic": float("nan"), "df": None, "pvalue": float("nan"),
                  "ci_low": c.low, "ci_high": c.high, "n_clusters": n}
                 for name, s2, c, n in zip(self.levels, self.sigma2, self.sigma2_ci,
                                           self.n_clusters, strict=True)]
        out = pd.DataFrame(rows)
        out["confidence_level"] = self.confidence_level
        return out

    def summary_frame(self):
        """One row of model statistics: k, p, the estimator, QE and its test, the
        log-likelihood, the variances.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        import pandas as pd

        row = {"tau2_method": self.tau2_method, "interval": self.interval, "k": self.k,
               "n_coefficients": len(self.names), "qe": self.qe, "qe_df": self.qe_df,
               "qe_pvalue": self.qe_pvalue, "loglik": self.loglik}
        for name, s2 in zip(self.levels, self.sigma2, strict=True):
            row[f"sigma2.{name}"] = s2
        return pd.DataFrame([row])

    def to_dict(self) -> dict:
        """The model statistics and the table of :meth:`to_frame` in JSON types.

        Returns
        -------
        dict
            ``summary`` and ``coefficients`` (the rows of :meth:`to_frame`).
        """
        from ..results import to_jsonable

        return {"summary": to_jsonable(self.summary_frame().iloc[0].to_dict()),
                "coefficients": to_jsonable(self.to_frame())}

    def __str__(self) -> str:
        lvl = round(100 * self.confidence_level)
        kind = f"t({number(self.df, 3)})" if self.df is not None else "Wald z"
        stat = "t" if self.df is not None else "z"
        lines = [f"{self.title}; variances by {self.tau2_method}"]
        for name, s2, c, n in zip(self.levels, self.sigma2, self.sigma2_ci, self.n_clusters,
                                  strict=True):
            lines.append(f"  σ² {name} ({n} clusters) = {number(s2, 4)} (σ = "
                         f"{number(math.sqrt(s2), 4)}), {lvl}% profile CI "
                         f"{interval_text(c.low, c.high, 4)}")
        lines.append(f"  Test of residual heterogeneity: QE({self.qe_df}) = "
                     f"{number(self.qe, 5)}, p {_p(self.qe_pvalue)}; log-likelihood "
                     f"{number(self.loglik, 5)}")
        ci = self.confidence_interval()
        se = np.sqrt(np.diag(self.vcov))
        for n, b, s, lo, hi in zip(self.names, self.beta, se, np.atleast_1d(ci.low),
                                   np.atleast_1d(ci.high), strict=True):
            lines.append(f"  {n} = {number(b, 4)} (SE {number(s, 4)}), {lvl}% CI "
                         f"{interval_text(lo, hi, 4)} ({kind}); {stat} = {number(b / s, 4)}, "
                         f"p {_p(float(_rma.two_sided_p(b / s, self.df)))}")
        return "\n".join(lines)


def _sigma2_ci_95(result: MultilevelMeta) -> tuple:
    return result.sigma2_confidence_interval(result.confidence_level)


def _install_lazy():
    from .meta import _ComputedOnRead

    MultilevelMeta.sigma2_ci = _ComputedOnRead(MultilevelMeta.__dict__["sigma2_ci"],
                                               _sigma2_ci_95)


_install_lazy()


# ---------------------------------------------------------------------------------------------
# the analysis


def _codes_iv(values, n: int, name: str) -> np.ndarray:
    """Integer codes of one cluster label per effect."""
    import pandas as pd

    arr = pd.Series(list(values) if not hasattr(values, "__len__") else values)
    if len(arr) != n:
        raise DataError(f"`{name}` must give one cluster per effect ({n}); got {len(arr)}.")
    if arr.isna().any():
        bad = np.flatnonzero(arr.isna().to_numpy())[:5].tolist()
        raise DataError(f"`{name}` has missing cluster labels at positions {bad}.")
    codes, _ = pd.factorize(arr.astype(str) if arr.dtype == object else arr)
    return codes.astype(np.intp)


def _clusters_iv(clusters, n: int):
    """Levels (outermost first) as integer codes of their paths, and their names."""
    import pandas as pd

    if clusters is None:
        raise ParameterError("`clusters` must give the cluster of each effect at each level, "
                             "outermost first (e.g. clusters=[study, fold]); got None.")
    if isinstance(clusters, pd.DataFrame):
        names = [str(c) for c in clusters.columns]
        cols = [clusters[c].to_numpy() for c in clusters.columns]
    elif isinstance(clusters, dict):
        names = [str(c) for c in clusters]
        cols = list(clusters.values())
    else:
        if isinstance(clusters, (str, bytes)):
            raise ParameterTypeError("`clusters` must be a list of per-effect labels (one "
                                     f"array per level); got the string {clusters!r}.")
        cols = list(clusters)
        if cols and np.ndim(cols[0]) == 0:  # one level given as a flat sequence
            cols = [cols]
        names = [str(getattr(c, "name", None) or f"level{i + 1}") for i, c in enumerate(cols)]
    if not cols:
        raise ParameterError("`clusters` must give at least one level; got none.")
    codes = []
    path = None
    for i, (name, col) in enumerate(zip(names, cols, strict=True)):
        c = _codes_iv(col, n, f"clusters[{i}]" if name.startswith("level") else
                      f"clusters[{name!r}]")
        # an inner cluster is the path outer/inner (R's `/`): the same inner label under two
        # outer clusters is two clusters
        path = c if path is None else np.unique(np.stack([path, c]), axis=1,
                                                return_inverse=True)[1].ravel()
        codes.append(path.astype(np.intp))
    n_outer = int(codes[0].max()) + 1
    if n_outer < 2:
        raise DataError(f"`clusters`: the outermost level needs at least 2 clusters; got "
                        f"{n_outer}.")
    return codes, tuple(names)


def _covariance_iv(v, V, n: int):
    if (v is None) == (V is None):
        raise ParameterError("give exactly one of `v` (sampling variances) or `V` (the "
                             "sampling covariance matrix); got "
                             f"v={'set' if v is not None else None}, "
                             f"V={'set' if V is not None else None}.")
    if v is not None:
        v = np.asarray(v, float)
        if v.shape != (n,):
            raise DataError(f"`v` must have the shape of `y` ({n},); got {v.shape}.")
        bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
        if bad.size:
            raise DataError(f"sampling variances `v` must be finite and > 0; found invalid "
                            f"values at positions {bad[:5].tolist()}.")
        return v, None
    V = np.asarray(V, float)
    if V.shape != (n, n):
        raise DataError(f"`V` must be a ({n}, {n}) matrix (one row and column per effect); "
                        f"got shape {V.shape}.")
    if not np.isfinite(V).all():
        raise DataError("`V` must be finite; found NaN or infinity.")
    scale = float(np.abs(V).max()) or 1.0
    if not np.allclose(V, V.T, rtol=0, atol=1e-10 * scale):
        raise DataError("`V` must be symmetric; it differs from its transpose by "
                        f"{float(np.abs(V - V.T).max()):.3g}.")
    V = 0.5 * (V + V.T)
    diag = np.diag(V)
    if not (diag > 0).all():
        bad = np.flatnonzero(~(diag > 0))
        raise DataError(f"`V` must have positive sampling variances on its diagonal; found "
                        f"{diag[bad[:5]].tolist()} at positions {bad[:5].tolist()}.")
    return np.ascontiguousarray(diag), V


def multilevel_meta_analysis(y, v=None, *, V=None, clusters=None, moderators=None, data=None,
                             intercept: bool = True, labels=None, tau2_method: str = "REML",
                             interval: str = "wald", confidence_level: float = 0.95,
                             tol: float = 1e-10) -> MultilevelMeta:
    """Multilevel (multivariate) random-effects meta-analysis of several effects per study.

    Fits ``y = X beta + u_1 + ... + u_L + e`` with one random intercept per nesting level,
    ``u_l ~ N(0, sigma2_l Z_l Z_l')``, and known sampling covariance ``e ~ N(0, V)``: metafor's
    ``rma.mv(yi, V, mods, random = ~ 1 | outer/inner)``.

    Parameters
    ----------
    y : array-like of shape (k,)
        The effects (e.g. a score per fold, per repeat, per dataset).
    v : array-like of shape (k,), optional
        Sampling variances (``V`` diagonal). Give ``v`` or ``V``.
    V : array-like of shape (k, k), optional
        The known sampling covariance, symmetric positive definite (typically block-diagonal
        by study: effects of one study that share data are correlated).
    clusters : list of array-like, dict or DataFrame
        The cluster of each effect at each level, outermost first: ``[study]`` for two levels
        (studies, effects), ``[district, school]`` for three. An inner cluster is the path
        ``outer/inner`` (R's ``/``), so inner labels need only be unique within their outer
        cluster. The outermost level needs at least 2 clusters.
    moderators, data, intercept : optional
        Effect-level moderators as for :func:`~replikit.replicate.meta_regression` (a frame,
        dict, array or formula on ``data``); None fits the intercept only.
    labels : sequence of str, optional
        Effect labels.
    tau2_method : {'REML', 'ML'}, default 'REML'
        Restricted or full maximum likelihood for the level variances.
    interval : {'wald', 't'}, default 'wald'
        z tests and intervals, or t(k - p) (metafor's ``test = "t"``).
    confidence_level : float, default 0.95
        Level of ``ci_low``, ``ci_high`` and of the profile intervals ``sigma2_ci``.
    tol : float, default 1e-10
        Fisher scoring stops when no variance changes by more than ``tol`` times
        ``max(scale, sigma2)`` (``scale`` the variance of ``y``).

    Returns
    -------
    MultilevelMeta
        Coefficients, variances per level with profile intervals, QE, the log-likelihood;
        ``.robust()`` for cluster-robust inference.

    Raises
    ------
    ParameterError
        Neither or both of ``v`` and ``V``; an unknown ``tau2_method`` or ``interval``.
    DataError
        Lengths that do not match ``y``; ``V`` not symmetric positive definite; missing
        cluster labels; fewer than 2 outer clusters; collinear moderators.

    See Also
    --------
    meta_analysis : One effect per study.
    meta_regression : One effect per study, with moderators.

    Notes
    -----
    ``M = V + sum_l sigma2_l Z_l Z_l'``, ``W = M^-1``, ``beta = (X'WX)^-1 X'Wy``,
    ``Var(beta) = (X'WX)^-1``. The REML log-likelihood is ``-1/2 [(k - p) log 2 pi + log|M| +
    log|X'WX| + (y - X beta)' W (y - X beta)] + 1/2 log|X'X|`` (metafor's, with its
    ``log|X'X|`` term), ML ``-1/2 [k log 2 pi + log|M| + (y - X beta)' W (y - X beta)]``
    (Viechtbauer 2010; Konstantopoulos 2011, eqs. 3-6; Van den Noortgate et al. 2013).
    Several effects per study in a two-level random-effects model pretend to be independent
    studies; the multilevel model attributes their agreement to the study they share, and
    its SE grows accordingly.

    References
    ----------
    .. [1] Konstantopoulos, S. (2011). Fixed Effects and Variance Components Estimation in
       Three-Level Meta-Analysis. Research Synthesis Methods, 2(1), 61–76.
    .. [2] Van den Noortgate, W., López-López, J. A., Marín-Martínez, F. & Sánchez-Meca, J.
       (2013). Three-Level Meta-Analysis of Dependent Effect Sizes. Behavior Research Methods,
       45(2), 576–594.
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.
    .. [4] Berkey, C. S., Hoaglin, D. C., Antczak-Bouckoms, A., Mosteller, F. & Colditz, G. A.
       (1998). Meta-Analysis of Multiple Outcomes by Regression with Random Effects.
       Statistics in Medicine, 17(22), 2537–2550.

    Examples
    --------
    >>> y = [0.10, 0.30, 0.20, 0.50, 0.40, 0.60, 0.00, 0.20, 0.35, 0.15]
    >>> study = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    >>> fit = multilevel_meta_analysis(y, [0.01] * 10, clusters=[study])
    >>> round(fit.estimate, 4), round(fit.se, 4), round(fit.sigma2[0], 5)
    (0.28, 0.0682, 0.01825)
    >>> rob = fit.robust(method="CR2")
    >>> round(rob.se, 4), round(float(rob.df[0]), 2)
    (0.0682, 4.0)
    """
    import pandas as pd

    method = check_choice(str(tau2_method).upper(), "tau2_method", MULTILEVEL_METHODS)
    kind = check_interval(str(interval).lower(), ("wald", "t"))
    level = check_confidence_level(confidence_level)
    tol = check_float(tol, "tol")
    if not tol > 0:
        raise ParameterError(f"`tol` must be > 0; got {tol}.")
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise DataError(f"`y` must be one-dimensional; got shape {y.shape}.")
    n = y.size
    if n < 2:
        raise DataError(f"a meta-analysis needs at least 2 effects in `y`; got {n}.")
    if not np.isfinite(y).all():
        raise DataError("`y` must be finite; found NaN or infinity.")
    v, V = _covariance_iv(v, V, n)
    codes, names = _clusters_iv(clusters, n)
    from .metareg import _design_iv

    if isinstance(moderators, pd.Series):
        moderators = moderators.to_frame()
    design = _design_iv(moderators, data, n, bool(intercept))
    X = np.asarray(design.X, float)
    p = X.shape[1]
    if n <= p:
        raise DataError(f"{p} coefficients need more than {p} effects; got {n}.")
    if labels is None:
        labels = [f"Effect {i}" for i in range(1, n + 1)]
    labels = [str(s) for s in labels]
    if len(labels) != n:
        raise DataError(f"`labels` must have {n} entries; got {len(labels)}.")
    model = _Model(y, X, v, V, codes)
    if V is not None:  # positive definiteness, block by block
        for grp in model.groups:
            try:
                np.linalg.cholesky(grp.V)
            except np.linalg.LinAlgError:
                raise DataError("`V` must be positive definite; a block of correlated "
                                "effects has a singular or indefinite covariance.") from None
    reml = method == "REML"
    sigma2, ev = model.maximise(reml, tol=tol)
    beta, A = ev["beta"], ev["A"]
    if not (np.isfinite(beta).all() and np.isfinite(A).all()):
        raise DataError("the effects and covariances are too extreme to combine (rescale the "
                        "effects).")
    qe = float(model.evaluate(np.zeros(model.n_levels), reml)["rss"])
    return MultilevelMeta(
        names=tuple(design.names), beta=np.asarray(beta, float), vcov=np.asarray(A, float),
        sigma2=tuple(float(s) for s in sigma2), levels=names,
        n_clusters=tuple(int(c.max()) + 1 for c in codes), tau2_method=method, interval=kind,
        df=float(n - p) if kind == "t" else None, k=n, qe=qe, qe_df=n - p,
        qe_pvalue=float(_rma.chi2_sf(qe, n - p)), loglik=float(ev["ll"]),
        confidence_level=level, sigma2_ci=None, labels=tuple(labels), _model=model)
