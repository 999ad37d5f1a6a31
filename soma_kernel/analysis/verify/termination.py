"""Structural termination of handlers (spec §12.2 item 9).

Rules:
- `for` loops terminate when they run over a variable, a field, a call
  (`range(…)`, `keys(m)`…), a method call or a list literal — a collection
  computed before the loop starts; any other iterable expression (`a + b`,
  `xs[0]`, a pipe, a string literal) is an unbounded iterator unless the loop
  or handler carries `[loop_bound(N)]`, and a bound smaller than its literal
  list is reported;
- a `while` loop terminates only with a `[loop_bound(N)]` annotation (on the
  loop or on the handler);
- calls between handlers form a graph (by-name calls to a handler of the same
  cell, or to the only cell defining that name, and `Cell.h` calls); a
  handler on a cycle of that graph may not terminate, unless the cycle is a
  direct self-call passing `p - k` (k a positive Int literal) for an Int
  parameter `p` that the body compares with a literal (its base case).

`termination_lines` gives the cell's lines: `✓ termination: all N handlers
structurally terminate` (N counts every handler, private ones included) or
one ⚠ per reason.
"""

from __future__ import annotations

from ...syntax import ast
from ..describe import counted
from ..walk import iter_tree
from .graph import Adjacency, cyclic_states
from .report import PASS, WARN, CheckLine


class CallGraph:
    """Handler-to-handler calls of the whole program, with cycle membership."""

    def __init__(self, cells: dict[str, list[ast.Handler]]):
        self.nodes: list[tuple[str, ast.Handler]] = []
        owners: dict[str, list[int]] = {}
        index: dict[tuple[str, str], int] = {}
        for cell, handlers in cells.items():
            for handler in handlers:
                if (cell, handler.name) in index:
                    continue
                index[(cell, handler.name)] = len(self.nodes)
                owners.setdefault(handler.name, []).append(len(self.nodes))
                self.nodes.append((cell, handler))
        self.succ: list[list[int]] = [[] for _ in self.nodes]
        for i, (cell, handler) in enumerate(self.nodes):
            for call in (n for n in iter_tree(handler.body) if isinstance(n, ast.Call)):
                target = _resolve(call, cell, index, owners)
                if target is not None and target not in self.succ[i]:
                    self.succ[i].append(target)
        self.on_cycle = _cycle_members(self.succ)
        self.index = index


def _resolve(call: ast.Call, cell: str, index: dict, owners: dict):
    """The handler a call reaches: own cell first, then the only owner of the name."""
    if call.cell is not None:
        return index.get((call.cell, call.func))
    if (cell, call.func) in index:
        return index[(cell, call.func)]
    candidates = owners.get(call.func, [])
    return candidates[0] if len(candidates) == 1 else None


def _cycle_members(succ: list[list[int]]) -> list[bool]:
    """Nodes on a cycle of the call graph (self-calls count), via the shared SCC code."""
    return cyclic_states(Adjacency(succ))


def _all(count: int) -> str:
    """`all 3 handlers`, `the 1 handler`."""
    return f"{'the' if count == 1 else 'all'} {counted(count, 'handler')}"


def termination_lines(cell: str, handlers: list[ast.Handler], scheduled: list[ast.Scheduled],
                      calls: CallGraph) -> list[CheckLine]:
    """The termination line(s) of one cell."""
    reasons: list[str] = []
    for handler in handlers:
        reasons.extend(_handler_reasons(cell, handler, calls))
    for block in scheduled:
        reasons.extend(_loop_reasons(f"{block.kind}@{block.interval_ms}ms", block.body, False))
    if not reasons:
        return [CheckLine(PASS, f"termination: {_all(len(handlers))} structurally terminate{'s' if len(handlers) == 1 else ''}",
                          kind="termination")]
    return [CheckLine(WARN, reason, kind="termination") for reason in reasons]


def _handler_reasons(cell: str, handler: ast.Handler, calls: CallGraph) -> list[str]:
    bounded = any(name == "loop_bound" for name, _ in handler.annotations)
    reasons = _loop_reasons(handler.name, handler.body, bounded)
    node = calls.index.get((cell, handler.name))
    if node is not None and calls.on_cycle[node] and not _decreasing_self_call(handler, calls, node):
        reasons.append(f"handler `{handler.name}`: recursive call without provable decreasing argument — "
                       "recursion must pass an Int parameter minus a positive literal and test it against a "
                       "literal base case")
    return reasons


# `for` iterables the reference counts as finite: a variable, a field, a call or
# method call (a collection or `range(…)`), a list literal.
_FINITE_ITERABLES = (ast.Name, ast.Field, ast.Call, ast.MethodCall, ast.ListLit)


def _loop_reasons(name: str, body: ast.Block, bounded: bool) -> list[str]:
    reasons = []
    for node in iter_tree(body):
        if isinstance(node, ast.While) and node.bound is None and not bounded:
            reasons.append(f"handler `{name}`: while-loop without provable termination bound — add "
                           "[loop_bound(N)] or iterate with `for` over a finite collection")
        elif isinstance(node, ast.For):
            reasons.extend(_for_reasons(name, node, bounded))
    return reasons


def _for_reasons(name: str, loop: ast.For, bounded: bool) -> list[str]:
    """A `for` over an expression that is not a collection, or whose bound is
    smaller than its literal list."""
    if loop.bound is not None and isinstance(loop.iterable, ast.ListLit) and len(loop.iterable.items) > loop.bound:
        return [f"handler `{name}`: `for [loop_bound({loop.bound})]` over a literal list of "
                f"{len(loop.iterable.items)} items — the bound is too small (it raises loop_bound at run time)"]
    if loop.bound is None and not bounded and not isinstance(loop.iterable, _FINITE_ITERABLES):
        return [f"handler `{name}`: for-loop with unbounded iterator (write `for [loop_bound(N)] x in xs` "
                "or use range(0, N) with literal N)"]
    return []


def _decreasing_self_call(handler: ast.Handler, calls: CallGraph, node: int) -> bool:
    """True for direct recursion only, on an Int parameter decreasing toward a literal base case."""
    others = [t for t in calls.succ[node] if t != node and calls.on_cycle[t]]
    if others or node not in calls.succ[node]:
        return False
    params = [p.name for p in handler.params]
    self_calls = [n for n in iter_tree(handler.body) if isinstance(n, ast.Call) and n.func == handler.name]
    for position, param in enumerate(params):
        if all(_decrements(call, position, param) for call in self_calls) and _has_base_case(handler.body, param):
            return True
    return False


def _decrements(call: ast.Call, position: int, param: str) -> bool:
    if position >= len(call.args):
        return False
    arg = call.args[position]
    return (isinstance(arg, ast.Binary) and arg.op == "-" and isinstance(arg.left, ast.Name)
            and arg.left.id == param and isinstance(arg.right, ast.Literal)
            and isinstance(arg.right.value, int) and not isinstance(arg.right.value, bool) and arg.right.value > 0)


def _has_base_case(body: ast.Block, param: str) -> bool:
    """The body compares `param` with an Int literal somewhere (`n <= 0`, `n == 1`…)."""
    for node in iter_tree(body):
        if isinstance(node, ast.Binary) and node.op in ("<", "<=", "==", ">", ">="):
            sides = (node.left, node.right)
            if any(isinstance(s, ast.Name) and s.id == param for s in sides) and \
                    any(isinstance(s, ast.Literal) and isinstance(s.value, int) for s in sides):
                return True
    return False
