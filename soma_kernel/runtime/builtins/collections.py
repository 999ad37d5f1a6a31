"""Collection builtins (spec §9 "collection"): building and reshaping
Lists and Maps. Every builtin returns a new value; arguments are never
modified."""

from __future__ import annotations

from functools import cmp_to_key
from typing import Any

from ...core.diagnostics import SomaError
from .. import ops
from ..limits import check_length
from ..values import Variant, display, equals
from .checks import expect_int, expect_list, expect_map, expect_str, key_of
from .registry import builtin

GROUP = "collection"

MAX_RANGE = 10_000_000


@builtin(GROUP, "list(items...) -> List", "Build a list; list(existing_list, more...) appends to a copy.",
         min_args=0, max_args=None)
def list_(*items):
    """list(1, 2) = [1, 2]; list([1], 2) = [1, 2]."""
    if items and type(items[0]) is list:
        return items[0] + list(items[1:])
    return list(items)


@builtin(GROUP, "map(key, value, ...) -> Map | map(list, x => expr) -> List",
         "Build a map from key-value pairs, or transform each list element with a lambda.",
         min_args=0, max_args=None)
def map_(*args):
    """map("a", 1) = {"a": 1}; map([1, 2], x => x * 2) = [2, 4]."""
    if len(args) == 2 and callable(args[1]) and type(args[1]) is not Variant and type(args[0]) in (list, dict):
        fn = args[1]
        source = args[0]
        if type(source) is dict:
            source = entries(source)
        return [fn(x) for x in source]
    if len(args) % 2:
        raise SomaError("type", f"map() needs key-value pairs (an even number of arguments), got {len(args)}")
    it = iter(args)
    return {key if type(key) is str else display(key): value for key, value in zip(it, it)}


@builtin(GROUP, "push(list: List, items...) -> List", "A new list with the items appended.", min_args=1, max_args=None)
def push(xs, *items):
    """push([1], 2, 3) = [1, 2, 3]."""
    check_length("push", len(expect_list("push", xs)) + len(items), "elements")
    return xs + list(items)


@builtin(GROUP, "nth(list: List, i: Int) -> Any", "Element at index i, or () when out of bounds.")
def nth(xs, i):
    """nth([1, 2], 5) = ()."""
    expect_list("nth", xs)
    index = expect_int("nth", i)
    return xs[index] if 0 <= index < len(xs) else None


@builtin(GROUP, "reverse(list: List) -> List", "The list in reverse order (a String reversed too).")
def reverse(xs):
    """reverse([1, 2]) = [2, 1]."""
    if type(xs) is str:
        return xs[::-1]
    return expect_list("reverse", xs)[::-1]


def range_object(start: Any, end: Any, step: Any = 1) -> range:
    """The Python range behind `range(start, end, step)` (lazy: the
    interpreter's `for` iterates it without building a list)."""
    expect_int("range", start)
    expect_int("range", end)
    expect_int("range", step)
    if step == 0:
        raise SomaError("range", "range() step cannot be 0")
    return range(start, end, step)


@builtin(GROUP, "range(start: Int, end: Int, step?: Int) -> List<Int>",
         "Integers from start toward end (exclusive); the step may be negative.")
