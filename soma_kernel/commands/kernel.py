"""`soma-kernel kernel -f CONNECTION_FILE`: start the Jupyter kernel (its arguments go to ipykernel)."""

from __future__ import annotations

import argparse

from ..kernel.launch import main


def run(args: argparse.Namespace) -> int:
    """Launch the kernel with ipykernel's own arguments; returns when it stops."""
    return main(args.argv)
