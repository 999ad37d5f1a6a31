"""Checks of a notebook's top-level statements and rules (`let x = …`, `Cell.handler(…)`, `assert …`).

`soma check` checks declarations; a notebook also runs statements between
them. `check_statements` holds those to the rules of a test cell's rules (they
run the same way): a name must be bound by an earlier top-level `let` or
assignment, or be a variant, a handler, a cell, a slot or a builtin; every
call must name something that exists with an argument count it accepts. A
statement is checked against the declarations of the whole notebook, as the
session checks a definition against every other cell.
"""

from __future__ import annotations

from ..syntax import ast
from . import calls
from .context import ProgramIndex, Reporter
from .scopes import body_facts
from .test_rules import check_rule_names


def check_statements(index: ProgramIndex, report: Reporter, statements: list[ast.Node]) -> None:
    """Report undefined names and bad calls in top-level statements, in order."""
    known = {name for info in index.cells.values() for name in info.slots} | set(index.cells)
    bound: list[str] = []
    for statement in statements:
        root = _checked_part(statement)
        if root is not None:
            facts = body_facts(bound, root)
            check_rule_names(index, report, facts, known, where="", earlier="statement")
            calls.check_calls(index, report, None, facts, root)
        bound.extend(bound_names(statement))


def _checked_part(statement: ast.Node):
    """What a top-level item evaluates, as one node to walk (None for a property or a tool mock)."""
    if isinstance(statement, (ast.RuleLet, ast.RuleMock)):
        return None if getattr(statement, "tool", None) else statement.value
    if isinstance(statement, (ast.RuleAssert, ast.RuleAssertFails)):
        return statement.expr
    if isinstance(statement, ast.RuleProperty):
        return None
    return ast.Block([statement], span=statement.span)


def bound_names(statement: ast.Node) -> list[str]:
    """The session variables a top-level statement binds: `let x`, `x = …`."""
    if isinstance(statement, (ast.Let, ast.RuleLet)):
        return [statement.name]
    if isinstance(statement, ast.Assign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []
