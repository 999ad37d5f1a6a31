"""think() against real providers, in process: configuration, both wire formats
through the official SDKs (against the loopback server of llm_server.py),
retries, timeouts, failures as kind `llm`, and where the key goes."""

from __future__ import annotations

import json
import math

import pytest
from llm_server import LoopbackModel

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.project.settings import parse_project_text
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.mocks import Scripted
from soma_kernel.runtime.llm.config import expand_env, resolve
from soma_kernel.runtime.llm.redact import shown_url
from soma_kernel.runtime.llm.schema import tool_schema
from soma_kernel.runtime.llm.transport import RateLimiter, duration_text
from soma_kernel.syntax.parser import parse

SECRET = "sk-loopback-7f3a9c"
ENV_KEYS = ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_URL", "SOMA_LLM_MODEL", "SOMA_LLM_RETRIES",
            "SOMA_LLM_TIMEOUT_MS", "SOMA_LLM_RPM", "SOMA_LLM_TPM", "SOMA_LLM_CASSETTE", "SOMA_LLM_CASSETTE_MODE",
            "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SOMA_APPROVE")

AGENT = """
cell agent Desk {
    face {
        signal ask(q: String) -> String
        tool lookup(order: String) -> Map "Order amount and days since delivery"
        tool flaky(order: String) -> Int "Fails for unknown orders"
    }
    memory {
        looked: Map<String, Int>
    }
    on lookup(order: String) {
        looked.set(order, (looked.get(order) ?? 0) + 1)
        return map("order", order, "cents", 1250)
    }
    on flaky(order: String) {
        looked.set("flaky", 1)
        if order != "A1" { fail("not_found", "no order {order}") }
        return 7
    }
    on ask(q: String) { return think(q) }
    on ask_with(q: String, opts: Map) { return think(q, opts) }
    on seen(order: String) { return looked.get(order) ?? 0 }
    on forget() { clear_context() }
}

cell Plain {
    on ask(q: String) { return think(q) }
}
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No key, mock or LLM setting leaks in from the machine; loopback is never proxied."""
    for name in ENV_KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("SOME_VAR", SECRET)


@pytest.fixture
def server():
    """A fresh loopback model server."""
    with LoopbackModel() as started:
        yield started


def runtime_for(server, wire: str, extra: str = "", tmp_path=None, source: str = AGENT, notes=None) -> Runtime:
    """A runtime whose soma.toml points `wire` at the loopback server with key ${SOME_VAR}."""
    toml = (f'[agent]\nprovider = "{wire}"\nurl = "{server.url(wire)}"\nkey = "${{SOME_VAR}}"\nretries = 2\n'
            + extra)
    folder = str(tmp_path) if tmp_path is not None else "."
    project = parse_project_text(toml, f"{folder}/soma.toml")
    note = notes.append if notes is not None else (lambda text: None)
    rt = Runtime(agent_mock=project.agent.get("mock"), project=project, project_dir=folder, note=note)
    rt.load_program(parse(source, "desk.cell"))
    return rt


def error_of(rt, handler, *args, cell="Desk") -> SomaError:
    """The SomaError a call raises."""
    with pytest.raises(SomaError) as caught:
        rt.call(handler, list(args), cell=cell)
    return caught.value


def assert_key_only_in_headers(server):
    """Every request carried the key in a header, never in its path or body."""
    assert server.requests
    for request in server.requests:
        assert SECRET not in request["path"] and SECRET not in json.dumps(request["body"])
        assert any(SECRET in value for value in request["headers"].values())


# ---------------------------------------------------------------- configuration


def test_key_order_and_expansion():
    env = {"SOME_VAR": "abc"}
    assert expand_env("${SOME_VAR}-x", env) == "abc-x"
    assert expand_env("${MISSING}", env) == ""
    assert expand_env("a${SOME_VAR", env) == "a${SOME_VAR"
    written = {"provider": "anthropic", "key": "${SOME_VAR}"}
    assert resolve(written, {}, None, env).key == "abc"
    assert resolve(written, {}, None, {**env, "SOMA_LLM_KEY": "env-wins"}).key == "env-wins"
    assert resolve(written, {}, None, {"SOMA_LLM_KEY": ""}).problem == "think() API key empty."
    assert resolve({"provider": "anthropic"}, {}, None, {"ANTHROPIC_API_KEY": "ak"}).key == "ak"


