"""Help on names: what Shift-Tab (inspect_request) and `?name` show.

`help_text(session, name)` knows cells (face, memory with invariants, state
machine, handlers), `Cell.member`, sum types and their variants, test cells,
slots and states, session variables, builtins, keywords and magics.
`inspect(session, code, cursor_pos)` finds the name under the cursor.
"""

from __future__ import annotations

import re
from typing import Optional

from ..runtime.builtins import BUILTINS
from ..runtime.values import display, type_of
from ..syntax import ast
from ..syntax.keyword_help import KEYWORD_HELP, SLOT_PROPERTY_HELP, TYPE_HELP
from ..syntax.machines import build_model

NAME_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
CALLEE_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?\s*$")
MAGIC_AT = re.compile(r"[ \t]*(%%?\w+)")


def _source(session, node: ast.Node) -> str:
    """The source text of a node of some definition (whitespace runs collapsed)."""
    for definition in session.definitions.values():
        item = definition.item
        if item.span.start <= node.span.start and node.span.end <= item.span.end:
            text = definition.source[node.span.start:node.span.end]
            if text:
                return " ".join(text.split())
    return "…"


def _params(params: list[ast.Param]) -> str:
    """`a: Int, b` (untyped flesh parameters stay bare)."""
    return ", ".join(f"{p.name}: {p.type.render()}" if p.type else p.name for p in params)


def _signal_line(signal: ast.Signal) -> str:
    """`signal name(p: T) -> R`."""
    returns = f" -> {signal.returns.render()}" if signal.returns else ""
    return f"signal {signal.name}({_params(signal.params)}){returns}"


def _handler_line(handler: ast.Handler) -> str:
    """`on name(p: T)` with its annotations."""
    notes = "".join(f" [{n}]" if a is None else f" [{n}({a})]" for n, a in handler.annotations)
    return f"on {handler.name}({_params(handler.params)}){notes}"


def _slot_line(slot: ast.Slot) -> str:
    """`name: Type [props]`."""
    props = ", ".join(p.name if p.arg is None else f"{p.name}({p.arg})" for p in slot.props)
    return f"{slot.name}: {slot.type.render()}" + (f" [{props}]" if props else "")


def _machine_lines(machine: ast.StateMachine) -> list[str]:
    """A machine in a few lines: initial state and edges."""
    model = build_model("", machine)
    edges = []
    for edge in machine.edges:
        text = f"{edge.src} -> {edge.dst}" + (" (guarded)" if edge.guard is not None else "")
        if edge.excepts:
            text += f" except [{', '.join(edge.excepts)}]"
        edges.append(text)
    terminals = ", ".join(model.terminal_states) or "none"
    return [f"state {machine.name}: initial {model.initial}; terminal: {terminals}"] + [f"  {e}" for e in edges]


def _fleshes(session, name: str) -> list[ast.Handler]:
    """Handlers written for a skeleton in its `flesh` block."""
    flesh = session.definitions.get(("flesh", name))
    return list(flesh.item.handlers) if flesh else []


def cell_help(session, decl: ast.CellDecl) -> str:
    """A cell's typed face, memory (with invariants), machine and handlers."""
    kind = {"cell": "cell", "agent": "cell agent", "skeleton": "skeleton agent"}.get(decl.kind, decl.kind)
    owner = session.definitions[("cell", decl.name)]
    lines = [f"{kind} {decl.name}  (defined in {owner.origin})"]
    if decl.face is not None:
        lines.append("face:")
        lines += [f"  {_signal_line(s)}" for s in decl.face.signals]
        lines += [f"  tool {t.name}({_params(t.params)})" + (f" -> {t.returns.render()}" if t.returns else "")
                  for t in decl.face.tools]
        lines += [f"  promise {p}" for p in decl.face.promises]
    if decl.memory is not None:
        lines.append("memory:")
        lines += [f"  {_slot_line(s)}" for s in decl.memory.slots]
        lines += [f"  invariant {_source(session, i.expr)}" for i in decl.memory.invariants]
    for machine in decl.machines:
        lines += _machine_lines(machine)
    handlers = list(decl.handlers) + _fleshes(session, decl.name)
    if handlers:
        lines.append("handlers:")
        lines += [f"  {_handler_line(h)}" for h in handlers]
    return "\n".join(lines)


def member_help(session, decl: ast.CellDecl, member: str) -> Optional[str]:
    """Help on `Cell.member`: a signal, handler, slot, machine or state."""
    lines = []
    if decl.face is not None:
        lines += [_signal_line(s) for s in decl.face.signals if s.name == member]
    lines += [_handler_line(h) for h in list(decl.handlers) + _fleshes(session, decl.name) if h.name == member]
    if decl.memory is not None:
        for slot in decl.memory.slots:
            if slot.name == member:
                lines.append(f"memory slot {_slot_line(slot)}")
                lines += [f"  invariant {_source(session, i.expr)}" for i in decl.memory.invariants]
    for machine in decl.machines:
        if machine.name == member:
            lines += _machine_lines(machine)
        elif member in _states(machine):
            targets = [e.dst for e in machine.edges if e.src in (member, "*") and member not in e.excepts]
            lines.append(f"state {member} of {decl.name}.{machine.name}; next: {', '.join(targets) or 'none (terminal)'}")
    if not lines:
        return None
    return "\n".join([f"{decl.name}.{member}"] + [f"  {line}" for line in lines])


