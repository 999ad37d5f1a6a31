"""The context that runs a horde pays for it (issues 20 §1 and 23): every token a task, a
callback or a nested horde is charged is charged to the caller's budget too — the notebook
session's, the `soma test` rule's — so tokens_used() after the horde includes it, and that
budget caps the horde by the reserve-before-request rule of budget_tokens. Each mocked request
of Worker.work reserves 6 + 8 + 16 + 10 = 40 tokens and spends 2 + 2 = 4 (the echo of
"work x", max_tokens 10); spent never passes the budget (every mock spends at most what it
reserved)."""

from __future__ import annotations

import pytest

from helpers import value
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.horde import HordeBudget
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse
from soma_kernel.testing.runner import Output, run_tests

CELLS = """cell Boss {
    memory { judged: List<String>  seen: Map<String, Int> }
    on judged_fan(xs: List, c: Int) {
        return horde(Worker.work_or_fail, xs, map("concurrency", c, "on_result", "_judge"))
    }
    on counted_fan(xs: List, c: Int) {
        return horde(Worker.counted, xs, map("concurrency", c, "apply", "_keep"))
    }
    on _keep(v: Int) { judged.push("{v}") }
    on kept() { return judged }
    on _judge(v: String) { judged.push(think("judge {v}", map("max_tokens", 10))) }
    on capped(b: Int, c: Int) {
        set_budget(b)
        return horde(Worker.work, ["a", "b", "c", "d", "e", "f"], map("concurrency", c, "on_done", "_end"))
    }
    on _end(h: String) { seen.set("used", tokens_used()) }
    on used_at_end() { return seen.get("used") ?? -1 }
    on status(h: String) { return horde_status(h) }
}

cell agent Worker {
    on work(x: String) { return think("work {x}", map("max_tokens", 10)) }
    on work_or_fail(x: String) {
        let r = think("work {x}", map("max_tokens", 10))
        require x != "b" else Bad
        return r
    }
    on counted(x: String) {
        think("work {x}", map("max_tokens", 10))
        return tokens_used()
    }
    on spawn(x: String) {
        think("work {x}", map("max_tokens", 10))
        horde(Worker.work, [x, x], map("concurrency", 2))
        return x
    }
}
"""
INPUTS = '["a", "b", "c", "d", "e", "f"]'
BOUND, SPENT = 40, 4   # what one Worker.work request reserves and spends


@pytest.fixture
def session(tmp_path):
    """A notebook session with the two cells defined."""
    session = Session(directory=str(tmp_path))
    assert session.execute(CELLS).ok
    return session


def ran(session, source: str) -> str:
    """The value of a statement that must succeed ("" for one without a value, a `let`)."""
    result = session.execute(source)
    assert result.ok, result.error
    return value(result) if result.result is not None else ""


@pytest.mark.parametrize("concurrency", [1, 8])
@pytest.mark.parametrize("budget", [None, 1000])
def test_tokens_used_after_a_horde_counts_its_tasks(session, concurrency, budget):
    if budget is not None:
        ran(session, f"set_budget({budget})")
    ran(session, f'let h = horde(Worker.work, {INPUTS}, map("concurrency", {concurrency}))')
    assert ran(session, "horde_status(h).tokens") == str(6 * SPENT)
    assert ran(session, "tokens_used()") == str(6 * SPENT)
    assert ran(session, "tokens_remaining()") == ("-1" if budget is None else str(budget - 6 * SPENT))
    ran(session, f'let h2 = horde(Worker.work, ["g"], map("concurrency", {concurrency}))')
    assert ran(session, "tokens_used()") == str(7 * SPENT)      # spent adds up across statements


@pytest.mark.parametrize("concurrency", [1, 8])
def test_inside_a_task_tokens_used_counts_that_task_alone(session, concurrency):
    ran(session, "set_budget(1000)")
    ran(session, 'think("warm up", map("max_tokens", 10))')
    before = int(ran(session, "tokens_used()"))
    ran(session, f'Boss.counted_fan(["a", "b", "c"], {concurrency})')
    assert ran(session, "Boss.kept()") == '["4", "4", "4"]'      # each task counts from 0
    assert ran(session, "tokens_used()") == str(before + 3 * SPENT)


def fitting(left: int) -> int:
    """How many of six Worker.work requests a caller's `left` tokens admit: request k is sent
    when the k - 1 before it spent plus its bound fit."""
    return sum(1 for k in range(6) if k * SPENT + BOUND <= left)


