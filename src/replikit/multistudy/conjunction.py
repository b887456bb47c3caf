"""Replicability of many findings across studies: partial conjunctions, FDR, r-values.

A finding (``lr`` beats ``rf``; a subgroup effect; a metric) is tested in each of K
independent studies, giving K one-sided p-values. Parmigiani (2023, sec. 7.5) asks whether it is
*replicated*, which a meta-analysis p-value does not answer: one tiny p-value makes a small
combined p-value. The partial-conjunction null (Benjamini & Heller 2008) ``H^{u/K}``: "the
finding is true in fewer than u of the K studies" is rejected by combining only the
``K − u + 1`` largest p-values (if the finding holds in at least u studies, at most ``u − 1``
small p-values can come from true effects, so the ``K − u + 1`` largest include a null one):

* Fisher: ``P(χ²_{2(K−u+1)} ≥ −2 Σ_{i=u}^{K} log p_(i))`` (Benjamini & Heller 2008, eq. 3);
* Stouffer: ``1 − Φ(Σ_{i=u}^{K} Φ^{-1}(1 − p_(i)) / √(K − u + 1))``;
* Simes: ``min_{i=u..K} (K − u + 1)/(i − u + 1) · p_(i)`` (Benjamini & Heller 2008, eq. 4);
* Bonferroni: ``(K − u + 1) · p_(u)``,

with ``p_(1) ≤ … ≤ p_(K)`` the ordered p-values; ``u = 1`` is the global null (any study),
``u = K`` the conjunction (every study; all four give ``p_(K)``-based tests). Fisher and
Stouffer need independent studies; Simes holds under positive dependence. Across findings the
Benjamini–Hochberg procedure at each u controls the FDR of the replicability claims
(Benjamini & Heller 2008, sec. 4); since the p-values are made monotone in u (``max`` over
``v ≤ u``, still valid because the nulls are nested), the claims at level u are nested in
those at ``u − 1``.

For an original study that screened ``m`` features and a follow-up of the ``R`` selected,
:func:`r_values` gives the r-value (Heller, Bogomolov & Benjamini 2014, PNAS 111:16262; the
procedure of Bogomolov & Heller 2013): the smallest FDR level at which the finding is declared
replicated. :func:`replicated_in` applies the partial conjunction to a long table of per-study
p-values (or to cross-validation Scores, by a one-sided corrected resampled t-test per study).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._compat import renamed
from .._format import number
from .._validation import check_choice, check_float, check_int, check_probability
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import Result

__all__ = ["partial_conjunction", "bh_adjust", "r_values", "ReplicatedIn", "replicated_in",
           "study_pvalues", "COMBINATIONS"]

COMBINATIONS = ("fisher", "stouffer", "simes", "bonferroni")


def _pvalue_array(pvalues, name: str = "pvalues") -> np.ndarray:
    p = np.asarray(pvalues, dtype=float)
    if p.ndim == 0 or p.size == 0:
        raise DataError(f"`{name}` must hold at least one p-value; got {pvalues!r}.")
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise DataError(f"`{name}` must be p-values in [0, 1] without NaN.")
    return p


def partial_conjunction(pvalues, u, *, method: str = "fisher") -> np.ndarray:
    """Partial-conjunction p-values of "true in at least ``u`` of the K studies".

    Parameters
    ----------
    pvalues : array-like of shape (K,) or (M, K)
        One-sided p-values of a finding in each of K independent studies (rows: findings).
    u : int or array-like of int
        ``1 <= u <= K``; an array returns one column per value.
    method : {'fisher', 'stouffer', 'simes', 'bonferroni'}, default 'fisher'
        How the ``K − u + 1`` largest p-values are combined (Benjamini & Heller 2008), as
        ``method`` of :func:`scipy.stats.combine_pvalues`.

    Returns
    -------
    ndarray
        Shape ``(M,)`` (or a float for one finding) for a scalar ``u``; ``(M, len(u))``
        otherwise. Not made monotone in u (see :func:`replicated_in`).

    See Also
    --------
    replicated_in : Partial conjunctions of many findings with FDR control.
    bh_adjust : Benjamini–Hochberg adjusted p-values.

    References
    ----------
    .. [1] Benjamini, Y. & Heller, R. (2008). Screening for Partial Conjunction Hypotheses.
       Biometrics, 64(4), 1215–1222.

    Examples
    --------
    >>> p = [0.01, 0.02, 0.3]
    >>> round(float(partial_conjunction(p, 2, method="bonferroni")), 6)
    0.04
    >>> round(float(partial_conjunction(p, 2, method="simes")), 6)
    0.04
    >>> round(float(partial_conjunction(p, 3)), 6)  # the conjunction: p_(3)
    0.3
    """
    from scipy import stats

    check_choice(method, "method", COMBINATIONS)
    p = _pvalue_array(pvalues)
    single = p.ndim == 1
    p2 = np.atleast_2d(p)
    if p2.ndim != 2:
        raise DataError(f"`pvalues` must be 1-D (K,) or 2-D (findings, K); got {p.shape}.")
    K = p2.shape[1]
    scalar_u = np.ndim(u) == 0
    us = np.atleast_1d(np.asarray(u))
    if not np.issubdtype(us.dtype, np.integer) or np.any((us < 1) | (us > K)):
        raise ParameterError(f"`u` must be integers in [1, K={K}]; got {u!r}.")
    ps = np.sort(p2, axis=1)  # ascending: p_(1) <= ... <= p_(K)
    out = np.empty((p2.shape[0], us.size))
    tiny = np.finfo(float).tiny
    for c, uu in enumerate(us):
        tail = ps[:, uu - 1:]                  # the K − u + 1 largest
        r = tail.shape[1]
        if method == "fisher":
            stat = -2 * np.log(np.maximum(tail, tiny)).sum(1)
            out[:, c] = stats.chi2.sf(stat, 2 * r)
        elif method == "stouffer":
            z = stats.norm.isf(np.clip(tail, tiny, 1.0)).sum(1) / np.sqrt(r)
            out[:, c] = stats.norm.sf(z)
        elif method == "simes":
            out[:, c] = np.min(r / np.arange(1, r + 1) * tail, axis=1)
        else:
            out[:, c] = r * tail[:, 0]
    out = np.minimum(out, 1.0)
    if scalar_u:
        out = out[:, 0]
        return float(out[0]) if single else out
    return out[0] if single else out


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values along the last axis.

    ``min_{j >= i} min(1, M p_(j) / j)`` (Benjamini & Hochberg 1995); a finding is a discovery
    at FDR level q when its adjusted value is at most q.

    Parameters
    ----------
    pvalues : array-like of shape (..., M)
        p-values of M findings (along the last axis).

    Returns
    -------
    ndarray
        The adjusted p-values, in the input's order.

    See Also
    --------
    replicated_in : Applies it across findings at each u.
    scipy.stats.false_discovery_control : The same adjustment.

    References
    ----------
    .. [1] Benjamini, Y. & Hochberg, Y. (1995). Controlling the False Discovery Rate: A
       Practical and Powerful Approach to Multiple Testing. Journal of the Royal Statistical
       Society: Series B, 57(1), 289–300.

    Examples
    --------
    >>> bh_adjust([0.01, 0.04, 0.03, 0.5]).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.5]
    """
    p = _pvalue_array(pvalues)
    M = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ps = np.take_along_axis(p, order, axis=-1)
    adj = ps * M / np.arange(1, M + 1)
    adj = np.minimum.accumulate(adj[..., ::-1], axis=-1)[..., ::-1]
    out = np.empty_like(adj)
    np.put_along_axis(out, order, np.minimum(adj, 1.0), axis=-1)
    return out


