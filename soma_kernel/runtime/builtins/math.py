"""Math builtins: rounding, integer division, elementary functions,
aggregates over lists, statistics, bit operations (spec §9 "math").

Ints stay exact (Python ints are arbitrary precision); rounding that the
reference does "on the decimal text" goes through `decimal.Decimal` of the
Float's shortest text.
"""

from __future__ import annotations

import math as _m
import random as _random
import statistics
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import reduce as _reduce
from typing import Any

from ...core.diagnostics import SomaError
from .. import ops
from ..values import format_float, type_of
from .checks import expect_int, expect_list, expect_number
from .registry import builtin

GROUP = "math"

# The largest Int an exact power or shift may build (2^26 bits, about 20
# million decimal digits): beyond it the process would stall or run out of memory.
MAX_RESULT_BITS = 1 << 26


def _zero_divisor(b: Any) -> None:
    """Raise kind division_by_zero when `b` is zero."""
    if b == 0:
        raise SomaError("division_by_zero", "division by zero")


def decimal_text(x: int | float) -> Decimal:
    """The exact decimal a number reads as (a Float by its shortest text)."""
    if type(x) is int:
        return Decimal(x)
    if x != x or x in (_m.inf, -_m.inf):
        raise SomaError("range", f"cannot round {x}")
    return Decimal(repr(float(x)))


def fixed_text(x: int | float, digits: int) -> str:
    """`x` with exactly `digits` decimals, rounded half away from zero on
    its decimal text (to_fixed(1.005, 2) = "1.01")."""
    if type(x) is float and (x != x or x in (_m.inf, -_m.inf)):
        return "NaN" if x != x else ("inf" if x > 0 else "-inf")
    try:
        quantum = Decimal(1).scaleb(-max(digits, 0))
        return format(decimal_text(x).quantize(quantum, rounding=ROUND_HALF_UP), "f")
    except InvalidOperation:
        raise SomaError("range", f"to_fixed: {digits} digits is too many") from None


@builtin(GROUP, "to_fixed(x: Float, digits: Int) -> String",
         "x with exactly `digits` decimals, rounded half away from zero on the decimal text.")
def to_fixed(x, digits):
    """to_fixed(1.005, 2) = "1.01"."""
    return fixed_text(expect_number("to_fixed", x), expect_int("to_fixed", digits))


@builtin(GROUP, "div_round(n: Int, d: Int) -> Int",
         "Exact integer division rounded to the nearest, half away from zero.")
def div_round(n, d):
    """div_round(-7, 2) = -4."""
    expect_int("div_round", n)
    expect_int("div_round", d)
    _zero_divisor(d)
    quotient, remainder = divmod(abs(n), abs(d))
    if 2 * remainder >= abs(d):
        quotient += 1
    return -quotient if (n < 0) != (d < 0) else quotient


@builtin(GROUP, "floor_div(a: Int, b: Int) -> Int", "Division rounded toward -infinity.")
def floor_div(a, b):
    """floor_div(-150, 100) = -2."""
    expect_number("floor_div", a)
    expect_number("floor_div", b)
    _zero_divisor(b)
    result = a // b
    return int(result) if type(result) is float and result == result else result


@builtin(GROUP, "mod(a: Int, b: Int) -> Int", "Modulo with the divisor's sign: mod(-150, 100) = 50.")
def mod(a, b):
    """Python `%` semantics."""
    expect_number("mod", a)
    expect_number("mod", b)
    _zero_divisor(b)
    return a % b


@builtin(GROUP, "divmod(a: Int, b: Int) -> List", "[floor_div(a, b), mod(a, b)].")
def divmod_(a, b):
    """q * b + r == a with 0 <= r < |b|."""
    return [floor_div(a, b), mod(a, b)]


@builtin(GROUP, "abs(x: Int|Float) -> Int|Float", "Absolute value, arbitrary precision.")
def abs_(x):
    """abs(-3) = 3."""
    return abs(expect_number("abs", x))


def _round_half_away(x: float) -> int:
    """The Int nearest to `x`, halves away from zero (exact binary value)."""
    if x != x or x in (_m.inf, -_m.inf):
        raise SomaError("range", f"cannot round {format_float(x)} to an Int")
    return int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@builtin(GROUP, "round(x: Float, digits?: Int) -> Int|Float",
         "Round half away from zero to an Int, or keep `digits` decimals (a Float).")
def round_(x, digits=None):
    """round(2.5) = 3, round(2.345, 2) = 2.35."""
    expect_number("round", x)
    if digits is None:
        return x if type(x) is int else _round_half_away(x)
    expect_int("round", digits)
    if type(x) is float and (x != x or x in (_m.inf, -_m.inf)):
        return x
    try:
        quantum = Decimal(1).scaleb(-digits)
        return float(decimal_text(x).quantize(quantum, rounding=ROUND_HALF_UP))
    except InvalidOperation:
        if digits > 0:
            return float(x)
        raise SomaError("range", f"round(): {digits} digits is out of range") from None


