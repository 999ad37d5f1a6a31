"""The live session in-process (no ZeroMQ): definitions by notebook cell,
statements, mocks, asserts, and errors with carets at cell[N]:line:col."""

from __future__ import annotations

import pytest

from helpers import value
from soma_kernel.session.session import Session

COUNTER = """cell Counter {
    face {
        signal bump(n: Int) -> Int
    }
    memory {
        count: Map<String, Int>
        invariant count >= 0
    }
    state door {
        initial: closed
        closed -> open
        open -> closed
    }
    on bump(n: Int) {
        count.set("n", (count.get("n") ?? 0) + n)
        return count.get("n") ?? 0
    }
    on open_door(id: String) {
        transition(id, "open")
        return get_status(id)
    }
}"""

GREETER = """cell Greeter {
    face {
        signal greet(name: String) -> String
    }
    on greet(name: String) {
        return "hello {name}"
    }
}"""


@pytest.fixture
def session(tmp_path):
    """A fresh session whose folder is a temporary directory (no soma.toml)."""
    return Session(directory=str(tmp_path))


def test_definitions_persist_and_last_expression_is_the_result(session):
    assert session.execute(COUNTER, "a").ok
    assert value(session.execute("bump(2)\nbump(3)", "b")) == "5"
    assert value(session.execute("Counter.bump(1)", "c")) == "6"


def test_statement_without_value_shows_nothing(session):
    result = session.execute("let x = 3", "a")
    assert result.ok and result.result is None
    assert value(session.execute("x * 2", "b")) == "6"


def test_a_result_that_is_unit_shows_unit_but_an_effect_call_shows_nothing(session):
    session.execute('cell Quiet {\n    on nothing() { return () }\n}', "a")
    assert value(session.execute("nothing()", "b")) == "()"
    assert value(session.execute("Quiet.nothing()", "c")) == "()"
    assert value(session.execute('let m = map("a", 1)\nm.b', "d")) == "()"
    printed = session.execute('print("hi")', "e")
    assert printed.result is None and printed.stream_text() == "hi\n"


def test_rerunning_a_cell_replaces_and_drops_its_definitions(session):
    session.execute(COUNTER + "\n" + GREETER, "a")
    assert set(session.names_defined_by("a")) == {"Counter", "Greeter"}
    result = session.execute(GREETER, "a")
    assert result.ok
    assert session.names_defined_by("a") == ["Greeter"]
    failed = session.execute("bump(1)", "b")
    assert failed.error_name == "SomaError" and "bump" in failed.error


def test_redefinition_keeps_fitting_slots_and_says_what_it_reset(session):
    session.execute(COUNTER, "a")
    session.execute("bump(4)", "b")
    same = session.execute(COUNTER, "a")
    assert same.stream_text("stderr") == ""
    assert value(session.execute("bump(0)", "c")) == "4"
    changed = session.execute(COUNTER.replace("Map<String, Int>", "Map<String, Float>"), "a")
    assert changed.stream_text("stderr") == "Counter: reset slot(s) count (declaration changed)\n"
    removed = session.execute(COUNTER.replace("count: Map<String, Int>", "count: Map<String, Int>\n        log: List<String>"), "a")
    assert removed.stream_text("stderr") == "Counter: reset slot(s) count (declaration changed)\n"
    back = session.execute(COUNTER, "a")
    assert back.stream_text("stderr") == "Counter: dropped slot(s) log (no longer declared)\n"


def test_defining_a_name_from_another_cell_warns_and_takes_it_over(session):
    first = session.execute(GREETER, "first", count=1)
    assert first.ok
    second = session.execute(GREETER.replace("hello", "hi"), "second", count=2)
    assert second.stream_text("stderr") == (
        "warning: cell `Greeter` was defined by cell[1]; this cell's definition replaces it\n")
    assert session.names_defined_by("first") == []
    assert value(session.execute('greet("ann")', "third")) == "hi ann"


def test_runtime_error_is_rendered_at_the_untrimmed_position(session):
    session.execute(COUNTER, "a", count=1)
    result = session.execute("\n\n    bump(-9)", "b", count=7)
    assert result.error_name == "SomaError"
    lines = result.error.split("\n")
    assert lines[0].startswith("error: cell[7]:3:5: invariant:")
    assert lines[1] == "3 |     bump(-9)"
    assert lines[2] == "  |     ^^^^^^^^"
    assert "raised in cell Counter at cell[1]:15:9" in result.error
    assert lines[-1].startswith("  hint:")


def test_failed_statement_is_rolled_back_and_later_statements_do_not_run(session):
    session.execute(COUNTER, "a")
    session.execute("bump(5)", "b")
    result = session.execute('bump(-50)\nprint("not reached")', "c")
    assert not result.ok and "not reached" not in result.stream_text()
    assert value(session.execute("bump(0)", "d")) == "5"


