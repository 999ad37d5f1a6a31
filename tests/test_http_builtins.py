"""http_get / http_post / … answer (never raise) and stay inside a tool's capability, redirects included."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.session.session import Session

from helpers import call


class Handler(BaseHTTPRequestHandler):
    """A few fixed routes, and /echo answering what it was sent."""

    ROUTES = {"/api/json": (200, '{"a": 1, "b": [true, null]}'), "/api/text": (200, "hello"),
              "/api/missing": (404, "nope"), "/admin": (200, "the admin page"), "/api/big": (200, "x" * 5000)}

    def do_GET(self):
        if self.path == "/api/go":
            self.send_response(302)
            self.send_header("Location", "/admin")
            self.end_headers()
            return
        status, body = self.ROUTES.get(self.path, (404, "no route"))
        self.answer(status, body)

    def do_POST(self):
        self.echo()

    do_PUT = do_PATCH = do_DELETE = do_POST

    def echo(self):
        length = int(self.headers.get("Content-Length") or 0)
        sent = self.rfile.read(length).decode("utf-8")
        self.answer(200, json.dumps({"method": self.command, "body": sent,
                                     "type": self.headers.get("Content-Type"), "x": self.headers.get("X-Trace")}))

    def answer(self, status, body):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(monkeypatch):
    """The base URL of a loopback server (proxies bypassed)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_2xx_answer_is_its_body_parsed_when_json(server):
    assert call("http_get", f"{server}/api/json") == {"a": 1, "b": [True, None]}
    assert call("http_get", f"{server}/api/text") == "hello"
    assert call("http_get", f"{server}/api/go") == "the admin page"  # no capability: redirects are followed


def test_other_answers_are_error_maps(server):
    assert call("http_get", f"{server}/api/missing") == {
        "error": "http_get: HTTP 404 Not Found", "kind": "http", "status": 404, "body": "nope"}
    refused = call("http_get", "http://127.0.0.1:1/x")
    assert (refused["kind"], refused["status"]) == ("network", 0)
    assert refused["error"].startswith("http_get: no answer from http://127.0.0.1:1/x (")


def test_a_body_is_sent_as_json_unless_a_string(server):
    for name, method in (("http_post", "POST"), ("http_put", "PUT"), ("http_patch", "PATCH")):
        assert call(name, f"{server}/echo", {"k": [1, 2]}, {"headers": {"X-Trace": "t1"}}) == {
            "method": method, "body": '{"k":[1,2]}', "type": "application/json", "x": "t1"}
    assert call("http_post", f"{server}/echo", "plain")["type"] == "text/plain; charset=utf-8"
    assert call("http_delete", f"{server}/echo")["method"] == "DELETE"


def test_an_answer_past_the_read_limit_is_an_error_map(server, monkeypatch):
    monkeypatch.setenv("SOMA_MAX_FILE_BYTES", "1K")
    assert call("http_get", f"{server}/api/big") == {
        "error": "http_get: the answer is larger than the 1 KiB read limit (set SOMA_MAX_FILE_BYTES to read "
                 "bigger files)", "kind": "size", "status": 0, "body": ""}


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "/etc/passwd", "data:,hello"])
def test_only_http_and_https_urls_are_fetched(url):
    with pytest.raises(SomaError) as err:
        call("http_get", url)
    assert err.value.kind == "type" and "only http:// and https:// URLs are fetched" in err.value.detail


@pytest.mark.parametrize("options, message", [
    ({"timeout": 0}, "http_get(): timeout must be a positive Int (ms), got 0"),
    ({"headers": "x"}, "http_get(): headers must be a Map, got x"),
    ({"retries": 3}, "http_get(): unknown option 'retries' — the options are timeout (ms), headers"),
])
def test_bad_options_are_type_errors(server, options, message):
    with pytest.raises(SomaError) as err:
        call("http_get", f"{server}/api/text", options)
    assert (err.value.kind, err.value.detail) == ("type", message)


