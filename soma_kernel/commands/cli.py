"""The one command line: `soma-kernel check|test|verify|describe|skeleton|run|install|uninstall|lsp|kernel`.

Every command's arguments are declared here, in one argparse parser. What a
command does is the `run(args) -> int` of its module in this package; that
module is imported only when its command runs (measured lazy loading: the
modules import the interpreter, the analyses or Jupyter, and `soma-kernel
install` should not pay for the interpreter nor `soma-kernel test` for
Jupyter). A command that reads a program loads it with `program.load_program`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import NoReturn

SIGPIPE_STATUS = 141  # 128 + SIGPIPE (13): the status a shell shows for a tool stopped by a closed pipe


def _check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _test(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true", help="print one JSON report")
    parser.add_argument("--only", metavar="NAME", help="run only this test cell")


def _verify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file")
    parser.add_argument("--strict", action="store_true", help="treat every ⚠ as a failure")
    parser.add_argument("--unfair", action="store_true",
                        help="check `eventually` without assuming fairness: a loop that could be left but need "
                             "not be is a counter-example (default: fair runs; soma.toml [verify] fair = false)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _describe(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true", help="print the description as JSON")
    parser.add_argument("--faces", action="store_true", help="only the faces: signals, memory, machines")


def _skeleton(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file")
    parser.add_argument("signal", metavar="Cell.signal")


def _run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file")
    parser.add_argument("handler", nargs="?")
    parser.add_argument("args", nargs="*")
    parser.add_argument("--fresh", action="store_true", help="start from empty persistent state")


def _install(parser: argparse.ArgumentParser) -> None:
    _kernelspec_place(parser, "install")


def _uninstall(parser: argparse.ArgumentParser) -> None:
    _kernelspec_place(parser, "remove")


def _kernelspec_place(parser: argparse.ArgumentParser, verb: str) -> None:
    """Where `install` writes the kernelspec and `uninstall` removes it: the same options for both."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help=f"{verb} for the current user")
    where.add_argument("--sys-prefix", action="store_true", help=f"{verb} in this Python's prefix (default)")
    where.add_argument("--prefix", metavar="P", help=f"{verb} in the prefix P (P/share/jupyter/kernels)")
    parser.add_argument("--name", help="kernel name (default: soma)")


def _lsp(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debounce", type=int, default=100, metavar="MS",
                        help="wait this long after an edit before checking again (default 100 ms)")


def _kernel(parser: argparse.ArgumentParser) -> None:
    """None here: the kernel's own arguments (`-f CONNECTION_FILE` …) go to ipykernel unparsed."""


# name: (arguments, usage line or None for argparse's own, one-line help)
COMMANDS = {
    "check": (_check, "soma-kernel check FILE [--json]", "run soma check on a program"),
    "test": (_test, None, "run the program's test cells"),
    "verify": (_verify, None, "model-check state machines and prove invariants"),
    "describe": (_describe, "soma-kernel describe FILE [--json] [--faces]", "describe how a program is built"),
    "skeleton": (_skeleton, "soma-kernel skeleton FILE Cell.signal", "show one skeleton signal's frame"),
    "run": (_run, None, "call one handler: run FILE handler [args]"),
    "install": (_install, None, "install the Jupyter kernelspec"),
    "uninstall": (_uninstall, None, "remove the Jupyter kernelspec"),
    "lsp": (_lsp, None, "run the Soma language server over stdin/stdout"),
    "kernel": (_kernel, None, "start the Jupyter kernel (used by the kernelspec)"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every command."""
    parser = argparse.ArgumentParser(prog="soma-kernel", description="The Soma toolchain and Jupyter kernel.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (arguments, usage, text) in COMMANDS.items():
        sub = commands.add_parser(name, help=text, description=text, usage=usage)
        arguments(sub)
    return parser


def entry() -> NoReturn:
    """The `soma-kernel` program (and `python -m soma_kernel`): run one command, exit with its code.

    What is still alive is frozen first, so the interpreter's last
    collection on the way out skips it instead of tearing down every
    imported module's cycles (classes, functions, the parser tables): work
    that only frees memory the operating system takes back anyway (~15 ms
    of a short command).
    """
    code = main()
    gc.freeze()
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run one command and return its exit code (2 on a usage error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = ["--help"] if argv == ["help"] else argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv[:1] if argv[:1] == ["kernel"] else argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    if args.version:
        from ..core.version import package_version  # lazy: only --version reads it

        print(f"soma-kernel {package_version()}")
        return 0
    if args.command is None:
        parser.print_help()
        return 0 if argv else 2
    if args.command == "kernel":
        args.argv = argv[1:]
    module = importlib.import_module(f"{__package__}.{args.command}")  # lazy: see the module docstring
    try:
        return module.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()


def _reader_went_away() -> int:
    """stdout's reader closed the pipe (`… | head -1`): stop quietly, as a SIGPIPE'd tool does (status 141).

    stdout is pointed at /dev/null so that the interpreter's final flush of
    what is still buffered cannot fail again on the way out.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return SIGPIPE_STATUS
