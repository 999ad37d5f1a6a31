"""The toolchain on the session's definitions: %check, %verify, %test, %describe, %skeleton.

Each builds one program from every definition of the session (the text
`%save` would write), so the results are those of the CLI on that file;
positions in `%check` messages point back at the notebook cells.
"""

from __future__ import annotations

import os
import sys
import tempfile

from ...analysis.check import check_program
from ...analysis.describe import describe_cell
from ...analysis.skeleton import SkeletonError, Source, skeleton_text
from ...analysis.verify.checks import add_memory_breaches
from ...analysis.verify.gate import check_then_verify
from ...syntax import ast
from ...testing.runner import Output, run_tests
from ..definitions import SESSION_ORIGIN
from ..reports import test_bundle, verify_bundle
from .base import Magic, MagicError, split_args

SESSION_SOURCE = Source("this session", "`%describe {cell}`")  # how the toolchain's messages name a notebook


def _program(session):
    """The session's program and source map, or a MagicError when nothing is defined."""
    if not session.definitions:
        raise MagicError("nothing is defined yet: run a cell that declares a `cell` first")
    return session.program()


def check_magic(session, run, args: str, body) -> None:
    """%check: `soma check` on the session; messages point at the notebook cells."""
    if args.strip():
        raise MagicError("usage: %check (it takes no arguments)", at_name=True)
    program, source_map = _program(session)
    report = check_program(program, session.project)
    lines = [f"✓ {note.message}" for note in report.notes]
    lines += [source_map.render(d) for d in report.warnings + report.errors]
    lines.append(report.summary())
    run.out("\n".join(lines))


def verify_magic(session, run, args: str, body) -> None:
    """%verify [--strict] [--unfair] [--full]: check, then model-check the machines and prove the invariants.

    Check errors refuse to verify; they are shown at their notebook cells.
    `--strict` counts every ⚠ as a failure. `eventually` properties are read
    under fairness: a run that keeps entering a loop with an exit towards the
    target is assumed to take that exit, and a line that relies on this says
    so and names the loop. `--unfair` (or soma.toml `[verify] fair = false`)
    drops the assumption and reports such a loop as a counter-example.
    An invariant that values already in memory break is a ✗: its proof covers new writes only.
    The report of a big program (hundreds of result lines) is a summary, its whole text saved to
    a file it names; `--full` shows the whole report.
    """
    words = split_args(args, VERIFY_USAGE)
    if any(w not in ("--strict", "--unfair", "--full") for w in words):
        raise MagicError(f"usage: {VERIFY_USAGE}", at_name=True)
    strict, unfair = "--strict" in words, "--unfair" in words
    program, source_map = _program(session)
    progress = Progress(run, machine_lines(program))
    progress.step("checking and model-checking")
    report = check_then_verify(program, session.project, SESSION_ORIGIN, source_map.render, strict, unfair,
                               SESSION_SOURCE.name)
    if not report.check_failed:
        add_memory_breaches(report, session.runtime.invariant_breaches())
    progress.step("writing the report")
    bundle = verify_bundle(report, full="--full" in words, save=lambda text: save_report(text, "verify"))
    progress.step("done")
    run.show(bundle)


PROGRESS_ABOVE_LINES = 2000  # machines with more edge lines than this show their progress


def machine_lines(program) -> int:
    """How many edge lines the program's state machines declare (what makes a verify long)."""
    return sum(len(cell.machine.edges) for cell in program.cells if getattr(cell, "machine", None) is not None)


class Progress:
    """A big program's verify progress: one line of text redrawn in place (`\\r`) at each step,
    a bar and its words, so the notebook shows at once that work is under way (small programs show none)."""

    STEPS = ("checking and model-checking", "writing the report", "done")

    def __init__(self, run, lines: int):
        self.run = run
        self.shown = lines > PROGRESS_ABOVE_LINES
        self.lines = lines

    def step(self, name: str) -> None:
        """Show that step `name` has begun (the last one ends the line)."""
        if not self.shown:
            return
        number = self.STEPS.index(name) + 1
        bar = "■" * number + "□" * (len(self.STEPS) - number)
        end = "\n" if number == len(self.STEPS) else ""
        sys.stdout.write(f"\rverify {bar} {name} ({self.lines:,} edge lines){end}")
        sys.stdout.flush()


