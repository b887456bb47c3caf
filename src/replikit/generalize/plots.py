"""Plots of the generalizability analysis of Matteucci et al. (2024) (matplotlib, imported
lazily)."""

from __future__ import annotations

import numpy as np

from .._compat import old_value, renamed
from .._format import number
from .._plotting import axes_or_new as _axes

__all__ = ["plot_quantile_fit", "plot_nstar", "plot_generalizability", "goal_words"]


def goal_words(label: str, alternatives: str = "alternative") -> str:
    """A goal's kernel label in words, for figure titles and tables.

    Parameters
    ----------
    label : str
        A :attr:`Kernel.label <replikit.generalize.Kernel.label>` (``'mallows'``,
        ``'jaccard(k=1)'``, ``'borda(OHE)'``, ``'rbf'``).
    alternatives : str, default 'alternative'
        What the alternatives are (``'model'`` in the audit).

    Returns
    -------
    str
        E.g. ``'whole ranking (Mallows)'``, ``'best alternative (Jaccard, k = 1)'``,
        ``'position of OHE (Borda)'``.

    Examples
    --------
    >>> goal_words("jaccard(k=1)"), goal_words("borda(lr)", "model")
    ('best alternative (Jaccard, k = 1)', 'position of lr (Borda)')
    """
    kind, _, rest = str(label).partition("(")
    rest = rest[:-1] if rest.endswith(")") else rest
    head, sep, nu = rest.rpartition(", nu=")
    name, nu = (head, f", ν = {nu}") if sep else (rest, "")
    if kind == "mallows":
        return f"whole ranking (Mallows{', ' + name.replace('nu=', 'ν = ') if name else ''})"
    if kind == "jaccard":
        k = name.replace("k=", "")
        what = f"best {alternatives}" if k == "1" else f"top {k} tiers"
        return f"{what} (Jaccard, k = {k})"
    if kind == "borda":
        return f"position of {name} (Borda{nu})"
    if kind == "rbf":
        return f"raw scores (RBF{', ' + name.replace('nu=', 'γ = ') if name else ''})"
    return str(label)


def _literal(*texts) -> None:
    """Texts built from user labels (kernel and alternative names) are drawn as they are: a
    ``$`` is a dollar sign, never the start of mathtext (``borda($^$)`` must not fail)."""
    for t in texts:
        if t is not None:
            t.set_parse_math(False)


def _legend(ax, **kw):
    leg = ax.legend(**kw)
    _literal(*leg.get_texts())
    return leg


def _plain_log(axis) -> None:
    """Log-axis tick labels as plain numbers ('10', '0.3'), not mathtext: they read the same
    whether or not mathtext is enabled where the figure is rendered."""
    from matplotlib.ticker import LogFormatter

    class _Plain(LogFormatter):
        def __call__(self, x, pos=None):  # LogFormatter picks the ticks to label
            return f"{x:g}" if super().__call__(x, pos) else ""

    axis.set_major_formatter(_Plain(labelOnlyBase=False))
    axis.set_minor_formatter(_Plain(labelOnlyBase=False))


