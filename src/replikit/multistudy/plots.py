"""Figures of cross-study replicability (Parmigiani 2023).

Utilities with intervals, matrix heatmaps, the two-study dominance plot (Fig. 1) and the pairs
of the ε-replicability test. Matplotlib is imported lazily; every function takes ``ax=None``
(a new figure, shown inline in a notebook: :func:`replikit._plotting.axes_or_new`) and returns
the axes. The results' ``plot()`` methods call these functions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import number
from .._plotting import axes_or_new as _axes
from ..errors import DataError, ParameterError
from ._names import utility_words

__all__ = ["plot_study_utilities", "plot_matrix", "plot_dominance", "plot_dominance_table",
           "plot_epsilon_test"]

# texts built from study and rule names are drawn as they are: a '$' is a dollar sign, never
# the start of mathtext (a study named '$^$' must not fail to draw)
_LITERAL = {"parse_math": False}


def plot_study_utilities(utilities, interval=None, *, ax=None, label: str | None = None):
    """``U_k`` per study with interval bars (Parmigiani 2023, eq. 1).

    Parameters
    ----------
    utilities : StudyUtilities
        The utilities to draw.
    interval : ndarray of shape (K, 2), optional
        E.g. ``ResampleResult.utility_interval()``; default ``U_k ± 1.96 SE``.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    label : str, optional
        x-axis label (default: the utility in words).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    U = np.asarray(utilities.utility, float)
    if interval is None:
        interval = np.column_stack([U - 1.96 * utilities.se, U + 1.96 * utilities.se])
    interval = np.asarray(interval, float)
    if interval.shape != (U.size, 2):
        raise DataError(f"`interval` must have shape ({U.size}, 2); got {interval.shape}.")
    ax = _axes(ax, 6.4, max(2.4, 1.0 + 0.25 * U.size))
    ypos = np.arange(U.size)
    ax.errorbar(U, ypos, xerr=[U - interval[:, 0], interval[:, 1] - U], fmt="s",
                color="#203a66", ecolor="#5b7fb9", capsize=3)
    ax.axvline(U.mean(), color="#b3261e", ls=":", lw=1)
    ax.set_yticks(ypos, [str(s) for s in utilities.studies], **_LITERAL)
    ax.invert_yaxis()
    ax.set_xlabel(label or f"average utility in the study ({utility_words(utilities.utility_name)})",
                  **_LITERAL)
    ax.set_ylabel("study")
    ax.grid(axis="x", alpha=0.3)
    return ax


