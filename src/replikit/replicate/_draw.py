"""Drawing of the meta-analysis figures from plain arrays (private; matplotlib imported lazily).

Every figure of :mod:`replikit.replicate`'s meta-analysis — forest, funnel, bubble, Baujat,
influence panels — and the figures of the replication aims (differences, the simulation) are
drawn here from numbers, so that a result's ``plot()`` calls down into this module and never up
into a module that imports the result's own module; :mod:`replikit.replicate.plots` is the public
façade over the same functions. This module imports nothing from :mod:`replikit.replicate`.

User text (study labels, column and model names) is drawn with ``parse_math=False``: shown as
typed, where a ``$`` would otherwise start matplotlib mathtext (and a lone one fails to parse).
"""

from __future__ import annotations

import numpy as np

from .._format import number, percent
from .._format import pvalue as p_text

__all__: list[str] = []

BLUE, VERMILLION, GREY = "#0072B2", "#D55E00", "#7f7f7f"


def panels(ax, fig, nrows: int, ncols: int, width: float, height: float, **kwargs):
    """A grid of axes: in ``fig``, in the place of ``ax`` (which it replaces), or in a new
    figure; returns the ndarray of Axes of shape ``(nrows, ncols)``."""
    if fig is None and ax is None:
        from .._plotting import axes_or_new

        ax = axes_or_new(None, width, height)
    if fig is None:
        fig = ax.figure
        spec = ax.get_subplotspec()
        ax.remove()
        if spec is not None:
            grid = spec.subgridspec(nrows, ncols)
            return grid.subplots(squeeze=False, **kwargs)
    return fig.subplots(nrows, ncols, squeeze=False, **kwargs)


def forest(ax, *, labels, y, lo, hi, weights, estimate: float, ci, pi, model_label: str,
           refline, xlabel: str, digits: int, level: float, note: str, title=None):
    """metafor's ``forest.rma`` layout: labels left, ``estimate [low, high]`` right, squares
    sized by weight, the pooled diamond, a dotted prediction interval and reference line."""
    from matplotlib.patches import Polygon

    y, lo, hi = (np.asarray(a, float) for a in (y, lo, hi))
    w = np.asarray(weights, float)
    k = y.size
    rows = np.arange(k, 0, -1) + 1.0  # studies from the top; the pooled row at 0
    sizes = 20 + 180 * w / max(w.max(), 1e-12)
    ax.hlines(rows, lo, hi, color="black", lw=1)
    ax.scatter(y, rows, s=sizes, marker="s", color="black", zorder=3)
    diamond = np.array([[ci[0], 0], [estimate, 0.3], [ci[1], 0], [estimate, -0.3]])
    ax.add_patch(Polygon(diamond, closed=True, color="black", zorder=3))
    xmin, xmax = lo.min(), hi.max()
    if pi is not None:
        ax.hlines(0, pi[0], pi[1], color="black", lw=1, linestyles="dotted")
        xmin, xmax = min(xmin, pi[0]), max(xmax, pi[1])
    if refline is not None:
        ax.axvline(refline, color="grey", lw=0.8, ls=":", zorder=1)
        xmin, xmax = min(xmin, refline), max(xmax, refline)
    ax.axhline(1.0, color="black", lw=0.6)
    pad = 0.05 * (xmax - xmin or 1.0)
    ax.set_xlim(xmin - pad, xmax + pad)
    ax.set_ylim(-1, k + 2.2)
    trans = ax.get_yaxis_transform()  # x in axes fraction, y in data
    fmt = f"{{:.{digits}f}}"
    ax.text(-0.02, k + 1.7, "Study", transform=trans, ha="right", va="center",
            fontweight="bold")
    ax.text(1.02, k + 1.7, f"Estimate [{round(100 * level)}% CI]", transform=trans, ha="left",
            va="center", fontweight="bold")
    for r, lab, a, b, c in zip(rows, labels, y, lo, hi, strict=True):
        ax.text(-0.02, r, str(lab), transform=trans, ha="right", va="center", parse_math=False)
        ax.text(1.02, r, f"{fmt.format(a)} [{fmt.format(b)}, {fmt.format(c)}]",
                transform=trans, ha="left", va="center", family="monospace")
    ax.text(-0.02, 0, model_label, transform=trans, ha="right", va="center", fontweight="bold")
    ax.text(1.02, 0, f"{fmt.format(estimate)} [{fmt.format(ci[0])}, {fmt.format(ci[1])}]",
            transform=trans, ha="left", va="center", family="monospace", fontweight="bold")
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(str(xlabel), parse_math=False)
    ax.set_title(_heading(title, note), fontsize=8, loc="left", parse_math=False)
    return ax


