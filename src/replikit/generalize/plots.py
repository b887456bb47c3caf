"""Plots of seed 004's generalizability analysis (matplotlib, imported lazily)."""

from __future__ import annotations

import numpy as np

from .._plotting import axes_or_new as _axes

__all__ = ["plot_quantile_fit", "plot_nstar", "plot_generalizability"]


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


def plot_quantile_fit(result, *, confidence_level=None, delta=None, ax=None):
    """Log-log fit of the MMD quantiles with the extrapolated n* (seed 004, Fig. 2).

    Parameters
    ----------
    result : NStarResult
    confidence_level, delta : float, optional
        Which (alpha*, delta*) row of ``result.table`` (default: the first).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        Points: ``(epsilon_n^{alpha*}, n)``; line: ``log n = beta1 log eps + beta0``; triangle:
        ``(epsilon*, n*)``; dashed: ``epsilon*``. With the Gamma estimator (the default) also
        the asymptotic quantile curve through ``(epsilon*, n*)`` (dotted), n*'s 95% interval
        (vertical bar) and the log-log extrapolation's n* (hollow triangle).

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
        row = t[at].iloc[0] if delta is None else t[at & np.isclose(t["delta"], delta)].iloc[0]
    elif delta is not None:
        row = t[np.isclose(t["delta"], delta)].iloc[0]
    q = result.quantiles[np.isclose(result.quantiles[lv], row[lv])]
    pos = q["q"] > 0
    ax.loglog(q["q"][pos], q["n"][pos], "o", color="#5b7fb9", label=f"{row[lv]:g}-quantile")
    if np.isfinite(row["beta1"]):
        lo = min(q["q"][pos].min(), row["eps"]) if pos.any() else row["eps"]
        hi = q["q"][pos].max() if pos.any() else row["eps"]
        e = np.geomspace(lo, hi, 50)
        ax.loglog(e, np.exp(row["beta1"] * np.log(e) + row["beta0"]), "-", color="#203a66",
                  label=f"log n = {row['beta1']:.2f} log ε + {row['beta0']:.2f}")
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
                    ms=8, label=f"log-log n* = {row['nstar_loglog']:.3g}")
        if np.isfinite(row.get("ci_low", np.nan)):
            ax.plot([row["eps"]] * 2, [row["ci_low"], row["ci_high"]], "-", color="#b3261e",
                    lw=2, alpha=0.6)
    ax.plot([row["eps"]], [row["nstar"]], "^", color="#b3261e", ms=9,
            label=f"n* = {row['nstar']:.3g} (δ*={row['delta']:g})")
    ax.set_xlabel("MMD quantile ε")
    ax.set_ylabel("n")
    ax.set_title(f"{result.kernel}, N = {result.N}", parse_math=False)
    _legend(ax, fontsize=8)
    _plain_log(ax.xaxis)
    _plain_log(ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    return ax


def plot_nstar(table, *, by: str = "confidence_level", fixed: float | None = None, ax=None):
    """Box plots of n* over design combinations, per ``alpha*`` or ``delta*`` and kernel (Figs. 3-4).

    Parameters
    ----------
    table : pandas.DataFrame
        ``GeneralizabilityResult.table``.
    by : {'confidence_level', 'delta'}
        The x axis (``confidence_level`` is alpha*); the other parameter is held at ``fixed``
        (default: its median level).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"kernel": "mallows", "confidence_level": [0.9, 0.95, 0.9, 0.95],
    ...                   "delta": 0.05, "nstar": [3.0, 4.0, 5.0, 7.0]})
    >>> ax = plot_nstar(t)
    """
    from ..errors import ParameterError

    if by not in ("confidence_level", "delta"):
        raise ParameterError(f"`by` must be 'confidence_level' or 'delta'; got {by!r}.")
    ax = _axes(ax)
    other = "delta" if by == "confidence_level" else "confidence_level"
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
        ax.plot([], [], "s", color=colors[j % len(colors)], label=k)
    ax.set_xticks(np.arange(len(xs)), [f"{x:g}" for x in xs])
    ax.set_xlabel("α*" if by == "confidence_level" else "δ*")
    ax.set_ylabel("n*")
    ax.set_yscale("log")
    _plain_log(ax.yaxis)
    ax.set_title(f"n* over design combinations ({'δ*' if other == 'delta' else 'α*'} = {fixed:g})")
    _legend(ax, fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return ax


def plot_generalizability(result, *, delta=None, ax=None):
    """Generalizability curve ``n -> n-Gen(epsilon*)`` (seed 004, Def. 4.1).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    t = result.table
    deltas = t["delta"].unique() if delta is None else np.atleast_1d(delta)
    for d in deltas:
        eps = float(t[np.isclose(t["delta"], d)]["eps"].iloc[0])
        g = result.generalizability(eps)
        ax.plot(g["n"], g["ngen"], "o-", ms=3, label=f"δ* = {d:g} (ε* = {eps:.3f})")
    for a in t["confidence_level"].unique():
        ax.axhline(a, ls="--", color="grey", lw=1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("n (experiments per study)")
    ax.set_ylabel("n-Gen")
    ax.set_title(f"{result.kernel}, N = {result.N}", parse_math=False)
    _legend(ax, fontsize=8)
    ax.grid(alpha=0.3)
    return ax
