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
- a file that is absent, or a folder that cannot be written, falls back to
  lark building the parser, and the file is written where it can be.

A cache file is data from elsewhere: anyone who could write into the folder
(a program's `write_file`, a copied home directory) may have planted it, and
the header format is public. So reading it can never run code or crash:
- the read is bounded (`MAX_FILE_BYTES`) and the header carries a digest of the
  rest, so a truncated, damaged or overlong file is refused before unpickling;
- the unpickler resolves exactly the (module, name) pairs in `_allowed_globals`
  (no dotted paths, no other module), and the lark classes whose constructors
  do more than store their arguments (`Lark` can read and write files) are
  given as stand-ins that only make an empty instance, so a file cannot call
  them with arguments of its choosing;
- the lexers' stored regular-expression programs are plain data, checked
  (syntax.larkregex);
- a file that is refused is replaced by a good one, and stderr says so once.
lark's own `cache=True` is not used: it unpickles, without any allow-list, a
file in the shared temporary folder whose name anyone can predict.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import importlib
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
_FORMAT = "4"

# A whole cache file is ~0.7 MB; a file longer than this is not one (and is not read further).
MAX_FILE_BYTES = 16 * 1024 * 1024

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
    try:
        return _read(path, key, grammar, options)
    except _Absent:
        refused = None
    except _Refused as problem:
        refused = problem
    built = _build(grammar, options)
    if _write(built, path, key, options) and refused is not None:
        sys.stderr.write(f"soma-kernel: replaced the parser cache {path}: {refused}\n")
    return built


def loaded_from_file(parser: Lark) -> bool:
    """Whether parser was loaded from a cache file (rather than built by lark)."""
    return getattr(parser, _SOURCE, None) is not None


def rebuilt(parser: Lark, problem: Exception) -> Lark:
    """The parser lark builds in place of one loaded from a cache file that failed while parsing
    (raising `problem`, which lark's own parser never does); the file is rewritten, and stderr says so."""
    path, key, grammar, options = getattr(parser, _SOURCE)
    built = _build(grammar, options)
    _write(built, path, key, options)
    sys.stderr.write(f"soma-kernel: replaced the parser cache {path}: the parser it held failed "
                     f"({type(problem).__name__}: {str(problem)[:120]})\n")
    return built


_SOURCE = "_soma_cache_file"  # on a parser loaded from a cache file: (path, key, grammar, options)


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
    """The slow, always-correct path: lark builds the parser (~0.3 s; never from
    lark's own cache, see the module's docstring)."""
    return Lark(grammar, **options)


class _Absent(Exception):
    """There is no cache file to read."""


class _Refused(Exception):
    """The cache file is not a whole cache file of this build; the message says how."""


def _header_prefix(key: str) -> bytes:
    """The start of a cache file's first line: the build it holds."""
    return f"soma-lark {key} ".encode("ascii")


def _read(path: str, key: str, grammar: str, options: dict) -> Lark:
    """The parser of grammar stored in path for this key; _Absent when there is no file,
    _Refused when it is not a whole, matching cache file."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise _Absent() from None
    except OSError as problem:
        raise _Refused(f"cannot be read ({problem.strerror})") from None
    payload = _checked_payload(data, key)
    stream = io.BytesIO(payload)
    try:
        with paused_gc():  # ~40 000 new objects, no garbage: a collection would only walk them
            loaded = _Unpickler(stream, options).load()
    except Exception as problem:  # a foreign pickle fails in many ways; each means "build it again"
        raise _Refused(f"not a parser of this build ({type(problem).__name__}: {str(problem)[:120]})") from None
    if not (isinstance(loaded, Lark) and stream.read(1) == b"" and getattr(loaded, "source_grammar", None) == grammar
            and getattr(loaded.options, "start", None) == options.get("start")):
        raise _Refused("not a parser of this build")
    setattr(loaded, _SOURCE, (path, key, grammar, options))
    return loaded


def _checked_payload(data: bytes, key: str) -> memoryview:
    """The pickle after the header of a cache file, once its size, build key and digest check out."""
    if len(data) > MAX_FILE_BYTES:
        raise _Refused(f"longer than {MAX_FILE_BYTES} bytes")
    prefix = _header_prefix(key)
    end = data.find(b"\n", 0, len(prefix) + 65)
    if not data.startswith(prefix) or end != len(prefix) + 64:
        raise _Refused("not a cache file of this build")
    payload = memoryview(data)[end + 1:]
    if hashlib.sha256(payload).hexdigest().encode("ascii") != data[len(prefix):end]:
        raise _Refused("damaged (its digest does not match)")
    return payload


def _write(parser: Lark, path: str, key: str, options: dict) -> bool:
    """Store parser in path for the next process, with its lexers' compiled
    patterns (syntax.larkregex): written whole to a temporary file, then
    renamed, so a reader never sees half a file. Whether it was written: any
    failure leaves no file and is silent, the cache is only a speed-up."""
    try:  # the folder first: where it cannot be written, pickling would be wasted time
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".lark-", suffix=".tmp")
    except OSError:
        return False
    try:
        payload = _pickled(parser, _lexer_patterns(parser, options))
        with os.fdopen(handle, "wb") as file:
            file.write(_header_prefix(key) + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n")
            file.write(payload)
        os.replace(temporary, path)
    except Exception:  # a full disk, or an object a newer lark holds that does not pickle
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
    _prune(path)
    return True


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

# The globals a cache file may name, exactly (module, name): what a built lark LALR parser with a contextual
# lexer is made of. These constructors only store their arguments; `functools.partial` checks that what it
# wraps is callable, and every callable a file can reach is one of these.
_PLAIN = {
    "functools": ("partial",),
    "lark.common": ("LexerConf", "ParserConf"),
    "lark.grammar": ("NonTerminal", "Rule", "RuleOptions", "Terminal"),
    "lark.lexer": ("PatternRE", "PatternStr", "TerminalDef", "Token"),
    "lark.load_grammar": ("Grammar",),
    "lark.parse_tree_builder": ("ChildFilterLALR", "ChildFilterLALR_NoPlaceholders", "ExpandSingleChild",
                                "PropagatePositions"),
    "lark.parser_frontends": ("PostLexConnector",),
    "lark.parsers.lalr_analysis": ("IntParseTable", "Shift", "Reduce"),  # Shift and Reduce: the two actions
    "lark.parsers.lalr_parser": ("_Parser",),
    "lark.tree": ("Meta", "Tree"),
    PrecompiledRe.__module__: (PrecompiledRe.__name__,),
}
# Classes whose constructors build (read grammar files, write lark's cache, analyse a grammar, compile
# patterns): a file gets a stand-in that only makes an empty instance, as pickle itself does for them.
_EMPTY_ONLY = {
    "lark.lark": ("Lark", "LarkOptions"),
    "lark.lexer": ("BasicLexer", "ContextualLexer"),
    "lark.parse_tree_builder": ("ParseTreeBuilder",),
    "lark.parser_frontends": ("ParsingFrontend",),
    "lark.parsers.lalr_parser": ("LALR_Parser",),
}


@functools.lru_cache(maxsize=None)
def _allowed_globals() -> dict:
    """(module, name) -> the object a cache file gets for that global."""
    allowed = {}
    for table, given in ((_PLAIN, lambda found: found), (_EMPTY_ONLY, _empty_instance_maker)):
        for module, names in table.items():
            loaded = importlib.import_module(module)
            allowed.update({(module, name): given(getattr(loaded, name)) for name in names})
    return allowed


def _empty_instance_maker(kind: type) -> type:
    """A stand-in for kind: pickle's NEWOBJ (or a call) without arguments gives an empty
    instance of kind, its `__init__` never run; with arguments it refuses."""

    def new(stand_in, *args, **kwargs):
        if args or kwargs:
            raise pickle.UnpicklingError(f"{kind.__name__} is not built with arguments in a cache file")
        return object.__new__(kind)

    return type(f"Empty{kind.__name__}", (), {"__new__": new, "__slots__": ()})


class _Unpickler(pickle.Unpickler):
    """Loads a cache file, resolving only the exact globals a lark parser is made of
    (`_allowed_globals`, and the post-lexer's class), so that a damaged or foreign
    file cannot run other code."""

    def __init__(self, stream, options: dict, regex_module: Optional[PrecompiledRe] = None):
        super().__init__(stream)
        self.regex_module = regex_module  # instead of the stored one (see _lexer_patterns)
        self.postlex = None
        if options.get("postlex") is not None:
            postlex = type(options["postlex"])
            self.postlex = ((postlex.__module__, postlex.__qualname__), postlex)

    def find_class(self, module: str, name: str):
        """The object for a global the file names, when a lark parser may hold it."""
        if (module, name) == _STAND_IN and self.regex_module is not None:
            return lambda patterns: self.regex_module
        if self.postlex is not None and (module, name) == self.postlex[0]:
            return self.postlex[1]
        found = _allowed_globals().get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a lark parser")
        return found
