"""The scripted answers (`mock think`, `mock approve`, handler mocks, `mock now`)
and the token arithmetic every mocked reply shares with the tool rounds."""

from __future__ import annotations

import json
import math
from collections import deque
from typing import Optional

from ..core.diagnostics import SomaError
from .values import display, to_json


class Mocks:
    """The scripted answers: think replies/errors, approvals, handler results, the clock."""

    def __init__(self):
        self.think: deque = deque()       # ("reply", text) | ("error", text) | ("tool", (name, arguments))
        self.approve: deque = deque()     # bools
        self.handlers: dict[str, deque] = {}  # "Cell.h" or "h" -> ("value", v) | ("error", text)
        self.now_ms: Optional[int] = None

    def clear(self) -> None:
        """Forget every scripted answer."""
        self.think.clear()
        self.approve.clear()
        self.handlers.clear()
        self.now_ms = None

    def snapshot(self) -> tuple:
        """Copies of every queue and the clock, for `restore` (small: what a notebook scripted)."""
        return (tuple(self.think), tuple(self.approve),
                {name: tuple(queue) for name, queue in self.handlers.items()}, self.now_ms)

    def restore(self, saved: tuple) -> None:
        """Put the queues and the clock back as `snapshot` found them."""
        think, approve, handlers, self.now_ms = saved
        self.think.clear()
        self.think.extend(think)
        self.approve.clear()
        self.approve.extend(approve)
        self.handlers.clear()
        self.handlers.update({name: deque(queue) for name, queue in handlers.items()})

    def pending(self) -> list[str]:
        """One line per unconsumed mock, for notes and `%mocks`."""
        lines = [scripted_line(kind, entry) for kind, entry in self.think]
        lines += [f"mock approve {display(answer)}" for answer in self.approve]
        for name, queue in self.handlers.items():
            lines += [f"mock {name} {'error ' if kind == 'error' else ''}{display(v)}" for kind, v in queue]
        return lines


def scripted_line(kind: str, entry) -> str:
    """A queued `mock think` as the line that scripts it."""
    if kind == "tool":
        name, arguments = entry
        shown = ", ".join(f"{key}: {to_json(value)}" for key, value in arguments.items())
        return f"mock think tool {name}({shown})"
    return f"mock think {'error ' if kind == 'error' else ''}{json.dumps(entry, ensure_ascii=False)}"


def scripted_error(text: str) -> SomaError:
    """The error a `mock think error "…"` raises when the model's turn comes."""
    kind = text.split(": ", 1)[0] if ": " in text else "llm"
    return SomaError(kind, text, text=f"think() failed: {text} (scripted by `mock think error`)")


def tokens_of(chars: int) -> int:
    """The reference's token estimate: a token per 4 characters, rounded up."""
    return math.ceil(chars / 4)


def capped(text: str, max_tokens: int, what: str) -> str:
    """A mock reply, refused (kind llm) when it is longer than max_tokens allows."""
    tokens = tokens_of(len(text))
    if tokens > max_tokens:
        raise SomaError("llm", f"{what} is ~{tokens} tokens for max_tokens {max_tokens} — "
                        "shorten it or raise max_tokens")
    return text
