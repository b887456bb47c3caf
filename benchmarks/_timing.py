"""Timing helper shared by the benchmark scripts (not a benchmark itself)."""

from __future__ import annotations

import time

import numpy as np


def best_time(fn, repeats: int) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls of ``fn`` (seconds) and the last call's result."""
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out
