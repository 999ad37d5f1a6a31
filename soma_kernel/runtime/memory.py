"""Memory slots, their invariants, and the undo journal behind atomicity.

Every change the runtime makes to durable state (a slot write or delete, a
transition, a `next_id`, a `remember`) first records how to undo itself in
the `Journal`. A top-level invocation that raises rolls the journal back to
empty; a failing `try { }` rolls back to the savepoint taken when it began.

Invariants are checked BEFORE a write: the candidate value is bound to the
slot's name (and `value`, `key`, `size` = the entry count after the write),
the invariant evaluated, and the write refused with kind `invariant` when it
does not hold. That reading is the prover's too (syntax.invariant_terms).
"""

from __future__ import annotations

from typing import Callable, Optional

from ..core.diagnostics import SomaError
from ..syntax import ast
from .values import copy_value, display, display_inner, type_of

MISSING = object()


MAP_ENTRY = object()  # ends a Map entry's four items in the journal


class Journal:
    """An undo log: how to restore what each change overwrote.

    An entry is a closure to call (one item of `entries`), or, the cheaper form
    for a Map entry, the four items `data, key, old, MAP_ENTRY`: put `old` back
    at `data[key]`, or remove the key when `old` is MISSING. The items are added
    with one `extend`, so a write leaves no object behind for the cyclic
    collector to count (a tuple per write made a loop of 300 000 writes set off
    full collections of the whole heap).
    """

    def __init__(self):
        self.entries: list = []

    def record(self, undo) -> None:
        """Remember how to undo the change about to be made (a closure)."""
        self.entries.append(undo)

    def record_entry(self, data: dict, key, old) -> None:
        """Remember that `data[key]` was `old` (MISSING: absent) before the write about to be made."""
        self.entries += (data, key, old, MAP_ENTRY)

    def savepoint(self) -> int:
        """A position to roll back to."""
        return len(self.entries)

    def rollback(self, savepoint: int = 0) -> None:
        """Undo every change recorded after `savepoint`, newest first."""
        entries = self.entries
        while len(entries) > savepoint:
            entry = entries.pop()
            if entry is MAP_ENTRY:
                old, key, data = entries.pop(), entries.pop(), entries.pop()
                if old is MISSING:
                    data.pop(key, None)
                else:
                    data[key] = old
            else:
                entry()

    def commit(self) -> None:
        """Forget the recorded changes (the invocation succeeded)."""
        self.entries.clear()


AUDIT_LIMIT = 10_000  # entries of one slot read when stored data is audited against its invariants
ENTRIES_SHOWN = 3  # entries a breach message names (the rest are counted)


def listed_entries(shown: list[str]) -> str:
    """The first entries of a breach, then how many more there are."""
    more = len(shown) - ENTRIES_SHOWN
    return ", ".join(shown[:ENTRIES_SHOWN]) + (f" and {more} more" if more > 0 else "")


class CompiledInvariant:
    """One `invariant` line, compiled, with the slots it guards.

    `guarded` is the set of slot names the expression mentions; empty means
    it guards every slot of its memory section. `check(slot, key, value,
    size)` raises SomaError(invariant) when the candidate write breaks it.
    """

    def __init__(self, node: ast.Invariant, text: str, guarded: set[str],
                 evaluate: Callable[..., object], reads_size: bool = False):
        self.node = node
        self.text = text
        self.guarded = guarded
        self.evaluate = evaluate
        self.reads_size = reads_size  # re-checked on deletes (syntax.invariant_terms)

    def applies_to(self, slot_name: str) -> bool:
        """True when writes to `slot_name` must satisfy this invariant."""
        return not self.guarded or slot_name in self.guarded

    def check(self, slot: "Slot", key, value, size: int) -> None:
        """Refuse the write (kind `invariant`) when the invariant fails on it."""
        if key is None and slot.is_list and isinstance(value, list):
            for item in value:
                self.check_one(slot, key, item, size)
            return
        try:
            if self.evaluate(slot.name, value, key, size) is True:
                return
        except SomaError:
            pass
        self.check_one(slot, key, value, size)

    def outcome(self, slot: "Slot", key, item, size: int):
        """The invariant's value on one candidate write. An operation it cannot
        do (typically comparing `()`, an entry another slot lacks at this key)
        refuses the write like a false invariant, saying why."""
        try:
            return self.evaluate(slot.name, item, key, size)
        except SomaError as err:
            if err.kind != "type":
                raise
            where = f"[{display_key(key)}]" if key is not None else ""
            hint = " (a missing entry reads as (): default it with `?? 0`)" if "Unit" in err.detail else ""
            raise SomaError("invariant", f"{slot.name}{where} = {display_inner(item)} fails invariant {self.text}: "
                                         f"{err.detail}{hint}", self.node.span) from None

    def check_one(self, slot: "Slot", key, item, size: int, deleting: bool = False) -> None:
        """Check one candidate value (or, `deleting`, the entry being removed), raising the refusal."""
        result = self.outcome(slot, key, item, size)
        if result is True:
            return
        if result is not False:
            raise SomaError("type", f"invariant {self.text} must be a Bool, got {type_of(result)}",
                            self.node.span)
        where = f"[{display_key(key)}]" if key is not None else ""
        change = f"deleting {slot.name}{where}" if deleting else f"{slot.name}{where} = {display_inner(item)}"
        raise SomaError("invariant", f"{change} violates invariant {self.text}", self.node.span)


