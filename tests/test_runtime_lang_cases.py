"""Our own Soma programs (tests/lang_cases/*.cell) run by `soma-kernel test`.

Each program exercises one area of the language; `<name>.expected` holds
the exact merged stdout/stderr of `soma-kernel test <program>` (some rules
fail on purpose: the failure lines are part of the contract).
Regenerate after a deliberate change with:
    python tests/test_runtime_lang_cases.py --regenerate
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest

from soma_kernel.commands.cli import main

CASES = Path(__file__).parent / "lang_cases"
PROGRAMS = sorted(CASES.glob("*.cell"))


def run_case(program: Path) -> tuple[int, str]:
    """(exit code, merged output) of `soma-kernel test` on one program, paths relative to the repo."""
    buffer = io.StringIO()
    relative = os.path.relpath(program, Path(__file__).parent.parent)
    cwd = os.getcwd()
    os.chdir(Path(__file__).parent.parent)
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            code = main(["test", relative])
    finally:
        os.chdir(cwd)
    return code, buffer.getvalue()


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_lang_case_output(program: Path, monkeypatch):
    for variable in ("SOMA_LLM_MOCK", "SOMA_APPROVE", "SOMA_LLM_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    expected = program.with_suffix(".expected").read_text(encoding="utf-8")
    code, output = run_case(program)
    assert output == expected
    assert code == (0 if "passed, 0 failed" in expected else 1)


def test_every_case_has_expected_output():
    assert PROGRAMS, "no lang cases found"
    for program in PROGRAMS:
        assert program.with_suffix(".expected").exists(), program.name


if __name__ == "__main__" and "--regenerate" in sys.argv:
    for case in PROGRAMS:
        case.with_suffix(".expected").write_text(run_case(case)[1], encoding="utf-8")
