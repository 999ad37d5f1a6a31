"""Graph algorithms over a state-machine model, all iterative and linear time.

`Graph` turns a MachineModel into integer adjacency lists (forward and
backward, duplicates removed) so that every search is a plain BFS/DFS over
arrays: reachability, backward reachability (liveness), shortest paths with
parent pointers, strongly connected components (iterative Tarjan) and lasso
search (a shortest path into a cycle that stays inside a set of states).
Machines may have 100 000 states: nothing here recurses over user data or
scans a list inside a loop.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from operator import itemgetter
from typing import Iterable, Optional

from ...syntax.machines import MachineModel


class Adjacency:
    """Nodes 0..n-1 with forward adjacency lists (what SCC and cycle search need)."""

    def __init__(self, succ: list[list[int]]):
        self.succ = succ

    def __len__(self) -> int:
        return len(self.succ)


class Graph(Adjacency):
    """Integer view of a MachineModel: state i is `states[i]`."""

    def __init__(self, model: MachineModel):
        self.model = model
        self.states: list[str] = list(model.states)
        self.index: dict[str, int] = dict(zip(self.states, range(len(self.states))))
        self.succ: list[list[int]] = [[] for _ in self.states]
        self.pred: list[list[int]] = [[] for _ in self.states]
        succ, pred, number = self.succ, self.pred, self.index.__getitem__
        # the model's edge index holds each (src, dst) once, in the order of `model.successors`
        for i, j in zip(map(number, map(itemgetter(0), model.edge_index)),
                        map(number, map(itemgetter(1), model.edge_index))):
            succ[i].append(j)
            pred[j].append(i)
        self.initial: int = self.index.get(model.initial, 0)
        self._from_initial: Optional[list[bool]] = None

    def reachable_from_initial(self) -> list[bool]:
        """The states reachable from the initial state, searched once and
        shared by the checks that need them (structure lines, temporal properties)."""
        if self._from_initial is None:
            self._from_initial = reachable(self, [self.initial])
        return self._from_initial

    def is_terminal(self, i: int) -> bool:
        """No outgoing edge to another state (a self-loop does not count)."""
        return all(j == i for j in self.succ[i])

    def names(self, indices: Iterable[int]) -> list[str]:
        """State names of `indices`, in the given order."""
        return [self.states[i] for i in indices]

    def mask(self, names: Iterable[str]) -> list[bool]:
        """A membership array for the named states (unknown names ignored)."""
        result = [False] * len(self.states)
        for name in names:
            if name in self.index:
                result[self.index[name]] = True
        return result


def reachable(graph: Graph, sources: Iterable[int], allowed: Optional[list[bool]] = None,
              backward: bool = False) -> list[bool]:
    """States reachable from `sources` (or reaching them when `backward`).

    With `allowed`, the search only enters allowed states (sources included
    only when allowed). The visit order is a list that grows while it is read
    (which states are found does not depend on the order), and the search
    without `allowed` has its own loop: the test is not paid per edge.
    """
    edges = graph.pred if backward else graph.succ
    seen = [False] * len(graph)
    order: list[int] = []
    for s in sources:
        if not seen[s] and (allowed is None or allowed[s]):
            seen[s] = True
            order.append(s)
    if allowed is None:
        for current in order:
            for nxt in edges[current]:
                if not seen[nxt]:
                    seen[nxt] = True
                    order.append(nxt)
        return seen
    for current in order:
        for nxt in edges[current]:
            if not seen[nxt] and allowed[nxt]:
                seen[nxt] = True
                order.append(nxt)
    return seen


def shortest_path(graph: Graph, start: int, goal: list[bool],
                  allowed: Optional[list[bool]] = None) -> Optional[list[int]]:
    """The shortest path from `start` to a goal state, through allowed states only.

    The goal state itself need not be allowed; intermediate ones must be.
    Returns the list of state indices (start first), or None.
    """
    if goal[start]:
        return [start]
    if allowed is not None and not allowed[start]:
        return None
    parent = {start: -1}
    queue: deque[int] = deque([start])
    while queue:
        current = queue.popleft()
        for nxt in graph.succ[current]:
            if nxt in parent:
                continue
            parent[nxt] = current
            if goal[nxt]:
                return _unwind(parent, nxt)
            if allowed is None or allowed[nxt]:
                queue.append(nxt)
    return None


def _unwind(parent: dict[int, int], last: int) -> list[int]:
    """Follow parent pointers back from `last` and return the path in order."""
    path = [last]
    while parent[path[-1]] != -1:
        path.append(parent[path[-1]])
    path.reverse()
    return path


def strongly_connected(graph: Adjacency, allowed: Optional[list[bool]] = None) -> list[int]:
    """Component id of every state (iterative Tarjan); -1 for states not allowed."""
    count = len(graph)
    comp = [-1] * count
    order = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    stack: list[int] = []
    counter = 0
    components = 0
    for root in range(count):
        if order[root] != -1 or (allowed is not None and not allowed[root]):
            continue
        work = [(root, 0)]
        order[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            node, edge_pos = work[-1]
            successors = graph.succ[node]
            if edge_pos < len(successors):
                work[-1] = (node, edge_pos + 1)
                nxt = successors[edge_pos]
                if allowed is not None and not allowed[nxt]:
                    continue
                if order[nxt] == -1:
                    order[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack[nxt] = True
                    work.append((nxt, 0))
                elif on_stack[nxt]:
                    low[node] = min(low[node], order[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    comp[member] = components
                    if member == node:
                        break
                components += 1
    return comp


def cyclic_states(graph: Adjacency, allowed: Optional[list[bool]] = None) -> list[bool]:
    """States lying on a cycle made only of allowed states (self-loops count)."""
    comp = strongly_connected(graph, allowed)
    sizes: dict[int, int] = {}
    for c in comp:
        if c != -1:
            sizes[c] = sizes.get(c, 0) + 1
    result = [False] * len(graph)
    for i, c in enumerate(comp):
        if c == -1:
            continue
        if sizes[c] > 1 or i in graph.succ[i]:
            result[i] = True
    return result


@dataclass
class Lasso:
    """A run that avoids a set forever: `path` (start first) ends either in a
    terminal state (`loop_start` None) or loops back to `path[loop_start]`
    (the last element repeats that state)."""

    path: list[int]
    loop_start: Optional[int] = None


def find_lasso(graph: Graph, start: int, allowed: list[bool]) -> Optional[Lasso]:
    """The shortest run from `start` that stays in allowed states forever.

    Such a run either ends in an allowed terminal state or enters a cycle of
    allowed states. Returns None when every run from `start` leaves `allowed`.
    """
    if not allowed[start]:
        return None
    on_cycle = cyclic_states(graph, allowed)
    goal = [allowed[i] and (on_cycle[i] or graph.is_terminal(i)) for i in range(len(graph))]
    prefix = shortest_path(graph, start, goal, allowed)
    if prefix is None:
        return None
    entry = prefix[-1]
    if not on_cycle[entry]:
        return Lasso(prefix)
    loop = shortest_cycle_through(graph, entry, allowed)
    return Lasso(prefix + loop[1:], loop_start=len(prefix) - 1)


def shortest_cycle_through(graph: Graph, node: int, allowed: list[bool]) -> list[int]:
    """The shortest cycle `node → … → node` through allowed states.

    `node` must lie on such a cycle; the result starts and ends with it.
    """
    if node in graph.succ[node]:
        return [node, node]
    parent = {node: -1}
    queue: deque[int] = deque([node])
    while queue:
        current = queue.popleft()
        for nxt in graph.succ[current]:
            if nxt == node:
                return _unwind(parent, current) + [node]
            if nxt not in parent and allowed[nxt]:
                parent[nxt] = current
                queue.append(nxt)
    return [node]


def find_fair_lasso(graph: Graph, start: int, target: list[bool]) -> Optional[Lasso]:
    """The shortest run from `start` that avoids `target` forever under fairness.

    A loop that can still leave towards the target is not a way to avoid it:
    a state visited forever eventually takes each of its edges (the retry
    loop `active -> past_due -> active` beside `past_due -> canceled` ends).
    A run avoids the target only by entering the states that can no longer
    reach it; from there it ends in a terminal state or loops among them.
    Returns None when every fair run from `start` meets the target.
    """
    can_reach = reachable(graph, [i for i in range(len(graph)) if target[i]], backward=True)
    trapped = [not flag for flag in can_reach]
    outside = [not flag for flag in target]
    prefix = shortest_path(graph, start, trapped, outside)
    if prefix is None:
        return None
    tail = find_lasso(graph, prefix[-1], trapped)
    offset = len(prefix) - 1
    loop_start = None if tail.loop_start is None else tail.loop_start + offset
    return Lasso(prefix[:-1] + tail.path, loop_start)
