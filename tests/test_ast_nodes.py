"""The AST node base and `Span`: construction, defaults, equality, repr and hashing as the phases rely on them."""

from __future__ import annotations

import pytest

from soma_kernel.core import records
from soma_kernel.core.spans import NO_SPAN, Span
from soma_kernel.syntax import ast

AT = Span(2, 3, 2, 9, 14, 20)


def test_fields_are_the_declared_ones_in_order_without_the_span():
    assert ast.Edge.FIELDS == ("src", "dst", "guard", "excepts")
    assert ast.Break.FIELDS == ()
    assert ast.CellDecl.FIELDS[:3] == ("name", "kind", "face")


def test_fields_are_given_by_position_or_by_name_and_the_span_by_name_only():
    by_position = ast.Edge("a", "b", None, ["c"], span=AT)
    by_name = ast.Edge(dst="b", src="a", excepts=["c"], span=AT)
    assert (by_position.src, by_position.dst, by_position.guard, by_position.excepts) == ("a", "b", None, ["c"])
    assert vars(by_name) == vars(by_position)
    assert by_name.span is AT
    with pytest.raises(TypeError):
        ast.Edge("a", "b", None, [], AT)


def test_a_missing_field_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="dst"):
        ast.Edge("a")
    with pytest.raises(TypeError, match="colour"):
        ast.Edge("a", "b", colour="red")


def test_defaults_and_fresh_containers():
    first, second = ast.Edge("a", "b"), ast.Edge("a", "b")
    assert first.guard is None and first.span is NO_SPAN
    assert first.excepts == [] and first.excepts is not second.excepts
    assert ast.CellDecl("C", "cell").options == {}
    given: list[str] = []
    assert ast.Edge("a", "b", excepts=given).excepts is given


def test_every_node_class_can_be_made_and_shows_its_fields():
    for cls in vars(ast).values():
        if isinstance(cls, type) and issubclass(cls, ast.Node) and cls is not ast.Node:
            required = [name for name in cls.FIELDS if cls._DEFAULTS[name] is records._REQUIRED]
            node = cls(*[f"<{name}>" for name in required], span=AT)
            assert [getattr(node, name) for name in required] == [f"<{name}>" for name in required]
            assert repr(node).startswith(f"{cls.__name__}(")


def test_equality_compares_the_fields_and_the_class_never_the_span():
    assert ast.Name("x", span=AT) == ast.Name("x")
    assert ast.Name("x") != ast.Name("y")
    assert ast.Name("x") != ast.PBind("x")
    assert ast.Binary("+", ast.Name("a"), ast.Literal(1)) == ast.Binary("+", ast.Name("a"), ast.Literal(1, span=AT))
    assert ast.Break() == ast.Break() and ast.Break() != ast.Continue()
    assert ast.Name("x") != "x"
    assert ast.Name("x") in [ast.Literal(1), ast.Name("x", span=AT)]


def test_repr_shows_the_fields_not_the_span():
    edge = ast.Edge("a", "b", ast.Name("ok"), span=AT)
    assert repr(edge) == "Edge(src='a', dst='b', guard=Name(id='ok'), excepts=[])"
    assert repr(ast.Break(span=AT)) == "Break()"


def test_nodes_are_not_hashable_but_spans_are():
    with pytest.raises(TypeError):
        hash(ast.Name("x"))
    assert {Span(2, 3, 2, 9, 14, 20): "here"}[AT] == "here"
    assert Span(1, 1, 1, 2, 0, 1) != Span(1, 1, 1, 2, 0, 2)
    assert AT != (2, 3, 2, 9, 14, 20)
    assert repr(AT) == "Span(line=2, col=3, end_line=2, end_col=9, start=14, end=20)"

