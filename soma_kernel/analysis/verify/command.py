"""`soma-kernel verify FILE [--strict] [--json]`: the command-line entry point.

Exit codes: 0 when the verdict is VERIFY OK, 1 on a failed verdict, a failed
`soma check`, or a user error (missing file, parse error, bad soma.toml);
2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys

from ...loader import load_or_report
from .checks import verify_program
from .report import VerifyReport, render_json, render_text


def main(argv: list[str]) -> int:
    """Run verify on one file and print the report; returns the exit code."""
    parser = argparse.ArgumentParser(prog="soma-kernel verify", description="model-check state machines and "
                                     "prove invariants")
    parser.add_argument("file")
    parser.add_argument("--strict", action="store_true", help="treat every ⚠ as a failure")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 2 if exit_.code else 0
    loaded = load_or_report(args.file)
    if loaded is None:
        return 1
    report = run(loaded.program, loaded.project, args.file, args.strict)
    sys.stdout.write(render_json(report) if args.json else render_text(report))
    return 0 if report.passed else 1


def run(program, project, path: str, strict: bool = False) -> VerifyReport:
    """`soma check` first (a failing check refuses to verify), then verify."""
    from ..check import check_program

    checked = check_program(program, project)
    if not checked.passed:
        report = VerifyReport(path, strict=strict, check_failed=True)
        report.check_errors = [error.render(program.source or None) for error in checked.errors]
        return report
    return verify_program(program, project, path, strict)
