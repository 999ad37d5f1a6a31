"""Soma operators, one function per operator, for the interpreter's hot loop.

Each function takes Soma values (see values.py) and returns a value or
raises SomaError. The common cases (Int/Float/String operands) are tested
first with exact `type(x) is T` checks; the slower paths (lists, mixed
kinds, errors) live in helpers.

Rules (spec §7.3): `/` is exact (Int when the quotient is exact, else
Float), division by zero raises kind `division_by_zero`, `%` keeps the
dividend's sign, Int op Float gives a Float, `+` concatenates Strings and
non-numeric Lists, arithmetic on numeric Lists is element-wise (or
broadcast against a number), `==` is structural and refuses values of
different kinds (except `()`), ordering against `()` raises, `&&`, `||`
and `!` need Bools. A numeric matrix or vector compared with a number gives a
0/1 mask of the same shape (`[1, 5] > 2` is `[0.0, 1.0]`), as in the reference.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..core.diagnostics import SomaError
from .limits import MAX_VALUE_LENGTH, check_length, too_long
from .matrices import compare_mask, matrix_binary
from .values import Variant, equals, type_of

_VERBS = {
    "+": "add",
    "-": "subtract",
    "*": "multiply",
    "/": "divide",
    "%": "take the remainder of",
}


def _type_error(symbol: str, a: Any, b: Any) -> SomaError:
    """The error for an operator applied to operands it does not accept."""
    return SomaError("type", f"cannot {_VERBS[symbol]} {type_of(a)} and {type_of(b)}")


def _division_by_zero() -> SomaError:
    """The error raised by `/`, `%` and the integer divisions on a zero divisor."""
    return SomaError("division_by_zero", "division by zero")


def _too_large() -> SomaError:
    """The error for an Int too large to mix with a Float."""
    return SomaError("range", "Int too large to convert to Float")


def _is_numeric_list(xs: list) -> bool:
    """True when every element of `xs` is an Int or a Float."""
    for x in xs:
        t = type(x)
        if t is not int and t is not float:
            return False
    return True


def _elementwise(symbol: str, scalar_op: Callable, a: Any, b: Any) -> Any:
    """Apply an arithmetic operator to matrices (see builtins/linalg.py),
    to numeric lists element-wise, or broadcast a number against a numeric
    list; None when none applies."""
    ta, tb = type(a), type(b)
    if ta is list or tb is list:
        result = matrix_binary(symbol, a, b)
        if result is not None:
            return result
    if ta is list and tb is list:
        if not (_is_numeric_list(a) and _is_numeric_list(b)):
            return None
        if len(a) != len(b):
            raise SomaError("type", f"cannot {_VERBS[symbol]} lists of lengths {len(a)} and {len(b)}")
        return [scalar_op(x, y) for x, y in zip(a, b)]
    if ta is list and (tb is int or tb is float) and _is_numeric_list(a):
        return [scalar_op(x, b) for x in a]
    if tb is list and (ta is int or ta is float) and _is_numeric_list(b):
        return [scalar_op(a, y) for y in b]
    return None


def _add_slow(a: Any, b: Any) -> Any:
    """`+` for lists (element-wise when numeric and equal length, else
    concatenation) and the error for everything else."""
    ta, tb = type(a), type(b)
    if ta is list and tb is list:
        result = matrix_binary("+", a, b)
        if result is not None:
            return result
        if a and b and len(a) == len(b) and _is_numeric_list(a) and _is_numeric_list(b):
            return [x + y for x, y in zip(a, b)]
        check_length("+", len(a) + len(b), "elements")
        return a + b
    result = _elementwise("+", add, a, b)
    if result is None:
        raise _type_error("+", a, b)
    return result


def add(a: Any, b: Any) -> Any:
    """`a + b`: numbers, String concatenation, list concat / element-wise."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        try:
            return a + b
        except OverflowError:
            raise _too_large() from None
    if ta is str and tb is str:
        if len(a) + len(b) > MAX_VALUE_LENGTH:
            raise too_long("+", len(a) + len(b))
        return a + b
    return _add_slow(a, b)


def sub(a: Any, b: Any) -> Any:
    """`a - b` on numbers (and numeric lists element-wise)."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        try:
            return a - b
        except OverflowError:
            raise _too_large() from None
    result = _elementwise("-", sub, a, b)
    if result is None:
        raise _type_error("-", a, b)
    return result


def mul(a: Any, b: Any) -> Any:
    """`a * b` on numbers (and numeric lists element-wise)."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        try:
            return a * b
        except OverflowError:
            raise _too_large() from None
    result = _elementwise("*", mul, a, b)
    if result is None:
        raise _type_error("*", a, b)
    return result


def div(a: Any, b: Any) -> Any:
    """`a / b`, exact: an Int when the quotient is exact, else a Float."""
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise _division_by_zero()
        quotient, remainder = divmod(a, b)
        if remainder == 0:
            return quotient
        try:
            return a / b
        except OverflowError:
            raise _too_large() from None
    if (ta is int or ta is float) and (tb is int or tb is float):
        if b == 0:
            raise _division_by_zero()
        try:
            return a / b
        except OverflowError:
            raise _too_large() from None
    result = _elementwise("/", div, a, b)
    if result is None:
        raise _type_error("/", a, b)
    return result


def mod_(a: Any, b: Any) -> Any:
    """`a % b`: the remainder keeps the dividend's sign (-150 % 100 = -50)."""
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if b == 0:
            raise _division_by_zero()
        remainder = abs(a) % abs(b)
        return -remainder if a < 0 else remainder
    if (ta is int or ta is float) and (tb is int or tb is float):
        if b == 0:
            raise _division_by_zero()
        try:
            return math.fmod(a, b)
        except OverflowError:
            raise _too_large() from None
    raise _type_error("%", a, b)


