"""Go to definition, find references, rename, document symbols and workspace symbols, as (document, offsets)
answers.

Definition looks in the document first and then in the other `.cell` files
of its folder; references gather every occurrence in both. A symbol's
children follow the language: a cell holds its face's signals and tools, its
slots, its machines (each holding its states) and its handlers; a sum type
its variants; a test cell its helper handlers.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from ..syntax.keywords import KEYWORDS

from .symbols import Key, Place, Symbol
from .workspace import Entry, Workspace


class Found(NamedTuple):
    """A place in some document: the document and the name's [start, end) offsets."""

    entry: Entry
    start: int
    end: int


def place_at(entry: Entry, offset: int) -> Optional[Place]:
    """The name occurrence under the cursor, or None."""
    return entry.symbols.at(offset)


def definitions(workspace: Workspace, entry: Entry, offset: int) -> list[Found]:
    """Where the name under the cursor is declared: in the document, else in its folder's other files."""
    place = place_at(entry, offset)
    if place is None or place.key[0] in ("builtin", "model"):
        return []
    found = _declared(entry, place.key)
    if not found:
        for other in workspace.neighbours(entry):
            found.extend(_declared(other, place.key))
    return found


def _declared(entry: Entry, key: Key) -> list[Found]:
    """The declarations of `key` in one document, handlers (`on …`) before face declarations."""
    symbols = sorted(entry.symbols.declarations(key), key=lambda s: s.kind in ("signal", "tool"))
    return [Found(entry, s.start, s.end) for s in symbols]


def references(workspace: Workspace, entry: Entry, offset: int, with_declarations: bool) -> list[Found]:
    """Every occurrence of the name under the cursor in the document and its folder's other files."""
    place = place_at(entry, offset)
    if place is None:
        return []
    found = []
    for document in [entry, *workspace.neighbours(entry)]:
        found.extend(Found(document, p.start, p.end) for p in document.symbols.occurrences(place.key)
                     if with_declarations or not p.declares)
    return found


RENAMABLE = ("cell", "handler", "slot", "machine", "state", "type", "variant", "test")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def renamable(entry: Entry, offset: int) -> Optional[Place]:
    """The occurrence under the cursor when its name can be renamed (not a builtin nor a soma.toml model)."""
    place = place_at(entry, offset)
    return place if place is not None and place.key[0] in RENAMABLE else None


def rename_problem(place: Place, new_name: str) -> Optional[str]:
    """Why `new_name` cannot replace the name at `place` (None when it can)."""
    if not _NAME.fullmatch(new_name) or new_name in KEYWORDS:
        return f"'{new_name}' is not a name Soma accepts here (a keyword, or not a word)"
    capitalised = place.key[0] in ("cell", "type", "variant", "test")
    if new_name[0].isupper() != capitalised:
        return f"a {place.key[0]} name {'starts' if capitalised else 'does not start'} with a capital letter"
    return None


class Outline(NamedTuple):
    """A document symbol: the symbol and the outlines of what it holds."""

    symbol: Symbol
    children: list["Outline"]


def outline(entry: Entry) -> list[Outline]:
    """The document's declarations as a tree, in source order."""
    symbols = entry.symbols.symbols
    nodes = [Outline(symbol, []) for symbol in symbols]
    roots = []
    for node in nodes:
        (nodes[node.symbol.parent].children if node.symbol.parent >= 0 else roots).append(node)
    return roots


def workspace_symbols(workspace: Workspace, query: str) -> list[tuple[Entry, Symbol]]:
    """The declarations of every known document whose name contains the query's letters in order."""
    wanted = query.lower()
    found = []
    for entry in workspace.everything():
        for symbol in entry.symbols.symbols:
            if _fuzzy(wanted, symbol.key[2].lower()):
                found.append((entry, symbol))
    return found


def _fuzzy(query: str, name: str) -> bool:
    """True when the letters of `query` appear in `name` in order."""
    at = 0
    for letter in query:
        at = name.find(letter, at) + 1
        if at == 0:
            return False
    return True
