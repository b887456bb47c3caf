"""The audit report: sections contributed by each capability, rendered to HTML and JSON."""

from .audit import REPORT_FILES, Audit, AuditReport, compute_audit, example_dataset, run_audit
from .blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from .context import AuditContext
from .inputs import ENTRIES, AuditInput, audit_input
from .registry import Section
from .sections import discover_sections

__all__ = ["run_audit", "compute_audit", "Audit", "REPORT_FILES", "AuditReport",
           "example_dataset", "AuditContext", "AuditInput", "audit_input", "ENTRIES", "Section",
           "discover_sections", "SectionOutput", "Paragraph", "Callout", "KeyValues", "Table",
           "Figure"]