def test_a_cloud_key_goes_only_to_its_own_host():
    env = {"ANTHROPIC_API_KEY": "ak", "OPENAI_API_KEY": "ok"}
    assert resolve({}, {}, None, {"ANTHROPIC_API_KEY": "ak"}).key is None          # no provider: OpenAI, not ak
    assert resolve({}, {}, None, env).key == "ok"
    ollama = resolve({"provider": "ollama"}, {}, None, env)
    assert (ollama.key, ollama.key_is_secret, ollama.url) == ("ollama", False, "http://localhost:11434/v1/chat/completions")
    local = resolve({"url": "http://127.0.0.1:8000/v1/chat/completions"}, {}, None, env)
    assert local.key not in ("ak", "ok") and not local.key_is_secret
    assert resolve({"provider": "anthropic", "url": "http://10.0.0.5/v1/messages"}, {}, None, env).key != "ak"


def test_named_models_settings_and_environment_overrides():
    models = {"fast": {"provider": "anthropic", "model": "claude-haiku", "retries": 1, "mock": "echo"}}
    agent = {"provider": "openai", "model": "gpt-x", "rpm": 5}
    fast = resolve(agent, models, "fast", {})
    assert (fast.provider, fast.model, fast.retries, fast.rpm, fast.mock) == ("anthropic", "claude-haiku", 1, 0, "echo")
    unknown = resolve(agent, models, "nope", {})
    assert (unknown.provider, unknown.model, unknown.mock) == ("openai", "gpt-4o-mini", None)
    env = {"SOMA_LLM_MODEL": "m2", "SOMA_LLM_URL": "http://h/v1/chat/completions", "SOMA_LLM_RETRIES": "0",
           "SOMA_LLM_TIMEOUT_MS": "1500", "SOMA_LLM_TPM": "900"}
    over = resolve(agent, models, None, env)
    assert (over.model, over.url, over.retries, over.timeout_ms, over.rpm, over.tpm) == (
        "m2", "http://h/v1/chat/completions", 0, 1500, 5, 900)
    with pytest.raises(SomaError) as caught:
        resolve(agent, models, None, {"SOMA_LLM_RETRIES": "many"})
    assert caught.value.kind == "llm" and "SOMA_LLM_RETRIES" in caught.value.text


def test_a_url_is_shown_without_its_credentials():
    assert shown_url("https://user:pw@h.example/v1/chat/completions?api-key=SECRETX&v=2") == \
        "https://***@h.example/v1/chat/completions?api-key=***&v=***"
    assert shown_url("http://127.0.0.1:9/v1/messages") == "http://127.0.0.1:9/v1/messages"


def test_tool_schema_from_soma_types():
    program = parse('cell agent A {\n face {\n  tool t(a: Int, b: Float, c: Bool, d: Map, e: List<Int>, f: String) -> Int\n'
                    ' }\n on t(a: Int, b: Float, c: Bool, d: Map, e: List<Int>, f: String) { return a }\n}\n', "a.cell")
    schema = tool_schema(program.items[0].face.tools[0])
    assert schema == {"name": "t", "description": "t", "parameters": {
        "type": "object", "required": ["a", "b", "c", "d", "e", "f"], "properties": {
            name: {"type": kind, "description": f"Parameter: {name}"} for name, kind in
            zip("abcdef", ("integer", "number", "boolean", "object", "array", "string"))}}}


