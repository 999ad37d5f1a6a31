"""Argument checks shared by the builtin groups.

Each `expect_*` returns the argument when it has the wanted type and
raises SomaError kind "type" naming the builtin otherwise. `truthy` and
`field_of` are the small shared readings of values; `key_of` and
`field_name` read the "which column" argument of the pipeline builtins.
"""

from __future__ import annotations

from typing import Any, Callable

from ...core.diagnostics import SomaError
from ..values import Variant, type_of


def _wrong(fn_name: str, what: str, got: Any) -> SomaError:
    """The type error for an argument of the wrong kind."""
    return SomaError("type", f"{fn_name}() expects {what}, got {type_of(got)}")


def expect_str(fn_name: str, v: Any) -> str:
    """`v` when it is a String."""
    if type(v) is str:
        return v
    raise _wrong(fn_name, "a String", v)


def expect_int(fn_name: str, v: Any) -> int:
    """`v` when it is an Int (a Bool is not an Int)."""
    if type(v) is int:
        return v
    raise _wrong(fn_name, "an Int", v)


def expect_number(fn_name: str, v: Any) -> int | float:
    """`v` when it is an Int or a Float."""
    t = type(v)
    if t is int or t is float:
        return v
    raise _wrong(fn_name, "a number", v)


def expect_list(fn_name: str, v: Any) -> list:
    """`v` when it is a List."""
    if type(v) is list:
        return v
    raise _wrong(fn_name, "a List", v)


def expect_map(fn_name: str, v: Any) -> dict:
    """`v` when it is a Map."""
    if type(v) is dict:
        return v
    raise _wrong(fn_name, "a Map", v)


def expect_function(fn_name: str, v: Any) -> Any:
    """`v` when it is a function value."""
    if callable(v) and type(v) is not Variant:
        return v
    raise _wrong(fn_name, "a function (x => …)", v)


def truthy(v: Any) -> bool:
    """Whether a lambda's answer counts as true: a Bool is itself, `()` is
    false, zero and empty Strings/Lists/Maps are false, the rest true."""
    if v is True:
        return True
    if v is False or v is None:
        return False
    t = type(v)
    if t is int or t is float or t is str or t is list or t is dict:
        return bool(v)
    return True


def field_of(row: Any, field: Any) -> Any:
    """The value of `field` in a row (a Map or a struct variant), or ()."""
    if type(row) is dict:
        return row.get(field)
    if type(row) is Variant and row.fields is not None:
        return row.fields.get(field)
    return None


def key_of(fn_name: str, key: Any) -> Callable[[Any], Any]:
    """The row -> value reading a pipeline builtin's key argument asks for: a
    field name, a list of field names (a multi-key), or a key function
    `r => …`. Anything else is refused: it would read () from every row and
    silently put them all in one group."""
    if type(key) is str:
        return lambda row: field_of(row, key)
    if callable(key) and type(key) is not Variant:
        return key
    if type(key) is list and key and all(type(name) is str for name in key):
        return lambda row: [field_of(row, name) for name in key]
    raise SomaError("type", f"{fn_name}() expects a field name (String) or a key function (r => …), "
                            f"got {type_of(key)}")


def field_name(fn_name: str, key: Any) -> str:
    """A key argument that must be a field name (it also names an output column or a
    join key on both sides); a key function is refused with what to do instead."""
    if type(key) is str:
        return key
    if callable(key) and type(key) is not Variant:
        raise SomaError("type", f"{fn_name}() expects a field name (String), not a function — compute the "
                                f"key into a field first: rows |> map(r => merge(r, map(\"k\", …)))")
    raise SomaError("type", f"{fn_name}() expects a field name (String), got {type_of(key)}")
