"""Runtime failure paths: rollback, refusals, agent mocks, bad calls, silly programs.

Every failure must surface as a SomaError with a kind and a line:col — never
as a Python exception of another type.
"""

from __future__ import annotations

import _thread
import signal
import threading

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.mocks import Scripted
from soma_kernel.syntax.parser import parse

LEDGER = """
cell type Outcome {
    variants {
        Done
        Refused { why: String }
    }
}

cell Ledger {
    memory {
        balances: Map<String, Int>
        log: List<String>
        invariant balances >= 0
    }
    state account {
        initial: open
        open -> frozen
        frozen -> closed { guard { reason != "" } }
        open -> closed
    }
    on deposit(who: String, amount: Int) {
        balances.set(who, (balances.get(who) ?? 0) + amount)
        log.push("deposit {who}")
        return balances.get(who)
    }
    on deposit_then_fail(who: String, amount: Int) {
        deposit(who, amount)
        transition(who, "frozen")
        fail("boom", "after the write")
    }
    on guarded_try(who: String) {
        let r = try {
            deposit(who, 5)
            transition(who, "frozen")
            fail("nope", "inside try")
        }
        return r
    }
    on freeze(who: String) { return transition(who, "frozen") }
    on close(who: String, reason: String) { return transition(who, "closed") }
    on close_from(who: String, source: String) { return transition(who, source, "closed") }
    on status_of(who: String) { return get_status(who) }
    on withdraw(who: String, amount: Int) {
        balances.set(who, (balances.get(who) ?? 0) - amount)
    }
    on checked(n: Int) {
        require n > 0 else NotPositive "n was {n}"
        ensure n < 100
        return n
    }
    on one(n: Int) { return n }
    on call_unknown() { return no_such_function(1) }
    on call_arity() { return one(1, 2) }
    on recurse(n: Int) { return recurse(n + 1) }
    on spin() {
        while true {}
    }
    on deposit_then_spin(who: String) {
        deposit(who, 1)
        while true {}
    }
    on ask(q: String) { return think(q) }
    on ask_json(q: String) { return think_json(q) }
    on budgeted(q: String) {
        set_budget(3)
        return think(q)
    }
    on confirm(what: String) { return approve(what) }
    on classify(o: Outcome) {
        return match o {
            Done -> "done"
            Refused { why } -> "refused: {why}"
        }
    }
    on pick(n: Int) {
        return match n {
            0 -> "zero"
            1 || 2 -> "small"
            3..9 -> "digit"
            x if x < 0 -> "negative"
            _ -> "big"
        }
    }
    on no_arm(s: String) {
        return match s {
            "a" -> 1
        }
    }
    on fallback(m: Map) { return m.missing ?? "default" }
    on propagate(n: Int) {
        let r = try { checked(n) }
        return r?
    }
    on divide(a: Int, b: Int) { return a / b }
    on huge_list(n: Int) { return len(range(0, n)) }
}
"""


@pytest.fixture
def notes():
    """Notes the runtime printed."""
    return []


