"""The `cost { tokens: N }` bound proof (§11.4).

The peak reply tokens of a handler is the sum, over its call tree, of every
`think()`/`think_json()` site's literal `max_tokens` × provider rounds ×
loop counts; `if`/`match` take their largest branch; calls to handlers (bare,
`Cell.h`, literal `delegate`) add the callee's peak. Rounds are the literal
`max_rounds` when the cell has tools, else 1. A site with no literal
`max_tokens`, a think() in a loop without a known count, in a lambda, or in
recursion makes the bound advisory: an error. The cell's peak is the largest
handler peak; over the declared budget is an error, within it a note.
"""

from __future__ import annotations

from typing import Optional

from ..core.records import Record, fresh
from ..syntax import ast
from . import calls as call_rules
from .agent_options import THINKERS, think_options
from .context import CellInfo, ProgramIndex, Reporter
from .walk import children

DEFAULT_ROUNDS_WITH_TOOLS = 10


class Cost(Record):
    """Reply tokens, plus the sites that make the amount unbounded."""

    tokens: int = 0
    unbounded: list[str] = fresh(list)

    def plus(self, other: "Cost") -> "Cost":
        """Both costs, one after the other."""
        return Cost(self.tokens + other.tokens, self.unbounded + other.unbounded)

    def times(self, count: int) -> "Cost":
        """The cost repeated `count` times."""
        return Cost(self.tokens * count, list(self.unbounded))

    @property
    def spends(self) -> bool:
        """True when the cost is not zero (some think() may run)."""
        return self.tokens > 0 or bool(self.unbounded)


def largest(costs: list[Cost]) -> Cost:
    """The most expensive of alternative branches (all unbounded sites kept)."""
    tokens = max((c.tokens for c in costs), default=0)
    return Cost(tokens, [site for c in costs for site in c.unbounded])


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Prove (or refute) every cell's declared token budget."""
    analysis = CostAnalysis(index)
    for info in index.cells.values():
        for entry in info.decl.cost:
            if entry.axis == "tokens" and isinstance(entry.value, int):
                _report_tokens(report, info, entry, analysis.cell_peak(info))


def _report_tokens(report: Reporter, info: CellInfo, entry: ast.CostEntry, peak: Cost) -> None:
    """The note or error for one `tokens:` budget."""
    declared = entry.value
    if peak.unbounded:
        sites = list(dict.fromkeys(peak.unbounded))
        report.error(entry, f"cost: 'tokens' bound is advisory — {len(sites)} unbounded think()/loop site(s): "
                     f"[{', '.join(sites)}]", "cost",
                     "give every think() a literal max_tokens and keep it out of unbounded loops, lambdas and "
                     "recursion (`for` over a literal range, or [loop_bound(N)])")
    elif peak.tokens > declared:
        report.error(entry, f"cost: 'tokens' budget exceeded — computed {peak.tokens} > declared {declared}",
                     "cost", "lower the max_tokens caps or raise the declared budget")
    else:
        report.note(entry, f"cost: 'tokens' bound proven — peak {peak.tokens} reply tokens (the max_tokens caps) "
                    f"≤ declared {declared} (prompts are not counted: cap them with set_budget)", "cost")


