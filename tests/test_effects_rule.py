"""The effects rule (issue 20 §1): a failed statement rolls back memory, machine
instances and counters, and keeps what reached the outside — the model calls
it made, their tokens (against the budget) and their Think/ToolCall trace
records, and the scripted answers they consumed. The same rule holds in a
notebook, under `soma-kernel run` (a `try` block), `soma test` and inside
horde tasks. Replies a failing notebook cell queued and nothing consumed are
dropped with the note `soma test` prints after a rule that raised."""

from __future__ import annotations

import pytest

from helpers import value
from llm_server import LoopbackModel
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.mocks import Scripted
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse
from soma_kernel.testing.runner import Output, run_tests

DESK = """cell agent Desk {
    memory {
        asked: Map<String, Int>
        invariant asked <= 1
    }
    state ticket {
        initial: open
        open -> answered
    }
    on ask(q: String) {
        asked.set(q, (asked.get(q) ?? 0) + 1)
        return think(q)
    }
    on ask_then_break(q: String) {
        transition(q, "answered")
        let n = next_id()
        let reply = think(q)
        return reply + n + true
    }
    on ask_twice(q: String) {
        asked.set(q, 1)
        think(q)
        asked.set(q, 2)
    }
    on tries(q: String) {
        let r = try {
            transition(q, "answered")
            set_budget(1000)
            think(q)
            fail("broken", "after the call")
        }
        return [r.kind, trace() |> map(t => t._type), tokens_used(), tokens_remaining(), get_status(q)]
    }
    on status(q: String) { return get_status(q) }
    on fresh() { return next_id() }
}"""

# Statements that call the model and then fail, each in another way (a type error after
# the call, a handler's own error, an invariant, a `fail`): a class of failures, one rule.
FAILING = [
    'think("hello") + 1',
    'ask_then_break("t1")',
    'ask_twice("q")',
    '[think("hello"), fail("late", "after the call")]',
]


@pytest.fixture
def session(tmp_path, monkeypatch):
    """A session with the desk defined (no soma.toml: unscripted think() echoes)."""
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SOMA_LLM_CASSETTE"):
        monkeypatch.delenv(name, raising=False)
    live = Session(directory=str(tmp_path))
    assert live.execute(DESK, "desk").ok
    return live


@pytest.mark.parametrize("statement", FAILING)
def test_a_failed_statement_keeps_its_tokens_and_think_records(session, statement):
    session.execute('mock think "hi"')
    assert not session.execute(statement).ok
    spent = 2 + 1 if "hello" in statement else 1 + 1
    assert value(session.execute('[tokens_used(), trace() |> map(t => [t._type, t.reply])]')) == \
        f'[{spent}, [["Think", "hi"]]]'


@pytest.mark.parametrize("statement", FAILING)
def test_a_failed_statement_still_rolls_back_memory_instances_and_counters(session, statement):
    session.execute('mock think "hi"')
    assert not session.execute(statement).ok
    assert value(session.execute('[asked.get("q"), fresh()]')) == "[(), 1]"
    assert value(session.execute('status("t1")')) == "open"
    assert "Transition" not in value(session.execute("trace() |> map(t => t._type)"))


def test_ten_failing_statements_spend_against_the_budget(session):
    """The issue's attack: failing calls after set_budget(40) used to leave tokens_used() at 0."""
    session.execute("set_budget(40)")
    refused = None
    for attempt in range(10):
        failed = session.execute(f'think("question number {attempt} about refunds") + 1')
        if "token budget exhausted" in (failed.error or ""):
            refused = attempt
            break
    assert refused == 3          # each echoed call costs 8 + 8 tokens: after three, 48 of 40 are spent
    assert value(session.execute("[tokens_used(), tokens_remaining(), len(trace())]")) == "[48, 0, 3]"


def test_a_set_budget_of_a_failed_statement_is_undone_but_its_spend_is_counted(session):
    session.execute('mock think ["one", "two"]')
    assert value(session.execute("set_budget(100)")) == "100"
    assert value(session.execute('think("hello")\ntokens_used()')) == "3"
    assert not session.execute('[set_budget(7), think("hello"), fail("late", "x")]').ok
    assert value(session.execute("[tokens_used(), tokens_remaining(), len(trace())]")) == "[6, 94, 2]"


def test_clear_trace_of_a_failed_statement_is_undone_and_its_new_records_stay(session):
    session.execute('mock think ["one", "two"]')
    session.execute('think("first")')
    assert not session.execute('[clear_trace(), think("second") + 1]').ok
    assert value(session.execute("trace() |> map(t => t.reply)")) == '["one", "two"]'


def test_a_failed_try_keeps_the_call_and_drops_its_writes_under_run(tmp_path):
    """`soma-kernel run` is one invocation: inside it a failing `try` is the statement that fails."""
    rt = Runtime(note=lambda text: None, project_dir=str(tmp_path))
    rt.load_program(parse(DESK, origin="desk.cell"))
    rt.agent.set_budget(50)
    kind, kinds, used, remaining, status = rt.call("tries", ["t9"])
    assert (kind, kinds, status) == ("broken", ["Think"], "open")
    assert (used, remaining) == (1 + 1, 50 - 2)    # the try's set_budget(1000) is undone, its call is counted


