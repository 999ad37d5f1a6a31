"""Each stored slot's declaration, kept in the store file, so that a weaker one cannot write past it.

The file records, per `[persistent]` slot, the declaration that wrote it:
its type and the source of every invariant guarding it
(`Map<String, Int>; invariant counts >= 0`), and where that came from (a
program file, or a notebook cell). A program file's declarations are the
store's: binding one records them (a program may change its own slots). A
notebook cell may read any slot, and write one only when its declaration
has the recorded type and every recorded invariant (it may add more); its
writes to a slot it declares more weakly are refused at commit, with an
error that says which invariant it lacks. `%reset --store` forgets the
records with the data.

The table is created on first use; files without it read as having no records.
"""

from __future__ import annotations

from typing import Optional

from ...core.records import Record

NOTEBOOK = "a notebook cell"

TABLE = ("CREATE TABLE IF NOT EXISTS declarations (cell TEXT NOT NULL, slot TEXT NOT NULL, "
         "declaration TEXT NOT NULL, origin TEXT NOT NULL, PRIMARY KEY (cell, slot)) WITHOUT ROWID")


class Plan(Record):
    """What binding one cell does with the records: the declarations to record, the slots it may not write."""

    to_record: dict  # slot -> (declaration, origin)
    locked: dict  # slot -> the error text for a write to it


def declared(binding) -> dict:
    """slot -> (type, [invariant sources]) of the cell's persistent slots."""
    return {name: (slot.decl.type.render(), sorted(invariant.text for invariant in slot.invariants))
            for name, slot in binding.slots.items()}


def text_of(declaration: tuple) -> str:
    """A declaration as the file records it."""
    kind, invariants = declaration
    return "; ".join([kind, *(f"invariant {text}" for text in invariants)])


def parsed(text: str) -> tuple:
    """A recorded declaration back as (type, [invariant sources])."""
    kind, *rest = text.split("; invariant ")
    return kind, sorted(rest)


def recorded(database, cell: str) -> dict:
    """slot -> (declaration text, origin) the file records for the cell."""
    with database.errors():
        if not _has_table(database):
            return {}
        rows = database.db.execute("SELECT slot, declaration, origin FROM declarations WHERE cell = ?", (cell,))
        return {slot: (declaration, origin) for slot, declaration, origin in rows}


def enforced(binding, records: dict) -> dict:
    """slot -> the cell's invariants its stored rows are held to: those the file records for the slot
    (rows were written under them: one that breaks them is not the program's), every invariant when
    nothing is recorded. An invariant added since (a program tightened it) is not among them: values
    that break it are kept and reported (runtime.interpreter.breach_messages)."""
    held = {}
    for name, slot in binding.slots.items():
        record = records.get(name)
        texts = set(parsed(record[0])[1]) if record is not None else None
        held[name] = [invariant for invariant in slot.invariants if texts is None or invariant.text in texts]
    return held


def plan(binding, declared_now: dict, records: dict, origin: Optional[str]) -> Plan:
    """What to record and which slots to lock when a cell of `origin` (None: a notebook cell) binds.
    A program's new declaration is recorded once the slot's values keep it (until then the values
    written under the old one stay readable and are reported)."""
    to_record, locked = {}, {}
    cell = binding.state.name
    for slot, declaration in declared_now.items():
        text = text_of(declaration)
        record = records.get(slot)
        if record is None or (record[0] != text and origin is not None and not binding.slots[slot].breaches()):
            to_record[slot] = (text, origin or NOTEBOOK)
        elif origin is None and record[0] != text and not _includes(declaration, parsed(record[0])):
            locked[slot] = _locked_text(cell, slot, declaration, parsed(record[0]), record[1])
    return Plan(to_record=to_record, locked=locked)


def _includes(declaration: tuple, record: tuple) -> bool:
    """Whether a declaration is at least as strict as the record: its type, and every recorded invariant."""
    return declaration[0] == record[0] and set(record[1]) <= set(declaration[1])


def _locked_text(cell: str, slot: str, declaration: tuple, record: tuple, origin: str) -> str:
    """Why a write to slot is refused."""
    if declaration[0] != record[0]:
        difference = f"as {declaration[0]}"
    else:
        missing = [text for text in record[1] if text not in declaration[1]]
        difference = "without " + " and ".join(f"`invariant {text}`" for text in missing)
    return (f"{cell}.{slot} is declared in this store by {origin} as `{slot}: {text_of(record)}`; "
            f"this notebook cell declares it {difference}, so its writes to the store are refused "
            f"and nothing was written (declare the slot as {origin} does, or %load it)")


def record(database, cell: str, to_record: dict) -> None:
    """Record declarations (inside a write transaction)."""
    if not to_record:
        return
    with database.errors():
        database.db.execute(TABLE)
        database.db.executemany("INSERT OR REPLACE INTO declarations VALUES (?, ?, ?, ?)",
                                [(cell, slot, text, origin) for slot, (text, origin) in to_record.items()])


def forget(database, cell: Optional[str]) -> None:
    """Drop the records (of one cell) with its data (inside a write transaction)."""
    with database.errors():
        if not _has_table(database):
            return
        if cell is None:
            database.db.execute("DELETE FROM declarations")
        else:
            database.db.execute("DELETE FROM declarations WHERE cell = ?", (cell,))


def _has_table(database) -> bool:
    """Whether the file has the declarations table yet."""
    return database.db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'declarations'").fetchone() is not None
