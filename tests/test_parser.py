"""Parser tests: both seeds, one test per construct, spans, strings, errors and hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from soma_kernel.core.diagnostics import SomaSyntaxError
from soma_kernel.syntax import ast
from soma_kernel.syntax.parser import is_complete, parse, parse_fragment

SEEDS = Path(__file__).parent / "seeds"
REFUND = SEEDS / "refund_agent" / "refund_agent.cell"
TRIAGE = SEEDS / "triage_agent" / "triage_agent.cell"


def one_expr(text: str):
    """The expression of a one-statement fragment."""
    (stmt,) = parse_fragment(text)
    assert isinstance(stmt, ast.ExprStmt)
    return stmt.expr


def syntax_error(text: str) -> SomaSyntaxError:
    """The SomaSyntaxError a fragment raises."""
    with pytest.raises(SomaSyntaxError) as info:
        parse_fragment(text)
    assert info.value.diagnostic.kind == "parse"
    return info.value


def body_of(cell_text: str) -> list:
    """Statements of the single handler `f` of a one-cell program."""
    program = parse("cell C { on f(x: Int) { " + cell_text + " } }")
    return program.cells[0].handlers[0].body.stmts


# ---------------------------------------------------------------- seeds


@pytest.fixture(scope="module")
def refund():
    return parse(REFUND.read_text(encoding="utf-8"), str(REFUND))


@pytest.fixture(scope="module")
def triage():
    return parse(TRIAGE.read_text(encoding="utf-8"), str(TRIAGE))


def test_refund_program_items(refund):
    assert [type(i).__name__ for i in refund.items] == ["TypeDecl", "CellDecl", "TestCell"]
    assert refund.origin == str(REFUND)
    assert refund.source.startswith("// REFUND AGENT")
    decision = refund.types[0]
    assert decision.name == "Decision"
    assert [(v.name, v.fields) for v in decision.variants][0] == ("Approve", None)
    assert decision.variants[1].fields == [("reason", ast.TypeRef("String"))]


def test_refund_face_cost_memory(refund):
    cell = refund.cells[0]
    assert (cell.name, cell.kind) == ("RefundAgent", "agent")
    assert [s.name for s in cell.face.signals] == ["seed_order", "decide", "status", "paid_today"]
    assert cell.face.signals[0].returns == ast.TypeRef("Int")
    assert cell.face.signals[0].frame is None
    tool = cell.face.tools[0]
    assert (tool.name, tool.description, tool.returns.name) == (
        "lookup_order", "Order amount and days since delivery", "Map")
    assert [(c.axis, c.value) for c in cell.cost] == [("tokens", 300)]
    slots = cell.memory.slots
    assert [s.name for s in slots] == ["orders", "paid_by_day"]
    assert slots[0].type.render() == "Map<String, Map>"
    assert slots[0].props == [ast.SlotProp("persistent")]
    assert len(cell.memory.invariants) == 1


def test_refund_state_machine(refund):
    machine = refund.cells[0].machine
    assert (machine.name, machine.initial) == ("request", "received")
    edges = [(e.src, e.dst) for e in machine.edges]
    assert edges == [("received", "decided"), ("decided", "paid"), ("decided", "denied"),
                     ("decided", "escalated"), ("*", "failed")]
    assert isinstance(machine.edges[1].guard, ast.Binary)
    assert machine.edges[1].guard.op == "&&"
    assert machine.edges[4].excepts == ["paid", "denied", "escalated"]
    assert machine.edges[0].guard is None and machine.edges[0].excepts == []


def test_refund_handler_lines(refund):
    lines = {h.name: h.span.line for h in refund.cells[0].handlers}
    assert lines == {"seed_order": 49, "lookup_order": 53, "paid_today": 58, "status": 59,
                     "decide": 61, "_pay": 93, "_parse": 109}
    assert [h.name for h in refund.cells[0].handlers if h.is_private] == ["_pay", "_parse"]


def test_refund_match_with_variant_patterns(refund):
    decide = refund.cells[0].handlers[4]
    ret = decide.body.stmts[-1]
    assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Match)
    arms = ret.value.arms
    assert arms[0].pattern == ast.PVariant("Approve")
    assert arms[1].pattern == ast.PVariant("Deny", fields=[("reason", None)])
    assert isinstance(arms[1].body, ast.Block) and isinstance(arms[0].body, ast.Call)


def test_refund_test_rules(refund):
    rules = refund.tests[0].rules
    asserts = [r for r in rules if isinstance(r, ast.RuleAssert)]
    assert len(asserts) == 19
    assert asserts[0].source == 'seed_order("o1", 5000, 3) == 5000'
    assert asserts[3].source == 'decide("r1", "o1", 4000, "broken").state == "paid"'
    mocks = [r for r in rules if isinstance(r, ast.RuleMock)]
    assert mocks[0].target == "think"
    assert mocks[0].value == ast.Literal('{"decision": "approve", "reason": "ok"}')
    assert [m.value.value for m in mocks if m.target == "approve"] == [False, True, True]
    error_mock = mocks[-1]
    assert error_mock.is_error and error_mock.value == ast.Literal("timeout")


def test_triage_skeleton_frames(triage):
    cell = triage.cells[0]
    assert (cell.name, cell.kind) == ("Triage", "skeleton")
    frames = {s.name: s.frame for s in cell.face.signals}
    assert frames["classify"].calls == ["think", "set_budget"]
    assert frames["label"].writes == ["labels", "seen"]
    assert frames["label"].moves == [("inbox", "urgent"), ("inbox", "routine")]
    assert frames["label"].calls == ["classify"]
    assert frames["finish"].moves == [("urgent", "done"), ("routine", "done")]
    assert frames["label_of"].reads == ["labels"]
    assert frames["stats"].reads == ["seen"] and frames["stats"].calls == []


def test_triage_flesh_handlers(triage):
    flesh = triage.fleshes[0]
    assert flesh.name == "Triage"
    lines = {h.name: h.span.line for h in flesh.handlers}
    assert lines == {"classify": 45, "label": 52, "finish": 64, "label_of": 69, "stats": 73}
    assert all(h.flesh for h in flesh.handlers)
    assert flesh.handlers[1].params == [ast.Param("id"), ast.Param("text")]


def test_triage_assert_fails_source_excludes_comment(triage):
    rule = [r for r in triage.tests[0].rules if isinstance(r, ast.RuleAssertFails)][0]
    assert rule.source == 'label("t1", "again")'
    assert rule.matching is None


# ---------------------------------------------------------------- spans


def test_spans_are_character_offsets():
    text = 'let s = "é"\nlet n = foo(1,  2)'
    stmts = parse_fragment(text)
    call = stmts[1].value
    assert call.span.line == 2 and call.span.col == 9
    assert text[call.span.start:call.span.end] == "foo(1,  2)"
    assert (call.span.end_line, call.span.end_col) == (2, 19)


def test_every_expression_node_has_a_span():
    expr = one_expr("a.b(c)[0] + -x * (y ?? 2)")
    stack = [expr]
    while stack:
        node = stack.pop()
        assert node.span != ast.NO_SPAN, node
        for value in vars(node).values():
            if isinstance(value, ast.Node):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.Node))


def test_binary_span_includes_parentheses():
    text = "(a ?? 0) + 1"
    expr = one_expr(text)
    assert text[expr.span.start:expr.span.end] == text
    assert text[expr.left.span.start:expr.left.span.end] == "a ?? 0"


# ---------------------------------------------------------------- statements


def test_let_assign_and_compound_targets():
    stmts = body_of("let y = 1  y += 2  xs[i][j] = 3  g.board[0] -= 1  a.f *= 2")
    assert isinstance(stmts[0], ast.Let) and stmts[0].name == "y"
    ops = [s.op for s in stmts[1:]]
    assert ops == ["+=", "=", "-=", "*="]
    assert isinstance(stmts[2].target, ast.Index) and isinstance(stmts[2].target.obj, ast.Index)
    assert isinstance(stmts[3].target, ast.Index) and isinstance(stmts[3].target.obj, ast.Field)


def test_assign_to_a_call_is_refused():
    err = syntax_error("f() = 3")
    assert "cannot assign" in err.diagnostic.message


def test_while_and_for_with_loop_bounds():
    w, f, g = body_of("while [loop_bound(5)] x < 3 { break }  for [loop_bound(2)] v in xs { continue }"
                      "  for v in xs { }")
    assert isinstance(w, ast.While) and w.bound == 5 and isinstance(w.body.stmts[0], ast.Break)
    assert isinstance(f, ast.For) and f.bound == 2 and f.var == "v"
    assert isinstance(f.body.stmts[0], ast.Continue)
    assert g.bound is None


def test_return_with_and_without_value():
    a, b = body_of("if x > 1 { return } return x")
    assert a.expr.then.stmts[0] == ast.Return(None)
    assert b == ast.Return(ast.Name("x"))


def test_require_takes_detail_from_next_line():
    (req,) = body_of('require x > 0 else BadInput\n "x was {x}"')
    assert req.tag == "BadInput"
    assert isinstance(req.detail, ast.InterpString)
    (plain,) = body_of("require x > 0 else bad_input")
    assert plain.detail is None and plain.tag == "bad_input"


def test_ensure_and_emit():
    ensure, emit = body_of("ensure x >= 0  emit changed(x, 1)")
    assert isinstance(ensure, ast.Ensure)
    assert emit == ast.Emit("changed", [ast.Name("x"), ast.Literal(1)])


def test_several_statements_on_one_line():
    stmts = body_of('transition(x, "a") return status(x)')
    assert [type(s).__name__ for s in stmts] == ["ExprStmt", "Return"]


# ---------------------------------------------------------------- expressions


def test_precedence_table():
    expr = one_expr("a || b && c ?? d == e |> f() + g * h")
    assert expr.op == "||"
    right = expr.right
    assert right.op == "&&"
    coalesce = right.right
    assert coalesce.op == "??"
    compare = coalesce.right
    assert compare.op == "=="
    assert isinstance(compare.right, ast.Pipe)
    assert compare.right.target.op == "+"


def test_comparisons_do_not_chain():
    syntax_error("a < b < c")


def test_unary_and_negative_literals():
    assert one_expr("-5") == ast.Literal(-5)
    assert one_expr("-x") == ast.Unary("-", ast.Name("x"))
    assert one_expr("!ok") == ast.Unary("!", ast.Name("ok"))
    assert one_expr("a - 5") == ast.Binary("-", ast.Name("a"), ast.Literal(5))
    assert one_expr("-(5)") == ast.Unary("-", ast.Literal(5))


def test_number_literals():
    values = [one_expr(t).value for t in ["1_000", "0xFF", "0b101", "0o17", "3.14", "1.5e3", "2e2"]]
    assert values == [1000, 255, 5, 15, 3.14, 1500.0, 200.0]
    assert isinstance(one_expr("5.abs()"), ast.MethodCall)


def test_duration_literals_are_milliseconds():
    values = [one_expr(t).value for t in ["5s", "100ms", "2min", "1h", "3d"]]
    assert values == [5000, 100, 120000, 3600000, 3 * 86400000]


def test_calls_methods_fields_and_postfix():
    assert one_expr("Cell.f(a)") == ast.Call("f", [ast.Name("a")], cell="Cell")
    method = one_expr('s.get("n")')
    assert method == ast.MethodCall(ast.Name("s"), "get", [ast.Literal("n")])
    assert one_expr("x.state") == ast.Field(ast.Name("x"), "state")
    assert one_expr("r.after.match") == ast.Field(ast.Field(ast.Name("r"), "after"), "match")
    assert one_expr("try { f() }?") == ast.Propagate(ast.Try(ast.Block([ast.ExprStmt(ast.Call("f", []))])))
    assert one_expr("xs[0]") == ast.Index(ast.Name("xs"), ast.Literal(0))


def test_call_on_a_call_is_refused():
    syntax_error("let g = f(a)(b)")


def test_lambdas_and_pipes():
    lam = one_expr("xs |> map(x => x + 1)")
    assert isinstance(lam, ast.Pipe) and lam.target.func == "map"
    inner = lam.target.args[0]
    assert inner == ast.Lambda("x", ast.Binary("+", ast.Name("x"), ast.Literal(1)))
    block = one_expr("f(x => { let y = x\n y })").args[0]
    assert isinstance(block.body, ast.Block)


def test_collections_records_unit_and_variants():
    assert one_expr("[1, 2,]") == ast.ListLit([ast.Literal(1), ast.Literal(2)])
    assert one_expr("[]") == ast.ListLit([])
    assert one_expr("()") == ast.Literal(None)
    assert one_expr("Approve") == ast.Name("Approve")
    assert one_expr('Deny { reason: "x" }') == ast.RecordLit("Deny", [("reason", ast.Literal("x"))])
    assert one_expr('Declined("x")') == ast.Call("Declined", [ast.Literal("x")])
    assert one_expr("Tank { LT1: 3, b: 4 }").fields[0][0] == "LT1"


def test_record_is_not_read_in_a_condition():
    (stmt,) = body_of("if x == Done { return 1 }")
    assert stmt.expr.cond == ast.Binary("==", ast.Name("x"), ast.Name("Done"))
    (loop,) = body_of("while s != Stop { s = next(s) }")
    assert loop.cond.right == ast.Name("Stop")
    (paren,) = body_of("if x == (P { a: 1 }) { }")
    assert isinstance(paren.expr.cond.right, ast.RecordLit)


def test_if_expression_and_else_if():
    (let,) = body_of("let v = if a { 1 } else if b { 2 } else { 3 }")
    assert isinstance(let.value, ast.If) and isinstance(let.value.orelse, ast.If)
    assert isinstance(let.value.orelse.orelse, ast.Block)


def test_match_patterns():
    expr = one_expr("""match x {
        -3 -> 2
        "a" -> { 1 }
        -2..-1 -> 4
        1..5 -> 3
        "x" || "y" -> 5
        n if n > 5 -> 6
        "/api/" + rest -> 7
        {method: "GET", path} -> 8
        Deny { reason } -> 9
        Deny { reason: "x" } -> 10
        Declined(msg) -> 11
        Approve -> 12
        true -> 13
        () -> 14
        _ -> { 15 }
    }""")
    patterns = [arm.pattern for arm in expr.arms]
    assert patterns == [
        ast.PLiteral(-3), ast.PLiteral("a"), ast.PRange(-2, -1), ast.PRange(1, 5),
        ast.POr([ast.PLiteral("x"), ast.PLiteral("y")]), ast.PBind("n"),
        ast.PStringPrefix("/api/", "rest"),
        ast.PMap([("method", ast.PLiteral("GET")), ("path", None)]),
        ast.PVariant("Deny", fields=[("reason", None)]),
        ast.PVariant("Deny", fields=[("reason", ast.PLiteral("x"))]),
        ast.PVariant("Declined", items=[ast.PBind("msg")]), ast.PVariant("Approve"),
        ast.PLiteral(True), ast.PLiteral(None), ast.PWildcard(),
    ]
    assert expr.arms[5].guard == ast.Binary(">", ast.Name("n"), ast.Literal(5))
    assert isinstance(expr.arms[-1].body, ast.Block)


# ---------------------------------------------------------------- strings


def test_string_escapes():
    assert one_expr(r'"a\nb\t\"q\" \\ \0 \u{41} \q"').value == 'a\nb\t"q" \\ \0 A \\q'


def test_triple_quoted_strings_keep_backslashes_and_span_lines():
    expr = one_expr('"""line1\n"q" \\n"""')
    assert expr == ast.Literal('line1\n"q" \\n')


def test_interpolation_segments():
    expr = one_expr(r'"Hi {name}, {{x}} {\"a\": 1} {4} {2,3} {} {a b} {n + 1}"')
    assert isinstance(expr, ast.InterpString)
    assert expr.parts == ["Hi ", ast.Name("name"), ', {x} {"a": 1} {4} {2,3} {} {a b} ',
                          ast.Binary("+", ast.Name("n"), ast.Literal(1))]


def test_interpolation_with_digits_first_expression_and_if_block():
    expr = one_expr('"{0x1F} {if c { a } else { b }}!"')
    assert expr.parts[0] == ast.Literal(31)
    assert isinstance(expr.parts[2], ast.If)
    assert expr.parts[-1] == "!"


def test_interpolation_spans_are_absolute():
    text = 'let s = "ab {total + 1}"'
    (let,) = parse_fragment(text)
    segment = let.value.parts[1]
    assert text[segment.span.start:segment.span.end] == "total + 1"
    assert (segment.span.line, segment.span.col) == (1, 14)
    assert text[segment.left.span.start:segment.left.span.end] == "total"


def test_json_in_string_stays_literal():
    expr = one_expr(r'"Reply {\"decision\": \"approve\"}"')
    assert expr == ast.Literal('Reply {"decision": "approve"}')


# ---------------------------------------------------------------- sections


def test_state_machine_forms():
    program = parse("""cell M {
        state order: Status { initial: Open  Open -> Paid
            Paid -> Done { guard { ok } }
            * -> Cancelled except [Done]
        }
    }""")
    machine = program.cells[0].machine
    assert machine.type_name == "Status" and machine.initial == "Open"
    assert machine.edges[1].guard == ast.Name("ok")
    assert machine.edges[2].src == "*" and machine.edges[2].excepts == ["Done"]


def test_two_initial_lines_are_refused():
    err = syntax_error("cell M { state s { initial: a initial: b a -> b } }")
    assert "initial" in err.diagnostic.message


def test_memory_props_and_invariants():
    program = parse("cell C { memory { log: List<Map<String, Int>> [persistent, capacity(10), ttl(5s), "
                    "evict(lru)]  tmp: Map<String, Int>  invariant value >= 0 } }")
    slots = program.cells[0].memory.slots
    assert slots[0].type.render() == "List<Map<String, Int>>"
    assert [(p.name, p.arg) for p in slots[0].props] == [
        ("persistent", None), ("capacity", 10), ("ttl", 5000), ("evict", "lru")]
    assert slots[1].props == []
    assert program.cells[0].memory.invariants[0].expr.op == ">="


def test_face_tools_promises_and_capability():
    program = parse('cell agent A { face { signal go(x: Int)\n tool fetch(url: String) -> Map '
                    '[capability: "https://x.com/*"] "Fetch a page"\n promise all_persistent\n promise "no spam" } }')
    face = program.cells[0].face
    assert face.signals[0].returns is None
    assert face.tools[0].capability == "https://x.com/*"
    assert face.tools[0].description == "Fetch a page"
    assert face.promises == ["all_persistent", "no spam"]


def test_handler_annotations_scheduled_and_plain_cell():
    program = parse("cell C { on f(x: Int) [native, loop_bound(3)] { x } every 5s { tick() } "
                    "after 1min { } }")
    cell = program.cells[0]
    assert cell.kind == "cell"
    assert cell.handlers[0].annotations == [("native", None), ("loop_bound", 3)]
    assert [(s.kind, s.interval_ms) for s in cell.scheduled] == [("every", 5000), ("after", 60000)]


def test_use_and_tuple_variants():
    program = parse("use lib::helpers\ncell type R { variants { Ok(Int, String) Err { code: Int, msg: String } } }")
    assert program.items[0] == ast.Use("lib/helpers")
    variants = program.types[0].variants
    assert variants[0].items == [ast.TypeRef("Int"), ast.TypeRef("String")]
    assert [name for name, _ in variants[1].fields] == ["code", "msg"]


def test_test_cell_rules_and_helpers():
    program = parse('''cell test T {
        rules {
            let a = f(1)
            assert_fails g(0) matching "invalid"
            mock now 1700000000
            mock Billing.charge error "timeout: slow"
            mock lookup map("a", 1)
            property "non-negative" forall n: Int in 0..100 ensures  sq(n)   >= 0
        }
        on helper(x: Int) { x }
    }''')
    rules = program.tests[0].rules
    assert rules[0] == ast.RuleLet("a", ast.Call("f", [ast.Literal(1)]))
    assert rules[1].matching == "invalid" and rules[1].source == "g(0)"
    assert (rules[2].target, rules[2].value.value) == ("now", 1700000000)
    assert (rules[3].target, rules[3].is_error) == ("Billing.charge", True)
    assert rules[4].target == "lookup"
    prop = rules[5]
    assert (prop.name, prop.var, prop.var_type.name) == ("non-negative", "n", "Int")
    assert (prop.lo, prop.hi) == (ast.Literal(0), ast.Literal(100))
    assert prop.source == "sq(n) >= 0"
    assert program.tests[0].handlers[0].name == "helper"


def test_comments_nest_and_keep_offsets():
    program = parse("/* a /* b */ still comment */ cell C { on f() { 1 } } // tail")
    assert program.cells[0].span.start == 30


# ---------------------------------------------------------------- fragments


def test_fragment_mixes_items_statements_and_rules():
    items = parse_fragment('''
        cell C { on f(x: Int) { x } }
        let y = 2
        y += 1
        mock think "ok"
        assert f(y) == 3
        assert_fails f("no")
        property "p" forall n in 1..3 ensures n > 0
        use other
        f(y)
    ''')
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["CellDecl", "Let", "Assign", "RuleMock", "RuleAssert", "RuleAssertFails",
                     "RuleProperty", "Use", "ExprStmt"]
    assert items[6].var_type is None


def test_is_complete():
    assert is_complete("let x = 1") == "complete"
    assert is_complete("cell C {\n on f() {") == "incomplete"
    assert is_complete('let s = "abc') == "incomplete"
    assert is_complete('let s = """abc') == "incomplete"
    assert is_complete("/* open") == "incomplete"
    assert is_complete("f(1,") == "incomplete"
    assert is_complete("let x = 1;") == "invalid"
    assert is_complete("let x = ) (") == "invalid"


