"""`soma-kernel lsp`: the Soma language server (pygls, LSP over stdio).

The server keeps one analysis per open document (workspace.py). Opening a
document analyses it at once; each change cancels the analysis waiting for
that document and schedules a new one after `debounce` seconds, so typing
does not queue work. Analyses run one at a time in a worker thread (the
event loop keeps answering hover and completion meanwhile) and their
diagnostics are published only if the document has not changed since. The
requests read the newest analysis (completion and signature help read the
editor's newest text around the cursor as well).

Nothing here is imported by the kernel or the other commands: pygls is
loaded only when `soma-kernel lsp` runs (commands/lsp.py imports this module
lazily).
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.diagnostics import Diagnostic
from . import navigation
from .actions import spelling_fix
from .completion import completions
from .convert import Lines
from .document import analyse
from .hover import hover
from .semantic import TOKEN_MODIFIERS, TOKEN_TYPES, encode
from .signatures import signature_at
from .workspace import Entry, Workspace

DEFAULT_DEBOUNCE = 0.1
WARM_UP_URI = "warm-up.cell"
SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
              "note": types.DiagnosticSeverity.Hint}
SYMBOL_KINDS = {
    "cell": types.SymbolKind.Class, "agent": types.SymbolKind.Class, "skeleton": types.SymbolKind.Class,
    "signal": types.SymbolKind.Interface, "tool": types.SymbolKind.Function, "slot": types.SymbolKind.Field,
    "machine": types.SymbolKind.Enum, "state": types.SymbolKind.EnumMember, "handler": types.SymbolKind.Method,
    "type": types.SymbolKind.Enum, "variant": types.SymbolKind.EnumMember, "test": types.SymbolKind.Module,
}
COMPLETION_KINDS = {
    "keyword": types.CompletionItemKind.Keyword, "builtin": types.CompletionItemKind.Function,
    "handler": types.CompletionItemKind.Method, "signal": types.CompletionItemKind.Method,
    "cell": types.CompletionItemKind.Class, "type": types.CompletionItemKind.Class,
    "test cell": types.CompletionItemKind.Module, "slot": types.CompletionItemKind.Field,
    "slot method": types.CompletionItemKind.Method, "state": types.CompletionItemKind.EnumMember,
    "machine": types.CompletionItemKind.Enum, "variable": types.CompletionItemKind.Variable,
    "name": types.CompletionItemKind.Text, "magic": types.CompletionItemKind.Snippet,
    "option": types.CompletionItemKind.Property,
}


class SomaLanguageServer(LanguageServer):
    """The pygls server with the Soma workspace, the pending analyses and their single worker."""

    def __init__(self, debounce: float = DEFAULT_DEBOUNCE):
        super().__init__("soma-language-server", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.model = Workspace()
        self.debounce = debounce
        self.pending: dict[str, asyncio.Task] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="soma-analysis")

    def lines(self, text: str) -> Lines:
        """Offset ↔ position conversion for a text, in this connection's position encoding."""
        return Lines(text, self.workspace.position_codec)

    def schedule(self, uri: str, delay: float) -> None:
        """Analyse a document after `delay` seconds, replacing an analysis still waiting for it."""
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._diagnose(uri, delay))

    async def _diagnose(self, uri: str, delay: float) -> None:
        """Wait, analyse in the worker, publish unless the document changed meanwhile."""
        if delay > 0:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        version = document.version
        try:
            entry = await self.analysed(uri)
        except Exception as err:  # a bug of ours: the editor says so, the server keeps serving
            logging.exception("soma-kernel lsp: analysing %s failed", uri)
            found = [types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                                      message=f"soma-kernel lsp could not analyse this document, a bug in "
                                              f"soma-kernel ({type(err).__name__}: {err})",
                                      severity=types.DiagnosticSeverity.Error, source="soma", code="internal")]
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=found))
            return
        if self.workspace.get_text_document(uri).version != version:
            return
        lines = self.lines(entry.analysis.source.text)
        found = [_diagnostic(d, uri, lines) for d in entry.analysis.diagnostics]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version))

    async def analysed(self, uri: str) -> Entry:
        """The document's analysis of its current text (made now, in the worker, if it is not current)."""
        document = self.workspace.get_text_document(uri)
        text = document.source
        entry = self.model.open.get(uri)
        if entry is not None and entry.analysis.source.text == text:
            return entry
        path = uris.to_fs_path(uri) or uri
        analysis = await asyncio.get_running_loop().run_in_executor(self.worker, analyse, text, uri, path)
        return self.model.put(uri, path, analysis)

    async def entry(self, uri: str) -> Entry:
        """The newest analysis of an open document for a request (a keystroke old at most), or a fresh one."""
        entry = self.model.open.get(uri)
        return entry if entry is not None else await self.analysed(uri)


