"""Near misses: is a written name a slip of the pen for one that exists?

`near_miss(name, known)` answers with the known name `name` was probably
meant to be, or None. A near miss is the same name in another case, or one
at most one edit away (a letter added, dropped, changed, or two neighbours
swapped: `Gaet` for `Gate`), two for names of eight letters or more; among
several, the closest wins (ties: the first known). Used where a near miss is
an error rather than a foreign name (`[verify] cells`, a property's states,
`[agent]` values).
"""

from __future__ import annotations

from typing import Iterable, Optional


def near_miss(name: str, known: Iterable[str]) -> Optional[str]:
    """The known name `name` is a slip for, or None (an exact match is no slip)."""
    best: Optional[tuple[int, str]] = None
    allowed = 2 if len(name) >= 8 else 1
    for candidate in known:
        if candidate == name:
            return None
        distance = 0 if candidate.lower() == name.lower() else edit_distance(name.lower(), candidate.lower())
        if distance <= allowed and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions and
    swaps of two neighbouring letters each cost 1 (iterative, two rows kept)."""
    if abs(len(a) - len(b)) > 2:
        return abs(len(a) - len(b))
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, letter in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, other in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (letter != other))
            if i > 1 and j > 1 and letter == b[j - 2] and a[i - 2] == other:
                current[j] = min(current[j], before[j - 2] + 1)
        before, previous = previous, current
    return previous[-1]
