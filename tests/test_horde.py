"""horde(), horde_status() and vote() without workers: a horde runs right after
the invocation that started it commits, tasks in input order."""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.horde import HordeBudget
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.mocks import Scripted
from soma_kernel.syntax.parser import parse

PROGRAM = """
cell Boss {
    memory {
        got: List<String>
        errors: List<String>
        ends: List<String>
        seen: Map<String, Int>
    }
    on go(xs: List) {
        return horde(Worker.double, xs, map("on_result", "_keep", "on_error", "_oops", "on_done", "_end"))
    }
    on go_opts(xs: List, opts: Map) { return horde(Worker.double, xs, opts) }
    on retry(xs: List, attempts: Int) {
        return horde(Worker.flaky, xs, map("max_attempts", attempts, "on_result", "_keep", "on_error", "_oops"))
    }
    on applied(xs: List) { return horde(Worker.double, xs, map("apply", "_keep")) }
    on with_world(xs: List) {
        return horde(Worker.scaled, xs, map("snapshot", map("factor", 10), "on_result", "_keep"))
    }
    on writes(xs: List) { return horde(Worker.write_then_check, xs, map("on_error", "_oops")) }
    on rounds(n: Int) {
        seen.set("left", n)
        return horde(Worker.double, [n], map("on_result", "_keep", "on_done", "_next"))
    }
    on _next(h: String) {
        ends.push(h)
        let left = (seen.get("left") ?? 0) - 1
        seen.set("left", left)
        if left > 0 { horde(Worker.double, [left], map("on_result", "_keep", "on_done", "_next")) }
    }
    on thinkers(xs: List) { return horde(Worker.ask, xs, map("on_result", "_keep", "on_error", "_oops")) }
    on broke(xs: List) {
        let h = horde(Worker.double, xs, map("on_result", "_keep"))
        fail("boom", "after horde()")
    }
    on _keep(v: Any) { got.push("{v}") }
    on _oops(x: Any, e: Map) { errors.push("{x}:{e.kind}:{e.detail}") }
    on _end(h: String) { ends.push(h) }
    on status(h: String) { return horde_status(h) }
    on results() { return got }
    on failures() { return errors }
    on finished() { return ends }
    on poll(v: Int, k: Int) { return vote(Worker.pick, v, k) }
    on poll_fails(k: Int) { return vote(Worker.never, 1, k) }
    on voter_writes(k: Int) { return vote(Worker.mark_then_think, 1, k) }
    on seeded(xs: List) { return horde(Worker.roll, xs, map("seed", 7, "on_result", "_keep")) }
    on remembering(xs: List) {
        return horde(Worker.count_visits, xs, map("instance", "id", "on_result", "_keep"))
    }
}

cell agent Worker {
    memory { marks: Map<String, Int> }
    on double(x: Int) {
        require x >= 0 else Negative
        return x * 2
    }
    on flaky(x: Int) {
        let n = (marks.get("tries-{x}") ?? 0) + 1
        marks.set("tries-{x}", n)
        return think("try {x}")
    }
    on scaled(x: Int, world: Map) { return x * world.factor }
    on write_then_check(x: Int) {
        Boss.mark(x)
        require x < 0 else TooBig
        return x
    }
    on ask(x: Int) { return think("about {x}") }
    on pick(v: Int) { return think("pick {v}") }
    on never(x: Int) { fail("nope", "voter {x} failed") }
    on mark_then_think(x: Int) {
        Marks.mark(x)
        return think("vote {x}")
    }
    on roll(x: Int) { return random(1000000) }
    on count_visits(p: Map) {
        let n = (recall("visits") ?? 0) + 1
        remember("visits", n)
        return "{p.id}={n}"
    }
}

cell Marks {
    memory { count: Map<String, Int> }
    on mark(x: Int) { count.set("n", (count.get("n") ?? 0) + 1) }
    on marked() { return count.get("n") ?? 0 }
}
"""

PROGRAM = PROGRAM.replace("Boss.mark(x)", "Marks.mark(x)")


@pytest.fixture
def rt():
    runtime = Runtime(under_test=True, note=lambda text: None)
    runtime.load_program(parse(PROGRAM, origin="horde.cell"))
    return runtime


