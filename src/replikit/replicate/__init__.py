"""Replication of a reported performance (seed 000, Vijayakumar & Cheung 2021).

Estimates with uncertainty (R2 by Olkin-Finn, Cohen et al., Lee's approximation, bootstrap;
other metrics), differences of two independent estimates, the three aims (inconsistency,
consistency, combination), meta-analysis with metafor's tau2 estimators, and the two-stage
fold -> study -> population procedure.
"""

from __future__ import annotations

from .._lazy import lazy_exports

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
    "ReplicationAnalysis": "analysis", "analyse_replications": "analysis",
    "estimates_from_table": "analysis", "meta_from_table": "analysis",
    "simulate_replication": "simulation", "ReplicationSimulation": "simulation",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
