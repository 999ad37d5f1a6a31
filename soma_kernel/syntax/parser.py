"""The Soma parser: source text → `ast.Program` (or a notebook fragment).

Phases, in order:
1. `_scan` blanks comments (offsets kept), tracks brackets and notices text
   that stops inside a string, a block comment or an open bracket;
2. lark (LALR, contextual lexer, grammar.lark) builds a parse tree over the
   clean text;
3. `_Builder`, a lark `Transformer` with one method per rule taking the
   rule's children as named arguments, turns the tree into AST nodes
   bottom-up, without recursion, giving each node the Span of its source
   text; string literals are split into interpolation segments here, each
   segment parsed with the same grammar;
4. every failure becomes a `SomaSyntaxError` whose Diagnostic points at the
   offending text, in plain words, with a hint for the usual mistakes.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from operator import attrgetter
from typing import Optional

from lark import Lark, Token, Transformer_NonRecursive, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from ..core.diagnostics import Diagnostic, SomaSyntaxError
from ..core.gcpause import paused_gc
from ..core.records import Record, fresh
from . import ast, larkcache
from .dangling import EXPRESSION_WORDS, incomplete_hint, incomplete_message, operator_before
from .keywords import KEYWORDS, RESERVED_FUNCTIONS
from .tokens import segment_end

MAX_NESTING = 400

# ---------------------------------------------------------------- public API


def parse(text: str, origin: str = "<input>") -> ast.Program:
    """Parse a whole source file into a Program (source and origin set)."""
    items = _parse_text(text, origin, "start")
    program = ast.Program(items=items, source=text, origin=origin)
    program.span = _whole_span(text)
    return program


def parse_fragment(text: str, origin: str = "<input>") -> list:
    """Parse a notebook cell: top-level items, statements and test rules, in order."""
    return _parse_text(text, origin, "fragment")


def is_complete(text: str) -> str:
    """"complete", "incomplete" (more input could finish it) or "invalid"."""
    try:
        parse_fragment(text)
    except SomaSyntaxError as err:
        return "incomplete" if err.incomplete else "invalid"
    return "complete"


# ---------------------------------------------------------------- the lark object

_LARK: Optional[Lark] = None


def _lark() -> Lark:
    """The grammar's parser, made once per process.

    A new process loads it from `larkcache`'s file in ~15 ms; without that
    file lark builds it (~300 ms) and the file is written for the next process.
    """
    global _LARK
    if _LARK is None:
        _LARK = larkcache.cached_lark(_grammar_text(), _lark_options(), larkcache.default_directory())
    return _LARK


def _lark_parse(text: str, start: str, **options):
    """lark's tree of text. A parser loaded from the cache file that fails in a way lark's own never
    does (a planted or damaged file that still unpickled) is replaced by the one lark builds, which
    parses the text again: a cache file cannot make parsing crash."""
    global _LARK
    lark_parser = _lark()
    try:
        return lark_parser.parse(text, start=start, **options)
    except (UnexpectedInput, SomaSyntaxError, RecursionError, MemoryError):
        raise
    except Exception as problem:
        if not larkcache.loaded_from_file(lark_parser):
            raise
        _LARK = larkcache.rebuilt(lark_parser, problem)
        return _LARK.parse(text, start=start, **options)


def _grammar_text() -> str:
    """The text of grammar.lark."""
    with open(os.path.join(os.path.dirname(__file__), "grammar.lark"), encoding="utf-8") as file:
        return file.read()


def _lark_options() -> dict:
    """The options `Lark` is built with."""
    return dict(parser="lalr", lexer="contextual", propagate_positions=True, maybe_placeholders=True,
                start=["start", "fragment", "expr_only"], postlex=_LineStarts())


class _LineStarts:
    """Post-lexer for the two line-sensitive tokens of the reference's parser.

    A `-` that is the first token of its line, outside ( ) and [ ], becomes
    LINE_MINUS: it starts the next statement or match arm instead of
    continuing the expression above it. A `{` that begins a line right after
    an uppercase name becomes _LINE_LBRACE: it opens a block, section or map
    pattern, never the record literal `Name { … }`.
    """

    always_accept = ()
    _OPEN = {"LPAR": "(", "LSQB": "[", "LBRACE": "{"}
    _CLOSE = {"RPAR", "RSQB", "RBRACE"}

    def process(self, stream):
        """Yield the tokens, re-typing the line-starting ones."""
        brackets: list[str] = []
        last_line, last_type = 0, ""
        for token in stream:
            kind = token.type
            starts_line = token.line > last_line
            if kind == "MINUS" and starts_line and (not brackets or brackets[-1] == "{"):
                token = Token.new_borrow_pos("LINE_MINUS", token.value, token)
            elif kind in self._OPEN:
                brackets.append(self._OPEN[kind])
                if kind == "LBRACE" and starts_line and last_type == "TYPE_NAME":
                    token = Token.new_borrow_pos("_LINE_LBRACE", token.value, token)
            elif kind in self._CLOSE and brackets:
                brackets.pop()
            last_line, last_type = token.end_line, kind
            yield token


# ---------------------------------------------------------------- scanning


class _Scan(Record):
    """What the pre-lexing pass found (see `_scan`)."""

    clean: str
    code: str = ""
    open_brackets: list[tuple[str, int]] = fresh(list)
    unclosed: Optional[tuple[str, int]] = None
    max_depth: int = 0
    max_depth_at: int = 0


_OPENERS = {"{": "}", "(": ")", "[": "]"}
_CLOSERS = {"}": "{", ")": "(", "]": "["}


_SCAN_STOPS = re.compile(r'["{}()\[\]]|//|/\*')


def _scan(text: str) -> _Scan:
    """Blank comments (keeping offsets and newlines), track brackets and
    whether the text ends inside a string or block comment.

    Linear: a regex jumps from one interesting spot (quote, bracket, comment
    start) to the next, and blanked ranges are replaced slice by slice.
    """
    comments: list[tuple[int, int]] = []
    strings: list[tuple[int, int]] = []
    result = _Scan(clean="")
    stack: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while True:
        found = _SCAN_STOPS.search(text, i)
        if found is None:
            break
        i, stop = found.start(), found.group()
        if stop == '"':
            end = _string_end(text, i)
            if end < 0:
                kind = "triple-quoted string" if text.startswith('"""', i) else "string"
                result.unclosed = (kind, i)
                break
            strings.append((i, end))
            i = end
        elif stop == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append((i, end))
            i = end
        elif stop == "/*":
            end = _block_comment_end(text, i)
            comments.append((i, n if end < 0 else end))
            if end < 0:
                result.unclosed = ("block comment", i)
                break
            i = end
        else:
            _track_bracket(stop, i, stack, result)
            i += 1
    result.clean = _blanked(text, comments)
    result.code = _blanked(result.clean, strings)
    result.open_brackets = stack
    return result


def _misindented_block(code: str) -> Optional[tuple[int, int]]:
    """(opening, closing) offsets of the first `{ … }` pair whose `{` ends its
    line and whose `}` starts a line at another indentation, or None.
    `code` has comments and strings blanked."""
    stack: list[int] = []
    for brace in re.finditer(r"[{}]", code):
        if brace.group() == "{":
            stack.append(brace.start())
            continue
        if not stack:
            continue
        opener = stack.pop()
        closer = brace.start()
        opener_line = code.rfind("\n", 0, opener) + 1
        closer_line = code.rfind("\n", 0, closer) + 1
        line_end = code.find("\n", opener)
        ends_line = code[opener + 1:line_end if line_end >= 0 else len(code)].strip() == ""
        starts_line = code[closer_line:closer].strip() == ""
        if ends_line and starts_line and _indent(code, opener_line) != closer - closer_line:
            return opener, closer
    return None


