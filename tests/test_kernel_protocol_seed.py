"""The seed programs explored through the real Jupyter protocol (jupyter_client,
a kernel process), cell by cell, as in a notebook: the same values and ✓ lines
as `soma-kernel test`, the live diagram, and the refusal of a flesh body that
leaves its frame."""

from __future__ import annotations


import pytest
from helpers import running_kernel
from test_kernel_protocol import of_type, run
from test_session_seed import REFUND, TRIAGE, read, rule_cells, split_at

SVG_IMAGE = '<img class="soma-diagram" alt="state machine '


@pytest.fixture
def kernel(tmp_path_factory):
    """A fresh Soma kernel started from an empty folder, with the kernelspec from a temporary prefix."""
    prefix, work = tmp_path_factory.mktemp("prefix"), tmp_path_factory.mktemp("work")
    with running_kernel(str(prefix), str(work)) as started:
        yield started


def cell(client, code: str):
    """Run a cell that must succeed; return (stdout, stderr, value text or None, display bundles)."""
    reply, messages = run(client, code)
    errors = of_type(messages, "error")
    assert reply["status"] == "ok", "\n".join(errors[0]["traceback"]) if errors else reply
    streams = of_type(messages, "stream")
    out = "".join(s["text"] for s in streams if s["name"] == "stdout")
    err = "".join(s["text"] for s in streams if s["name"] == "stderr")
    results = of_type(messages, "execute_result")
    shown = results[0]["data"]["text/plain"] if results else None
    return out, err, shown, [d["data"] for d in of_type(messages, "display_data")]


def test_refund_agent_explored_through_the_kernel(kernel):
    _, client = kernel
    decision, agent, tests = split_at(read(REFUND, "refund_agent.cell"), "cell agent RefundAgent",
                                      "cell test RefundTests")
    cell(client, decision)
    cell(client, agent)
    assert "[agent] mock = 'echo'" in cell(client, "%%toml\n" + read(REFUND, "soma.toml"))[0]
    assert cell(client, 'seed_order("o1", 5000, 3)')[2] == "5000"
    assert cell(client, 'seed_order("o2", 50000, 3)\nseed_order("o3", 5000, 45)')[2] == "5000"
    approve = 'mock think """{"decision": "approve", "reason": "ok"}"""\n'
    assert cell(client, approve + 'decide("r1", "o1", 4000, "broken")')[2] == '{"state": "paid", "amount": 4000}'
    guarded = cell(client, approve + 'decide("r4", "o1", 9000, "want more")')[2]
    assert guarded.startswith('{"state": "escalated", "reason": "decided → paid requires amount <= order.amount')
    assert cell(client, "paid_today()")[2] == "4000"
    paid = cell(client, approve + 'mock approve true\ndecide("r7", "o2", 30000, "big")')[2]
    assert paid == '{"state": "paid", "amount": 30000}'
    assert cell(client, 'seed_order("o4", 100000, 1)')[2] == "100000"
    capped = cell(client, approve + 'mock approve true\ndecide("r8", "o4", 70000, "huge")')[2]
    assert '"state": "escalated"' in capped and "violates invariant paid_by_day" in capped
    assert cell(client, "paid_today()")[2] == "34000"

    out, _, _, shown = cell(client, "%state RefundAgent r4")
    assert out == "RefundAgent r4: escalated\n  history: received → decided → escalated\n  next: none (terminal)\n"
    assert '"paid_by_day": {' in cell(client, "%memory RefundAgent")[3][0]["text/plain"]
    live = cell(client, "%diagram RefundAgent")[3][0]
    assert live["text/html"].startswith(SVG_IMAGE) and "2 live" in live["text/plain"]
    path = cell(client, "%diagram RefundAgent request r4")[3][0]["text/plain"]
    assert '"decided" -> "escalated" [color="#d62728"' in path

    cell(client, tests)
    verify = cell(client, "%verify")[3][0]
    assert set(verify) == {"text/plain", "text/html"} and SVG_IMAGE in verify["text/html"]
    assert verify["text/plain"] == read(REFUND, "expected", "verify.txt").replace(
        "Verifying refund_agent.cell...", "Verifying session.cell...").replace("this file", "this session")
    report = cell(client, "%test")[3][0]
    assert report["text/html"].startswith('<div class="soma-report">') and report["text/plain"] == read(REFUND, "expected", "test.txt")


def test_refund_rules_in_the_kernel_print_the_seed_lines(kernel):
    _, client = kernel
    decision, agent, tests = split_at(read(REFUND, "refund_agent.cell"), "cell agent RefundAgent",
                                      "cell test RefundTests")
    for code in (decision, agent, "%%toml\n" + read(REFUND, "soma.toml")):
        cell(client, code)
    printed = "".join(cell(client, code)[0] for code in rule_cells(tests))
    expected = [line for line in read(REFUND, "expected", "test.txt").splitlines() if line.startswith("  ✓")]
    assert printed.splitlines() == expected


def test_triage_agent_skeleton_flesh_and_refusal_through_the_kernel(kernel):
    _, client = kernel
    skeleton, flesh, tests = split_at(read(TRIAGE, "triage_agent.cell"), "flesh Triage", "cell test TriageTests")
    assert cell(client, skeleton)[0].startswith("note: skeleton Triage is checked when its flesh is defined")
    cell(client, flesh)
    cell(client, tests)
    assert cell(client, "%skeleton Triage.label")[0].endswith("  ✓ the body stays inside its frame\n")
    bad = flesh.replace('return seen.get("n") ?? 0', 'let mood = think("busy?")\n        return seen.get("n") ?? 0')
    reply, messages = run(client, bad)
    assert reply["status"] == "error" and reply["ename"] == "CheckError"
    traceback = of_type(messages, "error")[0]["traceback"]
    assert traceback[0].startswith("error: cell[") and "frame: signal 'stats' calls think()" in traceback[0]
    assert traceback[2].endswith("^" * len('think("busy?")'))
    assert cell(client, "%test TriageTests")[3][0]["text/plain"] == read(TRIAGE, "expected", "test.txt")
