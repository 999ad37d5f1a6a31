"""The `verify` and `test` reports as a notebook shows them.

A report is one display bundle with two views of the same result:
text/plain, identical to the CLI's output (what nbval compares and a
console shows), and text/html: the verdict, then one collapsible
`<details>` section per state machine (verify) or per test cell (test),
its title carrying its ✓ ⚠ ✗ counts; the sections holding a failure are
open. A machine's section draws its diagram, once per counter-example
path with the path in red, each drawing labelled with the property it
refutes (or the check whose trace it shows); else once plain.

The HTML is plain, sanitizer-proof markup, so it reads the same wherever a
notebook is shown: a live JupyterLab, an untrusted (freshly cloned or
shared) notebook, Notebook 7, VS Code, Voila, `nbconvert --to html`
offline and GitHub. Drawings are `<img src="data:image/svg+xml;base64,…">`
(the sanitizer keeps those; an inline `<svg>` is stripped), each with an
alt text and its DOT text right after it, so the report stands without
them. There is no widget: a widget's view needs the widget manager's
JavaScript, which a static export loads from a CDN (empty offline).

Reports are read through one adapter per kind: `_verify_sections` reads a
VerifyReport (analysis.verify.report: machines with their model, check lines
and temporal results, then the check groups); `_test_sections` reads a
testing.runner.TestReport (`cells`, each with `name` and `outcomes`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Optional

from ..analysis.verify.report import counter_example_text, labelled_trace, render_text
from ..syntax.machines import MachineModel
from .diagrams import diagram_bundle

MARKS = ("✓", "⚠", "✗")
MAX_DIAGRAMS_PER_SECTION = 5
FAILURE_COLOR = "#d62728"
WARNING_COLOR = "#b8860b"


@dataclass
class ReportLine:
    """One result line: its mark (✓ ⚠ ✗ ·), text, the indented lines under it
    (trace, counter-example), the state path they show and the label of the
    drawing of that path (what it refutes or traces)."""

    mark: str
    text: str
    details: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    drawing_label: str = ""


@dataclass
class ReportSection:
    """One collapsible section: a machine's checks, a check group or a test cell."""

    name: str
    lines: list[ReportLine]
    model: Optional[MachineModel] = None

    def count(self, mark: str) -> int:
        """How many lines carry `mark`."""
        return sum(1 for line in self.lines if line.mark == mark)

    @property
    def title(self) -> str:
        """`name  ✓ n  ⚠ n  ✗ n`."""
        return self.name + "".join(f"  {mark} {self.count(mark)}" for mark in MARKS)

    @property
    def failing_lines(self) -> list[ReportLine]:
        """The lines that warn or fail and show a state path, in line order."""
        return [line for line in self.lines if line.path and line.mark in ("⚠", "✗")]


# ---------------------------------------------------------------- adapters

