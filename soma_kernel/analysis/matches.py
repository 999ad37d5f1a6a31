"""Match checks: a `match` needs arms, and a match over a sum type's variants
must cover every variant (a guarded arm or a literal sub-pattern does not
cover its variant) unless a wildcard or binding arm catches the rest."""

from __future__ import annotations

from typing import Optional

from ..syntax import ast
from .context import ProgramIndex, Reporter
from .walk import iter_tree


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report empty and non-exhaustive matches in every body."""
    for _info, owner in index.bodies():
        for node in iter_tree(owner.body):
            if isinstance(node, ast.Match):
                _check_match(index, report, node)


def _check_match(index: ProgramIndex, report: Reporter, match: ast.Match) -> None:
    """One match expression."""
    if not match.arms:
        report.error(match, "empty `match`: it has no arms", "match", "add arms, ending with `_ -> …`")
        return
    type_decl = _matched_type(index, match)
    if type_decl is None or any(_catches_all(arm) for arm in match.arms):
        return
    covered: set[str] = set()
    for arm in match.arms:
        if arm.guard is None:
            covered |= _covered_variants(arm.pattern)
    missing = [v.name for v in type_decl.variants if v.name not in covered]
    if missing:
        report.error(match, f"match on {type_decl.name} is not exhaustive: missing {', '.join(missing)}",
                     "non_exhaustive_match", _missing_arms_hint(missing))


def _missing_arms_hint(missing: list[str]) -> str:
    """`add an arm for A, or a `_ -> …` arm` / `add arms for A, B and C, or …`."""
    names = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
    arms = "an arm" if len(missing) == 1 else "arms"
    return f"add {arms} for {names}, or a `_ -> …` arm"


def _matched_type(index: ProgramIndex, match: ast.Match) -> Optional[ast.TypeDecl]:
    """The sum type whose variants the arms name, if any."""
    for arm in match.arms:
        for pattern in _alternatives(arm.pattern):
            if isinstance(pattern, ast.PVariant) and pattern.name in index.variants:
                return index.variants[pattern.name][0]
    return None


def _alternatives(pattern: ast.Node) -> list[ast.Node]:
    """The patterns of an or-pattern (flattened), or the pattern itself."""
    found, stack = [], [pattern]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.POr):
            stack.extend(current.alternatives)
        else:
            found.append(current)
    return found


def _catches_all(arm: ast.MatchArm) -> bool:
    """An unguarded `_` or binding arm matches everything."""
    return arm.guard is None and any(isinstance(p, (ast.PWildcard, ast.PBind)) for p in _alternatives(arm.pattern))


def _covered_variants(pattern: ast.Node) -> set[str]:
    """Variants an unguarded pattern covers entirely."""
    covered = set()
    for alternative in _alternatives(pattern):
        if isinstance(alternative, ast.PVariant) and _irrefutable_parts(alternative):
            covered.add(alternative.name)
    return covered


def _irrefutable_parts(pattern: ast.PVariant) -> bool:
    """True when every sub-pattern of a variant pattern always matches."""
    subs = [sub for _, sub in pattern.fields or []] + list(pattern.items or [])
    return all(sub is None or isinstance(sub, (ast.PWildcard, ast.PBind)) for sub in subs)
