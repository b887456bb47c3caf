"""Resampling: schemes, the experiment runner, and prediction-error estimators.

Names are imported lazily from their modules (``schemes``, ``runner``, ``error``) so that
``import replikit.resampling`` stays cheap.
"""

from __future__ import annotations

import importlib

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

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'replikit.resampling' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return __all__
