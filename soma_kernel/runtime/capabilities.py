"""A tool's `[capability: "…"]`: what its body may reach while the model's call runs.

`tool fetch(q: String) [capability: "https://api.example.com/*"] "…"` limits
the handler `fetch`, and everything it calls, while the model's tool call
runs: the file builtins (`read_file`, `write_file`, `read_csv`, `write_csv`)
and the URLs of the HTTP builtins (`http_get` …, and each redirect they
follow) must fall inside one of the clause's scopes, else the call fails
with kind `capability` — which goes back to the model as `tool error:
capability: …`. A tool without a clause is not limited (the reference's
rule), and code outside a tool call never is. A tool called from inside a
limited tool's `think()`, and a horde a limited tool starts, stay held to
the outer clause too.

A clause holds one or more scopes separated by spaces:

- `https://host/path*` or `http://…`: a URL with this scheme, host (a
  leading `*.` also admits its subdomains) and port, whose path is the given
  one, or starts with it when the pattern ends in `*`;
- `net:*` (any URL), `net:host` (http or https on that host, any path),
  `net:host/prefix`, `net:https://…` (the reference's forms);
- `fs:read:PATH` / `fs:write:PATH`: reading / writing the file PATH, or any
  file under it when PATH ends in `/` or `/*`; a relative PATH is relative to
  the program's folder. Paths are compared after resolving `..` and
  symbolic links, so a link cannot lead out of the scope.

`parse_clause` refuses anything else (an unknown scheme, a `*` elsewhere than
at the end), and `soma check` reports that refusal: a clause the runtime
cannot enforce is never silently ignored.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import posixpath
from typing import Iterator, Optional

from ..core.diagnostics import SomaError
from ..core.records import Record

URL_SCHEMES = ("http", "https")
FILE_MODES = ("read", "write")


class ClauseError(ValueError):
    """A capability scope this runtime cannot enforce; the message says why and what is accepted."""


class UrlScope(Record, frozen=True):
    """URLs of one scheme set, host (or its subdomains) and port, under a path (prefix when `prefix`)."""

    schemes: tuple
    host: str
    port: Optional[int]
    path: str
    prefix: bool
    subdomains: bool = False
    anything: bool = False


class FileScope(Record, frozen=True):
    """Reading or writing one file, or every file under a folder (`folder`)."""

    mode: str
    path: str
    folder: bool


class Capability(Record, frozen=True):
    """A tool's parsed clause: its text (for messages) and its scopes."""

    tool: str
    text: str
    urls: tuple
    files: tuple


# The capabilities in force: one per tool call running inside another (each must allow an access).
_ACTIVE: contextvars.ContextVar[tuple] = contextvars.ContextVar("soma_capabilities", default=())


def parse_clause(text: str, base_dir: str = ".", tool: str = "") -> Capability:
    """The Capability a clause's text grants (relative paths taken from `base_dir`); ClauseError if unenforceable."""
    words = text.split()
    if not words:
        raise ClauseError("an empty capability grants nothing — name the URLs or files the tool may reach")
    urls, files = [], []
    for word in words:
        scope = parse_scope(word, base_dir)
        (files if isinstance(scope, FileScope) else urls).append(scope)
    return Capability(tool, text, tuple(urls), tuple(files))


def parse_scope(word: str, base_dir: str = "."):
    """One scope of a clause: a UrlScope or a FileScope; ClauseError when it is no form we enforce."""
    if word.startswith("fs:"):
        return _file_scope(word, base_dir)
    if word.startswith("net:"):
        return _net_scope(word[len("net:"):], word)
    scheme = word.split(":", 1)[0].lower() if ":" in word else ""
    if scheme in URL_SCHEMES:
        return _url_scope(word, word)
    raise ClauseError(f"capability '{word}' has no form this runtime can enforce — use a URL pattern "
                      "(https://host/path*), net:host, net:*, fs:read:PATH or fs:write:PATH")


def _url_scope(pattern: str, word: str) -> UrlScope:
    """`https://host[:port]/path[*]` as a UrlScope."""
    from urllib.parse import urlsplit  # lazy: check and verify import this module; most programs have no clause

    if "*" in pattern[:-1].replace("://*.", "://", 1):
        raise ClauseError(f"capability '{word}': '*' may only end the pattern (or start the host as '*.')")
    prefix = pattern.endswith("*")
    parts = urlsplit(pattern[:-1] if prefix else pattern)
    host = parts.hostname or ""
    subdomains = host.startswith("*.")
    if subdomains:
        host = host[2:]
    try:
        port = parts.port
    except ValueError:
        raise ClauseError(f"capability '{word}': its port is not a number") from None
    if not host or parts.username or parts.password or parts.query or parts.fragment:
        raise ClauseError(f"capability '{word}': a URL pattern is scheme://host[:port]/path, optionally ending in '*'")
    if ".." in parts.path.split("/") or "." in parts.path.split("/"):
        raise ClauseError(f"capability '{word}': its path may not hold '.' or '..' segments")
    return UrlScope((parts.scheme.lower(),), host.lower(), port, parts.path or "/", prefix or not parts.path,
                    subdomains)