def _diagnostic(found: Diagnostic, uri: str, lines: Lines) -> types.Diagnostic:
    """A check diagnostic as the LSP sends it: range, severity, kind as code, the hint as related information,
    the did-you-mean as data."""
    where = lines.span_range(found.span)
    related = None
    if found.hint:
        related = [types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=where),
                                                      message=f"hint: {found.hint}")]
    data = {"written": found.suggestion.written, "meant": found.suggestion.meant} if found.suggestion else None
    return types.Diagnostic(range=where, message=found.message, severity=SEVERITIES.get(found.severity),
                            code=found.kind, source="soma", related_information=related, data=data)


def build_server(debounce: float = DEFAULT_DEBOUNCE) -> SomaLanguageServer:
    """A server with every feature registered."""
    server = SomaLanguageServer(debounce)

    @server.feature(types.INITIALIZE)
    def initialize(ls: SomaLanguageServer, params: types.InitializeParams) -> None:
        """The workspace folders, the debounce from initializationOptions, and the parser loaded ahead."""
        folders = params.workspace_folders or []
        roots = [uris.to_fs_path(f.uri) for f in folders] or [uris.to_fs_path(params.root_uri or "") or ""]
        ls.model.roots = [root for root in roots if root and os.path.isdir(root)]
        options = params.initialization_options or {}
        if isinstance(options, dict) and isinstance(options.get("debounce_ms"), (int, float)):
            ls.debounce = max(0.0, options["debounce_ms"] / 1000)
        # load the parser (and the analyses' modules) before the first document opens
        ls.worker.submit(analyse, "cell A {}", WARM_UP_URI, WARM_UP_URI, False)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SomaLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        """Analyse a newly opened document at once."""
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SomaLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        """Analyse a changed document once the edits pause."""
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SomaLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        """Forget a closed document and clear its diagnostics."""
        uri = params.text_document.uri
        waiting = ls.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        ls.model.close(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: SomaLanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
        """Markdown about the name under the cursor."""
        entry = await ls.entry(params.text_document.uri)
        lines = ls.lines(entry.analysis.source.text)
        found = hover(ls.model, entry, lines.offset(params.position))
        if found is None:
            return None
        text, start, end = found
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                           range=lines.range(start, end))

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: SomaLanguageServer, params: types.DefinitionParams) -> list[types.Location]:
        """Where the name under the cursor is declared."""
        entry = await ls.entry(params.text_document.uri)
        offset = ls.lines(entry.analysis.source.text).offset(params.position)
        return _locations(ls, navigation.definitions(ls.model, entry, offset))

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def on_references(ls: SomaLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
        """Every occurrence of the name under the cursor."""
        entry = await ls.entry(params.text_document.uri)
        offset = ls.lines(entry.analysis.source.text).offset(params.position)
        found = navigation.references(ls.model, entry, offset, params.context.include_declaration)
        return _locations(ls, found)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    async def on_highlight(ls: SomaLanguageServer,
                           params: types.DocumentHighlightParams) -> list[types.DocumentHighlight]:
        """The occurrences in this document of the name under the cursor (declarations as writes)."""
        entry = await ls.entry(params.text_document.uri)
        lines = ls.lines(entry.analysis.source.text)
        place = navigation.place_at(entry, lines.offset(params.position))
        if place is None:
            return []
        return [types.DocumentHighlight(range=lines.range(p.start, p.end), kind=types.DocumentHighlightKind.Write
                                        if p.declares else types.DocumentHighlightKind.Read)
                for p in entry.symbols.occurrences(place.key)]

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    async def on_prepare_rename(ls: SomaLanguageServer, params: types.PrepareRenameParams) -> Optional[types.Range]:
        """The name under the cursor when it can be renamed."""
        entry = await ls.entry(params.text_document.uri)
        lines = ls.lines(entry.analysis.source.text)
        place = navigation.renamable(entry, lines.offset(params.position))
        return None if place is None else lines.range(place.start, place.end)

    @server.feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    async def on_rename(ls: SomaLanguageServer, params: types.RenameParams) -> Optional[types.WorkspaceEdit]:
        """Every occurrence of the name, in this document and its folder's other files, renamed."""
        entry = await ls.entry(params.text_document.uri)
        offset = ls.lines(entry.analysis.source.text).offset(params.position)
        place = navigation.renamable(entry, offset)
        if place is None:
            return None
        problem = navigation.rename_problem(place, params.new_name)
        if problem is not None:
            raise JsonRpcInvalidParams(problem)
        changes: dict[str, list[types.TextEdit]] = {}
        for found in navigation.references(ls.model, entry, offset, True):
            lines = ls.lines(found.entry.analysis.source.text)
            changes.setdefault(found.entry.uri, []).append(
                types.TextEdit(range=lines.range(found.start, found.end), new_text=params.new_name))
        return types.WorkspaceEdit(changes=changes)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def on_document_symbol(ls: SomaLanguageServer,
                                 params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        """The document's declarations as a tree."""
        entry = await ls.entry(params.text_document.uri)
        lines = ls.lines(entry.analysis.source.text)
        return [_document_symbol(item, lines) for item in navigation.outline(entry)]

    @server.feature(types.WORKSPACE_SYMBOL)
    def on_workspace_symbol(ls: SomaLanguageServer,
                            params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        """The declarations of every known document matching the query."""
        found = []
        for entry, symbol in navigation.workspace_symbols(ls.model, params.query):
            lines = ls.lines(entry.analysis.source.text)
            found.append(types.SymbolInformation(
                name=symbol.key[2], kind=SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Variable),
                location=types.Location(uri=entry.uri, range=lines.range(symbol.start, symbol.end)),
                container_name=symbol.key[1] or None))
        return found

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[".", '"', "(", "%", ","]))
    async def on_completion(ls: SomaLanguageServer, params: types.CompletionParams) -> types.CompletionList:
        """What may be written at the cursor."""
        entry = await ls.entry(params.text_document.uri)
        text = ls.workspace.get_text_document(params.text_document.uri).source
        lines = ls.lines(text)
        items = []
        for number, found in enumerate(completions(entry.analysis, text, lines.offset(params.position))):
            items.append(types.CompletionItem(
                label=found.text, kind=COMPLETION_KINDS.get(found.kind, types.CompletionItemKind.Text),
                detail=found.detail or found.kind, sort_text=f"{number:05d}",
                documentation=found.doc,
                text_edit=types.TextEdit(range=lines.range(found.start, found.end), new_text=found.text)))
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP,
                    types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","]))
    async def on_signature_help(ls: SomaLanguageServer,
                                params: types.SignatureHelpParams) -> Optional[types.SignatureHelp]:
        """The signature of the call the cursor is in."""
        entry = await ls.entry(params.text_document.uri)
        text = ls.workspace.get_text_document(params.text_document.uri).source
        found = signature_at(entry.analysis, text, ls.lines(text).offset(params.position))
        if found is None:
            return None
        parameters = [types.ParameterInformation(label=(start, end)) for start, end in found.parameters]
        active = min(found.active, len(parameters) - 1) if parameters else None
        signature = types.SignatureInformation(label=found.label, documentation=found.doc, parameters=parameters,
                                               active_parameter=active)
        return types.SignatureHelp(signatures=[signature], active_signature=0, active_parameter=active)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
                    types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS))
    async def on_semantic_tokens(ls: SomaLanguageServer, params: types.SemanticTokensParams) -> types.SemanticTokens:
        """The whole document's tokens, coloured as the CodeMirror mode colours them."""
        entry = await ls.entry(params.text_document.uri)
        return types.SemanticTokens(data=encode(entry.analysis.tokens, ls.lines(entry.analysis.source.text)))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    async def on_code_action(ls: SomaLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        """The did-you-mean quick fixes of the diagnostics in the range."""
        entry = await ls.entry(params.text_document.uri)
        text = entry.analysis.source.text
        lines = ls.lines(text)
        first, last = lines.offset(params.range.start), lines.offset(params.range.end)
        actions = []
        for found in entry.analysis.diagnostics:
            fix = spelling_fix(found, text)
            if fix is None or fix.end < first or fix.start > last:
                continue
            where = lines.range(fix.start, fix.end)
            actions.append(types.CodeAction(
                title=fix.title, kind=types.CodeActionKind.QuickFix, is_preferred=True,
                diagnostics=[_diagnostic(found, params.text_document.uri, lines)],
                edit=types.WorkspaceEdit(changes={params.text_document.uri: [
                    types.TextEdit(range=where, new_text=fix.text)]})))
        return actions

    return server


def _locations(ls: SomaLanguageServer, found: list[navigation.Found]) -> list[types.Location]:
    """Places in documents as LSP locations."""
    return [types.Location(uri=f.entry.uri, range=ls.lines(f.entry.analysis.source.text).range(f.start, f.end))
            for f in found]


def _document_symbol(item: navigation.Outline, lines: Lines) -> types.DocumentSymbol:
    """An outline node as an LSP document symbol (its range the declaration, its selection the name)."""
    symbol = item.symbol
    span = symbol.node.span
    return types.DocumentSymbol(
        name=symbol.key[2], kind=SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Variable), detail=symbol.kind,
        range=lines.range(min(span.start, symbol.start), max(span.end, symbol.end)),
        selection_range=lines.range(symbol.start, symbol.end),
        children=[_document_symbol(child, lines) for child in item.children])


def serve(debounce: float = DEFAULT_DEBOUNCE) -> None:
    """Serve the LSP over stdin/stdout until the client exits (logging goes to stderr)."""
    logging.basicConfig(level=logging.WARNING)
    build_server(debounce).start_io()
