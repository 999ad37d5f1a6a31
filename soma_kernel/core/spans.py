"""Where a thing sits in its source text: the `Span` every node, diagnostic and error carries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """Where a node sits in its source: 1-based line/column, 0-based char offsets.

    `start`/`end` index characters of the source text (not bytes), `end` is
    exclusive; `end_line`/`end_col` point at the last character + 1.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int


NO_SPAN = Span(0, 0, 0, 0, 0, 0)
