"""Which study drives the result? Influence diagnostics, Baujat plot data, cumulative fits.

:func:`influence` computes metafor's ``influence()`` set for a meta-analysis or a
meta-regression (Viechtbauer & Cheung 2010): externally standardized (studentized deleted)
residuals, DFFITS, Cook's distance, the covariance ratio, τ² and QE without the study, hat
values, weights and DFBETAS, with the flags metafor uses for influential studies. All k
leave-one-out fits are one batched call of the engine (:mod:`replikit.replicate._rma`), with
masks instead of copies of the data, in blocks of bounded memory.

:func:`baujat` gives the coordinates of the Baujat plot (Baujat et al. 2002): each study's
contribution to the heterogeneity statistic against its influence on the pooled result;
:func:`cumulative` the cumulative meta-analysis in a given order (Lau et al. 1992).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._compat import renamed_fields
from .._format import number
from ..errors import DataError, ParameterTypeError
from ..results import Result
from . import _draw, _rma
from .meta import MetaResult
from .metareg import MetaRegression

__all__ = ["Influence", "influence", "baujat", "cumulative", "MAX_REFIT_K"]  # noqa: F822


def __getattr__(name: str):
    # MAX_REFIT_K lives in the engine, which every refit (here, leave_one_out, the command
    # line's early check) reads: one number, wherever it is read or changed
    if name == "MAX_REFIT_K":
        return _rma.MAX_REFIT_K
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _model_of(result) -> _rma.Model:
    """The data and settings of a MetaResult or MetaRegression."""
    if isinstance(result, (MetaResult, MetaRegression)):
        return result._model()
    raise ParameterTypeError("`result` must be a MetaResult (meta_analysis) or a "
                             f"MetaRegression (meta_regression); got {type(result).__name__}.")


@renamed_fields(method="tau2_method", p="n_coefficients")
@dataclass(frozen=True, slots=True)
class Influence(Result):
    """Influence diagnostics of every study (metafor's ``influence.rma.uni``).

    Parameters
    ----------
    table : DataFrame
        One row per study: ``label``; ``resid`` (``y_i - x_i' b_(-i)``), ``resid_se`` and
        ``rstudent`` (their ratio, the externally standardized residual); ``dffits``;
        ``cook_d``; ``cov_r``; ``tau2_del`` and ``qe_del`` (τ² and QE without the study);
        ``hat``; ``weight`` (percent); ``influential`` and ``flagged_by`` (the criteria met).
    dfbetas : DataFrame
        ``label`` and one column per coefficient: ``(b - b_(-i)) / SE(b_(-i))``.
    k, n_coefficients : int
        Number of studies and of coefficients.
    tau2_method : str
        The τ² estimator of the model.
    thresholds : dict
        The flags (Viechtbauer & Cheung 2010; metafor): ``|dffits| > 3 sqrt(p / (k - p))``,
        ``chi2_p.cdf(cook_d) > 0.5``, ``hat > 3 p / k``, any ``|dfbetas| > 1``.

    See Also
    --------
    influence : Builds it.
    baujat : Heterogeneity contribution against influence.

    References
    ----------
    .. [1] Viechtbauer, W. & Cheung, M. W. (2010). Outlier and Influence Diagnostics for
       Meta-Analysis. Research Synthesis Methods, 1(2), 112–125.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> inf = influence(meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25],
    ...                               [0.01, 0.02, 0.015, 0.01, 0.02]))
    >>> inf.influential
    ('Study 4',)
    """

    table: object = field(repr=False)
    dfbetas: object = field(repr=False)
    k: int
    n_coefficients: int
    tau2_method: str
    thresholds: dict

    @property
    def influential(self) -> tuple:
        """Labels of the studies flagged as influential."""
        return tuple(self.table.loc[self.table["influential"], "label"])

    @property
    def title(self) -> str:
        return f"Influence diagnostics ({self.tau2_method}, k = {self.k})"

    def to_frame(self):
        """The table with the DFBETAS appended (columns ``dfbetas_<coefficient>``).

        Returns
        -------
        pandas.DataFrame
            One row per study.
        """
        d = self.dfbetas.drop(columns="label").add_prefix("dfbetas_")
        return self.table.join(d)

    def plot(self, ax=None, *, fig=None, title: str | None = None):
        """Panels of the diagnostics against the studies (metafor's ``plot.infl.rma.uni``).

        Influential studies are drawn in vermillion and the thresholds dashed.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            The panels take its place in its figure (default: a new figure).
        fig : matplotlib Figure, optional
            Draw the panels into this figure instead.
        title : str, optional
            The figure's title.

        Returns
        -------
        ndarray of matplotlib Axes
            The 4 x 2 panels.

        See Also
        --------
        replikit.replicate.influence_plot : The same figure.
        """
        from scipy import stats

        k, p = self.k, self.n_coefficients
        t = self.table
        axes = _draw.panels(ax, fig, 4, 2, 8.0, 5.2, sharex=True)
        dffits = 3 * np.sqrt(p / (k - p))
        lines = {"rstudent": (-1.96, 1.96), "dffits": (dffits, -dffits),
                 "cook_d": (stats.chi2.ppf(0.5, p),), "cov_r": (1.0,), "hat": (3 * p / k,)}
        n = len(self.influential)
        head = title or (f"Influence diagnostics ({self.tau2_method}, k = {number(k)}); {n} "
                         f"influential stud{'y' if n == 1 else 'ies'}")
        return _draw.influence_panels(
            axes, labels=list(t["label"]), values={c: t[c] for c, _ in _draw.INFLUENCE_PANELS},
            lines=lines, influential=t["influential"].to_numpy(bool), title=head)

    def __str__(self) -> str:
        cols = ["label", "rstudent", "dffits", "cook_d", "cov_r", "tau2_del", "qe_del", "hat",
                "weight"]
        t = self.table[cols].copy()
        t["inf"] = np.where(self.table["influential"], "*", "")
        body = t.to_string(index=False, float_format=lambda x: f"{x:.4f}")
        n = int(self.table["influential"].sum())
        head = (f"Influence diagnostics ({self.tau2_method}; k = {self.k}, p = "
                f"{self.n_coefficients}); {n} influential stud{'y' if n == 1 else 'ies'} (*)")
        return head + "\n" + body


def _deleted_fits(m: _rma.Model, what: str, dfbetas: bool = False):
    """The full fit, the k leave-one-out refits and the predictions they make for study i."""
    k, p = m.X.shape
    if k - 1 <= p:
        raise DataError(f"{what} need at least {p + 2} studies for a model with {p} "
                        f"coefficient(s); got k = {k}.")
    _rma.check_refits(k, p, what)
    full = _rma.fit(m.y, m.v, m.Xfit, **m.settings())
    dele = _rma.refits(m, lambda rows: _rma.deleted(rows, k), dfbetas=dfbetas, what=what)
    beta = np.asarray(full.beta).reshape(p)
    pred = m.X @ beta
    delpred = np.einsum("ip,ip->i", m.X, dele.beta)
    vdelpred = np.einsum("ip,ipq,iq->i", m.X, dele.vb, m.X)
    return full, dele, beta, pred, delpred, vdelpred


def influence(result) -> Influence:
    """Leave-one-out influence diagnostics of a meta-analysis or meta-regression.

    Parameters
    ----------
    result : MetaResult or MetaRegression
        The fitted model; every deleted fit uses its τ² estimator and test.

    Returns
    -------
    Influence
        The diagnostics of every study and the flags of influential ones.

    Raises
    ------
    DataError
        Too few studies for the model.
    ParameterError
        More than ``MAX_REFIT_K`` = 20,000 studies (k refits of k studies: k² work).

    See Also
    --------
    baujat : Heterogeneity contribution against influence.
    cumulative : The pooled result as studies are added.
    leave_one_out : The pooled result without each study.

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
    (about 128 MiB).

    References
    ----------
    .. [1] Viechtbauer, W. & Cheung, M. W. (2010). Outlier and Influence Diagnostics for
       Meta-Analysis. Research Synthesis Methods, 1(2), 112–125.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25], [0.01, 0.02, 0.015, 0.01, 0.02])
    >>> inf = influence(res)
    >>> inf.influential, round(float(inf.table["rstudent"].iloc[3]), 2)
    (('Study 4',), 7.42)
    """
    import pandas as pd
    from scipy import stats

    m = _model_of(result)
    k, p = m.X.shape
    full, dele, beta, pred, delpred, vdelpred = _deleted_fits(m, "influence diagnostics",
                                                              dfbetas=True)
    if m.interval == "knha" and np.all(np.asarray(full.s2w) == 0):
        raise DataError("influence diagnostics are undefined under the Knapp-Hartung interval "
                        "when every effect lies on the fitted model (QE = 0, e.g. identical "
                        "effects): its variance factor is 0 and each diagnostic divides 0 by 0; "
                        "use `interval`='wald' or `knha_floor`.")
    s2w = dele.s2w
    resid = m.y - delpred
    resid = np.where(np.abs(resid) < 100 * np.finfo(float).eps, 0.0, resid)
    resid_se = np.sqrt(m.v * s2w + vdelpred + dele.tau2 * s2w)
    hat = np.asarray(full.h)
    dffits = (pred - delpred) / np.sqrt(s2w * hat * (dele.tau2 + m.v))
    diff = beta[None, :] - dele.beta
    dfbs = diff / np.sqrt(s2w[:, None] * dele.a_diag)
    vb = np.asarray(full.vb).reshape(p, p)
    cook = np.einsum("ip,pq,iq->i", diff, np.linalg.inv(vb), diff)
    with np.errstate(invalid="ignore"):
        cov_r = np.linalg.det(np.where(dele.ok[:, None, None], dele.vb, np.eye(p))) / \
            np.linalg.det(vb)
    cov_r = np.where(dele.ok, cov_r, np.nan)
    w = np.asarray(full.w)
    weight = 100 * w / w.sum()
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
    thresholds = {"dffits": f"|dffits| > {number(thr['dffits'], 4)} (3 sqrt(p/(k-p)))",
                  "cook_d": f"chi2({p}) cdf of cook_d > 0.5 (cook_d > "
                            f"{number(stats.chi2.ppf(0.5, p), 4)})",
                  "hat": f"hat > {number(thr['hat'], 4)} (3 p/k)",
                  "dfbetas": "any |dfbetas| > 1"}
    return Influence(table, dfb, k, p, m.method, thresholds)


def baujat(result):
    """Coordinates of the Baujat plot: heterogeneity contribution against influence.

    Parameters
    ----------
    result : MetaResult or MetaRegression
        The fitted model.

    Returns
    -------
    pandas.DataFrame
        ``label``, ``x = (y_i - x_i' b)^2 / (tau2 + v_i)`` (the study's squared Pearson
        residual, its contribution to Q under fixed effects) and ``y = (x_i' b - x_i'
        b_(-i))^2 / x_i' Var(b_(-i)) x_i`` (the squared standardized change of its fitted
        value when it is left out), as metafor's ``baujat.rma``.

    See Also
    --------
    influence : Every leave-one-out diagnostic.
    baujat_plot : Draws the coordinates.

    Notes
    -----
    Studies at the top right both add heterogeneity and move the pooled result.

    References
    ----------
    .. [1] Baujat, B., Mahé, C., Pignon, J. & Hill, C. (2002). A Graphical Method for
       Exploring Heterogeneity in Meta-Analyses: Application to a Meta-Analysis of 65 Trials.
       Statistics in Medicine, 21(18), 2641–2652.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25], [0.01, 0.02, 0.015, 0.01, 0.02])
    >>> baujat(res)["label"].iloc[baujat(res)["x"].argmax()]
    'Study 4'
    """
    import pandas as pd

    m = _model_of(result)
    full, _, _, pred, delpred, vdelpred = _deleted_fits(m, "a Baujat plot")
    return pd.DataFrame({"label": list(m.labels),
                         "x": (m.y - pred) ** 2 / (float(full.tau2) + m.v),
                         "y": (delpred - pred) ** 2 / vdelpred})


def cumulative(result, order=None, *, collapse: bool = False,
               confidence_level: float = 0.95):
    """Cumulative meta-analysis: the pooled result as studies are added in ``order``.

    Parameters
    ----------
    result : MetaResult
        The model without moderators (its estimator and test are used at every step).
    order : array-like of shape (k,), optional
        Sort key per study (e.g. publication year); ties keep their input order. Default: the
        input order.
    collapse : bool, default False
        Add studies with the same ``order`` value together (one row per value).
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per step: ``label`` (the study added), ``order``, ``k``, ``estimate, se,
        statistic, pvalue, ci_low, ci_high, q, q_pvalue, tau2, i2, h2``, as metafor's
        ``cumul``. The first step (one study) is that study's estimate with τ² = 0 and, under
        every ``interval``, its normal (z) interval and p-value: the Knapp–Hartung adjustment
        needs two studies, so the t(k - 1) interval starts at the second step, as in metafor.

    See Also
    --------
    leave_one_out : The pooled result without each study.
    influence : Leave-one-out diagnostics.

    Notes
    -----
    When did the evidence settle? All steps are one batched fit of nested study masks.

    References
    ----------
    .. [1] Lau, J., Antman, E. M., Jimenez-Silva, J., Kupelnick, B., Mosteller, F. & Chalmers,
       T. C. (1992). Cumulative Meta-Analysis of Therapeutic Trials for Myocardial Infarction.
       New England Journal of Medicine, 327(4), 248–254.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.4, 0.2, 0.3], [0.01, 0.02, 0.01], tau2_method="FE")
    >>> cumulative(res)["estimate"].round(4).tolist()
    [0.4, 0.3333, 0.32]
    """
    import pandas as pd

    from .._validation import check_confidence_level

    if not isinstance(result, MetaResult):
        raise ParameterTypeError("`result` must be a MetaResult (meta_analysis, no moderators); "
                                 f"got {type(result).__name__}.")
    level = check_confidence_level(confidence_level)
    m = result._model()
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
    ordered = _rma.Model(y, v, X, m.labels, m.names, m.method, m.interval, m.knha_floor, m.tol)
    fit = _rma.refits(ordered, lambda rows: _rma.first(rows, k),
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
    # Knapp-Hartung uses t(n - 1) from two studies on; with one study the adjustment is
    # undefined and the row is the study's own z interval (metafor's rma falls back to z at k = 1)
    crit = np.full(k, _rma.quantile(level))
    pval = _rma.two_sided_p(est / se)
    if m.interval == "knha" and k > 1:
        crit[1:] = [_rma.quantile(level, d) for d in n[1:] - 1.0]
        pval[1:] = _rma.two_sided_p(est[1:] / se[1:], n[1:] - 1.0)
    i2, h2 = _rma.i2_h2(qe, n - 1, fit.trp0, tau2, fixed=m.method == "FE")
    i2, h2 = np.asarray(i2, float), np.asarray(h2, float)
    i2[0], h2[0] = 0.0, 1.0
    out = pd.DataFrame({"label": [m.labels[i] for i in idx], "order": key[idx], "k": n,
                        "estimate": est, "se": se, "statistic": est / se, "pvalue": pval,
                        "ci_low": est - crit * se, "ci_high": est + crit * se, "q": qe,
                        "q_pvalue": np.where(n > 1, _rma.chi2_sf(qe, np.maximum(n - 1, 1)),
                                             1.0),
                        "tau2": tau2, "i2": i2, "h2": h2})
    if collapse:
        last = np.r_[key[idx][1:] != key[idx][:-1], True]
        out = out[last].reset_index(drop=True)
    return out
