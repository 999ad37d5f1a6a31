"""Kernel magics: `%name args` lines anywhere in a cell (run in order with its code), `%%toml` cell magics, `?name`, `??name`.

Each module of this package holds one group of magics and lists them in a
`MAGICS` tuple of `Magic` records (base.py: what a magic module needs);
this module assembles them: `REGISTRY` maps every name to its record.
A magic is a function `(session, run, args, body)`: `run` is the CellRun it
writes to (`run.out(text)`, `run.show(bundle)`), `args` the text after the
name, `body` the rest of the cell for cell magics (else None). A magic reads
the session only through the object it is given; no magic imports the
session module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from ...syntax.ast import Span
from . import analysis, control, files, inspection, shell, store
from .base import Magic, MagicError, split_args

__all__ = ["REGISTRY", "Magic", "MagicError", "split_args", "split_cell", "run_cell_magic", "run_line_magic",
           "magic_span", "lookup"]


MAGIC_LINE = re.compile(r"^\s*(%%?[A-Za-z]|\?\??[A-Za-z_]|\?\s*$)")


class MagicLine(NamedTuple):
    """One `%name args` (or `?name`) line: its name, arguments and 1-based line in the cell."""

    name: str
    args: str
    line: int = 0


@dataclass
class CellParts:
    """A notebook cell cut into what runs, in order.

    `cell_magic` is (name, args, body) when the cell starts with `%%name`;
    otherwise `steps` lists ("magic", MagicLine) and ("code", text) in
    source order. Each code text keeps the cell's line numbers (the lines of
    other steps are blanked), and `code` is all Soma lines with every magic
    line blanked (what is_complete parses).
    """

    cell_magic: Optional[tuple[str, str, str]] = None
    steps: list = field(default_factory=list)
    code: str = ""


def split_cell(code: str) -> CellParts:
    """Cut a cell into magic lines and runs of Soma code, keeping line numbers."""
    lines = code.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name, args = _name_and_args(lines[first].lstrip()[2:])
        return CellParts(cell_magic=(name, args, "\n".join(lines[first + 1:])))
    parts = CellParts()
    code_lines = list(lines)
    pending: list[int] = []
    for index, line in enumerate(lines):
        if MAGIC_LINE.match(line):
            _flush_code(parts, lines, pending)
            parts.steps.append(("magic", MagicLine(*_magic_of(line.strip()), index + 1)))
            code_lines[index] = ""
        elif line.strip() or pending:
            pending.append(index)
    _flush_code(parts, lines, pending)
    parts.code = "\n".join(code_lines)
    return parts


def _flush_code(parts: CellParts, lines: list[str], pending: list[int]) -> None:
    """Close a run of Soma lines as one code step (other lines blanked)."""
    if pending and any(lines[i].strip() for i in pending):
        kept = set(pending)
        parts.steps.append(("code", "\n".join(line if i in kept else "" for i, line in enumerate(lines))))
    pending.clear()


def _magic_of(stripped: str) -> tuple[str, str]:
    """(name, args) of a magic line; `?x` and `??x` are the help magics."""
    if stripped.startswith("??"):
        return "??", stripped[2:].strip()
    if stripped.startswith("?"):
        return "?", stripped[1:].strip()
    return _name_and_args(stripped[1:])


def _name_and_args(text: str) -> tuple[str, str]:
    """`name rest…` → (name, rest)."""
    parts = text.strip().split(None, 1)
    return (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")


def run_cell_magic(session, run, cell_magic: tuple[str, str, str]) -> None:
    """Run a `%%name args` cell magic on its body."""
    name, args, body = cell_magic
    lookup(name, cell=True).run(session, run, args, body)


def run_line_magic(session, run, magic: MagicLine) -> None:
    """Run one `%name args` (or `?name`) line (`run.magic_line` says which line it is)."""
    run.magic_line = magic.line
    lookup(magic.name, cell=False).run(session, run, magic.args, None)


def magic_span(source_line: str, line: int, args: str, word: Optional[str] = None, at_name: bool = False) -> Span:
    """Where an error of the magic on `source_line` points (1-based `line`), as the error's fields say.

    The argument `word` at fault when it is one of the arguments; else the
    `%name` when the error is about the magic itself (`at_name`) or there
    are no arguments; else all the arguments.
    """
    indent = len(source_line) - len(source_line.lstrip())
    args_at = len(source_line.rstrip()) - len(args)  # the arguments end the line
    head = source_line[indent:args_at].rstrip() or source_line.strip()
    start, end = indent, indent + max(len(head), 1)
    if word is not None and word in args.split():
        start = source_line.find(word, args_at)
        end = start + len(word)
    elif args and not at_name:
        start, end = args_at, args_at + len(args)
    return Span(line, start + 1, line, end + 1, 0, 0)


REGISTRY: dict[str, Magic] = {magic.name: magic
                             for module in (analysis, inspection, files, store, shell, control)
                             for magic in module.MAGICS}


def lookup(name: str, cell: bool) -> Magic:
    """The magic called `name`, or a MagicError that lists the known ones."""
    registry = REGISTRY
    magic = registry.get(name)
    prefix = "%%" if cell else "%"
    cell_magic = registry.get(name[1:]) if name.startswith("%") and not cell else None
    if cell_magic is not None and cell_magic.cell:  # `%%name` below the cell's first line
        raise MagicError(f"%{name} must be the cell's first line (the rest of the cell is its body); "
                         f"put it in a cell of its own: {cell_magic.usage}", at_name=True)
    if magic is None or (magic.cell != cell and not magic.also_cell):
        known = ", ".join(("%%" if m.cell else "%") + m.name for m in registry.values() if not m.name.startswith("?"))
        if magic is not None:
            raise MagicError(f"{prefix}{name}: use it as {'%%' if magic.cell else '%'}{name} ({magic.usage})",
                             at_name=True)
        raise MagicError(f"unknown magic {prefix}{name} — known magics: {known} (see %help)", at_name=True)
    return magic
