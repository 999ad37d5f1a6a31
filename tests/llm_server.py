"""A loopback model server for tests: both wire formats, scripted per test.

`LoopbackModel` runs `http.server` in a thread on 127.0.0.1. A POST to
`…/v1/messages` is answered in the Anthropic Messages format, a POST to
`…/chat/completions` in the OpenAI Chat Completions format. Each request
takes the next scripted answer:

    server.text("Refund approved")          a text reply
    server.tool("lookup", {"order": "A1"})  a tool call
    server.status(429, "slow down")         an error status with a provider message
    server.slow(5.0, "late")                a text reply after a pause
    server.raw("not json at all")           a 200 whose body is not JSON (or another status)
    server.echo(401, pad=30)                an error body echoing the request's headers

Every request is kept (path, headers, parsed body) in `server.requests`, so
tests can assert where the key went. An unscripted request gets a 500
saying so, which fails the test that forgot to script it. No network is
touched: the server listens on loopback only.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackModel:
    """A scripted model server on 127.0.0.1 (use as a context manager)."""

    def __init__(self, port: int = 0):
        self.script: deque = deque()
        self.requests: list[dict] = []
        self.stopping = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.calls = 0

    def __enter__(self) -> "LoopbackModel":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and close the port (a slow reply in progress is cut short)."""
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return self.server.server_address[1]

    def url(self, wire: str) -> str:
        """The full endpoint of a wire format ("openai" or "anthropic")."""
        path = "/v1/messages" if wire == "anthropic" else "/v1/chat/completions"
        return f"http://127.0.0.1:{self.port}{path}"

    # ------------------------------------------------------------ scripting

    def text(self, text: str, output_tokens: int = 5, input_tokens: int = 20) -> "LoopbackModel":
        """Script a text reply."""
        self.script.append(("text", text, input_tokens, output_tokens))
        return self

    def tool(self, name: str, arguments: dict, call_id: str = "call_1", output_tokens: int = 8) -> "LoopbackModel":
        """Script a tool call."""
        self.script.append(("tool", name, arguments, call_id, output_tokens))
        return self

    def status(self, code: int, message: str) -> "LoopbackModel":
        """Script an error status carrying a provider message."""
        self.script.append(("status", code, message))
        return self

    def slow(self, seconds: float, text: str) -> "LoopbackModel":
        """Script a text reply sent after `seconds`."""
        self.script.append(("slow", seconds, text))
        return self

    def raw(self, body: str, status: int = 200) -> "LoopbackModel":
        """Script an answer whose body is `body` as it is (status 200 unless given)."""
        self.script.append(("raw", body, status))
        return self

    def echo(self, status: int, pad: int = 0) -> "LoopbackModel":
        """Script a plain-text error echoing the request's headers, the key's first, after `pad`
        characters (a careless proxy that shows the Authorization header back)."""
        self.script.append(("echo", status, pad))
        return self

    def next_answer(self, wire: str, headers: dict) -> tuple[int, str]:
        """(status, body) for the next request in `wire` format (`headers`: the request's)."""
        if not self.script:
            return 500, json.dumps({"error": {"message": "loopback model: no answer scripted for this request"}})
        entry = self.script.popleft()
        kind = entry[0]
        if kind == "slow":
            self.stopping.wait(entry[1])
            return 200, json.dumps(text_body(wire, entry[2], 20, 5))
        if kind == "text":
            return 200, json.dumps(text_body(wire, entry[1], entry[2], entry[3]))
        if kind == "tool":
            return 200, json.dumps(tool_body(wire, *entry[1:]))
        if kind == "status":
            return entry[1], json.dumps({"error": {"message": entry[2], "type": "scripted"}})
        if kind == "echo":
            first = sorted(headers, key=lambda name: name.lower() not in ("authorization", "x-api-key"))
            shown = "; ".join(f"{name}: {headers[name]}" for name in first)
            return entry[1], "x" * entry[2] + shown
        return entry[2], entry[1]


def text_body(wire: str, text: str, input_tokens: int, output_tokens: int) -> dict:
    """A text reply in the wire format."""
    if wire == "anthropic":
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": "loopback",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "loopback",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                      "total_tokens": input_tokens + output_tokens}}


def tool_body(wire: str, name: str, arguments: dict, call_id: str, output_tokens: int) -> dict:
    """A tool-call reply in the wire format."""
    if wire == "anthropic":
        return {"id": "msg_2", "type": "message", "role": "assistant", "model": "loopback",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": output_tokens}}
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"id": "chatcmpl-2", "object": "chat.completion", "model": "loopback",
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": output_tokens, "total_tokens": 30 + output_tokens}}


def _handler_for(model: LoopbackModel):
    """The request handler class bound to one LoopbackModel."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length).decode("utf-8")
            wire = "anthropic" if self.path.split("?")[0].endswith("/messages") else "openai"
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            model.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body,
                                   "wire": wire})
            status, answer = model.next_answer(wire, dict(self.headers.items()))
            data = answer.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    return Handler