def _net_scope(rest: str, word: str) -> UrlScope:
    """The reference's `net:` forms."""
    if rest == "*":
        return UrlScope(URL_SCHEMES, "", None, "/", True, anything=True)
    if rest.lower().startswith(("http://", "https://")):
        return _url_scope(rest if rest.endswith("*") else rest + "*", word)
    host, _, path = rest.partition("/")
    if not host or "*" in rest or "@" in host or ":" in host and not host.rsplit(":", 1)[1].isdigit():
        raise ClauseError(f"capability '{word}': write net:host, net:host/path-prefix, net:https://… or net:*")
    name, _, port = host.partition(":")
    return UrlScope(URL_SCHEMES, name.lower(), int(port) if port else None, "/" + path, True)


def _file_scope(word: str, base_dir: str) -> FileScope:
    """`fs:read:PATH` / `fs:write:PATH` as a FileScope with an absolute, resolved path."""
    _, mode, path = (word.split(":", 2) + ["", ""])[:3]
    if mode not in FILE_MODES or not path:
        raise ClauseError(f"capability '{word}': write fs:read:PATH or fs:write:PATH (PATH/ for a whole folder)")
    folder = path.endswith("/") or path.endswith("/*")
    bare = path[:-1] if folder and path.endswith("*") else path
    if "*" in bare:
        raise ClauseError(f"capability '{word}': '*' may only end a folder (fs:read:data/*)")
    full = os.path.realpath(os.path.join(base_dir, os.path.expanduser(bare)))
    return FileScope(mode, full, folder)


@contextlib.contextmanager
def tool_scope(tool_name: str, clause: Optional[str], base_dir: str) -> Iterator[None]:
    """Run the body of tool `tool_name` limited by its clause (no clause: no limit).

    A clause that cannot be enforced (one `soma check` refuses) denies
    everything rather than nothing.
    """
    if clause is None:
        yield
        return
    try:
        capability = parse_clause(clause, base_dir, tool_name)
    except ClauseError:
        capability = Capability(tool_name, clause, (), ())
    with within(current() + (capability,)):  # a tool called from a tool's think() is held to both
        yield


def current() -> tuple:
    """The capabilities limiting the running code, outermost first (empty: no limited tool call is running)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def within(capabilities: tuple) -> Iterator[None]:
    """Run the block under `capabilities` (a horde started in a tool call runs its tasks, on any thread, so)."""
    token = _ACTIVE.set(capabilities)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def require_file(builtin: str, path: str, mode: str) -> None:
    """Refuse (kind `capability`) `builtin` reading or writing `path` outside a running tool's clause."""
    active = _ACTIVE.get()
    if not active:
        return
    full = os.path.realpath(path)
    for capability in active:
        if not any(scope.mode == mode and _under(full, scope) for scope in capability.files):
            raise _denied(capability, f"{builtin}(\"{path}\") {'reads' if mode == 'read' else 'writes'} a file")


def require_url(builtin: str, url: str) -> None:
    """Refuse (kind `capability`) `builtin` reaching `url` outside a running tool's clause."""
    for capability in _ACTIVE.get():
        if not any(url_allowed(url, scope) for scope in capability.urls):
            raise _denied(capability, f"{builtin}(\"{url}\") reaches a URL")


def url_allowed(url: str, scope: UrlScope) -> bool:
    """True when `url` falls inside `scope` (scheme, host, port, then path after decoding)."""
    from urllib.parse import unquote, urlsplit  # lazy: see _url_scope

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme not in scope.schemes or parts.username or parts.password or not parts.hostname:
        return False
    if scope.anything:
        return True
    host = parts.hostname.lower().rstrip(".")
    if host != scope.host and not (scope.subdomains and host.endswith("." + scope.host)):
        return False
    if (port or _DEFAULT_PORTS[scheme]) != (scope.port or _DEFAULT_PORTS[scheme]):
        return False
    path = unquote(parts.path or "/")
    segments = path.split("/")
    if ".." in segments or "." in segments or "\\" in path:
        return False
    if scope.prefix:
        return path.startswith(scope.path) or path + "/" == scope.path
    return posixpath.normpath(path) == posixpath.normpath(scope.path)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _under(full: str, scope: FileScope) -> bool:
    """True when the resolved path `full` is the scope's file, or inside its folder."""
    if not scope.folder:
        return full == scope.path
    return full.startswith(scope.path.rstrip(os.sep) + os.sep)


def _denied(capability: Capability, what: str) -> SomaError:
    """The refusal of `what` under the running tool's capability."""
    return SomaError("capability", f"{what} outside the capability of tool '{capability.tool}' "
                                   f"(\"{capability.text}\")")
