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
from ..syntax.dangling import keyword_name_problem
from . import calls
from .context import ProgramIndex, Reporter, did_you_mean, suggest
from .scopes import body_facts


def check_statements(index: ProgramIndex, report: Reporter, statements: list[ast.Node]) -> None:
    """Report undefined names and bad calls in top-level statements, in order."""
    known = {name for info in index.cells.values() for name in info.slots} | set(index.cells)
    bound: list[str] = []
    for statement in statements:
        root = _checked_part(statement)
        if root is not None:
            facts = body_facts(bound, root)
            for use in facts.names:
                name = use.node.id
                if use.local or name in known or name in index.variants or name in index.handler_owners \
                        or index.is_builtin(name):
                    continue
                problem = keyword_name_problem(use.node)
                if problem is not None:
                    kind = "parse" if problem.incomplete else "undefined_name"
                    report.error(problem, problem.message, kind, problem.hint)
                    continue
                fix = suggest(name, set(use.visible) | known)
                report.error(use.node, f"undefined variable '{name}'{did_you_mean(fix)}", "undefined_name",
                             f"bind it first (`let {name} = …`) or fix the spelling", fix)
            calls.check_calls(index, report, None, facts, root)
        bound.extend(_bound_by(statement))


def _checked_part(statement: ast.Node):
    """What a top-level item evaluates, as one node to walk (None for a property or a tool mock)."""
    if isinstance(statement, (ast.RuleLet, ast.RuleMock)):
        return None if getattr(statement, "tool", None) else statement.value
    if isinstance(statement, (ast.RuleAssert, ast.RuleAssertFails)):
        return statement.expr
    if isinstance(statement, ast.RuleProperty):
        return None
    return ast.Block([statement], span=statement.span)


def _bound_by(statement: ast.Node) -> list[str]:
    """The session variables a top-level statement binds: `let x`, `x = …`."""
    if isinstance(statement, (ast.Let, ast.RuleLet)):
        return [statement.name]
    if isinstance(statement, ast.Assign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []
