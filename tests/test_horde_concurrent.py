"""Concurrent hordes (the notebook, `soma-kernel run`): up to `concurrency` tasks at once
against a loopback model, with the semantics of a sequential run. Nothing here times
anything: the model server counts the requests it has in flight and holds them until
enough are in (tests/horde_server.py)."""

from __future__ import annotations

import json
import os
import signal

import pytest

from horde_server import CrowdModel
from soma_kernel.project.settings import parse_project_text
from soma_kernel.runtime.agent import request_bound
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.agent import DEFAULT_SYSTEM
from soma_kernel.syntax.parser import parse

PROGRAM = """
cell Boss {
    memory {
        got: List<String>
        done: List<Int>
        log: List<Int>
        total: Map<String, Int>
        invariant total <= 100
    }
    on fan(xs: List, c: Int) { return horde(Worker.ask, xs, map("concurrency", c, "apply", "_keep")) }
    on fan_ordered(xs: List, c: Int) { return horde(Worker.ask_then_mark, xs, map("concurrency", c, "apply", "_keep")) }
    on fan_seeded(xs: List, c: Int) {
        return horde(Worker.roll, xs, map("concurrency", c, "seed", 11, "apply", "_keep"))
    }
    on fan_adding(xs: List, c: Int) { return horde(Worker.add, xs, map("concurrency", c)) }
    on fan_logging(xs: List, c: Int) { return horde(Worker.log_then_ask, xs, map("concurrency", c)) }
    on fan_careful(xs: List, c: Int) { return horde(Worker.ask_then_log, xs, map("concurrency", c)) }
    on fan_budget(xs: List, c: Int, b: Int) {
        return horde(Worker.short, xs, map("concurrency", c, "budget_tokens", b, "on_result", "_keep"))
    }
    on fan_short(xs: List, c: Int) { return horde(Worker.short, xs, map("concurrency", c)) }
    on started(xs: List, c: Int) {
        log.push(-1)
        return horde(Worker.ask_then_log, xs, map("concurrency", c))
    }
    on _keep(v: String) { got.push(v) }
    on mark(x: Int) { done.push(x) }
    on add30() { total.set("t", (total.get("t") ?? 0) + 30) }
    on note(x: Int) { log.push(x) }
    on status(h: String) { return horde_status(h) }
    on results() { return got }
    on order() { return done }
    on logged() { return log }
    on sum() { return total.get("t") ?? 0 }
    on poll(k: Int) { return vote(Worker.ask, 7, k) }
    on watched(xs: List, c: Int) {
        let h = horde(Worker.ask_then_mark, xs, map("concurrency", c, "on_result", "_seen"))
        total.set("h", 0)
        got.push(h)
        return h
    }
    on _seen(v: String) {
        let s = horde_status(got.get(0))
        got.push("{s.running} running, {s.done} done, {s.queued} queued")
    }
    on meet(people: List) { return horde(Person.speak, people, map("instance", "id", "concurrency", 4)) }
}

cell agent Person {
    on speak(p: Map) { return think("task {p.n} {p.id} speaks") }
}

cell agent Worker {
    on ask(x: Int) { return think("task {x}") }
    on ask_then_mark(x: Int) {
        let r = think("task {x}")
        Boss.mark(x)
        think("ended {x}")
        return r
    }
    on roll(x: Int) {
        let r = think("task {x}")
        return "{r}:{random(1000000)}"
    }
    on add(x: Int) {
        let r = think("task {x}")
        Boss.add30()
        return r
    }
    on log_then_ask(x: Int) {
        Boss.note(x)
        let r = think("step {x}")
        require x % 2 == 0 else Odd
        return r
    }
    on ask_then_log(x: Int) {
        let r = think("task {x}")
        Boss.note(x)
        require x != 2 else Two
        return r
    }
    on short(x: Int) { return think("task {x}", map("max_tokens", 50)) }
}
"""


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    """No proxy for loopback, a key for the toml to name."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("CROWD_KEY", "loopback-key")
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_CASSETTE"):
        monkeypatch.delenv(name, raising=False)


def runtime_for(model: CrowdModel, under_test: bool = False) -> Runtime:
    """A runtime as `soma-kernel run` makes one, its model the loopback server."""
    toml = f'[agent]\nprovider = "openai"\nurl = "{model.url}"\nkey = "${{CROWD_KEY}}"\nretries = 0\n'
    rt = Runtime(project=parse_project_text(toml, "./soma.toml"), note=lambda text: None, under_test=under_test)
    rt.load_program(parse(PROGRAM, "crowd.cell"))
    return rt


@pytest.mark.parametrize("tasks, concurrency", [(8, 4), (6, 6), (5, 2)])
def test_at_most_concurrency_requests_are_in_flight_and_that_many_are(tasks, concurrency):
    with CrowdModel(hold=concurrency, expected=tasks) as model:
        rt = runtime_for(model)
        hid = rt.call("fan", [list(range(tasks)), concurrency])
        assert model.peak == concurrency
        assert rt.call("results", []) == [f"re: task {i}" for i in range(tasks)]
        assert rt.call("status", [hid])["done"] == tasks


def test_under_soma_test_and_with_concurrency_1_tasks_run_one_at_a_time():
    for under_test, concurrency in ((True, 4), (False, 1)):
        with CrowdModel() as model:
            rt = runtime_for(model, under_test=under_test)
            rt.call("fan", [list(range(4)), concurrency])
            assert model.peak == 1
            assert model.prompts == [f"task {i}" for i in range(4)]


def test_apply_gets_results_in_input_order_though_tasks_end_in_reverse():
    with CrowdModel(hold=4, reverse=True) as model:
        rt = runtime_for(model)
        rt.call("fan_ordered", [[0, 1, 2, 3], 4])
        assert rt.call("order", []) == [3, 2, 1, 0]
        assert rt.call("results", []) == ["re: task 0", "re: task 1", "re: task 2", "re: task 3"]


def test_a_seeded_horde_gives_the_results_of_a_sequential_run():
    results = []
    for concurrency in (1, 5):
        with CrowdModel(hold=concurrency, expected=10) as model:
            rt = runtime_for(model)
            rt.call("fan_seeded", [list(range(10)), concurrency])
            results.append(rt.call("results", []))
    assert results[0] == results[1]
    assert len({r.split(":")[-1] for r in results[0]}) == 10


def test_a_failing_task_is_rolled_back_alone_while_others_write():
    with CrowdModel(hold=5, expected=5) as model:
        rt = runtime_for(model)
        hid = rt.call("fan_careful", [[0, 1, 2, 3, 4], 5])
        assert model.peak == 5
        assert sorted(rt.call("logged", [])) == [0, 1, 3, 4]
        status = rt.call("status", [hid])
        assert (status["done"], status["failed"]) == (4, 1)


def test_invariants_hold_for_concurrent_writers_as_in_a_sequential_run():
    with CrowdModel(hold=5, expected=5) as model:
        rt = runtime_for(model)
        hid = rt.call("fan_adding", [[0, 1, 2, 3, 4], 5])
        assert model.peak == 5
        assert rt.call("sum", []) == 90
        status = rt.call("status", [hid])
        assert (status["done"], status["failed"]) == (3, 2)


def test_a_task_holding_an_uncommitted_write_keeps_the_runtime_through_its_request():
    with CrowdModel() as model:
        rt = runtime_for(model)
        hid = rt.call("fan_logging", [list(range(6)), 6])
        assert model.peak == 1      # each task wrote before its request: they are serialised
        assert rt.call("logged", []) == [0, 2, 4]
        assert rt.call("status", [hid])["failed"] == 3


def budget_for(requests: int) -> int:
    """A budget_tokens that pays for exactly `requests` of Worker.short's requests (13 tokens each spent:
    12 reported, one more for the reply's 10 characters)."""
    sent = json.dumps({"system": DEFAULT_SYSTEM, "messages": [{"role": "user", "content": "task 0"}], "tools": []})
    bound = request_bound(len(sent.encode()), 2, 50)
    return bound + 13 * (requests - 1) + 6


