"""Prediction-error estimation by resampling (Etherington & Lieske (2019), replicating Verbyla &
Litvaitis (1989)): resubstitution, hold-out, K-fold, leave-one-out, the bootstrap (eqs. 6, 7),
.632 and .632+, with a batched fast path; and the audit entry :func:`audit` (every model's
estimates and a verdict); from results a user already has, :func:`summarize_scores` (per-fold
scores) and :func:`summarize_predictions` (out-of-fold predictions), the cross-validation
estimate with the corrected repeated-CV t interval (Nadeau & Bengio 2003).

The schemes and the runner live in :mod:`replikit.experiment`. Names are imported lazily so
that ``import replikit.resampling`` stays cheap, except :func:`audit`: it is bound here (its
module imports nothing heavy), so that ``replikit.resampling.audit`` is the function whichever
way the module ``audit`` was first imported.
"""

from __future__ import annotations

from .._lazy import lazy_exports
from .audit import audit as audit  # re-export, bound eagerly (see above)

_EXPORTS = {
    # error.py
    "estimate_error": "error", "estimate_errors": "error", "ErrorEstimate": "error",
    "ErrorEstimates": "error",
    # simulation.py
    "simulate_resampling": "simulation", "ResamplingExperiment": "simulation",
    # audit.py (audit itself is bound above)
    "ErrorAudit": "audit", "AUDIT_METHODS": "audit", "METHOD_LABELS": "audit",
    "LOSS_LABELS": "audit", "bootstrap_plan": "audit",
    # from_results.py
    "summarize_scores": "from_results", "summarize_predictions": "from_results",
    "corrected_cv_interval": "from_results", "CVSummary": "from_results",
    "CVInterval": "from_results", "describe_splits": "from_results",
}

__getattr__, _dir, _names = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_names, "audit"])


def __dir__() -> list[str]:
    return list(__all__)
