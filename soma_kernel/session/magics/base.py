"""What a magic module needs: the `Magic` record, `MagicError` and argument splitting."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Callable, Optional


class MagicError(Exception):
    """A magic was misused (unknown name, bad arguments); the text says how.

    `word` is the argument at fault, when one is: the caret points at it.
    """

    def __init__(self, message: str, word: Optional[str] = None):
        super().__init__(message)
        self.word = word


@dataclass(frozen=True)
class Magic:
    """One magic: its name, usage line, one-line doc, function and whether it takes the cell body."""

    name: str
    usage: str
    doc: str
    run: Callable
    cell: bool = False


def split_args(args: str, usage: str) -> list[str]:
    """Shell-like words of a magic's arguments, or a MagicError quoting the usage."""
    try:
        return shlex.split(args)
    except ValueError as err:
        raise MagicError(f"{err}; usage: {usage}") from None
