"""`soma-kernel test FILE [--json] [--only Name]`: run a program's test cells."""

from __future__ import annotations

import argparse
import json
import sys

from ..loader import load_or_report


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command's arguments."""
    parser = argparse.ArgumentParser(prog="soma-kernel test", description="Run the test cells of a Soma program.")
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true", help="print one JSON report")
    parser.add_argument("--only", metavar="NAME", help="run only this test cell")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    """Check the program, then run its tests; exit 1 on any failure."""
    from .runner import Output, run_tests

    args = parse_args(argv)
    loaded = load_or_report(args.file)
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
    from ..analysis.check import check_program

    result = check_program(loaded.program, loaded.project)
    if not result.errors:
        return ""
    lines = [f"{loaded.path} fails `soma check` — fix these before running its tests:"]
    for diagnostic in result.errors:
        lines += ["  " + line for line in diagnostic.render(loaded.source).splitlines()]
    return "\n".join(lines)
