"""`soma describe`: how a program is built, as a card of plain sentences or JSON.

`describe_card(program)` writes one paragraph per cell (its face, memory and
invariants, state machine with declared transitions and terminal states,
handlers with their source lines, private helpers, the face tools offered to
the model) and one about the test cells — the CLI and the notebook's
`%describe` print the same paragraphs; the reference's card has no tool
sentence (`tools=False` gives it); sum types stay out of the card (they appear in `--faces`). `describe_json(program, path)` gives the same facts as data (§13);
`faces_text(program)` lists the contracts only (`--faces`).
"""

from __future__ import annotations

from typing import Callable, Optional

from ..syntax import ast
from ..syntax.machines import build_model
from .context import did_you_mean, suggest


def english_list(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def counted(count: int, singular: str, plural: Optional[str] = None) -> str:
    """`1 signal`, `2 signals`."""
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


LineWords = Callable[..., str]  # names a source line or range: (first, last=None) -> text


def plain_line_words(first: int, last: Optional[int] = None) -> str:
    """How the CLI's texts name a source line or range: `line 5` or `lines 3–9`."""
    return f"line {first}" if last is None else f"lines {first}–{last}"


def source_text(program: ast.Program, node: ast.Node) -> str:
    """A node's source text with whitespace runs collapsed."""
    return " ".join(program.source[node.span.start:node.span.end].split())


def signal_text(signal: ast.Node) -> str:
    """`name(p: T, …) -> R`."""
    returns = f" -> {signal.returns.render()}" if signal.returns is not None else ""
    return f"{signal.name}({_params_text(signal.params)}){returns}"


def _params_text(params: list) -> str:
    """`p: T, q` (a parameter without a type shows its name alone)."""
    return ", ".join(f"{p.name}: {p.type.render()}" if p.type else p.name for p in params)


def handlers_of(program: ast.Program, cell: ast.CellDecl) -> list[ast.Handler]:
    """A cell's handlers; a skeleton agent's come from its flesh blocks."""
    handlers = list(cell.handlers)
    if cell.kind == "skeleton":
        for flesh in program.fleshes:
            if flesh.name == cell.name:
                handlers.extend(flesh.handlers)
    return handlers


def describe_cell(program: ast.Program, cell_name: str, line_words: LineWords = plain_line_words) -> str:
    """The card paragraph of one cell, its face tools included; LookupError (worded) for an unknown cell.

    `line_words(first, last=None)` names a handler's source line (`line N` unless given).
    """
    for cell in program.cells:
        if cell.name == cell_name:
            return _cell_paragraph(program, cell, line_words, tools=True)
    names = [c.name for c in program.cells]
    raise LookupError(f"no cell '{cell_name}' in {program.origin}{did_you_mean(suggest(cell_name, names))}")


def describe_card(program: ast.Program, tools: bool = True) -> str:
    """The "How it is built" paragraphs, separated by blank lines, newline-ended (without the
    face-tool sentences, as the reference words its card, when `tools` is false)."""
    paragraphs = [_cell_paragraph(program, cell, tools=tools) for cell in program.cells]
    if program.tests:
        paragraphs.append(_tests_paragraph(program.tests))
    return "\n\n".join(paragraphs) + "\n"


def _cell_paragraph(program: ast.Program, cell: ast.CellDecl, line_words: LineWords = plain_line_words,
                    tools: bool = True) -> str:
    """One cell's sentences (with the face tools offered to the model, when `tools`)."""
    clauses = []
    if cell.face and cell.face.signals:
        signals = [signal_text(s) for s in cell.face.signals]
        clauses.append(f"declares {counted(len(signals), 'signal')} in its face: {english_list(signals)}")
    if cell.memory and cell.memory.slots:
        clauses.append(_memory_clause(program, cell.memory))
    handlers = handlers_of(program, cell)
    if not clauses:
        bare = "has no face and no memory" if handlers or cell.machine is not None else \
            "has no face, no memory and no handlers"
        clauses.append(bare)
    sentences = [f"The cell {cell.name} " + "; ".join(clauses) + "."]
    if cell.machine is not None:
        sentences.extend(_machine_sentences(cell))
    public = [f"{h.name} ({line_words(h.span.line)})" for h in handlers if not h.is_private]
    private = [h.name for h in handlers if h.is_private]
    if public:
        sentences.append(f"{'Handler' if len(public) == 1 else 'Handlers'}: {english_list(public)}.")
    if private:
        sentences.append(f"{'Private helper' if len(private) == 1 else 'Private helpers'}: {english_list(private)}.")
    offered = tools_sentence(cell) if tools else None
    return " ".join(sentences + ([offered] if offered else []))


def tools_sentence(cell: ast.CellDecl) -> Optional[str]:
    """`Tools in its face, offered to the model: a(x: T) -> R (description) and b().`, or None."""
    tools = cell.face.tools if cell.face is not None else []
    if not tools:
        return None
    texts = [signal_text(t) + (f" ({t.description})" if t.description else "") for t in tools]
    return f"{'Tool' if len(texts) == 1 else 'Tools'} in its face, offered to the model: {english_list(texts)}."


def variant_text(variant: ast.VariantDecl) -> str:
    """`Settled { id: String, net: Int }`, `Failed(String)` or `Pending`."""
    if variant.fields is not None:
        fields = ", ".join(f"{name}: {kind.render()}" for name, kind in variant.fields)
        return f"{variant.name} {{ {fields} }}"
    if variant.items is not None:
        return f"{variant.name}({', '.join(kind.render() for kind in variant.items)})"
    return variant.name


def _memory_clause(program: ast.Program, memory: ast.Memory) -> str:
    """`keeps 2 memory slots: a (Map<…>, persistent) and b (…) under the invariant …`."""
    slots = []
    for slot in memory.slots:
        props = [slot.type.render()] + [_prop_text(p) for p in slot.props]
        slots.append(f"{slot.name} ({', '.join(props)})")
    clause = f"keeps {counted(len(slots), 'memory slot')}: {english_list(slots)}"
    invariants = [source_text(program, inv.expr) for inv in memory.invariants]
    if invariants:
        word = "invariant" if len(invariants) == 1 else "invariants"
        clause += f" under the {word} {english_list(invariants)}"
    return clause


def _prop_text(prop: ast.SlotProp) -> str:
    """`persistent`, `capacity(100)`."""
    return prop.name if prop.arg is None else f"{prop.name}({prop.arg})"


def _machine_sentences(cell: ast.CellDecl) -> list[str]:
    """The machine sentence and the terminal-states sentence."""
    model = build_model(cell.name, cell.machine)
    lines = [f"{e.src} -> {e.dst}" + (" (guarded)" if e.guard is not None else "") for e in model.declared_edges]
    sentences = [f"Its state machine {model.name} starts in {model.initial} and allows "
                 f"{counted(len(lines), 'transition')}: {english_list(lines)}."]
    terminals = sorted(model.terminal_states)
    if terminals:
        verb = "is" if len(terminals) == 1 else "are"
        sentences.append(f"{english_list(terminals)} {verb} terminal.")
    else:
        sentences.append("No state is terminal.")
    return sentences


def _tests_paragraph(tests: list[ast.TestCell]) -> str:
    """`The file also holds 1 test cell (T) with 9 assertions, run by soma test.`"""
    assertions = sum(1 for t in tests for r in t.rules if isinstance(r, (ast.RuleAssert, ast.RuleAssertFails)))
    names = english_list([t.name for t in tests])
    return (f"The file also holds {counted(len(tests), 'test cell')} ({names}) with "
            f"{counted(assertions, 'assertion')}, run by soma test.")


def describe_json(program: ast.Program, path: str) -> dict:
    """The describe data (§13) as a JSON-ready dict."""
    return {
        "file": path,
        "imports": [u.path for u in program.items if isinstance(u, ast.Use)],
        "cells": [_cell_json(program, cell) for cell in program.cells],
    }


def _cell_json(program: ast.Program, cell: ast.CellDecl) -> dict:
    """One cell's describe record."""
    data: dict = {
        "name": cell.name,
        "handlers": [{
            "name": h.name,
            "params": [{"name": p.name, "type": _param_type(cell, h, i)} for i, p in enumerate(h.params)],
            "is_public": not h.is_private,
            "line": h.span.line,
        } for h in handlers_of(program, cell)],
        "memory": [{
            "name": s.name, "type": s.type.render(), "properties": [_prop_text(p) for p in s.props],
            "invariants": [source_text(program, inv.expr) for inv in cell.memory.invariants],
        } for s in (cell.memory.slots if cell.memory else [])],
        "state_machines": [_machine_json(cell, m) for m in cell.machines],
        "face": _face_json(cell.face),
    }
    if cell.kind in ("agent", "skeleton"):
        data["kind"] = "agent"
    if cell.scheduled:
        data["scheduled"] = [{"kind": s.kind, "interval_ms": s.interval_ms} for s in cell.scheduled]
    return data


def _param_type(cell: ast.CellDecl, handler: ast.Handler, position: int) -> Optional[str]:
    """A handler parameter's type; flesh parameters take the signal's."""
    param = handler.params[position]
    if param.type is not None:
        return param.type.render()
    signal = next((s for s in (cell.face.signals if cell.face else []) if s.name == handler.name), None)
    if signal is not None and position < len(signal.params) and signal.params[position].type is not None:
        return signal.params[position].type.render()
    return None


def _machine_json(cell: ast.CellDecl, machine: ast.StateMachine) -> dict:
    """One machine: initial, sorted states, declared transitions."""
    model = build_model(cell.name, machine)
    return {
        "name": model.name,
        "initial": model.initial,
        "states": sorted(model.states),
        "transitions": [{"from": e.src, "to": e.dst, "has_guard": e.guard is not None,
                         **({"except": list(e.excepts)} if e.excepts else {})} for e in model.declared_edges],
    }


def _face_json(face: Optional[ast.Face]) -> dict:
    """Signals (with frames for skeletons), promises and tools."""
    if face is None:
        return {"signals": [], "promises": [], "tools": []}
    signals = []
    for s in face.signals:
        entry = {"name": s.name, "params": [f"{p.name}: {p.type.render()}" if p.type else p.name for p in s.params],
                 "returns": s.returns.render() if s.returns else None}
        if s.frame is not None:
            entry["frame"] = {"calls": s.frame.calls, "writes": s.frame.writes, "reads": s.frame.reads,
                              "moves": [f"{a} -> {b}" for a, b in s.frame.moves]}
        signals.append(entry)
    tools = [{"name": t.name, "signature": signal_text(t), "description": t.description or t.name,
              "capability": t.capability} for t in face.tools]
    return {"signals": signals, "promises": list(face.promises), "tools": tools}


def faces_text(program: ast.Program, path: str) -> str:
    """`describe --faces`: the contracts only — sum types first, then a block per cell."""
    lines = [f"# {path} — contracts only (no handler bodies)"]
    for type_decl in program.types:
        lines.append(f"type {type_decl.name} = {' | '.join(variant_text(v) for v in type_decl.variants)}")
    for cell in program.cells:
        lines.append("")
        lines.append(f"{'agent' if cell.kind in ('agent', 'skeleton') else 'cell'} {cell.name}")
        lines.extend(_face_lines(program, cell))
    return "\n".join(lines) + "\n"


def _face_lines(program: ast.Program, cell: ast.CellDecl) -> list[str]:
    """One cell's contract lines; a cell without a face shows its public handlers."""
    lines = []
    face = cell.face or ast.Face()
    lines += [f"  signal {signal_text(s)}" for s in face.signals]
    for tool in face.tools:
        capability = f" [{tool.capability}]" if tool.capability else ""
        description = f" — {tool.description}" if tool.description else ""
        lines.append(f"  tool {signal_text(tool)}{capability}{description}")
    lines += [f"  promise {p}" for p in face.promises]
    memory = cell.memory or ast.Memory()
    for slot in memory.slots:
        props = f" [{', '.join(_prop_text(p) for p in slot.props)}]" if slot.props else ""
        lines.append(f"  memory {slot.name}: {slot.type.render()}{props}")
    lines += [f"  invariant {source_text(program, inv.expr)}" for inv in memory.invariants]
    for machine in cell.machines:
        model = build_model(cell.name, machine)
        edges = ", ".join(f"{e.src} -> {e.dst}" + (" (guarded)" if e.guard is not None else "")
                          for e in model.declared_edges)
        typed = f": {machine.type_name}" if machine.type_name else ""
        lines.append(f"  state {model.name}{typed} (initial {model.initial}): {edges}")
    if cell.face is None:
        lines += [f"  on {h.name}({_params_text(h.params)})" for h in handlers_of(program, cell) if not h.is_private]
    return lines


def card_header(program: ast.Program, path: str) -> str:
    """`<file>: <N> lines, cells A, B` (every named top-level item)."""
    lines = len(program.source.splitlines())
    names = [i.name for i in program.items if isinstance(i, (ast.CellDecl, ast.TypeDecl, ast.TestCell))]
    return f"{path}: {lines} lines, cells {', '.join(names)}"
