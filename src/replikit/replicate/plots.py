"""Figures of the replication analysis: metafor-style forest, funnel, bubble, Baujat and
influence plots, differences and the simulation's panels.

This is the public façade: each function checks its argument and draws through the result's
own ``plot()`` or the private drawing module :mod:`replikit.replicate._draw`, which takes plain
arrays; matplotlib is imported lazily. Every function takes ``ax=None`` and returns the Axes
(an ndarray of Axes for the multi-panel figures).
"""

from __future__ import annotations

from .._compat import renamed
from .._validation import check_confidence_level
from ..errors import DataError, ParameterTypeError
from . import _draw
from .influence import Influence, baujat
from .meta import MetaResult
from .metareg import MetaRegression
from .smallstudy import _funnel
from .transforms import _inverse

__all__ = ["forest_plot", "plot_differences", "plot_simulation", "funnel_plot", "bubble_plot",
           "influence_plot", "baujat_plot"]


def forest_plot(result: MetaResult, *, ax=None, confidence_level: float = 0.95,
                refline: float | None = 0.0, prediction_interval: bool = True,
                xlabel: str = "estimate", digits: int = 2, title: str | None = None,
                transform=None):
    """Forest plot in the layout of metafor's ``forest.rma``.

    Study labels on the left, ``estimate [low, high]`` on the right, squares with area
    proportional to the weight, a diamond for the pooled estimate labelled by model
    (``'FE Model'`` / ``'RE Model (REML)'``), an optional dotted prediction interval through the
    diamond, a dotted reference line, and a caption with the Q test, I² and τ².

    Parameters
    ----------
    result : MetaResult
        The meta-analysis.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    confidence_level : float, default 0.95
        Level of the study and pooled intervals.
    refline : float or None, default 0.0
        x of the reference line (0 for differences; None for none), on the drawn scale.
    prediction_interval : bool, default True
        Draw the prediction interval of a random-effects model.
    xlabel : str, default 'estimate'
        Label of the x axis.
    digits : int, default 2
        Decimals of the right-hand text.
    title : str, optional
        A title above the caption line.
    transform : callable or str, optional
        Back-transform applied to every drawn value and interval bound (metafor's ``transf``):
        a function such as ``numpy.exp``, or a scale of :mod:`replikit.replicate.transforms`
        (``'logit'``, ``'r2_z'``, ...) whose inverse is applied.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.

    See Also
    --------
    MetaResult.plot : The same figure from the result.
    funnel_plot : Estimates against their standard errors.

    References
    ----------
    .. [1] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.41, 0.38, 0.45], se=[0.03, 0.04, 0.03], labels=["A", "B", "C"])
    >>> ax = forest_plot(res, refline=None)
    >>> ax.get_xlabel()
    'estimate'
    """
    if not isinstance(result, MetaResult):
        raise ParameterTypeError(f"`result` must be a MetaResult (from meta_analysis); got "
                                 f"{type(result).__name__}.")
    return result.plot(ax, confidence_level=confidence_level, refline=refline,
                       prediction_interval=prediction_interval, xlabel=xlabel, digits=digits,
                       title=title, transform=_inverse(transform))


def plot_differences(table, *, ax=None, bounds: tuple[float, float] | None = None,
                     low: str = "ci_low", high: str = "ci_high", label: str = "replication",
                     title: str | None = None):
    """Differences ``replication - original`` with their intervals, one row per replication.

    An interval that misses 0 marks an inconsistent replication; one inside the region of
    equivalence a consistent one (Vijayakumar & Cheung 2021, Figures 3, 4 and 6).

    Parameters
    ----------
    table : DataFrame
        One row per replication with ``difference`` and the interval columns ``low``/``high``
        (e.g. from :func:`~replikit.replicate.replication_table`).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    bounds : (float, float), optional
        Region of equivalence, drawn as dashed green lines.
    low, high, label : str
        Column names of the interval's ends and of the row labels.
    title : str, optional
        The title.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.

    See Also
    --------
    forest_plot : Studies and the pooled estimate.

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"replication": ["B", "C"], "difference": [-0.03, 0.02],
    ...                       "ci_low": [-0.09, -0.04], "ci_high": [0.03, 0.08]})
    >>> ax = plot_differences(table, bounds=(-0.05, 0.05))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['B', 'C']
    """
    from .._plotting import axes_or_new

    for col in ("difference", low, high, label):
        if col not in table.columns:
            raise DataError(f"`table` needs a {col!r} column; got {list(table.columns)}.")
    ax = axes_or_new(ax, 6.0, 1.2 + 0.3 * len(table))
    return _draw.differences(ax, difference=table["difference"].to_numpy(float),
                             low=table[low].to_numpy(float), high=table[high].to_numpy(float),
                             labels=table[label].tolist(), bounds=bounds, title=title)


