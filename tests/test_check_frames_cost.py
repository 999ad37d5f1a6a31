"""Skeleton frames and the cost bound proof."""

from pathlib import Path

from soma_kernel.analysis.check import check_program
from soma_kernel.syntax.parser import parse

CASES = Path(__file__).parent / "check_cases"


def check_file(name: str):
    """Check one of tests/check_cases (origin is the bare file name)."""
    return check_program(parse((CASES / name).read_text(encoding="utf-8"), name))


def check(source: str):
    """Check a program given as text (origin `case.cell`)."""
    return check_program(parse(source, "case.cell"))


def located(diagnostics) -> list[tuple[str, str]]:
    """(file:line:col, message) pairs."""
    return [(d.location(), d.message) for d in diagnostics]


# ---------------------------------------------------------------- frames

def test_every_frame_violation_kind_is_refused_with_its_place():
    report = check_file("frames_bad.cell")
    assert located(report.errors) == [
        ("frames_bad.cell:29:21", "frame: signal 'count' calls think() but its frame does not declare `calls think`"),
        ("frames_bad.cell:34:9", "frame: signal 'jot' writes slot 'notes' but its frame does not declare "
                                 "`writes notes`"),
        ("frames_bad.cell:39:16", "frame: signal 'peek' reads slot 'notes' but its frame does not declare "
                                  "`reads notes`"),
        ("frames_bad.cell:48:9", "frame: signal 'close' moves running -> finished but its frame does not declare "
                                 "`moves running -> finished`"),
        ("frames_bad.cell:49:9", "frame: signal 'close' moves to 'finished' but its frame declares no move into "
                                 "'finished'"),
    ]
    assert all(d.kind == "frame" and d.hint for d in report.errors)
    assert [d.hint for d in report.errors[3:]] == [
        "add `moves running -> finished` to signal 'close', or remove the transition from its body",
        "add `moves <from> -> finished` to signal 'close', or remove the transition from its body"]


def test_bodies_inside_their_frames_pass():
    report = check_file("frames_ok.cell")
    assert report.errors == [] and report.warnings == []
    assert report.render_text() == "✓ All checks passed.\n"


SKELETON = """skeleton agent S {
    memory {
        box: Map<String, Int>
    }
    state m {
        initial: a
        a -> b
    }
    face {
        signal go(id: String) -> Int
            %s
    }
}
flesh S {
    on go(id) {
        %s
        return 1
    }
    on helper() { return 2 }
}
"""


def skeleton(frame: str, body: str):
    """Check a one-signal skeleton with the given frame and body line."""
    return check(SKELETON % (frame, body))


def test_calling_a_handler_needs_calls():
    errors = located(skeleton("reads box", "let h = helper()").errors)
    assert errors == [("case.cell:16:17", "frame: signal 'go' calls helper() but its frame does not declare "
                                          "`calls helper`")]
    assert skeleton("calls helper", "let h = helper()").errors == []


def test_pure_builtins_need_no_declaration():
    assert skeleton("reads box", 'let t = uppercase(to_string(len("ab")))').errors == []


def test_writes_imply_reads():
    assert skeleton("writes box", 'box.set("k", (box.get("k") ?? 0) + 1)').errors == []


def test_index_write_is_a_write():
    errors = located(skeleton("reads box", 'box["k"] = 3').errors)
    assert errors == [("case.cell:16:9", "frame: signal 'go' writes slot 'box' but its frame does not declare "
                                         "`writes box`")]


def test_two_argument_move_to_a_declared_target_passes():
    assert skeleton("moves a -> b", 'transition(id, "b")').errors == []


def test_frame_naming_unknown_slot_and_edge():
    messages = [d.message for d in skeleton("writes bx\n            moves b -> a", "let x = 1").errors]
    assert "frame of signal 'go' names slot 'bx', which cell 'S' does not declare (did you mean 'box'?)" in messages
    assert "frame of signal 'go' declares `moves b -> a`, which is not an edge of the cell's state machine" \
        in messages


# ---------------------------------------------------------------- cost