@renamed(tolerance="rtol")
def r_values(p_original, p_followup, *, n_features: int, c2: float = 0.5,
             null_fraction: float = 0.0, dependence: str = "independent",
             rtol: float = 1e-10) -> np.ndarray:
    """The r-values of findings followed up from a screening study.

    After Heller, Bogomolov & Benjamini (2014).

    Parameters
    ----------
    p_original, p_followup : array-like of shape (R,)
        p-values of the ``R`` findings selected for follow-up, in the original (primary) and
        in the follow-up study.
    n_features : int
        ``m``, the number of features screened in the original study (``m >= R``).
    c2 : float
        The follow-up's share of the error budget, in (0, 1); 0.5 recommended by the authors.
    null_fraction : float
        ``l00``, a lower bound of the fraction of the m features null in both studies, in
        [0, 1) (0: no assumption).
    dependence : {'independent', 'general'}
        ``'general'`` replaces m by ``m Σ_{i<=m} 1/i`` (FDR control under any dependence of the
        original study's p-values; Benjamini & Yekutieli 2001).
    rtol : float, default 1e-10
        Relative tolerance of the fixed point below (numerical, as scipy's ``rtol``).

    Returns
    -------
    ndarray of shape (R,)
        The r-value of each finding: declaring replicated every finding with r-value ``<= q``
        controls the FDR of replicability claims at level q.

    See Also
    --------
    replicated_in : Replicability of findings over K studies, all tested alike.

    Notes
    -----
    With ``c1(x) = (1 − c2) / (1 − l00 (1 − c2 x))`` and ``E_i(x) = max(m p1_i / c1(x),
    R p2_i / c2)``, the BH-type adjustment ``r_i(x) = min(1, min_{j: E_j >= E_i} E_j /
    rank(E_j))``; the r-value is the fixed point ``r_i(x) = x`` (1 when ``r_i(1) >= 1``),
    found by bisection on ``log x`` (``l00 = 0`` makes ``c1`` constant and the fixed point explicit).

    References
    ----------
    .. [1] Heller, R., Bogomolov, M. & Benjamini, Y. (2014). Deciding Whether Follow-up Studies
       Have Replicated Findings in a Preliminary Large-Scale Omics Study. Proceedings of the
       National Academy of Sciences, 111(46), 16262–16267.
       https://doi.org/10.1073/pnas.1314814111
    .. [2] Bogomolov, M. & Heller, R. (2013). Discovering Findings That Replicate from a Primary
       Study of High Dimension to a Follow-up Study. Journal of the American Statistical
       Association, 108(504), 1480–1492.
    .. [3] Benjamini, Y. & Yekutieli, D. (2001). The Control of the False Discovery Rate in
       Multiple Testing under Dependency. The Annals of Statistics, 29(4), 1165–1188.

    Examples
    --------
    >>> r_values([1e-6, 1e-5, 1e-3], [0.001, 0.04, 0.2], n_features=1000).round(4).tolist()
    [0.006, 0.12, 0.6667]
    """
    p1 = _pvalue_array(p_original, "p_original")
    p2 = _pvalue_array(p_followup, "p_followup")
    if p1.ndim != 1 or p1.shape != p2.shape:
        raise DataError(f"`p_original` and `p_followup` must be 1-D of equal length; got "
                        f"{p1.shape} and {p2.shape}.")
    R = p1.size
    m = check_int(n_features, "n_features", min_value=1)
    if m < R:
        raise ParameterError(f"`n_features` (the features screened, {m}) must be at least the "
                             f"number followed up ({R}).")
    c2 = check_probability(c2, "c2")
    l00 = check_float(null_fraction, "null_fraction", min_value=0.0)
    if l00 >= 1:
        raise ParameterError(f"`null_fraction` must lie in [0, 1); got {null_fraction!r}.")
    check_choice(dependence, "dependence", ("independent", "general"))
    mm = float(m) * (float(np.sum(1.0 / np.arange(1, m + 1))) if dependence == "general" else 1)

    def adjusted(x):  # x: (R,) candidate levels -> r_i(x_i) for each i
        c1 = (1 - c2) / (1 - l00 * (1 - c2 * x))                       # (R,)
        E = np.maximum(mm * p1[None, :] / c1[:, None], R * p2[None, :] / c2)  # row i: at x_i
        order = np.argsort(-E, axis=1, kind="stable")
        Es = np.take_along_axis(E, order, axis=1)                     # descending
        # rank = the number of values <= E_j (ties share the largest rank): R minus the
        # position where E_j's run of ties starts in the descending order
        j = np.arange(R)
        new = np.ones_like(Es, dtype=bool)
        new[:, 1:] = Es[:, 1:] != Es[:, :-1]
        start = np.maximum.accumulate(np.where(new, j, 0), axis=1)
        adj = np.minimum.accumulate(Es / (R - start), axis=1)
        out = np.empty_like(adj)
        np.put_along_axis(out, order, adj, axis=1)
        return np.minimum(np.diagonal(out), 1.0)

    if l00 == 0:
        return adjusted(np.ones(R))
    done = adjusted(np.ones(R)) >= 1.0
    # bisection on log x (r-values span many decades): r_i(x) − x > 0 below the fixed point
    positive = np.r_[p1, p2][np.r_[p1, p2] > 0]
    floor = max(float(positive.min()) if positive.size else 1e-300, 1e-300) * 1e-6
    lo, hi = np.full(R, np.log(max(floor, 1e-300))), np.zeros(R)
    for _ in range(400):
        mid = (lo + hi) / 2
        above = adjusted(np.exp(mid)) - np.exp(mid) > 0
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        if np.all(hi - lo < rtol):
            break
    return np.where(done, 1.0, np.exp((lo + hi) / 2))


