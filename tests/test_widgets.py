"""The verify and test result widgets and their display bundles.

ipywidgets without a kernel talks to `comm`'s DummyComm, so widgets are
built here exactly as in the kernel. The reports are small stand-ins with
the shape of VerifyReport and TestReport.
"""

from dataclasses import dataclass, field
from typing import Optional

import ipywidgets

from soma_kernel.analysis.model import build_model
from soma_kernel.kernel.widgets import WIDGET_MIME, counter_example_text, test_widget, verify_widget
from soma_kernel.syntax import ast


@dataclass
class Line:
    mark: str
    text: str
    trace: list = field(default_factory=list)


@dataclass
class Temporal:
    property: str
    passed: bool
    message: str
    counter_example: Optional[list] = None
    loop_start: Optional[int] = None


@dataclass
class Machine:
    name: str
    lines: list
    temporal: list = field(default_factory=list)


@dataclass
class FakeVerifyReport:
    machines: list
    verdict: str
    text: str

    def render_text(self):
        return self.text


@dataclass
class Rule:
    passed: bool
    line: str


@dataclass
class Cell:
    name: str
    results: list


@dataclass
class FakeTestReport:
    cells: list
    text: str

    def render_text(self):
        return self.text


def ticket_model():
    """A four-state machine with a loop: inbox -> open <-> waiting, open -> done."""
    return build_model("Desk", ast.StateMachine("ticket", "inbox", [
        ast.Edge("inbox", "open"), ast.Edge("open", "waiting"),
        ast.Edge("waiting", "open"), ast.Edge("open", "done"),
    ]))


CLI_VERIFY = "Verifying desk.cell...\n\n  ✓ 4 states\n  ✗ eventually(done) — fails\nVERIFY FAILED\n"


def failing_verify_report():
    machine = Machine("ticket", [
        Line("✓", "4 states, 4 transitions"),
        Line("⚠", "guard kept in the model"),
        Line("·", "transition sources: note"),
    ], [
        Temporal("deadlock_free", True, "no deadlocks in any reachable state"),
        Temporal("eventually(done)", False, "a run can avoid 'done' forever",
                 ["inbox", "open", "waiting"], 1),
    ])
    return FakeVerifyReport([machine], "VERIFY FAILED", CLI_VERIFY)


def test_verify_bundle_keys_and_text_twin():
    widget, bundle = verify_widget(failing_verify_report(), models=[ticket_model()])
    assert set(bundle) == {WIDGET_MIME, "text/plain", "text/html"}
    assert bundle["text/plain"] == CLI_VERIFY
    assert bundle[WIDGET_MIME]["model_id"] == widget.model_id
    assert bundle[WIDGET_MIME]["version_major"] == 2


def test_verify_widget_sections_and_counts():
    widget, _ = verify_widget(failing_verify_report(), models=[ticket_model()])
    header, accordion = widget.children
    assert isinstance(accordion, ipywidgets.Accordion)
    assert "VERIFY FAILED" in header.value
    assert accordion.titles == ("ticket  ✓ 2  ⚠ 1  ✗ 1",)
    assert accordion.selected_index == 0  # the failing section is open
    lines, diagram = accordion.children[0].children
    assert "counter-example: inbox → open → waiting (cycle back to &#x27;open&#x27;)" in lines.value
    assert '<span style="color:#d62728">✗ eventually(done) — a run can avoid' in lines.value


def test_counter_example_highlighted_on_the_diagram():
    widget, bundle = verify_widget(failing_verify_report(), models=[ticket_model()])
    svg = widget.children[1].children[0].children[1].value
    assert svg.startswith("<svg")
    assert svg.count('stroke="#d62728"') >= 6  # 3 path states + 3 steps (the loop closes)
    html = bundle["text/html"]
    assert html.startswith('<div class="soma-report">\n<p><b>VERIFY FAILED</b></p>\n<details open>')
    assert "<summary>ticket  ✓ 2  ⚠ 1  ✗ 1</summary>" in html
    assert "<svg" in html


def test_passing_verify_html_has_no_diagram_but_widget_has():
    machine = Machine("ticket", [Line("✓", "all states reachable from 'inbox'")],
                      [Temporal("deadlock_free", True, "no deadlocks in any reachable state")])
    report = FakeVerifyReport([machine], "VERIFY OK", "VERIFY OK\n")
    widget, bundle = verify_widget(report, models=[ticket_model()])
    assert "<svg" not in bundle["text/html"]
    assert "<details>" in bundle["text/html"]
    assert widget.children[1].selected_index is None
    assert widget.children[1].children[0].children[1].value.startswith("<svg")


def test_verify_without_model_has_no_diagram():
    widget, bundle = verify_widget(failing_verify_report())
    assert len(widget.children[1].children[0].children) == 1
    assert "<svg" not in bundle["text/html"]


def test_verify_bundle_is_deterministic_apart_from_model_id():
    _, first = verify_widget(failing_verify_report(), models=[ticket_model()])
    _, second = verify_widget(failing_verify_report(), models=[ticket_model()])
    assert first[WIDGET_MIME]["model_id"] != second[WIDGET_MIME]["model_id"]
    assert first["text/html"] == second["text/html"]


def test_counter_example_text():
    assert counter_example_text(["a", "b"]) == "counter-example: a → b"
    assert counter_example_text(["a", "b", "c"], 0) == "counter-example: a → b → c (cycle back to 'a')"


CLI_TEST = "test T ...\n  ✓ assert f() == 1\n  ✗ assert g() == 2\n\n2 tests: 1 passed, 1 failed\n"


def test_test_widget_bundle_and_sections():
    report = FakeTestReport([Cell("T", [Rule(True, "✓ assert f() == 1"), Rule(False, "assert g() == 2")]),
                             Cell("U", [Rule(True, "assert h()")])], CLI_TEST)
    widget, bundle = test_widget(report)
    assert set(bundle) == {WIDGET_MIME, "text/plain", "text/html"}
    assert bundle["text/plain"] == CLI_TEST
    header, accordion = widget.children
    assert "2 passed, 1 failed" in header.value
    assert accordion.titles == ("test T  ✓ 1  ⚠ 0  ✗ 1", "test U  ✓ 1  ⚠ 0  ✗ 0")
    assert accordion.selected_index == 0
    html = bundle["text/html"]
    assert '<details open><summary>test T  ✓ 1  ⚠ 0  ✗ 1</summary>\n<pre>✓ assert f() == 1\n' in html
    assert '<span style="color:#d62728">✗ assert g() == 2</span>' in html
    assert "<details><summary>test U  ✓ 1  ⚠ 0  ✗ 0</summary>" in html


def test_test_widget_escapes_rule_text():
    report = FakeTestReport([Cell("T", [Rule(True, 'assert f("<b>") == 1')])], "x\n")
    _, bundle = test_widget(report)
    assert "f(&quot;&lt;b&gt;&quot;)" in bundle["text/html"]
    assert "<b>\"" not in bundle["text/html"]
