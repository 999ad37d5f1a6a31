"""The verify and test reports and their display bundles (text and sanitizer-proof HTML).

Verify reports are real VerifyReport objects; test reports are the runner's
own TestReport objects. Drawings are read back by decoding their data URIs.
"""

import base64
import html as html_module
import re
from pathlib import Path

from soma_kernel.syntax.machines import build_model
from soma_kernel.analysis.verify.report import (CheckGroup, CheckLine, MachineReport, Step,
                                                VerifyReport, render_text)
from soma_kernel.analysis.verify.temporal import TemporalResult
from soma_kernel.session.reports import test_bundle, verify_bundle
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


IMAGE = re.compile(r'<img class="soma-diagram" alt="([^"]*)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">')


def drawings(page):
    """(alt text, SVG text) of every drawing in a report's HTML, in order."""
    return [(html_module.unescape(alt), base64.b64decode(data).decode("utf-8")) for alt, data in IMAGE.findall(page)]


def test_verify_bundle_is_the_cli_text_and_html():
    report = failing_verify_report()
    bundle = verify_bundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == render_text(report)
    assert bundle["text/plain"].endswith("VERIFY FAILED — 1 temporal property violated\n")


def test_verify_html_sections_counts_and_lines():
    page = verify_bundle(failing_verify_report())["text/html"]
    assert page.startswith('<div class="soma-report">\n<p><b>VERIFY FAILED — 1 temporal property violated</b></p>')
    assert "<p>note: a note &lt;here&gt;</p>" in page
    assert "<details open><summary>ticket  ✓ 2  ⚠ 1  ✗ 1</summary>" in page  # the failing section is open
    assert "<details><summary>Desk/invariants  ✓ 1  ⚠ 0  ✗ 0</summary>" in page
    assert "  counter-example: inbox → open → waiting → ... cycle back to &#x27;open&#x27;" in page
    assert "    inbox --take--&gt; open --park--&gt; waiting --resume--&gt; open" in page
    assert '<span style="color:#d62728">✗ eventually(done) — a run can avoid' in page
    group = page[page.index("Desk/invariants"):]
    assert "<img" not in group  # a check group has no diagram


def test_the_html_survives_a_sanitizer_that_strips_svg_and_scripts():
    page = verify_bundle(failing_verify_report())["text/html"]
    assert "<svg" not in page and "<script" not in page and "<style" not in page
    for alt, svg in drawings(page):
        assert svg.startswith("<svg") and alt.startswith("state machine ticket: 4 states, 4 edges, initial inbox")


def test_counter_example_highlighted_on_its_drawing():
    (alt, svg), = drawings(verify_bundle(failing_verify_report())["text/html"])
    assert svg.count('stroke="#d62728"') >= 6  # 3 path states + 3 steps (the loop closes)
    assert alt.endswith("highlighted path inbox → open → waiting → open")


def test_each_drawing_in_the_html_has_its_dot_twin_right_after_it():
    page = verify_bundle(failing_verify_report())["text/html"]
    twin = re.search(r'base64,[A-Za-z0-9+/=]+">\s*<details class="soma-dot"><summary>DOT</summary><pre>(.*?)</pre></details>',
                     page, re.S)
    dot = html_module.unescape(twin.group(1))
    assert dot.startswith('digraph "ticket" {')
    assert '"inbox" -> "open" [color="#d62728", fontcolor="#d62728", penwidth=2.5];' in dot  # its first step


def test_the_nbval_sanitizer_blanks_each_drawing_and_keeps_the_dot_twins():
    config = (Path(__file__).resolve().parents[1] / "notebooks" / "nbval-sanitize.cfg").read_text(encoding="utf-8")
    regex = re.search(r"^regex: (.*)$", config, re.M).group(1)
    replace = re.search(r"^replace: (.*)$", config, re.M).group(1)
    page = verify_bundle(failing_verify_report())["text/html"]
    blanked = re.sub(regex, replace, page)
    assert 'src="data:image/svg+xml;base64,SVG"' in blanked and "PHN2Zy" not in blanked  # base64 of "<svg"
    assert blanked.count("soma-dot") == page.count("soma-dot") == 1


