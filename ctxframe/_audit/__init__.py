"""The audit: architecture (package graph, import cycles, contracts), complexity, dead and
untested code, risk and boundaries of a codebase, as Polars frames with a report.

Reads a graph's frames (`AuditInput`), knows no Graph: `Graph.audit()` builds the input.
Sections are entries of `sections.SECTIONS`."""

from ctxframe._audit.audit import Audit, run
from ctxframe._audit.config import AuditConfig, parse
from ctxframe._audit.facts import AuditInput
from ctxframe._audit.sections import SECTIONS, Section

__all__ = ["SECTIONS", "Audit", "AuditConfig", "AuditInput", "Section", "parse", "run"]
