"""Signature help: the signature of the call the cursor is in, with the argument it is at.

A builtin's signature and doc come from the one registry; a handler's (bare,
`Cell.h(…)` or `x.h(…)`) are its declared parameters, with the face's
declaration as its doc.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from ..runtime.builtins import builtin_entry
from ..syntax import ast
from .context import CallFrame, open_calls, part_start
from .document import Analysis


class Signature(NamedTuple):
    """A signature to show: its label, the [start, end) of each parameter inside it, its doc and the
    parameter the cursor is at."""

    label: str
    parameters: list[tuple[int, int]]
    doc: Optional[str]
    active: int


def signature_at(analysis: Analysis, text: str, offset: int) -> Optional[Signature]:
    """The signature of the innermost call open at `offset` (None outside a call or for an unknown callee)."""
    calls = open_calls(text, part_start(text, offset, analysis.source.cells), offset)
    if not calls:
        return None
    call = calls[-1]
    handler = _handler(analysis, call)
    if handler is not None:
        params = ", ".join(_param(p) for p in handler.params)
        label = f"{call.cell + '.' if call.cell else ''}{handler.name}({params})"
        return Signature(label, _parameter_ranges(label), _face_doc(analysis, call, handler), call.argument)
    entry = builtin_entry(call.func) if call.cell is None else None
    if entry is None:
        return None
    return Signature(entry.signature, _parameter_ranges(entry.signature), entry.doc, call.argument)


def _param(param: ast.Param) -> str:
    """`name: Type` (or the bare name of an untyped flesh parameter)."""
    return param.name if param.type is None else f"{param.name}: {param.type.render()}"


def _handler(analysis: Analysis, call: CallFrame) -> Optional[ast.Handler]:
    """The handler a call names: `Cell.h`, else the only handler of that name."""
    index = analysis.index
    if call.cell is not None:
        info = index.cells.get(call.cell)
        return info.handler(call.func) if info is not None else None
    owners = index.handler_owners.get(call.func, [])
    return index.cells[owners[0]].handler(call.func) if len(owners) == 1 else None


def _face_doc(analysis: Analysis, call: CallFrame, handler: ast.Handler) -> Optional[str]:
    """The face declaration of the handler, as written."""
    owner = call.cell or analysis.index.handler_owners[call.func][0]
    info = analysis.index.cells.get(owner)
    signal = info.signals.get(handler.name) if info is not None else None
    if signal is None:
        return None
    return analysis.source.code[signal.span.start:signal.span.end]


def _parameter_ranges(label: str) -> list[tuple[int, int]]:
    """The [start, end) of each parameter inside the label's first parentheses (split at top-level commas)."""
    opening = label.find("(")
    if opening < 0:
        return []
    ranges, depth, start = [], 0, opening + 1
    for at in range(opening + 1, len(label)):
        char = label[at]
        if char in "([<{":
            depth += 1
        elif char in ")]>}" and depth > 0:
            depth -= 1
        elif char == ")" or (char == "," and depth == 0):
            if label[start:at].strip():
                skipped = len(label[start:at]) - len(label[start:at].lstrip())
                ranges.append((start + skipped, at))
            if char == ")":
                break
            start = at + 1
    return ranges