# ---------------------------------------------------------------- errors and hints


def test_unclosed_cell_names_its_opening():
    with pytest.raises(SomaSyntaxError) as info:
        parse("cell C {\n    on f() { 1 }\n", "x.cell")
    err = info.value
    assert err.incomplete
    assert err.diagnostic.message == "expected '}' to close the cell opened at 1:8"
    assert err.diagnostic.origin == "x.cell"


def test_unclosed_cell_points_at_the_block_missing_its_brace():
    source = "cell C {\n    on f(x: Int) {\n        if x > 1 {\n            return 1\n\n    }\n    // }\n}\n"
    with pytest.raises(SomaSyntaxError) as info:
        parse(source, "x.cell")
    assert info.value.diagnostic.hint == ("the '{' at 3:18 is closed by the '}' at 6:5, which is indented "
                                          "differently — a '}' is probably missing before line 6")
    with pytest.raises(SomaSyntaxError) as flat:
        parse("cell C {\n    on f() { 1 }\n", "x.cell")
    assert flat.value.diagnostic.hint is None


def test_error_points_at_offending_token():
    err = syntax_error("let x = 1\nlet y = )")
    d = err.diagnostic
    assert (d.span.line, d.span.col) == (2, 9)
    assert d.message.startswith("unexpected ')'")
    assert "RPAR" not in d.message and "Token" not in d.message


