"""Semantic tokens: the lexer's tokens in the LSP's relative encoding, with the legend the server announces.

Kinds map to the standard token types so every theme colours them as the
notebook's CodeMirror mode does: section and statement words are keywords,
clause words modifiers, `true`/`false` keywords marked readonly, built-in
types types marked defaultLibrary, a handler's name after `on` a function
marked declaration, `->` and `*` operators. A token spanning lines (a block
comment, a triple-quoted string) is sent one line at a time.
"""

from __future__ import annotations

from .convert import Lines
from ..syntax.tokens import Token

TOKEN_TYPES = ["keyword", "modifier", "type", "function", "method", "property", "variable", "string", "number",
               "comment", "operator", "decorator", "regexp"]
TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"]

_KINDS = {
    "comment": ("comment", 0), "string": ("string", 0), "escape": ("regexp", 0), "interpolation": ("operator", 0),
    "number": ("number", 0), "duration": ("number", 2), "keyword": ("keyword", 0), "modifier": ("modifier", 0),
    "constant": ("keyword", 2), "type": ("type", 0), "builtin_type": ("type", 4), "definition": ("function", 1),
    "property": ("property", 0), "method": ("method", 0), "attribute": ("decorator", 0), "function": ("function", 0),
    "variable": ("variable", 0), "operator": ("operator", 0), "arrow": ("operator", 0), "wildcard": ("operator", 0),
}
_TYPE_INDEX = {name: number for number, name in enumerate(TOKEN_TYPES)}


def encode(tokens: list[Token], lines: Lines) -> list[int]:
    """The five-integer relative encoding of the tokens (brackets and punctuation are left to the editor)."""
    data: list[int] = []
    last_line = last_column = 0
    text = lines.text
    for kind, start, end in tokens:
        shown = _KINDS.get(kind)
        if shown is None:
            continue
        token_type, modifiers = _TYPE_INDEX[shown[0]], shown[1]
        while start < end:
            line_end = text.find("\n", start, end)
            piece_end = end if line_end < 0 else line_end
            if piece_end > start:
                first = lines.position(start)
                length = lines.position(piece_end).character - first.character
                delta_line = first.line - last_line
                delta_column = first.character - (last_column if delta_line == 0 else 0)
                data += [delta_line, delta_column, length, token_type, modifiers]
                last_line, last_column = first.line, first.character
            start = piece_end + 1 if line_end >= 0 else end
    return data
