"""What a report section is: each capability contributes one to the audit.

A section lives in ``replikit/report/sections/<name>.py`` and defines a module-level
``SECTION = Section(key=..., title=..., order=..., build=...)``. The modules of that package
are discovered automatically (:func:`replikit.report.sections.discover_sections`), so adding a
capability's section touches no shared file. ``build`` receives the
:class:`~replikit.report.context.AuditContext` and returns a
:class:`~replikit.report.blocks.SectionOutput`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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
    entries : mapping, optional
        Entry level -> builder for the entries other than ``'data'`` this section reads
        (``{"scores": build_from_scores, ...}``; see :mod:`replikit.report.inputs`). An entry
        it does not read makes it *skipped*, with ``needs`` as the advice.
    needs : str
        What to supply for this section, in one phrase (``"per-fold scores (--scores) or a
        data table (--data)"``): the advice of a section skipped for its entry.

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
    entries: Mapping[str, Callable[..., SectionOutput]] = field(default_factory=dict)
    needs: str = ""

    def builder(self, entry: str) -> Callable[..., SectionOutput] | None:
        """The builder for an entry level, or ``None`` when this section cannot read it."""
        return self.build if entry == "data" else self.entries.get(entry)

    @property
    def reads(self) -> tuple[str, ...]:
        """The entry levels this section reads (``'data'`` always)."""
        return ("data", *self.entries)
