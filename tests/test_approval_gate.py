"""approve() is answered by a person, a mock or a stated policy — never by program code (issue 20 §2).

The reserved builtins (`approve`, `think`, `transition` …) cannot be replaced
on any path: the parser refuses a handler, a parameter, a variable or a
pattern binding of that name, so `soma-kernel run` (which skips check),
`soma test`, the notebook, a horde task and a tool all meet the same refusal.
And the question a person answers shows the action as it was written.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from soma_kernel.core.diagnostics import SomaSyntaxError
from soma_kernel.runtime.shown_text import MAX_SHOWN_ACTION, shown_action
from soma_kernel.session.session import Session
from soma_kernel.syntax.keywords import RESERVED_FUNCTIONS
from soma_kernel.syntax.parser import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PAY = """cell Pay {
    on pay() {
        if approve("pay 1000 USD") {
            return "paid"
        }
        return "refused"
    }
}
"""

GATE = """cell Gate {
    on approve(action: String) {
        return true
    }
}
"""


def soma(*args, cwd, env=None):
    """`python -m soma_kernel ARGS` in `cwd`: (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "soma_kernel", *args], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})), timeout=120)
    return done.returncode, done.stdout, done.stderr


def refusal(source: str) -> tuple[str, str, int, int]:
    """(kind, message, line, col) of the parser's refusal of `source`."""
    with pytest.raises(SomaSyntaxError) as err:
        parse(source)
    found = err.value.diagnostic
    return found.kind, found.message, found.span.line, found.span.col


# ---------------------------------------------------------------- the rule, for every name and binding form

@pytest.mark.parametrize("name", RESERVED_FUNCTIONS)
def test_no_handler_takes_a_reserved_name(name):
    assert refusal(f"cell A {{\n    on {name}(x: String) {{ return 1 }}\n}}\n") == (
        "reserved_name", f"'{name}' is a reserved name: a handler cannot be called that", 2, 8)


@pytest.mark.parametrize("binding, col", [
    ("let approve = a => true", 5),
    ("for think in [1] { print(think) }", 5),
    ("let f = transition => 1", 9),
    ("match 3 { fail -> 1 }", 11),
    ('match "ab" { "a" + set_budget -> 1 }', 20),
])
def test_no_local_binding_shadows_a_reserved_name(binding, col):
    kind, message, line, column = refusal(f"cell A {{\n    on f() {{\n        {binding}\n    }}\n}}\n")
    assert (kind, line, column - 8) == ("reserved_name", 3, col)
    assert message.endswith("is a reserved name: a variable cannot be called that")


def test_a_parameter_cannot_take_a_reserved_name():
    assert refusal("cell A {\n    on f(approve: Any) { return approve(\"x\") }\n}\n")[:2] == (
        "reserved_name", "'approve' is a reserved name: a variable cannot be called that")


def test_the_names_still_read_as_fields_and_calls():
    program = parse('cell A {\n    on f(m: Map) { return m.approve ?? approve("x") }\n}\n')
    assert program.items[0].handlers[0].name == "f"


# ---------------------------------------------------------------- every path meets the refusal

def test_run_which_skips_check_refuses_a_shadowing_approve(tmp_path):
    (tmp_path / "pay.cell").write_text(GATE + PAY)
    code, out, err = soma("run", "pay.cell", "pay", cwd=tmp_path, env={"SOMA_APPROVE": ""})
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "error: pay.cell:2:8: 'approve' is a reserved name: a handler cannot be called that",
        "2 |     on approve(action: String) {",
        "  |        ^^^^^^^",
        "  hint: rename it (e.g. `approve_request`); approve() is answered by a person, a `mock approve` or "
        "SOMA_APPROVE, never by the program",
    ]


def test_soma_test_refuses_a_test_cell_helper_named_approve(tmp_path):
    (tmp_path / "t.cell").write_text(PAY + 'cell test T {\n    on approve(a: String) { return true }\n'
                                     '    rules {\n        assert pay() == "paid"\n    }\n}\n')
    code, out, _ = soma("test", "t.cell", cwd=tmp_path)
    assert code == 1
    assert "t.cell:10:8: 'approve' is a reserved name: a handler cannot be called that" in out + _


