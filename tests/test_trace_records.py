"""Every Think record of trace() has the same fields on every path (issue 21): a mocked
single round, the mock modes (echo, fixed, rules), scripted tool rounds and a real model
(one round or tool rounds) all record iteration, prompt, system, reply, tokens,
total_tokens and finish_reason."""

from __future__ import annotations

import json

import pytest

from llm_server import LoopbackModel
from soma_kernel.runtime.agent import DEFAULT_SYSTEM
from soma_kernel.session.session import Session

FIELDS = '["_type", "iteration", "prompt", "system", "reply", "tokens", "total_tokens", "finish_reason"]'
DESK = """cell agent Desk {
    face {
        signal ask(q: String) -> String
        tool lookup(city: String) -> Int "A city's temperature"
    }
    on lookup(city: String) { return 12 }
    on ask(q: String) { return think(q) }
    on ask_as(q: String, s: String) { return think(q, s) }
}
cell agent Styled [skill: "style.md"] {
    on ask_styled(q: String) { return think(q) }
}"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder with a skill file, no LLM settings from the machine."""
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SOMA_LLM_CASSETTE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("SOME_VAR", "sk-trace-records")
    (tmp_path / "style.md").write_text("Answer like a sailor.", encoding="utf-8")
    return tmp_path


def think_records(session) -> list:
    """Each Think record's field names, and the values of the last one."""
    result = session.execute('trace() |> filter(r => r._type == "Think")')
    assert result.ok, result.error
    keys = session.execute('trace() |> filter(r => r._type == "Think") |> map(r => keys(r))')
    return json.loads(keys.result["text/plain"])


def last_think(session) -> dict:
    """The fields of the last Think record."""
    return json_of(session, 'trace() |> filter(r => r._type == "Think") |> reverse() |> nth(0)')


def json_of(session, expression: str):
    """The value of a Soma expression, through to_json."""
    result = session.execute(f"let shown = to_json({expression})\nshown")
    assert result.ok, result.error
    return json.loads(result.result["text/plain"])


@pytest.mark.parametrize("setup, call, system", [
    ('mock think "scripted"', 'ask("q")', DEFAULT_SYSTEM),
    ('mock think "scripted"', 'ask_as("q", "Be brief.")', "Be brief."),
    ('mock think "scripted"', 'ask_styled("q")', "Answer like a sailor."),
    ("", 'ask("echoed")', DEFAULT_SYSTEM),
    ('mock think tool lookup(city: "Oslo")\nmock think "12C"', 'ask("q")', DEFAULT_SYSTEM),
])
def test_every_mocked_path_records_the_same_fields(folder, setup, call, system):
    session = Session(str(folder))
    assert session.execute(DESK).ok
    if setup:
        assert session.execute(setup).ok
    assert session.execute(call).ok
    assert all(json.dumps(keys) == FIELDS for keys in think_records(session))
    first = json_of(session, 'trace() |> filter(r => r._type == "Think") |> nth(0)')
    record = last_think(session)
    assert first["system"] == system and first["iteration"] == 1
    assert record["total_tokens"] == int(session.execute("tokens_used()").result["text/plain"])
    assert record["tokens"] > 0 and record["finish_reason"] == "stop"


@pytest.mark.parametrize("mode", ["fixed:Ahoy.", "echo"])
def test_the_mock_modes_record_the_same_fields(folder, mode):
    (folder / "soma.toml").write_text(f'[agent]\nmock = "{mode}"\n', encoding="utf-8")
    session = Session(str(folder))
    assert session.execute(DESK).ok
    assert session.execute('ask("q")').ok
    assert [json.dumps(keys) for keys in think_records(session)] == [FIELDS]


def test_a_real_model_records_the_same_fields_in_one_round_and_in_tool_rounds(folder):
    with LoopbackModel() as server:
        (folder / "soma.toml").write_text(
            f'[agent]\nprovider = "openai"\nurl = "{server.url("openai")}"\nkey = "${{SOME_VAR}}"\n',
            encoding="utf-8")
        session = Session(str(folder))
        assert session.execute(DESK).ok
        server.text("sunny")
        server.tool("lookup", {"city": "Oslo"}).text("12C")
        assert session.execute('ask("weather?")\nask("Oslo?")').ok
        assert [json.dumps(keys) for keys in think_records(session)] == [FIELDS] * 3
