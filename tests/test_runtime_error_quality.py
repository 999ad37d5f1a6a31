"""Error quality: every runtime error a user can trigger is a located SomaError.

Each probe is a statement list over one value `x`; it runs twice — as a
handler body (the generated-Python fast path) and as session code (the
closure compiler) — and both must raise a SomaError carrying a line and
column, with a message free of Python's own wording.
"""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse, parse_fragment

PYTHON_WORDING = ("unhashable", "unsupported operand", "not subscriptable", "NoneType", "object has no",
                  "Traceback", "takes from", "positional argument", "invalid literal", "'int'", "'str'",
                  "'list'", "'dict'", "Expecting value")

PROBES = [
    ("local map written with a List key", "let m = map()\nm[x] = 1\nreturn m[[0]] + x", [1]),
    ("nested map written with a Map key", "let m = map(\"a\", map())\nm[\"a\"][x] = 1\nreturn m.a.b.c", {"k": 1}),
    ("get on a local map with a List key", "let m = map()\nreturn m.get(x) + 1", [1]),
    ("has on a local map with a Map key", "let m = map()\nreturn m.has(x) + 1", {"k": 1}),
    ("contains on a map with a List key", "return contains(map(), x) + 1", [1]),
    ("slot read with a unit key", "return box.get(x)", None),
    ("slot write with a unit key", "box[x] = 1\nreturn 1", None),
    ("ipow with a huge exponent", "return ipow(2, x)", 10 ** 30),
    ("shl by a huge count", "return shl(1, x)", 10 ** 30),
    ("pad_left to a huge width", "return pad_left(\"a\", x)", 10 ** 12),
    ("range to a huge end", "return range(0, x)", 10 ** 30),
    ("compound assignment of a mismatched value", "x += \"s\"\nreturn x", 1),
    ("compound assignment on a record field", "let r = R { k: 1 }\nr.k += x\nreturn r", "s"),
    ("compound assignment on a nested index", "let m = map(\"a\", [1])\nm.a[0] *= x\nreturn m", None),
]


def program() -> str:
    """One cell with a probe handler per case."""
    handlers = "\n".join(f"    on probe_{i}(x: Any) {{\n{body}\n    }}" for i, (_, body, _) in enumerate(PROBES))
    return f"cell Probe {{\n    memory {{\n        box: Map<String, Int>\n    }}\n{handlers}\n}}\n"


@pytest.fixture
def rt():
    """The probe program loaded in a fresh runtime."""
    runtime = Runtime(note=lambda text: None, under_test=True)
    runtime.load_program(parse(program(), origin="probe.cell"))
    return runtime


def assert_user_error(err: SomaError) -> None:
    """A located SomaError whose text reads as Soma, not Python."""
    assert err.span.line > 0 and err.span.col > 0, err.text
    for words in PYTHON_WORDING:
        assert words not in err.text, err.text


@pytest.mark.parametrize("index", range(len(PROBES)), ids=[p[0] for p in PROBES])
def test_handler_path_raises_a_located_soma_error(rt, index):
    with pytest.raises(SomaError) as caught:
        rt.call(f"probe_{index}", [PROBES[index][2]])
    assert_user_error(caught.value)


@pytest.mark.parametrize("index", range(len(PROBES)), ids=[p[0] for p in PROBES])
def test_session_path_raises_a_located_soma_error(rt, index):
    _, body, value = PROBES[index]
    env = {"x": value}
    with pytest.raises(SomaError) as caught:
        for item in parse_fragment(body):
            rt.execute(item, env)
    assert_user_error(caught.value)


@pytest.mark.parametrize("call", [
    "bit_set(0, 1000000000000)", "random_token(1000000000000)", "to_fixed(1.5, 1000000000000)",
    "format(\"%999999999d\", 1)", "format(\"%.999999999f\", 1.5)", "random_token(-1)",
])
def test_size_arguments_are_bounded(rt, call):
    with pytest.raises(SomaError) as caught:
        rt.execute(parse_fragment(call)[0], {})
    assert caught.value.kind == "range"
    assert_user_error(caught.value)


def test_cheap_answers_for_huge_bit_indexes_and_digits(rt):
    assert rt.evaluate(parse_fragment("[bit_clr(5, 1000000000000), round(1.25, 1000000000000)]")[0].expr, {}) \
        == [5, 1.25]


def test_ints_beyond_4300_digits_display_in_full(rt):
    text = rt.evaluate(parse_fragment("to_string(ipow(7, 6000))")[0].expr, {})
    assert len(text) == len(str(7 ** 6000)) and text == str(7 ** 6000)
    assert rt.evaluate(parse_fragment("to_int(to_string(ipow(3, 9000))) == ipow(3, 9000)")[0].expr, {}) is True
