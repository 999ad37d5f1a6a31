"""The language server driven as an editor drives it: a real `soma-kernel lsp` process over stdio (pytest-lsp).

One server serves the whole module (debounce 0); each test opens its own
documents. Positions are 0-based LSP lines and UTF-16 columns.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from soma_kernel.analysis.check import check_program
from soma_kernel.core.diagnostics import SomaSyntaxError
from soma_kernel.lsp.semantic import TOKEN_TYPES
from soma_kernel.syntax.parser import parse
from soma_kernel.runtime.builtins import builtin_entry

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEED = Path(__file__).resolve().parent / "seeds" / "refund_agent" / "refund_agent.cell"

ORDERS = """\
cell type Pay {
    variants {
        Card { last4: String }
        Cash
    }
}

cell agent Orders {
    face {
        signal place(id: String, amount: Int) -> Map
        signal total() -> Int
    }
    memory {
        items: Map<String, Int> [persistent]
        invariant items >= 0
    }
    state order {
        initial: new
        new -> paid { guard { amount > 0 } }
        new -> cancelled
    }
    on place(id: String, amount: Int) {
        items.set(id, amount)
        transition(id, "paid")
        return map("id", id)
    }
    on total() { return sum(values(items)) }
}
"""


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "soma_kernel", "lsp", "--debounce", "0"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    """A started server, initialised with a workspace folder."""
    root = tmp_path_factory.mktemp("workspace")
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=t.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name="workspace")]))
    yield
    await lsp_client.shutdown_session()


async def diagnostics_after(client: LanguageClient, uri: str, send) -> list[t.Diagnostic]:
    """Send a notification (open or change) and wait for the diagnostics it publishes for `uri`."""
    client.diagnostics.pop(uri, None)
    send()
    for _ in range(1000):
        if uri in client.diagnostics:
            return list(client.diagnostics[uri])
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics published for {uri}")


async def open_document(client: LanguageClient, uri: str, text: str) -> list[t.Diagnostic]:
    """Open a document and return its first diagnostics."""
    item = t.TextDocumentItem(uri=uri, language_id="soma", version=1, text=text)
    return await diagnostics_after(client, uri, lambda: client.text_document_did_open(
        t.DidOpenTextDocumentParams(text_document=item)))


async def replace_text(client: LanguageClient, uri: str, text: str, version: int) -> list[t.Diagnostic]:
    """Replace a document's whole text and return the diagnostics of the new text."""
    change = t.TextDocumentContentChangeWholeDocument(text=text)
    params = t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change])
    return await diagnostics_after(client, uri, lambda: client.text_document_did_change(params))


def position_of(text: str, needle: str, shift: int = 0) -> t.Position:
    """The position of the first `needle` in `text` (plus `shift` characters)."""
    offset = text.index(needle) + shift
    line = text.count("\n", 0, offset)
    return t.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))


def doc(uri: str) -> t.TextDocumentIdentifier:
    """A document identifier."""
    return t.TextDocumentIdentifier(uri=uri)


def shown(found: list[t.Diagnostic]) -> list[tuple]:
    """Diagnostics as (start line, start col, end line, end col, severity, message) tuples."""
    return [(d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
             d.severity, d.message) for d in found]


# ---------------------------------------------------------------- diagnostics


async def test_diagnostics_on_open_have_exact_ranges_and_are_cleared_after_a_fix(client, tmp_path):
    uri = (tmp_path / "orders.cell").as_uri()
    broken = ORDERS.replace("items.set(id, amount)", "items.set(id, amout)").replace(
        'transition(id, "paid")', 'transition(id, "payed")')
    found = await open_document(client, uri, broken)
    assert shown(found) == [
        (22, 22, 22, 27, t.DiagnosticSeverity.Error, "undefined variable 'amout' (did you mean 'amount'?)"),
        (23, 23, 23, 30, t.DiagnosticSeverity.Error,
         "transition(_, \"payed\"): \"payed\" is not a state of machine 'order' (did you mean 'paid'?)"),
    ]
    assert [d.code for d in found] == ["undefined_name", "invalid_transition"]
    assert found[0].related_information[0].message == "hint: bind it first (`let amout = …`) or fix the spelling"
    assert found[1].related_information[0].message == "hint: declared states: [new, paid, cancelled]"
    assert await replace_text(client, uri, ORDERS, 2) == []


