"""Valid statistical comparison of two or more models (Gardner & Brooks 2017).

Tests on resampled scores (corrected resampled and corrected repeated k-fold t, 5x2cv t and F,
sorted runs, the Bayesian correlated t, a TOST equivalence test, and the naive t and
difference-in-proportions z flagged invalid), tests on hold-out predictions (McNemar,
Cochran's Q), two fitted models on one test set for any metric (the paired bootstrap and the
approximate randomization test), unpaired comparisons of scores from different splits or
samples (the Welch-type corrected resampled t, Welch's t), permutation tests, multiple
comparisons across datasets (Friedman, Nemenyi, Wilcoxon-Holm, and Skillings-Mack when some
models miss some datasets; Bonferroni-Dunn against a control with effect sizes; the Bayesian
signed-rank test and the Bayesian hierarchical model over datasets; the Bayesian Plackett–Luce
model of the rankings of several models, :func:`plackett_luce`), a calibration simulation of
the tests, and the convenience layer :func:`compare_scores` / :func:`compare_models` that runs
the recommended tests for every pair of models and returns one tidy :class:`ComparisonTable`.

The audit entry :func:`audit` runs the comparison recipe of the audit report on a dataset and
returns a :class:`ComparisonAudit` with the numbers, a verdict, ``to_frame()`` and ``plot()``;
:func:`audit_scores` runs the same recipe on per-fold scores a user already has.

Names are imported lazily from their modules so that ``import replikit.compare`` stays cheap,
except :func:`audit`: it is bound here (its module imports nothing heavy), so that
``replikit.compare.audit`` is the function whichever way the module ``audit`` was first
imported (importing a submodule binds the package attribute of the same name to the module,
which a lazy ``__getattr__`` cannot undo).
"""

from __future__ import annotations

from .._lazy import lazy_exports
from .audit import audit as audit  # re-export, bound eagerly (see above)

_EXPORTS = {
    # audit.py (audit itself is bound above)
    "ComparisonAudit": "audit", "audit_design": "audit", "audit_scores": "audit",
    # _result.py
    "ComparisonResult": "_result", "BayesianResult": "_result",
    # _pairing.py
    "Paired": "_pairing", "paired_scores": "_pairing",
    # resampled.py
    "corrected_resampled_ttest": "resampled", "corrected_repeated_kfold_ttest": "resampled",
    "paired_ttest_5x2cv": "resampled", "combined_ftest_5x2cv": "resampled",
    "sorted_runs_ttest": "resampled", "naive_paired_ttest": "resampled",
    "proportions_ztest": "resampled", "equivalence_ttest": "resampled",
    "bayesian_correlated_ttest": "resampled", "corrected_ttest_from_stats": "resampled",
    "equivalence_test_from_stats": "resampled",
    # predictions.py
    "PredictionTestResult": "predictions", "mcnemar_table": "predictions",
    "mcnemar_test": "predictions", "mcnemar_test_from_table": "predictions",
    "mcnemar_test_from_predictions": "predictions", "cochrans_q_test": "predictions",
    "cochrans_q_test_from_predictions": "predictions", "looney_ftest": "predictions",
    "looney_ftest_from_predictions": "predictions",
    # testset.py
    "TestSetResult": "testset", "paired_bootstrap_test": "testset",
    "randomization_test": "testset", "paired_bootstrap_test_from_predictions": "testset",
    "randomization_test_from_predictions": "testset",
    # unpaired.py
    "unpaired_corrected_ttest": "unpaired", "welch_ttest": "unpaired",
    "welch_satterthwaite": "unpaired",
    # multiple.py
    "adjust_pvalues": "multiple", "friedman_test": "multiple", "FriedmanResult": "multiple",
    "nemenyi_test": "multiple", "NemenyiResult": "multiple",
    "skillings_mack_test": "multiple",
    "critical_difference": "multiple", "wilcoxon_holm": "multiple",
    "scores_to_table": "multiple",
    # across.py
    "AcrossStudies": "across", "compare_across_studies": "across",
    # bayesian.py
    "BayesianComparison": "bayesian", "bayesian_signed_rank_test": "bayesian",
    "hierarchical_test": "bayesian", "hierarchical_test_from_arrays": "bayesian",
    # rankings.py (not plackett_luce.py: a module named like its function would shadow it)
    "PlackettLuceResult": "rankings", "plackett_luce": "rankings",
    # benchmark.py
    "BenchmarkComparison": "benchmark", "compare_benchmark": "benchmark",
    "read_benchmark": "benchmark",
    # control.py
    "ControlResult": "control", "bonferroni_dunn_test": "control",
    "bonferroni_dunn_critical_difference": "control", "cliffs_delta": "control",
    "cohens_d": "control", "effect_magnitude": "control", "effect_sizes": "control",
    "standardized_mean_difference": "control", "SMDResult": "control",
    # holdout.py
    "TestSetAudit": "holdout", "audit_test_set": "holdout", "is_single_split": "holdout",
    # permutation.py
    "permutation_test": "permutation",
    # plots.py
    "plot_cd_diagram": "plots", "plot_cd_control": "plots", "plot_comparisons": "plots",
    "plot_plackett_luce": "plots",
    # calibration.py
    "simulate_tests": "calibration", "CalibrationResult": "calibration",
    "plot_calibration": "calibration", "replicability": "calibration",
    # api.py
    "compare_scores": "api", "compare_models": "api", "ComparisonTable": "api",
    "TESTS": "api", "TEST_IDS": "api", "recommended_tests": "api", "primary_test": "api",
    "DEFAULT_TOLERANCE": "api", "not_computed": "api",
}

__getattr__, _dir, _names = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_names, "audit"])


def __dir__() -> list[str]:
    return list(__all__)
