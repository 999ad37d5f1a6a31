"""A runtime's link to a store file: which cells are bound, and one transaction per top-level invocation.

`SlotStore(path)` is what `Runtime.attach_store` takes. For each bound cell
it holds the cell's `[persistent]` slots, machine instances, `remember()`
memory and `next_id` counter in the file. The runtime calls, around every
top-level invocation:

- `begin()`: BEGIN IMMEDIATE (so invocations of every process touching the
  file run one after another), then reload the entries other processes
  committed since this one last read (the `changes` log; in full when the
  log no longer reaches back that far);
- `commit()` when the invocation succeeded: the touched entries
  (changes.Changes) are written and COMMIT makes them durable at once;
- `abort()` when it failed: ROLLBACK, nothing is written.

So no committed write is lost (each invocation starts from every earlier
commit) and none sees half of another (the lock covers read, run and write).
"""

from __future__ import annotations

import json
import os
from typing import Optional

from ..values import from_json
from .changes import NEXT_ID, Changes, entry_rows
from .database import Database


def default_store_path(program_path: str) -> str:
    """`.soma_data/<program>.sqlite` in the program's folder."""
    folder = os.path.dirname(os.path.abspath(program_path))
    stem = os.path.splitext(os.path.basename(program_path))[0]
    return os.path.join(folder, ".soma_data", f"{stem}.sqlite")


def is_persistent(slot_decl) -> bool:
    """True when a slot declaration carries the `persistent` property."""
    return any(prop.name == "persistent" for prop in slot_decl.props)


class CellBinding:
    """One bound cell: its live state, its persistent slots and what the file held at the last read."""

    def __init__(self, state):
        self.state = state
        self.slots = {name: slot for name, slot in state.slots.items() if is_persistent(slot.decl)}
        self.counter = 0
        self.list_lengths: dict[str, int] = {}

    def watch(self, changes: Changes) -> None:
        """Report every change of the cell's stored parts to `changes`."""
        watcher = changes.slot_watcher(self.state.name)
        for slot in self.slots.values():
            slot.on_change = watcher
        cell = self.state.name
        self.state.on_remember = lambda key: changes.touch(cell, "remember", key)
        if self.state.machines is not None:
            self.state.machines.on_move = lambda key: changes.touch(cell, "instance", key)

    def unwatch(self) -> None:
        """Stop reporting changes (the store was detached)."""
        for slot in self.slots.values():
            slot.on_change = None
        self.state.on_remember = None
        if self.state.machines is not None:
            self.state.machines.on_move = None