def test_results_come_in_input_order_and_status_counts(rt):
    hid = rt.call("go", [[3, 1, 2]])
    assert hid == "Boss:h1"
    assert rt.call("results", []) == ["6", "2", "4"]
    assert rt.call("finished", []) == ["Boss:h1"]
    assert rt.call("status", [hid]) == {"state": "done", "total": 3, "queued": 0, "running": 0, "done": 3,
                                        "failed": 0, "cancelled": 0, "tokens": 0}


def test_a_failing_task_goes_to_on_error_with_kind_and_detail(rt):
    hid = rt.call("go", [[1, -5, 2]])
    assert rt.call("results", []) == ["2", "4"]
    assert rt.call("failures", []) == ["-5:Negative:"]
    status = rt.call("status", [hid])
    assert (status["done"], status["failed"], status["state"]) == (2, 1, "done")


def test_a_failed_task_leaves_none_of_its_writes(rt):
    rt.call("writes", [[1, 2, 3]])
    assert rt.call("marked", []) == 0
    assert len(rt.call("failures", [])) == 3


def test_retries_run_at_once_until_max_attempts(rt):
    rt.mocks.think.extend([Scripted("error", "llm: down"), Scripted("reply", "ok")])
    hid = rt.call("retry", [[7], 2])
    assert rt.call("results", []) == ["ok"]
    assert rt.call("status", [hid])["done"] == 1
    # the failed attempt's write was rolled back: the tries counter saw one attempt only
    assert rt.cells["Worker"].slot("marks").data == {"tries-7": 1}


def test_without_retries_the_error_reaches_on_error(rt):
    rt.mocks.think.extend([Scripted("error", "llm: down"), Scripted("reply", "unused")])
    rt.call("retry", [[7], 1])
    assert rt.call("failures", []) == ["7:llm:llm: down"]  # a scripted error's detail is its whole text


def test_mocks_are_consumed_in_task_order(rt):
    rt.mocks.think.extend([Scripted("reply", "first"), Scripted("reply", "second")])
    rt.call("thinkers", [[1, 2]])
    assert rt.call("results", []) == ["first", "second"]


def test_apply_runs_at_the_end_in_input_order(rt):
    rt.call("applied", [[5, 4]])
    assert rt.call("results", []) == ["10", "8"]


def test_snapshot_is_the_second_argument(rt):
    rt.call("with_world", [[1, 2]])
    assert rt.call("results", []) == ["10", "20"]


def test_on_done_starts_the_next_round(rt):
    rt.call("rounds", [3])
    assert rt.call("results", []) == ["6", "4", "2"]
    assert rt.call("finished", []) == ["Boss:h1", "Boss:h2", "Boss:h3"]


def test_a_horde_of_a_failed_invocation_never_runs(rt):
    with pytest.raises(SomaError):
        rt.call("broke", [[1]])
    assert rt.call("results", []) == []
    with pytest.raises(SomaError, match="no horde"):
        rt.call("status", ["Boss:h1"])


@pytest.mark.parametrize("opts, message", [
    ({"concurrency": 0}, "option 'concurrency' must be an Int 1–1000, got 0"),
    ({"concurrency": 1001}, "option 'concurrency' must be an Int 1–1000"),
    ({"max_attempts": 11}, "option 'max_attempts' must be an Int 1–10"),
    ({"budget_tokens": "lots"}, "option 'budget_tokens' must be an Int"),
    ({"colour": 1}, "unknown option 'colour'"),
    ({"on_result": "_nothing"}, "on_result '_nothing' is not a handler of Boss taking 1 argument"),
    ({"on_error": "_keep"}, "on_error '_keep' is not a handler of Boss taking 2 arguments"),
    ({"on_result": "_keep", "apply": "_keep"}, "not both"),
    ({"snapshot": 1}, "Worker.double must be a handler taking 2 arguments"),
])
def test_bad_options_are_refused_with_a_clear_message(rt, opts, message):
    with pytest.raises(SomaError, match=message) as err:
        rt.call("go_opts", [[1], opts])
    assert err.value.kind == "type"
    assert rt.hordes.by_id == {}


