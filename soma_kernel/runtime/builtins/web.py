"""Web response builtins: response, html, redirect.

Without a server these build plain Maps (`{_status, _body}`, plus
`_headers` when headers are given), so a router handler can be tested
like any other: `request("GET", "/x", "")._status == 404`."""

from __future__ import annotations

from ...core.diagnostics import SomaError
from ..values import display
from .checks import expect_int, expect_str
from .registry import builtin

GROUP = "web"


@builtin(GROUP, "response(status: Int, body, header_key, header_value, ...) -> Response",
         "Response with explicit status, body, and optional headers.", min_args=2, max_args=None)
def response(status, body, *headers):
    """response(404, map("error", "no route"))."""
    expect_int("response", status)
    if len(headers) % 2:
        raise SomaError("type", "response() headers come in key, value pairs")
    result = {"_status": status, "_body": body}
    if headers:
        result["_headers"] = {display(headers[i]): display(headers[i + 1]) for i in range(0, len(headers), 2)}
    return result


@builtin(GROUP, "html(body) -> Response | html(status: Int, body) -> Response",
         "text/html response.", min_args=1, max_args=2)
def html(first, second=None):
    """html("<h1>hi</h1>") or html(404, page)."""
    if second is None:
        status, body = 200, first
    else:
        status, body = expect_int("html", first), second
    return {"_status": status, "_body": display(body), "_headers": {"Content-Type": "text/html; charset=utf-8"}}


@builtin(GROUP, "redirect(url: String) -> Response", "302 redirect to `url`.")
def redirect(url):
    """redirect("/login")."""
    return {"_status": 302, "_body": "", "_headers": {"Location": expect_str("redirect", url)}}
