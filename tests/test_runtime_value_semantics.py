"""Value semantics: a change made through one name is never seen through another.

Index and field assignment (`m[k] = v`, `r.f = v`, `r.items[0] = v`) and the
rebuilds (`xs = push(xs, x)`, `xs += [x]`) change a List or Map in place only
when nothing else holds it (runtime.inplace); otherwise they change a copy.
Every case runs three ways that must agree: as a handler whose locals are
Python variables (generated code), as a handler whose locals live in a frame
list (generated code with a closure beside it), and as session statements
(the closure compiler).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse, parse_fragment

CELL = """
cell type Parcel {
    variants {
        Crate { items: List<Int>, label: String }
        Empty
    }
}

cell Depot {
    memory {
        lists: Map<String, List<Int>>
        boxes: Map<String, Map<String, Int>>
        rows: List<List<Int>>
    }
    on change_list(xs: List<Int>) {
        xs[0] = 99
        xs = push(xs, 5)
        return xs
    }
    on change_map(m: Map<String, Int>) {
        m["a"] = 7
        m.b = 8
        return m
    }
    on change_record(r: Map) {
        r.items[0] = 42
        r.label = "changed"
        return r
    }
    on change_untyped(v: Any) {
        v[0][0] = "x"
        return v
    }
    on fresh_list() {
        let xs = [1, 2]
        return xs
    }
    on kept_list() {
        let xs = [3]
        lists.set("kept", xs)
        return xs
    }
}
"""

FRAME_FORCER = "let keep_frame = v => v"  # a lambda is a closure: the handler's locals then live in a frame


def runtime() -> Runtime:
    """A fresh runtime with CELL loaded."""
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse(CELL, origin="depot.cell"))
    return rt


def handler_value(body: str, frame: bool = False, rt: Runtime | None = None):
    """`body` as the generated handler Depot.run(): the value of its last line."""
    lines = ([FRAME_FORCER] if frame else []) + body.splitlines()
    *head, last = lines
    indented = "\n".join("        " + line for line in [*head, f"return {last}"])
    source = CELL.rstrip()[:-1] + f"    on run() {{\n{indented}\n    }}\n}}\n"
    rt = rt or Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse(source, origin="depot.cell"))
    return rt.call("run", [])


def session_value(body: str, rt: Runtime | None = None):
    """`body` as session statements, one at a time: the value of the last line."""
    rt, env = rt or runtime(), {}
    *head, last = body.splitlines()
    for statement in parse_fragment("\n".join([*head, f"let result__ = {last}"]), origin="cell[1]"):
        rt.execute(statement, env)
    return env["result__"]


def three_ways(body: str):
    """The value of `body`, after checking that all three ways give it."""
    generated = handler_value(body)
    assert handler_value(body, frame=True) == generated
    assert session_value(body) == generated
    return generated


CASES = {
    "a map through another local": ('let m = map("a", 0)\nlet n = m\nn["a"] = 1\n[m, n]', [{"a": 0}, {"a": 1}]),
    "a list through another local": ("let xs = [1, 2]\nlet ys = xs\nys[0] = 9\n[xs, ys]", [[1, 2], [9, 2]]),
    "the original changed, the alias kept": ("let xs = [1, 2]\nlet ys = xs\nxs[1] = 5\n[xs, ys]", [[1, 5], [1, 2]]),
    "the issue's program": ('let m = map("a", 0)\nlet n = m\nn["a"] = 1\nlet xs = [1, 2]\nlet ys = xs\n'
                            "ys[0] = 9\n[m, xs, n, ys]", [{"a": 0}, [1, 2], {"a": 1}, [9, 2]]),
    "a record field": ("let r = Box { items: [1, 2], n: 1 }\nlet s = r\ns.n = 2\n[r.n, s.n]", [1, 2]),
    "a nested path through an alias of the root": (
        "let r = Box { items: [1, 2] }\nlet s = r\ns.items[0] = 9\n[r.items, s.items]", [[1, 2], [9, 2]]),
    "a nested path beside a holder of the inner list": (
        "let r = Box { items: [1, 2] }\nlet items = r.items\nr.items[0] = 9\n[items, r.items]", [[1, 2], [9, 2]]),
    "a map inside a map": ('let m = map("a", map("b", 1))\nlet inner = m["a"]\nm["a"]["b"] = 2\n[inner, m]',
                           [{"b": 1}, {"a": {"b": 2}}]),
    "one list twice in another": ("let inner = [1]\nlet outer = [inner, inner]\nouter[0][0] = 9\n[inner, outer]",
                                  [[1], [[9], [1]]]),
    "a list assigned into itself": ("let xs = [1, 2]\nxs[0] = xs\nxs", [[1, 2], 2]),
    "a map assigned into itself": ('let m = map("a", 1)\nm["self"] = m\nm', {"a": 1, "self": {"a": 1}}),
    "after a push": ("let xs = [1]\nxs = push(xs, 2)\nlet ys = xs\nys[0] = 9\nxs = push(xs, 3)\n[xs, ys]",
                     [[1, 2, 3], [9, 2]]),
    "after an index assignment": ("let xs = [1, 2]\nxs[0] = 5\nlet ys = xs\nxs[1] = 6\nys = push(ys, 7)\n[xs, ys]",
                                  [[5, 6], [5, 2, 7]]),
    "after a concatenation": ("let xs = [1, 2]\nxs += [3]\nlet ys = xs\nys[2] = 0\n[xs, ys]", [[1, 2, 3], [1, 2, 0]]),
    "with returns a new map": ('let m = map("a", 1)\nlet n = with(m, "b", 2)\nn["a"] = 5\n[m, n]',
                              [{"a": 1}, {"a": 5, "b": 2}]),
    "a compound assignment": ('let m = map("a", 1)\nlet n = m\nn["a"] += 5\nlet xs = [1]\nlet ys = xs\nys[0] -= 1\n'
                              "[m, n, xs, ys]", [{"a": 1}, {"a": 6}, [1], [0]]),
    "a loop variable": ("let rows = [[1], [2]]\nfor r in rows {\n    r[0] = 0\n}\nrows", [[1], [2]]),
    "a copy kept in a loop": ('let m = map()\nlet keep = map()\nfor i in range(0, 4) {\n    m[to_string(i)] = i\n'
                              "    if i == 1 { keep = m }\n}\n[len(m), keep]", [4, {"0": 0, "1": 1}]),
    "a map built in a loop": ('let m = map()\nfor i in range(0, 5) {\n    m["k{i % 2}"] = i\n}\nm', {"k0": 4, "k1": 3}),
    "a lambda's capture": ("let out = []\nfor i in range(0, 1) {\n    let xs = [1, 2]\n    let first = v => xs[0]\n"
                           "    xs[0] = 9\n    out = [first(0), xs]\n}\nout", [1, [9, 2]]),
    "a lambda changing its own copy": ("let xs = [1]\nlet bump = v => {\n    let w = v\n    w[0] = 5\n    w\n}\n"
                                       "[bump(xs), xs]", [[5], [1]]),
    "a variant's field": ('let c = Crate { items: [1], label: "a" }\nlet d = c\nd.items[0] = 9\nd.label = "b"\n'
                          "[c.items, c.label, d.items, d.label]", [[1], "a", [9], "b"]),
    "a slot's value, written then changed": ('let xs = [1]\nlists.set("a", xs)\nxs[0] = 9\n[xs, lists.get("a")]',
                                             [[9], [1]]),
    "a slot's value, read then changed": ('lists.set("a", [1, 2])\nlet back = lists.get("a")\nback[0] = 7\n'
                                          '[back, lists.get("a")]', [[7, 2], [1, 2]]),
    "a slot path assignment": ('lists.set("a", [1, 2])\nlet before = lists.get("a")\nlists["a"][0] = 5\n'
                               '[before, lists.get("a")]', [[1, 2], [5, 2]]),
    "a map slot's inner map": ('boxes.set("b", map("n", 1))\nlet inner = boxes.get("b")\nboxes["b"]["n"] = 2\n'
                               'inner["n"] = 3\n[inner, boxes.get("b")]', [{"n": 3}, {"n": 2}]),
    "a List slot element": ("rows.push([1])\nlet row = rows.all[0]\nrow[0] = 4\n[row, rows.all]", [[4], [[1]]]),
    "a handler argument (List)": ("let xs = [1, 2]\nlet out = change_list(xs)\n[xs, out]", [[1, 2], [99, 2, 5]]),
    "a handler argument (Map)": ('let m = map("a", 1)\nlet out = change_map(m)\n[m, out]',
                                 [{"a": 1}, {"a": 7, "b": 8}]),
    "a handler argument (record)": ('let r = Box { items: [1, 2], label: "l" }\nlet out = change_record(r)\n'
                                    "[r, out]", [{"_type": "Box", "items": [1, 2], "label": "l"},
                                                 {"_type": "Box", "items": [42, 2], "label": "changed"}]),
    "a handler argument held in a list": ('let inner = ["a"]\nlet outer = [inner]\nlet out = change_untyped(outer)\n'
                                          "[inner, outer, out]", [["a"], [["a"]], [["x"]]]),
    "a returned value": ("let a = fresh_list()\nlet b = a\nb[0] = 5\n[a, b, fresh_list()]", [[1, 2], [5, 2], [1, 2]]),
    "a returned value the slot keeps": ('let a = kept_list()\na[0] = 8\n[a, lists.get("kept")]', [[8], [3]]),
    # Loops that only push to a list skip the ownership test after their first round (codegen.loop_owned).
    "an alias made before a push loop": ("let xs = [0]\nlet ys = xs\nfor i in range(1, 4) {\n    xs = push(xs, i)\n}\n"
                                         "[xs, ys]", [[0, 1, 2, 3], [0]]),
    "two pushes a round, one under an if": ("let xs = []\nfor i in range(0, 4) {\n    xs = push(xs, i)\n"
                                            "    if i % 2 == 0 { xs = push(xs, 0 - i) }\n}\nxs", [0, 0, 1, 2, -2, 3]),
    "a push loop keeping each list it pushed to": (
        "let xs = []\nlet snaps = []\nfor i in range(0, 3) {\n    xs = push(xs, i)\n    snaps = push(snaps, xs)\n}\n"
        "[xs, snaps]", [[0, 1, 2], [[0], [0, 1], [0, 1, 2]]]),
    "a while loop pushing": ("let xs = []\nlet i = 0\nwhile i < 3 {\n    xs = push(xs, i * 10)\n    i = i + 1\n}\n"
                             "let ys = xs\nxs = push(xs, 0)\n[xs, ys]", [[0, 10, 20, 0], [0, 10, 20]]),
    "an inner push loop on a list the outer loop keeps": (
        "let xs = []\nlet row = []\nfor i in range(0, 2) {\n    for j in range(0, 2) {\n        row = push(row, j)\n"
        "    }\n    xs = push(xs, row)\n}\nxs", [[0, 1], [0, 1, 0, 1]]),
    "a fresh list per round of an outer loop": (
        "let xs = []\nfor i in range(0, 2) {\n    let row = []\n    for j in range(0, 2) {\n        row = push(row, j)\n"
        "    }\n    xs = push(xs, row)\n}\nxs", [[0, 1], [0, 1]]),
    "a loop's own variable pushed to": ("let r = [5]\nlet rows = [[1], [2]]\nfor r in rows {\n    r = push(r, 0)\n"
                                        "}\n[r, rows]", [[5], [[1], [2]]]),
    "a loop binding anew the name it pushes to": ("let keep = [1]\nlet xs = []\nfor i in range(0, 3) {\n"
                                                  "    let xs = keep\n    xs = push(xs, i)\n}\nkeep", [1]),
    "an alias made before a map-writing loop": ('let m = map()\nlet n = m\nfor i in range(0, 3) {\n    m["k{i}"] = i\n}\n'
                                                "[m, n]", [{"k0": 0, "k1": 1, "k2": 2}, {}]),
    "a map-writing loop keeping each map": ('let m = map()\nlet snaps = []\nfor i in range(0, 2) {\n    m["k{i}"] = i\n'
                                            "    snaps = push(snaps, m)\n}\n[m, snaps]",
                                            [{"k0": 0, "k1": 1}, [{"k0": 0}, {"k0": 0, "k1": 1}]]),
    "a list written by index in a loop": ("let xs = [0, 0, 0]\nlet ys = xs\nfor i in range(0, 3) {\n    xs[i] = i * 2\n}\n"
                                          "[xs, ys]", [[0, 2, 4], [0, 0, 0]]),
    "a record's field written in a loop": ("let r = Box { n: 0 }\nlet s = r\nfor i in range(0, 3) {\n    r.n = i\n}\n"
                                           "[r.n, s.n]", [2, 0]),
    "a variant's field written in a loop": ('let c = Crate { items: [1], label: "a" }\nlet d = c\nfor i in range(0, 2) {\n'
                                            '    c.label = "x{i}"\n}\n[c.label, d.label]', ["x1", "a"]),
    "a loop both pushing to and writing one list": ("let xs = [0]\nlet ys = xs\nfor i in range(0, 2) {\n"
                                                    "    xs = push(xs, i)\n    xs[0] = 9\n}\n[xs, ys]", [[9, 0, 1], [0]]),
    "a loop binding anew the map it writes": ('let keep = map()\nlet m = map()\nfor i in range(0, 3) {\n    let m = keep\n'
                                              '    m["k"] = i\n}\nkeep', {}),
    "a loop's own variable written": ('let r = map("a", 0)\nlet rows = [map("a", 1), map("a", 2)]\nfor r in rows {\n'
                                      '    r["a"] = 0\n}\n[r, rows]', [{"a": 0}, [{"a": 1}, {"a": 2}]]),
    "a while loop writing a map": ('let m = map()\nlet i = 0\nwhile i < 3 {\n    m["k{i % 2}"] = i\n    i = i + 1\n}\n'
                                   'let n = m\nm["k0"] = 7\n[m, n]', [{"k0": 7, "k1": 1}, {"k0": 2, "k1": 1}]),
    "a break out of a push loop": ("let xs = [9]\nlet ys = xs\nfor i in range(0, 10) {\n    if i == 2 { break }\n"
                                   "    xs = push(xs, i)\n}\n[xs, ys]", [[9, 0, 1], [9]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_change_through_one_name_is_seen_through_no_other(name):
    body, expected = CASES[name]
    assert three_ways(body) == expected


def test_a_top_level_call_leaves_its_argument_values_unchanged():
    rt = runtime()
    xs, record = [1, 2], {"_type": "Box", "items": [1, 2], "label": "l"}
    assert rt.call("change_list", [xs]) == [99, 2, 5]
    assert rt.call("change_record", [record]) == {"_type": "Box", "items": [42, 2], "label": "changed"}
    assert xs == [1, 2] and record == {"_type": "Box", "items": [1, 2], "label": "l"}


@pytest.mark.parametrize("body", [
    "let xs = [1]\nxs[3] = 1\nxs",
    'let xs = [1]\nxs["a"] = 1\nxs',
    'let s = "abc"\ns[0] = "x"\ns',
    "let m = map()\nm.a.b = 1\nm",
    "let e = Empty\ne.x = 1\ne",
    'let m = map()\nm["a"] += 1\nm',
    "let r = Box { items: [1] }\nr.items[1] = 2\nr",
])
def test_a_refused_assignment_fails_the_same_way_three_ways(body):
    errors = []
    for run in (handler_value, lambda b: handler_value(b, frame=True), session_value):
        with pytest.raises(SomaError) as caught:
            run(body)
        errors.append((caught.value.kind, caught.value.detail))
    assert errors[0] == errors[1] == errors[2]
    assert errors[0][0] in ("type", "index")


def test_a_failed_session_statement_leaves_a_list_it_changed_as_it_was():
    rt, env = runtime(), {}
    for line in ("let xs = [1, 2]", "let ys = xs", 'let m = map("a", [1])'):
        rt.execute(parse_fragment(line)[0], env)
    failing = parse_fragment('for i in range(0, 1) {\n    xs[0] = 9\n    xs = push(xs, 3)\n    m["a"][0] = 5\n'
                             "    let z = 1 / 0\n}")[0]
    with pytest.raises(SomaError) as caught:
        rt.execute(failing, env)
    assert caught.value.kind == "division_by_zero"
    assert env == {"xs": [1, 2], "ys": [1, 2], "m": {"a": [1]}}
    rt.execute(parse_fragment("xs[1] = 4")[0], env)
    assert env["xs"] == [1, 4] and env["ys"] == [1, 2]


FAILING_HANDLERS = """
    on change_then_fail() {
        let xs = lists.get("a")
        xs[0] = 9
        lists.set("a", xs)
        lists["a"][1] = 8
        let broken = 1 / 0
        return xs
    }
    on change_in_try() {
        let outcome = try {
            lists["a"][0] = 5
            let xs = lists.get("a")
            xs = push(xs, 6)
            lists.set("a", xs)
            1 / 0
        }
        return [outcome.kind, lists.get("a")]
    }
