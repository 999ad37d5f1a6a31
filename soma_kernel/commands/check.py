"""`soma-kernel check FILE [--json]`: run the static checks and print the report.

Exit codes: 0 when the program passes, 1 on check errors or when the file
cannot be read or parsed (the loader's message goes to stderr, or into the
JSON report under --json), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..analysis.check import check_program
from ..core.gcpause import paused_gc
from .program import load_program, print_error


def run(args: argparse.Namespace) -> int:
    """Run `check` and return its exit code.

    One pause of the cyclic collector from the parse to the printed report
    (see commands/verify.py: the program is freed before the collector returns).
    """
    with paused_gc():
        return _check_file(args)


def _check_file(args: argparse.Namespace) -> int:
    """Load, check and print one file; the exit code."""
    report_failure = (lambda message: print(_load_failure_json(message), end="")) if args.json else print_error
    loaded = load_program(args.file, report=report_failure)
    if loaded is None:
        return 1
    report = check_program(loaded.program, loaded.project)
    sys.stdout.write(report.render_json() if args.json else report.render_text())
    return 0 if report.passed else 1


def _load_failure_json(message: str) -> str:
    """The --json report of a file that could not be loaded (same keys as a check)."""
    text = message[len("error: "):] if message.startswith("error: ") else message
    error = {"level": "error", "kind": "load", "message": text, "fix": "fix the file and run check again"}
    data = {"passed": False, "errors": [error], "warnings": [], "notes": [], "error_count": 1, "warning_count": 0}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
