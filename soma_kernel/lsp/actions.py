"""Code actions: each did-you-mean a diagnostic offers, as a quick fix replacing the written name."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from ..core.diagnostics import Diagnostic


class Fix(NamedTuple):
    """A quick fix: its title, the [start, end) it replaces and the new text."""

    title: str
    start: int
    end: int
    text: str


def spelling_fix(diagnostic: Diagnostic, text: str) -> Optional[Fix]:
    """The fix of a diagnostic's suggestion: the written name, as a whole word inside its span, replaced."""
    suggestion = diagnostic.suggestion
    if suggestion is None or diagnostic.span.line <= 0:
        return None
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(suggestion.written)}(?![A-Za-z0-9_])")
    found = pattern.search(text, diagnostic.span.start, max(diagnostic.span.end, diagnostic.span.start + 1))
    if found is None:
        return None
    return Fix(f"Change '{suggestion.written}' to '{suggestion.meant}'", found.start(), found.end(), suggestion.meant)
