"""How large a String or a List an operation may build: one limit for `+`, concat, join, replace, pad, format.

A loop that doubles a string (`s = s + s`) reaches gigabytes in thirty
rounds; without a limit it ends in a MemoryError or a killed kernel. Every
operation whose result can outgrow its inputs checks the size it is about to
build against `MAX_VALUE_LENGTH` (characters of a String, elements of a
List) first, and refuses with a kind `range` error — catchable, rolled back
like any failed statement. The limit is `SOMA_MAX_VALUE_LENGTH`, read at
start-up (default 10 000 000).
"""

from __future__ import annotations

import os

from ..core.diagnostics import SomaError

LIMIT_VARIABLE = "SOMA_MAX_VALUE_LENGTH"
DEFAULT_MAX_VALUE_LENGTH = 10_000_000


def _configured_limit() -> int:
    """`SOMA_MAX_VALUE_LENGTH` when it is a positive whole number, else the default."""
    text = os.environ.get(LIMIT_VARIABLE, "").replace("_", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_MAX_VALUE_LENGTH


MAX_VALUE_LENGTH = _configured_limit()


def too_long(operation: str, length: int, unit: str = "characters") -> SomaError:
    """The refusal of a result of `length` characters (or elements) built by `operation`."""
    return SomaError("range", f"{operation}: the result would be {_spaced(length)} {unit} long, more than the "
                              f"{_spaced(MAX_VALUE_LENGTH)} limit (set {LIMIT_VARIABLE} to change it)")


def _spaced(count: int) -> str:
    """12345678 as `12 345 678`."""
    return f"{count:,}".replace(",", " ")


def too_long_written() -> SomaError:
    """The refusal of writing a value out (display, to_json) past the limit."""
    return SomaError("range", f"the value written out is longer than the {_spaced(MAX_VALUE_LENGTH)} character "
                              f"limit (does it hold the same list or map many times over?) — set {LIMIT_VARIABLE} "
                              "to change it")


def interpolated(text: str) -> str:
    """A string interpolation's text, refused once it is past the limit (its parts are each within it)."""
    if len(text) > MAX_VALUE_LENGTH:
        raise too_long("a string interpolation", len(text))
    return text


def check_length(operation: str, length: int, unit: str = "characters") -> None:
    """Refuse (kind `range`) a result of `length` characters or elements past MAX_VALUE_LENGTH."""
    if length > MAX_VALUE_LENGTH:
        raise too_long(operation, length, unit)
