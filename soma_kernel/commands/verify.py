"""`soma-kernel verify FILE [--strict] [--unfair] [--json]`: the command-line entry point.

Exit codes: 0 when the verdict is VERIFY OK, 1 on a failed verdict, a failed
`soma check`, or a user error (missing file, parse error, bad soma.toml);
2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys

from ..analysis.verify.gate import check_then_verify
from ..analysis.verify.report import render_json, render_text
from ..core.gcpause import paused_gc
from .program import load_program


def run(args: argparse.Namespace) -> int:
    """Run verify on one file and print the report; returns the exit code.

    The cyclic collector stays paused from the parse to the printed report,
    and comes back only once `_verify_file` has returned: the program and
    its report, freed by reference counting, are then never walked by it.
    """
    with paused_gc():
        return _verify_file(args)


def _verify_file(args: argparse.Namespace) -> int:
    """Load, check, verify and print one file; the exit code."""
    loaded = load_program(args.file)
    if loaded is None:
        return 1
    program = loaded.program
    report = check_then_verify(program, loaded.project, args.file, lambda error: error.render(program.source or None),
                               args.strict, args.unfair)
    sys.stdout.write(render_json(report) if args.json else render_text(report))
    return 0 if report.passed else 1

