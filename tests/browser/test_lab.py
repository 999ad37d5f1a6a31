"""JupyterLab in a real browser: the refund-agent notebook runs with the Soma kernel,
and Soma code is highlighted by the soma-jupyterlab extension in notebook cells and .cell files.

The run test starts JupyterLab headless on 127.0.0.1 (a free port, a token, a
temporary root holding a copy of notebooks/02_refund_agent.ipynb), drives
Debian's Chromium through Playwright for Python (no browser download), runs
every cell, and checks that the state-machine drawing and the verify report render
and that no cell shows an error. A screenshot is saved as
test-artifacts/lab_refund_agent.png (docs/notebook.png is a copy of one).

The highlighting test serves the repository's built extension
(labextension/prebuilt, through JUPYTER_PATH) and checks, in a notebook holding the
refund-agent seed and in the seed's .cell file opened in the file editor, that
each probe token is drawn styled (its computed colour differs from plain text);
a python3 notebook keeps Python highlighting. Screenshots go to
test-artifacts/lab_highlight_notebook.png and lab_highlight_file.png.

The language-server test gives jupyter-lsp the Soma server's spec and opens an
unrun Soma notebook: jupyterlab-lsp underlines its undefined name, Ctrl-hover
on a builtin shows the registry's signature, and a .cell file in the file
editor gets its underline too (screenshot test-artifacts/lab_language_server.png).

Without /usr/bin/chromium, or without the playwright package, the tests are
skipped with a message saying how to enable them.
"""

from __future__ import annotations

import os
import shutil
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
SEED = REPO / "tests" / "seeds" / "refund_agent" / "refund_agent.cell"
PREBUILT = REPO / "labextension" / "prebuilt"
PROBE_WORDS = ["cell", "memory", "state", "on", "invariant", "face", "signal", "initial"]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path(os.environ.get("SOMA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-quic",
]
TOKEN = "soma-browser-test"
SAVED_NOTEBOOKS = ("01_tour.ipynb", "04_verification.ipynb")
TOML_CELL = '%%toml\n# the agent\'s model\n[agent]\nmock = "echo"\n'
MAGIC_CELL = "%verify --strict\nlet x = 1\n"
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
    yield from _serve(tmp_path, root)


@pytest.fixture
def saved_notebooks_server(tmp_path):
    """A JupyterLab server whose root holds notebooks exactly as saved (outputs kept, never signed: untrusted)."""
    root = tmp_path / "root"
    root.mkdir()
    for name in SAVED_NOTEBOOKS:
        shutil.copy(REPO / "notebooks" / name, root / name)
    yield from _serve(tmp_path, root)


@pytest.fixture
def highlight_server(tmp_path):
    """A JupyterLab server with the built extension, the seed as a notebook and as a .cell file, a python3 notebook."""
    import nbformat

    if not (PREBUILT / "package.json").exists():
        pytest.fail(f"{PREBUILT} is missing: build it with `cd labextension && npm install && npm run build`")
    root = tmp_path / "root"
    root.mkdir()
    (root / SEED.name).write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    soma = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SEED.read_text(encoding="utf-8")),
                                           nbformat.v4.new_code_cell(TOML_CELL), nbformat.v4.new_code_cell(MAGIC_CELL)])
    soma.metadata["kernelspec"] = {"name": "soma", "display_name": "Soma", "language": "soma"}
    nbformat.write(soma, root / "refund_agent.ipynb")
    python = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\n\ndef root():\n    return os.sep")])
    python.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(python, root / "python_check.ipynb")
    extensions = tmp_path / "jupyter-path" / "labextensions"
    extensions.mkdir(parents=True)
    (extensions / "soma-jupyterlab").symlink_to(PREBUILT, target_is_directory=True)
    yield from _serve(tmp_path, root, jupyter_path=extensions.parent)


