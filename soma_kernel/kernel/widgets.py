"""The `verify` and `test` result widgets.

A report becomes an ipywidgets VBox: a verdict line, then an Accordion with
one collapsible section per state machine (verify) or per test cell (test).
Each section title carries its ✓ ⚠ ✗ counts; a section lists its lines,
and a verify section shows the machine's diagram with every counter-example
path highlighted (the section holding the first failure opens itself).

The display bundle sent with the widget has three views of the same report:
application/vnd.jupyter.widget-view+json (the live widget in Lab), text/plain
identical to the CLI output (what nbval compares), and a text/html fallback
of `<details>` sections for nbconvert and GitHub, where widgets don't run.

Reports are read through one adapter per kind (`_verify_sections`,
`_test_sections`) by attribute name, so this module depends only on their
shape: a verify report has `machines` (each with `name`, `lines` of
`mark`/`text`/`trace`, and `temporal` results with `property`, `passed`,
`message`, `counter_example`, `loop_start`) and `verdict`; a test report has
`cells` (each with `name` and `results` of `passed`/`line`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..analysis.model import MachineModel
from .diagrams import diagram_bundle

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
MARKS = ("✓", "⚠", "✗")
MAX_DIAGRAMS_PER_SECTION = 5
FAILURE_COLOR = "#d62728"
WARNING_COLOR = "#b8860b"


@dataclass
class ReportLine:
    """One result line: its mark (✓ ⚠ ✗ ·), text and an optional state path."""

    mark: str
    text: str
    path: list[str] = field(default_factory=list)


@dataclass
class ReportSection:
    """One collapsible section: a machine's checks or a test cell's rules."""

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
    def failing_paths(self) -> list[list[str]]:
        """State paths of the lines that warn or fail, in line order."""
        return [line.path for line in self.lines if line.path and line.mark in ("⚠", "✗")]


# ---------------------------------------------------------------- adapters

def _get(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of `names` present on `obj` (as attribute or mapping key)."""
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def _text_twin(report: Any) -> str:
    """The report's CLI text: its `render_text()` method, or the module's."""
    method = getattr(report, "render_text", None)
    if callable(method):
        return method()
    from ..analysis.verify import render_text
    return render_text(report)


def _verify_sections(report: Any, models: dict[str, MachineModel]) -> list[ReportSection]:
    """Read a VerifyReport into sections, one per machine."""
    sections = []
    for machine in _get(report, "machines", "sections", default=[]) or []:
        name = str(_get(machine, "name", "machine", "title", default=""))
        lines = [_verify_line(line) for line in _get(machine, "lines", "checks", default=[]) or []]
        lines += _temporal_lines(_get(machine, "temporal", "temporal_results", default=[]) or [])
        model = _get(machine, "model", default=None) or models.get(name)
        sections.append(ReportSection(name, lines, model))
    return sections


def _verify_line(line: Any) -> ReportLine:
    """One check line of a machine."""
    path = _get(line, "trace", "path", "states", default=None) or []
    return ReportLine(str(_get(line, "mark", default="·")), str(_get(line, "text", default="")), list(path))


def _temporal_lines(results: Iterable[Any]) -> list[ReportLine]:
    """Temporal results as lines; a counter-example adds its own line."""
    lines = []
    for result in results:
        passed = bool(_get(result, "passed", default=False))
        text = f"{_get(result, 'property', 'name', default='')} — {_get(result, 'message', default='')}"
        states = list(_get(result, "counter_example", default=None) or [])
        loop_start = _get(result, "loop_start", default=None)
        path = states + [states[loop_start]] if states and loop_start is not None else states
        lines.append(ReportLine("✓" if passed else "✗", text, path))
        if states:
            lines.append(ReportLine("·", counter_example_text(states, loop_start)))
    return lines


def counter_example_text(states: list[str], loop_start: Optional[int] = None) -> str:
    """`counter-example: a → b → c`, closed by `(cycle back to 'b')` for a lasso."""
    text = "counter-example: " + " → ".join(states)
    if loop_start is not None:
        text += f" (cycle back to '{states[loop_start]}')"
    return text


