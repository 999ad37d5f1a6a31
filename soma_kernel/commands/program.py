"""The one way a command loads the program it was given: read, parse, soma.toml, or report why not."""

from __future__ import annotations

import sys
from typing import Callable, Optional

from ..core.errors import UserError
from ..project.loader import LoadedProgram, load


def print_error(message: str) -> None:
    """Report a user error the usual way: its text on stderr."""
    print(message, file=sys.stderr)


def load_program(path: str, with_project: bool = True,
                 report: Callable[[str], None] = print_error) -> Optional[LoadedProgram]:
    """The loaded program, or None after `report`ing the user error (the command then exits 1)."""
    try:
        return load(path, with_project)
    except UserError as err:
        report(str(err))
        return None
