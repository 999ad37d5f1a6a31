"""`soma-kernel run` and `soma-kernel test` against the loopback model server,
through the real SDKs in a child process: the issue's scenario (one face
tool, a key from ${SOME_VAR}, retries = 2, a first 429), where the key goes,
and a cassette recorded, then replayed with the server stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from llm_server import LoopbackModel

SECRET = "sk-loopback-cli-51d0e2"
CLEARED = ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_URL", "SOMA_LLM_MODEL", "SOMA_LLM_RETRIES",
           "SOMA_LLM_TIMEOUT_MS", "SOMA_LLM_CASSETTE", "SOMA_LLM_CASSETTE_MODE", "ANTHROPIC_API_KEY",
           "OPENAI_API_KEY", "SOMA_APPROVE")

PROGRAM = """
cell agent Refunds {
    face {
        signal decide(order: String) -> String
        tool lookup_order(order: String) -> Map "Order amount and days since delivery"
    }
    on lookup_order(order: String) {
        return map("order", order, "amount", 4000, "days", 3)
    }
    on decide(order: String) {
        return think("May we refund order {order}? Look it up first.", "You are a strict support agent.")
    }
}

cell test RefundsAgainstAModel {
    rules {
        assert decide("A1") == "Refund A1: 4000 cents, delivered 3 days ago."
    }
}
"""


def write_project(folder, url: str, wire: str, cassette: str = "") -> None:
    """The program and a soma.toml naming `wire` at `url` with key ${SOME_VAR}."""
    (folder / "refunds.cell").write_text(PROGRAM, encoding="utf-8")
    lines = ["[agent]", f'provider = "{wire}"', f'url = "{url}"', 'key = "${SOME_VAR}"', "retries = 2"]
    if cassette:
        lines.append(f'cassette = "{cassette}"')
    (folder / "soma.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def soma(folder, *args, **env) -> subprocess.CompletedProcess:
    """Run `soma-kernel ARGS` in `folder` with SOME_VAR holding the key and no other LLM setting."""
    environ = {k: v for k, v in os.environ.items() if k not in CLEARED}
    environ.update({"SOME_VAR": SECRET, "NO_PROXY": "127.0.0.1,localhost", **env})
    return subprocess.run([sys.executable, "-m", "soma_kernel", *args], cwd=folder, env=environ,
                          capture_output=True, text=True, timeout=120)


def script_refund(server: LoopbackModel) -> None:
    """A 429, then a tool call, then the answer."""
    server.status(429, "rate limited").tool("lookup_order", {"order": "A1"}).text(
        "Refund A1: 4000 cents, delivered 3 days ago.")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_run_answers_after_one_tool_round_and_a_retried_429(tmp_path, wire):
    with LoopbackModel() as server:
        script_refund(server)
        write_project(tmp_path, server.url(wire), wire)
        result = soma(tmp_path, "run", "refunds.cell", "Refunds.decide", "A1")
    assert (result.returncode, result.stdout) == (0, '"Refund A1: 4000 cents, delivered 3 days ago."\n')
    assert result.stderr == f"[agent] retry 1/2 after 500ms: {server.url(wire)}: status 429: rate limited\n"
    assert len(server.requests) == 3
    tool_turn = server.requests[2]["body"]["messages"][-1]
    assert '{"order": "A1", "amount": 4000, "days": 3}' in json.dumps(tool_turn["content"], ensure_ascii=False).replace('\\"', '"')
    for request in server.requests:
        assert any(SECRET in value for value in request["headers"].values())
        assert SECRET not in request["path"] + json.dumps(request["body"])


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_recorded_cassette_replays_with_the_server_stopped(tmp_path, wire):
    with LoopbackModel() as server:
        script_refund(server)
        write_project(tmp_path, server.url(wire), wire, cassette="refunds.cassette.jsonl")
        recorded = soma(tmp_path, "run", "refunds.cell", "Refunds.decide", "A1")
    assert recorded.returncode == 0, recorded.stderr
    cassette = (tmp_path / "refunds.cassette.jsonl").read_text(encoding="utf-8")
    assert SECRET not in cassette
    entries = [json.loads(line) for line in cassette.splitlines()]
    assert len(entries) == 2                       # the 429 was retried, not recorded
    assert all(list(e) == ["key", "reply", "request", "usage"] for e in entries)
    assert entries[0]["request"]["provider"] == wire and entries[1]["reply"]["text"].startswith("Refund A1")
    replayed = soma(tmp_path, "run", "refunds.cell", "Refunds.decide", "A1", SOME_VAR="")
    assert (replayed.returncode, replayed.stdout, replayed.stderr) == (0, recorded.stdout, "")
    assert len(server.requests) == 3


def test_a_replay_miss_says_how_the_request_differs(tmp_path):
    with LoopbackModel() as server:
        script_refund(server)
        write_project(tmp_path, server.url("openai"), "openai", cassette="refunds.cassette.jsonl")
        assert soma(tmp_path, "run", "refunds.cell", "Refunds.decide", "A1").returncode == 0
    missed = soma(tmp_path, "run", "refunds.cell", "Refunds.decide", "B2")
    assert missed.returncode == 1 and missed.stdout == ""
    lines = missed.stderr.splitlines()
    assert lines[0] == ("error: refunds.cell:11:16: think(): no answer was recorded for this request in cassette "
                        "refunds.cassette.jsonl (mode once) — the nearest recorded request differs at:")
    assert lines[1] == ('  messages[0].content: recorded "May we refund order A1? Look it up first." — '
                        'now "May we refund order B2? Look it up first."')


def test_soma_test_calls_the_model_when_a_key_is_configured(tmp_path):
    with LoopbackModel() as server:
        server.tool("lookup_order", {"order": "A1"}).text("Refund A1: 4000 cents, delivered 3 days ago.")
        write_project(tmp_path, server.url("openai"), "openai")
        result = soma(tmp_path, "test", "refunds.cell")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 tests: 1 passed, 0 failed" in result.stdout and "no LLM key" not in result.stdout + result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert len(server.requests) == 2


def test_soma_test_without_any_key_still_echoes_with_the_note(tmp_path):
    (tmp_path / "refunds.cell").write_text(PROGRAM, encoding="utf-8")
    result = soma(tmp_path, "test", "refunds.cell")
    assert result.returncode == 1
    assert "note: no LLM key configured — think() is mocked" in result.stdout + result.stderr
