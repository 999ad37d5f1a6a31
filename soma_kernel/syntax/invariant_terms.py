"""What the names of an `invariant` mean: one reading for the prover and the runtime.

An invariant is checked before each write to a slot it guards, and speaks
of that write (the reference's reading, spec §4.3):
- a slot's bare name, and `value`, are the VALUE being written — so
  `len(items)` is the length of that value, not the slot's entry count;
- `size`, `items.size` and `items.len` are the slot's entry count AFTER the
  write (one more for a push or a new key; one less for a delete);
- `items.get(k)` / `items[k]` read what the slot stores.

`soma verify` (analysis.verify.invariants) proves against this reading and
the runtime (runtime.memory, runtime.compiler's invariant mode) enforces it;
both classify terms with the functions below.
"""

from __future__ import annotations

from typing import Iterable, Optional

from . import ast

SIZE_FIELDS = ("size", "len")


def is_size_term(expr: ast.Expr, slots: Iterable[str]) -> bool:
    """`size`, or `S.size` / `S.len` with S a slot: the entry count after the write."""
    if isinstance(expr, ast.Name) and expr.id == "size":
        return True
    return (isinstance(expr, ast.Field) and expr.name in SIZE_FIELDS and isinstance(expr.obj, ast.Name)
            and expr.obj.id in set(slots))


def reads_size(expr: ast.Expr, slots: Iterable[str]) -> bool:
    """True when an invariant reads an entry count anywhere (a delete can then break it)."""
    names = set(slots)
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Node) and is_size_term(node, names):
            return True
        if isinstance(node, ast.Node):
            stack.extend(getattr(node, name) for name in node.FIELDS)
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return False


def written_length_subject(expr: ast.Expr, subjects: Iterable[str]) -> Optional[str]:
    """For `len(S)` with S a slot name or `value`, S (the length of the written value); else None."""
    if isinstance(expr, ast.Call) and expr.func == "len" and expr.cell is None and len(expr.args) == 1:
        arg = expr.args[0]
        if isinstance(arg, ast.Name) and arg.id in set(subjects):
            return arg.id
    return None
