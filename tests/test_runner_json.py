"""`soma-kernel test --json`: one JSON report on stdout, print() and notes on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from soma_kernel.commands.cli import main

RUNNER_CASE = Path(__file__).parent / "lang_cases" / "runner.cell"
AGENT_CASE = Path(__file__).parent / "lang_cases" / "agent.cell"


def test_json_report_lists_every_counted_rule(capsys):
    code = main(["test", str(RUNNER_CASE), "--json"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 1
    assert report["passed"] is False and report["total"] == 13 and report["failed"] == 6
    rules = report["cells"][0]["rules"]
    assert rules[0] == {"rule": "assert q.total == 200", "passed": True, "message": "assert q.total == 200",
                        "raised": None, "left": None, "right": None}
    failed = next(r for r in rules if r["rule"] == 'assert quote("a", 1) == map("sku", "a", "total", 99)')
    assert failed["passed"] is False
    assert failed["left"] == '{"sku": "a", "total": 100}' and failed["right"] == '{"sku": "a", "total": 99}'
    raised = next(r for r in rules if r["rule"].startswith("assert_fails quote(\"b\", 1)"))
    assert raised["raised"] == "out_of_stock: no price"
    assert "was scripted but never used" in captured.err


def test_json_moves_print_output_to_stderr(capsys, monkeypatch):
    for variable in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    code = main(["test", str(AGENT_CASE), "--json"])
    captured = capsys.readouterr()
    assert code == 0
    assert json.loads(captured.out)["passed"] is True
    assert "shouting hey" in captured.err and "shouting" not in captured.out


def test_only_runs_one_test_cell(capsys):
    code = main(["test", str(RUNNER_CASE), "--only", "SecondCell"])
    out = capsys.readouterr().out
    assert code == 0
    assert "test RunnerTests" not in out and out.endswith("1 tests: 1 passed, 0 failed\n")
