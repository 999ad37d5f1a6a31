"""What the editor sends, made analysable: a `.cell` file as it is, a notebook with its magics blanked.

jupyter-lsp sends a notebook as one document: its cells joined by two blank
lines (markdown and raw cells as empty lines), magics verbatim. A `%…` or
`?…` line is the kernel's, not Soma: it is blanked, as is a whole `%%…` cell
(`%%toml` and its TOML), up to where the next cell begins. Blanking turns
every character but line breaks into a space, so every offset, line and
column of the analysed text is the editor's. A `.cell` file is Soma
throughout, so nothing in it is blanked: a `%` line there is the parse error
`soma check` reports.
"""

from __future__ import annotations

import re
from typing import Optional

from ..core.records import Record, fresh
from ..session.magics import MAGIC_LINE

CELL_FILE_SUFFIX = ".cell"
_LINE = re.compile(r"[^\n]*")
_NOT_LINE_BREAK = re.compile(r"[^\r\n]")


class Source(Record):
    """One document's text and the Soma code analysed in its place (same length, same lines).

    `cells` holds the offsets where a notebook's cells begin (only 0 in a
    `.cell` file); `toml` the body of its last `%%toml` cell with that body's
    offset (the session's soma.toml), or None.
    """

    text: str
    code: str
    notebook: bool
    cells: list[int] = fresh(list)
    toml: Optional[tuple[int, str]] = None


def prepare(text: str, uri: str) -> Source:
    """The analysable form of a document: notebooks (any URI not naming a `.cell` file) lose their magics."""
    if uri.endswith(CELL_FILE_SUFFIX):
        return Source(text, text, False, [0])
    cells = cell_starts(text)
    blanked: list[tuple[int, int]] = []
    toml = None
    for number, start in enumerate(cells):
        end = cells[number + 1] if number + 1 < len(cells) else len(text)
        first = _LINE.match(text, start + len(text[start:end]) - len(text[start:end].lstrip()))
        if first.group().startswith("%%"):
            blanked.append((start, end))
            if first.group().startswith("%%toml"):
                toml = (first.end() + 1, text[first.end() + 1:end])
            continue
        blanked.extend(_magic_lines(text, start, end))
    return Source(text, _blank(text, blanked), True, cells, toml)


def cell_starts(text: str) -> list[int]:
    """Where each notebook cell begins: 0, and every non-blank line that follows two blank lines."""
    starts = [0]
    blank_run = 0
    at = 0
    for line in text.split("\n"):
        if not line.strip():
            blank_run += 1
        else:
            if blank_run >= 2 and at > 0:
                starts.append(at)
            blank_run = 0
        at += len(line) + 1
    return starts


def _magic_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The (start, end) ranges of the magic lines among text[start:end]."""
    ranges = []
    at = start
    while at < end:
        line = _LINE.match(text, at)
        if MAGIC_LINE.match(line.group()):
            ranges.append((at, line.end()))
        at = line.end() + 1
    return ranges


def _blank(text: str, ranges: list[tuple[int, int]]) -> str:
    """`text` with each range's characters turned to spaces, line breaks kept."""
    if not ranges:
        return text
    pieces, done = [], 0
    for start, end in ranges:
        pieces.append(text[done:start])
        pieces.append(_NOT_LINE_BREAK.sub(" ", text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
