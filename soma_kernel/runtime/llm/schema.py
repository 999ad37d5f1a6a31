"""The JSON schema offered to a model for each face `tool`.

`tool refund(order: String, cents: Int) -> String "Refund an order"` becomes
`{name, description, parameters: {type: "object", properties: {order:
{type: "string", description: "Parameter: order"}, …}, required: [all, in
order]}}`; the providers reshape it into their wire format. The description is
the tool's string, else its name.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ...syntax import ast

JSON_TYPES = {"Int": "integer", "Float": "number", "Bool": "boolean", "Map": "object", "List": "array"}


def json_type(ref: Optional[ast.TypeRef]) -> str:
    """The JSON schema type of a Soma type (String and everything else: "string")."""
    return JSON_TYPES.get(ref.name, "string") if ref is not None else "string"


def tool_schema(tool: ast.Tool) -> dict:
    """The provider-neutral description of one tool."""
    properties = {p.name: {"type": json_type(p.type), "description": f"Parameter: {p.name}"} for p in tool.params}
    return {"name": tool.name, "description": tool.description or tool.name,
            "parameters": {"type": "object", "properties": properties, "required": [p.name for p in tool.params]}}


def offered_tools(tools: Iterable[ast.Tool], allowed: Optional[list[str]]) -> list[dict]:
    """The schemas of the tools offered in a call (all, or those `tools_allowed` names)."""
    return [tool_schema(t) for t in tools if allowed is None or t.name in allowed]
