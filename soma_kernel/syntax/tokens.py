"""Soma source as a flat list of coloured tokens: the one lexer of the editor tools.

`tokenize(text)` colours as the notebook's CodeMirror mode does
(labextension/src/language.ts): keywords and their kinds from the one
table, a handler's name after `on`, built-in and user type names, numbers and
durations, `->` and `*` wildcards, `//` and nesting `/* */` comments. A
string's extent is found from its quotes, as the parser finds it, and a `{…}`
inside it is code exactly when the parser reads it as an expression. The
language server's semantic tokens come from it, and so do the places where
tools look for words (never inside strings or comments) and whether the
cursor is inside string text (completion).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .keywords import KEYWORDS, SLOT_PROPERTIES, TYPES


class Token(NamedTuple):
    """One token: its kind (see `KINDS`) and its [start, end) character offsets."""

    kind: str
    start: int
    end: int


KINDS = ("comment", "string", "escape", "interpolation", "number", "duration", "keyword", "modifier",
         "constant", "type", "builtin_type", "definition", "property", "method", "attribute", "function",
         "variable", "operator", "arrow", "wildcard", "bracket", "punctuation")
"""Every token kind; a keyword's kind follows its table kind (section/statement/test → keyword, clause → modifier,
constant → constant), as the CodeMirror mode's tags do."""

_KEYWORD_KINDS = {"section": "keyword", "statement": "keyword", "test": "keyword", "clause": "modifier",
                  "constant": "constant"}
_BUILTIN_TYPES = frozenset(TYPES)
_PROPERTIES = frozenset(SLOT_PROPERTIES)

