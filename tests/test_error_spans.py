"""Runtime errors get their position in one place: `SomaError.located` (and `locating` for a wrapped function)."""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError, locating
from soma_kernel.core.spans import Span
from soma_kernel.syntax import ast

AT_CALL = ast.Name("x", span=Span(3, 5, 3, 6, 20, 21))
AT_RULE = Span(1, 1, 1, 9, 0, 8)


def test_a_span_less_error_takes_the_node_span():
    err = SomaError("type", "bad").located(AT_CALL)
    assert err.span == AT_CALL.span


def test_an_error_that_has_a_span_keeps_it_unless_asked_to_move():
    assert SomaError("invariant", "no", AT_RULE).located(AT_CALL).span == AT_RULE
    assert SomaError("invariant", "no", AT_RULE).located(AT_CALL, replace=True).span == AT_CALL.span


def test_no_node_leaves_the_error_as_it_is():
    assert SomaError("type", "bad").located(None).span.line == 0


def test_locating_wraps_a_function_and_places_its_errors():
    def refuse(a, b):
        raise SomaError("type", f"cannot add {a} and {b}")

    with pytest.raises(SomaError) as caught:
        locating(AT_CALL, refuse)(1, "s")
    assert caught.value.span == AT_CALL.span and caught.value.text == "type: cannot add 1 and s"
    assert locating(AT_CALL, lambda a: a + 1)(1) == 2
