"""Whatever is being typed, the language server's analysis and every answer it gives come back without an
exception: random cuts, insertions and truncations of the seeds and of a notebook, at random cursors."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soma_kernel.lsp import navigation
from soma_kernel.lsp.completion import completions
from soma_kernel.lsp.convert import Lines
from soma_kernel.lsp.document import analyse
from soma_kernel.lsp.hover import hover
from soma_kernel.lsp.semantic import encode
from soma_kernel.lsp.signatures import signature_at
from soma_kernel.lsp.workspace import Workspace
from soma_kernel.syntax.tokens import tokenize

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = "\n\n\n".join("".join(cell["source"]) for cell in json.loads(
    (REPO / "notebooks" / "02_refund_agent.ipynb").read_text())["cells"])
TEXTS = [(REPO / "tests/seeds/refund_agent/refund_agent.cell").read_text(),
         (REPO / "tests/seeds/triage_agent/triage_agent.cell").read_text(), NOTEBOOK]
PIECES = ["{", "}", "(", ")", '"', '"""', "/*", "*/", "%x", "%%toml\n[x", "->", ".", ",", "let ", "on ", "é😀",
          "²", "\\", "{x", "cell ", "state s {", "\n\n\n", "?len", "transition(", "Cell.", "map(\""]


class IdentityCodec:
    """A position codec that leaves columns as code points (the conversion is tested over stdio)."""

    def position_to_client_units(self, lines, position):
        return position

    def position_from_client_units(self, lines, position):
        return position


@st.composite
def edited(draw):
    """A seed or notebook text after one to three random edits, and whether it is a notebook."""
    which = draw(st.integers(0, len(TEXTS) - 1))
    text = TEXTS[which]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["cut", "insert", "truncate"]))
        if kind == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 60)):]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
        else:
            text = text[:at]
    return text, which == 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited(), st.lists(st.floats(0, 1), min_size=3, max_size=3))
def test_every_request_answers_on_any_half_typed_text(document, cursors):
    text, notebook = document
    uri = "file:///tmp/doc.ipynb" if notebook else "file:///tmp/doc.cell"
    workspace = Workspace()
    analysis = analyse(text, uri, "/nonexistent/doc")
    entry = workspace.put(uri, "/nonexistent/doc", analysis)
    for fraction in cursors:
        offset = int(fraction * len(text))
        completions(analysis, text, offset)
        signature_at(analysis, text, offset)
        hover(workspace, entry, offset)
        navigation.definitions(workspace, entry, offset)
        navigation.references(workspace, entry, offset, True)
    navigation.outline(entry)
    encode(analysis.tokens, Lines(text, IdentityCodec()))
    tokens = tokenize(text)
    assert all(a.end <= b.start for a, b in zip(tokens, tokens[1:]))
    assert all(d.span.end <= len(text) for d in analysis.diagnostics)
