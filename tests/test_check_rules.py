"""Each check of `soma check`, on small programs written for it: the message
and its file:line:col."""

from pathlib import Path

import pytest

from soma_kernel.analysis.check import check_program
from soma_kernel.syntax.parser import parse


def check(source: str):
    """Check a program given as text (origin `case.cell`)."""
    return check_program(parse(source, "case.cell"))


def located(report, severity: str = "error") -> list[tuple[str, str]]:
    """(file:line:col, message) of every diagnostic of one severity."""
    items = {"error": report.errors, "warning": report.warnings, "note": report.notes}[severity]
    return [(d.location(), d.message) for d in items]


def only_error(source: str) -> tuple[str, str]:
    """The single error a program has."""
    errors = located(check(source))
    assert len(errors) == 1, errors
    return errors[0]


# ---------------------------------------------------------------- structure

def test_empty_file_is_an_error():
    report = check("// nothing here\n")
    assert [d.message for d in report.errors] == ["empty file: no cell is declared"]


def test_duplicate_cell_names_the_first_line():
    assert only_error("cell A {\n    on f() { return 1 }\n}\ncell A {\n    on g() { return 2 }\n}\n") == (
        "case.cell:4:1", "duplicate cell 'A' (first declared at line 1)")


def test_duplicate_slot_signal_and_handler():
    errors = located(check(
        "cell A {\n"
        "    face {\n        signal f() -> Int\n        signal f() -> Int\n    }\n"
        "    memory {\n        m: Map<String, Int>\n        m: Map<String, Int>\n    }\n"
        "    on f() { return 1 }\n"
        "    on f() { return 2 }\n"
        "}\n"))
    assert ("case.cell:4:9", "duplicate signal 'f' in cell 'A' (first declared at line 3)") in errors
    assert ("case.cell:8:9", "duplicate memory slot 'm' in cell 'A' (first declared at line 7)") in errors
    assert ("case.cell:11:5", "duplicate handler 'f' in cell 'A' (first declared at line 10)") in errors


def test_second_machine_in_a_cell():
    message = only_error("cell A {\n    state s {\n        initial: a\n        a -> b\n    }\n"
                         "    state t {\n        initial: x\n        x -> y\n    }\n}\n")
    assert message[0] == "case.cell:6:5"
    assert "declares a second state machine 't'" in message[1]


def test_scalar_slot_type():
    assert only_error("cell A {\n    memory {\n        n: Int\n    }\n}\n") == (
        "case.cell:3:9", "memory slot 'n' in cell 'A' has type Int: a slot must be a Map or a List")


def test_slot_property_contradiction():
    location, message = only_error("cell A {\n    memory {\n        m: Map<String, Int> [persistent, ephemeral]\n"
                                   "    }\n}\n")
    assert location == "case.cell:3:9"
    assert message == "memory slot 'm': properties persistent and ephemeral contradict each other"


# ---------------------------------------------------------------- face

FACE = """cell A {
    face {
        signal f(n: Int) -> String
        signal g(n: Int) -> Int
        signal h(a: Int, b: Int) -> Int
        tool t(x: String) -> Int "a tool"
    }
    on f(n: String) { return "x" }
    on g(n: Int) { return "text" }
    on h(a: Int) { return a }
}
"""


def test_face_contracts():
    errors = located(check(FACE))
    assert ("case.cell:6:9", "face contract: tool 't' declared in cell 'A' has no handler") in errors
    assert ("case.cell:8:10", "face contract: parameter 'n' of signal 'f' is Int in the face but String in "
            "the handler") in errors
    assert ("case.cell:9:20", "face contract: signal 'g' returns Int but handler 'g' returns a String") in errors
    assert ("case.cell:10:5", "face contract: signal 'h' takes 2 parameter(s) but its handler takes 1") in errors
    assert len(errors) == 4


def test_signal_without_handler():
    assert only_error("cell A {\n    face {\n        signal go() -> Int\n    }\n}\n") == (
        "case.cell:3:9", "face contract: signal 'go' declared in cell 'A' has no handler")


# ---------------------------------------------------------------- names

def test_undefined_variable_with_did_you_mean():
    assert only_error("cell A {\n    on f(total: Int) {\n        return totl + 1\n    }\n}\n") == (
        "case.cell:3:16", "undefined variable 'totl' (did you mean 'total'?)")


