#!/usr/bin/env python3
"""The lowest versions soma-kernel allows, as pip constraints: `python3 scripts/floor.py > floor.txt`.

Every runtime dependency of pyproject.toml is pinned to its lower bound (`>=X`,
`==X` or `~=X`), so `pip install -c floor.txt -e .` builds the oldest environment the
pins let a user have; scripts/test_floor.sh runs the kernel protocol tests and a
notebook there. soma-jupyterlab is left out: it is installed from labextension/.
A dependency without a lower bound is an error (its floor would be untested).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FROM_THE_REPOSITORY = {"soma-jupyterlab"}
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")
LOWER_BOUND = re.compile(r"(?:>=|==|~=)\s*([0-9][^,\s]*)")


def floor_pin(requirement: str) -> str:
    """`name>=1.2,<2` (or `==1.2`, `~=1.2`) → `name==1.2`; raises ValueError for a requirement with no lower bound."""
    match = REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"cannot read the requirement {requirement!r}")
    name, specifiers = match.groups()
    bound = LOWER_BOUND.search(specifiers)
    if bound is None:
        raise ValueError(f"{requirement!r} has no lower bound (>=, == or ~=): its oldest version would go untested")
    return f"{name}=={bound.group(1)}"


def floor_constraints(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """One `name==floor` line per runtime dependency, except those installed from this repository."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    pins = [floor_pin(requirement) for requirement in project["dependencies"]]
    return [pin for pin in pins if pin.split("==")[0].lower() not in FROM_THE_REPOSITORY]


if __name__ == "__main__":
    try:
        print("\n".join(floor_constraints()))
    except ValueError as problem:
        print(f"floor: {problem}", file=sys.stderr)
        sys.exit(1)
