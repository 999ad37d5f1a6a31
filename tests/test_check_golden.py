"""`soma-kernel check` on the two seeds: the whole output, byte for byte."""

import subprocess
import sys
from pathlib import Path

import pytest

SEEDS = Path(__file__).parent / "seeds"
CASES = Path(__file__).parent / "check_cases"


def run_check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the CLI the way a user does, from `folder`."""
    return subprocess.run([sys.executable, "-m", "soma_kernel", "check", *args], cwd=folder,
                          capture_output=True, text=True, encoding="utf-8")


@pytest.mark.parametrize("seed", ["refund_agent", "triage_agent"])
def test_check_output_matches_the_reference(seed):
    result = run_check(SEEDS / seed, f"{seed}.cell")
    expected = (SEEDS / seed / "expected" / "check.txt").read_text(encoding="utf-8")
    assert result.stdout == expected
    assert result.returncode == 0
    assert result.stderr == ""


def test_check_json_on_the_refund_seed_carries_the_cost_note():
    import json

    result = run_check(SEEDS / "refund_agent", "refund_agent.cell", "--json")
    data = json.loads(result.stdout)
    assert data["passed"] is True
    assert data["error_count"] == 0 and data["warning_count"] == 0
    assert data["notes"][0]["message"].startswith("cost: 'tokens' bound proven — peak 300")


def test_check_exits_1_and_lists_errors_for_a_bad_program():
    result = run_check(CASES, "frames_bad.cell")
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "✗ 5 error(s), 0 warning(s)."
    assert "error: frames_bad.cell:29:21: frame: signal 'count' calls think()" in result.stdout


def test_missing_file_is_a_one_line_error_on_stderr():
    result = run_check(CASES, "no_such.cell")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == "error: no_such.cell: no such file"
    assert "Traceback" not in result.stderr


def test_parse_error_goes_to_stderr_without_traceback(tmp_path):
    (tmp_path / "broken.cell").write_text("cell A {\n    on x() { let y = 1; }\n}\n", encoding="utf-8")
    result = run_check(tmp_path, "broken.cell")
    assert result.returncode == 1
    assert "broken.cell:2" in result.stderr
    assert "Traceback" not in result.stderr


def test_json_load_failure_keeps_the_report_keys():
    import json

    result = run_check(CASES, "no_such.cell", "--json")
    data = json.loads(result.stdout)
    assert result.returncode == 1
    assert data["passed"] is False and data["error_count"] == 1
    assert data["errors"][0]["kind"] == "load"


def test_usage_error_exits_2():
    result = run_check(CASES)
    assert result.returncode == 2
    assert "usage: soma-kernel check FILE" in result.stderr
