"""`soma-kernel test FILE [--json] [--only Name]`: run a program's test cells."""

from __future__ import annotations

import argparse
import json
import sys

from ..analysis.check import check_program
from ..testing.runner import Output, run_tests
from .program import load_program


def run(args: argparse.Namespace) -> int:
    """Check the program, then run its tests; exit 1 on any failure."""
    loaded = load_program(args.file)
    if loaded is None:
        return 1
    refusal = check_refusal(loaded)
    if refusal:
        print(refusal)
        return 1
    if args.json:
        output = Output(out=lambda line: None, err=lambda line: print(line, file=sys.stderr, flush=True))
        stdout, sys.stdout = sys.stdout, sys.stderr  # print() output goes to stderr under --json
        try:
            report = run_tests(loaded.program, loaded.project, args.file, args.only, output)
        finally:
            sys.stdout = stdout
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        report = run_tests(loaded.program, loaded.project, args.file, args.only)
    return 0 if report.ok else 1


def check_refusal(loaded) -> str:
    """The refusal text when the program fails `soma check`, else ''."""
    result = check_program(loaded.program, loaded.project)
    if not result.errors:
        return ""
    lines = [f"{loaded.path} fails `soma check` — fix these before running its tests:"]
    for diagnostic in result.errors:
        lines += ["  " + line for line in diagnostic.render(loaded.source).splitlines()]
    return "\n".join(lines)