def _serve(tmp_path: Path, root: Path, jupyter_path: Path | None = None, python: str = sys.executable,
           env: dict | None = None):
    """Run JupyterLab (`python -m jupyter lab`, in `env` or ours) on `root` (settings and workspaces in
    `tmp_path`) until the test ends; yield its URL."""
    env = dict(os.environ if env is None else env)
    if jupyter_path is not None:
        env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(jupyter_path), env.get("JUPYTER_PATH")]))
    for var, sub in (("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("JUPYTER_RUNTIME_DIR", "runtime")):
        env[var] = str(tmp_path / sub)
    port = _free_port()
    command = [python, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
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
    """Run All in Lab: the kernel is Soma, the diagram and the verify report render, no cell errors."""
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
            page.locator(".jp-OutputArea-output > img.soma-diagram").first.wait_for(timeout=RUN_ALL_MS)
            page.locator(".jp-OutputArea-output .soma-report").first.wait_for(timeout=RUN_ALL_MS)
            _frame_the_verify_report(page)
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    assert screenshot.stat().st_size > 10_000
    assert state["errors"] == [], f"cells showed errors: {state['errors']}"
    assert state["ran"] == state["cells"] > 0


SAVED_OUTPUTS_JS = """() => {
    const outputs = [...document.querySelectorAll('.jp-OutputArea-output')];
    const images = [...document.querySelectorAll('.jp-OutputArea-output img.soma-diagram')];
    return {outputs: outputs.length,
            reports: document.querySelectorAll('.jp-OutputArea-output .soma-report').length,
            images: images.length,
            drawn: images.filter(i => i.complete && i.naturalWidth > 0).length,
            described: images.filter(i => i.alt.startsWith('state machine ')).length,
            inline_svg: document.querySelectorAll('.jp-OutputArea-output svg text').length,
            leaked: outputs.filter(o => o.innerText.includes('__start__') && !o.querySelector('details.soma-dot')).length};
}"""


def test_saved_notebooks_read_well_before_they_are_run(saved_notebooks_server):
    """An untrusted saved notebook (a fresh clone) shows every drawing and report without running a cell."""
    sync_api = _require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    seen = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(30_000)
            for name in SAVED_NOTEBOOKS:
                _open(page, saved_notebooks_server, f"saved-{name[:2]}", name)
                page.locator(".jp-OutputArea-output img.soma-diagram").first.wait_for(state="attached",
                                                                                       timeout=KERNEL_IDLE_MS)
                page.wait_for_function("() => [...document.querySelectorAll('img.soma-diagram')]"
                                       ".every(i => i.complete)", timeout=KERNEL_IDLE_MS)
                seen[name] = page.evaluate(SAVED_OUTPUTS_JS)
                page.locator(".jp-OutputArea-output img.soma-diagram").last.evaluate(
                    "image => image.closest('.jp-Cell').scrollIntoView({block: 'start'})")
                page.screenshot(path=str(ARTIFACTS / f"lab_saved_{name[:2]}.png"))
        finally:
            browser.close()
    for name, state in seen.items():
        assert state["images"] > 0 and state["drawn"] == state["images"] == state["described"], (name, state)
        assert state["inline_svg"] == 0 and state["leaked"] == 0, (name, state)
    assert seen["04_verification.ipynb"]["reports"] > 0


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


def _frame_the_verify_report(page) -> None:
    """Hide the side bar and the news toast, and scroll the last verify report's cell to the top."""
    page.keyboard.press("Control+b")
    decline_news = page.locator(".jp-Notification-Toast-Close, .Toastify__close-button")
    if decline_news.count():
        decline_news.first.click()
    verify = page.locator(".jp-OutputArea-output .soma-report").last
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


PROBE_JS = """([scope, words]) => {
    const root = document.querySelector(scope);
    const line = root && root.querySelector('.cm-line');
    if (!line) { return null; }
    const plain = getComputedStyle(line).color;
    const spans = [...root.querySelectorAll('.cm-line span')];
    const styled = text => spans.some(s => text(s.textContent) && getComputedStyle(s).color !== plain);
    const found = {};
    for (const word of words) { found[word] = styled(t => t === word); }
    found['// comment'] = styled(t => t.startsWith('//'));
    found['"string"'] = styled(t => t.length > 1 && t.startsWith('"'));
    return found;
}"""


CELL_SPANS_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell .cm-content')].map(content => {
    const line = content.querySelector('.cm-line');
    const plain = line ? getComputedStyle(line).color : '';
    const styled = {};
    for (const span of content.querySelectorAll('.cm-line span')) {
        const look = getComputedStyle(span);
        styled[span.textContent] = look.color !== plain || look.fontWeight >= 600 || look.fontStyle === 'italic';
    }
    return styled;
})"""


def _styled_tokens(page, scope: str, words: list[str]) -> dict[str, bool]:
    """Which probe tokens (`words`, a comment, a string) the editor under `scope` draws in a colour other than
    plain text's; waits (bounded) until every word is."""
    try:
        page.wait_for_function(f"args => {{ const f = ({PROBE_JS})(args); return f && args[1].every(w => f[w]); }}",
                               arg=[scope, words], timeout=KERNEL_IDLE_MS)
    except Exception:  # the assertion below names what is missing
        pass
    return page.evaluate(PROBE_JS, [scope, words]) or {}


def _open(page, url: str, workspace: str, path: str) -> None:
    """Open `path` in a fresh workspace of the Lab at `url`."""
    page.goto(f"{url}/lab/workspaces/{workspace}/tree/{path}?reset&token={TOKEN}")


def test_soma_is_highlighted_in_notebook_cells_and_cell_files(highlight_server):
    """Every probe token is drawn styled in a Soma notebook cell and in the .cell file; python3 keeps Python."""
    sync_api = _require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {"notebook": ARTIFACTS / "lab_highlight_notebook.png", "file": ARTIFACTS / "lab_highlight_file.png"}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.set_default_timeout(30_000)
            _open(page, highlight_server, "soma-notebook", "refund_agent.ipynb")
            page.get_by_text("Soma | Idle").wait_for(timeout=KERNEL_IDLE_MS)
            in_notebook = _styled_tokens(page, ".jp-Notebook .jp-Cell .cm-content", PROBE_WORDS)
            cells = page.evaluate(CELL_SPANS_JS)
            page.screenshot(path=str(shots["notebook"]))
            _open(page, highlight_server, "soma-file", SEED.name)
            in_file = _styled_tokens(page, ".jp-FileEditor .cm-content", PROBE_WORDS)
            listed = page.locator(".jp-DirListing-item", has_text=SEED.name).locator(".jp-DirListing-itemIcon")
            file_icon = listed.first.inner_html()
            page.screenshot(path=str(shots["file"]))
            editing = _edit_after_a_brace(page)
            _open(page, highlight_server, "python-notebook", "python_check.ipynb")
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=KERNEL_IDLE_MS)
            in_python = _styled_tokens(page, ".jp-Notebook .jp-Cell .cm-content", ["import", "def", "return"])
        finally:
            browser.close()
    expected = {word: True for word in PROBE_WORDS} | {"// comment": True, '"string"': True}
    assert in_notebook == expected, f"notebook cell: not styled: {[k for k, v in in_notebook.items() if not v]}"
    toml_spans, magic_spans = cells[1], cells[2]
    assert {"%%toml": True, "# the agent's model": True, "[agent]": True, "mock": True} == {
        text: toml_spans.get(text) for text in ("%%toml", "# the agent's model", "[agent]", "mock")}, toml_spans
    assert magic_spans.get("%verify --strict") is True and magic_spans.get("let") is True, magic_spans
    assert in_file == expected, f".cell file: not styled: {[k for k, v in in_file.items() if not v]}"
    assert "#26a69a" in file_icon, f"the file browser does not show the Soma logo for {SEED.name}: {file_icon[:200]}"
    assert {k: in_python.get(k) for k in ("import", "def", "return")} == {"import": True, "def": True, "return": True}
    assert all(path.stat().st_size > 10_000 for path in shots.values())
    assert editing == {"matched": True, "indented": "    x", "commented": "    // x"}, editing


