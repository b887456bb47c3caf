"""What a report section is: each capability contributes one to the audit.

A section lives in ``replikit/report/sections/<name>.py`` and defines a module-level
``SECTION = Section(key=..., title=..., order=..., build=...)``. The modules of that package
are discovered automatically (:func:`replikit.report.sections.discover_sections`), so adding a
capability's section touches no shared file. ``build`` receives the
:class:`~replikit.report.context.AuditContext` and returns a
:class:`~replikit.report.blocks.SectionOutput`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .blocks import SectionOutput

__all__ = ["Section"]


@dataclass(frozen=True)
class Section:
    """One section of the audit report: its key, title, place and how it is built.

    Parameters
    ----------
    key : str
        Short name: the anchor of the section in the HTML (``#compare``), its key in the JSON
        twin and in ``--sections``.
    title : str
        Heading shown in the report.
    order : int
        Place in the report (overview 0, resampling 10, compare 20, replicate 30,
        multistudy 40, generalize 50).
    build : callable
        ``build(ctx: AuditContext) -> SectionOutput``: calls the capability's audit entry and
        formats its result.
    description : str
        One line on what the section does.

    See Also
    --------
    replikit.report.discover_sections : Every section shipped with replikit.
    replikit.report.SectionOutput : What ``build`` returns.

    Examples
    --------
    >>> from replikit.report import Paragraph, SectionOutput
    >>> s = Section("notes", "Notes", 60, lambda ctx: SectionOutput("notes", "Notes",
    ...             [Paragraph("Nothing to add.")]))
    >>> s.build(None).blocks[0].text
    'Nothing to add.'
    """

    key: str
    title: str
    order: int
    build: Callable[..., SectionOutput]
    description: str = ""