def test_let_in_a_branch_is_not_visible_after_it():
    assert only_error("cell A {\n    on f(n: Int) {\n        if n > 1 { let big = true }\n"
                      "        return big\n    }\n}\n") == ("case.cell:4:16", "undefined variable 'big'")


def test_let_is_not_visible_before_it():
    location, message = only_error("cell A {\n    on f() {\n        let a = b\n        let b = 1\n"
                                   "        return a\n    }\n}\n")
    assert (location, message.split(" (")[0]) == ("case.cell:3:17", "undefined variable 'b'")


def test_undefined_name_inside_interpolation_and_require_detail():
    errors = located(check('cell A {\n    on f(n: Int) {\n        require n > 0 else Bad "n is {m}"\n'
                           '        return "value {nn}"\n    }\n}\n'))
    assert [e[0] for e in errors] == ["case.cell:3:39", "case.cell:4:24"]
    assert errors[0][1].startswith("undefined variable 'm'")
    assert errors[1][1] == "undefined variable 'nn' (did you mean 'n'?)"


def test_scoped_names_that_are_fine():
    report = check("cell A {\n    on f(xs: List) {\n        let total = 0\n"
                   "        for x in xs { total = total + x }\n"
                   "        let ys = xs |> map(v => v * 2)\n"
                   "        let r = match total { 0 -> 1\n            n if n > 3 -> n\n            _ -> 2 }\n"
                   "        return r + len(ys)\n    }\n}\n")
    assert report.errors == [] and report.warnings == []


def test_break_and_continue_outside_loops():
    errors = located(check("cell A {\n    on f() {\n        break\n        for x in [1] { continue }\n"
                           "        continue\n    }\n}\n"))
    assert errors == [("case.cell:3:9", "`break` outside a loop"), ("case.cell:5:9", "`continue` outside a loop")]


def test_set_on_a_local_and_whole_slot_assignment():
    errors = located(check("cell A {\n    memory {\n        log: List<String>\n    }\n"
                           "    on f() {\n        let m = map()\n        m.set(\"k\", 1)\n        log = []\n"
                           "        return m\n    }\n}\n"))
    assert errors[0] == ("case.cell:7:9", "`.set()` on the local 'm': slot methods write memory slots, "
                         "not local values — the result is thrown away")
    assert errors[1] == ("case.cell:8:9", "whole-slot assignment to memory slot 'log' is not allowed")


def test_push_on_a_local_whose_result_is_kept_is_ufcs():
    report = check("cell A {\n    on f(xs: List) {\n        let out = []\n        for x in xs {\n"
                   "            out = out.push(x)\n        }\n        return out\n    }\n}\n")
    assert report.errors == []


def test_foreign_slot_access():
    assert only_error("cell A {\n    memory {\n        log: List<String>\n    }\n    on a() { return 1 }\n}\n"
                      "cell B {\n    on peek() { return log }\n}\n") == (
        "case.cell:8:24", "cell 'B' reads memory slot 'log' of cell 'A': another cell's slot is private")


def test_foreign_slot_write_says_writes():
    report = check("cell A {\n    memory {\n        log: List<String>\n        n: Map<String, Int>\n    }\n"
                   "    on a() { return 1 }\n}\n"
                   "cell B {\n    on poke() {\n        log.push(\"x\")\n        n[\"k\"] = 2\n        return 1\n    }\n}\n")
    assert located(report) == [
        ("case.cell:10:9", "cell 'B' writes memory slot 'log' of cell 'A': another cell's slot is private"),
        ("case.cell:11:9", "cell 'B' writes memory slot 'n' of cell 'A': another cell's slot is private")]
    assert report.errors[0].hint == "add a handler to 'A' that makes this write, and call A.<handler>()"


def test_let_hiding_a_slot_is_a_warning():
    report = check("cell A {\n    memory {\n        seen: Map<String, Int>\n    }\n"
                   "    on f() {\n        let seen = 1\n        return seen\n    }\n}\n")
    assert report.errors == []
    assert located(report, "warning") == [("case.cell:6:9", "`let seen` hides the memory slot 'seen' of cell 'A'")]
    assert report.summary() == "✓ 1 warning(s), no errors."


# ---------------------------------------------------------------- calls

