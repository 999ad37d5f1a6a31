"""HTTP builtins: http_get, http_post, http_put, http_patch, http_delete (spec §9: they answer, never raise).

A 2xx answer is its body: the parsed value when it is JSON (it starts with
`{` or `[`), else the text. Anything else is a Map `{error, kind, status,
body}`: kind `http` for a non-2xx status (with that status and its body),
`network` when no answer came (refused, timed out, an unknown host), `size`
for a body past SOMA_MAX_FILE_BYTES. Only http:// and https:// URLs are
fetched (a `file:` URL is no back door to the files). Inside a model's call
of a tool with a `[capability]`, the URL and every redirect it leads to must
fall inside the clause (runtime.capabilities), else kind `capability`.

The options Map: `timeout` (ms, default 30 000), `headers` (a Map of
Strings). A body that is not a String is sent as JSON. `mock http_get VALUE`
(or `mock http_post error "timeout: slow"`) scripts the next answer: no
request is made, the capability is still checked.
"""

from __future__ import annotations

import contextlib
from typing import Any, Optional

from ...core.diagnostics import SomaError
from ...core.files import FileTooLarge, max_file_bytes
from ..capabilities import require_url
from ..values import display, from_json, to_json
from .checks import expect_map, expect_str
from .registry import builtin

GROUP = "http"
DEFAULT_TIMEOUT_MS = 30_000
SCHEMES = ("http", "https")
OPTIONS = {"timeout": "milliseconds to wait for the answer (default 30 000)",
           "headers": "a Map of request headers"}


@builtin(GROUP, "http_get(url: String, opts?: Map) -> Any | {error}",
         "GET a URL: its body (JSON parsed), or {error, kind, status, body}.", pure=False, options=OPTIONS,
         needs_runtime=True)
def http_get(call, url, options=None):
    """http_get("https://api.example.com/items")."""
    return fetch(call, "GET", "http_get", url, None, options)


@builtin(GROUP, "http_delete(url: String, opts?: Map) -> Any | {error}",
         "DELETE a URL: its body (JSON parsed), or {error, kind, status, body}.", pure=False, options=OPTIONS,
         needs_runtime=True)
def http_delete(call, url, options=None):
    """http_delete("https://api.example.com/items/3")."""
    return fetch(call, "DELETE", "http_delete", url, None, options)


@builtin(GROUP, "http_post(url: String, body, opts?: Map) -> Any | {error}",
         "POST a body (JSON unless a String): the answer's body, or {error, kind, status, body}.",
         pure=False, options=OPTIONS, needs_runtime=True)
def http_post(call, url, body, options=None):
    """http_post("https://api.example.com/items", map("name", "x"))."""
    return fetch(call, "POST", "http_post", url, body, options)


@builtin(GROUP, "http_put(url: String, body, opts?: Map) -> Any | {error}",
         "PUT a body (JSON unless a String): the answer's body, or {error, kind, status, body}.",
         pure=False, options=OPTIONS, needs_runtime=True)
def http_put(call, url, body, options=None):
    """http_put("https://api.example.com/items/3", map("name", "y"))."""
    return fetch(call, "PUT", "http_put", url, body, options)


@builtin(GROUP, "http_patch(url: String, body, opts?: Map) -> Any | {error}",
         "PATCH a body (JSON unless a String): the answer's body, or {error, kind, status, body}.",
         pure=False, options=OPTIONS, needs_runtime=True)
def http_patch(call, url, body, options=None):
    """http_patch("https://api.example.com/items/3", map("name", "z"))."""
    return fetch(call, "PATCH", "http_patch", url, body, options)


def fetch(call, method: str, name: str, url: Any, body: Any, options: Optional[Any]) -> Any:
    """One request (or the next `mock NAME` answer): the answer's value, or the error Map;
    kind `type` / `capability` errors raise."""
    import http.client  # lazy: most programs never use the network
    import urllib.error
    import urllib.request

    url = expect_str(name, url)
    timeout, headers = _options(name, expect_map(name, options) if options is not None else {})
    if url.split(":", 1)[0].lower() not in SCHEMES:
        raise SomaError("type", f"{name}(): only http:// and https:// URLs are fetched, got {display(url)}")
    require_url(name, url)
    scripted = _scripted_answer(call, name)
    if scripted is not None:
        return scripted.value if scripted.kind == "value" else _failure("network", f"{name}: {display(scripted.value)}")
    data = None
    if body is not None:
        data = (body if type(body) is str else to_json(body)).encode("utf-8")
        headers.setdefault("Content-Type", "text/plain; charset=utf-8" if type(body) is str else "application/json")
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    opener = urllib.request.build_opener(_redirects_within_capability(name, urllib.request))
    waiting = call.runtime.agent.waiting() if call.runtime is not None else contextlib.nullcontext()
    try:
        with waiting, opener.open(request, timeout=timeout / 1000) as answer:  # other horde workers run meanwhile
            text = _body(answer)
    except urllib.error.HTTPError as err:
        try:
            text = _body(err)
        except FileTooLarge as too_large:
            return _failure("size", f"{name}: the answer is {too_large.strerror}", err.code)
        return _failure("http", f"{name}: HTTP {err.code} {err.reason}", err.code, text)
    except FileTooLarge as err:
        return _failure("size", f"{name}: the answer is {err.strerror}")
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        return _failure("network", f"{name}: no answer from {url} ({reason})")
    return _value_of(text)


def _scripted_answer(call, name: str):
    """The next `mock NAME …` answer queued for this builtin (a test or a notebook scripts the network), or None."""
    queue = call.runtime.mocks.handlers.get(name) if call.runtime is not None else None
    return queue.popleft() if queue else None


def _options(name: str, options: dict) -> tuple[float, dict]:
    """(timeout in ms, headers) from the options Map; kind `type` for anything else."""
    for key in options:
        if key not in ("timeout", "headers"):
            raise SomaError("type", f"{name}(): unknown option '{key}' — the options are timeout (ms), headers")
    timeout = options.get("timeout", DEFAULT_TIMEOUT_MS)
    if type(timeout) is not int or timeout <= 0:
        raise SomaError("type", f"{name}(): timeout must be a positive Int (ms), got {display(timeout)}")
    headers = options.get("headers", {})
    if type(headers) is not dict:
        raise SomaError("type", f"{name}(): headers must be a Map, got {display(headers)}")
    return timeout, {str(k): display(v) for k, v in headers.items()}


def _body(answer) -> str:
    """The answer's body as text (UTF-8, undecodable bytes replaced), read within the read limit."""
    limit = max_file_bytes()
    data = answer.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge("the answer", limit)
    return data.decode("utf-8", errors="replace")


def _value_of(text: str) -> Any:
    """A JSON body parsed, any other body as its text."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return from_json(text)
        except SomaError:
            return text
    return text


def _failure(kind: str, message: str, status: int = 0, body: str = "") -> dict:
    """The Map an HTTP builtin answers when it got no 2xx answer."""
    return {"error": message, "kind": kind, "status": status, "body": body}


def _redirects_within_capability(name: str, request_module):
    """A redirect handler that follows http(s) redirects only, each checked against the running tool's capability."""

    class CheckedRedirects(request_module.HTTPRedirectHandler):
        """urllib's redirect handling, refusing a target outside http(s) or the capability."""

        def redirect_request(self, req, fp, code, msg, headers, newurl):
            if newurl.split(":", 1)[0].lower() not in SCHEMES:
                raise SomaError("type", f"{name}(): a redirect to {display(newurl)} is not followed (only http, https)")
            require_url(name, newurl)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return CheckedRedirects()
