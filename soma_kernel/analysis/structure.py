"""Structure checks: duplicates, empty files, one machine per cell, slot
types, slot property contradictions, flesh blocks without a skeleton."""

from __future__ import annotations

from typing import Iterable

from ..syntax import ast
from .context import ProgramIndex, Reporter

DURABILITY = ("persistent", "ephemeral")
CONSISTENCY = ("consistent", "eventual", "local")


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report structural problems of the whole program."""
    program = index.program
    if not [item for item in program.items if not isinstance(item, ast.Use)]:
        report.error(None, "empty file: no cell is declared", "empty_file",
                     "declare at least one `cell Name { … }`")
        return
    named = [i for i in program.items if isinstance(i, (ast.CellDecl, ast.TypeDecl, ast.TestCell))]
    _duplicates(report, named, "cell", "cell")
    for decl in program.cells:
        _check_cell(index, report, decl)
    for type_decl in program.types:
        _duplicates(report, type_decl.variants, "variant", "variant", f" in type '{type_decl.name}'")
    _check_fleshes(index, report)
    _check_test_helpers(index, report)


def _duplicates(report: Reporter, nodes: Iterable[ast.Node], what: str, kind: str, where: str = "") -> None:
    """Report every node whose `.name` repeats an earlier one (`where` e.g. " in cell 'A'")."""
    first: dict[str, ast.Node] = {}
    for node in nodes:
        name = node.name
        if name in first:
            report.error(node, f"duplicate {what} '{name}'{where} (first declared at line {first[name].span.line})",
                         f"duplicate_{kind}", "rename or remove one of them")
        else:
            first[name] = node


def _check_cell(index: ProgramIndex, report: Reporter, decl: ast.CellDecl) -> None:
    """Duplicates, machines and slots of one cell."""
    info = index.cells[decl.name]
    if info.decl is not decl:
        return
    where = f" in cell '{decl.name}'"
    _duplicates(report, info.handlers, "handler", "handler", where)
    if decl.face:
        _duplicates(report, decl.face.signals, "signal", "signal", where)
        _duplicates(report, decl.face.tools, "tool", "tool", where)
    for extra in decl.machines[1:]:
        report.error(extra, f"cell '{decl.name}' declares a second state machine '{extra.name}' "
                     f"(one machine per cell; the first is '{decl.machines[0].name}')", "machine",
                     "move the second machine into its own cell")
    for machine in decl.machines:
        if not machine.initial:
            report.error(machine, f"state machine '{machine.name}' has no `initial:` state", "machine",
                         "add `initial: <state>` as the first line of the block")
    if decl.memory:
        _duplicates(report, decl.memory.slots, "memory slot", "slot", where)
        for slot in decl.memory.slots:
            _check_slot(report, decl.name, slot)


def _check_slot(report: Reporter, cell: str, slot: ast.Slot) -> None:
    """A slot must be a Map or List, with properties that do not contradict."""
    if slot.type.name not in ("Map", "List"):
        report.error(slot, f"memory slot '{slot.name}' in cell '{cell}' has type {slot.type.render()}: "
                     "a slot must be a Map or a List", "slot_type",
                     f"declare it as `{slot.name}: Map<String, {slot.type.render()}>` and use .set/.get")
    props = {p.name: p for p in slot.props}
    for message in _contradictions(props):
        report.error(slot, f"memory slot '{slot.name}': {message}", "property_contradiction",
                     "keep one of the contradicting properties")


def _contradictions(props: dict[str, ast.SlotProp]) -> list[str]:
    """The contradictions among one slot's properties, worded."""
    found = []
    for group in (DURABILITY, CONSISTENCY):
        present = [p for p in group if p in props]
        if len(present) > 1:
            found.append(f"properties {' and '.join(present)} contradict each other")
    if "immutable" in props and "evict" in props:
        found.append("properties immutable and evict contradict each other (an immutable slot never drops entries)")
    if "ephemeral" in props and "retain" in props:
        found.append("properties ephemeral and retain contradict each other")
    replicated = props.get("replicated")
    if "ephemeral" in props and replicated is not None and isinstance(replicated.arg, int) and replicated.arg > 1:
        found.append("properties ephemeral and replicated contradict each other")
    ttl, retain = props.get("ttl"), props.get("retain")
    if ttl and retain and isinstance(ttl.arg, int) and isinstance(retain.arg, int) and ttl.arg < retain.arg:
        found.append("ttl is shorter than retain (entries would expire before their retention ends)")
    return found


def _check_fleshes(index: ProgramIndex, report: Reporter) -> None:
    """A flesh block must name a skeleton agent of the file."""
    for flesh in index.program.fleshes:
        info = index.cells.get(flesh.name)
        if info is None or info.decl.kind != "skeleton":
            report.error(flesh, f"flesh '{flesh.name}' has no `skeleton agent {flesh.name}` to flesh out",
                         "flesh", "declare the skeleton (memory, state, face with frames) first")


def _check_test_helpers(index: ProgramIndex, report: Reporter) -> None:
    """A test cell's helper handler may not shadow a program handler."""
    for test in index.program.tests:
        for helper in test.handlers:
            owners = index.handler_owners.get(helper.name)
            if owners:
                report.error(helper, f"test cell '{test.name}' helper '{helper.name}' shadows the handler of "
                             f"cell '{owners[0]}'", "test_shadow", "rename the helper")