def plot_matrix(matrix, *, ax=None, title: str = "", cmap: str = "RdBu_r",
                symmetric: bool | None = None, annotate: bool | None = None,
                xlabel: str = "", ylabel: str = "", vmin: float | None = None,
                vmax: float | None = None):
    """Heatmap of a K×K matrix: utility differences, distances or cross-study validation.

    Parameters
    ----------
    matrix : DataFrame or DistanceMatrix or CrossStudyResult
        A square table with the same studies as rows and columns, or a result holding one.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    title : str
        The title.
    cmap : str, default 'RdBu_r'
        Colour map of a symmetric scale (``'viridis'`` otherwise).
    symmetric : bool, optional
        Colour scale centred on 0 (default: when the matrix has negative values).
    annotate : bool, optional
        Print values in the cells (default: K <= 12).
    xlabel, ylabel : str
        Axis labels.
    vmin, vmax : float, optional
        Ends of the colour scale of a matrix that is not symmetric (default: its range), e.g.
        0.5 to 1 for C-indices, so that the colours do not magnify small differences.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    if hasattr(matrix, "to_frame") and not isinstance(matrix, pd.DataFrame):
        frame = matrix.matrix if isinstance(getattr(matrix, "matrix", None), pd.DataFrame) \
            else matrix.to_frame()
    else:
        frame = matrix
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] != frame.shape[1]:
        raise ParameterError("`matrix` must be a square DataFrame or a result with one.")
    M = frame.to_numpy(float)
    K = M.shape[0]
    ax = _axes(ax, min(9.0, 2.5 + 0.45 * K), min(8.0, 2.0 + 0.4 * K))
    if symmetric is None:
        symmetric = bool(np.nanmin(M) < 0)
    if symmetric:
        lim = float(np.nanmax(np.abs(M))) or 1.0
        im = ax.imshow(M, cmap=cmap, vmin=-lim, vmax=lim)
    else:
        im = ax.imshow(M, cmap="viridis" if cmap == "RdBu_r" else cmap, vmin=vmin, vmax=vmax)
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    labels = [str(s) for s in frame.index]
    if [str(s) for s in frame.columns] != labels:
        raise ParameterError("`matrix` must have the same studies as rows and columns.")
    step = max(1, K // 20)
    ax.set_xticks(np.arange(0, K, step), labels[::step], rotation=90, **_LITERAL)
    ax.set_yticks(np.arange(0, K, step), labels[::step], **_LITERAL)
    if annotate is None:
        annotate = K <= 12
    if annotate:
        for i in range(K):
            for j in range(K):
                if np.isfinite(M[i, j]):
                    r, g, b, _ = im.cmap(im.norm(M[i, j]))
                    dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # the cell's luminance
                    ax.text(j, i, number(M[i, j], 2), ha="center", va="center", fontsize=7,
                            color="white" if dark else "black")
    ax.set_title(title, **_LITERAL)
    ax.set_xlabel(xlabel, **_LITERAL)
    ax.set_ylabel(ylabel, **_LITERAL)
    return ax


def _plane(ax, point, others, names, studies):
    """Fig. 1: ``point`` (U_1, U_2) of the reference rule and the ``others``' points."""
    u1, u2 = point
    pts = np.array([point, *others], float)
    lo, hi = pts.min() - 0.05 * (np.ptp(pts) + 1e-9), pts.max() + 0.05 * (np.ptp(pts) + 1e-9)
    lo, hi = min(lo, u1 - 0.1 * abs(u1 - u2) - 1e-3), max(hi, u1 + 0.5 * abs(u1 - u2) + 1e-3)
    gap = abs(u1 - u2)
    xs = np.array([lo, hi])
    ax.plot(xs, xs + gap, color="#888888", lw=1)
    ax.plot(xs, xs - gap, color="#888888", lw=1)
    ax.axvline(u1, color="#bbbbbb", lw=0.8, ls=":")
    ax.axhline(u2, color="#bbbbbb", lw=0.8, ls=":")
    ax.plot([u1], [u2], "o", color="#b3261e", ms=8)
    ax.annotate(names[0], (u1, u2), textcoords="offset points", xytext=(6, -12), **_LITERAL)
    for pt, nm in zip(others, names[1:], strict=True):
        ax.plot([pt[0]], [pt[1]], "s", color="#203a66")
        ax.annotate(nm, tuple(pt), textcoords="offset points", xytext=(6, 4), **_LITERAL)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel(f"average utility in {studies[0]}", **_LITERAL)
    ax.set_ylabel(f"average utility in {studies[1]}", **_LITERAL)
    ax.set_title("Utility and replicability (Parmigiani 2023, Fig. 1)")
    return ax