def _edit_after_a_brace(page) -> dict:
    """In the .cell editor: the `{` ending `cell type Decision {` matches its `}`; Enter indents; Ctrl-/ comments."""
    lines = SEED.read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("cell type ") and line.endswith("{"))
    page.locator(".jp-FileEditor .cm-content").click()
    page.keyboard.press("Control+Home")
    for _ in range(row):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    page.wait_for_timeout(200)
    matched = page.locator(".jp-FileEditor .cm-matchingBracket").count() >= 2
    page.keyboard.press("Enter")
    page.keyboard.type("x")
    indented = page.evaluate(CURSOR_LINE_JS)
    page.keyboard.press("Control+/")
    page.wait_for_timeout(200)
    return {"matched": matched, "indented": indented, "commented": page.evaluate(CURSOR_LINE_JS)}


CURSOR_LINE_JS = """() => {
    const node = getSelection().anchorNode;
    const element = node && (node.nodeType === 1 ? node : node.parentElement);
    const line = element && element.closest('.cm-line');
    return line ? line.textContent : null;
}"""


LSP_CELLS = [
    "cell Counter {\n    memory { items: List<Int> }\n    on size() { return len(items) }\n}",
    "%check",
    "let total = Counter.size()\nprint(totl)",
]


def _registered_language_servers() -> list[str]:
    """The names of the installed `jupyter_lsp_spec_v1` entry points."""
    from importlib.metadata import entry_points

    return [point.name for point in entry_points(group="jupyter_lsp_spec_v1")]


