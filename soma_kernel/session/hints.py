"""Hints for runtime errors met in a notebook, built from what the session defines.

A failed lookup carries its `MissingName` (role, name, cell asked, argument
count); the hint is built from those fields and the live runtime, never from
the error's text: a misspelt name gets `did you mean …?`, a wrong number of
arguments the signatures that exist, a cell used as a value how its slots
are read.
"""

from __future__ import annotations

import difflib
from typing import Optional

from ..core.diagnostics import MissingName
from ..runtime.builtins import BUILTINS


def missing_name_hint(runtime, missing: Optional[MissingName]) -> Optional[str]:
    """The hint for a name lookup that failed, or None to keep the generic one."""
    if missing is None:
        return None
    if missing.role == "model":
        return "script the model with `mock think \"reply\"` or set [agent] mock in `%%toml`"
    cells = runtime.cells
    if missing.role == "cell":
        return _did_you_mean(missing.name, list(cells)) or f"the cells: {', '.join(cells) or 'none yet'}"
    if missing.role == "variable":
        return _cell_as_value(cells[missing.name]) if missing.name in cells else None
    owners = [cells[missing.owner]] if missing.owner in cells else list(cells.values())
    same_name = [(state.name, decl) for state in owners for decl in state.decl.handlers if decl.name == missing.name]
    if same_name:
        return _arity_hint(missing, same_name)
    known = [decl.name for state in owners for decl in state.decl.handlers]
    close = _did_you_mean(missing.name, known + ([] if missing.owner else list(BUILTINS)))
    if close is not None or missing.owner not in cells:
        return close
    return _handlers_of(cells[missing.owner], missing.name)


def _did_you_mean(wanted: str, known: list[str]) -> Optional[str]:
    """`did you mean `x`?` for the closest known name, if one is close."""
    close = difflib.get_close_matches(wanted, known, n=1)
    return f"did you mean `{close[0]}`?" if close else None


def _handlers_of(state, wanted: str) -> str:
    """What a cell offers when `Cell.wanted` names none of its handlers (and whether `wanted` is its slot)."""
    listed = ", ".join(f"{decl.name}({_params(decl)})" for decl in state.decl.handlers) or "none"
    if wanted in state.slots:
        return (f"`{wanted}` is a memory slot of `{state.name}`: it is read by its bare name inside its handlers, "
                f"or at top level when no other cell has a slot of that name; `%memory {state.name}` shows them all")
    return f"the handlers of `{state.name}`: {listed}"


def _arity_hint(missing: MissingName, handlers: list) -> str:
    """What the handlers of that name take, when the call passed another number of arguments."""
    signatures = " or ".join(f"{owner}.{decl.name}({_params(decl)})" for owner, decl in handlers)
    given = missing.nargs if missing.nargs is not None else "another number of"
    return f"`{missing.name}` exists but takes other arguments: {signatures} (this call passes {given})"


def _params(decl) -> str:
    """`a: Int, b` (untyped flesh parameters stay bare)."""
    return ", ".join(f"{p.name}: {p.type.render()}" if p.type else p.name for p in decl.params)


def _cell_as_value(state) -> str:
    """How to read a cell's slots, when the cell's name was used as a value (`Ledger.totals`)."""
    slots = sorted(state.slots)
    if not slots:
        return (f"`{state.name}` is a cell, not a value: call one of its handlers, "
                f"`{state.name}.handler(…)`")
    listed = ", ".join(f"`{name}`" for name in slots)
    return (f"`{state.name}` is a cell, not a value: its memory slots ({listed}) are read by their bare name "
            f"inside its handlers, or at top level when no other cell has a slot of that name; "
            f"`%memory {state.name}` shows them all")