def display_key(key) -> str:
    """A key as shown in messages: strings quoted."""
    return f'"{key}"' if isinstance(key, str) else display(key)


class Slot:
    """One memory slot of one cell: a Map or a List, guarded and journaled."""

    def __init__(self, decl: ast.Slot, journal: Journal, invariants: list[CompiledInvariant],
                 element_check: Optional[Callable[[object], object]] = None):
        self.decl = decl
        self.name = decl.name
        self.is_list = decl.type.name == "List"
        self.data: object = [] if self.is_list else {}
        self.journal = journal
        self.invariants = [inv for inv in invariants if inv.applies_to(self.name)]
        self.element_check = element_check
        self.on_change: Optional[Callable[..., None]] = None  # (slot, key, from_here=False): a store's watcher

    # ---------------------------------------------------------------- reads

    def whole(self):
        """The slot's value as a copy (reading a slot never aliases it)."""
        return copy_value(self.data)

    def read_key(self, key, node=None):
        """`slot[key]` / `slot.get(key)`: a copy of the value, `()` when absent."""
        if self.is_list:
            if type(key) is not int:
                raise SomaError("type", f"a List slot index must be an Int, got {type_of(key)}",
                                node.span if node else ast.NO_SPAN)
            data = self.data
            if -len(data) <= key < len(data):
                return copy_value(data[key])
            return None
        value = self.data.get(normal_key(key, node), None)
        return copy_value(value) if isinstance(value, (dict, list)) else value

    # ---------------------------------------------------------------- writes

    def write(self, key, value, node=None):
        """`slot.set(key, value)` / `slot[key] = value`, checked then journaled."""
        check = self.element_check
        if check is not None:
            try:
                value = check(value)
            except SomaError as err:
                raise err.located(node)
        if self.is_list:
            return self.write_index(key, value, node)
        if type(key) is not str:
            key = normal_key(key, node)
        data = self.data
        old = data.get(key, MISSING)
        if self.invariants:
            size = len(data) + (1 if old is MISSING else 0)
            if not self.accepted(key, value, size):
                self.check_invariants(key, value, size, node)
        self.journal.record_entry(data, key, old)
        data[key] = value
        if self.on_change is not None:
            self.on_change(self, key)
        return None

    def accepted(self, key, value, size: int) -> bool:
        """True when every invariant holds on a candidate Map write (the quick yes; a no is explained
        by check_invariants)."""
        name = self.name
        for invariant in self.invariants:
            try:
                if invariant.evaluate(name, value, key, size) is not True:
                    return False
            except SomaError:
                return False
        return True

    def check_invariants(self, key, value, size: int, node=None) -> None:
        """Refuse a candidate write that breaks an invariant; the error points at the write."""
        for invariant in self.invariants:
            try:
                invariant.check(self, key, value, size)
            except SomaError as err:
                raise err.located(node, replace=err.kind == "invariant")

    def write_index(self, index, value, node=None):
        """Replace element `index` of a List slot."""
        data = self.data
        if type(index) is not int or not -len(data) <= index < len(data):
            raise SomaError("index", f"index {display(index)} out of range for slot {self.name} "
                            f"of length {len(data)}", node.span if node else ast.NO_SPAN)
        self.check_invariants(index, value, len(data), node)
        old = data[index]
        self.journal.record(lambda: data.__setitem__(index, old))
        data[index] = value
        self.changed(index % len(data))
        return None

    def push(self, value, node=None):
        """Append to a List slot."""
        if not self.is_list:
            raise SomaError("type", f"{self.name} is a Map slot: use {self.name}.set(key, value)",
                            node.span if node else ast.NO_SPAN)
        value = self.typed(value, node)
        data = self.data
        self.check_invariants(len(data), value, len(data) + 1, node)
        self.journal.record(data.pop)
        data.append(value)
        self.changed(len(data) - 1)
        return None

    def delete(self, key, node=None):
        """Remove a key (Map) or an index (List); True when it existed. Size invariants are checked."""
        data = self.data
        if self.is_list:
            if type(key) is not int or not -len(data) <= key < len(data):
                return False
            index = key % len(data)
            old = data[index]
            self.check_size(index, old, len(data) - 1, node)
            self.journal.record(lambda: data.insert(index, old))
            del data[index]
            self.changed(index, from_here=True)
            return True
        key = normal_key(key, node)
        if key not in data:
            return False
        old = data[key]
        self.check_size(key, old, len(data) - 1, node)
        self.journal.record(lambda: data.__setitem__(key, old))
        del data[key]
        self.changed(key)
        return True

    def breaches(self, limit: int = AUDIT_LIMIT) -> list[tuple["CompiledInvariant", list[str]]]:
        """The invariants the values already in the slot break, each with those entries shown
        (`stock["apples"] = 50`, `log[2] = -1`): data written before an invariant was tightened.
        At most `limit` entries are read; a value the invariant cannot judge counts as breaking it."""
        size = len(self.data)
        entries = enumerate(self.data) if self.is_list else self.data.items()
        found: dict[int, tuple[CompiledInvariant, list[str]]] = {}
        for count, (key, value) in enumerate(entries):
            if count >= limit:
                break
            for index, invariant in enumerate(self.invariants):
                try:
                    holds = invariant.evaluate(self.name, value, key, size) is True
                except SomaError:
                    holds = False
                if not holds:
                    shown = f"{self.name}[{display_key(key)}] = {display_inner(value)}"
                    found.setdefault(index, (invariant, []))[1].append(shown)
        return [found[index] for index in sorted(found)]

    def check_size(self, key, removed, size: int, node=None) -> None:
        """Re-check invariants that read `size` when a delete shrinks the slot:
        they see the removed entry (its key and value) and the size after the delete."""
        for invariant in self.invariants:
            if invariant.reads_size:
                try:
                    invariant.check_one(self, key, removed, size, deleting=True)
                except SomaError as err:
                    raise err.located(node, replace=err.kind == "invariant")

    def typed(self, value, node):
        """Check/coerce a written value against the slot's element type."""
        if self.element_check is None:
            return value
        try:
            return self.element_check(value)
        except SomaError as err:
            raise err.located(node)

    def changed(self, key, from_here: bool = False) -> None:
        """Tell an observer (a bound store) which entry changed (`from_here`: every list position from `key` on)."""
        if self.on_change is not None:
            self.on_change(self, key, from_here)

    # ---------------------------------------------------------------- methods

    def call(self, method: str, args: list, node):
        """Dispatch `slot.method(args)`."""
        handler = SLOT_METHODS.get(method)
        if handler is None:
            raise SomaError("type", f"slot {self.name} has no method '{method}' "
                            f"(slot methods: {', '.join(sorted(SLOT_METHODS))})", node.span)
        arity = SLOT_ARITY.get(method, 0)
        if len(args) != arity:
            raise SomaError("type", f"{self.name}.{method}() takes {arity} argument"
                            f"{'' if arity == 1 else 's'}, got {len(args)}", node.span)
        return handler(self, args, node)

    def sorted_items(self):
        """Map entries sorted by key (slots list their keys in key order)."""
        return sorted(self.data.items(), key=lambda kv: str(kv[0]))