def _get(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of `names` present on `obj` (as attribute or mapping key)."""
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def _verify_sections(report: Any) -> list[ReportSection]:
    """Read a VerifyReport: one section per machine, then one per check group."""
    sections = []
    for machine in report.machines:
        lines = [_check_line(line) for line in machine.lines]
        lines += [_temporal_line(result) for result in machine.temporal]
        sections.append(ReportSection(machine.title, lines, machine.model))
    for group in report.groups:
        sections.append(ReportSection(group.title, [_check_line(line) for line in group.lines]))
    return sections


def _check_line(line: Any) -> ReportLine:
    """A check line with its trace (and labelled steps) under it."""
    trace = list(line.trace or [])
    details = [f"trace: {' → '.join(trace)}"] if trace else []
    if trace and line.steps:
        details.append("  " + labelled_trace(line.steps))
    return ReportLine(line.mark, line.text, details, trace, f"{line.mark} trace of: {line.text}")


def _temporal_line(result: Any) -> ReportLine:
    """A temporal result; a counter-example (lasso closed) is its path."""
    states = list(result.counter_example or [])
    details = [f"counter-example: {counter_example_text(result)}"] if states else []
    if states and result.steps:
        details.append("  " + labelled_trace(result.steps))
    mark = "✓" if result.passed else "✗"
    return ReportLine(mark, f"{result.property} — {result.message}", details, states,
                      f"{mark} counter-example to {result.property}")


def _test_sections(report: Any) -> list[ReportSection]:
    """Read a testing.runner.TestReport into sections, one per test cell."""
    sections = []
    for cell in report.cells:
        lines = [_test_line(outcome) for outcome in cell.outcomes if outcome.counted]
        sections.append(ReportSection(f"test {cell.name}", lines))
    return sections


def _test_line(outcome: Any) -> ReportLine:
    """One counted rule: its first report line without the mark, the rest as details."""
    mark = "✓" if outcome.passed else "✗"
    first, *rest = [line.strip() for line in outcome.lines] or [""]
    if first[:2] in ("✓ ", "✗ "):
        first = first[2:]
    return ReportLine(mark, first, rest)


def _verdict(report: Any, sections: list[ReportSection]) -> str:
    """The report's verdict line, or a tally of the sections."""
    verdict = _get(report, "verdict", default=None)
    if verdict:
        return str(verdict)
    passed = sum(s.count("✓") for s in sections)
    failed = sum(s.count("✗") for s in sections)
    return f"{passed} passed, {failed} failed"


# ---------------------------------------------------------------- views

def _line_html(line: ReportLine) -> str:
    """One escaped line (coloured when it warns or fails) and its details."""
    text = html.escape(f"{line.mark} {line.text}")
    color = {"✗": FAILURE_COLOR, "⚠": WARNING_COLOR}.get(line.mark)
    head = f'<span style="color:{color}">{text}</span>' if color else text
    return "\n".join([head] + [html.escape(f"  {detail}") for detail in line.details])


def _lines_html(section: ReportSection) -> str:
    """A section's lines as a `<pre>` block."""
    return "<pre>" + "\n".join(_line_html(line) for line in section.lines) + "</pre>"


def _diagram_html(model: MachineModel, line: Optional[ReportLine]) -> str:
    """A machine diagram (an `<img>`, or the edge-table fallback) of a failing line's path, labelled with
    what that path refutes (the property, or the check it traces), then its DOT text twin; plain without one."""
    bundle = diagram_bundle(model, highlight=line.path if line is not None else None)
    label = f'<p class="soma-drawing-label">{html.escape(line.drawing_label)}</p>' if line is not None else ""
    return label + bundle["text/html"] + _dot_twin_html(bundle["text/plain"])


def _dot_twin_html(dot: str) -> str:
    """The DOT text of a drawing, folded: what nbval compares exactly where the SVG is only "an SVG is here"."""
    return f'<details class="soma-dot"><summary>DOT</summary><pre>{html.escape(dot)}</pre></details>'


def _section_diagrams(section: ReportSection) -> list[str]:
    """Diagrams of a machine's section: one per failing path, each labelled (at most MAX_DIAGRAMS_PER_SECTION),
    else a plain one."""
    if section.model is None:
        return []
    failing = section.failing_lines[:MAX_DIAGRAMS_PER_SECTION]
    return [_diagram_html(section.model, line) for line in failing or [None]]


def _header_html(verdict: str, notes: list[str]) -> str:
    """The verdict in bold, then the report's notes and errors."""
    return "\n".join([f"<p><b>{html.escape(verdict)}</b></p>"]
                     + [f"<p>{html.escape(note)}</p>" for note in notes])


def report_html(sections: list[ReportSection], verdict: str, notes: list[str]) -> str:
    """The report's HTML view: the verdict and notes, then one `<details>` per section (open when it fails)."""
    parts = ['<div class="soma-report">', _header_html(verdict, notes)]
    for section in sections:
        opened = " open" if section.count("✗") else ""
        parts.append(f"<details{opened}><summary>{html.escape(section.title)}</summary>")
        parts.append(_lines_html(section))
        parts.extend(_section_diagrams(section))
        parts.append("</details>")
    parts.append("</div>")
    return "\n".join(parts) + "\n"


def verify_bundle(report: Any) -> dict:
    """The display bundle of a VerifyReport: its CLI text and its HTML."""
    sections = _verify_sections(report)
    notes = report.notes + report.errors + report.check_errors
    return {"text/plain": render_text(report), "text/html": report_html(sections, report.verdict, notes)}


def test_bundle(report: Any) -> dict:
    """The display bundle of a TestReport: its CLI text and its HTML."""
    sections = _test_sections(report)
    notes = list(_get(report, "notes", default=[]) or [])
    return {"text/plain": report.render_text(), "text/html": report_html(sections, _verdict(report, sections), notes)}


test_bundle.__test__ = False  # a public API function, not a pytest test