@pytest.fixture
def rt(notes, monkeypatch):
    """A fresh runtime holding the LEDGER program, with no mock configured."""
    for variable in ("SOMA_LLM_MOCK", "SOMA_APPROVE", "SOMA_LLM_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    runtime = Runtime(note=notes.append, under_test=True)
    runtime.load_program(parse(LEDGER, origin="ledger.cell"))
    return runtime


def failure(rt, handler, *args) -> SomaError:
    """The SomaError a call raises (the test fails if it does not raise one)."""
    with pytest.raises(SomaError) as caught:
        rt.call(handler, list(args))
    assert caught.value.span.line > 0, f"{caught.value.text} has no line"
    return caught.value


def test_raised_handler_rolls_back_writes_and_transitions(rt):
    rt.call("deposit", ["ann", 10])
    error = failure(rt, "deposit_then_fail", "ann", 5)
    assert error.kind == "boom"
    assert rt.cells["Ledger"].slots["balances"].data == {"ann": 10}
    assert rt.cells["Ledger"].slots["log"].data == ["deposit ann"]
    assert rt.call("status_of", ["ann"]) == "open"


def test_failing_try_rolls_back_to_its_savepoint(rt):
    rt.call("deposit", ["bob", 1])
    result = rt.call("guarded_try", ["bob"])
    assert result["kind"] == "nope" and result["detail"] == "inside try"
    assert result["error"] == "nope: inside try" and result["value"] is None
    assert rt.cells["Ledger"].slots["balances"].data == {"bob": 1}
    assert rt.call("status_of", ["bob"]) == "open"


def test_invariant_refusal_leaves_the_slot_unchanged(rt):
    rt.call("deposit", ["cat", 3])
    error = failure(rt, "withdraw", "cat", 4)
    assert error.kind == "invariant"
    assert "violates invariant balances >= 0" in error.text
    assert rt.cells["Ledger"].slots["balances"].data == {"cat": 3}


def test_guard_refusal(rt):
    rt.call("freeze", ["dan"])
    error = failure(rt, "close", "dan", "")
    assert error.kind == "guard_failed"
    assert error.text == 'guard failed: frozen → closed requires reason != ""'
    assert rt.call("status_of", ["dan"]) == "frozen"
    assert rt.call("close", ["dan", "audit"]) == {"id": "dan", "from": "frozen", "to": "closed"}


def test_undeclared_edge_names_the_valid_targets(rt):
    rt.call("close", ["eve", "x"])
    error = failure(rt, "freeze", "eve")
    assert error.kind == "invalid_transition"
    assert error.text == "invalid transition: closed → frozen. Valid targets: []"


def test_wrong_source_transition_message(rt):
    error = failure(rt, "close_from", "fay", "frozen")
    assert error.kind == "invalid_transition"
    assert error.text == ("invalid transition: open → closed — transition(id, \"frozen\", \"closed\") "
                          "declares its source, and 'fay' is in 'open', not 'frozen'")


def test_unscripted_think_echoes_and_notes_once(rt, notes):
    assert rt.call("ask", ["hello there"]) == "hello there"
    assert rt.call("ask", ["again"]) == "again"
    assert len(notes) == 1 and notes[0].startswith("note: no LLM key configured")


def test_scripted_think_error(rt):
    rt.mocks.think.append(Scripted("error", "llm: provider down"))
    error = failure(rt, "ask", "q")
    assert error.kind == "llm"
    assert error.text == "think() failed: llm: provider down (scripted by `mock think error`)"


def test_scripted_think_reply_is_consumed(rt):
    rt.mocks.think.append(Scripted("reply", '{"a": 1}'))
    assert rt.call("ask_json", ["q"]) == {"a": 1}
    assert rt.mocks.pending() == []


def test_think_json_refuses_a_non_object(rt):
    rt.mocks.think.append(Scripted("reply", "no json here"))
    assert failure(rt, "ask_json", "q").kind == "json"


def test_budget_exhausted_by_the_prompt(rt):
    error = failure(rt, "budgeted", "a prompt much longer than three tokens")
    assert error.kind == "budget"
    assert "the prompt alone is ~10 tokens, 3 of 3 are left" in error.text


def test_approve_with_nothing_scripted_fails_closed(rt):
    error = failure(rt, "confirm", "refund 5")
    assert error.kind == "approval_required"
    assert error.text.startswith('approval_required: approve("refund 5") has no one to answer it')


def test_approve_pops_the_scripted_answer(rt):
    rt.mocks.approve.append(Scripted("approve", False))
    assert rt.call("confirm", ["x"]) is False


@pytest.mark.parametrize("mode,expected", [("fixed:always this", "always this"), ("echo", "the prompt")])
def test_llm_mock_environment_modes(rt, monkeypatch, notes, mode, expected):
    monkeypatch.setenv("SOMA_LLM_MOCK", mode)
    assert rt.call("ask", ["the prompt"]) == expected
    assert notes == []


def test_unknown_mock_mode_is_not_catchable(rt, monkeypatch):
    monkeypatch.setenv("SOMA_LLM_MOCK", "oracle")
    error = failure(rt, "ask", "q")
    assert error.kind == "config" and not error.catchable


def test_match_on_variants(rt):
    done = rt.evaluate(parse_expr("Done"), {})
    refused = rt.evaluate(parse_expr('Refused { why: "late" }'), {})
    assert rt.call("classify", [done]) == "done"
    assert rt.call("classify", [refused]) == "refused: late"


@pytest.mark.parametrize("n,expected", [(0, "zero"), (2, "small"), (7, "digit"), (-3, "negative"), (50, "big")])
def test_match_on_literals_ranges_guards(rt, n, expected):
    assert rt.call("pick", [n]) == expected


def test_no_matching_arm(rt):
    error = failure(rt, "no_arm", "b")
    assert error.kind == "match" and error.span.line > 0


def test_coalesce_on_a_missing_field(rt):
    assert rt.call("fallback", [{}]) == "default"
    assert rt.call("fallback", [{"missing": 4}]) == 4


def test_require_and_ensure(rt):
    error = failure(rt, "checked", 0)
    assert error.kind == "NotPositive" and error.text == "NotPositive: n was 0"
    error = failure(rt, "checked", 500)
    assert error.kind == "ensure" and error.text == "ensure: ensure n < 100 does not hold"
    assert rt.call("checked", [5]) == 5


def test_try_propagation(rt):
    assert rt.call("propagate", [4]) == 4
    error = failure(rt, "propagate", -1)
    assert error.kind == "NotPositive" and error.text == "NotPositive: n was -1"


def test_wrong_argument_count_between_handlers(rt):
    error = failure(rt, "call_arity")
    assert error.kind == "undefined_variable"
    assert "no handler 'one' takes 2 arguments" in error.text


def test_unknown_function(rt):
    error = failure(rt, "call_unknown")
    assert error.kind == "undefined_variable" and "undefined function 'no_such_function'" in error.text


def test_wrong_argument_type_at_the_boundary(rt):
    error = failure(rt, "one", "seven")
    assert error.kind == "type" and "expected Int for one(n), got String" in error.text


def test_division_by_zero_is_located(rt):
    error = failure(rt, "divide", 1, 0)
    assert error.kind == "division_by_zero"


def test_deep_recursion_is_a_stack_overflow(rt):
    with pytest.raises(SomaError) as caught:
        rt.call("recurse", [0])
    assert caught.value.kind == "stack_overflow" and not caught.value.catchable
    assert rt.call("one", [3]) == 3  # the runtime still works afterwards


def test_infinite_loop_is_interruptible_and_rolled_back(rt):
    # A process a non-interactive shell starts in the background inherits SIGINT
    # ignored, and interrupt_main() then does nothing: the test would spin forever.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            rt.call("deposit_then_spin", ["zed"])
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert rt.cells["Ledger"].slots["balances"].data == {}
    assert rt.call("one", [1]) == 1


def test_ten_million_element_range(rt):
    assert rt.call("huge_list", [10_000_000]) == 10_000_000


def parse_expr(text: str):
    """One expression parsed on its own."""
    from soma_kernel.syntax.parser import parse_fragment

    return parse_fragment(text)[0].expr