BUDGETED = """cell Boss2 {
    memory { errors: List<String>  judged: List<String> }
    on tight(xs: List, limit: Int) {
        return horde(Worker2.ask_short, xs, map("budget_tokens", limit, "on_error", "_oops"))
    }
    on judged_by(xs: List, limit: Int) {
        return horde(Worker2.ask_short, xs, map("budget_tokens", limit, "on_result", "_judge"))
    }
    on nested(limit: Int, own: Int) {
        return horde(Worker2.spawn, [own], map("budget_tokens", limit))
    }
    on _oops(x: Any, e: Map) { errors.push(e.kind) }
    on _judge(v: String) { judged.push(think("judge {v}", map("max_tokens", 10))) }
    on status(h: String) { return horde_status(h) }
}
cell agent Worker2 {
    memory { spawned: Map<String, String> }
    on ask_short(x: Int) { return think("about {x}", map("max_tokens", 10)) }
    on spawn(own: Int) {
        let opts = if own > 0 { map("budget_tokens", own) } else { map() }
        spawned.set("h", horde(Worker2.ask_short, [1, 2, 3], opts))
        return 0
    }
    on child() { return spawned.get("h") }
}
"""


@pytest.fixture
def budgeted(rt):
    rt.define(parse(BUDGETED, origin="b.cell").items)
    return rt


def test_a_request_reserves_its_bound_and_a_refusal_stops_the_horde(budgeted):
    # "about 1" reserves 7 bytes + 8·1 message + 16 + max_tokens 10 = 41 and spends
    # ceil(7/4) + 10 = 12; the second task needs 41 more: 12 + 41 > 50
    budgeted.mocks.think.extend([Scripted("reply", "x" * 40), Scripted("reply", "y")])
    hid = budgeted.call("tight", [[1, 2, 3], 50])
    status = budgeted.call("status", [hid], cell="Boss2")
    assert status == {"state": "exhausted", "total": 3, "queued": 0, "running": 0, "done": 1, "failed": 0,
                      "cancelled": 2, "tokens": 12, "budget_tokens": 50}
    assert budgeted.cells["Boss2"].slot("errors").data == []      # a stopped task is no failure
    assert list(budgeted.mocks.think) == [Scripted("reply", "y")]          # the refused request never ran


def test_the_budget_fits_every_request_it_can_pay_for(budgeted):
    budgeted.mocks.think.extend([Scripted("reply", "x" * 40)] * 3)
    status = budgeted.call("status", [budgeted.call("tight", [[1, 2, 3], 41 * 3])], cell="Boss2")
    assert (status["state"], status["done"], status["tokens"]) == ("done", 3, 36)


def test_a_budget_refusal_message_names_the_ceiling_and_what_is_held():
    budget = HordeBudget(100)
    budget.reserve(60)
    with pytest.raises(SomaError) as refused:
        budget.reserve(50)
    assert refused.value.kind == "budget"
    assert refused.value.detail == ("token budget exhausted: horde budget_tokens 100 — 0 spent, "
                                    "60 reserved by calls in flight, this call needs up to 50")
    budget.settle(60, 7)
    assert (budget.spent, budget.reserved, budget.is_exhausted()) == (7, 0, True)


def test_callbacks_think_under_the_horde_budget(budgeted):
    budgeted.mocks.think.extend([Scripted("reply", "a"), Scripted("reply", "ok"), Scripted("reply", "b"),
                                 Scripted("reply", "fine")])
    status = budgeted.call("status", [budgeted.call("judged_by", [[1, 2], 1000])], cell="Boss2")
    # each task spends ceil(7/4) + 1 = 3, each judgement ceil(7/4) + 1 = 3: the budget counts all four
    assert (status["state"], status["done"], status["tokens"]) == ("done", 2, 12)
    assert budgeted.cells["Boss2"].slot("judged").data == ["ok", "fine"]
    budgeted.mocks.think.extend([Scripted("reply", "x" * 40), Scripted("reply", "late")])
    status = budgeted.call("status", [budgeted.call("judged_by", [[1, 2], 60])], cell="Boss2")
    # the task fits (41), its judgement (80) does not: the horde stops there
    assert (status["state"], status["done"], status["cancelled"]) == ("exhausted", 1, 1)


def test_a_horde_started_by_a_task_spends_from_its_parents_budget(budgeted):
    budgeted.mocks.think.extend([Scripted("reply", "x" * 40)] * 3)
    parent = budgeted.call("nested", [50, 0])
    child = budgeted.call("child", [])
    status = budgeted.call("status", [child], cell="Boss2")
    assert (status["state"], status["done"], status["cancelled"], status["tokens"]) == ("exhausted", 1, 2, 12)
    assert "budget_tokens" not in status
    assert budgeted.call("status", [parent], cell="Boss2")["done"] == 1