"""


def test_rollback_restores_a_slot_value_changed_in_place():
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse(CELL.rstrip()[:-1] + FAILING_HANDLERS + "}\n", origin="depot.cell"))
    slot = rt.cells["Depot"].slots["lists"]
    slot.data["a"] = [1, 2]
    with pytest.raises(SomaError) as caught:
        rt.call("change_then_fail", [])
    assert caught.value.kind == "division_by_zero"
    assert slot.data == {"a": [1, 2]}
    assert rt.call("change_in_try", []) == ["division_by_zero", [1, 2]]
    assert slot.data == {"a": [1, 2]}


# ---------------------------------------------------------------- random programs against a model

VARIABLES = ("a", "b", "c")


def soma_text(value) -> str:
    """A Soma expression for a model value made of Ints, Lists and Maps."""
    if isinstance(value, list):
        return "[" + ", ".join(soma_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map(" + ", ".join(f'"{k}", {soma_text(v)}' for k, v in value.items()) + ")"
    return str(value)


def copied(value):
    """A deep copy: what a name holds under value semantics."""
    if isinstance(value, list):
        return [copied(v) for v in value]
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    return value


@st.composite
def operand(draw, model):
    """An expression and its model value: an Int literal, a variable, or a fresh one-entry map."""
    choice = draw(st.sampled_from(["int", "var", "map"]))
    if choice == "int":
        n = draw(st.integers(0, 9))
        return str(n), n
    name = draw(st.sampled_from(VARIABLES))
    if choice == "var":
        return name, copied(model[name])
    return f'map("k", {name})', {"k": copied(model[name])}


@st.composite
def program(draw):
    """A random sequence of aliasing and changing statements, with the model's final values."""
    model = {name: [] for name in VARIABLES}
    lines = [f"let {name} = []" for name in VARIABLES]
    for _ in range(draw(st.integers(1, 14))):
        target = draw(st.sampled_from(VARIABLES))
        current = model[target]
        kinds = ["alias", "push", "concat"]
        if current:
            kinds.append("index")
            if any(isinstance(v, list) and v for v in current):
                kinds.append("nested")
            if any(isinstance(v, dict) for v in current):
                kinds.append("map entry")
        kind = draw(st.sampled_from(kinds))
        text, value = draw(operand(model))
        if kind == "concat" and isinstance(value, list) and current and all(isinstance(v, list) for v in current):
            kind = "push"  # `+` of two Lists of Lists is the matrices' element-wise sum (language notes), no join
        if kind == "alias":
            source = draw(st.sampled_from(VARIABLES))
            lines.append(f"{target} = {source}")
            model[target] = copied(model[source])
        elif kind == "push":
            lines.append(f"{target} = push({target}, {text})")
            current.append(value)
        elif kind == "concat":
            lines.append(f"{target} += [{text}]")
            if len(current) == 1 and type(current[0]) is int and type(value) is int:
                current[0] += value  # `+` of two one-element Int lists adds element-wise
            else:
                current.append(value)
        elif kind == "index":
            position = draw(st.integers(-len(current), len(current) - 1))
            lines.append(f"{target}[{position}] = {text}")
            current[position] = value
        elif kind == "nested":
            position = draw(st.sampled_from([i for i, v in enumerate(current) if isinstance(v, list) and v]))
            inner = draw(st.integers(0, len(current[position]) - 1))
            lines.append(f"{target}[{position}][{inner}] = {text}")
            current[position][inner] = value
        else:
            position = draw(st.sampled_from([i for i, v in enumerate(current) if isinstance(v, dict)]))
            lines.append(f'{target}[{position}]["k"] = {text}')
            current[position]["k"] = value
        if draw(st.booleans()):
            snapshot = draw(st.sampled_from(VARIABLES))
            lines.append(f"let seen = {snapshot}")  # an extra holder that must not see later changes
    lines.append("[a, b, c]")
    return "\n".join(lines), [model[name] for name in VARIABLES]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program())
def test_random_aliasing_and_changes_match_a_deep_copy_model(case):
    body, expected = case
    assert handler_value(body) == expected
    assert handler_value(body, frame=True) == expected
    assert session_value(body) == expected


def test_a_loop_pushing_through_a_handler_named_push_gets_what_the_handler_returns():
    rt = Runtime(note=lambda text: None, under_test=True)
    rt.load_program(parse("cell Own {\n    on push(xs: List<Int>, x: Int) { return [x] }\n    on run() {\n"
                          "        let xs = []\n        for i in range(0, 3) { xs = push(xs, i) }\n        return xs\n"
                          "    }\n}\n", origin="own.cell"))
    assert rt.call("run", []) == [2]
