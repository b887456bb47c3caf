"""Figures of model comparisons: Demšar's critical-difference diagram, a forest plot of tests
and the simplex of a Bayesian comparison.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the axes. The
results draw themselves through these functions (``NemenyiResult.plot``,
``ControlResult.plot``, ``ComparisonTable.plot``, ``BayesianComparison.plot``), so this module
imports none of the result modules: it reads the results by their attributes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._format import number
from .._plotting import axes_or_new as _axes
from ..errors import DataError, ParameterError, ParameterTypeError
from ._words import fill_doc, p_is, test_name

__all__ = ["plot_cd_diagram", "plot_cd_control", "plot_comparisons", "plot_simplex",
           "plot_plackett_luce"]

_GREY = "0.6"


# ---------------------------------------------------------------------------------------------
# CD diagram
# ---------------------------------------------------------------------------------------------
@fill_doc()
def plot_cd_diagram(nemenyi_result, *, ax=None, title: str | None = None, digits: int = 2):
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
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.
    title : str, optional
        Defaults to the CD, alpha and the Friedman/Iman–Davenport p-value.
    digits : int, default 2
        Decimals of the mean ranks printed next to the labels.

    Returns
    -------
    matplotlib.axes.Axes
        The clique bars carry ``gid='clique'`` and the model lines ``gid='model'``.

    See Also
    --------
    plot_cd_control : The diagram of a comparison with a control.
    replikit.compare.NemenyiResult.plot : The same figure from the result.

    References
    ----------
    {refs:demsar2006}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import nemenyi_test
    >>> t = np.random.default_rng(0).normal(size=(20, 4)) + [0.0, 0.5, 1.0, 2.0]
    >>> ax = plot_cd_diagram(nemenyi_test(t))
    >>> len([line for line in ax.lines if line.get_gid() == "model"])
    4
    """
    if not (hasattr(nemenyi_result, "cliques") and hasattr(nemenyi_result, "friedman")):
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
        missing = len(getattr(fr, "missing", ()) or ())
        if missing:  # Skillings-Mack: each pair has its own critical difference
            title = (f"Largest pair's CD = {number(cd)} (alpha = "
                     f"{number(nemenyi_result.alpha)}, {number(nemenyi_result.n_models)} "
                     f"models, {number(nemenyi_result.n_datasets)} datasets)\n"
                     f"Skillings-Mack {p_is(fr.pvalue)}; {missing} missing cells")
        else:
            title = (f"Nemenyi critical difference = {number(cd)} (alpha = "
                     f"{number(nemenyi_result.alpha)}, {number(nemenyi_result.n_models)} "
                     f"models, {number(nemenyi_result.n_datasets)} datasets)\n"
                     f"Friedman {p_is(fr.pvalue)}; Iman-Davenport {p_is(fr.f_pvalue)}")
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


@fill_doc()
def plot_cd_control(control_result, *, ax=None, title: str | None = None, digits: int = 2):
    """Critical-difference diagram of a Bonferroni–Dunn test against a control.

    In the style of Demšar (2006, Figure 2): the rank axis as in :func:`plot_cd_diagram` (best
    ranks on the right, models hanging from their mean ranks to their labels); a thick bar
    spans the control's mean rank ± CD: models whose mean rank lies outside it differ
    significantly from the control (their labels are drawn bold).

    Parameters
    ----------
    control_result : ControlResult
        From :func:`replikit.compare.bonferroni_dunn_test`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.
    title : str, optional
        Defaults to the control, the CD and alpha.
    digits : int, default 2
        Decimals of the mean ranks printed next to the labels.

    Returns
    -------
    matplotlib.axes.Axes
        The control interval carries ``gid='control-cd'`` and the model lines ``gid='model'``.

    See Also
    --------
    plot_cd_diagram : The diagram of the Nemenyi test of every pair.
    replikit.compare.ControlResult.plot : The same figure from the result.

    References
    ----------
    {refs:demsar2006}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import bonferroni_dunn_test
    >>> t = np.random.default_rng(0).normal(size=(20, 4)) + [1.5, 0.0, 0.2, 1.4]
    >>> ax = plot_cd_control(bonferroni_dunn_test(t, control="model 0"))
    >>> [line.get_gid() for line in ax.lines].count("control-cd")
    1
    """
    if not (hasattr(control_result, "control") and hasattr(control_result, "comparisons")):
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
        title = (f"Bonferroni-Dunn test against {control_result.control}: critical difference "
                 f"= {number(cd)} (alpha = {number(control_result.alpha)}, "
                 f"{number(control_result.n_models)} models, "
                 f"{number(control_result.n_datasets)} datasets)\n"
                 "bold: differs from the control")
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
    vary_study = "study" in frame.columns and frame["study"].nunique() > 1
    labels = []
    for _, row in frame.iterrows():
        parts = [str(row["study"])] if vary_study else []
        if vary_pair:
            parts.append(f"{row['a']} − {row['b']}")
        if vary_metric:
            parts.append(str(row["metric"]))
        label = test_name(row["test"])
        if parts:
            label += ": " + ", ".join(parts)
        if not bool(row["valid"]):
            label += " (invalid)"
        labels.append(label)
    return labels