def _states(machine: ast.StateMachine) -> list[str]:
    """The states a machine names."""
    return build_model("", machine).states


def type_help(decl: ast.TypeDecl) -> str:
    """A sum type and its variants."""
    lines = [f"cell type {decl.name}"]
    for variant in decl.variants:
        if variant.fields is not None:
            fields = ", ".join(f"{n}: {t.render()}" for n, t in variant.fields)
            lines.append(f"  {variant.name} {{ {fields} }}")
        elif variant.items is not None:
            lines.append(f"  {variant.name}({', '.join(t.render() for t in variant.items)})")
        else:
            lines.append(f"  {variant.name}")
    return "\n".join(lines)


def builtin_help(name: str) -> Optional[str]:
    """A builtin's signature and doc."""
    entry = BUILTINS.get(name)
    if entry is None:
        return None
    options = [f"    {name}: {what}" for name, what in entry.options]
    return "\n".join([entry.signature, f"  {entry.doc}"] + (["  options:"] + options if options else []))


def _cells(session) -> dict[str, ast.CellDecl]:
    """Defined cells by name."""
    return {d.key[1]: d.item for d in session.definitions.values() if d.key[0] == "cell"}


def help_text(session, name: str) -> Optional[str]:
    """Everything known about `name` (`Cell`, `Cell.member`, a type, builtin, keyword…), or None."""
    cells = _cells(session)
    if "." in name:
        head, member = name.split(".", 1)
        return member_help(session, cells[head], member) if head in cells else None
    if name in cells:
        return cell_help(session, cells[name])
    found = [text for text in _name_help(session, name, cells) if text]
    return "\n\n".join(found) if found else None


def _name_help(session, name: str, cells: dict) -> list[Optional[str]]:
    """Help from every other kind of name that matches."""
    texts: list[Optional[str]] = []
    definitions = session.definitions
    if ("type", name) in definitions:
        texts.append(type_help(definitions[("type", name)].item))
    if ("test", name) in definitions:
        rules = definitions[("test", name)].item.rules
        texts.append(f"cell test {name}: {len(rules)} rule(s); run it with %test {name}")
    for type_def in (d.item for d in definitions.values() if d.key[0] == "type"):
        if any(v.name == name for v in type_def.variants):
            texts.append(f"{name}: a variant of cell type {type_def.name}")
    for decl in cells.values():
        texts.append(member_help(session, decl, name))
    if name in session.variables:
        value = session.variables[name]
        texts.append(f"{name}: {type_of(value)} = {display(value)}")
    texts.append(builtin_help(name))
    texts.append(KEYWORD_HELP.get(name) or TYPE_HELP.get(name) or SLOT_PROPERTY_HELP.get(name))
    texts.append(_magic_help(session, name))
    return texts


def _magic_help(session, name: str) -> Optional[str]:
    """Usage and doc of a magic named `name` or `%name` (the session's magics)."""
    magic = session.magics.get(name.lstrip("%"))
    if magic is None or not name.startswith("%"):
        return None
    return f"{magic.usage}\n  {magic.doc}"


def name_at(code: str, cursor_pos: int) -> Optional[str]:
    """The name the cursor is on: a magic, `Cell` or `Cell.member` (cut at the cursor), else the callee.

    Inside a call's parentheses (`Shop.add(|` or `len(x, |`) it is the
    function being called, as Shift-Tab is usually pressed there.
    """
    line_start = code.rfind("\n", 0, cursor_pos) + 1
    magic = MAGIC_AT.match(code, line_start)
    if magic and magic.start(1) <= cursor_pos <= magic.end(1):
        return "%" + magic.group(1).lstrip("%")
    for match in NAME_AT.finditer(code):
        if match.start() <= cursor_pos <= match.end():
            head_end = match.start() + len(match.group(0).split(".", 1)[0])
            return match.group(0) if cursor_pos > head_end else match.group(0)[:head_end - match.start()]
    return _callee_before(code, cursor_pos)


def _callee_before(code: str, cursor_pos: int) -> Optional[str]:
    """The name before the innermost `(` still open at the cursor (on the cursor's line or earlier)."""
    depth = 0
    for index in range(cursor_pos - 1, -1, -1):
        char = code[index]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                callee = CALLEE_BEFORE.search(code, 0, index)
                return callee.group(0) if callee else None
            depth -= 1
        elif char in "{}":
            return None
    return None


def inspect(session, code: str, cursor_pos: int) -> dict:
    """The inspect_reply content for the name at `cursor_pos`."""
    name = name_at(code, cursor_pos)
    text = help_text(session, name) if name else None
    if text is None and name and "." in name:
        text = help_text(session, name.split(".", 1)[1])
    callee = _callee_before(code, cursor_pos)
    if text is None and callee and callee != name:
        text = help_text(session, callee)
    if text is None:
        return {"status": "ok", "found": False, "data": {}, "metadata": {}}
    return {"status": "ok", "found": True, "data": {"text/plain": text}, "metadata": {}}
