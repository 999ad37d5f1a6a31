"""Pipeline builtins over List<Map> rows (spec §9 "pipeline"): filtering,
sorting, aggregating, grouping and joining tables of records."""

from __future__ import annotations

from functools import cmp_to_key
from typing import Any, Callable

from ...core.diagnostics import SomaError
from .. import ops
from ..values import Variant, display, equals, type_of
from .checks import expect_int, expect_list, expect_str, field_name, field_of, key_of
from .collections import UNHASHABLE, dedup_key, is_descending
from .registry import builtin

GROUP = "pipeline"

_FILTER_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": ops.gt,
    ">=": ops.ge,
    "<": ops.lt,
    "<=": ops.le,
    "==": equals,
    "=": equals,
    "!=": lambda a, b: not equals(a, b),
}


def _matches(op: Callable, left: Any, right: Any) -> bool:
    """Apply a filter comparison; values that do not compare (or give a 0/1 mask,
    a list field against a number) never match."""
    try:
        return op(left, right) is True
    except SomaError:
        return False


@builtin(GROUP, 'filter_by(rows: List<Map>, field | r => key, op, value) -> List<Map>',
         "Keep rows whose `field` compares true against `value` (op defaults to ==).", min_args=3, max_args=4)
def filter_by(rows, field, op, value=None):
    """filter_by(rows, "age", ">", 30)."""
    items = expect_list("filter_by", rows)
    read = key_of("filter_by", field)
    if value is None and op not in _FILTER_OPS:
        op, value = "==", op
    comparison = _FILTER_OPS.get(op)
    if comparison is None:
        raise SomaError("type", f'filter_by() op must be one of > >= < <= == !=, got "{display(op)}"')
    return [row for row in items if _matches(comparison, read(row), value)]


_KIND_RANK = {"Unit": 9, "Bool": 1, "Int": 0, "Float": 0, "String": 2, "List": 3, "Map": 4, "Variant": 5}


def _key_compare(a: Any, b: Any) -> int:
    """Order sort keys: comparable values by value, otherwise by kind
    (numbers, Bools, Strings, Lists…, () last)."""
    try:
        return ops.compare(a, b)
    except SomaError:
        rank_a = _KIND_RANK.get(type_of(a), 8)
        rank_b = _KIND_RANK.get(type_of(b), 8)
        return (rank_a > rank_b) - (rank_a < rank_b)


def sort_rows(items: list, key_of: Callable[[Any], Any], descending: bool) -> list:
    """Stable sort of rows by a computed key."""
    keyed = [(key_of(row), row) for row in items]
    keys = [k for k, _ in keyed]
    if all(type(k) is int or (type(k) is float and k == k) for k in keys) or all(type(k) is str for k in keys):
        keyed.sort(key=lambda pair: pair[0], reverse=descending)
    else:
        order = cmp_to_key(_key_compare)
        keyed.sort(key=lambda pair: order(pair[0]), reverse=descending)
    return [row for _, row in keyed]


@builtin(GROUP, 'sort_by(rows: List, field | x => key, order?: "desc") -> List',
         "Stable sort by a field or a key function (a list key sorts on several keys).")
def sort_by(rows, key, order=None):
    """sort_by(rows, "total", "desc")."""
    items = expect_list("sort_by", rows)
    descending = is_descending("sort_by", order)
    return sort_rows(items, key_of("sort_by", key), descending)


@builtin(GROUP, "top(rows: List, n: Int) -> List", "First n elements.")
def top(rows, n):
    """top([1, 2, 3], 2) = [1, 2]."""
    count = expect_int("top", n)
    return expect_list("top", rows)[: max(count, 0)]


@builtin(GROUP, "bottom(rows: List, n: Int) -> List", "Last n elements.")
def bottom(rows, n):
    """bottom([1, 2, 3], 2) = [2, 3]."""
    count = expect_int("bottom", n)
    items = expect_list("bottom", rows)
    return items[len(items) - count:] if count > 0 else []


