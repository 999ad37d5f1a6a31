"""`verify_program`: run every verify analysis and assemble the report.

Order (spec §12.1–12.2): the `[verify] cells` notes; per machine (cells in
declaration order) the graph checks, think-isolation, termination,
refinement, transition sources, guard proofs and effects; then the
`<Cell>/invariants:` groups and `<Cell>/termination:` groups of cells
without a machine; then the temporal block.

`[verify] cells` rules: a name that is not a cell of this file gets the
foreign-cell note; a near miss of a defined cell name, or a defined cell
without a machine, is an error (the verdict fails). Machines are titled by
their name, or `Cell.machine` when two cells' machines share a name.
"""

from __future__ import annotations

import json
from typing import Optional

from ...core.gcpause import paused_gc
from ...syntax import ast
from ..context import ProgramIndex
from ..describe import counted
from .effects import effects_lines
from .graph import Graph
from .guards import guard_lines
from .invariants import invariant_groups, status_invariant_notes
from .refinement import EdgeTakers, cell_bodies, isolation_lines, refinement_lines, sources_note
from .report import MachineReport, Step, VerifyReport, CheckGroup
from .structure import structure_lines
from .temporal import check_machine, user_properties
from .termination import CallGraph, termination_lines


def verify_program(program: ast.Program, project: Optional[object], path: str,
                   strict: bool = False, unfair: bool = False,
                   index: Optional[ProgramIndex] = None) -> VerifyReport:
    """Verify every state machine, invariant and handler of a parsed program.

    Liveness is read under fairness unless `unfair` (or soma.toml `[verify]
    fair = false`). `index` is the program's ProgramIndex when the caller has
    built it already (for `soma check` first). The cyclic garbage collector is
    paused meanwhile (see soma_kernel.core.gcpause).
    """
    with paused_gc():
        return _verify(program, project, path, strict, unfair, ProgramIndex(program) if index is None else index)


def _verify(program: ast.Program, project: Optional[object], path: str, strict: bool,
            unfair: bool, index: ProgramIndex) -> VerifyReport:
    """The analyses of `verify_program`, in report order."""
    report = VerifyReport(path, strict=strict)
    settings = getattr(project, "verify", None)
    fair = not unfair and (settings is None or settings.fair)
    applies = _cells_settings(index, settings, report, project)
    calls = CallGraph({name: info.handlers for name, info in index.cells.items()})
    titles = _machine_titles(index)
    props = user_properties(settings)
    for info in index.cells.values():
        if info.model is None or not info.model.states:
            continue
        graph = Graph(info.model)
        typed = info.model.node is not None and bool(info.model.node.type_name)
        bodies = cell_bodies(info.handlers, info.decl.scheduled, typed)
        machine = MachineReport(info.model, titles[info.name])
        machine.lines = structure_lines(graph)
        machine.lines += isolation_lines(bodies)
        machine.lines += termination_lines(info.name, info.handlers, info.decl.scheduled, calls)
        machine.lines += refinement_lines(info.model, bodies)
        machine.lines += sources_note(bodies)
        machine.lines += guard_lines(info.model, bodies)
        tools = [t.name for t in info.decl.face.tools] if info.decl.face else []
        machine.lines += effects_lines(bodies, tools)
        machine.lines += status_invariant_notes(info)
        takers = EdgeTakers(info.model, bodies, with_dynamic=True)
        _label_traces(machine, takers)
        chosen = props if applies(info.name) else []
        machine.temporal = check_machine(graph, chosen, machine.title, fair)
        for result in machine.temporal:
            result.steps = _steps(result.counter_example, takers)
        report.machines.append(machine)
    report.groups.extend(invariant_groups(index))
    for info in index.cells.values():
        if info.model is None:
            lines = termination_lines(info.name, info.handlers, info.decl.scheduled, calls)
            if any(line.mark != "✓" for line in lines):
                report.groups.append(CheckGroup(f"{info.name}/termination", lines))
    report.properties_line = _properties_line(props, settings, index)
    return report


def _machine_titles(index: ProgramIndex) -> dict[str, str]:
    """Machine titles: the machine's name, or `Cell.machine` on a name clash."""
    names = [info.model.name for info in index.cells.values() if info.model is not None]
    return {info.name: (info.model.name if names.count(info.model.name) == 1 else f"{info.name}.{info.model.name}")
            for info in index.cells.values() if info.model is not None}


def _cells_settings(index: ProgramIndex, settings, report: VerifyReport, project):
    """Notes/errors for `[verify] cells`; returns the predicate "properties apply to cell"."""
    cells = list(getattr(settings, "cells", []) or [])
    if not cells:
        return lambda name: True
    import difflib  # lazy: only `[verify] cells` needs spelling suggestions

    defined = list(index.cells)
    for name in cells:
        if name in index.cells:
            if index.cells[name].model is None:
                report.errors.append(f"error: soma.toml [verify] cells names '{name}', which declares no state "
                                     "machine — temporal properties need one")
            continue
        close = difflib.get_close_matches(name, defined, n=1, cutoff=0.8)
        if close:
            report.errors.append(f"error: soma.toml [verify] cells names '{name}', which this file does not define "
                                 f"— did you mean '{close[0]}'?")
        else:
            report.notes.append(f"note: soma.toml [verify] cells names '{name}', which this file does not define "
                                "— its properties are not checked here")
    if not any(name in index.cells for name in cells) and settings.has_properties:
        entry = getattr(project, "entry", None)
        if not entry or entry == report.path or entry.endswith("/" + report.path.split("/")[-1]):
            report.strict_reasons.append("soma.toml [verify] cells names no cell of this file")
    return lambda name: name in cells


def _properties_line(props, settings, index: ProgramIndex) -> Optional[str]:
    """`soma.toml: K user-defined properties loaded[ — NONE applies …]`, or None."""
    if not props:
        return None
    line = f"soma.toml: {counted(len(props), 'user-defined property', 'user-defined properties')} loaded"
    cells = list(settings.cells)
    with_machine = [n for n, info in index.cells.items() if info.model is not None]
    if cells and not any(name in with_machine for name in cells):
        listed = json.dumps(cells, ensure_ascii=False).replace('","', '", "')
        line += f" — NONE applies to this file ([verify] cells = {listed} names no cell of it)"
    elif not with_machine:
        line += " — NONE applies to this file (it declares no state machine)"
    return line


def _steps(states: Optional[list[str]], takers: EdgeTakers) -> list[Step]:
    """Labelled steps along a state path."""
    if not states:
        return []
    return [Step(a, b, takers.get((a, b))) for a, b in zip(states, states[1:])]


def _label_traces(machine: MachineReport, takers: EdgeTakers) -> None:
    """Attach handler-labelled steps to the check lines that carry a trace."""
    for line in machine.lines:
        if line.trace:
            line.steps = _steps(line.trace, takers)