async def test_a_proven_cost_bound_is_a_hint_where_the_bound_is_declared(client, tmp_path):
    seed = SEED.read_text()
    found = await open_document(client, (tmp_path / "refund_agent.cell").as_uri(), seed)
    report = check_program(parse(seed, "refund_agent.cell"))
    (note,) = report.notes
    assert shown(found) == [(note.span.line - 1, note.span.col - 1, note.span.end_line - 1, note.span.end_col - 1,
                             t.DiagnosticSeverity.Hint, note.message)]
    declared = position_of(seed, "tokens: 300")
    assert shown(found)[0][:2] == (declared.line, declared.character)


async def test_a_half_typed_handler_still_gets_the_diagnostics_of_the_rest(client, tmp_path):
    uri = (tmp_path / "typing.cell").as_uri()
    text = ORDERS.replace("    on total() {", "    on half(x: Int) {\n        let y = items.get(\n    }\n"
                                            "    on total() {\n        print(totl)") + \
        "\ncell Other {\n    on go() { return undefined_thing }\n}\n"
    found = shown(await open_document(client, uri, text))
    assert found[0][:2] == (28, 4) and found[0][5].startswith("unexpected")
    assert (30, 14, 30, 18, t.DiagnosticSeverity.Error, "undefined variable 'totl'") in found
    assert (34, 21, 34, 36, t.DiagnosticSeverity.Error, "undefined variable 'undefined_thing'") in found
    assert len(found) == 3


HALF_TYPED = """\
cell A {
    memory { items: List<Int> }
    on f(x: Int) {
        HOLE
        return 1
    }
    on g() { return zz }
}

cell B {
    on h() { return yy }
}
"""


@pytest.mark.parametrize("hole", ["let y = foo(", "if x {", 'let s = "open', "let = 3", "return x +",
                                  "for i in items {", "match x {", "/* open comment", "let y = [1, 2",
                                  "while true {\n        print(qq)"])
async def test_every_kind_of_half_typed_line_leaves_the_other_findings(client, tmp_path, hole):
    uri = (tmp_path / "hole.cell").as_uri()
    text = HALF_TYPED.replace("HOLE", hole)
    found = await open_document(client, uri, text)
    with pytest.raises(SomaSyntaxError) as raised:
        parse(text)
    first = raised.value.diagnostic
    parse_errors = [d for d in found if d.code == "parse"]
    assert [(d.range.start.line, d.message) for d in parse_errors] == [(first.span.line - 1, first.message)]
    names = {d.message for d in found if d.code == "undefined_name"}
    assert {"undefined variable 'zz'", "undefined variable 'yy'"} <= names
    assert names <= {"undefined variable 'zz'", "undefined variable 'yy'", "undefined variable 'qq'"}


@pytest.mark.parametrize("text", [
    "cell A {\n    on f() { return 1 + }\n}\n",
    "cell A {\n    on f() { let x = }\n}\n",
    "cell A {\n    memory { n Int }\n}\n",
    "cell A {\n    on f() { return \"open }\n}\n",
])
async def test_a_parse_error_alone_is_reported_where_soma_check_puts_it(client, tmp_path, text):
    with pytest.raises(SomaSyntaxError) as raised:
        parse(text)
    expected = raised.value.diagnostic
    uri = (tmp_path / "bad.cell").as_uri()
    found = await open_document(client, uri, text)
    assert shown(found) == [(expected.span.line - 1, expected.span.col - 1, expected.span.end_line - 1,
                             expected.span.end_col - 1, t.DiagnosticSeverity.Error, expected.message)]


# ---------------------------------------------------------------- notebooks


NOTEBOOK_CELLS = [
    "%%toml\n[models.fast]\nprovider = \"openai\"\nmodel = \"gpt-x\"\nkey = \"sk-do-not-show\"",
    "cell Counter [model: fast] {\n    memory { n: Map<String, Int> }\n    on bump(k: String) {\n"
    "        n.set(k, (n.get(k) ?? 0) + 1)\n        return n.get(k)\n    }\n}",
    "%check\nlet first = Counter.bump(\"a\")\n?len",
    "print(first)\nCounter.bmp(\"b\")\nprint(frist)",
]


def notebook_text(cells: list[str]) -> str:
    """A notebook as jupyterlab-lsp sends it: cells joined by two blank lines."""
    return "\n\n\n".join(cells) + "\n"