HINT_CASES = [
    ("let x = 1;", "no semicolons", 10),
    ("if a { 1 } elif b { 2 }", "else if", 12),
    ("let x = a and b", "&&", 11),
    ("let x = not a", "&&", 9),
    ("let x = null", "()", 9),
    ("let x = None", "()", 9),
    ("let x = True", "true", 9),
    ("def f() { }", "on name", 1),
    ("const x = 5", "no constants", 1),
    ("let x = a === b", "==", 13),
    ("let x = 2 ** 3", "pow", 12),
    ("let r = match x { 1 => 2 }", "->", 21),
    ("let m = {a: 1}", 'map("k", v)', 9),
    ('let m = {"a": 1}', 'map("k", v)', 9),
    ("let y = c ? a : b", "if c", 15),
    ("let s = xs[1:2]", "slice", 13),
    ("for (k, v) in m { }", "for e in m", 5),
    ("let f = (a, b) => a", "one parameter", 11),
    ("@deco", "decorators", 1),
    ("cell test { rules { } }", "name the test cell", 11),
    ("cell C { state s { initial: a  a -> b  final: b } }", "final", 45),
    ("cell C { state s { initial: a  a -> b guard { x } } }", "a -> b { guard { cond } }", 45),
    ("cell C { on f(x: Int) -> Int { x } }", "face signal", 23),
    ("cell C { on f(x) { x } }", "x: Any", 15),
    ("let x = new Foo()", "no `new`", 9),
    ("throw x", "fail(", 1),
    ("cell C { every 90m { } }", "durations", 16),
    ("let n = 12abc", "invalid number", 9),
    ("class Foo { }", "cell type", 1),
]


