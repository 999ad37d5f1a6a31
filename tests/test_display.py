"""Mime bundles of Soma values shown by the kernel."""

from soma_kernel.runtime.values import Variant
from soma_kernel.session.display import MAX_TABLE_ROWS, value_bundle


def test_unit_shows_nothing():
    assert value_bundle(None) is None


def test_scalars_are_plain_text_only():
    assert value_bundle(42) == {"text/plain": "42"}
    assert value_bundle(-1.5) == {"text/plain": "-1.5"}
    assert value_bundle(2.0) == {"text/plain": "2.0"}
    assert value_bundle(True) == {"text/plain": "true"}
    assert value_bundle(False) == {"text/plain": "false"}
    assert value_bundle("hé <b>") == {"text/plain": "hé <b>"}


def test_variants_are_plain_text():
    assert value_bundle(Variant("Decision", "Approve")) == {"text/plain": "Approve"}
    assert value_bundle(Variant("Decision", "Deny", fields={"reason": "used"})) == \
        {"text/plain": 'Deny { reason: "used" }'}
    assert value_bundle(Variant("R", "Declined", items=("x", 2))) == {"text/plain": 'Declined("x", 2)'}


def test_function_value():
    def double(x):
        return 2 * x
    double.display_name = "<lambda(x)>"
    assert value_bundle(double) == {"text/plain": "<lambda(x)>"}


def test_plain_list_has_no_table():
    assert value_bundle([1, "a", None]) == {"text/plain": '[1, "a", ()]'}
    assert value_bundle([]) == {"text/plain": "[]"}
    assert value_bundle([{"a": 1}, 2]) == {"text/plain": '[{"a": 1}, 2]'}


def test_empty_map_has_no_table():
    assert value_bundle({}) == {"text/plain": "{}"}


def test_map_table():
    bundle = value_bundle({"state": "paid", "amount": 4000, "tags": ["a", "b"]})
    assert bundle["text/plain"] == '{"state": "paid", "amount": 4000, "tags": ["a", "b"]}'
    assert bundle["text/html"] == (
        '<table class="soma-value">\n'
        "<thead><tr><th>key</th><th>value</th></tr></thead>\n"
        "<tbody>\n"
        "<tr><th>state</th><td>paid</td></tr>\n"
        "<tr><th>amount</th><td>4000</td></tr>\n"
        "<tr><th>tags</th><td>[&quot;a&quot;, &quot;b&quot;]</td></tr>\n"
        "</tbody>\n"
        "</table>\n")


def test_map_table_escapes_html():
    html = value_bundle({"<k>": "a & <script>"})["text/html"]
    assert "<tr><th>&lt;k&gt;</th><td>a &amp; &lt;script&gt;</td></tr>" in html
    assert "<script>" not in html


def test_list_of_maps_table_union_of_columns():
    rows = [{"id": "t1", "label": "urgent"}, {"id": "t2", "seen": 3}]
    bundle = value_bundle(rows)
    assert bundle["text/plain"] == '[{"id": "t1", "label": "urgent"}, {"id": "t2", "seen": 3}]'
    assert bundle["text/html"] == (
        '<table class="soma-value">\n'
        "<thead><tr><th>id</th><th>label</th><th>seen</th></tr></thead>\n"
        "<tbody>\n"
        "<tr><td>t1</td><td>urgent</td><td></td></tr>\n"
        "<tr><td>t2</td><td></td><td>3</td></tr>\n"
        "</tbody>\n"
        "</table>\n")


def test_long_tables_are_cut():
    html = value_bundle([{"n": i} for i in range(MAX_TABLE_ROWS + 5)])["text/html"]
    assert html.count("<tr><td>") == MAX_TABLE_ROWS
    assert html.endswith("<p>… 5 more rows</p>\n")


def test_bundle_is_deterministic():
    value = {"b": 1, "a": [{"x": 1.0}]}
    assert value_bundle(value) == value_bundle(dict(value))
