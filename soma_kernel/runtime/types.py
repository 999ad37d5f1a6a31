"""Run-time checks of declared types: handler parameters, slot elements, variant fields.

`value_checker(TypeRef)` returns a function that returns the value (an Int
given where a Float is declared becomes a Float) or raises kind `type`.
`Map` accepts records, variants and `()`; a sum-type name accepts only its
variants; unknown type names (user records) accept anything.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..core.diagnostics import SomaError
from ..syntax import ast
from .values import Variant, type_of


def identity(value):
    """The checker of an unconstrained type: accepts anything."""
    return value


def value_checker(ref: Optional[ast.TypeRef], runtime, param: Optional[str] = None) -> Callable:
    """A checker for values of the written type `ref`."""
    if ref is None or ref.name in ("Any", "T"):
        return identity
    where = f" for {param}" if param else ""
    name = ref.name
    if name == "Int":
        return _exact(int, "Int", where)
    if name == "String":
        return _exact(str, "String", where)
    if name == "Bool":
        return _exact(bool, "Bool", where)
    if name == "Float":
        return _float(where)
    if name == "List":
        return _list(ref, runtime, where)
    if name == "Map":
        return _map(ref, runtime, where)
    if name in runtime.types:
        return _sum_type(name, where)
    return identity


def _refuse(expected: str, value, where: str):
    raise SomaError("type", f"expected {expected}{where}, got {type_of(value)}")


def _exact(python_type: type, expected: str, where: str):
    def check(value):
        if type(value) is python_type:
            return value
        _refuse(expected, value, where)

    return check


def _float(where: str):
    def check(value):
        kind = type(value)
        if kind is float:
            return value
        if kind is int:
            return float(value)
        _refuse("Float", value, where)

    return check


def _list(ref: ast.TypeRef, runtime, where: str):
    element = value_checker(ref.args[0], runtime) if ref.args else None

    def check(value):
        if type(value) is not list:
            _refuse(ref.render(), value, where)
        if element is None or element is identity:
            return value
        return [element(v) for v in value]

    return check


def _map(ref: ast.TypeRef, runtime, where: str):
    def check(value):
        if value is None or isinstance(value, (dict, Variant)):
            return value
        _refuse(ref.render(), value, where)

    return check


def _sum_type(name: str, where: str):
    def check(value):
        if isinstance(value, Variant) and value.type_name == name:
            return value
        _refuse(name, value, where)

    return check
