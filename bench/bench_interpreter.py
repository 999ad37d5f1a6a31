"""Interpreter speed against plain Python, in one process.

Each workload is run by the Soma runtime and by an equivalent plain Python
function in the same run, so machine load mostly cancels in the ratio:

- recursive fib(24);
- a while loop of 300 000 rounds of Int arithmetic;
- 20 000 calls of a handler writing a Map slot under an invariant, made from
  another handler's loop (`bump("k{i % 10}")`), against a Python twin that
  checks, journals and writes the same way;
- a 100 000-element list built with `xs = push(xs, i)` (the Python twin
  appends; the Soma list must not be copied on every round);
- a map built from a 20 000-element list, and 10 000 top-level handler calls;
- 300 000 calls of a handler writing a Map slot under an invariant, made from
  another handler's loop (`put("k{i % 10}", i)`), against the plain Python a
  programmer would write: a function call, the invariant's test, a dict write.

Prints each best-of CPU time (the two sides timed in turn, so a change of
load weighs on both) and the ratio Soma / Python (lower is better; the goal is
<= 3). A benchmark does not assert: it prints.

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
    on spin(n: Int) {
        let i = 0
        let total = 0
        while i < n {
            total = total + i * 3 % 7
            i = i + 1
        }
        return total
    }
    on bump(key: String) {
        totals.set(key, (totals.get(key) ?? 0) + 1)
        return 1
    }
    on drive(n: Int) {
        for i in range(0, n) {
            bump("k{i % 10}")
        }
        return n
    }
    on grow(n: Int) {
        let xs = []
        for i in range(0, n) {
            xs = push(xs, i)
        }
        return xs
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
    on put(key: String, amount: Int) {
        totals.set(key, amount)
        return amount
    }
    on fill(n: Int) {
        for i in range(0, n) {
            put("k{i % 10}", i)
        }
        return n
    }
}
"""

FIB_N = 24
SPIN_ROUNDS = 300_000
NESTED_CALLS = 20_000
PUSHES = 100_000
TOP_LEVEL_CALLS = 10_000
HANDLER_WRITES = 300_000


def py_fib(n):
    """Plain Python twin of the Soma fib."""
    if n < 2:
        return n
    return py_fib(n - 1) + py_fib(n - 2)


def py_spin(n):
    """Plain Python twin of the Soma while loop."""
    i = 0
    total = 0
    while i < n:
        total = total + i * 3 % 7
        i = i + 1
    return total


def py_grow(n):
    """Plain Python twin of the push loop."""
    xs = []
    for i in range(n):
        xs.append(i)
    return xs


def py_build(items):
    """Plain Python twin of the Soma map-building loop."""
    m = {}
    for x in items:
        m[str(x % 97)] = x * 2
    return m


def py_fill(n):
    """Plain Python twin of the Soma fill loop: a call per round, the invariant tested, a dict written."""
    totals = {}

    def put(key, amount):
        if not amount >= 0:
            raise ValueError("invariant totals >= 0")
        totals[key] = amount
        return amount

    for i in range(n):
        put(f"k{i % 10}", i)
    return n


class PySlot:
    """Plain Python twin of a slot with an invariant (check before write, undo log)."""

    def __init__(self):
        self.data = {}
        self.undo = []

    def write(self, key, amount):
        """Check the invariant, journal the old value, write."""
        if not amount >= 0:
            raise ValueError("invariant")
        old = self.data.get(key)
        self.undo.append((key, old))
        self.data[key] = amount

    def record(self, key, amount):
        """A top-level call: one write, then the journal is committed."""
        self.write(key, amount)
        self.undo.clear()
        return amount

    def bump(self, key):
        """The nested handler: read, add one, write."""
        self.write(key, (self.data.get(key) or 0) + 1)
        return 1

    def drive(self, n):
        """The calling handler: n nested bumps, then commit."""
        for i in range(n):
            self.bump(f"k{i % 10}")
        self.undo.clear()
        return n


def timed(function) -> float:
    """The CPU time of one run of `function()`, in seconds (the process's own time: the other
    programs sharing the machine's cores count much less than in wall-clock time)."""
    start = time.process_time()
    function()
    return time.process_time() - start


def best_pair(soma, python, repeat: int = 7) -> tuple[float, float]:
    """The best of `repeat` timings of each, taken in turn (soma, python, soma, …) so that a
    change of machine load during the run weighs on both sides alike."""
    soma_best = python_best = float("inf")
    for _ in range(repeat):
        soma_best = min(soma_best, timed(soma))
        python_best = min(python_best, timed(python))
    return soma_best, python_best


def workloads(rt: Runtime):
    """(name, soma function, python function) for each workload."""
    items = list(range(20_000))
    keys = [f"k{i % 100}" for i in range(TOP_LEVEL_CALLS)]
    slot = PySlot()

    def soma_calls():
        call = rt.call
        for i, key in enumerate(keys):
            call("record", [key, i])

    def py_calls():
        for i, key in enumerate(keys):
            slot.record(key, i)

    return [
        (f"fib({FIB_N})", lambda: rt.call("fib", [FIB_N]), lambda: py_fib(FIB_N)),
        (f"while, {SPIN_ROUNDS // 1000}k rounds", lambda: rt.call("spin", [SPIN_ROUNDS]),
         lambda: py_spin(SPIN_ROUNDS)),
        (f"{NESTED_CALLS // 1000}k nested slot writes", lambda: rt.call("drive", [NESTED_CALLS]),
         lambda: slot.drive(NESTED_CALLS)),
        (f"push loop, {PUSHES // 1000}k", lambda: rt.call("grow", [PUSHES]), lambda: py_grow(PUSHES)),
        ("map from 20k list", lambda: rt.call("build", [items]), lambda: py_build(items)),
        (f"{TOP_LEVEL_CALLS} top-level calls", soma_calls, py_calls),
        (f"{HANDLER_WRITES // 1000}k handler slot writes", lambda: rt.call("fill", [HANDLER_WRITES]),
         lambda: py_fill(HANDLER_WRITES)),
    ]


def same_results(rt: Runtime) -> None:
    """Each Soma workload computes what its Python twin computes (checked once, small sizes)."""
    pairs = [(rt.call("fib", [15]), py_fib(15)), (rt.call("spin", [1000]), py_spin(1000)),
             (rt.call("grow", [1000]), py_grow(1000)),
             (rt.call("build", [list(range(300))]), py_build(list(range(300)))),
             (rt.call("fill", [1000]), py_fill(1000))]
    for soma, python in pairs:
        if soma != python:
            raise SystemExit(f"bench workloads disagree: {soma!r} != {python!r}")


def main() -> int:
    """Run every workload and print the ratios."""
    rt = Runtime(note=lambda text: None)
    rt.load_program(parse(PROGRAM, origin="bench.cell"))
    same_results(rt)
    print(f"{'workload':<28}{'soma':>10}{'python':>10}{'ratio':>8}")
    worst = 0.0
    for name, soma, python in workloads(rt):
        soma_time, py_time = best_pair(soma, python)
        ratio = soma_time / py_time
        worst = max(worst, ratio)
        print(f"{name:<28}{soma_time * 1000:>8.1f}ms{py_time * 1000:>8.1f}ms{ratio:>7.1f}x")
    print(f"worst ratio: {worst:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
