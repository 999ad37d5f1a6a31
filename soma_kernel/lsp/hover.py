"""What hovering a name shows (Markdown): a builtin's signature and doc, a handler's signature and face
declaration, a slot's type and invariants, a state's edges, a sum type's variants, a model's provider.

Every text is read from the program (the declaration's own source) or from
the one builtin registry; a model's settings come from the soma.toml the
document uses, its key never shown.
"""

from __future__ import annotations

from typing import Optional

from ..analysis.walk import names_in
from ..runtime.builtins import builtin_entry
from ..syntax import ast
from .navigation import Found, definitions, place_at
from .workspace import Entry, Workspace

SHOWN_MODEL_SETTINGS = ("provider", "model", "url", "max_tokens", "timeout", "retries", "max_rounds")


def hover(workspace: Workspace, entry: Entry, offset: int) -> Optional[tuple[str, int, int]]:
    """(Markdown, start, end) for the name under the cursor, or None."""
    place = place_at(entry, offset)
    if place is None:
        return None
    kind, owner, name = place.key
    if kind == "builtin":
        text = _builtin(name)
    elif kind == "model":
        text = _model(entry, name)
    else:
        found = definitions(workspace, entry, offset)
        text = _declared(kind, name, found) if found else None
    return None if text is None else (text, place.start, place.end)


def _code(text: str) -> str:
    """A fenced Soma code block."""
    return f"```soma\n{text}\n```"


def _builtin(name: str) -> Optional[str]:
    """A builtin's signature and doc, from the registry."""
    entry = builtin_entry(name)
    if entry is None:
        return None
    return f"{_code(entry.signature)}\n\n{entry.doc}\n\n*builtin ({entry.group})*"


def _model(entry: Entry, name: str) -> str:
    """The `[models.NAME]` settings of the document's soma.toml (never its key)."""
    project = entry.analysis.project
    settings = project.models.get(name) if project is not None else None
    if not isinstance(settings, dict):
        where = "the notebook's %%toml cell" if entry.analysis.source.toml else "soma.toml"
        return f"**model `{name}`**: no `[models.{name}]` in {where}"
    lines = [f"- {key}: `{settings[key]}`" for key in SHOWN_MODEL_SETTINGS if key in settings]
    return f"**model `{name}`** (`[models.{name}]` of {project.path})\n\n" + "\n".join(lines or ["- (no settings)"])


def _source(found: Found, node: ast.Node) -> str:
    """The source text of a node, as written."""
    return found.entry.analysis.source.code[node.span.start:node.span.end]


def _declared(kind: str, name: str, found: list[Found]) -> Optional[str]:
    """The hover of a declared name from its declarations."""
    symbols = []
    for place in found:
        for symbol in place.entry.symbols.symbols:
            if symbol.start == place.start and symbol.end == place.end:
                symbols.append((place, symbol))
    if not symbols:
        return None
    place, symbol = symbols[0]
    owner = symbol.key[1]
    if kind == "handler":
        return _handler(name, owner, symbols)
    if kind == "slot":
        return _slot(place, symbol)
    if kind == "state":
        return _state(place, symbol)
    if kind == "machine":
        return f"**machine `{name}`** of cell `{owner}`\n\n{_code(_source(place, symbol.node))}"
    if kind in ("type", "variant"):
        type_symbol = symbol if kind == "type" else place.entry.symbols.symbols[symbol.parent]
        text = _code(_source(place, type_symbol.node))
        return (f"**sum type `{name}`**" if kind == "type" else f"**variant `{name}`** of `{type_symbol.key[2]}`") \
            + "\n\n" + text
    if kind == "cell":
        return _cell(place, symbol)
    return f"**{symbol.kind} `{name}`**"


def _handler(name: str, owner: str, symbols: list) -> str:
    """A handler's signature (`on …` up to its body) and its face declaration."""
    parts = [f"**handler `{owner}.{name}`**"]
    for place, symbol in symbols:
        node = symbol.node
        if isinstance(node, ast.Handler):
            head = place.entry.analysis.source.code[node.span.start:node.body.span.start].strip()
            parts.append(_code(head))
        else:
            parts.append(f"face: {_code(_source(place, node))}")
    return "\n\n".join(parts)


def _slot(place: Found, symbol) -> str:
    """A slot's declaration and the invariants of its memory that read it."""
    cell = place.entry.analysis.index.cells.get(symbol.key[1])
    text = f"**memory slot `{symbol.key[2]}`** of cell `{symbol.key[1]}`\n\n{_code(_source(place, symbol.node))}"
    if cell is None or cell.decl.memory is None:
        return text
    rules = [_source(place, invariant) for invariant in cell.decl.memory.invariants
             if any(n.id == symbol.key[2] for n in names_in(invariant.expr))]
    return text + ("\n\ninvariants:\n" + _code("\n".join(rules)) if rules else "\n\nno invariant reads it")


def _state(place: Found, symbol) -> str:
    """A state's machine, whether it is initial, and the edges entering and leaving it (with guards)."""
    cell = place.entry.analysis.index.cells.get(symbol.key[1])
    state = symbol.key[2]
    machine = cell.decl.machine if cell is not None else None
    if machine is None:
        return f"**state `{state}`**"
    entering, leaving = [], []
    for edge in machine.edges:
        written = _source(place, edge)
        if edge.dst == state:
            entering.append(written)
        if edge.src == state or (edge.src == "*" and state not in edge.excepts and edge.dst != state):
            leaving.append(written)
    lines = [f"**state `{state}`** of machine `{machine.name}` (cell `{cell.name}`)"
             + (" — initial" if machine.initial == state else "") + ("" if leaving else " — terminal")]
    lines.append("entered by:\n" + _code("\n".join(entering)) if entering else "no edge enters it")
    if leaving:
        lines.append("left by:\n" + _code("\n".join(leaving)))
    return "\n\n".join(lines)


def _cell(place: Found, symbol) -> str:
    """A cell's kind and name, with its face, slots and machine in short."""
    decl = symbol.node
    if not isinstance(decl, ast.CellDecl):
        return f"**{symbol.kind} `{symbol.key[2]}`**"
    words = {"cell": "cell", "agent": "cell agent", "skeleton": "skeleton agent"}[decl.kind]
    parts = [_code(f"{words} {decl.name}")]
    if decl.face is not None and (decl.face.signals or decl.face.tools):
        parts.append("face:\n" + _code("\n".join(_source(place, s) for s in [*decl.face.signals, *decl.face.tools])))
    if decl.memory is not None and decl.memory.slots:
        parts.append("memory:\n" + _code("\n".join(_source(place, s) for s in decl.memory.slots)))
    if decl.machine is not None:
        states = dict.fromkeys([decl.machine.initial or ""] + [e.dst for e in decl.machine.edges])
        parts.append(f"machine `{decl.machine.name}`: {', '.join(s for s in states if s and s != '*')}")
    return "\n\n".join(parts)
