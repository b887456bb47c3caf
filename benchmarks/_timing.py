"""Helpers shared by the benchmark scripts (not a benchmark itself).

Every benchmark script prints, besides its own detail, one ``BENCH`` line per task it measures
(:func:`bench_row`); ``benchmarks/run_all.py`` (``make bench``) runs the scripts and gathers
those lines into one table: task, anchor (the tool people use today, or the issue's goal when no
tool does the work), anchor time, replikit time and the ratio anchor / replikit.
"""

from __future__ import annotations

import time

import numpy as np

#: prefix of the machine-readable lines ``run_all.py`` collects
BENCH_PREFIX = "BENCH\t"


def best_time(fn, repeats: int) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls of ``fn`` (seconds) and the last call's result."""
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench_row(task: str, anchor: str, anchor_seconds: float, replikit_seconds: float,
              note: str = "") -> None:
    """Print one machine-readable result line for ``make bench``'s table.

    ``anchor`` names the tool timed on the same work in the same process (e.g. ``"mlxtend
    bootstrap_point632_score"``) or, where no tool does the work, the goal (``"goal"``, with the
    goal's seconds as ``anchor_seconds``). The ratio printed is anchor / replikit (above 1:
    replikit faster, or within its goal).
    """
    for text in (task, anchor, note):
        if "\t" in text or "\n" in text:
            raise ValueError("bench_row: task, anchor and note must be one line without tabs")
    print(f"{BENCH_PREFIX}{task}\t{anchor}\t{anchor_seconds:.6g}\t{replikit_seconds:.6g}\t{note}",
          flush=True)