async def test_notebook_cells_form_one_document_with_magics_accepted(client, tmp_path):
    uri = (tmp_path / "counter.ipynb").as_uri()
    text = notebook_text(NOTEBOOK_CELLS)
    found = shown(await open_document(client, uri, text))
    bmp = position_of(text, "bmp")
    frist = position_of(text, "frist")
    assert found == [
        (bmp.line, bmp.character - 8, bmp.line, bmp.character + 8, t.DiagnosticSeverity.Error,
         "cell 'Counter' has no handler 'bmp' (did you mean 'bump'?)"),
        (frist.line, frist.character, frist.line, frist.character + 5, t.DiagnosticSeverity.Error,
         "undefined variable 'frist' (did you mean 'first'?)"),
    ]
    definition = await client.text_document_definition_async(t.DefinitionParams(
        text_document=doc(uri), position=position_of(text, "bump(\"a\")", 1)))
    assert [(d.uri, d.range.start) for d in definition] == [(uri, position_of(text, "bump(k"))]
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=doc(uri), position=position_of(text, "[model: fast]", 9)))
    assert "provider: `openai`" in hover.contents.value and "gpt-x" in hover.contents.value
    assert "sk-do-not-show" not in hover.contents.value
    magic = await client.text_document_completion_async(t.CompletionParams(
        text_document=doc(uri), position=position_of(text, "%check", 3)))
    assert "check" in [item.label for item in magic.items]
    member = await client.text_document_completion_async(t.CompletionParams(
        text_document=doc(uri), position=position_of(text, "Counter.bump", 8)))
    assert {item.label for item in member.items} == {"bump", "n"}


async def test_a_definition_re_made_in_a_later_cell_replaces_the_earlier_one(client, tmp_path):
    uri = (tmp_path / "redefine.ipynb").as_uri()
    first = "cell A {\n    on f() { return 1 }\n}"
    second = "cell A {\n    on f() { return 2 }\n    on g() { return f() + missing }\n}"
    text = notebook_text([first, "A.f()", second, "A.g()"])
    found = shown(await open_document(client, uri, text))
    assert [message for *_, message in found] == ["undefined variable 'missing'"]
    definition = await client.text_document_definition_async(t.DefinitionParams(
        text_document=doc(uri), position=position_of(text, "return f()", 7)))
    assert [d.range.start.line for d in definition] == [text.count("\n", 0, text.index("on f() { return 2"))]


async def test_a_bad_toml_cell_is_a_diagnostic_on_its_line(client, tmp_path):
    uri = (tmp_path / "toml.ipynb").as_uri()
    text = notebook_text(["%%toml\n[agent]\nmock = \"echo\"\n[nonsense]\nx = 1", "cell A {}"])
    found = shown(await open_document(client, uri, text))
    assert len(found) == 1 and found[0][0] == 3 and "unknown section [nonsense]" in found[0][5]


# ---------------------------------------------------------------- hover


async def hover_at(client, uri: str, text: str, needle: str, shift: int = 0) -> str:
    """The Markdown hovering `needle` shows."""
    found = await client.text_document_hover_async(t.HoverParams(
        text_document=doc(uri), position=position_of(text, needle, shift)))
    return found.contents.value if found else ""


async def test_hover_shows_builtins_handlers_slots_states_types_and_models(client, tmp_path):
    (tmp_path / "soma.toml").write_text('[models.fast]\nprovider = "anthropic"\nmodel = "claude-x"\n'
                                        'key = "${SECRET_KEY}"\n')
    uri = (tmp_path / "hover.cell").as_uri()
    text = ORDERS.replace("cell agent Orders {", "cell agent Orders [model: fast] {")
    assert await open_document(client, uri, text) == []
    builtin = await hover_at(client, uri, text, "sum(values")
    entry = builtin_entry("sum")
    assert entry.signature in builtin and entry.doc in builtin
    handler = await hover_at(client, uri, text, "place(id: String, amount: Int) {", 1)
    assert "signal place(id: String, amount: Int) -> Map" in handler and "on place(id: String, amount: Int)" in handler
    slot = await hover_at(client, uri, text, "items.set")
    assert "items: Map<String, Int> [persistent]" in slot and "invariant items >= 0" in slot
    state = await hover_at(client, uri, text, '"paid"', 2)
    assert "new -> paid { guard { amount > 0 } }" in state and "terminal" in state
    variant = await hover_at(client, uri, text, "Card")
    assert "**variant `Card`** of `Pay`" in variant and "Cash" in variant
    model = await hover_at(client, uri, text, "fast]", 1)
    assert "provider: `anthropic`" in model and "SECRET_KEY" not in model


