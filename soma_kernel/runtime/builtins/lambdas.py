"""Higher-order builtins taking a lambda (spec §9 "lambda"): filter, find,
any, all, count, reduce. A lambda is any callable; it is called as fn(x)."""

from __future__ import annotations

from .checks import expect_function, expect_list, truthy
from .registry import builtin

GROUP = "lambda"


def _items(name: str, xs):
    """The elements to walk: a List, or a Map's {key, value} entries."""
    if type(xs) is dict:
        return [{"key": k, "value": v} for k, v in xs.items()]
    return expect_list(name, xs)


@builtin(GROUP, "filter(list: List, x => Bool) -> List", "Keep elements where the lambda is truthy.")
def filter_(xs, fn):
    """filter([1, 2, 3], x => x > 1) = [2, 3]."""
    items = _items("filter", xs)
    expect_function("filter", fn)
    return [x for x in items if truthy(fn(x))]


@builtin(GROUP, "find(list: List, x => Bool) -> Any", "First element where the lambda is truthy, or ().")
def find(xs, fn):
    """find([1, 2], x => x > 1) = 2."""
    items = _items("find", xs)
    expect_function("find", fn)
    for x in items:
        if truthy(fn(x)):
            return x
    return None


@builtin(GROUP, "any(list: List, x => Bool) -> Bool", "True if the lambda is truthy for at least one element.")
def any_(xs, fn):
    """any([1, 2], x => x > 1) = true."""
    items = _items("any", xs)
    expect_function("any", fn)
    return any(truthy(fn(x)) for x in items)


@builtin(GROUP, "all(list: List, x => Bool) -> Bool", "True if the lambda is truthy for every element (true on empty).")
def all_(xs, fn):
    """all([], x => false) = true."""
    items = _items("all", xs)
    expect_function("all", fn)
    return all(truthy(fn(x)) for x in items)


@builtin(GROUP, "count(list: List, x => Bool) -> Int", "Number of elements where the lambda is truthy.")
def count(xs, fn):
    """count([1, 2, 3], x => x > 1) = 2."""
    items = _items("count", xs)
    expect_function("count", fn)
    return sum(1 for x in items if truthy(fn(x)))


@builtin(GROUP, "reduce(list: List, initial, p => expr) -> Any",
         "Fold the list; the lambda receives {acc, val} and returns the next acc.")
def reduce(xs, initial, fn):
    """reduce([1, 2, 3], 0, p => p.acc + p.val) = 6."""
    items = _items("reduce", xs)
    expect_function("reduce", fn)
    acc = initial
    for x in items:
        acc = fn({"acc": acc, "val": x})
    return acc