_SPACE = re.compile(r"\s+")
_DURATION = re.compile(r"[0-9][0-9_]*(ms|min|years|year|s|h|d)(?![A-Za-z0-9_])")
_NUMBER = re.compile(r"0(x[0-9A-Fa-f][0-9A-Fa-f_]*|b[01][01_]*|o[0-7][0-7_]*)"
                     r"|[0-9][0-9_]*(\.[0-9][0-9_]*([eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL_AFTER = re.compile(r"\s*\(")
_WILDCARD = re.compile(r"\*(?=\s*->)")
_OPERATOR = re.compile(r"\|>|\?\?|=>|==|!=|<=|>=|&&|\|\||\.\.|[-+*/]=|[-+*/%<>!=?|]")
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|.)", re.S)
_PLAIN_TEXT = re.compile(r'[^"\\{}]+')
_LITERAL_SEGMENT = re.compile(r'[:;\\"]')
_TRIPLE_TEXT = re.compile(r'(?:[^"{}]|"(?!""))+')
_COMMENT_STOP = re.compile(r"/\*|\*/")


STRING_TEXT = frozenset(("string", "escape"))
_PROBE = "\x01"


def in_string_text(before: str) -> bool:
    """True when the end of `before` is inside a string's text (not in a `{…}` interpolation's code).

    A probe character appended to the text is lexed as string text exactly
    when the text ends inside a string.
    """
    tokens = tokenize(before + _PROBE)
    return bool(tokens) and tokens[-1].kind in STRING_TEXT and tokens[-1].start <= len(before) < tokens[-1].end


def tokenize(text: str) -> list[Token]:
    """The tokens of `text` in order; whitespace is no token, an unclosed string or comment runs to the end."""
    return _Lexer(text, 0, len(text)).run()


class _Lexer:
    """One pass over text[start:end]. A string's extent is found from its quotes first, as the parser finds
    it; an interpolation `{…}` inside it that the parser reads as an expression is lexed as code by a
    lexer over just that segment."""

    def __init__(self, text: str, start: int, end: int):
        self.text = text
        self.position = start
        self.limit = end
        self.after_on = False
        self.tokens: list[Token] = []

    def run(self) -> list[Token]:
        """Tokenize the range."""
        while self.position < self.limit:
            self._code()
        return self.tokens

    def _add(self, kind: str, end: int) -> None:
        """Emit a token from the current position to `end` and move there."""
        self.tokens.append(Token(kind, self.position, end))
        self.position = end

    def _code(self) -> None:
        """One token of code (or the whitespace before one)."""
        text, at = self.text, self.position
        space = _SPACE.match(text, at, self.limit)
        if space:
            self.position = space.end()
            return
        if text.startswith("//", at):
            end = text.find("\n", at, self.limit)
            self._add("comment", self.limit if end < 0 else end)
        elif text.startswith("/*", at):
            self._add("comment", min(_block_comment_end(text, at), self.limit))
        elif text[at] == '"':
            self._string(text.startswith('"""', at))
        elif "0" <= text[at] <= "9":
            duration = _DURATION.match(text, at, self.limit)
            self._add("duration" if duration else "number", (duration or _NUMBER.match(text, at, self.limit)).end())
        else:
            word = _WORD.match(text, at, self.limit)
            if word:
                self._word(word.end())
            else:
                self._symbol()

    def _string(self, triple: bool) -> None:
        """A string literal: text, escapes, `{{`/`}}`, and the code of its interpolations."""
        text, quote = self.text, '"""' if triple else '"'
        end = min(_string_end(text, self.position, triple), self.limit)
        closed = end - len(quote) > self.position and text.startswith(quote, end - len(quote))
        body_end = end - len(quote) if closed else end
        self._add("string", self.position + len(quote))
        while self.position < body_end:
            at = self.position
            if not triple and text[at] == "\\":
                escape = _ESCAPE.match(text, at)
                self._add("escape", min(escape.end() if escape else at + 1, body_end))
            elif text.startswith("{{", at) or text.startswith("}}", at):
                self._add("string", at + 2)
            elif text[at] == "{" and self._interpolation(body_end):
                continue
            else:
                found = (_PLAIN_TEXT if not triple else _TRIPLE_TEXT).match(text, at, body_end)
                self._add("string", found.end() if found and found.end() > at else at + 1)
        if end > self.position:
            self._add("string", end)

    def _interpolation(self, body_end: int) -> bool:
        """At a `{` in string text: lex `{expr}` as code when the parser reads it as one (an interpolation
        still open where the text ends counts too: it is being typed); False when it is text."""
        text, at = self.text, self.position
        close = segment_end(text, at, body_end)
        segment = text[at + 1:close if close > 0 else body_end]
        if not segment.strip() or _LITERAL_SEGMENT.search(segment) or (close < 0 and body_end < len(text)):
            return False
        self._add("interpolation", at + 1)
        self.tokens.extend(_Lexer(text, at + 1, close if close > 0 else body_end).run())
        if close < 0:
            self.position = body_end
            return True
        self.position = close
        self._add("interpolation", close + 1)
        return True

    def _word(self, end: int) -> None:
        """A word: a type name, a keyword, a handler's name after `on`, a slot property, a member or a name."""
        text, at = self.text, self.position
        word = text[at:end]
        after_on, self.after_on = self.after_on, False
        calls = _CALL_AFTER.match(text, end) is not None
        if word[0].isupper():
            self._add("builtin_type" if word in _BUILTIN_TYPES else "type", end)
        elif at > 0 and text[at - 1] == ".":
            self._add("method" if calls else "property", end)
        elif after_on:
            self._add("definition", end)
        elif word in KEYWORDS:
            self.after_on = word == "on"
            self._add(_KEYWORD_KINDS[KEYWORDS[word]], end)
        elif word in _PROPERTIES and "[" in text[text.rfind("\n", 0, at) + 1:at].rsplit("]", 1)[-1]:
            self._add("attribute", end)
        else:
            self._add("function" if calls else "variable", end)

    def _symbol(self) -> None:
        """An operator, an edge arrow, a wildcard, a bracket or punctuation."""
        text, at = self.text, self.position
        if _WILDCARD.match(text, at):
            self._add("wildcard", at + 1)
            return
        if text.startswith("->", at):
            self._add("arrow", at + 2)
            return
        operator = _OPERATOR.match(text, at)
        if operator:
            self._add("operator", operator.end())
            return
        char = text[at]
        if char in "{}()[]":
            self._add("bracket", at + 1)
        else:
            self._add("punctuation" if char in ",.:;" else "operator", at + 1)


def _block_comment_end(text: str, start: int) -> int:
    """The offset after the `*/` closing the (nesting) block comment opened at `start`, or the text's end."""
    depth, at = 0, start
    while True:
        found = _COMMENT_STOP.search(text, at)
        if found is None:
            return len(text)
        depth += 1 if found.group() == "/*" else -1
        at = found.end()
        if depth == 0:
            return at


def _string_end(text: str, start: int, triple: bool) -> int:
    """The offset just past the string opened at `start` (the text's end when it is not closed)."""
    if triple:
        end = text.find('"""', start + 3)
        return len(text) if end < 0 else end + 3
    at = start + 1
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif text[at] == '"':
            return at + 1
        else:
            at += 1
    return len(text)


def segment_end(text: str, start: int, end: int) -> int:
    """The offset of the `}` closing the `{` at `start` before `end`, or -1 (the parser's interpolations too)."""
    depth = 0
    for at in range(start, end):
        if text[at] == "{":
            depth += 1
        elif text[at] == "}":
            depth -= 1
            if depth == 0:
                return at
    return -1
