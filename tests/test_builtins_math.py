"""Math builtins: rounding, integer division, aggregates, statistics, bits."""

import math

import pytest

from helpers import call, kind_of


def test_rounding_half_away_from_zero():
    assert call("round", 2.5) == 3 and call("round", -2.5) == -3
    assert type(call("round", 2.4)) is int
    assert call("round", 2.345, 2) == 2.35
    assert call("round", 7) == 7
    assert call("to_fixed", 1.005, 2) == "1.01"
    assert call("to_fixed", 2, 3) == "2.000"
    assert call("to_fixed", -1.5, 0) == "-2"
    assert call("floor", -1.5) == -2 and call("ceil", 1.2) == 2
    assert kind_of("floor", math.inf) == "range"


def test_integer_divisions():
    assert call("div_round", 10125 * 600, 120000) == 51
    assert call("div_round", -7, 2) == -4
    assert call("floor_div", -150, 100) == -2
    assert call("mod", -150, 100) == 50
    assert call("divmod", -7, 2) == [-4, 1]
    assert call("idiv", -7, 2) == -3
    for name in ("idiv", "floor_div", "mod", "div_round"):
        assert kind_of(name, 1, 0) == "division_by_zero"


def test_elementary_functions():
    assert call("sqrt", 16) == 4.0 and math.isnan(call("sqrt", -1))
    assert call("pow", 2, 10) == 1024.0 and type(call("pow", 2, 10)) is float
    assert call("ipow", 2, 100) == 2 ** 100
    assert kind_of("ipow", 2, -1) == "range"
    assert call("abs", -9223372036854775808) == 9223372036854775808
    assert call("log", 0) == -math.inf
    assert call("ln", math.e) == 1.0
    assert call("atan2", 1, 1) == pytest.approx(math.pi / 4)


def test_min_max_two_values_or_list():
    assert call("min", 3, 1) == 1 and call("max", 3, 1) == 3
    assert call("min", [2, 1.5, 3]) == 1.5
    assert call("max", [1, 2.5]) == 2.5
    assert call("min", [1, 2.5]) == 1.0 and type(call("min", [1, 2.5])) is float
    assert call("min", []) is None
    assert kind_of("min", 1, "a") == "type"


def test_sums_and_means():
    assert call("sum", []) == 0 and call("sum", [1, 2]) == 3
    assert call("sum", [1, 2.5]) == 3.5
    assert call("sum", [10 ** 30, 1]) == 10 ** 30 + 1
    assert call("product", []) == 1 and call("product", [2, 3]) == 6
    assert call("avg", [1, 2]) == 1.5
    assert call("avg", [2, 4]) == 3 and type(call("avg", [2, 4])) is int
    assert call("avg", []) is None
    assert kind_of("sum", [1, "a"]) == "type"


def test_statistics():
    assert call("median", [3, 1, 2]) == 2
    assert call("median", [1, 2]) == 1.5
    assert call("median", [1, 3]) == 2 and type(call("median", [1, 3])) is int
    assert call("pstdev", [2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert call("stddev", [2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert call("stdev", [1, 2, 3, 4]) == pytest.approx(1.2909944487358056)
    assert call("variance", [1, 2, 3, 4]) == pytest.approx(1.6666666666666667)
    assert call("pvariance", [1, 2, 3, 4]) == 1.25
    assert kind_of("stdev", [1]) == "range"
    assert call("quantile", [1, 2, 3, 4], 0.5) == 2.5
    assert call("quantile", [10, 20, 30], 0.25) == 15.0


def test_clamp_gcd_isqrt_powmod():
    assert call("clamp", 15, 0, 10) == 10 and call("clamp", -1, 0, 10) == 0 and call("clamp", 5, 0, 10) == 5
    assert kind_of("clamp", 1, 5, 0) == "range"
    assert call("gcd", 12, -18) == 6
    assert call("sqrt_int", 17) == 4
    assert kind_of("sqrt_int", -1) == "range"
    assert call("pow_mod", 4, 13, 497) == 445
    assert kind_of("pow_mod", 2, 3, 0) == "division_by_zero"


def test_random_ranges():
    assert 0.0 <= call("random") < 1.0
    assert all(0 <= call("random", 3) < 3 for _ in range(50))
    assert all(5 <= call("random", 5, 7) < 7 for _ in range(50))


def test_bit_operations():
    assert call("band", 12, 10) == 8 and call("bor", 12, 10) == 14 and call("bxor", 12, 10) == 6
    assert call("bnot", 0) == -1
    assert call("shl", 1, 64) == 2 ** 64 and call("shr", -8, 1) == -4
    assert call("bit_test", 5, 2) == 1 and call("bit_test", 5, 1) == 0
    assert call("bit_set", 0, 3) == 8 and call("bit_clr", 15, 0) == 14
    assert call("bit_next", 0b10100, 3) == 4 and call("bit_next", 4, 3) == -1
    assert call("bit_len", 255) == 8
