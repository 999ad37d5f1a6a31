"""Sending a request reliably: retries with back-off, one deadline, rpm/tpm.

`send_with_retries` makes at most `retries + 1` sends. A 429/500/502/503/529
or a refused connection is retried after 500 ms · 2ⁿ, announced on stderr
as `[agent] retry n/N after 500ms: <error>`, when the pause ends before the
deadline. The deadline (the call's `timeout`, else `SOMA_LLM_TIMEOUT_MS`,
else 60 s) covers the sends and the pauses; a send that outlives it is not
retried. Any other failure (400, 401, a malformed body…) fails at once — the
reference re-sends those silently, which only repeats the refusal.

`RateLimiter` keeps the last minute of sends: before each one it waits until
there are fewer than `rpm` requests and room for the request's tokens under
`tpm` in any 60 s window (0 = no limit); a 429 pauses every later send.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Callable

from ...core.diagnostics import SomaError
from .errors import answer_error, llm_error
from .providers import ProviderFailure

WINDOW_S = 60.0
FIRST_DELAY_S = 0.5


def send_with_retries(attempt: Callable[[float], object], retries: int, timeout_ms: int,
                      note: Callable[[str], None], on_retry: Callable[[ProviderFailure, float], None] = lambda f, d: None,
                      clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
    """`attempt(seconds_left)` until it succeeds, by the policy of the module docstring."""
    deadline = clock() + timeout_ms / 1000
    last = None
    for number in range(retries + 1):
        left = deadline - clock()
        if left <= 0:
            raise timed_out(timeout_ms, last)
        try:
            return attempt(left)
        except ProviderFailure as failure:
            last = failure
            if failure.timeout:
                raise timed_out(timeout_ms, failure) from None
            if not failure.retryable:  # a refusing status is the provider's answer; other failures are not
                error = answer_error if failure.status is not None else llm_error
                raise error(f"think() failed: {failure.text}") from None
        if number == retries:
            break
        delay = FIRST_DELAY_S * 2 ** number
        if clock() + delay >= deadline:
            raise timed_out(timeout_ms, last)
        note(f"[agent] retry {number + 1}/{retries} after {duration_text(delay)}: {last.text}")
        on_retry(last, delay)
        sleep(delay)
    raise llm_error(f"think() failed after {retries} retries: {last.text}")


def timed_out(timeout_ms: int, last) -> SomaError:
    """The error of a spent deadline, with the last failure seen."""
    detail = last.text if last is not None else "no answer yet"
    return llm_error(f"think() request timed out after {timeout_ms} ms (the timeout covers retries): {detail}")


def duration_text(seconds: float) -> str:
    """`500ms`, `1s`, `1.5s`: a pause as the retry line shows it."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    return f"{seconds:g}s"


def request_tokens(body_bytes: int, max_tokens: int, tpm: int) -> int:
    """What a request counts against `tpm`: ceil(bytes/4) + max_tokens, at most tpm."""
    tokens = math.ceil(body_bytes / 4) + (max_tokens or 1000)
    return min(tokens, tpm) if tpm else tokens


class RateLimiter:
    """The rpm/tpm window shared by every call of one program."""

    def __init__(self, rpm: int, tpm: int, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rpm = rpm
        self.tpm = tpm
        self.clock = clock
        self.sleep = sleep
        self.sent: deque = deque()  # (time, tokens)
        self.paused_until = 0.0
        self.lock = threading.Lock()  # horde workers wait here at once: the window is read and taken as one step

    def wait(self, tokens: int) -> None:
        """Block until a send of `tokens` fits in the window, then count it."""
        while True:
            with self.lock:
                now = self.clock()
                while self.sent and self.sent[0][0] <= now - WINDOW_S:
                    self.sent.popleft()
                pause = self.paused_until - now
                if pause <= 0:
                    pause = self._window_pause(now, tokens)
                if pause <= 0:
                    self.sent.append((now, tokens))
                    return
            self.sleep(pause)

    def _window_pause(self, now: float, tokens: int) -> float:
        """Seconds until the oldest send leaves the window, when the window is full (else 0)."""
        over_rpm = self.rpm and len(self.sent) >= self.rpm
        over_tpm = self.tpm and sum(t for _, t in self.sent) + tokens > self.tpm
        if (over_rpm or over_tpm) and self.sent:
            return self.sent[0][0] + WINDOW_S - now
        return 0.0

    def pause(self, seconds: float) -> None:
        """After a 429: no send before `seconds` from now (when a limit is set)."""
        if self.rpm or self.tpm:
            with self.lock:
                self.paused_until = max(self.paused_until, self.clock() + seconds)