def _heading(title, note: str) -> str:
    """A forest plot's title over its caption line, the caption broken between its ``; ``
    parts into lines of at most 70 characters (a longer line ran past the figure's edge)."""
    lines: list[str] = []
    for part in note.split("; "):
        if lines and len(lines[-1]) + 2 + len(part) <= 70:
            lines[-1] += "; " + part
        else:
            lines.append(part)
    return "\n".join(([str(title)] if title else []) + lines)


def forest_note(model_label: str, interval_kind: str, q: float, q_df: int, q_pvalue: float,
                i2: float, tau2: float | None) -> str:
    """The caption line of a forest plot: model, interval, Q test, I² and τ²."""
    kind = "Knapp–Hartung t" if interval_kind == "knha" else "Wald z"
    text = (f"{model_label}: {kind} interval; Q({q_df}) = {number(q, 4)}, "
            f"p {_p_rel(q_pvalue)}; I² = {percent(i2 / 100, 3)}")
    return text + ("" if tau2 is None else f"; τ² = {number(tau2)}")


def _p_rel(p: float) -> str:
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


def funnel(ax, *, y, se, estimate: float, centre: float, level: float, contours=None,
           filled=None, line=None, xlabel: str = "estimate", title: str = ""):
    """Funnel plot: estimates against standard errors (0 at the top), the pseudo confidence
    region around ``centre``, optional contours of significance against 0, filled studies
    ``(y, se, estimate, label)`` and a regression line ``(b0, b1, label)`` in the SE."""
    from scipy import stats

    y, se = np.asarray(y, float), np.asarray(se, float)
    se_all = se if filled is None else np.r_[se, np.asarray(filled[1], float)]
    top = 1.05 * float(se_all.max())
    grid = np.linspace(0.0, top, 100)
    if contours is not None:
        shades = ("#e6e6e6", "#c8c8c8", "#a0a0a0", "#787878")
        for i, c in enumerate(sorted(contours, reverse=True)):
            zc = stats.norm.ppf((1 + c) / 2)
            ax.fill_betweenx(grid, -zc * grid, zc * grid, color=shades[i % len(shades)],
                             zorder=0, lw=0, label=f"p > {number(1 - c, 2)}")
    z = stats.norm.ppf((1 + level) / 2)
    ax.plot(centre - z * grid, grid, color="black", lw=0.8, ls="--")
    ax.plot(centre + z * grid, grid, color="black", lw=0.8, ls="--")
    ax.axvline(estimate, color="black", lw=1, zorder=1)
    ax.scatter(y, se, s=22, color="black", zorder=3, label="studies")
    xs = np.r_[y, centre - z * top, centre + z * top]
    if filled is not None:
        fy, fse, fest, flabel = filled
        fy = np.asarray(fy, float)
        if fy.size:
            ax.scatter(fy, fse, s=22, facecolors="white", edgecolors="black", zorder=3,
                       label=flabel)
            ax.axvline(fest, color=VERMILLION, lw=1, ls="--", zorder=1,
                       label="trim-and-fill estimate")
        xs = np.r_[xs, fy]
    pad = 0.05 * (xs.max() - xs.min() or 1.0)
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    if line is not None:
        b0, b1, label = line
        ax.plot(b0 + b1 * grid, grid, color=BLUE, lw=1, label=label)
    ax.set_ylim(top, 0.0)
    ax.set_ylabel("standard error")
    ax.set_xlabel(str(xlabel), parse_math=False)
    ax.legend(fontsize=7, loc="lower left", framealpha=0.8)
    ax.set_title(str(title), fontsize=9, loc="left", parse_math=False)
    return ax


def bubble(ax, *, x, y, weights, grid, est, ci_band, pi_band, level: float, xlabel: str,
           ylabel: str, note: str, title=None):
    """metafor's ``regplot``: points sized by weight, the predicted line, its confidence band
    and the dotted prediction band."""
    w = np.asarray(weights, float)
    ax.fill_between(grid, ci_band[0], ci_band[1], color=BLUE, alpha=0.2, lw=0,
                    label=f"{round(100 * level)}% CI")
    if pi_band is not None:
        ax.plot(grid, pi_band[0], color=BLUE, lw=0.8, ls=":")
        ax.plot(grid, pi_band[1], color=BLUE, lw=0.8, ls=":", label="prediction interval")
    ax.plot(grid, est, color=BLUE, lw=1.2, label="predicted average effect")
    ax.scatter(x, y, s=20 + 300 * w / w.max(), facecolors="none", edgecolors="black", zorder=3)
    ax.set_xlabel(str(xlabel), parse_math=False)
    ax.set_ylabel(str(ylabel), parse_math=False)
    ax.legend(fontsize=7, loc="best")
    ax.set_title(_heading(title, note), fontsize=8, loc="left", parse_math=False)
    return ax


