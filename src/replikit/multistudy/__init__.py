"""Replicability of a prediction rule across studies, for its users (Parmigiani 2023).

A fixed rule φ is applied to studies S_1..S_K. :func:`study_utilities` gives each study's average
utility ``U_k`` for a user (eqs. 1–4); the K×K matrix ``U_k − U_k'`` and the smallest tolerance
ε of absolute and relative ε-replicability (Defs. 3.1, 3.2) follow; :func:`dominance` compares
two rules (Def. 3.3); :func:`distance_matrix` measures distance replicability (Def. 5.1);
:func:`resample_replicability` and :func:`permutation_test` add uncertainty and tests (sec. 6);
:func:`epsilon_test` tests ε-replicability within a practical ``tolerance`` (an
intersection–union test of pairwise TOSTs; Berger 1982) and gives the smallest ε shown at level
α with a bias-aware estimate of the spread; :func:`replicated_in` counts the studies a finding
holds in (partial conjunctions with FDR control, Benjamini & Heller 2008) and :func:`r_values`
adjusts follow-up studies (Heller, Bogomolov & Benjamini 2014); :func:`cross_study_matrix`
(Bernau et al. 2014), :func:`leave_one_study_out` and :func:`multistudy_stacking` (Patil &
Parmigiani 2018) assess training techniques (secs. 7.4, 7.6). :func:`assess` runs the whole
analysis of a fixed rule's predictions; :func:`audit` is the entry from data and models (the
audit report's section): it trains each model once on half of every study, assesses the best
rule, and runs cross-study validation and leave-one-study-out of its training technique.

:class:`PermutationMethod` is :class:`replikit.methods.PermutationMethod`, re-exported here.
"""

from __future__ import annotations

from .._lazy import lazy_exports
from .audit import audit as audit

_EXPORTS = {
    "MultiStudyData": "_data", "from_arrays": "_data", "from_estimator": "_data",
    "from_predictions": "_data", "load_predictions": "_data",
    "study_labels_as_text": "_data",
    "Utility": "utilities", "accuracy": "utilities", "error_cost": "utilities",
    "squared": "utilities", "absolute": "utilities", "log_score": "utilities",
    "brier": "utilities",
    "custom_utility": "utilities", "parse_utility": "utilities",
    "optimal_threshold": "utilities", "study_utilities": "utilities",
    "StudyUtilities": "utilities", "unit_utilities": "utilities",
    "check_utility_data": "utilities",
    "total_variation": "measures", "energy_distance": "measures", "DistanceMatrix": "measures",
    "distance_matrix": "measures", "DominanceResult": "measures", "dominance": "measures",
    "BenchmarkComparison": "measures", "benchmark_comparison": "measures",
    "local_replicability": "measures",
    "ResampleResult": "inference", "resample_replicability": "inference",
    "PermutationResult": "inference", "permutation_test": "inference",
    "PermutationMethod": "inference",
    "CrossStudyResult": "training", "cross_study_matrix": "training",
    "LeaveOneStudyOutResult": "training", "leave_one_study_out": "training",
    "StackingResult": "training", "multistudy_stacking": "training",
    "get_metric": "training",
    "SurvivalCrossStudy": "survival", "audit_survival": "survival",
    "DEFAULT_C_TOLERANCE": "survival",
    "Assessment": "analysis", "assess": "analysis",
    "EpsilonTest": "equivalence", "epsilon_test": "equivalence",
    "spread_estimates": "equivalence",
    "partial_conjunction": "conjunction", "bh_adjust": "conjunction",
    "r_values": "conjunction", "ReplicatedIn": "conjunction", "replicated_in": "conjunction",
    "study_pvalues": "conjunction",
    # audit.py (audit itself is bound above: importing the submodule binds the package
    # attribute of the same name to the module, which a lazy __getattr__ cannot undo)
    "MultiStudyAudit": "audit", "audit_predictions": "audit",
}

__getattr__, _dir, _names = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_names, "audit"])


def __dir__() -> list[str]:
    return list(__all__)
