"""The Soma language server (`soma-kernel lsp`): diagnostics, hover, navigation and completion for editors.

A layer above `analysis` and `session` and beside `kernel` (it never imports
the kernel): `server.py` is the pygls wiring, the other modules answer one
request kind each from a document's analysis (`document.py`). `spec.py`
tells jupyter-lsp how to start the server and imports nothing heavy.
"""
