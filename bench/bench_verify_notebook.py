"""%verify in a notebook session against the `soma-kernel verify` command, on big machines.

For linear chains of 10 000 and 100 000 states (a ⚠ line per state, so the whole
report is tens of megabytes), the session runs `%verify` as the kernel does for a
cell: the time until its first output (the progress line), the time until the
report, and the bytes it sends (every stream chunk and display bundle, as JSON).
The baseline is the command on the same program file, in the same run: its wall
time (start-up included) and the bytes it prints. Prints the ratios (the goals:
time ≤ 2×, first output within 1 s, the report ≤ 300 KB).

    python bench/bench_verify_notebook.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from bench_verify import chain  # the same chain programs as the command's benchmark (this folder is on sys.path)
from soma_kernel.session.session import Session

SIZES = (10_000, 100_000)
RUNS = 3


def in_session(source: str) -> tuple[float, float, int]:
    """(seconds to the first output, seconds to the end, bytes sent) of `%verify` in a fresh session."""
    session = Session(directory=os.path.dirname(os.path.abspath(__file__)))
    session.execute(source)
    first: list[float] = []
    start = time.perf_counter()

    def shown(bundle: dict) -> None:
        first.append(time.perf_counter() - start)

    real_write = sys.stdout.write

    def written(text: str) -> int:
        if not first:
            first.append(time.perf_counter() - start)
        return len(text)

    sys.stdout.write = written  # the progress line is the first thing a notebook would show
    try:
        result = session.execute("%verify", display=shown)
    finally:
        sys.stdout.write = real_write
    total = time.perf_counter() - start
    sent = sum(len(json.dumps(o.bundle if o.kind == "display" else o.text)) for o in result.outputs)
    return (first[0] if first else total), total, sent


def command(path: str) -> tuple[float, int]:
    """(wall seconds, bytes printed) of `soma-kernel verify path`."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", path], capture_output=True, check=False)
    return time.perf_counter() - start, len(done.stdout)


def main() -> None:
    """One row per size: best of RUNS for each side."""
    print(f"{'states':>8} {'cmd s':>7} {'cmd bytes':>11} {'%verify s':>10} {'first s':>8} {'sent bytes':>11} "
          f"{'time ratio':>11} {'bytes ratio':>12}")
    with tempfile.TemporaryDirectory() as folder:
        tempfile.tempdir = folder  # the whole reports the summaries save go here, and away with it
        for size in SIZES:
            source = chain(size)
            path = os.path.join(folder, f"chain{size}.cell")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(source)
            cmd_s, cmd_bytes = min(command(path) for _ in range(RUNS))
            first_s, session_s, sent = min(in_session(source) for _ in range(RUNS))
            print(f"{size:>8} {cmd_s:>7.2f} {cmd_bytes:>11,} {session_s:>10.2f} {first_s:>8.2f} {sent:>11,} "
                  f"{session_s / cmd_s:>10.2f}x {sent / cmd_bytes:>11.4f}x")
        tempfile.tempdir = None


if __name__ == "__main__":
    main()
