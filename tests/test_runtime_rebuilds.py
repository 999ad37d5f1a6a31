"""Value semantics of list rebuilds, which run in place when nobody else holds the list.

`xs = push(xs, x)`, `xs = xs + [x]` and `xs += [x]` append to xs's list
without copying it when no other name, slot, record, list, map, captured
lambda or saved session state refers to it (runtime.inplace). Every case
here runs twice: as a handler body (generated Python source, runtime.codegen)
and as session statements (closures, runtime.compiler); both must give the
value semantics of a fresh list.
"""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse, parse_fragment

CELL = """
cell Store {
    memory {
        lists: Map<String, List<Int>>
        rows: List<Int>
    }
    on seed() {
        lists.set("a", [1])
        return lists.get("a")
    }
    on grow_then_fail() {
        let xs = lists.get("a")
        xs = push(xs, 9)
        lists.set("a", xs)
        xs = push(xs, 10)
        lists.set("a", xs)
        let broken = 1 / 0
        return xs
    }
    on grow_in_try() {
        let outcome = try {
            let xs = lists.get("a")
            xs = push(xs, 5)
            lists.set("a", xs)
            xs = xs + [6]
            lists.set("a", xs)
            1 / 0
        }
        return [outcome.kind, lists.get("a")]
    }
}
"""


def runtime(handlers: str = "") -> Runtime:
    """A fresh runtime with CELL loaded, `handlers` added to its cell."""
    rt = Runtime(note=lambda text: None, under_test=True)
    source = CELL.rstrip()[:-1] + handlers + "}\n"
    rt.load_program(parse(source, origin="store.cell"))
    return rt


def as_handler(body: str, handlers: str = ""):
    """`body` run as a generated handler of the cell: the value of its last expression."""
    indented = "\n".join("        " + line for line in body.splitlines())
    rt = runtime(handlers + f"\n    on run() {{\n{indented}\n    }}\n")
    return rt.call("run", [])


def as_session(body: str):
    """`body` run statement by statement at session level: the value of the last one."""
    rt, env = runtime(), {}
    value = None
    for statement in parse_fragment(named_last(body), origin="cell[1]"):
        value = rt.execute(statement, env)
    return value


def named_last(body: str) -> str:
    """`body` with a last line starting with `[` given a name first (alone it would index the line above)."""
    head, _, last = body.rpartition("\n")
    return f"{head}\nlet result = {last}\nresult" if last.startswith("[") else body


def both(body: str):
    """The value of `body` as a handler, after checking the session path gives the same."""
    generated = as_handler(named_last(body))
    assert as_session(body) == generated
    return generated


