"""Cassettes: provider exchanges recorded as text, replayed without a network.

A cassette is a file of JSON lines, one per exchange: `{"key", "request",
"reply", "usage"}` with sorted keys. `request` is the neutral request of
`providers` (provider, model, system, messages, tools, max_tokens, json: no
headers, so no key), `key` a hash of it. Identical requests recorded twice
are replayed in the order recorded (the last one again when they run out).
An exchange the provider answered with an error (a refusing status, an error
body, a body that is no JSON) is recorded as `{"key", "request", "error"}` and
replayed as the same error; a call that got no answer (a timeout, a refused
connection) is not recorded. A reply's usage is replayed as it was reported,
and charged by the same rule (`usage`), so a replay costs what the live call did.

A cassette is foreign data: it is read within the read limit (`core.files`),
and a line that is not UTF-8, not JSON, not shaped as an exchange, or whose
key is not the hash of its request (an answer to another request) is an error
naming the file and the line. Secrets are masked in the strings of what is
written, never by editing the JSON text.

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
from ...core.files import read_bytes_bounded
from .errors import answer_error, llm_error
from .providers import Reply, ToolCall
from .redact import redact, redact_data
from .usage import checked_usage

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

    def mask(self, secrets: Iterable[str]) -> None:
        """Mask these secrets too in what is written and looked up (the key of the provider in use)."""
        self.secrets = tuple(dict.fromkeys(self.secrets + tuple(s for s in secrets if s)))

    @property
    def size(self) -> int:
        """How many exchanges the cassette holds."""
        return sum(len(found) for found in self.entries.values())

    def _load(self) -> None:
        """Read every recorded exchange within the read limit, refusing the first line that is not one."""
        try:
            data = read_bytes_bounded(self.path)
        except OSError as err:
            raise llm_error(f"cannot read cassette {self.path}: {err.strerror or err}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            number = data[:err.start].count(b"\n") + 1
            raise self.refused(number, "not UTF-8 text (a binary file?)") from None
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            problem = entry_problem(entry)
            if problem is not None:
                raise self.refused(number, problem)
            self.entries.setdefault(entry["key"], []).append(entry)

    def refused(self, number: int, problem: str) -> SomaError:
        """The error naming line `number` of the file and what is wrong with it."""
        return llm_error(f"cassette {self.path}:{number}: {problem}")

    def lookup(self, request: dict) -> Optional[Reply]:
        """The recorded reply of `request` (None when there is none or the mode does not replay);
        a recorded failure is raised again, as the provider's answer was an error."""
        if not self.replays:
            return None
        key = request_key(self.cleaned(request))
        found = self.entries.get(key)
        if not found:
            return None
        index = self.served.get(key, 0)
        self.served[key] = index + 1
        entry = found[min(index, len(found) - 1)]
        if "error" in entry:
            raise answer_error(entry["error"])
        return recorded_reply(entry)

    def record(self, request: dict, reply: Reply) -> None:
        """Append one exchange (when the mode records)."""
        if not self.records:
            return
        data = reply.masked(self.secrets).to_record()
        usage = {"total_tokens": data.pop("total_tokens"), "output_tokens": data.pop("output_tokens")}
        problem = data.pop("usage_problem")
        if problem is not None:
            usage["problem"] = problem
        self._append(request, {"reply": data, "usage": usage})

    def record_error(self, request: dict, text: str) -> None:
        """Append an exchange the provider answered with an error (when the mode records)."""
        self._append(request, {"error": redact(text, self.secrets)})

    def _append(self, request: dict, answer: dict) -> None:
        """Write one exchange line: the cleaned request, its key and `answer`."""
        if not self.records:
            return
        request = self.cleaned(request)
        entry = {"key": request_key(request), "request": request, **answer}
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        self.entries.setdefault(entry["key"], []).append(entry)
        self.served[entry["key"]] = len(self.entries[entry["key"]])

    def cleaned(self, request: dict) -> dict:
        """The request with every secret replaced by `***` (what is hashed and written)."""
        return redact_data(request, self.secrets) if any(self.secrets) else request

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


REQUEST_FIELDS = {"provider": str, "model": str, "system": str, "messages": list, "tools": list,
                  "max_tokens": int, "json": bool}
REPLY_FIELDS = {"text": (str, type(None)), "calls": list, "finish_reason": str, "turn": dict}
CALL_FIELDS = ("id", "name", "arguments")


def entry_problem(entry) -> Optional[str]:
    """What makes a parsed line no recorded exchange (None when it is one)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) or "request" not in entry \
            or ("reply" in entry) == ("error" in entry):
        return "not a recorded exchange (expected a JSON object with key, request, and reply or error)"
    request = entry["request"]
    problem = fields_problem(request, REQUEST_FIELDS, "request")
    if problem is None and not all(isinstance(m, dict) for m in request["messages"] + request["tools"]):
        problem = "request.messages and request.tools must hold JSON objects"
    if problem is not None:
        return problem
    if request_key(request) != entry["key"]:
        return "its key is not the hash of its request: the answer would be served to another request"
    if "error" in entry:
        return None if isinstance(entry["error"], str) else "error must be a String (the provider's error text)"
    return reply_problem(entry["reply"], entry.get("usage", {}))


def reply_problem(reply, usage) -> Optional[str]:
    """What is wrong with a recorded reply and its usage (None when nothing is); usage figures
    themselves are the provider's words, judged when they are charged (`usage`)."""
    problem = fields_problem(reply, REPLY_FIELDS, "reply")
    if problem is not None:
        return problem
    for index, call in enumerate(reply["calls"]):
        if not isinstance(call, dict) or not all(isinstance(call.get(name), str) for name in CALL_FIELDS):
            return f"reply.calls[{index}] must be an object with id, name and arguments (Strings)"
    if not isinstance(usage, dict):
        return "usage must be an object (total_tokens, output_tokens)"
    if not isinstance(usage.get("problem", ""), str):
        return "usage.problem must be a String"
    return None


def fields_problem(value, fields: dict, what: str) -> Optional[str]:
    """The first field of `value` that is missing or of the wrong JSON type (None when all fit)."""
    if not isinstance(value, dict):
        return f"{what} must be a JSON object"
    for name, expected in fields.items():
        if name not in value:
            return f"{what}.{name} is missing"
        found = value[name]
        if not isinstance(found, expected) or (expected is int and isinstance(found, bool)):
            return f"{what}.{name} has the wrong type ({_shown(found)})"
    return None


def recorded_reply(entry: dict) -> Reply:
    """The Reply of a checked entry; its usage figures are judged as a provider's are."""
    data, usage = entry["reply"], entry.get("usage", {})
    total, output, problem = checked_usage(usage.get("total_tokens"), usage.get("output_tokens"))
    calls = [ToolCall(c["id"], c["name"], c["arguments"]) for c in data["calls"]]
    return Reply(data["text"], calls, data["finish_reason"], total, output, data["turn"],
                 usage.get("problem") or problem)


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
