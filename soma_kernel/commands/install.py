"""`soma-kernel install [--user|--sys-prefix|--prefix P] [--name N]`: register the Jupyter kernelspec."""

from __future__ import annotations

import argparse
import sys

from ..kernel.install import KERNEL_NAME, environment_spec_that_wins, install


def run(args: argparse.Namespace) -> int:
    """Install the kernelspec and print where it went (warning when another spec of the name wins)."""
    prefix = args.prefix if args.prefix else (None if args.user else sys.prefix)
    name = args.name or KERNEL_NAME
    path = install(user=args.user, prefix=prefix, name=name)
    print(f"installed kernelspec {name} in {path}")
    winner = environment_spec_that_wins(name) if args.user else None
    if winner is not None:
        print(f"warning: this environment ({sys.prefix}) has its own kernelspec {name} in {winner}, and Jupyter "
              f"started from this environment reads it first: the spec just installed for your user is used only "
              f"by Jupyter outside it. To use this one everywhere, install under another name "
              f"(--name {name}-user) or remove the environment's (soma-kernel uninstall --sys-prefix).",
              file=sys.stderr)
    return 0
