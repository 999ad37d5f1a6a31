"""Refinement: do the handler bodies stay inside the declared machine?

For one cell with a machine, every body (handlers in declaration order, then
`every`/`after` blocks) is scanned for transition() calls. Lines:
- think-isolation (only when the cell calls think) — spec §12.2 item 8;
- per handler: ✗ for an undeclared literal target or 3-argument edge, ⚠ for
  a computed target, ✓ with the handler's targets and their paths;
- ⚠ for each declared edge that no handler can take;
- the `· transition sources` note for handlers using the 2-argument form.

`EdgeTakers` tells, for an expanded edge, which handlers can take it (a
2-argument call whose target is the edge's destination, or a 3-argument call
naming the edge): the labelled traces of counter-examples use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...syntax import ast
from ...syntax.machines import MachineModel
from ..describe import counted
from .report import FAIL, INFO, PASS, WARN, CheckLine
from .sites import THINK_BUILTINS, TransitionSite, call_sites, transition_sites


@dataclass
class Body:
    """A handler or scheduled block: a name for messages and its body."""

    name: str
    node: ast.Node
    body: ast.Block
    params: list[ast.Param] = field(default_factory=list)


@dataclass
class CellBodies:
    """Every body of a cell with its transition sites, computed once."""

    bodies: list[Body]
    transitions: dict[str, list[TransitionSite]]

    def movers(self) -> list[Body]:
        """Bodies with at least one transition() call."""
        return [b for b in self.bodies if self.transitions[b.name]]


def cell_bodies(handlers: list[ast.Handler], scheduled: list[ast.Scheduled], typed: bool = False) -> CellBodies:
    """Collect the bodies of a cell (handlers first, then scheduled blocks);
    `typed` when its machine's states are the variants of a sum type."""
    bodies = [Body(h.name, h, h.body, list(h.params)) for h in handlers]
    for block in scheduled:
        bodies.append(Body(f"{block.kind}@{block.interval_ms}ms", block, block.body))
    return CellBodies(bodies, {b.name: transition_sites(b.body, typed) for b in bodies})


class EdgeTakers:
    """For each expanded edge, the handlers whose transition() calls can take it.

    Worked out per edge when asked: only the edges of a trace are ever
    looked up, and a machine may have 100 000 edges. With `with_dynamic`, a
    handler with a computed target is listed as `h?` on every edge it does
    not take literally (it may take any of them).
    """

    def __init__(self, model: MachineModel, cell: CellBodies, with_dynamic: bool = False):
        self.model = model
        self.moves = LiteralMoves(cell)
        self.guessers = [b.name for b in cell.bodies if any(not s.literal for s in cell.transitions[b.name])] \
            if with_dynamic else []

    def get(self, edge: tuple[str, str]) -> list[str]:
        """The handlers that can take `edge` (src, dst); [] when the machine has no such edge."""
        if not self.model.has_edge(*edge):
            return []
        names = self.moves.takers(*edge)
        names.extend(f"{g}?" for g in self.guessers if g not in names)
        return names


class LiteralMoves:
    """The handlers of each literal transition() target (`by_target`) and of each
    literal (source, target) pair (`by_edge`): who can take an edge by name."""

    def __init__(self, cell: CellBodies):
        self.by_target: dict[str, list[str]] = {}
        self.by_edge: dict[tuple[str, str], list[str]] = {}
        for body in cell.bodies:
            for site in cell.transitions[body.name]:
                if not site.literal:
                    continue
                if site.source is None:
                    _add_once(self.by_target.setdefault(site.target, []), body.name)
                else:
                    _add_once(self.by_edge.setdefault((site.source, site.target), []), body.name)

    def takes(self, src: str, dst: str) -> bool:
        """True when some handler's literal transition() can take `src -> dst`."""
        return dst in self.by_target or (src, dst) in self.by_edge

    def takers(self, src: str, dst: str) -> list[str]:
        """The handlers whose literal transition() can take `src -> dst`, each once, in order."""
        names = list(self.by_target.get(dst, ()))
        for name in self.by_edge.get((src, dst), ()):
            _add_once(names, name)
        return names


def _add_once(names: list[str], name: str) -> None:
    if name not in names:
        names.append(name)


def isolation_lines(cell: CellBodies) -> list[CheckLine]:
    """The think-isolation line, for cells whose bodies call think()."""
    if not any(call_sites(b.body, THINK_BUILTINS) for b in cell.bodies):
        return []
    movers = cell.movers()
    literal = sum(1 for b in movers for s in cell.transitions[b.name] if s.literal)
    dynamic = [b.name for b in movers if any(not s.literal for s in cell.transitions[b.name])]
    if not dynamic:
        return [CheckLine(PASS, "think-isolated: CTL safety properties hold regardless of LLM output "
                                f"({counted(len(movers), 'handler')}, {counted(literal, 'literal transition')}, 0 dynamic)",
                          kind="isolation")]
    reasons = "; ".join(f"handler `{name}` computes its transition() target" for name in dynamic)
    return [CheckLine(WARN, f"dynamic transition targets: {reasons} — the state these handlers move to is computed "
                            "at run time (from input or an LLM answer), so the machine's safety is checked at run "
                            "time for them, not proven", kind="isolation")]


