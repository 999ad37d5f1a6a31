"""The `cell test` runner: rules, mocks, assertions and the exact report lines.

Each test cell starts from fresh state (slots, instances, counters, mocks);
state persists across the rules of one test cell. Every rule that evaluates
code is one atomic top-level invocation. Lines are written as they happen:
notes go to stderr at the moment they occur, so that merged output shows
them before the ✓ line of the rule that caused them.
"""

from __future__ import annotations

import difflib
import json
import random
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..core.diagnostics import SomaError
from ..runtime import ops
from ..runtime.interpreter import Runtime
from ..runtime.mocks import Scripted
from ..runtime.values import display, display_inner
from ..syntax import ast

COMPARISONS = {"==": ops.eq, "!=": ops.ne, "<": ops.lt, ">": ops.gt, "<=": ops.le, ">=": ops.ge}
PROPERTY_EXHAUSTIVE_LIMIT = 20_000
PROPERTY_SAMPLES = 50


@dataclass
class RuleOutcome:
    """What one rule did: its report lines, whether it passed, whether it counts as a test."""

    lines: list[str]
    passed: bool = True
    counted: bool = False
    rule: object = None
    raised: Optional[str] = None
    left: Optional[str] = None
    right: Optional[str] = None


@dataclass
class TestCellResult:
    """The outcomes of one test cell's rules."""

    name: str
    outcomes: list[RuleOutcome] = field(default_factory=list)

    @property
    def passed(self) -> int:
        """Counted rules that passed."""
        return sum(1 for o in self.outcomes if o.counted and o.passed)

    @property
    def failed(self) -> int:
        """Counted rules that failed."""
        return sum(1 for o in self.outcomes if o.counted and not o.passed)


@dataclass
class TestReport:
    """The whole run: per test cell results, plus the text as printed."""

    cells: list[TestCellResult] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    refused: Optional[str] = None

    @property
    def passed(self) -> int:
        """Counted rules that passed, over all test cells."""
        return sum(c.passed for c in self.cells)

    @property
    def failed(self) -> int:
        """Counted rules that failed, over all test cells."""
        return sum(c.failed for c in self.cells)

    @property
    def ok(self) -> bool:
        """True when the run had tests and none failed."""
        return self.refused is None and self.failed == 0 and (self.passed + self.failed) > 0

    def render_text(self) -> str:
        """The report as the CLI prints it (stdout and stderr merged)."""
        return "\n".join(self.lines) + "\n"

    def to_json(self) -> dict:
        """The report for `--json`."""
        return {
            "passed": self.ok,
            "total": self.passed + self.failed,
            "failed": self.failed,
            "cells": [{"name": c.name, "rules": [outcome_json(o) for o in c.outcomes if o.counted]}
                      for c in self.cells],
        }


def outcome_json(outcome: RuleOutcome) -> dict:
    """One counted rule as JSON: its source, pass/fail, the report lines without marks."""
    message = "\n".join(line.strip().lstrip("✓✗ ") for line in outcome.lines)
    return {"rule": rule_text(outcome.rule), "passed": outcome.passed, "message": message,
            "raised": outcome.raised, "left": outcome.left, "right": outcome.right}


def rule_text(rule) -> str:
    """A rule as written (`assert …`, `assert_fails …`, `property "…"`, `let x`)."""
    if isinstance(rule, ast.RuleAssert):
        return f"assert {rule.source}"
    if isinstance(rule, ast.RuleAssertFails):
        matching = f" matching {json.dumps(rule.matching, ensure_ascii=False)}" if rule.matching else ""
        return f"assert_fails {rule.source}{matching}"
    if isinstance(rule, ast.RuleProperty):
        return f"property {json.dumps(rule.name, ensure_ascii=False)}"
    if isinstance(rule, ast.RuleLet):
        return f"let {rule.name}"
    if isinstance(rule, ast.RuleMock):
        return f"mock {rule.target}"
    return ""


