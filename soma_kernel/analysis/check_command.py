"""`soma-kernel check FILE [--json]`: run the static checks and print the report.

Exit codes: 0 when the program passes, 1 on check errors or when the file
cannot be read or parsed (the loader's message goes to stderr), 2 on a usage
error.
"""

from __future__ import annotations

import json
import sys

from ..loader import UserError, load
from .check import check_program

USAGE = "usage: soma-kernel check FILE [--json]"


def main(argv: list[str]) -> int:
    """Run `check` and return its exit code."""
    as_json = "--json" in argv
    paths = [a for a in argv if a != "--json"]
    unknown = [a for a in paths if a.startswith("-")]
    if len(paths) != 1 or unknown:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        loaded = load(paths[0])
    except UserError as err:
        if as_json:
            print(_load_failure_json(str(err)), end="")
        else:
            print(err, file=sys.stderr)
        return 1
    report = check_program(loaded.program, loaded.project)
    sys.stdout.write(report.render_json() if as_json else report.render_text())
    return 0 if report.passed else 1


def _load_failure_json(message: str) -> str:
    """The --json report of a file that could not be loaded (same keys as a check)."""
    text = message[len("error: "):] if message.startswith("error: ") else message
    error = {"level": "error", "kind": "load", "message": text, "fix": "fix the file and run check again"}
    data = {"passed": False, "errors": [error], "warnings": [], "notes": [], "error_count": 1, "warning_count": 0}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