AGENT = '''cell agent Desk {{
    face {{
        tool fetch(path: String) -> String [capability: "{base}/api/*"] "Fetch from the API"
        signal ask(q: String) -> String
    }}
    on fetch(path: String) {{
        return to_string(http_get("{base}" + path))
    }}
    on ask(q: String) {{
        return think(q)
    }}
}}'''


def test_a_tool_reaches_only_its_capability_and_redirects_cannot_leave_it(server):
    session = Session()
    assert session.execute(AGENT.format(base=server)).ok
    for path in ("/api/text", "/admin", "/api/go"):
        assert session.execute(f'mock think tool fetch(path: "{path}")\nmock think "done"').ok
        assert session.execute('ask("q")').result["text/plain"] == "done"
    results = json.loads(session.execute(
        'to_json(trace() |> filter(r => r._type == "ToolCall") |> map(r => r.result))').result["text/plain"])
    clause = f'(\\"{server}/api/*\\")'.replace('\\"', '"')
    assert results == [
        "hello",
        f'tool error: capability: http_get("{server}/admin") reaches a URL outside the capability of tool '
        f"'fetch' {clause}",
        f'tool error: capability: http_get("{server}/admin") reaches a URL outside the capability of tool '
        f"'fetch' {clause}",
    ]
    assert session.execute(f'to_string(http_get("{server}/admin"))').result["text/plain"] == "the admin page"


def test_mock_http_scripts_the_next_answer_without_a_request_and_the_capability_still_holds():
    session = Session()
    assert session.execute(AGENT.format(base="https://api.example.com")).ok
    assert session.execute('mock http_get map("a", 1)\nmock http_post error "timeout: slow"').ok
    assert session.execute('http_get("https://nowhere.invalid/x").a').result["text/plain"] == "1"
    assert session.execute('http_post("https://nowhere.invalid/x", "b").error').result["text/plain"] == (
        "http_post: timeout: slow")
    assert session.execute('mock http_get "scripted"\nmock think tool fetch(path: "/../admin")\n'
                           'mock think "done"\nask("q")').result["text/plain"] == "done"
    results = session.execute('trace() |> filter(r => r._type == "ToolCall") |> map(r => r.result)')
    assert "capability: http_get(\\\"https://api.example.com/../admin\\\") reaches a URL outside" in \
        results.result["text/plain"]
    assert session.execute("%mocks").stream_text().startswith("mock http_get scripted")  # not consumed


def test_soma_test_scripts_http_with_mocks(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "w.cell").write_text('cell A {\n    on get_it() {\n        return http_get("https://api.example.com/x")'
                                     '\n    }\n}\ncell test T {\n    rules {\n        mock http_get map("a", 1)\n'
                                     '        assert get_it().a == 1\n        mock http_get error "timeout: slow"\n'
                                     '        assert get_it().kind == "network"\n    }\n}\n')
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "test", "w.cell"], cwd=tmp_path, capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=root), timeout=120)
    assert done.stdout == ('test T ...\n  ✓ assert get_it().a == 1\n  ✓ assert get_it().kind == "network"\n\n'
                           '2 tests: 2 passed, 0 failed\n'), done.stdout + done.stderr


def test_horde_tasks_on_workers_fetch_while_others_run(server):
    session = Session()
    program = ('cell Crawler {\n    memory {\n        pages: List<String>\n    }\n'
               '    on go(paths: List) { return horde(Crawler.page, paths, map("concurrency", 3, "apply", "_keep")) }\n'
               f'    on page(path: String) {{ return http_get("{server}" + path) }}\n'
               '    on _keep(text: Any) { pages.push(to_string(text)) }\n'
               '    on seen() { return pages }\n}')
    assert session.execute(program).ok
    assert session.execute('Crawler.go(["/api/text", "/api/missing", "/admin", "/api/text"])').ok
    pages = json.loads(session.execute("to_json(Crawler.seen())").result["text/plain"])
    assert pages[0] == "hello" and pages[2:] == ["the admin page", "hello"]
    assert json.loads(pages[1])["status"] == 404