class Output:
    """Where report lines and notes go, in the order they happen."""

    def __init__(self, out: Optional[Callable[[str], None]] = None,
                 err: Optional[Callable[[str], None]] = None):
        self.report_lines: list[str] = []
        self.out = out or (lambda line: print(line, flush=True))
        self.err = err or (lambda line: print(line, file=sys.stderr, flush=True))

    def line(self, text: str) -> None:
        """A report line on stdout."""
        self.report_lines.append(text)
        self.out(text)

    def note(self, text: str) -> None:
        """A note on stderr."""
        self.report_lines.append(text)
        self.err(text)


def origin_place(origin: str) -> Callable[..., str]:
    """The position renderer the CLI uses: `place(line, col=None)` gives `origin:line[:col]`."""

    def place(line: int, col: Optional[int] = None) -> str:
        return f"{origin}:{line}" + (f":{col}" if col is not None else "")

    return place


def run_tests(program: ast.Program, project=None, origin: Optional[str] = None,
              only: Optional[str] = None, output: Optional[Output] = None,
              runtime=None, place: Optional[Callable[..., str]] = None) -> TestReport:
    """Run the program's test cells (or just `only`) and report as the CLI does.

    `place(line, col=None)` renders a position of the program in ✗ lines and
    notes (`origin:line[:col]` unless given).
    """
    output = output or Output()
    origin = origin or program.origin
    place = place or origin_place(origin)
    report = TestReport(lines=output.report_lines)
    tests = [t for t in program.tests if only is None or t.name == only]
    if not tests:
        report.refused = ("no test cells found (use `cell test MyTests { ... }`)" if only is None
                          else f"no test cell named '{only}'")
        output.line(report.refused)
        return report
    agent = (project.agent if project is not None else {}) or {}
    rt = runtime or Runtime(agent_mock=agent.get("mock"), under_test=True, note=output.note,
                            project_dir=getattr(project, "directory", "."), project=project)
    if runtime is None:
        rt.load_program(program)
    for test in tests:
        report.cells.append(run_test_cell(rt, test, origin, place, output))
    output.line("")
    total = report.passed + report.failed
    output.line(f"{total} tests: {report.passed} passed, {report.failed} failed")
    return report


def run_test_cell(rt, test: ast.TestCell, origin: str, place: Callable[..., str], output: Output) -> TestCellResult:
    """Run one test cell from fresh state; `place` renders a rule's line, `origin` names the file."""
    output.line(f"test {test.name} ...")
    rt.reset()
    result = TestCellResult(test.name)
    env: dict = {}
    for rule in test.rules:
        rt.agent.reset_budget()  # each rule starts with no budget (a session keeps one: see Session)
        outcome = run_rule(rt, rule, env, place)
        outcome.rule = rule
        for line in outcome.lines:
            output.line(line)
        result.outcomes.append(outcome)
        if outcome.raised is not None and not isinstance(rule, ast.RuleAssertFails):
            discard_unused_mocks(rt, place, rule, output)
    for line in rt.mocks.pending():
        output.note(f"note: {origin}: `{line}` was scripted but never used in test {test.name}")
    return result


def discard_unused_mocks(rt, place: Callable[..., str], rule, output: Output) -> None:
    """After a rule raised, every mock still queued is dropped with a note (the clock stays)."""
    note = discard_note(rt.mocks.discard(), place(rule.span.line))
    if note:
        output.note(note)


def discard_note(dropped: list[str], where: str) -> Optional[str]:
    """The note naming the mocks dropped after a rule raised at `where` (None when none were)."""
    if not dropped:
        return None
    return f"note: {where}: discarded {len(dropped)} unused mock(s) after the rule raised: {'; '.join(dropped)}"


def run_rule(rt, rule, env: dict, place: Callable[..., str]) -> RuleOutcome:
    """Run one rule of a test cell (also used by the kernel for session lines); `place` renders its line."""
    runner = RULES[type(rule).__name__]
    return runner(rt, rule, env, place)


def rule_let(rt, rule: ast.RuleLet, env: dict, place: Callable[..., str]) -> RuleOutcome:
    """`let name = expr`: evaluated once, bound for later rules."""
    try:
        env[rule.name] = rt.evaluate(rule.value, env)
    except SomaError as err:
        return RuleOutcome([f"  ✗ {place(rule.span.line)}  let {rule.name} = … — ERROR: {err.text}"],
                           passed=False, counted=True, raised=err.text)
    return RuleOutcome([])


