"""Collection, pipeline and lambda builtins."""


from soma_kernel.runtime.builtins.collections import range_object
from helpers import call, kind_of

ROWS = [
    {"name": "ana", "team": "red", "score": 30, "age": "41"},
    {"name": "bo", "team": "blue", "score": 10, "age": "25"},
    {"name": "cy", "team": "red", "score": 20, "age": "33"},
]


def test_list_and_map_constructors():
    assert call("list", 1, 2) == [1, 2] and call("list") == []
    original = [1]
    assert call("list", original, 2) == [1, 2] and original == [1]
    assert call("map", "a", 1, "b", [2]) == {"a": 1, "b": [2]}
    assert call("map") == {}
    assert kind_of("map", "a") == "type"
    assert call("map", [1, 2], lambda x: x * 10) == [10, 20]


def test_push_nth_reverse_flatten():
    original = [1]
    assert call("push", original, 2, 3) == [1, 2, 3] and original == [1]
    assert call("nth", [1, 2], 1) == 2 and call("nth", [1, 2], 2) is None and call("nth", [1], -1) is None
    assert call("reverse", [1, 2, 3]) == [3, 2, 1]
    assert call("flatten", [[1], 2, [3, [4]]]) == [1, 2, 3, [4]]


def test_range():
    assert call("range", 0, 3) == [0, 1, 2]
    assert call("range", 3, 0, -1) == [3, 2, 1]
    assert call("range", 0, 10, 4) == [0, 4, 8]
    assert call("range", 5, 1) == []
    assert kind_of("range", 0, 5, 0) == "range"
    assert kind_of("range", 0, 10 ** 9) == "range"
    assert len(range_object(0, 10 ** 12)) == 10 ** 12


def test_sort():
    assert call("sort", [3, 1.5, 2]) == [1.5, 2, 3]
    assert call("sort", ["b", "a", "C"]) == ["C", "a", "b"]
    assert call("sort", [1, 3, 2], "desc") == [3, 2, 1]
    assert call("sort", [[1, 2], [1, 1], [0, 9]]) == [[0, 9], [1, 1], [1, 2]]
    assert kind_of("sort", [1, "a"]) == "type"


def test_zip_enumerate_entries():
    assert call("zip", [1, 2, 3], ["a", "b"]) == [{"left": 1, "right": "a"}, {"left": 2, "right": "b"}]
    assert call("enumerate", ["x"]) == [{"index": 0, "value": "x"}]
    m = {"a": 1, "b": 2}
    assert call("keys", m) == ["a", "b"] and call("values", m) == [1, 2]
    assert call("entries", m) == [{"key": "a", "value": 1}, {"key": "b", "value": 2}]


def test_with_without_merge_copy():
    m = {"a": 1}
    assert call("with", m, "b", 2, "c", 3) == {"a": 1, "b": 2, "c": 3} and m == {"a": 1}
    assert call("with", [1, 2, 3], 1, 9) == [1, 9, 3]
    assert kind_of("with", [1], 5, 0) == "index"
    assert call("without", {"a": 1, "b": 2, "c": 3}, "a", "c") == {"b": 2}
    assert call("merge", {"a": 1, "b": 1}, {"b": 2}) == {"a": 1, "b": 2}


def test_distinct():
    assert call("distinct", [1, 1.0, True, 2, 1, "1"]) == [1, True, 2, "1"]
    assert call("distinct", [[1], [1], {"a": 1}, {"a": 1}]) == [[1], {"a": 1}]
    assert call("distinct", ROWS, "team") == ["red", "blue"]
    assert [r["name"] for r in call("distinct_by", ROWS, "team")] == ["ana", "bo"]
    assert call("unique_by", ROWS, "team") == call("distinct_by", ROWS, "team")


def test_filter_by_and_sort_by():
    assert [r["name"] for r in call("filter_by", ROWS, "score", ">", 15)] == ["ana", "cy"]
    assert [r["name"] for r in call("filter_by", ROWS, "team", "blue")] == ["bo"]
    assert [r["name"] for r in call("filter_by", ROWS, "team", "!=", "red")] == ["bo"]
    assert call("filter_by", ROWS, "name", ">", 3) == []
    assert [r["name"] for r in call("sort_by", ROWS, "score")] == ["bo", "cy", "ana"]
    assert [r["name"] for r in call("sort_by", ROWS, "score", "desc")] == ["ana", "cy", "bo"]
    by_team_then_score = call("sort_by", ROWS, lambda r: [r["team"], 0 - r["score"]])
    assert [r["name"] for r in by_team_then_score] == ["bo", "ana", "cy"]
    assert kind_of("filter_by", ROWS, "score", "~", 1) == "type"


def test_stable_sort_with_missing_fields_last():
    rows = [{"k": 2, "id": 1}, {"id": 2}, {"k": 1, "id": 3}, {"k": 2, "id": 4}]
    assert [r["id"] for r in call("sort_by", rows, "k")] == [3, 1, 4, 2]


