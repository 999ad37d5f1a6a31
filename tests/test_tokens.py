"""The editor tools' lexer (syntax/tokens.py): kinds as the CodeMirror mode colours them, strings found as the
parser finds them, and whether a cursor is inside string text (what completion asks)."""

from __future__ import annotations

import pytest

from soma_kernel.session.complete import complete
from soma_kernel.session.session import Session
from soma_kernel.syntax.tokens import in_string_text, tokenize

PROMPT = 'think("Reply with JSON {\\"decision\\": \\"approve\\"|\\"deny\\"}", "sys")'


def kinds(text: str) -> list[tuple[str, str]]:
    """(kind, text) of every token."""
    return [(kind, text[start:end]) for kind, start, end in tokenize(text)]


def test_keywords_names_types_numbers_and_comments_get_the_modes_kinds():
    assert kinds("on f(x: Int) { let d = 5s + 0x1F // c\n} /* a /* b */ c */ * -> s") == [
        ("keyword", "on"), ("definition", "f"), ("bracket", "("), ("variable", "x"), ("punctuation", ":"),
        ("builtin_type", "Int"), ("bracket", ")"), ("bracket", "{"), ("keyword", "let"), ("variable", "d"),
        ("operator", "="), ("duration", "5s"), ("operator", "+"), ("number", "0x1F"), ("comment", "// c"),
        ("bracket", "}"), ("comment", "/* a /* b */ c */"), ("wildcard", "*"), ("arrow", "->"), ("variable", "s")]


def test_an_interpolation_is_code_only_where_the_parser_reads_an_expression():
    assert kinds('"a {b + 1} {{c}}"') == [
        ("string", '"'), ("string", "a "), ("interpolation", "{"), ("variable", "b"), ("operator", "+"),
        ("number", "1"), ("interpolation", "}"), ("string", " "), ("string", "{{"), ("string", "c"),
        ("string", "}}"), ("string", '"')]
    # JSON text in a prompt is text: the string ends at its closing quote, not inside the braces
    assert kinds(PROMPT)[-1] == ("bracket", ")")
    assert not any(kind == "interpolation" for kind, _ in kinds(PROMPT))


@pytest.mark.parametrize("before, inside", [
    ('x = "ab', True), ('x = "ab"', False), ('x = "a{b', False), ('x = "a{b} c', True), ('"""a\n b', True),
    ('// "a', False), ('/* "a */ x', False), ('"a\\"', True), (PROMPT + "\nlet y = ", False),
    ('x = "é😀', True), ("x = \"a\\", True), ("x²", False),
])
def test_the_cursor_is_in_string_text_exactly_where_the_parser_would_read_text(before, inside):
    assert in_string_text(before) is inside


SEED_PROMPT = (
    'let r = try {\n'
    '    think(\n'
    '        "Refund for {order_id}: {text}. Reply with JSON {\\"decision\\": \\"approve\\"|\\"deny\\"}",\n'
    '        "You are a support agent.",\n'
    '        map("max_tokens", 300)\n'
    '    )\n'
    '}\n')


def test_kernel_completion_after_a_prompt_holding_json_offers_names():
    session = Session()
    code = "let order_id = 1\nlet text = 2\n" + SEED_PROMPT + "let s = order"
    reply = complete(session, code, len(code))
    assert "order_id" in reply["matches"]