def rule_mock(rt, rule: ast.RuleMock, env: dict, place: Callable[..., str]) -> RuleOutcome:
    """`mock think|approve|now|Handler [error] value`: script what comes next."""
    try:
        value = rt.evaluate(rule.value, env)
        apply_mock(rt, rule, value)
    except SomaError as err:
        return RuleOutcome([f"  ✗ {place(rule.span.line)}  mock {rule.target} … — ERROR: {err.text}"],
                           passed=False, counted=True, raised=err.text)
    return RuleOutcome([])


def apply_mock(rt, rule: ast.RuleMock, value, origin: str = "") -> None:
    """Put a mock's value where the runtime will find it (`origin`: the notebook cell queuing it)."""
    mocks = rt.mocks
    if rule.tool is not None:  # `mock think tool NAME(arg: e, …)`: value holds the arguments, in order
        _refuse_unknown_tool(rt, rule.tool)
        mocks.think.append(Scripted("tool", (rule.tool, dict(zip(rule.tool_args, value))), origin))
        return
    values = value if isinstance(value, list) else [value]
    if rule.target == "think":
        for item in values:
            mocks.think.append(Scripted("error" if rule.is_error else "reply", display(item), origin))
    elif rule.target == "approve":
        for item in values:  # all checked before any is queued: a bad list queues nothing
            if not isinstance(item, bool):
                raise SomaError("type", f"mock approve takes true or false, got {display(item)}")
        mocks.approve.extend(Scripted("approve", item, origin) for item in values)
    elif rule.target in ("now", "now_ms"):
        if type(value) is not int:
            raise SomaError("type", f"mock {rule.target} takes an Int, got {display(value)}")
        mocks.now_ms = value * 1000 if rule.target == "now" else value
    else:
        queue = mocks.handlers.setdefault(rule.target, deque())
        queue.append(Scripted("error" if rule.is_error else "value", value, origin))


def _refuse_unknown_tool(rt, name: str) -> None:
    """A scripted tool call must name a face `tool` some cell declares: no model could be offered another."""
    tools = {tool.name: cell for cell, decl in rt.cell_decls.items() if decl.face is not None
             for tool in decl.face.tools}
    if name in tools:
        return
    handlers = [cell for cell, decl in rt.cell_decls.items() if any(h.name == name for h in decl.handlers)]
    if handlers:
        hint = (f"'{name}' is a handler of {handlers[0]} but no face tool: declare `tool {name}(…) -> T \"…\"` "
                "in its face to offer it to the model; nothing was queued")
    else:
        close = difflib.get_close_matches(name, sorted(tools), n=1)
        listed = ", ".join(f"{tool} ({cell})" for tool, cell in tools.items())
        if close:
            hint = f"did you mean `{close[0]}`? nothing was queued"
        elif tools:
            hint = f"the face tools: {listed}; nothing was queued"
        else:
            hint = "no cell declares a face `tool` yet; nothing was queued"
    raise SomaError("mock", f"mock think tool {name}(…): no cell declares a face tool '{name}'", hint=hint)


def rule_assert(rt, rule: ast.RuleAssert, env: dict, place: Callable[..., str]) -> RuleOutcome:
    """`assert E`: E must be true; a comparison shows both sides when it is not."""
    expr = rule.expr
    comparison = isinstance(expr, ast.Binary) and expr.op in COMPARISONS
    try:
        if comparison:
            left_fn = rt.compile_expression(expr.left, env)
            right_fn = rt.compile_expression(expr.right, env)
            left, right = rt.invoke(lambda: (left_fn(), right_fn()))
            value = COMPARISONS[expr.op](left, right)
        else:
            value = rt.evaluate(expr, env)
    except SomaError as err:
        return RuleOutcome([f"  ✗ {place(rule.span.line)}  assert {rule.source} — ERROR: {err.text}"],
                           passed=False, counted=True, raised=err.text)
    if value is True:
        return RuleOutcome([f"  ✓ assert {rule.source}"], counted=True)
    if value is not False:
        return RuleOutcome([f"  ✗ {place(rule.span.line)}  assert {rule.source} — ERROR: assert needs a Bool, "
                            f"got {display(value)}"], passed=False, counted=True)
    lines = [f"  ✗ {place(rule.span.line)}  assert {rule.source} — FAILED"]
    outcome = RuleOutcome(lines, passed=False, counted=True)
    if comparison:
        outcome.left, outcome.right = display_inner(left), display_inner(right)
        lines += [f"         left:  {outcome.left}", f"         right: {outcome.right}"]
        lines += field_hints(rt, expr, env)
    return outcome