@pytest.mark.parametrize("text, hint_part, col", HINT_CASES)
def test_hints(text, hint_part, col):
    err = syntax_error(text)
    d = err.diagnostic
    assert hint_part in (d.hint or "") + d.message
    assert d.span.col == col
    assert not err.incomplete


def test_reserved_word_as_binding():
    err = syntax_error("let match = 1")
    assert err.diagnostic.message == "'match' is a reserved word — rename it"
    err = syntax_error("on = 2")
    assert "unexpected 'on'" in err.diagnostic.message or "reserved" in err.diagnostic.message


def test_nesting_limit():
    syntax_error("let x = " + "(" * 401 + "1" + ")" * 401)


def test_long_flat_expression_needs_no_recursion():
    expr = one_expr(" + ".join(["1"] * 3000))
    assert expr.op == "+"


def test_on_is_hard_reserved():
    err = syntax_error("let x = on + 1")
    assert err.diagnostic.message == "'on' is a reserved word — rename it"


def test_program_span_and_empty_inputs():
    program = parse("cell C { }\n")
    assert program.span.start == 0 and program.span.end == len("cell C { }\n")
    assert parse("").items == []
    assert parse_fragment("   // nothing\n") == []
    assert is_complete("") == "complete"


def test_fragment_accepts_top_level_return_and_while():
    items = parse_fragment("while x < 3 { x += 1 }\nreturn x")
    assert [type(i).__name__ for i in items] == ["While", "Return"]


