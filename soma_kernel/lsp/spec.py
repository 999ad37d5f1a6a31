"""The jupyter-lsp spec of the Soma language server (entry point group `jupyter_lsp_spec_v1`).

jupyter-lsp calls `spec(manager)` when the Jupyter server starts and offers
the server for documents whose language is `soma`: `.cell` files and the
notebooks of the Soma kernel, whose `language_info.mimetype` is
`text/x-soma`. The server is started with this Python (`sys.executable -m
soma_kernel lsp`), so it is the environment soma-kernel is installed in even
when `soma-kernel` is not on the Jupyter server's PATH. Documents travel over
the socket: nothing is mirrored to disk.
"""

from __future__ import annotations

import sys

SERVER_KEY = "soma-language-server"
LANGUAGE = "soma"
MIMETYPE = "text/x-soma"


def spec(manager: object = None) -> dict:
    """{key: spec} for jupyter-lsp (spec version 2)."""
    return {SERVER_KEY: {
        "version": 2,
        "argv": [sys.executable, "-m", "soma_kernel", "lsp"],
        "languages": [LANGUAGE],
        "mime_types": [MIMETYPE],
        "display_name": "Soma language server (soma-kernel lsp)",
        "requires_documents_on_disk": False,
    }}
