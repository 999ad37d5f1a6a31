"""The wheel's build hook: make sure prebuilt/ is there and, inside the repository, current.

Inside the soma-kernel repository, `scripts/labextension.py build` rebuilds
prebuilt/ with npm only when its recorded source hash differs from the sources
(so an ordinary install needs no Node.js). Built from an sdist, which has no
scripts/ beside it, the prebuilt/ it carries is packaged as it is.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

HERE = Path(__file__).resolve().parent
REPO_HELPERS = HERE.parent / "scripts" / "labextension.py"


class PrebuiltHook(BuildHookInterface):
    """Rebuild prebuilt/ when stale (in the repository); refuse to build a wheel without it."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        """Run before the wheel is assembled."""
        if self.target_name != "wheel":
            return
        if REPO_HELPERS.is_file():
            spec = importlib.util.spec_from_file_location("soma_labextension_helpers", REPO_HELPERS)
            helpers = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(helpers)
            helpers.build(self.target_name, version)
        if not (HERE / "prebuilt" / "package.json").is_file():
            raise RuntimeError("labextension/prebuilt is missing: build it with `cd labextension && npm ci && "
                               "npm run build` (needs Node.js), or restore the committed copy")
