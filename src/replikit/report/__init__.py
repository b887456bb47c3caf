"""The audit report: sections contributed by each capability, rendered to HTML and JSON."""

from .audit import REPORT_FILES, AuditReport, example_dataset, run_audit
from .blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from .context import AuditContext
from .registry import Section
from .sections import discover_sections

__all__ = ["run_audit", "REPORT_FILES", "AuditReport", "example_dataset", "AuditContext", "Section",
           "discover_sections", "SectionOutput", "Paragraph", "Callout", "KeyValues", "Table",
           "Figure"]