# -- per-study comparisons -> replicated in at least u of K studies -------------------------------

@dataclass(frozen=True, slots=True)
class ReplicatedIn(Result):
    """Partial-conjunction analysis of findings over K studies.

    Attributes
    ----------
    table : DataFrame
        One row per finding: ``finding, n_studies, n_significant`` (studies with p <= alpha),
        ``replicated_in`` (the largest u whose BH-adjusted partial-conjunction p-value is at
        most ``alpha``; 0 when none), then ``pvalue_u1..pvalue_uK`` (partial-conjunction
        p-values, monotone in u) and ``adjusted_u1..adjusted_uK`` (BH across findings).
    pvalues : DataFrame
        The per-study p-values (findings × studies).
    method : str
        The combination of the p-values (``'fisher'``, ``'stouffer'``, ``'simes'``,
        ``'bonferroni'``).
    alpha : float
        The FDR level.

    See Also
    --------
    replicated_in : Computes it.

    Examples
    --------
    >>> import pandas as pd
    >>> from replikit.multistudy import replicated_in
    >>> t = pd.DataFrame({"study": ["s1", "s2", "s3"], "finding": ["lr beats rf"] * 3,
    ...                   "pvalue": [0.001, 0.004, 0.02]})
    >>> print(replicated_in(t).sentences()[0])
    lr beats rf: in at least 3 of 3 studies (FDR 0.05, fisher partial conjunction)
    """

    table: pd.DataFrame
    pvalues: pd.DataFrame = field(repr=False)
    method: str = "fisher"
    alpha: float = 0.05

    @property
    def title(self) -> str:
        return (f"Replicated in at least u of K studies (partial conjunction, {self.method}; "
                f"Benjamini-Hochberg across {number(len(self.table))} findings at FDR "
                f"{number(self.alpha)})")

    def to_frame(self) -> pd.DataFrame:
        """The table: one row per finding.

        Returns
        -------
        DataFrame
            See :attr:`table`.
        """
        return self.table.copy()

    def sentences(self) -> list[str]:
        """``'<finding>: in at least u of K studies'`` for every finding.

        Returns
        -------
        list of str
            One sentence per finding.
        """
        out = []
        for r in self.table.itertuples(index=False):
            out.append(f"{r.finding}: in at least {r.replicated_in} of {r.n_studies} studies "
                       f"(FDR {number(self.alpha)}, {self.method} partial conjunction)")
        return out

    def __str__(self) -> str:
        return "\n".join([self.title, *("  " + s for s in self.sentences())])


