"""The one state-machine model.

Built once from a cell's `state` section, it feeds everything that looks at a
machine: the runtime (which edges exist), verify (graph checks, temporal
properties), describe, the session's diagrams (DOT, mermaid, text) and the
counter-example highlight of the verify report's drawings.

States are kept in order of first appearance (the initial state first, then
edge lines top to bottom, source before target). Wildcard edges are expanded:
`* -> t except [a]` becomes one edge from every declared state other than `t`
and `a`. `declared_edges` keeps the lines as written (describe counts those).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, compress
from operator import attrgetter
from typing import Optional

from . import ast

_ENDS = attrgetter("src", "dst")  # (src, dst) of an edge, model or declared
_TARGET = attrgetter("dst")


@dataclass(slots=True)
class ModelEdge:
    """One edge of the expanded graph, read-only by convention.

    `declared` is the ast.Edge it came from; `wildcard` tells whether it was
    produced by a `* -> t` line. Not a frozen dataclass: building one was
    then six times dearer, and a machine may have 100 000 edges.
    """

    src: str
    dst: str
    declared: ast.Edge
    wildcard: bool = False

    @property
    def guard(self) -> Optional[ast.Expr]:
        """The guard expression of the declaring line, if any."""
        return self.declared.guard


@dataclass
class MachineModel:
    """A state machine as a graph: states, expanded edges, adjacency, terminals."""

    name: str
    cell: str
    initial: str
    states: list[str]
    edges: list[ModelEdge]
    declared_edges: list[ast.Edge]
    node: Optional[ast.StateMachine] = None
    successors: dict[str, list[str]] = field(default_factory=dict)
    edge_index: dict[tuple[str, str], ModelEdge] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.successors = successors = {s: [] for s in self.states}
        keys = list(map(_ENDS, self.edges))
        self.edge_index = dict(zip(keys, self.edges))
        if len(self.edge_index) < len(keys):  # a repeated line: keep the first edge of each (src, dst)
            self.edge_index = {}
            for key, edge in zip(keys, self.edges):
                self.edge_index.setdefault(key, edge)
        for src, dst in self.edge_index:  # each (src, dst) once, in order of first appearance
            successors[src].append(dst)

    def has_edge(self, src: str, dst: str) -> bool:
        """True when the expanded graph holds `src -> dst`."""
        return (src, dst) in self.edge_index

    def edge(self, src: str, dst: str) -> Optional[ModelEdge]:
        """The expanded edge `src -> dst`, or None."""
        return self.edge_index.get((src, dst))

    def has_state(self, name: str) -> bool:
        """True when `name` is a declared state (a dict lookup, not a scan of `states`)."""
        return name in self.successors

    def entering(self, dst: str) -> list[ModelEdge]:
        """Every expanded edge into `dst`, in order (repeated lines included)."""
        return list(compress(self.edges, map(dst.__eq__, map(_TARGET, self.edges))))  # one C pass

    def targets(self, src: str) -> list[str]:
        """States reachable in one step from `src`, in declaration order."""
        return self.successors.get(src, [])

    @property
    def terminal_states(self) -> list[str]:
        """States with no outgoing edge to another state, in declaration order.

        A self-loop does not make a state non-terminal.
        """
        successors = self.successors  # no target twice (see __post_init__): all-self is [] or [s]
        return [s for s in self.states if not successors[s] or successors[s] == [s]]

    @property
    def wildcard_lines(self) -> list[ast.Edge]:
        """The `* -> t` lines as declared."""
        return [e for e in self.declared_edges if e.src == "*"]


def build_model(cell_name: str, machine: ast.StateMachine) -> MachineModel:
    """Expand a parsed `state` section into its graph model."""
    states = _states_in_order(machine)
    if not any(line.src == "*" for line in machine.edges):
        edges = [ModelEdge(line.src, line.dst, line) for line in machine.edges]
    else:
        edges = []
        for line in machine.edges:
            if line.src == "*":
                excluded = set(line.excepts) | {line.dst}
                edges.extend(ModelEdge(s, line.dst, line, True) for s in states if s not in excluded)
            else:
                edges.append(ModelEdge(line.src, line.dst, line))
    initial = machine.initial or (states[0] if states else "")
    return MachineModel(machine.name, cell_name, initial, states, edges, list(machine.edges), machine)


def _states_in_order(machine: ast.StateMachine) -> list[str]:
    """Declared states: initial first, then each edge's source and target."""
    names = [machine.initial] if machine.initial else []
    names.extend(chain.from_iterable(map(_ENDS, machine.edges)))
    seen = dict.fromkeys(names)
    seen.pop("*", None)  # a wildcard's source is no state (no state can be called `*`)
    return list(seen)


def models_of(program: ast.Program) -> list[MachineModel]:
    """The model of every cell's machine, in cell order."""
    result = []
    for cell in program.cells:
        if cell.machine is not None:
            result.append(build_model(cell.name, cell.machine))
    return result
