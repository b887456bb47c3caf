"""Will a reported performance hold up in another study? The replication of a result, after
Vijayakumar & Cheung (2021).

Start with :func:`audit`: on a dataset with several studies (survey years, sites) it takes the
first study as the original and every other one as a replication, fits a linear model (and any
models you give) the same way in each, and answers three questions about their R² — does a
replication contradict the original (:func:`inconsistency`), does it confirm it within a
tolerance you choose (:func:`consistency`), and what do all studies say together
(:func:`combine`, a meta-analysis). It returns a :class:`ReplicationAudit` with a verdict, tables
and figures.

The parts work on their own too:

* estimates with their uncertainty — from a reported number (:func:`from_summary`), from
  cross-validation folds (:func:`from_folds`) or from predictions (:func:`from_predictions`) —
  and the difference of two of them (:func:`difference`);
* the three aims for many models and studies at once (:func:`estimates_from_table`,
  :func:`analyze_replications`) and the two-stage pooling of folds, then studies
  (:func:`two_stage`);
* meta-analysis as in R's metafor (Viechtbauer 2010): :func:`meta_analysis`,
  :func:`meta_regression` on study-level moderators, heterogeneity intervals, influence
  diagnostics (:func:`influence`), small-study effects (:func:`small_study_effects`) and bounded
  metrics pooled on a transformed scale (:func:`meta_analysis_on_scale`);
* several effects per study (folds, repeats, datasets): the multilevel meta-analysis of
  metafor's ``rma.mv`` (:func:`multilevel_meta_analysis`) and cluster-robust standard errors
  (``.robust()``, CR1 or CR2);
* reported estimates (a correlation, R², accuracy or AUC with n, a survival model's C-index
  with its SE or interval, as papers print them): effect sizes and sampling variances as
  metafor's ``escalc`` (:func:`effects_from_reported`) and the three aims on them
  (:func:`analyze_reported`);
* Study 2 of the paper, a simulation of how well these procedures tell replications from
  non-replications (:func:`simulate_replication`).

Names are imported when first used, so ``import replikit.replicate`` stays cheap; :func:`audit`
and :func:`influence` are bound at once, so that ``replikit.replicate.audit`` is the function
whichever way its module was first imported.
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
    "r2_cdf_lee": "estimates", "r2_delta_se": "estimates", "from_summary": "estimates",
    "from_folds": "estimates",
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
    # meta-regression, heterogeneity, influence, small-study effects, transforms
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
    # reported study-level estimates: escalc-style effects and their replication
    "effects_from_reported": "reported", "analyze_reported": "reported",
    "ReportedAnalysis": "reported", "MEASURES": "reported", "METRIC_MEASURES": "reported",
    "DEFAULT_REPORTED_TOLERANCE": "reported", "MEASURE_SCALES": "reported",
    # several effects per study: multilevel meta-analysis and cluster-robust inference
    "multilevel_meta_analysis": "multilevel", "MultilevelMeta": "multilevel",
    "RobustResult": "multilevel", "ROBUST_METHODS": "multilevel",
    "multilevel_from_table": "analysis",
}

__getattr__, _dir, _names = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_names, "audit", "influence"])


def __dir__() -> list[str]:
    return list(__all__)