# ---------------------------------------------------------------- a `-` starting a line

def test_line_starting_minus_begins_the_next_match_arm():
    match = one_expr('match n {\n    0 -> "zero"\n    -1 -> "minus one"\n    _ -> "other"\n}')
    assert [arm.pattern.value for arm in match.arms[:2]] == [0, -1]
    assert [arm.body.value for arm in match.arms[:2]] == ["zero", "minus one"]


def test_line_starting_minus_begins_the_next_statement():
    items = parse_fragment("let a = 1\na\n-1")
    assert isinstance(items[1], ast.ExprStmt) and items[1].expr == ast.Name(id="a")
    assert isinstance(items[2], ast.ExprStmt) and items[2].expr.value == -1


def test_minus_continues_inside_parentheses_and_lists_and_after_an_operator():
    (grouped,) = parse_fragment("let t = (n\n    - 1)")
    assert isinstance(grouped.value, ast.Binary) and grouped.value.op == "-"
    (listed,) = parse_fragment("let u = [n\n    - 2]")
    assert isinstance(listed.value.items[0], ast.Binary)
    (trailing,) = parse_fragment("let v = n -\n    3")
    assert isinstance(trailing.value, ast.Binary)


# ---------------------------------------------------------------- a `{` starting a line

def test_uppercase_arm_body_then_map_pattern_arm_is_not_a_record():
    match = one_expr('match m {\n    {k: 1} -> Done\n    {k: v} -> Pending\n    _ -> Done\n}')
    assert [type(arm.pattern).__name__ for arm in match.arms] == ["PMap", "PMap", "PWildcard"]
    assert [arm.body for arm in match.arms[:2]] == [ast.Name(id="Done"), ast.Name(id="Pending")]


