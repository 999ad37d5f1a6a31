"""Long code evaluates or fails cleanly (issue 20 §5): operator chains, postfix chains, huge literals."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap

import pytest

from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import _unescape, parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chain(op: str, term: str, count: int) -> str:
    """`term op term op …` with `count` terms."""
    return f" {op} ".join([term] * count)


def handler_answer(session: Session, body: str, call: str = "A.f()"):
    """The result (or error) of a handler whose body is `body`."""
    defined = session.execute("cell A {\n    on f() {\n        " + body + "\n    }\n}")
    assert defined.ok, defined.error
    return session.execute(call)


@pytest.mark.parametrize("op, term, count, expected", [
    ("+", "1", 4000, "4000"),
    ("-", "1", 4000, "-3998"),
    ("*", "1", 4000, "1"),
    ("&&", "true", 4000, "true"),
    ("||", "false", 4000, "false"),
    ("??", "()", 4000, "()"),
])
def test_a_4000_term_chain_in_a_handler_evaluates(op, term, count, expected):
    answer = handler_answer(Session(), "return " + chain(op, term, count))
    assert answer.ok, answer.error
    assert answer.result["text/plain"] == expected


def test_a_100000_term_chain_in_a_cell_evaluates():
    session = Session()
    answer = session.execute(chain("+", "1", 100_000))
    assert answer.ok, answer.error
    assert answer.result["text/plain"] == "100000"


def test_soma_kernel_run_evaluates_a_4000_term_chain(tmp_path):
    (tmp_path / "c.cell").write_text("cell A {\n    on f() {\n        return " + chain("+", "2", 4000) + "\n    }\n}\n")
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "run", "c.cell", "f"], cwd=tmp_path,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "8000\n", "")


def test_a_long_mixed_chain_keeps_precedence_and_left_to_right_order():
    rng = random.Random(20)
    session = Session()
    for _ in range(5):
        terms = [str(rng.randint(1, 9)) for _ in range(60)]
        ops = [rng.choice(["+", "-", "*"]) for _ in range(59)]
        text = terms[0] + "".join(f" {o} {t}" for o, t in zip(ops, terms[1:]))
        assert session.execute(text).result["text/plain"] == str(eval(text))  # same precedence as Python
    strings = chain("+", '"ab"', 30) + ' + "c"'
    assert session.execute(strings).result["text/plain"] == "ab" * 30 + "c"


def test_an_error_in_a_long_chain_points_at_its_operator_and_short_circuits_like_a_short_one():
    session = Session()
    text = chain("+", "1", 20) + ' + "x" - 1'
    answer = session.execute(text)
    assert answer.error_name == "SomaError"
    assert answer.error.split("\n")[0].startswith("error: cell[1]:1:1: type:")
    assert session.execute(chain("&&", "true", 20) + " && 3").error_value.endswith(
        "'&&' needs Bool operands, got Int")
    assert session.execute(chain("&&", "true", 20) + " && false && 3").result["text/plain"] == "false"
    assert session.execute(chain("||", "false", 20) + " || true || 3").result["text/plain"] == "true"
    assert session.execute(chain("??", "()", 20) + ' ?? "found" ?? fail("never")').result["text/plain"] == "found"


@pytest.mark.parametrize("postfix", [" |> abs()", ".a", "[0]", ".len()"])
def test_a_long_postfix_chain_is_a_clean_error_not_a_python_traceback(postfix):
    session = Session()
    assert session.execute('let m = map("a", 1)').ok
    for where in ("cell", "handler"):
        text = "m" + postfix * 4000
        if where == "cell":
            answer = session.execute(text)
        else:
            answer = handler_answer(session, 'let m = map("a", 1)\n' + "return " + text)
        assert answer.error_name == "SomaError", (where, answer.error)
        assert "stack_overflow: this code nests too deeply to compile" in answer.error_value
        assert "Traceback" not in answer.error
    assert session.execute("40 + 2").result["text/plain"] == "42"


def test_escapes_and_braces_in_literals_read_as_before():
    cases = {
        r"a\nb": "a\nb", r"tab\there": "tab\there", r"q\"q": 'q"q', r"back\\slash": "back\\slash",
        r"nul\0": "nul\0", r"\u{1F600}x": "\U0001F600x", r"\u{zz}": r"\u{zz}", r"\q": r"\q",
        r"end\\": "end\\", "plain": "plain", r"\u{41}\u{42}": "AB",
    }
    for raw, value in cases.items():
        assert _unescape(raw) == value, raw
    program = parse('cell A {\n    on f() {\n        return "{{x}} \\\\{ \\u{263A}\\n" + """raw\\n {{ }}"""\n'
                    '    }\n}\n')
    binary = program.items[0].handlers[0].body.stmts[0].value
    assert (binary.left.value, binary.right.value) == ("{x} \\{ \u263a\n", "raw\\n { }")


def test_a_10_mb_literal_costs_memory_in_proportion():
    """Under a 1 GiB address-space cap (the old lexer took 5.2 GB for this) the literal and its escapes read."""
    script = textwrap.dedent("""
        import resource
        from soma_kernel.session.session import Session
        session = Session()
        session.execute("1")
        cap = 1024 ** 3
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        plain = session.execute('let s = "' + "x" * 10_000_000 + '"\\nlen(s)')
        print(plain.result["text/plain"] if plain.ok else plain.error_value)
        escaped = session.execute('let t = "' + "ab\\\\n{{" * 1_000_000 + '"\\nlen(t)')
        print(escaped.result["text/plain"] if escaped.ok else escaped.error_value)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["10000000", "4000000"]


def test_a_20000_term_int_chain_over_a_parameter_evaluates_in_a_handler():
    """The generated code's Int analysis (intlocals.is_int_expr) walks the chain without recursion."""
    session = Session()
    defined = session.execute("cell A {\n    on f(x: Int) {\n        return " + chain("+", "x", 20_000)
                              + " - x % 7\n    }\n}")
    assert defined.ok, defined.error
    assert session.execute("A.f(3)").result["text/plain"] == str(3 * 20_000 - 3)


def test_thousands_of_nested_lambdas_are_a_clean_error():
    session = Session()
    lambdas = "".join(f"a{i} => " for i in range(3000)) + "1"
    answer = session.execute("let f = " + lambdas)
    assert answer.error_name == "SomaError"
    assert answer.error_value == ("stack_overflow: this code nests too deeply to compile (thousands of chained calls, "
                                  "fields, indexes or pipes, or nested lambdas) — split it with `let`")
    assert session.execute("let g = a => b => a + b\nlet h = g(1)\nh(2)").result["text/plain"] == "3"
