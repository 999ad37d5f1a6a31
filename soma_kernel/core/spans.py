"""Where a thing sits in its source text: the `Span` every node, diagnostic and error carries."""

from __future__ import annotations

_FIELDS = ("line", "col", "end_line", "end_col", "start", "end")


class Span:
    """Where a node sits in its source: 1-based line/column, 0-based char offsets.

    `start`/`end` index characters of the source text (not bytes), `end` is
    exclusive; `end_line`/`end_col` point at the last character + 1.

    A Span is a value: equal and hashing alike when its six numbers are, and
    never changed after it is made (code that moves a span makes a new one).
    It is a slotted class with a plain `__init__` rather than a frozen
    dataclass because the parser makes one per node: a frozen dataclass sets
    each field through `object.__setattr__`, which made creating one about
    four times slower.
    """

    __slots__ = _FIELDS

    def __init__(self, line: int, col: int, end_line: int, end_col: int, start: int, end: int):
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.start = start
        self.end = end

    def _numbers(self) -> tuple[int, int, int, int, int, int]:
        """The six numbers, in field order (what equality and hashing compare)."""
        return self.line, self.col, self.end_line, self.end_col, self.start, self.end

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._numbers() == other._numbers()

    def __hash__(self) -> int:
        return hash(self._numbers())

    def __repr__(self) -> str:
        return "Span(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS) + ")"


NO_SPAN = Span(0, 0, 0, 0, 0, 0)


def line_offset(text: str, line: int) -> int:
    """The offset in `text` where 1-based `line` starts (`len(text)` past the last line)."""
    offset = 0
    for _ in range(line - 1):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset
