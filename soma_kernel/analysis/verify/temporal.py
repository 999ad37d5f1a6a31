"""Temporal properties of soma.toml `[verify]`, checked on the expanded graph.

Guards are ignored (every edge is kept), which over-approximates the runs:
a safety property proven here holds for the real program. Every failure
comes with a counter-example that is as short as possible:
- safety (`never`, `always`, `after … never`, `before … requires`): the
  shortest path from the initial state (BFS with parent pointers);
- liveness (`eventually`, `after … eventually`): a lasso — the shortest
  prefix into a run that avoids the target set forever, either ending in a
  terminal state or looping back (`loop_start` marks where the loop begins).
  By default runs are fair: a loop with an exit towards the target is
  eventually left (a retry loop beside a cancel edge does not refute
  `eventually`), so only the states that can no longer reach the target trap
  a run. A pass that rests on this assumption says so on its line, naming
  the loop. Read without fairness (`--unfair`, `%verify --unfair`, soma.toml
  `[verify] fair = false`) any loop outside the target is a counter-example.

Property count rule (`soma.toml: K user-defined properties loaded`): one per
printed property line. `eventually`, `always`, `after.X.eventually`,
`before.T.requires` and `before.T.requires_all` are one property each;
`never` and `after.X.never` are one property per state. The seed's manifest
(eventually 2 states, before.requires 1, after.rejected.never 3,
after.paid.never 1) gives 6 under this rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...project.settings import VerifySettings
from .graph import Graph, find_fair_lasso, find_lasso, shortest_path


@dataclass(frozen=True)
class Property:
    """One user-defined property: kind, the states it names, and its anchor
    state (X of `after.X`, T of `before.T`) when it has one."""

    kind: str
    states: tuple[str, ...]
    anchor: Optional[str] = None

    def title(self) -> str:
        """The property as printed before the dash."""
        listed = ", ".join(self.states)
        if self.kind == "eventually":
            return f"eventually(state in [{listed}])"
        if self.kind == "never":
            return f"never(state == '{self.states[0]}')"
        if self.kind == "always":
            return f"always(state in [{listed}])"
        if self.kind == "after_never":
            return f"after('{self.anchor}', never state == '{self.states[0]}')"
        if self.kind == "after_eventually":
            return f"after('{self.anchor}', eventually state in [{listed}])"
        if self.kind == "before_requires":
            return f"before('{self.anchor}', requires one of [{listed}])"
        return f"before('{self.anchor}', requires all of [{listed}])"

    def named_states(self) -> list[str]:
        """Every state the property names (anchor first)."""
        return ([self.anchor] if self.anchor else []) + list(self.states)


@dataclass
class TemporalResult:
    """The outcome of one property on one machine.

    `counter_example` lists state names (start first). For a lasso the last
    state repeats `counter_example[loop_start]`.
    """

    property: str
    passed: bool
    message: str
    counter_example: Optional[list[str]] = None
    loop_start: Optional[int] = None
    steps: list = field(default_factory=list)


def user_properties(settings: Optional[VerifySettings]) -> list[Property]:
    """The user-defined properties of `[verify]`, in printing order."""
    if settings is None:
        return []
    props: list[Property] = []
    if settings.eventually:
        props.append(Property("eventually", tuple(settings.eventually)))
    props.extend(Property("never", (s,)) for s in settings.never)
    if settings.always:
        props.append(Property("always", tuple(settings.always)))
    for anchor, table in settings.after.items():
        if "eventually" in table:
            props.append(Property("after_eventually", tuple(table["eventually"]), anchor))
        props.extend(Property("after_never", (s,), anchor) for s in table.get("never", []))
    for anchor, table in settings.before.items():
        if "requires" in table:
            props.append(Property("before_requires", tuple(table["requires"]), anchor))
        if "requires_all" in table:
            props.append(Property("before_requires_all", tuple(table["requires_all"]), anchor))
    return props


def deadlock_free(graph: Graph, seen: list[bool]) -> TemporalResult:
    """No reachable state is stuck: every reachable state either moves on or is final.

    By the model's definitions a state with no outgoing edge is final, so a
    deadlock is a reachable state with only a self-loop that is not final —
    which cannot happen; the property still runs to state it explicitly.
    """
    stuck = [i for i, targets in enumerate(graph.succ) if not targets and seen[i] and not graph.is_terminal(i)]
    if not stuck:
        return TemporalResult("deadlock_free", True, "no deadlocks in any reachable state")
    path = shortest_path(graph, graph.initial, graph.mask(graph.names(stuck)))
    return TemporalResult("deadlock_free", False, f"deadlock states: [{', '.join(graph.names(stuck))}]",
                          graph.names(path or []))


def check_property(graph: Graph, prop: Property, seen: list[bool], fair: bool = True) -> TemporalResult:
    """Check one property on one machine that has every state it names (`seen` =
    states reachable from initial; `fair` false reads liveness without the
    fairness assumption)."""
    if prop.kind in LIVENESS:
        return LIVENESS[prop.kind](graph, prop, seen, fair)
    return _CHECKERS[prop.kind](graph, prop, seen)


def _never(graph: Graph, prop: Property, seen: list[bool]) -> TemporalResult:
    target = graph.index[prop.states[0]]
    if not seen[target]:
        return TemporalResult(prop.title(), True, "never reached in any execution")
    path = shortest_path(graph, graph.initial, graph.mask(prop.states))
    return TemporalResult(prop.title(), False, f"violated: state '{prop.states[0]}' is reachable",
                          graph.names(path))


def _always(graph: Graph, prop: Property, seen: list[bool]) -> TemporalResult:
    inside = graph.mask(prop.states)
    outside = [seen[i] and not inside[i] for i in range(len(graph))]
    count = sum(seen)
    if not any(outside):
        return TemporalResult(prop.title(), True, f"holds in all {count} reachable states")
    path = shortest_path(graph, graph.initial, outside)
    return TemporalResult(prop.title(), False, f"violated: state '{graph.states[path[-1]]}' is reachable",
                          graph.names(path))


def _eventually(graph: Graph, prop: Property, seen: list[bool], fair: bool) -> TemporalResult:
    return _liveness(graph, prop, graph.initial, [], "all paths eventually satisfy the predicate",
                     "exists a path that never satisfies the predicate", fair)


def _after_eventually(graph: Graph, prop: Property, seen: list[bool], fair: bool) -> TemporalResult:
    anchor = graph.index[prop.anchor]
    if not seen[anchor]:
        return TemporalResult(prop.title(), True, f"state '{prop.anchor}' is unreachable (vacuously true)")
    prefix = shortest_path(graph, graph.initial, graph.mask([prop.anchor]))
    return _liveness(graph, prop, anchor, prefix[:-1], f"after '{prop.anchor}', all paths eventually satisfy the "
                     "predicate", f"after reaching '{prop.anchor}', a path never satisfies the predicate", fair)


def _liveness(graph: Graph, prop: Property, start: int, prefix: list[int], holds: str, fails: str,
              fair: bool) -> TemporalResult:
    """Every run from `start` reaches the property's states: under fairness, or, with
    `fair` false, even a run that stays in a loop with an exit. A fair pass that an
    unfair run refutes names the assumption and the loop it rests on."""
    target = graph.mask(prop.states)
    fair_lasso = find_fair_lasso(graph, start, target)
    if fair_lasso is not None:
        return _lasso_result(graph, prop, fair_lasso, prefix, fails)
    unfair_lasso = find_lasso(graph, start, [not flag for flag in target])
    if unfair_lasso is None:
        return TemporalResult(prop.title(), True, holds)
    loop = " -> ".join(graph.names(unfair_lasso.path[unfair_lasso.loop_start:]))
    if fair:
        return TemporalResult(prop.title(), True, f"{holds} (assuming fairness: a run looping {loop} takes the "
                                                  "loop's exit; --unfair reports it)")
    return _lasso_result(graph, prop, unfair_lasso, prefix,
                         f"{fails} (without fairness: it may loop {loop} forever, never taking the exit)")


def _after_never(graph: Graph, prop: Property, seen: list[bool]) -> TemporalResult:
    anchor = graph.index[prop.anchor]
    if not seen[anchor]:
        return TemporalResult(prop.title(), True, f"state '{prop.anchor}' is unreachable (vacuously true)")
    target = prop.states[0]
    tail = _path_after(graph, anchor, graph.mask([target]))
    if tail is None:
        return TemporalResult(prop.title(), True, f"'{target}' is never reached after '{prop.anchor}'")
    prefix = shortest_path(graph, graph.initial, graph.mask([prop.anchor]))
    path = prefix[:-1] + tail
    return TemporalResult(prop.title(), False, f"violated: '{target}' is reachable after '{prop.anchor}'",
                          graph.names(path))


def _path_after(graph: Graph, anchor: int, goal: list[bool]) -> Optional[list[int]]:
    """The shortest path of at least one step from `anchor` to a goal state."""
    best: Optional[list[int]] = None
    for first in graph.succ[anchor]:
        rest = shortest_path(graph, first, goal)
        if rest is not None and (best is None or len(rest) + 1 < len(best)):
            best = [anchor] + rest
    return best


def _before_requires(graph: Graph, prop: Property, seen: list[bool]) -> TemporalResult:
    target = graph.index[prop.anchor]
    listed = ", ".join(prop.states)
    if not seen[target]:
        return TemporalResult(prop.title(), True, f"state '{prop.anchor}' is unreachable (vacuously true)")
    if prop.kind == "before_requires":
        bypass = _bypass_path(graph, target, prop.states)
        if bypass is None:
            return TemporalResult(prop.title(), True, f"every path to '{prop.anchor}' passes through one of [{listed}]")
        return TemporalResult(prop.title(), False,
                              f"violated: a path reaches '{prop.anchor}' without passing through any of [{listed}]",
                              graph.names(bypass))
    for required in prop.states:
        bypass = _bypass_path(graph, target, (required,))
        if bypass is not None:
            return TemporalResult(prop.title(), False,
                                  f"violated: a path reaches '{prop.anchor}' without passing through '{required}'",
                                  graph.names(bypass))
    return TemporalResult(prop.title(), True, f"every path to '{prop.anchor}' passes through all of [{listed}]")


def _bypass_path(graph: Graph, target: int, required: tuple[str, ...]) -> Optional[list[int]]:
    """The shortest path from initial to `target` avoiding every required state."""
    allowed = _complement(graph, required)
    goal = [False] * len(graph)
    goal[target] = True
    if not allowed[graph.initial]:
        return None
    return shortest_path(graph, graph.initial, goal, allowed)


def _complement(graph: Graph, names) -> list[bool]:
    """A mask of every state not named."""
    inside = graph.mask(names)
    return [not flag for flag in inside]


def _lasso_result(graph: Graph, prop: Property, lasso, prefix: list[int], message: str) -> TemporalResult:
    """A failed liveness result from a lasso, with an optional prefix leading to its start."""
    path = prefix + lasso.path
    loop_start = None if lasso.loop_start is None else lasso.loop_start + len(prefix)
    return TemporalResult(prop.title(), False, message, graph.names(path), loop_start)


LIVENESS = {"eventually": _eventually, "after_eventually": _after_eventually}

_CHECKERS = {
    "never": _never,
    "always": _always,
    "after_never": _after_never,
    "before_requires": _before_requires,
    "before_requires_all": _before_requires,
}


def check_machine(graph: Graph, props: list[Property], fair: bool = True) -> list[TemporalResult]:
    """deadlock_free, then every user property (each naming only states of this machine)."""
    seen = graph.reachable_from_initial()
    results = [deadlock_free(graph, seen)]
    results.extend(check_property(graph, prop, seen, fair) for prop in props)
    return results