def neg(a: Any) -> Any:
    """Unary `-`."""
    t = type(a)
    if t is int or t is float:
        return -a
    if t is list and _is_numeric_list(a):
        return [-x for x in a]
    raise SomaError("type", f"cannot negate {type_of(a)}")


def require_bool(v: Any, op: str) -> bool:
    """Return `v` when it is a Bool, else raise the type error for `op`
    (`&&`, `||`, `!`, or a condition)."""
    if type(v) is bool:
        return v
    raise SomaError("type", f"operator {op} expects Bool operands, got {type_of(v)}")


def not_(a: Any) -> bool:
    """Unary `!` (Bool only)."""
    if a is True:
        return False
    if a is False:
        return True
    return not require_bool(a, "!")


# ---------------------------------------------------------------- comparison

def _compare_error(a: Any, b: Any) -> SomaError:
    """The error for comparing values of different kinds."""
    return SomaError("type", f"cannot compare {type_of(a)} and {type_of(b)}")


def _compare_scalars(a: Any, b: Any) -> int:
    """-1/0/1 for two orderable non-list values; raises when they are of
    kinds that do not order (NaN compares as equal)."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return (a > b) - (a < b)
    if ta is tb and (ta is str or ta is bool):
        return (a > b) - (a < b)
    raise _compare_error(a, b)


def compare(a: Any, b: Any) -> int:
    """Total comparison for ordering (sort, min, max): -1, 0 or 1.

    Numbers compare exactly across Int/Float, Strings by code point, Bools
    false < true, Lists lexicographically (shorter first on a tie); any
    other pairing raises `cannot compare X and Y`.
    """
    frames: list = []
    while True:
        if type(a) is list and type(b) is list:
            frames.append([a, b, 0])
        else:
            order = _compare_scalars(a, b)
            if order:
                return order
        while frames:
            frame = frames[-1]
            xs, ys, i = frame
            if i < len(xs) and i < len(ys):
                frame[2] = i + 1
                a, b = xs[i], ys[i]
                break
            frames.pop()
            order = (len(xs) > len(ys)) - (len(xs) < len(ys))
            if order:
                return order
        else:
            return 0


def lt(a: Any, b: Any) -> bool:
    """`a < b`."""
    ta, tb = type(a), type(b)
    if ((ta is int or ta is float) and (tb is int or tb is float)) or (ta is str and tb is str):
        return a < b
    return _ordered_slow("<", a, b)


def le(a: Any, b: Any) -> bool:
    """`a <= b`."""
    ta, tb = type(a), type(b)
    if ((ta is int or ta is float) and (tb is int or tb is float)) or (ta is str and tb is str):
        return a <= b
    return _ordered_slow("<=", a, b)


def gt(a: Any, b: Any) -> bool:
    """`a > b`."""
    ta, tb = type(a), type(b)
    if ((ta is int or ta is float) and (tb is int or tb is float)) or (ta is str and tb is str):
        return a > b
    return _ordered_slow(">", a, b)


def ge(a: Any, b: Any) -> bool:
    """`a >= b`."""
    ta, tb = type(a), type(b)
    if ((ta is int or ta is float) and (tb is int or tb is float)) or (ta is str and tb is str):
        return a >= b
    return _ordered_slow(">=", a, b)


_ORDER_TESTS = {"<": lambda order: order < 0, "<=": lambda order: order <= 0,
                ">": lambda order: order > 0, ">=": lambda order: order >= 0}


def _ordered_slow(symbol: str, a: Any, b: Any) -> Any:
    """An ordering past the number/String fast path: a 0/1 mask for a numeric
    matrix or vector against a number (matrices.compare_mask), else the total
    order of two Lists or two Bools; other pairs raise."""
    mask = compare_mask(symbol, a, b)
    if mask is not None:
        return mask
    _orderable_pair(a, b)
    return _ORDER_TESTS[symbol](compare(a, b))


def _orderable_pair(a: Any, b: Any) -> bool:
    """True when `a` and `b` (not both numbers or Strings) can be
    ordered: two Lists or two Bools; raise otherwise."""
    ta, tb = type(a), type(b)
    if ta is tb and (ta is list or ta is bool):
        return True
    raise _compare_error(a, b)


def _same_kind(a: Any, b: Any) -> bool:
    """True when `==` may compare `a` and `b` (same kind, numbers mixed)."""
    ta, tb = type(a), type(b)
    if ta is tb:
        return True
    if (ta is int or ta is float) and (tb is int or tb is float):
        return True
    return type_of(a) == type_of(b)


def eq(a: Any, b: Any) -> bool:
    """`a == b`: structural; `()` compares with anything; other kinds
    that differ raise `cannot compare X and Y`."""
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int or ta is bool or ta is float):
        return a == b
    if a is None or b is None:
        return a is b
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a == b
    if ta is list and (tb is int or tb is float):
        mask = compare_mask("==", a, b)
        if mask is not None:
            return mask
    if not _same_kind(a, b):
        raise _compare_error(a, b)
    if ta is Variant or ta is list or ta is dict:
        return equals(a, b)
    return a is b or a == b


def ne(a: Any, b: Any) -> Any:
    """`a != b` (a 0/1 mask for a numeric matrix or vector against a number)."""
    if type(a) is list:
        mask = compare_mask("!=", a, b)
        if mask is not None:
            return mask
    return not eq(a, b)
