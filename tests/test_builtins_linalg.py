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
    # Int matrices (and an Int scalar) stay exact Ints for + - *, as in the reference
    assert shown(session, "[[1, 2], [3, 4]] * [[5, 6], [7, 8]]") == "[[19, 22], [43, 50]]"
    assert shown(session, "[[1, 2], [3, 4]] + [[10, 20], [30, 40]]") == "[[11, 22], [33, 44]]"
    assert shown(session, "[[1, 2]] - [[1, 1]]") == "[[0, 1]]"
    assert shown(session, "2 * [[1, 2]]") == "[[2, 4]]"
    assert shown(session, "[[9007199254740993]] + [[0]]") == "[[9007199254740993]]"
    # a Float anywhere, or `/`, computes in floating point
    assert shown(session, "[[1.5, 2], [3, 4]] * [[1, 0], [0, 1]]") == "[[1.5, 2.0], [3.0, 4.0]]"
    assert shown(session, "[[1, 2]] + 0.5") == "[[1.5, 2.5]]"
    assert shown(session, "[[1, 2]] / 2") == "[[0.5, 1.0]]"
    assert "matmul: inner dimensions disagree (1x2 · 1x2)" in failure(session, "[[1, 2]] * [[3, 4]]")
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


def test_inverse():
    assert call("inv", [[4, 7], [2, 6]]) == [pytest.approx([0.6, -0.7]), pytest.approx([-0.2, 0.4])]
    assert call("inv", [[0, 1], [1, 0]]) == [[0.0, 1.0], [1.0, 0.0]]   # needs a row swap
    assert call("inv", [[2]]) == [[0.5]]


def test_inverse_refuses_singular_and_non_square_matrices():
    assert message_of("inv", [[1, 2], [2, 4]]) == "inv: singular matrix (determinant 0) — it has no inverse"
    assert message_of("inv", [[1, 2, 3], [4, 5, 6]]) == "inv: matrix must be square, got 2×3"
    assert kind_of("inv", [[1, 2], [2, 4]]) == "type"
    assert kind_of("inv", "nope") == "type"


def test_solve_a_vector_or_a_matrix_right_hand_side():
    assert call("solve", [[2, 1], [1, 3]], [5, 10]) == pytest.approx([1.0, 3.0])
    assert call("solve", [[0, 2], [3, 0]], [4, 9]) == pytest.approx([3.0, 2.0])
    x = call("solve", [[2, 1], [1, 3]], [[5, 1], [10, 3]])
    assert [pytest.approx(row) for row in x] == [[1.0, 0.0], [3.0, 1.0]]


def test_solve_refuses_singular_systems_and_mismatched_sizes():
    assert (message_of("solve", [[1, 2], [2, 4]], [1, 2])
            == "solve: singular matrix (determinant 0) — a·x = b has no unique solution")
    assert message_of("solve", [[1, 2], [3, 4]], [1, 2, 3]) == "solve: b has 3 values but a has 2 rows"
    assert message_of("solve", [[1, 2], [3, 4]], [[1, 2]]) == "solve: b has 1 rows but a has 2 rows"
    assert message_of("solve", [[1, 2, 3]], [1]) == "solve: matrix must be square, got 1×3"


def test_comparison_masks(session):
    assert shown(session, "[1, 5, 3] > 2") == "[0.0, 1.0, 1.0]"
    assert shown(session, "[[1, 5], [3, 0]] >= 3") == "[[0.0, 1.0], [1.0, 0.0]]"
    assert shown(session, "[1, 2] == 1") == "[1.0, 0.0]"
    assert shown(session, "[1, 2] != 1") == "[0.0, 1.0]"
    assert shown(session, "[9007199254740993] > 9007199254740992") == "[1.0]"   # Ints compare exactly
    assert shown(session, "sum([4, 1, 7] < 5)") == "2.0"
    # only a numeric list against a number is a mask; the rest is as before
    assert shown(session, "[1, 2] < [1, 3]") == "true"
    assert "cannot compare List and Int" in failure(session, '["a"] > 1')
    assert "a condition must be a Bool, got List" in failure(session, "if [1, 2] > 1 { 1 } else { 2 }")
    # a list field against a number gives a mask, which is no match for filter_by
    assert shown(session, 'filter_by([map("v", [1, 5]), map("v", 9)], "v", ">", 2)') == '[{"v": 9}]'


def test_a_mask_in_a_handler_condition_is_refused_like_any_non_bool(session):
    program = """cell M {
    on over(xs: List, k: Int) {
        if xs > k { return "yes" }
        return "no"
    }
    on count_over(xs: List, k: Int) { return sum(xs > k) }
}"""
    assert session.execute(program, "definition").ok
    assert shown(session, "count_over([1, 5, 9], 4)", "use") == "2.0"
    assert "a condition must be a Bool, got List" in failure(session, "over([1, 5], 2)")


MATRIX_LOOP = """cell Grow {
    on join(m: List, other: List) {
        let acc = m
        acc = acc + other
        return acc
    }
    on join_literal(m: List) {
        let acc = m
        acc = acc + [[5, 6], [7, 8], [9, 10]]
        return acc
    }
    on rows_of(xs: List) {
        let acc = []
        for x in xs { acc = acc + [[x, x]] }
        return acc
    }
}"""


def test_self_rebuild_never_joins_matrices_of_different_row_counts(session):
    assert session.execute(MATRIX_LOOP, "definition").ok
    assert ("matrix add: shapes 1x2 and 3x2 disagree"
            in failure(session, "join([[1, 2]], [[5, 6], [7, 8], [9, 10]])"))
    assert "matrix add: shapes 2x2 and 3x2 disagree" in failure(session, "join_literal([[1, 2], [3, 4]])")
    session.execute("let m = [[1, 2]]", "top")
    assert "matrix add: shapes 1x2 and 2x2 disagree" in failure(session, "m = m + [[3, 4], [5, 6]]")
    assert shown(session, "m", "top2") == "[[1, 2]]"
    # an empty list grows by concatenation; the rest is the element-wise sum the reference gives
    assert shown(session, "rows_of([1, 2])", "use") == "[[3, 3]]"
    assert shown(session, 'join([["a"]], [["b"], ["c"]])', "use") == '[["a"], ["b"], ["c"]]'