@renamed(margin="tolerance")
def plot_simulation(result, ax=None, *, measure: str = "cv", procedure: str = "inconsistency",
                    tolerance: float | None = None, n_changed: int | None = None,
                    stage2: str = "random", fig=None):
    """The simulation's figures (Vijayakumar & Cheung 2021, Figures 9-12), one panel per model.

    x is the reduction of R² in the non-replications; solid lines are replications, dashed
    non-replications; one colour per pooling of the folds (CV) or one line (test); error bars
    are Monte-Carlo standard errors.

    Parameters
    ----------
    result : ReplicationSimulation
        The simulation (:func:`~replikit.replicate.simulate_replication`).
    ax : matplotlib Axes, optional
        The panels take its place in its figure (default: a new figure).
    measure : {'cv', 'test'}, default 'cv'
        Cross-validation or test-set R².
    procedure : {'inconsistency', 'consistency', 'captured'}, default 'inconsistency'
        What the proportion counts.
    tolerance : float, optional
        Region of equivalence for ``'consistency'`` (default: the largest simulated).
    n_changed : int, optional
        Number of non-replications (default: the largest simulated).
    stage2 : {'fixed', 'random'}, default 'random'
        Population pooling for ``'captured'``.
    fig : matplotlib Figure, optional
        Draw the panels into this figure instead.

    Returns
    -------
    ndarray of matplotlib Axes
        One panel per model.

    See Also
    --------
    replikit.replicate.ReplicationSimulation.plot : The same figure.
    plot_differences : The differences of one analysis.

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801.

    Examples
    --------
    >>> from replikit.replicate import simulate_replication
    >>> sim = simulate_replication(n_studies=4, n_per_study=200, random_state=0)  # doctest: +SKIP
    >>> axes = plot_simulation(sim, measure="test")  # doctest: +SKIP
    """
    if not callable(getattr(result, "plot", None)) or not hasattr(result, "table"):
        raise ParameterTypeError("`result` must be a ReplicationSimulation "
                                 f"(simulate_replication); got {type(result).__name__}.")
    return result.plot(ax, measure=measure, procedure=procedure, tolerance=tolerance,
                       n_changed=n_changed, stage2=stage2, fig=fig)


