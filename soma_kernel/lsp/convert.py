"""Character offsets of a text ↔ LSP positions (line, character in the client's units, UTF-16 by default)."""

from __future__ import annotations

from bisect import bisect_right

from lsprotocol import types

from ..core.spans import Span


class Lines:
    """A text's line starts, to turn offsets into LSP positions and back in O(log lines).

    `codec` is pygls's position codec of the connection (it converts a
    column in code points to the client's units using the line's text).
    """

    def __init__(self, text: str, codec):
        self.text = text
        self.codec = codec
        self.starts = [0]
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)
        self.ascii = text.isascii()

    def position(self, offset: int) -> types.Position:
        """The LSP position of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        column = offset - self.starts[line]
        if column and not self.ascii:
            return self._client_position(line, column)
        return types.Position(line=line, character=column)

    def _client_position(self, line: int, column: int) -> types.Position:
        """A code-point column converted to the client's units."""
        text = self.text[self.starts[line]:self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)]
        converted = self.codec.position_to_client_units([text], types.Position(line=0, character=column))
        return types.Position(line=line, character=converted.character)

    def offset(self, position: types.Position) -> int:
        """The character offset of an LSP position (clamped to the text)."""
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] if position.line + 1 < len(self.starts) else len(self.text)
        text = self.text[start:end]
        column = position.character
        if not self.ascii:
            column = self.codec.position_from_client_units([text], types.Position(line=0, character=column)).character
        return min(start + column, end)

    def range(self, start: int, end: int) -> types.Range:
        """The LSP range of [start, end)."""
        return types.Range(start=self.position(start), end=self.position(max(start, end)))

    def span_range(self, span: Span) -> types.Range:
        """The LSP range of a span (its first character at least; line 0 of an unknown place)."""
        if span.line <= 0:
            return types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
        return self.range(span.start, span.end if span.end > span.start else span.start + 1)