def test_the_notebook_refuses_every_way_of_answering_approve():
    session = Session()
    assert session.execute(PAY).ok
    for attempt in (GATE, "let approve = a => true",
                    'cell test T {\n    on approve(a: String) { return true }\n    rules { assert true }\n}',
                    "flesh Pay {\n    on approve(a: String) { return true }\n}"):
        result = session.execute(attempt)
        assert result.error_name == "SyntaxError", attempt
        assert "'approve' is a reserved name" in result.error_value
    answer = session.execute("Pay.pay()")
    assert answer.error_name == "SomaError" and "approval_required" in answer.error_value
    assert session.execute('mock approve true\nPay.pay()').result["text/plain"] == "paid"


def test_a_horde_task_and_a_tool_cannot_be_an_approve_handler():
    horde_program = ('cell agent Desk {\n    on approve(x: String) { return true }\n'
                     '    on go() { return horde(Desk.approve, ["a"]) }\n}\n')
    assert refusal(horde_program)[0] == "reserved_name"
    tool_program = ('cell agent Desk {\n    face {\n        tool approve(action: String) -> Bool "answers"\n    }\n'
                    '    on approve(action: String) { return true }\n}\n')
    assert refusal(tool_program)[:3] == ("reserved_name",
                                         "'approve' is a reserved name: a handler cannot be called that", 5)


# ---------------------------------------------------------------- what the person is shown

@pytest.mark.parametrize("char, escape", [
    ("\u202e", "\\u202e"), ("\u202a", "\\u202a"), ("\u202d", "\\u202d"), ("\u2066", "\\u2066"),
    ("\u2067", "\\u2067"), ("\u2069", "\\u2069"), ("\u200e", "\\u200e"), ("\u200f", "\\u200f"),
    ("\u061c", "\\u061c"), ("\u200b", "\\u200b"), ("\ufeff", "\\ufeff"), ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"), ("\x85", "\\x85"), ("\x9b", "\\x9b"), ("\x80", "\\x80"), ("\x7f", "\\x7f"),
    ("\x1b", "\\x1b"), ("\n", "\\n"), ("\t", "\\t"), ("\U000e0041", "\\U000e0041"),
])
def test_every_hidden_or_reordering_character_is_shown_escaped(char, escape):
    assert shown_action(f"refund {char}10 USD") == f"refund {escape}10 USD"


def test_visible_text_is_kept_and_a_backslash_is_doubled_only_beside_an_escape():
    assert shown_action("rembourser 30 € à Zoë — 東京") == "rembourser 30 € à Zoë — 東京"
    assert shown_action("C:\\tmp") == "C:\\tmp"
    assert shown_action("C:\\tmp\u202e") == "C:\\\\tmp\\u202e"


def test_a_long_action_is_cut_with_a_marker():
    assert shown_action("x" * MAX_SHOWN_ACTION) == "x" * MAX_SHOWN_ACTION
    assert shown_action("y" * 10_000) == "y" * MAX_SHOWN_ACTION + "… (9500 more characters)"
    assert shown_action("\u202e" * 200) == "\\u202e" * 83 + "… (702 more characters)"  # never half an escape


def test_the_person_sees_the_reversed_amount_escaped_and_the_trace_keeps_it_whole():
    session = Session()
    asked = []
    session.ask_person = lambda action: asked.append(action) or True
    assert session.execute('cell Desk {\n    on refund(a: String) { return approve(a) }\n}').ok
    assert session.execute('Desk.refund("refund \u202e0001\u202c USD")').result["text/plain"] == "true"
    assert session.execute('Desk.refund("ok")').ok
    session.execute('Desk.refund("' + "z" * 600 + '")')
    assert asked == ["refund \\u202e0001\\u202c USD", "ok", "z" * 500 + "… (100 more characters)"]
    trace = session.execute('trace() |> map(s => s.action)').result["text/plain"]
    assert trace.startswith('["refund \u202e0001\u202c USD", "ok", "zzz')


def test_the_policy_note_and_the_refusal_show_the_action_escaped(tmp_path):
    (tmp_path / "d.cell").write_text('cell Desk {\n    on refund() { return approve("pay \u202e0001\x1b[2J") }\n}\n')
    code, out, err = soma("run", "d.cell", "refund", cwd=tmp_path, env={"SOMA_APPROVE": "always"})
    assert (code, out) == (0, "true\n")
    assert err == "[agent] approval requested: pay \\u202e0001\\x1b[2J — approved by SOMA_APPROVE=always\n"
    code, _, err = soma("run", "d.cell", "refund", cwd=tmp_path, env={"SOMA_APPROVE": ""})
    assert code == 1 and err.startswith('error: d.cell:2:26: approval_required: approve("pay \\u202e0001\\x1b[2J")')
