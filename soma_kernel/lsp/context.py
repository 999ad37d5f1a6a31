"""Where the cursor is in the code being typed: the part of the document it is in, the calls open around it.

Completion and signature help read the editor's newest text (the analysis
may be a keystroke behind), so they lex only the part around the cursor: from
the start of its top-level declaration (or notebook cell) to the cursor.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from ..syntax.tokens import tokenize

_TOP_LEVEL = re.compile(r"^(?:cell|skeleton|flesh|use)\b", re.M)


class CallFrame(NamedTuple):
    """A call open at the cursor: the function, its cell (`Cell.f(`) or None, the argument the cursor is in
    (0-based) and the offset of its `(`."""

    func: str
    cell: Optional[str]
    argument: int
    paren: int


def part_start(text: str, offset: int, cells: list[int]) -> int:
    """Where the top-level declaration or notebook cell holding `offset` begins."""
    start = max((c for c in cells if c <= offset), default=0)
    for found in _TOP_LEVEL.finditer(text, start, offset):
        start = found.start()
    return start


def open_calls(text: str, start: int, offset: int) -> list[CallFrame]:
    """The calls open at `offset` (innermost last), reading text[start:offset]."""
    frames: list[Optional[CallFrame]] = []  # None for a `[` or `{` (its commas are not arguments)
    previous: list = []
    for token in tokenize(text[start:offset]):
        word = text[start + token.start:start + token.end]
        if token.kind == "bracket" and word == "(":
            frames.append(_frame(text, start, previous, start + token.start))
        elif token.kind == "bracket" and word in "[{":
            frames.append(None)
        elif token.kind == "bracket" and frames:
            frames.pop()
        elif token.kind == "punctuation" and word == "," and frames and frames[-1] is not None:
            frames[-1] = frames[-1]._replace(argument=frames[-1].argument + 1)
        previous = (previous + [(token, word)])[-3:]
    return [frame for frame in frames if frame is not None and frame.func]


def _frame(text: str, start: int, previous: list, paren: int) -> CallFrame:
    """The call a `(` opens, named by the tokens before it: `f(`, `Cell.f(`, or `x.f(` whose receiver is
    its first argument (so the cursor starts in the second)."""
    if not previous or previous[-1][0].kind not in ("function", "method", "definition", "keyword", "modifier"):
        return CallFrame("", None, 0, paren)
    name = previous[-1][1]
    if len(previous) >= 2 and previous[-2][1] == ".":
        if len(previous) == 3 and previous[-3][0].kind == "type":
            return CallFrame(name, previous[-3][1], 0, paren)
        return CallFrame(name, None, 1, paren)
    return CallFrame(name, None, 0, paren)