def funnel_plot(result: MetaResult, *, ax=None, trimfill=None, regression=None, contours=None,
                refline: float | None = None, confidence_level: float = 0.95,
                xlabel: str = "estimate", title: str | None = None):
    """Funnel plot: estimates against their standard errors (metafor's ``funnel``).

    The vertical axis is the standard error, 0 at the top (Sterne & Egger 2001); the pseudo
    confidence region ``refline ± z se`` is the triangle where about 95% of the studies fall
    without heterogeneity and small-study effects.

    Parameters
    ----------
    result : MetaResult
        The meta-analysis.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    trimfill : TrimAndFill, optional
        Draw its imputed studies (open circles) and its pooled estimate (dashed line).
    regression : RegressionTest, optional
        Draw the fitted line of an SE-predictor regression test (Egger's line).
    contours : sequence of float, optional
        Contour-enhanced funnel (Peters et al. 2008): shade the regions where a study's
        two-sided p-value against 0 is above ``1 - c`` for each confidence level ``c`` (e.g.
        ``(0.90, 0.95, 0.99)``); the pseudo confidence region is then centred at 0.
    refline : float, optional
        Centre of the pseudo confidence region (default: the pooled estimate; 0 with
        ``contours``).
    confidence_level : float, default 0.95
        Level of the pseudo confidence region.
    xlabel : str, default 'estimate'
        Label of the x axis.
    title : str, optional
        The title (default: the model and k).

    Returns
    -------
    matplotlib Axes
        The axes drawn on.

    See Also
    --------
    small_study_effects : The tests whose results the plot can show.
    forest_plot : Studies and the pooled estimate.

    References
    ----------
    .. [1] Sterne, J. A. C. & Egger, M. (2001). Funnel Plots for Detecting Bias in
       Meta-Analysis: Guidelines on Choice of Axis. Journal of Clinical Epidemiology, 54(10),
       1046–1055.
    .. [2] Peters, J. L., Sutton, A. J., Jones, D. R., Abrams, K. R. & Rushton, L. (2008).
       Contour-Enhanced Meta-Analysis Funnel Plots Help Distinguish Publication Bias from
       Other Causes of Asymmetry. Journal of Clinical Epidemiology, 61(10), 991–996.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> res = meta_analysis([0.9, 0.6, 0.5, 0.3, 0.25], se=[0.4, 0.3, 0.25, 0.12, 0.1])
    >>> ax = funnel_plot(res, contours=(0.90, 0.95, 0.99))
    >>> ax.get_ylabel()
    'standard error'
    """
    if not isinstance(result, MetaResult):
        raise ParameterTypeError("`result` must be a MetaResult (meta_analysis); got "
                                 f"{type(result).__name__}.")
    check_confidence_level(confidence_level)
    return _funnel(result, ax, trimfill=trimfill, regression=regression, contours=contours,
                   refline=refline, confidence_level=confidence_level, xlabel=xlabel,
                   title=title)


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
        The meta-regression.
    moderator : str, optional
        A numeric moderator (default: the first one).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    confidence_level : float, default 0.95
        Level of the bands.
    prediction_interval : bool, default True
        Draw the prediction band.
    transform : callable or str, optional
        Back-transform of the drawn values (e.g. ``numpy.exp``, or a scale name of
        :mod:`replikit.replicate.transforms`).
    xlabel : str, optional
        Label of the x axis (default: the moderator).
    ylabel : str, default 'estimate'
        Label of the y axis.
    title : str, optional
        A title above the caption line.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.

    See Also
    --------
    MetaRegression.plot : The same figure from the result.

    References
    ----------
    .. [1] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> from replikit.replicate import meta_regression
    >>> fit = meta_regression([0.1, 0.3, 0.35, 0.65, 0.45, 0.15],
    ...                       [0.01, 0.02, 0.015, 0.01, 0.02, 0.03],
    ...                       moderators={"dose": [1, 2, 3, 6, 4, 1]})
    >>> ax = bubble_plot(fit, "dose")
    >>> ax.get_xlabel()
    'dose'
    """
    if not isinstance(fit, MetaRegression):
        raise ParameterTypeError("`fit` must be a MetaRegression (meta_regression); got "
                                 f"{type(fit).__name__}.")
    return fit.plot(moderator, ax=ax, confidence_level=confidence_level,
                    prediction_interval=prediction_interval, transform=_inverse(transform),
                    xlabel=xlabel, ylabel=ylabel, title=title)


def influence_plot(inf: Influence, *, ax=None, fig=None, title: str | None = None):
    """The influence diagnostics against the studies, one panel each (metafor's
    ``plot.infl.rma.uni``); influential studies in vermillion, thresholds dashed.

    Parameters
    ----------
    inf : Influence
        The diagnostics (:func:`~replikit.replicate.influence`).
    ax : matplotlib Axes, optional
        The panels take its place in its figure (default: a new figure).
    fig : matplotlib Figure, optional
        Draw the panels into this figure instead.
    title : str, optional
        The figure's title.

    Returns
    -------
    ndarray of matplotlib Axes
        The 4 x 2 panels.

    See Also
    --------
    baujat_plot : Heterogeneity contribution against influence.

    References
    ----------
    .. [1] Viechtbauer, W. & Cheung, M. W. (2010). Outlier and Influence Diagnostics for
       Meta-Analysis. Research Synthesis Methods, 1(2), 112–125.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis, influence
    >>> axes = influence_plot(influence(meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25],
    ...                                               [0.01, 0.02, 0.015, 0.01, 0.02])))
    >>> axes.shape
    (4, 2)
    """
    if not isinstance(inf, Influence):
        raise ParameterTypeError(f"`inf` must be an Influence (influence); got "
                                 f"{type(inf).__name__}.")
    return inf.plot(ax, fig=fig, title=title)


def baujat_plot(result, *, ax=None, title: str | None = None):
    """Baujat plot: contribution to the heterogeneity statistic (x) against influence on the
    pooled result (y), one point per study (metafor's ``baujat``).

    Parameters
    ----------
    result : MetaResult or MetaRegression
        The fitted model.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    title : str, optional
        The title.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.

    See Also
    --------
    baujat : The coordinates.
    influence_plot : Every leave-one-out diagnostic.

    References
    ----------
    .. [1] Baujat, B., Mahé, C., Pignon, J. & Hill, C. (2002). A Graphical Method for
       Exploring Heterogeneity in Meta-Analyses: Application to a Meta-Analysis of 65 Trials.
       Statistics in Medicine, 21(18), 2641–2652.

    Examples
    --------
    >>> from replikit.replicate import meta_analysis
    >>> ax = baujat_plot(meta_analysis([0.1, 0.3, 0.35, 1.2, 0.25],
    ...                                [0.01, 0.02, 0.015, 0.01, 0.02]))
    >>> ax.get_xlabel()
    'contribution to the Q statistic'
    """
    from .._plotting import axes_or_new

    b = baujat(result)
    ax = axes_or_new(ax, 5.0, 4.0)
    return _draw.baujat(ax, x=b["x"], y=b["y"], labels=b["label"],
                        title=title or "Baujat plot")
