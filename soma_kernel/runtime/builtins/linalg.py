"""Linear-algebra builtins: small dense matrices (spec: the reference's
linalg group).

A matrix is a plain Soma value: a non-empty List of equally long,
non-empty Lists of numbers (row-major), so indexing (`m[0][1]`), `len`
and printing work unchanged. The builtins compute in floating point and
return Floats, as the reference does. The reference's set is the
constructors, shape, transpose, matmul, det, diag_sum, scale and
flatten_mat; `inv` and `solve` are ours (the reference has none), with
the same error style. Pure Python: the matrices Soma programs build are
small, and numpy's import would cost more than the arithmetic saves.

The matrix values themselves, and what the operators do with them, live in
runtime/matrices.py.
"""

from __future__ import annotations

from typing import Any

from ...core.diagnostics import SomaError
from ..values import type_of
from ..matrices import Matrix, as_float, map_matrix, product, shape_of, to_matrix, transpose_of
from .registry import builtin

GROUP = "linalg"

# Below this absolute value a pivot counts as zero (the matrix as singular).
PIVOT_EPSILON = 1e-12


def _size(fn_name: str, v: Any) -> int:
    """`v` as a non-negative Int (a row or column count)."""
    if type(v) is not int or v < 0:
        raise SomaError("type", f"{fn_name}: expected a non-negative Int, got {type_of(v)}")
    return v


def _flat_numbers(fn_name: str, v: Any) -> list[float]:
    """The numbers of a flat list, or of a matrix read row by row."""
    if type(v) is not list:
        raise SomaError("type", f"{fn_name}: expected a List of numbers, got {type_of(v)}")
    out: list[float] = []
    for x in v:
        if type(x) is list:
            out.extend(as_float(fn_name, y) for y in x)
        else:
            out.append(as_float(fn_name, x))
    return out


def _shaped(fn_name: str, values: list[float], rows: int, cols: int) -> Matrix:
    """`values` cut into `rows` rows of `cols`, or the count error."""
    if len(values) != rows * cols:
        raise SomaError("type", f"{fn_name}: expected {rows * cols} values for {rows}×{cols} matrix, "
                                f"got {len(values)}")
    if rows == 0 or cols == 0:
        raise SomaError("type", f"{fn_name}: a matrix needs at least one row and one column")
    return [values[r * cols:(r + 1) * cols] for r in range(rows)]


def _square(fn_name: str, m: Matrix) -> int:
    """The order of square matrix `m`, or the error when it is not square."""
    if len(m) != len(m[0]):
        raise SomaError("type", f"{fn_name}: matrix must be square, got {len(m)}×{len(m[0])}")
    return len(m)


@builtin(GROUP, "mat(rows: Int, cols: Int, values: List) -> List",
         "A rows×cols matrix filled row by row from `values` (a flat list or a matrix).")
def mat(rows, cols, values):
    return _shaped("mat", _flat_numbers("mat", values), _size("mat", rows), _size("mat", cols))


@builtin(GROUP, "matrix(spec: String) -> List",
         'A matrix written as text: rows split by ";", entries by spaces or commas ("1 2; 3 4").')
def matrix(spec):
    if type(spec) is not str:
        raise SomaError("type", f"matrix: expected a String such as \"1 2; 3 4\", got {type_of(spec)}")
    rows = []
    for number, text in enumerate(part for part in spec.split(";") if part.strip()):
        entries = [item for item in text.replace(",", " ").split()]
        try:
            rows.append([float(item) for item in entries])
        except ValueError:
            raise SomaError("type", f"matrix: cannot read row {number} ({text.strip()!r})") from None
    if not rows:
        raise SomaError("type", "matrix: empty spec")
    if any(len(row) != len(rows[0]) for row in rows):
        raise SomaError("type", "matrix: rows have different lengths")
    return rows


def _vectors(fn_name: str, what: str, vectors: tuple) -> Matrix:
    """The argument lists of `rows`/`cols` as Float lists of one length."""
    if not vectors:
        raise SomaError("type", f"{fn_name}() needs at least one {what}")
    out = []
    for i, v in enumerate(vectors):
        if type(v) is not list or any(type(x) is list for x in v):
            raise SomaError("type", f"{fn_name}: argument {i} must be a List of numbers")
        out.append([as_float(fn_name, x) for x in v])
        if len(out[i]) != len(out[0]):
            raise SomaError("type", f"{fn_name}: {what} {i} has length {len(out[i])}, expected {len(out[0])}")
    if not out[0]:
        raise SomaError("type", f"{fn_name}: a {what} cannot be empty")
    return out


@builtin(GROUP, "rows(r1: List, ...) -> List", "A matrix whose rows are the arguments (each a List of numbers).",
         max_args=None)
def rows(*vectors):
    return _vectors("rows", "row", vectors)


@builtin(GROUP, "cols(c1: List, ...) -> List", "A matrix whose columns are the arguments (each a List of numbers).",
         max_args=None)
def cols(*vectors):
    return [list(row) for row in zip(*_vectors("cols", "column", vectors))]


@builtin(GROUP, "diag(values: List) -> List", "The square matrix with `values` on its diagonal and 0.0 elsewhere.")
def diag(values):
    d = _vectors("diag", "diagonal", (values,))[0]
    return [[d[r] if r == c else 0.0 for c in range(len(d))] for r in range(len(d))]


@builtin(GROUP, "reshape(xs: List, rows: Int, cols: Int) -> List",
         "The numbers of `xs` (flat or a matrix, row by row) as a rows×cols matrix.")
def reshape(xs, rows, cols):
    return _shaped("reshape", _flat_numbers("reshape", xs), _size("reshape", rows), _size("reshape", cols))


