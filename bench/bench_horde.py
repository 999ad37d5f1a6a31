"""Concurrent hordes against a loopback model that answers after a fixed latency.

A horde of N tasks, each one think() (one request of the OpenAI wire format to
a server on 127.0.0.1 that waits LATENCY before it answers), is run by the
runtime as `soma-kernel run` and the notebook run it, at several `concurrency`
values. The baseline is the ideal of the same run: ceil(N / C) × the latency the
server measured itself (the time it actually slept). Prints the wall time, the
ratio to the ideal (lower is better; 1.0 is perfect overlap) and the peak
number of requests the server had in flight at once (never above C).

    python bench/bench_horde.py
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from soma_kernel.project.settings import parse_project_text
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse

LATENCY_S = 0.3
ROWS = [(32, 8), (32, 32), (32, 1), (200, 50)]

PROGRAM = """
cell Boss {
    memory { got: Map<String, String> }
    on go(xs: List, c: Int) { return horde(Worker.ask, xs, map("concurrency", c, "on_result", "_keep")) }
    on _keep(v: String) { got.set("{got.size}", v) }
    on count() { return got.size }
}

cell agent Worker {
    on ask(x: Int) { return think("question {x}") }
}
"""


class Server(ThreadingHTTPServer):
    """A thread per connection, a listen backlog for every task at once."""

    daemon_threads = True
    request_queue_size = 1024


class SlowModel:
    """An OpenAI-format server on loopback: every answer after `latency`; counts requests in flight."""

    def __init__(self, latency: float):
        self.latency = latency
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.served = 0
        self.server = Server(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat/completions"

    def reset(self) -> None:
        """Zero the counters before a run."""
        self.peak = self.served = 0

    def _handler(self):
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once (no delayed-ACK stall)

            def log_message(self, *args) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with model.lock:
                    model.in_flight += 1
                    model.peak = max(model.peak, model.in_flight)
                time.sleep(model.latency)
                with model.lock:
                    model.in_flight -= 1
                    model.served += 1
                body = json.dumps({"id": "c", "object": "chat.completion", "model": "loopback",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": "ok"}}],
                                   "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def runtime(url: str) -> Runtime:
    """A runtime as `soma-kernel run` makes it, its [agent] pointed at the loopback model."""
    os.environ["BENCH_KEY"] = "loopback-key"
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    toml = f'[agent]\nprovider = "openai"\nurl = "{url}"\nkey = "${{BENCH_KEY}}"\nretries = 0\n'
    project = parse_project_text(toml, "./soma.toml")
    rt = Runtime(project=project, note=lambda text: None)
    rt.load_program(parse(PROGRAM, "bench.cell"))
    return rt


def main() -> None:
    """Print one row per (N, concurrency)."""
    model = SlowModel(LATENCY_S)
    rt = runtime(model.url)
    rt.call("go", [[0, 1], 2])  # the SDK client and imports are made once, outside the timing
    print(f"horde of N think() tasks, loopback model answering after {LATENCY_S * 1000:.0f} ms")
    print(f"{'N':>5} {'C':>5} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'peak in flight':>15}")
    for tasks, concurrency in ROWS:
        model.reset()
        before = rt.call("count", [])
        started = time.perf_counter()
        rt.call("go", [list(range(tasks)), concurrency])
        wall = time.perf_counter() - started
        assert rt.call("count", []) - before == tasks and model.served == tasks, "every task must be answered"
        ideal = math.ceil(tasks / concurrency) * LATENCY_S
        print(f"{tasks:>5} {concurrency:>5} {wall:>8.2f} {ideal:>8.2f} {wall / ideal:>6.2f} {model.peak:>15}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
