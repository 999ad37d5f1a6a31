"""Block scoping of a handler body: which names are local where.

`body_facts(params, body)` walks a body once (iteratively) and records what
the checks need: every bare name with whether a local binds it at that point,
the locals visible at each `transition()` call (guards read them), receivers
and assignment roots (slot or local?), and `break`/`continue` outside loops.
Scopes follow the language: a `let` is visible after it in its block and
nested blocks; `if`/`else`/loop/`try`/match-arm/lambda bodies open a scope;
`for` and lambda variables and match-pattern bindings live in their body.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..core.records import Record, fresh
from ..syntax import ast
from .walk import children


class Scope:
    """One block's bindings, chained to the enclosing block."""

    def __init__(self, parent: Optional["Scope"] = None, names: Iterable[str] = ()):
        self.parent = parent
        self.names: set[str] = set(names)

    def binds(self, name: str) -> bool:
        """True when this scope or an enclosing one binds `name`."""
        scope: Optional[Scope] = self
        while scope is not None:
            if name in scope.names:
                return True
            scope = scope.parent
        return False

    def visible(self) -> frozenset[str]:
        """Every local name visible here."""
        result: set[str] = set()
        scope: Optional[Scope] = self
        while scope is not None:
            result |= scope.names
            scope = scope.parent
        return frozenset(result)


class NameUse(Record):
    """A bare name read; `local` is True when a local binds it there.

    `visible` (locals in scope) is kept only for names no local binds, to
    suggest a spelling.
    """

    node: ast.Name
    local: bool
    visible: frozenset[str] = frozenset()


class TransitionSite(Record):
    """A `transition(...)` call and the locals visible where it is made."""

    call: ast.Call
    visible: frozenset[str]


class RootedUse(Record):
    """A method call or assignment whose receiver/target starts at a bare name.

    `root` is that name, `local` whether a local binds it; `node` is the
    MethodCall or Assign (or a bare Call, whose root is the called name).
    """

    node: ast.Node
    root: str
    local: bool


class BodyFacts(Record):
    """What one walk of a body found (see the module docstring)."""

    names: list[NameUse] = fresh(list)
    transitions: list[TransitionSite] = fresh(list)
    methods: list[RootedUse] = fresh(list)
    assigns: list[RootedUse] = fresh(list)
    calls: list[RootedUse] = fresh(list)
    loop_escapes: list[ast.Node] = fresh(list)
    lets: list[ast.Let] = fresh(list)
    discarded: set[int] = fresh(set)  # ids of expressions used as statements


def root_name(expr: ast.Node) -> Optional[str]:
    """The bare name an `a.b[c].d` chain starts from, or None."""
    current = expr
    while isinstance(current, (ast.Field, ast.Index, ast.MethodCall)):
        current = current.obj if not isinstance(current, ast.MethodCall) else current.receiver
    return current.id if isinstance(current, ast.Name) else None


def pattern_bindings(pattern: ast.Node) -> list[str]:
    """The names a match pattern binds."""
    bound: list[str] = []
    stack = [pattern]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.PBind):
            bound.append(node.name)
        elif isinstance(node, ast.PStringPrefix):
            bound.append(node.rest)
        elif isinstance(node, ast.PVariant):
            for name, sub in node.fields or []:
                if sub is None:
                    bound.append(name)
                else:
                    stack.append(sub)
            stack.extend(node.items or [])
        elif isinstance(node, ast.PMap):
            for key, sub in node.entries:
                if sub is None:
                    bound.append(key)
                else:
                    stack.append(sub)
        elif isinstance(node, ast.POr):
            stack.extend(node.alternatives)
    return bound


def body_facts(params: Iterable[str], body: ast.Node, extra: Iterable[str] = ()) -> BodyFacts:
    """Walk `body` with `params` (and `extra` names) bound; collect its facts."""
    return _Walker(BodyFacts()).run(Scope(None, list(params) + list(extra)), body)


