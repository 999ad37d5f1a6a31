"""`soma-kernel uninstall [--user|--sys-prefix|--prefix P] [--name N]`: remove a Jupyter kernelspec."""

from __future__ import annotations

import argparse
import sys

from ..kernel.install import KERNEL_NAME, spec_dir, uninstall, valid_name


def run(args: argparse.Namespace) -> int:
    """Remove the kernelspec from the place `install` with the same options writes; 1 if none was there."""
    prefix = args.prefix if args.prefix else (None if args.user else sys.prefix)
    name = KERNEL_NAME if args.name is None else args.name
    if not valid_name(name):
        print(f"soma-kernel uninstall: {name!r} is no kernel name (letters, digits, '.', '_' and '-')",
              file=sys.stderr)
        return 2
    removed = uninstall(user=args.user, prefix=prefix, name=name)
    if removed is not None:
        print(f"removed kernelspec {name} from {removed}")
        return 0
    print(f"soma-kernel uninstall: no kernelspec {name} in {spec_dir(args.user, prefix, name)}", file=sys.stderr)
    others = _found_elsewhere(name)
    if others:
        print(f"  Jupyter finds {name} in {others}: remove it with `jupyter kernelspec uninstall {name}`, or "
              f"with soma-kernel uninstall and the option it was installed with (--user, --prefix P)",
              file=sys.stderr)
    return 1


def _found_elsewhere(name: str) -> str | None:
    """The folder where Jupyter finds a kernelspec `name` now, if it does."""
    from jupyter_client.kernelspec import KernelSpecManager  # lazy: only when nothing was removed

    return KernelSpecManager().find_kernel_specs().get(name)
