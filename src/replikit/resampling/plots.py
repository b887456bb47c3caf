"""Figures of prediction-error estimates (matplotlib, imported lazily)."""

from __future__ import annotations

import numpy as np

from .._plotting import axes_or_new as _axes

__all__ = ["plot_experiment_densities", "plot_error_estimates"]




def plot_experiment_densities(result, *, ax=None, include_extra: bool = False):
    """Smoothed densities of each estimator's errors over the datasets of the seed-003
    experiment (Etherington & Lieske 2019, Figure 1): Gaussian kernel density estimates with
    ``scipy.stats.gaussian_kde(bw_method=1)``, i.e. a bandwidth factor of 1, as the paper.

    Parameters
    ----------
    result : ResamplingExperiment
    ax : matplotlib Axes, optional
    include_extra : bool
        Also draw the estimators not in the paper (eq. 7 and .632+).

    Returns
    -------
    matplotlib Axes
    """
    from scipy.stats import gaussian_kde

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
        ax.plot(grid, gaussian_kde(values, bw_method=1)(grid), label=label, lw=1.4)
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
        Columns ``model``, ``method``, ``estimate`` and optionally ``se`` (drawn as ±1 SE).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, 7.0, 3.6)
    models = list(dict.fromkeys(frame["model"]))
    methods = list(dict.fromkeys(frame["method"]))
    width = 0.8 / max(1, len(methods))
    for j, method in enumerate(methods):
        sub = frame[frame["method"] == method].set_index("model").reindex(models)
        x = np.arange(len(models)) + (j - (len(methods) - 1) / 2) * width
        se = sub["se"].to_numpy(float) if "se" in sub else None
        err = None if se is None or np.all(np.isnan(se)) else np.nan_to_num(se)
        ax.bar(x, sub["estimate"].to_numpy(float), width, yerr=err, label=method,
               capsize=2)
    ax.set_xticks(np.arange(len(models)), models)
    ax.set_ylabel("estimated prediction error")
    ax.legend(fontsize=7, frameon=False, ncols=min(3, len(methods)))
    ax.grid(axis="y", alpha=0.3)
    return ax
