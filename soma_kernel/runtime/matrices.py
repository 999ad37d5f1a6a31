"""Matrices as plain Soma values, and the meaning the operators give them.

A matrix is a non-empty List of equally long, non-empty Lists of numbers
(row-major), so indexing, `len` and printing work unchanged. As in the
reference, `+`, `-` and the product of Int matrices (or of an Int matrix and
an Int) stay exact Ints; everything else is computed in floating point and
made of Floats. `matrix_binary` gives `*` of two matrices the matrix product,
`+`/`-` element-wise, and lets a number broadcast; `compare_mask` makes
`A > k` / `v > k` a 0/1 mask; `matrix_field` reads the `.T` and `.shape`
pseudo-fields. The linalg builtins (builtins/linalg.py) are built on these.
"""

from __future__ import annotations

from typing import Any

from ..core.diagnostics import SomaError
from .values import type_of

Matrix = list[list[float]]


def as_float(fn_name: str, v: Any) -> float:
    """`v` as a Float, or the type error naming `fn_name`."""
    t = type(v)
    if t is int or t is float:
        try:
            return float(v)
        except OverflowError:
            raise SomaError("range", f"{fn_name}: integer too large") from None
    raise SomaError("type", f"{fn_name}: expected a number, got {type_of(v)}")


def is_numeric_matrix(v: Any) -> bool:
    """True when `v` is a non-empty List of non-empty Lists of numbers."""
    if type(v) is not list or not v:
        return False
    for row in v:
        if type(row) is not list or not row:
            return False
        for x in row:
            t = type(x)
            if t is not int and t is not float:
                return False
    return True


def to_matrix(fn_name: str, v: Any) -> Matrix:
    """`v` read as a rectangular matrix of Floats, or the error saying why not."""
    if type(v) is not list or any(type(row) is not list for row in v):
        raise SomaError("type", f"{fn_name}: expected a List of Lists (matrix), got {type_of(v)}")
    if not v:
        raise SomaError("type", f"{fn_name}: matrix is empty")
    rows = [[as_float(fn_name, x) for x in row] for row in v]
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise SomaError("type", f"{fn_name}: ragged matrix (rows of different lengths)")
    if width == 0:
        raise SomaError("type", f"{fn_name}: matrix has 0 columns")
    return rows


def product(a: Matrix, b: Matrix) -> Matrix:
    """The matrix product a·b, or the error when the inner sizes differ."""
    if len(a[0]) != len(b):
        raise SomaError("type", f"matmul: inner dimensions disagree "
                                f"({len(a)}x{len(a[0])} · {len(b)}x{len(b[0])})")
    columns = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in columns] for row in a]


def map_matrix(m: Matrix, fn) -> Matrix:
    """`fn` applied to every element of `m`."""
    return [[fn(x) for x in row] for row in m]


