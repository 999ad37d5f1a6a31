"""`verify_program`: run every verify analysis and assemble the report.

Order (spec §12.1–12.2): the `[verify] cells` notes; per machine (cells in
declaration order) the graph checks, think-isolation, termination,
refinement, transition sources, guard proofs and effects; then the
`<Cell>/invariants:` groups and `<Cell>/termination:` groups of cells
without a machine; then the temporal block.

`[verify]` rules (`_applicable_properties`): a `cells` name that is not a
cell of this file gets the foreign-cell note; a near miss of a defined cell
name, or a defined cell without a machine, is an error (the verdict fails). A
property is checked on the listed cells' machines (a state one lacks is an
error), or without `cells` on every machine that has all the states the
section names. Machines are titled by
their name, or `Cell.machine` when two cells' machines share a name.
"""

from __future__ import annotations

import json
from typing import Optional

from ...core.gcpause import paused_gc
from ...core.spelling import near_miss
from ...runtime.memory import listed_entries
from ...syntax import ast
from ..context import ProgramIndex
from ..describe import counted
from .effects import effects_lines
from .graph import Graph
from .guards import guard_lines
from .invariants import invariant_groups, status_invariant_notes
from .refinement import EdgeTakers, cell_bodies, isolation_lines, refinement_lines, sources_note
from .report import FAIL, CheckGroup, CheckLine, MachineReport, Step, VerifyReport
from .structure import structure_lines
from .temporal import Property, check_machine, user_properties
from .termination import CallGraph, termination_lines


def verify_program(program: ast.Program, project: Optional[object], path: str,
                   strict: bool = False, unfair: bool = False,
                   index: Optional[ProgramIndex] = None, scope: str = "this file") -> VerifyReport:
    """Verify every state machine, invariant and handler of a parsed program.

    Liveness is read under fairness unless `unfair` (or soma.toml `[verify]
    fair = false`). `index` is the program's ProgramIndex when the caller has
    built it already (for `soma check` first); `scope` is what the messages
    call the program ("this session" in a notebook). The cyclic garbage
    collector is paused meanwhile (see soma_kernel.core.gcpause).
    """
    with paused_gc():
        return _verify(program, project, path, strict, unfair, ProgramIndex(program) if index is None else index,
                       scope)


def _verify(program: ast.Program, project: Optional[object], path: str, strict: bool,
            unfair: bool, index: ProgramIndex, scope: str) -> VerifyReport:
    """The analyses of `verify_program`, in report order."""
    report = VerifyReport(path, strict=strict, scope=scope)
    settings = getattr(project, "verify", None)
    fair = not unfair and (settings is None or settings.fair)
    calls = CallGraph({name: info.handlers for name, info in index.cells.items()})
    titles = _machine_titles(index)
    props = user_properties(settings)
    chosen_for = _applicable_properties(index, settings, props, titles, report, project)
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
        machine.temporal = check_machine(graph, chosen_for.get(info.name, []), fair)
        for result in machine.temporal:
            result.steps = _steps(result.counter_example, takers)
        report.machines.append(machine)
    report.groups.extend(invariant_groups(index))
    for info in index.cells.values():
        if info.model is None:
            lines = termination_lines(info.name, info.handlers, info.decl.scheduled, calls)
            if any(line.mark != "✓" for line in lines):
                report.groups.append(CheckGroup(f"{info.name}/termination", lines))
    report.properties_line = _properties_line(props, settings, index, scope)
    return report


def add_memory_breaches(report: VerifyReport, breaches: list[tuple[str, str, list[str]]]) -> None:
    """A ✗ line in `<Cell>/invariants` for each invariant that values already in memory break
    (`breaches`: cell, invariant text, the entries shown): the proof covers the writes the
    handlers can make, not the data a session kept from before the invariant was tightened."""
    groups = {group.title: group for group in report.groups}
    for cell, invariant, shown in breaches:
        title = f"{cell}/invariants"
        if title not in groups:
            groups[title] = CheckGroup(title, [])
            report.groups.append(groups[title])
        line = (f"invariant {invariant} — broken by {len(shown)} value(s) already in memory: "
                f"{listed_entries(shown)} (the proof covers new writes only: fix the data or the invariant)")
        groups[title].lines.append(CheckLine(FAIL, line, kind="invariant"))


def _machine_titles(index: ProgramIndex) -> dict[str, str]:
    """Machine titles: the machine's name, or `Cell.machine` on a name clash."""
    names = [info.model.name for info in index.cells.values() if info.model is not None]
    return {info.name: (info.model.name if names.count(info.model.name) == 1 else f"{info.name}.{info.model.name}")
            for info in index.cells.values() if info.model is not None}


