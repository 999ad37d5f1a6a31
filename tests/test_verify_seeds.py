"""Golden tests: `soma-kernel verify` on both seeds, whole output byte-for-byte."""

import os
import subprocess
import sys

import pytest

SEEDS = os.path.join(os.path.dirname(__file__), "seeds")


@pytest.mark.parametrize("name", ["refund_agent", "triage_agent"])
def test_seed_verify_output_is_exact(name):
    folder = os.path.join(SEEDS, name)
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", f"{name}.cell"],
                         cwd=folder, capture_output=True, text=True, encoding="utf-8")
    with open(os.path.join(folder, "expected", "verify.txt"), encoding="utf-8") as handle:
        expected = handle.read()
    assert run.stdout == expected
    assert run.returncode == 0