@pytest.mark.parametrize("concurrency", [1, 8])
@pytest.mark.parametrize("budget, before", [(39, 0), (40, 0), (48, 0), (56, 0), (60, 8), (1000, 980)])
def test_a_session_budget_smaller_than_the_horde_needs_stops_it(session, concurrency, budget, before):
    ran(session, f"set_budget({budget})")
    if before:
        ran(session, 'think("' + "x" * (4 * before - 4) + '", map("max_tokens", 1))')
        assert ran(session, "tokens_used()") == str(before)
    ran(session, f'let h = horde(Worker.work, {INPUTS}, map("concurrency", {concurrency}))')
    done = fitting(budget - before)
    status = ran(session, "[horde_status(h).state, horde_status(h).done, horde_status(h).cancelled, "
                          "horde_status(h).failed]")
    assert status == f'["exhausted", {done}, {6 - done}, 0]'
    assert ran(session, "tokens_used()") == str(before + done * SPENT)
    assert before + done * SPENT <= budget
    refused = session.execute('think("one more", map("max_tokens", 10))')
    assert refused.ok == (budget - before - done * SPENT >= 2)   # the session's own check goes on as before


@pytest.mark.parametrize("concurrency", [1, 8])
def test_callbacks_and_failed_tasks_are_charged_to_the_session(session, concurrency):
    ran(session, "set_budget(1000)")
    ran(session, f'let h = Boss.judged_fan(["a", "b", "c"], {concurrency})')
    assert ran(session, "[horde_status(h).done, horde_status(h).failed]") == "[2, 1]"
    # three tasks spend 4 each (the failed one's tokens stay spent), two judgements of
    # "work a"/"work c" spend ceil(12/4) + ceil(12/4) = 6 each
    assert ran(session, "tokens_used()") == str(3 * SPENT + 2 * 6)


@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_nested_horde_is_charged_to_the_session_too(session, concurrency):
    ran(session, "set_budget(1000)")
    ran(session, f'let h = horde(Worker.spawn, ["a", "b"], map("concurrency", {concurrency}))')
    assert ran(session, "horde_status(h).done") == "2"
    assert ran(session, 'horde_status("Worker:h2").done + horde_status("Worker:h3").done') == "4"
    assert ran(session, "tokens_used()") == str(2 * SPENT + 4 * SPENT)


def test_a_nested_horde_stops_at_what_the_session_has_left(session):
    # the two spawning tasks spend 8 of 48; each nested horde then has 40 left: one request each
    ran(session, "set_budget(48)")
    ran(session, 'let h = horde(Worker.spawn, ["a", "b"], map("concurrency", 1))')
    assert ran(session, "horde_status(h).done") == "2"
    assert ran(session, '[horde_status("Worker:h2").state, horde_status("Worker:h2").done]') == '["exhausted", 1]'
    assert ran(session, '[horde_status("Worker:h3").state, horde_status("Worker:h3").done]') == '["exhausted", 0]'
    assert ran(session, "tokens_used()") == str(3 * SPENT)


RULES = CELLS + """
cell test Budgeted {
    rules {
        let h = Boss.capped(48, 4)
        assert Boss.status(h).state == "exhausted"
        assert Boss.status(h).done == 3
        assert Boss.status(h).cancelled == 3
        assert Boss.used_at_end() == 12
        let wide = Boss.capped(10000, 4)
        assert Boss.status(wide).state == "done"
        assert Boss.used_at_end() == 24
        assert tokens_used() == 0
    }
}
"""


def test_a_soma_test_rules_budget_caps_the_horde_it_starts():
    lines = []
    report = run_tests(parse(RULES, origin="rules.cell"), output=Output(lines.append, lines.append))
    assert report.failed == 0, lines
    assert report.passed == 7


def test_a_request_spending_more_than_it_reserved_overshoots_by_that_difference_only():
    caller = HordeBudget(100, name="set_budget(100)")
    caller.reserve(60)
    caller.settle(60, 70)           # a provider reported 10 more than the bound
    assert caller.spent == 70
    with pytest.raises(SomaError) as refused:
        caller.reserve(31)
    assert refused.value.detail == ("token budget exhausted: set_budget(100) — 70 spent, 0 reserved by calls "
                                    "in flight, this call needs up to 31")
    unlimited = HordeBudget(None, name="no set_budget()")
    unlimited.reserve(10 ** 9)
    assert not unlimited.waits_for_others(10 ** 9)
    unlimited.settle(10 ** 9, 5)
    assert (unlimited.spent, unlimited.reserved, unlimited.is_exhausted()) == (5, 0, False)
