"""Language constructs through the handler code generator and the closure compiler.

Handlers run as generated Python source (Int fast paths inlined); session
code (Runtime.evaluate/execute) runs as closures. Both must agree.
"""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse, parse_fragment

PROGRAM = """
cell Calc {
    memory {
        seen: List<Int>
    }
    on fib(n: Int) {
        if n < 2 { return n }
        return fib(n - 1) + fib(n - 2)
    }
    on mixed(a: Any, b: Any) { return [a + b, a - b, a * b, a < b, a == b, a != b] }
    on same(a: Any, b: Any) { return a == b }
    on bump(n: Int) {
        n += 2
        n *= 3
        n -= 1
        n /= 2
        return n
    }
    on loop_control(xs: List<Int>) {
        let out = []
        for x in xs {
            match x {
                0 -> { continue }
                9 -> { break }
                _ -> { out = push(out, x) }
            }
        }
        return out
    }
    on nested_break() {
        let pairs = 0
        for i in range(0, 5) {
            for j in range(0, 5) {
                if j > i { break }
                pairs += 1
            }
        }
        return pairs
    }
    on implicit_if(flag: Bool) {
        if flag { "on" } else { "off" }
    }
    on return_from_match_block(n: Int) {
        let label = match n {
            1 -> {
                return "early"
            }
            _ -> "late"
        }
        return label
    }
    on record(n: Int) {
        emit noted(n)
        return seen
    }
    on noted(n: Int) { seen.push(n) }
    on logic(a: Bool, b: Bool) { return [a && b, a || b, !a] }
    on logic_bad(a: Any) { return a && true }
    on negate(x: Any) { return -x }
    on text(n: Int, s: String) { return "n={n} s={s} list={[n, s]}" }
    on optional(a: Int, opts: Map) { return opts.scale ?? a }
    on while_sum(n: Int) {
        let i = 0
        let total = 0
        while i < n {
            i += 1
            if i % 2 == 0 { continue }
            total += i
        }
        total
    }
    on shadow(x: Int) {
        let y = x
        if x > 0 {
            let y = 100
        }
        return y
    }
    on remainder(a: Any) { return [a % 3, a % 1] }
}
"""


@pytest.fixture
def rt():
    """The PROGRAM loaded in a fresh runtime."""
    runtime = Runtime(note=lambda text: None, under_test=True)
    runtime.load_program(parse(PROGRAM, origin="calc.cell"))
    return runtime


def evaluate(rt, text: str, env=None):
    """A session expression's value."""
    return rt.evaluate(parse_fragment(text)[0].expr, env if env is not None else {})


def test_recursion(rt):
    assert rt.call("fib", [20]) == 6765


@pytest.mark.parametrize("a,b,expected", [
    (7, 2, [9, 5, 14, False, False, True]),
    (1.5, 2, [3.5, -0.5, 3.0, True, False, True]),
    (2, 2.0, [4.0, 0.0, 4.0, False, True, False]),
    ("a", "b", None),
])
def test_int_fast_path_agrees_with_the_general_operators(rt, a, b, expected):
    if expected is None:
        with pytest.raises(SomaError) as caught:
            rt.call("mixed", [a, b])
        assert caught.value.text == "type: cannot subtract String and String" and caught.value.span.line == 10
    else:
        assert rt.call("mixed", [a, b]) == expected


def test_structural_equality(rt):
    assert rt.call("same", [[1, {"a": 2}], [1, {"a": 2}]]) is True
    assert rt.call("same", ["x", "x"]) is True
    assert rt.call("same", [None, 3]) is False
    with pytest.raises(SomaError) as caught:
        rt.call("same", [1, "1"])
    assert caught.value.kind == "type"


def test_compound_assignment_on_a_parameter(rt):
    assert rt.call("bump", [1]) == 4
    assert rt.call("bump", [2]) == 5.5


def test_break_and_continue_from_match_arms(rt):
    assert rt.call("loop_control", [[1, 0, 2, 9, 3]]) == [1, 2]


def test_break_leaves_only_the_inner_loop(rt):
    assert rt.call("nested_break", []) == 15


def test_implicit_return_of_an_if_statement(rt):
    assert rt.call("implicit_if", [True]) == "on"
    assert rt.call("implicit_if", [False]) == "off"


def test_return_inside_a_block_arm_used_as_a_value(rt):
    assert rt.call("return_from_match_block", [1]) == "early"
    assert rt.call("return_from_match_block", [2]) == "late"


def test_emit_reaches_listeners(rt):
    assert rt.call("record", [4]) == [4]


def test_logic_operators_need_bools(rt):
    assert rt.call("logic", [True, False]) == [False, True, False]
    with pytest.raises(SomaError) as caught:
        rt.call("logic_bad", [1])
    assert caught.value.kind == "type" and "'&&' needs Bool operands, got Int" in caught.value.text


def test_negation(rt):
    assert rt.call("negate", [3]) == -3
    assert rt.call("negate", [2.5]) == -2.5
    with pytest.raises(SomaError) as caught:
        rt.call("negate", ["s"])
    assert caught.value.kind == "type" and caught.value.span.line > 0