def test_syntax_error_has_caret_and_changes_nothing(session):
    session.execute(GREETER, "a")
    result = session.execute("\ncell Broken {\n  on f( {", "a", count=3)
    assert result.error_name == "SyntaxError"
    assert result.error.startswith("error: cell[3]:")
    assert "^" in result.error
    assert session.names_defined_by("a") == ["Greeter"]


def test_check_errors_refuse_the_definition_at_its_place(session):
    bad = "cell Bad {\n    on go() {\n        return missing_thing\n    }\n}"
    result = session.execute(bad, "a", count=4)
    assert result.error_name == "CheckError"
    assert result.error.startswith("error: cell[4]:3:16:")
    assert "missing_thing" in result.error
    assert session.definitions == {}


def test_mock_lines_feed_think(session):
    result = session.execute('mock think "scripted reply"\nthink("anything")', "a")
    assert value(result) == "scripted reply"


def test_asserts_print_exactly_the_test_runner_lines(session):
    session.execute(COUNTER, "a")
    result = session.execute('assert bump(1) == 1\nassert_fails bump(-5) matching "invariant"\nassert bump(0) == 7',
                             "b", count=9)
    assert result.error_name == "AssertionError"
    assert result.stream_text() == (
        "  ✓ assert bump(1) == 1\n"
        "  ✓ assert_fails bump(-5) matching \"invariant\" — raised "
        "invariant: count[\"n\"] = -4 violates invariant count >= 0\n"
        "  ✗ cell[9]:3  assert bump(0) == 7 — FAILED\n"
        "         left:  1\n"
        "         right: 7\n")


def test_failed_field_assert_names_the_fields_the_map_has(session):
    result = session.execute('let m = map("state", "paid")\nassert m.status == "paid"', "a", count=2)
    assert result.stream_text() == (
        "  ✗ cell[2]:2  assert m.status == \"paid\" — FAILED\n"
        "         left:  ()\n"
        "         right: \"paid\"\n"
        "         note: .status is () — the map has fields: state\n")


def test_a_malformed_mock_is_an_error_that_stops_the_cell(session):
    session.execute(COUNTER, "a")
    result = session.execute('bump(1)\nmock think hotel_price("Oslo")\nbump(5)', "b", count=5)
    assert not result.ok and result.error_name == "SomaError"
    assert result.error == (
        "error: cell[5]:2:12: undefined_variable: undefined function 'hotel_price'\n"
        "2 | mock think hotel_price(\"Oslo\")\n"
        "  |            ^^^^^^^^^^^^^^^^^^^\n"
        "  hint: `mock think \"reply\"` scripts the model's next reply (a String, or a list of them); "
        "nothing was queued")
    assert value(session.execute('count.get("n")', "c")) == "1"
    assert session.execute("%mocks", "d").stream_text() == "no mocks queued\n"


def test_a_mock_of_the_wrong_type_stops_the_cell_and_queues_nothing(session):
    result = session.execute('mock approve [true, 3]\nprint("not reached")', "a", count=5)
    assert result.stream_text() == ""
    assert result.error == (
        "error: cell[5]:1:1: type: mock approve takes true or false, got 3\n"
        "1 | mock approve [true, 3]\n"
        "  | ^^^^^^^^^^^^^^^^^^^^^^\n"
        "  hint: `mock approve true` (or false, or a list of them) scripts the next approval; nothing was queued")
    assert session.execute("%mocks", "b").stream_text() == "no mocks queued\n"


def test_print_output_is_recorded_in_order(session):
    result = session.execute('print("one")\nprint("two")\n3', "a")
    assert result.stream_text() == "one\ntwo\n"
    assert value(result) == "3"


