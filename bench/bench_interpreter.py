"""Interpreter speed against plain Python, in one process.

Three workloads, each run by the Soma runtime and by an equivalent plain
Python function: a recursive fib, a loop over a list building a map, and
10 000 top-level handler calls writing a slot under an invariant. Prints
each time and the ratio Soma / Python (lower is better; the goal is <= 10).

    python bench/bench_interpreter.py
"""

from __future__ import annotations

import sys
import time

from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse

PROGRAM = """
cell Bench {
    memory {
        totals: Map<String, Int>
        invariant totals >= 0
    }
    on fib(n: Int) {
        if n < 2 { return n }
        return fib(n - 1) + fib(n - 2)
    }
    on build(items: List<Int>) {
        let m = map()
        for x in items {
            m[to_string(x % 97)] = x * 2
        }
        return m
    }
    on record(key: String, amount: Int) {
        totals.set(key, amount)
        return amount
    }
}
"""

HANDLER_CALLS = 10_000


def py_fib(n):
    """Plain Python twin of the Soma fib."""
    if n < 2:
        return n
    return py_fib(n - 1) + py_fib(n - 2)


def py_build(items):
    """Plain Python twin of the Soma map-building loop."""
    m = {}
    for x in items:
        m[str(x % 97)] = x * 2
    return m


class PySlot:
    """Plain Python twin of a slot with an invariant (check before write, undo log)."""

    def __init__(self):
        self.data = {}
        self.undo = []

    def record(self, key, amount):
        """Check the invariant, journal the old value, write."""
        if not amount >= 0:
            raise ValueError("invariant")
        old = self.data.get(key)
        self.undo.append((key, old))
        self.data[key] = amount
        self.undo.clear()
        return amount


def timed(function, repeat: int = 7) -> float:
    """The best of `repeat` wall-clock timings of `function()`, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def workloads(rt: Runtime):
    """(name, soma function, python function) for each workload."""
    items = list(range(20_000))
    keys = [f"k{i % 100}" for i in range(HANDLER_CALLS)]
    slot = PySlot()

    def soma_calls():
        call = rt.call
        for i, key in enumerate(keys):
            call("record", [key, i])

    def py_calls():
        for i, key in enumerate(keys):
            slot.record(key, i)

    return [
        ("fib(22)", lambda: rt.call("fib", [22]), lambda: py_fib(22)),
        ("map from 20k list", lambda: rt.call("build", [items]), lambda: py_build(items)),
        (f"{HANDLER_CALLS} handler calls", soma_calls, py_calls),
    ]


def main() -> int:
    """Run every workload and print the ratios."""
    rt = Runtime(note=lambda text: None)
    rt.load_program(parse(PROGRAM, origin="bench.cell"))
    assert rt.call("fib", [15]) == py_fib(15)
    assert rt.call("build", [list(range(300))]) == py_build(list(range(300)))
    print(f"{'workload':<24}{'soma':>10}{'python':>10}{'ratio':>8}")
    worst = 0.0
    for name, soma, python in workloads(rt):
        soma_time, py_time = timed(soma), timed(python)
        ratio = soma_time / py_time
        worst = max(worst, ratio)
        print(f"{name:<24}{soma_time * 1000:>8.1f}ms{py_time * 1000:>8.1f}ms{ratio:>7.1f}x")
    print(f"worst ratio: {worst:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