def _test_sections(report: Any) -> list[ReportSection]:
    """Read a TestReport into sections, one per test cell."""
    sections = []
    for cell in _get(report, "cells", "sections", default=[]) or []:
        name = str(_get(cell, "name", default=""))
        lines = [_test_line(result) for result in _get(cell, "results", "rules", default=[]) or []]
        sections.append(ReportSection(f"test {name}", lines))
    return sections


def _test_line(result: Any) -> ReportLine:
    """One rule result; a leading ✓/✗ already in its text is not repeated."""
    mark = "✓" if _get(result, "passed", default=False) else "✗"
    text = str(_get(result, "line", "text", default=""))
    if text[:2] in ("✓ ", "✗ "):
        text = text[2:]
    return ReportLine(mark, text)


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
    """One escaped line, coloured when it warns or fails."""
    text = html.escape(f"{line.mark} {line.text}")
    color = {"✗": FAILURE_COLOR, "⚠": WARNING_COLOR}.get(line.mark)
    return f'<span style="color:{color}">{text}</span>' if color else text


def _lines_html(section: ReportSection) -> str:
    """A section's lines as a `<pre>` block."""
    return "<pre>" + "\n".join(_line_html(line) for line in section.lines) + "</pre>"


def _diagram_html(model: MachineModel, highlight: Optional[list[str]]) -> str:
    """A machine diagram as inline HTML: the SVG, or the edge-table fallback."""
    bundle = diagram_bundle(model, highlight=highlight)
    return bundle.get("image/svg+xml") or bundle.get("text/html", "")


def _section_diagrams(section: ReportSection, always: bool) -> list[str]:
    """Diagrams of a section: one per failing path, else the plain one if `always`."""
    if section.model is None:
        return []
    paths = section.failing_paths[:MAX_DIAGRAMS_PER_SECTION]
    if paths:
        return [_diagram_html(section.model, path) for path in paths]
    return [_diagram_html(section.model, None)] if always else []


def _fallback_html(sections: list[ReportSection], verdict: str) -> str:
    """The `<details>` view for renderers without widgets.

    Diagrams appear only for counter-examples, to keep saved notebooks small.
    """
    parts = ['<div class="soma-report">', f"<p><b>{html.escape(verdict)}</b></p>"]
    for section in sections:
        opened = " open" if section.count("✗") else ""
        parts.append(f"<details{opened}><summary>{html.escape(section.title)}</summary>")
        parts.append(_lines_html(section))
        parts.extend(_section_diagrams(section, always=False))
        parts.append("</details>")
    parts.append("</div>")
    return "\n".join(parts) + "\n"


def _build_widget(sections: list[ReportSection], verdict: str):
    """VBox(verdict, Accordion(one VBox per section))."""
    import ipywidgets

    panels = [ipywidgets.VBox([ipywidgets.HTML(_lines_html(s))]
                              + [ipywidgets.HTML(d) for d in _section_diagrams(s, always=True)])
              for s in sections]
    accordion = ipywidgets.Accordion(children=panels, titles=tuple(s.title for s in sections))
    failing = [i for i, s in enumerate(sections) if s.count("✗")]
    accordion.selected_index = failing[0] if failing else None
    header = ipywidgets.HTML(f"<b>{html.escape(verdict)}</b>")
    return ipywidgets.VBox([header, accordion])


def _widget_and_bundle(sections: list[ReportSection], verdict: str, text: str):
    """The widget plus its display bundle (widget view, text twin, HTML)."""
    widget = _build_widget(sections, verdict)
    view = widget._repr_mimebundle_()[WIDGET_MIME]
    bundle = {WIDGET_MIME: view, "text/plain": text, "text/html": _fallback_html(sections, verdict)}
    return widget, bundle


def verify_widget(report: Any, models: Optional[Iterable[MachineModel]] = None):
    """(widget, bundle) for a VerifyReport.

    `models` supplies the machine diagrams when the report's machines don't
    carry their `model`; they are matched by machine name.
    """
    by_name = {m.name: m for m in models or []}
    sections = _verify_sections(report, by_name)
    return _widget_and_bundle(sections, _verdict(report, sections), _text_twin(report))


def test_widget(report: Any):
    """(widget, bundle) for a TestReport."""
    sections = _test_sections(report)
    return _widget_and_bundle(sections, _verdict(report, sections), _text_twin(report))


test_widget.__test__ = False  # a public API function, not a pytest test
