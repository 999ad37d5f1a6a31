"""Value representation: display forms, equality, JSON, copies, is_a."""

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.values import (Variant, copy_value, display, display_inner, equals, from_json,
                                        is_a, to_json, type_of)

DENY = Variant("Decision", "Deny", {"reason": "late"})
DECLINED = Variant("Decision", "Declined", None, ("x", 2))
APPROVE = Variant("Decision", "Approve")


class Lambda:
    """A stand-in for the interpreter's lambda objects."""

    display_name = "<lambda(x)>"

    def __call__(self, x):
        return x


@pytest.mark.parametrize("value, expected", [
    (1, "Int"), (1.5, "Float"), ("s", "String"), (True, "Bool"), ([], "List"), ({}, "Map"),
    (None, "Unit"), (DENY, "Variant"), (Lambda(), "Function"), (len, "Function"),
])
def test_type_of_names_every_kind(value, expected):
    assert type_of(value) == expected


@pytest.mark.parametrize("value, expected", [
    (42, "42"), (-7, "-7"), (10 ** 30, "1" + "0" * 30),
    (5.0, "5.0"), (3.5, "3.5"), (0.1 + 0.2, "0.30000000000000004"), (1e20, "100000000000000000000.0"),
    (1e-7, "0.0000001"), (-2.5e-3, "-0.0025"), (float("nan"), "NaN"), (float("-inf"), "-inf"),
    ("raw text", "raw text"), (True, "true"), (False, "false"), (None, "()"),
    ([1, "a", None, 2.0], '[1, "a", (), 2.0]'),
    ({"k": 1, "s": "x\"y"}, '{"k": 1, "s": "x\\"y"}'),
    ([], "[]"), ({}, "{}"),
    (APPROVE, "Approve"), (DECLINED, 'Declined("x", 2)'), (DENY, 'Deny { reason: "late" }'),
    (Lambda(), "<lambda(x)>"),
    ([[1, [2]], {"a": [DENY]}], '[[1, [2]], {"a": [Deny { reason: "late" }]}]'),
])
def test_display_forms(value, expected):
    assert display(value) == expected


def test_display_inner_quotes_and_escapes_strings():
    assert display_inner("a\nb") == '"a\\nb"'
    assert display_inner("é") == '"é"'
    assert display("a\nb") == "a\nb"


def test_record_displays_as_map_with_type():
    assert display({"_type": "User", "name": "A"}) == '{"_type": "User", "name": "A"}'


def test_deeply_nested_display_does_not_recurse():
    value: list = []
    for _ in range(5000):
        value = [value]
    assert display(value).startswith("[[[[") and display(value).endswith("]]]]")


def test_equality_rules():
    assert equals(1, 1.0)
    assert not equals(True, 1)
    assert not equals(1, "1")
    assert equals({"a": 1, "b": [1, 2]}, {"b": [1, 2.0], "a": 1})
    assert not equals({"a": 1}, {"a": 1, "b": 2})
    assert equals(None, None)
    assert not equals(float("nan"), float("nan"))
    assert equals(DENY, Variant("Decision", "Deny", {"reason": "late"}))
    assert not equals(DENY, Variant("Decision", "Deny", {"reason": "early"}))
    assert DECLINED == Variant("Decision", "Declined", None, ("x", 2))
    assert APPROVE != DENY
    assert not equals(2 ** 53 + 1, float(2 ** 53))


def test_to_json_is_compact_and_encodes_variants():
    assert to_json({"a": 1, "b": [True, None, 2.5, "x"]}) == '{"a":1,"b":[true,null,2.5,"x"]}'
    assert to_json(DENY) == '{"_type":"Decision","_variant":"Deny","reason":"late"}'
    assert to_json(DECLINED) == '{"_type":"Decision","_variant":"Declined","_values":["x",2]}'
    assert to_json(float("nan")) == "null"
    assert to_json(3.0) == "3.0"
    assert to_json("é\n") == '"é\\n"'


def test_from_json_parses_and_rejects():
    assert from_json('{"a": [1, 2.5, null, true]}') == {"a": [1, 2.5, None, True]}
    assert from_json([1]) == [1]
    with pytest.raises(SomaError) as err:
        from_json("{not json")
    assert err.value.kind == "json"
    with pytest.raises(SomaError):
        from_json("NaN")


def test_from_json_rebuilds_variants():
    kinds = {"Deny": ("Decision", "struct"), "Declined": ("Decision", "tuple"), "Approve": ("Decision", "unit")}
    text = to_json([DENY, DECLINED, APPROVE, {"_type": "Other", "_variant": "Deny"}])
    rebuilt = from_json(text, kinds)
    assert rebuilt[:3] == [DENY, DECLINED, APPROVE]
    assert type(rebuilt[3]) is dict


def test_is_a_records_and_variants():
    assert is_a({"_type": "User"}, "User")
    assert not is_a({"_type": "User"}, "Admin")
    assert is_a(DENY, "Deny") and is_a(DENY, "Decision")
    assert not is_a(DENY, "Approve")
    assert not is_a("User", "User")


def test_copy_value_is_deep():
    original = {"a": [1, {"b": [2]}], "v": Variant("T", "S", {"xs": [1]})}
    copy = copy_value(original)
    copy["a"][1]["b"].append(3)
    copy["v"].fields["xs"].append(2)
    assert original == {"a": [1, {"b": [2]}], "v": Variant("T", "S", {"xs": [1]})}
    assert equals(copy_value(original), original)
    assert copy_value(5) == 5
