"""Figures of prediction-error estimates (matplotlib, imported lazily)."""

from __future__ import annotations

import numpy as np

from .._plotting import axes_or_new as _axes

__all__ = ["plot_experiment_densities", "plot_error_estimates", "plot_method_estimates",
           "plot_interval_estimates", "gaussian_kde_1d"]


def gaussian_kde_1d(values, grid, *, bw_factor: float = 1.0) -> np.ndarray:
    """Gaussian kernel density estimate of ``values`` on ``grid`` (Silverman 1986, eq. 2.2a).

    ``f(x) = mean_i phi((x - x_i) / h) / h`` with bandwidth ``h = bw_factor * s`` (``s``: the
    sample SD, ddof = 1) — what ``scipy.stats.gaussian_kde(values, bw_method=bw_factor)``
    computes in one dimension, in plain numpy (importing ``scipy.stats`` costs about half a
    second of a ``replikit simulate resampling`` run).

    Parameters
    ----------
    values : array-like of shape (m,)
        At least two values, not all equal.
    grid : array-like of shape (g,)
        Where to evaluate the density.
    bw_factor : float, default 1.0
        The bandwidth as a multiple of the sample SD.

    Returns
    -------
    ndarray of shape (g,)
        The density at each grid point.

    Examples
    --------
    >>> f = gaussian_kde_1d([0.0, 1.0], [0.5])
    >>> round(float(f[0]), 4)  # h = 0.7071: 2 phi(0.7071) / 1.4142 / 2
    0.4394
    """
    values = np.asarray(values, float).ravel()
    grid = np.asarray(grid, float)
    h = bw_factor * np.std(values, ddof=1)
    z = (grid[:, None] - values[None, :]) / h
    return np.exp(-0.5 * z * z).sum(axis=1) / (values.size * h * np.sqrt(2 * np.pi))


