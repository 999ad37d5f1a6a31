"""What a magic module needs: the `Magic` record, `MagicError` and argument splitting."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Callable, Optional


class MagicError(Exception):
    """A magic was misused (unknown name, bad arguments); the text says how.

    Where the caret points is said, never read back from the text: `word` is
    the argument at fault, when one is; `at_name` puts it on the `%name`
    itself (an unknown magic, a usage line); else it covers the arguments
    (the `%name` when there are none).
    """

    def __init__(self, message: str, word: Optional[str] = None, at_name: bool = False):
        super().__init__(message)
        self.word = word
        self.at_name = at_name


@dataclass(frozen=True)
class Magic:
    """One magic: its name, usage line, one-line doc, function and whether it takes the cell body.

    `cell` magics are `%%name` only; `also_cell` ones work both ways (`%time x` and `%%time`).
    """

    name: str
    usage: str
    doc: str
    run: Callable
    cell: bool = False
    also_cell: bool = False


def split_args(args: str, usage: str) -> list[str]:
    """Shell-like words of a magic's arguments, or a MagicError quoting the usage."""
    try:
        return shlex.split(args)
    except ValueError as err:
        raise MagicError(f"{err}; usage: {usage}", at_name=True) from None
