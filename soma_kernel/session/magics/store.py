"""Persistent data in a notebook: %store [PATH | off], and what %memory and %reset do once a store is bound.

`%store` binds the session's `[persistent]` slots (with every cell's machine
instances, `next_id` and `remember()` state) to a slot store file, by
default the `.soma_data/<program>.sqlite` that `soma-kernel run` uses for
the `%load`ed program. A cell the file holds nothing of keeps its values,
and they are written to the file at once; a cell the file holds data of
takes the stored data, and the note names each in-memory value it replaced.
From then on each statement is one store transaction: it starts from what
other processes committed and its writes are committed when it succeeds,
never when it is rolled back.
"""

from __future__ import annotations

import os

from ...core.diagnostics import SomaError
from ...runtime.store import default_store_path, is_persistent, open_store
from .base import Magic, MagicError, split_args

USAGE = "%store [PATH | off]"


def bound_store(session):
    """The store the session's runtime is bound to, or None."""
    return session.runtime.store


def shown_path(session, path: str) -> str:
    """A store path as messages show it: relative to the session's folder when inside it."""
    relative = os.path.relpath(path, session.directory)
    return path if relative.startswith("..") else relative


def store_magic(session, run, args: str, body) -> None:
    """%store [PATH | off]: bind the [persistent] slots to a store file, show the binding, or unbind."""
    words = split_args(args, USAGE)
    if len(words) > 1:
        raise MagicError(f"usage: {USAGE}", at_name=True)
    current = bound_store(session)
    if words == ["off"]:
        if current is None:
            raise MagicError("no store is bound: the [persistent] slots are already in memory")
        session.runtime.detach_store()
        run.out(f"unbound {shown_path(session, current.path)}: the [persistent] slots live in memory again "
                "(they keep their values; the file keeps its data)")
        return
    if not words and current is not None:
        run.out(binding_summary(session, current))
        return
    path = store_path(session, words[0] if words else None)
    held = slots_holding_data(session)
    if current is not None:
        session.runtime.detach_store()
    try:
        bound = bind(session, path)
    except SomaError as err:
        raise MagicError(err.detail + rebound(session, current)) from None
    store = session.runtime.store
    run.out(binding_summary(session, store))
    for line in bound.breaches:
        run.out(line, "stderr")
    kept = [name for name in held if name.partition(".")[0] in bound.written]
    if kept:
        run.out(f"kept the session's values of {', '.join(kept)} and wrote them to {shown_path(session, path)}")
    if bound.replaced:
        run.out("note: the stored data replaced these in-memory values: "
                + "; ".join(replaced_text(item) for item in bound.replaced), "stderr")
    if store.read_only:
        run.out(f"note: {shown_path(session, path)} is read-only: it is read, and a statement that writes "
                "a [persistent] slot fails", "stderr")


def bind(session, path: str):
    """Open the store at path and bind the session's cells to it (runtime.store.Bound)."""
    store = open_store_for(path)
    store.origin_of = lambda cell: program_origin(session, cell)
    try:
        return session.runtime.attach_store(store)
    except BaseException:
        store.close()
        raise


def rebound(session, previous) -> str:
    """After a failed %store: bind the previous store again; what to add to the error."""
    if previous is None:
        return ""
    try:
        bind(session, previous.path)
    except SomaError as err:
        return f" (and {shown_path(session, previous.path)} could not be bound again: {err.detail})"
    return f" (the session stays bound to {shown_path(session, previous.path)})"


def program_origin(session, cell: str):
    """The program file a cell's definition came from (%load), or None for a notebook cell."""
    definition = session.definitions.get(("cell", cell))
    if definition is None or definition.origin.startswith("cell["):
        return None
    return definition.origin


SHOWN_KEYS = 8


def replaced_text(item) -> str:
    """`Cell.part (key, key, …)` of one Replaced."""
    keys = [f'"{key}"' if isinstance(key, str) else str(key) for key in item.keys if key != ""]
    more = f", … {len(keys) - SHOWN_KEYS} more" if len(keys) > SHOWN_KEYS else ""
    listed = f" ({', '.join(keys[:SHOWN_KEYS])}{more})" if keys else ""
    return f"{item.cell}.{item.part}{listed}"


def store_path(session, word):
    """The file to bind: PATH (relative to the session's folder), else the %load-ed program's default store."""
    if word is not None:
        return os.path.join(session.directory, os.path.expanduser(word))
    if session.program_path is None:
        raise MagicError("no program was %load-ed, so there is no default store: "
                         "name the file (`%store data.sqlite`)")
    return default_store_path(session.program_path)


def open_store_for(path: str):
    """The slot store at `path` (its errors name the file)."""
    return open_store(path)


def slots_holding_data(session) -> list[str]:
    """`Cell.part` of each stored part that holds values in memory now ([persistent] slots, machine instances)."""
    held = [f"{name}.{slot.name}" for name, state in session.runtime.cells.items()
            for slot in state.slots.values() if is_persistent(slot.decl) and slot.data]
    return held + [f"{name}.machine instances" for name, state in session.runtime.cells.items()
                   if state.machines is not None and state.machines.current]


def binding_summary(session, store) -> str:
    """`bound to PATH` and what the bound cells hold from it, one line per cell."""
    lines = [f"bound to {shown_path(session, store.path)}"]
    for name, binding in sorted(store.cells.items()):
        parts = [f"{slot_name} ({count_of(len(slot.data), 'entry', 'entries')})"
                 for slot_name, slot in binding.slots.items()]
        machines = binding.state.machines
        if machines is not None and machines.current:
            parts.append(count_of(len(machines.current), "machine instance", "machine instances"))
        if binding.state.counter:
            parts.append(f"next_id at {binding.state.counter}")
        if binding.state.memory:
            parts.append(count_of(len(binding.state.memory), "remembered value", "remembered values"))
        if parts:
            lines.append(f"  {name}: {', '.join(parts)}")
    if len(lines) == 1:
        lines.append("  nothing stored yet; [persistent] slots of the cells you define are kept there")
    return "\n".join(lines)


def count_of(number: int, one: str, many: str) -> str:
    """`1 entry` / `3 entries`."""
    return f"{number} {one if number == 1 else many}"


def stored_contents(session, store) -> str:
    """What the bound file holds, by cell and part (what `%memory` alone shows)."""
    rows = store.summary()
    lines = [f"{shown_path(session, store.path)} holds:" if rows else f"{shown_path(session, store.path)} is empty"]
    for cell, space, count in rows:
        kind, _, name = space.partition(":")
        what = {"map": f"map slot {name}", "list": f"list slot {name}", "instance": "machine instances",
                "remember": "remembered values", "next_id": "next_id counter"}.get(kind, space)
        lines.append(f"  {cell}: {what}: {count_of(count, 'row', 'rows')}")
    return "\n".join(lines)


def reset_store_data(session, run, cell) -> None:
    """`%reset --store [Cell]`: wipe the stored data (of one cell) and reset the live state to match."""
    store = bound_store(session)
    if store is None:
        raise MagicError("--store: no store is bound (`%store` binds one); use %reset", "--store")
    store.wipe(cell)
    session.runtime.reset(cell)
    where = shown_path(session, store.path)
    if cell is not None:
        run.out(f"reset {cell}: memory and machine instances are fresh, and its data in {where} is wiped")
        return
    session.variables.clear()
    run.out(f"reset: memory, machine instances, mocks and top-level lets are fresh, and {where} is wiped; "
            "definitions are kept")


MAGICS = (
    Magic("store", USAGE, "keep the [persistent] slots in a store file (default: the %load-ed program's)",
          store_magic),
)