@fill_doc()
def plot_comparisons(table, *, ax=None, refline: float | None = 0.0,
                     xlabel: str = "mean difference a − b", digits: int = 3,
                     title: str | None = None, p_column: str | None = "pvalue"):
    """Forest plot of the mean differences and intervals of several tests.

    One row per test: a point at ``estimate`` and a line from ``ci_low`` to ``ci_high``, with
    ``estimate [low, high]`` and the p-value printed on the right. Each row is labelled by the
    test's name and the pair (``'corrected repeated k-fold t-test: lr − lasso'``). Rows of
    invalid tests (the naive t and the difference of proportions, ``valid == False``) are
    drawn in grey and labelled "(invalid)", with a note under the plot: their intervals are too
    narrow because they ignore the overlap of training sets (Gardner & Brooks 2017, sec. 3).
    Tests without an interval (F tests) show the point only.

    Parameters
    ----------
    table : pandas.DataFrame, ComparisonTable or ComparisonResult
        Columns ``test, estimate, ci_low, ci_high, valid`` and optionally ``pvalue``, ``a``,
        ``b``, ``metric``, ``study`` (the study, the pair and the metric are added to the
        labels when they vary between rows); or an object with ``to_frame()``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.
    refline : float or None, default 0.0
        x of the dotted reference line (0: no difference).
    xlabel : str, default 'mean difference a − b'
        Label of the horizontal axis.
    digits : int, default 3
        Decimals of the printed estimates.
    title : str, optional
        A title above the plot.
    p_column : {'pvalue', 'pvalue_adjusted'} or None, default 'pvalue'
        The p-value printed beside each row (``'pvalue_adjusted'`` prints "p adj ="); None
        prints none.

    Returns
    -------
    matplotlib.axes.Axes
        Each row's interval line carries ``gid='valid'`` or ``gid='invalid'``.

    See Also
    --------
    replikit.compare.ComparisonTable.plot : The same figure from a table, one metric.
    plot_cd_diagram : The diagram of mean ranks over many datasets.

    References
    ----------
    {refs:gardner2017}

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"test": ["corrected_repeated_kfold_t", "naive_paired_t"],
    ...                      "a": "lr", "b": ["lasso", "tree"], "estimate": [0.02, 0.05],
    ...                      "ci_low": [-0.01, 0.04], "ci_high": [0.05, 0.06],
    ...                      "valid": [True, False], "pvalue": [0.2, 0.001]})
    >>> ax = plot_comparisons(rows)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['corrected repeated k-fold t-test: lr − lasso', 'naive paired t-test: lr − tree (invalid)']
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
            parts.append(p_is(float(frame.loc[i, p_column]), p_label))
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


# ---------------------------------------------------------------------------------------------
# the simplex of a Bayesian comparison
# ---------------------------------------------------------------------------------------------
_CORNERS = np.array([[0.0, 0.0], [0.5, math.sqrt(3) / 2], [1.0, 0.0]])  # left, rope, right
_MAX_POINTS = 5000


@fill_doc()
def plot_simplex(result, *, ax=None):
    """The posterior draws of a Bayesian comparison on the simplex of its three regions.

    Each draw's probabilities ``(p_left, p_rope, p_right)`` place a point in a triangle whose
    corners are "a worse", "practically equivalent" and "a better" (Benavoli et al. 2017,
    Figure 5); the corner the cloud crowds into is the answer. Without draws, a bar chart of
    the three probabilities.

    Parameters
    ----------
    result : BayesianComparison
        From :func:`replikit.compare.bayesian_signed_rank_test` or
        :func:`replikit.compare.hierarchical_test`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    See Also
    --------
    replikit.compare.BayesianComparison.plot : The same figure from the result.

    References
    ----------
    {refs:benavoli2017}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import bayesian_signed_rank_test
    >>> b = np.random.default_rng(0).uniform(0.7, 0.9, size=30)
    >>> res = bayesian_signed_rank_test((b + 0.01, b), n_resamples=1000, random_state=0)
    >>> plot_simplex(res).get_title(loc="left").splitlines()[1]
    'P(a worse) = 0, P(equivalent) = 0, P(a better) = 1'
    """
    samples = getattr(result, "samples", None)
    a = str(getattr(result, "a", "a"))
    labels = (f"{a} worse", "practically equivalent", f"{a} better")
    probs = (result.p_left, result.p_rope, result.p_right)
    title = (f"{result.method}, {number(result.n_datasets)} datasets\n"
             f"P({a} worse) = {number(probs[0], 2)}, P(equivalent) = {number(probs[1], 2)}, "
             f"P({a} better) = {number(probs[2], 2)}")
    if samples is None or np.size(samples) == 0:
        ax = _axes(ax, 6.4, 3.2)
        ax.bar(range(3), probs, color=["#D55E00", "#E69F00", "#0072B2"])
        ax.set_xticks(range(3))
        ax.set_xticklabels(labels)
        ax.set_ylim(0, 1)
        ax.set_ylabel("posterior probability")
        ax.set_title(title, fontsize=8, loc="left")
        return ax
    ax = _axes(ax, 5.6, 5.0)
    draws = np.asarray(samples, dtype=float)
    if len(draws) > _MAX_POINTS:  # every k-th draw: the cloud's shape, a light figure
        draws = draws[:: int(math.ceil(len(draws) / _MAX_POINTS))]
    xy = draws @ _CORNERS / np.maximum(draws.sum(axis=1, keepdims=True), 1e-300)
    ax.plot(*np.vstack([_CORNERS, _CORNERS[:1]]).T, color="black", lw=1)
    ax.plot(xy[:, 0], xy[:, 1], ls="none", marker=".", ms=2, alpha=0.15, color="#0072B2",
            gid="draws")
    for (x, y), label, ha, dy in zip(_CORNERS, labels, ("right", "center", "left"),
                                     (-0.05, 0.04, -0.05), strict=True):
        ax.text(x, y + dy, label, ha=ha, va="center", fontsize=9)
    ax.set_xlim(-0.35, 1.35)
    ax.set_ylim(-0.12, math.sqrt(3) / 2 + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=8, loc="left")
    return ax


# ---------------------------------------------------------------------------------------------
# Plackett–Luce posterior
# ---------------------------------------------------------------------------------------------
@fill_doc()
def plot_plackett_luce(result, *, ax=None):
    """Each model's posterior Plackett–Luce weight with its credible interval, best at the top.

    A point at the posterior mean weight (the probability of ranking first on a new dataset)
    and a line over its equal-tailed credible interval; the right margin gives the posterior
    probability that the model has the largest weight, P(best), and its expected rank.

    Parameters
    ----------
    result : PlackettLuceResult
        From :func:`replikit.compare.plackett_luce`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.

    Returns
    -------
    matplotlib.axes.Axes
        The intervals carry ``gid='interval'``.

    See Also
    --------
    replikit.compare.PlackettLuceResult.plot : The same figure from the result.

    References
    ----------
    {refs:calvo2018}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import plackett_luce
    >>> t = np.random.default_rng(0).normal(size=(20, 3)) + [1.0, 0.0, 0.5]
    >>> ax = plot_plackett_luce(plackett_luce(t, n_resamples=500, random_state=0))
    >>> len([line for line in ax.lines if line.get_gid() == "interval"])
    3
    """
    if not (hasattr(result, "prob_best") and hasattr(result, "expected_rank")):
        raise ParameterTypeError(f"`result` must be a PlackettLuceResult (from plackett_luce); "
                                 f"got {type(result).__name__}.")
    f = result.to_frame()
    k = len(f)
    ax = _axes(ax, 6.4, 0.9 + 0.38 * k)
    y = np.arange(k)[::-1]  # the most probably best at the top
    for yi, row in zip(y, f.itertuples(), strict=True):
        ax.plot([row.ci_low, row.ci_high], [yi, yi], color="#0072B2", lw=2, gid="interval")
        ax.plot([row.estimate], [yi], marker="o", color="#0072B2", ms=5, ls="none")
        ax.annotate(f"P(best) {number(row.prob_best, 2)}, rank {row.expected_rank:.2f}",
                    xy=(1.01, yi), xycoords=("axes fraction", "data"), va="center",
                    fontsize=8)
    ax.axvline(1.0 / k, color=_GREY, lw=0.8, ls=":")  # equal weights
    ax.set_yticks(y)
    ax.set_yticklabels(f["model"].tolist())
    ax.set_ylim(-0.7, k - 0.3)
    ax.set_xlim(left=0)
    level = f"{result.confidence_level * 100:.4g}%"
    ax.set_xlabel(f"weight: probability of ranking first (posterior mean, {level} credible "
                  "interval)")
    ax.set_title(f"Plackett–Luce posterior, {number(result.n_datasets)} datasets "
                 f"(dotted: equal weights 1/{k})", fontsize=9, loc="left")
    return ax
