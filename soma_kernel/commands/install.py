"""`soma-kernel install [--user|--sys-prefix|--prefix P] [--name N]`: register the Jupyter kernelspec."""

from __future__ import annotations

import argparse
import sys

from ..kernel.install import KERNEL_NAME, install


def run(args: argparse.Namespace) -> int:
    """Install the kernelspec and print where it went."""
    prefix = args.prefix if args.prefix else (None if args.user else sys.prefix)
    name = args.name or KERNEL_NAME
    path = install(user=args.user, prefix=prefix, name=name)
    print(f"installed kernelspec {name} in {path}")
    return 0
