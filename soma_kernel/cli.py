"""Command-line interface: `soma-kernel check|test|verify|describe|skeleton|run|install|kernel`."""

import sys


def main(argv=None) -> int:
    """Run one subcommand and return its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    print("soma-kernel: no subcommands yet", file=sys.stderr)
    return 2