def test_budget_exhaustion_stops_new_requests_as_in_a_sequential_run():
    for concurrency in (1, 4):
        with CrowdModel() as model:
            rt = runtime_for(model)
            hid = rt.call("fan_budget", [list(range(9)), concurrency, budget_for(5)])
            status = rt.call("status", [hid])
            assert len(model.prompts) == 5
            assert (status["state"], status["done"], status["cancelled"]) == ("exhausted", 5, 4)
            assert status["tokens"] == 5 * 13


def test_the_callers_budget_stops_new_requests_as_in_a_sequential_run():
    # `soma-kernel run`: set_budget before the horde; the caller's budget reserves as budget_tokens does
    for concurrency in (1, 4, 9):
        with CrowdModel() as model:
            rt = runtime_for(model)
            rt.agent.set_budget(budget_for(5) + 20)
            rt.agent.used = 20
            hid = rt.call("fan_short", [list(range(9)), concurrency])
            status = rt.call("status", [hid])
            assert len(model.prompts) == 5
            assert (status["state"], status["done"], status["cancelled"]) == ("exhausted", 5, 4)
            assert rt.agent.used == 20 + 5 * 13 <= rt.agent.budget


def test_vote_makes_its_calls_at_once():
    with CrowdModel(hold=3, expected=3) as model:
        rt = runtime_for(model)
        result = rt.call("poll", [3])
        assert model.peak == 3
        assert (result["winner"], result["count"], result["unanimous"]) == ("re: task 7", 3, True)


