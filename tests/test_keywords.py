"""The keyword table agrees with the grammar, and the Pygments lexer and completion read it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lark import Lark
from lark.lexer import PatternStr
from pygments.lexers import get_lexer_by_name
from pygments.token import Keyword

from soma_kernel.runtime.values import type_of
from soma_kernel.session.complete import complete
from soma_kernel.session.session import Session
from soma_kernel.syntax.keywords import KEYWORDS, SLOT_PROPERTIES, TYPES, words_of

GRAMMAR = Path(__file__).resolve().parents[1] / "soma_kernel" / "syntax" / "grammar.lark"


def grammar_words() -> set[str]:
    """Every word literal of grammar.lark (`"cell"`, `"on"`, the TRUE/EVERY terminals ...)."""
    parser = Lark(GRAMMAR.read_text(encoding="utf-8"), parser="lalr", lexer="contextual")
    return {terminal.pattern.value for terminal in parser.terminals
            if isinstance(terminal.pattern, PatternStr) and re.fullmatch(r"[a-z_]+", terminal.pattern.value)}


def test_keyword_table_is_exactly_the_grammars_words():
    assert set(KEYWORDS) == grammar_words()


def test_every_keyword_has_a_known_kind_and_words_of_keeps_table_order():
    assert set(KEYWORDS.values()) == {"section", "clause", "statement", "test", "constant"}
    assert words_of("constant") == ("true", "false")
    assert words_of("section")[:2] == ("cell", "agent")


def test_types_are_the_runtime_type_names_a_declaration_can_write():
    runtime_names = {type_of(value) for value in (1, 1.5, "s", True, [], {}, None)}
    assert set(TYPES) == runtime_names | {"Any"}


@pytest.mark.parametrize("word", sorted(KEYWORDS))
def test_the_pygments_lexer_colours_every_keyword(word):
    tokens = [(kind, text) for kind, text in get_lexer_by_name("soma").get_tokens(f"{word} x") if text.strip()]
    kind = tokens[0][0]
    assert tokens[0][1] == word and kind in Keyword
    expected = {"section": Keyword.Declaration, "clause": Keyword.Declaration,
                "constant": Keyword.Constant}.get(KEYWORDS[word], Keyword)
    assert kind is expected


def test_the_pygments_lexer_colours_types_and_slot_properties():
    lexer = get_lexer_by_name("soma")
    for name in TYPES:
        assert [k for k, t in lexer.get_tokens(f"x: {name}") if t == name] == [Keyword.Type]
    assert [t for k, t in lexer.get_tokens("Ticket") if k is Keyword.Type] == []
    for prop in SLOT_PROPERTIES:
        assert any(t == prop and "Decorator" in str(k) for k, t in lexer.get_tokens(f"s: Map<String, Int> [{prop}]"))


def test_completion_offers_every_keyword_and_type(tmp_path):
    session = Session(directory=str(tmp_path))
    for word in list(KEYWORDS) + list(TYPES):
        reply = complete(session, word, len(word))
        kinds = {t["text"]: t["type"] for t in reply["metadata"]["_jupyter_types_experimental"]}
        assert kinds.get(word) == ("type" if word in TYPES else "keyword"), word