def _as_number(v: Any) -> Any:
    """A numeric value of a field: Ints and Floats as they are, a numeric
    String as its number, anything else None."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is str:
        text = v.strip()
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return None
    return None


def _field_numbers(rows: list, read: Callable[[Any], Any]) -> list:
    """The numeric values `read` finds across rows (others skipped)."""
    numbers = []
    for row in rows:
        number = _as_number(read(row))
        if number is not None:
            numbers.append(number)
    return numbers


@builtin(GROUP, "sum_by(rows: List<Map>, field | r => key) -> Int|Float",
         "Sum of a field across rows (exact Int when all are Ints).")
def sum_by(rows, field):
    """sum_by(rows, "amount")."""
    return sum(_field_numbers(expect_list("sum_by", rows), key_of("sum_by", field)))


@builtin(GROUP, "avg_by(rows: List<Map>, field | r => key) -> Int|Float",
         "Mean of a field; Int when whole, () when empty.")
def avg_by(rows, field):
    """avg_by(rows, "score")."""
    numbers = _field_numbers(expect_list("avg_by", rows), key_of("avg_by", field))
    if not numbers:
        return None
    return ops.div(sum(numbers), len(numbers))


def _extreme_row(name: str, rows: Any, field: Any, smaller: bool) -> Any:
    """The first row with the smallest (or largest) numeric `field`."""
    best_row, best_value = None, None
    read = key_of(name, field)
    for row in expect_list(name, rows):
        value = _as_number(read(row))
        if value is None:
            continue
        if best_value is None or (value < best_value if smaller else value > best_value):
            best_row, best_value = row, value
    return best_row


@builtin(GROUP, "min_by(rows: List<Map>, field | r => key) -> Map", "Row with the smallest value of `field`, or ().")
def min_by(rows, field):
    """min_by(rows, "price")."""
    return _extreme_row("min_by", rows, field, True)


@builtin(GROUP, "max_by(rows: List<Map>, field | r => key) -> Map", "Row with the largest value of `field`, or ().")
def max_by(rows, field):
    """max_by(rows, "price")."""
    return _extreme_row("max_by", rows, field, False)


@builtin(GROUP, "pluck(rows: List<Map>, field | r => key) -> List",
         "One field from every row (missing fields become ()).")
def pluck(rows, field):
    """pluck(rows, "name")."""
    read = key_of("pluck", field)
    return [read(row) for row in expect_list("pluck", rows)]


@builtin(GROUP, "group_by(rows: List<Map>, field | r => key) -> Map<String, List>",
         "Group rows into a map keyed by the field's (or key function's) stringified value.")
def group_by(rows, field):
    """group_by(rows, "team") / group_by(rows, r => r.team)."""
    groups: dict[str, list] = {}
    read = key_of("group_by", field)
    for row in expect_list("group_by", rows):
        groups.setdefault(display(read(row)), []).append(row)
    return groups


@builtin(GROUP, "count_by(rows: List<Map>, field | r => key, value) -> Int",
         "Number of rows whose `field` stringifies equal to `value`.")
def count_by(rows, field, value):
    """count_by(rows, "status", "open")."""
    wanted = display(value)
    read = key_of("count_by", field)
    return sum(1 for row in expect_list("count_by", rows) if display(read(row)) == wanted)


@builtin(GROUP, "select(rows: List<Map>, fields...) -> List<Map>", "Project each row down to the named fields.",
         min_args=1, max_args=None)
def select(rows, *fields):
    """select(rows, "id", "name")."""
    names = list(fields[0]) if len(fields) == 1 and type(fields[0]) is list else list(fields)
    result = []
    for row in expect_list("select", rows):
        source = row if type(row) is dict else {}
        result.append({name: source[name] for name in names if name in source})
    return result


_AGGREGATES = ("sum", "avg", "min", "max", "count")


def _aggregate(func: str, numbers: list, rows: list) -> Any:
    """One aggregate over a group's numeric column values."""
    if func == "count":
        return len(rows)
    if func == "sum":
        return sum(numbers)
    if not numbers:
        return None
    if func == "avg":
        return ops.div(sum(numbers), len(numbers))
    return min(numbers) if func == "min" else max(numbers)


def _parse_aggregate(spec: Any) -> tuple[str, str]:
    """("col", "func") from a "col:func" argument."""
    column, sep, func = expect_str("agg", spec).partition(":")
    if not sep or func not in _AGGREGATES:
        raise SomaError("type", f'agg() expects "column:sum|avg|min|max|count", got "{spec}"')
    return column, func


@builtin(GROUP, 'agg(rows: List<Map>, group_field, "col:func"...) -> List<Map>',
         "Group + aggregate (sum|avg|min|max|count); every group also gets a `count`.", min_args=2, max_args=None)
def agg(rows, group_field, *specs):
    """agg(rows, "team", "score:sum") = [{team, score_sum, count}, …]."""
    group_field = field_name("agg", group_field)
    parsed = [_parse_aggregate(spec) for spec in specs]
    groups: dict[Any, tuple[Any, list]] = {}
    for row in expect_list("agg", rows):
        value = field_of(row, group_field)
        groups.setdefault(display(value), (value, []))[1].append(row)
    result = []
    for value, members in groups.values():
        out = {group_field: value}
        for column, func in parsed:
            numbers = _field_numbers(members, lambda row, column=column: field_of(row, column))
            out[f"{column}_{func}"] = _aggregate(func, numbers, members)
        out["count"] = len(members)
        result.append(out)
    return result


def _index_rows(rows: list, key: Any) -> dict:
    """Right-hand rows indexed by their join key (scalar keys only)."""
    index: dict = {}
    for row in rows:
        marker = dedup_key(field_of(row, key))
        index.setdefault(marker, []).append(row)
    return index


def _joined(left_row: Any, right_row: Any) -> dict:
    """A right row's fields under a left row's (left fields win)."""
    merged = dict(left_row) if type(left_row) is dict else {}
    if type(right_row) is dict:
        for k, v in right_row.items():
            if k not in merged:
                merged[k] = v
    return merged


def _join(name: str, left: Any, right: Any, key: Any, keep_unmatched: bool) -> list:
    """Inner or left join of two row lists on `key`."""
    right_rows = expect_list(name, right)
    key = field_name(name, key)
    index = _index_rows(right_rows, key)
    result = []
    for row in expect_list(name, left):
        value = field_of(row, key)
        marker = dedup_key(value)
        if marker is UNHASHABLE:
            matches = [r for r in right_rows if equals(field_of(r, key), value)]
        else:
            matches = index.get(marker, [])
        if value is None:
            matches = []
        for match in matches:
            result.append(_joined(row, match))
        if not matches and keep_unmatched:
            result.append(dict(row) if type(row) is dict else row)
    return result


@builtin(GROUP, "inner_join(left: List<Map>, right: List<Map>, key) -> List<Map>",
         "Merge rows whose `key` matches in both lists (left fields win).")
def inner_join(left, right, key):
    """inner_join(orders, users, "user_id")."""
    return _join("inner_join", left, right, key, False)


@builtin(GROUP, "left_join(left: List<Map>, right: List<Map>, key) -> List<Map>",
         "Keep every left row, merging matching right-row fields when found.")
def left_join(left, right, key):
    """left_join(orders, users, "user_id")."""
    return _join("left_join", left, right, key, True)
