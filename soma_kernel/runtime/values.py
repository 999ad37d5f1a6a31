"""Soma runtime values: representation, display form, equality and JSON.

Soma values are plain Python objects so the interpreter's hot loop stays
cheap:

    Int -> int          Float -> float      String -> str     Bool -> bool
    List -> list        Map -> dict         Unit `()` -> None
    variants -> Variant records -> dict with a "_type" key
    functions -> any callable (lambdas carry a `display_name`)

`bool` is a subclass of `int` in Python, so every dispatch here keys on
`type(v)` (exact type), never on isinstance chains.

Walks over nested user data (display, equality, JSON, copies) use explicit
stacks: a deeply nested value never exhausts Python's recursion limit.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Optional

from ..core.diagnostics import SomaError
from .limits import MAX_VALUE_LENGTH, too_long_written

NoneType = type(None)

# Soma Ints are arbitrary precision and display in full (the reference's
# BigInt has no digit cap): lift CPython's 4300-digit guard on int <-> str.
sys.set_int_max_str_digits(0)


class Variant:
    """A value of a user sum type (`cell type`).

    `type_name` is the sum type ("Decision"), `name` the variant ("Deny").
    Struct variants carry `fields` (a dict), tuple variants `items` (a
    tuple); unit variants have both None. Equality is structural.
    """

    __slots__ = ("type_name", "name", "fields", "items")

    def __init__(self, type_name: str, name: str,
                 fields: Optional[dict] = None, items: Optional[tuple] = None):
        self.type_name = type_name
        self.name = name
        self.fields = fields
        self.items = items

    def __eq__(self, other: object) -> bool:
        return type(other) is Variant and equals(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.type_name, self.name))

    def __repr__(self) -> str:
        return f"Variant({display(self)})"


_TYPE_NAMES = {
    int: "Int",
    float: "Float",
    str: "String",
    bool: "Bool",
    list: "List",
    dict: "Map",
    NoneType: "Unit",
    Variant: "Variant",
}


def type_of(v: Any) -> str:
    """The Soma type name of a value: "Int", "Float", "String", "Bool",
    "List", "Map", "Function", "Variant" or "Unit"."""
    name = _TYPE_NAMES.get(type(v))
    if name is not None:
        return name
    if isinstance(v, bool):
        return "Bool"
    if isinstance(v, int):
        return "Int"
    if isinstance(v, float):
        return "Float"
    if isinstance(v, str):
        return "String"
    if isinstance(v, list):
        return "List"
    if isinstance(v, dict):
        return "Map"
    if callable(v):
        return "Function"
    return "Unit" if v is None else type(v).__name__


# ---------------------------------------------------------------- display

def format_float(x: float) -> str:
    """A Float in display form: integral values keep `.0`, others print
    their shortest round-trip digits without an exponent."""
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    text = repr(x)
    if "e" in text or "E" in text:
        text = _expand_exponent(text)
    if "." not in text:
        text += ".0"
    return text


def _expand_exponent(text: str) -> str:
    """Rewrite `1.5e+20` / `1e-07` as plain positional decimal digits."""
    mantissa, _, exponent = text.lower().partition("e")
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + int(exponent)
    if point <= 0:
        body = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        body = digits + "0" * (point - len(digits))
    else:
        body = digits[:point] + "." + digits[point:]
    return sign + body.rstrip(".")


def quote_string(s: str) -> str:
    """A String quoted and JSON-escaped, as shown inside lists and maps."""
    return json.dumps(s, ensure_ascii=False)


def function_display(fn: Any) -> str:
    """The display text of a function value."""
    name = getattr(fn, "display_name", None)
    if name is not None:
        return name
    return f"<builtin {getattr(fn, '__name__', 'function')}>"


def _scalar_display(v: Any, t: type) -> Optional[str]:
    """Display text of a scalar (inner form), or None for containers."""
    if t is str:
        return quote_string(v)
    if t is int:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return format_float(v)
    if v is None:
        return "()"
    if t is list or t is dict or t is Variant or isinstance(v, (list, dict)):
        return None
    plain = _plain_scalar(v)
    if plain is not None:
        return _scalar_display(plain, type(plain))
    return function_display(v)


def _plain_scalar(v: Any) -> Any:
    """A subclass instance of bool/int/float/str as the plain value, else None."""
    for base in (bool, int, float, str):
        if isinstance(v, base):
            return base(v)
    return None


def _map_key_text(key: Any) -> str:
    """A map key as displayed: always quoted."""
    return quote_string(key if type(key) is str else display(key))


def _render(v: Any, scalar_text, pieces_of) -> str:
    """Render nested data without recursion.

    `scalar_text(value, type)` gives a leaf's text (None for a container);
    `pieces_of(container)` lists its pieces in order: str pieces are output
    as they are, 1-tuples `(value,)` are rendered in their place. A text
    longer than MAX_VALUE_LENGTH is refused (kind `range`) as it grows: a
    list holding itself twice, forty times over, is small in memory but
    2⁴⁰ items long written out.
    """
    out: list[str] = []
    work: list = [(v,)]
    size = 0
    while work:
        piece = work.pop()
        if type(piece) is str:
            out.append(piece)
            size += len(piece)
            if size > MAX_VALUE_LENGTH:
                raise too_long_written()
            continue
        value = piece[0]
        text = scalar_text(value, type(value))
        if text is not None:
            out.append(text)
            size += len(text)
            if size > MAX_VALUE_LENGTH:
                raise too_long_written()
        else:
            pieces = pieces_of(value)
            pieces.reverse()
            work.extend(pieces)
    return "".join(out)


def _display_pieces(v: Any) -> list:
    """The display pieces of a list, map or variant."""
    pieces: list = []
    if isinstance(v, list):
        pieces.append("[")
        for i, item in enumerate(v):
            if i:
                pieces.append(", ")
            pieces.append((item,))
        pieces.append("]")
    elif isinstance(v, dict):
        pieces.append("{")
        for i, (key, item) in enumerate(v.items()):
            if i:
                pieces.append(", ")
            pieces.append(_map_key_text(key) + ": ")
            pieces.append((item,))
        pieces.append("}")
    else:
        pieces.append(v.name)
        if v.items is not None:
            pieces.append("(")
            for i, item in enumerate(v.items):
                if i:
                    pieces.append(", ")
                pieces.append((item,))
            pieces.append(")")
        elif v.fields is not None:
            pieces.append(" { ")
            for i, (key, item) in enumerate(v.fields.items()):
                if i:
                    pieces.append(", ")
                pieces.append(f"{key}: ")
                pieces.append((item,))
            pieces.append(" }" if v.fields else "}")
    return pieces


def display_inner(v: Any) -> str:
    """The display form of a value nested in a list or map: Strings are
    quoted and JSON-escaped."""
    return _render(v, _scalar_display, _display_pieces)


def display(v: Any) -> str:
    """The top-level display form (print, interpolation, to_string):
    Strings raw, everything else as `display_inner`."""
    t = type(v)
    if t is str:
        return v
    if t is int:
        return str(v)
    if t is float:
        return format_float(v)
    if t is bool:
        return "true" if v else "false"
    if v is None:
        return "()"
    if isinstance(v, str):
        return str(v)
    return display_inner(v)


# ---------------------------------------------------------------- equality

def map_key(key: Any) -> str:
    """A Map key as stored: maps are keyed by text, so `m[1]` and `m["1"]`
    are one entry (any other value is keyed by its display form)."""
    return key if type(key) is str else display(key)


def _numeric(t: type) -> bool:
    """True for the exact types Int and Float (never Bool)."""
    return t is int or t is float


def _pair_equal(a: Any, b: Any, work: list) -> bool:
    """Compare one pair; push nested pairs onto `work`. False on a
    definite mismatch."""
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is list:
            if len(a) != len(b):
                return False
            work.extend(zip(a, b))
            return True
        if ta is dict:
            if len(a) != len(b):
                return False
            for key, item in a.items():
                if key not in b:
                    return False
                work.append((item, b[key]))
            return True
        if ta is Variant:
            if a.name != b.name or a.type_name != b.type_name:
                return False
            if (a.items is None) != (b.items is None) or (a.fields is None) != (b.fields is None):
                return False
            if a.items is not None:
                work.append((list(a.items), list(b.items)))
            if a.fields is not None:
                work.append((a.fields, b.fields))
            return True
        return a == b if ta in _TYPE_NAMES else a is b or a == b
    if _numeric(ta) and _numeric(tb):
        return a == b
    return False


def equals(a: Any, b: Any) -> bool:
    """Structural equality: maps ignore key order, Int 1 == Float 1.0
    exactly, Bool never equals Int, values of different kinds differ."""
    work = [(a, b)]
    while work:
        x, y = work.pop()
        if x is y and type(x) is not float:
            continue
        if not _pair_equal(x, y, work):
            return False
    return True


def is_a(v: Any, name: str, variant_types: Optional[dict] = None) -> bool:
    """True when `v` is a record of type `name`, a variant named `name`,
    or a variant of the sum type `name`. `variant_types` (variant name ->
    sum type name) lets a bare sum-type name match too."""
    t = type(v)
    if t is Variant:
        if v.name == name or v.type_name == name:
            return True
        return bool(variant_types) and variant_types.get(v.name) == name
    if t is dict or isinstance(v, dict):
        return v.get("_type") == name
    return False


# ---------------------------------------------------------------- copies

def copy_value(v: Any) -> Any:
    """A deep copy of a value (for slot reads); scalars and functions are
    returned as they are."""
    t = type(v)
    if t is not list and t is not dict and t is not Variant:
        return v
    root_holder = [None]
    work = [(v, root_holder, 0)]
    while work:
        value, parent, slot = work.pop()
        t = type(value)
        if t is list:
            copy = list(value)
            parent[slot] = copy
            for i, item in enumerate(copy):
                if type(item) in _CONTAINER_TYPES:
                    work.append((item, copy, i))
        elif t is dict:
            copy = dict(value)
            parent[slot] = copy
            for key, item in copy.items():
                if type(item) in _CONTAINER_TYPES:
                    work.append((item, copy, key))
        elif t is Variant:
            fields = dict(value.fields) if value.fields is not None else None
            items = None
            if value.items is not None:
                items_list = list(value.items)
                for i, item in enumerate(items_list):
                    items_list[i] = copy_value(item) if type(item) in _CONTAINER_TYPES else item
                items = tuple(items_list)
            parent[slot] = Variant(value.type_name, value.name, fields, items)
            if fields is not None:
                for key, item in fields.items():
                    if type(item) in _CONTAINER_TYPES:
                        work.append((item, fields, key))
        else:
            parent[slot] = value
    return root_holder[0]


_CONTAINER_TYPES = frozenset((list, dict, Variant))


# ---------------------------------------------------------------- JSON

def json_float(x: float) -> str:
    """A Float as JSON text: NaN and infinities become null."""
    if x != x or x in (math.inf, -math.inf):
        return "null"
    text = repr(x)
    return text.replace("e+", "e")


def _json_scalar(v: Any, t: type) -> Optional[str]:
    """JSON text of a scalar, or None for containers."""
    if t is str:
        return quote_string(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return json_float(v)
    if v is None:
        return "null"
    if t is list or t is dict or t is Variant or isinstance(v, (list, dict)):
        return None
    plain = _plain_scalar(v)
    if plain is not None:
        return _json_scalar(plain, type(plain))
    return quote_string(function_display(v))


def _variant_json_fields(v: Variant) -> dict:
    """The map a variant serialises as: `_type`, `_variant`, then its
    fields or `_values`."""
    record: dict = {"_type": v.type_name, "_variant": v.name}
    if v.fields is not None:
        record.update(v.fields)
    elif v.items is not None:
        record["_values"] = list(v.items)
    return record


def to_json(v: Any) -> str:
    """Compact JSON text of a value (`{"a":1}`); variants as
    `{"_type":..,"_variant":..,fields}` (tuple payloads under `_values`)."""
    return _render(v, _json_scalar, _json_pieces)


def _json_pieces(value: Any) -> list:
    """The JSON pieces of a list, map or variant."""
    if type(value) is Variant:
        value = _variant_json_fields(value)
    pieces: list = []
    if isinstance(value, list):
        pieces.append("[")
        for i, item in enumerate(value):
            if i:
                pieces.append(",")
            pieces.append((item,))
        pieces.append("]")
    else:
        pieces.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                pieces.append(",")
            pieces.append(quote_string(key if type(key) is str else display(key)) + ":")
            pieces.append((item,))
        pieces.append("}")
    return pieces


def _reject_constant(name: str) -> Any:
    """json.loads hook: NaN/Infinity are not JSON."""
    raise ValueError(f"invalid JSON constant {name}")


def from_json(text: Any, variants: Optional[dict] = None) -> Any:
    """Parse JSON text into Soma values; maps and lists pass through.

    Invalid JSON raises SomaError kind "json". With `variants` (variant
    name -> (type_name, kind)), objects carrying `_type`/`_variant` are
    rebuilt as Variants; kind is "unit", "struct" or "tuple".
    """
    if type(text) is not str:
        if isinstance(text, (list, dict)):
            return text
        raise SomaError("json", f"from_json expects a String, got {type_of(text)}")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        shown = text if len(text) <= 60 else text[:60] + "…"
        raise SomaError("json", f"not valid JSON: {quote_string(shown)} ({_json_error_text(err)})") from None
    if variants:
        value = rebuild_variants(value, variants)
    return value


def _json_error_text(err: Exception) -> str:
    """A short reason for a JSON parse failure."""
    if isinstance(err, json.JSONDecodeError):
        return f"{err.msg[:1].lower()}{err.msg[1:]} at line {err.lineno}, column {err.colno}"
    return str(err) or type(err).__name__


def _as_variant(m: dict, variants: dict) -> Any:
    """The Variant a `_type/_variant` map stands for, or the map itself."""
    name = m.get("_variant")
    entry = variants.get(name) if type(name) is str else None
    if entry is None or entry[0] != m.get("_type"):
        return m
    type_name, kind = entry
    if kind == "tuple":
        values = m.get("_values")
        return Variant(type_name, name, None, tuple(values) if isinstance(values, list) else ())
    if kind == "struct":
        fields = {k: item for k, item in m.items() if k not in ("_type", "_variant")}
        return Variant(type_name, name, fields, None)
    return Variant(type_name, name)


def rebuild_variants(value: Any, variants: dict) -> Any:
    """Replace every `_type/_variant` map inside `value` (bottom-up) by
    its Variant."""
    root = [value]
    order: list = []
    work = [(value, root, 0)]
    while work:
        item, parent, slot = work.pop()
        order.append((item, parent, slot))
        if type(item) is list:
            work.extend((child, item, i) for i, child in enumerate(item))
        elif type(item) is dict:
            work.extend((child, item, key) for key, child in item.items())
    for item, parent, slot in reversed(order):
        if type(item) is dict and "_variant" in item:
            parent[slot] = _as_variant(item, variants)
    return root[0]
