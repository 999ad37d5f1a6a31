"""The web (response/html/redirect) and csv (from_csv/read_csv/write_csv) builtin groups."""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime import interpreter  # noqa: F401  (registers the groups)
from soma_kernel.runtime.builtins import call_builtin


def test_response_is_a_plain_map():
    assert call_builtin("response", [404, {"error": "no route"}]) == {"_status": 404, "_body": {"error": "no route"}}
    assert call_builtin("response", [200, "ok", "X-Id", 7]) == {"_status": 200, "_body": "ok", "_headers": {"X-Id": "7"}}
    with pytest.raises(SomaError):
        call_builtin("response", [200, "ok", "X-Id"])


def test_html_and_redirect():
    page = call_builtin("html", ["<p>hi</p>"])
    assert page["_status"] == 200 and page["_body"] == "<p>hi</p>"
    assert call_builtin("html", [404, "gone"])["_status"] == 404
    assert call_builtin("redirect", ["/x"]) == {"_status": 302, "_body": "", "_headers": {"Location": "/x"}}


def test_from_csv_types_unquoted_cells_only():
    text = 'id,name,qty,price\r\n007,"Ann, Jr",3,1.50\n8,"say ""hi""","4",\n9,short'
    rows = call_builtin("from_csv", [text])
    assert rows == [
        {"id": "007", "name": "Ann, Jr", "qty": 3, "price": 1.5},
        {"id": 8, "name": 'say "hi"', "qty": "4", "price": ""},
        {"id": 9, "name": "short", "qty": "", "price": ""},
    ]
    assert call_builtin("from_csv", ["a\n1", {"raw": True}]) == [{"a": "1"}]


def test_multiline_quoted_cell_and_unterminated_quote():
    assert call_builtin("from_csv", ['a,b\n"x\ny",2']) == [{"a": "x\ny", "b": 2}]
    with pytest.raises(SomaError) as caught:
        call_builtin("from_csv", ['a\n"open'])
    assert caught.value.kind == "csv"


def test_write_then_read_round_trips(tmp_path):
    path = str(tmp_path / "out.csv")
    rows = [{"sku": "A,1", "qty": 2, "code": "12", "tags": ["x"], "note": None}]
    assert call_builtin("write_csv", [path, rows]) is True
    assert call_builtin("read_csv", [path]) == [{"sku": "A,1", "qty": 2, "code": "12", "tags": '["x"]', "note": ""}]
    assert "error" in call_builtin("read_csv", [str(tmp_path / "missing.csv")])
