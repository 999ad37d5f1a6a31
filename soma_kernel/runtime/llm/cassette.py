"""Cassettes: provider exchanges recorded as text, replayed without a network.

A cassette is a file of JSON lines, one per exchange: `{"key", "request",
"reply", "usage"}` with sorted keys. `request` is the neutral request of
`providers` (provider, model, system, messages, tools, max_tokens, json: no
headers, so no key), `key` a hash of it. Identical requests recorded twice
are replayed in the order recorded (the last one again when they run out).

Modes, in VCR.py's words: `once` (the default) records when the file does
not exist yet and otherwise only replays; `replay` never calls out; `record`
always calls and appends; `new` replays what it finds and records the rest.
A request a replay-only cassette does not hold is a kind `llm` error naming
the places where it differs from the nearest recorded request.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Iterable, Optional

from ...core.diagnostics import SomaError
from .errors import llm_error
from .providers import Reply
from .redact import redact

SHOWN_DIFFERENCES = 3
SHOWN_VALUE_CHARS = 70
ABSENT = object()  # the side of a list that has no item at that index


def request_key(request: dict) -> str:
    """A stable hash of a neutral request."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


class Cassette:
    """One cassette file opened in one mode."""

    def __init__(self, path: str, mode: str, secrets: Iterable[str] = ()):
        self.path = path
        self.mode = mode
        self.secrets = tuple(secrets)
        existed = os.path.exists(path)
        self.replays = mode in ("replay", "new") or (mode == "once" and existed)
        self.records = mode in ("record", "new") or (mode == "once" and not existed)
        self.entries: dict[str, list[dict]] = {}
        self.served: dict[str, int] = {}
        if existed:
            self._load()

    def _load(self) -> None:
        """Read every recorded exchange, refusing a line that is not one."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except OSError as err:
            raise llm_error(f"cannot read cassette {self.path}: {err.strerror}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key = entry["key"]
                entry["request"], entry["reply"]
            except (ValueError, KeyError, TypeError):
                raise llm_error(f"cassette {self.path}:{number}: not a recorded exchange "
                                "(expected a JSON object with key, request, reply)") from None
            self.entries.setdefault(key, []).append(entry)

    def lookup(self, request: dict) -> Optional[Reply]:
        """The recorded reply of `request` (None when there is none or the mode does not replay)."""
        if not self.replays:
            return None
        key = request_key(self.cleaned(request))
        found = self.entries.get(key)
        if not found:
            return None
        index = self.served.get(key, 0)
        self.served[key] = index + 1
        entry = found[min(index, len(found) - 1)]
        return Reply.from_record({**entry["reply"], **entry.get("usage", {})})

    def record(self, request: dict, reply: Reply) -> None:
        """Append one exchange (when the mode records)."""
        if not self.records:
            return
        data = json.loads(redact(json.dumps(reply.to_record()), self.secrets))
        usage = {"total_tokens": data.pop("total_tokens"), "output_tokens": data.pop("output_tokens")}
        request = self.cleaned(request)
        entry = {"key": request_key(request), "request": request, "reply": data, "usage": usage}
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        self.entries.setdefault(entry["key"], []).append(entry)
        self.served[entry["key"]] = len(self.entries[entry["key"]])

    def cleaned(self, request: dict) -> dict:
        """The request with every secret replaced by `***` (what is hashed and written)."""
        if not any(self.secrets):
            return request
        return json.loads(redact(json.dumps(request, ensure_ascii=False), self.secrets))

    def miss(self, request: dict) -> SomaError:
        """The error of a request this replay-only cassette has no answer for."""
        head = (f"think(): no answer was recorded for this request in cassette {os.path.basename(self.path)} "
                f"(mode {self.mode})")
        request = self.cleaned(request)
        recorded = [e["request"] for entries in self.entries.values() for e in entries]
        if not recorded:
            return llm_error(f"{head} — the cassette holds no exchange; record one with "
                             "SOMA_LLM_CASSETTE_MODE=record (or `%cassette FILE --mode record`)")
        nearest = min(recorded, key=lambda r: len(differences(r, request)))
        lines = [f"  {path}: recorded {_shown(old)} — now {_shown(new)}"
                 for path, old, new in differences(nearest, request)[:SHOWN_DIFFERENCES]]
        return llm_error(redact(f"{head} — the nearest recorded request differs at:\n" + "\n".join(lines),
                                       self.secrets))


def differences(old, new, path: str = "") -> list[tuple[str, object, object]]:
    """(path, old value, new value) for each place two JSON values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new)):
            found += differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(old, list) and isinstance(new, list):
        found = []
        for index, (a, b) in enumerate(zip(old, new)):
            found += differences(a, b, f"{path}[{index}]")
        if len(old) != len(new):
            common = min(len(old), len(new))
            extra = (old[common], ABSENT) if len(old) > common else (ABSENT, new[common])
            found += [(f"{path} (length)", len(old), len(new)), (f"{path}[{common}]", *extra)]
        return found
    return [] if old == new else [(path, old, new)]


def _shown(value) -> str:
    """A value in a miss message: JSON, cut to a readable length."""
    if value is ABSENT:
        return "(nothing)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 1] + "…"
