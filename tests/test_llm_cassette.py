"""Cassettes on their own: the four modes, repeated requests, a broken file, and
the words of a replay miss."""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.llm.cassette import Cassette, differences, request_key
from soma_kernel.runtime.llm.providers import Reply


def request(prompt: str, history: tuple = ()) -> dict:
    """A neutral request asking `prompt` after `history`."""
    messages = [{"role": "user", "content": text} for text in history + (prompt,)]
    return {"provider": "openai", "model": "m", "system": "s", "messages": messages, "tools": [],
            "max_tokens": 50, "json": False}


def reply(text: str) -> Reply:
    """A text reply with usage."""
    return Reply(text, [], "stop", 12, 4, {"role": "assistant", "content": text})


def test_once_records_a_new_file_then_replays_only(tmp_path):
    path = str(tmp_path / "c.jsonl")
    first = Cassette(path, "once", secrets=["sk-hidden"])
    assert (first.replays, first.records) == (False, True)
    first.record(request("hi sk-hidden"), reply("hello"))
    again = Cassette(path, "once")
    assert (again.replays, again.records) == (True, False)
    assert again.lookup(request("hi ***")).text == "hello"       # the secret was redacted when written
    assert "sk-hidden" not in (tmp_path / "c.jsonl").read_text(encoding="utf-8")


def test_replay_record_and_new(tmp_path):
    path = str(tmp_path / "c.jsonl")
    Cassette(path, "record").record(request("a"), reply("A"))
    recorder = Cassette(path, "record")
    assert recorder.lookup(request("a")) is None                  # record always calls out
    recorder.record(request("b"), reply("B"))
    newer = Cassette(path, "new")
    assert newer.lookup(request("b")).text == "B" and newer.lookup(request("c")) is None and newer.records
    replay = Cassette(str(tmp_path / "absent.jsonl"), "replay")
    assert (replay.replays, replay.records) == (True, False)
    assert "holds no exchange" in replay.miss(request("a")).text


def test_identical_requests_replay_in_recorded_order(tmp_path):
    path = str(tmp_path / "c.jsonl")
    writer = Cassette(path, "record")
    writer.record(request("roll"), reply("4"))
    writer.record(request("roll"), reply("6"))
    reader = Cassette(path, "replay")
    assert [reader.lookup(request("roll")).text for _ in range(3)] == ["4", "6", "6"]


def test_lines_are_stable_sorted_json(tmp_path):
    path = tmp_path / "c.jsonl"
    Cassette(str(path), "record").record(request("x"), reply("y"))
    line = path.read_text(encoding="utf-8")
    assert line.startswith('{"key": "' + request_key(request("x")) + '", "reply": {"calls": [], "finish_reason": "stop"')
    assert line.endswith('"usage": {"output_tokens": 4, "total_tokens": 12}}\n')


def test_a_broken_line_is_named(tmp_path):
    path = tmp_path / "c.jsonl"
    Cassette(str(path), "record").record(request("x"), reply("y"))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("not json\n")
    with pytest.raises(SomaError) as caught:
        Cassette(str(path), "replay")
    assert caught.value.kind == "llm" and caught.value.text == (
        f"cassette {path}:2: not a recorded exchange (expected a JSON object with key, request, and reply or error)")


def test_a_miss_names_the_nearest_differences(tmp_path):
    path = str(tmp_path / "c.jsonl")
    writer = Cassette(path, "record")
    writer.record(request("refund o1?"), reply("yes"))
    writer.record(request("weather?"), reply("sunny"))
    miss = Cassette(path, "replay").miss(request("refund o2?", history=("hello",)))
    assert miss.text.splitlines() == [
        "think(): no answer was recorded for this request in cassette c.jsonl (mode replay) — "
        "the nearest recorded request differs at:",
        '  messages[0].content: recorded "refund o1?" — now "hello"',
        "  messages (length): recorded 1 — now 2",
        '  messages[1]: recorded (nothing) — now {"role": "user", "content": "refund o2?"}',
    ]
    assert differences({"a": [1, 2]}, {"a": [1, 2]}) == []
