"""The verify report: a structured result and its two renderings.

`VerifyReport` keeps everything the kernel needs to draw (per machine: the
model, the check lines with their traces, the temporal results with their
counter-examples and labelled steps) and `render_text` prints exactly what
the CLI prints; `render_json` gives the machine form.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import chain
from operator import attrgetter
from typing import Iterator, Optional

from ...core.records import Record, fresh
from ...syntax.machines import MachineModel
from .temporal import TemporalResult

PASS, WARN, FAIL, INFO = "✓", "⚠", "✗", "·"
JSON_STATUS = {PASS: "pass", WARN: "warning", FAIL: "fail", INFO: "info"}
_MARK = attrgetter("mark")


class Step(Record):
    """One edge of a trace and the handlers whose transition() can take it."""

    src: str
    dst: str
    handlers: list[str] = fresh(list)

    def render(self) -> str:
        """`--h1,h2-->` (or `-->` when no handler takes it)."""
        return f"--{','.join(self.handlers)}-->" if self.handlers else "-->"


class CheckLine(Record):
    """One check line: its mark, text, and an optional state trace with steps."""

    mark: str
    text: str
    trace: Optional[list[str]] = None
    steps: list[Step] = fresh(list)
    kind: str = ""


class MachineReport(Record):
    """The check lines and temporal results of one state machine."""

    model: MachineModel
    title: str
    lines: list[CheckLine] = fresh(list)
    temporal: list[TemporalResult] = fresh(list)


class CheckGroup(Record):
    """A synthetic group such as `<Cell>/invariants:` or `<Cell>/termination:`."""

    title: str
    lines: list[CheckLine] = fresh(list)


class VerifyReport(Record):
    """Everything `soma-kernel verify` found about one program."""

    path: str
    notes: list[str] = fresh(list)
    errors: list[str] = fresh(list)
    machines: list[MachineReport] = fresh(list)
    groups: list[CheckGroup] = fresh(list)
    properties_line: Optional[str] = None
    strict: bool = False
    strict_reasons: list[str] = fresh(list)
    check_failed: bool = False
    check_errors: list[str] = fresh(list)
    scope: str = "this file"  # what the messages call the program: "this session" in a notebook

    def all_lines(self) -> list[CheckLine]:
        """Every check line, machines first, then the synthetic groups."""
        return list(self._lines())

    def _lines(self) -> Iterator[CheckLine]:
        """Every check line, in `all_lines` order, without building the list."""
        return chain(chain.from_iterable(m.lines for m in self.machines),
                     chain.from_iterable(g.lines for g in self.groups))

    @property
    def tallies(self) -> tuple[int, int, int]:
        """(passed, warnings, failures) over every check line (· not counted)."""
        marks = Counter(map(_MARK, self._lines()))  # counted in C: a machine may have 100 000 lines
        return marks[PASS], marks[WARN], marks[FAIL]

    @property
    def temporal_results(self) -> list[TemporalResult]:
        """Every temporal result of every machine."""
        return [r for m in self.machines for r in m.temporal]

    @property
    def temporal_tally(self) -> tuple[int, int]:
        """(passed, failed) temporal properties."""
        results = self.temporal_results
        passed = sum(1 for r in results if r.passed)
        return passed, len(results) - passed

    @property
    def failure_reasons(self) -> list[str]:
        """Why verification fails, in verdict order (empty when it passes)."""
        if self.check_failed:
            return ["soma check failed"]
        reasons = list(self.errors and ["soma.toml [verify] settings are wrong"])
        _, warnings, failures = self.tallies
        if failures:
            reasons.append(_count(failures, "check failure", "check failures"))
        _, temporal_failed = self.temporal_tally
        if temporal_failed:
            reasons.append(_count(temporal_failed, "temporal property violated", "temporal properties violated"))
        if self.strict and warnings:
            reasons.append(_count(warnings, "warning", "warnings") + " under --strict")
        if self.strict:
            reasons.extend(self.strict_reasons)
        return reasons

    @property
    def passed(self) -> bool:
        """True when the verdict is VERIFY OK."""
        return not self.failure_reasons

    @property
    def verdict(self) -> str:
        """`VERIFY OK` or `VERIFY FAILED — <reasons>`."""
        reasons = self.failure_reasons
        return "VERIFY OK" if not reasons else "VERIFY FAILED — " + "; ".join(reasons)


def _count(n: int, one: str, many: str) -> str:
    """`1 warning` / `3 warnings`."""
    return f"{n} {one if n == 1 else many}"


def render_text(report: VerifyReport) -> str:
    """The report exactly as the CLI prints it (ends with a newline)."""
    out = [f"Verifying {report.path}..."]
    if report.check_failed:
        out.extend(report.check_errors)
        out.append(report.verdict)
        return "\n".join(out) + "\n"
    out.extend(report.notes)
    out.extend(report.errors)
    for machine in report.machines:
        out.append("")
        model = machine.model
        out.append(f"State machine '{machine.title}': {len(model.states)} states, initial '{model.initial}'")
        out.append(f"  States: [{', '.join(sorted(model.states))}]")
        out.append("")
        out.extend(_render_lines(machine.lines))
    for group in report.groups:
        out.extend(["", f"{group.title}:", ""])
        out.extend(_render_lines(group.lines))
    passed, warnings, failures = report.tallies
    out.extend(["", f"{passed} passed, {warnings} warnings, {failures} failures", ""])
    for machine in report.machines:
        out.append(f"  Temporal properties for '{machine.title}':")
        for result in machine.temporal:
            out.extend(_render_temporal(result))
    if report.properties_line:
        out.append(report.properties_line)
    t_passed, t_failed = report.temporal_tally
    out.append(f"Temporal: {t_passed} passed, {t_failed} failed")
    if report.strict and report.tallies[1]:
        out.extend(f"  {WARN} {line.text}" for line in report.all_lines() if line.mark == WARN)
    out.append(report.verdict)
    return "\n".join(out) + "\n"


def _render_lines(lines: list[CheckLine]) -> list[str]:
    """Check lines with their traces."""
    out = []
    for line in lines:
        out.append(f"  {line.mark} {line.text}")
        if line.trace:
            out.append(f"    trace: {' → '.join(line.trace)}")
            if line.steps:
                out.append("      " + labelled_trace(line.steps))
    return out


def _render_temporal(result: TemporalResult) -> list[str]:
    """One temporal property line, its counter-example and labelled trace."""
    mark = PASS if result.passed else FAIL
    out = [f"  {mark} {result.property} — {result.message}"]
    if result.counter_example:
        out.append(f"    counter-example: {counter_example_text(result)}")
        if result.steps:
            out.append("      " + labelled_trace(result.steps))
    return out


def counter_example_text(result: TemporalResult) -> str:
    """`a → b → c`, or for a lasso `a → b → c → ... cycle back to 'b'`."""
    states = result.counter_example or []
    if result.loop_start is None:
        return " → ".join(states)
    return " → ".join(states[:-1] + [f"... cycle back to '{states[result.loop_start]}'"])


def labelled_trace(steps: list[Step]) -> str:
    """`received --decide--> decided --_pay--> paid`."""
    if not steps:
        return ""
    parts = [steps[0].src]
    for step in steps:
        parts.append(f"{step.render()} {step.dst}")
    return " ".join(parts)


def render_json(report: VerifyReport) -> str:
    """The report as pretty JSON (the reference's shape, plus traces and steps)."""
    passed, warnings, failures = report.tallies
    data = {
        "passed": report.passed,
        "verdict": report.verdict,
        "file": report.path,
        "notes": report.notes,
        "errors": report.errors + report.check_errors,
        "state_machines": [_machine_json(m) for m in report.machines],
        "groups": [{"name": g.title, "checks": [_line_json(line) for line in g.lines]} for g in report.groups],
        "summary": {"passed": passed, "warnings": warnings, "failures": failures},
        "temporal": [{"state_machine": m.title, "properties": [_temporal_json(r) for r in m.temporal]}
                     for m in report.machines],
        "properties_loaded": report.properties_line,
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _machine_json(machine: MachineReport) -> dict:
    model = machine.model
    return {
        "name": machine.title,
        "cell": model.cell,
        "states": sorted(model.states),
        "initial": model.initial,
        "terminal_states": model.terminal_states,
        "transitions": [{"from": e.src, "to": e.dst, "guarded": e.guard is not None} for e in model.edges],
        "checks": [_line_json(line) for line in machine.lines],
    }


def _line_json(line: CheckLine) -> dict:
    data = {"status": JSON_STATUS[line.mark], "message": line.text}
    if line.kind:
        data["check"] = line.kind
    if line.trace:
        data["counter_example"] = line.trace
        data["steps"] = [_step_json(s) for s in line.steps]
    return data


def _temporal_json(result: TemporalResult) -> dict:
    data = {"property": result.property, "passed": result.passed, "message": result.message}
    if result.counter_example:
        data["counter_example"] = result.counter_example
        data["loop_start"] = result.loop_start
        data["steps"] = [_step_json(s) for s in result.steps]
    return data


def _step_json(step: Step) -> dict:
    return {"from": step.src, "to": step.dst, "handlers": step.handlers}
