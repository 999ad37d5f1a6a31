"""`check_then_verify`: `soma check` gates verify (a failing check refuses to
verify), both reading one ProgramIndex. The command line and the notebook's
`%verify` differ only in how a check error is rendered."""

from __future__ import annotations

from typing import Callable, Optional

from ...core.diagnostics import Diagnostic
from ...core.gcpause import paused_gc
from ...syntax import ast
from ..check import check_program
from ..context import ProgramIndex
from .checks import verify_program
from .report import VerifyReport


def check_then_verify(program: ast.Program, project: Optional[object], path: str,
                      render_error: Callable[[Diagnostic], str],
                      strict: bool = False, unfair: bool = False, scope: str = "this file") -> VerifyReport:
    """The verify report of `program`, or a report of the check errors (each
    rendered by `render_error`) when `soma check` does not pass; `scope` is what its
    messages call the program ("this file", or "this session" in a notebook)."""
    with paused_gc():  # one pause for the three passes: each pause's end costs a walk over what it built
        index = ProgramIndex(program)
        checked = check_program(program, project, index)
        if not checked.passed:
            report = VerifyReport(path, strict=strict, check_failed=True, scope=scope)
            report.check_errors = [render_error(error) for error in checked.errors]
            return report
        return verify_program(program, project, path, strict, unfair, index, scope)
