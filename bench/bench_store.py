"""Slot-store benchmark: the cost of one write into a 2 000- and a 50 000-entry persistent map.

    python bench/bench_store.py [--runs 15]

For each size a store is filled, then timed (medians):
- a `soma-kernel run` of a read-only handler and of a one-key `put` (open the
  file, load the cell, one invocation), done in-process as `run` does it; the
  write cost is their difference;
- in a live runtime (a bound notebook session): one `put` invocation and one
  read-only invocation.
The baseline, same run: one `INSERT OR REPLACE` + `COMMIT` with plain sqlite3
on a WAL, synchronous=FULL file. Ratios are against it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time

from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.store import SlotStore
from soma_kernel.syntax.parser import parse

PROGRAM = parse("""
cell Book {
    memory {
        entries: Map<String, Int> [persistent]
    }
    on put(key: String, value: Int) { entries.set(key, value) }
    on peek(key: String) { return entries.get(key) }
    on fill(n: Int) { for i in range(0, n) { entries.set("k{i}", i) } }
}
""")
SIZES = (2_000, 50_000)


def bound_runtime(path: str) -> Runtime:
    """A runtime of PROGRAM bound to the store at `path` (what `soma-kernel run` builds)."""
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(PROGRAM)
    runtime.attach_store(SlotStore(path))
    return runtime


def one_run(path: str, handler: str, args: list) -> float:
    """Seconds for one `soma-kernel run`-like process body: open, load, one invocation, close."""
    began = time.perf_counter()
    runtime = bound_runtime(path)
    runtime.call(handler, args)
    runtime.detach_store()
    return time.perf_counter() - began


def median_of(runs: int, action) -> float:
    """The median seconds of `runs` calls of `action()` (each returns its own seconds)."""
    return statistics.median(action() for _ in range(runs))


def timed(action) -> float:
    """Seconds one `action()` takes."""
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def baseline(folder: str, runs: int) -> float:
    """Seconds for one sqlite3 upsert + commit on a WAL, synchronous=FULL file."""
    db = sqlite3.connect(os.path.join(folder, "baseline.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
    counter = iter(range(10**9))

    def write():
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT OR REPLACE INTO t VALUES (?, ?)", (f"k{next(counter)}", "1"))
        db.execute("COMMIT")

    seconds = median_of(runs, lambda: timed(write))
    db.close()
    return seconds


def measure(folder: str, size: int, runs: int) -> dict[str, float]:
    """The timings of one map size."""
    path = os.path.join(folder, f"book{size}.sqlite")
    filler = bound_runtime(path)
    filler.call("fill", [size])
    filler.detach_store()
    counter = iter(range(10**9))
    pairs = [(one_run(path, "peek", ["k1"]), one_run(path, "put", [f"new{next(counter)}", 1])) for _ in range(runs)]
    result = {
        "run read-only": statistics.median(read for read, _ in pairs),
        "run put": statistics.median(put for _, put in pairs),
        "write cost": statistics.median(put - read for read, put in pairs),
    }
    live = bound_runtime(path)
    result["live read-only"] = median_of(runs * 4, lambda: timed(lambda: live.call("peek", ["k1"])))
    result["live put"] = median_of(runs * 4, lambda: timed(lambda: live.call("put", [f"live{next(counter)}", 2])))
    live.detach_store()
    return result


def main(argv: list[str] | None = None) -> int:
    """Print the table; no asserts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        base = baseline(folder, args.runs * 4)
        print(f"baseline (sqlite3 upsert + commit, WAL, FULL): {base * 1000:.3f} ms")
        rows = {size: measure(folder, size, args.runs) for size in SIZES}
    names = list(rows[SIZES[0]])
    print(f"{'':<16}" + "".join(f"{size:>12} entries" for size in SIZES) + "   (ms; × baseline)")
    for name in names:
        cells = "".join(f"{rows[size][name] * 1000:>10.2f} {rows[size][name] / base:>5.1f}×" for size in SIZES)
        print(f"{name:<16}{cells}")
    small, large = rows[SIZES[0]]["write cost"], rows[SIZES[1]]["write cost"]
    print(f"one write at {SIZES[1]} entries costs {(large - small) * 1000:+.2f} ms vs at {SIZES[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
