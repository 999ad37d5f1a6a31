"""The session's definitions and the one program text they make.

Every definition of the session (`cell`, `cell type`, `cell test`, `flesh`)
keeps its own text; `combined_text` joins them into the program that
`%check`, `%verify` and `%save` see (origin `session.cell`), and `SourceMap`
maps positions in that text back to the notebook cell each part came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..core.diagnostics import Diagnostic
from ..core.spans import line_offset
from ..syntax import ast
from ..syntax.ast import Span

SESSION_ORIGIN = "session.cell"


@dataclass
class Definition:
    """A top-level item the session holds: where it came from and its text."""

    key: tuple[str, str]
    item: ast.Node
    text: str
    origin: str
    source: str
    cell_key: str


class SourceMap:
    """Maps positions in the combined session text back to the cell each part came from."""

    def __init__(self, text: str, definitions: list[Definition], starts: list[int]):
        self.text = text
        self.definitions = definitions
        self.starts = starts

    def _part(self, span: Span) -> Optional[int]:
        """Index of the definition whose text holds `span`."""
        for index in range(len(self.starts) - 1, -1, -1):
            if self.starts[index] <= span.start:
                return index
        return None

    def owner(self, span: Span) -> Optional[tuple[str, str]]:
        """The key of the definition holding `span`."""
        index = self._part(span)
        return None if index is None else self.definitions[index].key

    def to_cell(self, span: Span) -> tuple[Definition, Span]:
        """The definition holding `span` and the span in its own cell's text."""
        index = self._part(span) or 0
        part = self.definitions[index]
        base = part.item.span
        first_line = self.text.count("\n", 0, self.starts[index]) + 1
        shift = base.start - self.starts[index]

        def line_col(line: int, col: int) -> tuple[int, int]:
            return line - first_line + base.line, (col + base.col - 1) if line == first_line else col

        line, col = line_col(span.line, span.col)
        end_line, end_col = line_col(span.end_line, span.end_col)
        return part, Span(line, col, end_line, end_col, span.start + shift, span.end + shift)

    def place(self, line: int, col: Optional[int] = None) -> str:
        """`cell[N]:line[:col]` in the notebook cell of a combined-text position (1-based)."""
        if not self.definitions or line <= 0:
            return f"{SESSION_ORIGIN}:{line}" + (f":{col}" if col is not None else "")
        offset = line_offset(self.text, line) + max((col or 1) - 1, 0)
        part, span = self.to_cell(Span(line, col or 1, line, col or 1, offset, offset))
        return f"{part.origin}:{span.line}" + (f":{span.col}" if col is not None else "")

    def line_words(self, first: int, last: Optional[int] = None) -> str:
        """`cell[N]:line` or `cell[N]:A–B` for a combined-text line or range (what `(line N)` says on the CLI)."""
        where = self.place(first)
        return where if last is None else f"{where}–{self.place(last).rsplit(':', 1)[1]}"

    def render(self, diagnostic: Diagnostic) -> str:
        """A diagnostic of the combined program, rendered at its place in its notebook cell."""
        if diagnostic.span.line <= 0 or not self.definitions:
            return diagnostic.render()
        part, span = self.to_cell(diagnostic.span)
        moved = Diagnostic(diagnostic.severity, diagnostic.message, span, part.origin, diagnostic.kind, diagnostic.hint)
        return moved.render(part.source)


def definition_key(item) -> tuple[str, str]:
    """(kind, name) of a top-level definition: `cell`, `type`, `test` or `flesh`."""
    kind = {ast.CellDecl: "cell", ast.TypeDecl: "type", ast.TestCell: "test", ast.Flesh: "flesh"}[type(item)]
    return kind, item.name


def defined_names(item) -> list[str]:
    """The names a top-level definition makes known: its own, its handlers' and its variants'."""
    handlers = [handler.name for handler in getattr(item, "handlers", [])]
    variants = [variant.name for variant in getattr(item, "variants", [])]
    return [item.name] + handlers + variants


def combined_text(definitions: list[Definition]) -> tuple[str, list[int]]:
    """The definitions' texts joined by blank lines, types first; and where each starts.

    `definitions` is reordered in place to the order of the text.
    """
    order = {"type": 0, "cell": 1, "flesh": 2, "test": 3}
    definitions.sort(key=lambda d: order[d.key[0]])
    parts, starts, offset = [], [], 0
    for definition in definitions:
        starts.append(offset)
        parts.append(definition.text)
        offset += len(definition.text) + 2
    return "\n\n".join(parts) + ("\n" if parts else ""), starts
