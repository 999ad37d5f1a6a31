"""Run-time checks of declared types: handler parameters, slot elements, variant
fields, and what a handler returns against its face.

`value_checker(TypeRef)` returns a function that returns the value (an Int
given where a Float is declared becomes a Float) or raises kind `type`.
`Map` accepts records, variants and `()`; a sum-type name accepts only its
variants (a returned value: also `()`); unknown type names (user records) accept anything.
`return_checker(TypeRef)` is the face's `-> T` rule (see "face returns" below);
`soma check` applies the same functions to the values it can read off the source.
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


EXACT_ELEMENTS = {"Int": int, "String": str, "Bool": bool}


def _list(ref: ast.TypeRef, runtime, where: str):
    element = value_checker(ref.args[0], runtime) if ref.args else None
    exact = EXACT_ELEMENTS.get(ref.args[0].name) if ref.args and not ref.args[0].args else None

    def check(value):
        if type(value) is not list:
            _refuse(ref.render(), value, where)
        if element is None or element is identity:
            return value
        if exact is not None and set(map(type, value)) <= {exact}:
            return value  # every element already is one: nothing to convert (the walk is C-level)
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


# ---------------------------------------------------------------- face returns
#
# A face's `-> T` is held to the reference's rule for returned values (its
# interpreter's check_return_type, then value_fits for generics and sum types),
# which is more lenient at the top than a parameter's: `-> Int` takes a whole
# Float, `-> Float` takes an Int (kept as it is, not converted), `-> List` takes
# `()`, `-> Map` takes a record, a variant or `()` — a List is not a Map. Inside
# `List<T>` / `Map<K, V>` each element (each value of a Map whose key does not
# start with `_`) must fit `T` / `V`: a scalar element type refuses `()`,
# `Float` takes an Int, `Map` takes a variant, nested generics are followed. A
# sum-type name (`-> Pay`) takes its own variants or `()`, at the top as inside.
# Unknown type names (records, cells) take anything. A handler named `request`
# (the router of the reference's web ring) is exempt: a route answers with
# whatever it returns.

UNCHECKED_RETURNS = frozenset({"request"})  # the web ring's router: its routes answer anything
SCALAR_NAMES = frozenset({"Int", "Float", "String", "Bool"})
BUILTIN_NAMES = SCALAR_NAMES | {"List", "Map"}


def return_checker(ref: Optional[ast.TypeRef], sum_types) -> Callable:
    """The run-time check of a face's `-> T`: returns the value unchanged or
    raises kind `type` whose detail says what does not fit."""
    if ref is None or ref.name in ("Any", "T") or (ref.name not in BUILTIN_NAMES and ref.name not in sum_types):
        return identity

    def check(value):
        problem = return_problem(ref, value, sum_types)
        if problem is not None:
            raise SomaError("type", problem)
        return value

    return check


def return_problem(ref: ast.TypeRef, value, sum_types) -> Optional[str]:
    """Why `value` does not fit the declared return type `ref`, or None when it does."""
    if not _fits_return_top(ref.name, value, sum_types):
        return f"expected {ref.render()}, got {type_of(value)}"
    if ref.args:
        return element_problem(ref, value, sum_types)
    return None


def element_problem(ref: ast.TypeRef, value, sum_types) -> Optional[str]:
    """Why `value` does not fit `ref` as an element of a declared generic, or None."""
    if ref.name == "List" and ref.args:
        if value is None:
            return None
        if type(value) is not list:
            return f"expected a List, got {type_of(value)}"
        for index, item in enumerate(value):
            problem = element_problem(ref.args[0], item, sum_types)
            if problem is not None:
                return f"element {index}: {problem}"
        return None
    if ref.name == "Map" and ref.args:
        if value is None or isinstance(value, Variant):
            return None
        if not isinstance(value, dict):
            return f"expected a Map, got {type_of(value)}"
        for key, item in value.items():
            problem = None if str(key).startswith("_") else element_problem(ref.args[-1], item, sum_types)
            if problem is not None:
                return f"key {key!r}: {problem}"
        return None
    if _fits_element(ref.name, value, sum_types):
        return None
    return f"expected {ref.name}, got {type_of(value)}"


def _fits_return_top(name: str, value, sum_types) -> bool:
    """The top-level rule of a returned value (see the section comment): an
    element's rule, except that `-> Int` also takes a whole Float."""
    if name == "Int" and type(value) is float:
        return value.is_integer()
    return _fits_element(name, value, sum_types)


def _fits_element(name: str, value, sum_types) -> bool:
    """The rule for one element of a declared `List<T>` / `Map<K, T>`."""
    if name in sum_types:
        return value is None or (isinstance(value, Variant) and value.type_name == name)
    if value is None:
        return name not in SCALAR_NAMES
    kind = type(value)
    if name == "Int":
        return kind is int
    if name == "Float":
        return kind in (int, float)
    if name == "String":
        return kind is str
    if name == "Bool":
        return kind is bool
    if name == "List":
        return kind is list
    if name == "Map":
        return isinstance(value, (dict, Variant))
    return True
