"""A cache of the built lark parser that a new process loads in ~15 ms.

lark's own `cache=True` file keeps the LALR tables in lark's generic
serialized form: turning it back into objects (rules, terminals, the parse
table, one lexer per parser state, the tree-building callbacks) costs
~80 ms in every new process, a large share of a short command. Here the
finished `Lark` object is pickled whole, so loading it is one `pickle.load`
run in C.

A pickle of lark's objects depends on lark's internals, which are no public
API, so the slow path stays the normal, always-correct one:
- the fast path is taken only with the lark releases it was checked against
  (`_CHECKED_LARK`); any other release always builds through lark;
- the file's name and first line carry a digest of everything the build
  depends on (this file's format, lark and Python versions, grammar text,
  options); a file for anything else is never read;
- a file that is absent, stale, truncated or corrupt, or a folder that cannot
  be written, falls back silently to `Lark(..., cache=True)`, which then
  rewrites the file where it can.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import os
import pickle
import re
import sys
import tempfile
import time
import types
from typing import Optional

# Paths are plain strings here (os.path), as in the parser: pathlib would be the one
# reason `soma-kernel check|verify` imports it and urllib.parse (~10 ms of start-up).

import lark
from lark import Lark
from lark.grammar import Rule
from lark.parsers.lalr_analysis import Action, IntParseTable

from ..core.gcpause import paused_gc
from .larkregex import PrecompiledRe, RecordingRe, lexers_of, record_patterns

# Bump when what is pickled, or how, changes: older files then no longer match.
_FORMAT = "3"

# lark releases (major.minor) whose objects were checked to pickle into an
# equal parser: the tests compare both paths on every test program.
_CHECKED_LARK = ("1.3",)


def cached_lark(grammar: str, options: dict, directory: Optional[str]) -> Lark:
    """The parser lark builds for grammar and options, loaded from the cache
    file in directory when that file holds this very build; otherwise built
    by lark (with its own cache) and stored there for the next process."""
    if directory is None or not _checked_release(lark.__version__):
        return _build(grammar, options)
    key = build_key(grammar, options)
    path = os.path.join(directory, f"lark-{key[:32]}.pickle")
    loaded = _read(path, key, options)
    if loaded is not None:
        return loaded
    built = _build(grammar, options)
    _write(built, path, key, options)
    return built


def default_directory() -> Optional[str]:
    """The per-user cache folder, `$XDG_CACHE_HOME/soma-kernel` or
    `~/.cache/soma-kernel`; None when the user has no home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        try:
            home = os.path.expanduser("~")
        except (RuntimeError, KeyError):
            return None
        if home == "~":  # no HOME and no password entry
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "soma-kernel")


def build_key(grammar: str, options: dict) -> str:
    """A digest of everything the built parser depends on."""
    parts = [_FORMAT, lark.__version__, sys.implementation.cache_tag or "", grammar]
    parts += [f"{name}={_option_text(name, value)}" for name, value in sorted(options.items())]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _option_text(name: str, value) -> str:
    """An option as stable text; the post-lexer by its class and the terminals
    it keeps (what the build reads from it), not by its address."""
    if name == "postlex" and value is not None:
        kind = type(value)
        return f"{kind.__module__}.{kind.__qualname__}{tuple(getattr(value, 'always_accept', ()))!r}"
    return repr(value)


def _checked_release(version: str) -> bool:
    """Whether the fast path was checked against this lark release."""
    return ".".join(version.split(".")[:2]) in _CHECKED_LARK


def _build(grammar: str, options: dict) -> Lark:
    """The slow, always-correct path: lark builds the parser (from its own cache when warm)."""
    return Lark(grammar, **options, cache=True)


def _header(key: str) -> bytes:
    """The first line of a cache file, naming the build it holds."""
    return f"soma-lark {key}\n".encode("ascii")