def test_records_and_next_line_braces_still_parse():
    (record,) = parse_fragment("let r = Settled {\n    id: 1,\n    net: 2\n}")
    assert isinstance(record.value, ast.RecordLit) and len(record.value.fields) == 2
    (branch,) = parse_fragment("if x == Done\n{\n    1\n}")
    assert isinstance(branch.expr, ast.If)
    program = parse("cell Ledger\n{\n    state s: Phase\n    {\n        initial: A\n        A -> B\n    }\n}\n")
    assert program.cells[0].name == "Ledger"


# ---------------------------------------------------------------- deployment and nesting sections

def test_scale_runtime_and_interior_sections_parse_and_are_ignored():
    program = parse(
        "cell Shop {\n"
        "    scale {\n        replicas: 3\n        shard: order_id\n        consistency: causal\n"
        "        memory: 8Gi\n        survives: zone_a && zone_b\n    }\n"
        "    runtime { }\n"
        "    interior {\n        cell Till { on ring() { return 1 } }\n    }\n"
        "    every 5s { let tick = 1 }\n"
        "    on scale(runtime: Int) { return runtime }\n"
        "}\n")
    (cell,) = program.cells
    assert [h.name for h in cell.handlers] == ["scale"]
    assert [s.kind for s in cell.scheduled] == ["every"]
    assert cell.face is None and cell.memory is None


