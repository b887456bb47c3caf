"""Memory guard: refuse, before allocating, work that would not fit in the available memory.

Large inputs (a million-row Scores table, thousands of rankings, a hundred thousand studies) are
fine; an allocation that would push the machine into swap is not — it turns a clear error into
an hour of thrashing. A command that builds a big array estimates its size first and calls
:func:`check_memory`, which raises :class:`~replikit.errors.ResourceLimitError` naming what to
reduce when the estimate exceeds a share of the memory available now.
"""

from __future__ import annotations

import os

from .errors import ResourceLimitError

__all__ = ["available_bytes", "check_memory", "format_bytes"]

#: share of the currently available memory one allocation may take
DEFAULT_FRACTION = 0.8


def available_bytes() -> int | None:
    """Memory available to a new allocation now (``MemAvailable`` on Linux), or ``None``.

    ``REPLIKIT_MEMORY_LIMIT`` (bytes, or with a ``K``/``M``/``G`` suffix) overrides the
    probe: a cap for shared machines and for tests of the guard itself.
    """
    limit = os.environ.get("REPLIKIT_MEMORY_LIMIT")
    if limit:
        return _parse_bytes(limit)
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def _parse_bytes(text: str) -> int:
    units = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    t = text.strip().upper().removesuffix("B")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(float(t))
    except ValueError:
        raise ResourceLimitError(
            f"REPLIKIT_MEMORY_LIMIT: expected a number of bytes such as 2G or 500M; "
            f"found {text!r}") from None


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, e.g. ``'1.5 GiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def check_memory(nbytes: float, *, what: str, reduce: str,
                 fraction: float = DEFAULT_FRACTION) -> None:
    """Raise :class:`ResourceLimitError` when ``nbytes`` exceeds ``fraction`` of the available
    memory.

    Parameters
    ----------
    nbytes : float
        Estimated size of the allocation (or of the peak working set) in bytes.
    what : str
        What needs it, e.g. ``"the MMD of 200 alternatives x 1,000 datasets"``.
    reduce : str
        What the user can reduce, naming the parameter or flag, e.g. ``"n_resamples
        (--resamples)"``.

    Examples
    --------
    >>> check_memory(1e6, what="a small table", reduce="nothing")
    """
    avail = available_bytes()
    if avail is None or nbytes <= fraction * avail:
        return
    raise ResourceLimitError(
        f"{what} would need about {format_bytes(nbytes)} of memory, more than the "
        f"{format_bytes(fraction * avail)} available for it ({fraction:.0%} of "
        f"{format_bytes(avail)} free); reduce {reduce}")
