"""Errors about the user's input that every layer may raise (a missing file, a bad soma.toml)."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input, already worded for them (no traceback)."""