def test_an_interrupt_mid_horde_cancels_it_and_leaves_the_runtime_intact():
    # 4 workers, a model that holds every request until the test releases it (hold 5 > 4):
    # the third request sends the interrupt, and no task can end before it
    with CrowdModel(hold=5, on_request=lambda n: n == 3 and os.kill(os.getpid(), signal.SIGINT)) as model:
        rt = runtime_for(model)
        with pytest.raises(KeyboardInterrupt):
            rt.call("started", [list(range(8)), 4])
        assert rt.call("logged", []) == [-1]          # the statement committed, no task wrote
        status = rt.call("status", ["Boss:h1"])
        assert (status["state"], status["done"], status["running"], status["cancelled"]) == ("cancelled", 0, 0, 8)
        model.release()                                 # the cancelled requests come back: nothing of them stays
        model.hold = 0
        rt.call("fan", [[5, 6], 2])
        assert rt.call("results", []) == ["re: task 5", "re: task 6"]
        assert rt.call("logged", []) == [-1]
        assert rt.call("status", ["Boss:h1"])["cancelled"] == 8


def test_tasks_of_one_instance_take_turns_and_carry_its_conversation():
    people = [{"id": "a", "n": 0}, {"id": "b", "n": 1}, {"id": "a", "n": 2}, {"id": "c", "n": 3}]
    with CrowdModel(hold=3, expected=3) as model:
        rt = runtime_for(model)
        rt.call("meet", [people])
        assert model.peak == 3      # a, b and c at once; the second a waits for the first
        second_a = [c for c in model.conversations if c[-1] == "task 2 a speaks"]
        assert second_a == [["task 0 a speaks", "re: task 0 a speaks", "task 2 a speaks"]]


APPROVING = """
cell agent Clerk {
    memory { asked: List<String> }
    on check(x: Int) {
        let r = think("task {x}")
        if approve("pay {x}") { return r }
        return "refused {x}"
    }
    on run_all(xs: List) { return horde(Clerk.check, xs, map("concurrency", 4, "apply", "_keep")) }
    on _keep(v: String) { asked.push(v) }
    on kept() { return asked }
}
"""


def test_approve_questions_from_concurrent_tasks_reach_the_person_one_at_a_time():
    import threading

    asking, most, lock = [0], [0], threading.Lock()

    def person(action: str) -> bool:
        with lock:
            asking[0] += 1
            most[0] = max(most[0], asking[0])
        try:
            return action != "pay 2"
        finally:
            with lock:
                asking[0] -= 1

    with CrowdModel(hold=4, expected=4) as model:
        toml = f'[agent]\nprovider = "openai"\nurl = "{model.url}"\nkey = "${{CROWD_KEY}}"\nretries = 0\n'
        rt = Runtime(project=parse_project_text(toml, "./soma.toml"), note=lambda text: None)
        rt.load_program(parse(APPROVING, "clerk.cell"))
        rt.agent.ask = person
        rt.call("run_all", [[0, 1, 2, 3]])
        assert model.peak == 4 and most[0] == 1
        assert rt.call("kept", []) == ["re: task 0", "re: task 1", "refused 2", "re: task 3"]


def test_horde_status_counts_running_and_done_tasks_live():
    with CrowdModel(hold=4, reverse=True) as model:
        rt = runtime_for(model)
        rt.call("watched", [[0, 1, 2, 3, 4], 4])
        assert rt.call("results", [])[1:] == ["3 running, 1 done, 1 queued", "3 running, 2 done, 0 queued",
                                              "2 running, 3 done, 0 queued", "1 running, 4 done, 0 queued",
                                              "0 running, 5 done, 0 queued"]