def test_soma_test_keeps_calls_and_drops_the_transitions_of_a_rule_that_raised(tmp_path):
    program = DESK + """
cell test T {
    rules {
        mock think "hi"
        assert_fails ask_then_break("t1")
        assert (trace() |> map(t => t._type)) == ["Think"]
        assert status("t1") == "open"
        mock think ["a", "b"]
        mock Desk.fresh 42
        assert ask_then_break("t2") == 1
        assert fresh() == 1
    }
}"""
    lines = []
    report = run_tests(parse(program, origin="desk.cell"), output=Output(lines.append, lines.append))
    assert lines[:4] == ["test T ...", '  ✓ assert_fails ask_then_break("t1") — raised type: cannot add String and Int',
                         '  ✓ assert (trace() |> map(t => t._type)) == ["Think"]', '  ✓ assert status("t1") == "open"']
    assert lines[5] == ('note: desk.cell:45: discarded 2 unused mock(s) after the rule raised: '
                        'mock think "b"; mock Desk.fresh 42')
    assert lines[6] == "  ✓ assert fresh() == 1"     # the discarded handler mock is gone, not left to answer
    assert report.failed == 1


def test_a_failed_horde_task_counts_its_tokens(tmp_path):
    program = DESK.replace("on fresh()", """on fan(xs: List) { return horde(Desk.ask_then_break, xs) }
    on progress(h: String) { return horde_status(h) }
    on fresh()""")
    rt = Runtime(under_test=True, note=lambda text: None, project_dir=str(tmp_path))
    rt.load_program(parse(program, origin="desk.cell"))
    rt.mocks.think.extend([Scripted("reply", "a"), Scripted("reply", "b")])
    status = rt.call("progress", [rt.call("fan", [["u1", "u2"]])])
    assert (status["failed"], status["tokens"]) == (2, 2 * (1 + 1))


# ------------------------------------------------------------ mocks in the notebook


def test_a_scripted_answer_consumed_by_a_failed_statement_stays_consumed(session):
    session.execute('mock think ["A", "B"]\nmock approve [true, false]\nmock Desk.fresh 7', count=3)
    assert not session.execute('think("q") + 1').ok
    assert not session.execute('approve("ship it") + 1').ok
    assert not session.execute('fresh() + "x" + true').ok
    assert session.execute("%mocks").stream_text() == ('mock think "B"  // queued by cell[3]\n'
                                                       'mock approve false  // queued by cell[3]\n')
    assert value(session.execute('think("q")')) == "B"


def test_a_failing_cell_drops_the_replies_it_queued_and_nothing_consumed(session):
    session.execute('mock think "from an earlier cell"', count=4)
    failed = session.execute('mock think ["x", "y"]\nmock approve true\nthink("a") + 1\nthink("never")', count=5)
    assert failed.error_value == "type: cannot add String and Int"
    assert failed.stream_text("stderr") == ('note: cell[5]:3: discarded 3 unused mock(s) after the rule raised: '
                                            'mock think "x"; mock think "y"; mock approve true\n')
    assert session.execute("%mocks").stream_text() == "no mocks queued\n"   # the earlier cell's reply was consumed
    assert value(session.execute('think("b")')) == "b"                      # the echo, not a stale "x"


def test_an_earlier_cells_replies_stay_queued_after_a_failing_cell(session):
    session.execute('mock think ["one", "two"]', count=6)
    failed = session.execute('mock think "mine"\nthink("q")\nfail("stop", "here")', count=7)
    assert failed.stream_text("stderr") == ('note: cell[7]:3: discarded 1 unused mock(s) after the rule raised: '
                                            'mock think "mine"\n')
    assert session.execute("%mocks").stream_text() == 'mock think "two"  // queued by cell[6]\n'


@pytest.mark.parametrize("failing_line", ['mock think undefined_thing()', '%nonsense', 'let x = 1 +'])
def test_any_failure_of_the_cell_drops_what_it_queued(session, failing_line):
    failed = session.execute(f'mock think "left over"\n{failing_line}', count=8)
    assert not failed.ok
    assert session.execute("%mocks").stream_text() == "no mocks queued\n"


def test_a_rule_that_raised_in_a_cell_drops_that_cells_replies(session):
    session.execute('mock think "kept"', count=9)
    result = session.execute('mock think "gone"\nassert (think("x") + 1) == 2', count=10)
    assert result.stream_text("stderr") == ('note: cell[10]:2: discarded 1 unused mock(s) after the rule raised: '
                                            'mock think "gone"\n')
    assert session.execute("%mocks").stream_text() == "no mocks queued\n"


# ------------------------------------------------------------ a real provider


def test_failing_statements_against_a_provider_count_what_it_charged(tmp_path, monkeypatch):
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_CASSETTE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SOME_VAR", "sk-test-effects")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with LoopbackModel() as server:
        (tmp_path / "soma.toml").write_text(
            f'[agent]\nprovider = "openai"\nurl = "{server.url("openai")}"\nkey = "${{SOME_VAR}}"\nretries = 1\n',
            encoding="utf-8")
        session = Session(str(tmp_path))
        assert session.execute(DESK).ok
        session.execute("set_budget(40)")
        for _ in range(3):
            server.text("fine", input_tokens=9, output_tokens=4)
            assert not session.execute('ask("q") + 1').ok
        assert value(session.execute('[tokens_used(), tokens_remaining(), asked.get("q")]')) == "[39, 1, ()]"
        assert value(session.execute('trace() |> map(t => [t._type, t.tokens])')) == \
            '[["Think", 13], ["Think", 13], ["Think", 13]]'
        assert len(server.requests) == 3
