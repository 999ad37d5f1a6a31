"""JupyterLab in a real browser: the refund-agent notebook runs with the Soma kernel.

The test starts JupyterLab headless on 127.0.0.1 (a free port, a token, a
temporary root holding a copy of notebooks/02_refund_agent.ipynb), drives
Debian's Chromium through Playwright for Python (no browser download), runs
every cell, and checks that the state-machine SVG and the verify widget render
and that no cell shows an error. A screenshot is saved as
test-artifacts/lab_refund_agent.png (docs/notebook.png is a copy of one).

Without /usr/bin/chromium, or without the playwright package, the test is
skipped with a message saying how to enable it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "02_refund_agent.ipynb"
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path(os.environ.get("SOMA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-quic",
]
TOKEN = "soma-browser-test"
SERVER_START_SECONDS = 60
KERNEL_IDLE_MS = 60_000
RUN_ALL_MS = 120_000


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_server(url: str, process: subprocess.Popen, log_path: Path) -> None:
    """Poll /api/status until the server answers; fail with its log if it dies or is slow."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {SERVER_START_SECONDS} s:\n{log_path.read_text()[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the server (it shuts its kernels down), SIGKILL if it lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def lab_server(tmp_path):
    """A JupyterLab server on a free port whose root holds a copy of notebook 02; yields its URL."""
    if not NOTEBOOK.exists():
        pytest.fail(f"{NOTEBOOK} is missing")
    root = tmp_path / "root"
    root.mkdir()
    _copy_without_outputs(NOTEBOOK, root / NOTEBOOK.name)
    env = dict(os.environ)
    for var, sub in (("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("JUPYTER_RUNTIME_DIR", "runtime")):
        env[var] = str(tmp_path / sub)
    port = _free_port()
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
               "--ServerApp.port_retries=0"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_path = tmp_path / "lab.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   stdin=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_for_server(url, process, log_path)
        yield url
    finally:
        _stop(process)


def _require_browser():
    """The Playwright module, or a skip that says how to enable the test."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: enable the browser test with "
                    "`apt-get update && apt-get install -y chromium` (or set SOMA_CHROMIUM)")
    return pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed: pip install -e '.[test]'")


def test_refund_notebook_runs_in_jupyterlab(lab_server):
    """Run All in Lab: the kernel is Soma, the SVG diagram and the verify widget render, no cell errors."""
    sync_api = _require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "lab_refund_agent.png"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(30_000)
            page.goto(f"{lab_server}/lab/workspaces/browser-test/tree/{NOTEBOOK.name}?reset&token={TOKEN}")
            page.get_by_text("Soma | Idle").wait_for(timeout=KERNEL_IDLE_MS)
            state = _run_all_and_wait(page)
            page.locator(".jp-RenderedSVG img, .jp-RenderedSVG svg").first.wait_for(timeout=RUN_ALL_MS)
            page.locator(".jupyter-widgets").first.wait_for(timeout=RUN_ALL_MS)
            _frame_the_verify_widget(page)
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    assert screenshot.stat().st_size > 10_000
    assert state["errors"] == [], f"cells showed errors: {state['errors']}"
    assert state["ran"] == state["cells"] > 0


CELL_STATE_JS = """() => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
    const stderr = [...document.querySelectorAll(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")];
    return {cells: prompts.length,
            ran: prompts.filter(p => /\\[\\d+\\]/.test(p.textContent)).length,
            busy: prompts.filter(p => p.textContent.includes('*')).length,
            errors: stderr.map(e => e.innerText)};
}"""


def _run_all_and_wait(page) -> dict:
    """Run All Cells, then wait (bounded) until every cell ran or one failed; return the cell counts and errors."""
    page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-content").get_by_text("Run All Cells", exact=True).click()
    deadline = time.monotonic() + RUN_ALL_MS / 1000
    state = page.evaluate(CELL_STATE_JS)
    while time.monotonic() < deadline:
        state = page.evaluate(CELL_STATE_JS)
        idle = page.get_by_text("Soma | Idle").is_visible()
        if state["busy"] == 0 and idle and (state["ran"] == state["cells"] or state["errors"]):
            return state
        time.sleep(0.5)
    pytest.fail(f"Run All did not finish within {RUN_ALL_MS // 1000} s: {state}")


def _frame_the_verify_widget(page) -> None:
    """Hide the side bar and the news toast, and scroll the last verify widget's cell to the top."""
    page.keyboard.press("Control+b")
    decline_news = page.locator(".jp-Notification-Toast-Close, .Toastify__close-button")
    if decline_news.count():
        decline_news.first.click()
    verify = page.locator(".jp-OutputArea-output .jupyter-widgets").last
    verify.evaluate("element => element.closest('.jp-Cell').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)


def _copy_without_outputs(source: Path, target: Path) -> None:
    """Copy a notebook with outputs and execution counts cleared, so what Lab shows comes from this run."""
    import nbformat

    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, target)