def _finite(x: float, name: str) -> float:
    """`x` when it is a finite Float, kind range otherwise."""
    if x != x or x in (_m.inf, -_m.inf):
        raise SomaError("range", f"{name}() of a non-finite Float")
    return x


@builtin(GROUP, "floor(x: Float) -> Int", "Largest integer <= x.")
def floor(x):
    """floor(-1.5) = -2."""
    expect_number("floor", x)
    return x if type(x) is int else _m.floor(_finite(x, "floor"))


@builtin(GROUP, "ceil(x: Float) -> Int", "Smallest integer >= x.")
def ceil(x):
    """ceil(1.2) = 2."""
    expect_number("ceil", x)
    return x if type(x) is int else _m.ceil(_finite(x, "ceil"))


def _float_fn(name: str, fn) -> Any:
    """A one-argument Float function that answers NaN/inf like IEEE
    instead of raising."""

    def apply(x):
        value = float(expect_number(name, x))
        try:
            return fn(value)
        except ValueError:
            return _m.nan
        except OverflowError:
            return _m.inf

    apply.__name__ = name
    return apply


def _log(x: float) -> float:
    """Natural log with IEEE answers at 0 (-inf) and below (NaN)."""
    if x == 0:
        return -_m.inf
    return _m.log(x)


def _log10(x: float) -> float:
    """Base-10 log with IEEE answers at 0 and below."""
    if x == 0:
        return -_m.inf
    return _m.log10(x)


for _name, _fn, _doc in (
    ("sqrt", _m.sqrt, "Square root."),
    ("sin", _m.sin, "Sine (radians)."),
    ("cos", _m.cos, "Cosine (radians)."),
    ("tan", _m.tan, "Tangent (radians)."),
    ("atan", _m.atan, "Arc tangent."),
    ("exp", _m.exp, "e raised to the power x."),
    ("log", _log, "Natural logarithm."),
    ("ln", _log, "Natural logarithm (alias of log)."),
    ("log10", _log10, "Base-10 logarithm."),
):
    builtin(GROUP, f"{_name}(x: Int|Float) -> Float", _doc)(_float_fn(_name, _fn))


@builtin(GROUP, "atan2(y: Float, x: Float) -> Float", "Arc tangent of y/x, quadrant-aware.")
def atan2(y, x):
    """atan2(1, 1) = pi/4."""
    return _m.atan2(float(expect_number("atan2", y)), float(expect_number("atan2", x)))


@builtin(GROUP, "pow(base: Int|Float, exp: Int|Float) -> Float", "base raised to exp (always a Float).")
def pow_(base, exponent):
    """pow(2, 10) = 1024.0."""
    b = float(expect_number("pow", base))
    e = float(expect_number("pow", exponent))
    try:
        return _m.pow(b, e)
    except ValueError:
        return _m.nan
    except OverflowError:
        return _m.inf if b > 0 or e % 2 == 0 else -_m.inf


@builtin(GROUP, "ipow(base: Int, exp: Int) -> Int", "Exact integer power (exp >= 0).")
def ipow(base, exponent):
    """ipow(2, 100) is exact."""
    expect_int("ipow", base)
    expect_int("ipow", exponent)
    if exponent < 0:
        raise SomaError("range", "ipow() needs a non-negative exponent")
    if abs(base) > 1 and exponent * (abs(base).bit_length() - 1) > MAX_RESULT_BITS:
        raise _too_large("ipow", " — use pow() for a Float approximation")
    return base ** exponent


def _too_large(name: str, hint: str = "") -> SomaError:
    """The refusal of an exact result too large to build."""
    return SomaError("range", f"{name}(): the result would exceed {MAX_RESULT_BITS} bits "
                              f"(about 20 million digits){hint}")


def _numbers(name: str, xs: list) -> list:
    """`xs` when every element is an Int or a Float."""
    for x in xs:
        t = type(x)
        if t is not int and t is not float:
            raise SomaError("type", f"{name}() expects a list of numbers, found {type_of(x)}")
    return xs


def _extreme(name: str, args: tuple, pick_smaller: bool) -> Any:
    """min/max of two values or of one list; Float if any element is."""
    if len(args) == 1:
        items = expect_list(name, args[0])
        if not items:
            return None
    elif len(args) == 2:
        items = list(args)
    else:
        raise SomaError("type", f"{name}() takes 1 or 2 arguments, got {len(args)}")
    best = items[0]
    for item in items[1:]:
        order = ops.compare(item, best)
        if (order < 0) if pick_smaller else (order > 0):
            best = item
    if type(best) is int and any(type(x) is float for x in items):
        return float(best)
    return best


