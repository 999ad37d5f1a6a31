"""The verify and test result widgets and their display bundles.

ipywidgets without a kernel talks to `comm`'s DummyComm, so widgets are
built here exactly as in the kernel. Verify reports are real VerifyReport
objects; test reports are the runner's own TestReport objects.
"""

import re
from pathlib import Path

import ipywidgets

from soma_kernel.syntax.machines import build_model
from soma_kernel.analysis.verify.report import (CheckGroup, CheckLine, MachineReport, Step,
                                                VerifyReport, render_text)
from soma_kernel.analysis.verify.temporal import TemporalResult
from soma_kernel.session.widgets import WIDGET_MIME, test_widget, verify_widget
from soma_kernel.syntax import ast
from soma_kernel.testing.runner import RuleOutcome
from soma_kernel.testing.runner import TestCellResult as CellResult
from soma_kernel.testing.runner import TestReport as RunReport


def make_report(cells, text):
    """A runner report with the given cells whose printed text is `text`."""
    return RunReport(cells=cells, lines=text.rstrip("\n").split("\n"))


def passed(line):
    return RuleOutcome([line], passed=True, counted=True)


def failed(*lines):
    return RuleOutcome(list(lines), passed=False, counted=True)


def ticket_model():
    """A four-state machine with a loop: inbox -> open <-> waiting, open -> done."""
    return build_model("Desk", ast.StateMachine("ticket", "inbox", [
        ast.Edge("inbox", "open"), ast.Edge("open", "waiting"),
        ast.Edge("waiting", "open"), ast.Edge("open", "done"),
    ]))


def failing_verify_report():
    lasso = TemporalResult("eventually(done)", False, "a run can avoid 'done' forever",
                           ["inbox", "open", "waiting", "open"], 1,
                           [Step("inbox", "open", ["take"]), Step("open", "waiting", ["park"]),
                            Step("waiting", "open", ["resume"])])
    machine = MachineReport(ticket_model(), "ticket", [
        CheckLine("✓", "4 states, 4 transitions"),
        CheckLine("⚠", "guard kept in the model"),
        CheckLine("·", "transition sources: note"),
    ], [TemporalResult("deadlock_free", True, "no deadlocks in any reachable state"), lasso])
    group = CheckGroup("Desk/invariants", [CheckLine("✓", "invariant n >= 0 — proven")])
    return VerifyReport("desk.cell", notes=["note: a note <here>"], machines=[machine], groups=[group])


def test_verify_bundle_keys_and_text_twin():
    report = failing_verify_report()
    widget, bundle = verify_widget(report)
    assert set(bundle) == {WIDGET_MIME, "text/plain", "text/html"}
    assert bundle["text/plain"] == render_text(report)
    assert bundle["text/plain"].endswith("VERIFY FAILED — 1 temporal property violated\n")
    assert bundle[WIDGET_MIME]["model_id"] == widget.model_id
    assert bundle[WIDGET_MIME]["version_major"] == 2


def test_verify_widget_sections_and_counts():
    widget, _ = verify_widget(failing_verify_report())
    header, accordion = widget.children
    assert isinstance(accordion, ipywidgets.Accordion)
    assert "<b>VERIFY FAILED — 1 temporal property violated</b>" in header.value
    assert "<p>note: a note &lt;here&gt;</p>" in header.value
    assert accordion.titles == ("ticket  ✓ 2  ⚠ 1  ✗ 1", "Desk/invariants  ✓ 1  ⚠ 0  ✗ 0")
    assert accordion.selected_index == 0  # the failing section is open
    lines = accordion.children[0].children[0].value
    assert "  counter-example: inbox → open → waiting → ... cycle back to &#x27;open&#x27;" in lines
    assert "    inbox --take--&gt; open --park--&gt; waiting --resume--&gt; open" in lines
    assert '<span style="color:#d62728">✗ eventually(done) — a run can avoid' in lines
    assert len(accordion.children[1].children) == 1  # a group has no diagram


def test_counter_example_highlighted_on_the_diagram():
    widget, bundle = verify_widget(failing_verify_report())
    svg = widget.children[1].children[0].children[1].value
    assert svg.startswith("<svg")
    assert svg.count('stroke="#d62728"') >= 6  # 3 path states + 3 steps (the loop closes)
    html = bundle["text/html"]
    assert html.startswith('<div class="soma-report">\n<p><b>VERIFY FAILED')
    assert "<details open><summary>ticket  ✓ 2  ⚠ 1  ✗ 1</summary>" in html
    assert "<details><summary>Desk/invariants  ✓ 1  ⚠ 0  ✗ 0</summary>" in html
    assert html.count("<svg") == 1


def test_each_drawing_in_the_html_has_its_dot_twin_right_after_it():
    import html as html_module

    _, bundle = verify_widget(failing_verify_report())
    page = bundle["text/html"]
    twin = re.search(r'</svg>\s*<details class="soma-dot"><summary>DOT</summary><pre>(.*?)</pre></details>', page, re.S)
    dot = html_module.unescape(twin.group(1))
    assert dot.startswith('digraph "ticket" {')
    assert '"inbox" -> "open" [color="#d62728", fontcolor="#d62728", penwidth=2.5];' in dot  # its first step