# ---------------------------------------------------------------- both wire formats


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_text_reply_through_the_sdk(server, wire):
    server.text("Hello from the loopback model", output_tokens=6, input_tokens=10)
    rt = runtime_for(server, wire)
    assert rt.call("ask", ["Say hello"], cell="Plain") == "Hello from the loopback model"
    request = server.requests[0]
    assert request["path"] == ("/v1/messages" if wire == "anthropic" else "/v1/chat/completions")
    body = request["body"]
    assert body["max_tokens"] == 2048 and "tools" not in body
    if wire == "anthropic":
        assert body["system"].startswith("You are a helpful AI agent") and body["messages"] == [
            {"role": "user", "content": "Say hello"}]
        assert request["headers"].get("anthropic-version")
    else:
        assert body["messages"][0]["role"] == "system" and body["messages"][1] == {"role": "user", "content": "Say hello"}
    assert rt.agent.used == 18   # 16 reported + 2: the reply is ~8 tokens, 6 were reported
    assert_key_only_in_headers(server)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_one_tool_round_then_the_answer(server, wire):
    server.tool("lookup", {"order": "A1"}).text("Refund A1")
    rt = runtime_for(server, wire)
    assert rt.call("ask", ["Refund A1?"], cell="Desk") == "Refund A1"
    assert rt.call("seen", ["A1"]) == 1
    second = server.requests[1]["body"]["messages"]
    if wire == "anthropic":
        assert second[1]["content"][0]["type"] == "tool_use"
        assert second[2] == {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": '{"order": "A1", "cents": 1250}'}]}
        offered = server.requests[0]["body"]["tools"][0]
        assert offered["input_schema"]["properties"]["order"]["type"] == "string"
    else:
        assert second[2]["tool_calls"][0]["function"]["name"] == "lookup"
        assert second[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"order": "A1", "cents": 1250}'}
        assert server.requests[0]["body"]["tools"][0]["function"]["description"] == "Order amount and days since delivery"
    kinds = [(kind, fields.get("iteration"), fields.get("name")) for kind, fields in rt.agent.trace]
    assert kinds == [("Think", 1, None), ("ToolCall", None, "lookup"), ("Think", 2, None)]
    assert_key_only_in_headers(server)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_conversation_carries_over_and_clear_context_empties_it(server, wire):
    server.text("first").text("second").text("third")
    rt = runtime_for(server, wire)
    rt.call("ask", ["one"], cell="Desk")
    rt.call("ask", ["two"], cell="Desk")
    offset = 0 if wire == "anthropic" else 1
    assert [m["content"] for m in server.requests[1]["body"]["messages"][offset:]] == ["one", "first", "two"]
    rt.call("forget", [])
    rt.call("ask", ["three"], cell="Desk")
    assert [m["content"] for m in server.requests[2]["body"]["messages"][offset:]] == ["three"]


def test_a_failed_statement_leaves_the_conversation_as_it_was(server):
    server.text("kept").status(400, "bad request")
    rt = runtime_for(server, "openai")
    rt.call("ask", ["one"], cell="Desk")
    assert error_of(rt, "ask", "two").kind == "llm"
    server.text("again")
    rt.call("ask", ["three"], cell="Desk")
    assert [m["content"] for m in server.requests[2]["body"]["messages"][1:]] == ["one", "kept", "three"]


# ---------------------------------------------------------------- tool dispatch


def tool_result_texts(server) -> list[str]:
    """The tool results the model received, in order (OpenAI format)."""
    return [m["content"] for r in server.requests for m in r["body"]["messages"] if m["role"] == "tool"]


def test_refusals_go_back_to_the_model_as_tool_errors(server):
    (server.tool("nope", {}, "c1").tool("lookup", {}, "c2").tool("lookup", {"order": 5}, "c3")
     .tool("lookup", {"order": {"_type": "X"}}, "c4").tool("flaky", {"order": "Z9"}, "c5").text("done"))
    rt = runtime_for(server, "openai")
    assert rt.call("ask_with", ["go", {"max_rounds": 6}]) == "done"
    assert tool_result_texts(server)[-5:] == [
        "tool error: 'nope' is not a tool of this agent",
        "tool error: 'lookup' needs the argument 'order'",
        "tool error: lookup(): expected String for order, got Int",
        "tool error: argument 'order' carries _type / _variant",
        "tool error: not_found: no order Z9",
    ]
    assert rt.call("seen", ["flaky"]) == 0   # the failing tool's write was rolled back


def test_tools_allowed_narrows_the_offer_and_refuses_the_rest(server):
    server.tool("flaky", {"order": "A1"}).text("ok")
    rt = runtime_for(server, "openai")
    assert rt.call("ask_with", ["go", {"tools_allowed": ["lookup"]}]) == "ok"
    assert [t["function"]["name"] for t in server.requests[0]["body"]["tools"]] == ["lookup"]
    assert tool_result_texts(server) == ["tool error: 'flaky' is not allowed in this step (tools_allowed: [\"lookup\"])"]


def test_out_of_rounds_and_tool_calls_without_tools(server):
    server.tool("lookup", {"order": "A1"}, "c1").tool("lookup", {"order": "A1"}, "c2")
    rt = runtime_for(server, "openai")
    err = error_of(rt, "ask_with", "go", {"max_rounds": 2})
    assert err.kind == "llm" and err.text.startswith("think() exceeded max rounds (2) of tool calls")
    server.tool("lookup", {"order": "A1"})
    err = error_of(rt, "ask", "go", cell="Plain")
    assert err.text.startswith("think(): the model answered with a tool call, but this cell declares no tools")


def test_an_empty_reply_and_the_max_tokens_cap(server):
    server.text("")
    rt = runtime_for(server, "openai")
    assert error_of(rt, "ask", "x").text.startswith("llm: the provider's reply has neither text nor a tool call")
    server.text("a" * 80, output_tokens=50)
    err = error_of(rt, "ask_with", "x", {"max_tokens": 10})
    assert err.text == ("llm: the provider returned 50 reply tokens for max_tokens 10 — "
                        "it ignored the cap the cost bound relies on")


def test_the_budget_holds_across_rounds(server):
    server.tool("lookup", {"order": "A1"}, output_tokens=8)
    rt = runtime_for(server, "openai", source=AGENT.replace(
        "on ask(q: String) { return think(q) }", "on ask(q: String) { set_budget(30)\n return think(q) }"))
    err = error_of(rt, "ask", "go")
    assert (err.kind, err.detail) == ("budget", "token budget exhausted: 38/30")


# concurrency 1: the loopback server answers its script in arrival order, so the tasks send in turn
HORDE = """
cell Crowd {
    memory { said: List<String> }
    on round(people: List) {
        return horde(Person.speak, people, map("instance", "id", "on_result", "_said", "concurrency", 1))
    }
    on budgeted(people: List, limit: Int) {
        return horde(Person.speak, people, map("budget_tokens", limit, "on_result", "_said", "concurrency", 1))
    }
    on _said(v: String) { said.push(v) }
    on status(h: String) { return horde_status(h) }
}
cell agent Person {
    on speak(p: Map) { return think("{p.id} speaks", map("max_tokens", 20)) }
}
"""


def test_an_instance_keeps_its_conversation_from_horde_to_horde(server):
    server.text("a1").text("b1").text("a2")
    rt = runtime_for(server, "openai", source=HORDE)
    rt.call("round", [[{"id": "a"}, {"id": "b"}]])
    rt.call("round", [[{"id": "a"}]])
    contents = [[m["content"] for m in request["body"]["messages"][1:]] for request in server.requests]
    assert contents == [["a speaks"], ["b speaks"], ["a speaks", "a1", "a speaks"]]


def test_a_real_request_reserves_on_the_horde_budget(server):
    server.text("hi", output_tokens=3)
    rt = runtime_for(server, "openai", source=HORDE)
    status = rt.call("status", [rt.call("budgeted", [[{"id": "a"}, {"id": "b"}], 210])])
    # each request reserves its JSON's bytes (system, messages, tools) + 8·2 messages + 16 + 20 = 199;
    # the first spends 23, and 23 + 199 no longer fits in 210
    assert (status["state"], status["done"], status["cancelled"]) == ("exhausted", 1, 1)
    assert len(server.requests) == 1


# ---------------------------------------------------------------- failures and retries


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_429_is_retried_with_the_reference_line(server, wire):
    notes = []
    server.status(429, "rate limited, slow down").text("after the wait")
    rt = runtime_for(server, wire, notes=notes)
    assert rt.call("ask", ["x"], cell="Plain") == "after the wait"
    assert notes == [f"[agent] retry 1/2 after 500ms: {server.url(wire)}: status 429: rate limited, slow down"]
    assert len(server.requests) == 2


def test_a_500_every_time_fails_after_the_retries(server):
    notes = []
    server.status(500, "boom").status(500, "boom").status(503, "still down")
    rt = runtime_for(server, "openai", notes=notes)
    err = error_of(rt, "ask", "x", cell="Plain")
    assert err.kind == "llm" and err.catchable
    assert err.text == f"think() failed after 2 retries: {server.url('openai')}: status 503: still down"
    assert [n.split(":", 1)[0] for n in notes] == ["[agent] retry 1/2 after 500ms", "[agent] retry 2/2 after 1s"]


def test_a_401_is_not_retried_and_names_no_key(server):
    server.status(401, "invalid api key")
    rt = runtime_for(server, "anthropic")
    err = error_of(rt, "ask", "x", cell="Plain")
    assert err.text == f"think() failed: {server.url('anthropic')}: status 401: invalid api key"
    assert len(server.requests) == 1 and SECRET not in err.text


def test_a_slow_reply_times_out_and_the_timeout_covers_retries(server):
    server.slow(5.0, "too late")
    rt = runtime_for(server, "openai", extra="")
    err = error_of(rt, "ask_with", "x", {"timeout": 300}, cell="Desk")
    assert err.kind == "llm" and err.text.startswith(
        "think() request timed out after 300 ms (the timeout covers retries): ")
    assert len(server.requests) == 1


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_malformed_body_is_a_plain_llm_error(server, wire):
    server.raw("<html>gateway says hi</html>")
    rt = runtime_for(server, wire)
    err = error_of(rt, "ask", "x", cell="Plain")
    assert err.kind == "llm"
    assert err.text == f'think() JSON error: the reply of {server.url(wire)} is not JSON: "<html>gateway says hi</html>"'


@pytest.mark.parametrize("wire, path", [
    ("openai", "/v1/nope"),                        # requested as /v1/nope/chat/completions
    ("openai", "/v1/messages"),                    # an Anthropic path spoken as OpenAI
    ("anthropic", "/v1/chat/completions"),         # requested as …/v1/chat/completions/v1/messages
    ("anthropic", "/proxy/"),
    ("openai", "/v1/chat/completions/?tenant=acme-7"),
])
def test_a_provider_error_names_the_url_actually_requested(server, wire, path):
    server.status(404, "no route").raw("<html>proxy</html>")
    base = f"http://127.0.0.1:{server.port}"
    project = parse_project_text(f'[agent]\nprovider = "{wire}"\nurl = "{base}{path}"\nretries = 0\n'
                                 'key = "${SOME_VAR}"\n', "./soma.toml")
    rt = Runtime(project=project, note=lambda text: None)
    rt.load_program(parse(AGENT, "desk.cell"))
    failed = error_of(rt, "ask", "x", cell="Plain")
    not_json = error_of(rt, "ask", "x", cell="Plain")
    requested = [shown_url(base + r["path"]) for r in server.requests]
    assert failed.text == f"think() failed: {requested[0]}: status 404: no route"
    assert not_json.text == f'think() JSON error: the reply of {requested[1]} is not JSON: "<html>proxy</html>"'


def test_a_refused_connection_is_retried_then_fails(server):
    notes = []
    rt = runtime_for(server, "openai", extra="", notes=notes)
    server.stop()
    err = error_of(rt, "ask", "x", cell="Plain")
    assert err.kind == "llm" and err.text.startswith("think() failed after 2 retries: ") and "cannot connect" in err.text
    assert len(notes) == 2


def test_a_key_in_the_url_is_redacted_from_errors_and_retry_lines(server):
    notes = []
    server.status(429, "wait").status(404, "no such model")
    url = server.url("openai") + "?api-key=" + SECRET
    project = parse_project_text(f'[agent]\nurl = "{url}"\nretries = 1\n', "./soma.toml")
    rt = Runtime(project=project, note=notes.append)
    rt.load_program(parse(AGENT, "desk.cell"))
    err = error_of(rt, "ask", "x", cell="Plain")
    shown = server.url("openai") + "?api-key=***"
    assert err.text == f"think() failed: {shown}: status 404: no such model"
    assert notes == [f"[agent] retry 1/1 after 500ms: {shown}: status 429: wait"]
    assert server.requests[0]["path"].endswith("api-key=" + SECRET)   # it still reaches the endpoint


def test_mocks_still_win_over_a_configured_provider(server):
    rt = runtime_for(server, "openai", extra='mock = "fixed:from the mock"\n')
    assert rt.call("ask", ["x"], cell="Plain") == "from the mock"
    rt = runtime_for(server, "openai")
    rt.mocks.think.append(Scripted("reply", "scripted"))
    assert rt.call("ask", ["x"], cell="Plain") == "scripted"
    assert server.requests == []


def test_no_key_means_the_echo_note_and_a_key_means_no_note(monkeypatch):
    notes = []
    rt = Runtime(note=notes.append)
    rt.load_program(parse(AGENT, "desk.cell"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)    # no provider: OpenAI, which this key is not for
    assert rt.call("ask", ["echo me"], cell="Plain") == "echo me"
    assert len(notes) == 1 and notes[0].startswith("note: no LLM key configured")


# ---------------------------------------------------------------- pacing


def test_rate_limiter_waits_for_the_window():
    now, slept = [0.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(2, 0, clock=lambda: now[0], sleep=sleep)
    limiter.wait(10)
    limiter.wait(10)
    limiter.wait(10)
    assert slept == [60.0]
    tokens = RateLimiter(0, 100, clock=lambda: now[0], sleep=sleep)
    tokens.wait(60)
    tokens.wait(60)
    assert slept[-1] == 60.0
    assert [duration_text(s) for s in (0.5, 1, 2, 1.5)] == ["500ms", "1s", "2s", "1.5s"]


# ---------------------------------------------------------------- reply shapes, think_json, named models


def test_a_2xx_error_body_and_text_parts(server):
    server.raw(json.dumps({"error": {"message": "model is overloaded"}}))
    rt = runtime_for(server, "openai")
    assert error_of(rt, "ask", "x", cell="Plain").text == "LLM error: model is overloaded"
    parts = {"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "two "}, {"type": "text", "text": "parts"}]}}]}
    server.raw(json.dumps(parts))
    assert rt.call("ask", ["x"], cell="Plain") == "two parts"
    from soma_kernel.runtime.agent import DEFAULT_SYSTEM
    estimated = math.ceil((len("x") + len(DEFAULT_SYSTEM) + len("two parts")) / 4)
    assert rt.agent.used == estimated   # no usage: the estimate, the reply counted once (it was counted twice)


def test_think_json_asks_for_a_json_object(server):
    server.text('{"decision": "approve"}')
    rt = runtime_for(server, "openai", source=AGENT.replace(
        "on ask(q: String) { return think(q) }", "on ask(q: String) { return think_json(q).decision }"))
    assert rt.call("ask", ["decide"], cell="Desk") == "approve"
    assert server.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_a_cell_bound_to_a_named_model_uses_that_table_and_its_skill(server, tmp_path):
    (tmp_path / "terse.md").write_text("Answer in three words.", encoding="utf-8")
    source = AGENT.replace("cell Plain {", 'cell Plain [model: fast, skill: "terse.md"] {')
    extra = (f'\n[models.fast]\nprovider = "anthropic"\nurl = "{server.url("anthropic")}"\n'
             'key = "${SOME_VAR}"\nmodel = "claude-fast"\n')
    server.text("from agent table").text("from fast model")
    rt = runtime_for(server, "openai", extra=extra, tmp_path=tmp_path, source=source)
    assert rt.call("ask", ["q"], cell="Desk") == "from agent table"
    assert rt.call("ask", ["q"], cell="Plain") == "from fast model"
    fast = server.requests[1]
    assert fast["path"] == "/v1/messages" and fast["body"]["model"] == "claude-fast"
    assert fast["body"]["system"] == "Answer in three words."


def test_an_empty_soma_llm_key_is_an_llm_error(server, monkeypatch):
    monkeypatch.setenv("SOMA_LLM_KEY", "")
    rt = runtime_for(server, "openai")
    err = error_of(rt, "ask", "x", cell="Plain")
    assert (err.kind, err.detail) == ("llm", "think() API key empty.")
