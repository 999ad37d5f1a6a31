"""The kernel and a real model, through the Jupyter protocol: think() reaching the
loopback server (key only in the header, never in an output), an interrupt
stopping a call in flight and rolling the statement back, approve() asked
through the stdin channel, and %cassette recording then replaying."""

from __future__ import annotations

import json
import time

import pytest
from helpers import running_kernel
from llm_server import LoopbackModel
from test_kernel_protocol import _reply_to, of_type, run, wait_idle

from soma_kernel.session.session import Session

SECRET = "sk-loopback-kernel-90c1"

DESK = """cell agent Desk {
    face {
        signal ask(q: String) -> String
        signal gate(what: String) -> Bool
        tool lookup(order: String) -> Map "Look an order up"
    }
    memory {
        asked: Map<String, Int>
    }
    on lookup(order: String) { return map("order", order, "cents", 900) }
    on ask(q: String) {
        asked.set(q, 1)
        return think(q)
    }
    on gate(what: String) { return approve(what) }
    on asked_count() { return len(asked.keys()) }
}"""


@pytest.fixture
def server():
    """A fresh loopback model server."""
    with LoopbackModel() as started:
        yield started


@pytest.fixture
def kernel(tmp_path, server, monkeypatch):
    """A Soma kernel working in `tmp_path`, whose soma.toml points at the loopback server with ${SOME_VAR}."""
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_APPROVE", "SOMA_LLM_CASSETTE", "SOMA_LLM_CASSETTE_MODE",
                 "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SOME_VAR", SECRET)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    (tmp_path / "soma.toml").write_text(
        f'[agent]\nprovider = "openai"\nurl = "{server.url("openai")}"\nkey = "${{SOME_VAR}}"\nretries = 1\n',
        encoding="utf-8")
    with running_kernel(str(tmp_path / "prefix"), str(tmp_path)) as started:
        manager, client = started
        assert run(client, DESK)[0]["status"] == "ok"
        yield started


def result_text(messages) -> str:
    """The text/plain of the execute_result."""
    return of_type(messages, "execute_result")[0]["data"]["text/plain"]


def test_think_reaches_the_model_and_the_key_stays_in_the_header(kernel, server):
    _, client = kernel
    server.tool("lookup", {"order": "A1"}).text("A1 costs 900 cents")
    reply, messages = run(client, 'ask("How much is A1?")')
    assert reply["status"] == "ok" and result_text(messages) == "A1 costs 900 cents"
    reply, messages = run(client, 'trace() |> map(s => s._type)')
    assert result_text(messages) == '["Think", "ToolCall", "Think"]'
    shown = json.dumps([m["content"] for m in messages])
    assert SECRET not in shown
    assert all(any(SECRET in v for v in r["headers"].values()) for r in server.requests)


def test_an_interrupt_stops_a_call_in_flight_and_rolls_back(kernel, server):
    manager, client = kernel
    server.slow(30, "too late")
    msg_id = client.execute('ask("slow question")')
    deadline = time.monotonic() + 20
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    manager.interrupt_kernel()
    reply = _reply_to(client, msg_id, timeout=30)
    wait_idle(client, msg_id)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert result_text(run(client, "asked_count()")[1]) == "0"
    server.text("fresh answer")
    assert result_text(run(client, 'ask("next")')[1]) == "fresh answer"
    assert [m["content"] for m in server.requests[-1]["body"]["messages"][1:]] == ["next"]


def answering(client, answer: str):
    """A stdin hook that records the prompt and answers `answer`."""
    prompts = []

    def hook(message):
        prompts.append(message["content"]["prompt"])
        client.input(answer)

    return prompts, hook


def test_approve_asks_the_person_through_the_stdin_channel(kernel):
    _, client = kernel
    prompts, hook = answering(client, "yes")
    reply = client.execute_interactive('gate("refund 30000 on o2")', allow_stdin=True, stdin_hook=hook,
                                       timeout=30, output_hook=(outputs := []).append)
    assert reply["content"]["status"] == "ok" and result_text(outputs) == "true"
    assert prompts == ["approve? refund 30000 on o2 [y/N] "]
    prompts, hook = answering(client, "nope")
    client.execute_interactive('gate("delete everything")', allow_stdin=True, stdin_hook=hook,
                               timeout=30, output_hook=(outputs := []).append)
    assert result_text(outputs) == "false"
    _, messages = run(client, 'trace() |> filter(s => s._type == "Approval")')
    assert result_text(messages) == ('[{"_type": "Approval", "action": "refund 30000 on o2", "approved": true}, '
                                     '{"_type": "Approval", "action": "delete everything", "approved": false}]')


