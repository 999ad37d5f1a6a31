"""The scripted answers (`mock think`, `mock approve`, handler mocks, `mock now`)
and the token arithmetic every mocked reply shares with the tool rounds."""

from __future__ import annotations

import json
import math
from collections import deque
from typing import NamedTuple, Optional

from ..core.diagnostics import MissingName, SomaError
from .values import display, to_json

NO_MODEL = MissingName("model", "think")
"""What a kind `llm` error misses when no model is there to answer (no key, no scripted turn left): a mock is
the answer, and the notebook's hint says how to write one."""


class Scripted(NamedTuple):
    """One scripted answer: its kind, its value and the place that queued it (a notebook
    cell's `cell[N]`, "" in a test cell).

    kind: "reply" | "error" | "tool" (value: (name, arguments)) for `mock think`;
    "approve" (value: a Bool); "value" | "error" for a handler mock.
    """

    kind: str
    value: object
    origin: str = ""


class Mocks:
    """The scripted answers: think replies/errors, approvals, handler results, the clock.

    A scripted answer is consumed when its call comes, whether or not the statement
    that made the call then succeeds (the reference's test runner: a model's answer,
    once given, is given); what nobody consumed can be dropped with `discard`.
    """

    def __init__(self):
        self.think: deque[Scripted] = deque()
        self.approve: deque[Scripted] = deque()
        self.handlers: dict[str, deque[Scripted]] = {}  # "Cell.h" or "h" -> its scripted results
        self.now_ms: Optional[int] = None

    def clear(self) -> None:
        """Forget every scripted answer."""
        self.think.clear()
        self.approve.clear()
        self.handlers.clear()
        self.now_ms = None

    def queues(self) -> list[tuple[str, deque]]:
        """(the name a mock line gives, the queue) for every queue, in the order `pending` lists them."""
        return [("think", self.think), ("approve", self.approve), *self.handlers.items()]

    def pending(self) -> list[str]:
        """One line per unconsumed mock (the line that scripts it), for notes and `%mocks`."""
        return [scripted_line(name, entry) for name, queue in self.queues() for entry in queue]

    def pending_by_origin(self) -> list[tuple[str, str]]:
        """(line, the place that queued it) per unconsumed mock, in the order `pending` lists them."""
        return [(scripted_line(name, entry), entry.origin) for name, queue in self.queues() for entry in queue]

    def discard(self, origin: Optional[str] = None) -> list[str]:
        """Drop the unconsumed mocks queued at `origin` (every one when None); the lines dropped.
        The clock (`mock now`) is a setting, not an answer: it stays."""
        dropped = []
        for name, queue in self.queues():
            kept, gone = [], []
            for entry in queue:
                (gone if origin is None or entry.origin == origin else kept).append(entry)
            if gone:
                queue.clear()
                queue.extend(kept)
                dropped += [scripted_line(name, entry) for entry in gone]
        return dropped


def scripted_line(name: str, entry: Scripted) -> str:
    """A queued mock as the line that scripts it (`name`: think, approve or the handler's)."""
    if entry.kind == "tool":
        tool, arguments = entry.value
        shown = ", ".join(f"{key}: {to_json(value)}" for key, value in arguments.items())
        return f"mock think tool {tool}({shown})"
    error = "error " if entry.kind == "error" else ""
    if name == "think":
        return f"mock think {error}{json.dumps(entry.value, ensure_ascii=False)}"
    return f"mock {name} {error}{display(entry.value)}"


def scripted_error(text: str) -> SomaError:
    """The error a `mock think error "…"` raises when the model's turn comes."""
    kind = text.split(": ", 1)[0] if ": " in text else "llm"
    return SomaError(kind, text, text=f"think() failed: {text} (scripted by `mock think error`)")


def tokens_of(chars: int) -> int:
    """The reference's token estimate: a token per 4 characters, rounded up."""
    return math.ceil(chars / 4)


def request_bound(request_bytes: int, messages: int, max_tokens: int) -> int:
    """An upper bound of one model request's tokens (providers.md §6): a token is
    at least one byte, a few more per message for the chat format, plus the reply's cap."""
    return request_bytes + 8 * messages + 16 + max_tokens


def capped(text: str, max_tokens: int, what: str) -> str:
    """A mock reply, refused (kind llm) when it is longer than max_tokens allows."""
    tokens = tokens_of(len(text))
    if tokens > max_tokens:
        raise SomaError("llm", f"{what} is ~{tokens} tokens for max_tokens {max_tokens} — "
                        "shorten it or raise max_tokens")
    return text
