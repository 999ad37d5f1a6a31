"""Language-server benchmark: how soon diagnostics and answers come, each as a ratio to `soma-kernel check`
on the same file, measured in the same run.

    python bench/bench_lsp.py [--repeat 5]

One `soma-kernel lsp` process (default debounce, 100 ms) is driven over stdio
by pygls's client, as an editor drives it:
- open: didOpen of a ~5 000-line program until its diagnostics arrive
  (target: within 1 s), the median of `--repeat` opens of copies;
- edit: one changed character in a ~400-line program until the new
  diagnostics arrive, debounce included (target: within 300 ms);
- hover, definition, completion on the refund seed (target: 100 ms each).
The baseline is the median wall time of the `soma-kernel check FILE` command
on the same file. Every figure is a median of `--repeat` runs. A last line
compares, in this process and in CPU time (less disturbed by other load), the
server's analysis of the large program with the parse and check it wraps.
Programs are made from the refund seed: copies of its agent and sum type
under new names (the test cell left out, so every copy checks clean).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "seeds" / "refund_agent" / "refund_agent.cell"
RENAMED = re.compile(r"\b(RefundAgent|Decision|Approve|Deny|Escalate)\b")


def program(copies: int) -> str:
    """`copies` copies of the refund seed's type and agent, each under its own names."""
    seed = SEED.read_text().split("cell test", 1)[0]
    return "\n".join(RENAMED.sub(lambda m, n=n: f"{m.group(1)}{n}", seed) for n in range(copies))


def cpu_seconds(text: str, repeat: int) -> tuple[float, float]:
    """Median CPU seconds of the server's analysis of `text` and of the parse + check_program it wraps."""
    from soma_kernel.analysis.check import check_program
    from soma_kernel.core.gcpause import paused_gc
    from soma_kernel.lsp.document import analyse
    from soma_kernel.syntax.parser import parse

    analysed, checked = [], []
    for number in range(repeat):
        began = time.process_time()
        analyse(text, f"file:///bench/large_{number}.cell", "/bench/large.cell")
        analysed.append(time.process_time() - began)
        began = time.process_time()
        with paused_gc():
            check_program(parse(text, "/bench/large.cell"))
        checked.append(time.process_time() - began)
    return statistics.median(analysed), statistics.median(checked)


def check_seconds(path: Path, repeat: int) -> float:
    """The median wall time of `soma-kernel check path`."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "soma_kernel", "check", str(path)], capture_output=True, check=False)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


class Editor:
    """A pygls client that records when each document's diagnostics arrive."""

    def __init__(self):
        self.client = LanguageClient("bench", "0")
        self.arrived: dict[str, asyncio.Future] = {}

        @self.client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: t.PublishDiagnosticsParams) -> None:
            waiting = self.arrived.get(params.uri)
            if waiting is not None and not waiting.done():
                waiting.set_result(params)

    async def start(self, root: Path) -> None:
        """Start and initialise the server."""
        await self.client.start_io(sys.executable, "-m", "soma_kernel", "lsp")
        await self.client.initialize_async(t.InitializeParams(capabilities=t.ClientCapabilities(),
                                                              root_uri=root.as_uri()))
        self.client.initialized(t.InitializedParams())

    async def stop(self) -> None:
        """Shut the server down."""
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    async def timed(self, uri: str, send) -> float:
        """Seconds from sending a notification to the diagnostics of `uri` arriving."""
        self.arrived[uri] = asyncio.get_running_loop().create_future()
        began = time.perf_counter()
        send()
        await asyncio.wait_for(self.arrived[uri], 60)
        return time.perf_counter() - began

    async def open(self, path: Path, text: str) -> float:
        """Open a document; seconds until its diagnostics arrive."""
        item = t.TextDocumentItem(uri=path.as_uri(), language_id="soma", version=1, text=text)
        return await self.timed(path.as_uri(), lambda: self.client.text_document_did_open(
            t.DidOpenTextDocumentParams(text_document=item)))

    async def edit(self, path: Path, text: str, version: int) -> float:
        """Replace a document's text; seconds until the new diagnostics arrive."""
        params = t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)])
        return await self.timed(path.as_uri(), lambda: self.client.text_document_did_change(params))


def position(text: str, needle: str, shift: int) -> t.Position:
    """The LSP position of `needle` (+ shift) in text."""
    offset = text.index(needle) + shift
    return t.Position(line=text.count("\n", 0, offset), character=offset - text.rfind("\n", 0, offset) - 1)


async def request_seconds(editor: Editor, path: Path, text: str, repeat: int) -> dict[str, float]:
    """Median seconds of hover, definition and completion requests on the refund seed."""
    where = t.TextDocumentIdentifier(uri=path.as_uri())
    requests = {
        "hover": lambda: editor.client.text_document_hover_async(t.HoverParams(
            text_document=where, position=position(text, "transition(request_id, \"decided\")", 2))),
        "definition": lambda: editor.client.text_document_definition_async(t.DefinitionParams(
            text_document=where, position=position(text, "_pay(request_id", 2))),
        "completion": lambda: editor.client.text_document_completion_async(t.CompletionParams(
            text_document=where, position=position(text, "paid_by_day.set", 4))),
    }
    found = {}
    for name, send in requests.items():
        times = []
        for _ in range(repeat * 4):
            began = time.perf_counter()
            await send()
            times.append(time.perf_counter() - began)
        found[name] = statistics.median(times)
    return found


async def measure(folder: Path, repeat: int) -> None:
    """Run every measurement and print the table."""
    large, medium = folder / "large.cell", folder / "medium.cell"
    large.write_text(program(40))
    medium.write_text(program(3))
    seed = folder / "refund_agent.cell"
    seed.write_text(SEED.read_text())
    baselines = {path: check_seconds(path, repeat) for path in (large, medium, seed)}
    editor = Editor()
    await editor.start(folder)
    try:
        opens = []
        for number in range(repeat):
            copy = folder / f"large_{number}.cell"
            copy.write_text(large.read_text())
            opens.append(await editor.open(copy, copy.read_text()))
        await editor.open(medium, medium.read_text())
        edits = []
        text = medium.read_text()
        for version in range(2, 2 + repeat):
            text = text.replace("max_tokens\", 300", f"max_tokens\", {300 + version}", 1)
            edits.append(await editor.edit(medium, text, version))
        await editor.open(seed, seed.read_text())
        answers = await request_seconds(editor, seed, seed.read_text(), repeat)
    finally:
        await editor.stop()
    rows = [("diagnostics after open", large, statistics.median(opens), 1.0),
            ("diagnostics after an edit", medium, statistics.median(edits), 0.3)]
    rows += [(name, seed, seconds, 0.1) for name, seconds in answers.items()]
    print(f"{'measure':<28}{'file':<22}{'lines':>7}{'ms':>9}{'check ms':>10}{'ratio':>8}{'target ms':>11}")
    for name, path, seconds, target in rows:
        lines = path.read_text().count("\n") + 1
        print(f"{name:<28}{path.name:<22}{lines:>7}{seconds * 1000:>9.0f}{baselines[path] * 1000:>10.0f}"
              f"{seconds / baselines[path]:>8.2f}{target * 1000:>11.0f}")
    analysed, checked = cpu_seconds(large.read_text(), repeat)
    print(f"CPU in-process, large.cell: the server's analysis {analysed * 1000:.0f} ms, parse + check_program "
          f"{checked * 1000:.0f} ms: ratio {analysed / checked:.2f}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(measure(Path(folder), args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
