"""Renderer tests: minimal parentheses, literals, every expression form, patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from soma_kernel.syntax import ast
from soma_kernel.syntax.parser import parse, parse_fragment
from soma_kernel.syntax.render import render_expr, render_pattern

SEEDS = Path(__file__).parent / "seeds"


def expr_of(text: str):
    """The expression of a one-statement fragment."""
    (stmt,) = parse_fragment(text)
    return stmt.expr


ROUND_TRIPS = [
    '(seen.get("n") ?? 0) + 1',
    "amount <= order.amount && order.days <= 30",
    "paid_by_day >= 0 && paid_by_day <= 100000",
    'verdict == "urgent"',
    "r.error != ()",
    "x |> f(a)",
    "f(a, b)",
    "Cell.f(a)",
    's.get("n")',
    "a.b.c",
    "xs[i + 1]",
    "!x",
    "-x",
    "-5",
    "!(a && b)",
    "-(a + b)",
    "a - b - c",
    "a - (b - c)",
    "(a + b) * c",
    "a * b + c",
    "a || b && c",
    "(a || b) && c",
    "a ?? b ?? c",
    "(a == b) == c",
    "a + b |> f()",
    "x |> f() == y",
    "x => x + 1",
    "map(xs, x => x * 2)",
    "(x => x) == y",
    "[1, 2, 3]",
    "[]",
    'Deny { reason: "x" }',
    "Empty {}",
    "Approve",
    "true",
    "false",
    "()",
    "1.5",
    '"a \\"q\\" \\n"',
    '"order {order_id}: {a + 1}"',
    '"got {f(\\"a\\")}"',
    "try { … }",
    "try { … }?",
    "match x { … }",
    "if c { … } else { … }",
    "if c { … }",
    "if a { … } else if b { … } else { … }",
    "f(x => { … })",
    "(a + b).len",
    "(-5).abs()",
    "x[0][1]",
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_round_trip(text):
    source = text.replace("match x { … }", "match x { _ -> 1 }").replace("{ … }", "{ 1 }")
    assert render_expr(expr_of(source)) == text


def test_redundant_parentheses_are_dropped():
    assert render_expr(expr_of("((a)) + (b * c)")) == "a + b * c"
    assert render_expr(expr_of("(a && b) && c")) == "a && b && c"


def test_seed_guard_and_invariant_render_exactly():
    program = parse((SEEDS / "refund_agent" / "refund_agent.cell").read_text(encoding="utf-8"))
    cell = program.cells[0]
    assert render_expr(cell.machine.edges[1].guard) == "amount <= order.amount && order.days <= 30"
    assert render_expr(cell.memory.invariants[0].expr) == "paid_by_day >= 0 && paid_by_day <= 100000"


def test_render_built_nodes():
    node = ast.Binary("+", ast.Binary("??", ast.MethodCall(ast.Name("seen"), "get", [ast.Literal("n")]),
                                      ast.Literal(0)), ast.Literal(1))
    assert render_expr(node) == '(seen.get("n") ?? 0) + 1'
    assert render_expr(ast.Unary("-", ast.Literal(-3))) == "--3"
    assert render_expr(ast.Pipe(ast.Name("x"), ast.Name("h"))) == "x |> h"


def test_triple_string_renders_with_triple_quotes():
    assert render_expr(expr_of('"""say {name}"""')) == '"""say {name}"""'


def test_deep_expressions_need_no_recursion():
    text = " + ".join(["1"] * 3000)
    assert render_expr(expr_of(text)) == text


PATTERNS = [
    '"a"', "-3", "1..5", '"x" || "y"', "n", '"/api/" + rest', '{method: "GET", path}',
    "Deny { reason }", 'Deny { reason: "x" }', "Declined(msg)", "Approve", "_", "true", "()",
]


@pytest.mark.parametrize("text", PATTERNS)
def test_pattern_round_trip(text):
    match = expr_of("match v { " + text + " -> 0 }")
    assert render_pattern(match.arms[0].pattern) == text