#: the panels of the influence plot: column, axis label, threshold lines
INFLUENCE_PANELS = (("rstudent", "studentized residual"), ("dffits", "DFFITS"),
                    ("cook_d", "Cook's distance"), ("cov_r", "covariance ratio"),
                    ("tau2_del", "τ² without the study"), ("qe_del", "Q without the study"),
                    ("hat", "hat value"), ("weight", "weight (%)"))


def influence_panels(axes, *, labels, values: dict, lines: dict, influential, title: str):
    """metafor's ``plot.infl.rma.uni``: one panel per diagnostic against the studies,
    influential studies in vermillion, thresholds dashed."""
    flat = np.ravel(axes)
    k = len(labels)
    pos = np.arange(1, k + 1)
    colors = list(np.where(np.asarray(influential, bool), VERMILLION, "black"))
    for ax, (col, name) in zip(flat, INFLUENCE_PANELS, strict=True):
        vals = np.asarray(values[col], float)
        ax.plot(pos, vals, color=GREY, lw=0.6)
        ax.scatter(pos, vals, c=colors, s=14, zorder=3)
        for h in lines.get(col, ()):
            ax.axhline(h, color=GREY, lw=0.7, ls="--")
        ax.set_ylabel(name, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in flat[:-2]:
        ax.tick_params(labelbottom=False)
    for ax in flat[-2:]:
        ax.set_xticks(pos, [str(s) for s in labels], rotation=90, fontsize=6)
    flat[0].figure.suptitle(title, fontsize=9)
    return axes


def baujat(ax, *, x, y, labels, title: str):
    """Baujat et al. (2002): contribution to Q (x) against influence on the pooled result."""
    ax.scatter(x, y, s=18, color="black", zorder=3)
    for xi, yi, lab in zip(x, y, labels, strict=True):
        ax.annotate(str(lab), (xi, yi), xytext=(3, 3), textcoords="offset points", fontsize=7,
                    parse_math=False)
    ax.set_xlabel("contribution to the Q statistic")
    ax.set_ylabel("influence on the pooled result")
    ax.set_title(str(title), fontsize=9, loc="left", parse_math=False)
    ax.grid(alpha=0.3)
    return ax


def differences(ax, *, difference, low, high, labels, bounds=None, title=None,
                xlabel: str = "difference (replication − original)"):
    """Differences with their intervals, one row each; the region of equivalence dashed."""
    n = len(difference)
    pos = np.arange(n)[::-1]
    d = np.asarray(difference, float)
    ax.errorbar(d, pos, xerr=[d - np.asarray(low, float), np.asarray(high, float) - d],
                fmt="o", color="#203a66", capsize=3)
    ax.axvline(0, color="grey", lw=0.8, ls=":")
    if bounds is not None:
        for b in bounds:
            ax.axvline(b, color="#2e7d32", lw=1, ls="--")
    ax.set_yticks(pos, [str(s) for s in labels], parse_math=False)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(str(title), fontsize=9, loc="left", parse_math=False)
    ax.grid(axis="x", alpha=0.3)
    return ax


def simulation(axes, *, frames: dict, ylabel: str, title: str):
    """One panel per model of the simulation's proportions against the reduction of R²:
    ``frames`` maps a model to its rows (``delta, proportion, mc_se, stage1, group``)."""
    colors = {"fixed": "#203a66", "random": "#b3261e", "-": "#203a66"}
    flat = np.ravel(axes)
    for ax, (model, sub) in zip(flat, frames.items(), strict=True):
        for (stage1, group), g in sub.groupby(["stage1", "group"]):
            g = g.sort_values("delta")
            ax.errorbar(g["delta"], g["proportion"], yerr=g["mc_se"].fillna(0.0),
                        color=colors.get(stage1, "black"),
                        ls="-" if group == "replication" else "--", marker="o", ms=3,
                        capsize=2, label=f"{'' if stage1 == '-' else stage1 + ' folds, '}"
                                         f"{group}")
        ax.set_title(str(model), fontsize=9, parse_math=False)
        ax.set_xlabel("reduction of R²")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    flat[0].set_ylabel(ylabel, fontsize=8)
    flat[-1].legend(fontsize=6, loc="best")
    flat[0].figure.suptitle(title, fontsize=9)
    return axes