def agent(cost: str, body: str, extra: str = "") -> str:
    """An agent cell with a cost block and one handler body."""
    return (f"cell agent Bot {{\n    face {{\n        signal ask(q: String) -> String\n{extra}    }}\n"
            f"    cost {{\n        tokens: {cost}\n    }}\n"
            f"    on ask(q: String) {{\n{body}\n    }}\n}}\n")


PROVEN = ("cost: 'tokens' bound proven — peak {peak} reply tokens (the max_tokens caps) ≤ declared {declared} "
          "(prompts are not counted: cap them with set_budget)")


def test_cost_proven_for_one_capped_think():
    report = check(agent("300", '        return think(q, map("max_tokens", 300))'))
    assert located(report.notes) == [("case.cell:6:9", PROVEN.format(peak=300, declared=300))]
    assert report.summary() == "✓ All checks passed (1 note above)."


def test_cost_multiplies_literal_loops_and_takes_the_largest_branch():
    body = ('        let out = ""\n'
            '        for i in range(0, 3) { out = out + think(q, map("max_tokens", 10)) }\n'
            '        if q == "x" { return think(q, map("max_tokens", 50)) }\n'
            '        else { return think(q, map("max_tokens", 20)) }')
    report = check(agent("100", body))
    assert [d.message for d in report.notes] == [PROVEN.format(peak=80, declared=100)]


def test_cost_composes_called_handlers():
    source = agent("100", '        return _more(think(q, map("max_tokens", 60)))').replace(
        "    }\n}\n", '    }\n    on _more(q: String) { return think(q, map("max_tokens", 50)) }\n}\n')
    report = check(source)
    assert located(report.errors) == [("case.cell:6:9", "cost: 'tokens' budget exceeded — computed 110 > "
                                                        "declared 100")]


def test_cost_rounds_come_from_max_rounds_when_the_cell_has_tools():
    tool = '        tool look(x: String) -> String "look it up"\n'
    source = agent("100", '        return think(q, map("max_tokens", 40, "max_rounds", 3))', tool).replace(
        "    }\n}\n", "    }\n    on look(x: String) { return x }\n}\n")
    assert [d.message for d in check(source).errors] == [
        "cost: 'tokens' budget exceeded — computed 120 > declared 100"]


def test_cost_without_max_tokens_is_advisory_error():
    report = check(agent("100", "        return think(q)"))
    assert located(report.errors) == [("case.cell:6:9", "cost: 'tokens' bound is advisory — 1 unbounded "
                                                        "think()/loop site(s): [ask::think (no max_tokens)]")]
    assert report.summary() == "✗ 1 error(s), 0 warning(s)."


def test_cost_with_a_computed_max_tokens_says_so():
    report = check(agent("100", '        return think(q, map("max_tokens", len(q)))'))
    assert [d.message for d in report.errors] == [
        "cost: 'tokens' bound is advisory — 1 unbounded think()/loop site(s): [ask::think (computed max_tokens)]"]


def test_cost_think_in_an_unbounded_loop_is_advisory():
    body = '        for w in split(q, " ") { let a = think(w, map("max_tokens", 5)) }\n        return q'
    messages = [d.message for d in check(agent("100", body)).errors]
    assert messages == ["cost: 'tokens' bound is advisory — 1 unbounded think()/loop site(s): "
                        "[ask::for loop (unbounded iterator)]"]


def test_cost_loop_bound_annotation_bounds_the_loop():
    body = ('        for [loop_bound(4)] w in split(q, " ") { let a = think(w, map("max_tokens", 5)) }\n'
            '        return q')
    assert [d.message for d in check(agent("100", body)).notes] == [PROVEN.format(peak=20, declared=100)]


def test_cost_recursion_is_advisory():
    source = agent("100", "        return again(q)").replace(
        "    }\n}\n", '    }\n    on again(q: String) { return again(think(q, map("max_tokens", 1))) }\n}\n')
    messages = [d.message for d in check(source).errors]
    assert messages == ["cost: 'tokens' bound is advisory — 1 unbounded think()/loop site(s): "
                        "[again::again (recursion)]"]
