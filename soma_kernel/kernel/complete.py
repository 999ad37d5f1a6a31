"""Tab completion: keywords, builtins, cells, types, variants, handlers, slots, states,
session variables, magics, and the members of a cell after `Cell.`.

Positions are in code points (Python string indexes), as the protocol wants.
Each match's kind goes into `_jupyter_types_experimental` so JupyterLab shows it.
"""

from __future__ import annotations

import re

from ..syntax import ast
from .lexer import DECLARATION_KEYWORDS, STATEMENT_KEYWORDS

WORD_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
MEMBER_BEFORE = re.compile(r"([A-Z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)?$")
MAGIC_BEFORE = re.compile(r"^\s*(%%?)(\w*)$")


def _candidates(session) -> dict[str, str]:
    """Every completable name with its kind (the first kind found wins)."""
    from ..runtime.builtins import BUILTINS
    from ..runtime.signatures import CONTEXT_BUILTINS

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
    for name in CONTEXT_BUILTINS:
        found.setdefault(name, "builtin")
    for name in BUILTINS:
        found.setdefault(name, "builtin")
    for word in DECLARATION_KEYWORDS + STATEMENT_KEYWORDS + ("true", "false"):
        found.setdefault(word, "keyword")
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


def _magic_names() -> dict[str, str]:
    """Magic names with their usage."""
    from .magics import registry_of_magics

    return {m.name: m.usage for m in registry_of_magics().values() if not m.name.startswith("?")}


def complete(session, code: str, cursor_pos: int) -> dict:
    """The complete_reply content for `code` with the cursor at `cursor_pos`."""
    before = code[:cursor_pos]
    line = before.rsplit("\n", 1)[-1]
    magic = MAGIC_BEFORE.match(line)
    if magic and before.strip() == line.strip():
        prefix = magic.group(2)
        options = {n: "magic" for n in _magic_names() if n.startswith(prefix)}
        return _reply(options, cursor_pos - len(prefix), cursor_pos)
    member = MEMBER_BEFORE.search(before)
    if member and any(k[1] == member.group(1) for k in session.definitions):
        prefix = member.group(2) or ""
        options = {n: k for n, k in _cell_members(session, member.group(1)).items() if n.startswith(prefix)}
        return _reply(options, cursor_pos - len(prefix), cursor_pos)
    word = WORD_BEFORE.search(before)
    prefix = word.group(0) if word else ""
    if not prefix:
        return _reply({}, cursor_pos, cursor_pos)
    options = {n: k for n, k in _candidates(session).items() if n.startswith(prefix)}
    return _reply(options, cursor_pos - len(prefix), cursor_pos)


def _reply(options: dict[str, str], start: int, end: int) -> dict:
    """A complete_reply with sorted matches and their kinds."""
    matches = sorted(options)
    types = [{"start": start, "end": end, "text": m, "type": options[m]} for m in matches]
    return {"status": "ok", "matches": matches, "cursor_start": start, "cursor_end": end,
            "metadata": {"_jupyter_types_experimental": types}}
