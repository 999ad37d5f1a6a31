"""A Pygments lexer for Soma, so nbconvert's HTML export and Sphinx highlight `.cell` code.

Registered under the `pygments.lexers` entry point: after installing the
package, `pygments.lexers.get_lexer_by_name("soma")` finds it, and the kernel's
`language_info.pygments_lexer = "soma"` points at it.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, include, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String, Text,
                            Whitespace)

from ..syntax.keywords import SLOT_PROPERTIES, TYPES, words_of

DECLARATION_KEYWORDS = words_of("section", "clause")
STATEMENT_KEYWORDS = words_of("statement", "test")


class SomaLexer(RegexLexer):
    """Lexer for the Soma agent language (`.cell` files)."""

    name = "Soma"
    aliases = ["soma"]
    filenames = ["*.cell"]
    mimetypes = ["text/x-soma"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*", Comment.Multiline, "block-comment"),
            (r'"""', String.Double, "triple-string"),
            (r'"', String.Double, "string"),
            (words(words_of("constant"), prefix=r"\b", suffix=r"\b"), Keyword.Constant),
            (r"(on)(\s+)([a-z_]\w*)", bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (words(DECLARATION_KEYWORDS, suffix=r"\b"), Keyword.Declaration),
            (words(STATEMENT_KEYWORDS, suffix=r"\b"), Keyword),
            (words(SLOT_PROPERTIES, prefix=r"(?<=\[)", suffix=r"\b"), Name.Decorator),
            (r"\d[\d_]*(\.\d+)?([eE][+-]?\d+)?(ms|s|min|h|d|years?)\b", Number),
            (r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+", Number.Integer),
            (r"\d[\d_]*\.\d+([eE][+-]?\d+)?", Number.Float),
            (r"\d[\d_]*", Number.Integer),
            (words(TYPES, prefix=r"\b", suffix=r"\b"), Keyword.Type),
            (r"[A-Z]\w*", Name.Class),
            (r"[a-z_]\w*(?=\s*\()", Name.Function),
            (r"[a-z_]\w*", Name),
            (r"\|>|\?\?|->|=>|==|!=|<=|>=|&&|\|\||[-+*/%]=?|[<>!=?*]", Operator),
            (r"[{}()\[\],.:]", Punctuation),
            (r".", Text),
        ],
        "block-comment": [
            (r"[^*/]+", Comment.Multiline),
            (r"/\*", Comment.Multiline, "#push"),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"[*/]", Comment.Multiline),
        ],
        "interpolation": [
            (r"\}", String.Interpol, "#pop"),
            include("root"),
        ],
        "string": [
            (r'\\(u\{[0-9a-fA-F]+\}|.)', String.Escape),
            (r"\{\{|\}\}", String.Double),
            (r"\{(?=[^}:;]*\})", String.Interpol, "interpolation"),
            (r'"', String.Double, "#pop"),
            (r'[^"\\{}]+|[{}]', String.Double),
        ],
        "triple-string": [
            (r"\{\{|\}\}", String.Double),
            (r"\{(?=[^}:;]*\})", String.Interpol, "interpolation"),
            (r'"""', String.Double, "#pop"),
            (r'[^"{}]+|"|[{}]', String.Double),
        ],
    }
