"""Agent checks: literal `think()` / `think_json()` options must be known,
`tools_allowed` may name only tools of the calling cell's face, and a cell's
`[model: NAME]` must be a `[models.NAME]` of the soma.toml."""

from __future__ import annotations

from typing import Optional

from ..project.settings import unknown_model
from ..syntax import ast
from .context import CellInfo, ProgramIndex, Reporter, did_you_mean, suggest
from .walk import iter_tree

THINK_OPTIONS = ("max_tokens", "timeout", "timeout_ms", "max_rounds", "tools_allowed", "requires")
THINKERS = ("think", "think_json")


def think_options(call: ast.Call) -> Optional[list[tuple[str, ast.Expr]]]:
    """The literal options map of a think() call (`map("k", v, …)` last), or None."""
    if len(call.args) < 2:
        return None
    last = call.args[-1]
    if not (isinstance(last, ast.Call) and last.func == "map" and last.cell is None):
        return None
    pairs = []
    for position in range(0, len(last.args) - 1, 2):
        key = last.args[position]
        if isinstance(key, ast.Literal) and isinstance(key.value, str):
            pairs.append((key.value, last.args[position + 1]))
    return pairs


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report unknown think() options, tools_allowed naming non-tools, and cells bound
    to a `[models.NAME]` the soma.toml does not define."""
    for info in index.cells.values():
        problem = unknown_model(project, info.decl)
        if problem is not None:
            report.error(info.decl, problem[0], "model", problem[1])
    for info, owner in index.bodies():
        for node in iter_tree(owner.body):
            if isinstance(node, ast.Call) and node.cell is None and node.func in THINKERS:
                _check_options(report, info, node)


def _check_options(report: Reporter, info: CellInfo, call: ast.Call) -> None:
    """One think() call's literal options."""
    tools = [t.name for t in info.decl.face.tools] if info.decl.face else []
    for key, value in think_options(call) or []:
        if key not in THINK_OPTIONS:
            fix = suggest(key, THINK_OPTIONS)
            report.error(call, f"{call.func}(): unknown option '{key}'{did_you_mean(fix)}",
                         "think_option", "the options are max_tokens, timeout (ms), max_rounds, tools_allowed, "
                         "requires", fix)
        elif key == "tools_allowed" and isinstance(value, ast.ListLit):
            for item in value.items:
                if isinstance(item, ast.Literal) and isinstance(item.value, str) and item.value not in tools:
                    fix = suggest(item.value, tools)
                    report.error(item, f"tools_allowed names '{item.value}', which is not a tool of cell "
                                 f"'{info.name}'{did_you_mean(fix)}", "think_option",
                                 "declare it as `tool …` in the face, or remove it", fix)