def test_undefined_function_with_did_you_mean():
    assert only_error("cell A {\n    on f(s: String) {\n        return lowercas(s)\n    }\n}\n") == (
        "case.cell:3:16", "undefined function lowercas() (did you mean 'lowercase()'?)")


def test_handler_and_builtin_arity():
    errors = located(check("cell A {\n    on add(a: Int, b: Int) { return a + b }\n"
                           "    on f() {\n        let x = add(1)\n        return contains(\"a\")\n    }\n}\n"))
    assert errors[0] == ("case.cell:4:17", "handler 'add' takes 2 argument(s), but the call passes 1")
    assert errors[1][0] == "case.cell:5:16"
    assert errors[1][1].startswith("builtin contains() takes 2")


def test_trailing_map_parameter_is_optional():
    report = check("cell A {\n    on add(a: Int, opts: Map) { return a }\n    on f() { return add(1) }\n}\n")
    assert report.errors == []


def test_qualified_call_to_a_missing_handler():
    assert only_error("cell A {\n    on go() { return B.pign() }\n}\ncell B {\n    on ping() { return 1 }\n}\n") == (
        "case.cell:2:22", "cell 'B' has no handler 'pign' (did you mean 'ping'?)")


def test_ambiguous_bare_call_across_cells():
    location, message = only_error("cell A {\n    on go() { return ping() }\n}\ncell B {\n    on ping() { return 1 }\n"
                                   "}\ncell C {\n    on ping() { return 2 }\n}\n")
    assert location == "case.cell:2:22"
    assert message == "ambiguous call ping(): cells 'B', 'C' all define a handler 'ping'"


def test_unknown_ufcs_method():
    location, message = only_error("cell A {\n    on f(s: String) { return s.uppercas() }\n}\n")
    assert location == "case.cell:2:30"
    assert message == "unknown method .uppercas() (did you mean 'uppercase()'?)"


def test_calling_a_local_lambda_is_fine():
    report = check("cell A {\n    on f() {\n        let twice = x => x * 2\n        return twice(3)\n    }\n}\n")
    assert report.errors == []


# ---------------------------------------------------------------- machines

MACHINE = """cell Shop {
    face {
        signal pay(id: String, amount: Int) -> Int
    }
    state order {
        initial: open
        open -> funded { guard { amount > 0 && limit >= amount } }
        funded -> released
        open -> cancelled
        * -> failed except [released, nope]
    }
    on pay(id: String, amount: Int) {
        if amount > 5 { let limit = 10 }
        transition(id, "funded")
        transition(id, "open", "released")
        transition(id, "nope", "released")
        transition(id, "opened")
        transition(id)
        return 1
    }
}
"""


def test_machine_checks():
    errors = located(check(MACHINE))
    assert errors == [
        ("case.cell:10:9", "`except [nope]` in machine 'order' names no declared state (did you mean 'open'?)"),
        ("case.cell:14:9", "the guard on open -> funded reads 'limit', but handler 'pay' binds 'limit' only "
                           "inside a block that does not hold this transition()"),
        ("case.cell:15:9", "cell 'Shop' declares no edge open -> released; edges leaving 'open': "
                           "[funded, cancelled, failed]"),
        ("case.cell:16:24", "transition() from \"nope\" (did you mean \"open\"?): \"nope\" is not a state of "
                            "machine 'order'"),
        ("case.cell:17:24", "transition(_, \"opened\"): \"opened\" is not a state of machine 'order' "
                            "(did you mean 'open'?)"),
        ("case.cell:18:9", "transition() takes 2 arguments (instance id, target state) or 3 (instance id, from "
                           "state, target state), not 1"),
    ]


def test_guard_reads_a_local_bound_before_the_transition():
    report = check("cell A {\n    state s {\n        initial: a\n        a -> b { guard { limit > 1 } }\n    }\n"
                   "    on go(id: String) {\n        let limit = 5\n        transition(id, \"b\")\n    }\n}\n")
    assert report.errors == []


def test_guard_variable_bound_after_the_transition_is_an_error():
    location, message = only_error(
        "cell A {\n    state s {\n        initial: a\n        a -> b { guard { limit > 1 } }\n    }\n"
        "    on go(id: String) {\n        transition(id, \"b\")\n        let limit = 5\n    }\n}\n")
    assert location == "case.cell:7:9"
    assert message.endswith("but handler 'go' binds 'limit' only after this transition()")


