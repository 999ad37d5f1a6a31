"""`Record`, the base of the plain data classes: what it gives a class, as `@dataclass` did before it."""

from __future__ import annotations

from typing import Generic, Optional, TypeVar

import pytest

from soma_kernel.core.records import Record, fresh

T = TypeVar("T")


class Step(Record):
    """A record with a required field, a plain default and a fresh list."""

    state: str
    via: Optional[str] = None
    handlers: list[str] = fresh(list)

    @property
    def label(self) -> str:
        """Methods and properties are no fields."""
        return f"{self.state} via {self.via}"


class Interval(Record, frozen=True):
    """A frozen record."""

    lo: int
    hi: int


class Tagged(Record, metadata={"tag": "none"}):
    """A record with a keyword-only field that equality and repr leave out."""

    value: int


class Box(Record, Generic[T], frozen=True):
    """A frozen record that is also generic."""

    item: T


def test_fields_init_and_defaults():
    assert Step.FIELDS == ("state", "via", "handlers")
    step = Step("a")
    assert (step.state, step.via, step.handlers) == ("a", None, [])
    assert Step("a").handlers is not step.handlers
    assert vars(Step(via="x", state="b", handlers=["h"])) == {"state": "b", "via": "x", "handlers": ["h"]}
    assert Step("a").label == "a via None"
    with pytest.raises(TypeError, match="state"):
        Step()
    with pytest.raises(TypeError):
        Step("a", "x", [], "extra")


def test_equality_and_repr_are_the_fields():
    assert Step("a", "x") == Step("a", "x")
    assert Step("a", "x") != Step("a", "y")
    assert Step("a") != Interval(1, 2)
    assert repr(Step("a", handlers=["h"])) == "Step(state='a', via=None, handlers=['h'])"
    nan = float("nan")
    assert Interval(nan, 1) != Interval(float("nan"), 1)
    same = Interval(nan, 1)
    assert same == same  # as for a dataclass: a field is first compared by identity


def test_a_plain_record_is_unhashable_and_a_frozen_one_hashes_by_its_fields():
    with pytest.raises(TypeError):
        hash(Step("a"))
    assert {Interval(1, 2): "x"}[Interval(1, 2)] == "x"
    assert hash(Interval(1, 2)) == hash((1, 2))


def test_a_frozen_record_refuses_changes():
    interval = Interval(1, 2)
    with pytest.raises(AttributeError, match="frozen Interval"):
        interval.lo = 5
    with pytest.raises(AttributeError):
        del interval.hi
    assert (interval.lo, interval.hi) == (1, 2)


def test_metadata_is_keyword_only_and_left_out_of_equality_and_repr():
    assert Tagged.FIELDS == ("value",)
    assert Tagged(1).tag == "none" and Tagged(1, tag="t").tag == "t"
    assert Tagged(1, tag="a") == Tagged(1, tag="b")
    assert repr(Tagged(1, tag="a")) == "Tagged(value=1)"
    with pytest.raises(TypeError):
        Tagged(1, "t")


def test_a_generic_frozen_record():
    assert Box[int](3) == Box(3) and hash(Box(3)) == hash((3,))
    assert repr(Box("x")) == "Box(item='x')"


def test_a_required_field_after_a_defaulted_one_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match="without a default follows"):
        class Bad(Record):
            """A field order no call could fill."""

            first: Optional[str] = None
            second: str
