"""Invariant checks: an invariant may read the slots of its memory section,
`value`, `key`, `size` and `status` (with a machine), and call pure builtins;
`len(slot)` (the written value's length, syntax.invariant_terms) is warned
about, as it is easily read as the entry count."""

from __future__ import annotations

from ..syntax import ast
from ..syntax.invariant_terms import written_length_subject
from .context import CellInfo, ProgramIndex, Reporter, did_you_mean, suggest
from .walk import iter_tree

INVARIANT_NAMES = ("value", "key", "size")


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report unknown names and non-builtin calls in every invariant."""
    for info in index.cells.values():
        memory = info.decl.memory
        if memory is None:
            continue
        for invariant in memory.invariants:
            _check_invariant(index, report, info, invariant)


def _check_invariant(index: ProgramIndex, report: Reporter, info: CellInfo, invariant: ast.Invariant) -> None:
    """One invariant: its names and calls."""
    lambda_params = {n.param for n in iter_tree(invariant.expr) if isinstance(n, ast.Lambda)}
    known = set(info.slots) | set(INVARIANT_NAMES) | lambda_params | set(index.variants)
    for node in iter_tree(invariant.expr):
        if isinstance(node, ast.Name):
            _check_name(report, info, node, known)
        elif written_length_subject(node, info.slots) is not None:
            slot = written_length_subject(node, info.slots)
            report.warning(node, f"`len({slot})` in an invariant is the length of the value being written to "
                           f"{slot}, not the number of entries", "invariant",
                           f"for the entry count after the write, write `{slot}.size`")
        elif isinstance(node, ast.Call) and (node.cell is not None or not index.is_pure_builtin(node.func)):
            report.error(node, f"invariant calls {node.func}(): an invariant may call pure builtins only "
                         "(no handlers, no effects)", "invariant",
                         "compute the value in the handler that writes the slot")


def _check_name(report: Reporter, info: CellInfo, node: ast.Name, known: set[str]) -> None:
    """A name in an invariant must be a slot, value/key/size or status."""
    if node.id in known:
        return
    if node.id == "status":
        if info.model is None:
            report.error(node, f"invariant reads `status` but cell '{info.name}' declares no `state {{ }}` "
                         "machine", "invariant", "declare a state machine or remove `status`")
        return
    fix = suggest(node.id, known | {"status"})
    report.error(node, f"invariant reads unknown name '{node.id}'{did_you_mean(fix)}",
                 "invariant", "an invariant may read the cell's slots, value, key, size and status", fix)