def test_guard_variable_never_bound_says_so():
    location, message = only_error(
        "cell A {\n    state s {\n        initial: a\n        a -> b { guard { limit > 1 } }\n    }\n"
        "    on go(id: String) {\n        transition(id, \"b\")\n    }\n}\n")
    assert message.endswith("but handler 'go' does not bind 'limit' before this transition()")


def test_target_no_edge_enters():
    assert only_error("cell A {\n    state s {\n        initial: a\n        a -> b\n    }\n"
                      "    on go(id: String) { transition(id, \"a\") }\n}\n") == (
        "case.cell:6:40", "transition(_, \"a\"): no edge of machine 's' enters \"a\"")


# ---------------------------------------------------------------- invariants, match

def test_invariant_unknown_name_and_handler_call():
    errors = located(check("cell A {\n    memory {\n        total: Map<String, Int>\n"
                           "        invariant totl >= 0\n        invariant helper(total)\n    }\n"
                           "    on helper(x: Int) { return true }\n}\n"))
    assert errors[0] == ("case.cell:4:19", "invariant reads unknown name 'totl' (did you mean 'total'?)")
    assert errors[1][0] == "case.cell:5:19"
    assert errors[1][1].startswith("invariant calls helper(): an invariant may call pure builtins only")


def test_invariant_status_needs_a_machine():
    location, message = only_error("cell A {\n    memory {\n        m: Map<String, String>\n"
                                   "        invariant status != \"x\"\n    }\n}\n")
    assert location == "case.cell:4:19"
    assert "declares no `state { }` machine" in message


SHAPES = """cell type Shape {
    variants {
        Circle { r: Float }
        Square(Float)
        Dot
    }
}
cell A {
    on area(s: Shape) {
        return match s {
            Circle { r } -> r * r
            Square(w) if w > 0 -> w * w
            Dot -> 0
        }
    }
    on ok(s: Shape) {
        return match s {
            Circle { r } -> r
            _ -> 0
        }
    }
}
"""


def test_match_on_a_sum_type_must_be_exhaustive():
    assert only_error(SHAPES) == ("case.cell:10:16", "match on Shape is not exhaustive: missing Square")


def test_non_exhaustive_match_hint_joins_the_missing_variants():
    one = check(SHAPES).errors[0]
    assert one.hint == "add an arm for Square, or a `_ -> …` arm"
    several = check(SHAPES.replace("        Dot\n", "        Dot\n        Line\n        Ray\n")).errors[0]
    assert several.message == "match on Shape is not exhaustive: missing Square, Line, Ray"
    assert several.hint == "add arms for Square, Line and Ray, or a `_ -> …` arm"


# ---------------------------------------------------------------- test rules, think options

def test_mock_naming_no_handler_and_undefined_rule_name():
    errors = located(check("cell A {\n    on helper() { return 1 }\n}\ncell test T {\n    rules {\n"
                           "        mock helpr 1\n        let x = helper()\n        assert x == y\n    }\n}\n"))
    assert errors == [("case.cell:6:9", "mock helpr names no handler (did you mean 'helper'?)"),
                      ("case.cell:8:21", "undefined variable 'y' in a test rule")]


def test_unknown_literal_think_option():
    location, message = only_error("cell agent A {\n    on ask(q: String) {\n"
                                   "        return think(q, map(\"max_token\", 10))\n    }\n}\n")
    assert location == "case.cell:3:16"
    assert message == "think(): unknown option 'max_token' (did you mean 'max_tokens'?)"


# ---------------------------------------------------------------- report rendering

def test_text_report_lists_warnings_then_errors_then_the_summary():
    report = check("cell A {\n    memory {\n        seen: Map<String, Int>\n    }\n"
                   "    on f() {\n        let seen = 1\n        return sen\n    }\n}\n")
    lines = report.render_text().splitlines()
    assert lines[0] == "warning: case.cell:6:9: `let seen` hides the memory slot 'seen' of cell 'A'"
    error_line = next(i for i, line in enumerate(lines) if line.startswith("error:"))
    assert lines[error_line] == "error: case.cell:7:16: undefined variable 'sen' (did you mean 'seen'?)"
    assert lines[-1] == "✗ 1 error(s), 1 warning(s)."
    assert not report.passed


