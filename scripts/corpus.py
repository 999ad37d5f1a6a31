"""Run a copy of the reference corpus (soma-dev-lang/soma examples/corpus/) through soma-kernel.

    python scripts/corpus.py DIR [FILTER]

DIR holds the corpus as the reference lays it out (DIR/<domain>/<program>.cell,
with a domain's soma.toml beside its programs; `.corpus/` is git-ignored for
it). Every program gets `soma-kernel test`; every program that declares a state
machine also gets `check` and `verify`, each from the program's folder as the
reference runs them. FILTER keeps the paths that contain it. Prints each
failure's output, then `programs P/N, assertions A (failed F), check+verify V/M`.
Runs in one process (no model key or mock from the environment is used).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

from soma_kernel.commands.cli import main

LLM_ENVIRONMENT = ("SOMA_LLM_KEY", "SOMA_LLM_MOCK", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SOMA_APPROVE")
TALLY = re.compile(r"(\d+) tests: (\d+) passed, (\d+) failed")
MACHINE = re.compile(r"^\s*state\s+\w+\s*(:\s*\w+\s*)?\{", re.M)


def soma(*args: str) -> tuple[int, str]:
    """Exit code and output (stdout then stderr) of one soma-kernel command, in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code
    return code or 0, out.getvalue() + err.getvalue()


def run_program(path: Path) -> tuple[bool, int, int, bool | None, list[str]]:
    """(tests passed, assertions passed, assertions failed, check+verify passed or None, failure texts)."""
    failures = []
    code, text = soma("test", path.name)
    tally = TALLY.search(text)
    passed, failed = (int(tally.group(2)), int(tally.group(3))) if tally else (0, 0)
    tests_ok = code == 0 and tally is not None
    if not tests_ok:
        failures.append(f"TEST FAILED {path}\n{text}")
    verified = None
    if MACHINE.search(path.read_text(encoding="utf-8")):
        checked, check_text = soma("check", path.name)
        proved, verify_text = soma("verify", path.name)
        verified = checked == 0 and proved == 0
        if not verified:
            failures.append(f"CHECK/VERIFY FAILED {path}\n{check_text}{verify_text}")
    return tests_ok, passed, failed, verified, failures


def run_corpus(root: Path, keep: str = "") -> None:
    """Run every program under `root` whose path contains `keep`, and print the totals."""
    for name in LLM_ENVIRONMENT:
        os.environ.pop(name, None)
    programs = good = asserted = refused = machines = proven = 0
    start = Path.cwd()
    for path in sorted(root.glob("*/*.cell")):
        if keep not in str(path):
            continue
        os.chdir(path.parent)
        try:
            tests_ok, passed, failed, verified, failures = run_program(Path(path.name).resolve())
        finally:
            os.chdir(start)
        programs, good = programs + 1, good + tests_ok
        asserted, refused = asserted + passed, refused + failed
        if verified is not None:
            machines, proven = machines + 1, proven + verified
        for failure in failures:
            print(failure)
    print(f"programs {good}/{programs}, assertions {asserted} (failed {refused}), check+verify {proven}/{machines}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    run_corpus(Path(sys.argv[1]).resolve(), sys.argv[2] if len(sys.argv) == 3 else "")
