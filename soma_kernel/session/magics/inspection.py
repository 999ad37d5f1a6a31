"""Looking at live state: %state, %memory, %mocks and %diagram.

They read the session's runtime (`runtime.cells[name]`: slots, machine
instances and their histories; `runtime.mocks`) and never change it, except
`%mocks clear`, which drops the queued mocks.
"""

from __future__ import annotations

import difflib

from ...syntax.machines import build_model
from ..diagrams import diagram_bundle
from ..display import value_bundle
from .base import Magic, MagicError, split_args
from .store import shown_path, stored_contents

MOCKS_USAGE = "%mocks [clear]"


def _cell_state(session, name: str):
    """The runtime state of a defined cell, or a MagicError naming the defined cells."""
    cells = session.runtime.cells
    if name not in cells:
        known = ", ".join(sorted(cells)) or "none"
        raise MagicError(f"no cell named {name} (defined: {known}){_did_you_mean(name, cells)}", name)
    return cells[name]


def _did_you_mean(word: str, known) -> str:
    """` — did you mean X?` when one of `known` is close to `word`, else nothing."""
    close = difflib.get_close_matches(word, [str(k) for k in known], n=1)
    return f" — did you mean {close[0]}?" if close else ""


def slot_values(state) -> dict:
    """A cell's memory slots as {name: value}."""
    return {name: slot.data for name, slot in state.slots.items()}


def instances_of(state) -> dict:
    """A cell's machine instances as {id text: current state}."""
    return {str(k): v for k, v in state.machines.current.items()} if state.machines is not None else {}


def history_of(state, instance) -> list:
    """The states an instance (named by its id text) went through, oldest first."""
    if state.machines is None:
        return []
    return next((list(h) for k, h in state.machines.history.items() if str(k) == instance), [])


def _model(session, name: str, machine: str | None = None):
    """The machine model of a cell (the named machine, else its first)."""
    decl = _cell_state(session, name).decl
    machines = decl.machines
    if not machines:
        raise MagicError(f"cell {name} declares no state machine", name)
    if machine is None:
        return build_model(name, machines[0])
    for candidate in machines:
        if candidate.name == machine:
            return build_model(name, candidate)
    names = [m.name for m in machines]
    raise MagicError(f"cell {name} has no machine {machine} (it has: {', '.join(names)}){_did_you_mean(machine, names)}",
                     machine)


def state_magic(session, run, args: str, body) -> None:
    """%state Cell [id]: every instance and its state, or one instance's history and next states."""
    words = split_args(args, "%state Cell [instance-id]")
    if len(words) not in (1, 2):
        raise MagicError("usage: %state Cell [instance-id]", at_name=True)
    state = _cell_state(session, words[0])
    if len(words) == 1:
        if not instances_of(state):
            run.out(f"{words[0]} has no machine instances yet")
            return
        run.show(value_bundle({str(k): v for k, v in instances_of(state).items()}))
        return
    instance = _instance_key(instances_of(state), words[1])
    model = _model(session, words[0])
    if instance not in instances_of(state):
        following = ", ".join(model.targets(model.initial)) or "none (terminal)"
        run.out(f"{words[0]} {words[1]}: {model.initial} (never moved: an id that has not transitioned "
                f"is in the initial state)\n  next: {following}")
        return
    current = instances_of(state)[instance]
    path = list(history_of(state, instance)) or [current]
    following = ", ".join(model.targets(current)) or "none (terminal)"
    run.out(f"{words[0]} {words[1]}: {current}\n  history: {' → '.join(path)}\n  next: {following}")


def _instance_key(instances: dict, word: str):
    """The instance id a magic argument names: the text, or the Int it spells."""
    if word not in instances and word.lstrip("-").isdigit() and int(word) in instances:
        return int(word)
    return word


