"""Issue 21, "Wrong answers": each rule is tested on several members of its class,
through the session (a notebook's view) and the command line where it applies."""

from __future__ import annotations

import pytest

from soma_kernel.session.session import Session


@pytest.fixture
def session(tmp_path):
    """A fresh session in a temporary directory (no soma.toml)."""
    return Session(directory=str(tmp_path))


def value(result):
    """The text/plain of a cell's result."""
    assert result.ok, result.error
    return result.result["text/plain"]


# ---------------------------------------------------------------- failing asserts fail their cell

@pytest.mark.parametrize("rule, printed, message", [
    ("assert 1 + 1 == 3", "  ✗ cell[4]:2  assert 1 + 1 == 3 — FAILED\n         left:  2\n         right: 3\n",
     "assert failed"),
    ('assert len("ab") / 0 == 1', '  ✗ cell[4]:2  assert len("ab") / 0 == 1 — ERROR: division_by_zero: division by zero\n',
     "assert raised an error: division_by_zero: division by zero"),
    ("assert 7", "  ✗ cell[4]:2  assert 7 — ERROR: assert needs a Bool, got 7\n", "assert failed"),
    ("assert_fails 1 + 1", "  ✗ cell[4]:2  assert_fails 1 + 1 — FAILED: expected a runtime error, but it succeeded "
     "with 2\n", "assert_fails failed"),
    ('property "small" forall n: Int in 1..5 ensures n < 3',
     '  ✗ property "small" — FAILED with counter-example n = 3\n', "property failed"),
])
def test_a_failing_top_level_rule_prints_its_line_then_fails_the_cell(session, rule, printed, message):
    result = session.execute(f'print("before")\n{rule}\nprint("after")', count=4)
    assert result.stream_text() == "before\n" + printed
    assert result.error_name == "AssertionError" and result.error_value == message
    assert result.error.split("\n")[0] == f"error: cell[4]:2:1: {message}"
    assert result.error.split("\n")[1] == f"2 | {rule}"
    assert "raises-exception" in result.error.split("\n")[-1]


@pytest.mark.parametrize("rule", ["assert 1 + 1 == 2", "assert_fails 1 / 0",
                                  'property "p" forall n: Int in 1..4 ensures n < 9', "assert true"])
def test_a_passing_rule_leaves_the_cell_ok_and_the_cell_goes_on(session, rule):
    result = session.execute(f"{rule}\n40 + 2")
    assert value(result) == "42"
    assert result.stream_text().startswith("  ✓ ")


# ---------------------------------------------------------------- () results are shown

@pytest.mark.parametrize("code", ['parse_int("x")', "nth([1, 2], 7)", "[1, 2].nth(7)", '"x".parse_int()',
                                  "find([1, 2], v => v > 5)", 'parse_float("nope")', 'let m = map("a", 1)\nm.b'])
def test_a_pure_call_that_returns_nothing_shows_unit(session, code):
    assert value(session.execute(code)) == "()"


@pytest.mark.parametrize("code", ["print(1)", "clear_trace()", "clear_context()", "sleep(0)"])
def test_a_call_made_for_its_effect_shows_nothing(session, code):
    result = session.execute(code)
    assert result.ok and result.result is None


def test_a_handler_named_like_an_effect_builtin_shows_its_unit(session):
    session.execute("cell Q {\n    on print(x: Int) {\n        let y = x\n    }\n}", "a")
    assert value(session.execute("Q.print(1)", "b")) == "()"


# ---------------------------------------------------------------- declared return types: the reference's rule

RETURNS = """cell type Pay { variants { Cash  Card { last4: String } } }
cell R {
    face {
        signal maybe_pay(n: Int) -> Pay
        signal request(path: String) -> Map
        signal listed() -> Map
    }
    on maybe_pay(n: Int) {
        if n > 0 { return Cash }
        return ()
    }
    on request(path: String) {
        if path == "/list" { return [1, 2] }
        if path == "/text" { return "hello" }
        return map("ok", true)
    }
    on listed() { return top([map("a", 1), map("a", 2)], 1) }
}"""


@pytest.mark.parametrize("call, shown", [("maybe_pay(1)", "Cash"), ("maybe_pay(0)", "()"),
                                         ('request("/list")', "[1, 2]"), ('request("/text")', 'hello'),
                                         ('request("/")', '{"ok": true}')])
def test_what_the_reference_returns_unchecked_runs(session, call, shown):
    assert session.execute(RETURNS, "a").ok
    assert value(session.execute(call)) == shown


def test_a_list_for_a_declared_map_is_refused_as_the_reference_refuses_it(session):
    assert session.execute(RETURNS, "a").ok
    result = session.execute("listed()")
    assert not result.ok and "R.listed() returned List (expected Map, got List)" in result.error


def test_check_accepts_the_router_returning_anything():
    from soma_kernel.analysis.check import check_program
    from soma_kernel.syntax.parser import parse
    report = check_program(parse(RETURNS.replace("return [1, 2]", 'return [1, 2]\n        return 7'), "r.cell"))
    assert [d.message for d in report.errors] == []