def field_hints(rt, expr: ast.Binary, env: dict) -> list[str]:
    """When a side is `x.field` that came back (), name the fields x does have."""
    hints = []
    for side in (expr.left, expr.right):
        if not isinstance(side, ast.Field):
            continue
        try:
            container = rt.evaluate(side.obj, env)
        except SomaError:
            continue
        if isinstance(container, dict) and side.name not in container:
            names = ", ".join(k for k in container if not k.startswith("_")) or "none"
            hints.append(f"         note: .{side.name} is () — the map has fields: {names}")
    return hints


def rule_assert_fails(rt, rule: ast.RuleAssertFails, env: dict, place: Callable[..., str]) -> RuleOutcome:
    """`assert_fails E [matching "t"]`: E must raise (an error whose kind or text holds t)."""
    shown = f"{rule.source} matching {json.dumps(rule.matching, ensure_ascii=False)}" if rule.matching else rule.source
    try:
        value = rt.evaluate(rule.expr, env)
    except SomaError as err:
        if err.kind == "undefined_variable":
            return RuleOutcome([f"  ✗ {place(rule.span.line)}  assert_fails {shown} — FAILED: it raised "
                                f"{err.text}, a bug rather than the failure under test (run `soma check`)"],
                               passed=False, counted=True, raised=err.text)
        if rule.matching and rule.matching not in err.kind and rule.matching not in err.text:
            return RuleOutcome([f"  ✗ {place(rule.span.line)}  assert_fails {shown} — FAILED: it raised something "
                                f"else: {err.text}"], passed=False, counted=True, raised=err.text)
        return RuleOutcome([f"  ✓ assert_fails {shown} — raised {err.text}"], counted=True, raised=err.text)
    return RuleOutcome([f"  ✗ {place(rule.span.line)}  assert_fails {shown} — FAILED: expected a runtime error, "
                        f"but it succeeded with {display_inner(value)}"], passed=False, counted=True)


def rule_property(rt, rule: ast.RuleProperty, env: dict, place: Callable[..., str]) -> RuleOutcome:
    """`property "n" forall v: Int in lo..hi ensures E`: exhaustive when small, else sampled."""
    try:
        lo = rt.evaluate(rule.lo, env)
        hi = rt.evaluate(rule.hi, env)
        if type(lo) is not int or type(hi) is not int:
            raise SomaError("type", "property bounds must be Ints")
        count = hi - lo + 1
        if count <= PROPERTY_EXHAUSTIVE_LIMIT:
            candidates, coverage = range(lo, hi + 1), f"all {max(count, 0)} values"
        else:
            sampler = random.Random(0)
            candidates = [lo, hi] + [sampler.randint(lo, hi) for _ in range(PROPERTY_SAMPLES - 2)]
            coverage = f"{PROPERTY_SAMPLES} samples, NOT a proof"
        for candidate in candidates:
            scoped = dict(env)
            scoped[rule.var] = candidate
            if rt.evaluate(rule.ensures, scoped) is not True:
                return RuleOutcome([f"  ✗ property \"{rule.name}\" — FAILED with counter-example "
                                    f"{rule.var} = {candidate}"], passed=False, counted=True)
    except SomaError as err:
        return RuleOutcome([f"  ✗ {place(rule.span.line)}  property \"{rule.name}\" — ERROR: {err.text}"],
                           passed=False, counted=True, raised=err.text)
    return RuleOutcome([f"  ✓ property \"{rule.name}\" (forall {rule.var} in {lo}..{hi}: {coverage})"],
                       counted=True)


RULES = {
    "RuleLet": rule_let,
    "RuleMock": rule_mock,
    "RuleAssert": rule_assert,
    "RuleAssertFails": rule_assert_fails,
    "RuleProperty": rule_property,
}
