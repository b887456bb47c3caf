"""Prediction-error estimation by resampling (seed 003): resubstitution, hold-out, K-fold,
leave-one-out, the bootstrap (eqs. 6, 7), .632 and .632+, with a batched fast path.

The schemes and the runner live in :mod:`replikit.experiment`. Names are imported lazily so
that ``import replikit.resampling`` stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    # error.py
    "estimate_error": "error", "estimate_errors": "error", "ErrorEstimate": "error",
    "ErrorEstimates": "error",
    # simulation.py
    "simulate_resampling": "simulation", "ResamplingExperiment": "simulation",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