def test_magic(session, run, args: str, body) -> None:
    """%test [Name] [--full]: run the session's test cells (or one) as `soma test` does; shows the test report.

    ✗ lines and notes name the notebook cell of the rule (cell[N]:line).
    """
    words = split_args(args, TEST_USAGE)
    full = "--full" in words
    words = [w for w in words if w != "--full"]
    if len(words) > 1:
        raise MagicError(f"usage: {TEST_USAGE}", at_name=True)
    program, source_map = _program(session)
    if words:
        program = _only_test(program, words[0])
    quiet = Output(out=lambda line: None, err=lambda line: None)  # the report's text view shows every line
    report = run_tests(program, session.project, SESSION_ORIGIN, output=quiet, place=source_map.place)
    run.show(test_bundle(report, full=full, save=lambda text: save_report(text, "test")))


def save_report(text: str, kind: str) -> str:
    """Write a whole report's text to a new file in the temporary folder; its path (never an existing file)."""
    handle, path = tempfile.mkstemp(prefix=f"soma-{kind}-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def _only_test(program, name: str):
    """The program with one test cell kept (a MagicError when it is not defined)."""
    tests = [t.name for t in program.tests]
    if name not in tests:
        raise MagicError(f"no test cell named {name} (defined: {', '.join(tests) or 'none'})", name)
    items = [i for i in program.items if not isinstance(i, ast.TestCell) or i.name == name]
    return ast.Program(items, source=program.source, origin=program.origin, span=program.span)


def describe_magic(session, run, args: str, body) -> None:
    """%describe [Cell]: what a cell (or every cell) declares, as `soma describe` tells it, lines as cell[N]:line."""
    words = split_args(args, "%describe [Cell]")
    if len(words) > 1:
        raise MagicError("usage: %describe [Cell]", at_name=True)
    program, source_map = _program(session)
    names = words or [c.name for c in program.cells]
    known = {c.name for c in program.cells}
    for name in names:
        if name not in known:
            raise MagicError(f"no cell named {name} (defined: {', '.join(sorted(known)) or 'none'})", name)
    paragraphs = [describe_cell(program, name, source_map.line_words) for name in names]
    run.out("\n\n".join(paragraphs))


def skeleton_magic(session, run, args: str, body) -> None:
    """%skeleton Cell.signal: one signal's frame, as `soma skeleton` prints it, lines as cell[N]:line."""
    words = split_args(args, "%skeleton Cell.signal")
    if len(words) != 1 or "." not in words[0]:
        raise MagicError("usage: %skeleton Cell.signal", at_name=True)
    program, source_map = _program(session)
    try:
        run.out(skeleton_text(program, words[0], source_map.line_words, SESSION_SOURCE))
    except SkeletonError as err:
        raise MagicError(str(err) + (f"\n  hint: {err.hint}" if err.hint else ""), words[0]) from None


VERIFY_USAGE = "%verify [--strict] [--unfair] [--full]"
TEST_USAGE = "%test [TestCell] [--full]"

MAGICS = (
    Magic("check", "%check", "run soma check on every definition of the session", check_magic),
    Magic("verify", VERIFY_USAGE, "model-check the state machines and prove the invariants "
          "(`eventually` assumes fair runs unless --unfair; %help verify)", verify_magic),
    Magic("test", TEST_USAGE, "run the test cells (all, or the one named) in a fresh runtime", test_magic),
    Magic("describe", "%describe [Cell]", "describe how a cell (or every cell) is built", describe_magic),
    Magic("skeleton", "%skeleton Cell.signal", "show one skeleton signal's frame", skeleton_magic),
)