def test_json_report_shape():
    import json

    data = json.loads(check("cell A {\n    on f() { return nope }\n}\n").render_json())
    assert set(data) == {"passed", "errors", "warnings", "notes", "error_count", "warning_count"}
    assert data["error_count"] == 1
    error = data["errors"][0]
    assert error["kind"] == "undefined_name" and error["line"] == 2 and error["fix"]


@pytest.mark.parametrize("notes, summary", [(0, "✓ All checks passed."), (1, "✓ All checks passed (1 note above)."),
                                            (2, "✓ All checks passed (2 notes above).")])
def test_summary_counts_notes(notes, summary):
    cells = "".join(
        f"cell agent A{i} {{\n    cost {{\n        tokens: 50\n    }}\n"
        f"    on ask(q: String) {{ return think(q, map(\"max_tokens\", 50)) }}\n}}\n" for i in range(notes))
    report = check(cells or "cell A {\n    on f() { return 1 }\n}\n")
    assert report.summary() == summary


def test_web_ring_response_builtin_is_known():
    source = (Path(__file__).parent / "check_cases" / "web_route.cell").read_text(encoding="utf-8")
    assert check(source).errors == []
    assert only_error("cell A {\n    on f() { return response(404) }\n}\n")[1].startswith(
        "builtin response() takes at least 2")


TYPED_DOOR = ("cell type Phase {\n    variants { Open  Shut }\n}\n"
              "cell Door {\n    state door: Phase {\n        initial: Open\n        Open -> Shut\n    }\n"
              "    on close(id: String) {\n        transition(id, {target})\n        return get_status(id)\n    }\n"
              "    on flip(id: String, to: String) {\n        transition(id, to)\n        return 1\n    }\n}\n")


def test_unknown_typed_machine_target_is_reported_once():
    report = check(TYPED_DOOR.replace("{target}", "Shutt"))
    assert located(report) == [("case.cell:10:24", "transition(_, Shutt): Shutt is not a state of machine "
                                                    "'door' (did you mean 'Shut'?)")]


def test_lowercase_transition_argument_in_a_typed_machine_is_a_variable():
    assert check(TYPED_DOOR.replace("{target}", "Shut")).errors == []
    report = check(TYPED_DOOR.replace("{target}", "shut_state"))
    assert [message for _, message in located(report)] == ["undefined variable 'shut_state'"]


def test_value_slips_variant_literals_bool_operands_and_emit():
    report = check((Path(__file__).parent / "check_cases" / "values_bad.cell").read_text(encoding="utf-8"))
    assert located(report) == [
        ("case.cell:11:27", "variant 'Settled' literal is missing field(s) net"),
        ("case.cell:11:52", "variant 'Settled' has no field 'nett' (fields: id, net)"),
        ("case.cell:12:30", "variant 'Pending' of Outcome has no fields — it is a unit variant: write Pending"),
        ("case.cell:13:27", "variant Failed takes 1 argument(s), but the call passes 2"),
        ("case.cell:14:27", "the operand of `!` must be a Bool, but `n` is declared Int"),
        ("case.cell:15:12", "the `if` condition must be a Bool, but it is the Int that len() returns"),
        ("case.cell:16:22", "the left operand of `||` must be a Bool, but `tags` is declared List"),
        ("case.cell:18:9", "emit settled() passes 2 argument(s), but the listener 'settled' of cell 'Ledger' takes 1"),
    ]
    assert located(report, "warning") == [
        ("case.cell:17:24", "the operand of `!` must be a Bool, but it is an Int literal"),
        ("case.cell:19:9", "emit nobody(): no cell has a handler `on nobody(…)` — nothing receives it"),
    ]


def test_a_cell_name_can_pass_one_of_its_handlers_as_a_value():
    report = check("cell Crowd {\n    on run(people: List) {\n        return map(\"task\", Shopper.decide, \"n\", len(people))\n"
                   "    }\n}\ncell Shopper {\n    on decide(me: Map) { return 1 }\n}\n")
    assert report.errors == []
    assert located(check("cell A {\n    on f() { return Shoper.decide }\n}\n")) == [
        ("case.cell:2:21", "undefined variant or name 'Shoper'")]


