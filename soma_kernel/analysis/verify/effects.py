"""Effect summary lines: which handlers call the model, and what it may dispatch.

One `✓ effects:` line per body calling think()/think_json(), in declaration
order. Sites are counted as the desugared program shows them (a call ending
a try block counts twice, see `sites`). The tools the model can dispatch are
the face's tools, narrowed by a literal `tools_allowed` list in the call's
options map (`map("tools_allowed", ["a"])`).
"""

from __future__ import annotations

from typing import Optional

from ...syntax import ast
from .refinement import CellBodies
from .report import PASS, CheckLine
from .sites import THINK_BUILTINS, call_sites


def effects_lines(cell: CellBodies, face_tools: list[str]) -> list[CheckLine]:
    """The effects line of every body that calls think()."""
    lines = []
    for body in cell.bodies:
        sites = call_sites(body.body, THINK_BUILTINS)
        if not sites:
            continue
        tools = list(face_tools)
        for site in sites:
            allowed = _tools_allowed(site.call)
            if allowed is not None:
                tools = [t for t in tools if t in allowed]
        count = len(sites)
        noun = "site" if count == 1 else "sites"
        reach = f"can dispatch [{', '.join(tools)}]" if tools else "no tools available"
        lines.append(CheckLine(PASS, f"effects: handler `{body.name}` calls think() at {count} {noun} "
                                     f"(the cost line counts loop rounds) — {reach}", kind="effects"))
    return lines


def _tools_allowed(call: ast.Call) -> Optional[list[str]]:
    """The literal `tools_allowed` list of a think() options argument, if any."""
    for arg in call.args[1:]:
        value = _option(arg, "tools_allowed")
        if isinstance(value, ast.ListLit):
            return [item.value for item in value.items
                    if isinstance(item, ast.Literal) and isinstance(item.value, str)]
    return None


def _option(arg: ast.Expr, key: str) -> Optional[ast.Expr]:
    """The value given for `key` in a `map(k, v, …)` call argument."""
    if isinstance(arg, ast.Call) and arg.func == "map":
        pairs = arg.args
        for index in range(0, len(pairs) - 1, 2):
            name = pairs[index]
            if isinstance(name, ast.Literal) and name.value == key:
                return pairs[index + 1]
    return None
