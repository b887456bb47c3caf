"""Which study drives the result? Influence diagnostics, Baujat plot data, cumulative fits.

:func:`influence` computes metafor's ``influence()`` set for a meta-analysis or a
meta-regression (Viechtbauer & Cheung 2010, "Outlier and influence diagnostics for
meta-analysis", Research Synthesis Methods 1, 112-125): externally standardized (studentized
deleted) residuals, DFFITS, Cook's distance, the covariance ratio, tau2 and QE without the study,
hat values, weights and DFBETAS, with the flags metafor uses for influential studies. All k
leave-one-out fits are one batched call of the mixed-effects engine
(:mod:`replikit.replicate.metareg`), with masks instead of copies of the data.

:func:`baujat` gives the coordinates of the Baujat plot (Baujat et al. 2002): each study's
contribution to the heterogeneity statistic against its influence on the pooled result;
:func:`cumulative` the cumulative meta-analysis in a given order (Lau et al. 1992).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._compat import renamed_fields
from ..errors import DataError, ParameterTypeError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Influence", "influence", "baujat", "cumulative", "MAX_REFIT_K"]

#: influence, baujat and cumulative refit the model k times on up to k studies (k^2 work, in
#: blocks of bounded memory); above this many studies they are refused: at k = 20,000 the
#: refits already take minutes (docs/performance.md, "Scale")
MAX_REFIT_K = 20_000
#: memory of one block of refits (the stack of k-study problems fitted at once)
_BLOCK_BYTES = 128 * 2 ** 20
#: k-length float arrays alive per problem of a stack in _fit_stack (with p columns: x (p + 1));
#: measured with tracemalloc (about 25 for p = 1), rounded up
_ARRAYS_PER_PROBLEM = 40


@dataclass(frozen=True, slots=True)
class _Model:
    y: np.ndarray
    v: np.ndarray
    X: np.ndarray
    labels: tuple
    names: tuple
    method: str
    ci: str
    knha_floor: bool
    tol: float


def _model_of(result) -> _Model:
    """The data and settings of a MetaResult or MetaRegression."""
    from .meta import MetaResult
    from .metareg import MetaRegression

    if isinstance(result, MetaRegression):
        return _Model(np.asarray(result.y, float), np.asarray(result.v, float),
                      np.asarray(result.X, float), tuple(result.labels), tuple(result.names),
                      result.tau2_method, result.interval, result.knha_floor, result.tol)
    if isinstance(result, MetaResult):
        return _Model(np.asarray(result.y, float), np.asarray(result.v, float),
                      np.ones((result.k, 1)), tuple(result.labels), ("intercept",),
                      result.tau2_method, result.interval, result.knha_floor, 1e-12)
    raise ParameterTypeError("`result` must be a MetaResult (meta_analysis) or a "
                             f"MetaRegression (meta_regression); got {type(result).__name__}.")


def _block_rows(k: int, p: int) -> int:
    """Problems of k studies fitted at once so that a block stays near ``_BLOCK_BYTES``."""
    per_problem = 8 * k * _ARRAYS_PER_PROBLEM * (p + 1)
    return int(max(1, min(k, _BLOCK_BYTES // per_problem)))


def _check_refits(k: int, p: int, what: str, *, blocks: bool = True) -> None:
    """Refuse k leave-one-out / cumulative refits above ``MAX_REFIT_K`` studies, and (with
    ``blocks``) a block of refits that would not fit in the available memory."""
    from .._memory import check_memory
    from ..errors import ParameterError

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


def _refits(m: _Model, masks, kw: dict, *, dfbetas: bool = False, what: str = "the refits"):
    """``_fit_stack`` of the k problems ``masks(rows)`` (rows ``0..k-1``), fitted in blocks of
    bounded memory; returns the per-problem results (no k x k array is kept) and, with
    ``dfbetas``, ``diag((X' W_(-i) X)^-1)`` with ``W_(-i) = diag(1 / (v + tau2_(-i)))`` over all
    k studies."""
    from types import SimpleNamespace

    from .metareg import _fit_stack, _wls

    k, p = m.X.shape
    _check_refits(k, p, what)
    step = _block_rows(k, p)
    keep = ("beta", "vb", "tau2", "s2w", "qe", "trp0", "ok")
    parts: dict = {name: [] for name in keep + ("a_diag",)}
    for start in range(0, k, step):
        rows = np.arange(start, min(k, start + step))
        f = _fit_stack(m.y, m.v, m.X, masks(rows), strict=False, **kw)
        for name in keep:
            parts[name].append(getattr(f, name))
        if dfbetas:
            n = rows.size
            w_all = 1.0 / (m.v[None, :] + f.tau2[:, None])
            _, A_all, _, _ = _wls(np.broadcast_to(m.y, (n, k)),
                                  np.where(np.isfinite(w_all), w_all, 1.0),
                                  np.broadcast_to(m.X, (n, k, p)))
            parts["a_diag"].append(np.diagonal(A_all, axis1=-2, axis2=-1))
    out = {name: np.concatenate(parts[name]) for name in keep}
    if dfbetas:
        out["a_diag"] = np.concatenate(parts["a_diag"])
    return SimpleNamespace(**out)


def _deleted(rows: np.ndarray, k: int) -> np.ndarray:
    """Masks of the fits without study ``i`` for ``i`` in ``rows`` (rows of ``1 - I``)."""
    return (np.arange(k)[None, :] != rows[:, None]).astype(float)


@renamed_fields(method="tau2_method")
@dataclass(frozen=True, slots=True)
class Influence:
    """Influence diagnostics of every study (metafor's ``influence.rma.uni``).

    Attributes
    ----------
    table : DataFrame
        One row per study: ``label``; ``resid`` (``y_i - x_i' b_(-i)``), ``resid_se`` and
        ``rstudent`` (their ratio, the externally standardized residual); ``dffits``;
        ``cook_d``; ``cov_r``; ``tau2_del`` and ``qe_del`` (tau2 and QE without the study);
        ``hat``; ``weight`` (percent); ``influential`` and ``flagged_by`` (the criteria met).
    dfbetas : DataFrame
        ``label`` and one column per coefficient: ``(b - b_(-i)) / SE(b_(-i))``.
    k, p : int
    method : str
    thresholds : dict
        The flags (Viechtbauer & Cheung 2010; metafor): ``|dffits| > 3 sqrt(p / (k - p))``,
        ``chi2_p.cdf(cook_d) > 0.5``, ``hat > 3 p / k``, any ``|dfbetas| > 1``.
    """

    table: pd.DataFrame = field(repr=False)
    dfbetas: pd.DataFrame = field(repr=False)
    k: int
    p: int
    tau2_method: str
    thresholds: dict

    @property
    def influential(self) -> tuple:
        """Labels of the studies flagged as influential."""
        return tuple(self.table.loc[self.table["influential"], "label"])

    def to_frame(self) -> pd.DataFrame:
        """The table with the DFBETAS appended (columns ``dfbetas_<coefficient>``)."""
        d = self.dfbetas.drop(columns="label").add_prefix("dfbetas_")
        return self.table.join(d)

    def plot(self, *, fig=None, title: str | None = None):
        """Panels of the diagnostics against the studies (metafor's ``plot.infl.rma.uni``);
        see :func:`replikit.replicate.plots.influence_plot`."""
        from .plots import influence_plot

        return influence_plot(self, fig=fig, title=title)

    def __str__(self) -> str:
        cols = ["label", "rstudent", "dffits", "cook_d", "cov_r", "tau2_del", "qe_del", "hat",
                "weight"]
        t = self.table[cols].copy()
        t["inf"] = np.where(self.table["influential"], "*", "")
        body = t.to_string(index=False, float_format=lambda x: f"{x:.4f}")
        n = int(self.table["influential"].sum())
        head = (f"Influence diagnostics ({self.tau2_method}; k = {self.k}, p = {self.p}); "
                f"{n} influential stud{'y' if n == 1 else 'ies'} (*)")
        return head + "\n" + body


def influence(result) -> Influence:
    """Leave-one-out influence diagnostics of a meta-analysis or meta-regression.

    Parameters
    ----------
    result : MetaResult or MetaRegression
        The fitted model; every deleted fit uses its tau2 estimator and test.

    Returns
    -------
    Influence

    Notes
    -----
    With ``b_(-i)``, ``Var(b_(-i))``, ``tau2_(-i)`` and the Knapp-Hartung factor ``s_(-i)``
    (1 for z tests) of the fit without study i (Viechtbauer & Cheung 2010, sec. 3-4):

    * ``rstudent = (y_i - x_i' b_(-i)) / sqrt(s_(-i) (v_i + tau2_(-i)) + x_i' Var(b_(-i)) x_i)``;
    * ``dffits = (x_i' b - x_i' b_(-i)) / sqrt(s_(-i) h_i (tau2_(-i) + v_i))``;
    * ``cook_d = (b - b_(-i))' Var(b)^-1 (b - b_(-i))``; ``cov_r = det Var(b_(-i)) / det Var(b)``;
    * ``dfbetas = (b - b_(-i)) / sqrt(s_(-i) diag((X' W_(-i) X)^-1))`` with
      ``W_(-i) = diag(1 / (v + tau2_(-i)))`` over all k studies;
    * ``hat`` the diagonal of ``X (X'WX)^-1 X' W``.

    A study whose deletion leaves the model matrix rank deficient (the only study of a
    category, say) gets NaN, as in metafor. The k refits are fitted in blocks of bounded memory
    (about 128 MiB); above ``MAX_REFIT_K`` = 20,000 studies they are refused with a
    :class:`~replikit.errors.ParameterError` (k^2 work). Example:
    ``influence(meta_analysis(y, v))``.

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25], [0.01, 0.02, 0.015, 0.01, 0.02])
    >>> influence(res).influential
    ('Study 4',)
    """
    import pandas as pd
    from scipy import stats

    from .metareg import _fit_stack

    m = _model_of(result)
    k, p = m.X.shape
    if k - 1 <= p:
        raise DataError(f"influence diagnostics need at least {p + 2} studies for a model "
                        f"with {p} coefficient(s); got k = {k}.")
    kw = dict(method=m.method, ci=m.ci, knha_floor=m.knha_floor, tol=m.tol)
    _check_refits(k, p, "influence diagnostics")
    full = _fit_stack(m.y, m.v, m.X, **kw)
    dele = _refits(m, lambda rows: _deleted(rows, k), kw, dfbetas=True,
                   what="influence diagnostics")
    pred = m.X @ full.beta
    delpred = np.einsum("ip,ip->i", m.X, dele.beta)
    vdelpred = np.einsum("ip,ipq,iq->i", m.X, dele.vb, m.X)
    s2w = dele.s2w
    resid = m.y - delpred
    resid = np.where(np.abs(resid) < 100 * np.finfo(float).eps, 0.0, resid)
    resid_se = np.sqrt(m.v * s2w + vdelpred + dele.tau2 * s2w)
    hat = full.h
    dffits = (pred - delpred) / np.sqrt(s2w * hat * (dele.tau2 + m.v))
    # Var(b) with tau2_(-i) over all k studies, for DFBETAS (dele.a_diag)
    diff = full.beta[None, :] - dele.beta
    dfbs = diff / np.sqrt(s2w[:, None] * dele.a_diag)
    vb_inv = np.linalg.inv(full.vb)
    cook = np.einsum("ip,pq,iq->i", diff, vb_inv, diff)
    with np.errstate(invalid="ignore"):
        cov_r = np.linalg.det(np.where(dele.ok[:, None, None], dele.vb, np.eye(p))) / \
            np.linalg.det(full.vb)
    cov_r = np.where(dele.ok, cov_r, np.nan)
    weight = 100 * full.w / full.w.sum()
    thr = {"dffits": 3 * np.sqrt(p / (k - p)), "cook_d": 0.5, "hat": 3 * p / k, "dfbetas": 1.0}
    with np.errstate(invalid="ignore"):
        crit = {"dffits": np.abs(dffits) > thr["dffits"],
                "cook_d": stats.chi2.cdf(cook, p) > 0.5,
                "hat": hat > thr["hat"],
                "dfbetas": np.any(np.abs(dfbs) > 1, axis=1)}
    flagged = [", ".join(c for c in crit if crit[c][i]) for i in range(k)]
    table = pd.DataFrame({
        "label": list(m.labels), "resid": resid, "resid_se": resid_se,
        "rstudent": resid / resid_se, "dffits": dffits, "cook_d": cook, "cov_r": cov_r,
        "tau2_del": dele.tau2, "qe_del": dele.qe, "hat": hat, "weight": weight,
        "influential": np.array([bool(f) for f in flagged]), "flagged_by": flagged})
    dfb = pd.DataFrame(dfbs, columns=list(m.names))
    dfb.insert(0, "label", list(m.labels))
    thresholds = {"dffits": f"|dffits| > {thr['dffits']:.4g} (3 sqrt(p/(k-p)))",
                  "cook_d": f"chi2({p}) cdf of cook_d > 0.5 (cook_d > "
                            f"{stats.chi2.ppf(0.5, p):.4g})",
                  "hat": f"hat > {thr['hat']:.4g} (3 p/k)", "dfbetas": "any |dfbetas| > 1"}
    return Influence(table, dfb, k, p, m.method, thresholds)


def baujat(result) -> pd.DataFrame:
    """Coordinates of the Baujat plot: heterogeneity contribution vs influence (Baujat 2002).

    Parameters
    ----------
    result : MetaResult or MetaRegression

    Returns
    -------
    DataFrame
        ``label``, ``x = (y_i - x_i' b)^2 / (tau2 + v_i)`` (the study's squared Pearson
        residual, its contribution to Q under FE) and ``y = (x_i' b - x_i' b_(-i))^2 /
        x_i' Var(b_(-i)) x_i`` (the squared standardized change of its fitted value when it
        is left out), as metafor's ``baujat.rma``.

    Notes
    -----
    Baujat, Mahe, Pignon & Hill (2002), Statistics in Medicine 21, 2641-2652. Studies top right
    both add heterogeneity and move the pooled result. Example: ``baujat(res)``.
    """
    import pandas as pd

    from .metareg import _fit_stack

    m = _model_of(result)
    k, p = m.X.shape
    if k - 1 <= p:
        raise DataError(f"a Baujat plot needs at least {p + 2} studies; got k = {k}.")
    kw = dict(method=m.method, ci=m.ci, knha_floor=m.knha_floor, tol=m.tol)
    _check_refits(k, p, "a Baujat plot")
    full = _fit_stack(m.y, m.v, m.X, **kw)
    dele = _refits(m, lambda rows: _deleted(rows, k), kw, what="a Baujat plot")
    pred = m.X @ full.beta
    delpred = np.einsum("ip,ip->i", m.X, dele.beta)
    vdelpred = np.einsum("ip,ipq,iq->i", m.X, dele.vb, m.X)
    return pd.DataFrame({"label": list(m.labels),
                         "x": (m.y - pred) ** 2 / (full.tau2 + m.v),
                         "y": (delpred - pred) ** 2 / vdelpred})


def cumulative(result, order=None, *, collapse: bool = False,
               confidence_level: float = 0.95) -> pd.DataFrame:
    """Cumulative meta-analysis: the pooled result as studies are added in ``order``.

    Parameters
    ----------
    result : MetaResult
        The model without moderators (its estimator and test are used at every step).
    order : array-like of shape (k,), optional
        Sort key per study (e.g. publication year); ties keep their input order. Default: the
        input order.
    collapse : bool
        Add studies with the same ``order`` value together (one row per value).
    confidence_level : float

    Returns
    -------
    DataFrame
        One row per step: ``label`` (the study added), ``order``, ``k``, ``estimate, se,
        statistic, pvalue, ci_low, ci_high, q, q_pvalue, tau2, i2, h2``, as metafor's
        ``cumul``. The first step (one study) is that study's estimate with tau2 = 0.

    Notes
    -----
    Lau, Antman, Jimenez-Silva, Kupelnick, Mosteller & Chalmers (1992), NEJM 327, 248-254:
    when did the evidence settle? All steps are one batched fit (nested study masks).

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.4, 0.2, 0.3], [0.01, 0.02, 0.01], method="FE")
    >>> cumulative(res)["estimate"].round(4).tolist()
    [0.4, 0.3333, 0.32]
    """
    import pandas as pd
    from scipy import stats

    from .._validation import check_confidence_level
    from .meta import MetaResult

    if not isinstance(result, MetaResult):
        raise ParameterTypeError("`result` must be a MetaResult (meta_analysis, no moderators); "
                                 f"got {type(result).__name__}.")
    level = check_confidence_level(confidence_level)
    m = _model_of(result)
    k = m.y.size
    if order is None:
        key = np.arange(k)
    else:
        key = np.asarray(order)
        if key.shape != (k,):
            raise DataError(f"`order` must have one value per study ({k}); got shape "
                            f"{key.shape}.")
        if key.dtype.kind in "fc" and not np.all(np.isfinite(key)):
            raise DataError("`order` must not contain NaN.")
    idx = np.argsort(key, kind="stable")
    y, v, X = m.y[idx], m.v[idx], m.X[idx]
    ordered = _Model(y, v, X, m.labels, m.names, m.method, m.ci, m.knha_floor, m.tol)
    fit = _refits(ordered,
                  lambda rows: (np.arange(k)[None, :] <= rows[:, None]).astype(float),
                  dict(method=m.method, ci=m.ci, knha_floor=m.knha_floor, tol=m.tol),
                  what="a cumulative meta-analysis")
    est = fit.beta[:, 0]
    se = np.sqrt(fit.vb[:, 0, 0])
    n = np.arange(1, k + 1)
    # one study: its own estimate, tau2 = 0 (metafor's k = 1 model)
    est[0], se[0] = y[0], np.sqrt(v[0])
    tau2 = fit.tau2.copy()
    tau2[0] = 0.0
    qe = fit.qe.copy()
    qe[0] = 0.0
    if m.ci == "knha":
        dfs = np.maximum(n - 1, 1).astype(float)
        crit = stats.t.ppf((1 + level) / 2, dfs)
        pval = 2 * stats.t.sf(np.abs(est / se), dfs)
    else:
        crit = stats.norm.ppf((1 + level) / 2)
        pval = 2 * stats.norm.sf(np.abs(est / se))
    with np.errstate(invalid="ignore", divide="ignore"):
        vt = (n - 1) / fit.trp0
        if m.method == "FE":
            i2 = np.where(qe > 0, np.maximum(0.0, 100 * (qe - (n - 1)) / qe), 0.0)
            h2 = qe / (n - 1)
        else:
            i2 = 100 * tau2 / (vt + tau2)
            h2 = 1 + tau2 / vt
    i2[0], h2[0] = 0.0, 1.0
    out = pd.DataFrame({"label": [m.labels[i] for i in idx], "order": key[idx], "k": n,
                        "estimate": est, "se": se, "statistic": est / se, "pvalue": pval,
                        "ci_low": est - crit * se, "ci_high": est + crit * se, "q": qe,
                        "q_pvalue": np.where(n > 1, stats.chi2.sf(qe, np.maximum(n - 1, 1)),
                                             1.0),
                        "tau2": tau2, "i2": i2, "h2": h2})
    if collapse:
        last = np.r_[key[idx][1:] != key[idx][:-1], True]
        out = out[last].reset_index(drop=True)
    return out
