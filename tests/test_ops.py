"""Operators: arithmetic rules, comparisons, equality and their errors."""

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime import ops
from soma_kernel.runtime.values import Variant


def error_of(fn, *args):
    """The SomaError raised by fn(*args)."""
    with pytest.raises(SomaError) as err:
        fn(*args)
    return err.value


def test_division_is_exact():
    assert ops.div(7, 2) == 3.5
    assert ops.div(6, 2) == 3 and type(ops.div(6, 2)) is int
    assert ops.div(-6, 4) == -1.5
    assert ops.div(10 ** 40, 10 ** 20) == 10 ** 20
    assert ops.div(1.0, 4) == 0.25


def test_division_by_zero_kind():
    for fn in (ops.div, ops.mod_):
        err = error_of(fn, 1, 0)
        assert err.kind == "division_by_zero"
    assert error_of(ops.div, 1.5, 0.0).kind == "division_by_zero"


def test_remainder_keeps_dividend_sign():
    assert ops.mod_(-150, 100) == -50
    assert ops.mod_(150, -100) == 50
    assert ops.mod_(7.5, 2) == 1.5


def test_mixed_arithmetic_gives_float():
    assert ops.add(1, 0.5) == 1.5 and type(ops.add(1, 0.5)) is float
    assert type(ops.mul(2, 3)) is int
    assert ops.sub(2 ** 70, 1) == 2 ** 70 - 1


def test_string_and_list_addition():
    assert ops.add("a", "b") == "ab"
    assert ops.add(["a"], [1]) == ["a", 1]
    assert ops.add([1, 2], [3, 4]) == [4, 6]
    assert ops.add([], [1]) == [1]
    assert ops.mul([1, 2], 3) == [3, 6]
    assert ops.sub(10, [1, 2]) == [9, 8]


@pytest.mark.parametrize("fn, a, b, message", [
    (ops.add, "a", 1.5, "cannot add String and Float"),
    (ops.add, 1, "a", "cannot add Int and String"),
    (ops.sub, "a", "b", "cannot subtract String and String"),
    (ops.mul, None, 2, "cannot multiply Unit and Int"),
    (ops.add, True, 1, "cannot add Bool and Int"),
    (ops.lt, 1, "a", "cannot compare Int and String"),
    (ops.ge, 1, None, "cannot compare Int and Unit"),
    (ops.eq, 1, "1", "cannot compare Int and String"),
    (ops.eq, [1], {"a": 1}, "cannot compare List and Map"),
])
def test_type_errors(fn, a, b, message):
    err = error_of(fn, a, b)
    assert err.kind == "type"
    assert err.detail == message
    assert str(err) == f"type: {message}"


def test_comparisons():
    assert ops.lt(1, 1.5) and ops.le(2, 2.0) and ops.gt("b", "a") and ops.ge(3, 3)
    assert ops.lt([1, 2], [1, 3]) and ops.lt([1], [1, 0])
    assert not ops.lt(float("nan"), 1)
    assert ops.lt(2 ** 53, 2 ** 53 + 1.0) is False and ops.lt(2 ** 53, 2 ** 53 + 1)
    assert ops.compare(False, True) == -1


def test_equality():
    assert ops.eq(1, 1.0)
    assert ops.ne(None, 1)
    assert ops.eq(None, None)
    assert ops.eq({"a": [1]}, {"a": [1.0]})
    assert ops.eq(Variant("T", "A"), Variant("T", "A"))
    assert not ops.eq(Variant("T", "A"), Variant("T", "B"))
    assert ops.eq("x", "x") and ops.ne("x", "y")


def test_boolean_operators_need_bools():
    assert ops.not_(True) is False
    assert ops.require_bool(False, "&&") is False
    err = error_of(ops.not_, 1)
    assert err.kind == "type" and "Int" in err.detail
    assert error_of(ops.require_bool, None, "||").kind == "type"


def test_negation():
    assert ops.neg(3) == -3 and ops.neg(-2.5) == 2.5
    assert error_of(ops.neg, "a").detail == "cannot negate String"
