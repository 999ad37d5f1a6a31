"""How deep an unfinished piece of Soma is: open brackets, and whether it ends inside a string.

The console's next line is indented by this (the kernel's `is_complete`
reply): four spaces per bracket left open, and none at all inside an
unclosed string, whose next line is text, not code. Comments (`//` to the
end of the line, `/* */` nesting) and strings (`"…"` with `\\` escapes,
`\"\"\"…\"\"\"`) hide the brackets they contain.
"""

from __future__ import annotations

from typing import NamedTuple

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = frozenset(OPENERS.values())


class Nesting(NamedTuple):
    """Brackets left open at the end of a text, and whether it ends inside a string."""

    depth: int
    in_string: bool


def nesting(text: str) -> Nesting:
    """The open brackets at the end of `text` (a closer with no opener is ignored) and whether a string is open."""
    depth = 0
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if text.startswith('"""', index):
            close = text.find('"""', index + 3)
            if close < 0:
                return Nesting(depth, True)
            index = close + 3
        elif char == '"':
            index = _string_end(text, index + 1)
            if index < 0:
                return Nesting(depth, True)
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = end if newline < 0 else newline
        elif text.startswith("/*", index):
            index = _block_comment_end(text, index + 2)
        else:
            if char in OPENERS:
                depth += 1
            elif char in CLOSERS and depth:
                depth -= 1
            index += 1
    return Nesting(depth, False)


def _string_end(text: str, index: int) -> int:
    """Index just past the `"` closing a one-line string that starts at `index`, or -1 when it stays open."""
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index + 1
        if char == "\n":
            return -1
        index += 1
    return -1


def _block_comment_end(text: str, index: int) -> int:
    """Index just past the `*/` closing a (nesting) block comment opened before `index`; the end when unclosed."""
    level = 1
    while index < len(text) and level:
        if text.startswith("/*", index):
            level, index = level + 1, index + 2
        elif text.startswith("*/", index):
            level, index = level - 1, index + 2
        else:
            index += 1
    return index
