"""Diagrams of state machines: DOT, mermaid, text, SVG bundle and the large-machine fallback."""

import base64
import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from soma_kernel.session import diagrams, svg
from soma_kernel.session.diagrams import diagram_bundle, to_dot, to_mermaid, to_text
from soma_kernel.syntax import ast
from soma_kernel.syntax.machines import build_model, models_of
from soma_kernel.syntax.parser import parse

SEEDS = Path(__file__).parent / "seeds"


def seed_model(name: str):
    """The one machine of a seed program, parsed from its .cell file."""
    path = SEEDS / name / f"{name}.cell"
    (model,) = models_of(parse(path.read_text(encoding="utf-8"), str(path)))
    return model


@pytest.fixture
def refund():
    return seed_model("refund_agent")


@pytest.fixture
def triage():
    return seed_model("triage_agent")


HEADER = '''  graph [rankdir=LR, fontname="Helvetica"];
  node [shape=circle, fontname="Helvetica", fontsize=11];
  edge [fontname="Helvetica", fontsize=9];
  "__start__" [shape=point, width=0.12, label=""];
'''

REFUND_DOT = ('digraph "request" {\n' + HEADER + '''  "__start__" -> "received";
  "received";
  "decided";
  "paid" [shape=doublecircle];
  "denied" [shape=doublecircle];
  "escalated" [shape=doublecircle];
  "failed" [shape=doublecircle];
  "received" -> "decided";
  "decided" -> "paid" [label="[amount <= order.amount && order.days <= 30]"];
  "decided" -> "denied";
  "decided" -> "escalated";
  "received" -> "failed" [style=dashed, color="#888888", fontcolor="#888888"];
  "decided" -> "failed" [style=dashed, color="#888888", fontcolor="#888888"];
}
''')

TRIAGE_DOT = ('digraph "ticket" {\n' + HEADER + '''  "__start__" -> "inbox";
  "inbox";
  "urgent";
  "routine";
  "done" [shape=doublecircle];
  "inbox" -> "urgent";
  "inbox" -> "routine";
  "urgent" -> "done";
  "routine" -> "done";
}
''')


def test_refund_dot_exact(refund):
    assert to_dot(refund) == REFUND_DOT


def test_triage_dot_exact(triage):
    assert to_dot(triage) == TRIAGE_DOT


def test_dot_is_deterministic(refund):
    assert to_dot(refund, {"decided": 2}, ["received", "decided"]) == \
        to_dot(seed_model("refund_agent"), {"decided": 2}, ["received", "decided"])


def test_instances_shown_on_nodes(triage):
    dot = to_dot(triage, instances={"urgent": 3, "done": 1, "inbox": 0})
    assert '"urgent" [label="urgent\\n3 live", style=filled' in dot
    assert '"done" [shape=doublecircle, label="done\\n1 live"' in dot
    assert '"inbox";' in dot  # zero instances: no count


def test_highlight_marks_path_nodes_and_steps(refund):
    dot = to_dot(refund, highlight=["received", "decided", "paid"])
    red = 'color="#d62728", fontcolor="#d62728", penwidth=2.5'
    assert f'"received" [{red}];' in dot
    assert f'"paid" [shape=doublecircle, {red}];' in dot
    assert f'"received" -> "decided" [{red}];' in dot
    assert f'"decided" -> "paid" [label="[amount <= order.amount && order.days <= 30]", {red}];' in dot
    assert '"decided" -> "denied";' in dot  # not on the path
    assert '\n  "denied" [shape=doublecircle];\n' in dot


def test_highlight_ignores_steps_that_are_not_edges(triage):
    dot = to_dot(triage, highlight=["urgent", "routine"])
    assert '"urgent" -> "done";' in dot
    assert "penwidth" in dot.split('"urgent" [')[1].split("\n")[0]


def test_quotes_in_names_are_escaped():
    model = build_model("C", ast.StateMachine('a"b', 'a"b', [ast.Edge('a"b', "c\\d")]))
    assert '"a\\"b" -> "c\\\\d";' in to_dot(model)


def test_mermaid(refund):
    text = to_mermaid(refund, {"decided": 2}, ["received", "decided"])
    assert text.startswith("stateDiagram-v2\n    [*] --> received\n")
    assert "    decided : decided (2 live)\n" in text
    assert "    decided --> paid : [amount <= order.amount && order.days <= 30]\n" in text
    assert "    failed --> [*]\n" in text
    assert text.endswith("    class received,decided highlight\n")


def test_text_listing(triage):
    text = to_text(triage, {"routine": 4}, ["inbox", "routine"])
    assert text.splitlines()[:3] == [
        "state ticket: 4 states, 4 edges, initial 'inbox'",
        "  -> inbox <- path",
        "     urgent",
    ]
    assert "     routine [4 live] <- path" in text
    assert "     done (terminal)" in text
    assert "    inbox -> routine <- path" in text