def plot_dominance(reference, others=(), *, names=None, ax=None):
    """The two-study plane of average utilities (Parmigiani 2023, Fig. 1).

    ``reference`` (φ) is the dot at ``(U_1, U_2)``; the two 45° lines through it and through its
    mirror image across the diagonal bound the rules at least as replicable. Regions: B (better
    in both studies, more replicable), C (better in both, less replicable), A (more replicable,
    not better in both).

    Parameters
    ----------
    reference : StudyUtilities
        Exactly two studies.
    others : sequence of StudyUtilities
        Alternative rules φ' over the same two studies.
    names : sequence of str, optional
        Labels for ``reference`` followed by ``others``.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    rules = [reference, *others]
    for r in rules:
        if len(r.studies) != 2:
            raise DataError(f"the dominance plot needs exactly 2 studies; got {len(r.studies)}.")
    names = list(names) if names is not None else ["φ"] + [f"φ'{i + 1}" for i in range(len(others))]
    ax = _axes(ax, 5.0, 5.0)
    return _plane(ax, tuple(reference.utility), [tuple(r.utility) for r in others], names,
                  [str(s) for s in reference.studies])


def plot_dominance_table(table, names=("a", "b"), *, ax=None):
    """Two rules' average utilities from a dominance table.

    With two studies, the plane of Fig. 1 (Parmigiani 2023); with more, each study's utility of
    both rules side by side.

    Parameters
    ----------
    table : DataFrame
        ``study``, then the utilities of the two rules (``DominanceResult.table``).
    names : tuple of str, default ('a', 'b')
        The rules' names.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    studies = [str(s) for s in table["study"]]
    ua = table.iloc[:, 1].to_numpy(float)
    ub = table.iloc[:, 2].to_numpy(float)
    if len(studies) == 2:
        return _plane(_axes(ax, 5.0, 5.0), (ua[0], ua[1]), [(ub[0], ub[1])], list(names),
                      studies)
    ax = _axes(ax, 6.4, max(2.4, 1.0 + 0.3 * len(studies)))
    ypos = np.arange(len(studies))
    ax.plot(ua, ypos, "o", color="#b3261e", label=str(names[0]))
    ax.plot(ub, ypos, "s", color="#203a66", label=str(names[1]))
    ax.hlines(ypos, np.minimum(ua, ub), np.maximum(ua, ub), color="#bbbbbb", lw=1)
    ax.set_yticks(ypos, studies, **_LITERAL)
    ax.invert_yaxis()
    ax.set_xlabel("average utility in the study")
    ax.set_ylabel("study")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_epsilon_test(result, *, ax=None, max_pairs: int = 30):
    """The pairs of an ε-replicability test.

    Each pair's observed ``|U_a − U_b|`` (or total variation) and its upper confidence bound,
    the smallest tolerance shown (the largest bound) and the bias-aware spread.

    Parameters
    ----------
    result : EpsilonTest
        From :func:`~replikit.multistudy.epsilon_test`.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    max_pairs : int, default 30
        Pairs shown at most (those with the largest bounds).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    pairs = result.pairs.sort_values("upper_bound", ascending=False).head(max_pairs)
    observed = pairs["difference"].abs().to_numpy(float)
    bound = pairs["upper_bound"].to_numpy(float)
    ax = _axes(ax, 6.4, max(2.4, 1.0 + 0.25 * len(pairs)))
    ypos = np.arange(len(pairs))
    finite = np.isfinite(bound)
    ax.hlines(ypos[finite], observed[finite], bound[finite], color="#5b7fb9", lw=2)
    ax.plot(observed, ypos, "o", color="#203a66", label="observed")
    ax.plot(bound[finite], ypos[finite], "|", color="#203a66", ms=10,
            label=f"upper {number(100 * (1 - result.alpha))}% bound")
    ax.axvline(result.smallest_tolerance, color="#b3261e", ls="-", lw=1,
               label=f"smallest ε shown {number(result.smallest_tolerance)}")
    spread = {"eb": "empirical Bayes", "bootstrap": "bootstrap", "re_range":
              "random-effects range", "plugin": "observed"}.get(result.spread_method,
                                                                result.spread_method)
    ax.axvline(result.estimate, color="#1b7837", ls="--", lw=1,
               label=f"bias-aware spread {number(result.estimate)} ({spread})")
    if result.tolerance is not None:
        ax.axvline(result.tolerance, color="#444444", ls=":", lw=1,
                   label=f"tolerance ε = {number(result.tolerance)}")
    labels = [f"{a} – {b}" for a, b in zip(pairs["study_a"], pairs["study_b"], strict=True)]
    ax.set_yticks(ypos, labels, **_LITERAL)
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_xlabel({"absolute": "difference in average utility |U_a − U_b|",
                   "relative": "relative difference 2|U_a − U_b| / |U_a + U_b|",
                   "tv": "total variation TV(F_a, F_b)"}[result.kind])
    ax.set_ylabel("pair of studies")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return ax
