"""Call sites in handler bodies, each with the path conditions above it.

The verifier reads handler bodies the way the reference's analyses read its
desugared copy of the program, and reproduces two of its observable effects
(spec §16.1, decided by seed 000):
- a `try { … }` block is a `match` with one `_` arm whose body is the block:
  calls under it carry the path item `(match arm _)`, and the block's final
  expression is visited twice (once as a statement, once as the arm's
  value) — so a think() or transition() that ends a try block counts as two
  sites (`decide` in seed 000: "think() at 2 sites");
- in a condition rendered into a path, the right operand of `&&`/`||` that
  holds an interpolated string is shown as `if true { … } else { … }` (the
  desugaring hoists the string's segments into a conditional block).

Path items: `if <cond>` (then branch), `if not (<cond>)` (else branch),
`(match arm <pat>)` with pat `"lit"` for a string literal, `_` for the
wildcard and `…` otherwise, `(in for loop)`, `while <cond>`.

Walks use an explicit stack: no recursion over the user's tree.
"""

from __future__ import annotations

from typing import Callable, Optional

from ...core.records import Record
from ...syntax import ast
from ...syntax.render import render_expr
from ..walk import children

TRANSITION = "transition"
THINK_BUILTINS = ("think", "think_json")


class CallSite(Record):
    """One node found in a body (a call, a write…): its enclosing path items,
    the facts (conditions) that hold there, and whether it sits in a try block."""

    call: ast.Node
    path: tuple[str, ...]
    conditions: tuple[ast.Expr, ...]
    in_try: bool


class TransitionSite(Record):
    """A transition() call: the literal target (or None when computed), the
    declared source of the 3-argument form, and its path."""

    site: CallSite
    target: Optional[str]
    source: Optional[str]

    @property
    def literal(self) -> bool:
        """True when the target (and the source, if given) are string literals."""
        return self.target is not None

    def label(self) -> str:
        """`target` or `from → to` as the refinement line lists it."""
        if self.source is not None:
            return f"{self.source} → {self.target}"
        return self.target or "<dynamic>"


def call_sites(body: ast.Block, names: tuple[str, ...]) -> list[CallSite]:
    """Every call to one of `names` under `body`, in source order, with paths.

    Calls in a try block's final expression are reported twice (see module doc).
    """
    return find_sites(body, lambda n: isinstance(n, ast.Call) and n.func in names and n.cell is None)


def find_sites(body: ast.Block, wanted: Callable[[ast.Node], bool]) -> list[CallSite]:
    """Every node under `body` for which `wanted` holds, with its path and facts."""
    found: list[CallSite] = []
    stack: list[tuple[ast.Node, tuple, tuple, bool]] = [(body, (), (), False)]
    while stack:
        node, path, conds, in_try = stack.pop()
        if wanted(node):
            found.append(CallSite(node, path, conds, in_try))
        stack.extend(reversed(_descend(node, path, conds, in_try)))
    return found


def _descend(node: ast.Node, path: tuple, conds: tuple, in_try: bool) -> list[tuple]:
    """The children of `node` paired with the path each one sits under.

    `conds` collects the facts known at a child: enclosing `if` conditions
    (negated in else branches) and the `require`s written before it in the
    enclosing blocks.
    """
    if isinstance(node, ast.Block):
        items = []
        for stmt in node.stmts:
            items.append((stmt, path, conds, in_try))
            if isinstance(stmt, ast.Require):
                conds = conds + (stmt.cond,)
        return items
    if isinstance(node, ast.If):
        items = [(node.cond, path, conds, in_try),
                 (node.then, path + (f"if {render_condition(node.cond)}",), conds + (node.cond,), in_try)]
        if node.orelse is not None:
            negated = ast.Unary("!", node.cond, span=node.cond.span)
            items.append((node.orelse, path + (f"if not ({render_condition(node.cond)})",),
                          conds + (negated,), in_try))
        return items
    if isinstance(node, ast.Match):
        items = [(node.subject, path, conds, in_try)]
        for arm in node.arms:
            arm_path = path + (f"(match arm {pattern_text(arm.pattern)})",)
            if arm.guard is not None:
                items.append((arm.guard, arm_path, conds, in_try))
            items.append((arm.body, arm_path, conds, in_try))
        return items
    if isinstance(node, ast.Try):
        arm_path = path + ("(match arm _)",)
        items = [(node.body, arm_path, conds, True)]
        last = node.body.stmts[-1] if node.body.stmts else None
        if isinstance(last, ast.ExprStmt):
            items.append((last.expr, arm_path, conds, True))
        return items
    if isinstance(node, ast.For):
        return [(node.iterable, path, conds, in_try),
                (node.body, path + ("(in for loop)",), conds, in_try)]
    if isinstance(node, ast.While):
        return [(node.cond, path, conds, in_try),
                (node.body, path + (f"while {render_condition(node.cond)}",), conds, in_try)]
    return [(child, path, conds, in_try) for child in children(node)]


