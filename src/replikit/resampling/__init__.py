"""Resampling: schemes, the experiment runner, and prediction-error estimators.

Names are imported lazily from their modules (``schemes``, ``runner``, ``error``) so that
``import replikit.resampling`` stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    # schemes.py
    "Resubstitution": "schemes", "HoldOut": "schemes", "RepeatedKFold": "schemes",
    "LeaveOneOut": "schemes", "FiveByTwo": "schemes", "Bootstrap": "schemes",
    "LeaveOneStudyOut": "schemes", "parse_scheme": "schemes",
    # runner.py
    "run": "runner", "RunResult": "runner",
    # error.py
    "estimate_error": "error", "ErrorEstimate": "error",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
