"""A program's handler wins over a builtin of the same name at the handler's arity.

The rule (runtime.dispatch) is the same in handler bodies, test rules, session
cells and `check`: `count("a b")` calls `on count(text)`, while
`count(xs, pred)` with two arguments still reaches the builtin `count`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from soma_kernel.analysis.check import check_program
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.dispatch import AMBIGUOUS, BUILTIN, HANDLER, NONE, OWN, dispatch_bare_call
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse

WORDS = """cell Words {
    on count(text: String) {
        return len(split(text, " ")) * 10
    }
    on tally(text: String) {
        return count(text)
    }
    on evens(xs: List<Int>) {
        return count(xs, x => x % 2 == 0)
    }
    on longest(xs: List<Int>) {
        return max(xs)
    }
}
"""

TESTS = """
cell test WordsTest {
    rules {
        assert count("a b c") == 30
        assert tally("a b") == 20
        assert evens([1, 2, 4]) == 2
        assert count([1, 2, 3], x => x > 1) == 2
        assert longest([3, 9, 2]) == 9
    }
}
"""


def run_cli(args, cwd):
    """The CLI as a user runs it: exit status and merged output."""
    result = subprocess.run([sys.executable, "-m", "soma_kernel", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=120)
    return result.returncode, result.stdout


@pytest.fixture
def runtime():
    rt = Runtime(note=lambda text: None)
    rt.load_program(parse(WORDS))
    return rt


def test_the_rule_in_its_order():
    assert dispatch_bare_call(True, ["B"], True).kind == OWN
    assert dispatch_bare_call(False, ["B"], True).kind == HANDLER
    assert dispatch_bare_call(False, ["B"], True).owner == "B"
    assert dispatch_bare_call(False, [], True).kind == BUILTIN
    assert dispatch_bare_call(False, ["B", "C"], True).kind == BUILTIN
    assert dispatch_bare_call(False, ["B", "C"], False).kind == AMBIGUOUS
    assert dispatch_bare_call(False, [], False).kind == NONE


def test_handler_body_calls_the_handler_at_its_arity_and_the_builtin_at_another(runtime):
    assert runtime.call("tally", ["a b"]) == 20
    assert runtime.call("evens", [[1, 2, 4, 5]]) == 2
    assert runtime.call("longest", [[3, 9, 2]]) == 9


def test_handler_of_another_cell_shadows_the_builtin_in_a_body():
    rt = Runtime(note=lambda text: None)
    rt.load_program(parse(WORDS + "cell Report { on total(text: String) { return count(text) + 1 } }"))
    assert rt.call("total", ["x y"]) == 21


def test_test_rules_reach_the_handler_and_check_agrees(tmp_path):
    (tmp_path / "words.cell").write_text(WORDS + TESTS, encoding="utf-8")
    code, output = run_cli(["test", "words.cell"], tmp_path)
    assert output.endswith("5 tests: 5 passed, 0 failed\n"), output
    assert code == 0
    code, output = run_cli(["check", "words.cell"], tmp_path)
    assert output.startswith("warning: words.cell:9:16: count() with 2 argument(s) calls the builtin"), output
    assert output.endswith("✓ 1 warning(s), no errors.\n"), output
    assert code == 0


def test_zero_argument_handler_shadows_a_builtin_that_needs_arguments():
    program = parse("""cell Book {
    memory { people: Map<String, String> }
    on count() { return len(people.keys()) }
    on entries() { return people.keys() }
    on add(name: String) { people.set(name, name)  return count() }
}
cell test BookTest {
    rules {
        assert add("ann") == 1
        assert count() == 1
        assert entries() == ["ann"]
    }
}""")
    assert check_program(program).passed


def test_check_still_refuses_a_builtin_call_no_handler_answers():
    report = check_program(parse(WORDS + "cell Other { on f() { return count(1, 2, 3) } }"))
    messages = [d.message for d in report.errors]
    assert any("builtin count() takes 2 argument(s), but the call passes 3" in m for m in messages), messages


def test_check_warns_when_the_builtin_answers_a_call_next_to_a_handler_of_another_arity():
    report = check_program(parse(WORDS))
    warnings = [d.message for d in report.warnings]
    assert any("count() with 2 argument(s) calls the builtin, not the handler 'count'" in w for w in warnings)


def test_session_cell_reaches_the_handler_and_the_builtin(tmp_path):
    session = Session(directory=str(tmp_path))
    assert session.execute(WORDS, "a").ok
    shadowed = session.execute('count("a b c d")', "b")
    assert shadowed.ok and shadowed.result["text/plain"] == "40"
    builtin = session.execute("count([1, 2, 3], x => x > 2)", "c")
    assert builtin.ok and builtin.result["text/plain"] == "1"


def test_two_cells_answering_the_same_call_without_a_builtin_is_ambiguous():
    rt = Runtime(note=lambda text: None)
    rt.load_program(parse("cell A { on ping(x: Int) { return 1 } }\ncell B { on ping(x: Int) { return 2 } }\n"
                          "cell C { on go() { return ping(0) } }"))
    with pytest.raises(SomaError) as caught:
        rt.call("go", [])
    assert "qualify it: A.ping, B.ping" in str(caught.value)


KNAPSACK = """cell Knapsack {
    on solve(weights: List, cap: Int) {
        return len(weights) * 100 + cap
    }
    on plan() {
        return solve([1, 2, 3], 7)
    }
}
cell Agent {
    on solve(task: String) {
        return "done: " + task
    }
    on algebra() {
        return solve([[2, 1], [1, 3]], [5, 10])
    }
}
"""


def test_a_handler_named_solve_wins_over_the_matrix_builtin_everywhere(tmp_path):
    program = KNAPSACK.replace("cell Agent", "cell Solo").replace(
        "    on algebra() {\n        return solve([[2, 1], [1, 3]], [5, 10])\n    }\n", "")
    tests = ("cell test KnapsackTest {\n    rules {\n        assert solve([1, 2], 5) == 205\n"
             "        assert plan() == 307\n        assert solve(\"x\") == \"done: x\"\n    }\n}\n")
    (tmp_path / "knap.cell").write_text(program + tests, encoding="utf-8")
    code, output = run_cli(["test", "knap.cell"], tmp_path)
    assert output.endswith("3 tests: 3 passed, 0 failed\n"), output
    code, output = run_cli(["check", "knap.cell"], tmp_path)
    assert code == 0 and "error" not in output, output
    session = Session(directory=str(tmp_path))
    assert session.execute(program, "a").ok
    shadowed = session.execute("solve([1], 1)", "b")
    assert shadowed.ok and shadowed.result["text/plain"] == "101"


def test_the_solve_builtin_answers_where_no_handler_takes_that_many_arguments():
    rt = Runtime(note=lambda text: None)
    rt.load_program(parse(KNAPSACK.replace("on solve(weights: List, cap: Int)", "on pick(weights: List, cap: Int)")
                          .replace("return solve([1, 2, 3], 7)", "return pick([1, 2, 3], 7)")))
    assert rt.call("algebra", []) == pytest.approx([1.0, 3.0])
    assert rt.call("solve", ["t"]) == "done: t"
    report = check_program(parse(KNAPSACK))
    assert not report.errors, [d.message for d in report.errors]
