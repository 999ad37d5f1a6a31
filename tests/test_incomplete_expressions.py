"""An expression cut short (`let a = 1 +` then `let b = 2`) is a syntax error at the dangling operator,
for every binary operator and every keyword that can start the next line, in a handler, a test cell
and a notebook; a keyword is never reported as an undefined name."""

from __future__ import annotations

import pytest

from soma_kernel.analysis.check import check_program
from soma_kernel.core.diagnostics import SomaSyntaxError
from soma_kernel.runtime.builtins import BUILTINS
from soma_kernel.session.session import Session
from soma_kernel.syntax.keywords import KEYWORDS
from soma_kernel.syntax.parser import parse

BINARY = ["+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "??", "|>"]
# Keywords that begin an expression: after an operator they are its operand (`x +` then `if c { 1 } else { 2 }`).
OPERAND_WORDS = {"if", "match", "try", "true", "false"}
# A line each statement keyword starts; the other keywords stand alone on their line.
LINES = {"let": "let b = 2", "return": "return y", "while": "while y > 0 { break }",
         "for": "for i in [1, 2] { print(i) }", "require": "require y > 0 else Bad", "ensure": "ensure y > 0",
         "emit": "emit done(y)", "assert": "assert y == 1", "assert_fails": "assert_fails f(1)",
         "mock": 'mock think "x"', "property": 'property "p" forall i in 1..3 ensures i > 0',
         "else": "else { 1 }", "in": "in xs"}
# `scale` is also a builtin function, so it is a value there.
FOLLOWERS = sorted(word for word in KEYWORDS if word not in OPERAND_WORDS and word not in BUILTINS)


def errors_of(source: str) -> list[tuple[int, int, str, str]]:
    """(line, col, message, hint) of the parse error, or of every `soma check` error."""
    try:
        report = check_program(parse(source, "a.cell"))
    except SomaSyntaxError as err:
        d = err.diagnostic
        return [(d.span.line, d.span.col, d.message, d.hint)]
    return [(e.span.line, e.span.col, e.message, e.hint) for e in report.errors]


def assert_blames_the_operator(errors, line: int, col: int, op: str, word: str):
    assert (line, col, f"incomplete expression: nothing after '{op}'") in [e[:3] for e in errors], errors
    hint = next(e[3] for e in errors if e[:2] == (line, col))
    assert f"'{word}' on the next line is a keyword" in hint and f"remove the '{op}'" in hint
    assert not any(f"'{word}'" in e[2] for e in errors), errors


@pytest.mark.parametrize("op", BINARY)
def test_a_handler_line_ending_with_an_operator_is_blamed_for_every_keyword_after_it(op):
    param = "Bool" if op in ("&&", "||") else "Int"
    for word in FOLLOWERS:
        source = (f"cell A {{\n    on f(x: {param}) {{\n        let y = x {op}\n        {LINES.get(word, word)}\n"
                  "        return y\n    }\n}\n")
        assert_blames_the_operator(errors_of(source), 3, 19, op, word)


@pytest.mark.parametrize("op", ["+", "*", "==", "&&", "??", "|>"])
def test_a_test_rule_line_ending_with_an_operator_is_blamed(op):
    for word in ("let", "assert", "assert_fails", "mock", "property"):
        source = (f"cell A {{\n    on f(n: Int) {{ return n }}\n}}\ncell test T {{\n    rules {{\n"
                  f"        let y = 2 {op}\n        {LINES[word]}\n    }}\n}}\n")
        assert_blames_the_operator(errors_of(source), 6, 19, op, word)


def test_an_operator_before_a_closing_brace_bracket_or_the_end_is_blamed():
    cases = {
        "cell A {\n    on f(x: Int) {\n        let y = x *\n    }\n}\n": (3, 19, "*", "'}' closes the block"),
        "cell A {\n    memory {\n        n: Int\n        invariant n >=\n    }\n}\n": (4, 21, ">=", "'}' closes"),
        "cell A {\n    on f(x: Int) {\n        return [x, x -]\n    }\n}\n": (3, 22, "-", "']' closes the bracket"),
        "cell A {\n    on f(x: Int) {\n        return max(x ??)\n    }\n}\n": (3, 22, "??", "')' closes the bracket"),
    }
    for source, (line, col, op, said) in cases.items():
        [(got_line, got_col, message, hint)] = errors_of(source)
        assert (got_line, got_col, message) == (line, col, f"incomplete expression: nothing after '{op}'")
        assert hint.startswith(said)


def test_arrows_and_generic_types_are_no_dangling_operators():
    # a stray `)` after `=` is still the stray `)`; `->` and a type's `>` end lines legitimately
    with pytest.raises(SomaSyntaxError) as stray:
        parse("cell A {\n    on f() {\n        let y = )\n    }\n}\n", "a.cell")
    assert stray.value.diagnostic.message.startswith("unexpected ')'")
    with pytest.raises(SomaSyntaxError) as typed:
        parse("cell A {\n    memory {\n        m: Map<String, Int>\n        ]\n    }\n}\n", "a.cell")
    assert "incomplete" not in typed.value.diagnostic.message


def test_a_keyword_that_is_also_a_variable_still_continues_the_expression():
    for word in ("state", "cost", "test", "assert", "after"):
        source = (f"cell A {{\n    on f(x: Int) {{\n        let {word} = 2\n        let y = x +\n"
                  f"            {word}\n        return y\n    }}\n}}\n")
        assert errors_of(source) == []


def test_a_keyword_used_as_a_value_is_named_a_keyword_never_an_undefined_variable():
    for word in ("state", "signal", "cost", "memory"):
        [(_, _, message, hint)] = errors_of(f"cell A {{\n    on f() {{\n        return len({word})\n    }}\n}}\n")
        assert message == f"'{word}' is a keyword, and no variable '{word}' is defined"
        assert f"let {word} = …" in hint
    for word in ("let", "return", "while", "emit"):
        with pytest.raises(SomaSyntaxError) as err:
            parse(f"cell A {{\n    on f() {{\n        return len({word})\n    }}\n}}\n", "a.cell")
        assert err.value.diagnostic.message == f"'{word}' is a reserved word — rename it"


@pytest.fixture
def session(tmp_path):
    return Session(directory=str(tmp_path))


@pytest.mark.parametrize("op", BINARY)
def test_notebook_lines_ending_with_an_operator_are_blamed_and_run_nothing(session, op):
    for word in ("let", "return", "assert", "mock", "state", "cost", "while"):
        result = session.execute(f'print("ran")\nlet a = true {op}\n{LINES.get(word, word)}', "c", count=3)
        first = result.error.split("\n")[0]
        assert first == f"error: cell[3]:2:14: incomplete expression: nothing after '{op}'", result.error
        assert f"'{word}' on the next line is a keyword" in result.error
        assert "ran" not in result.stream_text()


def test_the_issue_examples(session):
    result = session.execute("let a = 1 +\nlet b = 2", "c", count=2)
    assert result.error == ("error: cell[2]:1:11: incomplete expression: nothing after '+'\n"
                            "1 | let a = 1 +\n"
                            "  |           ^\n"
                            "  hint: 'let' on the next line is a keyword, not a value: "
                            "finish the expression or remove the '+'")
    result = session.execute("cell A {\n    on f(x: Int) {\n        let y = x +\n        return y\n    }\n}", "d",
                             count=3)
    assert result.error.split("\n")[0] == "error: cell[3]:3:19: incomplete expression: nothing after '+'"
    assert session.execute("let a = 1 +", "e", count=4).error.endswith(
        "hint: the text ends after it: finish the expression or remove the '+'")
