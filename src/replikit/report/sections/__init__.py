"""The report's sections, one module per capability, discovered by :func:`discover_sections`."""

from __future__ import annotations

import importlib
import pkgutil

from ..registry import Section

__all__ = ["discover_sections"]


def discover_sections() -> list[Section]:
    """Every section shipped in :mod:`replikit.report.sections`, in report order.

    Each module of the package that defines a module-level ``SECTION`` (a
    :class:`~replikit.report.Section`) contributes it; modules whose name starts with ``_``
    are helpers and skipped.

    Returns
    -------
    list of Section
        Sorted by ``order`` (then ``key``).

    See Also
    --------
    replikit.report.Section : What a section declares.
    replikit.report.run_audit : Runs every section on a dataset.

    Examples
    --------
    >>> [s.key for s in discover_sections()]
    ['overview', 'resampling', 'compare', 'replicate', 'multistudy', 'generalize']
    """
    found: dict[str, Section] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        section = getattr(module, "SECTION", None)
        if isinstance(section, Section):
            found[section.key] = section
    return sorted(found.values(), key=lambda s: (s.order, s.key))
