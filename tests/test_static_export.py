"""A saved notebook exported with `nbconvert --to html` shows every report and drawing without a network.

The page must need nothing from outside: no widget manager from a CDN (an
empty widget area offline), no inline <svg> a sanitizer would strip; each
report is its HTML view and each drawing an <img> with a data URI.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("0*.ipynb"))
IMAGE = re.compile(r'<img class="soma-diagram" alt="state machine [^"]+" src="data:image/svg\+xml;base64,[A-Za-z0-9+/=]+">')


def _outputs(notebook, mime):
    """Every output of the notebook's code cells that carries `mime`."""
    return [output for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.outputs if mime in output.get("data", {})]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_static_html_export_needs_no_network(path):
    notebook = nbformat.read(path, as_version=4)
    page, _ = HTMLExporter().from_notebook_node(notebook)
    assert "unpkg.com" not in page and "embed-amd" not in page and "widget-view+json" not in page
    assert "widgets" not in notebook.metadata
    reports = [o for o in _outputs(notebook, "text/html") if o["data"]["text/html"].startswith('<div class="soma-report">')]
    drawings = sum(len(IMAGE.findall(o["data"]["text/html"])) for o in _outputs(notebook, "text/html"))
    assert page.count('<div class="soma-report">') == len(reports)
    assert page.count('src="data:image/svg+xml;base64,') == drawings  # the exporter may reorder attributes
    assert not _outputs(notebook, "image/svg+xml") and not _outputs(notebook, "application/vnd.jupyter.widget-view+json")


def test_the_notebooks_hold_reports_and_drawings_to_export():
    notebooks = [nbformat.read(path, as_version=4) for path in NOTEBOOKS]
    pages = [o["data"]["text/html"] for nb in notebooks for o in _outputs(nb, "text/html")]
    assert sum(page.startswith('<div class="soma-report">') for page in pages) >= 4
    assert sum(len(IMAGE.findall(page)) for page in pages) >= 6
