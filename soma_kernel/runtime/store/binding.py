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
from typing import Callable, Optional

from ...core.diagnostics import SomaError
from ...core.records import Record, fresh
from ..values import from_json
from . import checks, declarations
from .changes import NEXT_ID, Changes, entry_rows
from .database import Database, store_error


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
        self.locked: dict[str, str] = {}  # slot -> why this binding may not write it (declarations.py)
        self.enforced: dict[str, list] = {}  # slot -> the invariants its stored rows are held to (declarations.py)

    def parts(self) -> dict:
        """{part name: {key: value}} of what the cell keeps in the store, as it is in memory now."""
        state = self.state
        parts = {name: dict(enumerate(slot.data)) if slot.is_list else dict(slot.data)
                 for name, slot in self.slots.items()}
        if state.machines is not None:
            parts["machine instances"] = dict(state.machines.current)
        parts["remember()"] = dict(state.memory)
        parts["next_id"] = {"": state.counter} if state.counter else {}
        return parts

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


class Replaced(Record):
    """In-memory values of one part of a cell that binding a store replaced by the stored ones."""

    cell: str
    part: str  # a slot's name, "machine instances", "remember()" or "next_id"
    keys: list  # the keys whose in-memory value was replaced or dropped


class Bound(Record):
    """What binding cells did: the in-memory values the stored ones replaced, the cells whose
    values were written because the file held nothing of them, and (filled in by the runtime)
    one line per invariant that values read from the file break."""

    replaced: list
    written: list
    breaches: list = fresh(list)