@builtin(GROUP, "min(a, b) -> Int|Float | min(list: List) -> Int|Float",
         "Smaller of two numbers, or the minimum of a list (Float if any element is).",
         min_args=1, max_args=2)
def min_(*args):
    """min(3, 1) = 1; min([2, 1.5]) = 1.5."""
    return _extreme("min", args, True)


@builtin(GROUP, "max(a, b) -> Int|Float | max(list: List) -> Int|Float",
         "Larger of two numbers, or the maximum of a list (Float if any element is).",
         min_args=1, max_args=2)
def max_(*args):
    """max(3, 1) = 3."""
    return _extreme("max", args, False)


@builtin(GROUP, "sum(list: List) -> Int|Float", "Sum of a list of numbers (Int-exact unless a Float is present); 0 when empty.")
def sum_(xs):
    """sum([1, 2.5]) = 3.5."""
    items = _numbers("sum", expect_list("sum", xs))
    return sum(items)


@builtin(GROUP, "product(list: List) -> Int|Float", "Product of a list of numbers; 1 when empty.")
def product(xs):
    """product([2, 3]) = 6."""
    items = _numbers("product", expect_list("product", xs))
    return _reduce(lambda a, b: a * b, items, 1)


@builtin(GROUP, "avg(list: List) -> Int|Float", "Mean by the rule of `/` (exact Ints stay Ints); () when empty.")
def avg(xs):
    """avg([1, 2]) = 1.5, avg([2, 4]) = 3."""
    items = _numbers("avg", expect_list("avg", xs))
    if not items:
        return None
    return ops.div(sum(items), len(items))


@builtin(GROUP, "median(xs: List) -> Int|Float", "Middle value of the sorted list (mean of the two middles when even).")
def median(xs):
    """median([3, 1, 2]) = 2; median([1, 2]) = 1.5."""
    items = sorted(_numbers("median", expect_list("median", xs)))
    if not items:
        return None
    middle = len(items) // 2
    if len(items) % 2:
        return items[middle]
    return ops.div(items[middle - 1] + items[middle], 2)


def _statistic(name: str, fn, xs: Any, minimum: int) -> float:
    """Apply a `statistics` function to a list of numbers as a Float."""
    items = _numbers(name, expect_list(name, xs))
    if len(items) < minimum:
        plural = "value" if minimum == 1 else "values"
        raise SomaError("range", f"{name}() needs at least {minimum} {plural}")
    return float(fn(items))


@builtin(GROUP, "pstdev(xs: List) -> Float", "Population standard deviation.", aliases=("stddev",))
def pstdev(xs):
    """Divide by n."""
    return _statistic("pstdev", statistics.pstdev, xs, 1)


@builtin(GROUP, "stdev(xs: List) -> Float", "Sample standard deviation (n - 1); needs two values.")
def stdev(xs):
    """Divide by n - 1."""
    return _statistic("stdev", statistics.stdev, xs, 2)


@builtin(GROUP, "variance(xs: List) -> Float", "Sample variance (n - 1).")
def variance(xs):
    """Divide by n - 1."""
    return _statistic("variance", statistics.variance, xs, 2)


@builtin(GROUP, "pvariance(xs: List) -> Float", "Population variance (n).")
def pvariance(xs):
    """Divide by n."""
    return _statistic("pvariance", statistics.pvariance, xs, 1)


@builtin(GROUP, "idiv(a: Int, b: Int) -> Int", "Integer division truncating toward zero.")
def idiv(a, b):
    """idiv(-7, 2) = -3."""
    expect_number("idiv", a)
    expect_number("idiv", b)
    _zero_divisor(b)
    if type(a) is int and type(b) is int:
        quotient = abs(a) // abs(b)
        return -quotient if (a < 0) != (b < 0) else quotient
    return int(_finite(a / b, "idiv"))


@builtin(GROUP, "clamp(v, lo, hi) -> Int|Float", "Constrain v to [lo, hi]; errors if lo > hi.")
def clamp(v, lo, hi):
    """clamp(15, 0, 10) = 10."""
    for x in (v, lo, hi):
        expect_number("clamp", x)
    if lo > hi:
        raise SomaError("range", "clamp() needs lo <= hi")
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@builtin(GROUP, "random(min?: Int, max?: Int) -> Float|Int",
         "Float in [0, 1), or an Int in [0, max) / [min, max).", pure=False)
def random(*bounds):
    """random() / random(n) / random(a, b)."""
    if not bounds:
        return _random.random()
    if len(bounds) > 2:
        raise SomaError("type", f"random() takes 0 to 2 arguments, got {len(bounds)}")
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    expect_int("random", low)
    expect_int("random", high)
    if high <= low:
        raise SomaError("range", "random() needs a non-empty range")
    return _random.randrange(low, high)