def test_text_listing_guard_and_wildcard(refund):
    text = to_text(refund)
    assert "    decided -> paid [guard: amount <= order.amount && order.days <= 30]" in text
    assert "    received -> failed (from * -> failed)" in text


def _drawing(bundle):
    """(alt text, SVG text) of a bundle's `<img>` drawing."""
    match = re.fullmatch(r'<img class="soma-diagram" alt="([^"]*)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">\n',
                         bundle["text/html"])
    assert match, bundle["text/html"][:200]
    return html.unescape(match.group(1)), base64.b64decode(match.group(2)).decode("utf-8")


def test_svg_bundle_has_every_state(refund):
    bundle = diagram_bundle(refund, instances={"decided": 5}, highlight=["received", "decided"])
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/plain"] == to_dot(refund, {"decided": 5}, ["received", "decided"])
    alt, image = _drawing(bundle)
    root = ET.fromstring(image)
    assert root.tag.endswith("svg")
    for state in refund.states:
        assert f">{state}</text>" in image
    assert "5 live" in image
    assert "<!--" not in image and "<?xml" not in image
    assert re.fullmatch(rf"state machine {refund.name}: {len(refund.states)} states, \d+ edges, "
                        rf"initial {refund.initial}; highlighted path received → decided", alt)


def test_a_drawing_is_an_image_an_untrusted_notebook_keeps(triage):
    """JupyterLab's sanitizer strips inline <svg> and does not render image/svg+xml untrusted: only an <img> shows."""
    bundle = diagram_bundle(triage)
    assert "image/svg+xml" not in bundle and "<svg" not in bundle["text/html"]
    alt, image = _drawing(bundle)
    assert image.startswith("<svg") and "highlighted" not in alt


def test_svg_is_byte_stable(triage):
    assert diagram_bundle(triage) == diagram_bundle(triage)


def chain(n: int):
    """A linear machine s0 -> s1 -> … -> s(n-1)."""
    edges = [ast.Edge(f"s{i}", f"s{i + 1}") for i in range(n - 1)]
    return build_model("Big", ast.StateMachine("big", "s0", edges))


def test_large_machine_falls_back_to_a_table_without_a_layout(monkeypatch):
    def layout_attempted(dot, timeout):
        raise AssertionError("a machine over the limits must not be laid out")
    monkeypatch.setattr(svg, "render_svg", layout_attempted)
    model = chain(5000)
    bundle = diagram_bundle(model, highlight=["s0", "s1"])
    assert set(bundle) == {"text/html", "text/plain"}
    assert "5000 states and 4999 edges" in bundle["text/html"]
    assert "<tr><td>s10</td><td>s11</td>" in bundle["text/html"]
    assert "… and 2999 more edges" in bundle["text/html"]
    assert bundle["text/plain"].startswith('digraph "big" {')
    assert '"s4998" -> "s4999";' in bundle["text/plain"]


def test_layout_timeout_falls_back(monkeypatch, triage):
    def slow(dot, timeout):
        raise svg.RenderTimeout(f"layout took longer than {timeout:g} s")
    monkeypatch.setattr(svg, "render_svg", slow)
    bundle = diagram_bundle(triage, timeout=0.5)
    assert "took longer than 0.5 s" in bundle["text/html"]
    assert "<tr><td>inbox</td><td>urgent</td>" in bundle["text/html"]
    assert bundle["text/plain"] == TRIAGE_DOT


def test_real_timeout_kills_the_renderer():
    """A dense labelled graph can't be laid out in 0.2 s: the renderer is stopped."""
    lines = [f'  n{i} -> n{(i * 7 + j) % 150} [label="guard {i} {j}"];' for i in range(150) for j in range(3)]
    dense = "digraph g {\n" + "\n".join(lines) + "\n}\n"
    with pytest.raises(svg.RenderTimeout, match="took longer than 0.2 s"):
        svg.render_svg(dense, timeout=0.2)


def test_missing_renderer_falls_back(monkeypatch, triage):
    monkeypatch.setattr(svg, "find_renderer", lambda: None)
    bundle = diagram_bundle(triage)
    assert "could not be drawn (no DOT renderer found" in bundle["text/html"]


def test_renderer_rejects_bad_dot():
    with pytest.raises(svg.RenderError):
        svg.render_svg("digraph { -> }")


def test_sanitize_svg_drops_prolog_and_comments():
    raw = '<?xml version="1.0"?>\n<!DOCTYPE svg>\n<!-- Generated by x -->\n<svg><!-- a --><g/></svg>\n'
    assert svg.sanitize_svg(raw) == "<svg><g/></svg>\n"


def test_edge_table_escapes_html():
    model = build_model("C", ast.StateMachine("m", "a", [ast.Edge("a", "b", ast.Binary("<", ast.Name("x"), ast.Literal(1)))]))
    table = diagrams.edge_table_html(model, "a <b> message")
    assert "a &lt;b&gt; message" in table
    assert "<td>x &lt; 1</td>" in table
