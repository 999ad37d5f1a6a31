"""Every saved notebook output is part of the test: change a caret, a hint or a counter-example
edge in a copy of a notebook and nbval (run as scripts/test.sh runs it) fails on exactly that cell."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NBVAL_OPTIONS = ["--nbval", "--nbval-kernel-name", "soma", "--nbval-sanitize-with", "nbval-sanitize.cfg"]
HIGHLIGHTED_EDGE = "&quot;open&quot; -&gt; &quot;disputed&quot; [color=&quot;#d62728&quot;, fontcolor=&quot;#d62728&quot;, penwidth=2.5];"


def _code_cells(notebook) -> list:
    """The code cells, in order: nbval names the n-th one `Cell n`."""
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _error_cell(cells: list, needle: str) -> int:
    """The index of the first code cell whose error traceback holds a line containing `needle`."""
    return next(i for i, cell in enumerate(cells) for output in cell.outputs
                if output.output_type == "error" and any(needle in line for line in output.traceback))


def _edit_traceback(cell, edit) -> None:
    """Apply `edit` to each line of the cell's error traceback."""
    for output in cell.outputs:
        if output.output_type == "error":
            output.traceback = [edit(line) for line in output.traceback]


def _mutated_tour(target: Path) -> list[str]:
    """Copy 01_tour with one caret moved and one hint reworded; return the two cells' nbval names."""
    notebook = nbformat.read(NOTEBOOKS / "01_tour.ipynb", as_version=4)
    cells = _code_cells(notebook)
    caret = _error_cell(cells, "^")
    hint = _error_cell(cells, "hint: see `%diagram")
    assert caret != hint
    _edit_traceback(cells[caret], lambda line: re.sub(r"\|( *)\^", r"|\1 ^", line, count=1))
    _edit_traceback(cells[hint], lambda line: line.replace("hint: see", "hint: look at"))
    nbformat.write(notebook, target / "01_tour.ipynb")
    return [f"01_tour.ipynb::Cell {caret}", f"01_tour.ipynb::Cell {hint}"]


def _mutated_verification(target: Path) -> list[str]:
    """Copy 04_verification with one counter-example edge of a %verify drawing's DOT twin unhighlighted."""
    notebook = nbformat.read(NOTEBOOKS / "04_verification.ipynb", as_version=4)
    cells = _code_cells(notebook)
    index = next(i for i, cell in enumerate(cells) for output in cell.outputs
                 if HIGHLIGHTED_EDGE in output.get("data", {}).get("text/html", ""))
    for output in cells[index].outputs:
        html = output.get("data", {}).get("text/html")
        if html and HIGHLIGHTED_EDGE in html:
            output.data["text/html"] = html.replace(HIGHLIGHTED_EDGE, "&quot;open&quot; -&gt; &quot;disputed&quot;;")
    nbformat.write(notebook, target / "04_verification.ipynb")
    return [f"04_verification.ipynb::Cell {index}"]


def test_a_changed_caret_hint_or_counter_example_edge_fails_its_cell(tmp_path):
    for name in ("conftest.py", "nbval-sanitize.cfg"):
        shutil.copy(NOTEBOOKS / name, tmp_path / name)
    mutated = _mutated_tour(tmp_path) + _mutated_verification(tmp_path)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "--color=no", "-p", "no:cacheprovider",
                          "--rootdir", str(tmp_path), *NBVAL_OPTIONS, "01_tour.ipynb", "04_verification.ipynb"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    failed = sorted(re.findall(r"^FAILED (\S+::Cell \d+)", run.stdout, re.M))
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert failed == sorted(mutated), run.stdout[-3000:]
    assert "Cell outputs differ" in run.stdout