def test_scale_setting_needs_a_value():
    error = syntax_error("cell A {\n    scale { replicas: }\n}\n")
    assert error.diagnostic.span.line == 2


# ---------------------------------------------------------------- large machines

def _chain(states: int) -> str:
    edges = "\n".join(f"        s{i} -> s{i + 1}  // step {i}" for i in range(states - 1))
    return f'cell Big {{\n    state m {{\n        initial: s0\n{edges}\n    }}\n    on go() {{ return "/* not a comment */" }}\n}}\n'


def test_a_large_machine_parses_whole():
    program = parse(_chain(10_000))
    edges = program.cells[0].machines[0].edges
    assert len(edges) == 9_999
    assert (edges[-1].src, edges[-1].dst) == ("s9998", "s9999")


def test_comments_are_blanked_and_strings_kept_in_a_large_text():
    program = parse(_chain(50))
    handler = program.cells[0].handlers[0]
    assert handler.body.stmts[0].value.value == "/* not a comment */"
    assert program.cells[0].machines[0].edges[-1].dst == "s49"


def test_a_fresh_process_parses_with_the_cached_tables():
    import subprocess
    import sys

    code = ("from soma_kernel.syntax.parser import parse_fragment\n"
            "print(len(parse_fragment('a\\n-1')), len(parse_fragment('match m {\\n {k: 1} -> Done\\n {k: v} -> v\\n}')))")
    for _ in range(2):  # the first run may write the cache, the second reads it
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.stdout.split() == ["2", "1"], run.stderr


def test_section_keywords_stay_names_right_after_a_brace():
    program = parse('cell Market {\n    memory {\n        state: Map<String, Int> [persistent]\n    }\n'
                    '    on open() {\n        state.set("round", 1)\n        return state.get("round")\n    }\n}\n')
    (cell,) = program.cells
    assert [slot.name for slot in cell.memory.slots] == ["state"]
    first = cell.handlers[0].body.stmts[0].expr
    assert isinstance(first, ast.MethodCall) and first.receiver == ast.Name(id="state")


def test_section_keywords_stay_names_after_a_closing_brace():
    stmts = body_of('if x > 0 { 1 } else { 2 }\n state.set("a", 1)\n face.get("b")')
    assert [s.expr.receiver.id for s in stmts[1:]] == ["state", "face"]
    assert "'on' is a reserved word" in str(syntax_error("let on = 1"))
