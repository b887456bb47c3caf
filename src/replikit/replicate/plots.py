"""Figures of the replication analysis: metafor-style forest plots and difference plots.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the axes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._compat import renamed
from .._plotting import axes_or_new as _axes
from .._validation import check_confidence_level
from ..errors import DataError, ParameterTypeError
from .meta import MetaResult

__all__ = ["forest_plot", "plot_differences", "plot_simulation", "funnel_plot", "bubble_plot",
           "influence_plot", "baujat_plot"]

# User text (study labels, column and model names) is drawn with parse_math=False: shown as
# typed, where a ``$`` would otherwise start matplotlib mathtext (and a lone one fails to parse).


def forest_plot(result: MetaResult, *, ax=None, confidence_level: float = 0.95,
                refline: float | None = 0.0, prediction_interval: bool = True,
                xlabel: str = "estimate", digits: int = 2, title: str | None = None,
                transform=None):
    """Forest plot in the layout of metafor's ``forest.rma``.

    Study labels on the left, ``estimate [low, high]`` on the right, squares with area
    proportional to the weight, a diamond for the pooled estimate labeled by model
    (``'FE Model'`` / ``'RE Model (REML)'``), an optional dotted prediction interval through the
    diamond, and a dotted reference line.

    Parameters
    ----------
    result : MetaResult
    ax : matplotlib Axes, optional
    confidence_level : float
        Level of the study and pooled intervals.
    refline : float or None
        x of the reference line (0 for differences; None for none).
    prediction_interval : bool
        Draw the prediction interval for random-effects models.
    xlabel : str
    digits : int
        Decimals of the right-hand text.
    title : str, optional
    transform : callable or str, optional
        Back-transform applied to every drawn value and interval bound (metafor's ``transf``):
        a function such as ``numpy.exp``, or a scale of :mod:`replikit.replicate.transforms`
        (``'logit'``, ``'r2_z'``, ...) whose inverse is applied. ``refline`` is on the drawn
        scale.

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    Draws the seed's meta-analytic figures (seed 000, Figures 1, 7 and 8) in metafor's layout.
    Example: ``forest_plot(meta_analysis(y, v, method='REML'))``.
    """
    from scipy import stats

    if not isinstance(result, MetaResult):
        raise ParameterTypeError(f"`result` must be a MetaResult (from meta_analysis); got "
                                 f"{type(result).__name__}.")
    level = check_confidence_level(confidence_level)
    k = result.k
    ax = _axes(ax, 7.2, 1.3 + 0.28 * (k + 3))
    from .transforms import _inverse

    tf = _inverse(transform) or (lambda a: np.asarray(a, float))
    y0 = np.asarray(result.y)
    se = np.sqrt(np.asarray(result.v))
    z = stats.norm.ppf((1 + level) / 2)
    y, lo, hi = tf(y0), tf(y0 - z * se), tf(y0 + z * se)
    rows = np.arange(k, 0, -1) + 1.0  # studies from top; pooled row at 0
    w = np.asarray(result.weights)
    sizes = 20 + 180 * w / max(w.max(), 1e-12)
    ax.hlines(rows, lo, hi, color="black", lw=1)
    ax.scatter(y, rows, s=sizes, marker="s", color="black", zorder=3)
    ci0 = result.confidence_interval(level)
    ci = type(ci0)(float(tf(ci0.low)), float(tf(ci0.high)))
    est = float(tf(result.estimate))
    diamond = np.array([[ci.low, 0], [est, 0.3], [ci.high, 0], [est, -0.3]])
    from matplotlib.patches import Polygon

    ax.add_patch(Polygon(diamond, closed=True, color="black", zorder=3))
    if prediction_interval and result.tau2_method != "FE":
        pi0 = result.prediction_interval(level)
        pi = type(pi0)(float(tf(pi0.low)), float(tf(pi0.high)))
        ax.hlines(0, pi.low, pi.high, color="black", lw=1, linestyles="dotted")
        xmin, xmax = min(lo.min(), pi.low), max(hi.max(), pi.high)
    else:
        xmin, xmax = lo.min(), hi.max()
    if refline is not None:
        ax.axvline(refline, color="grey", lw=0.8, ls=":", zorder=1)
        xmin, xmax = min(xmin, refline), max(xmax, refline)
    ax.axhline(1.0, color="black", lw=0.6)
    pad = 0.05 * (xmax - xmin or 1.0)
    ax.set_xlim(xmin - pad, xmax + pad)
    ax.set_ylim(-1, k + 2.2)
    trans = ax.get_yaxis_transform()  # x in axes fraction, y in data
    fmt = f"{{:.{digits}f}}"
    lvl = round(100 * level)
    ax.text(-0.02, k + 1.7, "Study", transform=trans, ha="right", va="center",
            fontweight="bold")
    ax.text(1.02, k + 1.7, f"Estimate [{lvl}% CI]", transform=trans, ha="left", va="center",
            fontweight="bold")
    for r, lab, a, b, c in zip(rows, result.labels, y, lo, hi, strict=True):
        ax.text(-0.02, r, str(lab), transform=trans, ha="right", va="center", parse_math=False)
        ax.text(1.02, r, f"{fmt.format(a)} [{fmt.format(b)}, {fmt.format(c)}]",
                transform=trans, ha="left", va="center", family="monospace")
    ax.text(-0.02, 0, result.model_label, transform=trans, ha="right", va="center",
            fontweight="bold")
    ax.text(1.02, 0, f"{fmt.format(est)} [{fmt.format(ci.low)}, {fmt.format(ci.high)}]",
            transform=trans, ha="left", va="center", family="monospace", fontweight="bold")
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(str(xlabel), parse_math=False)
    note = (f"{result.model_label}: CI {'Knapp-Hartung t' if result.interval == 'knha' else 'z'}"
            f"; Q({result.q_df}) = {result.q:.2f}, p = {result.q_pvalue:.3g}; "
            f"I2 = {result.i2_q:.1f}%" + ("" if result.tau2_method == "FE"
                                          else f"; tau2 = {result.tau2:.3g}"))
    ax.set_title(str(title) + "\n" + note if title else note, fontsize=8, loc="left",
                 parse_math=False)
    return ax


def plot_differences(table: pd.DataFrame, *, ax=None, bounds: tuple[float, float] | None = None,
                     low: str = "ci_low", high: str = "ci_high", label: str = "replication",
                     title: str | None = None):
    """Differences ``replication - original`` with their intervals (seed Figures 3, 4, 6).

    Parameters
    ----------
    table : DataFrame
        One row per replication with ``difference`` and the interval columns ``low``/``high``
        (e.g. from :func:`~replikit.replicate.replication_table`).
    ax : matplotlib Axes, optional
    bounds : (float, float), optional
        Region of equivalence, drawn as dashed green lines (consistency plots).
    low, high, label : str
        Column names.
    title : str, optional

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    An interval that misses 0 marks an inconsistent replication (seed 000, Figure 3); one inside
    the region a consistent one (Figure 4). Example: ``plot_differences(replication_table(o, r))``.
    """
    for col in ("difference", low, high, label):
        if col not in table.columns:
            raise DataError(f"`table` needs a {col!r} column; got {list(table.columns)}.")
    n = len(table)
    ax = _axes(ax, 6.0, 1.2 + 0.3 * n)
    pos = np.arange(n)[::-1]
    d = table["difference"].to_numpy(float)
    ax.errorbar(d, pos, xerr=[d - table[low].to_numpy(float), table[high].to_numpy(float) - d],
                fmt="o", color="#203a66", capsize=3)
    ax.axvline(0, color="grey", lw=0.8, ls=":")
    if bounds is not None:
        for b in bounds:
            ax.axvline(b, color="#2e7d32", lw=1, ls="--")
    ax.set_yticks(pos, [str(s) for s in table[label]], parse_math=False)
    ax.set_xlabel("difference (replication - original)")
    if title:
        ax.set_title(str(title), fontsize=9, loc="left", parse_math=False)
    ax.grid(axis="x", alpha=0.3)
    return ax


@renamed(margin="tolerance")
def plot_simulation(result, *, measure: str = "cv", procedure: str = "inconsistency",
                    tolerance: float | None = None, n_changed: int | None = None,
                    stage2: str = "random", fig=None):
    """Figures 9-12 of Vijayakumar & Cheung (2021) from a
    :class:`~replikit.replicate.ReplicationSimulation` (its ``plot``).

    Parameters
    ----------
    result : ReplicationSimulation
        The simulation.
    measure : {'cv', 'test'}, default 'cv'
        CV or test R².
    procedure : {'inconsistency', 'consistency', 'captured'}, default 'inconsistency'
        What the panels show.
    tolerance : float, optional
        Region of equivalence for ``'consistency'`` (default: the largest simulated).
    n_changed : int, optional
        Number of non-replications (default: the largest simulated).
    stage2 : {'fixed', 'random'}, default 'random'
        Population pooling for ``'captured'``.
    fig : matplotlib Figure, optional
        A figure to draw on.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        One panel per model.

    See Also
    --------
    replikit.replicate.ReplicationSimulation.plot : The same figure.
    """
    return result.plot(measure=measure, procedure=procedure, tolerance=tolerance,
                       n_changed=n_changed, stage2=stage2, fig=fig)


_BLUE, _ORANGE, _VERMILLION, _GREY = "#0072B2", "#E69F00", "#D55E00", "#7f7f7f"


def funnel_plot(result: MetaResult, *, ax=None, trimfill=None, regression=None, contours=None,
                refline: float | None = None, confidence_level: float = 0.95,
                xlabel: str = "estimate", title: str | None = None):
    """Funnel plot: estimates against their standard errors (metafor's ``funnel``).

    The vertical axis is the standard error, 0 at the top (Sterne & Egger 2001, BMJ 323,
    101-105); the pseudo confidence region ``refline +- z se`` is the triangle where ~95% of the
    studies fall without heterogeneity and small-study effects.

    Parameters
    ----------
    result : MetaResult
    ax : matplotlib Axes, optional
    trimfill : TrimAndFill, optional
        Draw its imputed studies (open circles) and its pooled estimate (dashed line).
    regression : RegressionTest, optional
        Draw the fitted line of an SE-predictor regression test (Egger's line).
    contours : sequence of float, optional
        Contour-enhanced funnel (Peters, Sutton, Jones, Abrams & Rushton 2008, J Clin Epidemiol
        61, 991-996): shade the regions where a study's two-sided p-value against 0 is above
        ``1 - c`` for each confidence level ``c`` (e.g. ``(0.90, 0.95, 0.99)``); the
        pseudo-CI is then centred at 0.
    refline : float, optional
        Centre of the pseudo-CI (default: the pooled estimate; 0 with ``contours``).
    confidence_level : float
        Level of the pseudo confidence region.
    xlabel, title : str

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25], se=[0.4, 0.3, 0.25, 0.12, 0.1])
    >>> ax = funnel_plot(res, contours=(0.90, 0.95, 0.99))
    """
    from scipy import stats

    if not isinstance(result, MetaResult):
        raise ParameterTypeError("`result` must be a MetaResult (meta_analysis); got "
                                 f"{type(result).__name__}.")
    level = check_confidence_level(confidence_level)
    ax = _axes(ax, 5.6, 4.2)
    y = np.asarray(result.y)
    se = np.sqrt(np.asarray(result.v))
    se_all = se if trimfill is None else np.sqrt(trimfill.filled["v"].to_numpy(float))
    top = 1.05 * float(se_all.max())
    grid = np.linspace(0.0, top, 100)
    if contours is not None:
        levels = sorted((check_confidence_level(c) for c in contours), reverse=True)
        shades = ("#e6e6e6", "#c8c8c8", "#a0a0a0", "#787878")
        for i, c in enumerate(levels):
            zc = stats.norm.ppf((1 + c) / 2)
            ax.fill_betweenx(grid, -zc * grid, zc * grid, color=shades[i % len(shades)],
                             zorder=0, lw=0, label=f"p > {1 - c:.2g}")
        centre = 0.0 if refline is None else float(refline)
    else:
        centre = result.estimate if refline is None else float(refline)
    z = stats.norm.ppf((1 + level) / 2)
    ax.plot(centre - z * grid, grid, color="black", lw=0.8, ls="--")
    ax.plot(centre + z * grid, grid, color="black", lw=0.8, ls="--")
    ax.axvline(result.estimate, color="black", lw=1, zorder=1)
    ax.scatter(y, se, s=22, color="black", zorder=3, label="studies")
    if trimfill is not None:
        f = trimfill.filled[trimfill.filled["filled"]]
        if len(f):
            ax.scatter(f["estimate"], np.sqrt(f["v"].to_numpy(float)), s=22,
                       facecolors="white", edgecolors="black", zorder=3,
                       label=f"filled ({trimfill.estimator}, k0 = {trimfill.k0})")
            ax.axvline(trimfill.estimate, color=_VERMILLION, lw=1, ls="--", zorder=1,
                       label="trim-and-fill estimate")
    xs = np.r_[y, centre - z * top, centre + z * top]
    if trimfill is not None:
        xs = np.r_[xs, trimfill.filled["estimate"].to_numpy(float)]
    pad = 0.05 * (xs.max() - xs.min() or 1.0)
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    if regression is not None and regression.predictor == "se" and regression.estimate is not None:
        b0, b1 = regression.estimate, regression.slope
        ax.plot(b0 + b1 * grid, grid, color=_BLUE, lw=1,
                label=f"regression test (p = {regression.pvalue:.3g})")
    ax.set_ylim(top, 0.0)
    ax.set_ylabel("standard error")
    ax.set_xlabel(str(xlabel), parse_math=False)
    ax.legend(fontsize=7, loc="lower left", framealpha=0.8)
    ax.set_title(str(title) if title else f"Funnel plot, {result.model_label}, k = {result.k}",
                 fontsize=9, loc="left", parse_math=False)
    return ax


def bubble_plot(fit, moderator: str | None = None, *, ax=None, confidence_level: float = 0.95,
                prediction_interval: bool = True, transform=None, xlabel: str | None = None,
                ylabel: str = "estimate", title: str | None = None):
    """Bubble plot of a meta-regression: estimates against one moderator (metafor's ``regplot``).

    Points have area proportional to their weight in the model; the line is the predicted
    average effect with its confidence band (and the prediction band, dotted), other
    moderators held at their weighted means as metafor does.

    Parameters
    ----------
    fit : MetaRegression
    moderator : str, optional
        A numeric moderator (default: the first one).
    ax : matplotlib Axes, optional
    confidence_level : float
    prediction_interval : bool
    transform : callable or str, optional
        Back-transform of the drawn values (e.g. ``numpy.exp``, or a scale name of
        :mod:`replikit.replicate.transforms`).
    xlabel, ylabel, title : str

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> from replikit.replicate import meta_regression
    >>> fit = meta_regression([0.1, 0.3, 0.35, 0.65, 0.45, 0.15],
    ...                       [0.01, 0.02, 0.015, 0.01, 0.02, 0.03],
    ...                       moderators={"dose": [1, 2, 3, 6, 4, 1]})
    >>> ax = bubble_plot(fit, "dose")
    """
    from scipy import stats

    from .metareg import MetaRegression
    from .transforms import _inverse

    if not isinstance(fit, MetaRegression):
        raise ParameterTypeError("`fit` must be a MetaRegression (meta_regression); got "
                                 f"{type(fit).__name__}.")
    numeric = [t for t, idx in fit.terms.items() if len(idx) == 1
               and fit.names[idx[0]] == t]
    if moderator is None:
        if not numeric:
            raise DataError("the bubble plot needs a numeric moderator; the model has "
                            f"{list(fit.terms)}.")
        moderator = numeric[0]
    if moderator not in numeric:
        raise DataError(f"`moderator` must be one of the model's numeric moderators "
                        f"{numeric}; got {moderator!r}.")
    level = check_confidence_level(confidence_level)
    tf = _inverse(transform) or (lambda a: np.asarray(a, float))
    j = fit.names.index(moderator)
    x = fit.X[:, j]
    w = np.asarray(fit.weights)
    ax = _axes(ax, 5.6, 4.0)
    grid = np.linspace(x.min(), x.max(), 100)
    Xn = np.tile((w[:, None] * fit.X).sum(axis=0) / w.sum(), (grid.size, 1))
    Xn[:, j] = grid
    est = Xn @ fit.beta
    se = np.sqrt(np.einsum("ij,jk,ik->i", Xn, fit.vcov, Xn))
    q = fit._crit(level)
    ax.fill_between(grid, tf(est - q * se), tf(est + q * se), color=_BLUE, alpha=0.2, lw=0,
                    label=f"{round(100 * level)}% CI")
    if prediction_interval and fit.tau2_method != "FE":
        from .meta import _check_pi_dist

        dist = _check_pi_dist(fit.pi_dist)
        qp = (stats.norm.ppf((1 + level) / 2) if dist == "z" else stats.t.ppf(
            (1 + level) / 2, max(1, fit.k - fit.p - (0 if dist == "t(k-1)" else 1))))
        half = qp * np.sqrt(se ** 2 + fit.tau2)
        ax.plot(grid, tf(est - half), color=_BLUE, lw=0.8, ls=":")
        ax.plot(grid, tf(est + half), color=_BLUE, lw=0.8, ls=":", label="prediction interval")
    ax.plot(grid, tf(est), color=_BLUE, lw=1.2, label="predicted average effect")
    ax.scatter(x, tf(fit.y), s=20 + 300 * w / w.max(), facecolors="none", edgecolors="black",
               zorder=3)
    ax.set_xlabel(str(xlabel or moderator), parse_math=False)
    ax.set_ylabel(str(ylabel), parse_math=False)
    ax.legend(fontsize=7, loc="best")
    qm = fit.qm_test
    note = (f"{fit.model_label}; slope {fit.beta[j]:.4g} (SE {fit.se[j]:.3g}, "
            f"p = {fit.pvalue[j]:.3g})\n" + (f"R2 = {fit.r2:.1f}%; " if fit.r2 is not None
                                              else "") + f"QM p = {qm.pvalue:.3g}")
    ax.set_title(str(title) + "\n" + note if title else note, fontsize=8, loc="left",
                 parse_math=False)
    return ax


def influence_plot(inf, *, fig=None, title: str | None = None):
    """The influence diagnostics against the studies, one panel each (metafor's
    ``plot.infl.rma.uni``); influential studies in vermillion, thresholds dashed.

    Parameters
    ----------
    inf : Influence
    fig : matplotlib Figure, optional
    title : str, optional

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from replikit.replicate import meta_analysis, influence
    >>> fig = influence_plot(influence(meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25],
    ...                                              [0.01, 0.02, 0.015, 0.01, 0.02])))
    """
    from .influence import Influence

    if not isinstance(inf, Influence):
        raise ParameterTypeError(f"`inf` must be an Influence (influence); got "
                                 f"{type(inf).__name__}.")
    if fig is None:
        from .._plotting import new_figure

        fig = new_figure(8.0, 5.2)
    t = inf.table
    k, p = inf.k, inf.p
    from scipy import stats

    panels = [("rstudent", (-1.96, 1.96)), ("dffits", (3 * np.sqrt(p / (k - p)),)),
              ("cook_d", (stats.chi2.ppf(0.5, p),)), ("cov_r", (1.0,)), ("tau2_del", ()),
              ("qe_del", ()), ("hat", (3 * p / k,)), ("weight", ())]
    axes = fig.subplots(4, 2, sharex=True).ravel()
    pos = np.arange(1, k + 1)
    colors = np.where(t["influential"].to_numpy(bool), _VERMILLION, "black")
    for ax, (col, lines) in zip(axes, panels, strict=True):
        vals = t[col].to_numpy(float)
        ax.plot(pos, vals, color=_GREY, lw=0.6)
        ax.scatter(pos, vals, c=list(colors), s=14, zorder=3)
        for h in lines:
            ax.axhline(h, color=_GREY, lw=0.7, ls="--")
            if col == "dffits":
                ax.axhline(-h, color=_GREY, lw=0.7, ls="--")
        ax.set_ylabel(col, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[-2:]:
        ax.set_xticks(pos, [str(s) for s in t["label"]], rotation=90, fontsize=6)
    n = len(inf.influential)
    fig.suptitle(str(title) if title else
                 f"Influence diagnostics ({inf.tau2_method}, k = {k}); {n} influential", fontsize=9)
    return fig


def baujat_plot(result, *, ax=None, title: str | None = None):
    """Baujat plot: contribution to the heterogeneity statistic (x) against influence on the
    pooled result (y) per study (Baujat et al. 2002; metafor's ``baujat``).

    Parameters
    ----------
    result : MetaResult or MetaRegression
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> ax = baujat_plot(meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25],
    ...                                [0.01, 0.02, 0.015, 0.01, 0.02]))
    """
    from .influence import baujat

    b = baujat(result)
    ax = _axes(ax, 5.0, 4.0)
    ax.scatter(b["x"], b["y"], s=18, color="black", zorder=3)
    for xi, yi, lab in zip(b["x"], b["y"], b["label"], strict=True):
        ax.annotate(str(lab), (xi, yi), xytext=(3, 3), textcoords="offset points", fontsize=7,
                    parse_math=False)
    ax.set_xlabel("contribution to the Q statistic")
    ax.set_ylabel("influence on the pooled result")
    ax.set_title(str(title) if title else "Baujat plot", fontsize=9, loc="left",
                 parse_math=False)
    ax.grid(alpha=0.3)
    return ax