@builtin(GROUP, "gcd(a: Int, b: Int) -> Int", "Greatest common divisor (absolute values).")
def gcd(a, b):
    """gcd(12, -18) = 6."""
    return _m.gcd(expect_int("gcd", a), expect_int("gcd", b))


@builtin(GROUP, "sqrt_int(n: Int) -> Int", "Integer square root; errors on negative input.")
def sqrt_int(n):
    """sqrt_int(17) = 4."""
    if expect_int("sqrt_int", n) < 0:
        raise SomaError("range", "sqrt_int() of a negative number")
    return _m.isqrt(n)


@builtin(GROUP, "pow_mod(base: Int, exp: Int, m: Int) -> Int", "Modular exponentiation; errors if m is zero.")
def pow_mod(base, exponent, modulus):
    """pow_mod(4, 13, 497) = 445."""
    for x in (base, exponent, modulus):
        expect_int("pow_mod", x)
    _zero_divisor(modulus)
    try:
        return pow(base, exponent, modulus)
    except ValueError:
        raise SomaError("range", "pow_mod(): base has no inverse modulo m") from None


def _bits(name: str, *values: Any) -> None:
    """Check that every operand of a bit operation is an Int."""
    for v in values:
        expect_int(name, v)


def _bit_index(name: str, i: int) -> int:
    """A bit index or shift count (non-negative)."""
    if i < 0:
        raise SomaError("range", f"{name}() needs a non-negative bit index")
    return i


@builtin(GROUP, "band(a: Int, b: Int) -> Int", "Bitwise AND.")
def band(a, b):
    """band(12, 10) = 8."""
    _bits("band", a, b)
    return a & b


@builtin(GROUP, "bor(a: Int, b: Int) -> Int", "Bitwise OR.")
def bor(a, b):
    """bor(12, 10) = 14."""
    _bits("bor", a, b)
    return a | b


@builtin(GROUP, "bxor(a: Int, b: Int) -> Int", "Bitwise XOR.")
def bxor(a, b):
    """bxor(12, 10) = 6."""
    _bits("bxor", a, b)
    return a ^ b


@builtin(GROUP, "bnot(a: Int) -> Int", "Bitwise NOT.")
def bnot(a):
    """bnot(0) = -1."""
    _bits("bnot", a)
    return ~a


@builtin(GROUP, "shl(a: Int, n: Int) -> Int", "Exact left shift (a * 2^n).")
def shl(a, n):
    """shl(1, 64) = 18446744073709551616."""
    _bits("shl", a, n)
    if a != 0 and _bit_index("shl", n) + a.bit_length() > MAX_RESULT_BITS:
        raise _too_large("shl")
    return a << _bit_index("shl", n)


@builtin(GROUP, "shr(a: Int, n: Int) -> Int", "Arithmetic shift right by n bits.")
def shr(a, n):
    """shr(-8, 1) = -4."""
    _bits("shr", a, n)
    return a >> _bit_index("shr", n)


@builtin(GROUP, "bit_test(a: Int, i: Int) -> Int", "1 if bit i of a is set, else 0.")
def bit_test(a, i):
    """bit_test(5, 2) = 1."""
    _bits("bit_test", a, i)
    return (a >> _bit_index("bit_test", i)) & 1


@builtin(GROUP, "bit_set(a: Int, i: Int) -> Int", "a with bit i set.")
def bit_set(a, i):
    """bit_set(0, 3) = 8."""
    _bits("bit_set", a, i)
    if _bit_index("bit_set", i) >= MAX_RESULT_BITS and a >= 0:
        raise _too_large("bit_set")
    return a | (1 << _bit_index("bit_set", i)) if i < MAX_RESULT_BITS else a


@builtin(GROUP, "bit_clr(a: Int, i: Int) -> Int", "a with bit i cleared.")
def bit_clr(a, i):
    """bit_clr(15, 0) = 14."""
    _bits("bit_clr", a, i)
    if _bit_index("bit_clr", i) >= MAX_RESULT_BITS and a >= 0:
        return a
    if i >= MAX_RESULT_BITS:
        raise _too_large("bit_clr")
    return a & ~(1 << i)


@builtin(GROUP, "bit_next(a: Int, i: Int) -> Int", "Index of the lowest set bit at or above i, or -1.")
def bit_next(a, i):
    """bit_next(0b10100, 3) = 4."""
    _bits("bit_next", a, i)
    rest = a >> _bit_index("bit_next", i)
    if rest == 0:
        return -1
    return i + (rest & -rest).bit_length() - 1


@builtin(GROUP, "bit_len(a: Int) -> Int", "Number of significant bits.")
def bit_len(a):
    """bit_len(255) = 8."""
    _bits("bit_len", a)
    return a.bit_length()
