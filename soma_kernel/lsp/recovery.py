"""Parsing a document that is being typed: what parses is kept, each broken part gives one error.

The whole text is parsed first (the usual case costs one parse). When that
fails, the text is cut into chunks where a top-level declaration starts (a
line beginning with `cell`, `skeleton`, `flesh` or `use`) and, in a
notebook, where a cell starts; each chunk is parsed on its own, in place (the
chunk is preceded by as many spaces and line breaks as the text before it, so
its spans are the document's). A chunk whose end came too early is tried
joined to the next one (a declaration with two blank lines inside it). A
chunk that still fails reports its first error, and is tried again with the
line of the error, or the line before it, blanked, a few times: a half-typed
line in one handler then costs that line, not the cell. The words of what
could not be parsed are kept (`lost_words`), so a use of a name that lost
text defined is not called undefined.
"""

from __future__ import annotations

import re
from typing import Optional

from ..core.diagnostics import Diagnostic, SomaSyntaxError
from ..core.records import Record, fresh
from ..syntax import ast
from ..syntax.parser import parse, parse_fragment
from ..syntax.tokens import tokenize

MAX_REPAIRS = 4
MAX_JOINS = 3
DECLARATIONS = ast.CellDecl, ast.TypeDecl, ast.Flesh, ast.TestCell, ast.Use
_TOP_LEVEL = re.compile(r"^(?:cell|skeleton|flesh|use)\b", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_LINE_BREAK = re.compile(r"[^\r\n]")


class Parsed(Record):
    """A document's declarations and (notebook) top-level statements, its parse errors, the words lost."""

    items: list = fresh(list)
    statements: list = fresh(list)
    errors: list[Diagnostic] = fresh(list)
    lost_words: set[str] = fresh(set)


def parse_document(code: str, origin: str, notebook: bool, starts: tuple[int, ...] = ()) -> Parsed:
    """Parse `code` (a notebook's fragments when `notebook`), recovering past errors.

    `starts` are offsets where a part may begin besides the top-level
    declarations (a notebook's cells).
    """
    try:
        return _split(_parse_in_place(code, origin, notebook))
    except SomaSyntaxError:
        pass
    parsed = Parsed()
    chunks = _chunks(code, starts)
    index = 0
    while index < len(chunks):
        index = _parse_chunk(code, origin, notebook, chunks, index, parsed)
    return parsed


def _split(nodes: list, parsed: Optional[Parsed] = None) -> Parsed:
    """Sort parsed nodes into declarations and statements."""
    parsed = parsed if parsed is not None else Parsed()
    for node in nodes:
        (parsed.items if isinstance(node, DECLARATIONS) else parsed.statements).append(node)
    return parsed


def _parse_in_place(text: str, origin: str, notebook: bool) -> list:
    """The nodes of `text` (a padded chunk or the whole document)."""
    return parse_fragment(text, origin) if notebook else parse(text, origin).items


def _chunks(code: str, starts: tuple[int, ...]) -> list[tuple[int, int]]:
    """(start, end) of each part of the text, in order."""
    cuts = sorted({0, *starts, *(m.start() for m in _TOP_LEVEL.finditer(code))})
    return [(start, end) for start, end in zip(cuts, cuts[1:] + [len(code)]) if code[start:end].strip()]


def _parse_chunk(code: str, origin: str, notebook: bool, chunks: list, index: int, parsed: Parsed) -> int:
    """Parse chunks[index] (joined to the next ones if it ended too early); the index of the next chunk."""
    start, end = chunks[index]
    try:
        _split(_parse_in_place(_padded(code, start, end), origin, notebook), parsed)
        return index + 1
    except SomaSyntaxError as err:
        first = err
    for joined in range(index + 1, min(index + 1 + MAX_JOINS, len(chunks))):
        if not first.incomplete:
            break
        try:
            _split(_parse_in_place(_padded(code, start, chunks[joined][1]), origin, notebook), parsed)
            return joined + 1
        except SomaSyntaxError:
            continue
    parsed.errors.append(first.diagnostic)
    _repair(code, origin, notebook, start, end, first, parsed)
    return index + 1


def _repair(code: str, origin: str, notebook: bool, start: int, end: int, error: SomaSyntaxError,
            parsed: Parsed) -> None:
    """Parse a failed chunk again with the lines around its errors blanked; keep what then parses."""
    blanked: set[int] = set()
    for _ in range(MAX_REPAIRS):
        line = error.diagnostic.span.line
        if line <= 0:
            break
        attempt = None
        previous = _previous_code_line(code, line, start)
        opener = _misindented_opener(code, start, end, blanked)
        for tried in ({line}, {previous}, {opener}, {line, previous}):
            lines = blanked | (tried - {0})
            if lines == blanked:
                continue
            try:
                nodes = _parse_in_place(_padded(code, start, end, lines), origin, notebook)
            except SomaSyntaxError as err:
                if attempt is None or err.diagnostic.span.line > attempt[1].diagnostic.span.line:
                    attempt = (lines, err)
                continue
            _split(nodes, parsed)
            parsed.lost_words.update(_words_of_lines(code, lines))
            return
        if attempt is None or attempt[1].diagnostic.span.line <= line:
            break
        blanked, error = attempt
    parsed.lost_words.update(_WORD.findall(code, start, end))


def _previous_code_line(code: str, line: int, start: int) -> int:
    """The number of the last non-blank line before `line` in the chunk beginning at `start` (0 when none)."""
    lines = code.split("\n", line - 1)[:line - 1] if line > 1 else []
    first = code.count("\n", 0, start) + 1
    for number in range(line - 1, first - 1, -1):
        if lines[number - 1].strip():
            return number
    return 0


def _misindented_opener(code: str, start: int, end: int, blanked: set[int]) -> int:
    """The line of the first `{` ending its line whose matching `}` starts a line at another indentation
    (the block a missing `}` left open, as the parser's hint finds it), or 0. Blanked lines are skipped."""
    text = _padded(code, start, end, blanked)
    stack: list[int] = []
    for token in tokenize(text[start:]):
        if token.kind != "bracket" or text[start + token.start] not in "{}":
            continue
        at = start + token.start
        if text[at] == "{":
            stack.append(at)
            continue
        if not stack:
            continue
        opener = stack.pop()
        opener_line = text.rfind("\n", 0, opener) + 1
        closer_line = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", opener)
        ends_line = not text[opener + 1:line_end if line_end >= 0 else len(text)].strip()
        if ends_line and not text[closer_line:at].strip() and _indent(text, opener_line) != at - closer_line:
            return text.count("\n", 0, opener) + 1
    return 0


def _indent(text: str, line_start: int) -> int:
    """The number of spaces and tabs the line starting at `line_start` begins with."""
    at = line_start
    while at < len(text) and text[at] in " \t":
        at += 1
    return at - line_start


def _padded(code: str, start: int, end: int, blank_lines: frozenset | set = frozenset()) -> str:
    """code[start:end] preceded by whitespace standing for code[:start] (same length, same line breaks),
    with the given 1-based lines blanked."""
    breaks = code.count("\n", 0, start)
    chunk = code[start:end]
    if blank_lines:
        first = breaks + 1
        lines = chunk.split("\n")
        for number in blank_lines:
            if 0 <= number - first < len(lines):
                lines[number - first] = _NOT_LINE_BREAK.sub(" ", lines[number - first])
        chunk = "\n".join(lines)
    return " " * (start - breaks) + "\n" * breaks + chunk


def _words_of_lines(code: str, lines: set[int]) -> set[str]:
    """The identifiers written on the given 1-based lines."""
    text_lines = code.split("\n")
    return {word for number in lines if 0 < number <= len(text_lines) for word in _WORD.findall(text_lines[number - 1])}
