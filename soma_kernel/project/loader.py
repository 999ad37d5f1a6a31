"""Loading a program from disk: the file, its parse and its soma.toml.

Every command loads its program here (through commands/program.py) and the
session's `%load` reads its file with `read_source`, so a missing file, a
parse error and a bad soma.toml are worded the same way everywhere.
"""

from __future__ import annotations

import os
from typing import Optional

from ..core.diagnostics import Diagnostic, SomaSyntaxError
from ..core.errors import UserError
from ..core.files import read_text_bounded
from ..core.records import Record
from ..syntax.parser import parse
from .settings import load_project, unknown_model


class LoadedProgram(Record):
    """A parsed program with the path it was given as and its project settings."""

    path: str
    source: str
    program: "object"
    project: Optional["object"]


def read_source(path: str) -> str:
    """The text of a .cell file (a UTF-8 BOM is dropped), or a UserError."""
    try:
        return read_text_bounded(path, encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file", path) from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a .cell file", path) from None
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})", path) from None
    except OSError as err:
        raise UserError(f"{path}: {err.strerror}", path) from None


def load(path: str, with_project: bool = True) -> LoadedProgram:
    """Read, parse and pair a program with the soma.toml of its folder."""
    source = read_source(path)
    try:
        program = parse(source, origin=path)
    except SomaSyntaxError as err:
        found = err.diagnostic
        notes = (f"  hint: {found.hint}",) if found.hint else ()
        raise UserError(f"{found.location()}: {found.message}", found.origin, max(found.span.line, 0), notes,
                        found.render(source)) from None
    project = None
    if with_project:
        project = load_project(os.path.dirname(path))
        _check_model_references(program, project, source, path)
    return LoadedProgram(path, source, program, project)


def _check_model_references(program, project, source: str, path: str) -> None:
    """A cell bound to a `[models.NAME]` the soma.toml lacks is an error at load, at the cell."""
    for cell in program.cells:
        problem = unknown_model(project, cell)
        if problem is not None:
            message, hint = problem
            found = Diagnostic("error", message, cell.span, path, "config", hint)
            raise UserError(f"{found.location()}: {message}", path, cell.span.line, (f"  hint: {hint}",),
                            found.render(source))
