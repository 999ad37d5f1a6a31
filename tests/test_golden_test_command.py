"""Golden tests: `soma-kernel test` on each seed prints exactly the reference's output."""

import os
import shutil
import subprocess
import sys

import pytest

SEEDS = os.path.join(os.path.dirname(__file__), "seeds")


def run_cli(args, cwd):
    """Run the CLI as a user would; stdout and stderr merged in order."""
    result = subprocess.run([sys.executable, "-m", "soma_kernel", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return result.returncode, result.stdout


@pytest.mark.parametrize("seed", ["refund_agent", "triage_agent"])
def test_seed_test_output_is_byte_identical(seed):
    folder = os.path.join(SEEDS, seed)
    code, output = run_cli(["test", f"{seed}.cell"], folder)
    with open(os.path.join(folder, "expected", "test.txt"), encoding="utf-8") as handle:
        expected = handle.read()
    assert output == expected
    assert code == 0


def test_changed_assertion_shows_the_failure_line_and_exits_1(tmp_path):
    folder = os.path.join(SEEDS, "refund_agent")
    for name in ("refund_agent.cell", "soma.toml"):
        shutil.copy(os.path.join(folder, name), tmp_path / name)
    program = tmp_path / "refund_agent.cell"
    text = program.read_text(encoding="utf-8")
    program.write_text(text.replace("assert paid_today() == 4000", "assert paid_today() == 4001"), encoding="utf-8")
    code, output = run_cli(["test", "refund_agent.cell"], tmp_path)
    line = text[: text.index("assert paid_today() == 4000")].count("\n") + 1
    assert f"  ✗ refund_agent.cell:{line}  assert paid_today() == 4001 — FAILED\n" \
           "         left:  4000\n         right: 4001\n" in output
    assert output.endswith("19 tests: 18 passed, 1 failed\n")
    assert code == 1


def test_missing_file_is_one_clear_line(tmp_path):
    code, output = run_cli(["test", "nope.cell"], tmp_path)
    assert output == "error: nope.cell: no such file\n"
    assert code == 1


def test_each_rule_of_soma_test_starts_with_no_budget(tmp_path):
    """A notebook keeps a budget for the session; `soma test` gives every rule a fresh start."""
    (tmp_path / "budget.cell").write_text(
        "cell Asker {\n    on cap(n: Int) { return set_budget(n) }\n}\n\n"
        "cell test BudgetTests {\n    rules {\n        assert cap(30) == 30\n"
        "        assert tokens_remaining() == -1\n        assert set_budget(9) == 9\n"
        "        assert tokens_remaining() == -1\n    }\n}\n", encoding="utf-8")
    code, output = run_cli(["test", "budget.cell"], tmp_path)
    assert output.count("  ✓ assert") == 4 and code == 0, output


def test_a_test_cell_reads_one_of_two_machines_by_cell_name(tmp_path):
    (tmp_path / "two.cell").write_text(
        "cell Orders {\n    state order {\n        initial: open\n        open -> paid\n    }\n"
        "    on pay(id: String) {\n        transition(id, \"paid\")\n        return get_status(id)\n    }\n}\n\n"
        "cell Tickets {\n    state ticket {\n        initial: new\n        new -> closed\n    }\n}\n\n"
        "cell test Both {\n    rules {\n        assert pay(\"o1\") == \"paid\"\n"
        "        assert Orders.get_status(\"o1\") == \"paid\"\n        assert Tickets.get_status(\"o1\") == \"new\"\n"
        "    }\n}\n", encoding="utf-8")
    code, output = run_cli(["test", "two.cell"], tmp_path)
    assert output.endswith("3 tests: 3 passed, 0 failed\n") and code == 0, output