def _read(path: str, key: str, options: dict) -> Optional[Lark]:
    """The parser stored in path for this key, or None when the file is
    absent or not a whole, matching cache file."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    header = _header(key)
    if not data.startswith(header):
        return None
    stream = io.BytesIO(data)
    stream.seek(len(header))
    try:
        with paused_gc():  # ~40 000 new objects, no garbage: a collection would only walk them
            loaded = _Unpickler(stream, options).load()
    except Exception:  # a damaged pickle fails in many ways; each means "build it again"
        return None
    return loaded if isinstance(loaded, Lark) and stream.read(1) == b"" else None


def _write(parser: Lark, path: str, key: str, options: dict) -> None:
    """Store parser in path for the next process, with its lexers' compiled
    patterns (syntax.larkregex): written whole to a temporary file, then
    renamed, so a reader never sees half a file. Any failure leaves no file
    and is silent: the cache is only a speed-up."""
    try:  # the folder first: where it cannot be written, pickling would be wasted time
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".lark-", suffix=".tmp")
    except OSError:
        return
    try:
        patterns = _lexer_patterns(parser, options)
        with os.fdopen(handle, "wb") as file:
            file.write(_header(key))
            _Pickler(file, patterns).dump(parser)
        os.replace(temporary, path)
    except Exception:  # a full disk, or an object a newer lark holds that does not pickle
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return
    _prune(path)


# A cache file is written once per grammar and lark release; one untouched this long is
# most likely an older build's. Deleting it costs at most one rebuild (~0.1 s) if still used.
STALE_AFTER_SECONDS = 30 * 24 * 3600


def _prune(kept: str) -> None:
    """Delete the other cache files of the folder written more than STALE_AFTER_SECONDS ago
    (older grammars, other lark releases), so the folder does not grow with every upgrade."""
    now = time.time()
    try:
        entries = list(os.scandir(os.path.dirname(kept)))
    except OSError:
        return
    for other in entries:
        try:
            if (fnmatch.fnmatch(other.name, "lark-*.pickle") and other.path != kept
                    and now - other.stat().st_mtime > STALE_AFTER_SECONDS):
                os.unlink(other.path)
        except OSError:
            pass  # another process removed or replaced it meanwhile


def _lexer_patterns(parser: Lark, options: dict) -> list:
    """The compiled patterns of every scanner of parser's lexers, worked out on a
    copy of it (building a scanner changes the lexer: the stored parser keeps
    building its scanners lazily, from these patterns)."""
    recorder = RecordingRe()
    copy = _Unpickler(io.BytesIO(_pickled(parser, [])), options, regex_module=recorder).load()
    return record_patterns(lexers_of(copy), recorder)


def _pickled(parser: Lark, patterns: list) -> bytes:
    """parser as this module pickles it."""
    stream = io.BytesIO()
    _Pickler(stream, patterns).dump(parser)
    return stream.getvalue()


def _shared_actions(states: dict) -> dict:
    """The parse table's states with equal actions as one tuple object.

    The ~17 000 (action, target) pairs hold ~1 500 distinct values; sharing
    them makes the file a fifth smaller and its load faster. lark only reads
    these tuples.
    """
    pool: dict = {}
    return {state: {token: pool.setdefault((action.name, id(target)), (action, target))
                    for token, (action, target) in actions.items()}
            for state, actions in states.items()}


class _Pickler(pickle.Pickler):
    """Pickles a built `Lark` so that loading it gives an equal parser, whose
    lexers compile through a PrecompiledRe holding `patterns`."""

    def __init__(self, stream, patterns: list):
        super().__init__(stream, protocol=pickle.HIGHEST_PROTOCOL)
        self.patterns = patterns

    def reducer_override(self, obj):
        """How the objects that plain pickling would get wrong are stored."""
        kind = type(obj)
        if kind is Action:
            # lark's parser tests `action is Shift`: store the singleton by its global name.
            return obj.name
        if kind is Rule:
            # A Rule keeps its hash, made from string hashes that change with
            # every process: rebuild it so the hash is computed anew.
            return Rule, (obj.origin, obj.expansion, obj.order, obj.alias, obj.options)
        if kind is IntParseTable:
            return IntParseTable, (_shared_actions(obj.states), obj.start_states, obj.end_states)
        if isinstance(obj, types.ModuleType):
            if obj is re:  # what lark's lexers compile with
                return PrecompiledRe, (self.patterns,)
            raise pickle.PicklingError(f"module {obj.__name__} in a lark parser")
        return NotImplemented


_STAND_IN = (PrecompiledRe.__module__, PrecompiledRe.__name__)  # what lark's lexers compile with, by global name


class _Unpickler(pickle.Unpickler):
    """Loads a cache file, resolving only the names a lark parser is made of
    (lark's classes, `functools.partial`, the `re` module and the post-lexer),
    so that a damaged or foreign file cannot run other code."""

    def __init__(self, stream, options: dict, regex_module: Optional[PrecompiledRe] = None):
        super().__init__(stream)
        self.regex_module = regex_module  # instead of the stored one (see _lexer_patterns)
        self.allowed = {("functools", "partial"), _STAND_IN}
        if options.get("postlex") is not None:
            postlex = type(options["postlex"])
            self.allowed.add((postlex.__module__, postlex.__qualname__))

    def find_class(self, module: str, name: str):
        """A global the file names, when a lark parser may hold it."""
        if (module, name) == _STAND_IN and self.regex_module is not None:
            return lambda patterns: self.regex_module
        if module.startswith("lark.") or (module, name) in self.allowed:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a lark parser")
