"""The server as real editors configure it: Neovim negotiates UTF-8 positions (Emacs UTF-32), VS Code keeps
UTF-16; every answer must fit what the client said it supports (pytest-lsp checks results against the
client's capabilities and warns otherwise, and the warnings are errors here)."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from soma_kernel.runtime.builtins import builtin_entry

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.filterwarnings("error::pytest_lsp.checks.LspSpecificationWarning")]

LINE = '    on f() { print("é😀") return len(zzz) }'
TEXT = "cell A {\n" + LINE + "\n}\n"
UNITS = {"utf-8": lambda s: len(s.encode("utf-8")), "utf-16": lambda s: len(s.encode("utf-16-le")) // 2,
         "utf-32": len}


@pytest_lsp.fixture(scope="module", params=["neovim", "visual-studio-code", "emacs"], config=ClientServerConfig(
    server_command=[sys.executable, "-m", "soma_kernel", "lsp", "--debounce", "0"]))
async def client(lsp_client: LanguageClient, request):
    """A server initialised with a real editor's capabilities."""
    result = await lsp_client.initialize_session(t.InitializeParams(capabilities=client_capabilities(request.param)))
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


async def test_positions_use_the_negotiated_encoding_and_answers_fit_the_client(client, tmp_path):
    units = UNITS[client.encoding]
    uri = (tmp_path / "wide.cell").as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        text_document=t.TextDocumentItem(uri=uri, language_id="soma", version=1, text=TEXT)))
    for _ in range(1000):
        if uri in client.diagnostics:
            break
        await asyncio.sleep(0.01)
    (found,) = client.diagnostics[uri]
    start = units(LINE[:LINE.index("zzz")])
    assert (found.range.start.line, found.range.start.character, found.range.end.character) == (1, start, start + 3)
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(1, units(LINE[:LINE.index("(zzz")]))))
    assert builtin_entry("len").signature in hover.contents.value
    symbols = await client.text_document_document_symbol_async(t.DocumentSymbolParams(
        text_document=t.TextDocumentIdentifier(uri=uri)))
    assert [s.name for s in symbols] == ["A"]
    tokens = await client.text_document_semantic_tokens_full_async(t.SemanticTokensParams(
        text_document=t.TextDocumentIdentifier(uri=uri)))
    assert len(tokens.data) % 5 == 0 and tokens.data
    completion = await client.text_document_completion_async(t.CompletionParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(1, units(LINE[:LINE.index("en(")]))))
    assert "len" in [item.label for item in completion.items]