def memory_magic(session, run, args: str, body) -> None:
    """%memory [Cell]: the cell's memory slots and their values; alone, what the bound store holds.

    With a store bound (`%store`), what other processes committed is read first.
    """
    words = split_args(args, "%memory [Cell]")
    store = session.runtime.store
    if not words and store is not None:
        run.out(stored_contents(session, store))
        return
    if len(words) != 1:
        raise MagicError("usage: %memory Cell (and %memory alone once %store binds a file)", at_name=True)
    state = _cell_state(session, words[0])
    if store is not None:
        store.refresh()
        stored = sorted(store.cells[words[0]].slots) if words[0] in store.cells else []
        if stored:
            run.out(f"{', '.join(stored)}: stored in {shown_path(session, store.path)}")
    if not state.slots:
        run.out(f"{words[0]} has no memory slots")
        return
    run.show(value_bundle(dict(slot_values(state))))


def mocks_magic(session, run, args: str, body) -> None:
    """%mocks [clear]: the scripted answers not consumed yet (think, approve, handlers), next first,
    each with the cell that queued it; `%mocks clear` drops them all (memory and the rest stay)."""
    words = split_args(args, MOCKS_USAGE)
    if words not in ([], ["clear"]):
        raise MagicError(f"usage: {MOCKS_USAGE}", at_name=True)
    mocks = session.runtime.mocks
    if words:
        dropped = mocks.discard()
        run.out(f"dropped {len(dropped)} queued mock(s)" if dropped else "no mocks queued")
        return
    pending = mocks.pending_by_origin()
    lines = [f"{line}  // queued by {origin}" if origin else line for line, origin in pending]
    run.out("\n".join(lines) if lines else "no mocks queued")


def diagram_magic(session, run, args: str, body) -> None:
    """%diagram Cell [machine] [instance-id]: the machine with live instance counts and a path."""
    words = split_args(args, "%diagram Cell [machine] [instance-id]")
    if not 1 <= len(words) <= 3:
        raise MagicError("usage: %diagram Cell [machine] [instance-id]", at_name=True)
    name, rest = words[0], words[1:]
    state = _cell_state(session, name)
    machine_names = {m.name for m in state.decl.machines}
    instances = instances_of(state)
    if len(rest) == 1 and rest[0] not in machine_names and _instance_key(instances, rest[0]) not in instances:
        raise MagicError(f"{name} has no machine or instance {rest[0]} (machines: {', '.join(sorted(machine_names))}; "
                         f"instances: {_listed(instances)}){_did_you_mean(rest[0], [*machine_names, *instances])}", rest[0])
    machine = rest.pop(0) if rest and (len(rest) == 2 or rest[0] in machine_names) else None
    model = _model(session, name, machine)
    counts: dict[str, int] = {}
    for current in instances.values():
        counts[current] = counts.get(current, 0) + 1
    highlight = None
    if rest:
        instance = _instance_key(instances, rest[0])
        if instance not in instances:
            raise MagicError(f"{name} has no instance {rest[0]} (instances: {_listed(instances)}; an id only "
                             f"becomes one when it first transitions){_did_you_mean(rest[0], instances)}", rest[0])
        highlight = list(history_of(state, instance)) or [instances[instance]]
    run.show(diagram_bundle(model, counts, highlight))


def _listed(instances: dict) -> str:
    """The instance ids, comma-separated, or `none yet`."""
    return ", ".join(sorted(instances)) or "none yet"


MAGICS = (
    Magic("state", "%state Cell [instance-id]", "machine instances and their states (or one instance's history)",
          state_magic),
    Magic("memory", "%memory [Cell]", "a cell's memory slots and their values (alone: what the bound store holds)",
          memory_magic),
    Magic("mocks", MOCKS_USAGE, "the scripted answers not consumed yet, and who queued them; clear: drop them",
          mocks_magic),
    Magic("diagram", "%diagram Cell [machine] [instance-id]",
          "draw a state machine with live instance counts (and one instance's path)", diagram_magic),
)
