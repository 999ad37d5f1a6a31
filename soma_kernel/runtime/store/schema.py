"""The slot store's file format: its tables, its version, and the migration of older files.

A store file is a SQLite database whose `PRAGMA application_id` says it is
a soma slot store and whose `PRAGMA user_version` is the schema version.
Version 1 keeps one row per entry in `entries`:

    (cell, space, key) → value (JSON text)

where `space` is `map:<slot>` (key: the map key) or `list:<slot>` (key: the
position) for a `[persistent]` slot, `instance` (key: the instance id, value
`[state, history]`), `remember` (key: the `remember()` key) or `next_id`
(key `""`, value the counter). `changes` logs which entries each commit
touched (by `generation`), so a process reloads only what others wrote since
it last read; `meta` holds the current `generation` and `pruned_below`, the
oldest generation the log still covers.

Version 0 is the format before entries: one JSON blob per slot in
`slots(cell, slot, data)` and `cells(cell, counter, machines, memory)`; such
a file is migrated in place, in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Optional

APPLICATION_ID = 0x536F6D61  # "Soma"
SCHEMA_VERSION = 1
FORMAT_V0_TABLES = {"slots", "cells"}

TABLES_V1 = """
CREATE TABLE entries (cell TEXT NOT NULL, space TEXT NOT NULL, key NOT NULL, value TEXT NOT NULL,
                      PRIMARY KEY (cell, space, key)) WITHOUT ROWID;
CREATE TABLE changes (generation INTEGER NOT NULL, cell TEXT NOT NULL, space TEXT NOT NULL, key NOT NULL);
CREATE INDEX changes_by_generation ON changes (generation);
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta VALUES ('generation', 0), ('pruned_below', 0);
"""


class SchemaProblem(Exception):
    """The file is not a store this code can use; the text says why (without the file name)."""


def classify(db: sqlite3.Connection) -> str:
    """What the open file holds: "current", "empty" (a new file), "v0" (the JSON-blob format).

    Raises SchemaProblem for a newer schema or a database that is not a slot store.
    """
    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if application_id not in (0, APPLICATION_ID):
        raise SchemaProblem(f"it is a SQLite database of another application (application_id {application_id:#x})")
    if application_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise SchemaProblem(f"it was written by a newer soma-kernel (store schema {version}; "
                                f"this one reads up to {SCHEMA_VERSION})")
        if version == SCHEMA_VERSION:
            return "current"
    if not tables:
        return "empty"
    if tables == FORMAT_V0_TABLES and _columns(db, "slots") == ["cell", "slot", "data"]:
        return "v0"
    raise SchemaProblem(f"it is not a soma slot store (it holds the tables {', '.join(sorted(tables))})")


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    """The column names of `table`, in order."""
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def create(db: sqlite3.Connection) -> None:
    """Create the current tables and stamp the file (inside the caller's transaction)."""
    for statement in TABLES_V1.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def migrate_v0(db: sqlite3.Connection) -> None:
    """Turn a JSON-blob file into entries (inside the caller's transaction): nothing is dropped.

    Each slot blob becomes one entry per map key or list position (its
    space named by the blob's shape), each cell's machines, `remember()`
    memory and counter their own entries. The old tables go once copied.
    """
    rows = db.execute("SELECT cell, slot, data FROM slots").fetchall()
    cells = db.execute("SELECT cell, counter, machines, memory FROM cells").fetchall()
    db.execute("DROP TABLE slots")
    db.execute("DROP TABLE cells")
    create(db)
    entries: list[tuple] = []
    for cell, slot, data in rows:
        entries += _slot_entries(cell, slot, json.loads(data))
    for cell, counter, machines, memory in cells:
        entries += _cell_entries(cell, counter, machines, memory)
    db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)", entries)


def v0_problem(db: sqlite3.Connection) -> Optional[str]:
    """What in a JSON-blob file could not be migrated (a blob that is not JSON, or not of its
    slot's shape), or None; it is checked before anything is written."""
    for cell, slot, data in db.execute("SELECT cell, slot, data FROM slots"):
        value = _json_or_none(data)
        if not isinstance(value, (list, dict)):
            return f"the older-format blob of {cell}.{slot} is not a JSON list or object ({_shown(data)})"
    for cell, counter, machines, memory in db.execute("SELECT cell, counter, machines, memory FROM cells"):
        if counter is not None and type(counter) is not int:
            return f"the older-format next_id of {cell} is not an integer ({_shown(counter)})"
        for part, data in (("machines", machines), ("remember() memory", memory)):
            if data and not isinstance(_json_or_none(data), dict):
                return f"the older-format {part} blob of {cell} is not a JSON object ({_shown(data)})"
        if machines:
            saved = json.loads(machines)
            if not all(isinstance(saved.get(name, []), list) and all(
                    isinstance(pair, list) and len(pair) == 2 for pair in saved.get(name, []))
                    for name in ("current", "history")):
                return f"the older-format machines blob of {cell} is not [instance, state] pairs ({_shown(machines)})"
    return None


def _json_or_none(data):
    """data decoded from JSON text, or None when it is not JSON text."""
    if not isinstance(data, str):
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _shown(data) -> str:
    """A value from the file as a message shows it: its first 60 characters."""
    text = repr(data)
    return text if len(text) <= 60 else text[:60] + "…"


def _slot_entries(cell: str, slot: str, value) -> list[tuple]:
    """One v0 slot blob as entry rows."""
    if isinstance(value, list):
        return [(cell, f"list:{slot}", index, _dump(item)) for index, item in enumerate(value)]
    return [(cell, f"map:{slot}", key, _dump(item)) for key, item in value.items()]


def _cell_entries(cell: str, counter: Optional[int], machines: Optional[str], memory: Optional[str]) -> list[tuple]:
    """One v0 `cells` row (counter, machines blob, memory blob) as entry rows."""
    entries = [(cell, "next_id", "", str(counter))] if counter else []
    if memory:
        entries += [(cell, "remember", key, _dump(item)) for key, item in json.loads(memory).items()]
    if machines:
        saved = json.loads(machines)
        history = {_instance_id(key): path for key, path in saved.get("history", [])}
        for key, state in saved.get("current", []):
            key = _instance_id(key)
            entries.append((cell, "instance", key, _dump([state, history.get(key, [])])))
    return entries


def _instance_id(key):
    """An instance id as v0 wrote it (JSON keeps Int and String ids apart)."""
    return key if isinstance(key, (int, str)) else str(key)


def _dump(value) -> str:
    """Compact JSON, as the runtime's JSON writer spells plain data."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
