"""Test-cell checks: names and calls in rules (a rule may read any cell's
slots and call any handler), and mocks that name something mockable."""

from __future__ import annotations

from ..syntax import ast
from ..syntax.dangling import keyword_name_problem
from . import calls
from .context import ProgramIndex, Reporter, did_you_mean, suggest
from .scopes import body_facts

MOCKABLE_BUILTINS = ("think", "think_json", "approve", "now", "now_ms", "http_get", "http_post", "http_put",
                     "http_patch", "http_delete")


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report problems in every test cell's rules."""
    all_slots = {name for info in index.cells.values() for name in info.slots}
    for test in index.program.tests:
        bound: list[str] = []
        helper_names = [h.name for h in test.handlers]
        for rule in test.rules:
            if isinstance(rule, ast.RuleMock):
                _check_mock(index, report, rule, helper_names)
            for expr in _rule_exprs(rule):
                extra = [rule.var] if isinstance(rule, ast.RuleProperty) else []
                facts = body_facts(bound + extra, expr)
                check_rule_names(index, report, facts, all_slots | set(helper_names))
                calls.check_calls(index, report, None, facts, expr, test.handlers)
            if isinstance(rule, ast.RuleLet):
                bound.append(rule.name)


def _rule_exprs(rule: ast.Node) -> list[ast.Expr]:
    """The expressions a rule evaluates."""
    if isinstance(rule, (ast.RuleLet, ast.RuleMock)):
        return [rule.value]
    if isinstance(rule, (ast.RuleAssert, ast.RuleAssertFails)):
        return [rule.expr]
    if isinstance(rule, ast.RuleProperty):
        return [rule.lo, rule.hi, rule.ensures]
    return []


def check_rule_names(index: ProgramIndex, report: Reporter, facts, extra_known: set[str],
                     where: str = " in a test rule", earlier: str = "rule") -> None:
    """Undefined names in one rule (or notebook statement: `where` and `earlier` name what it is)."""
    for use in facts.names:
        name = use.node.id
        if use.local or name in extra_known or name in index.variants or name in index.handler_owners \
                or index.is_builtin(name):
            continue
        problem = keyword_name_problem(use.node)
        if problem is not None:
            report.error(problem, problem.message, "parse" if problem.incomplete else "undefined_name", problem.hint)
            continue
        fix = suggest(name, set(use.visible) | extra_known)
        report.error(use.node, f"undefined variable '{name}'{where}{did_you_mean(fix)}", "undefined_name",
                     f"bind it with `let {name} = …` in an earlier {earlier}", fix)


def _check_mock(index: ProgramIndex, report: Reporter, rule: ast.RuleMock, helper_names: list[str]) -> None:
    """`mock X …` must name a mockable builtin or a handler; `mock think tool f(…)` a face tool."""
    target = rule.target
    if rule.tool is not None:
        _check_mock_tool(index, report, rule)
        return
    if target in MOCKABLE_BUILTINS or target in helper_names:
        return
    if "." in target:
        cell, _, name = target.partition(".")
        info = index.cells.get(cell)
        if info is not None and info.handler(name) is not None:
            return
    elif target in index.handler_owners:
        return
    candidates = list(MOCKABLE_BUILTINS) + list(index.handler_owners)
    fix = suggest(target, candidates)
    report.error(rule, f"mock {target} names no handler{did_you_mean(fix)}", "mock",
                 "mock think / think_json / approve / now / http_*, or a handler (`mock Cell.handler value`)", fix)


def _check_mock_tool(index: ProgramIndex, report: Reporter, rule: ast.RuleMock) -> None:
    """`mock think tool f(…)`: some cell's face declares the tool `f`."""
    tools = [tool.name for info in index.cells.values() if info.decl.face is not None for tool in info.decl.face.tools]
    if rule.tool in tools:
        return
    fix = suggest(rule.tool, tools)
    report.error(rule, f"mock think tool {rule.tool}(…): no cell declares a face tool '{rule.tool}'{did_you_mean(fix)}",
                 "mock", "script a tool the model can be offered: a `tool` of an agent's face", fix)
