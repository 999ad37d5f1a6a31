"""Tab completion: keywords, builtins, cells, types, variants, handlers, slots, states,
session variables, magics, names written in the cell being edited, the members of a
cell after `Cell.` and the methods after `slot.` / `value.`; nothing inside string text.

Positions are in code points (Python string indexes), as the protocol wants.
Each match's kind goes into `_jupyter_types_experimental` so JupyterLab shows it.
"""

from __future__ import annotations

import re

from ..runtime.builtins import BUILTINS
from ..runtime.memory import SLOT_METHODS
from ..syntax import ast
from ..syntax.keywords import KEYWORDS, TYPES
from ..syntax.tokens import in_string_text

WORD_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
MEMBER_BEFORE = re.compile(r"([A-Z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)?$")
METHOD_BEFORE = re.compile(r"(?<![\w.])([a-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)?$")
MAGIC_BEFORE = re.compile(r"^\s*(%%?)(\w*)$")
WORD = re.compile(r"(?<!\w)[A-Za-z_][A-Za-z0-9_]*")
SLOT_DECLARED = re.compile(r"\b([a-z_][A-Za-z0-9_]*)\s*:\s*(?:Map|List)\s*<")


def _candidates(session) -> dict[str, str]:
    """Every completable name with its kind (the first kind found wins)."""
    found: dict[str, str] = {}
    for definition in session.definitions.values():
        kind, name = definition.key
        found.setdefault(name, {"cell": "cell", "type": "type", "test": "test cell", "flesh": "cell"}[kind])
        item = definition.item
        if isinstance(item, ast.TypeDecl):
            for variant in item.variants:
                found.setdefault(variant.name, f"variant of {name}")
        if isinstance(item, (ast.CellDecl, ast.Flesh)):
            for member, member_kind in _members(item).items():
                found.setdefault(member, member_kind)
    for name in session.variables:
        found.setdefault(name, "variable")
    for word in KEYWORDS:  # a word of the grammar (`scale`) is one before it is a builtin
        found.setdefault(word, "keyword")
    for name in BUILTINS:
        found.setdefault(name, "builtin")
    for name in TYPES:
        found.setdefault(name, "type")
    return found


def _members(item) -> dict[str, str]:
    """A cell's handlers, signals, slots, machines and states (or a flesh's handlers)."""
    members: dict[str, str] = {}
    for handler in item.handlers:
        members.setdefault(handler.name, "handler")
    if isinstance(item, ast.Flesh):
        return members
    if item.face is not None:
        for signal in item.face.signals:
            members.setdefault(signal.name, "signal")
    if item.memory is not None:
        for slot in item.memory.slots:
            members.setdefault(slot.name, "slot")
    for machine in item.machines:
        members.setdefault(machine.name, "machine")
        for state in [machine.initial] + [e.src for e in machine.edges] + [e.dst for e in machine.edges]:
            if state and state != "*":
                members.setdefault(state, "state")
    return members


def _cell_members(session, cell: str) -> dict[str, str]:
    """What may follow `Cell.`: its handlers and signals (flesh bodies too)."""
    members: dict[str, str] = {}
    for kind in ("cell", "flesh"):
        definition = session.definitions.get((kind, cell))
        if definition is not None:
            for name, member_kind in _members(definition.item).items():
                if member_kind in ("handler", "signal"):
                    members.setdefault(name, member_kind)
    return members


def _magic_names(session) -> dict[str, str]:
    """Magic names with their usage (the session's magics)."""
    return {m.name: m.usage for m in session.magics.values() if not m.name.startswith("?")}


def _slot_names(session, code: str) -> set[str]:
    """Memory slots of the session's cells and those declared in the cell being written."""
    names = set(SLOT_DECLARED.findall(code))
    for definition in session.definitions.values():
        memory = getattr(definition.item, "memory", None)
        if memory is not None:
            names.update(slot.name for slot in memory.slots)
    return names


def _method_options(session, code: str, receiver: str) -> dict[str, str]:
    """What may follow `receiver.`: slot methods on a slot, else the builtins callable as methods (UFCS)."""
    if receiver in _slot_names(session, code):
        return {name: "slot method" for name in SLOT_METHODS}
    return {name: "builtin" for name in BUILTINS}


def _words_of(code: str, cursor_pos: int) -> dict[str, str]:
    """Names written in the cell itself (a cell, slot or local not run yet), except the one being typed."""
    typed = WORD_BEFORE.search(code[:cursor_pos])
    skip = typed.start() if typed else -1
    return {m.group(0): "name" for m in WORD.finditer(code) if m.start() != skip}


def complete(session, code: str, cursor_pos: int) -> dict:
    """The complete_reply content for `code` with the cursor at `cursor_pos`.

    A `%` at the start of any line completes magics (`%%` only on the
    cell's first line); `Cell.` its handlers and signals; `slot.` the slot
    methods and `value.` the builtins usable as methods; inside a string
    (outside `{…}`) nothing; else every known name, plus the names written
    in the cell so far.
    """
    before = code[:cursor_pos]
    if in_string_text(before):
        return _reply({}, cursor_pos, cursor_pos)
    line = before.rsplit("\n", 1)[-1]
    magic = MAGIC_BEFORE.match(line)
    if magic and (magic.group(1) == "%" or before.strip() == line.strip()):
        prefix = magic.group(2)
        options = {n: "magic" for n, m in _magic_names(session).items()
                   if n.startswith(prefix) and (magic.group(1) == "%%") == m.startswith("%%")}
        return _reply(options, cursor_pos - len(prefix), cursor_pos)
    member = MEMBER_BEFORE.search(before)
    if member and any(k[1] == member.group(1) for k in session.definitions):
        prefix = member.group(2) or ""
        options = {n: k for n, k in _cell_members(session, member.group(1)).items() if n.startswith(prefix)}
        return _reply(options, cursor_pos - len(prefix), cursor_pos)
    method = METHOD_BEFORE.search(before)
    if method:
        prefix = method.group(2) or ""
        options = {n: k for n, k in _method_options(session, code, method.group(1)).items() if n.startswith(prefix)}
        return _reply(options, cursor_pos - len(prefix), cursor_pos)
    word = WORD_BEFORE.search(before)
    prefix = word.group(0) if word else ""
    if not prefix:
        return _reply({}, cursor_pos, cursor_pos)
    known = {**_words_of(code, cursor_pos), **_candidates(session)}
    options = {n: k for n, k in known.items() if n.startswith(prefix)}
    return _reply(options, cursor_pos - len(prefix), cursor_pos)


def _reply(options: dict[str, str], start: int, end: int) -> dict:
    """A complete_reply with sorted matches and their kinds."""
    matches = sorted(options)
    types = [{"start": start, "end": end, "text": m, "type": options[m]} for m in matches]
    return {"status": "ok", "matches": matches, "cursor_start": start, "cursor_end": end,
            "metadata": {"_jupyter_types_experimental": types}}
