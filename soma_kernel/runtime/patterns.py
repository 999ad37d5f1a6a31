"""Compile `match` patterns into matcher closures `matches(value, frame) -> bool`.

A variant pattern `Name { field }` also matches a record (a Map whose
`_type` is Name). A matcher binds the names its pattern introduces into the frame (at indices
declared in the arm's scope) as it goes; a failed match may leave partial
bindings, which the arm's scope never exposes.
"""

from __future__ import annotations

from ..syntax import ast
from .values import Variant


def compile_pattern(pattern, scope, runtime):
    """The matcher of one pattern, declaring its bindings in `scope`."""
    kind = type(pattern).__name__
    return _COMPILERS[kind](pattern, scope, runtime)


def _wildcard(pattern, scope, runtime):
    return lambda value, f: True


def _literal(pattern: ast.PLiteral, scope, runtime):
    expected = pattern.value
    if expected is None:
        return lambda value, f: value is None
    if isinstance(expected, bool):
        return lambda value, f: value is expected
    return lambda value, f: value is not None and not isinstance(value, bool) and _same(value, expected)


def _same(value, expected) -> bool:
    if type(value) is type(expected):
        return value == expected
    if isinstance(value, (int, float)) and isinstance(expected, (int, float)):
        return value == expected
    return False


def _bind(pattern: ast.PBind, scope, runtime):
    name = pattern.name
    if name[:1].isupper():
        return _variant(ast.PVariant(name, span=pattern.span), scope, runtime)
    index = scope.declare(name)

    def bind(value, f):
        f[index] = value
        return True

    return bind


def _range(pattern: ast.PRange, scope, runtime):
    lo, hi = pattern.lo, pattern.hi

    def in_range(value, f):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return lo <= value <= hi

    return in_range


def _or(pattern: ast.POr, scope, runtime):
    alternatives = [compile_pattern(p, scope, runtime) for p in pattern.alternatives]
    return lambda value, f: any(m(value, f) for m in alternatives)


def _variant(pattern: ast.PVariant, scope, runtime):
    name = pattern.name
    field_matchers = []
    for field_name, sub in pattern.fields or []:
        if sub is None:
            sub = ast.PBind(field_name, span=pattern.span)
        field_matchers.append((field_name, compile_pattern(sub, scope, runtime)))
    item_matchers = [compile_pattern(p, scope, runtime) for p in pattern.items or []]

    def match_variant(value, f):
        if isinstance(value, dict):
            return value.get("_type") == name and not item_matchers and all(
                field_name in value and matcher(value[field_name], f) for field_name, matcher in field_matchers)
        if not isinstance(value, Variant) or value.name != name:
            return False
        for field_name, matcher in field_matchers:
            fields = value.fields or {}
            if field_name not in fields or not matcher(fields[field_name], f):
                return False
        if item_matchers:
            items = value.items or ()
            if len(items) != len(item_matchers):
                return False
            return all(m(v, f) for m, v in zip(item_matchers, items))
        return True

    return match_variant


def _prefix(pattern: ast.PStringPrefix, scope, runtime):
    prefix = pattern.prefix
    index = scope.declare(pattern.rest)

    def match_prefix(value, f):
        if isinstance(value, str) and value.startswith(prefix):
            f[index] = value[len(prefix):]
            return True
        return False

    return match_prefix


def _map(pattern: ast.PMap, scope, runtime):
    entries = []
    for key, sub in pattern.entries:
        if sub is None:
            sub = ast.PBind(key, span=pattern.span)
        entries.append((key, compile_pattern(sub, scope, runtime)))

    def match_map(value, f):
        if not isinstance(value, dict):
            return False
        return all(key in value and matcher(value[key], f) for key, matcher in entries)

    return match_map


_COMPILERS = {
    "PWildcard": _wildcard,
    "PLiteral": _literal,
    "PBind": _bind,
    "PRange": _range,
    "POr": _or,
    "PVariant": _variant,
    "PStringPrefix": _prefix,
    "PMap": _map,
}
