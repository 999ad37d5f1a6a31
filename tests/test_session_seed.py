"""Both seed programs explored statement by statement in a live session, as a
person would in a notebook, with the results of `soma-kernel test` / `verify`.

The refund agent: its type and agent in two notebook cells, its soma.toml
through %%toml, then the rules of its test cell one notebook cell at a time
(each `mock` line in the cell of the call it scripts). The ✓ lines printed
along the way must be exactly those of the seed's expected test output.
The triage agent: a skeleton and its flesh in two cells, %skeleton, and a
flesh body refused by %check-at-definition for leaving its frame.
"""

from __future__ import annotations

import os
import re

import pytest

from soma_kernel.session.session import Session

SEEDS = os.path.join(os.path.dirname(__file__), "seeds")
REFUND = os.path.join(SEEDS, "refund_agent")
TRIAGE = os.path.join(SEEDS, "triage_agent")


def read(*parts: str) -> str:
    """A seed file's text."""
    with open(os.path.join(*parts), encoding="utf-8") as handle:
        return handle.read()


def split_at(text: str, *markers: str) -> list[str]:
    """`text` cut just before each marker (the notebook cells of a program)."""
    cuts = [0] + [text.index(marker) for marker in markers] + [len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


def rule_cells(test_cell: str) -> list[str]:
    """The rules of a test cell as notebook cells: comments dropped, each mock with the next rule."""
    body = test_cell[test_cell.index("rules {") + len("rules {"):test_cell.rindex("}")]
    body = body[:body.rindex("}")]
    cells, pending = [], []
    for line in body.splitlines():
        line = re.sub(r"\s+//.*$", "", line).strip()
        if not line or line.startswith("//"):
            continue
        pending.append(line)
        if not line.startswith("mock "):
            cells.append("\n".join(pending))
            pending = []
    assert not pending, "a mock line with nothing after it"
    return cells


def ok(result):
    """The result, asserted to have no error."""
    assert result.ok, result.error
    return result


def value(result) -> str:
    """The text/plain of a cell's value."""
    return ok(result).result["text/plain"]


# ---------------------------------------------------------------- refund agent

@pytest.fixture
def refund(tmp_path):
    """A session (in an empty folder) holding the refund agent, defined cell by cell, and its soma.toml."""
    session = Session(directory=str(tmp_path))
    program = read(REFUND, "refund_agent.cell")
    decision, agent, tests = split_at(program, "cell agent RefundAgent", "cell test RefundTests")
    ok(session.execute(decision, "decision", count=1))
    ok(session.execute(agent, "agent", count=2))
    toml = ok(session.execute("%%toml\n" + read(REFUND, "soma.toml"), "toml", count=3))
    assert toml.stream_text() == "soma.toml replaced: [agent] mock = 'echo', [verify] properties, [package]\n"
    session.refund_tests = tests
    return session


def test_refund_rules_one_cell_at_a_time_print_the_seed_test_lines(refund):
    expected = read(REFUND, "expected", "test.txt").splitlines()
    expected_marks = [line + "\n" for line in expected if line.startswith("  ✓")]
    printed = []
    for number, code in enumerate(rule_cells(refund.refund_tests), start=10):
        result = ok(refund.execute(code, f"rule{number}", count=number))
        assert result.stream_text("stderr") == ""
        printed.append(result.stream_text())
    assert printed == expected_marks


def test_refund_decisions_values_and_refusals(refund):
    run = refund.execute
    assert value(run('seed_order("o1", 5000, 3)\nseed_order("o2", 50000, 3)\nseed_order("o3", 5000, 45)')) == "5000"
    approve = 'mock think """{"decision": "approve", "reason": "ok"}"""\n'
    assert value(run(approve + 'decide("r1", "o1", 4000, "broken")')) == '{"state": "paid", "amount": 4000}'
    assert value(run('mock think """{"decision": "deny", "reason": "used"}"""\n'
                     'decide("r2", "o1", 4000, "meh")')) == '{"state": "denied", "reason": "used"}'
    assert value(run('mock think "garbage from the model"\ndecide("r3", "o1", 10, "?")')) == (
        '{"state": "escalated", "reason": "unreadable decision"}')
    guarded = value(run(approve + 'decide("r4", "o1", 9000, "want more")'))
    assert guarded.startswith('{"state": "escalated", "reason": "decided → paid requires amount <= order.amount')
    assert value(run("paid_today()")) == "4000"
    assert value(run(approve + 'decide("r5", "o3", 100, "late")')).startswith('{"state": "escalated"')
    assert value(run(approve + 'mock approve false\ndecide("r6", "o2", 30000, "big")')) == (
        '{"state": "escalated", "reason": "human declined"}')
    assert value(run(approve + 'mock approve true\ndecide("r7", "o2", 30000, "big")')) == (
        '{"state": "paid", "amount": 30000}')
    assert value(run("paid_today()")) == "34000"
    assert value(run('seed_order("o4", 100000, 1)')) == "100000"
    capped = value(run(approve + 'mock approve true\ndecide("r8", "o4", 70000, "huge")'))
    assert capped.startswith('{"state": "escalated", "reason": "paid_by_day[')
    assert "= 104000 violates invariant paid_by_day >= 0 && paid_by_day <= 100000" in capped
    assert value(run("paid_today()")) == "34000"
    assert value(run('mock think error "timeout"\ndecide("r9", "o1", 10, "x")')).startswith('{"state": "failed"')
    assert ok(run("%mocks")).stream_text() == "no mocks queued\n"

    states = ok(run("%state RefundAgent")).displays[0]["text/plain"]
    assert states == ('{"r1": "paid", "r2": "denied", "r3": "escalated", "r4": "escalated", "r5": "escalated", '
                      '"r6": "escalated", "r7": "paid", "r8": "escalated", "r9": "failed"}')
    assert ok(run("%state RefundAgent r4")).stream_text() == (
        "RefundAgent r4: escalated\n  history: received → decided → escalated\n  next: none (terminal)\n")
    memory = ok(run("%memory RefundAgent")).displays[0]["text/plain"]
    assert re.search(r'"paid_by_day": \{"\d{4}-\d\d-\d\d": 34000\}', memory)
    assert '"o4": {"amount": 100000, "days": 1}' in memory

    live = ok(run("%diagram RefundAgent")).displays[0]["text/plain"]
    assert 'label="paid\\n2 live"' in live and 'label="escalated\\n5 live"' in live
    assert 'label="failed\\n1 live"' in live and "#d62728" not in live
    path = ok(run("%diagram RefundAgent request r4")).displays[0]["text/plain"]
    red = 'color="#d62728"'
    assert f'"received" -> "decided" [{red}' in path and f'"decided" -> "escalated" [{red}' in path
    assert '"decided" -> "paid" [label="[amount <= order.amount && order.days <= 30]"]' in path


def test_refund_verify_and_test_magics_match_the_cli(refund):
    ok(refund.execute(refund.refund_tests, "tests", count=4))
    verify = ok(refund.execute("%verify", count=5)).displays[0]["text/plain"]
    expected = read(REFUND, "expected", "verify.txt")
    assert verify == expected.replace("Verifying refund_agent.cell...", "Verifying session.cell...").replace(
        "this file", "this session")
    report = ok(refund.execute("%test", count=6)).displays[0]["text/plain"]
    assert report == read(REFUND, "expected", "test.txt")


# ---------------------------------------------------------------- triage agent

@pytest.fixture
def triage(tmp_path):
    """A session holding the triage skeleton (cell[1]), its flesh (cell[2]) and its tests (cell[3])."""
    session = Session(directory=str(tmp_path))
    skeleton, flesh, tests = split_at(read(TRIAGE, "triage_agent.cell"), "flesh Triage", "cell test TriageTests")
    alone = ok(session.execute(skeleton, "skeleton", count=1))
    assert alone.stream_text() == "note: skeleton Triage is checked when its flesh is defined (`flesh Triage { … }`)\n"
    ok(session.execute(flesh, "flesh", count=2))
    ok(session.execute(tests, "tests", count=3))
    session.triage_flesh = flesh
    return session


def test_triage_rules_one_cell_at_a_time_print_the_seed_test_lines(triage):
    tests = read(TRIAGE, "triage_agent.cell")
    expected = [line for line in read(TRIAGE, "expected", "test.txt").splitlines() if line.startswith("  ✓")]
    printed = []
    for number, code in enumerate(rule_cells(tests[tests.index("cell test TriageTests"):]), start=10):
        printed.extend(ok(triage.execute(code, f"rule{number}", count=number)).stream_text().splitlines())
    assert printed == expected


def test_triage_skeleton_magic_shows_the_frame_and_the_body(triage):
    text = ok(triage.execute("%skeleton Triage.label")).stream_text()
    assert text.startswith("skeleton agent Triage — signal label(id: String, text: String) -> String")
    assert "    writes labels, seen\n    reads  none\n    moves  inbox -> urgent, inbox -> routine\n" in text
    assert text.endswith("  ✓ the body stays inside its frame\n")
    flesh = triage.triage_flesh
    label_line = flesh[:flesh.index("on label(")].count("\n") + 1
    assert text.split("\n")[0].endswith("-> String (cell[1]:33)")  # the CLI's line 33: cell[1] starts the file
    assert f"  flesh body: on label (cell[2]:{label_line}–" in text
    assert f"    calls  classify() (cell[2]:{label_line + 1})" in text


def test_triage_flesh_calling_think_from_stats_is_refused_at_its_caret(triage):
    bad = triage.triage_flesh.replace('return seen.get("n") ?? 0',
                                      'let mood = think("how busy are we?")\n        return seen.get("n") ?? 0')
    refused = triage.execute(bad, "flesh", count=7)
    assert refused.error_name == "CheckError"
    lines = refused.error.split("\n")
    at = bad.index('think("how busy')
    line, col = bad[:at].count("\n") + 1, at - bad.rindex("\n", 0, at)
    assert lines[0] == (f"error: cell[7]:{line}:{col}: frame: signal 'stats' calls think() "
                        "but its frame does not declare `calls think`")
    assert lines[2].endswith("^" * len('think("how busy are we?")'))
    assert value(triage.execute('mock think "routine"\nlabel("t1", "hi")\nstats()')) == "1"
    assert ok(triage.execute("%check")).stream_text() == "✓ All checks passed.\n"
    report = ok(triage.execute("%test")).displays[0]["text/plain"]
    assert report == read(TRIAGE, "expected", "test.txt")


def test_triage_skeleton_rerun_is_checked_with_its_flesh(triage):
    skeleton = split_at(read(TRIAGE, "triage_agent.cell"), "flesh Triage")[0]
    broken = skeleton.replace("calls think, set_budget", "calls set_budget")
    refused = triage.execute(broken, "skeleton", count=8)
    assert refused.error_name == "CheckError"
    assert "frame: signal 'classify' calls think() but its frame does not declare `calls think`" in refused.error
    assert refused.error.startswith("error: cell[2]:")  # the call is in the flesh cell, which the skeleton frames
    assert ok(triage.execute(skeleton, "skeleton", count=9)).stream_text() == ""