def transition_sites(body: ast.Block, typed: bool = False) -> list[TransitionSite]:
    """Every transition() call under `body` with its literal target/source.

    For a typed machine (`state m: SumType`) a bare variant name such as
    `transition(id, Shipped)` is as literal as the string "Shipped".
    """
    def literal(expr: ast.Expr) -> Optional[str]:
        return _literal_state(expr, typed)

    result = []
    for site in call_sites(body, (TRANSITION,)):
        args = site.call.args
        if len(args) >= 3:
            source, target = literal(args[1]), literal(args[2])
            if source is None:
                target = None
            result.append(TransitionSite(site, target, source))
        elif len(args) == 2:
            result.append(TransitionSite(site, literal(args[1]), None))
    return result


def _literal_state(expr: ast.Expr, typed: bool) -> Optional[str]:
    """The text of a plain string literal, or of a variant name in a typed machine, else None."""
    if isinstance(expr, ast.Literal) and isinstance(expr.value, str):
        return expr.value
    if typed and isinstance(expr, ast.Name) and expr.id[:1].isupper():
        return expr.id
    return None


def pattern_text(pattern: ast.Node) -> str:
    """A match pattern as a path item shows it: `"lit"`, `_` or `…`."""
    if isinstance(pattern, ast.PWildcard):
        return "_"
    if isinstance(pattern, ast.PLiteral) and isinstance(pattern.value, str):
        return f'"{pattern.value}"'
    return "…"


def render_condition(expr: ast.Expr) -> str:
    """A condition as the desugared program renders it (see module doc)."""
    return render_expr(desugar_short_circuit(expr))


def desugar_short_circuit(expr: ast.Expr) -> ast.Expr:
    """A copy of `expr` where each `&&`/`||` right operand holding an
    interpolated string becomes `if true { … } else { … }`.

    Only the operator spine (`&&`, `||`, `!`, parentheses-free nesting) is
    rebuilt, bottom-up with an explicit stack.
    """
    order: list[ast.Expr] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        order.append(node)
        if isinstance(node, ast.Binary) and node.op in ("&&", "||"):
            stack.extend((node.left, node.right))
        elif isinstance(node, ast.Unary):
            stack.append(node.operand)
    rebuilt: dict[int, ast.Expr] = {}
    for node in reversed(order):
        if isinstance(node, ast.Binary) and node.op in ("&&", "||"):
            right = node.right
            if has_interpolation(right):
                right = ast.If(ast.Literal(True), ast.Block([]), ast.Block([]), span=right.span)
            else:
                right = rebuilt[id(right)]
            rebuilt[id(node)] = ast.Binary(node.op, rebuilt[id(node.left)], right, span=node.span)
        elif isinstance(node, ast.Unary):
            rebuilt[id(node)] = ast.Unary(node.op, rebuilt[id(node.operand)], span=node.span)
        else:
            rebuilt[id(node)] = node
    return rebuilt[id(expr)]


def has_interpolation(expr: ast.Node) -> bool:
    """True when an interpolated string with an evaluated segment sits under `expr`."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.InterpString) and any(not isinstance(p, str) for p in node.parts):
            return True
        stack.extend(children(node))
    return False