# ---------------------------------------------------------------- navigation


async def test_definition_and_references_across_the_cell_files_of_a_folder(client, tmp_path):
    (tmp_path / "orders.cell").write_text(ORDERS)
    caller = 'cell Shop {\n    on buy() {\n        Orders.place("a", 3)\n        return Orders.total()\n    }\n}\n'
    uri = (tmp_path / "shop.cell").as_uri()
    await open_document(client, uri, caller)
    found = await client.text_document_definition_async(t.DefinitionParams(
        text_document=doc(uri), position=position_of(caller, "place", 2)))
    orders_uri = (tmp_path / "orders.cell").as_uri()
    assert [(d.uri, d.range.start, d.range.end) for d in found] == [
        (orders_uri, position_of(ORDERS, "place(id: String, amount: Int) {"),
         position_of(ORDERS, "(id: String, amount: Int) {")),
        (orders_uri, position_of(ORDERS, "place"), position_of(ORDERS, "(id: String, amount: Int) -> Map")),
    ]
    references = await client.text_document_references_async(t.ReferenceParams(
        text_document=doc(uri), position=position_of(caller, "Orders"),
        context=t.ReferenceContext(include_declaration=True)))
    assert sorted((r.uri, r.range.start.line) for r in references) == sorted(
        [(uri, 2), (uri, 3), (orders_uri, 7)])


def applied(text: str, edits) -> str:
    """`text` with LSP text edits applied (ASCII text: characters are units)."""
    lines = text.split("\n")
    offsets = [sum(len(line) + 1 for line in lines[:number]) for number in range(len(lines))]
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    for edit in ordered:
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


async def test_rename_reaches_every_occurrence_across_the_folder_and_refuses_bad_names(client, tmp_path):
    (tmp_path / "orders.cell").write_text(ORDERS)
    caller = 'cell Shop {\n    on buy() {\n        Orders.place("a", 3)\n        return Orders.total()\n    }\n}\n'
    uri = (tmp_path / "shop.cell").as_uri()
    await open_document(client, uri, caller)
    where = position_of(caller, "place", 2)
    prepared = await client.text_document_prepare_rename_async(t.PrepareRenameParams(
        text_document=doc(uri), position=where))
    assert (prepared.start, prepared.end) == (position_of(caller, "place"), position_of(caller, '("a"'))
    edit = await client.text_document_rename_async(t.RenameParams(
        text_document=doc(uri), position=where, new_name="order"))
    orders_uri = (tmp_path / "orders.cell").as_uri()
    assert applied(caller, edit.changes[uri]) == caller.replace("place", "order")
    assert applied(ORDERS, edit.changes[orders_uri]) == ORDERS.replace("place(", "order(")
    with pytest.raises(Exception, match="capital"):
        await client.text_document_rename_async(t.RenameParams(
            text_document=doc(uri), position=where, new_name="Order"))
    with pytest.raises(Exception, match="not a name"):
        await client.text_document_rename_async(t.RenameParams(
            text_document=doc(uri), position=where, new_name="let"))
    builtin = await client.text_document_prepare_rename_async(t.PrepareRenameParams(
        text_document=doc(orders_uri), position=position_of(ORDERS, "sum(")))
    assert builtin is None


async def test_highlights_mark_the_declaration_as_a_write(client, tmp_path):
    uri = (tmp_path / "highlight.cell").as_uri()
    await open_document(client, uri, ORDERS)
    found = await client.text_document_document_highlight_async(t.DocumentHighlightParams(
        text_document=doc(uri), position=position_of(ORDERS, '"paid"', 2)))
    assert [(h.range.start.line, h.kind) for h in found] == [
        (18, t.DocumentHighlightKind.Write), (23, t.DocumentHighlightKind.Read)]


async def test_references_of_a_slot_and_a_state_within_a_file(client, tmp_path):
    uri = (tmp_path / "refs.cell").as_uri()
    await open_document(client, uri, ORDERS)
    slot = await client.text_document_references_async(t.ReferenceParams(
        text_document=doc(uri), position=position_of(ORDERS, "items:"),
        context=t.ReferenceContext(include_declaration=False)))
    assert [r.range.start.line for r in slot] == [14, 22, 26]
    state = await client.text_document_references_async(t.ReferenceParams(
        text_document=doc(uri), position=position_of(ORDERS, "new -> paid", 7),
        context=t.ReferenceContext(include_declaration=True)))
    assert [(r.range.start.line, r.range.start.character) for r in state] == [(18, 15), (23, 24)]