def test_a_nested_horde_with_its_own_budget_still_stops_at_its_parents(budgeted):
    budgeted.mocks.think.extend([Scripted("reply", "x" * 40)] * 3)
    budgeted.call("nested", [50, 10000])
    status = budgeted.call("status", [budgeted.call("child", [])], cell="Boss2")
    assert (status["state"], status["done"], status["cancelled"], status["budget_tokens"]) == ("exhausted", 1, 2, 10000)


def test_tasks_start_with_fresh_tokens_and_charge_the_caller(rt):
    rt.mocks.think.extend([Scripted("reply", "one"), Scripted("reply", "two")])
    rt.agent.set_budget(5000)
    hid = rt.call("thinkers", [[1, 2]])
    assert rt.call("status", [hid])["done"] == 2
    assert (rt.agent.budget, rt.agent.used) == (5000, 2 * (2 + 1))     # the caller pays for its tasks
    assert rt.call("status", [hid])["tokens"] == 2 * (2 + 1)


def test_a_callers_budget_below_a_requests_bound_stops_the_horde(rt):
    # think("about 1") reserves 7 + 8 + 16 + 2048 (max_tokens by default): a 5-token budget sends nothing
    rt.mocks.think.extend([Scripted("reply", "one"), Scripted("reply", "two")])
    rt.agent.set_budget(5)
    status = rt.call("status", [rt.call("thinkers", [[1, 2]])])
    assert (status["state"], status["done"], status["cancelled"], status["failed"]) == ("exhausted", 0, 2, 0)
    assert rt.agent.used == 0
    assert rt.call("failures", []) == []                   # a stopped task is no failure: no on_error


def test_vote_tallies_by_printed_value(rt):
    rt.mocks.think.extend([Scripted("reply", "b"), Scripted("reply", "a"), Scripted("reply", "a")])
    result = rt.call("poll", [1, 3])
    assert result == {"winner": "a", "count": 2, "k": 3, "unanimous": False, "errors": 0, "votes": ["b", "a", "a"]}


def test_vote_ties_go_to_the_earliest_and_failed_voters_count_as_errors(rt):
    rt.mocks.think.extend([Scripted("reply", "b"), Scripted("error", "llm: down"), Scripted("reply", "a")])
    result = rt.call("poll", [1, 3])
    assert (result["winner"], result["count"], result["errors"], result["votes"]) == ("b", 1, 1, ["b", "a"])


def test_vote_unanimous(rt):
    rt.mocks.think.extend([Scripted("reply", "yes")] * 2)
    assert rt.call("poll", [1, 2])["unanimous"] is True


def test_vote_all_failing_raises_the_first_error(rt):
    with pytest.raises(SomaError, match="voter 1 failed") as err:
        rt.call("poll_fails", [2])
    assert err.value.kind == "nope"


def test_failed_voters_are_rolled_back(rt):
    rt.mocks.think.extend([Scripted("reply", "a"), Scripted("error", "llm: down"), Scripted("reply", "a")])
    assert rt.call("voter_writes", [3])["errors"] == 1
    assert rt.call("marked", []) == 2


def test_seed_makes_each_task_random_repeatable(rt):
    rt.call("seeded", [[1, 2, 3]])
    again = Runtime(under_test=True, note=lambda text: None)
    again.load_program(parse(PROGRAM, origin="horde.cell"))
    again.call("seeded", [[1, 2, 3]])
    first = rt.call("results", [])
    assert first == again.call("results", [])
    assert len(set(first)) == 3


def test_instance_memory_carries_over_between_hordes(rt):
    rt.call("remembering", [[{"id": "a"}, {"id": "b"}]])
    rt.call("remembering", [[{"id": "a"}]])
    assert rt.call("results", []) == ["a=1", "b=1", "a=2"]


@pytest.mark.parametrize("k", [0, 26, -1])
def test_vote_k_is_checked(rt, k):
    with pytest.raises(SomaError, match=f"k must be an Int 1–25, got {k}"):
        rt.call("poll", [1, k])


def test_check_accepts_the_builtins_and_handler_references():
    from soma_kernel.analysis.check import check_program

    report = check_program(parse(PROGRAM, origin="horde.cell"))
    assert [d.message for d in report.errors] == []