def normal_key(key, node=None):
    """Map slot keys are text: `1` and `"1"` are the same key. `()` is refused at `node`."""
    if isinstance(key, str):
        return key
    if key is None:
        raise SomaError("type", "a slot key cannot be () — check the value you use as the key",
                        node.span if node is not None else ast.NO_SPAN)
    return display(key)


def _keys(slot: Slot, args, node):
    if slot.is_list:
        return list(range(len(slot.data)))
    return [k for k, _ in slot.sorted_items()]


def _values(slot: Slot, args, node):
    if slot.is_list:
        return copy_value(slot.data)
    return [copy_value(v) for _, v in slot.sorted_items()]


def _entries(slot: Slot, args, node):
    if slot.is_list:
        return [{"key": i, "value": copy_value(v)} for i, v in enumerate(slot.data)]
    return [{"key": k, "value": copy_value(v)} for k, v in slot.sorted_items()]


def _has(slot: Slot, args, node):
    key = args[0]
    if slot.is_list:
        return type(key) is int and -len(slot.data) <= key < len(slot.data)
    return key is not None and normal_key(key, node) in slot.data


def _last(slot: Slot, args, node):
    data = slot.data
    if slot.is_list:
        return copy_value(data[-1]) if data else None
    return copy_value(data[next(reversed(data))]) if data else None


SLOT_METHODS = {
    "get": lambda slot, args, node: slot.read_key(args[0], node),
    "set": lambda slot, args, node: slot.write(args[0], args[1], node),
    "delete": lambda slot, args, node: slot.delete(args[0], node),
    "has": _has,
    "keys": _keys,
    "values": _values,
    "entries": _entries,
    "len": lambda slot, args, node: len(slot.data),
    "size": lambda slot, args, node: len(slot.data),
    "push": lambda slot, args, node: slot.push(args[0], node),
    "append": lambda slot, args, node: slot.push(args[0], node),
    "last": _last,
    "all": lambda slot, args, node: slot.whole(),
}
SLOT_ARITY = {"get": 1, "set": 2, "delete": 1, "has": 1, "push": 1, "append": 1}