def _indent(code: str, line_start: int) -> int:
    """The number of leading spaces/tabs of the line starting at `line_start`."""
    position = line_start
    while position < len(code) and code[position] in " \t":
        position += 1
    return position - line_start


def _blanked(text: str, ranges: list[tuple[int, int]]) -> str:
    """`text` with every (start, end) range turned to spaces, line breaks kept."""
    if not ranges:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in ranges:
        pieces.append(text[done:start])
        pieces.append(_LINE_RUN.sub(_spaces, text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


_LINE_RUN = re.compile(r"[^\r\n]+")


def _spaces(run: re.Match) -> str:
    """As many spaces as the run of characters matched (one call per line, not per character)."""
    return " " * (run.end() - run.start())


def _track_bracket(c: str, i: int, stack: list, result: _Scan) -> None:
    """Push an opening bracket, pop its closer, record the deepest nesting."""
    if c in _OPENERS:
        stack.append((c, i))
        if len(stack) > result.max_depth:
            result.max_depth, result.max_depth_at = len(stack), i
    elif c in _CLOSERS and stack and stack[-1][0] == _CLOSERS[c]:
        stack.pop()


# A string body: runs of plain characters between escapes, unrolled and possessive (as grammar.lark's
# STRING) so `re` keeps no backtracking state per character or escape: a 10 MB literal scans in constant memory.
_STRING_BODY = re.compile(r'[^"\\]*+(?:\\[\s\S][^"\\]*+)*+')


def _string_end(text: str, start: int) -> int:
    """Offset just past the string literal opened at `start`, or -1."""
    if text.startswith('"""', start):
        end = text.find('"""', start + 3)
        return -1 if end < 0 else end + 3
    end = _STRING_BODY.match(text, start + 1).end()
    return end + 1 if text.startswith('"', end) else -1


def _block_comment_end(text: str, start: int) -> int:
    """Offset just past the `*/` closing the nesting comment at `start`, or -1."""
    depth, i, n = 0, start, len(text)
    while i < n:
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


# ---------------------------------------------------------------- runs of edge lines

# `state` first, then the look-behind for a word boundary: a pattern starting with a literal is
# searched with a fast string scan, one starting with `\b` tries every offset of the text.
_STATE_OPENER = re.compile(r"state(?<![A-Za-z0-9_]state)\s+[A-Za-z_][A-Za-z0-9_]*\s*(?::\s*[A-Z][A-Za-z0-9_]*\s*)?"
                           r"\{[ \t\r]*\n")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_KEPT_LINES = re.compile(rf"(?:[ \t]*(?:initial[ \t]*:[ \t]*({_NAME}))?[ \t\r]*\n)*")
# One plain edge line and the blank lines after it: a run of them is matched line after line.
_EDGE_LINE = re.compile(rf"[ \t]*({_NAME})[ \t]*->[ \t]*({_NAME})[ \t\r]*\n((?:[ \t\r]*\n)*)")
_ITEM_START = re.compile(rf"[ \t]*(?:\}}|\*|initial[ \t]*:|({_NAME}))")
_BRACES = re.compile(r"[{}]")
_BLANKS = re.compile(r"[ \t\r\n]*")
_EDGE_RUN_BLANKS = {ord(c): " " for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_->\t"}


def _lift_simple_edges(scanned: _Scan) -> tuple[str, dict[int, list[ast.Edge]]]:
    """Take the plain `a -> b` lines of every state block out of the text lark will parse.

    A machine of 100 000 states is 100 000 such lines: building their Edge
    nodes straight from the text is many times cheaper than lexing, parsing
    and building them through lark. Lines are lifted from the top of a block
    while they are blank, `initial: s` (kept for lark) or plain edges whose
    names are no keywords, and only where lark would read each as one whole
    edge: the line after the last lifted one starts a new item (a name, `*`,
    `initial:` or `}`), so no guard or `except` clause continues it. Returns
    the clean text with the lifted lines blanked (offsets and line breaks
    kept, so every other token, error and span is what it was) and the lifted
    edges by the offset of their block's `state` keyword, in source order.
    """
    lifted: dict[int, list[ast.Edge]] = {}
    code, clean = scanned.code, scanned.clean
    keywords = _keyword_words()
    pieces: list[str] = []
    done = 0
    for opener in _STATE_OPENER.finditer(code):
        body_end = _matching_brace(code, code.rfind("{", 0, opener.end()))
        if body_end < 0 or opener.start() < done:
            continue
        edges, runs = _edge_runs(clean, opener.end(), body_end, keywords)
        if not edges:
            continue
        lifted[opener.start()] = edges
        for start, end in runs:
            pieces.append(clean[done:start])
            pieces.append(clean[start:end].translate(_EDGE_RUN_BLANKS))
            done = end
    if not lifted:
        return clean, lifted
    pieces.append(clean[done:])
    return "".join(pieces), lifted


def _edge_runs(code: str, position: int, body_end: int, keywords: set) -> tuple[list, list]:
    """The liftable edges at the top of one state block body: (Edge nodes, (start, end) text ranges).

    `code` is the text with comments blanked and strings kept (a line with a string is no plain edge).
    """
    edges: list[ast.Edge] = []
    runs: list[tuple[int, int]] = []
    line = code.count("\n", 0, position) + 1
    counted = position
    while True:
        kept = _KEPT_LINES.match(code, position, body_end)
        if any(name in keywords for name in re.findall(rf"initial[ \t]*:[ \t]*({_NAME})", kept.group())):
            return [], []
        line += code.count("\n", counted, kept.end())
        found, run_end = _run_edges(code, kept.end(), body_end, line)
        if not found:
            return edges, runs
        if not keywords.isdisjoint(map(_SOURCE, found)) or not keywords.isdisjoint(map(_TARGET, found)):
            return [], []
        line += code.count("\n", kept.end(), run_end)
        counted = run_end
        if not _starts_item(code, run_end, body_end, keywords):
            del found[-1:]  # a clause on the next line may continue the last edge: lark reads it
            edges += found
            if found:
                runs.append((kept.end(), found[-1].span.end))
            return edges, runs
        edges += found
        runs.append((kept.end(), run_end))
        position = run_end


_SOURCE, _TARGET = attrgetter("src"), attrgetter("dst")


def _run_edges(code: str, start: int, end: int, line: int) -> tuple[list[ast.Edge], int]:
    """The Edge nodes of the `a -> b` lines (blank lines between them allowed)
    from `start`, the start of line number `line`, and the offset where they
    end: each line is matched where the previous one ended, so the text is
    read once and its line breaks are counted from the matches."""
    edges = []
    add, edge_node, span, match_line = edges.append, ast.Edge, ast.Span, _EDGE_LINE.match
    position = start
    while (match := match_line(code, position, end)) is not None:
        src, dst, blanks = match.groups()
        src_start, dst_end = match.start(1), match.end(2)
        column = src_start - position + 1
        add(edge_node(src, dst, span=span(line, column, line, column + dst_end - src_start, src_start, dst_end)))
        line += 1 + blanks.count("\n") if blanks else 1
        position = match.end()
    return edges, position


def _starts_item(code: str, position: int, body_end: int, keywords: set) -> bool:
    """True when the text at `position` begins a new state item (or the block's `}`)."""
    if _BLANKS.match(code, position, body_end).end() == body_end:
        return True  # only the block's `}` follows
    item = _ITEM_START.match(code, position, body_end)
    return item is not None and (item.group(1) is None or item.group(1) not in keywords)


def _matching_brace(code: str, opening: int) -> int:
    """The offset of the `}` closing the `{` at `opening` (strings and comments blanked), or -1."""
    depth = 0
    for brace in _BRACES.finditer(code, opening):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return brace.start()
    return -1


# ---------------------------------------------------------------- positions


class _Lines:
    """Offset → (line, col) for one text (1-based, columns count characters)."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of a character offset."""
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo] + 1

    def span(self, start: int, end: int) -> ast.Span:
        """The Span of text[start:end]."""
        line, col = self.position(start)
        end_line, end_col = self.position(end)
        return ast.Span(line, col, end_line, end_col, start, end)


def _whole_span(text: str) -> ast.Span:
    """The Span covering a whole text (its end: after the last line break, on the last line)."""
    last_line_start = text.rfind("\n") + 1
    return ast.Span(1, 1, text.count("\n") + 1, len(text) - last_line_start + 1, 0, len(text))


def _token_span(tok: Token) -> ast.Span:
    """The Span of one lark token."""
    return ast.Span(tok.line, tok.column, tok.end_line, tok.end_column, tok.start_pos, tok.end_pos)


def _meta_span(meta) -> ast.Span:
    """The Span of a lark tree's meta (NO_SPAN when the tree is empty)."""
    if getattr(meta, "empty", True):
        return ast.NO_SPAN
    return ast.Span(meta.line, meta.column, meta.end_line, meta.end_column,
                    meta.start_pos, meta.end_pos)


# ---------------------------------------------------------------- parsing driver


def _parse_text(text: str, origin: str, start: str):
    """Scan, parse and build; every failure is a SomaSyntaxError."""
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    scanned = _scan(text)
    errors = _Errors(text, scanned, origin)
    if scanned.max_depth > MAX_NESTING:
        errors.raise_at(scanned.max_depth_at, scanned.max_depth_at + 1,
                        f"nesting deeper than {MAX_NESTING} levels",
                        hint="split the expression with `let` bindings or helper handlers")
    with paused_gc():  # a node per token, none of them garbage (see gcpause)
        clean, lifted = _lift_simple_edges(scanned) if scanned.unclosed is None else (scanned.clean, {})
        try:
            tree = _lark_parse(clean, start, on_error=_keyword_as_name)
        except UnexpectedInput as exc:
            errors.from_lark(exc)
        if scanned.unclosed is not None:
            errors.unclosed_text()
        return _to_ast(tree, clean, origin, lifted)


def _keyword_as_name(exc: UnexpectedInput) -> bool:
    """Read a keyword as a name where only a name fits, and go on parsing.

    The contextual lexer picks terminals by parser state, but LALR shares
    one state between all the places a rule ends (`}` of any block), so
    after a block `state` or `face` lexes as its keyword even where a
    statement must begin (`state.set(…)`). The parser then refuses it with
    a name among the expected terminals: feed it as that name instead.
    """
    token = getattr(exc, "token", None)
    if not isinstance(exc, UnexpectedToken) or token is None or token.type not in _keyword_types():
        return False
    if "NAME" not in (exc.accepts or exc.expected or ()):
        return False
    exc.interactive_parser.feed_token(Token.new_borrow_pos("NAME", str(token), token))
    return True


def parse_expression(text: str, origin: str = "<input>") -> ast.Expr:
    """Parse one expression (used for interpolation segments)."""
    scanned = _scan(text)
    if scanned.unclosed is not None:
        _Errors(text, scanned, origin).unclosed_text()
    try:
        tree = _lark_parse(scanned.clean, "expr_only")
    except UnexpectedInput as exc:
        _Errors(text, scanned, origin).from_lark(exc)
    return _to_ast(tree, scanned.clean, origin)


# ---------------------------------------------------------------- errors

_WORD_HINTS = {
    "elif": "write `else if`",
    "and": "Soma's logic operators are `&&`, `||` and `!`",
    "or": "Soma's logic operators are `&&`, `||` and `!`",
    "not": "Soma's logic operators are `&&`, `||` and `!`",
    "null": "the empty value is `()`",
    "nil": "the empty value is `()`",
    "None": "the empty value is `()`",
    "True": "booleans are written `true` and `false`",
    "False": "booleans are written `true` and `false`",
    "def": "handlers are written `on name(p: Type) { … }`",
    "fn": "handlers are written `on name(p: Type) { … }`",
    "function": "handlers are written `on name(p: Type) { … }`",
    "const": "Soma has no constants: use `let` inside a handler, or a memory slot",
    "class": "declare sum types with `cell type Name { variants { … } }`; records are `Name { f: v }`",
    "throw": "raise errors with `fail(\"kind\", \"detail\")` or `require cond else Tag`",
    "new": "build a record with `Name { field: value }` (no `new`)",
}

# The head of `mock think tool f(` on a line, up to the arguments (a pattern for parse errors, compiled when
# one needs it, as `_FOREIGN_WORD` is).
_MOCK_TOOL_CALL = r"[ \t]*mock[ \t]+\w+[ \t]+tool[ \t]+\w+[ \t]*\((?:[^()\n]*,)?[ \t]*$"

# Words that are never valid names in expressions (`new` only before a type name).
_FORBIDDEN_NAMES = {w for w in _WORD_HINTS if w not in ("fn", "function", "nil", "new")}

# A pattern, compiled on first use (through `re`'s cache) rather than at import: only a failed parse reads it,
# and compiling it costs several milliseconds of every start-up.
_FOREIGN_WORD = r"(?<![.\w])(" + "|".join(sorted(_FORBIDDEN_NAMES)) + r"|new(?=\s+[A-Z]))(?!\w)"

# Keywords that may not be bound as names (they still read as fields: `x.match`).
_RESERVED_BINDINGS = {
    "let", "if", "else", "return", "for", "in", "while", "match", "try", "emit", "require",
    "ensure", "break", "continue", "on", "given", "cell", "use", "true", "false",
}

# Never a name, not even in an expression or a field (`.on`).
_HARD_RESERVED = {"on", "given"}

_TERMINAL_WORDS = {
    "NAME": "a name", "TYPE_NAME": "a type name", "STRING": "a string",
    "TRIPLE_STRING": "a string", "INT": "a number", "FLOAT": "a number",
    "HEX_INT": "a number", "BIN_INT": "a number", "OCT_INT": "a number",
    "DURATION": "a duration (5s, 100ms, 2min)", "$END": "the end of the text",
}

_ENCLOSURE_WORDS = {
    "cell": "cell", "skeleton": "cell", "flesh": "flesh block", "on": "handler",
    "face": "face section", "memory": "memory section", "state": "state block",
    "rules": "rules block", "cost": "cost block", "variants": "variants block",
    "every": "every block", "after": "after block", "match": "match",
}


class _Errors:
    """Builds SomaSyntaxErrors for one text."""

    def __init__(self, text: str, scanned: _Scan, origin: str):
        self.text = text
        self.scanned = scanned
        self.origin = origin

    @cached_property
    def lines(self) -> _Lines:
        """The text's line starts, found only once an error is to be placed."""
        return _Lines(self.text)

    def raise_at(self, start: int, end: int, message: str, hint: Optional[str] = None,
                 incomplete: bool = False):
        """Raise a parse error covering text[start:end]."""
        end = max(end, start)
        diagnostic = Diagnostic(severity="error", kind="parse", message=message,
                                span=self.lines.span(start, end), origin=self.origin, hint=hint)
        raise SomaSyntaxError(diagnostic, incomplete=incomplete) from None

    def unclosed_text(self):
        """The text ends inside a string or block comment."""
        kind, start = self.scanned.unclosed
        self.raise_at(start, start + (3 if kind.startswith("triple") else 1 + (kind == "block comment")),
                      f"unterminated {kind}", incomplete=True,
                      hint="close it with `*/`" if kind == "block comment" else "close it with its quote")

    def from_lark(self, exc: UnexpectedInput):
        """Translate a lark error into plain words."""
        unclosed = self.scanned.unclosed
        position = _error_offset(exc, len(self.text))
        if unclosed is not None and position >= unclosed[1]:
            self.unclosed_text()
        if isinstance(exc, UnexpectedCharacters):
            self._unexpected_character(position)
        self._foreign_word_before(position)
        self._dangling_operator(position)
        token = exc.token if isinstance(exc, UnexpectedToken) else None
        if token is None or token.type == "$END":
            self._unexpected_end(exc)
        self._unexpected_token(token, exc)

    def _foreign_word_before(self, position: int):
        """Blame a word from another language (`elif`, `def`, `and`…) that
        precedes the error on its line: it is the real mistake."""
        line_start = self.scanned.code.rfind("\n", 0, position) + 1
        found = None
        for match in re.compile(_FOREIGN_WORD).finditer(self.scanned.code, line_start, position + 1):
            found = match
        if found is not None:
            word = found.group(1)
            self.raise_at(found.start(1), found.end(1), f"unexpected '{word}'", hint=_WORD_HINTS[word])

    def _dangling_operator(self, position: int):
        """Blame an operator with nothing after it: the error is right after it (the bracket around
        it closes, the text ends with no bracket open), or on the next line, which starts with a
        keyword read as a name (`x +` then `while c { … }`)."""
        code = self.scanned.clean
        found = operator_before(code, position)
        follower = re.compile(r"[})\]]").match(code, position)
        at_end = position == len(code) and not self.scanned.open_brackets
        if found is not None and (at_end or follower is not None and self._closes(position)):
            start, op = found
            self.raise_at(start, start + len(op), incomplete_message(op), incomplete=follower is None,
                          hint=incomplete_hint(op, follower.group() if follower else None))
        line_start = code.rfind("\n", 0, position) + 1
        first = re.compile(r"[ \t]*([a-z_]\w*)").match(code, line_start)
        if first is None or first.start(1) > position or first.group(1) not in KEYWORDS \
                or first.group(1) in EXPRESSION_WORDS:
            return
        found = operator_before(code, first.start(1))
        if found is not None and "\n" in code[found[0]:first.start(1)]:
            start, op = found
            self.raise_at(start, start + len(op), incomplete_message(op), hint=incomplete_hint(op, first.group(1)))

    def _closes(self, position: int) -> bool:
        """True when the closing bracket at `position` closes the innermost bracket open before it."""
        opened = _scan(self.scanned.clean[:position]).open_brackets
        return bool(opened) and _OPENERS[opened[-1][0]] == self.scanned.clean[position]

    def _unexpected_character(self, position: int):
        """A character no token starts with."""
        char = self.text[position]
        if char == ";":
            self.raise_at(position, position + 1,
                          "unexpected character ';' — Soma has no semicolons, one statement per line",
                          hint="remove the ';' and put the next statement on its own line")
        if char == "@":
            self.raise_at(position, position + 1, "unexpected character '@'",
                          hint="Soma has no decorators: annotations follow the parameters, "
                               "`on f(x: Int) [native] { … }`")
        self.raise_at(position, position + 1, f"unexpected character {char!r}")

    def _unexpected_end(self, exc):
        """The text stopped before the construct was finished."""
        end = len(self.text)
        if self.scanned.open_brackets:
            char, offset = self.scanned.open_brackets[-1]
            line, col = self.lines.position(offset)
            what = self._enclosure(offset) if char == "{" else f"'{char}'"
            self.raise_at(end, end, f"expected '{_OPENERS[char]}' to close the {what} opened at {line}:{col}",
                          hint=self._missing_brace_hint() if char == "{" else None, incomplete=True)
        expected = _expected_words(exc)
        self.raise_at(end, end, "unexpected end of text" + (f" — expected {expected}" if expected else ""))

    def _missing_brace_hint(self) -> Optional[str]:
        """Where a `}` is probably missing: the first block whose closing brace
        sits at another indentation than the line that opened it."""
        pair = _misindented_block(self.scanned.code)
        if pair is None:
            return None
        (open_line, open_col), (close_line, close_col) = (self.lines.position(o) for o in pair)
        return (f"the '{{' at {open_line}:{open_col} is closed by the '}}' at {close_line}:{close_col}, "
                f"which is indented differently — a '}}' is probably missing before line {close_line}")

    def _enclosure(self, offset: int) -> str:
        """What the `{` at offset opens: "cell", "handler", "face section"…"""
        line_start = self.scanned.clean.rfind("\n", 0, offset) + 1
        words = re.findall(r"[A-Za-z_]\w*", self.scanned.clean[line_start:offset])
        for word in words:
            if word in _ENCLOSURE_WORDS:
                return _ENCLOSURE_WORDS[word]
        return "'{'"

    def _unexpected_token(self, token: Token, exc):
        """A token the grammar does not allow here, with a hint when we know the mistake."""
        start, end = token.start_pos, token.end_pos
        value = "=>" if self.scanned.clean.startswith("=>", start) else str(token)
        hint = self._hint(token, exc)
        message = f"unexpected {_show(value)}"
        if hint is None:
            expected = _expected_words(exc)
            if expected:
                message += f" — expected {expected}"
        if token.type in _keyword_types() and "NAME" in getattr(exc, "expected", ()):
            message = f"'{value}' is a reserved word — rename it"
        self.raise_at(start, end, message, hint=hint)

    def _hint(self, token: Token, exc) -> Optional[str]:
        """The fix for a known mistake at this token, if it is one."""
        value, start = str(token), token.start_pos
        before = self.scanned.clean[:start].rstrip()
        after = self.scanned.clean[token.end_pos:]
        expected = set(getattr(exc, "expected", ()))
        line_start = before.rfind("\n") + 1
        if value in _WORD_HINTS:
            return _WORD_HINTS[value]
        if "NAME" in expected and re.compile(_MOCK_TOOL_CALL).match(self.scanned.clean, line_start, start):
            return "name each argument as a model sends it: `mock think tool f(param: value, …)`"
        if "DURATION" in expected and token.type in ("INT", "BAD_NUMBER"):
            return "durations take the units ms, s, min, h, d, year(s): `5s`, `100ms`, `2min`"
        if value == "=" and before.endswith("=="):
            return "compare with `==` (there is no `===`)"
        if value == "*" and before.endswith("*"):
            return "there is no `**` operator: use pow(2, 3)"
        if self.scanned.clean.startswith("=>", start) and any(
                _terminal_text(name) == "->" for name in expected):
            return "match arms use `->`; `=>` is only for lambdas (`x => x + 1`)"
        if value == "{" and re.match(r"\s*(\"[^\"]*\"|[A-Za-z_]\w*)\s*:", after):
            return "there is no `{k: v}` map literal — use map(\"k\", v)"
        if value == ":":
            return self._colon_hint(before, line_start)
        if value == "(" and before.endswith("for"):
            return "a for loop binds one name: `for e in m { e.key … e.value }`"
        if value == "," and re.match(r"[^)\n]*\)\s*=>", after):
            return "a lambda takes one parameter: `p => p.a + p.b`"
        if value == "{" and re.search(r"->\s*\w+\s+guard$", before):
            return "a guard sits in braces after the edge: `a -> b { guard { cond } }`"
        if value == "{" and re.search(r"\bcell\s+test$", before):
            return "name the test cell: `cell test MyTests { rules { … } }`"
        return None

    def _colon_hint(self, before: str, line_start: int) -> Optional[str]:
        """Hints for a misplaced `:` (final:, ternary, slices)."""
        if before.endswith("final"):
            return "states with no outgoing transition are final — remove the `final:` line"
        if "?" in before[line_start:]:
            return "there is no `c ? a : b` — use `if c { a } else { b }`"
        opened = [c for c, _ in _scan(before).open_brackets]
        if opened and opened[-1] == "[":
            return "there is no slice syntax — use slice(xs, a, b)"
        return None


def _error_offset(exc: UnexpectedInput, text_length: int) -> int:
    """Where a lark error happened, as a character offset."""
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        return text_length
    position = getattr(exc, "pos_in_stream", None)
    if position is None and isinstance(exc, UnexpectedToken):
        position = exc.token.start_pos
    return text_length if position is None else position


def _show(value: str) -> str:
    """A token as the message shows it."""
    shown = value if len(value) <= 24 else value[:21] + "…"
    return f"'{shown}'"


_KEYWORD_TYPES: Optional[set] = None


def _keyword_types() -> set:
    """Terminal names of the grammar's keywords (`match`, `state`, …)."""
    global _KEYWORD_TYPES
    if _KEYWORD_TYPES is None:
        _KEYWORD_TYPES = {t.name for t in _lark().terminals
                          if t.pattern.type == "str" and re.fullmatch(r"[a-z_]\w*", t.pattern.value)}
    return _KEYWORD_TYPES


_KEYWORD_WORDS: Optional[set] = None


def _keyword_words() -> set:
    """The grammar's keywords as written (`match`, `state`, …): never read as a plain state name here."""
    global _KEYWORD_WORDS
    if _KEYWORD_WORDS is None:
        _KEYWORD_WORDS = {t.pattern.value for t in _lark().terminals
                          if t.pattern.type == "str" and re.fullmatch(r"[a-z_]\w*", t.pattern.value)}
    return _KEYWORD_WORDS


def _terminal_text(name: str) -> Optional[str]:
    """The literal text of a string terminal, or None."""
    for terminal in _lark().terminals:
        if terminal.name == name and terminal.pattern.type == "str":
            return terminal.pattern.value
    return None


def _expected_words(exc) -> str:
    """'x', 'y' or a name — what the parser would have accepted (short lists only)."""
    names = sorted(getattr(exc, "expected", ()) or ())
    words: list[str] = []
    for name in names:
        word = _TERMINAL_WORDS.get(name)
        if word is None:
            text = _terminal_text(name)
            word = f"'{text}'" if text is not None else None
        if word and word not in words:
            words.append(word)
    if not words or len(words) > 6:
        return ""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# ---------------------------------------------------------------- tree → AST
#
# `_Builder` is a lark Transformer: one method per grammar rule (or alias),
# named like it, whose parameters are the rule's children in order (tokens
# the grammar spells as strings are dropped; an absent `[optional]` part is
# None). It runs over the tree without recursion, children before parents.


def _inline(method, _rule: str, children: list, meta):
    """Call `method` with the children as arguments; an AST node it returns
    without a span gets the span of the rule's text."""
    value = method(*children)
    if isinstance(value, ast.Node) and value.span is ast.NO_SPAN:
        value.span = _meta_span(meta)
    return value


def _inline_with_span(method, _rule: str, children: list, meta):
    """Like `_inline`, for the methods that also need the rule's span (their first argument)."""
    span = _meta_span(meta)
    value = method(span, *children)
    if isinstance(value, ast.Node) and value.span is ast.NO_SPAN:
        value.span = span
    return value


_spanned = v_args(wrapper=_inline_with_span)


class _CostSection(list):
    """The entries of one `cost { }` block, before they join their cell."""


class _IgnoredSection:
    """`scale { }`, `runtime { }`, `interior { }`: accepted, not modelled."""


class _RulesSection(list):
    """The rules of one `rules { }` block, before they join their test cell."""


class _Returns(Record):
    """A `-> Type` after a parameter list, with the span of the arrow clause."""

    type: ast.TypeRef
    span: ast.Span


class _Initial(Record):
    """An `initial: state` line."""

    name: str
    span: ast.Span


class _FrameClause(Record):
    """One `calls` / `writes` / `reads` / `moves` clause of a skeleton signal."""

    kind: str
    values: list
    span: ast.Span


def _to_ast(tree: Tree, clean: str, origin: str, lifted: Optional[dict] = None):
    """The AST value of a parse tree (a SomaSyntaxError raised while building comes out as itself)."""
    try:
        return _Builder(clean, origin, lifted).transform(tree)
    except VisitError as err:
        raise err.orig_exc from None


@v_args(wrapper=_inline)
class _Builder(Transformer_NonRecursive):
    """Builds AST nodes from a lark tree, children before parents, without recursion."""

    def __init__(self, clean: str, origin: str, lifted: Optional[dict] = None):
        super().__init__(visit_tokens=False)
        self.clean = clean
        self.origin = origin
        self.lifted = lifted or {}

    # ------------------------------------------------ helpers

    @cached_property
    def _lines(self) -> _Lines:
        """The clean text's line starts, found only when a span must be made from offsets."""
        return _Lines(self.clean)

    def _error(self, span: ast.Span, message: str, hint: Optional[str] = None, kind: str = "parse"):
        """Raise a parse error (or another `kind` of refusal found while parsing) at span."""
        diagnostic = Diagnostic(severity="error", kind=kind, message=message, span=span,
                                origin=self.origin, hint=hint)
        raise SomaSyntaxError(diagnostic)

    def _source_of(self, node: ast.Node) -> str:
        """The node's source text with whitespace runs collapsed (comments are already blank)."""
        return " ".join(self.clean[node.span.start:node.span.end].split())

    def _name(self, tok: Token) -> str:
        """A name token as a str, refused when it is a word from another language."""
        value = str(tok)
        if value in _HARD_RESERVED:
            self._error(_token_span(tok), f"'{value}' is a reserved word — rename it")
        if value in _FORBIDDEN_NAMES or (value == "new" and re.match(r"\s*[A-Z]", self.clean[tok.end_pos:])):
            self._error(_token_span(tok), f"unexpected '{value}'", hint=_WORD_HINTS[value])
        return value

    def _binding(self, tok: Token) -> str:
        """A name being bound (let, parameter, loop variable, lambda): keywords and reserved functions are refused."""
        value = self._name(tok)
        if value in _RESERVED_BINDINGS:
            self._error(_token_span(tok), f"'{value}' is a reserved word — rename it",
                        hint=f"pick another name, e.g. `{value}_`")
        self._refuse_reserved_function(tok, "a variable")
        return value

    def _refuse_reserved_function(self, tok: Token, what: str) -> None:
        """Refuse `tok` as the name of `what` when it names a builtin no program may replace."""
        value = str(tok)
        if value not in RESERVED_FUNCTIONS:
            return
        hint = f"rename it (e.g. `{value}_request`)"
        if value == "approve":
            hint += ("; approve() is answered by a person, a `mock approve` or SOMA_APPROVE, "
                     "never by the program")
        self._error(_token_span(tok), f"'{value}' is a reserved name: {what} cannot be called that", hint,
                    kind="reserved_name")

    # ------------------------------------------------ top level

    def start(self, *items):
        return list(items)

    def fragment(self, *items):
        self._refuse_call_on_call(items)
        return list(items)

    def expr_only(self, expr):
        return expr

    def use(self, *names):
        return ast.Use(path="/".join(str(n) for n in names))

    def cell_kind(self, *words):
        first = str(words[0])
        return "skeleton" if first == "skeleton" else ("agent" if len(words) == 2 else "cell")

    def cell(self, kind, name, options, *sections):
        cell = ast.CellDecl(name=str(name), kind=kind)
        if options is not None:
            cell.options = options
        for section in sections:
            self._add_section(cell, section)
        self._require_typed_params(cell.handlers)
        if kind == "skeleton" and cell.face is not None:
            for signal in cell.face.signals:
                if signal.frame is None:
                    signal.frame = ast.Frame(span=signal.span)
        return cell

    def cell_options(self, *options):
        return dict(options)

    def cell_option(self, name, value):
        return str(name), (_plain_string(value) if value.type == "STRING" else str(value))

    def _add_section(self, cell: ast.CellDecl, section) -> None:
        """File one section into its cell."""
        if isinstance(section, ast.Face):
            self._merge_face(cell, section)
        elif isinstance(section, ast.Memory):
            self._merge_memory(cell, section)
        elif isinstance(section, ast.StateMachine):
            cell.machines.append(section)
        elif isinstance(section, ast.Handler):
            cell.handlers.append(section)
        elif isinstance(section, _CostSection):
            cell.cost.extend(section)
        elif isinstance(section, ast.Scheduled):
            cell.scheduled.append(section)

    @staticmethod
    def _merge_face(cell: ast.CellDecl, face: ast.Face) -> None:
        """A second `face` section adds to the first."""
        if cell.face is None:
            cell.face = face
        else:
            cell.face.signals.extend(face.signals)
            cell.face.tools.extend(face.tools)
            cell.face.promises.extend(face.promises)

    @staticmethod
    def _merge_memory(cell: ast.CellDecl, memory: ast.Memory) -> None:
        """A second `memory` section adds to the first."""
        if cell.memory is None:
            cell.memory = memory
        else:
            cell.memory.slots.extend(memory.slots)
            cell.memory.invariants.extend(memory.invariants)

    def _require_typed_params(self, handlers: list[ast.Handler]) -> None:
        """Outside flesh, every handler parameter needs a type."""
        for handler in handlers:
            for param in handler.params:
                if param.type is None:
                    self._error(param.span, f"parameter '{param.name}' of '{handler.name}' has no type",
                                hint=f"write `{param.name}: Type` (`{param.name}: Any` accepts anything); "
                                     "only flesh handlers take their types from the skeleton")

    def type_decl(self, name, *variants):
        return ast.TypeDecl(name=str(name), variants=list(variants))

    def variant_unit(self, name):
        return ast.VariantDecl(name=str(name))

    def variant_struct(self, name, *fields):
        return ast.VariantDecl(name=str(name), fields=list(fields))

    def variant_tuple(self, name, *items):
        return ast.VariantDecl(name=str(name), items=list(items))

    def variant_field(self, name, type_ref):
        return (str(name), type_ref)

    def flesh(self, name, *handlers):
        for handler in handlers:
            handler.flesh = True
        return ast.Flesh(name=str(name), handlers=list(handlers))

    def test_cell(self, name, *sections):
        rules: list = []
        handlers: list[ast.Handler] = []
        for section in sections:
            if isinstance(section, ast.Handler):
                handlers.append(section)
            else:
                rules.extend(section)
        self._require_typed_params(handlers)
        return ast.TestCell(name=str(name), rules=rules, handlers=handlers)

    # ------------------------------------------------ face

    def face(self, *items):
        face = ast.Face()
        for item in items:
            if isinstance(item, ast.Signal):
                face.signals.append(item)
            elif isinstance(item, ast.Tool):
                face.tools.append(item)
            else:
                face.promises.append(item)
        return face

    def signal(self, name, params, returns, *clauses):
        frame = None
        if clauses:
            frame = ast.Frame(span=_join_spans(clauses[0].span, clauses[-1].span))
            for clause in clauses:
                getattr(frame, clause.kind).extend(clause.values)
        return ast.Signal(name=str(name), params=params or [], returns=None if returns is None else returns.type, frame=frame)

    @_spanned
    def returns(self, span, type_ref):
        return _Returns(type=type_ref, span=span)

    @_spanned
    def frame_calls(self, span, *names):
        return _FrameClause("calls", list(names), span)

    @_spanned
    def frame_writes(self, span, *names):
        return _FrameClause("writes", [str(n) for n in names], span)

    @_spanned
    def frame_reads(self, span, *names):
        return _FrameClause("reads", [str(n) for n in names], span)

    @_spanned
    def frame_moves(self, span, *moves):
        return _FrameClause("moves", list(moves), span)

    def frame_move(self, src, dst):
        return (str(src), str(dst))

    def dotted_name(self, *parts):
        return ".".join(str(p) for p in parts)

    def tool(self, name, params, returns, capability, description):
        tool = ast.Tool(name=str(name), params=params or [])
        if returns is not None:
            tool.returns = returns.type
        if capability is not None:
            tool.capability = capability
        if description is not None:
            tool.description = _plain_string(description)
        return tool

    def tool_capability(self, capability):
        return _plain_string(capability)

    def promise(self, text):
        return _plain_string(text) if text.type == "STRING" else str(text)

    # ------------------------------------------------ memory, state, cost

    def memory(self, *items):
        memory = ast.Memory()
        for item in items:
            (memory.slots if isinstance(item, ast.Slot) else memory.invariants).append(item)
        return memory

    def slot(self, name, type_ref, props):
        return ast.Slot(name=str(name), type=type_ref, props=props or [])

    def slot_props(self, *props):
        return list(props)

    def prop(self, name, arg):
        return ast.SlotProp(name=str(name), arg=_prop_value(arg))

    def prop_name(self, name):
        return str(name)

    def invariant(self, expr):
        return ast.Invariant(expr=expr)

    @_spanned
    def state(self, span, name, type_name, *items):
        machine = ast.StateMachine(name=str(name), initial=None,
                                   type_name=None if type_name is None else str(type_name))
        for item in items:
            if isinstance(item, _Initial):
                if machine.initial is not None:
                    self._error(item.span, f"state machine '{machine.name}' declares `initial:` twice",
                                hint="keep one `initial:` line")
                machine.initial = item.name
            else:
                machine.edges.append(item)
        lifted = self.lifted.get(span.start)
        if lifted:  # lifted lines are the top of the block: every edge lark read comes after them
            machine.edges = lifted + machine.edges
        machine.span = span
        return machine

    @_spanned
    def initial(self, span, name):
        return _Initial(name=str(name), span=span)

    def edge(self, src, dst, guard, excepts):
        return ast.Edge(src=str(src), dst=str(dst), guard=guard, excepts=[] if excepts is None else excepts)

    def edge_guard(self, expr):
        return expr

    def edge_except(self, *names):
        return [str(n) for n in names]

    def cost(self, *entries):
        return _CostSection(entries)

    def cost_entry(self, axis, value):
        return ast.CostEntry(axis=str(axis), value=_prop_value(value))

    def deployment(self, *settings):
        return _IgnoredSection()

    def setting(self, *parts):
        return None

    def interior(self, *cells):
        return _IgnoredSection()

    # ------------------------------------------------ handlers

    def handler(self, name, params, returns, annotations, body):
        self._refuse_reserved_function(name, "a handler")
        name = str(name)
        if returns is not None:
            self._error(returns.span, f"handler '{name}' declares a return type",
                        hint=f"return types live on the face signal: `signal {name}(…) -> "
                             f"{returns.type.render()}`; remove `-> {returns.type.render()}` here")
        return ast.Handler(name=name, params=params or [], body=body,
                           annotations=[(p.name, p.arg) for p in annotations or ()])

    def annotations(self, *props):
        return list(props)

    def scheduled(self, kind, interval, body):
        return ast.Scheduled(kind=str(kind), interval_ms=_duration_ms(str(interval)), body=body)

    def params(self, *params):
        return list(params)

    def param(self, name, type_ref):
        return ast.Param(name=self._binding(name), type=type_ref)

    def type(self, name, *args):
        return ast.TypeRef(name=str(name), args=list(args))

    # ------------------------------------------------ test rules

    def rules(self, *rules):
        return _RulesSection(rules)

    def rule_let(self, name, value):
        return ast.RuleLet(name=self._binding(name), value=value)

    def rule_assert(self, expr):
        return ast.RuleAssert(expr=expr, source=self._source_of(expr))

    def rule_assert_fails(self, expr, matching):
        return ast.RuleAssertFails(expr=expr, source=self._source_of(expr),
                                   matching=None if matching is None else _plain_string(matching))

    def rule_mock(self, target, error, value):
        return ast.RuleMock(target=target, value=value, is_error=error is not None)

    @_spanned
    def rule_mock_tool(self, span, target, tool, *arguments):
        tool = str(tool)
        if target != "think":
            self._error(span, f"mock {target} tool …: only the model asks for tools",
                        f"script the model's tool call with `mock think tool {tool}(arg: value, …)`")
        names = [name for name, _ in arguments]
        repeated = next((name for name in names if names.count(name) > 1), None)
        if repeated is not None:
            self._error(span, f"mock {target} tool {tool}(): the argument '{repeated}' is given twice")
        values = ast.ListLit(items=[value for _, value in arguments], span=span)
        return ast.RuleMock(target=target, value=values, tool=tool, tool_args=tuple(names))

    def mock_tool_arg(self, name, value):
        return str(name), value

    def mock_target(self, *parts):
        return ".".join(str(p) for p in parts)

    def rule_property(self, name, var, var_type, lo, hi, ensures):
        return ast.RuleProperty(name=_plain_string(name), var=str(var), var_type=var_type, lo=lo, hi=hi,
                                ensures=ensures, source=self._source_of(ensures))

    # ------------------------------------------------ statements

    def block(self, *stmts):
        self._refuse_call_on_call(stmts)
        return ast.Block(stmts=list(stmts))

    def _refuse_call_on_call(self, items) -> None:
        """`f(a)(b)` reads as two statements; the reference refuses it, so do we."""
        for first, second in zip(items, items[1:]):
            if (isinstance(second, ast.ExprStmt) and isinstance(first, ast.Node)
                    and self.clean[second.span.start] == "(" and self.clean[first.span.end - 1] == ")"
                    and "\n" not in self.clean[first.span.end:second.span.start]):
                self._error(second.span, "a call's result cannot be called directly",
                            hint="bind it first: `let g = f(a)` then `g(b)`")

    def let(self, name, value):
        return ast.Let(name=self._binding(name), value=value)

    def assign_op(self, op):
        return str(op)

    def assign(self, target, op, value):
        if not _is_assignable(target):
            self._error(target.span, "cannot assign to this expression",
                        hint="assign to a name, an index `xs[i]` or a field `r.f`")
        return ast.Assign(target=target, op=op, value=value)

    def loop_bound(self, bound):
        return _int_value(str(bound))

    def while_loop(self, bound, cond, body):
        return ast.While(cond=cond, body=body, bound=bound)

    def for_loop(self, bound, var, iterable, body):
        return ast.For(var=self._binding(var), iterable=iterable, body=body, bound=bound)

    def break_stmt(self):
        return ast.Break()

    def continue_stmt(self):
        return ast.Continue()

    def return_stmt(self, value):
        return ast.Return(value=value)

    def require(self, cond, tag, detail):
        return ast.Require(cond=cond, tag=str(tag), detail=detail)

    def ensure(self, cond):
        return ast.Ensure(cond=cond)

    def emit(self, name, args):
        return ast.Emit(name=str(name), args=args or [])

    def expr_stmt(self, expr):
        return ast.ExprStmt(expr=expr)

    # ------------------------------------------------ expressions

    def binary(self, left, op, right):
        return ast.Binary(op=str(op), left=left, right=right)

    def compare_op(self, op):
        return str(op)

    add_op = compare_op
    mul_op = compare_op

    def pipe(self, value, target):
        return ast.Pipe(value=value, target=target)

    def unary(self, op, operand):
        if (op == "-" and isinstance(operand, ast.Literal) and isinstance(operand.value, (int, float))
                and not isinstance(operand.value, bool)
                and self.clean[op.end_pos:operand.span.start].strip() == ""):
            return ast.Literal(value=-operand.value)
        return ast.Unary(op=str(op), operand=operand)

    def field(self, obj, name):
        return ast.Field(obj=obj, name=str(name))

    def method(self, receiver, name, args):
        method, args = str(name), args or []
        if isinstance(receiver, ast.Name) and receiver.id[:1].isupper():
            return ast.Call(func=method, args=args, cell=receiver.id)
        return ast.MethodCall(receiver=receiver, method=method, args=args)

    def index(self, obj, index):
        return ast.Index(obj=obj, index=index)

    def propagate(self, expr, _question_mark):
        return ast.Propagate(expr=expr)

    def true(self, _word):
        return ast.Literal(value=True)

    def false(self, _word):
        return ast.Literal(value=False)

    def unit(self):
        return ast.Literal(value=None)

    def paren(self, expr):
        return expr

    def name(self, name):
        word = str(name)
        if word not in KEYWORDS:
            return ast.Name(id=self._name(name))
        operator = self._dangling_operator(name)
        if word not in _RESERVED_BINDINGS:
            return ast.Name(id=word, after_operator=operator)
        if operator is not None:
            self._error(operator.span, incomplete_message(operator.op), hint=incomplete_hint(operator.op, word))
        self._error(_token_span(name), f"'{word}' is a reserved word — rename it")

    def _dangling_operator(self, word: Token) -> Optional[ast.DanglingOperator]:
        """The operator ending the line before a keyword read as a name, if the line ends with one."""
        found = operator_before(self.clean, word.start_pos)
        if found is None or "\n" not in self.clean[found[0]:word.start_pos]:
            return None
        start, op = found
        return ast.DanglingOperator(op, self._lines.span(start, start + len(op)))

    def call(self, name, args):
        return ast.Call(func=self._name(name), args=args or [])

    def args(self, *args):
        return list(args)

    def list(self, *items):
        return ast.ListLit(items=list(items))

    def record(self, type_name, *fields):
        return ast.RecordLit(type_name=str(type_name), fields=list(fields))

    def record_field(self, name, value):
        return (str(name), value)

    def lambda_expr(self, param, body):
        return ast.Lambda(param=self._binding(param), body=body)

    def if_expr(self, cond, then, orelse):
        return ast.If(cond=cond, then=then, orelse=orelse)

    def match_expr(self, subject, *arms):
        return ast.Match(subject=subject, arms=list(arms))

    def arm(self, pattern, guard, body):
        return ast.MatchArm(pattern=pattern, guard=guard, body=body)

    def try_expr(self, body):
        return ast.Try(body=body)

    def int_lit(self, digits):
        return ast.Literal(value=_int_value(str(digits)))

    def float_lit(self, digits):
        return ast.Literal(value=float(str(digits).replace("_", "")))

    def bad_number(self, text):
        self._error(_token_span(text), f"invalid number '{text}'",
                    hint="a number cannot run into letters; durations take the units "
                         "ms, s, min, h, d, year(s)")

    def duration_lit(self, text):
        return ast.Literal(value=_duration_ms(str(text)))

    def string(self, text):
        return _string_node(text, self.origin)

    # ------------------------------------------------ patterns

    def p_or(self, left, _bar, right):
        alternatives = list(left.alternatives) if isinstance(left, ast.POr) else [left]
        alternatives.append(right)
        return ast.POr(alternatives=alternatives)

    def p_literal(self, value):
        if isinstance(value, ast.Literal):
            return ast.PLiteral(value=value.value)
        if isinstance(value, ast.InterpString):
            self._error(value.span, "a string pattern cannot interpolate `{…}`",
                        hint="match the literal text, or bind the value and test it in a guard: `s if …`")
        return value

    def p_true(self, _word):
        return ast.PLiteral(value=True)

    def p_false(self, _word):
        return ast.PLiteral(value=False)

    def p_unit(self):
        return ast.PLiteral(value=None)

    def p_number(self, minus, number):
        return ast.PLiteral(value=number.value if minus is None else -number.value)

    def p_range(self, lo, hi):
        return ast.PRange(lo=lo.value, hi=hi.value)

    def p_bind(self, name):
        self._refuse_reserved_function(name, "a variable")
        name = self._name(name)
        return ast.PWildcard() if name == "_" else ast.PBind(name=name)

    def p_prefix(self, prefix, rest):
        self._refuse_reserved_function(rest, "a variable")
        return ast.PStringPrefix(prefix=_plain_string(prefix), rest=self._name(rest))

    def p_map(self, *entries):
        return ast.PMap(entries=list(entries))

    def p_field(self, name, pattern):
        return (str(name), pattern)

    def p_variant_unit(self, name):
        return ast.PVariant(name=str(name))

    def p_variant_struct(self, name, *fields):
        return ast.PVariant(name=str(name), fields=list(fields))

    def p_variant_tuple(self, name, *items):
        return ast.PVariant(name=str(name), items=list(items))


def _join_spans(first: ast.Span, last: ast.Span) -> ast.Span:
    """The span from the start of `first` to the end of `last`."""
    return ast.Span(first.line, first.col, last.end_line, last.end_col, first.start, last.end)


def _is_assignable(target) -> bool:
    """A Name, or an Index/Field chain ending in a Name."""
    node = target
    while isinstance(node, (ast.Index, ast.Field)):
        node = node.obj
    return isinstance(node, ast.Name)


def _prop_value(value):
    """The Python value of a property / cost argument."""
    if isinstance(value, ast.Literal):
        return value.value
    if isinstance(value, Token):
        return _plain_string(value) if value.type == "STRING" else str(value)
    return value


def _int_value(text: str) -> int:
    """An Int literal's value (`1_000`, `0xFF`, `0b101`, `0o17`)."""
    digits = text.replace("_", "")
    return int(digits, 0) if digits[:2].lower() in ("0x", "0b", "0o") else int(digits, 10)


_DURATION_UNITS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000,
                   "year": 31_536_000_000, "years": 31_536_000_000}


def _duration_ms(text: str) -> int:
    """A duration literal (`5s`, `100ms`, `2min`) in milliseconds."""
    match = re.fullmatch(r"([0-9_]+)([a-z]+)", text)
    return int(match.group(1).replace("_", "")) * _DURATION_UNITS[match.group(2)]


# ---------------------------------------------------------------- strings

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "0": "\0"}
_ESCAPE = re.compile(r"\\(?:u\{([0-9A-Fa-f]{1,6})\}|([\s\S]))")
_INTERPOLATION_STOPS = re.compile(r"[{}\\]")
_TRIPLE_INTERPOLATION_STOPS = re.compile(r"[{}]")
_LITERAL_SEGMENT = re.compile(r"[0-9,\s]*")


