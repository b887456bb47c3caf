"""The experiment layer: resampling schemes (split indices and weight/mask matrices), the runner,
its DuckDB store, the one fit path and seeding rule (``fit.py``), model aliases and test-set
metrics — what every capability uses to fit scikit-learn estimators.

Names are imported lazily from their modules so that ``import replikit.experiment`` stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    # schemes.py
    "Scheme": "schemes", "SplitBlock": "schemes", "Resubstitution": "schemes", "HoldOut": "schemes",
    "RepeatedKFold": "schemes", "LeaveOneOut": "schemes", "FiveByTwo": "schemes",
    "Bootstrap": "schemes", "LeaveOneStudyOut": "schemes", "SklearnScheme": "schemes",
    "Split": "schemes", "parse_scheme": "schemes", "subsample": "schemes",
    # cross_study.py (schemes across studies)
    "CrossStudy": "cross_study", "StudyHoldOut": "cross_study", "StudyPlan": "cross_study",
    # runner.py
    "run": "runner", "RunResult": "runner", "study_split_rng": "runner",
    # fit.py
    "check_Xy": "fit", "seed_estimator": "fit", "fit_predict": "fit", "FitPrediction": "fit",
    # store.py
    "TaskStore": "store", "check_store": "store",
    # metrics.py
    "METRICS": "metrics", "HIGHER_IS_BETTER": "metrics", "higher_is_better": "metrics",
    "check_metrics": "metrics", "compute_metric": "metrics", "primary_metric": "metrics",
    "metric_label": "metrics", "METRIC_LABELS": "metrics",
    # survival.py (targets and metrics of censored time-to-event outcomes)
    "survival_target": "survival", "is_survival_target": "survival",
    "target_parts": "survival", "evaluation_times": "survival", "SURVIVAL_DTYPE": "survival",
    "concordance_index": "survival", "concordance_index_ipcw": "survival",
    "cumulative_dynamic_auc": "survival", "brier_score": "survival",
    "integrated_brier_score": "survival", "SURVIVAL_METRICS": "survival",
    "survival_higher_is_better": "survival", "ConcordanceResult": "survival",
    "CumulativeDynamicAUCResult": "survival", "BrierScoreResult": "survival",
    # survival_models.py (lifelines fitters as estimators; S(t | x) of any survival model)
    "LifelinesModel": "survival_models", "StepFunction": "survival_models",
    "survival_probabilities": "survival_models",
    # scoring.py
    "scores_from_predictions": "scoring", "primary_metric_of": "scoring",
    # models.py
    "MODEL_ALIASES": "models", "make_model": "models", "make_models": "models",
    "default_models": "models", "SurvivalBaseline": "models", "SURVIVAL_ALIASES": "models",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