def _applicable_properties(index: ProgramIndex, settings, props: list[Property], titles: dict[str, str],
                           report: VerifyReport, project) -> dict[str, list[Property]]:
    """The user properties each machine's cell is checked against (§12.4).

    With `[verify] cells`, the properties apply to the listed cells' machines,
    and a state one of them lacks is a configuration error. Without it, they
    apply to every machine that has all the states they name (a shared
    soma.toml speaks of one program's machine: a machine that lacks any of its
    states belongs to another program); when no machine takes them, a state
    that is a near miss of a machine's state is an error, else a warning
    (checked nowhere: `--strict` fails).
    """
    machines = {name: set(info.model.states) for name, info in index.cells.items()
                if info.model is not None and info.model.states}
    if settings is not None and settings.cells:
        chosen = {name: [] for name in _listed_cells(index, settings, report, project)}
        for name, taken in chosen.items():
            for prop in props:
                missing = [s for s in prop.named_states() if s not in machines[name]]
                if missing:
                    slip = near_miss(missing[0], machines[name])
                    report.errors.append(f"error: soma.toml [verify] property {prop.title()} names state "
                                         f"'{missing[0]}', which machine '{titles[name]}' does not have"
                                         f"{_slip_text(slip)} (its states: [{', '.join(sorted(machines[name]))}])")
                else:
                    taken.append(prop)
        return chosen
    named = list(dict.fromkeys(state for prop in props for state in prop.named_states()))
    takers = [name for name, states in machines.items() if all(state in states for state in named)]
    if props and not machines:
        report.strict_reasons.append(f"soma.toml [verify] properties apply to nothing in {report.scope}")
    elif props and not takers:
        _report_unplaced(props, named, machines, titles, report)
    return {name: (list(props) if name in takers else []) for name in machines}


def _report_unplaced(props: list[Property], named: list[str], machines: dict[str, set], titles: dict[str, str],
                     report: VerifyReport) -> None:
    """Properties no machine of the file takes: an error for a state that is a slip of a
    machine's state, else a warning that fails `--strict`."""
    absent = [state for state in named if not any(state in states for states in machines.values())]
    for state in absent:
        for name, states in machines.items():
            slip = near_miss(state, states)
            if slip is not None:
                prop = next(p for p in props if state in p.named_states())
                report.errors.append(f"error: soma.toml [verify] property {prop.title()} names state '{state}', "
                                     f"which no state machine of {report.scope} has{_slip_text(slip)} "
                                     f"(machine '{titles[name]}')")
                return
    missing = ", ".join(f"'{state}'" for state in absent) or "their states are spread over several machines"
    report.notes.append(f"warning: soma.toml [verify] properties apply to no state machine of {report.scope}: none has "
                        f"every state they name ({missing}) — they are checked nowhere here")
    report.strict_reasons.append(f"soma.toml [verify] properties apply to nothing in {report.scope}")


def _slip_text(slip: Optional[str]) -> str:
    """` — did you mean 'x'?` for a near miss, else nothing."""
    return f" — did you mean '{slip}'?" if slip else ""


def _listed_cells(index: ProgramIndex, settings, report: VerifyReport, project) -> list[str]:
    """Notes and errors for `[verify] cells`; returns the listed cells of this file that have a machine.

    A name this file does not define is a foreign cell (a note), unless it is a
    near miss of a cell it defines (an error); a defined cell without a machine
    is an error. An all-foreign list fails `--strict` unless the manifest's
    `entry` is another file."""
    cells = list(settings.cells)
    for name in cells:
        if name in index.cells:
            if index.cells[name].model is None:
                report.errors.append(f"error: soma.toml [verify] cells names '{name}', which declares no state "
                                     "machine — temporal properties need one")
            continue
        slip = near_miss(name, index.cells)
        if slip:
            report.errors.append(f"error: soma.toml [verify] cells names '{name}', which {report.scope} does not define "
                                 f"— did you mean '{slip}'?")
        else:
            report.notes.append(f"note: soma.toml [verify] cells names '{name}', which {report.scope} does not define "
                                "— its properties are not checked here")
    if not any(name in index.cells for name in cells) and settings.has_properties:
        entry = getattr(project, "entry", None)
        if not entry or entry == report.path or entry.endswith("/" + report.path.split("/")[-1]):
            report.strict_reasons.append(f"soma.toml [verify] cells names no cell of {report.scope}")
    return [name for name in cells if name in index.cells and index.cells[name].model is not None
            and index.cells[name].model.states]


def _properties_line(props, settings, index: ProgramIndex, scope: str) -> Optional[str]:
    """`soma.toml: K user-defined properties loaded[ — NONE applies …]`, or None."""
    if not props:
        return None
    line = f"soma.toml: {counted(len(props), 'user-defined property', 'user-defined properties')} loaded"
    cells = list(settings.cells)
    with_machine = [n for n, info in index.cells.items() if info.model is not None]
    if cells and not any(name in with_machine for name in cells):
        listed = json.dumps(cells, ensure_ascii=False).replace('","', '", "')
        line += f" — NONE applies to {scope} ([verify] cells = {listed} names no cell of it)"
    elif not with_machine:
        line += f" — NONE applies to {scope} (it declares no state machine)"
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

