"""`soma-kernel lsp [--debounce MS]`: the Soma language server over stdin/stdout (for editors and jupyter-lsp)."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    """Serve until the client exits; 0."""
    from ..lsp.server import serve  # lazy: pygls is loaded only by this command

    serve(max(0, args.debounce) / 1000)
    return 0
