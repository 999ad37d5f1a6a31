"""Benchmark `soma-kernel verify` on generated machines of 1 000 to 100 000 states.

Three families, as in the reference's state-explosion study: a linear chain
(s0 -> s1 -> … -> sN), a diamond lattice (layers of two states, each joined
to both states of the next layer) and a cycle that fails `eventually`
(a ring of N states that can leave towards `done`, and a second ring the run
can enter but never leave, so `done` is not inevitable: the counter-example
is a lasso through the whole trap). Each program
is written to a temporary folder (with a soma.toml for the cycle) and timed
through the real pipeline; the table shows parse, `soma check` and verify
(with rendering) separately. A second table runs the whole command,
`soma-kernel verify FILE` as a subprocess, on linear chains of 10 000 and
100 000 states (targets: 0.3 s and 3 s, linear growth), next to the start-up
of an empty Python process and of the CLI's `--help`, so start-up can be
subtracted. Prints, never asserts. Run:

    python bench/bench_verify.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from soma_kernel.analysis.check import check_program
from soma_kernel.analysis.verify.checks import verify_program
from soma_kernel.analysis.verify.report import render_text
from soma_kernel.project.loader import load

SIZES = (1_000, 10_000, 100_000)
WHOLE_COMMAND_SIZES = (10_000, 100_000)
WHOLE_COMMAND_RUNS = 3


def chain(n: int) -> str:
    """A linear chain of n states with one handler taking the first edge."""
    edges = "\n".join(f"        s{i} -> s{i + 1}" for i in range(n - 1))
    return _cell(f"        initial: s0\n{edges}", "s1")


def diamond(n: int) -> str:
    """Layers of two states (a_i, b_i), each joined to both states of the next layer."""
    layers = max(1, n // 2)
    lines = ["        initial: a0", "        a0 -> b0"]
    for i in range(layers - 1):
        for src in (f"a{i}", f"b{i}"):
            lines.append(f"        {src} -> a{i + 1}")
            lines.append(f"        {src} -> b{i + 1}")
    return _cell("\n".join(lines), "b0")


def cycle(n: int) -> str:
    """A ring s0 … s(h-1) with an exit to `done`, and from its last state a trap ring t0 … t(h-1)."""
    half = max(2, (n - 1) // 2)
    edges = [f"        s{i} -> s{(i + 1) % half}" for i in range(half)]
    edges += [f"        t{i} -> t{(i + 1) % half}" for i in range(half)]
    edges += ["        s0 -> done", f"        s{half - 1} -> t0"]
    return _cell("        initial: s0\n" + "\n".join(edges), "s1")


def _cell(machine: str, first_target: str) -> str:
    return (
        "cell Big {\n    face {\n        signal step(id: String) -> String\n    }\n"
        f"    state big {{\n{machine}\n    }}\n"
        f"    on step(id: String) {{\n        transition(id, \"{first_target}\")\n        return \"ok\"\n    }}\n}}\n"
    )


FAMILIES = (
    ("linear chain", chain, None),
    ("diamond lattice", diamond, None),
    ("cycle, failing eventually", cycle, '[verify]\neventually = ["done"]\n'),
)


def time_verify(source: str, manifest: str | None) -> tuple[float, float, float, str]:
    """(parse, check, verify+render seconds, verdict) for one generated program."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "big.cell")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        if manifest:
            with open(os.path.join(folder, "soma.toml"), "w", encoding="utf-8") as handle:
                handle.write(manifest)
        start = time.perf_counter()
        loaded = load(path)
        parsed = time.perf_counter()
        if not check_program(loaded.program, loaded.project).passed:
            raise SystemExit("generated program fails soma check")
        checked = time.perf_counter()
        text = render_text(verify_program(loaded.program, loaded.project, path))
        done = time.perf_counter()
    return parsed - start, checked - parsed, done - checked, text.rstrip().splitlines()[-1]


def best_run(command: list[str]) -> float:
    """The best of WHOLE_COMMAND_RUNS wall-clock times of `command` (its exit status is not judged)."""
    best = float("inf")
    for _ in range(WHOLE_COMMAND_RUNS):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def whole_command_table() -> None:
    """`soma-kernel verify` as a subprocess on linear chains, beside the start-up it includes."""
    python = best_run([sys.executable, "-c", "pass"])
    cli = best_run([sys.executable, "-m", "soma_kernel", "--help"])
    print(f"\nwhole command (best of {WHOLE_COMMAND_RUNS}); start-up: python {python:.3f} s, "
          f"soma-kernel --help {cli:.3f} s")
    if sys.flags.dont_write_bytecode:
        print("note: PYTHONDONTWRITEBYTECODE is set, so every run compiles soma_kernel's modules afresh "
              "(~0.2 s each); unset it for the times a user sees")
    print(f"{'linear chain states':<22}{'whole s':>9}{'minus start-up':>16}{'s per 10k':>11}")
    with tempfile.TemporaryDirectory() as folder:
        for size in WHOLE_COMMAND_SIZES:
            path = os.path.join(folder, f"chain{size}.cell")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(chain(size))
            whole = best_run([sys.executable, "-m", "soma_kernel", "verify", path])
            print(f"{size:<22}{whole:>9.3f}{whole - cli:>16.3f}{(whole - cli) * 10_000 / size:>11.3f}")


def main() -> None:
    """Print one table row per family and size, then the whole-command table."""
    print(f"{'family':<28}{'states':>9}{'parse s':>10}{'check s':>10}{'verify s':>10}  verdict")
    for name, build, manifest in FAMILIES:
        for size in SIZES:
            parse_s, check_s, verify_s, verdict = time_verify(build(size), manifest)
            print(f"{name:<28}{size:>9}{parse_s:>10.3f}{check_s:>10.3f}{verify_s:>10.3f}  {verdict[:44]}")
    whole_command_table()


if __name__ == "__main__":
    main()
