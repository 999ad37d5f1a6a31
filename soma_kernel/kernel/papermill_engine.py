"""The `soma` papermill engine: papermill's nbclient engine, declared as an entry point only so that
`import papermill` imports this module, and with it the Soma parameter translator (`papermill.py`).

A module of its own because papermill imports engine entry points while its own `papermill.engines`
is still being imported: whichever of papermill and the translator module is imported first, this
module finds what it needs (NBClientEngine is defined by then; the translator registers itself).
"""

from __future__ import annotations

from papermill.engines import NBClientEngine

from . import papermill as _registers_the_translator  # noqa: F401  (imported for its registration)


class SomaEngine(NBClientEngine):
    """papermill's nbclient engine under the name `soma` (`--engine soma` runs notebooks as the default does)."""
