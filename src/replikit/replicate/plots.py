"""Figures of the replication analysis: metafor-style forest plots and difference plots.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the axes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._plotting import axes_or_new as _axes
from .._validation import check_confidence_level
from ..errors import DataError, ParameterTypeError
from .meta import MetaResult

__all__ = ["forest_plot", "plot_differences", "plot_simulation"]

# User text (study labels, column and model names) is drawn with parse_math=False: shown as
# typed, where a ``$`` would otherwise start matplotlib mathtext (and a lone one fails to parse).


def forest_plot(result: MetaResult, *, ax=None, confidence_level: float = 0.95,
                refline: float | None = 0.0, prediction_interval: bool = True,
                xlabel: str = "estimate", digits: int = 2, title: str | None = None):
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
    y = np.asarray(result.y)
    se = np.sqrt(np.asarray(result.v))
    z = stats.norm.ppf((1 + level) / 2)
    lo, hi = y - z * se, y + z * se
    rows = np.arange(k, 0, -1) + 1.0  # studies from top; pooled row at 0
    w = np.asarray(result.weights)
    sizes = 20 + 180 * w / max(w.max(), 1e-12)
    ax.hlines(rows, lo, hi, color="black", lw=1)
    ax.scatter(y, rows, s=sizes, marker="s", color="black", zorder=3)
    ci = result.confidence_interval(level)
    est = result.estimate
    diamond = np.array([[ci.low, 0], [est, 0.3], [ci.high, 0], [est, -0.3]])
    from matplotlib.patches import Polygon

    ax.add_patch(Polygon(diamond, closed=True, color="black", zorder=3))
    if prediction_interval and result.method != "FE":
        pi = result.prediction_interval(level)
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
    note = (f"{result.model_label}: CI {'Knapp-Hartung t' if result.ci_method == 'knha' else 'z'}"
            f"; Q({result.q_df}) = {result.q:.2f}, p = {result.q_pvalue:.3g}; "
            f"I2 = {result.i2_q:.1f}%" + ("" if result.method == "FE"
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


def plot_simulation(result, *, measure: str = "cv", procedure: str = "inconsistency",
                    margin: float | None = None, n_changed: int | None = None,
                    stage2: str = "random", fig=None):
    """The seed's Figures 9-12 from a :class:`~replikit.replicate.ReplicationSimulation`.

    One panel per model; x = reduction of R2 in the non-replications; solid lines =
    replications, dashed = non-replications; one color per stage-1 pooling (CV) or one line
    (test); error bars = Monte-Carlo SEs.

    Parameters
    ----------
    result : ReplicationSimulation
    measure : {'cv', 'test'}
    procedure : {'inconsistency', 'consistency', 'captured'}
    margin : float, optional
        Region of equivalence for 'consistency' (default: the largest simulated).
    n_changed : int, optional
        Number of non-replications (default: the largest simulated).
    stage2 : {'fixed', 'random'}
        Population pooling for 'captured'.
    fig : matplotlib Figure, optional

    Returns
    -------
    matplotlib Figure

    Notes
    -----
    Seed 000, Study 2: Figure 9 (CV, single studies), 10 (test), 11 (CV population), 12 (test
    population). Example: ``plot_simulation(sim, measure='test', procedure='consistency')``.
    """
    t = result.table
    n_changed = max(result.n_changed) if n_changed is None else n_changed
    sub = t[(t["measure"] == measure) & (t["procedure"] == procedure)
            & (t["n_changed"] == n_changed)]
    if procedure == "consistency":
        margin = max(result.margins) if margin is None else margin
        sub = sub[np.isclose(sub["margin"], margin)]
    if procedure == "captured":
        sub = sub[sub["stage2"] == stage2]
    if sub.empty:
        raise DataError(f"no simulated rows for measure={measure!r}, procedure={procedure!r}, "
                        f"n_changed={n_changed}.")
    models = list(pd.unique(sub["model"]))
    if fig is None:
        from .._plotting import new_figure

        fig = new_figure(2.3 * len(models) + 0.8, 2.8)
    axes = fig.subplots(1, len(models), sharey=True, squeeze=False)[0]
    colors = {"fixed": "#203a66", "random": "#b3261e", "-": "#203a66"}
    for ax, m in zip(axes, models, strict=True):
        for (stage1, group), g in sub[sub["model"] == m].groupby(["stage1", "group"]):
            g = g.sort_values("delta")
            ax.errorbar(g["delta"], g["proportion"], yerr=g["mc_se"].fillna(0.0),
                        color=colors.get(stage1, "black"),
                        ls="-" if group == "replication" else "--", marker="o", ms=3,
                        capsize=2, label=f"{'' if stage1 == '-' else stage1 + ' folds, '}"
                                         f"{group}")
        ax.set_title(str(m), fontsize=9, parse_math=False)
        ax.set_xlabel("R2 reduction")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    what = {"inconsistency": "judged inconsistent (95% CI)",
            "consistency": f"judged consistent (90% CI, +-{margin})",
            "captured": f"captured by the {stage2}-effects population CI"}[procedure]
    axes[0].set_ylabel(f"proportion {what}", fontsize=8)
    axes[-1].legend(fontsize=6, loc="best")
    fig.suptitle(f"{measure.upper()} R2, {n_changed} non-replicating studies "
                 f"({result.n_repetitions} repetition(s))", fontsize=9)
    return fig
