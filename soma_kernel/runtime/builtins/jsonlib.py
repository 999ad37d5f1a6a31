"""JSON builtins: to_json (compact) and from_json (raises kind "json")."""

from __future__ import annotations

from .. import values
from .registry import builtin

GROUP = "types"


@builtin(GROUP, "to_json(x) -> String", "Serialize a value as compact JSON (NaN/inf become null).")
def to_json(x):
    """to_json(map("a", 1)) = '{"a":1}'."""
    return values.to_json(x)


@builtin(GROUP, "from_json(s: String) -> Any",
         'Parse JSON into a Map/List/scalar; maps and lists pass through; invalid JSON raises kind "json".',
         needs_runtime=True)
def from_json(call, text):
    """from_json("[1, 2]") = [1, 2]; an object naming a variant of the program is rebuilt as that variant."""
    variants = call.runtime.variant_kinds() if call.runtime is not None else None
    return values.from_json(text, variants)