def test_without_stdin_approve_fails_closed_and_mocks_keep_precedence(kernel):
    _, client = kernel
    reply = client.execute_interactive('gate("refund")', allow_stdin=False, timeout=30)["content"]
    assert reply["status"] == "error" and "approval_required" in reply["traceback"][0]
    prompts, hook = answering(client, "y")
    client.execute_interactive('mock approve false\ngate("refund")', allow_stdin=True, stdin_hook=hook,
                               timeout=30, output_hook=(outputs := []).append)
    assert prompts == [] and result_text(outputs) == "false"


CREW = """cell agent Crew {
    memory { done: Map<String, Int> }
    on work(x: Int) {
        if approve("pay {x}") { return "paid {x}" }
        return "kept {x}"
    }
    on ask_first(x: Int) {
        let r = think("question {x}")
        done.set("{x}", 1)
        return r
    }
    on pay_all(xs: List) { return horde(Crew.work, xs, map("concurrency", 3, "on_result", "_noted")) }
    on ask_all(xs: List) { return horde(Crew.ask_first, xs, map("concurrency", 3)) }
    on _noted(v: String) { done.set(v, 1) }
    on finished() { return done.keys() |> sort() }
}"""


def test_concurrent_horde_tasks_ask_the_person_through_the_stdin_channel(kernel):
    _, client = kernel
    assert run(client, CREW)[0]["status"] == "ok"
    prompts = []

    def hook(message):
        prompts.append(message["content"]["prompt"])
        client.input("n" if "pay 2" in message["content"]["prompt"] else "y")

    reply = client.execute_interactive("pay_all([1, 2, 3])", allow_stdin=True, stdin_hook=hook, timeout=60)
    assert reply["content"]["status"] == "ok"
    assert sorted(prompts) == ["approve? pay 1 [y/N] ", "approve? pay 2 [y/N] ", "approve? pay 3 [y/N] "]
    assert result_text(run(client, "finished()")[1]) == '["kept 2", "paid 1", "paid 3"]'


def test_an_interrupt_mid_horde_cancels_its_requests_and_keeps_the_session(kernel, server):
    manager, client = kernel
    assert run(client, CREW)[0]["status"] == "ok"
    for _ in range(3):
        server.slow(30, "too late")
    msg_id = client.execute("ask_all([1, 2, 3, 4, 5])")
    deadline = time.monotonic() + 30
    while len(server.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.requests) == 3          # three tasks' requests out at once
    manager.interrupt_kernel()
    reply = _reply_to(client, msg_id, timeout=30)
    wait_idle(client, msg_id)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert result_text(run(client, "finished()")[1]) == "[]"
    server.text("a").text("b")
    assert run(client, "ask_all([7, 8])")[0]["status"] == "ok"
    assert result_text(run(client, "finished()")[1]) == '["7", "8"]'


# ---------------------------------------------------------------- %cassette, in process


def session_in(folder, server) -> Session:
    """A session in `folder` whose soma.toml points at the server."""
    (folder / "soma.toml").write_text(
        f'[agent]\nprovider = "anthropic"\nurl = "{server.url("anthropic")}"\nkey = "${{SOME_VAR}}"\n',
        encoding="utf-8")
    session = Session(str(folder))
    assert session.execute(DESK).error is None
    return session


def test_cassette_magic_records_then_replays_without_the_server(tmp_path, server, monkeypatch):
    monkeypatch.setenv("SOME_VAR", SECRET)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("SOMA_LLM_CASSETTE_MODE", raising=False)
    session = session_in(tmp_path, server)
    shown = session.execute("%cassette talk.jsonl")
    assert shown.stream_text() == "cassette talk.jsonl (mode once): records every exchange (the file does not exist yet)\n"
    server.tool("lookup", {"order": "B2"}).text("B2 is 900 cents")
    assert session.execute('ask("B2?")').result == {"text/plain": "B2 is 900 cents"}
    server.stop()
    monkeypatch.setenv("SOME_VAR", "")
    again = session_in(tmp_path, server)
    assert again.execute("%cassette talk.jsonl").stream_text().startswith(
        "cassette talk.jsonl (mode once): replays its 2 recorded exchanges and calls no provider")
    assert again.execute('ask("B2?")').result == {"text/plain": "B2 is 900 cents"}
    fresh = session_in(tmp_path, server)
    fresh.execute("%cassette talk.jsonl")
    missed = fresh.execute('ask("C3?")')
    assert "no answer was recorded for this request in cassette talk.jsonl" in missed.error
    assert 'messages[0].content: recorded "B2?" — now "C3?"' in missed.error
    assert again.execute("%cassette off").stream_text().startswith("cassette off")
    assert SECRET not in (tmp_path / "talk.jsonl").read_text(encoding="utf-8")


def test_cassette_magic_refuses_an_unknown_mode(tmp_path, server):
    session = session_in(tmp_path, server)
    result = session.execute("%cassette talk.jsonl --mode sometimes")
    assert "unknown cassette mode 'sometimes' — the modes are once, replay, record, new" in result.error