class SlotStore:
    """The cells of one runtime bound to one store file."""

    def __init__(self, path: str, timeout: Optional[float] = None):
        self.path = path
        self.database = Database(path, timeout)
        self.cells: dict[str, CellBinding] = {}
        self.changes = Changes()
        self.variants: dict = {}
        self.seen = -1
        self.active = False

    # ------------------------------------------------------------ binding

    def bind(self, state, variants: dict) -> None:
        """Bind a freshly built cell: its stored parts become what the file holds (nothing stored: empty)."""
        self.variants = variants
        binding = CellBinding(state)
        with self.database.transaction(write=False):
            self._catch_up()
            self.cells[state.name] = binding
            self._load(binding)
        binding.watch(self.changes)

    def refresh(self) -> None:
        """Reload what other processes committed since the last read (what `%memory` shows first)."""
        with self.database.transaction(write=False):
            self._catch_up()

    def _catch_up(self) -> None:
        """Apply every entry committed since `seen` to the bound cells (inside a transaction)."""
        database = self.database
        generation = database.meta("generation")
        if generation == self.seen:
            return
        if self.seen < database.meta("pruned_below"):
            for binding in self.cells.values():
                self._load(binding)
        else:
            self._apply(database.changed_since(self.seen))
        self.seen = generation

    def _load(self, binding: CellBinding) -> None:
        """Replace a cell's stored parts by the file's entries."""
        state = binding.state
        for slot in binding.slots.values():
            slot.data = [] if slot.is_list else {}
        state.memory.clear()
        state.counter = 0
        if state.machines is not None:
            state.machines.current.clear()
            state.machines.history.clear()
        binding.counter = 0
        binding.list_lengths = {name: 0 for name, slot in binding.slots.items() if slot.is_list}
        for space, keys, values in self.database.cell_slots(state.name):
            slot = binding.slots.get(space.partition(":")[2])
            if slot is None or space != ("list:" if slot.is_list else "map:") + slot.name:
                continue
            if slot.is_list:
                slot.data = from_json(values, self.variants)
                binding.list_lengths[slot.name] = len(slot.data)
            else:
                slot.data = dict(zip(json.loads(keys), from_json(values, self.variants)))
        self._apply([(state.name, *row) for row in self.database.cell_others(state.name)])

    def _apply(self, rows: list[tuple]) -> None:
        """Set (or, value None, remove) each (cell, space, key, value) in the bound cells' memory."""
        lists: dict[tuple[str, str], list] = {}
        for cell, space, key, value in rows:
            binding = self.cells.get(cell)
            if binding is None:
                continue
            if space.startswith("list:"):
                lists.setdefault((cell, space[len("list:"):]), []).append((key, value))
            else:
                self._apply_entry(binding, space, key, value)
        for (cell, name), positions in lists.items():
            self._apply_list(self.cells[cell], name, positions)

    def _apply_entry(self, binding: CellBinding, space: str, key, value) -> None:
        """One map entry, remembered value, instance or counter as the file holds it."""
        state = binding.state
        if (space, key) == NEXT_ID:
            state.counter = binding.counter = int(value) if value is not None else 0
            return
        decoded = None if value is None else from_json(value, self.variants)
        if space == "remember":
            target = state.memory
        elif space == "instance":
            self._apply_instance(state.machines, key, decoded)
            return
        else:
            slot = binding.slots.get(space[len("map:"):])
            if slot is None or slot.is_list:
                return
            target = slot.data
        if value is None:
            target.pop(key, None)
        else:
            target[key] = decoded

    @staticmethod
    def _apply_instance(machines, key, saved) -> None:
        """An instance's [state, history], kept only when the machine still declares that state."""
        if machines is None:
            return
        if saved is None or saved[0] not in machines.model.states:
            machines.current.pop(key, None)
            machines.history.pop(key, None)
            return
        machines.current[key] = saved[0]
        if saved[1]:
            machines.history[key] = list(saved[1])

    def _apply_list(self, binding: CellBinding, name: str, positions: list[tuple]) -> None:
        """A stored list's changed positions: cut to the file's length, then set or append in order."""
        slot = binding.slots.get(name)
        if slot is None or not slot.is_list:
            return
        length = self.database.list_length(binding.state.name, f"list:{name}")
        data = slot.data
        del data[length:]
        for position, value in sorted(positions, key=lambda item: item[0]):
            if value is None or position >= length:
                continue
            item = from_json(value, self.variants)
            if position < len(data):
                data[position] = item
            else:
                data.append(item)
        binding.list_lengths[name] = length

    # ------------------------------------------------------------ invocations

    def begin(self) -> None:
        """Start one top-level invocation: take the write lock and catch up with other processes."""
        self.changes.clear()
        self.database.begin()
        self.active = True
        try:
            self._catch_up()
        except BaseException:
            self.abort()
            raise

    def commit(self) -> None:
        """Write what the invocation changed and make it durable (nothing changed: nothing written)."""
        rows = [row for binding in self.cells.values() for row in entry_rows(binding, self.changes)]
        if rows:
            generation = self.seen + 1
            self.database.write(generation, [row for row in rows if row[3] is not None],
                                [row[:3] for row in rows if row[3] is None])
        self.database.commit()
        self.active = False
        if rows:
            self.seen = generation
            self._remember_committed()
        self.changes.clear()

    def _remember_committed(self) -> None:
        """After a commit, what the file holds is what memory holds: note counters and list lengths."""
        for binding in self.cells.values():
            binding.counter = binding.state.counter
            for name, slot in binding.slots.items():
                if slot.is_list:
                    binding.list_lengths[name] = len(slot.data)

    def abort(self) -> None:
        """End a failed invocation: nothing it did reaches the file."""
        self.changes.clear()
        self.active = False
        self.database.rollback()

    # ------------------------------------------------------------ whole store

    def wipe(self, cell: Optional[str] = None) -> None:
        """Delete the stored data (of one cell, or all) and empty the bound cells' stored parts."""
        with self.database.transaction():
            self._catch_up()
            generation = self.seen + 1
            self.database.wipe(generation, cell)
            self.seen = generation
            for binding in self.cells.values():
                if cell is None or binding.state.name == cell:
                    self._load(binding)

    def summary(self) -> list[tuple]:
        """(cell, space, number of entries) of everything the file holds."""
        with self.database.transaction(write=False):
            return self.database.summary()

    def close(self) -> None:
        """Unhook the bound cells and close the file."""
        for binding in self.cells.values():
            binding.unwatch()
        self.cells.clear()
        self.database.close()
