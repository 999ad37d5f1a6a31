"""Running a tool call the model asked for.

The arguments (a JSON object) bind the handler's parameters by name, each
type-checked against the face `tool`; extra arguments are ignored. Every
refusal goes back to the model as a `tool error: …` text rather than
failing the think() call. The body runs within the tool's `[capability]`
(runtime.capabilities), so a file or URL outside it is one more refusal. The handler runs inside a savepoint: if it raises,
its writes are undone and the model gets `tool error: <error>`. A success
sends the value's display form.
"""

from __future__ import annotations

import json
from typing import Optional

from ...core.diagnostics import SomaError
from ...syntax import ast
from ..capabilities import tool_scope
from ..types import value_checker
from ..values import display
from .providers import ToolCall

RESERVED_KEYS = ("_type", "_variant", "_values")


def run_tool_call(runtime, cell_name: Optional[str], call: ToolCall, tools: list[ast.Tool],
                  allowed: Optional[list[str]]) -> str:
    """The text sent back to the model for one tool call."""
    tool = next((t for t in tools if t.name == call.name), None)
    state = runtime.cells.get(cell_name) if cell_name else None
    decl = state.handler(call.name, len(tool.params)) if tool is not None and state is not None else None
    if decl is None:
        return f"tool error: '{call.name}' is not a tool of this agent"
    if allowed is not None and call.name not in allowed:
        return f"tool error: '{call.name}' is not allowed in this step (tools_allowed: {json.dumps(allowed)})"
    values = bound_arguments(runtime, tool, call)
    if isinstance(values, str):
        return values
    savepoint = runtime.journal.savepoint()
    try:
        with tool_scope(tool.name, tool.capability, runtime.agent.project_dir):
            result = runtime.handler_function(state, decl)(values)
    except SomaError as err:
        runtime.journal.rollback(savepoint)
        return f"tool error: {err.text}"
    return display(result) if result is not None else "()"


def bound_arguments(runtime, tool: ast.Tool, call: ToolCall):
    """The handler's argument values, or the `tool error: …` refusing them."""
    try:
        given = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        given = None
    if not isinstance(given, dict):
        return f"tool error: the arguments of '{call.name}' are not a JSON object"
    values = []
    for param in tool.params:
        if param.name not in given:
            return f"tool error: '{call.name}' needs the argument '{param.name}'"
        if carries_reserved_key(given[param.name]):
            return f"tool error: argument '{param.name}' carries _type / _variant"
        try:
            values.append(value_checker(param.type, runtime, param=param.name)(given[param.name]))
        except SomaError as err:
            return f"tool error: {call.name}(): {err.detail or err.text}"
    return values


def carries_reserved_key(value) -> bool:
    """True when a JSON value holds `_type`, `_variant` or `_values` at any depth."""
    if isinstance(value, dict):
        return any(k in RESERVED_KEYS for k in value) or any(carries_reserved_key(v) for v in value.values())
    if isinstance(value, list):
        return any(carries_reserved_key(v) for v in value)
    return False
