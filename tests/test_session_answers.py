"""Session-level rules behind issue 15's "wrong answers": each test runs what a
new user would type and asserts the answer is right (or a clear error), never
a silent wrong value or an internal error."""

from __future__ import annotations

import pytest

from helpers import value
from soma_kernel.session.session import Session


@pytest.fixture
def session(tmp_path):
    """A fresh session in a temporary directory (no soma.toml)."""
    return Session(directory=str(tmp_path))


ROWS = 'let rows = [map("status", "open", "n", 1), map("status", "done", "n", 2), map("status", "open", "n", 3)]'


def test_group_by_with_a_key_function_groups(session):
    session.execute(ROWS)
    assert value(session.execute("group_by(rows, r => r.status) |> keys()")) == '["open", "done"]'
    assert value(session.execute('len(group_by(rows, r => r.status)["open"])')) == "2"
    assert value(session.execute("min_by(rows, r => 0 - r.n).n")) == "3"


def test_a_key_of_the_wrong_kind_is_a_type_error_naming_the_builtin(session):
    session.execute(ROWS)
    failed = session.execute("group_by(rows, 42)")
    assert not failed.ok
    assert "group_by() expects a field name (String) or a key function (r => …), got Int" in failed.error


LAMBDA_RETURN_CELL = """cell L {
    on scaled(xs: List<Int>) {
        let ys = xs |> map(v => { return v * 10 })
        return len(ys)
    }
}"""


def test_a_handler_with_return_inside_a_lambda_is_refused_by_the_check(session):
    result = session.execute(LAMBDA_RETURN_CELL, "a")
    assert result.error_name == "CheckError"
    assert "cell[1]:3:35: `return` inside a lambda" in result.error
    assert not session.execute("scaled([1, 2])", "b").ok  # not installed


def test_return_inside_a_lambda_at_top_level_is_a_soma_error_not_an_internal_one(session):
    result = session.execute("[1, 2] |> map(v => { return v * 10 })")
    assert result.error_name == "SomaError"
    assert "cell[1]:1:22: type: `return` inside a lambda" in result.error
    assert value(session.execute("[1, 2] |> map(v => { let w = v * 10\n w })")) == "[10, 20]"


BOX = """cell Box {
    memory {
        items: Map<String, String>
        invariant len(items) < 3
    }
    on put(k: String, v: String) {
        require len(items) < 3 else Full
        items.set(k, v)
        return len(items)
    }
}"""


def test_verify_does_not_prove_what_the_runtime_refuses(session):
    assert session.execute(BOX, "a").ok
    verified = session.execute("%verify", "b").displays[0]["text/plain"]
    assert "writer 'put' proven" not in verified
    assert ("⚠ invariant len(items) < 3 — runtime-checked (computed values): put → items because `len(items)` "
            "is the length of the value written, known at run time (the slot's entry count is `items.size`)"
            ) in verified
    assert value(session.execute('put("a", "hi")')) == "1"
    refused = session.execute('put("b", "hello")')
    assert not refused.ok and "violates invariant len(items) < 3" in refused.error


def test_a_budget_set_at_top_level_holds_for_the_session_until_reset(session):
    assert value(session.execute("set_budget(40)")) == "40"
    assert value(session.execute("tokens_remaining()")) == "40"
    session.execute('mock think "fine"')
    session.execute('think("a short prompt")')
    assert value(session.execute("tokens_remaining()")) == "35"
    refused = session.execute('think("' + "x" * 200 + '")')
    assert not refused.ok and "token budget exhausted" in refused.error
    session.execute("%reset")
    assert value(session.execute("tokens_remaining()")) == "-1"


TWO_MACHINES = """cell Orders {
    state order {
        initial: open
        open -> paid
    }
    on pay(id: String) {
        transition(id, "paid")
        return get_status(id)
    }
}
cell Tickets {
    state ticket {
        initial: new
        new -> closed
    }
}"""


def test_with_two_machine_cells_the_cell_name_says_whose_status(session):
    session.execute(TWO_MACHINES, "a")
    assert value(session.execute('pay("o1")')) == 'paid'
    assert value(session.execute('Orders.get_status("o1")')) == 'paid'
    assert value(session.execute('Tickets.get_status("o1")')) == 'new'
    assert value(session.execute('Tickets.valid_transitions("t1")')) == '["closed"]'
    assert value(session.execute('get_status("o1")')) == 'paid'  # only Orders knows o1 (issue 21)


RETURNS = """cell R {
    face {
        signal f(x: Int) -> String
        signal g(xs: List) -> List<Int>
        signal doubled(n: Int) -> Float
        signal found(k: String) -> Map
    }
    on f(x: Int) { return "{x}" }
    on g(xs: List) { return xs }
    on doubled(n: Int) { return n * 2 }
    on found(k: String) { return () }
}"""


def test_the_runtime_checks_each_value_against_the_faces_return_type(session):
    assert session.execute(RETURNS, "a").ok
    assert value(session.execute("g([1, 2])")) == "[1, 2]"
    assert value(session.execute("doubled(2)")) == "4"
    assert session.execute('found("k")').ok
    refused = session.execute('g([1, "a"])')
    assert refused.error_name == "SomaError"
    assert ('type: R.g() returned List (element 1: expected Int, got String), but its face declares -> List<Int>'
            in refused.error)


def test_check_refuses_a_handler_whose_return_the_face_contradicts(session):
    result = session.execute("cell S {\n    face {\n        signal f(x: Int) -> String\n    }\n"
                             "    on f(x: Int) { return x }\n}", "a")
    assert result.error_name == "CheckError"
    assert "face contract: signal 'f' returns String but handler 'f' returns an Int" in result.error


RETRY = """cell Printer {
    state job {
        initial: queued
        queued -> printing
        printing -> waiting
        waiting -> printing
        waiting -> jammed
        printing -> printed
    }
    on go(id: String) {
        transition(id, "printing")
        return 1
    }
}"""


def test_verify_names_the_fairness_it_assumes_and_unfair_reports_the_loop(session):
    session.execute('%%toml\n[verify]\neventually = ["printed", "jammed"]\n', "t")
    session.execute(RETRY, "a")
    fair = session.execute("%verify", "b").displays[0]["text/plain"]
    assert ("✓ eventually(state in [printed, jammed]) — all paths eventually satisfy the predicate (assuming "
            "fairness: a run looping printing -> waiting -> printing takes the loop's exit; --unfair reports it)"
            ) in fair
    unfair = session.execute("%verify --unfair", "c").displays[0]["text/plain"]
    assert ("✗ eventually(state in [printed, jammed]) — exists a path that never satisfies the predicate (without "
            "fairness: it may loop printing -> waiting -> printing forever, never taking the exit)") in unfair
    assert "cycle back to 'printing'" in unfair


def test_help_verify_explains_the_fairness_assumption(session):
    text = session.execute("%help verify").stream_text()
    assert text.startswith("%verify [--strict] [--unfair] [--full]\n")
    assert "under fairness" in text and "`--unfair` (or soma.toml `[verify] fair = false`)" in text
    assert not session.execute("%help frobnicate").ok
