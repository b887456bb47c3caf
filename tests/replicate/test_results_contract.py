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

#: Public functions of the package that compute no statistical method (so cite no paper):
#: none of the meta-analysis engine's (its plots cite the papers whose figures they draw).
NO_METHOD: dict[str, str] = {}


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
    assert "Q(12)" in fe and "I²" in fe and "Fixed-effect" in fe


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


# ---------------------------------------------------------------------------------------------
# the replication half: estimates, differences, the three aims, two stages, the simulation,
# the audit entry


def _estimates():
    from replikit.replicate import from_summary

    return [from_summary(estimate=v, se=0.02, label=s)
            for s, v in (("2002", 0.41), ("2004", 0.38), ("2006", 0.30))]


def _difference():
    from replikit.replicate import difference

    o, r, _ = _estimates()
    return difference(o, r)


def _inconsistency():
    from replikit.replicate import inconsistency

    o, _, r = _estimates()
    return inconsistency(o, r)


def _consistency():
    from replikit.replicate import consistency

    o, r, _ = _estimates()
    return consistency(o, r, tolerance=0.1)


def _analysis():
    from replikit.replicate import analyze_replications

    return analyze_replications({("lr", "test"): _estimates()}, "2002")


def _two_stage():
    import pandas as pd

    from replikit.replicate import two_stage

    folds = pd.DataFrame({"study": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
                          "value": [0.40, 0.42, 0.38, 0.45, 0.43, 0.47, 0.39, 0.41, 0.40],
                          "n_test": 100})
    return two_stage(folds)


def _simulation():
    import numpy as np

    from replikit.replicate import simulate_replication

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    y = X @ np.array([1.0, 0.5, 0.2]) + rng.normal(size=1500)
    return simulate_replication(X, y, models=("lr",), n_per_study=200, n_studies=4,
                                n_repeats=2, deltas=(0.2,), tolerances=(0.1,), random_state=0)


def _audit():
    import numpy as np
    import pandas as pd

    from replikit.data.userdata import dataset_from_frame
    from replikit.replicate import audit

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(600, 2)), columns=["x1", "x2"])
    df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=600)
    df["year"] = np.repeat([1990, 1992, 1994], 200)
    return audit(dataset_from_frame(df, target="y", study="year"), models={}, quick=True,
                 random_state=0)


def _reported():
    import pandas as pd

    from replikit.replicate import analyze_reported

    table = pd.DataFrame({"study": ["o", "a", "b"], "r": [0.30, 0.25, 0.35],
                          "n": [200, 300, 250], "role": ["original", "replication",
                                                         "replication"]})
    return analyze_reported(table)


def _multilevel():
    from replikit.replicate import multilevel_meta_analysis

    d = pd.read_csv(REF / "dat_konstantopoulos2011.csv")
    return multilevel_meta_analysis(d["yi"], d["vi"], clusters=[d["district"], d["school"]])


FACTORIES.update({
    "MultilevelMeta": _multilevel,
    "RobustResult": lambda: _multilevel().robust(method="CR2"),
    "ReportedAnalysis": _reported,
    "Estimate": lambda: _estimates()[0],
    "Difference": _difference,
    "Inconsistency": _inconsistency,
    "Consistency": _consistency,
    "ReplicationAnalysis": _analysis,
    "TwoStage": _two_stage,
    "ReplicationSimulation": _simulation,
    "ReplicationAudit": _audit,
})

NO_METHOD.update({
    "audit_design": "the within-study fits the audit makes (a scheme and metrics), no statistic",
    "replication_row": "the columns of one row of a replication table",
})


@pytest.mark.parametrize("name", ["Estimate", "Difference", "Inconsistency", "Consistency"])
def test_replication_results_hold_their_interval(name):
    from replikit.results import ConfidenceInterval

    res = FACTORIES[name]()
    ci = res.confidence_interval()
    assert isinstance(ci, ConfidenceInterval)
    if hasattr(res, "ci_low"):  # the tests hold their interval at their own level
        assert (ci.low, ci.high) == (res.ci_low, res.ci_high)
        assert "ci" not in {f.name for f in __import__("dataclasses").fields(res)}
    assert_plain(str(res))


def test_replication_figures_are_axes():
    from matplotlib.axes import Axes

    from replikit._plotting import new_axes

    assert isinstance(FACTORIES["ReplicationAnalysis"]().plot(ax=new_axes()), Axes)
    panels = FACTORIES["ReplicationSimulation"]().plot(ax=new_axes(), measure="test")
    assert all(isinstance(a, Axes) for a in np.ravel(panels))
    audit = FACTORIES["ReplicationAudit"]()
    for kind in ("forest", "differences"):
        assert isinstance(audit.plot(ax=new_axes(), kind=kind), Axes)
    assert audit.verdict.label and audit.to_dict()["verdict"]["label"] == audit.verdict.label