class _Walker:
    """The iterative scope walk behind `body_facts`.

    The work stack holds ("node", node, scope, in_loop) and ("bind", name,
    scope) items; a `let` pushes its bind below its value so the value is
    walked first.
    """

    def __init__(self, facts: BodyFacts):
        self.facts = facts
        self.stack: list[tuple] = []

    def run(self, scope: Scope, body: ast.Node) -> BodyFacts:
        """Walk `body` in `scope` and return the facts."""
        self.stack.append(("node", body, scope, False))
        while self.stack:
            item = self.stack.pop()
            if item[0] == "bind":
                item[2].names.add(item[1])
            else:
                self._visit(item[1], item[2], item[3])
        return self.facts

    def _push(self, nodes: Iterable[ast.Node], scope: Scope, in_loop: bool) -> None:
        """Schedule `nodes` so that they are visited in the given order."""
        for node in reversed(list(nodes)):
            if node is not None:
                self.stack.append(("node", node, scope, in_loop))

    def _visit(self, node: ast.Node, scope: Scope, in_loop: bool) -> None:
        """Handle one node: record facts, open scopes, schedule children."""
        handler = getattr(self, "_visit_" + type(node).__name__, None)
        if handler is not None:
            handler(node, scope, in_loop)
        else:
            self._push(children(node), scope, in_loop)

    def _visit_Block(self, node: ast.Block, scope: Scope, in_loop: bool) -> None:
        self._push(node.stmts, Scope(scope), in_loop)

    def _visit_Let(self, node: ast.Let, scope: Scope, in_loop: bool) -> None:
        self.facts.lets.append(node)
        self.stack.append(("bind", node.name, scope))
        self._push([node.value], scope, in_loop)

    def _visit_ExprStmt(self, node: ast.ExprStmt, scope: Scope, in_loop: bool) -> None:
        self.facts.discarded.add(id(node.expr))
        self._push([node.expr], scope, in_loop)

    def _visit_Name(self, node: ast.Name, scope: Scope, in_loop: bool) -> None:
        local = scope.binds(node.id)
        visible = frozenset() if local else scope.visible()
        self.facts.names.append(NameUse(node, local, visible))

    def _visit_Call(self, node: ast.Call, scope: Scope, in_loop: bool) -> None:
        if node.cell is None:
            self.facts.calls.append(RootedUse(node, node.func, scope.binds(node.func)))
        if node.func == "transition" and node.cell is None:
            self.facts.transitions.append(TransitionSite(node, scope.visible()))
        self._push(node.args, scope, in_loop)

    def _visit_MethodCall(self, node: ast.MethodCall, scope: Scope, in_loop: bool) -> None:
        root = root_name(node.receiver)
        if root is not None:
            self.facts.methods.append(RootedUse(node, root, scope.binds(root)))
        self._push([node.receiver] + list(node.args), scope, in_loop)

    def _visit_Assign(self, node: ast.Assign, scope: Scope, in_loop: bool) -> None:
        root = root_name(node.target)
        if root is not None:
            self.facts.assigns.append(RootedUse(node, root, scope.binds(root)))
        self._push([node.value, node.target], scope, in_loop)

    def _visit_For(self, node: ast.For, scope: Scope, in_loop: bool) -> None:
        self.stack.append(("node", node.body, Scope(scope, [node.var]), True))
        self._push([node.iterable], scope, in_loop)

    def _visit_While(self, node: ast.While, scope: Scope, in_loop: bool) -> None:
        self.stack.append(("node", node.body, scope, True))
        self._push([node.cond], scope, in_loop)

    def _visit_Break(self, node: ast.Node, scope: Scope, in_loop: bool) -> None:
        if not in_loop:
            self.facts.loop_escapes.append(node)

    _visit_Continue = _visit_Break

    def _visit_Lambda(self, node: ast.Lambda, scope: Scope, in_loop: bool) -> None:
        self.stack.append(("node", node.body, Scope(scope, [node.param]), False))

    def _visit_MatchArm(self, node: ast.MatchArm, scope: Scope, in_loop: bool) -> None:
        arm_scope = Scope(scope, pattern_bindings(node.pattern))
        self._push([node.guard, node.body], arm_scope, in_loop)