CASES = {
    "another local": ("let xs = [1]\nlet ys = xs\nxs = push(xs, 2)\n[xs, ys]", [[1, 2], [1]]),
    "concatenation": ("let xs = [1, 2]\nlet ys = xs\nxs = xs + [3]\nxs += [4, 5]\n[xs, ys]",
                      [[1, 2, 3, 4, 5], [1, 2]]),
    "element-wise sum is not an append": ("let xs = [7]\nxs = xs + [1]\nlet ys = [1, 2]\nys += [10, 20]\n[xs, ys]",
                                          [[8], [11, 22]]),
    "pushing a list onto itself": ("let xs = [1]\nxs = push(xs, xs)\nxs", [1, [1]]),
    "an element of another list": ("let xs = [1]\nlet outer = [xs]\nxs = push(xs, 2)\n[xs, outer]",
                                   [[1, 2], [[1]]]),
    "a record field, both ways": ("let xs = [1]\nlet r = Box { items: xs }\nxs = push(xs, 2)\n"
                                  "let items = r.items\nitems = push(items, 3)\n[xs, r.items, items]",
                                  [[1, 2], [1], [1, 3]]),
    "a map value": ('let xs = [1]\nlet m = map("k", xs)\nxs = push(xs, 2)\n[xs, m["k"]]', [[1, 2], [1]]),
    "several items": ("let xs = []\nxs = push(xs, 1, 2)\nxs = push(xs, 3)\nxs += [4]\nxs", [1, 2, 3, 4]),
    "a copy kept in a loop": ("let xs = []\nlet keep = []\nfor i in range(0, 5) {\n    xs = push(xs, i)\n"
                              "    if i == 2 { keep = xs }\n}\n[xs, keep]", [[0, 1, 2, 3, 4], [0, 1, 2]]),
    "compared in the loop": ("let xs = []\nlet empty = 0\nfor i in range(0, 4) {\n    if xs == [] { empty += 1 }\n"
                             "    xs = push(xs, i)\n}\n[xs, empty]", [[0, 1, 2, 3], 1]),
    "a slot": ('let xs = [1]\nlists.set("a", xs)\nxs = push(xs, 2)\nlet back = lists.get("a")\n'
               'back = push(back, 3)\n[xs, lists.get("a"), back]', [[1, 2], [1], [1, 3]]),
    "a List slot": ("let xs = [4]\nrows.push(5)\nlet all = rows.all\nall = push(all, 6)\nxs = push(xs, 7)\n"
                    "[rows.all, all, xs]", [[5], [5, 6], [4, 7]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_rebuilt_list_leaves_every_other_holder_unchanged(name):
    body, expected = CASES[name]
    assert both(body) == expected


def test_a_handler_named_push_is_called_not_appended_to():
    handlers = "\n    on push(xs: List<Int>, x: Int) { return [x, x] }\n"
    assert as_handler("let xs = [1]\nxs = push(xs, 2)\nxs", handlers) == [2, 2]


def test_a_lambda_keeps_the_list_it_captured():
    body = "let xs = [1]\nlet size = x => len(xs)\nxs = push(xs, 2)\nxs += [3]\nlet result = [size(0), len(xs)]\nresult"
    assert as_handler(body) == [1, 3]


def test_a_long_push_loop_builds_the_whole_list():
    assert both("let xs = []\nfor i in range(0, 50000) { xs = push(xs, i) }\n[len(xs), xs[49999]]") == [50000, 49999]


def test_a_failed_session_statement_leaves_its_variables_as_they_were():
    rt, env = runtime(), {}
    for line in ("let xs = [1]", "let ys = xs"):
        rt.execute(parse_fragment(line)[0], env)
    loop = parse_fragment("for i in range(0, 3) {\n    xs = push(xs, i)\n    let fresh = 1\n"
                          "    if i == 2 { let z = 1 / 0 }\n}")[0]
    with pytest.raises(SomaError) as caught:
        rt.execute(loop, env)
    assert caught.value.kind == "division_by_zero"
    assert env == {"xs": [1], "ys": [1]}
    rt.execute(parse_fragment("xs = push(xs, 2)")[0], env)
    assert env == {"xs": [1, 2], "ys": [1]}


def test_rollback_restores_a_slot_value_rebuilt_in_place():
    rt = runtime()
    assert rt.call("seed", []) == [1]
    with pytest.raises(SomaError) as caught:
        rt.call("grow_then_fail", [])
    assert caught.value.kind == "division_by_zero"
    assert rt.cells["Store"].slots["lists"].data == {"a": [1]}
    assert rt.call("grow_in_try", []) == ["division_by_zero", [1]]


@pytest.mark.parametrize("body,expected", [
    ("let big = 9223372036854775807\nbig = big + 1\nbig * big", (2 ** 63) ** 2),
    ("let x = 1\nfor i in range(0, 70) { x = x * 2 }\nx - 1", 2 ** 70 - 1),
    ("let x = -9223372036854775807\nx -= 10\nx", -9223372036854775817),
])
def test_int_arithmetic_grows_past_64_bits_on_both_paths(body, expected):
    assert both(body) == expected


@pytest.mark.parametrize("body,text", [
    ("let x = 1\nfor i in range(0, 1100) { x = x * 2 }\nx + 0.5", "range: Int too large to convert to Float"),
    ("let a = 7\nlet b = 0\na / b", "division_by_zero: division by zero"),
    ("let a = 7\na % 0", "division_by_zero: division by zero"),
    ('let xs = [1]\nxs = xs + "a"\nxs', "type: cannot add List and String"),
    ('let n = 3\nn = push(n, 1)\nn', None),
])
def test_errors_are_the_same_on_both_paths(body, text):
    with pytest.raises(SomaError) as generated:
        as_handler(named_last(body))
    with pytest.raises(SomaError) as session:
        as_session(body)
    assert generated.value.text == session.value.text
    if text is not None:
        assert generated.value.text == text
    assert generated.value.span.line > 0 and session.value.span.line > 0