def test_internal_errors_are_folded_and_the_session_survives(session, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(session, "run_soma", broken)
    result = session.execute("1", "a")
    assert result.error_name == "InternalError"
    assert result.error.startswith("InternalError: ZeroDivisionError: boom")
    assert "Traceback" in result.error
    monkeypatch.undo()
    assert value(session.execute("1 + 1", "b")) == "2"


def test_history_tail_search_and_range(session):
    for code in ("1 + 1", "let a = 2", "a + 40"):
        session.execute(code)
    assert session.history.tail(2) == [(0, 2, "let a = 2"), (0, 3, "a + 40")]
    assert session.history.search("*+*") == [(0, 1, "1 + 1"), (0, 3, "a + 40")]
    assert session.history.range(0, 2, 3) == [(0, 2, "let a = 2")]


def test_a_misspelt_handler_cell_or_function_gets_a_did_you_mean_hint(session):
    assert session.execute(COUNTER, "a").ok
    hints = {code: session.execute(code, "b").error.split("\n")[-1]
             for code in ("bumpp(1)", "Countr.bump(1)", "Counter.bmp(1)", "lenn([1])", "Counter.bump(1, 2)")}
    assert hints["bumpp(1)"] == "  hint: did you mean `bump`?"
    assert hints["Countr.bump(1)"] == "  hint: did you mean `Counter`?"
    assert hints["Counter.bmp(1)"] == "  hint: did you mean `bump`?"
    assert hints["lenn([1])"] == "  hint: did you mean `len`?"
    assert "did you mean" not in hints["Counter.bump(1, 2)"]


def test_a_wrong_number_of_arguments_shows_the_signature_not_define_it(session):
    session.execute(COUNTER, "a")
    result = session.execute("bump(1, 2)", "b", count=4)
    assert result.error == (
        "error: cell[4]:1:1: undefined_variable: no handler 'bump' takes 2 arguments\n"
        "1 | bump(1, 2)\n"
        "  | ^^^^^^^^^^\n"
        "  hint: `bump` exists but takes other arguments: Counter.bump(n: Int) (this call passes 2)")
    qualified = session.execute("Counter.bump()", "c", count=5)
    assert qualified.error.split("\n")[-1] == (
        "  hint: `bump` exists but takes other arguments: Counter.bump(n: Int) (this call passes 0)")


def test_a_field_that_does_not_exist_is_named(session):
    result = session.execute('let m = map("a", 1)\nm.b > 3', "a", count=2)
    assert result.error == (
        "error: cell[2]:2:1: type: m.b is (): the map has no field 'b' (its fields: a), "
        "so cannot compare Unit and Int\n"
        "2 | m.b > 3\n"
        "  | ^^^\n"
        "  hint: the statement was rolled back: the session is as it was before it")


def test_a_cell_used_as_a_value_says_how_its_slots_are_read(session):
    session.execute(COUNTER, "a")
    result = session.execute("Counter.count", "b", count=3)
    assert result.error == (
        "error: cell[3]:1:1: undefined_variable: cell 'Counter' has no handler 'count'\n"
        "1 | Counter.count\n"
        "  | ^^^^^^^^^^^^^\n"
        "  hint: `count` is a memory slot of `Counter`: it is read by its bare name inside its handlers, "
        "or at top level when no other cell has a slot of that name; `%memory Counter` shows them all")


def test_an_invariant_error_quotes_a_string_value(session):
    session.execute('cell Log {\n    memory {\n        lines: List<String>\n        invariant lines != "hello"\n'
                    '    }\n    on add(s: String) {\n        lines.push(s)\n        return lines.size\n    }\n}', "a")
    result = session.execute('add("hello")', "b", count=2)
    assert result.error.split("\n")[0] == (
        'error: cell[2]:1:1: invariant: lines[0] = "hello" violates invariant lines != "hello"')


def test_a_name_a_rerun_cell_dropped_says_which_rerun_dropped_it(session):
    two = ("cell Alpha {\n    on a() { return 1 }\n}\ncell Beta {\n    on b() { return 2 }\n}\n"
           "cell type Color {\n    variants {\n        Red\n    }\n}")
    assert session.execute(two, "k1", count=1).ok
    assert session.execute("cell Alpha {\n    on a() { return 1 }\n}", "k1", count=3).ok
    dropped = {"b()": "`Beta` (and `b` with it)", "Beta.b()": "`Beta`", 'vote(Beta.b, "x", 2)': "`Beta`",
               "Beta": "`Beta`", "Red": "`Color` (and `Red` with it)"}
    for code, what in dropped.items():
        hint = session.execute(code, "k2", count=4).error.split("\n")[-1]
        assert hint == (f"  hint: re-running cell[3] dropped {what}: that cell no longer defines it — "
                        "put the definition back there, or define it in another cell")
    # defined again elsewhere: no longer blamed on the re-run
    assert session.execute("cell Beta {\n    on b() { return 5 }\n}", "k5", count=5).ok
    assert value(session.execute("b()", "k2", count=6)) == "5"
    assert "re-running" not in session.execute("b(1)", "k2", count=7).error


def test_a_dropped_name_another_cell_still_defines_is_not_blamed_on_the_rerun(session):
    session.execute("cell One {\n    on shared() { return 1 }\n}", "k1", count=1)
    session.execute("cell Two {\n    on shared() { return 2 }\n    on only() { return 3 }\n}", "k2", count=2)
    session.execute("cell Three {\n    on other() { return 4 }\n}", "k2", count=3)
    assert "re-running" not in session.execute("shared(1)", "k3", count=4).error
    assert "re-running cell[3] dropped `Two` (and `only` with it)" in session.execute("only()", "k3", count=5).error