def replaced(cell: str, before: dict, after: dict) -> list[Replaced]:
    """The parts of a cell whose in-memory values (before) the stored ones (after) replaced or dropped."""
    found = []
    for part, values in before.items():
        now = after.get(part, {})
        keys = [key for key, value in values.items() if key not in now or now[key] != value]
        if keys:
            found.append(Replaced(cell=cell, part=part, keys=keys))
    return found


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
        # Where a cell's definition comes from: a program file (its declarations are the store's), or
        # None for a notebook cell (it may not weaken them). Unset: every cell is the program's.
        self.origin_of: Callable[[str], Optional[str]] = lambda cell: "the program"

    @property
    def read_only(self) -> bool:
        """Whether the file can only be read."""
        return self.database.read_only

    # ------------------------------------------------------------ binding

    def bind(self, states: list, variants: dict) -> "Bound":
        """Bind freshly built cells, all or none. When the file holds data of a cell, that data
        (checked row by row) becomes the cell's stored parts, and the result says which in-memory
        values it replaced; when it holds none, the cell keeps its values and they are written at once."""
        self.variants = variants
        bindings = [CellBinding(state) for state in states]
        before = [binding.parts() for binding in bindings]
        with self.database.transaction(write=False):  # reading only: a refused file is left as it is
            self._catch_up()
            records = [declarations.recorded(self.database, binding.state.name) for binding in bindings]
            for binding, recorded in zip(bindings, records):
                binding.enforced = declarations.enforced(binding, recorded)
            held = [self.database.holds(binding.state.name) for binding in bindings]
            loads = [self._read_cell(binding) if holds else None for binding, holds in zip(bindings, held)]
        for binding, load in zip(bindings, loads):
            self.cells[binding.state.name] = binding
            if load is not None:
                load()
        plans = [declarations.plan(binding, declarations.declared(binding), recorded,
                                   self.origin_of(binding.state.name))
                 for binding, recorded in zip(bindings, records)]
        unstored = [binding for binding, holds, parts in zip(bindings, held, before)
                    if not holds and any(parts.values())]
        written = []
        if not self.read_only and (unstored or any(plan.to_record for plan in plans)):
            with self.database.transaction():
                self._catch_up()
                for binding, plan in zip(bindings, plans):
                    declarations.record(self.database, binding.state.name, plan.to_record)
                for binding in unstored:
                    if not self.database.holds(binding.state.name):  # another process may have written it
                        self._write_whole(binding)
                        written.append(binding.state.name)
        for binding, plan in zip(bindings, plans):
            binding.locked = plan.locked
            binding.watch(self.changes)
        return Bound(replaced=[item for binding, holds, parts in zip(bindings, held, before) if holds
                               for item in replaced(binding.state.name, parts, binding.parts())],
                     written=written)

    def _write_whole(self, binding: CellBinding) -> None:
        """Write every stored part of a cell the file holds nothing of (inside a write transaction)."""
        changes, cell = Changes(), binding.state.name
        for key_space, keys in self._spaces(binding):
            for key in keys:
                changes.touch(cell, key_space, key)
        for name, slot in binding.slots.items():
            if slot.is_list:
                changes.shift(cell, name, 0)
        binding.counter = 0
        binding.list_lengths = {name: 0 for name, slot in binding.slots.items() if slot.is_list}
        rows = list(entry_rows(binding, changes))
        if rows:
            self._write(rows)

    @staticmethod
    def _spaces(binding: CellBinding):
        """(space, keys) of a cell's map slots, instances and remembered values."""
        state = binding.state
        for name, slot in binding.slots.items():
            if not slot.is_list:
                yield f"map:{name}", list(slot.data)
        yield "remember", list(state.memory)
        if state.machines is not None:
            yield "instance", list(state.machines.current)

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
            for assign in [self._read_cell(binding) for binding in self.cells.values()]:
                assign()
        else:
            self._apply(database.changed_since(self.seen))
        self.seen = generation

    def _read_cell(self, binding: CellBinding) -> Callable[[], None]:
        """Read and check every entry of a cell; what sets its stored parts to them (nothing is set
        when a row is refused)."""
        state, path, cell = binding.state, self.path, binding.state.name
        unreadable = self.database.first_unreadable(cell, checks.entry_limit(path))
        if unreadable is not None:
            space, key, value = unreadable
            checks.decoded(path, cell, space.partition(":")[2] or space, key, value, self.variants)
        slots = {name: [] if slot.is_list else {} for name, slot in binding.slots.items()}
        for space, keys, values in self.database.cell_slots(cell):
            slot = binding.slots.get(space.partition(":")[2])
            if slot is None or space != ("list:" if slot.is_list else "map:") + slot.name:
                continue
            keys, values = json.loads(keys), self._slot_values(cell, slot, space, values)
            if len(values) != len(keys):  # a row that is not one JSON value (`1,2`)
                self._refuse_bad_json(cell, slot, space)
            invariants = binding.enforced.get(slot.name, slot.invariants)
            if slot.is_list:
                checks.list_positions(path, cell, slot, keys)
                slots[slot.name] = checks.slot_values(path, cell, slot, range(len(values)), values, invariants)
            else:
                checks.map_keys(path, cell, slot, keys)
                slots[slot.name] = dict(zip(keys, checks.slot_values(path, cell, slot, keys, values, invariants)))
        others = [self._checked_other(binding, space, key, value)
                  for space, key, value in self.database.cell_others(cell)]

        def assign() -> None:
            for name, data in slots.items():
                binding.slots[name].data = data
            state.memory.clear()
            state.counter = 0
            if state.machines is not None:
                state.machines.current.clear()
                state.machines.history.clear()
            binding.counter = 0
            binding.list_lengths = {name: len(data) for name, data in slots.items() if binding.slots[name].is_list}
            for space, key, value in others:
                self._apply_entry(binding, space, key, value)

        return assign

    def _slot_values(self, cell: str, slot, space: str, text: str) -> list:
        """The values of a stored slot, decoded from the JSON array SQLite joined them into."""
        try:
            return from_json(text, self.variants)
        except SomaError:
            self._refuse_bad_json(cell, slot, space)

    def _refuse_bad_json(self, cell: str, slot, space: str) -> None:
        """Raise the refusal of the first row of a slot that is not one JSON value."""
        for key, value in self.database.entries_of(cell, space):
            checks.decoded(self.path, cell, slot.name, key, value, self.variants)  # `1,2` is no JSON value
        raise checks.refused(self.path, cell, slot.name, "", "its rows do not read as JSON values")

    def _checked_other(self, binding: CellBinding, space: str, key, value) -> tuple:
        """(space, key, decoded value) of an instance, remembered value or counter row, checked."""
        cell, path = binding.state.name, self.path
        if value is None:
            return space, key, None
        if (space, key) == NEXT_ID:
            return space, key, checks.counter(path, cell, value)
        decoded = checks.decoded(path, cell, space, key, value, self.variants)
        if space == "instance":
            checks.instance(path, cell, key, decoded)
        elif space.startswith("map:"):
            slot = binding.slots.get(space[len("map:"):])
            if slot is not None and not slot.is_list:
                checks.map_keys(path, cell, slot, [key])
                size = len(slot.data) + (key not in slot.data)
                decoded = checks.slot_value(path, cell, slot, key, decoded, size,
                                            binding.enforced.get(slot.name, slot.invariants))
        return space, key, decoded

    def _apply(self, rows: list[tuple]) -> None:
        """Set (or, value None, remove) each (cell, space, key, value) in the bound cells' memory,
        once every row is checked."""
        lists: dict[tuple[str, str], list] = {}
        entries = []
        for cell, space, key, value in rows:
            binding = self.cells.get(cell)
            if binding is None:
                continue
            if space.startswith("list:"):
                lists.setdefault((cell, space[len("list:"):]), []).append((key, value))
            else:
                entries.append((binding, *self._checked_other(binding, space, key, value)))
        changed_lists = [(self.cells[cell], name, self._checked_positions(self.cells[cell], name, positions))
                         for (cell, name), positions in lists.items()]
        for binding, space, key, value in entries:
            self._apply_entry(binding, space, key, value)
        for binding, name, (length, positions) in changed_lists:
            self._apply_list(binding, name, length, positions)

    def _apply_entry(self, binding: CellBinding, space: str, key, value) -> None:
        """One checked map entry, remembered value, instance or counter as the file holds it."""
        state = binding.state
        if (space, key) == NEXT_ID:
            state.counter = binding.counter = value if value is not None else 0
            return
        if space == "remember":
            target = state.memory
        elif space == "instance":
            self._apply_instance(state.machines, key, value)
            return
        else:
            slot = binding.slots.get(space[len("map:"):])
            if slot is None or slot.is_list:
                return
            target = slot.data
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value

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

    def _checked_positions(self, binding: CellBinding, name: str, positions: list[tuple]) -> tuple:
        """(the stored list's length, [(position, checked value or None)]) of a list's changed positions."""
        slot = binding.slots.get(name)
        if slot is None or not slot.is_list:
            return 0, []
        cell = binding.state.name
        length, count = self.database.list_length(cell, f"list:{name}")
        if count != length:
            checks.list_positions(self.path, cell, slot, self.database.list_positions(cell, f"list:{name}"))
        checked = []
        for position, value in sorted(positions, key=lambda item: item[0]):
            if value is not None and type(position) is int and 0 <= position < length:
                item = checks.decoded(self.path, cell, name, position, value, self.variants)
                checked.append((position, checks.slot_value(self.path, cell, slot, position, item, length,
                                                            binding.enforced.get(name, slot.invariants))))
        return length, checked

    def _apply_list(self, binding: CellBinding, name: str, length: int, positions: list[tuple]) -> None:
        """A stored list's changed positions: cut to the file's length, then set or append in order."""
        slot = binding.slots.get(name)
        if slot is None or not slot.is_list:
            return
        data = slot.data
        del data[length:]
        for position, item in positions:
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
        """Write what the invocation changed and make it durable (nothing changed: nothing written).
        A write the store cannot take (a read-only file, a slot this binding may not write) fails
        the invocation, which then rolls back."""
        rows = [row for binding in self.cells.values() for row in entry_rows(binding, self.changes)]
        if rows:
            self._refuse_locked(rows)
            self._write(rows)
        self.database.commit()
        self.active = False
        self.changes.clear()

    def _write(self, rows: list[tuple]) -> None:
        """Write rows (cell, space, key, JSON or None) as the next generation (inside a write transaction)."""
        if self.read_only:
            cell, space, key, _ = rows[0]
            raise store_error(self.path, f"the file is read-only, so {cell}.{space.partition(':')[2] or space} "
                                         "cannot be written; nothing was written")
        generation = self.seen + 1
        self.database.write(generation, [row for row in rows if row[3] is not None],
                            [row[:3] for row in rows if row[3] is None])
        self.seen = generation
        self._remember_committed()

    def _refuse_locked(self, rows: list[tuple]) -> None:
        """Refuse rows of a slot this binding declares more weakly than the store records it."""
        for cell, space, key, _ in rows:
            binding = self.cells[cell]
            why = binding.locked.get(space.partition(":")[2]) if ":" in space else None
            if why is not None:
                raise store_error(self.path, why)

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
        """Delete the stored data and declarations (of one cell, or all) and empty the bound cells' stored parts."""
        if self.read_only:
            raise store_error(self.path, "the file is read-only, so it cannot be wiped; nothing was written")
        with self.database.transaction():
            generation = max(self.seen, self.database.meta("generation")) + 1
            self.database.wipe(generation, cell)
            declarations.forget(self.database, cell)
            self.seen = generation
            for assign in [self._read_cell(binding) for binding in self.cells.values()]:
                assign()  # every bound cell in full: the wipe moved the log past what this process saw
            for binding in self.cells.values():
                if cell is None or binding.state.name == cell:
                    binding.locked = {}

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