def study_pvalues(scores, *, metric: str | None = None, higher_is_better: bool = True,
                  pairs=None) -> pd.DataFrame:
    """One-sided p-values of "model a beats model b" in each study, from cross-validation.

    The corrected resampled t-test (Nadeau & Bengio 2003) of the per-fold differences,
    ``t = d̄ / sqrt((1/J + n_test/n_train) s²)`` on ``J − 1`` df, or the plain paired t-test
    when the table has no ``n_train``/``n_test`` (then the p-values are anti-conservative:
    folds share training rows).

    Parameters
    ----------
    scores : Scores or DataFrame
        Columns ``study, model, repeat, fold, metric, value`` (optionally ``n_train, n_test``).
    metric : str, optional
        Required when the table holds several metrics.
    higher_is_better : bool, default True
        Direction of the metric.
    pairs : list of (a, b), optional
        Default: every ordered pair ``a != b``.

    Returns
    -------
    DataFrame
        ``study, finding`` (``'a beats b'``), ``estimate`` (mean difference), ``pvalue``.

    See Also
    --------
    replicated_in : In how many studies does each finding hold?

    References
    ----------
    .. [1] Nadeau, C. & Bengio, Y. (2003). Inference for the Generalization Error. Machine
       Learning, 52(3), 239–281.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"study": "s1", "model": ["lr", "rf"] * 3, "repeat": 0,
    ...                   "fold": [0, 0, 1, 1, 2, 2], "metric": "accuracy",
    ...                   "value": [0.80, 0.70, 0.82, 0.71, 0.79, 0.72]})
    >>> study_pvalues(f, pairs=[("lr", "rf")])[["finding", "estimate"]].round(3).values.tolist()
    [['lr beats rf', 0.093]]
    """
    from scipy import stats

    frame = scores.frame if hasattr(scores, "frame") else scores
    if not isinstance(frame, pd.DataFrame):
        raise ParameterTypeError(f"`scores` must be Scores or a DataFrame; got "
                                 f"{type(scores).__name__}.")
    need = ["study", "model", "repeat", "fold", "metric", "value"]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise DataError(f"`scores`: missing column(s) {', '.join(missing)}.")
    metrics = list(pd.unique(frame["metric"]))
    if metric is None:
        if len(metrics) > 1:
            raise ParameterError(f"`metric`: the scores hold {len(metrics)} metrics "
                                 f"({', '.join(map(str, metrics))}); name one.")
        metric = metrics[0]
    elif metric not in metrics:
        raise ParameterError(f"`metric`: {metric!r} is not among {metrics}.")
    f = frame[frame["metric"] == metric]
    models = list(pd.unique(f["model"]))
    if pairs is None:
        pairs = [(a, b) for a in models for b in models if a != b]
    rows = []
    corrected = {"n_train", "n_test"} <= set(f.columns)
    for study, g in f.groupby("study", sort=False):
        wide = g.pivot_table(index=["repeat", "fold"], columns="model", values="value")
        if corrected:
            sizes = g.groupby(["repeat", "fold"])[["n_train", "n_test"]].first()
            ratio = float((sizes["n_test"] / sizes["n_train"]).mean())
        for a, b in pairs:
            if a not in wide or b not in wide:
                raise DataError(f"`scores`: study {study!r} lacks model {a!r} or {b!r}.")
            d = (wide[a] - wide[b]).dropna().to_numpy()
            if not higher_is_better:
                d = -d
            J = d.size
            s2 = d.var(ddof=1) if J > 1 else np.nan
            scale = (1 / J + ratio) if corrected else 1 / J
            with np.errstate(divide="ignore", invalid="ignore"):
                t = d.mean() / np.sqrt(scale * s2)
            if not np.isfinite(t):  # identical folds: the sign decides
                p = 0.0 if d.mean() > 0 else 1.0
            else:
                p = float(stats.t.sf(t, J - 1))
            rows.append({"study": study, "finding": f"{a} beats {b}", "estimate": d.mean(),
                         "pvalue": p})
    return pd.DataFrame(rows)