def plot_experiment_densities(result, *, ax=None, include_extra: bool = False):
    """Smoothed densities of each estimator's errors over the datasets of the experiment of
    Etherington & Lieske (2019), Figure 1: Gaussian kernel density estimates with a bandwidth
    factor of 1 (``scipy.stats.gaussian_kde(bw_method=1)``, as the paper; computed by
    :func:`gaussian_kde_1d`).

    Parameters
    ----------
    result : ResamplingExperiment
        What :func:`~replikit.resampling.simulate_resampling` returned.
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.
    include_extra : bool
        Also draw the estimators not in the paper (eq. 7 and .632+).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _axes(ax, 7.0, 4.2)
    grid = np.linspace(-0.1, 1.1, 400)
    table = result.table
    labels = [m for m, keep in zip(table["method"], table["in_paper"], strict=True)
              if keep or include_extra]
    for label in labels:
        values = result.errors[label].to_numpy()
        if np.ptp(values) == 0:
            ax.axvline(values[0], label=label)
            continue
        ax.plot(grid, gaussian_kde_1d(values, grid), label=label, lw=1.4)
    ax.axvline(0.5, color="grey", ls=":", lw=1)
    ax.set_xlabel("estimated error (true error 0.5)")
    ax.set_ylabel("density (Gaussian KDE, bandwidth factor 1)")
    ax.legend(fontsize=7, frameon=False)
    return ax


def plot_error_estimates(frame, *, ax=None):
    """Error estimates of several models by several methods, side by side.

    Parameters
    ----------
    frame : DataFrame
        Columns ``model``, ``method``, ``estimate`` and optionally ``ci_low``/``ci_high``
        (drawn as the interval, cut at the estimate's side when it lies outside) or ``se``
        (drawn as ±1 SE).
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _axes(ax, 7.0, 3.6)
    models = list(dict.fromkeys(frame["model"]))
    methods = list(dict.fromkeys(frame["method"]))
    width = 0.8 / max(1, len(methods))
    for j, method in enumerate(methods):
        sub = frame[frame["method"] == method].set_index("model").reindex(models)
        x = np.arange(len(models)) + (j - (len(methods) - 1) / 2) * width
        est = sub["estimate"].to_numpy(float)
        if "ci_low" in sub and not np.all(np.isnan(sub["ci_low"].to_numpy(float))):
            lo, hi = sub["ci_low"].to_numpy(float), sub["ci_high"].to_numpy(float)
            err = np.nan_to_num(np.stack([np.maximum(0.0, est - lo), np.maximum(0.0, hi - est)]))
        else:
            se = sub["se"].to_numpy(float) if "se" in sub else None
            err = None if se is None or np.all(np.isnan(se)) else np.nan_to_num(se)
        ax.bar(x, est, width, yerr=err, label=method, capsize=2)
    ax.set_xticks(np.arange(len(models)), models)
    ax.set_ylabel("estimated prediction error")
    ax.legend(fontsize=7, frameon=False, ncols=min(3, len(methods)))
    ax.grid(axis="y", alpha=0.3)
    return ax


def plot_method_estimates(frame, *, loss: str = "", ax=None):
    """One model's error estimates by method: a horizontal bar per method (±1 SE where the
    method has one).

    Parameters
    ----------
    frame : DataFrame
        Columns ``method`` (labels as shown), ``estimate`` and optionally ``se``.
    loss : str
        The loss, for the axis label (``'zero_one'``, ``'squared'`` ...).
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _axes(ax, 6.0, 0.9 + 0.35 * len(frame))
    y = np.arange(len(frame))[::-1]
    se = frame["se"].to_numpy(float) if "se" in frame else np.full(len(frame), np.nan)
    err = None if np.all(np.isnan(se)) else np.nan_to_num(se)
    ax.barh(y, frame["estimate"].to_numpy(float), xerr=err, height=0.6, color="#0072B2",
            capsize=2)
    ax.set_yticks(y, [str(m) for m in frame["method"]])
    words = {"zero_one": "misclassification rate", "squared": "mean squared error",
             "absolute": "mean absolute error", "log": "log loss"}
    ax.set_xlabel(f"estimated {words.get(loss, (loss + ' loss') if loss else 'error')}")
    ax.grid(axis="x", alpha=0.3)
    return ax


def plot_interval_estimates(frame, *, xlabel: str = "estimate", ax=None):
    """Each model's estimate with its interval, one row per model, a marker per group (study):
    a dot-and-whisker plot, so that scores far from zero (ROC AUC) keep their differences
    visible. An estimate without an interval is drawn as a hollow marker.

    Parameters
    ----------
    frame : DataFrame
        Columns ``model``, ``group`` (e.g. the study), ``estimate``, ``ci_low``, ``ci_high``.
    xlabel : str
        The axis label.
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    models = list(dict.fromkeys(frame["model"]))
    groups = list(dict.fromkeys(frame["group"]))
    ax = _axes(ax, 6.5, 0.9 + 0.45 * len(models) * max(1, min(len(groups), 3)))
    step = 0.7 / max(1, len(groups))
    for j, group in enumerate(groups):
        sub = frame[frame["group"] == group].set_index("model").reindex(models)
        y = np.arange(len(models))[::-1] + (j - (len(groups) - 1) / 2) * step
        est = sub["estimate"].to_numpy(float)
        lo, hi = sub["ci_low"].to_numpy(float), sub["ci_high"].to_numpy(float)
        has = np.isfinite(lo) & np.isfinite(hi)
        err = np.stack([np.where(has, est - lo, 0.0), np.where(has, hi - est, 0.0)])
        colour = f"C{j % 10}"
        if has.any():
            ax.errorbar(est[has], y[has], xerr=err[:, has], fmt="o", capsize=3,
                        color=colour, label=str(group))
        if (~has).any():
            ax.plot(est[~has], y[~has], "o", mfc="none", color=colour,
                    label=None if has.any() else f"{group} (no interval)")
    ax.set_yticks(np.arange(len(models))[::-1], [str(m) for m in models])
    ax.set_xlabel(xlabel)
    if len(groups) > 1 or not np.isfinite(frame["ci_low"].to_numpy(float)).all():
        ax.legend(fontsize=7, frameon=False, loc="best")
    ax.grid(axis="x", alpha=0.3)
    return ax
