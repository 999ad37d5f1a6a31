#!/usr/bin/env python3
"""Write the TextMate grammar of Soma (editors/vscode/syntaxes/soma.tmLanguage.json) from the keyword table.

    textmate.py          write the grammar
    textmate.py check    exit 1 if the committed grammar differs from what would be written

The scopes follow what the CodeMirror mode colours (syntax/tokens.py reads
the same way): each keyword kind of soma_kernel/syntax/keywords.py gets one
scope, a handler's name after `on` is a function name, a call's name is a
function call (builtins are not told apart, as in the CodeMirror mode, so the
grammar depends on the keyword table alone), built-in types are `support`,
other capitalised names types, `//` and nesting `/* */` comments, strings
with escapes and `{…}` interpolations read as code, numbers and durations,
`->` and the `*` wildcard. tests/test_textmate.py checks the file is current.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GRAMMAR = REPO / "editors" / "vscode" / "syntaxes" / "soma.tmLanguage.json"

KIND_SCOPES = {
    "section": "keyword.declaration.soma",
    "clause": "storage.modifier.soma",
    "statement": "keyword.control.soma",
    "test": "keyword.other.test.soma",
    "constant": "constant.language.soma",
}


def _words(words) -> str:
    """An alternation of whole words, longest first."""
    return r"\b(?:" + "|".join(sorted(words, key=lambda w: (-len(w), w))) + r")\b"


def grammar() -> dict:
    """The grammar as a JSON-ready dict."""
    sys.path.insert(0, str(REPO))
    from soma_kernel.syntax.keywords import KEYWORDS, SLOT_PROPERTIES, TYPES

    keywords = [{"name": scope, "match": _words([w for w, k in KEYWORDS.items() if k == kind])}
                for kind, scope in KIND_SCOPES.items()]
    return {
        "$schema": "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
        "name": "Soma",
        "scopeName": "source.soma",
        "fileTypes": ["cell"],
        "comment": "Generated from soma_kernel/syntax/keywords.py by scripts/textmate.py: do not edit.",
        "patterns": [{"include": "#code"}],
        "repository": {
            "code": {"patterns": [
                {"include": "#comments"}, {"include": "#strings"}, {"include": "#numbers"},
                {"include": "#handler-name"}, {"include": "#slot-properties"}, {"include": "#keywords"},
                {"include": "#types"}, {"include": "#calls"}, {"include": "#operators"},
                {"include": "#braces"},
            ]},
            "comments": {"patterns": [
                {"name": "comment.line.double-slash.soma", "match": r"//.*$"},
                {"include": "#block-comment"},
            ]},
            "block-comment": {"name": "comment.block.soma", "begin": r"/\*", "end": r"\*/",
                              "patterns": [{"include": "#block-comment"}]},
            "strings": {"patterns": [
                {"name": "string.quoted.triple.soma", "begin": '"""', "end": '"""',
                 "patterns": [{"include": "#string-braces"}, {"include": "#interpolation"}]},
                {"name": "string.quoted.double.soma", "begin": '"', "end": '"',
                 "patterns": [{"name": "constant.character.escape.soma", "match": r"\\(?:u\{[0-9a-fA-F]+\}|.)"},
                              {"include": "#string-braces"}, {"include": "#interpolation"}]},
            ]},
            "string-braces": {"name": "constant.character.escape.soma", "match": r"\{\{|\}\}"},
            "interpolation": {
                "name": "meta.interpolation.soma", "begin": r"\{(?=[^:;\\\"{}]*\})", "end": r"\}",
                "beginCaptures": {"0": {"name": "punctuation.section.interpolation.begin.soma"}},
                "endCaptures": {"0": {"name": "punctuation.section.interpolation.end.soma"}},
                "patterns": [{"include": "#code"}],
            },
            "numbers": {"patterns": [
                {"name": "constant.numeric.duration.soma", "match": r"\b[0-9][0-9_]*(?:ms|min|years|year|s|h|d)\b"},
                {"name": "constant.numeric.soma",
                 "match": r"\b(?:0x[0-9A-Fa-f][0-9A-Fa-f_]*|0b[01][01_]*|0o[0-7][0-7_]*"
                          r"|[0-9][0-9_]*(?:\.[0-9][0-9_]*(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)?)\b"},
            ]},
            "handler-name": {"match": r"\b(on)\s+([A-Za-z_][A-Za-z0-9_]*)",
                             "captures": {"1": {"name": KIND_SCOPES["section"]},
                                          "2": {"name": "entity.name.function.soma"}}},
            "slot-properties": {"name": "entity.other.attribute-name.soma",
                                "match": _words(SLOT_PROPERTIES) + r"(?=[^\[\]\n]*\])"},
            "keywords": {"patterns": keywords},
            "types": {"patterns": [
                {"name": "support.type.soma", "match": _words(TYPES)},
                {"name": "entity.name.type.soma", "match": r"\b[A-Z][A-Za-z0-9_]*\b"},
            ]},
            "calls": {"name": "entity.name.function.call.soma", "match": r"\b[a-z_][A-Za-z0-9_]*(?=\s*\()"},
            "operators": {"patterns": [
                {"name": "keyword.operator.wildcard.soma", "match": r"\*(?=\s*->)"},
                {"name": "keyword.operator.arrow.soma", "match": r"->|=>|\|>"},
                {"name": "keyword.operator.soma", "match": r"\?\?|==|!=|<=|>=|&&|\|\||\.\.|[-+*/]=|[-+*/%<>!=?|]"},
            ]},
            "braces": {"begin": r"\{", "end": r"\}", "patterns": [{"include": "#code"}]},
        },
    }


def text() -> str:
    """The grammar file's text."""
    return json.dumps(grammar(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write the grammar, or check that it is current."""
    if argv[:1] == ["check"]:
        if not GRAMMAR.exists() or GRAMMAR.read_text(encoding="utf-8") != text():
            print(f"{GRAMMAR.relative_to(REPO)} differs from soma_kernel/syntax/keywords.py: "
                  "run python scripts/textmate.py")
            return 1
        return 0
    GRAMMAR.parent.mkdir(parents=True, exist_ok=True)
    GRAMMAR.write_text(text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
