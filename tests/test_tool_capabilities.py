"""A tool's `[capability: "…"]` is enforced while the model's call runs (issue 20 §3, runtime/capabilities.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from soma_kernel.runtime.capabilities import ClauseError, parse_clause, parse_scope, url_allowed
from soma_kernel.session.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DESK = '''cell agent Desk {
    face {
        tool fetch(path: String) -> String [capability: "https://api.example.com/*"] "Fetch a page"
        tool note(path: String) -> String [capability: "fs:read:inbox/ fs:write:out/"] "Read a note"
        tool free(path: String) -> String "No clause: not limited"
        signal ask(q: String) -> String
    }
    memory {
        seen: Map<String, Int>
    }
    on fetch(path: String) {
        seen.set("fetch", 1)
        return read_file(path)
    }
    on note(path: String) {
        let text = read_file(path)
        write_file("out/copy.txt", text)
        return text
    }
    on free(path: String) {
        return read_file(path)
    }
    on ask(q: String) {
        return think(q)
    }
}'''


@pytest.fixture
def desk(tmp_path):
    """The Desk agent in a folder holding inbox/a.txt, out/ and secret.txt."""
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "a.txt").write_text("note A")
    (tmp_path / "out").mkdir()
    (tmp_path / "secret.txt").write_text("the secret")
    session = Session(directory=str(tmp_path))
    assert session.execute(DESK, "desk").ok
    return session


def tool_results(session) -> list:
    """The `result` of every ToolCall in the trace."""
    import json

    text = session.execute('to_json(trace() |> filter(r => r._type == "ToolCall") |> map(r => r.result))').result
    return json.loads(text["text/plain"])


def ask_with_tool(session, call: str) -> str:
    """Script the model calling `call`, then answering "done"; the answer of ask()."""
    assert session.execute(f'mock think tool {call}\nmock think "done"').ok
    answer = session.execute('ask("go")')
    assert answer.ok, answer.error
    return answer.result["text/plain"]


def test_a_web_only_tool_cannot_read_a_local_file(desk, tmp_path):
    assert ask_with_tool(desk, 'fetch(path: "/etc/hostname")') == "done"
    assert ask_with_tool(desk, f'fetch(path: "{tmp_path}/secret.txt")') == "done"
    outside = ("capability: read_file(\"{}\") reads a file outside the capability of tool 'fetch' "
               "(\"https://api.example.com/*\")")
    assert tool_results(desk) == ["tool error: " + outside.format("/etc/hostname"),
                                  "tool error: " + outside.format(f"{tmp_path}/secret.txt")]
    assert desk.execute('[seen.get("fetch")]').result["text/plain"] == "[()]"  # the failed tool was rolled back


def test_a_file_tool_reaches_exactly_its_folders(desk, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ask_with_tool(desk, 'note(path: "inbox/a.txt")')
    assert (tmp_path / "out" / "copy.txt").read_text() == "note A"
    for path in ("secret.txt", "inbox/../secret.txt", "out/copy.txt", "/etc/hostname"):
        ask_with_tool(desk, f'note(path: "{path}")')
    (tmp_path / "inbox" / "link.txt").symlink_to(tmp_path / "secret.txt")
    ask_with_tool(desk, 'note(path: "inbox/link.txt")')
    results = tool_results(desk)
    assert results[0] == "note A"
    assert [r.split(" outside ")[0] for r in results[1:]] == [
        'tool error: capability: read_file("secret.txt") reads a file',
        'tool error: capability: read_file("inbox/../secret.txt") reads a file',
        'tool error: capability: read_file("out/copy.txt") reads a file',  # out/ is for writing only
        'tool error: capability: read_file("/etc/hostname") reads a file',
        'tool error: capability: read_file("inbox/link.txt") reads a file',  # a link out of the folder
    ]


def test_a_tool_without_a_clause_and_code_outside_tools_are_not_limited(desk, tmp_path):
    assert ask_with_tool(desk, f'free(path: "{tmp_path}/secret.txt")') == "done"
    assert tool_results(desk) == ["the secret"]
    assert desk.execute(f'read_file("{tmp_path}/secret.txt")').result["text/plain"] == "the secret"
    assert desk.execute(f'fetch("{tmp_path}/secret.txt")').result["text/plain"] == "the secret"


def test_the_capability_ends_with_the_tool_call(desk, tmp_path):
    ask_with_tool(desk, 'fetch(path: "/etc/hostname")')
    assert desk.execute(f'read_file("{tmp_path}/inbox/a.txt")').result["text/plain"] == "note A"


@pytest.mark.parametrize("scope, url, allowed", [
    ("https://api.example.com/*", "https://api.example.com/v1/items?q=1", True),
    ("https://api.example.com/*", "https://api.example.com", True),
    ("https://api.example.com/*", "http://api.example.com/v1", False),
    ("https://api.example.com/*", "https://api.example.com.evil.org/v1", False),
    ("https://api.example.com/*", "https://api.example.com@evil.org/v1", False),
    ("https://api.example.com/*", "https://user:pw@api.example.com/v1", False),
    ("https://api.example.com/*", "https://api.example.com:8443/v1", False),
    ("https://api.example.com/*", "https://API.Example.com/v1", True),
    ("https://api.example.com/v1/*", "https://api.example.com/v1/x", True),
    ("https://api.example.com/v1/*", "https://api.example.com/v2/x", False),
    ("https://api.example.com/v1/*", "https://api.example.com/v1/../admin", False),
    ("https://api.example.com/v1/*", "https://api.example.com/v1/%2e%2e/admin", False),
    ("https://api.example.com/v1/ping", "https://api.example.com/v1/ping", True),
    ("https://api.example.com/v1/ping", "https://api.example.com/v1/ping2", False),
    ("https://*.example.com/*", "https://eu.example.com/x", True),
    ("https://*.example.com/*", "https://example.org/x", False),
    ("https://*.example.com/*", "https://evilexample.com/x", False),
    ("net:*", "ftp://example.com/x", False),
    ("net:*", "http://anything.org/x", True),
    ("net:wikipedia.org", "https://wikipedia.org/wiki/X", True),
    ("net:wikipedia.org", "http://wikipedia.org/wiki/X", True),
    ("net:wikipedia.org", "https://en.wikipedia.org/wiki/X", False),
    ("net:wikipedia.org/wiki", "https://wikipedia.org/w/index.php", False),
    ("net:https://api.x.com/v2", "https://api.x.com/v2/items", True),
    ("net:https://api.x.com/v2", "https://api.x.com/v1", False),
])
def test_url_scopes_match_scheme_host_port_and_path_never_by_text_prefix(scope, url, allowed):
    assert url_allowed(url, parse_scope(scope)) is allowed


@pytest.mark.parametrize("clause", [
    "smtp:gmail.com", "db:read", "ftp://files.example.com/*", "https://api.*.com/x", "https://a.com/x*/y",
    "fs:exec:/bin/", "fs:read:", "fs:read:/data/*.csv", "fs:read:data*", "fs:write:*", "net:", "net:a.com/*", "",
    "https://user@a.com/*",
    "https://a.com/x?q=1", "https://a.com/../x",
])
def test_a_clause_the_runtime_cannot_enforce_is_refused(clause):
    with pytest.raises(ClauseError):
        parse_clause(clause)


def test_soma_check_refuses_an_unenforceable_clause_and_accepts_the_others(tmp_path):
    program = DESK.replace('"fs:read:inbox/ fs:write:out/"', '"fs:read:inbox/ smtp:gmail.com"')
    (tmp_path / "desk.cell").write_text(program + "\n")
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "check", "desk.cell"], cwd=tmp_path,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert done.returncode == 1
    first = (done.stdout + done.stderr).splitlines()[0]
    assert first == ("error: desk.cell:4:9: tool 'note': capability 'smtp:gmail.com' has no form this runtime "
                     "can enforce — use a URL pattern (https://host/path*), net:host, net:*, fs:read:PATH or "
                     "fs:write:PATH")
    (tmp_path / "desk.cell").write_text(DESK + "\n")
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "check", "desk.cell"], cwd=tmp_path,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_notebook_refuses_the_unenforceable_clause_when_the_cell_runs():
    session = Session()
    result = session.execute(DESK.replace("https://api.example.com/*", "db:read"))
    assert result.error_name == "CheckError"
    assert result.error.splitlines()[0] == (
        "error: cell[1]:3:9: tool 'fetch': capability 'db:read' has no form this runtime can enforce — use a URL "
        "pattern (https://host/path*), net:host, net:*, fs:read:PATH or fs:write:PATH")


HORDE_DESK = '''cell agent Desk {
    face {
        tool fan(path: String) -> String [capability: "https://api.example.com/*"] "Read in a horde"
        signal ask(q: String) -> String
    }
    memory {
        got: List<String>
        failed: List<String>
    }
    on fan(path: String) {
        return horde(Desk.peek, [path, path], map("concurrency", CONCURRENCY, "on_result", "_keep",
                                                  "on_error", "_oops"))
    }
    on peek(path: String) { return read_file(path) }
    on _keep(value: Any) { got.push("{value}") }
    on _oops(path: Any, error: Map) { failed.push("{error.kind}: {error.detail}") }
    on seen() { return [got, failed] }
    on ask(q: String) { return think(q) }
}'''


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_horde_started_in_a_tool_call_keeps_the_tool_capability(tmp_path, concurrency):
    (tmp_path / "secret.txt").write_text("the secret")
    session = Session(directory=str(tmp_path))
    assert session.execute(HORDE_DESK.replace("CONCURRENCY", str(concurrency))).ok, "defined"
    ask_with_tool(session, f'fan(path: "{tmp_path}/secret.txt")')
    got, failed = json.loads(session.execute("to_json(Desk.seen())").result["text/plain"])
    assert got == [] and len(failed) == 2, failed
    assert all(f.startswith(f'capability: read_file("{tmp_path}/secret.txt") reads a file outside') for f in failed)
    assert session.execute(f'Desk.fan("{tmp_path}/secret.txt")').ok  # outside a tool call: not limited
    got, _ = json.loads(session.execute("to_json(Desk.seen())").result["text/plain"])
    assert got == ["the secret", "the secret"]


NESTED = '''cell agent Desk {
    face {
        tool outer(q: String) -> String [capability: "https://api.example.com/*"] "Ask again"
        tool inner(path: String) -> String [capability: "fs:read:/"] "Read any file"
        signal ask(q: String) -> String
    }
    on outer(q: String) { return think(q) }
    on inner(path: String) { return read_file(path) }
    on ask(q: String) { return think(q) }
}'''


def test_a_tool_called_from_a_limited_tool_is_held_to_both(tmp_path):
    (tmp_path / "secret.txt").write_text("the secret")
    session = Session(directory=str(tmp_path))
    assert session.execute(NESTED).ok
    assert session.execute(f'mock think tool outer(q: "go on")\nmock think tool inner(path: "{tmp_path}/secret.txt")\n'
                           'mock think "inner done"\nmock think "done"').ok
    assert session.execute('ask("q")').result["text/plain"] == "done"
    results = tool_results(session)
    assert results[0].startswith(f'tool error: capability: read_file("{tmp_path}/secret.txt") reads a file outside '
                                 "the capability of tool 'outer'")
    assert results[1] == "inner done"
    assert ask_with_tool(session, f'inner(path: "{tmp_path}/secret.txt")') == "done"  # called alone: no limit
    assert tool_results(session)[-1] == "the secret"


def test_an_unenforceable_clause_met_without_check_allows_nothing(tmp_path):
    """`soma-kernel run` skips check: there the runtime reads such a clause as granting nothing."""
    from soma_kernel.core.diagnostics import SomaError
    from soma_kernel.runtime.capabilities import require_file, require_url, tool_scope

    (tmp_path / "a.txt").write_text("a")
    with tool_scope("send", "smtp:gmail.com", str(tmp_path)):
        for check in (lambda: require_file("read_file", str(tmp_path / "a.txt"), "read"),
                      lambda: require_url("http_get", "https://gmail.com/")):
            with pytest.raises(SomaError) as err:
                check()
            assert err.value.kind == "capability" and "tool 'send' (\"smtp:gmail.com\")" in err.value.detail
    require_file("read_file", str(tmp_path / "a.txt"), "read")  # the scope ended with the block
