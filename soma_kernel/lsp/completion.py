"""Completion: the session's completion (session/complete.py) over the document, made aware of where the cursor is.

Inside a string, only what that string can name is offered: the states of
the machine in `transition(id, "…")` and the option keys in a think()'s
options `map("…"`. The first argument of `horde(` and `vote(` offers every
`Cell.handler`; after `Cell.` the cell's slots join its handlers and signals.
Everywhere else the session's completion answers, reading the document's
declarations as a notebook session holds its definitions (magics too, in a
notebook). Builtins carry their signature and doc.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from ..analysis.agent_options import THINK_OPTIONS, THINKERS
from ..analysis.statements import bound_names
from ..runtime.builtins import builtin_entry
from ..session.complete import complete
from ..session.definitions import Definition, definition_key
from ..session.magics import REGISTRY
from ..syntax import ast
from ..syntax.tokens import in_string_text
from .context import CallFrame, open_calls, part_start
from .document import Analysis

HANDLER_TAKERS = ("horde", "vote")
_STRING_PREFIX = re.compile(r'[A-Za-z0-9_]*$')
_CELL_MEMBER = re.compile(r"\b([A-Z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)?$")


class Completion(NamedTuple):
    """One offered word: the text, its kind (`handler`, `builtin`, `state` …), the range it replaces and
    a signature and doc when it is a builtin."""

    text: str
    kind: str
    start: int
    end: int
    detail: Optional[str] = None
    doc: Optional[str] = None


class _SessionView:
    """What session/complete.py reads of a session, made from a document's declarations."""

    def __init__(self, analysis: Analysis, notebook: bool):
        self.definitions = {}
        for item in analysis.program.items:
            if not isinstance(item, ast.Use):
                key = definition_key(item)
                self.definitions.setdefault(key, Definition(key, item, "", analysis.path, "", ""))
        self.variables = {name: None for statement in analysis.parsed.statements
                          for name in bound_names(statement)}
        self.magics = REGISTRY if notebook else {}


def completions(analysis: Analysis, text: str, offset: int) -> list[Completion]:
    """What may be written at `offset` of the editor's `text` (the analysis may be a keystroke older)."""
    start = part_start(text, offset, analysis.source.cells)
    before = text[start:offset]
    calls = open_calls(text, start, offset)
    if in_string_text(before):
        return _in_string(analysis, text, offset, calls)
    if calls and calls[-1].func in HANDLER_TAKERS and calls[-1].argument == 0 and calls[-1].cell is None:
        return _qualified_handlers(analysis, text, offset)
    reply = complete(_SessionView(analysis, analysis.source.notebook), text[start:], offset - start)
    found = [Completion(item["text"], item["type"], start + item["start"], start + item["end"])
             for item in reply["metadata"]["_jupyter_types_experimental"]]
    member = _CELL_MEMBER.search(before)
    if member and member.group(1) in analysis.index.cells:
        prefix = member.group(2) or ""
        known = {c.text for c in found}
        found += [Completion(slot, "slot", offset - len(prefix), offset)
                  for slot in analysis.index.cells[member.group(1)].slots if slot.startswith(prefix)
                  and slot not in known]
    return [_documented(c) for c in found]


def _documented(found: Completion) -> Completion:
    """A builtin's completion with its signature and doc."""
    if found.kind != "builtin":
        return found
    entry = builtin_entry(found.text)
    return found if entry is None else found._replace(detail=entry.signature, doc=entry.doc)


def _in_string(analysis: Analysis, text: str, offset: int, calls: list[CallFrame]) -> list[Completion]:
    """Inside a string: a machine's states in transition(), option keys in a think()'s options map."""
    if not calls:
        return []
    prefix = _STRING_PREFIX.search(text[max(0, offset - 200):offset]).group()
    start = offset - len(prefix)
    innermost = calls[-1]
    if innermost.func == "transition" and innermost.argument >= 1:
        return [Completion(state, "state", start, offset) for state in _states(analysis, innermost)
                if state.startswith(prefix)]
    if innermost.func == "map" and innermost.argument % 2 == 0 and len(calls) >= 2 \
            and calls[-2].func in THINKERS and calls[-2].argument >= 1:
        return [Completion(key, "option", start, offset) for key in THINK_OPTIONS if key.startswith(prefix)]
    return []


def _states(analysis: Analysis, call: CallFrame) -> list[str]:
    """The states of the machine a transition() at `call` moves: its cell's, else the program's only one."""
    index = analysis.index
    for info in index.cells.values():
        span = info.decl.span
        if span.start <= call.paren < span.end and info.model is not None:
            return list(info.model.states)
    model = index.only_machine()
    return list(model.states) if model is not None else []


def _qualified_handlers(analysis: Analysis, text: str, offset: int) -> list[Completion]:
    """Every `Cell.handler` of the program, for horde( and vote(."""
    typed = re.search(r"[A-Za-z0-9_.]*$", text[max(0, offset - 200):offset]).group()
    names = [f"{info.name}.{name}" for info in analysis.index.cells.values()
             for name in dict.fromkeys([*info.handler_names(), *info.signals])]
    return [Completion(name, "handler", offset - len(typed), offset) for name in names if name.startswith(typed)]
