"""Guard proofs (spec §12.2 item 12): is a guarded edge's guard already
established where handlers take the edge?

A handler takes `A -> B` with a 2-argument call targeting B or a
3-argument call naming the edge. The guard is proven in that handler when,
at every such call, each conjunct of the guard is implied by a fact holding
there — a `require` written before it in an enclosing block or the condition
of an enclosing `if` — and the handler never reassigns a variable the guard
reads. A fact implies a conjunct when it is the same comparison, or bounds
the same expression by a literal at least as tight (`x < 5` implies
`x <= 10`).

Lines [infer for the ✓ and mixed forms; the ⚠ form is seed 000's]:
`✓ guard `G` on A -> B: proven in `h``,
`⚠ guard `G` on A -> B: runtime-checked in `h1`, `h2` — put `require G else
Tag` before the transition() (no require or if establishes the same
comparison there)`; a mixed case starts `proven in `h1`; runtime-checked in`.
"""

from __future__ import annotations

from typing import Optional

from ...syntax import ast
from ...syntax.machines import MachineModel
from ...syntax.render import render_expr
from ..walk import iter_tree
from .refinement import CellBodies
from .report import PASS, WARN, CheckLine

FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def guard_lines(model: MachineModel, cell: CellBodies) -> list[CheckLine]:
    """One line per guarded declared edge that some handler takes."""
    lines = []
    for declared in model.declared_edges:
        if declared.guard is None:
            continue
        proven, runtime = [], []
        for body in cell.bodies:
            sites = [s for s in cell.transitions[body.name] if _takes(s, declared, model)]
            if not sites:
                continue
            ok = not _reassigns(body.body, declared.guard) and all(
                _established(declared.guard, s.site.conditions) for s in sites)
            (proven if ok else runtime).append(body.name)
        if not proven and not runtime:
            continue
        text = render_expr(declared.guard)
        head = f"guard `{text}` on {declared.src} -> {declared.dst}:"
        if not runtime:
            lines.append(CheckLine(PASS, f"{head} proven in {_names(proven)}", kind="guard"))
            continue
        mixed = f"proven in {_names(proven)}; " if proven else ""
        lines.append(CheckLine(WARN, f"{head} {mixed}runtime-checked in {_names(runtime)} — put `require {text} else "
                                     "Tag` before the transition() (no require or if establishes the same "
                                     "comparison there)", kind="guard"))
    return lines


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _takes(site, declared: ast.Edge, model: MachineModel) -> bool:
    """True when a transition site can take the declared edge."""
    if not site.literal or site.target != declared.dst:
        return False
    if site.source is None:
        return True
    if declared.src == "*":
        return site.source != declared.dst and site.source not in declared.excepts
    return site.source == declared.src


def _reassigns(body: ast.Block, guard: ast.Expr) -> bool:
    """True when the body assigns (not `let`) a variable the guard reads."""
    read = {n.id for n in iter_tree(guard) if isinstance(n, ast.Name)}
    for node in iter_tree(body):
        if isinstance(node, ast.Assign):
            root = node.target
            while isinstance(root, (ast.Field, ast.Index)):
                root = root.obj
            if isinstance(root, ast.Name) and root.id in read:
                return True
    return False


def _established(guard: ast.Expr, facts: tuple) -> bool:
    """Every conjunct of the guard follows from one of the facts' conjuncts."""
    known = [c for fact in facts for c in conjuncts(fact)]
    return all(any(_implies(k, goal) for k in known) for goal in conjuncts(guard))


def conjuncts(expr: ast.Expr) -> list[ast.Expr]:
    """The `&&`-separated parts of an expression (iterative)."""
    parts, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Binary) and node.op == "&&":
            stack.extend((node.right, node.left))
        else:
            parts.append(node)
    return parts


def _implies(fact: ast.Expr, goal: ast.Expr) -> bool:
    if render_expr(fact) == render_expr(goal):
        return True
    a, b = _bound(fact), _bound(goal)
    if a is None or b is None or a[0] != b[0]:
        return False
    (_, op_a, lit_a), (_, op_b, lit_b) = a, b
    if op_b in ("<", "<="):
        return op_a in ("<", "<=", "==") and (lit_a < lit_b or lit_a == lit_b and (op_b == "<=" or op_a == "<"))
    if op_b in (">", ">="):
        return op_a in (">", ">=", "==") and (lit_a > lit_b or lit_a == lit_b and (op_b == ">=" or op_a == ">"))
    return False


def _bound(expr: ast.Expr) -> Optional[tuple[str, str, float]]:
    """(rendered side, op, literal) for `e op lit` or `lit op e` comparisons."""
    if not isinstance(expr, ast.Binary) or expr.op not in FLIP:
        return None
    if _number(expr.right) is not None:
        return render_expr(expr.left), expr.op, _number(expr.right)
    if _number(expr.left) is not None:
        return render_expr(expr.right), FLIP[expr.op], _number(expr.left)
    return None


def _number(expr: ast.Expr) -> Optional[float]:
    if isinstance(expr, ast.Literal) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return expr.value
    return None
