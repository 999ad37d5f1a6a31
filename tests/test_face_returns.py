"""A face's `-> T` at run time and in `soma check`: one rule (the reference's
lenient top level, strict elements), the same verdict from both."""

from __future__ import annotations

import pytest

from soma_kernel.analysis.check import check_program
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse
from soma_kernel.testing.runner import Output, run_tests


@pytest.fixture
def session(tmp_path):
    """A fresh session in a temporary directory."""
    return Session(directory=str(tmp_path))


def answer(session, code: str) -> str:
    """The text/plain result of a statement that must succeed."""
    result = session.execute(code)
    assert result.ok, result.error
    return result.result["text/plain"]


def refusal(session, code: str) -> str:
    """The error text of a statement that must fail."""
    result = session.execute(code)
    assert not result.ok
    return result.error


def check_errors(source: str) -> list[tuple[str, str]]:
    """(line:col, message) of every check error of a program."""
    report = check_program(parse(source, "case.cell"))
    return [(d.location().split(":", 1)[1], d.message) for d in report.errors]


LENIENT = """cell type Pay { variants { Cash  Card { last4: String } } }
cell R {
    face {
        signal whole(x: Float) -> Int
        signal ints(n: Int) -> Float
        signal nothing() -> List
        signal record() -> Map
        signal variant() -> Map
        signal absent() -> Map
        signal rows() -> List<Map>
        signal counts() -> Map<String, Int>
        signal nested() -> List<List<Int>>
        signal pay() -> Pay
    }
    on whole(x: Float) { return x }
    on ints(n: Int) { return n + 1 }
    on nothing() { return () }
    on record() { return Point { x: 1 } }
    on variant() { return Card { last4: "4242" } }
    on absent() { return () }
    on rows() { return [map("a", 1), (), Cash] }
    on counts() { return map("a", 1, "_meta", "ignored") }
    on nested() { return [[1, 2], []] }
    on pay() { return Cash }
}"""


def test_what_the_reference_accepts_is_accepted_at_run_time(session):
    assert session.execute(LENIENT, "a").ok
    assert answer(session, "whole(2.0)") == "2.0"
    assert answer(session, "ints(1)") == "2"          # an Int stays an Int
    assert session.execute("nothing()").ok
    assert answer(session, "record().x") == "1"
    assert answer(session, "variant().last4") == "4242"
    assert session.execute("absent()").ok
    assert answer(session, "len(rows())") == "3"
    assert answer(session, 'counts()["a"]') == "1"
    assert answer(session, "nested()") == "[[1, 2], []]"
    assert answer(session, "pay()") == "Cash"


def test_check_accepts_the_same_program():
    assert check_errors(LENIENT) == []


STRICT = """cell type Pay { variants { Cash } }
cell R {
    face {
        signal half(x: Float) -> Int
        signal text(n: Int) -> String
        signal best(xs: List) -> Map
        signal counts(m: Map) -> Map<String, Int>
        signal grid(xs: List) -> List<List<Int>>
        signal labels(xs: List) -> List<String>
        signal pay(s: String) -> Pay
    }
    on half(x: Float) { return x }
    on text(n: Int) { return n + 1 }
    on best(xs: List) { return xs }
    on counts(m: Map) { return m }
    on grid(xs: List) { return xs }
    on labels(xs: List) { return xs }
    on pay(s: String) { return s |> trim() }
}"""


@pytest.mark.parametrize("call,message", [
    ("half(2.5)", "R.half() returned Float (expected Int, got Float), but its face declares -> Int"),
    ("text(1)", "R.text() returned Int (expected String, got Int), but its face declares -> String"),
    ("best([1])", "R.best() returned List (expected Map, got List), but its face declares -> Map"),
    ('counts(map("a", "x"))', "R.counts() returned Map (key 'a': expected Int, got String), "
                              "but its face declares -> Map<String, Int>"),
    ('grid([[1], ["x"]])', "R.grid() returned List (element 1: element 0: expected Int, got String), "
                           "but its face declares -> List<List<Int>>"),
    ('labels(["a", ()])', "R.labels() returned List (element 1: expected String, got Unit), "
                          "but its face declares -> List<String>"),
    ('pay("Cash")', "R.pay() returned String (expected Pay, got String), but its face declares -> Pay"),
])
def test_a_value_the_face_does_not_promise_is_refused(session, call, message):
    assert session.execute(STRICT, "a").ok
    error = refusal(session, call)
    assert f"type: {message}" in error


def test_a_mocked_answer_is_held_to_the_face():
    program = parse(
        "cell R {\n    face { signal price(item: String) -> Int }\n"
        "    on price(item: String) { return 1 }\n}\n"
        "cell test T {\n    rules {\n        mock price \"abc\"\n"
        "        assert_fails price(\"x\") matching \"face declares -> Int\"\n"
        "        mock price 3.0\n        assert price(\"x\") == 3\n    }\n}\n", "m.cell")
    report = run_tests(program, output=Output())
    assert (report.passed, report.failed) == (2, 0), report.lines


