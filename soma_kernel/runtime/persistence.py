"""`[persistent]` slots across runs: a SQLite file beside the program.

`SlotStore(path)` keeps one row per (cell, slot) holding the slot's value as
JSON (variants keep their `_type`/`_variant` and are rebuilt on load), plus
the cell's state-machine instances, its `next_id` counter and its
`remember()` memory. A runtime with
a store loads every persistent slot when a cell is built, marks slots dirty
as they change, and saves the dirty ones when a top-level invocation
succeeds — so a rolled-back invocation never reaches the disk. `path`
":memory:" keeps everything in memory (what `soma test` uses).
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Optional

from ..diagnostics import SomaError
from .values import from_json, to_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS slots (cell TEXT, slot TEXT, data TEXT, PRIMARY KEY (cell, slot));
CREATE TABLE IF NOT EXISTS cells (cell TEXT PRIMARY KEY, counter INTEGER, machines TEXT, memory TEXT);
"""


def default_store_path(program_path: str) -> str:
    """`.soma_data/<program>.sqlite` in the program's folder."""
    folder = os.path.dirname(os.path.abspath(program_path))
    stem = os.path.splitext(os.path.basename(program_path))[0]
    return os.path.join(folder, ".soma_data", f"{stem}.sqlite")


def is_persistent(slot_decl) -> bool:
    """True when a slot declaration carries the `persistent` property."""
    return any(prop.name == "persistent" for prop in slot_decl.props)


class SlotStore:
    """A SQLite file holding persistent slots, machine instances and counters."""

    def __init__(self, path: str):
        if path != ":memory:":
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            self.db = sqlite3.connect(path)
            self.db.executescript(SCHEMA)
        except sqlite3.Error as err:
            raise SomaError("path", f"cannot open the slot store {path}: {err}", catchable=False) from None
        self.dirty: dict[tuple[str, str], object] = {}
        self.cells: dict[str, object] = {}

    def bind(self, state, variants: dict) -> None:
        """Load a freshly built cell's persistent state and watch its slots."""
        for name, slot in state.slots.items():
            if not is_persistent(slot.decl):
                continue
            row = self.db.execute("SELECT data FROM slots WHERE cell = ? AND slot = ?",
                                  (state.name, name)).fetchone()
            if row is not None:
                loaded = from_json(row[0], variants)
                if isinstance(loaded, type(slot.data)):
                    slot.data = loaded
            slot.on_change = lambda changed, cell=state.name: self.dirty.__setitem__((cell, changed.name), changed)
        row = self.db.execute("SELECT counter, machines, memory FROM cells WHERE cell = ?",
                              (state.name,)).fetchone()
        if row is not None:
            state.counter = row[0] or 0
            if row[2]:
                state.memory.update(from_json(row[2], variants))
            if state.machines is not None and row[1]:
                saved = json.loads(row[1])
                states = set(state.model.states)
                current = {key: target for key, target in saved["current"] if target in states}
                state.machines.current.update(current)
                state.machines.history.update({key: path for key, path in saved["history"] if key in current})
        self.cells[state.name] = state

    def flush(self) -> None:
        """Write the changed slots and every cell's counter and instances, in one transaction."""
        with self.db:
            for (cell, name), slot in self.dirty.items():
                self.db.execute("INSERT OR REPLACE INTO slots VALUES (?, ?, ?)", (cell, name, to_json(slot.data)))
            for cell, state in self.cells.items():
                machines = None
                if state.machines is not None:
                    machines = json.dumps({"current": list(state.machines.current.items()),
                                           "history": list(state.machines.history.items())})
                self.db.execute("INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?)",
                                (cell, state.counter, machines, to_json(state.memory)))
        self.dirty.clear()

    def close(self) -> None:
        """Close the database."""
        self.db.close()


def open_store(path: Optional[str]) -> SlotStore:
    """A store at `path` (":memory:" when None)."""
    return SlotStore(path or ":memory:")
