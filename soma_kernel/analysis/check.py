"""`soma check`: the static checks of a program and the report they make.

`check_program(program, project)` runs every analysis (structure, face
contracts, names, calls, machines, invariants, match exhaustiveness, value
rules (variant literals, Bool operands, emit listeners), test rules, agent options, skeleton frames, the cost bound) and returns a
`CheckReport`. The report renders as the reference prints it (§11.1): notes
and warnings first, then errors, then one summary line; or as JSON (§11.2).
"""

from __future__ import annotations

import json
from typing import Optional

from ..core.diagnostics import Diagnostic
from ..core.gcpause import paused_gc
from ..core.records import Record, fresh
from ..syntax import ast
from . import (agent_options, calls, capabilities, cost, face, frames, invariants, machines, matches, names,
               structure, test_rules, values)
from .context import ProgramIndex, Reporter

ANALYSES = (
    structure.check, face.check, names.check, calls.check, machines.check, invariants.check,
    matches.check, values.check, test_rules.check, agent_options.check, frames.check, cost.check,
    capabilities.check,
)


class CheckReport(Record):
    """The outcome of `soma check`: errors, warnings and notes, in report order."""

    errors: list[Diagnostic] = fresh(list)
    warnings: list[Diagnostic] = fresh(list)
    notes: list[Diagnostic] = fresh(list)
    source: Optional[str] = None

    @property
    def passed(self) -> bool:
        """True when there is no error."""
        return not self.errors

    def render_text(self) -> str:
        """The report as `soma check` prints it, ending with the summary line."""
        lines = [f"✓ {note.message}" for note in self.notes]
        lines += [warning.render(self.source) for warning in self.warnings]
        lines += [error.render(self.source) for error in self.errors]
        lines.append(self.summary())
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """The one summary line."""
        if self.errors:
            return f"✗ {len(self.errors)} error(s), {len(self.warnings)} warning(s)."
        if self.warnings:
            return f"✓ {len(self.warnings)} warning(s), no errors."
        if len(self.notes) == 1:
            return "✓ All checks passed (1 note above)."
        if self.notes:
            return f"✓ All checks passed ({len(self.notes)} notes above)."
        return "✓ All checks passed."

    def render_json(self) -> str:
        """The report as `soma check --json` prints it (pretty JSON)."""
        data = {
            "passed": self.passed,
            "errors": [d.to_json() for d in self.errors],
            "warnings": [d.to_json() for d in self.warnings],
            "notes": [d.to_json() for d in self.notes],
            "error_count": len(self.errors),
            "warning_count": len(self.warnings),
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def check_program(program: ast.Program, project: Optional[object] = None,
                  index: Optional[ProgramIndex] = None) -> CheckReport:
    """Run every static check on a parsed program (the cyclic collector paused, see gcpause).

    `index` is the program's ProgramIndex when the caller has built it already.
    """
    with paused_gc():
        return _check(program, project, ProgramIndex(program) if index is None else index)


def _check(program: ast.Program, project: Optional[object], index: ProgramIndex) -> CheckReport:
    """The analyses of `check_program`, in order."""
    reporter = Reporter(program.origin)
    for analysis in ANALYSES:
        analysis(index, reporter, project)
    return _report(reporter.diagnostics, program.source or None)


def _report(diagnostics: list[Diagnostic], source: Optional[str]) -> CheckReport:
    """Sort diagnostics by severity, each kind in source order, dropping repeats."""
    unique: dict[tuple, Diagnostic] = {}
    for diagnostic in diagnostics:
        key = (diagnostic.severity, diagnostic.message, diagnostic.span.line, diagnostic.span.col)
        unique.setdefault(key, diagnostic)
    kept = list(unique.values())

    def of(severity: str) -> list[Diagnostic]:
        return sorted((d for d in kept if d.severity == severity), key=lambda d: (d.span.line, d.span.col))

    return CheckReport(errors=of("error"), warnings=of("warning"), notes=of("note"), source=source)