def test_row_aggregates():
    assert call("sum_by", ROWS, "score") == 60
    assert call("sum_by", ROWS, "age") == 99
    assert call("sum_by", [{"x": 1}, {"x": 0.5}], "x") == 1.5
    assert call("avg_by", ROWS, "score") == 20 and type(call("avg_by", ROWS, "score")) is int
    assert call("avg_by", [], "score") is None
    assert call("min_by", ROWS, "score")["name"] == "bo"
    assert call("max_by", ROWS, "score")["name"] == "ana"
    assert call("max_by", [], "score") is None
    assert call("top", [1, 2, 3], 2) == [1, 2] and call("bottom", [1, 2, 3], 2) == [2, 3]
    assert call("bottom", [1, 2], 0) == []


def test_pluck_group_count_select():
    assert call("pluck", ROWS + [{}], "name") == ["ana", "bo", "cy", None]
    groups = call("group_by", ROWS, "team")
    assert list(groups) == ["red", "blue"] and len(groups["red"]) == 2
    assert call("group_by", [{"n": 1}, {"n": 1.5}], "n") == {"1": [{"n": 1}], "1.5": [{"n": 1.5}]}
    assert call("count_by", ROWS, "team", "red") == 2
    assert call("count_by", [{"n": 1}], "n", "1") == 1
    assert call("select", ROWS[:1], "name", "score") == [{"name": "ana", "score": 30}]


def test_agg():
    result = call("agg", ROWS, "team", "score:sum", "score:max", "score:avg")
    assert result == [
        {"team": "red", "score_sum": 50, "score_max": 30, "score_avg": 25, "count": 2},
        {"team": "blue", "score_sum": 10, "score_max": 10, "score_avg": 10, "count": 1},
    ]
    assert kind_of("agg", ROWS, "team", "score:median") == "type"


def test_joins():
    users = [{"id": 1, "name": "ana"}, {"id": 2, "name": "bo"}]
    orders = [{"id": 1, "total": 5, "name": "order-a"}, {"id": 3, "total": 7}]
    assert call("inner_join", orders, users, "id") == [{"id": 1, "total": 5, "name": "order-a"}]
    assert call("left_join", orders, users, "id") == [{"id": 1, "total": 5, "name": "order-a"},
                                                       {"id": 3, "total": 7}]
    assert call("join", orders, users, "id") == call("inner_join", orders, users, "id")


def test_lambda_group():
    assert call("filter", [1, 2, 3], lambda x: x > 1) == [2, 3]
    assert call("find", [1, 2, 3], lambda x: x > 1) == 2
    assert call("find", [1], lambda x: x > 5) is None
    assert call("any", [1, 2], lambda x: x > 1) and not call("any", [], lambda x: True)
    assert call("all", [], lambda x: False) and not call("all", [1, 2], lambda x: x > 1)
    assert call("count", [1, 2, 3], lambda x: x != 2) == 2
    assert call("reduce", [1, 2, 3], 0, lambda p: p["acc"] + p["val"]) == 6
    assert call("reduce", [], "init", lambda p: p["acc"]) == "init"
    assert kind_of("filter", [1], 5) == "type"


def team_of(row):
    """A key function, as a Soma lambda `r => r.team` is called."""
    return row["team"]


def test_key_taking_builtins_accept_a_key_function_like_a_field_name():
    """Every pipeline builtin that reads a column reads it the same way
    from a field name and from a key function (never one group of ())."""
    for name in ("group_by", "distinct_by", "unique_by", "pluck", "distinct"):
        assert call(name, ROWS, team_of) == call(name, ROWS, "team"), name
    score = lambda row: row["score"]  # noqa: E731 - a key function value
    for name in ("sort_by", "min_by", "max_by", "sum_by", "avg_by"):
        assert call(name, ROWS, score) == call(name, ROWS, "score"), name
    assert call("count_by", ROWS, team_of, "red") == call("count_by", ROWS, "team", "red") == 2
    assert call("filter_by", ROWS, team_of, "==", "blue") == [ROWS[1]]
    assert list(call("group_by", ROWS, team_of)) == ["red", "blue"]


def test_a_key_that_is_neither_a_field_nor_a_function_is_a_type_error():
    for name in ("group_by", "sort_by", "min_by", "max_by", "sum_by", "avg_by", "pluck", "distinct_by", "distinct"):
        assert kind_of(name, ROWS, 3) == "type", name
        assert kind_of(name, ROWS, True) == "type", name
    assert kind_of("count_by", ROWS, 1, "red") == "type"
    assert kind_of("agg", ROWS, team_of, "score:sum") == "type"
    assert kind_of("inner_join", ROWS, ROWS, team_of) == "type"
