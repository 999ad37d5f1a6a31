"""Rows of a store file checked against the bound cell's declarations before any of them is served.

A store file is data from elsewhere: another program, an older version of
this one, a hand edit, a damaged disk. So every row is read as a write of
the bound program would be checked: its JSON, its size (at most the file-read
limit, `SOMA_MAX_FILE_BYTES`, in characters),
its slot's element type (`Map<String, Int>` takes no String), the slot's
invariants (`counts >= 0` takes no −999), a map key that is text and list
positions 0…n−1, an instance that is `[state, history]` and a `next_id` that
is a whole number. A row that fails is refused with a store error naming the
file, the cell's slot and the key; the load it belongs to serves nothing.
"""

from __future__ import annotations

import json

from ...core.diagnostics import SomaError
from ...core.files import LIMIT_VARIABLE, BadLimit, max_file_bytes
from ..values import display, from_json
from .database import store_error

REMEDY = ("fix or delete that row with sqlite3, or wipe the cell's stored data "
          "(`%reset --store {cell}` in a notebook, `soma-kernel run --fresh`)")


def refused(path: str, cell: str, where: str, key, reason: str) -> SomaError:
    """The error for one row that is not served."""
    shown_key = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else display(key)
    return store_error(path, f"the row {cell}.{where}[{shown_key}] is refused ({reason}); nothing of it was read; "
                             + REMEDY.format(cell=cell))


def entry_limit(path: str) -> int:
    """The most characters one stored value (a map entry, a list position, an instance) may have:
    the limit on a file read for the user."""
    try:
        return max_file_bytes()
    except BadLimit as problem:
        raise store_error(path, f"{problem}; nothing was read") from None


def decoded(path: str, cell: str, where: str, key, text, variants: dict):
    """A row's JSON as Soma values, refused when it is too long or not JSON text."""
    if not isinstance(text, str):
        raise refused(path, cell, where, key, f"its value is a {type(text).__name__}, not JSON text")
    limit = entry_limit(path)
    if len(text) > limit:
        raise refused(path, cell, where, key, f"its value is longer than {limit} characters, the most a stored "
                                              f"value holds (set {LIMIT_VARIABLE} to change it)")
    try:
        return from_json(text, variants)
    except SomaError as err:
        raise refused(path, cell, where, key, err.detail) from None


def slot_value(path: str, cell: str, slot, key, value, size: int, invariants: list):
    """value as slot would take it in a write at key: its element type, then `invariants` (those the
    row was stored under, declarations.enforced; one added since is reported, not refused)."""
    if slot.element_check is not None:
        try:
            value = slot.element_check(value)
        except SomaError as err:
            raise refused(path, cell, slot.name, key, err.detail) from None
    for invariant in invariants:
        try:
            invariant.check(slot, key, value, size)
        except SomaError as err:
            raise refused(path, cell, slot.name, key, err.detail) from None
    return value


def slot_values(path: str, cell: str, slot, keys, values: list, invariants: list) -> list:
    """A whole stored slot's values checked as slot_value does, the common case in one pass."""
    check = slot.element_check
    if check is not None:
        try:
            values = [check(value) for value in values]
        except SomaError:
            pass  # slot_value below names the first value it refuses
        else:
            check = None
    if check is None and not invariants:
        return values
    size = len(values)
    return [slot_value(path, cell, slot, key, value, size, invariants) for key, value in zip(keys, values)]


def map_keys(path: str, cell: str, slot, keys: list) -> None:
    """Stored map keys are text."""
    for key in keys:
        if type(key) is not str:
            raise refused(path, cell, slot.name, key, "a map key is text")


def list_positions(path: str, cell: str, slot, positions: list) -> None:
    """A stored list's positions are 0, 1, … in order."""
    for expected, position in enumerate(positions):
        if position != expected or type(position) is not int:
            raise refused(path, cell, slot.name, position, f"list positions run 0, 1, …; here {expected} was expected")


def instance(path: str, cell: str, key, saved):
    """A stored machine instance, `[state, history]` with an Int or String id."""
    if type(key) not in (int, str):
        raise refused(path, cell, "instance", key, "an instance id is an Int or a String")
    if not (isinstance(saved, list) and len(saved) == 2 and isinstance(saved[0], str)
            and isinstance(saved[1], list) and all(isinstance(step, str) for step in saved[1])):
        raise refused(path, cell, "instance", key, "an instance is [state, [history…]] of state names")
    return saved


def counter(path: str, cell: str, value) -> int:
    """A stored `next_id` counter: a whole number, not negative."""
    try:
        number = json.loads(value) if isinstance(value, str) and len(value) < 40 else None
    except ValueError:
        number = None
    if type(number) is not int or number < 0:
        raise refused(path, cell, "next_id", "", "next_id is a whole number, not negative")
    return number
