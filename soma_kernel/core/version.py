"""The package's version, read from its one source: `version` in pyproject.toml.

A source checkout (an editable install, or PYTHONPATH pointing at it) reads
pyproject.toml beside the package, so a bumped version shows at once; an
installed wheel reads the metadata pip wrote from that same file. Both are
read on first use only (`soma_kernel.__version__` is computed on access), as
tomllib and importlib.metadata cost start-up time every command would pay.
"""

from __future__ import annotations

import os
from functools import cache

DISTRIBUTION = "soma-kernel"
UNKNOWN = "unknown"


@cache
def package_version() -> str:
    """The version of soma-kernel: pyproject.toml's beside the package, else the installed metadata's."""
    return _checkout_version() or _installed_version() or UNKNOWN


def _checkout_version() -> str | None:
    """`project.version` of the pyproject.toml above the package, when it is soma-kernel's own."""
    import tomllib  # lazy: see the module docstring

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "pyproject.toml")
    try:
        with open(path, "rb") as file:
            project = tomllib.load(file).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if project.get("name") != DISTRIBUTION or not isinstance(project.get("version"), str):
        return None
    return project["version"]


def _installed_version() -> str | None:
    """The version pip recorded for the installed distribution."""
    from importlib import metadata  # lazy: see the module docstring

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
