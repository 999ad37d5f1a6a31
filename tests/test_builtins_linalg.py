"""Linear-algebra builtins, the matrix operators and fields, upper-case locals."""

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.session.session import Session
from helpers import call, kind_of


def message_of(name, *args):
    """The message a builtin call raises."""
    with pytest.raises(SomaError) as err:
        call(name, *args)
    return err.value.detail


@pytest.fixture
def session(tmp_path):
    """A fresh session in a temporary directory."""
    return Session(directory=str(tmp_path))


def shown(session, code, key="a"):
    """The text/plain result of running `code` in the session."""
    result = session.execute(code, key)
    assert result.ok, result.error
    return result.result["text/plain"]


def failure(session, code):
    """The rendered error of running `code` in the session."""
    result = session.execute(code, "a")
    assert not result.ok
    return result.error


def test_building_matrices():
    assert call("reshape", [1, 2, 3, 4, 5, 6], 2, 3) == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert call("reshape", [[1, 2], [3, 4]], 1, 4) == [[1.0, 2.0, 3.0, 4.0]]
    assert call("mat", 2, 1, [7, 8]) == [[7.0], [8.0]]
    assert call("identity", 2) == [[1.0, 0.0], [0.0, 1.0]]
    assert call("zeros", 1, 2) == [[0.0, 0.0]]


def test_bad_shapes_are_refused_with_the_count():
    assert message_of("reshape", [1, 2, 3], 2, 2) == "reshape: expected 4 values for 2×2 matrix, got 3"
    assert message_of("mat", 1, 3, [1]) == "mat: expected 3 values for 1×3 matrix, got 1"
    assert kind_of("reshape", [1, "x"], 1, 2) == "type"
    assert message_of("matmul", [[1, 2], [3]], [[1]]) == "matmul: ragged matrix (rows of different lengths)"
    assert kind_of("det", []) == "type"
    assert kind_of("identity", -1) == "type"


def test_transpose_shape_trace():
    m = [[1, 2, 3], [4, 5, 6]]
    assert call("transpose", m) == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert call("shape", m) == [2, 3]
    assert call("diag_sum", [[1, 2], [3, 4]]) == 5.0
    assert message_of("diag_sum", m) == "diag_sum: matrix must be square, got 2×3"


def test_product():
    assert call("matmul", [[1, 2], [3, 4]], [[5, 6], [7, 8]]) == [[19.0, 22.0], [43.0, 50.0]]
    assert call("matmul", [[1, 2, 3]], [[1], [1], [1]]) == [[6.0]]
    assert message_of("matmul", [[1, 2]], [[1, 2]]) == "matmul: inner dimensions disagree (1x2 · 1x2)"


def test_determinant_with_pivoting():
    assert call("det", [[1, 2], [3, 4]]) == pytest.approx(-2.0)
    assert call("det", [[0, 1], [1, 0]]) == pytest.approx(-1.0)
    assert call("det", [[2, 0, 0], [0, 3, 0], [0, 0, 4]]) == pytest.approx(24.0)


def test_singular_determinant_is_zero_and_non_square_is_refused():
    assert call("det", [[1, 2], [2, 4]]) == 0.0
    assert call("det", [[0, 0], [0, 0]]) == 0.0
    assert message_of("det", [[1, 2, 3], [4, 5, 6]]) == "det: matrix must be square, got 2×3"


def test_other_constructors():
    assert call("matrix", "1 2 3; 4, 5, -6") == [[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]]
    assert message_of("matrix", "1 2; 3") == "matrix: rows have different lengths"
    assert kind_of("matrix", "1 x") == "type"
    assert call("rows", [1, 2], [3, 4]) == [[1.0, 2.0], [3.0, 4.0]]
    assert call("cols", [1, 2], [3, 4], [5, 6]) == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    assert message_of("rows", [1, 2], [3]) == "rows: row 1 has length 1, expected 2"
    assert kind_of("cols") == "type"
    assert call("diag", [1, 2]) == [[1.0, 0.0], [0.0, 2.0]]
    assert call("eye", 1) == [[1.0]]
    assert call("ones", 2, 1) == [[1.0], [1.0]]
    assert call("scale", [[1, 2]], 3) == [[3.0, 6.0]]
    assert call("flatten_mat", [[1, 2], [3, 4]]) == [1.0, 2.0, 3.0, 4.0]


def test_operators_on_matrices(session):
    assert shown(session, "[[1, 2], [3, 4]] * [[5, 6], [7, 8]]") == "[[19.0, 22.0], [43.0, 50.0]]"
    assert shown(session, "[[1, 2], [3, 4]] + [[10, 20], [30, 40]]") == "[[11.0, 22.0], [33.0, 44.0]]"
    assert shown(session, "[[1, 2]] - [[1, 1]]") == "[[0.0, 1.0]]"
    assert shown(session, "2 * [[1, 2]]") == "[[2.0, 4.0]]"
    assert shown(session, "[[1, 2]] / 2") == "[[0.5, 1.0]]"
    assert shown(session, '[["a"]] + [["b"]]') == '[["a"], ["b"]]'
    assert "matrix add: shapes 1x2 and 2x1 disagree" in failure(session, "[[1, 2]] + [[1], [2]]")
    assert "division by zero" in failure(session, "[[1, 2]] / 0")


def test_transpose_and_shape_fields(session):
    assert shown(session, "[1, 2, 3, 4, 5, 6].reshape(2, 3).T") == "[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]"
    assert shown(session, "[1, 2, 3, 4, 5, 6].reshape(3, 2).shape") == "[3, 2]"
    assert "cannot read field 'width' of List" in failure(session, "[[1]].width")


def test_upper_case_locals(session):
    program = """cell Algebra {
    on trace_plus(M: List, K: Float) {
        let A = M * M
        let T = 0.0
        for X in [1, 2] { T = T + X }
        return diag_sum(A) + K + T
    }
}"""
    assert session.execute(program, "definition").ok
    assert shown(session, "trace_plus([[1, 2], [3, 4]], 0.5)", "use") == "32.5"
