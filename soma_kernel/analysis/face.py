"""Face contracts: every signal and tool has a handler with the same
parameter count and types, and what the handler visibly returns matches the
declared `-> T`: literals (a list literal element by element), and typed
parameters the body never rebinds. The runtime checks every returned value
against the same type (Runtime.returning_declared_type)."""

from __future__ import annotations

from typing import Optional

from ..syntax import ast
from .context import CellInfo, ProgramIndex, Reporter
from .walk import iter_tree

LITERAL_TYPES = {bool: "Bool", int: "Int", float: "Float", str: "String"}
SCALARS = {"Int", "Float", "String", "Bool"}
ACCEPTS = {"Float": {"Int", "Float"}, "Any": None, "Map": {"Map", "Unit"}}


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report broken face contracts in every cell."""
    for info in index.cells.values():
        face = info.decl.face
        if face is None:
            continue
        for signal in face.signals:
            _check_member(report, info, signal, "signal")
        for tool in face.tools:
            _check_member(report, info, tool, "tool")


def _check_member(report: Reporter, info: CellInfo, member: ast.Node, what: str) -> None:
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
        _check_literal_returns(report, handler, member)


def _params_text(params: list[ast.Param]) -> str:
    """`a: T, b: U` for a parameter list."""
    return ", ".join(f"{p.name}: {p.type.render()}" if p.type else p.name for p in params)


def _check_literal_returns(report: Reporter, handler: ast.Handler, member: ast.Node) -> None:
    """Every returned value whose type can be read off the source must fit `-> T`."""
    declared = member.returns
    params = _stable_params(handler)
    for node, value in _returned_values(handler):
        found = _literal_type(value) or params.get(value.id if isinstance(value, ast.Name) else None)
        if found is not None and not _fits(found, declared.name):
            report.error(node, f"face contract: signal '{member.name}' returns {declared.render()} "
                         f"but handler '{handler.name}' returns {_with_article(found)}", "return_type",
                         f"return a {declared.name}, or change the signal to `-> {found}`")
        elif isinstance(value, ast.ListLit) and declared.name == "List" and declared.args:
            element = declared.args[0].name
            for item in value.items:
                found = _literal_type(item)
                if found is not None and not _fits(found, element):
                    report.error(item, f"face contract: signal '{member.name}' returns {declared.render()} "
                                 f"but handler '{handler.name}' puts {_with_article(found)} in the list",
                                 "return_type", f"make every element {_with_article(element)}, or change the signal's type")


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
            if p.type is not None and p.name not in rebound and p.type.name in SCALARS}


def _literal_type(expr: ast.Expr) -> Optional[str]:
    """The type name of a literal expression (a list or string literal included)."""
    if isinstance(expr, ast.Literal):
        return "Unit" if expr.value is None else LITERAL_TYPES.get(type(expr.value))
    if isinstance(expr, ast.InterpString):
        return "String"
    if isinstance(expr, ast.ListLit):
        return "List"
    return None


def _fits(found: str, declared: str) -> bool:
    """True when a literal of type `found` is acceptable for `declared`."""
    if declared == "Any" or found == declared:
        return True
    accepted = ACCEPTS.get(declared)
    return accepted is not None and found in accepted


def _with_article(type_name: str) -> str:
    """`an Int`, `a String`, `()` for Unit."""
    if type_name == "Unit":
        return "()"
    return f"{'an' if type_name[0] in 'AEIOU' else 'a'} {type_name}"