def _unescape(raw: str) -> str:
    """Process `\\n \\t \\r \\" \\\\ \\0 \\u{…}`; an unknown escape keeps its backslash."""
    if "\\" not in raw:
        return raw
    return _ESCAPE.sub(_escaped_char, raw)


def _escaped_char(found: re.Match) -> str:
    """The character one escape sequence stands for (`\\q`, unknown, stays as written)."""
    code, char = found.groups()
    if code is not None:
        return chr(int(code, 16))
    return _ESCAPES.get(char, "\\" + char)


def _plain_string(tok: Token) -> str:
    """A string token's text with escapes processed and no interpolation."""
    raw = str(tok)
    if raw.startswith('"""'):
        return raw[3:-3]
    return _unescape(raw[1:-1])


def _string_node(tok: Token, origin: str):
    """A Literal(str), or an InterpString when a `{…}` segment is evaluated."""
    raw = str(tok)
    triple = raw.startswith('"""')
    quote = 3 if triple else 1
    body, body_start = raw[quote:-quote], tok.start_pos + quote
    parts = _split_interpolation(body, body_start, triple, tok, origin)
    if all(isinstance(p, str) for p in parts):
        return ast.Literal(value="".join(parts))
    return ast.InterpString(parts=parts, triple=triple)


def _split_interpolation(body: str, body_start: int, triple: bool, tok: Token, origin: str) -> list:
    """Literal text and evaluated segments of a string body, adjacent text merged."""
    parts: list = []
    text: list[str] = []
    decode = (lambda s: s) if triple else _unescape
    stops = _TRIPLE_INTERPOLATION_STOPS if triple else _INTERPOLATION_STOPS
    i = chunk = 0
    while (found := stops.search(body, i)) is not None:
        i = found.start()
        if body.startswith("{{", i) or body.startswith("}}", i):
            text.append(decode(body[chunk:i]) + body[i])
            i += 2
            chunk = i
            continue
        if body[i] == "\\":
            i = _escape_end(body, i)
            continue
        if body[i] != "{":
            i += 1
            continue
        close = segment_end(body, i, len(body))
        if close < 0:
            break
        segment = body[i + 1:close]
        expr = _segment_expression(segment, body_start + i + 1, triple, tok, origin)
        text.append(decode(body[chunk:i]))
        if expr is None:
            text.append("{" + decode(segment) + "}")
        else:
            if "".join(text):
                parts.append("".join(text))
            text = []
            parts.append(expr)
        i = chunk = close + 1
    text.append(decode(body[chunk:]))
    if "".join(text):
        parts.append("".join(text))
    return parts


