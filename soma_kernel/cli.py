"""Command-line interface: `soma-kernel check|test|verify|describe|skeleton|run|install|kernel FILE`.

Each subcommand lives in its own module, imported only when used so that
`soma-kernel test` does not pay for the kernel's imports. Every subcommand
module exposes `main(argv: list[str]) -> int`.
"""

from __future__ import annotations

import importlib
import sys

SUBCOMMANDS = {
    "check": ("soma_kernel.analysis.check_command", "run soma check on a program"),
    "test": ("soma_kernel.testing.command", "run the program's test cells"),
    "verify": ("soma_kernel.analysis.verify.command", "model-check state machines and prove invariants"),
    "describe": ("soma_kernel.analysis.describe", "describe how a program is built"),
    "skeleton": ("soma_kernel.analysis.skeleton", "show one signal's frame: skeleton FILE Cell.signal"),
    "run": ("soma_kernel.runtime.run_command", "call one handler: run FILE handler [args]"),
    "install": ("soma_kernel.kernel.install", "install the Jupyter kernelspec"),
    "kernel": ("soma_kernel.kernel.launch", "start the Jupyter kernel (used by the kernelspec)"),
}


def usage() -> str:
    """The help text listing every subcommand."""
    lines = ["usage: soma-kernel COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<10} {text}" for name, (_, text) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in SUBCOMMANDS:
        print(f"soma-kernel: unknown command '{command}'\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[command][0])
    try:
        return module.main(rest)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
