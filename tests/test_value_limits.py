"""Strings and lists stop at one size limit (runtime/limits.py) with a kind `range` error, never a MemoryError."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from soma_kernel.runtime.limits import DEFAULT_MAX_VALUE_LENGTH, MAX_VALUE_LENGTH
from soma_kernel.session.session import Session

from helpers import call, kind_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIG = "a" * 6_000_000


def limit_text(what: str, length: str, unit: str = "characters") -> str:
    """The refusal's detail."""
    return (f"{what}: the result would be {length} {unit} long, more than the 10 000 000 limit "
            "(set SOMA_MAX_VALUE_LENGTH to change it)")


def test_the_default_limit_is_the_one_pad_left_and_format_always_had():
    assert MAX_VALUE_LENGTH == DEFAULT_MAX_VALUE_LENGTH == 10_000_000
    assert kind_of("pad_left", "x", 10_000_001) == "range"
    assert len(call("pad_left", "x", 10_000_000)) == 10_000_000


@pytest.mark.parametrize("growth, what, unit", [
    ('s = s + s', "+", "characters"),
    ('s += s', "+", "characters"),
    ('s = concat(s, s)', "concat", "characters"),
    ('s = "{s}{s}"', "a string interpolation", "characters"),
    ('l = l + l', "+", "elements"),
    ('l += l', "+", "elements"),
    ('l = concat(l, l)', "concat", "elements"),
])
@pytest.mark.parametrize("where", ["cell", "handler"])
def test_doubling_in_a_loop_stops_at_the_limit_with_a_range_error(growth, what, unit, where):
    session = Session()
    loop = 'let s = "ab"\nlet l = ["a", "b"]\nfor i in range(0, 40) {\n    ' + growth + '\n}\nreturn 1'
    if where == "cell":
        answer = session.execute(loop.replace("return 1", "1"))
    else:
        assert session.execute("cell A {\n    on grow() {\n" + loop + "\n    }\n}").ok
        answer = session.execute("A.grow()")
    assert answer.error_name == "SomaError", answer.error
    assert answer.error_value.endswith(limit_text(what, "16 777 216", unit))
    assert "range:" in answer.error_value
    assert session.execute("40 + 2").result["text/plain"] == "42"


def test_try_catches_the_refusal_and_the_statement_rolls_back():
    session = Session()
    assert session.execute('let s = "ab"').ok
    caught = session.execute('let t = s\nlet r = try {\n    for i in range(0, 40) { t = t + t }\n}\nr.kind')
    assert caught.result["text/plain"] == "range"
    assert session.execute('for i in range(0, 40) { s = s + s }').error_name == "SomaError"
    assert session.execute("len(s)").result["text/plain"] == "2"


@pytest.mark.parametrize("name, args, detail", [
    ("concat", (BIG, BIG), limit_text("concat", "12 000 000")),
    ("concat", (["x"] * 6_000_000, ["y"] * 6_000_000), limit_text("concat", "12 000 000", "elements")),
    ("join", ([BIG, BIG], "-"), limit_text("join", "12 000 001")),
    ("replace", ("a" * 4_000_000, "a", "abc"), limit_text("replace", "12 000 000")),
    ("replace", ("a" * 4_000_000, "", "xy"), limit_text("replace", "12 000 002")),
    ("format", ("%s|%s", BIG, BIG), limit_text("format", "12 000 001")),
    ("push", (["x"] * 9_999_999, 1, 2), limit_text("push", "10 000 001", "elements")),
])
def test_every_builtin_that_can_outgrow_its_inputs_checks_first(name, args, detail):
    from soma_kernel.core.diagnostics import SomaError

    with pytest.raises(SomaError) as err:
        call(name, *args)
    assert (err.value.kind, err.value.detail) == ("range", detail)


def test_results_at_the_limit_are_built():
    half = "a" * 5_000_000
    assert len(call("concat", half, half)) == 10_000_000
    assert len(call("replace", "a" * 5_000_000, "a", "bb")) == 10_000_000
    assert len(call("join", [half, half], "")) == 10_000_000


def test_the_limit_is_read_from_soma_max_value_length():
    script = ("from soma_kernel.session.session import Session\n"
              "s = Session()\n"
              "print(s.execute('let t = \"abcd\"\\nt + t').error_value)\n"
              "print(s.execute('concat(\"ab\", \"c\")').result['text/plain'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT, SOMA_MAX_VALUE_LENGTH="5"))
    assert done.stdout.splitlines() == [
        "range: +: the result would be 8 characters long, more than the 5 limit (set SOMA_MAX_VALUE_LENGTH to "
        "change it)", "abc"]


WRITTEN_OUT = ("range: the value written out is longer than the 100 000 character limit (does it hold the same "
               "list or map many times over?) — set SOMA_MAX_VALUE_LENGTH to change it")


@pytest.fixture
def small_limit(monkeypatch):
    """A value-length limit of 100 000 for the test (writing out 10 000 000 characters takes seconds)."""
    from soma_kernel.runtime import limits, values

    monkeypatch.setattr(limits, "MAX_VALUE_LENGTH", 100_000)
    monkeypatch.setattr(values, "MAX_VALUE_LENGTH", 100_000)
DOUBLED = ('let l = [1]\nfor i in range(0, 40) { l = [l, l] }\n'
           'let m = map("a", 1)\nfor i in range(0, 40) { m = map("x", m, "y", m) }')


@pytest.mark.parametrize("writing", ["to_string(l)", "to_json(m)", "print(l)", '"{m}"', "concat(l, 1)",
                                     "join([l], \",\")"])
def test_writing_out_a_value_that_shares_itself_stops_at_the_limit(writing, small_limit):
    session = Session()
    assert session.execute(DOUBLED).ok
    answer = session.execute(writing)
    assert answer.error_name == "SomaError" and answer.error_value == WRITTEN_OUT, answer.error
    assert session.execute("len(l) + len(m)").result["text/plain"] == "4"


def test_a_cell_whose_value_cannot_be_shown_says_so_and_keeps_what_it_did(small_limit):
    session = Session()
    assert session.execute(DOUBLED).ok
    answer = session.execute("let n = 7\nl")
    assert answer.error.split("\n") == [
        "error: cell[2]:2:1: " + WRITTEN_OUT, "2 | l", "  | ^",
        "  hint: the statement ran and what it did is kept; only its value cannot be shown — show a part of it "
        "(len(x), slice(x, 0, 10))"]
    assert session.execute("n").result["text/plain"] == "7"


def test_run_refuses_to_print_such_a_result_with_the_error(tmp_path):
    (tmp_path / "big.cell").write_text("cell A {\n    on big() {\n        let l = [1]\n"
                                       "        for i in range(0, 40) { l = [l, l] }\n        return l\n    }\n}\n")
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "run", "big.cell", "big"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT, SOMA_MAX_VALUE_LENGTH="100000"))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: big.cell: {WRITTEN_OUT}\n")
