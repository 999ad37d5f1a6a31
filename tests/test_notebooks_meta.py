"""The lesson notebooks are saved as nbval will test them.

nbval re-runs every notebook and compares outputs (scripts/test.sh); these
checks catch what nbval would not: a notebook saved for another kernel, a
code cell never executed, an error output in a cell not tagged to raise, or a
tagged cell that does not raise.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
RAISES_TAGS = {"raises-exception", "nbval-raises-exception"}


def _code_cells(path: Path):
    """The code cells of a notebook, in order."""
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def test_there_are_at_least_five_lessons():
    """Five lessons, numbered 01.. in file order."""
    assert len(NOTEBOOKS) >= 5
    assert [path.name[:2] for path in NOTEBOOKS[:5]] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_saved_for_the_soma_kernel(path):
    """Kernelspec `soma`, language soma."""
    metadata = nbformat.read(path, as_version=4).metadata
    assert metadata.kernelspec.name == "soma"
    assert metadata.language_info.name == "soma"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_code_cell_ran_in_order(path):
    """Execution counts are 1, 2, 3, … (one top-to-bottom run saved)."""
    counts = [cell.execution_count for cell in _code_cells(path)]
    assert counts == list(range(1, len(counts) + 1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_errors_only_where_tagged(path):
    """A cell has an error output exactly when it is tagged to raise."""
    for index, cell in enumerate(_code_cells(path)):
        tagged = bool(RAISES_TAGS & set(cell.metadata.get("tags", [])))
        has_error = any(output.output_type == "error" for output in cell.outputs)
        assert tagged == has_error, f"{path.name} code cell {index}: tagged={tagged}, error={has_error}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_python_traceback_is_saved(path):
    """A Python traceback in a saved output is a soma-kernel bug shown to a reader."""
    for index, cell in enumerate(_code_cells(path)):
        for output in cell.outputs:
            text = str(output.get("text", "")) + str(output.get("data", {})) + "".join(output.get("traceback", []))
            assert "Traceback (most recent call last)" not in text, f"{path.name} code cell {index}"
            assert "InternalError" not in text, f"{path.name} code cell {index}"