def replicated_in(data, *, method: str = "fisher", alpha: float = 0.05, metric=None,
                  higher_is_better: bool = True, pairs=None) -> ReplicatedIn:
    """In how many of K studies does each finding hold? Partial conjunctions with FDR control.

    Parameters
    ----------
    data : DataFrame or Scores
        A long table ``study, finding, pvalue`` (one-sided p-values of each finding in each
        study), or cross-validation Scores (findings ``'a beats b'``, see
        :func:`study_pvalues`).
    method : {'fisher', 'stouffer', 'simes', 'bonferroni'}, default 'fisher'
        The combination of :func:`partial_conjunction` (as ``method`` of
        :func:`scipy.stats.combine_pvalues`).
    alpha : float, default 0.05
        FDR level of the Benjamini–Hochberg procedure across findings, at each u.
    metric : str, optional
        For Scores: see :func:`study_pvalues`.
    higher_is_better : bool, default True
        For Scores: see :func:`study_pvalues`.
    pairs : list of (a, b), optional
        For Scores: see :func:`study_pvalues`.

    Returns
    -------
    ReplicatedIn
        One row per finding with the largest u shown.

    See Also
    --------
    partial_conjunction : The p-values of "true in at least u studies".
    r_values : Replicability of findings followed up from a screening study.

    Notes
    -----
    A finding missing in some study is combined over the studies where it was tested (its
    K is its own). For each u the findings with BH-adjusted p-value at most ``alpha`` are an
    FDR-controlled set of claims "true in at least u studies" (Benjamini & Heller 2008, sec.
    4); ``replicated_in`` reports, per finding, the largest such u.

    References
    ----------
    .. [1] Benjamini, Y. & Heller, R. (2008). Screening for Partial Conjunction Hypotheses.
       Biometrics, 64(4), 1215–1222.
    .. [2] Benjamini, Y. & Hochberg, Y. (1995). Controlling the False Discovery Rate: A
       Practical and Powerful Approach to Multiple Testing. Journal of the Royal Statistical
       Society: Series B, 57(1), 289–300.
    .. [3] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"study": ["s1", "s2", "s3"] * 2,
    ...                   "finding": ["lr beats rf"] * 3 + ["rf beats lr"] * 3,
    ...                   "pvalue": [0.001, 0.004, 0.02, 0.9, 0.7, 0.99]})
    >>> r = replicated_in(t)
    >>> r.table[["finding", "replicated_in"]].values.tolist()
    [['lr beats rf', 3], ['rf beats lr', 0]]
    """
    check_choice(method, "method", COMBINATIONS)
    alpha = check_probability(alpha, "alpha")
    if hasattr(data, "frame") and not isinstance(data, pd.DataFrame):
        data = study_pvalues(data, metric=metric, higher_is_better=higher_is_better,
                             pairs=pairs)
    elif isinstance(data, pd.DataFrame) and "pvalue" not in data.columns and \
            "value" in data.columns:
        data = study_pvalues(data, metric=metric, higher_is_better=higher_is_better,
                             pairs=pairs)
    if not isinstance(data, pd.DataFrame):
        raise ParameterTypeError(f"`data` must be a DataFrame (study, finding, pvalue) or "
                                 f"Scores; got {type(data).__name__}.")
    missing = [c for c in ("study", "finding", "pvalue") if c not in data.columns]
    if missing:
        raise DataError(f"`data`: missing column(s) {', '.join(missing)} (a long table "
                        "study, finding, pvalue).")
    if data.duplicated(["study", "finding"]).any():
        raise DataError("`data`: a (study, finding) pair appears twice.")
    _pvalue_array(data["pvalue"].to_numpy(float), "pvalue")
    wide = data.pivot(index="finding", columns="study", values="pvalue")
    wide = wide.loc[pd.unique(data["finding"])]
    Kmax = wide.shape[1]
    if Kmax < 1:
        raise DataError("`data` holds no study.")
    M = len(wide)
    pc = np.full((M, Kmax), np.nan)
    counts = wide.notna().sum(axis=1).to_numpy()
    for K in np.unique(counts):
        rows = np.flatnonzero(counts == K)
        P = np.array([wide.iloc[r].dropna().to_numpy(float) for r in rows])
        vals = partial_conjunction(P, np.arange(1, K + 1), method=method)
        pc[rows, :K] = np.maximum.accumulate(vals, axis=1)  # monotone in u (nested nulls)
    adj = np.full_like(pc, np.nan)
    for u in range(Kmax):
        ok = ~np.isnan(pc[:, u])
        if ok.any():
            adj[ok, u] = bh_adjust(pc[ok, u])
    shown = np.where(np.isnan(adj), False, adj <= alpha)
    # nested claims: the largest u with every smaller u shown as well
    rep = np.cumprod(shown, axis=1).sum(1)
    columns = {"finding": wide.index.to_list(), "n_studies": counts,
               "n_significant": (wide <= alpha).sum(axis=1).to_numpy(),
               "replicated_in": rep.astype(int)}
    columns.update({f"pvalue_u{u + 1}": pc[:, u] for u in range(Kmax)})
    columns.update({f"adjusted_u{u + 1}": adj[:, u] for u in range(Kmax)})
    return ReplicatedIn(pd.DataFrame(columns), wide, method, alpha)
