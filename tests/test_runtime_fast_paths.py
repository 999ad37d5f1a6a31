"""The generated code's fast paths keep the general semantics.

Handlers run as generated Python with locals as Python variables, Int
arithmetic untested where a local provably holds an Int (runtime.intlocals),
calls resolved once per compiled handler and `slot.set(k, v)` written inline;
session statements run the general closures. Each case compares the two, or
pins the exact error and rollback.
"""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse, parse_fragment

CELL = """
cell Shop {
    memory {
        stock: Map<String, Int>
        names: Map<String, String>
        invariant stock >= 0
        invariant size <= 3
    }
    on put(key: Any, amount: Any) {
        stock.set(key, amount)
    }
    on put_then_fail(key: String, amount: Int) {
        stock.set(key, amount)
        stock.set("other", amount + 1)
        let broken = 1 / 0
    }
    on name(key: String, text: Any) {
        names.set(key, text)
    }
    on nested(key: String) {
        put(key, 1)
        put(key, (stock.get(key) ?? 0) + 1)
        return stock.get(key)
    }
    on range(a: Int, b: Int) { return ["mine", a, b] }
    on loop_over_own_range() {
        let seen = []
        for i in range(1, 2) { seen = push(seen, i) }
        return seen
    }
}
"""


@pytest.fixture
def rt():
    """CELL loaded in a fresh runtime."""
    runtime = Runtime(note=lambda text: None, under_test=True)
    runtime.load_program(parse(CELL, origin="shop.cell"))
    return runtime


def stock(rt):
    """The stock slot's stored entries."""
    return dict(rt.cells["Shop"].slots["stock"].data)


def failure(rt, handler, *args) -> SomaError:
    """The error a handler call raises."""
    with pytest.raises(SomaError) as caught:
        rt.call(handler, list(args))
    return caught.value


def test_an_inline_slot_write_stores_and_a_key_is_text(rt):
    rt.call("put", ["a", 2])
    rt.call("put", [7, 3])
    assert stock(rt) == {"a": 2, "7": 3}


@pytest.mark.parametrize("args,text", [
    (["a", -1], 'invariant: stock["a"] = -1 violates invariant stock >= 0'),
    (["a", "x"], "type: expected Int for slot stock, got String"),
    ([None, 1], "type: a slot key cannot be () — check the value you use as the key"),
])
def test_a_refused_inline_write_says_what_slot_write_says(rt, args, text):
    error = failure(rt, "put", *args)
    assert error.text.startswith(text.split(" for slot")[0]) and error.span.line == 10
    assert stock(rt) == {}


def test_a_size_invariant_sees_the_size_after_the_write(rt):
    for key in ("a", "b", "c"):
        rt.call("put", [key, 1])
    rt.call("put", ["a", 5])
    error = failure(rt, "put", "d", 1)
    assert error.kind == "invariant" and "size <= 3" in error.text
    assert stock(rt) == {"a": 5, "b": 1, "c": 1}


def test_a_failed_handler_rolls_back_its_inline_writes(rt):
    rt.call("put", ["a", 1])
    assert failure(rt, "put_then_fail", "a", 9).kind == "division_by_zero"
    assert stock(rt) == {"a": 1}


def test_a_string_slot_takes_the_inline_path_too(rt):
    rt.call("name", ["k", "v"])
    assert rt.cells["Shop"].slots["names"].data == {"k": "v"}
    assert failure(rt, "name", "k", 5).kind == "type"


def test_nested_handler_calls_see_each_others_writes(rt):
    assert rt.call("nested", ["z"]) == 2
    assert stock(rt) == {"z": 2}


def test_a_handler_named_range_is_what_a_for_loop_calls(rt):
    assert rt.call("loop_over_own_range", []) == ["mine", 1, 2]


def test_a_redefined_handler_is_what_callers_reach():
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse("cell A {\n    on inner() { return 1 }\n    on outer() { return inner() }\n}\n"))
    assert rt.call("outer", []) == 1
    rt.define(parse("cell A {\n    on inner() { return 2 }\n    on outer() { return inner() }\n}\n").items)
    assert rt.call("outer", []) == 2


INT_CASES = {
    "counter": ("let i = 0\nlet total = 0\nwhile i < 10 {\n    total = total + i * 3 % 7\n    i = i + 1\n}\ntotal",
                sum(i * 3 % 7 for i in range(10))),
    "negative remainder": ("let a = -7\nlet b = a % 3\nb", -1),
    "exact division": ("let a = 7\nlet b = a / 2\nb", 3.5),
    "becomes a Float": ("let x = 1\nx = x * 2\nx = x + 0.5\nx * 2", 5.0),
    "past 64 bits": ("let x = 1\nfor i in range(0, 100) { x = x * 3 }\nx - 1", 3 ** 100 - 1),
    "loop variable": ("let s = 0\nfor i in range(-3, 3) { s = s + i % 2 }\ns", -1),
    "shadowed by a lambda": ("let n = 2\nlet f = n => n + 0.5\nf(1)", 1.5),
    "compared to a String": ('let n = 2\nlet same = n == "2"\nsame', None),
}


@pytest.mark.parametrize("name", list(INT_CASES))
def test_int_locals_agree_with_the_general_operators(name):
    body, expected = INT_CASES[name]
    indented = "\n".join("        " + line for line in body.splitlines())
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse(f"cell P {{\n    on run() {{\n{indented}\n    }}\n}}\n", origin="p.cell"))
    session, env = Runtime(note=lambda text: None, under_test=True), {}
    statements = parse_fragment(body)
    if expected is None:
        with pytest.raises(SomaError) as generated:
            rt.call("run", [])
        with pytest.raises(SomaError) as closure:
            for statement in statements:
                session.execute(statement, env)
        assert generated.value.text == closure.value.text == "type: cannot compare Int and String"
        return
    value = None
    for statement in statements:
        value = session.execute(statement, env)
    assert rt.call("run", []) == value == expected


LEDGER = """
cell Ledger {
    memory {
        spent: Map<String, Int>
        invariant key != "void"
        invariant value <= 100
        invariant spent.len <= 2
    }
    on spend(who: String, amount: Int) {
        spent.set(who, amount)
        return amount
    }
    on spend_one_more(who: String, amount: Int) {
        spent.set(who, amount + 1)
        return amount
    }
}
"""


def test_inline_writes_bind_the_key_the_value_and_the_size_an_invariant_reads():
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse(LEDGER, origin="ledger.cell"))
    rt.call("spend", ["a", 100])
    rt.call("spend_one_more", ["b", 99])
    refused = [("spend", "void", 1), ("spend", "a", 101), ("spend_one_more", "a", 100), ("spend", "c", 1)]
    for handler, who, amount in refused:
        assert failure(rt, handler, who, amount).kind == "invariant"
    assert rt.cells["Ledger"].slots["spent"].data == {"a": 100, "b": 100}


def test_a_top_level_call_reaches_the_definition_of_the_moment():
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse("cell A {\n    on f(x: Int) { return x }\n}\n"))
    assert rt.call("f", [1]) == 1
    rt.define(parse("cell A {\n    on f(x: Int, y: Int) { return x + y }\n}\n").items)
    assert rt.call("f", [1, 2]) == 3
    assert failure(rt, "f", 1).detail == "no handler 'f' takes 1 argument"
