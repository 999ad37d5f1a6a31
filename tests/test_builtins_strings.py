"""String builtins, format, regexes, templates and arity errors."""

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.builtins import BUILTINS
from helpers import call, kind_of


def test_registry_entries_have_metadata():
    entry = BUILTINS["split"]
    assert (entry.min_args, entry.max_args, entry.group) == (2, 2, "string")
    assert entry.signature.startswith("split(") and entry.doc
    assert BUILTINS["print"].pure is False and BUILTINS["len"].pure is True
    assert BUILTINS["format"].max_args is None


def test_arity_errors_use_reference_wording():
    with pytest.raises(SomaError) as err:
        call("split", "a")
    assert err.value.kind == "type"
    assert err.value.detail == "split() takes 2 arguments, got 1"
    with pytest.raises(SomaError) as err:
        call("pad_left", "a")
    assert err.value.detail == "pad_left() takes 2 to 3 arguments, got 1"
    assert kind_of("no_such_builtin") == "undefined_variable"


def test_wrong_argument_types_are_type_errors():
    assert kind_of("starts_with", 1, "a") == "type"
    assert kind_of("len", 5) == "type"


def test_padding_and_trimming():
    assert call("pad_left", "7", 4, "0") == "0007"
    assert call("pad_left", 42, 5) == "   42"
    assert call("pad_right", "ab", 4) == "ab  "
    assert call("pad_left", "long", 2) == "long"
    assert call("trim", "  a b \n") == "a b"
    assert call("trim", "xxaxx", "x") == "a"


def test_split_fields_replace_join():
    assert call("split", "a,,b", ",") == ["a", "", "b"]
    assert call("split", "a b", " ") == ["a", "b"]
    assert call("fields", "  a \t b  ") == ["a", "b"]
    assert call("replace", "aXbX", "X", "-") == "a-b-"
    assert call("join", ["a", 1, 2.0], "-") == "a-1-2.0"


def test_contains_three_meanings():
    assert call("contains", "refund please", "refund")
    assert call("contains", [1, 2], 2.0)
    assert not call("contains", [1, 2], True)
    assert call("contains", {"k": 1}, "k") and not call("contains", {"k": 1}, "z")
    assert call("contains", [{"a": 1}], {"a": 1})


def test_case_and_prefixes():
    assert call("lowercase", "ÀB") == "àb"
    assert call("uppercase", 12) == "12"
    assert call("starts_with", "soma", "so") and call("ends_with", "soma", "ma")


def test_indexes_and_slices():
    assert call("index_of", "héllo", "l") == 2
    assert call("index_of", "abc", "z") == -1
    assert call("index_of", [5, 6], 6) == 1
    assert call("substring", "hello", 1, 3) == "el"
    assert call("substring", "hello", 3, 99) == "lo"
    assert call("slice", [1, 2, 3, 4], -2) == [3, 4]
    assert call("slice", "hello", 1, -1) == "ell"
    assert call("slice", [1, 2], 5, 9) == []


def test_bytes_and_code_points():
    assert call("str_len", "é") == 2 and call("len", "é") == 1
    assert call("str_at", "A", 0) == 65
    assert kind_of("str_at", "A", 1) == "index"
    assert call("chr", 65) == "A" and call("ord", "A") == 65
    assert call("str_eq", "a", "a")
    assert call("escape_html", "<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"


@pytest.mark.parametrize("fmt, args, expected", [
    ("%d items", [3], "3 items"),
    ("%s|%s", ["a", [1, "b"]], 'a|[1, "b"]'),
    ("%.2f", [1.005], "1.01"),
    ("%8.2f|", [3.14159], "    3.14|"),
    ("%-8s|", ["ab"], "ab      |"),
    ("%05d", [42], "00042"),
    ("%05d", [-42], "-0042"),
    ("%3d|", [7], "  7|"),
    ("%f", [2.5], "2.500000"),
    ("100%%", [], "100%"),
    ("%.3e", [1234.5678], "1.235e3"),
])
def test_format_printf_subset(fmt, args, expected):
    assert call("format", fmt, *args) == expected


def test_format_missing_argument_is_an_error():
    assert kind_of("format", "%d %d", 1) == "type"


def test_regexes():
    assert call("regex_count", "a1b22c333", "[0-9]+") == 3
    assert call("regex_match", "abc", "b+") == 1 and call("regex_match", "abc", "z") == 0
    assert call("regex_replace", "john smith", r"(\w+) (\w+)", "$2 $1") == "smith john"
    assert kind_of("regex_match", "a", "(") == "type"


def test_templates_and_words():
    assert call("render", "Hi {name}, {n}!", "name", "Ana", "n", 3) == "Hi Ana, 3!"
    assert call("render", "{missing}") == "{missing}"
    assert call("render_each", [{"n": 1}, {"n": 2}], "<{n}>") == "<1><2>"
    assert call("word_count", "The cat, the hat") == {"the": 2, "cat": 1, "hat": 1}


def test_concat():
    assert call("concat", "a", 1) == "a1"
    assert call("concat", [1], [2]) == [1, 2]