def test_check_refuses_what_every_run_would_refuse_and_no_more():
    errors = check_errors("""cell R {
    face {
        signal a() -> Int
        signal b() -> Int
        signal c() -> List
        signal d() -> List<Int>
        signal e(s: String) -> Int
        signal f(x: Float) -> Int
        signal g(x: Float) -> String
        signal h() -> Map
    }
    on a() { return 1.0 }
    on b() { return 1.5 }
    on c() { return () }
    on d() { return [1, 2.0, ()] }
    on e(s: String) { return s }
    on f(x: Float) { return x }
    on g(x: Float) { return x }
    on h() { return [1] }
}""")
    assert errors == [
        ("13:14", "face contract: signal 'b' returns Int but handler 'b' returns a Float"),
        ("15:25", "face contract: signal 'd' returns List<Int> but handler 'd' puts a Float in the list"),
        ("15:30", "face contract: signal 'd' returns List<Int> but handler 'd' puts () in the list"),
        ("16:23", "face contract: signal 'e' returns Int but handler 'e' returns a String"),
        ("18:22", "face contract: signal 'g' returns String but handler 'g' returns a Float"),
        ("19:14", "face contract: signal 'h' returns Map but handler 'h' returns a List"),
    ]


# The reference holds a value to the face where a call crosses into the
# handler: a handler's direct call to itself (in its own body, outside any
# lambda) re-enters it without that boundary, every other call crosses it.
RECURSIVE = """cell R {
    face {
        signal depth(n: Int) -> Int
        signal arms(n: Int) -> Int
        signal said(n: Int) -> Int
        signal lambda_depth(n: Int) -> Int
        signal qualified(n: Int) -> Int
        signal ping(n: Int) -> Int
        signal pong(n: Int) -> Int
    }
    on depth(n: Int) {
        if n == 0 { return (n + 1) / 2 }
        return floor(depth(n - 1) * 2)
    }
    on arms(n: Int) {
        return match n {
            0 -> (n + 1) / 2
            _ -> floor(arms(n - 1) * 2)
        }
    }
    on said(n: Int) {
        if n == 0 { return (n + 1) / 2 }
        let text = "{said(n - 1)}"
        return len(text)
    }
    on lambda_depth(n: Int) {
        if n == 0 { return (n + 1) / 2 }
        let again = k => lambda_depth(k)
        return floor(again(n - 1) * 2)
    }
    on qualified(n: Int) {
        if n == 0 { return (n + 1) / 2 }
        return floor(R.qualified(n - 1) * 2)
    }
    on ping(n: Int) {
        if n == 0 { return (n + 1) / 2 }
        return floor(pong(n - 1) * 2)
    }
    on pong(n: Int) { return ping(n) }
}"""


@pytest.mark.parametrize("call,value", [("depth(2)", "2"), ("arms(2)", "2"), ("said(1)", "3")])
def test_a_direct_recursive_call_is_not_held_to_the_face(session, call, value):
    assert session.execute(RECURSIVE, "a").ok
    assert answer(session, call) == value


@pytest.mark.parametrize("call,handler", [
    ("depth(0)", "depth"), ("arms(0)", "arms"),              # the outermost call is
    ("lambda_depth(1)", "lambda_depth"),                     # a lambda calls it
    ("qualified(1)", "qualified"),                           # `R.f()` crosses the boundary
    ("ping(1)", "ping"),                                     # another handler calls it back
])
def test_every_other_call_is_held_to_the_face(session, call, handler):
    assert session.execute(RECURSIVE, "a").ok
    error = refusal(session, call)
    assert f"type: R.{handler}() returned Float (expected Int, got Float), but its face declares -> Int" in error


TOOLS = """cell agent Desk {
    face {
        signal ask(q: String) -> String
        tool price(item: String) -> Int "a price"
        tool items() -> List<Int> "the items"
    }
    on price(item: String) { return "{item}: 3" }
    on items() { return ["a", ()] }
    on ask(q: String) { return "{price(q)} {len(items())}" }
}"""


def test_a_tools_return_type_is_not_held_at_run_time(session):
    assert session.execute(TOOLS, "a").ok
    assert answer(session, 'price("tea")') == "tea: 3"
    assert answer(session, 'len(items())') == "2"
    assert answer(session, 'ask("tea")') == "tea: 3 2"
    program = parse(TOOLS + '\ncell test T {\n    rules {\n        mock price "abc"\n'
                    '        assert price("x") == "abc"\n        assert ask("x") == "x: 3 2"\n    }\n}\n',
                    "t.cell")
    report = run_tests(program, output=Output())
    assert (report.passed, report.failed) == (2, 0), report.lines


def test_check_warns_about_a_tool_that_breaks_its_return_type_and_refuses_nothing():
    report = check_program(parse(TOOLS, "case.cell"))
    assert report.errors == []
    unheld = " (a tool's return type is what the model is told; it is not checked at run time)"
    assert [(d.location().split(":", 1)[1], d.message) for d in report.warnings if d.kind == "return_type"] == [
        ("7:30", "face contract: tool 'price' returns Int but handler 'price' returns a String" + unheld),
        ("8:26", "face contract: tool 'items' returns List<Int> but handler 'items' puts a String in the list"
         + unheld),
        ("8:31", "face contract: tool 'items' returns List<Int> but handler 'items' puts () in the list" + unheld),
    ]
