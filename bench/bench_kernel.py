"""Kernel benchmark: start-up time and trivial-execute round trip of the Soma kernel,
each as a ratio to the stock python3 kernel (ipykernel's kernelspec) started in the same run.

    python bench/bench_kernel.py [--starts 5] [--executes 100]

Start-up is `start_kernel()` until `wait_for_ready()` returns; the round trip
is `execute_interactive("1")` after warm-up runs. Targets: start-up ≤ 1.2×.
"""

from __future__ import annotations

import argparse
import statistics
import time

from jupyter_client.manager import KernelManager

KERNELS = ("soma", "python3")
TRIVIAL_CODE = "1"
WARM_UP = 10


def start_times(name: str, runs: int) -> list[float]:
    """Seconds from launching a kernel to its first kernel_info reply, `runs` times."""
    times = []
    for _ in range(runs):
        manager = KernelManager(kernel_name=name, transport="ipc")
        began = time.perf_counter()
        manager.start_kernel()
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        times.append(time.perf_counter() - began)
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return times


def execute_times(name: str, runs: int) -> list[float]:
    """Seconds per `execute_interactive(TRIVIAL_CODE)` round trip, after a warm-up."""
    manager = KernelManager(kernel_name=name, transport="ipc")
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    try:
        for _ in range(WARM_UP):
            client.execute_interactive(TRIVIAL_CODE, output_hook=lambda msg: None, timeout=30)
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            client.execute_interactive(TRIVIAL_CODE, output_hook=lambda msg: None, timeout=30)
            times.append(time.perf_counter() - began)
        return times
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main(argv: list[str] | None = None) -> int:
    """Measure both kernels and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--executes", type=int, default=100)
    options = parser.parse_args(argv)
    start = {name: statistics.median(start_times(name, options.starts)) for name in KERNELS}
    execute = {name: statistics.median(execute_times(name, options.executes)) for name in KERNELS}
    print(f"{'kernel':<10} {'start (median s)':>18} {'execute (median ms)':>21}")
    for name in KERNELS:
        print(f"{name:<10} {start[name]:>18.3f} {execute[name] * 1000:>21.2f}")
    print(f"soma/python3 start-up ratio: {start['soma'] / start['python3']:.2f}")
    print(f"soma/python3 execute ratio:  {execute['soma'] / execute['python3']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
