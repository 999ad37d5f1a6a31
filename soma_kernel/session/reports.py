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

A big report (more than SUMMARY_ABOVE_LINES result lines: a machine of
thousands of states has a line per state) is shown as a summary, its two
views alike: the verdict and notes, each section's counts, its first lines
and every failure (up to a bound) with its counter-example shortened, the
machine's first states and edges, and how many lines each section leaves
out; no drawing of a machine past the diagram's limit. The whole report is
`%verify --full` / `%test --full`, and its text is saved to a file named at
the end of the summary. Small reports are unchanged.

Reports are read through one adapter per kind: `_verify_sections` reads a
VerifyReport (analysis.verify.report: machines with their model, check lines
and temporal results, then the check groups); `_test_sections` reads a
testing.runner.TestReport (`cells`, each with `name` and `outcomes`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..analysis.verify.report import counter_example_text, labelled_trace, render_text
from ..syntax.machines import MachineModel
from .diagrams import MAX_LAYOUT_EDGES, MAX_LAYOUT_STATES, diagram_bundle

MARKS = ("✓", "⚠", "✗")
MAX_DIAGRAMS_PER_SECTION = 5
SUMMARY_ABOVE_LINES = 400        # a report of more result lines than this is shown as a summary
SUMMARY_FIRST_LINES = 20         # the first lines of each section a summary keeps
SUMMARY_FAILURES = 20            # and its failures (✗), at most this many per section
SUMMARY_LINE_CHARS = 240         # a longer line or detail is cut, saying how much it leaves out
SUMMARY_PATH_STATES = 12         # a counter-example shows its first states and its last ones
SUMMARY_FIRST_STATES = 10        # a machine's first states and edges in a summary
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
    counts: Optional[dict] = None            # a summary's: the whole section's counts by mark
    left_out: dict = field(default_factory=dict)  # a summary's: lines not shown, by mark

    def count(self, mark: str) -> int:
        """How many lines carry `mark` (in the whole section, for a summary)."""
        if self.counts is not None:
            return self.counts.get(mark, 0)
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
    """A section's lines as a `<pre>` block (with what a summary leaves out)."""
    lines = [_line_html(line) for line in section.lines]
    if section.left_out:
        shown = ", ".join(f"{count:,} {mark}" for mark, count in sorted(section.left_out.items()))
        lines.append(html.escape(f"… and {sum(section.left_out.values()):,} more lines ({shown})"))
    return "<pre>" + "\n".join(lines) + "</pre>"


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


def verify_bundle(report: Any, full: bool = False, save: Optional[Callable[[str], str]] = None) -> dict:
    """The display bundle of a VerifyReport: its CLI text and its HTML; a summary of a big
    report unless `full` (`save(text)` keeps the whole text and names where)."""
    sections = _verify_sections(report)
    notes = report.notes + report.errors + report.check_errors
    return _bundle(sections, report.verdict, notes, lambda: render_text(report), full, save, "%verify --full")


def test_bundle(report: Any, full: bool = False, save: Optional[Callable[[str], str]] = None) -> dict:
    """The display bundle of a TestReport: its CLI text and its HTML (a big one summarised, as verify_bundle)."""
    sections = _test_sections(report)
    notes = list(_get(report, "notes", default=[]) or [])
    return _bundle(sections, _verdict(report, sections), notes, report.render_text, full, save, "%test --full")


def _bundle(sections: list[ReportSection], verdict: str, notes: list[str], text: Callable[[], str], full: bool,
            save: Optional[Callable[[str], str]], whole: str) -> dict:
    """The whole report's two views, or a big report's summary."""
    if full or sum(len(s.lines) for s in sections) <= SUMMARY_ABOVE_LINES:
        return {"text/plain": text(), "text/html": report_html(sections, verdict, notes)}
    complete = text()
    where = save(complete) if save is not None else None
    total = sum(len(s.lines) for s in sections)
    footer = (f"summary of a report of {total} result lines ({len(complete.encode()):,} bytes): `{whole}` shows it "
              "whole" + (f"; its text is in {where}" if where else ""))
    short = [_summarised(section) for section in sections]
    return {"text/plain": summary_text(short, verdict, notes, footer),
            "text/html": report_html(short, verdict, notes + [footer])}


def _summarised(section: ReportSection) -> ReportSection:
    """A section cut to its first lines and its failures, its lines shortened, its counts whole."""
    failures = {id(line) for line in [l for l in section.lines if l.mark == "✗"][:SUMMARY_FAILURES]}
    kept, left_out = [], {}
    for number, line in enumerate(section.lines):
        if number < SUMMARY_FIRST_LINES or id(line) in failures:
            kept.append(_shortened(line))
        else:
            left_out[line.mark] = left_out.get(line.mark, 0) + 1
    model = section.model
    if model is not None:
        kept[:0] = _first_states_and_edges(model)
        if len(model.states) > MAX_LAYOUT_STATES or len(model.edges) > MAX_LAYOUT_EDGES:
            model = None  # past the diagram's limit: `%diagram` lists its edges on demand
    counts = {mark: section.count(mark) for mark in MARKS}
    return ReportSection(section.name, kept, model, counts, left_out)


def _first_states_and_edges(model: MachineModel) -> list[ReportLine]:
    """Two `·` lines: the machine's first states and first edges, with how many there are."""
    states = model.states[:SUMMARY_FIRST_STATES]
    edges = [f"{edge.src} → {edge.dst}" for edge in model.edges[:SUMMARY_FIRST_STATES]]
    return [ReportLine("·", f"states ({len(model.states)}): {', '.join(states)}"
                            + (", …" if len(model.states) > len(states) else "")),
            ReportLine("·", f"edges ({len(model.edges)}): {', '.join(edges)}"
                            + (", …" if len(model.edges) > len(edges) else ""))]


def _shortened(line: ReportLine) -> ReportLine:
    """A line whose text and details are cut to SUMMARY_LINE_CHARS and whose path keeps its ends."""
    path = line.path
    if len(path) > 2 * SUMMARY_PATH_STATES:
        path = []  # too long to draw in a summary; its text shows its ends
    return ReportLine(line.mark, _cut(line.text), [_cut(detail) for detail in line.details], path, line.drawing_label)


def _cut(text: str) -> str:
    """`text`, or its first SUMMARY_LINE_CHARS characters and how many more there are."""
    if len(text) <= SUMMARY_LINE_CHARS:
        return text
    return f"{text[:SUMMARY_LINE_CHARS]}… ({len(text) - SUMMARY_LINE_CHARS:,} more characters)"


def summary_text(sections: list[ReportSection], verdict: str, notes: list[str], footer: str) -> str:
    """The text view of a summary: verdict and notes, each section's title, lines and what it leaves out."""
    lines = [verdict] + notes
    for section in sections:
        lines += ["", section.title]
        for line in section.lines:
            lines.append(f"  {line.mark} {line.text}")
            lines += [f"    {detail}" for detail in line.details]
        if section.left_out:
            shown = ", ".join(f"{count:,} {mark}" for mark, count in sorted(section.left_out.items()))
            lines.append(f"  … and {sum(section.left_out.values()):,} more lines ({shown})")
    return "\n".join(lines + ["", footer]) + "\n"


test_bundle.__test__ = False  # a public API function, not a pytest test
