"""Interrupting long work through the real protocol: a model check of a
100 000-state machine (loaded with %load from a generated file) and an endless
loop both stop on interrupt_request with a clean KeyboardInterrupt error, and
the session goes on with its definitions and values intact."""

from __future__ import annotations

import time

import pytest
from helpers import running_kernel
from test_kernel_protocol import _reply_to, of_type, run, wait_idle

STATES = 100_000


def chain_program(states: int) -> str:
    """A cell whose machine is a chain s0 -> s1 -> … of `states` states, with a handler taking the first edge."""
    edges = "\n".join(f"        s{i} -> s{i + 1}" for i in range(states - 1))
    return ("cell Big {\n    face {\n        signal step(id: String) -> String\n    }\n"
            f"    state big {{\n        initial: s0\n{edges}\n    }}\n"
            "    on step(id: String) {\n        transition(id, \"s1\")\n        return \"ok\"\n    }\n}\n")


@pytest.fixture
def kernel(tmp_path):
    """A fresh Soma kernel working in `tmp_path`, the kernelspec from a temporary prefix."""
    with running_kernel(str(tmp_path / "prefix"), str(tmp_path)) as started:
        yield started


def interrupt(manager, client, code: str, after: float) -> tuple[dict, float]:
    """Start `code`, interrupt it `after` seconds later; (its reply, seconds from interrupt to reply)."""
    msg_id = client.execute(code)
    time.sleep(after)
    manager.interrupt_kernel()
    sent = time.monotonic()
    reply = _reply_to(client, msg_id, timeout=30)
    waited = time.monotonic() - sent
    wait_idle(client, msg_id)
    return reply, waited


def assert_clean_interrupt(client, reply: dict) -> None:
    """A KeyboardInterrupt error reply whose published error is one plain line (no Python traceback)."""
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert reply["traceback"] == [
        "KeyboardInterrupt: interrupted — the running statement was rolled back (or the magic stopped); "
        "the session is intact"]


def test_interrupting_a_long_verify_keeps_the_session(kernel, tmp_path):
    manager, client = kernel
    (tmp_path / "big.cell").write_text(chain_program(STATES), encoding="utf-8")
    loaded, _ = run(client, "%load big.cell", timeout=180)
    assert loaded["status"] == "ok"
    assert run(client, "let kept = 41")[0]["status"] == "ok"
    reply, waited = interrupt(manager, client, "%verify", after=0.4)  # %verify of 100 000 states takes ~1.3 s now
    assert_clean_interrupt(client, reply)
    assert waited < 10
    reply, messages = run(client, 'step("i1")\nkept + 1')
    assert reply["status"] == "ok" and of_type(messages, "execute_result")[0]["data"]["text/plain"] == "42"
    state, messages = run(client, "%state Big i1")
    assert "".join(s["text"] for s in of_type(messages, "stream")).startswith("Big i1: s1\n")


def test_interrupting_an_endless_loop_rolls_it_back(kernel):
    manager, client = kernel
    cell = "cell Tally {\n    memory {\n        n: Map<String, Int>\n    }\n    on bump() {\n" \
           "        n.set(\"k\", (n.get(\"k\") ?? 0) + 1)\n        return n.get(\"k\") ?? 0\n    }\n}"
    assert run(client, cell)[0]["status"] == "ok"
    assert run(client, "bump()")[0]["status"] == "ok"
    reply, waited = interrupt(manager, client, "while true { bump() }", after=1.0)
    assert_clean_interrupt(client, reply)
    assert waited < 10
    reply, messages = run(client, "bump()")
    assert of_type(messages, "execute_result")[0]["data"]["text/plain"] == "2"


def test_a_long_push_loop_finishes_and_an_interrupted_one_rolls_back(kernel):
    manager, client = kernel
    built = "let xs = []\nfor i in range(0, 200000) { xs = push(xs, i) }\nlen(xs)"
    reply, messages = run(client, built, timeout=60)
    assert reply["status"] == "ok" and of_type(messages, "execute_result")[0]["data"]["text/plain"] == "200000"
    assert run(client, "let kept = xs")[0]["status"] == "ok"
    reply, waited = interrupt(manager, client, "while true { xs = push(xs, 1) }", after=1.0)
    assert_clean_interrupt(client, reply)
    assert waited < 10
    reply, messages = run(client, "[len(xs), len(kept), xs[199999]]")
    assert of_type(messages, "execute_result")[0]["data"]["text/plain"] == "[200000, 200000, 199999]"
