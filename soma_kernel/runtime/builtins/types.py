"""Type and conversion builtins (spec §9 "types / conversion"): len,
to_string, to_int, to_float, parse_int, parse_float, type_of, is_type /
is_a, fail."""

from __future__ import annotations

import math
import re

from ...core.diagnostics import SomaError
from .. import values
from .registry import builtin

GROUP = "types"

_STRICT_INT = re.compile(r"[+-]?[0-9]+")
_STRICT_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@builtin(GROUP, "len(x: String|List|Map) -> Int", "Characters of a string, elements of a list, or entries of a map.")
def len_(x):
    """len("héllo") = 5."""
    t = type(x)
    if t is str or t is list or t is dict:
        return len(x)
    raise SomaError("type", f"len() expects a String, List or Map, got {values.type_of(x)}")


# to_string(1.0) = "1.0"; to_string([1, "a"]) = '[1, "a"]'. The display function itself, not a
# function calling it: to_string is called in loops, and a call less is a fifth of such a round.
to_string = builtin(GROUP, "to_string(x) -> String", "Render any value with its display formatting.",
                    name="to_string")(values.display)


def _finite_to_int(x: float):
    """A Float truncated toward zero, or () when it is NaN or infinite."""
    if x != x or x in (math.inf, -math.inf):
        return None
    return int(x)


@builtin(GROUP, "to_int(x) -> Int", "Convert to Int (floats truncate, strings parse leniently); () on failure.")
def to_int(x):
    """to_int("1.9") = 1; to_int("abc") = ()."""
    t = type(x)
    if t is int:
        return x
    if t is float:
        return _finite_to_int(x)
    if t is bool:
        return 1 if x else 0
    if t is str:
        text = x.strip()
        if _STRICT_INT.fullmatch(text):
            return int(text)
        if _STRICT_FLOAT.fullmatch(text):
            return _finite_to_int(float(text))
    return None


@builtin(GROUP, "to_float(x) -> Float", "Convert to Float; () if a string fails to parse.")
def to_float(x):
    """to_float("2.5") = 2.5; to_float(3) = 3.0."""
    t = type(x)
    if t is float:
        return x
    if t is int:
        try:
            return float(x)
        except OverflowError:
            raise SomaError("range", "Int too large to convert to Float") from None
    if t is bool:
        return 1.0 if x else 0.0
    if t is str:
        text = x.strip()
        if _STRICT_FLOAT.fullmatch(text):
            return float(text)
    return None


@builtin(GROUP, "parse_int(s: String) -> Int | ()", "Strict integer parse: () unless the whole string is an integer.")
def parse_int(s):
    """parse_int("12") = 12; parse_int("1.5") = ()."""
    if type(s) is str and _STRICT_INT.fullmatch(s):
        return int(s)
    return None


@builtin(GROUP, "parse_float(s: String) -> Float | ()", "Strict float parse: () unless the whole string is a finite number.")
def parse_float(s):
    """parse_float("2.5") = 2.5; parse_float("nan") = ()."""
    if type(s) is str and _STRICT_FLOAT.fullmatch(s):
        value = float(s)
        if value not in (math.inf, -math.inf):
            return value
    return None


@builtin(GROUP, "type_of(x) -> String", 'Type name: "Int", "Float", "String", "Bool", "List", "Map", "Function", "Variant" or "Unit".')
def type_of(x):
    """type_of(1) = "Int"."""
    return values.type_of(x)


@builtin(GROUP, "is_type(value, type_name: String) -> Bool",
         "True if a record's `_type` (or a variant's name or sum type) equals `type_name`.", aliases=("is_a",))
def is_type(value, type_name):
    """is_type(User { name: "A" }, "User")."""
    return values.is_a(value, type_name)


def _text_or_empty(v) -> str:
    """The display of a value, or "" for ()."""
    return "" if v is None else values.display(v)


@builtin(GROUP, "fail(kind: String, detail?) -> never | fail(r: TryResult) -> never",
         "Raise a domain error, or re-raise a caught try-result unchanged.")
def fail(kind, detail=None):
    """fail("not_found", "no order o9") raises kind not_found."""
    if type(kind) is dict and "kind" in kind:
        caught_kind = _text_or_empty(kind.get("kind")) or "error"
        caught_detail = _text_or_empty(kind.get("detail"))
        text = kind.get("error")
        raise SomaError(caught_kind, caught_detail, text=text if type(text) is str else None)
    raise SomaError(values.display(kind), _text_or_empty(detail))
