"""State-machine instances at run time: `transition`, `get_status` and friends.

Each cell with a `state` section owns a `MachineInstances`: instance id →
current state (an id never moved is in the initial state) and the path each
instance took. Edges come from the one shared model (syntax.machines), so the
runtime refuses exactly the moves that verify reasons about.
"""

from __future__ import annotations

from ..core.diagnostics import SomaError
from ..syntax import ast
from ..syntax.machines import MachineModel
from ..syntax.render import render_expr
from .memory import Journal
from .values import display


class MachineInstances:
    """The live instances of one cell's machine."""

    def __init__(self, model: MachineModel, journal: Journal):
        self.model = model
        self.journal = journal
        self.current: dict[object, str] = {}
        self.history: dict[object, list[str]] = {}
        self.on_move = None  # (instance key): a bound store's watcher

    def status(self, instance_id) -> str:
        """The instance's state (the initial state when it never moved)."""
        return self.current.get(instance_key(instance_id), self.model.initial)

    def has_state(self, instance_id) -> bool:
        """True once the instance has transitioned."""
        return instance_key(instance_id) in self.current

    def valid_targets(self, instance_id) -> list[str]:
        """States the instance may move to next."""
        return list(self.model.targets(self.status(instance_id)))

    def move(self, instance_id, source: str, target: str) -> None:
        """Record the move (journaled) after every check has passed."""
        key = instance_key(instance_id)
        current, history = self.current, self.history
        had_state = key in current
        old_state = current.get(key)
        path = history.setdefault(key, [source])
        path.append(target)

        def undo():
            path.pop()
            if len(path) <= 1:
                history.pop(key, None)
            if had_state:
                current[key] = old_state
            else:
                current.pop(key, None)

        self.journal.record(undo)
        current[key] = target
        if self.on_move is not None:
            self.on_move(key)

    def counts(self) -> dict[str, int]:
        """How many live instances sit in each state."""
        result: dict[str, int] = {}
        for state in self.current.values():
            result[state] = result.get(state, 0) + 1
        return result


def instance_key(instance_id):
    """Instances are keyed by id text (String or Int ids; `()` refused)."""
    if instance_id is None:
        raise SomaError("type", "a state-machine instance id cannot be ()")
    if isinstance(instance_id, bool) or not isinstance(instance_id, (str, int)):
        return display(instance_id)
    return instance_id


class Transitions:
    """Implements `transition(id, [from,] to)` with guards and invariants."""

    def __init__(self, runtime):
        self.rt = runtime

    def transition(self, cell, args: list, locals_view: dict, node: ast.Call):
        """Move an instance along a declared edge, or raise (the registry checked how many arguments)."""
        owner = self.rt.machine_owner(cell, node)
        machines = owner.machines
        instance_id, target = args[0], state_name(args[-1])
        current = machines.status(instance_id)
        if len(args) == 3:
            source = state_name(args[1])
            if current != source:
                raise SomaError(
                    "invalid_transition", f"{current} → {target}",
                    node.span,
                    text=(f"invalid transition: {current} → {target} — transition(id, \"{source}\", "
                          f"\"{target}\") declares its source, and '{display(instance_id)}' is in "
                          f"'{current}', not '{source}'"))
        edge = machines.model.edge(current, target)
        if edge is None:
            valid = ", ".join(machines.model.targets(current))
            raise SomaError("invalid_transition", f"{current} → {target}", node.span,
                            text=f"invalid transition: {current} → {target}. Valid targets: [{valid}]")
        if edge.guard is not None:
            self.check_guard(owner, edge, instance_id, current, target, locals_view, node)
        self.rt.check_status_invariants(owner, instance_id, target, node)
        machines.move(instance_id, current, target)
        self.rt.trace_event("Transition", {"id": instance_id, "from": current, "to": target})
        return {"id": instance_id, "from": current, "to": target}

    def check_guard(self, owner, edge, instance_id, current, target, locals_view, node) -> None:
        """Evaluate the edge's guard in the caller's locals; refuse when false."""
        bindings = dict(locals_view)
        bindings.update({"_id": instance_id, "_from": current, "_to": target})
        ok = self.rt.evaluate_in(owner, edge.guard, bindings)
        if ok is not True:
            text = render_expr(edge.guard)
            raise SomaError("guard_failed", f"{current} → {target} requires {text}", node.span,
                            text=f"guard failed: {current} → {target} requires {text}")


def state_name(value) -> str:
    """A transition target given as a string or a variant (typed machines)."""
    name = getattr(value, "name", None)
    if name is not None and not isinstance(value, (str, dict)):
        return name
    if isinstance(value, str):
        return value
    return display(value)

