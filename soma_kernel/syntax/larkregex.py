"""Lark's lexer regular expressions, compiled once and stored with the cached parser.

Lark builds one scanner per set of terminals a parser state accepts: one
large alternation per scanner, compiled by Python's `re` the first time that
state lexes. `re` parses and compiles patterns in Python, so the ~40 scanners
an ordinary program needs cost ~25 ms in every new process (all ~220: ~120 ms).

The parser cache (syntax.larkcache) therefore stores, next to the parser,
what `re` compiled each of those patterns to: the program `re` hands to its
C engine (`_sre.compile`). A loaded parser's lexers use `PrecompiledRe`
instead of the `re` module: it gives back a pattern built from that program
when it has one, and calls `re` for anything else.

The program format belongs to the Python version that wrote it (the cache
key includes it), and each stored program is checked when it is written: it
is kept only if the pattern it builds equals what `re.compile` returns
(`re.Pattern` equality compares the compiled code).

A cache file may come from elsewhere, so a stored program is plain data
(numbers, strings, the opcodes as bytes; no `marshal`), its fields are
type- and range-checked before use, and `_sre.compile` validates the opcodes
themselves ("invalid SRE code"): a bad entry is compiled by `re` instead.
"""

from __future__ import annotations

import re
from array import array
from typing import Iterable, Optional

try:  # re's own compiler (Python 3.11+); without it nothing is stored and lexers call re
    import _sre
    from re import _compiler, _parser
except ImportError:  # pragma: no cover - another Python implementation
    _sre = _compiler = _parser = None

# (pattern, flags asked, flags of the result, opcodes as 32-bit words, groups, groupindex as (name, index) pairs,
#  indexgroup): the arguments of `_sre.compile`, as plain data
Entry = tuple
_WORD = "I" if array("I").itemsize == 4 else "L"  # SRE_CODE is 32 bits wide


class PrecompiledRe:
    """A stand-in for the `re` module in a loaded parser's lexers: `compile` and
    `match` take the stored programs; every other name is re's own."""

    error = re.error

    def __init__(self, entries: Iterable[Entry] = ()):
        self.entries = {(entry[0], entry[1]): entry for entry in entries}
        self.built: dict[tuple, re.Pattern] = {}

    def compile(self, pattern, flags=0) -> re.Pattern:
        """The pattern, from its stored program when there is one, else from `re`."""
        key = (pattern, flags)
        found = self.built.get(key)
        if found is None:
            found = self._stored(key) or re.compile(pattern, flags)
            self.built[key] = found
        return found

    def _stored(self, key) -> Optional[re.Pattern]:
        """The pattern built from the stored program for key, if there is one that builds."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        try:
            return _from_entry(entry)
        except Exception:  # a program this Python cannot take: re compiles it instead
            return None

    def match(self, pattern, string, flags=0):
        """`re.match`, compiling through `compile`."""
        return self.compile(pattern, flags).match(string)

    def __getattr__(self, name: str):
        return getattr(re, name)


class RecordingRe(PrecompiledRe):
    """The `re` stand-in used while building every scanner of a throwaway parser:
    it notes each (pattern, flags) lark compiles."""

    def __init__(self):
        super().__init__()
        self.asked: dict[tuple, None] = {}

    def compile(self, pattern, flags=0) -> re.Pattern:
        """re.compile, noting the pattern."""
        self.asked[(pattern, flags)] = None
        return re.compile(pattern, flags)


def lexers_of(parser) -> list:
    """The basic lexers of a lark LALR parser with a contextual lexer (one per terminal set,
    and the root one); empty when the parser is not built that way."""
    try:
        contextual = parser.parser.lexer
        contextual = getattr(contextual, "lexer", contextual)  # behind the post-lexer's connector
        lexers = [*contextual.lexers.values(), contextual.root_lexer]
    except AttributeError:
        return []
    return list({id(lexer): lexer for lexer in lexers}.values())


def record_patterns(lexers: list, recorder: RecordingRe) -> list[Entry]:
    """Build every scanner of `lexers` (which use `recorder`) and return the checked
    entries of the patterns compiled meanwhile."""
    if _sre is None:
        return []
    for lexer in lexers:
        lexer.scanner  # builds the scanner through lexer.re, the recorder
    entries = (_entry(pattern, flags) for pattern, flags in recorder.asked)
    return [entry for entry in entries if entry is not None]


def _entry(pattern, flags: int) -> Optional[Entry]:
    """What `re.compile(pattern, flags)` compiles to, or None when rebuilding it would not give an equal pattern."""
    try:
        parsed = _parser.parse(pattern, flags)
        code = _compiler._code(parsed, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        entry = (pattern, flags, int(flags | parsed.state.flags), array(_WORD, map(int, code)).tobytes(),
                 parsed.state.groups - 1, tuple(groupindex.items()), tuple(indexgroup))
        return entry if _from_entry(entry) == re.compile(pattern, flags) else None
    except Exception:  # re's internals differ from what this module expects: leave it to re
        return None


def _from_entry(entry: Entry) -> re.Pattern:
    """The pattern a stored program builds (as re._compiler.compile would)."""
    pattern, _, flags, code, groups, groupindex, indexgroup = entry
    if not (isinstance(flags, int) and isinstance(code, bytes) and isinstance(groups, int)
            and groups >= 0 and isinstance(indexgroup, tuple) and len(indexgroup) == groups + 1
            and all(name is None or isinstance(name, str) for name in indexgroup)):
        raise ValueError("not a stored program")
    names = dict(groupindex)
    if any(not isinstance(name, str) or type(index) is not int or not 0 < index <= groups
           for name, index in names.items()):
        raise ValueError("not a stored program")
    opcodes = array(_WORD)
    opcodes.frombytes(code)
    return _sre.compile(pattern, flags, opcodes.tolist(), groups, names, indexgroup)