def _escape_end(body: str, start: int) -> int:
    """Index just past the escape sequence starting at body[start] (a backslash)."""
    if body.startswith("\\u{", start):
        close = body.find("}", start)
        return start + 2 if close < 0 else close + 1
    return start + 2


def _segment_expression(segment: str, offset: int, triple: bool, tok: Token, origin: str):
    """The segment's expression with absolute spans, or None when it stays literal text."""
    if not segment.strip() or ":" in segment or ";" in segment or _LITERAL_SEGMENT.fullmatch(segment):
        return None
    source = segment if triple else segment.replace('\\"', '"').replace("\\\\", "\\")
    try:
        expr = parse_expression(source, origin)
    except SomaSyntaxError:
        return None
    line, col = _position_in_token(tok, offset)
    _rebase_spans(expr, line, col, offset)
    return expr


def _position_in_token(tok: Token, offset: int) -> tuple[int, int]:
    """Line and column of an absolute offset lying inside token `tok`."""
    before = str(tok)[:offset - tok.start_pos]
    newlines = before.count("\n")
    if newlines == 0:
        return tok.line, tok.column + len(before)
    return tok.line + newlines, len(before) - before.rfind("\n")


def _rebase_spans(root: ast.Node, line: int, col: int, offset: int) -> None:
    """Move every span of a segment's tree from segment-relative to absolute positions."""
    stack: list = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
            continue
        if not isinstance(item, ast.Node):
            continue
        span = item.span
        if span is not ast.NO_SPAN:
            item.span = ast.Span(
                span.line + line - 1, span.col + (col - 1 if span.line == 1 else 0),
                span.end_line + line - 1, span.end_col + (col - 1 if span.end_line == 1 else 0),
                span.start + offset, span.end + offset)
        stack.extend(getattr(item, name) for name in item.FIELDS)
