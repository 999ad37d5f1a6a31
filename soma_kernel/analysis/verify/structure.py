"""The graph checks of one machine (spec §12.2 items 1–7), in order:
size, reachability, terminal states, deadlocks, liveness, guarded edges,
wildcards.

Reactive machines (no terminal state) [infer: no seed has one]: the terminal
line passes when every reachable state can return to the initial state, and
the liveness line then says so; otherwise both warn.
"""

from __future__ import annotations

from .graph import Graph, cyclic_states, reachable, shortest_cycle_through
from .report import FAIL, INFO, PASS, WARN, CheckLine


def structure_lines(graph: Graph) -> list[CheckLine]:
    """Check lines 1–7 for one machine."""
    model = graph.model
    seen = graph.reachable_from_initial()
    terminals = model.terminal_states
    lines = [CheckLine(PASS, f"{len(model.states)} states, {len(model.edges)} transitions", kind="size")]
    lines.append(_reachability(graph, seen))
    reactive_ok = not terminals and _can_always_return(graph, seen)
    lines.append(_terminals(model, terminals, reactive_ok))
    lines.append(_deadlocks(graph, seen))
    lines.append(_liveness(graph, seen, terminals, reactive_ok))
    lines.extend(_guarded(model))
    lines.extend(_wildcards(model))
    return lines


def _can_always_return(graph: Graph, seen: list[bool]) -> bool:
    """Every reachable state can get back to the initial state (what makes a
    machine without terminal states reactive; only asked of such machines)."""
    returns = reachable(graph, [graph.initial], backward=True)
    return all(returns[i] for i in range(len(graph)) if seen[i])


def _reachability(graph: Graph, seen: list[bool]) -> CheckLine:
    if all(seen):
        return CheckLine(PASS, f"all states reachable from '{graph.model.initial}'", kind="reachability")
    unreachable = [graph.states[i] for i in range(len(graph)) if not seen[i]]
    return CheckLine(FAIL, f"unreachable states: [{', '.join(unreachable)}]", kind="reachability")


def _terminals(model, terminals: list[str], reactive_ok: bool) -> CheckLine:
    if terminals:
        return CheckLine(PASS, f"terminal states: [{', '.join(terminals)}]", kind="terminals")
    if reactive_ok:
        return CheckLine(PASS, f"no terminal states — reactive machine: every reachable state can return to "
                               f"'{model.initial}'", kind="terminals")
    return CheckLine(WARN, "no terminal states — all states have outgoing transitions (possible infinite loop)",
                     kind="terminals")


def _deadlocks(graph: Graph, seen: list[bool]) -> CheckLine:
    """A reachable state with no way out that is not final (none by construction)."""
    stuck = [graph.states[i] for i, targets in enumerate(graph.succ)
             if not targets and seen[i] and not graph.is_terminal(i)]
    if not stuck:
        return CheckLine(PASS, "no deadlocks", kind="deadlocks")
    return CheckLine(FAIL, f"deadlock states: [{', '.join(stuck)}] — stuck with no transitions", kind="deadlocks")


def _liveness(graph: Graph, seen: list[bool], terminals: list[str], reactive_ok: bool) -> CheckLine:
    if not terminals:
        if reactive_ok:
            return CheckLine(PASS, "liveness: reactive machine — every reachable state can return to "
                                   f"'{graph.model.initial}'", kind="liveness")
        return CheckLine(WARN, "liveness: machine has no terminal states (reactive/cyclic system) — "
                               "liveness-to-terminal not applicable", kind="liveness")
    can_finish = reachable(graph, [graph.index[t] for t in terminals], backward=True)
    stuck = [i for i in range(len(graph)) if seen[i] and not can_finish[i]]
    if not stuck:
        return CheckLine(PASS, "liveness: every state can eventually reach a terminal state", kind="liveness")
    trapped = [not can_finish[i] for i in range(len(graph))]
    cycle_start = _first_cycle_member(graph, stuck, trapped)
    trace = graph.names(shortest_cycle_through(graph, cycle_start, trapped)) if cycle_start is not None else None
    return CheckLine(FAIL, f"liveness violation: states [{', '.join(graph.names(stuck))}] cannot reach any "
                           "terminal state", trace=trace, kind="liveness")


def _first_cycle_member(graph: Graph, stuck: list[int], trapped: list[bool]):
    """A stuck state lying on a cycle of stuck states (every stuck region has one)."""
    on_cycle = cyclic_states(graph, trapped)
    return next((i for i in stuck if on_cycle[i]), None)


def _guarded(model) -> list[CheckLine]:
    guarded = [line for line in model.declared_edges if line.guard is not None]
    if not guarded:
        return []
    listed = ", ".join(f"{line.src} -> {line.dst}" for line in guarded)
    return [CheckLine(INFO, "guarded edges kept in the model (liveness and `eventually` above assume they can "
                            f"pass): {listed}", kind="guards")]


def _wildcards(model) -> list[CheckLine]:
    wildcards = model.wildcard_lines
    if not wildcards:
        return []
    targets = list(dict.fromkeys(line.dst for line in wildcards))
    lines = [CheckLine(PASS, f"wildcard transitions: * -> [{', '.join(targets)}]", kind="wildcards")]
    explicit_sources = {line.src for line in model.declared_edges if line.src != "*"}
    wildcard_targets = set(targets)
    for line in wildcards:
        if line.excepts:
            continue
        unfinal = sorted(s for s in model.states
                         if s not in explicit_sources and s not in wildcard_targets and s != line.dst)
        if unfinal:
            lines.append(_unterminated_warning(line.dst, unfinal))
    return lines


def _unterminated_warning(target: str, states: list[str]) -> CheckLine:
    """`* -> t` without except turns final states into non-final ones."""
    edges = ", ".join(f"{s} -> {target}" for s in states)
    names = ", ".join(states)
    verb, pronoun = ("is", "it") if len(states) == 1 else ("are", "they")
    return CheckLine(WARN, f"`* -> {target}` also adds {edges} — so {names} {verb} not final. If {pronoun} should "
                           f"stay final, write `* -> {target} except [{names}]`", kind="wildcards")