PAYING = """\
cell type Pay {
    variants {
        Card { last4: String }
        Cash
    }
}

cell Shop {
    memory { last: Map<String, Pay> }
    on pay(p: Pay) {
        let said = match p {
            Card { last4 } -> last4
            Cash -> "cash"
        }
        return Card { last4: said }
    }
}
"""


async def test_sum_types_and_variants_are_found_where_they_are_written(client, tmp_path):
    uri = (tmp_path / "paying.cell").as_uri()
    assert await open_document(client, uri, PAYING) == []
    cards = await client.text_document_references_async(t.ReferenceParams(
        text_document=doc(uri), position=position_of(PAYING, "Card {"),
        context=t.ReferenceContext(include_declaration=True)))
    assert [(r.range.start.line, r.range.start.character) for r in cards] == [(2, 8), (11, 12), (14, 15)]
    pays = await client.text_document_references_async(t.ReferenceParams(
        text_document=doc(uri), position=position_of(PAYING, "Pay>", 1),
        context=t.ReferenceContext(include_declaration=False)))
    assert [(r.range.start.line, r.range.start.character) for r in pays] == [(8, 31), (9, 14)]
    definition = await client.text_document_definition_async(t.DefinitionParams(
        text_document=doc(uri), position=position_of(PAYING, "Cash ->")))
    assert [(d.range.start.line, d.range.start.character) for d in definition] == [(3, 8)]
    cell = await hover_at(client, uri, PAYING, "Shop")
    assert "cell Shop" in cell and "last: Map<String, Pay>" in cell
    pay = await hover_at(client, uri, PAYING, "Pay {")
    assert "**sum type `Pay`**" in pay and "Card { last4: String }" in pay


async def test_document_and_workspace_symbols(client, tmp_path):
    uri = (tmp_path / "symbols.cell").as_uri()
    await open_document(client, uri, ORDERS)
    symbols = await client.text_document_document_symbol_async(t.DocumentSymbolParams(text_document=doc(uri)))
    assert [(s.name, s.kind) for s in symbols] == [("Pay", t.SymbolKind.Enum), ("Orders", t.SymbolKind.Class)]
    assert [c.name for c in symbols[0].children] == ["Card", "Cash"]
    assert [(c.name, c.detail) for c in symbols[1].children] == [
        ("place", "signal"), ("total", "signal"), ("items", "slot"), ("order", "machine"),
        ("place", "handler"), ("total", "handler")]
    assert [c.name for c in symbols[1].children[3].children] == ["new", "paid", "cancelled"]
    found = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="cancld"))
    assert ("cancelled", "Orders", uri) in [(s.name, s.container_name, s.location.uri) for s in found]
    assert {s.name for s in found} == {"cancelled"}


# ---------------------------------------------------------------- completion, signatures, tokens


async def labels_at(client, uri: str, text: str) -> list[str]:
    """Completion labels where `|` stands in `text` (the document is opened or replaced first)."""
    offset = text.index("|")
    text = text.replace("|", "")
    await replace_text(client, uri, text, 10 + len(text))
    position = t.Position(line=text.count("\n", 0, offset), character=offset - (text.rfind("\n", 0, offset) + 1))
    found = await client.text_document_completion_async(t.CompletionParams(text_document=doc(uri), position=position))
    return [item.label for item in found.items]


async def test_completion_knows_where_the_cursor_is(client, tmp_path):
    uri = (tmp_path / "complete.cell").as_uri()
    await open_document(client, uri, ORDERS)
    inside = ORDERS.replace('transition(id, "paid")', 'transition(id, "|")')
    assert await labels_at(client, uri, inside) == ["new", "paid", "cancelled"]
    assert await labels_at(client, uri, ORDERS.replace('transition(id, "paid")', 'transition(id, "ca|")')) \
        == ["cancelled"]
    thinking = ORDERS.replace('return map("id", id)', 'return think("q", "s", map("max_tokens", 9, "ma|')
    assert await labels_at(client, uri, thinking) == ["max_tokens", "max_rounds"]
    horde = ORDERS.replace('return map("id", id)', 'return horde(|')
    assert await labels_at(client, uri, horde) == ["Orders.place", "Orders.total"]
    member = ORDERS.replace('return map("id", id)', 'return Orders.|')
    assert set(await labels_at(client, uri, member)) == {"place", "total", "items"}
    word = ORDERS.replace('return map("id", id)', 'return val|')
    assert "values" in await labels_at(client, uri, word)


