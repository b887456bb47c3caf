"""The engine of the multilevel meta-analysis (metafor's ``rma.mv`` with nested random
intercepts) and of cluster-robust inference: the blocks of the marginal covariance, the
(restricted) likelihood with its score and information, the maximisation, profile intervals and
the CR1 / CR2 sandwich estimators. :mod:`.multilevel` presents the fit; :mod:`.meta` uses the
robust estimators for ``MetaResult.robust``. numpy and scipy only, and replikit's core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._format import interval as interval_text
from .._format import number
from .._format import pvalue as p_text
from .._validation import check_choice, check_confidence_level
from ..errors import ConvergenceError, DataError, ParameterError
from ..results import ConfidenceInterval, Result
from . import _rma

__all__: list[str] = []

MULTILEVEL_METHODS = ("REML", "ML")
#: the cluster-robust variance estimators of :meth:`MultilevelMeta.robust`
ROBUST_METHODS = ("CR1", "CR2")
_LOG_2PI = math.log(2 * math.pi)


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
            # the Newton decrement g' I^-1 g: twice the log-likelihood still to gain; at
            # rounding level the point is the optimum even where a flat, nearly singular
            # information makes the steps wander (two variances hardly told apart)
            if float(g[act] @ step[act]) <= 1e-13 * max(1.0, abs(ev["ll"])):
                return s, ev
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


def _float_or_array(a):
    a = np.asarray(a, float)
    return float(a[0]) if a.size == 1 else a


class CoefficientViews:
    """The views of fitted coefficients ``beta`` with covariance ``vcov`` shared by the
    multilevel fit and its cluster-robust inference: estimates, standard errors, statistics,
    two-sided p-values and intervals, with the normal (``df`` None) or t(``df``) reference."""

    __slots__ = ()

    @property
    def estimate(self):
        """The coefficient (a float without moderators, else an array)."""
        return _float_or_array(self.beta)

    @property
    def se(self):
        """Standard errors ``sqrt(diag(vcov))``."""
        return _float_or_array(np.sqrt(np.diag(self.vcov)))

    @property
    def statistic(self):
        """z or t statistics ``beta / se``."""
        return _float_or_array(self.beta / np.sqrt(np.diag(self.vcov)))

    @property
    def pvalue(self):
        """Two-sided p-values (normal, or t(df))."""
        t = self.beta / np.sqrt(np.diag(self.vcov))
        return _float_or_array(_rma.two_sided_p(t, self.df))

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """``beta ± q se``, q of the normal or of t(df), at ``confidence_level`` (default the
        result's).

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
        # df: None (normal), one number, or one per coefficient (CR2's Satterthwaite df)
        q = (special.ndtri((1 + level) / 2) if self.df is None
             else special.stdtrit(np.asarray(self.df, float), (1 + level) / 2))
        se = np.sqrt(np.diag(self.vcov))
        return ConfidenceInterval(_float_or_array(self.beta - q * se),
                                  _float_or_array(self.beta + q * se))

    @property
    def ci_low(self):
        return self.confidence_interval().low

    @property
    def ci_high(self):
        return self.confidence_interval().high


@dataclass(frozen=True, slots=True)
class RobustResult(CoefficientViews, Result):
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
    replikit.replicate.MultilevelMeta.robust : Builds it.
    replikit.replicate.MetaResult.robust : The same for a random-effects meta-analysis.

    References
    ----------
    .. [1] Hedges, L. V., Tipton, E. & Johnson, M. C. (2010). Robust Variance Estimation in
       Meta-Regression with Dependent Effect Size Estimates. Research Synthesis Methods, 1(1),
       39–65.
    .. [2] Tipton, E. (2015). Small Sample Adjustments for Robust Variance Estimation with
       Meta-Regression. Psychological Methods, 20(3), 375–393.

    Examples
    --------
    >>> from replikit.replicate import multilevel_meta_analysis
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
