"""Re-record notebooks/06_real_model.cassette.jsonl and re-save the notebook.

    PYTHONPATH=$PWD python tests/record_06_cassette.py

The notebook's model is the test suite's loopback server (llm_server.py) on
127.0.0.1:8765, scripted below with the answers the notebook shows. The
script deletes the cassette, runs the notebook once while the server answers
(its `%cassette` line records, mode once), stops the server, and runs it
again from the cassette alone, saving that run's outputs — the run nbval
repeats.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_server import LoopbackModel  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOK = NOTEBOOKS / "06_real_model.ipynb"
CASSETTE = NOTEBOOKS / "06_real_model.cassette.jsonl"
PORT = 8765


def script(server: LoopbackModel) -> None:
    """The model's side of the notebook's two questions."""
    server.tool("lookup_order", {"order_id": "o1"}, "call_lookup_o1", output_tokens=18)
    server.text("Order o1 is 4000 cents, delivered 3 days ago and within the 30-day window: "
                "refund the 4000 cents.", output_tokens=24, input_tokens=160)
    server.text("Yes: the full 4000 cents, since the order is within the 30-day window.",
                output_tokens=17, input_tokens=210)


def execute() -> nbformat.NotebookNode:
    """The notebook run top to bottom in the `soma` kernel, working in notebooks/."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, kernel_name="soma", timeout=120, resources={"metadata": {"path": str(NOTEBOOKS)}},
                   allow_errors=False).execute()
    return notebook


def main() -> None:
    """Record, then replay and save."""
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    os.environ.pop("SOMA_LLM_CASSETTE_MODE", None)
    if CASSETTE.exists():
        CASSETTE.unlink()
    with LoopbackModel(PORT) as server:
        script(server)
        execute()
        assert not server.script, "the notebook asked fewer questions than scripted"
    nbformat.write(execute(), NOTEBOOK)
    print(f"recorded {CASSETTE.name} ({len(CASSETTE.read_text().splitlines())} exchanges), saved {NOTEBOOK.name}")


if __name__ == "__main__":
    main()