LABELLED = re.compile(r'<p class="soma-drawing-label">([^<]*)</p><img class="soma-diagram" alt="[^"]*" '
                      r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">')


def test_each_counter_example_drawing_is_labelled_with_the_property_it_refutes():
    refuted = [TemporalResult(name, False, why, path, 1, [])
               for name, why, path in (("eventually(done)", "a run can avoid 'done' forever",
                                        ["inbox", "open", "waiting", "open"]),
                                       ("never(waiting)", "'waiting' is reachable", ["inbox", "open", "waiting"]),
                                       ("after(open, done)", "a run from 'open' can avoid 'done'",
                                        ["inbox", "open", "waiting", "open"]))]
    deadlock = CheckLine("✗", "deadlock in 'waiting'", ["inbox", "open", "waiting"], [])
    machine = MachineReport(ticket_model(), "ticket", [deadlock],
                            [TemporalResult("deadlock_free", True, "no deadlocks")] + refuted)
    page = verify_bundle(VerifyReport("desk.cell", machines=[machine]))["text/html"]
    labelled = LABELLED.findall(page)
    assert [html_module.unescape(label) for label, _ in labelled] == [
        "✗ trace of: deadlock in 'waiting'", "✗ counter-example to eventually(done)",
        "✗ counter-example to never(waiting)", "✗ counter-example to after(open, done)"]
    assert len(labelled) == len(drawings(page))  # no drawing without its label
    passing = MachineReport(ticket_model(), "ticket", [], [TemporalResult("deadlock_free", True, "no deadlocks")])
    assert "soma-drawing-label" not in verify_bundle(VerifyReport("desk.cell", machines=[passing]))["text/html"]


def test_check_line_trace_is_highlighted():
    line = CheckLine("✗", "deadlock in 'waiting'", ["inbox", "open", "waiting"], [Step("inbox", "open")])
    report = VerifyReport("desk.cell", machines=[MachineReport(ticket_model(), "ticket", [line])])
    page = verify_bundle(report)["text/html"]
    assert "  trace: inbox → open → waiting" in page
    (alt, svg), = drawings(page)
    assert alt.endswith("highlighted path inbox → open → waiting") and 'stroke="#d62728"' in svg


def test_a_passing_machine_is_drawn_plain_in_a_closed_section():
    machine = MachineReport(ticket_model(), "ticket", [CheckLine("✓", "all states reachable from 'inbox'")],
                            [TemporalResult("deadlock_free", True, "no deadlocks in any reachable state")])
    bundle = verify_bundle(VerifyReport("desk.cell", machines=[machine]))
    assert bundle["text/plain"].endswith("VERIFY OK\n")
    assert "<details><summary>ticket  ✓ 2  ⚠ 0  ✗ 0</summary>" in bundle["text/html"]
    (alt, svg), = drawings(bundle["text/html"])
    assert "highlighted" not in alt and 'stroke="#d62728"' not in svg


def test_verify_bundle_is_deterministic():
    assert verify_bundle(failing_verify_report()) == verify_bundle(failing_verify_report())


CLI_TEST = "test T ...\n  ✓ assert f() == 1\n  ✗ assert g() == 2\n\n2 tests: 1 passed, 1 failed\n"


def test_test_bundle_and_sections():
    report = make_report([CellResult("T", [passed("  ✓ assert f() == 1"),
                                               failed("  ✗ t.cell:3  assert g() == 2 — FAILED", "         left:  1")]),
                          CellResult("U", [passed("  ✓ assert h()"), RuleOutcome([])])], CLI_TEST)
    bundle = test_bundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == CLI_TEST
    page = bundle["text/html"]
    assert "<p><b>2 passed, 1 failed</b></p>" in page
    assert '<details open><summary>test T  ✓ 1  ⚠ 0  ✗ 1</summary>\n<pre>✓ assert f() == 1\n' in page
    assert '<span style="color:#d62728">✗ t.cell:3  assert g() == 2 — FAILED</span>' in page
    assert "left:  1" in page
    assert "<details><summary>test U  ✓ 1  ⚠ 0  ✗ 0</summary>" in page


def test_test_report_escapes_rule_text():
    report = make_report([CellResult("T", [passed('  ✓ assert f("<b>") == 1')])], "x\n")
    page = test_bundle(report)["text/html"]
    assert "f(&quot;&lt;b&gt;&quot;)" in page
    assert "<b>\"" not in page


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


def test_verify_magic_highlights_a_toml_property_counter_example(tmp_path):
    from soma_kernel.session.session import Session

    session = Session(directory=str(tmp_path))
    assert session.execute(TICKET_CELL, "ticket").ok
    toml = session.execute('%%toml\n[verify]\ncells = ["Ticket"]\n\n[verify.before.closed]\nrequires = ["approved"]\n')
    assert toml.ok
    bundle = session.execute("%verify").displays[0]
    assert set(bundle) == {"text/plain", "text/html"}
    assert "counter-example: open → working → closed" in bundle["text/plain"]
    assert re.search(r"<details open><summary>life  ✓ \d+  ⚠ \d+  ✗ 1</summary>", bundle["text/html"])
    (alt, svg), = drawings(bundle["text/html"])
    assert alt.endswith("highlighted path open → working → closed")
    red = 'stroke="#d62728"'
    edges = {part.split("</title>")[0]: part for part in svg.split("<title>")[1:]}
    assert red in edges["open&#45;&gt;working"] and red in edges["working&#45;&gt;closed"]
