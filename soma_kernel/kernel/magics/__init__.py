"""Kernel magics: `%name args` lines at the top of a cell, `%%toml` cell magics, `?name`, `??name`.

Each module of this package holds one group of magics and lists them in a
`MAGICS` tuple of `Magic` records; `REGISTRY` maps every name to its record.
A magic is a function `(session, run, args, body)`: `run` is the CellRun it
writes to (`run.out(text)`, `run.show(bundle)`), `args` the text after the
name, `body` the rest of the cell for cell magics (else None). Heavy imports
happen inside the functions, so listing the magics costs nothing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Callable, Optional

from ...session import MagicError


@dataclass(frozen=True)
class Magic:
    """One magic: its name, usage line, one-line doc, function and whether it takes the cell body."""

    name: str
    usage: str
    doc: str
    run: Callable
    cell: bool = False


MAGIC_LINE = re.compile(r"^\s*(%%?|\?)")


def split_magics(code: str) -> tuple[list[tuple[str, str]], Optional[tuple[str, str, str]], str]:
    """Split a cell into its leading magic lines, its cell magic and its Soma code.

    Returns (line magics as (name, args), cell magic as (name, args, body) or
    None, Soma code). Magic lines in the Soma code are blanked, not removed,
    so line numbers of the code stay those of the cell.
    """
    lines = code.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name, args = _name_and_args(lines[first].lstrip()[2:])
        return [], (name, args, "\n".join(lines[first + 1:])), ""
    magics = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if not MAGIC_LINE.match(line) or stripped.startswith("%%"):
            break
        if stripped.startswith("??"):
            magics.append(("??", stripped[2:].strip()))
        elif stripped.startswith("?"):
            magics.append(("?", stripped[1:].strip()))
        else:
            magics.append(_name_and_args(stripped[1:]))
        lines[index] = ""
    return magics, None, "\n".join(lines)


def _name_and_args(text: str) -> tuple[str, str]:
    """`name rest…` → (name, rest)."""
    parts = text.strip().split(None, 1)
    return (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")


def run_magic_lines(session, run, line_magics: list[tuple[str, str]], cell_magic) -> None:
    """Run the cell magic, or each line magic in order."""
    if cell_magic is not None:
        name, args, body = cell_magic
        magic = lookup(name, cell=True)
        magic.run(session, run, args, body)
        return
    for name, args in line_magics:
        lookup(name, cell=False).run(session, run, args, None)


def lookup(name: str, cell: bool) -> Magic:
    """The magic called `name`, or a MagicError that lists the known ones."""
    registry = registry_of_magics()
    magic = registry.get(name)
    prefix = "%%" if cell else "%"
    if magic is None or magic.cell != cell:
        known = ", ".join(("%%" if m.cell else "%") + m.name for m in registry.values() if not m.name.startswith("?"))
        if magic is not None:
            raise MagicError(f"{prefix}{name}: use it as {'%%' if magic.cell else '%'}{name} ({magic.usage})")
        raise MagicError(f"unknown magic {prefix}{name} — known magics: {known} (see %help)")
    return magic


def split_args(args: str, usage: str) -> list[str]:
    """Shell-like words of a magic's arguments, or a MagicError quoting the usage."""
    try:
        return shlex.split(args)
    except ValueError as err:
        raise MagicError(f"{err}; usage: {usage}") from None


_REGISTRY: dict[str, Magic] = {}


def registry_of_magics() -> dict[str, Magic]:
    """Every magic by name (modules are imported on first use)."""
    if not _REGISTRY:
        from . import analysis, control, files, inspection

        for module in (analysis, inspection, files, control):
            for magic in module.MAGICS:
                _REGISTRY[magic.name] = magic
    return _REGISTRY
