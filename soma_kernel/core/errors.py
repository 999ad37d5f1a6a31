"""Errors about the user's input that every layer may raise (a missing file, a bad soma.toml)."""

from __future__ import annotations

from typing import Optional


class UserError(Exception):
    """A problem with the user's input, already worded for them (no traceback).

    Its parts are fields, so whoever shows it elsewhere never reads them back
    from the text: `headline` is the one-line message (`path[:line:col]: …`,
    without `error: `), `file` the file it is about, `line` the line of that
    file it points at (0 when none), `notes` the lines after the headline
    that are not the source and caret (a hint). `str()` is the whole text a
    command prints: `shown`, else `error: headline` and the notes.
    """

    def __init__(self, headline: str, file: Optional[str] = None, line: int = 0,
                 notes: tuple[str, ...] = (), shown: Optional[str] = None):
        super().__init__(shown if shown is not None else "\n".join([f"error: {headline}", *notes]))
        self.headline = headline
        self.file = file
        self.line = line
        self.notes = notes