@renamed(delta="tolerance")
def plot_quantile_fit(result, *, confidence_level=None, tolerance=None, ax=None):
    """Log-log fit of the MMD quantiles with the extrapolated n* (Matteucci et al. 2024, Fig. 2).

    Parameters
    ----------
    result : NStarResult
        The estimate to draw.
    confidence_level, tolerance : float, optional
        Which (alpha*, delta*) row of ``result.table`` (default: the first).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        Points: ``(epsilon_n^{alpha*}, n)``; line: ``log n = beta1 log eps + beta0``; triangle:
        ``(epsilon*, n*)``; dashed: ``epsilon*``. With the Gamma estimator (the default) also
        the asymptotic quantile curve through ``(epsilon*, n*)`` (dotted), n*'s 95% interval
        (vertical bar) and the log-log extrapolation's n* (hollow triangle).

    See Also
    --------
    plot_generalizability : The n-Gen curves of the same estimate.
    plot_nstar : n* over design combinations.

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.generalize import Kernel, estimate_nstar
    >>> r = np.array([[0, 1, 2], [1, 0, 2], [0, 0, 1], [2, 1, 0]] * 4)
    >>> res = estimate_nstar(r, Kernel("mallows"), n_resamples=50, random_state=0)
    >>> ax = plot_quantile_fit(res)
    """
    ax = _axes(ax)
    t = result.table
    row = t.iloc[0]
    lv = "confidence_level"
    if confidence_level is not None:
        at = np.isclose(t[lv], confidence_level)
        row = (t[at].iloc[0] if tolerance is None else
               t[at & np.isclose(t["tolerance"], tolerance)].iloc[0])
    elif tolerance is not None:
        row = t[np.isclose(t["tolerance"], tolerance)].iloc[0]
    q = result.quantiles[np.isclose(result.quantiles[lv], row[lv])]
    pos = q["q"] > 0
    ax.loglog(q["q"][pos], q["n"][pos], "o", color="#5b7fb9",
              label=f"{number(100 * row[lv])}% quantile of the MMD at n")
    if np.isfinite(row["beta1"]):
        lo = min(q["q"][pos].min(), row["eps"]) if pos.any() else row["eps"]
        hi = q["q"][pos].max() if pos.any() else row["eps"]
        e = np.geomspace(lo, hi, 50)
        ax.loglog(e, np.exp(row["beta1"] * np.log(e) + row["beta0"]), "-", color="#203a66",
                  label=f"log-log fit (Algorithm 1): log n = {number(row['beta1'])} log ε "
                        f"{'−' if row['beta0'] < 0 else '+'} {number(abs(row['beta0']))}")
    ax.axvline(row["eps"], ls="--", color="grey", lw=1)
    gamma = row.get("estimator", "loglog") == "gamma"
    if gamma:
        # the asymptotic quantile curve sqrt(2 g chi2_h(alpha*) / n) passes through (eps*, n*)
        # with slope -2 on these axes
        lo = min(q["q"][pos].min(), row["eps"]) if pos.any() else row["eps"]
        hi = max(q["q"][pos].max(), row["eps"]) if pos.any() else row["eps"]
        e = np.geomspace(lo, hi, 50)
        ax.loglog(e, row["nstar"] * (row["eps"] / e) ** 2, ":", color="#b3261e",
                  label="asymptotic quantile (Gamma)")
        if np.isfinite(row.get("nstar_loglog", np.nan)):
            ax.plot([row["eps"]], [row["nstar_loglog"]], "^", mfc="white", color="#203a66",
                    ms=8, label=f"log-log n* = {number(row['nstar_loglog'])}")
        if np.isfinite(row.get("ci_low", np.nan)):
            ax.plot([row["eps"]] * 2, [row["ci_low"], row["ci_high"]], "-", color="#b3261e",
                    lw=2, alpha=0.6)
    ax.plot([row["eps"]], [row["nstar"]], "^", color="#b3261e", ms=9,
            label=f"n* = {number(row['nstar'])} at ε* (tolerance δ* = {number(row['tolerance'])})")
    ax.set_xlabel("MMD quantile ε (log scale)")
    ax.set_ylabel("experiments per study, n (log scale)")
    ax.set_title(f"{goal_words(result.kernel)}: N = {result.N:,} experiments",
                 parse_math=False)
    _legend(ax, fontsize=8)
    _plain_log(ax.xaxis)
    _plain_log(ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    return ax


def plot_nstar(table, *, by: str = "confidence_level", fixed: float | None = None, ax=None):
    """Box plots of n* over design combinations, per alpha* or delta* and goal.

    The figures 3-4 of Matteucci et al. (2024).

    Parameters
    ----------
    table : pandas.DataFrame
        ``GeneralizabilityResult.table``.
    by : {'confidence_level', 'tolerance'}
        The x axis (``confidence_level`` is alpha*, ``tolerance`` delta*); the other parameter
        is held at ``fixed``.
    fixed : float, optional
        The level of the other parameter (default: its median level).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        One box per goal and level, on a log scale.

    See Also
    --------
    plot_quantile_fit : The fit behind one n*.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"kernel": "mallows", "confidence_level": [0.9, 0.95, 0.9, 0.95],
    ...                   "tolerance": 0.05, "nstar": [3.0, 4.0, 5.0, 7.0]})
    >>> ax = plot_nstar(t)
    """
    from ..errors import ParameterError

    by = old_value(by, "by", {"delta": "tolerance"}, "plot_nstar()")
    if by not in ("confidence_level", "tolerance"):
        raise ParameterError(f"`by` must be 'confidence_level' or 'tolerance'; got {by!r}.")
    ax = _axes(ax)
    other = "tolerance" if by == "confidence_level" else "confidence_level"
    levels = np.sort(table[other].unique())
    fixed = levels[len(levels) // 2] if fixed is None else fixed
    t = table[np.isclose(table[other], fixed)]
    xs = np.sort(t[by].unique())
    kernels = list(dict.fromkeys(t["kernel"]))
    width = 0.8 / max(len(kernels), 1)
    colors = ["#5b7fb9", "#c98a2b", "#4f9a6a", "#9b5fb4", "#b3261e"]
    for j, k in enumerate(kernels):
        data = [t[(t["kernel"] == k) & np.isclose(t[by], x)]["nstar"].to_numpy() for x in xs]
        pos = np.arange(len(xs)) + (j - (len(kernels) - 1) / 2) * width
        bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True,
                        showfliers=True, manage_ticks=False)
        for b in bp["boxes"]:
            b.set_facecolor(colors[j % len(colors)])
        ax.plot([], [], "s", color=colors[j % len(colors)], label=goal_words(k))
    ax.set_xticks(np.arange(len(xs)), [number(x) for x in xs])
    ax.set_xlabel("confidence level α*" if by == "confidence_level" else "tolerance δ*")
    ax.set_ylabel("experiments needed, n* (log scale)")
    ax.set_yscale("log")
    _plain_log(ax.yaxis)
    held = "tolerance δ*" if other == "tolerance" else "confidence level α*"
    ax.set_title(f"n* over design combinations ({held} = {number(fixed)})")
    _legend(ax, fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return ax


@renamed(delta="tolerance")
def plot_generalizability(result, *, tolerance=None, ax=None):
    """Generalizability curve ``n -> n-Gen(epsilon*)`` (Matteucci et al. 2024, Def. 4.1).

    Parameters
    ----------
    result : NStarResult
        The estimate whose MMD distribution is drawn.
    tolerance : float or sequence of float, optional
        The delta* of the curves (default: every one of ``result.table``).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        One curve per tolerance; dashed lines at each alpha*.

    See Also
    --------
    plot_quantile_fit : The quantile fit of the same estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.generalize import Kernel, estimate_nstar
    >>> r = np.array([[0, 1, 2], [1, 0, 2], [0, 0, 1], [2, 1, 0]] * 4)
    >>> res = estimate_nstar(r, Kernel("mallows"), n_resamples=50, random_state=0)
    >>> ax = plot_generalizability(res)
    """
    ax = _axes(ax)
    t = result.table
    deltas = t["tolerance"].unique() if tolerance is None else np.atleast_1d(tolerance)
    for d in deltas:
        eps = float(t[np.isclose(t["tolerance"], d)]["eps"].iloc[0])
        g = result.generalizability(eps)
        ax.plot(g["n"], g["ngen"], "o-", ms=3,
                label=f"tolerance δ* = {number(d)} (ε* = {number(eps)})")
    for a in t["confidence_level"].unique():
        ax.axhline(a, ls="--", color="grey", lw=1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("experiments per study, n")
    ax.set_ylabel("n-Gen: share of MMD ≤ ε*")
    ax.set_title(f"{goal_words(result.kernel)}: N = {result.N:,} experiments",
                 parse_math=False)
    _legend(ax, fontsize=8)
    ax.grid(alpha=0.3)
    return ax
