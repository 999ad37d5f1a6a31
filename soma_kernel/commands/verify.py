"""`soma-kernel verify FILE [--strict] [--unfair] [--json]`: the command-line entry point.

Exit codes: 0 when the verdict is VERIFY OK, 1 on a failed verdict, a failed
`soma check`, or a user error (missing file, parse error, bad soma.toml);
2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys

from ..analysis.check import check_program
from ..analysis.context import ProgramIndex
from ..analysis.verify.checks import verify_program
from ..analysis.verify.report import VerifyReport, render_json, render_text
from ..core.gcpause import paused_gc
from .program import load_program


def run(args: argparse.Namespace) -> int:
    """Run verify on one file and print the report; returns the exit code."""
    loaded = load_program(args.file)
    if loaded is None:
        return 1
    report = verify_loaded(loaded.program, loaded.project, args.file, args.strict, args.unfair)
    sys.stdout.write(render_json(report) if args.json else render_text(report))
    return 0 if report.passed else 1


def verify_loaded(program, project, path: str, strict: bool = False, unfair: bool = False) -> VerifyReport:
    """`soma check` first (a failing check refuses to verify), then verify; both read one ProgramIndex."""
    with paused_gc():  # the index holds every state and edge (see gcpause)
        index = ProgramIndex(program)
    checked = check_program(program, project, index)
    if not checked.passed:
        report = VerifyReport(path, strict=strict, check_failed=True)
        report.check_errors = [error.render(program.source or None) for error in checked.errors]
        return report
    return verify_program(program, project, path, strict, unfair, index)
