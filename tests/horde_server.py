"""A loopback model for concurrent hordes: it counts requests in flight and can hold them.

`CrowdModel` answers the OpenAI Chat Completions format on 127.0.0.1 with
`re: <the last user message>`, so every reply follows from its request whatever
order tasks send in. It counts the requests it has in flight and the peak.

- `hold=C`: a request whose prompt starts with "task" waits until C of them are
  in flight at once (or `expected` have arrived in all), so a test learns that C
  requests were out together without timing anything. A safety timeout (20 s)
  keeps a broken implementation from hanging the suite: it then fails its asserts.
- `reverse=True`: once the held requests are all in, they are answered one at a
  time from the highest task number down; the next is answered only after the
  model receives the request that says the previous task ended (a prompt starting
  with "ended"), so tasks end in reverse input order, deterministically.
- `on_request(n)`: called with the running count of task requests as each arrives.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional

SAFETY_S = 20.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


class CrowdModel:
    """The loopback model server (use as a context manager)."""

    def __init__(self, hold: int = 0, expected: int = 0, reverse: bool = False,
                 on_request: Optional[Callable[[int], None]] = None):
        self.hold, self.expected, self.reverse, self.on_request = hold, expected, reverse, on_request
        self.changed = threading.Condition()
        self.in_flight = 0
        self.peak = 0
        self.tasks = 0
        self.prompts: list[str] = []
        self.conversations: list[list[str]] = []  # each request's message contents (system left out)
        self.turn: Optional[int] = None   # reverse mode: the task number answered next
        self.waiting: list[int] = []
        self.released = threading.Event()
        self.opened = False
        self.server = _Server(("127.0.0.1", 0), _handler_for(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "CrowdModel":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat/completions"

    def release(self) -> None:
        """Answer every held request now."""
        with self.changed:
            self.released.set()
            self.changed.notify_all()

    def answer(self, prompt: str) -> None:
        """Block a task request as the mode says; count it in flight meanwhile."""
        with self.changed:
            self.prompts.append(prompt)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            number = None
            if prompt.startswith("task"):
                self.tasks += 1
                number = int(re.search(r"\d+", prompt).group())
                self.waiting.append(number)
                count = self.tasks
            elif prompt.startswith("ended") and self.turn is not None:
                self._next_turn()
            self.changed.notify_all()
        if number is not None and self.on_request is not None:
            self.on_request(count)
        with self.changed:
            if number is not None and self.hold:
                self.changed.wait_for(self._batch_in, SAFETY_S)
                if self.reverse:
                    if self.turn is None:
                        self._next_turn()
                    self.changed.wait_for(lambda: self.turn == number or self.released.is_set(), SAFETY_S)
            self.in_flight -= 1
            if number is not None:
                self.waiting.remove(number)
            self.changed.notify_all()

    def _batch_in(self) -> bool:
        """True once `hold` task requests were in at once (it stays true: the first answer must
        not shut the gate on the others), or `expected` came, or the test released them."""
        if len(self.waiting) >= self.hold or self.tasks >= self.expected > 0:
            self.opened = True
        return self.opened or self.released.is_set()

    def _next_turn(self) -> None:
        """Reverse mode: the highest task number still waiting answers next."""
        pending = [n for n in self.waiting if n != self.turn]
        self.turn = max(pending) if pending else None


def _handler_for(model: CrowdModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            prompt = users[-1]["content"] if users else ""
            with model.changed:
                model.conversations.append([m["content"] for m in body.get("messages", []) if m.get("role") != "system"])
            model.answer(prompt)
            data = json.dumps({"id": "c", "object": "chat.completion", "model": "loopback",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": f"re: {prompt}"}}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    return Handler
