"""What one invocation changed in a bound cell, kept as entry names (never as copies of values).

The runtime's change sites already journal every write for rollback; the
bound ones also tell a `Changes` which entry they touched: a map key, a list
position (or "from this position on", after a list delete), an instance id,
a `remember()` key. At commit the entries' current values are read from
memory, so a change undone by a failed `try` writes back the value it
restored (a no-op), and a failed invocation simply forgets its `Changes`.
Recording costs one set insertion per write; the commit costs O(entries
touched), whatever the size of the slot.
"""

from __future__ import annotations

from typing import Callable, Iterator

from ..memory import MISSING
from ..values import to_json

NEXT_ID = ("next_id", "")


class Changes:
    """The entries one invocation touched, by cell."""

    def __init__(self):
        self.entries: set[tuple[str, str, object]] = set()
        self.list_from: dict[tuple[str, str], int] = {}

    def __bool__(self) -> bool:
        return bool(self.entries or self.list_from)

    def clear(self) -> None:
        """Forget everything (the invocation committed or failed)."""
        self.entries.clear()
        self.list_from.clear()

    def touch(self, cell: str, space: str, key) -> None:
        """One entry was written or deleted."""
        self.entries.add((cell, space, key))

    def shift(self, cell: str, slot: str, position: int) -> None:
        """Every position of a list slot from `position` on may have moved (a delete)."""
        key = (cell, slot)
        self.list_from[key] = min(position, self.list_from.get(key, position))

    def slot_watcher(self, cell: str) -> Callable:
        """The `on_change(slot, key, from_here=False)` hook of a bound cell's persistent slots."""
        entries, shift = self.entries, self.shift

        def changed(slot, key, from_here: bool = False) -> None:
            if from_here:
                shift(cell, slot.name, key)
            else:
                entries.add((cell, ("list:" if slot.is_list else "map:") + slot.name, key))

        return changed


def entry_rows(binding, changes: Changes) -> Iterator[tuple[str, str, object, object]]:
    """(cell, space, key, JSON value or None for a delete) of every entry a bound cell changed."""
    cell = binding.state.name
    for changed_cell, space, key in changes.entries:
        if changed_cell == cell and not space.startswith("list:"):
            yield cell, space, key, encoded(binding, space, key)
    for name, slot in binding.slots.items():
        if slot.is_list:
            yield from list_rows(binding, name, changes)
    if binding.state.counter != binding.counter:
        yield cell, *NEXT_ID, str(binding.state.counter)


def list_rows(binding, name: str, changes: Changes) -> Iterator[tuple[str, str, object, object]]:
    """The rows that make a stored list equal its slot: changed positions, a moved tail, a shorter end."""
    cell, space = binding.state.name, f"list:{name}"
    data = binding.slots[name].data
    positions = {key for changed_cell, changed_space, key in changes.entries
                 if changed_cell == cell and changed_space == space}
    start = changes.list_from.get((cell, name))
    if not positions and start is None:
        return
    if start is not None:
        positions.update(range(start, len(data)))
    stored = binding.list_lengths.get(name, 0)
    for position in sorted(positions):
        if position < len(data):
            yield cell, space, position, to_json(data[position])
    for position in range(len(data), stored):
        yield cell, space, position, None


def encoded(binding, space: str, key):
    """The JSON of one map entry, instance or remembered value as it is now, None when it is gone."""
    state = binding.state
    if space == "remember":
        value = state.memory.get(key, MISSING)
    elif space == "instance":
        machines = state.machines
        target = machines.current.get(key, MISSING) if machines is not None else MISSING
        value = MISSING if target is MISSING else [target, machines.history.get(key, [])]
    else:
        slot = binding.slots.get(space[len("map:"):])
        value = MISSING if slot is None else slot.data.get(key, MISSING)
    return None if value is MISSING else to_json(value)
