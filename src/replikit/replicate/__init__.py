"""Replication of a reported performance (seed 000, Vijayakumar & Cheung 2021).

The audit entry :func:`audit` runs the whole replication analysis on a multi-study dataset and
returns a :class:`ReplicationAudit` (numbers, verdict, tables, figures). Its parts: estimates with
uncertainty (R2 by Olkin-Finn, Cohen et al., Lee's approximation, bootstrap;
other metrics), differences of two independent estimates, the three aims (inconsistency,
consistency, combination), meta-analysis with metafor's tau2 estimators, and the two-stage
fold -> study -> population procedure; meta-regression on study-level moderators
(:func:`meta_regression`), heterogeneity intervals, influence diagnostics (:func:`influence`),
small-study effects (:func:`small_study_effects`) and bounded metrics pooled on a transformed
scale (:func:`meta_analysis_on_scale`).

Names are imported lazily from their modules so that ``import replikit.replicate`` stays cheap,
except :func:`audit`, bound here (its module imports nothing heavy), so that
``replikit.replicate.audit`` is the function whichever way the module ``audit`` was first
imported.
"""

from __future__ import annotations

from .._lazy import lazy_exports
from .audit import audit as audit  # eager: see the note on audit.py below
from .influence import influence as influence  # eager, for the same reason (numpy only)

_EXPORTS = {
    "meta_analysis": "meta", "MetaResult": "meta", "tau2_estimate": "meta",
    "tau2_qprofile_ci": "meta", "q_statistic": "meta", "leave_one_out": "meta",
    "TAU2_METHODS": "meta", "PI_DISTS": "meta", "SE_METHODS": "estimates",
    "Estimate": "estimates", "r2_se": "estimates", "r2_confidence_interval": "estimates",
    "r2_cdf_lee": "estimates", "from_summary": "estimates", "from_folds": "estimates",
    "from_predictions": "estimates", "bootstrap_interval": "estimates",
    "Difference": "aims", "difference": "aims", "Inconsistency": "aims", "inconsistency": "aims",
    "Consistency": "aims", "consistency": "aims", "combine": "aims",
    "replication_table": "aims",
    "TwoStage": "twostage", "two_stage": "twostage", "population": "twostage",
    "forest_plot": "plots", "plot_differences": "plots", "plot_simulation": "plots",
    "ReplicationAnalysis": "analysis", "analyze_replications": "analysis",
    "estimates_from_table": "analysis", "meta_from_table": "analysis",
    "simulate_replication": "simulation", "ReplicationSimulation": "simulation",
    # audit.py (audit itself is bound above: importing the submodule binds the package
    # attribute of the same name to the module, which a lazy __getattr__ cannot undo)
    "ReplicationAudit": "audit", "LINEAR_MODEL": "audit", "audit_design": "audit",
    "HoldOutCV": "design", "LabeledFolds": "design",
    "DIFF_INTERVALS": "aims",
    # meta-regression, heterogeneity, influence, small-study effects, transforms (issue 17)
    "meta_regression": "metareg", "MetaRegression": "metareg", "ModeratorTest": "metareg",
    "Heterogeneity": "metareg",
    "Influence": "influence", "baujat": "influence",
    "cumulative": "influence",
    "regression_test": "smallstudy", "RegressionTest": "smallstudy", "rank_test": "smallstudy",
    "RankTest": "smallstudy", "trim_and_fill": "smallstudy", "TrimAndFill": "smallstudy",
    "small_study_effects": "smallstudy", "SmallStudyEffects": "smallstudy",
    "PREDICTORS": "smallstudy",
    "to_scale": "transforms", "from_scale": "transforms", "default_scale": "transforms",
    "meta_analysis_on_scale": "transforms", "ScaledMeta": "transforms", "SCALES": "transforms",
    "funnel_plot": "plots", "bubble_plot": "plots", "influence_plot": "plots",
    "baujat_plot": "plots",
}

__getattr__, _dir, _names = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_names, "audit", "influence"])


def __dir__() -> list[str]:
    return list(__all__)