class CostAnalysis:
    """Peak reply tokens per handler, composed over the call graph."""

    def __init__(self, index: ProgramIndex):
        self.index = index
        self.owner: dict[int, CellInfo] = {}
        for info in index.cells.values():
            for handler in info.handlers:
                self.owner[id(handler)] = info
        self.done: dict[int, Cost] = {}

    def cell_peak(self, info: CellInfo) -> Cost:
        """The largest peak over the cell's handlers."""
        return largest([self.handler_cost(h) for h in info.handlers])

    def handler_cost(self, handler: ast.Handler) -> Cost:
        """A handler's peak, its callees first (iterative DFS; a cycle is recursion)."""
        state: dict[int, str] = {}
        stack = [handler]
        while stack:
            current = stack[-1]
            key = id(current)
            if key in self.done:
                stack.pop()
                continue
            pending = [c for c in self._callees(current) if id(c) not in self.done and state.get(id(c)) != "open"]
            if state.get(key) != "open" and pending:
                state[key] = "open"
                stack.extend(pending)
                continue
            self.done[key] = self._body_cost(current, state)
            stack.pop()
        return self.done[id(handler)]

    def _callees(self, handler: ast.Handler) -> list[ast.Handler]:
        """Handlers a body calls directly."""
        info = self.owner[id(handler)]
        found = []
        for node in _tree(handler.body):
            target = self._call_target(info, node) if isinstance(node, ast.Call) else None
            if target is not None:
                found.append(target)
        return found

    def _call_target(self, info: CellInfo, call: ast.Call) -> Optional[ast.Handler]:
        """The handler a call reaches (bare, qualified, literal delegate), or None."""
        if call.cell is not None:
            target = call_rules.resolve_qualified(self.index, call.cell, call.func)
        elif call.func == "delegate" and len(call.args) >= 2 and all(
                isinstance(a, ast.Literal) and isinstance(a.value, str) for a in call.args[:2]):
            target = call_rules.resolve_qualified(self.index, call.args[0].value, call.args[1].value)
        else:
            target = call_rules.resolve(self.index, info, call.func, len(call.args))
        if target is None or target.kind != "handler":
            return None
        return target.handler

    def _body_cost(self, handler: ast.Handler, state: dict[int, str]) -> Cost:
        """Fold a body bottom-up (post-order, iterative) into its cost."""
        info = self.owner[id(handler)]
        costs: dict[int, Cost] = {}
        stack: list[tuple[ast.Node, bool]] = [(handler.body, False)]
        while stack:
            node, expanded = stack.pop()
            if not expanded:
                stack.append((node, True))
                stack.extend((child, False) for child in children(node))
                continue
            parts = [costs.get(id(child), Cost()) for child in children(node)]
            costs[id(node)] = self._node_cost(info, handler, node, parts, costs, state)
        return costs[id(handler.body)]

    def _node_cost(self, info: CellInfo, handler: ast.Handler, node: ast.Node, parts: list[Cost],
                   costs: dict[int, Cost], state: dict[int, str]) -> Cost:
        """One node's cost from its children's costs."""
        total = Cost()
        for part in parts:
            total = total.plus(part)
        if isinstance(node, ast.Call):
            return total.plus(self._call_cost(info, handler, node, state))
        if isinstance(node, ast.If):
            branches = [costs[id(node.then)], costs[id(node.orelse)] if node.orelse is not None else Cost()]
            return costs[id(node.cond)].plus(largest(branches))
        if isinstance(node, ast.Match):
            return costs[id(node.subject)].plus(largest([costs[id(arm)] for arm in node.arms]))
        if isinstance(node, (ast.For, ast.While)):
            return self._loop_cost(handler, node, costs)
        if isinstance(node, ast.Lambda) and total.spends:
            return Cost(0, [f"{handler.name}::lambda"])
        return total

    def _call_cost(self, info: CellInfo, handler: ast.Handler, call: ast.Call, state: dict[int, str]) -> Cost:
        """The cost of the call itself (a think site or a handler's peak)."""
        if call.cell is None and call.func in THINKERS and not info.handler(call.func):
            return _think_cost(info, handler, call)
        target = self._call_target(info, call)
        if target is None:
            return Cost()
        if id(target) in self.done:
            return self.done[id(target)]
        return Cost(0, [f"{handler.name}::{target.name} (recursion)"])

    def _loop_cost(self, handler: ast.Handler, node: ast.Node, costs: dict[int, Cost]) -> Cost:
        """A loop: its body times a known count, or unbounded."""
        body = costs[id(node.body)]
        head = costs[id(node.iterable)] if isinstance(node, ast.For) else costs[id(node.cond)]
        count = node.bound if node.bound is not None else (
            _iteration_count(node.iterable) if isinstance(node, ast.For) else None)
        if isinstance(node, ast.While):
            body = body.plus(head)
            head = Cost()
        if not body.spends:
            return head
        if count is None:
            kind = "for loop (unbounded iterator)" if isinstance(node, ast.For) else "while loop"
            return head.plus(Cost(0, body.unbounded + [f"{handler.name}::{kind}"]))
        return head.plus(body.times(count))


def _tree(root: ast.Node) -> list[ast.Node]:
    """Every node under root (iterative)."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(children(node))
    return found


def _think_cost(info: CellInfo, handler: ast.Handler, call: ast.Call) -> Cost:
    """One think() site: literal max_tokens × rounds."""
    options = dict(think_options(call) or [])
    cap = options.get("max_tokens")
    if not (isinstance(cap, ast.Literal) and isinstance(cap.value, int) and not isinstance(cap.value, bool)):
        why = "no max_tokens" if cap is None else "computed max_tokens"
        return Cost(0, [f"{handler.name}::{call.func} ({why})"])
    return Cost(cap.value * _rounds(info, options), [])


def _rounds(info: CellInfo, options: dict[str, ast.Expr]) -> int:
    """Provider rounds: max_rounds when the cell has tools, else 1."""
    has_tools = bool(info.decl.face and info.decl.face.tools)
    if not has_tools:
        return 1
    rounds = options.get("max_rounds")
    if isinstance(rounds, ast.Literal) and isinstance(rounds.value, int):
        return rounds.value
    return DEFAULT_ROUNDS_WITH_TOOLS


def _iteration_count(iterable: ast.Expr) -> Optional[int]:
    """How many times a `for` runs over a literal list or `range(a, b[, s])`."""
    if isinstance(iterable, ast.ListLit):
        return len(iterable.items)
    if isinstance(iterable, ast.Call) and iterable.func == "range" and iterable.cell is None:
        values = [a.value for a in iterable.args if isinstance(a, ast.Literal) and isinstance(a.value, int)]
        if len(values) != len(iterable.args) or not 1 <= len(values) <= 3:
            return None
        start, end = (0, values[0]) if len(values) == 1 else (values[0], values[1])
        step = values[2] if len(values) == 3 else 1
        if step <= 0:
            return None
        return max(0, -(-(end - start) // step))
    return None