@pytest.fixture
def lsp_server(tmp_path):
    """A JupyterLab server whose jupyter-lsp knows the Soma language server, with an unrun Soma notebook.

    jupyter-lsp finds the server through the package's entry point, as after `pip install`; only when the
    installed metadata predates it (an editable install not reinstalled) is the same spec given as config.
    """
    import json

    import nbformat

    from soma_kernel.lsp.spec import SERVER_KEY, spec

    root = tmp_path / "root"
    root.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in LSP_CELLS])
    notebook.metadata["kernelspec"] = {"name": "soma", "display_name": "Soma", "language": "soma"}
    nbformat.write(notebook, root / "lsp.ipynb")
    (root / "typo.cell").write_text(LSP_CELLS[0].replace("len(items)", "len(itms)"), encoding="utf-8")
    config = tmp_path / "config"
    config.mkdir()
    if SERVER_KEY not in _registered_language_servers():
        (config / "jupyter_server_config.json").write_text(
            json.dumps({"LanguageServerManager": {"language_servers": spec()}}))
    os.environ["JUPYTER_CONFIG_DIR"], previous = str(config), os.environ.get("JUPYTER_CONFIG_DIR")
    try:
        yield from _serve(tmp_path, root)
    finally:
        if previous is None:
            os.environ.pop("JUPYTER_CONFIG_DIR", None)
        else:
            os.environ["JUPYTER_CONFIG_DIR"] = previous


WORD_BOX_JS = """text => {
    const walker = document.createTreeWalker(document.querySelector('.jp-Notebook .jp-Cell .cm-content'),
                                             NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent.indexOf(text);
        if (at >= 0) {
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + text.length);
            const box = range.getBoundingClientRect();
            return {x: box.x, y: box.y, width: box.width, height: box.height};
        }
    }
    return null;
}"""
UNDERLINED_JS = """scope => [...document.querySelectorAll(scope + ' .cm-lintRange-error')].map(e => e.textContent)"""


def _underlined(page, scope: str) -> list[str]:
    """The texts the editors under `scope` underline as errors, once there is one (bounded wait)."""
    page.wait_for_function(f"scope => ({UNDERLINED_JS})(scope).length > 0", arg=scope, timeout=KERNEL_IDLE_MS)
    return page.evaluate(UNDERLINED_JS, scope)


def test_the_language_server_underlines_and_hovers_in_an_unrun_notebook(lsp_server):
    """jupyterlab-lsp with the Soma server: an undefined name in the third cell is underlined before anything
    runs, Ctrl-hovering the builtin `len` in the first cell shows its signature from the registry, and a
    misspelt slot in a .cell file open in the file editor is underlined."""
    from soma_kernel.runtime.builtins import builtin_entry

    sync_api = _require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "lab_language_server.png"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(30_000)
            _open(page, lsp_server, "soma-lsp", "lsp.ipynb")
            page.get_by_text("Soma | Idle").wait_for(timeout=KERNEL_IDLE_MS)
            underlined = _underlined(page, ".jp-Notebook")
            prompts = page.locator(".jp-CodeCell .jp-InputArea-prompt").all_inner_texts()
            box = page.evaluate(WORD_BOX_JS, "len")
            page.keyboard.down("Control")
            page.mouse.move(box["x"] + 4, box["y"] + box["height"] / 2)
            tooltip = page.locator(".lsp-hover")
            tooltip.first.wait_for(timeout=KERNEL_IDLE_MS)
            hover = tooltip.first.inner_text()
            page.keyboard.up("Control")
            page.screenshot(path=str(shot))
            _open(page, lsp_server, "soma-lsp-file", "typo.cell")
            in_file = _underlined(page, ".jp-FileEditor")
        finally:
            browser.close()
    assert underlined == ["totl"]
    assert in_file == ["itms"]
    assert all("[" not in p or p.strip() == "[ ]:" for p in prompts), f"a cell ran: {prompts}"
    assert builtin_entry("len").signature in hover, hover
