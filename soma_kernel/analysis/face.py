"""Face contracts: every signal and tool has a handler with the same
parameter count and types, and what the handler visibly returns matches the
declared `-> T`: literals (a list literal element by element), and typed
parameters the body never rebinds. Both judge by the runtime's own rule
(runtime.types.return_problem), which the runtime applies to every value a
signal's handler returns (Runtime.returning_declared_type): for a signal,
check refuses only what every run would refuse. A tool's `-> T` is not held at
run time (as in the reference), so a tool that visibly breaks it is a warning."""

from __future__ import annotations


from ..runtime.types import UNCHECKED_RETURNS, element_problem, return_problem
from ..runtime.values import type_of
from ..syntax import ast
from .context import CellInfo, ProgramIndex, Reporter
from .walk import iter_tree

# what a typed parameter can hold at run time (a Float may be whole or not)
PARAM_SAMPLES = {"Int": [0], "String": [""], "Bool": [False], "Float": [0.5, 1.0]}


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report broken face contracts in every cell."""
    for info in index.cells.values():
        face = info.decl.face
        if face is None:
            continue
        for signal in face.signals:
            _check_member(report, info, signal, "signal", index.types)
        for tool in face.tools:
            _check_member(report, info, tool, "tool", index.types)


def _check_member(report: Reporter, info: CellInfo, member: ast.Node, what: str, sum_types) -> None:
    """One signal or tool against its handler."""
    handler = info.handler(member.name)
    if handler is None:
        report.error(member, f"face contract: {what} '{member.name}' declared in cell '{info.name}' has no handler",
                     "face_contract", f"add `on {member.name}({_params_text(member.params)}) {{ … }}`")
        return
    if len(handler.params) != len(member.params):
        report.error(handler, f"face contract: {what} '{member.name}' takes {len(member.params)} parameter(s) "
                     f"but its handler takes {len(handler.params)}", "face_contract",
                     f"make the handler `on {member.name}({_params_text(member.params)})`")
        return
    for declared, written in zip(member.params, handler.params):
        if written.type is not None and declared.type is not None and written.type != declared.type:
            report.error(written, f"face contract: parameter '{written.name}' of {what} '{member.name}' is "
                         f"{declared.type.render()} in the face but {written.type.render()} in the handler",
                         "face_contract", f"declare it `{written.name}: {declared.type.render()}` in both places")
    if member.returns is not None:
        _check_literal_returns(report, handler, member, what, sum_types)


def _params_text(params: list[ast.Param]) -> str:
    """`a: T, b: U` for a parameter list."""
    return ", ".join(f"{p.name}: {p.type.render()}" if p.type else p.name for p in params)


def _check_literal_returns(report: Reporter, handler: ast.Handler, member: ast.Node, what: str,
                           sum_types) -> None:
    """Every returned value whose type can be read off the source must fit `-> T`,
    judged by the runtime's own rule (types.return_problem) on that value: an
    error for a signal (every run refuses it), a warning for a tool (no run does)."""
    declared = member.returns
    if member.name in UNCHECKED_RETURNS:
        return
    complain = report.error if what == "signal" else report.warning
    unheld = "" if what == "signal" else " (a tool's return type is what the model is told; it is not checked at run time)"
    params = _stable_params(handler)
    for node, value in _returned_values(handler):
        samples = _samples(value, params)
        if samples and all(return_problem(declared, s, sum_types) is not None for s in samples):
            found = type_of(samples[0])
            complain(node, f"face contract: {what} '{member.name}' returns {declared.render()} "
                     f"but handler '{handler.name}' returns {_with_article(found)}{unheld}", "return_type",
                     f"return a {declared.name}, or change the {what} to `-> {found}`")
        elif isinstance(value, ast.ListLit) and declared.name == "List" and declared.args:
            element = declared.args[0]
            for item in value.items:
                item_samples = _samples(item, params)
                if item_samples and all(element_problem(element, s, sum_types) is not None for s in item_samples):
                    found = type_of(item_samples[0])
                    complain(item, f"face contract: {what} '{member.name}' returns {declared.render()} "
                             f"but handler '{handler.name}' puts {_with_article(found)} in the list{unheld}",
                             "return_type", f"make every element {_with_article(element.name)}, "
                             f"or change the {what}'s type")


def _returned_values(handler: ast.Handler) -> list[tuple[ast.Node, ast.Expr]]:
    """(node to blame, returned expression): each `return E`, and the body's last expression."""
    found = [(node, node.value) for node in iter_tree(handler.body)
             if isinstance(node, ast.Return) and node.value is not None]
    stmts = handler.body.stmts
    if stmts and isinstance(stmts[-1], ast.ExprStmt):
        found.append((stmts[-1], stmts[-1].expr))
    return found


def _stable_params(handler: ast.Handler) -> dict[str, str]:
    """Typed parameters the body never assigns or shadows: name -> type name."""
    rebound = {node.name for node in iter_tree(handler.body) if isinstance(node, ast.Let)}
    rebound |= {node.target.id for node in iter_tree(handler.body)
                if isinstance(node, ast.Assign) and isinstance(node.target, ast.Name)}
    rebound |= {node.var for node in iter_tree(handler.body) if isinstance(node, ast.For)}
    rebound |= {node.param for node in iter_tree(handler.body) if isinstance(node, ast.Lambda)}
    rebound |= {node.name for node in iter_tree(handler.body) if isinstance(node, ast.PBind)}
    return {p.name: p.type.name for p in handler.params
            if p.type is not None and p.name not in rebound and p.type.name in PARAM_SAMPLES}


def _samples(expr: ast.Expr, params: dict[str, str]) -> list:
    """Values the expression may have, when the source says (a literal, a list
    literal, an interpolated string, a typed parameter never rebound); else []."""
    if isinstance(expr, ast.Literal):
        return [expr.value]
    if isinstance(expr, ast.InterpString):
        return [""]
    if isinstance(expr, ast.ListLit):
        return [[]]
    if isinstance(expr, ast.Name) and expr.id in params:
        return PARAM_SAMPLES[params[expr.id]]
    return []


def _with_article(type_name: str) -> str:
    """`an Int`, `a String`, `()` for Unit."""
    if type_name == "Unit":
        return "()"
    return f"{'an' if type_name[0] in 'AEIOU' else 'a'} {type_name}"
