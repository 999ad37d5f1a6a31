"""The notebook's hint to script the model with `mock think` appears only where a mock is the answer (no
model to reply, the scripted turns ran out), never for a model that answered or failed on its own terms:
a refused connection, an error status, a reply over max_tokens, max_rounds exceeded."""

from __future__ import annotations

import pytest
from llm_server import LoopbackModel

from soma_kernel.session.session import Session

MOCK_HINT = "  hint: script the model with `mock think \"reply\"` or set [agent] mock in `%%toml`"
AGENT = """cell agent Desk {
    face {
        tool lookup(order: String) -> Int "The order's amount"
    }
    on lookup(order: String) { return 3 }
    on ask(q: String) { return think(q) }
    on ask_with(q: String, opts: Map) { return think(q, opts) }
}"""


@pytest.fixture(autouse=True)
def no_model_settings(monkeypatch):
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                 "SOMA_LLM_CASSETTE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def server():
    with LoopbackModel() as started:
        yield started


def session_at(tmp_path, toml: str = "") -> Session:
    """A session with the Desk agent and, when given, a soma.toml (`%%toml`)."""
    session = Session(directory=str(tmp_path))
    assert session.execute(AGENT, "agent", count=1).ok
    if toml:
        assert session.execute("%%toml\n" + toml, "toml", count=2).ok
    return session


def last_line(session: Session, code: str) -> str:
    result = session.execute(code, "run", count=3)
    assert result.error_name == "SomaError", result.error
    return result.error.split("\n")[-1]


def provider_toml(url: str, extra: str = "") -> str:
    return f'[agent]\nprovider = "openai"\nurl = "{url}"\nkey = "k-123456"\nretries = 0\n{extra}'


def test_a_refused_connection_gets_no_mock_hint(tmp_path, server):
    url = server.url("openai")
    server.stop()
    line = last_line(session_at(tmp_path, provider_toml(url)), 'ask("x")')
    assert "mock think" not in line and line.startswith("  hint: ")


def test_an_error_status_gets_no_mock_hint(tmp_path, server):
    server.status(401, "bad key")
    line = last_line(session_at(tmp_path, provider_toml(server.url("openai"))), 'ask("x")')
    assert "mock think" not in line


def test_a_reply_over_max_tokens_gets_no_mock_hint(tmp_path, server):
    server.text("a long answer", output_tokens=50)
    session = session_at(tmp_path, provider_toml(server.url("openai")))
    assert "mock think" not in last_line(session, 'ask_with("x", map("max_tokens", 5))')
    fixed = session_at(tmp_path, '[agent]\nmock = "fixed:' + "long reply " * 40 + '"\n')
    assert "mock think" not in last_line(fixed, 'ask_with("x", map("max_tokens", 5))')


def test_max_rounds_exceeded_gets_no_mock_hint(tmp_path, server):
    session = session_at(tmp_path)
    code = 'mock think tool lookup(order: "A")\nmock think tool lookup(order: "B")\nmock think "done"\n' \
           'ask_with("x", map("max_rounds", 1))'
    assert "mock think" not in last_line(session, code)
    server.tool("lookup", {"order": "A"}, "c1", 5).tool("lookup", {"order": "B"}, "c2", 5)
    real = session_at(tmp_path, provider_toml(server.url("openai")))
    assert "mock think" not in last_line(real, 'ask_with("x", map("max_rounds", 1))')


def test_where_a_mock_is_the_answer_the_hint_says_how_to_write_one(tmp_path):
    session = session_at(tmp_path)
    assert last_line(session, 'mock think tool lookup(order: "A")\nask("x")') == MOCK_HINT
