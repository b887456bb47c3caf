"""Figures of model comparisons: Demšar's critical-difference diagram and a forest plot of tests.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the axes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._plotting import axes_or_new as _axes
from ..errors import DataError, ParameterError, ParameterTypeError
from .multiple import NemenyiResult

__all__ = ["plot_cd_diagram", "plot_cd_control", "plot_comparisons"]

_GREY = "0.6"




# ---------------------------------------------------------------------------------------------
# CD diagram
# ---------------------------------------------------------------------------------------------
def plot_cd_diagram(nemenyi_result: NemenyiResult, *, ax=None, title: str | None = None,
                    digits: int = 2):
    """Critical-difference diagram of a Nemenyi test, in the style of Demšar (2006, Figure 1a).

    The top line is the axis of mean ranks, turned so that the best (lowest) ranks are on the
    right. Each model hangs from its mean rank by a line to its label: the worse half on the
    left, the better half on the right. Thick bars join the groups of models whose mean ranks
    differ by no more than the critical difference (:meth:`NemenyiResult.cliques`): models not
    joined by a bar differ significantly. The CD is drawn above the axis.

    Parameters
    ----------
    nemenyi_result : NemenyiResult
        From :func:`replikit.compare.nemenyi_test`.
    ax : matplotlib Axes, optional
    title : str, optional
        Defaults to the CD, alpha and the Friedman/Iman–Davenport p-value.
    digits : int
        Decimals of the mean ranks printed next to the labels.

    Returns
    -------
    matplotlib Axes
        The clique bars carry ``gid='clique'`` and the model lines ``gid='model'``.

    Notes
    -----
    Demšar (2006), JMLR 7, section 3.2.4 and Figure 1(a). Example:
    ``plot_cd_diagram(nemenyi_test(scores_to_table(scores, metric='auc'), alpha=0.1))``.
    """
    if not isinstance(nemenyi_result, NemenyiResult):
        raise ParameterTypeError(f"`nemenyi_result` must be a NemenyiResult (from nemenyi_test); "
                                 f"got {type(nemenyi_result).__name__}.")
    ranks = nemenyi_result.mean_ranks.sort_values(kind="stable")
    k = len(ranks)
    cd = nemenyi_result.critical_distance
    cliques = nemenyi_result.cliques()
    n_left = math.ceil(k / 2)
    n_right = k - n_left
    n_rows = max(n_left, n_right)
    ax = _axes(ax, 6.4, 1.6 + 0.32 * (n_rows + len(cliques)))

    lo, hi = 1.0, float(k)
    ax.set_xlim(hi + 0.05 * (k - 1) + 0.3, lo - 0.05 * (k - 1) - 0.3)  # best ranks on the right
    x_left, x_right = ax.get_xlim()
    # the rank axis
    ax.plot([lo, hi], [0, 0], color="black", lw=1)
    for tick in range(1, k + 1):
        ax.plot([tick, tick], [0, 0.12], color="black", lw=1)
        ax.text(tick, 0.2, str(tick), ha="center", va="bottom", fontsize=9)
    for tick in np.arange(1.5, k, 1.0):
        ax.plot([tick, tick], [0, 0.06], color="black", lw=0.7)
    # the critical difference, above the axis from rank 1
    y_cd = 0.85
    ax.plot([lo, lo + cd], [y_cd, y_cd], color="black", lw=1, gid="cd")
    for x in (lo, lo + cd):
        ax.plot([x, x], [y_cd - 0.06, y_cd + 0.06], color="black", lw=1)
    ax.text(lo + cd / 2, y_cd + 0.1, "CD", ha="center", va="bottom", fontsize=9)
    # cliques: thick bars under the axis
    bar_y = [-0.3 - 0.25 * i for i in range(len(cliques))]
    for y, group in zip(bar_y, cliques, strict=True):
        r = ranks[list(group)]
        ax.plot([r.min() - 0.03, r.max() + 0.03], [y, y], color="black", lw=3.5,
                solid_capstyle="butt", gid="clique")
    # model labels: worse half on the left (worst on top), better half on the right (best on top)
    top = (bar_y[-1] if bar_y else 0.0) - 0.45
    _rank_labels(ax, ranks, n_left, n_right, x_left, x_right, top, digits)
    ax.set_ylim(top - 0.42 * max(n_rows - 1, 0) - 0.35, y_cd + 0.45)
    ax.axis("off")
    if title is None:
        fr = nemenyi_result.friedman
        title = (f"Nemenyi CD = {cd:.3g} (alpha = {nemenyi_result.alpha:g}, "
                 f"{nemenyi_result.n_models} models, {nemenyi_result.n_datasets} datasets)\n"
                 f"Friedman p = {fr.pvalue:.3g}; Iman-Davenport p = {fr.f_pvalue:.3g}")
    ax.set_title(title, fontsize=8, loc="left")
    return ax


def _rank_labels(ax, ranks, n_left, n_right, x_left, x_right, top, digits, *,
                 control=None, bold=None):
    """The model labels of a CD diagram: the worse half on the left (worst on top), the better
    half on the right (best on top), each joined to its mean rank on the axis; ``control``
    is marked, models in ``bold`` (name -> bool) are drawn bold."""
    fmt = f"{{:.{digits}f}}"
    left = list(ranks.index[::-1][:n_left])
    right = list(ranks.index[:n_right])
    for side, names, x_edge, ha in (("left", left, x_left, "right"),
                                    ("right", right, x_right, "left")):
        for row, name in enumerate(names):
            y = top - 0.42 * row
            r = float(ranks[name])
            ax.plot([r, r, x_edge], [0, y, y], color="black", lw=0.8, gid="model")
            label = f"{name} ({fmt.format(r)})" if side == "left" else \
                f"({fmt.format(r)}) {name}"
            if control is not None and name == control:
                label = label + " [control]" if side == "left" else "[control] " + label
            weight = "bold" if bold is not None and bold.get(name, False) else "normal"
            ax.text(x_edge, y, f" {label} ", ha=ha, va="center", fontsize=9, clip_on=False,
                    fontweight=weight)


def plot_cd_control(control_result, *, ax=None, title: str | None = None, digits: int = 2):
    """Critical-difference diagram of a Bonferroni–Dunn test against a control (Demšar 2006,
    Figure 2).

    The rank axis as in :func:`plot_cd_diagram` (best ranks on the right, models hanging from
    their mean ranks to their labels); a thick bar spans the control's mean rank ± CD: models
    whose mean rank lies outside it differ significantly from the control (their labels are
    drawn bold).

    Parameters
    ----------
    control_result : ControlResult
        From :func:`replikit.compare.bonferroni_dunn_test`.
    ax : matplotlib Axes, optional
    title : str, optional
    digits : int

    Returns
    -------
    matplotlib Axes
        The control interval carries ``gid='control-cd'`` and the model lines ``gid='model'``.

    Notes
    -----
    Demšar (2006), JMLR 7, sec. 3.2.4 and Figure 2.
    """
    from .control import ControlResult

    if not isinstance(control_result, ControlResult):
        raise ParameterTypeError("`control_result` must be a ControlResult (from "
                                 f"bonferroni_dunn_test); got {type(control_result).__name__}.")
    ranks = control_result.mean_ranks.sort_values(kind="stable")
    k = len(ranks)
    cd = control_result.critical_distance
    rc = float(ranks[control_result.control])
    sig = dict(zip(control_result.comparisons["model"],
                   control_result.comparisons["significant"], strict=True))
    n_left = math.ceil(k / 2)
    n_right = k - n_left
    n_rows = max(n_left, n_right)
    ax = _axes(ax, 6.4, 1.9 + 0.32 * n_rows)
    lo, hi = 1.0, float(k)
    ax.set_xlim(hi + 0.05 * (k - 1) + 0.3, lo - 0.05 * (k - 1) - 0.3)
    x_left, x_right = ax.get_xlim()
    ax.plot([lo, hi], [0, 0], color="black", lw=1)
    for tick in range(1, k + 1):
        ax.plot([tick, tick], [0, 0.12], color="black", lw=1)
        ax.text(tick, 0.2, str(tick), ha="center", va="bottom", fontsize=9)
    # the control's interval: mean rank ± CD, clipped to the axis
    a_, b_ = max(lo - 0.2, rc - cd), min(hi + 0.2, rc + cd)
    ax.plot([a_, b_], [-0.3, -0.3], color="black", lw=3.5, solid_capstyle="butt",
            gid="control-cd")
    ax.text((a_ + b_) / 2, -0.42, f"{control_result.control} ± CD", ha="center", va="top",
            fontsize=8)
    top = -0.95
    _rank_labels(ax, ranks, n_left, n_right, x_left, x_right, top, digits,
                 control=control_result.control, bold=sig)
    ax.set_ylim(top - 0.42 * max(n_rows - 1, 0) - 0.35, 0.75)
    ax.axis("off")
    if title is None:
        title = (f"Bonferroni-Dunn vs {control_result.control}: CD = {cd:.3g} (alpha = "
                 f"{control_result.alpha:g}, {control_result.n_models} models, "
                 f"{control_result.n_datasets} datasets)\nbold: differs from the control")
    ax.set_title(title, fontsize=8, loc="left")
    return ax


# ---------------------------------------------------------------------------------------------
# forest plot of tests
# ---------------------------------------------------------------------------------------------
_NEEDED = ("test", "estimate", "ci_low", "ci_high", "valid")


def _comparisons_frame(table) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        frame = table
    elif hasattr(table, "to_frame"):
        frame = table.to_frame()
    elif hasattr(table, "frame"):
        frame = table.frame
    else:
        raise ParameterTypeError(f"`table` must be a DataFrame of test results (e.g. "
                                 f"ComparisonTable.to_frame()); got {type(table).__name__}.")
    if not isinstance(frame, pd.DataFrame):
        raise ParameterTypeError(f"`table` must give a DataFrame; got {type(frame).__name__}.")
    missing = [c for c in _NEEDED if c not in frame.columns]
    if missing:
        raise DataError(f"`table` lacks column(s) {missing}; found {list(frame.columns)}.")
    if len(frame) == 0:
        raise DataError("`table` has no rows.")
    return frame.reset_index(drop=True)


def _row_labels(frame: pd.DataFrame) -> list[str]:
    extra = [c for c in ("a", "b", "metric") if c in frame.columns]
    vary_pair = {"a", "b"} <= set(extra) and frame[["a", "b"]].drop_duplicates().shape[0] > 1
    vary_metric = "metric" in extra and frame["metric"].nunique() > 1
    labels = []
    for _, row in frame.iterrows():
        parts = []
        if vary_pair:
            parts.append(f"{row['a']} - {row['b']}")
        if vary_metric:
            parts.append(str(row["metric"]))
        label = str(row["test"])
        if parts:
            label += " [" + ", ".join(parts) + "]"
        if not bool(row["valid"]):
            label += " (invalid)"
        labels.append(label)
    return labels


def plot_comparisons(table, *, ax=None, refline: float | None = 0.0,
                     xlabel: str = "mean difference a - b", digits: int = 3,
                     title: str | None = None, p_column: str | None = "pvalue"):
    """Forest-style plot of the mean differences and intervals of several tests.

    One row per test: a point at ``estimate`` and a line from ``ci_low`` to ``ci_high``, with
    ``estimate [low, high]`` and the p-value printed on the right. Rows of invalid tests (the
    naive t and the difference of proportions, ``valid == False``) are drawn in grey and
    labelled "(invalid)", with a note under the plot: their intervals are too narrow because
    they ignore the overlap of training sets (seed 002, Gardner & Brooks 2017, section 3).
    Tests without an interval (F tests) show the point only.

    Parameters
    ----------
    table : pandas.DataFrame, or an object with ``to_frame()`` (a ComparisonTable or a
        ComparisonResult)
        Columns ``test, estimate, ci_low, ci_high, valid`` and optionally ``pvalue``, ``a``,
        ``b``, ``metric`` (added to the labels when they vary between rows).
    ax : matplotlib Axes, optional
    refline : float or None
        x of the dotted reference line (0: no difference).
    xlabel : str
    digits : int
        Decimals of the printed estimates.
    title : str, optional
    p_column : {'pvalue', 'pvalue_adjusted'} or None
        The p-value printed beside each row (``'pvalue_adjusted'`` prints "p adj ="); None
        prints none.

    Returns
    -------
    matplotlib Axes
        Each row's interval line carries ``gid='valid'`` or ``gid='invalid'``.

    Notes
    -----
    Example: ``plot_comparisons(compare_scores(scores, 'rf', 'lr', tests='all'))``.
    """
    frame = _comparisons_frame(table)
    n = len(frame)
    labels = _row_labels(frame)
    ax = _axes(ax, 7.2, 1.2 + 0.32 * n)
    est = pd.to_numeric(frame["estimate"], errors="coerce").to_numpy(dtype=float)
    lo = pd.to_numeric(frame["ci_low"], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(frame["ci_high"], errors="coerce").to_numpy(dtype=float)
    valid = frame["valid"].astype(bool).to_numpy()
    y = np.arange(n, 0, -1, dtype=float)
    finite = np.concatenate([v[np.isfinite(v)] for v in (est, lo, hi)])
    if refline is not None:
        finite = np.append(finite, refline)
    xmin, xmax = (finite.min(), finite.max()) if finite.size else (-1.0, 1.0)
    pad = 0.08 * (xmax - xmin or 1.0)
    for i in range(n):
        color = "black" if valid[i] else _GREY
        gid = "valid" if valid[i] else "invalid"
        if np.isfinite(lo[i]) and np.isfinite(hi[i]):
            # one-sided intervals run to the edge of the plot
            a = max(lo[i], xmin - pad)
            b = min(hi[i], xmax + pad)
            ax.plot([a, b], [y[i], y[i]], color=color, lw=1.4, gid=gid)
        else:
            ax.plot([], [], color=color, gid=gid)
        if np.isfinite(est[i]):
            ax.plot([est[i]], [y[i]], marker="o", ms=5, color=color, ls="none")
    if refline is not None:
        ax.axvline(refline, color="grey", lw=0.8, ls=":", zorder=0)
    ax.set_xlim(xmin - pad, xmax + pad)
    ax.set_ylim(0.3, n + 0.7)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    for tick, ok in zip(ax.get_yticklabels(), valid, strict=True):
        tick.set_color("black" if ok else _GREY)
    trans = ax.get_yaxis_transform()
    fmt = f"{{:.{digits}f}}"
    if p_column not in (None, "pvalue", "pvalue_adjusted"):
        raise ParameterError("`p_column` must be 'pvalue', 'pvalue_adjusted' or None; got "
                             f"{p_column!r}.")
    has_p = p_column is not None and p_column in frame.columns
    p_label = "p adj" if p_column == "pvalue_adjusted" else "p"
    for i in range(n):
        parts = []
        if np.isfinite(est[i]):
            parts.append(fmt.format(est[i]))
            if np.isfinite(lo[i]) or np.isfinite(hi[i]):
                parts.append(f"[{fmt.format(lo[i])}, {fmt.format(hi[i])}]")
        if has_p and pd.notna(frame.loc[i, p_column]):
            parts.append(f"{p_label} = {float(frame.loc[i, p_column]):.3g}")
        ax.text(1.02, y[i], "  ".join(parts), transform=trans, ha="left", va="center",
                fontsize=8, family="monospace", color="black" if valid[i] else _GREY)
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(xlabel)
    if not valid.all():
        ax.annotate("grey: invalid on resampled scores (overlapping training sets; kept for "
                    "comparison)", xy=(0.0, 0.0), xycoords="axes fraction", xytext=(0, -34),
                    textcoords="offset points", fontsize=7, color=_GREY, ha="left", va="top")
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    return ax
