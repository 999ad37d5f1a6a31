"""One document analysed: its source, what parsed, its soma.toml and every diagnostic `soma check` gives it.

`analyse(text, uri, path)` is what the server runs on open and after an
edit (in a worker thread): prepare the source (notebook magics blanked), parse
it with recovery, read the soma.toml (beside the file, or a notebook's
`%%toml` cell), run every `soma check` analysis on what parsed, and, in a
notebook, check the top-level statements too. A notebook's program is what
the session holds after running it from the top: a definition re-made in a
later cell replaces the earlier one. A parse error, a bad soma.toml
and every finding are diagnostics with a span in the document's text.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import Optional

from ..analysis.check import check_program
from ..analysis.context import ProgramIndex, Reporter
from ..analysis.statements import check_statements
from ..core.diagnostics import Diagnostic
from ..core.errors import UserError
from ..core.gcpause import paused_gc
from ..core.spans import NO_SPAN, Span, line_offset
from ..project.settings import ProjectConfig, load_project, parse_project_text
from ..session.definitions import definition_key
from ..syntax import ast
from ..syntax.tokens import Token, tokenize
from .recovery import Parsed, parse_document
from .source import Source, prepare

LOST_NAME_KINDS = ("undefined_name", "undefined_function", "undefined_cell", "undefined_handler",
                   "undefined_method", "mock")
"""Findings about a name that may be one the unparsed text declared: not shown when that text holds the name."""


class Analysis:
    """A document's source, parse, program index (the check's: cells, handlers, variants), project and
    diagnostics; its tokens are made on first use."""

    def __init__(self, source: Source, parsed: Parsed, index: ProgramIndex, project: Optional[ProjectConfig],
                 diagnostics: list[Diagnostic], path: str):
        self.source = source
        self.parsed = parsed
        self.index = index
        self.program = index.program
        self.project = project
        self.diagnostics = diagnostics
        self.path = path

    @cached_property
    def tokens(self) -> list[Token]:
        """The lexer's tokens of the analysed code."""
        return tokenize(self.source.code)


def analyse(text: str, uri: str, path: str, check: bool = True) -> Analysis:
    """Analyse a document: `path` is its file (its folder holds the soma.toml), `uri` tells a notebook;
    without `check` only parse it (a closed file read for its names)."""
    source = prepare(text, uri)
    with paused_gc():
        parsed = parse_document(source.code, path, source.notebook, tuple(source.cells))
        items = _live_definitions(parsed.items) if source.notebook else parsed.items
        program = ast.Program(items, source=source.code, origin=path)
        program.span = Span(1, 1, 1, 1, 0, len(text))
        project, project_problem = _project(source, path)
        index = ProgramIndex(program)
        found = list(parsed.errors)
        if check:
            report = check_program(program, project, index)
            found += report.errors + report.warnings + report.notes
        if check and source.notebook and parsed.statements:
            reporter = Reporter(path)
            check_statements(index, reporter, parsed.statements)
            found += reporter.diagnostics
    if project_problem is not None:
        found.insert(0, project_problem)
    return Analysis(source, parsed, index, project, _kept(found, parsed, source.code), path)


def _live_definitions(items: list) -> list:
    """A notebook's definitions as the session holds them after a run from top to bottom: a later
    `cell`, `cell type`, `cell test` or `flesh` of the same name replaces the earlier one."""
    last = {definition_key(item): index for index, item in enumerate(items) if not isinstance(item, ast.Use)}
    return [item for index, item in enumerate(items)
            if isinstance(item, ast.Use) or last[definition_key(item)] == index]


def _kept(diagnostics: list[Diagnostic], parsed: Parsed, code: str) -> list[Diagnostic]:
    """The diagnostics to show: a name finding about a word of unparsed text is left out."""
    if not parsed.lost_words:
        return diagnostics
    return [d for d in diagnostics if d.kind not in LOST_NAME_KINDS
            or code[d.span.start:d.span.end].strip() not in parsed.lost_words
            and (d.suggestion is None or d.suggestion.written not in parsed.lost_words)]


def _project(source: Source, path: str) -> tuple[Optional[ProjectConfig], Optional[Diagnostic]]:
    """The document's soma.toml (a notebook's `%%toml` cell first), or the problem with it as a diagnostic."""
    try:
        if source.toml is not None:
            offset, text = source.toml
            return (parse_project_text(text, "%%toml") if text.strip() else None), None
        return load_project(os.path.dirname(path) or "."), None
    except UserError as err:
        return None, _project_diagnostic(source, err)


def _project_diagnostic(source: Source, err: UserError) -> Diagnostic:
    """A bad soma.toml: at its line in a `%%toml` cell, else at the document's first line, naming the file."""
    if source.toml is not None and err.line > 0:
        first = source.text.count("\n", 0, source.toml[0]) + 1
        line = first + err.line - 1
        start = line_offset(source.text, line)
        end = source.text.find("\n", start)
        end = len(source.text) if end < 0 else end
        span = Span(line, 1, line, end - start + 1, start, end)
    else:
        span = NO_SPAN
    hint = "\n".join(note.strip() for note in err.notes) or None
    return Diagnostic("error", err.headline, span, err.file or "soma.toml", "project", hint)
