"""A provider's reply and a cassette are foreign data (issue 20 §1, §4): usage figures that
are no count cannot lower tokens_used(), a cassette replays exactly what the live call
did (the answer or the error), and a cassette that is not what it claims is an error
naming its file and line — never a traceback, never an unbounded read."""

from __future__ import annotations

import json
import os

import pytest

from llm_server import LoopbackModel, text_body
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.project.settings import parse_project_text
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.llm.cassette import Cassette, request_key
from soma_kernel.runtime.agent import DEFAULT_SYSTEM
from soma_kernel.runtime.llm.usage import USAGE_CEILING, charged_tokens, checked_usage
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse

SECRET = "sk-foreign-data-51d2"
PLAIN = """cell agent Plain {
    on ask(q: String) { return think(q, map("max_tokens", 50)) }
    on capped(q: String) { return think(q, map("max_tokens", 10)) }
}"""
ENV_KEYS = ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_URL", "SOMA_LLM_MODEL", "SOMA_LLM_RETRIES",
            "SOMA_LLM_CASSETTE", "SOMA_LLM_CASSETTE_MODE", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
            "SOMA_MAX_FILE_BYTES")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No key or LLM setting leaks in; loopback is never proxied; the key is SECRET."""
    for name in ENV_KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("SOME_VAR", SECRET)


@pytest.fixture
def server():
    """A fresh loopback model server."""
    with LoopbackModel() as started:
        yield started


def runtime_for(server, tmp_path, wire: str = "openai", extra: str = "", notes=None) -> Runtime:
    """A runtime of PLAIN whose soma.toml points `wire` at the server (retries = 1)."""
    toml = (f'[agent]\nprovider = "{wire}"\nurl = "{server.url(wire)}"\nkey = "${{SOME_VAR}}"\nretries = 1\n'
            + extra)
    project = parse_project_text(toml, f"{tmp_path}/soma.toml")
    rt = Runtime(project=project, project_dir=str(tmp_path), note=(notes.append if notes is not None else print))
    rt.load_program(parse(PLAIN, "plain.cell"))
    return rt


def upper_bound(prompt: str, max_tokens: int) -> int:
    """The documented upper bound of a one-message request without tools: its bytes
    (system, messages, tools as sent) + 8 per message (system included) + 16 + max_tokens."""
    sent = json.dumps({"system": DEFAULT_SYSTEM, "messages": [{"role": "user", "content": prompt}], "tools": []})
    return len(sent.encode()) + 8 * 2 + 16 + max_tokens


def estimate(prompt: str, reply: str) -> int:
    """The mocks' estimate: a token per 4 characters of prompt, system and reply."""
    return -(-(len(prompt) + len(DEFAULT_SYSTEM) + len(reply)) // 4)


def with_usage(wire: str, usage) -> str:
    """A text reply "ok" whose usage object is replaced by `usage`."""
    body = text_body(wire, "ok", 1, 1)
    body["usage"] = usage
    return json.dumps(body)


# ------------------------------------------------------------ usage is data

OPENAI_LIES = [
    {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": -1000000},
    {"total_tokens": 7, "completion_tokens": -2},
    {"total_tokens": 2.5, "completion_tokens": 1},
    {"total_tokens": "12", "completion_tokens": 1},
    {"total_tokens": True, "completion_tokens": 1},
    {"total_tokens": 10 ** 12, "completion_tokens": 1},
    {"total_tokens": 3, "completion_tokens": 9},
    "lots",
    [1, 2],
]


@pytest.mark.parametrize("usage", OPENAI_LIES, ids=lambda u: json.dumps(u)[:40])
def test_unusable_usage_is_charged_the_requests_upper_bound(server, tmp_path, usage):
    notes = []
    rt = runtime_for(server, tmp_path, notes=notes)
    rt.agent.set_budget(100)
    server.raw(with_usage("openai", usage))
    assert rt.call("ask", ["hi"]) == "ok"
    assert (rt.agent.used, rt.agent.remaining()) == (upper_bound("hi", 50), 0)   # never 1 000 100 left
    assert len(notes) == 1 and notes[0].startswith("[agent] warning: the provider's usage ")
    assert notes[0].endswith(f" — this exchange is charged its upper bound, {upper_bound('hi', 50)} tokens")


@pytest.mark.parametrize("usage", [{"input_tokens": -1000000, "output_tokens": 3},
                                   {"input_tokens": 4, "output_tokens": -3},
                                   {"input_tokens": None, "output_tokens": 1.5},
                                   {"input_tokens": False, "output_tokens": 2}], ids=str)
def test_unusable_anthropic_usage_is_charged_the_upper_bound(server, tmp_path, usage):
    notes = []
    rt = runtime_for(server, tmp_path, wire="anthropic", notes=notes)
    server.raw(with_usage("anthropic", usage))
    assert rt.call("ask", ["hi"]) == "ok"
    assert rt.agent.used == upper_bound("hi", 50) and len(notes) == 1


@pytest.mark.parametrize("wire, usage, charged", [
    ("openai", {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}, 10),
    ("anthropic", {"input_tokens": 9, "output_tokens": 1}, 10),
    ("openai", None, None),                                  # absent: the estimate, no warning
    ("anthropic", {}, None),
])
def test_usable_or_absent_usage_is_charged_as_reported_or_estimated(server, tmp_path, wire, usage, charged):
    notes = []
    rt = runtime_for(server, tmp_path, wire=wire, notes=notes)
    server.raw(with_usage(wire, usage))
    assert rt.call("ask", ["hi"]) == "ok"
    assert rt.agent.used == (charged if charged is not None else estimate("hi", "ok")) and notes == []


def test_the_usage_rule_on_its_own():
    assert checked_usage(12, 3) == (12, 3, None)
    assert checked_usage(None, None) == (None, None, None)
    assert checked_usage(USAGE_CEILING + 1, 1)[2] == (f"the provider's usage total_tokens is {USAGE_CEILING + 1}, "
                                                      "more than any exchange can take")
    assert checked_usage(-5, 1)[2] == "the provider's usage total_tokens is negative (-5)"
    assert checked_usage([1], 1)[2] == "the provider's usage total_tokens is [1], not a whole number"
    assert charged_tokens(None, None, "a lie", 400, 40, bound=90) == 110       # the estimate when larger
    assert charged_tokens(0, 0, None, 400, 40, bound=90) == 10                 # the reply is at least what it measures
    assert charged_tokens(None, None, None, 0, 0, bound=90) == 1               # a call costs something


# ------------------------------------------------------------ a cassette replays what the live call did


def test_a_cassette_replays_an_unusable_usage_at_the_same_charge(server, tmp_path, monkeypatch):
    extra = 'cassette = "talk.jsonl"\n'
    live_notes, replay_notes = [], []
    live = runtime_for(server, tmp_path, extra=extra, notes=live_notes)
    server.raw(with_usage("openai", {"total_tokens": -1000000}))
    assert live.call("ask", ["hi"]) == "ok"
    replay = runtime_for(server, tmp_path, extra=extra, notes=replay_notes)
    assert replay.call("ask", ["hi"]) == "ok"
    assert replay.agent.used == live.agent.used == upper_bound("hi", 50)
    assert replay_notes == live_notes and len(server.requests) == 1


def test_a_tampered_usage_in_a_cassette_cannot_lower_the_count(server, tmp_path):
    extra = 'cassette = "talk.jsonl"\n'
    live = runtime_for(server, tmp_path, extra=extra, notes=[])
    server.text("ok", output_tokens=1, input_tokens=9)
    live.call("ask", ["hi"])
    path = tmp_path / "talk.jsonl"
    entry = json.loads(path.read_text(encoding="utf-8"))
    for lie in (-1000000, "9", 0.5, None):
        entry["usage"] = {"total_tokens": lie, "output_tokens": 1}
        path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
        replay = runtime_for(server, tmp_path, extra=extra, notes=[])
        replay.agent.set_budget(100)
        assert replay.call("ask", ["hi"]) == "ok"
        assert replay.agent.used >= estimate("hi", "ok") and replay.agent.remaining() <= 100 - estimate("hi", "ok")


def test_a_reply_over_max_tokens_fails_live_and_in_the_replay_alike(server, tmp_path):
    extra = 'cassette = "talk.jsonl"\n'
    live = runtime_for(server, tmp_path, extra=extra, notes=[])
    server.text("word " * 200, output_tokens=300)
    with pytest.raises(SomaError) as first:
        live.call("capped", ["hi"])
    replay = runtime_for(server, tmp_path, extra=extra, notes=[])
    with pytest.raises(SomaError) as again:
        replay.call("capped", ["hi"])
    assert again.value.text == first.value.text == ("llm: the provider returned 300 reply tokens for max_tokens 10 — "
                                                    "it ignored the cap the cost bound relies on")
    assert replay.agent.used == live.agent.used > 0 and len(server.requests) == 1


@pytest.mark.parametrize("answer", [("status", 400, "model 'nope' does not exist"),
                                    ("raw", "<html>gateway says hi</html>", 200),
                                    ("raw", json.dumps({"error": {"message": "overloaded"}}), 200)], ids=str)
def test_a_provider_that_answers_with_an_error_is_replayed_as_that_error(server, tmp_path, answer):
    extra = 'cassette = "talk.jsonl"\n'
    server.script.append(answer)
    with pytest.raises(SomaError) as first:
        runtime_for(server, tmp_path, extra=extra, notes=[]).call("ask", ["hi"])
    with pytest.raises(SomaError) as again:
        runtime_for(server, tmp_path, extra=extra, notes=[]).call("ask", ["hi"])
    assert again.value.text == first.value.text and again.value.kind == "llm"
    assert len(server.requests) == 1 and SECRET not in (tmp_path / "talk.jsonl").read_text(encoding="utf-8")


def test_no_answer_is_not_recorded(server, tmp_path):
    extra = 'cassette = "talk.jsonl"\n'
    server.status(500, "down").status(500, "down")
    with pytest.raises(SomaError):
        runtime_for(server, tmp_path, extra=extra, notes=[]).call("ask", ["hi"])
    assert not (tmp_path / "talk.jsonl").exists()


@pytest.mark.parametrize("key", ["tokens", "total_tokens", 'sk"quote', "sk\\back", "usage"])
def test_recording_with_any_key_keeps_the_cassette_valid(server, tmp_path, monkeypatch, key):
    """The KeyError traceback: the key was masked by editing the JSON text, breaking its structure."""
    monkeypatch.setenv("SOME_VAR", key)
    extra = 'cassette = "talk.jsonl"\n'
    server.text(f"the key is {key}")
    assert runtime_for(server, tmp_path, extra=extra, notes=[]).call("ask", ["hi"]) == "the key is ***"
    replay = runtime_for(server, tmp_path, extra=extra, notes=[])
    assert replay.call("ask", ["hi"]) == "the key is ***"
    line = json.loads((tmp_path / "talk.jsonl").read_text(encoding="utf-8"))
    assert line["reply"]["text"] == "the key is ***" and set(line["usage"]) == {"total_tokens", "output_tokens"}


# ------------------------------------------------------------ a cassette that is not what it claims


def valid_line(prompt: str = "hi") -> dict:
    """One well-formed recorded exchange."""
    request = {"provider": "openai", "model": "m", "system": "s", "messages": [{"role": "user", "content": prompt}],
               "tools": [], "max_tokens": 50, "json": False}
    return {"key": request_key(request), "request": request,
            "reply": {"text": "ok", "calls": [], "finish_reason": "stop", "turn": {"role": "assistant"}},
            "usage": {"total_tokens": 3, "output_tokens": 1}}


def changed(path: list, value) -> str:
    """A valid line with the field at `path` set to `value` (None: removed)."""
    entry = valid_line()
    target = entry
    for name in path[:-1]:
        target = target[name]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(entry)


ANSWERED_ELSEWHERE = dict(valid_line("refund o1?"), key=valid_line("weather?")["key"])
NOT_AN_EXCHANGE = "not a recorded exchange (expected a JSON object with key, request, and reply or error)"
TAMPERED = [
    ("[1, 2]", 1, NOT_AN_EXCHANGE),
    (json.dumps(valid_line()) + "\n42", 2, NOT_AN_EXCHANGE),
    ('"a string"', 1, NOT_AN_EXCHANGE),
    ("{not json", 1, NOT_AN_EXCHANGE),
    (changed(["key"], 7), 1, NOT_AN_EXCHANGE),
    (changed(["reply"], None), 1, NOT_AN_EXCHANGE),
    (json.dumps(dict(valid_line(), error="x")), 1, NOT_AN_EXCHANGE),
    (changed(["request", "max_tokens"], "50"), 1, 'request.max_tokens has the wrong type ("50")'),
    (changed(["request", "json"], 0), 1, "request.json has the wrong type (0)"),
    (changed(["request", "messages"], None), 1, "request.messages is missing"),
    (changed(["request", "messages"], ["hi"]), 1, "request.messages and request.tools must hold JSON objects"),
    (changed(["request"], []), 1, "request must be a JSON object"),
    (changed(["reply", "text"], 5), 1, "reply.text has the wrong type (5)"),
    (changed(["reply", "calls"], {"id": "c"}), 1, 'reply.calls has the wrong type ({"id": "c"})'),
    (changed(["reply", "calls"], [{"id": "c", "name": "lookup"}]), 1,
     "reply.calls[0] must be an object with id, name and arguments (Strings)"),
    (changed(["reply", "turn"], []), 1, "reply.turn has the wrong type ([])"),
    (changed(["usage"], "lots"), 1, "usage must be an object (total_tokens, output_tokens)"),
    (json.dumps({"key": valid_line()["key"], "request": valid_line()["request"], "error": 3}), 1,
     "error must be a String (the provider's error text)"),
    (json.dumps(ANSWERED_ELSEWHERE), 1,
     "its key is not the hash of its request: the answer would be served to another request"),
]


@pytest.mark.parametrize("text, line, problem", TAMPERED, ids=[t[2][:30] + str(i) for i, t in enumerate(TAMPERED)])
def test_a_tampered_cassette_is_an_error_naming_file_and_line(tmp_path, text, line, problem):
    path = tmp_path / "c.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(SomaError) as caught:
        Cassette(str(path), "replay")
    assert caught.value.kind == "llm" and caught.value.text == f"cassette {path}:{line}: {problem}"


def test_foreign_files_are_errors_naming_the_file(tmp_path, monkeypatch):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(json.dumps(valid_line()).encode() + b"\n\x89PNG\r\n\x1a\n\xff\xfe")
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(57 * 1024 * 1024)
    cases = {
        "/etc/passwd": f"cassette /etc/passwd:1: {NOT_AN_EXCHANGE}",
        str(garbage): f"cassette {garbage}:2: not UTF-8 text (a binary file?)",
        str(huge): f"cannot read cassette {huge}: larger than the 32 MiB read limit "
                   "(set SOMA_MAX_FILE_BYTES to read bigger files)",
        str(tmp_path): f"cannot read cassette {tmp_path}: Is a directory",
    }
    for path, message in cases.items():
        with pytest.raises(SomaError) as caught:
            Cassette(path, "replay")
        assert caught.value.text == message
    monkeypatch.setenv("SOMA_MAX_FILE_BYTES", "64K")
    with pytest.raises(SomaError) as endless:
        Cassette("/dev/zero", "replay")
    assert endless.value.text == ("cannot read cassette /dev/zero: larger than the 64 KiB read limit "
                                  "(set SOMA_MAX_FILE_BYTES to read bigger files)")


def test_the_cassette_magic_checks_the_file_before_it_says_what_it_replays(tmp_path):
    session = Session(str(tmp_path))
    (tmp_path / "tampered.jsonl").write_text(json.dumps(valid_line()) + "\n" + changed(["reply", "text"], 5) + "\n",
                                             encoding="utf-8")
    result = session.execute("%cassette tampered.jsonl", count=3)
    assert result.error_name == "MagicError" and "replays" not in result.stream_text()
    assert result.error == (f"error: cell[3]:1:11: cassette {tmp_path}/tampered.jsonl:2: reply.text has the wrong "
                            "type (5)\n1 | %cassette tampered.jsonl\n  |           ^^^^^^^^^^^^^^")
    session.execute("%cassette /etc/passwd")
    (tmp_path / "good.jsonl").write_text(json.dumps(valid_line()) + "\n" + json.dumps(valid_line("b")) + "\n",
                                         encoding="utf-8")
    shown = session.execute("%cassette good.jsonl")
    assert shown.stream_text() == ("cassette good.jsonl (mode once): replays its 2 recorded exchanges and calls no "
                                   "provider; a request it does not hold is an error\n")
    assert os.path.getsize(tmp_path / "good.jsonl") > 0