@builtin(GROUP, "identity(n: Int) -> List", "The n×n identity matrix (also `eye`).", aliases=("eye",))
def identity(n):
    size = _size("identity", n)
    if size == 0:
        raise SomaError("type", "identity: a matrix needs at least one row and one column")
    return [[1.0 if r == c else 0.0 for c in range(size)] for r in range(size)]


@builtin(GROUP, "zeros(rows: Int, cols: Int) -> List", "A rows×cols matrix of 0.0.")
def zeros(rows, cols):
    return _shaped("zeros", [0.0] * (_size("zeros", rows) * _size("zeros", cols)), rows, cols)


@builtin(GROUP, "ones(rows: Int, cols: Int) -> List", "A rows×cols matrix of 1.0.")
def ones(rows, cols):
    return _shaped("ones", [1.0] * (_size("ones", rows) * _size("ones", cols)), rows, cols)


@builtin(GROUP, "transpose(m: List) -> List", "The transpose of matrix `m` (also `m.T`).")
def transpose(m):
    return transpose_of(m)


@builtin(GROUP, "shape(m: List) -> List", "[rows, cols] of matrix `m` (also `m.shape`).")
def shape(m):
    return shape_of(m)


@builtin(GROUP, "matmul(a: List, b: List) -> List", "The matrix product a·b (also `a * b`).")
def matmul(a, b):
    return product(to_matrix("matmul", a), to_matrix("matmul", b))


@builtin(GROUP, "diag_sum(m: List) -> Float", "The trace of square matrix `m`: the sum of its diagonal.")
def diag_sum(m):
    rows = to_matrix("diag_sum", m)
    return float(sum(rows[i][i] for i in range(_square("diag_sum", rows))))


def _determinant(a: Matrix) -> float:
    """The determinant of square `a` by Gaussian elimination with partial
    pivoting (on a copy); 0.0 as soon as a pivot vanishes."""
    n = len(a)
    a = [row[:] for row in a]
    det = 1.0
    for i in range(n):
        pivot = max(range(i, n), key=lambda r: abs(a[r][i]))
        if abs(a[pivot][i]) < PIVOT_EPSILON:
            return 0.0
        if pivot != i:
            a[i], a[pivot] = a[pivot], a[i]
            det = -det
        det *= a[i][i]
        for r in range(i + 1, n):
            factor = a[r][i] / a[i][i]
            a[r] = [x - factor * y for x, y in zip(a[r], a[i])]
    return det


@builtin(GROUP, "det(m: List) -> Float",
         "The determinant of square matrix `m` (elimination with partial pivoting).")
def det(m):
    rows = to_matrix("det", m)
    _square("det", rows)
    return _determinant(rows)


@builtin(GROUP, "scale(m: List, k: Float) -> List", "Matrix `m` with every element multiplied by `k`.")
def scale(m, k):
    factor = as_float("scale", k)
    return map_matrix(to_matrix("scale", m), lambda x: x * factor)


@builtin(GROUP, "flatten_mat(m: List) -> List", "The elements of matrix `m` row by row, as one flat list.")
def flatten_mat(m):
    return [x for row in to_matrix("flatten_mat", m) for x in row]




def _singular(fn_name: str, what: str) -> SomaError:
    """The error of an elimination that met a vanishing pivot."""
    return SomaError("type", f"{fn_name}: singular matrix (determinant 0) — {what}")


def _gauss_jordan(fn_name: str, a: Matrix, b: Matrix, what: str) -> Matrix:
    """X with a·X = b, by Gauss-Jordan elimination with partial pivoting on
    copies of square `a` and of `b` (as many rows as `a`); raises when `a` is singular."""
    n = len(a)
    a = [row[:] for row in a]
    b = [row[:] for row in b]
    for i in range(n):
        pivot = max(range(i, n), key=lambda r: abs(a[r][i]))
        if abs(a[pivot][i]) < PIVOT_EPSILON:
            raise _singular(fn_name, what)
        a[i], a[pivot] = a[pivot], a[i]
        b[i], b[pivot] = b[pivot], b[i]
        scale_by = a[i][i]
        a[i] = [x / scale_by for x in a[i]]
        b[i] = [x / scale_by for x in b[i]]
        for r in range(n):
            factor = a[r][i]
            if r != i and factor != 0.0:
                a[r] = [x - factor * y for x, y in zip(a[r], a[i])]
                b[r] = [x - factor * y for x, y in zip(b[r], b[i])]
    return b


@builtin(GROUP, "inv(m: List) -> List",
         "The inverse of square matrix `m` (Gauss-Jordan with partial pivoting); "
         "a singular matrix is an error.")
def inv(m):
    rows = to_matrix("inv", m)
    n = _square("inv", rows)
    unit = [[1.0 if r == c else 0.0 for c in range(n)] for r in range(n)]
    return _gauss_jordan("inv", rows, unit, "it has no inverse")


@builtin(GROUP, "solve(a: List, b: List) -> List",
         "x with a·x = b for square matrix `a`: `b` a vector gives a vector, a matrix "
         "gives a matrix; a singular `a` is an error.")
def solve(a, b):
    rows = to_matrix("solve", a)
    n = _square("solve", rows)
    vector = type(b) is list and bool(b) and all(type(x) is not list for x in b)
    rhs = [[as_float("solve", x)] for x in b] if vector else to_matrix("solve", b)
    if len(rhs) != n:
        raise SomaError("type", f"solve: b has {len(rhs)} {'values' if vector else 'rows'} "
                                f"but a has {n} rows")
    x = _gauss_jordan("solve", rows, rhs, "a·x = b has no unique solution")
    return [row[0] for row in x] if vector else x
