"""Every public result of the replication capability keeps the contract of
:class:`replikit.results.Result` (``_checks.check_result``).

Meta-analysis engine: MetaResult, MetaRegression, ModeratorTest, Heterogeneity, Influence,
RegressionTest, RankTest, TrimAndFill, SmallStudyEffects, ScaledMeta (the replication half's
results are appended below by its own section).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _checks import assert_plain, check_result

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG = pd.read_csv(REF / "dat_bcg.csv")
Y, V = BCG["yi"].to_numpy(), BCG["vi"].to_numpy()


def _meta():
    from replikit.replicate import meta_analysis

    return meta_analysis(Y, V, labels=BCG["author"], tau2_method="REML")


def _metareg():
    from replikit.replicate import meta_regression

    return meta_regression(Y, V, moderators=BCG[["ablat", "alloc"]], interval="knha")


def _small_study():
    from replikit.replicate import small_study_effects

    return small_study_effects(_meta())


def _scaled():
    from replikit.replicate import meta_analysis_on_scale

    return meta_analysis_on_scale([0.91, 0.95, 0.88, 0.97, 0.9], [0.02, 0.01, 0.03, 0.01, 0.02],
                                  metric="roc_auc", tau2_method="DL")


def _influence():
    from replikit.replicate import influence

    return influence(_meta())


#: One small real instance of each public result type of the package (meta-analysis engine).
FACTORIES = {
    "MetaResult": _meta,
    "MetaRegression": _metareg,
    "ModeratorTest": lambda: _metareg().test_moderators("ablat"),
    "Heterogeneity": lambda: _meta().heterogeneity(),
    "Influence": _influence,
    "RegressionTest": lambda: _small_study().egger,
    "RankTest": lambda: _small_study().rank,
    "TrimAndFill": lambda: _small_study().trimfill,
    "SmallStudyEffects": _small_study,
    "ScaledMeta": _scaled,
}

#: Public functions of the package that compute no statistical method (so cite no paper).
NO_METHOD: dict[str, str] = {
    "default_scale": "looks up the scale a metric is pooled on",
    "from_scale": "the inverse of a transform (to_scale cites the delta method's sources)",
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_meta_result_prints_estimator_q_test_and_i2():
    res = _meta()
    text = str(res)
    for words in ("restricted maximum likelihood", "Q(12)", "I²", "τ²", "Q-profile"):
        assert words in text, words
    assert_plain(text)
    assert res.title == "Random-effects meta-analysis (REML, k = 13)"
    from replikit.replicate import meta_analysis

    fe = str(meta_analysis(Y, V, tau2_method="FE"))
    assert "Q(12)" in fe and "I²" in fe and "fixed-effect" in fe


def test_meta_regression_interval_of_a_coefficient():
    fit = _metareg()
    frame = fit.to_frame(0.9).set_index("term")
    assert fit.names[1] == "ablat"
    for ci in (fit.confidence_interval(0.9), fit.confidence_interval(0.9, coefficient="ablat"),
               fit.confidence_interval(0.9, coefficient=1)):
        assert (ci.low, ci.high) == tuple(frame.loc["ablat", ["ci_low", "ci_high"]])
    data = fit.to_dict()
    json.dumps(data, allow_nan=False)
    assert [r["term"] for r in data["coefficients"]] == list(fit.names)


def test_moderator_test_interval_uses_the_f_denominator_df():
    from scipy import stats

    test = _metareg().test_moderators("ablat")
    assert test.distribution == "F" and test.df == 1 and test.df2 == 9
    half = stats.t.ppf(0.975, 9) * test.se
    ci = test.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((test.estimate - half, test.estimate + half))
    assert test.statistic == pytest.approx((test.estimate / test.se) ** 2)


def test_plots_return_axes_and_influence_returns_its_panels():
    from matplotlib.axes import Axes

    from replikit._plotting import new_axes
    from replikit.replicate import (
        baujat_plot,
        bubble_plot,
        forest_plot,
        funnel_plot,
        influence_plot,
    )

    res = _meta()
    for ax in (forest_plot(res, ax=new_axes()), funnel_plot(res, ax=new_axes()),
               baujat_plot(res, ax=new_axes()), bubble_plot(_metareg(), ax=new_axes()),
               _scaled().plot(new_axes()), res.plot(new_axes())):
        assert isinstance(ax, Axes)
    ax = new_axes()
    fig = ax.figure
    panels = influence_plot(_influence(), ax=ax)
    assert panels.shape == (4, 2) and all(isinstance(a, Axes) for a in panels.flat)
    assert panels.flat[0].figure is fig and ax not in fig.axes
    assert panels.flat[0].get_ylabel() == "studentized residual"


def test_forest_caption_in_plain_notation():
    ax = _meta().plot()
    title = ax.get_title(loc="left")
    assert "I² = 92" in title and "τ² = 0.313" in title and "Q(12) = 152.2" in title
    assert_plain(title)


def test_no_import_cycle_between_the_engine_modules():
    """_rma and _draw import nothing from replikit.replicate; the results call down."""
    import ast

    import replikit.replicate as pkg

    root = Path(pkg.__file__).parent
    for name in ("_rma", "_draw"):
        tree = ast.parse((root / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                assert node.module in (None, "_rma") and name != "_rma", \
                    f"{name} imports .{node.module}"