def test_the_nbval_sanitizer_blanks_each_drawing_and_keeps_the_dot_twins():
    config = (Path(__file__).resolve().parents[1] / "notebooks" / "nbval-sanitize.cfg").read_text(encoding="utf-8")
    regex = re.search(r"^regex: (.*)$", config, re.M).group(1)
    two = "<svg a></svg> <details>DOT one</details> <svg b></svg> <details>DOT two</details>"
    assert re.sub(regex, "<SVG>", two) == "<SVG><details>DOT one</details> <SVG><details>DOT two</details>"


def test_check_line_trace_is_highlighted():
    line = CheckLine("✗", "deadlock in 'waiting'", ["inbox", "open", "waiting"], [Step("inbox", "open")])
    report = VerifyReport("desk.cell", machines=[MachineReport(ticket_model(), "ticket", [line])])
    widget, bundle = verify_widget(report)
    lines = widget.children[1].children[0].children[0].value
    assert "  trace: inbox → open → waiting" in lines
    assert bundle["text/html"].count("<svg") == 1


def test_passing_verify_html_has_no_diagram_but_widget_has():
    machine = MachineReport(ticket_model(), "ticket", [CheckLine("✓", "all states reachable from 'inbox'")],
                            [TemporalResult("deadlock_free", True, "no deadlocks in any reachable state")])
    widget, bundle = verify_widget(VerifyReport("desk.cell", machines=[machine]))
    assert bundle["text/plain"].endswith("VERIFY OK\n")
    assert "<svg" not in bundle["text/html"]
    assert "<details><summary>ticket  ✓ 2  ⚠ 0  ✗ 0</summary>" in bundle["text/html"]
    assert widget.children[1].selected_index is None
    assert widget.children[1].children[0].children[1].value.startswith("<svg")


def test_verify_bundle_is_deterministic_apart_from_model_id():
    _, first = verify_widget(failing_verify_report())
    _, second = verify_widget(failing_verify_report())
    assert first[WIDGET_MIME]["model_id"] != second[WIDGET_MIME]["model_id"]
    assert first["text/html"] == second["text/html"]
    assert first["text/plain"] == second["text/plain"]


CLI_TEST = "test T ...\n  ✓ assert f() == 1\n  ✗ assert g() == 2\n\n2 tests: 1 passed, 1 failed\n"


def test_test_widget_bundle_and_sections():
    report = make_report([CellResult("T", [passed("  ✓ assert f() == 1"),
                                               failed("  ✗ t.cell:3  assert g() == 2 — FAILED", "         left:  1")]),
                          CellResult("U", [passed("  ✓ assert h()"), RuleOutcome([])])], CLI_TEST)
    widget, bundle = test_widget(report)
    assert set(bundle) == {WIDGET_MIME, "text/plain", "text/html"}
    assert bundle["text/plain"] == CLI_TEST
    header, accordion = widget.children
    assert "2 passed, 1 failed" in header.value
    assert accordion.titles == ("test T  ✓ 1  ⚠ 0  ✗ 1", "test U  ✓ 1  ⚠ 0  ✗ 0")
    assert accordion.selected_index == 0
    html = bundle["text/html"]
    assert '<details open><summary>test T  ✓ 1  ⚠ 0  ✗ 1</summary>\n<pre>✓ assert f() == 1\n' in html
    assert '<span style="color:#d62728">✗ t.cell:3  assert g() == 2 — FAILED</span>' in html
    assert "left:  1" in html
    assert "<details><summary>test U  ✓ 1  ⚠ 0  ✗ 0</summary>" in html


def test_test_widget_escapes_rule_text():
    report = make_report([CellResult("T", [passed('  ✓ assert f("<b>") == 1')])], "x\n")
    _, bundle = test_widget(report)
    assert "f(&quot;&lt;b&gt;&quot;)" in bundle["text/html"]
    assert "<b>\"" not in bundle["text/html"]


TICKET_CELL = """cell Ticket {
    state life {
        initial: open
        open -> working
        working -> approved
        approved -> closed
        working -> closed
    }
    on start(id: String) { transition(id, "working") }
}"""


def test_verify_magic_highlights_a_toml_property_counter_example_in_the_widget(tmp_path):
    from ipywidgets.widgets.widget import _instances

    from soma_kernel.session.session import Session

    session = Session(directory=str(tmp_path))
    assert session.execute(TICKET_CELL, "ticket").ok
    toml = session.execute('%%toml\n[verify]\ncells = ["Ticket"]\n\n[verify.before.closed]\nrequires = ["approved"]\n')
    assert toml.ok
    bundle = session.execute("%verify").displays[0]
    assert "counter-example: open → working → closed" in bundle["text/plain"]
    widget = _instances[bundle[WIDGET_MIME]["model_id"]]
    accordion = widget.children[1]
    assert accordion.selected_index == 0 and accordion.titles[0].endswith("✗ 1")
    diagrams = [child.value for child in accordion.children[0].children[1:]]
    assert len(diagrams) == 1
    red = 'stroke="#d62728"'
    edges = {part.split("</title>")[0]: part for part in diagrams[0].split("<title>")[1:]}
    assert red in edges["open&#45;&gt;working"] and red in edges["working&#45;&gt;closed"]
    assert red not in edges["working&#45;&gt;approved"] and red not in edges["approved"]