async def test_signature_help_inside_builtin_and_handler_calls(client, tmp_path):
    uri = (tmp_path / "signature.cell").as_uri()
    text = ORDERS.replace('return map("id", id)', 'return think("q", ')
    await open_document(client, uri, text)
    found = await client.text_document_signature_help_async(t.SignatureHelpParams(
        text_document=doc(uri), position=position_of(text, 'think("q", ', 11)))
    assert found.signatures[0].label == builtin_entry("think").signature and found.active_parameter == 1
    text = text.replace('return think("q", ', 'return Orders.place("a", ')
    await replace_text(client, uri, text, 2)
    found = await client.text_document_signature_help_async(t.SignatureHelpParams(
        text_document=doc(uri), position=position_of(text, 'place("a", ', 11)))
    label = found.signatures[0].label
    assert label == "Orders.place(id: String, amount: Int)" and found.active_parameter == 1
    start, end = found.signatures[0].parameters[1].label
    assert label[start:end] == "amount: Int"


async def test_semantic_tokens_colour_as_the_codemirror_mode(client, tmp_path):
    uri = (tmp_path / "tokens.cell").as_uri()
    text = 'cell A {\n    on f() { return "x{y}" // c\n    }\n}\n'
    await open_document(client, uri, text)
    found = await client.text_document_semantic_tokens_full_async(t.SemanticTokensParams(text_document=doc(uri)))
    data = found.data
    rows = [data[i:i + 5] for i in range(0, len(data), 5)]
    line = column = 0
    decoded = []
    for delta_line, delta_column, length, kind, modifiers in rows:
        line += delta_line
        column = column + delta_column if delta_line == 0 else delta_column
        decoded.append((line, column, length, kind, modifiers))
    named = [(text.split("\n")[ln][col:col + n], TOKEN_TYPES[k], m) for ln, col, n, k, m in decoded]
    assert named == [("cell", "keyword", 0), ("A", "type", 0), ("on", "keyword", 0), ("f", "function", 1),
                     ("return", "keyword", 0), ('"', "string", 0), ("x", "string", 0), ("{", "operator", 0),
                     ("y", "variable", 0), ("}", "operator", 0), ('"', "string", 0), ("// c", "comment", 0)]


# ---------------------------------------------------------------- code actions


async def test_a_code_action_applies_the_did_you_mean(client, tmp_path):
    uri = (tmp_path / "fix.cell").as_uri()
    broken = ORDERS.replace("return sum(values(items))", "return sum(values(itms))")
    found = await open_document(client, uri, broken)
    assert [d.message for d in found] == ["undefined variable 'itms' (did you mean 'items'?)"]
    actions = await client.text_document_code_action_async(t.CodeActionParams(
        text_document=doc(uri), range=found[0].range, context=t.CodeActionContext(diagnostics=found)))
    assert [a.title for a in actions] == ["Change 'itms' to 'items'"]
    (edit,) = actions[0].edit.changes[uri]
    lines = broken.split("\n")
    line = lines[edit.range.start.line]
    lines[edit.range.start.line] = line[:edit.range.start.character] + edit.new_text + line[edit.range.end.character:]
    fixed = "\n".join(lines)
    assert fixed == ORDERS
    assert await replace_text(client, uri, fixed, 2) == []


async def test_positions_are_in_utf16_units_after_wide_characters(client, tmp_path):
    uri = (tmp_path / "wide.cell").as_uri()
    text = 'cell A {\n    on f() { print("é😀") return len(zzz) }\n}\n'
    line = text.split("\n")[1]
    found = shown(await open_document(client, uri, text))
    start = line.index("zzz") + 1  # the emoji is two UTF-16 units and one code point
    assert found == [(1, start, 1, start + 3, t.DiagnosticSeverity.Error, "undefined variable 'zzz'")]
    # the cursor just after `len` (on its `(`): read as code points it would be on `zzz`, which shows nothing
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=doc(uri), position=t.Position(line=1, character=line.index("(zzz") + 1)))
    assert builtin_entry("len").signature in hover.contents.value