def test_interpolation_uses_the_display_form(rt):
    assert rt.call("text", [3, "x"]) == 'n=3 s=x list=[3, "x"]'


def test_trailing_map_parameter_is_optional(rt):
    assert rt.call("optional", [5]) == 5
    assert rt.call("optional", [5, {"scale": 2}]) == 2


def test_while_with_continue(rt):
    assert rt.call("while_sum", [6]) == 9


def test_block_scoping(rt):
    assert rt.call("shadow", [3]) == 3


def test_session_code_runs_as_closures(rt):
    env = {"k": 10}
    assert evaluate(rt, "fib(10) + k", env) == 65
    assert evaluate(rt, "[1, 2, 3] |> map(x => x * k)", env) == [10, 20, 30]
    assert evaluate(rt, "if k > 5 { \"big\" } else { \"small\" }", env) == "big"


def test_session_statement_is_atomic(rt):
    env: dict = {}
    with pytest.raises(SomaError):
        rt.execute(parse_fragment("record(1) + fail(\"x\", \"y\")")[0], env)
    assert rt.cells["Calc"].slots["seen"].data == []


def test_redefinition_recompiles_callers(rt):
    assert rt.call("fib", [5]) == 5
    rt.define(parse("cell Calc { on fib(n: Int) { return 42 } }").items)
    assert rt.call("fib", [5]) == 42


def test_reset_clears_state(rt):
    rt.call("record", [1])
    rt.reset()
    assert rt.cells["Calc"].slots["seen"].data == []


def test_pathological_nesting_still_compiles():
    long_sum = " + ".join(f"(n * {i})" for i in range(400))
    nested = "n"
    for _ in range(120):
        nested = f"({nested} + 1)"
    loops = "total += 1"
    for i in range(30):
        loops = f"for i{i} in range(0, 2) {{ if i{i} == 1 {{ continue }} {loops} }}"
    ifs = "return 7"
    for i in range(80):
        ifs = f"if n > {i} {{ {ifs} }}"
    source = f"""cell Big {{
        on total(n: Int) {{ return {long_sum} }}
        on deep(n: Int) {{ return {nested} }}
        on loops() {{ let total = 0 {loops} return total }}
        on ifs(n: Int) {{ {ifs} return 0 }}
    }}"""
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(parse(source))
    assert runtime.call("total", [1]) == sum(range(400))
    assert runtime.call("deep", [1]) == 121
    assert runtime.call("loops", []) == 1
    assert runtime.call("ifs", [100]) == 7 and runtime.call("ifs", [5]) == 0


def test_top_level_call_reaches_a_handler_named_like_a_builtin():
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(parse("cell S { on sum(n: Int) { return n * 2 } }"))
    assert runtime.call("sum", [4]) == 8
    with pytest.raises(SomaError) as caught:
        runtime.call("missing", [])
    assert caught.value.kind == "undefined_variable"


@pytest.mark.parametrize("a,expected", [(7, [1, 0]), (-7, [-1, 0]), (0, [0, 0]), (7.5, [1.5, 0.5]),
                                        (10 ** 30 + 2, [0, 0]), (-(10 ** 30) - 2, [0, 0])])
def test_remainder_by_a_literal_keeps_the_dividends_sign_on_both_paths(rt, a, expected):
    assert rt.call("remainder", [a]) == expected
    assert evaluate(rt, "[a % 3, a % 1]", {"a": a}) == expected


def test_remainder_of_a_non_number_is_located(rt):
    with pytest.raises(SomaError) as caught:
        rt.call("remainder", ["s"])
    assert caught.value.kind == "type" and caught.value.span.line > 0


UNCHECKED_LAMBDA_RETURN = """
cell L {
    on scaled(xs: List<Int>) {
        let ys = xs |> map(v => { return v * 10 })
        return len(ys)
    }
    on stopped(xs: List<Int>) {
        for x in xs {
            let ys = xs |> map(v => { break })
        }
        return 0
    }
}
"""


@pytest.mark.parametrize("call, word, line", [("scaled([1, 2])", "`return`", 4), ("stopped([1])", "`break`", 9)])
def test_control_flow_leaving_a_lambda_is_refused_in_an_unchecked_handler(call, word, line):
    """Unchecked code (the runtime alone): the handler fails with the check's words
    instead of returning from the handler (the old answer was 10) or breaking the loop."""
    runtime = Runtime()
    runtime.load_program(parse(UNCHECKED_LAMBDA_RETURN, "lam.cell"))
    with pytest.raises(SomaError) as err:
        runtime.evaluate(parse_fragment(call, "<t>")[0].expr, {})
    assert err.value.kind == "type" and err.value.span.line == line
    assert err.value.detail.startswith(f"{word} inside a lambda")


def test_return_inside_a_lambda_at_session_level_is_a_located_error():
    runtime = Runtime()
    statement = parse_fragment("[1, 2] |> map(v => { return v * 10 })", "<t>")[0]
    with pytest.raises(SomaError) as err:
        runtime.execute(statement, {})
    assert err.value.detail.startswith("`return` inside a lambda") and err.value.span.col == 22