def test_many_accepted_forms_pass_check_and_verify():
    source = (Path(__file__).parent / "check_cases" / "forms_ok.cell").read_text(encoding="utf-8")
    report = check(source)
    assert report.errors == [] and report.warnings == []
    assert [d.message.split(" — ")[0] for d in report.notes] == ["cost: 'tokens' bound proven"]
    from soma_kernel.analysis.verify.checks import verify_program
    from soma_kernel.analysis.verify.report import render_text

    text = render_text(verify_program(parse(source, "forms_ok.cell"), None, "forms_ok.cell"))
    assert text.endswith("VERIFY OK\n")


# ---------------------------------------------------------------- lambdas

def test_return_inside_a_lambda_is_an_error_at_the_return():
    message = only_error(
        "cell L {\n"
        "    on scaled(xs: List<Int>) {\n"
        "        let ys = xs |> map(v => { return v * 10 })\n"
        "        return ys\n"
        "    }\n"
        "}\n")
    assert message == ("case.cell:3:35", "`return` inside a lambda")


def test_return_in_a_nested_lambda_is_reported_once_and_plain_returns_pass():
    report = check(
        "cell L {\n"
        "    on f(xs: List<List<Int>>) {\n"
        "        let ys = xs |> map(row => row |> filter(v => { if v > 1 { return true }\n false }))\n"
        "        for x in xs { if len(x) == 0 { return [] } }\n"
        "        return ys |> map(v => { let w = len(v)\n w * 2 })\n"
        "    }\n"
        "}\n")
    assert located(report) == [("case.cell:3:67", "`return` inside a lambda")]
    assert report.errors[0].hint.startswith("a lambda's value is its last expression")


def test_len_of_a_slot_in_an_invariant_warns_that_it_is_the_written_value():
    report = check(
        "cell Box {\n"
        "    memory {\n"
        "        items: Map<String, String>\n"
        "        invariant len(items) < 3 && items.size <= 5\n"
        "    }\n"
        "    on put(k: String, v: String) { items.set(k, v)\n return 1 }\n"
        "}\n")
    assert not report.errors
    assert located(report, "warning") == [
        ("case.cell:4:19", "`len(items)` in an invariant is the length of the value being written to items, "
                           "not the number of entries")]
    assert report.warnings[0].hint == "for the entry count after the write, write `items.size`"


TWO_MACHINES = (
    "cell Orders {\n    state order {\n        initial: open\n        open -> paid\n    }\n"
    "    on pay(id: String) {\n        transition(id, \"paid\")\n        return get_status(id)\n    }\n}\n"
    "cell Plain {\n    on hi() { return 1 }\n}\n")


def test_a_qualified_machine_read_needs_a_cell_with_a_machine_and_one_id():
    report = check(TWO_MACHINES + "cell test T {\n    rules {\n        assert Orders.get_status(\"o\") == \"open\"\n"
                   "        assert Plain.get_status(\"o\") == \"open\"\n        assert Orders.has_state()\n    }\n}\n")
    assert located(report) == [
        ("case.cell:17:16", "cell 'Plain' has no state machine, so Plain.get_status() has nothing to read"),
        ("case.cell:18:16", "Orders.has_state takes 1 argument(s), but the call passes 0")]


def test_a_returned_typed_parameter_or_list_element_must_fit_the_declared_return():
    errors = located(check(
        "cell R {\n"
        "    face {\n"
        "        signal f(x: Int) -> String\n"
        "        signal g() -> List<Int>\n"
        "        signal h(x: Int) -> String\n"
        "        signal k(s: Int) -> String\n"
        "    }\n"
        "    on f(x: Int) { return x }\n"
        "    on g() { return [1, \"a\"] }\n"
        "    on h(x: Int) { x }\n"
        "    on k(s: Int) {\n"
        "        let s = \"now a string\"\n"
        "        return s\n"
        "    }\n"
        "}\n"))
    assert errors == [
        ("case.cell:8:20", "face contract: signal 'f' returns String but handler 'f' returns an Int"),
        ("case.cell:9:25", "face contract: signal 'g' returns List<Int> but handler 'g' puts a String in the list"),
        ("case.cell:10:20", "face contract: signal 'h' returns String but handler 'h' returns an Int")]
