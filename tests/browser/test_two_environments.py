"""JupyterLab in one environment, the Soma kernel in another (JupyterHub, conda, a pipx Lab).

A scratch venv gets JupyterLab and soma-jupyterlab (labextension/) and nothing
of soma-kernel; the kernel stays in this test's environment and is registered
into the Lab venv with `soma-kernel install --prefix <lab venv>`, as the README
says. Lab is started from its venv with no JUPYTER_PATH pointing elsewhere; in
Chromium a `.cell` file and a Soma notebook cell are highlighted, and the
notebook's cells run on the kernel of the other environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from test_lab import (CHROMIUM, CHROMIUM_FLAGS, KERNEL_IDLE_MS, PROBE_WORDS, SEED, _open, _require_browser,
                      _run_all_and_wait, _serve, _styled_tokens)

REPO = Path(__file__).resolve().parents[2]
PIP_INSTALL_SECONDS = 900


@pytest.fixture(scope="module")
def lab_venv(tmp_path_factory) -> Path:
    """A venv holding JupyterLab and soma-jupyterlab only, with the kernel of this environment registered."""
    _require_browser()
    venv = tmp_path_factory.mktemp("lab-env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, "jupyterlab>=4,<5", str(REPO / "labextension")], timeout=PIP_INSTALL_SECONDS,
                          env=_without_our_paths(), capture_output=True, text=True)
    assert done.returncode == 0, f"pip install into the Lab venv failed:\n{done.stderr[-3000:]}"
    subprocess.run([sys.executable, "-m", "soma_kernel", "install", "--prefix", str(venv)], check=True, timeout=120)
    return venv


def _without_our_paths(venv: Path | None = None) -> dict:
    """This process's environment without what would let the Lab venv see this one's packages or specs.

    With `venv`, its bin/ comes first on PATH: `jupyter lab` runs the `jupyter-lab` it finds there, and
    from a venv whose python links to this environment's it may otherwise find this environment's.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUPYTER_PATH", "JUPYTER_DATA_DIR")}
    if venv is not None:
        env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


def test_the_lab_environment_holds_the_extension_and_the_spec_but_not_the_kernel(lab_venv, tmp_path):
    python = str(lab_venv / "bin" / "python")
    env = _without_our_paths(lab_venv) | {"JUPYTER_DATA_DIR": str(tmp_path / "data")}
    probe = subprocess.run([python, "-c", "import soma_kernel"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "No module named 'soma_kernel'" in probe.stderr
    specs = json.loads(subprocess.run([python, "-m", "jupyter", "kernelspec", "list", "--json"], env=env,
                                      capture_output=True, text=True, check=True).stdout)["kernelspecs"]
    assert specs["soma"]["spec"]["argv"][0] == sys.executable  # the kernel runs in the other environment
    assert Path(specs["soma"]["resource_dir"]).is_relative_to(lab_venv)
    listing = subprocess.run([python, "-m", "jupyter", "labextension", "list"], env=env, capture_output=True, text=True)
    assert "soma-jupyterlab v0.1.0 enabled OK (python, soma-jupyterlab)" in _plain(listing.stdout + listing.stderr)


def _plain(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.fixture
def split_lab(lab_venv, tmp_path):
    """Lab from the Lab venv on a root holding the seed as a .cell file and as a notebook; yields its URL."""
    root = tmp_path / "root"
    root.mkdir()
    (root / SEED.name).write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(SEED.read_text(encoding="utf-8")),
        nbformat.v4.new_code_cell('print("from the other environment")\nlen([1, 2, 3]) + 39')])
    notebook.metadata["kernelspec"] = {"name": "soma", "display_name": "Soma", "language": "soma"}
    nbformat.write(notebook, root / "split.ipynb")
    env = _without_our_paths(lab_venv) | {"JUPYTER_DATA_DIR": str(tmp_path / "data")}
    yield from _serve(tmp_path, root, python=str(lab_venv / "bin" / "python"), env=env)


def test_lab_in_one_venv_highlights_and_runs_soma_from_another(split_lab):
    sync_api = _require_browser()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.set_default_timeout(30_000)
            _open(page, split_lab, "split-file", SEED.name)
            in_file = _styled_tokens(page, ".jp-FileEditor .cm-content", PROBE_WORDS)
            _open(page, split_lab, "split-notebook", "split.ipynb")
            page.get_by_text("Soma | Idle").wait_for(timeout=KERNEL_IDLE_MS)
            in_notebook = _styled_tokens(page, ".jp-Notebook .jp-Cell .cm-content", PROBE_WORDS)
            state = _run_all_and_wait(page)
            outputs = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output").all_inner_texts()
        finally:
            browser.close()
    expected = {word: True for word in PROBE_WORDS} | {"// comment": True, '"string"': True}
    assert in_file == expected, f".cell file: not styled: {[k for k, v in in_file.items() if not v]}"
    assert in_notebook == expected, f"notebook cell: not styled: {[k for k, v in in_notebook.items() if not v]}"
    assert state["errors"] == [] and state["ran"] == state["cells"] == 2, state
    assert [text.strip() for text in outputs] == ["from the other environment", "42"]