def range_(start, end, step=1):
    """range(0, 3) = [0, 1, 2]; range(3, 0, -1) = [3, 2, 1]."""
    numbers = range_object(start, end, step)
    count = max(0, -((start - end) // step))
    if count > MAX_RANGE:
        raise SomaError("range", f"range() of {count} elements exceeds {MAX_RANGE} (iterate it in a for loop)")
    return list(numbers)


def _all_numbers(xs: list) -> bool:
    """True when every element is an Int or a non-NaN Float."""
    for x in xs:
        t = type(x)
        if t is float:
            if x != x:
                return False
        elif t is not int:
            return False
    return True


def _all_strings(xs: list) -> bool:
    """True when every element is a String."""
    for x in xs:
        if type(x) is not str:
            return False
    return True


def sorted_values(xs: list, descending: bool = False) -> list:
    """Stable sort of Soma values (numbers, Strings, Bools, Lists);
    incomparable kinds raise `cannot compare X and Y`."""
    if _all_numbers(xs) or _all_strings(xs):
        return sorted(xs, reverse=descending)
    return sorted(xs, key=cmp_to_key(ops.compare), reverse=descending)


def is_descending(name: str, order: Any) -> bool:
    """True for the "desc" order argument ("asc" or () keep ascending)."""
    if order is None:
        return False
    text = expect_str(name, order).lower()
    if text in ("desc", "descending"):
        return True
    if text in ("asc", "ascending"):
        return False
    raise SomaError("type", f'{name}() order must be "asc" or "desc", got "{order}"')


@builtin(GROUP, "sort(list: List, order?: \"desc\") -> List", "Sort scalars ascending (or \"desc\").")
def sort(xs, order=None):
    """sort([3, 1, 2]) = [1, 2, 3]."""
    return sorted_values(expect_list("sort", xs), is_descending("sort", order))


@builtin(GROUP, "flatten(list: List) -> List", "Flatten one level of nested lists.")
def flatten(xs):
    """flatten([[1], 2, [3, [4]]]) = [1, 2, 3, [4]]."""
    result: list = []
    for item in expect_list("flatten", xs):
        if type(item) is list:
            result.extend(item)
        else:
            result.append(item)
    return result


@builtin(GROUP, "zip(a: List, b: List) -> List<{left, right}>", "Pair elements positionally; stops at the shorter list.")
def zip_(a, b):
    """zip([1], ["x"]) = [{"left": 1, "right": "x"}]."""
    return [{"left": x, "right": y} for x, y in zip(expect_list("zip", a), expect_list("zip", b))]


@builtin(GROUP, "enumerate(list: List) -> List<{index, value}>", "Attach a 0-based index to each element.")
def enumerate_(xs):
    """enumerate(["a"]) = [{"index": 0, "value": "a"}]."""
    return [{"index": i, "value": x} for i, x in enumerate(expect_list("enumerate", xs))]


@builtin(GROUP, "with(m: Map, key, value, ...) -> Map | with(list: List, i: Int, value) -> List",
         "Copy of the map with pairs inserted, or of the list with element i replaced.",
         min_args=3, max_args=None)
def with_(target, *pairs):
    """with(map("a", 1), "b", 2) = {"a": 1, "b": 2}."""
    if type(target) is list:
        if len(pairs) != 2:
            raise SomaError("type", f"with(list, i, value) takes 3 arguments, got {len(pairs) + 1}")
        index = expect_int("with", pairs[0])
        if not -len(target) <= index < len(target):
            raise SomaError("index", f"index {index} out of range for list of length {len(target)}")
        copy = list(target)
        copy[index] = pairs[1]
        return copy
    copy = dict(expect_map("with", target))
    if len(pairs) % 2:
        raise SomaError("type", "with() needs key-value pairs after the map")
    it = iter(pairs)
    for key, value in zip(it, it):
        copy[key if type(key) is str else display(key)] = value
    return copy


@builtin(GROUP, "without(m: Map, keys...) -> Map", "Copy of the map with the given keys removed.", min_args=1, max_args=None)
def without(m, *keys):
    """without(map("a", 1, "b", 2), "a") = {"b": 2}."""
    drop = {key if type(key) is str else display(key) for key in keys}
    return {k: v for k, v in expect_map("without", m).items() if k not in drop}


@builtin(GROUP, "merge(a: Map, b: Map) -> Map", "Copy of `a` with all entries of `b` inserted (b wins).")
def merge(a, b):
    """merge(map("a", 1), map("a", 2)) = {"a": 2}."""
    result = dict(expect_map("merge", a))
    result.update(expect_map("merge", b))
    return result


@builtin(GROUP, "keys(m: Map) -> List<String>", "Keys of a map, in insertion order.")
def keys(m):
    """keys(map("a", 1)) = ["a"]."""
    return list(expect_map("keys", m))


@builtin(GROUP, "values(m: Map) -> List", "Values of a map, in insertion order.")
def values(m):
    """values(map("a", 1)) = [1]."""
    return list(expect_map("values", m).values())


@builtin(GROUP, "entries(m: Map) -> List<{key, value}>", "Key/value records of a map.")
def entries(m):
    """entries(map("a", 1)) = [{"key": "a", "value": 1}]."""
    return [{"key": k, "value": v} for k, v in expect_map("entries", m).items()]


def dedup_key(v: Any) -> Any:
    """A hashable key equal for structurally equal scalars (1 and 1.0
    share a key, true and 1 do not); None for containers."""
    t = type(v)
    if t is bool:
        return ("bool", v)
    if t is int or t is float or t is str or v is None:
        return v
    return UNHASHABLE


UNHASHABLE = object()


def unique_by(items: list, key_of) -> list:
    """The items whose key (via key_of) is seen for the first time."""
    seen: set = set()
    seen_containers: list = []
    result: list = []
    for item in items:
        key = key_of(item)
        marker = dedup_key(key)
        if marker is UNHASHABLE:
            if any(equals(key, other) for other in seen_containers):
                continue
            seen_containers.append(key)
        else:
            if marker in seen:
                continue
            seen.add(marker)
        result.append(item)
    return result


@builtin(GROUP, "distinct(rows: List, field?) -> List", "Unique elements, or the unique values of `field`.")
def distinct(xs, field=None):
    """distinct([1, 1, 2]) = [1, 2]."""
    items = expect_list("distinct", xs)
    if field is None:
        return unique_by(items, lambda x: x)
    read = key_of("distinct", field)
    return unique_by([read(row) for row in items], lambda x: x)


@builtin(GROUP, "distinct_by(rows: List<Map>, field | r => key) -> List<Map>",
         "The first row per distinct value of `field`.", aliases=("unique_by",))
def distinct_by(rows, field):
    """distinct_by(rows, "id") keeps the first row of each id."""
    return unique_by(expect_list("distinct_by", rows), key_of("distinct_by", field))
