"""`soma-kernel skeleton FILE Cell.signal`: one skeleton signal's frame and what its flesh body does."""

from __future__ import annotations

import argparse
import sys

from ..analysis.skeleton import SkeletonError, skeleton_text
from .program import load_program


def run(args: argparse.Namespace) -> int:
    """Print the signal's frame; exit 1 on an unknown cell or signal, or a file that cannot be loaded."""
    loaded = load_program(args.file, with_project=False)
    if loaded is None:
        return 1
    try:
        sys.stdout.write(skeleton_text(loaded.program, args.signal))
    except SkeletonError as err:
        print(f"error: {args.file}: {err}", file=sys.stderr)
        if err.hint:
            print(f"  hint: {err.hint.replace('FILE', args.file)}", file=sys.stderr)
        return 1
    return 0