def refinement_lines(model: MachineModel, cell: CellBodies) -> list[CheckLine]:
    """Per-handler refinement lines, then edges no handler reaches."""
    movers = cell.movers()
    dynamic = any(not s.literal for b in movers for s in cell.transitions[b.name])
    label = "refinement (partial — dynamic targets fall back to runtime check)" if dynamic else "refinement"
    lines: list[CheckLine] = []
    for body in movers:
        lines.extend(_handler_lines(model, body.name, cell.transitions[body.name], label))
    lines.extend(_dead_edges(model, cell, label))
    return lines


def _handler_lines(model: MachineModel, handler: str, sites: list[TransitionSite], label: str) -> list[CheckLine]:
    lines = []
    for site in sites:
        problem = _undeclared(model, site)
        if problem:
            path = f"  [{' ∧ '.join(site.site.path)}]" if site.site.path else ""
            lines.append(CheckLine(FAIL, f"{label}: handler `{handler}` {problem}{path}", kind="refinement"))
    if any(not s.literal for s in sites):
        lines.append(CheckLine(WARN, f"{label}: handler `{handler}` calls transition() with a computed target — "
                                     "which edge it takes is checked at run time (invalid_transition), not proven; "
                                     "write the target as a literal state to have it verified", kind="refinement"))
    listed = [_target_text(s) for s in sites if s.literal]
    summary = f"{{{', '.join(listed)}}}" if listed else ""
    if any(not s.literal for s in sites):
        summary = f"{summary} + <dynamic>" if summary else "<dynamic>"
    lines.append(CheckLine(PASS, f"{label}: handler `{handler}` ⟶ {summary}", kind="refinement"))
    return lines


def _target_text(site: TransitionSite) -> str:
    """`target` or `from → to`, with ` [path]` when the call is conditional."""
    text = site.label()
    if site.site.path:
        text += f" [{' ∧ '.join(site.site.path)}]"
    return text


def _undeclared(model: MachineModel, site: TransitionSite) -> str:
    """Why a literal call leaves the machine, or "" when it stays inside."""
    if not site.literal:
        return ""
    if site.source is None:
        if not model.has_state(site.target):
            return f'calls transition(_, "{site.target}") but "{site.target}" is not in state machine `{model.name}`'
        return ""
    for state in (site.source, site.target):
        if not model.has_state(state):
            return (f'calls transition(_, "{site.source}", "{site.target}") but "{state}" is not in state machine '
                    f"`{model.name}`")
    if not model.has_edge(site.source, site.target):
        return (f'calls transition(_, "{site.source}", "{site.target}") but `{site.source} → {site.target}` is not '
                f"a transition of state machine `{model.name}`")
    return ""


def _dead_edges(model: MachineModel, cell: CellBodies, label: str) -> list[CheckLine]:
    """Declared lines that no handler's transition() can take.

    A plain line is its one expanded edge, so it is judged on its own names;
    only a `* -> t` line needs its expanded edges (it may have none).
    """
    moves = LiteralMoves(cell)
    wildcard_taken, wildcard_expanded = _wildcard_use(model, moves)
    lines = []
    for declared in model.declared_edges:
        if declared.src == "*":
            if id(declared) not in wildcard_expanded or id(declared) in wildcard_taken:
                continue
        elif moves.takes(declared.src, declared.dst):
            continue
        lines.append(CheckLine(WARN, f"{label}: declared transition `{declared.src} → {declared.dst}` is never "
                                     "reached by any handler — spec may be aspirational or stale", kind="refinement"))
    return lines


def _wildcard_use(model: MachineModel, moves: LiteralMoves) -> tuple[set[int], set[int]]:
    """The ids of the `* -> t` lines some handler can take, and of those that expand to any edge."""
    taken: set[int] = set()
    expanded: set[int] = set()
    if not model.wildcard_lines:
        return taken, expanded
    for edge in model.edges:
        if edge.wildcard:
            expanded.add(id(edge.declared))
            if moves.takes(edge.src, edge.dst):
                taken.add(id(edge.declared))
    return taken, expanded


def sources_note(cell: CellBodies) -> list[CheckLine]:
    """The `· transition sources` note naming the handlers using transition(id, target)."""
    names = [b.name for b in cell.bodies if any(s.source is None for s in cell.transitions[b.name])]
    if not names:
        return []
    listed = ", ".join(f"`{n}`" for n in names)
    verb = "calls" if len(names) == 1 else "call"
    return [CheckLine(INFO, f"transition sources: {listed} {verb} transition(id, target) without declaring the source "
                            "— the runtime refuses a move the graph forbids, but the proof does not see where the "
                            "handler starts; `transition(id, from, to)` names the edge (checked by `soma check`, "
                            "refused at run time from any other state)", kind="sources")]
