"""The section registry: each capability contributes one section to the audit report.

A section lives in ``replikit/report/sections/<name>.py`` and defines a module-level
``SECTION = Section(key=..., title=..., order=..., build=...)``. Modules in that package are
discovered automatically, so adding a capability's section touches no shared file. ``build``
receives the :class:`~replikit.report.context.AuditContext` and returns a
:class:`~replikit.report.blocks.SectionOutput`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from .blocks import SectionOutput

__all__ = ["Section", "discover_sections"]


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    order: int
    build: Callable[..., SectionOutput]
    description: str = ""


def discover_sections() -> list[Section]:
    """All sections shipped in :mod:`replikit.report.sections`, sorted by ``order``."""
    from . import sections as pkg

    found: dict[str, Section] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        section = getattr(module, "SECTION", None)
        if isinstance(section, Section):
            found[section.key] = section
    return sorted(found.values(), key=lambda s: (s.order, s.key))