def _elementwise(verb: str, a: Matrix, b: Matrix, fn) -> Matrix:
    """`fn` applied to the elements of two same-shaped matrices pairwise."""
    if len(a) != len(b) or len(a[0]) != len(b[0]):
        raise SomaError("type", f"matrix {verb}: shapes {len(a)}x{len(a[0])} and {len(b)}x{len(b[0])} disagree")
    return [[fn(x, y) for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def _divide(x: float, y: float) -> float:
    """x / y for matrix elements, with Soma's division-by-zero error."""
    if y == 0:
        raise SomaError("division_by_zero", "division by zero")
    return x / y


_SCALAR_OPS = {"+": float.__add__, "-": float.__sub__, "*": float.__mul__, "/": _divide}
_VERBS = {"+": "add", "-": "subtract"}


def _all_ints(m: list) -> bool:
    """True when the (numeric) matrix `m` is rectangular and every element is an Int
    (a ragged one is left to the Float path, which names the problem)."""
    width = len(m[0])
    return all(len(row) == width and all(type(x) is int for x in row) for row in m)


_EXACT_OPS = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__}


def _exact_binary(symbol: str, a: Any, b: Any, left: bool, right: bool) -> Any:
    """`a <symbol> b` in exact Ints when both sides are Int (matrices or an
    Int scalar) and the operator is + - *; None otherwise."""
    fn = _EXACT_OPS.get(symbol)
    if fn is None:
        return None
    if left and right and _all_ints(a) and _all_ints(b):
        if symbol == "*":
            if len(a[0]) != len(b):
                raise SomaError("type", f"matmul: inner dimensions disagree "
                                        f"({len(a)}x{len(a[0])} · {len(b)}x{len(b[0])})")
            columns = list(zip(*b))
            return [[sum(x * y for x, y in zip(row, col)) for col in columns] for row in a]
        return _elementwise(_VERBS[symbol], a, b, fn)
    if left and type(b) is int and _all_ints(a):
        return [[fn(x, b) for x in row] for row in a]
    if right and type(a) is int and _all_ints(b):
        return [[fn(a, y) for y in row] for row in b]
    return None


def matrix_binary(symbol: str, a: Any, b: Any) -> Any:
    """`a <symbol> b` when a numeric matrix is involved, else None.

    matrix * matrix is the product; matrix + / - matrix element-wise;
    a number broadcasts against a matrix for + - * / (either side).
    """
    fn = _SCALAR_OPS.get(symbol)
    if fn is None:
        return None
    left, right = is_numeric_matrix(a), is_numeric_matrix(b)
    if not (left or right):
        return None
    exact = _exact_binary(symbol, a, b, left, right)
    if exact is not None:
        return exact
    if left and right:
        if symbol == "*":
            return product(to_matrix("matmul", a), to_matrix("matmul", b))
        if symbol in _VERBS:
            return _elementwise(_VERBS[symbol], to_matrix(symbol, a), to_matrix(symbol, b), fn)
        return None
    if left and type(b) in (int, float):
        k = as_float(symbol, b)
        return map_matrix(to_matrix(symbol, a), lambda x: fn(x, k))
    if right and type(a) in (int, float):
        k = as_float(symbol, a)
        return map_matrix(to_matrix(symbol, b), lambda x: fn(k, x))
    return None


def _numeric_vector(v: Any) -> bool:
    """True when `v` is a non-empty flat List of numbers."""
    return type(v) is list and bool(v) and all(type(x) is int or type(x) is float for x in v)


def compare_mask(symbol: str, a: Any, b: Any) -> Any:
    """`A <symbol> k` / `v <symbol> k` for a numeric matrix or vector and a
    number: a mask of 1.0 where the comparison holds and 0.0 elsewhere (the
    reference's numpy-style masks); None when the operands are not such a pair."""
    tb = type(b)
    if type(a) is not list or not (tb is int or tb is float):
        return None
    if _numeric_vector(a):
        return [1.0 if _holds(symbol, x, b) else 0.0 for x in a]
    if is_numeric_matrix(a):
        return [[1.0 if _holds(symbol, x, b) else 0.0 for x in row] for row in a]
    return None


def _holds(symbol: str, x, k) -> bool:
    """`x <symbol> k` for two numbers, exact across Int and Float."""
    if symbol == "<":
        return x < k
    if symbol == ">":
        return x > k
    if symbol == "<=":
        return x <= k
    if symbol == ">=":
        return x >= k
    if symbol == "==":
        return x == k
    return x != k


def transpose_of(m: Any) -> Matrix:
    """The transpose of matrix `m` (`transpose(m)`, `m.T`)."""
    return [list(col) for col in zip(*to_matrix("transpose", m))]


def shape_of(m: Any) -> list[int]:
    """[rows, cols] of matrix `m` (`shape(m)`, `m.shape`)."""
    rows = to_matrix("shape", m)
    return [len(rows), len(rows[0])]


MATRIX_FIELDS = {"T": transpose_of, "shape": shape_of}


def matrix_field(value: list, name: str) -> Any:
    """`m.T` / `m.shape` of a list, or None when `name` is no matrix field."""
    read = MATRIX_FIELDS.get(name)
    return None if read is None else read(value)
