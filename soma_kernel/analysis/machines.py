"""State-machine checks: `transition()` arity and literal targets, declared
edges for the 3-argument form, `except` lists, guard purity, and guard
variables bound by every handler that may take the guarded edge."""

from __future__ import annotations

from typing import Optional

from ..syntax import ast
from ..syntax.machines import MachineModel
from .context import CellInfo, ProgramIndex, Reporter, did_you_mean, suggest
from .walk import iter_tree, names_in

GUARD_CONTEXT = ("_id", "_from", "_to")


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report machine problems: declarations, then every transition() call."""
    for info in index.cells.values():
        if info.model is not None:
            _check_declaration(index, report, info, info.model)
    for info, owner in index.bodies():
        for site in index.facts(owner).transitions:
            model = _machine_for(index, report, info, site.call)
            if model is not None:
                _check_site(index, report, info, owner, model, site)


def literal_state(expr: ast.Expr, model: MachineModel) -> Optional[str]:
    """The state a transition() argument names literally (a string, or a bare
    variant name for a typed machine), else None. A lowercase name is a
    variable holding the state, not a literal."""
    if isinstance(expr, ast.Literal) and isinstance(expr.value, str):
        return expr.value
    node = model.node
    if isinstance(expr, ast.Name) and expr.id[:1].isupper() and node is not None and node.type_name:
        return expr.id
    return None


def _machine_for(index: ProgramIndex, report: Reporter, info: CellInfo, call: ast.Call) -> Optional[MachineModel]:
    """The machine a transition() call addresses (its cell's, or the only one)."""
    if info.model is not None:
        return info.model
    only = index.only_machine()
    if only is None:
        count = sum(1 for c in index.cells.values() if c.model is not None)
        why = "no cell declares a `state { }` machine" if count == 0 else \
            f"{count} cells declare machines, so the target is ambiguous"
        report.error(call, f"transition() in cell '{info.name}', which has no state machine: {why}",
                     "invalid_transition", "declare the machine in this cell or call a handler of the machine's cell")
    return only


def _check_declaration(index: ProgramIndex, report: Reporter, info: CellInfo, model: MachineModel) -> None:
    """`except` lists name declared states; guards are pure."""
    for line in model.declared_edges:
        for name in line.excepts:
            if not model.has_state(name):
                fix = suggest(name, model.states)
                report.error(line, f"`except [{name}]` in machine '{model.name}' names no declared state"
                             f"{did_you_mean(fix)}", "machine", "list declared states only", fix)
        if line.guard is not None:
            _check_guard_purity(index, report, info, line)


def _check_guard_purity(index: ProgramIndex, report: Reporter, info: CellInfo, line: ast.Edge) -> None:
    """A guard may call pure builtins only."""
    for node in iter_tree(line.guard):
        if isinstance(node, ast.Call) and (node.cell is not None or not index.is_pure_builtin(node.func)):
            report.error(node, f"guard on {line.src} -> {line.dst} calls {node.func}(): guards must be pure "
                         "(builtins without effects only)", "guard_purity",
                         "compute the value in the handler before transition() and read it in the guard")


def _check_site(index: ProgramIndex, report: Reporter, info: CellInfo, owner: ast.Node, model: MachineModel,
                site) -> None:
    """One transition() call: arity, literal states, edges, guard variables."""
    call = site.call
    low, high = index.builtin_arity("transition")
    if not low <= len(call.args) <= high:
        report.error(call, f"transition() takes 2 arguments (instance id, target state) or 3 "
                     f"(instance id, from state, target state), not {len(call.args)}", "arity",
                     "write transition(id, \"target\") or transition(id, \"from\", \"target\")")
        return
    target = literal_state(call.args[-1], model)
    if target is not None and not _known_target(report, call, model, target):
        return
    if len(call.args) == 3:
        source = literal_state(call.args[1], model)
        if source is None or target is None or not _known_edge(report, call, info, model, source, target):
            return
        edges = [model.edge(source, target)]
    elif target is not None:
        edges = model.entering(target)
    else:
        return
    handler_name = getattr(owner, "name", "every/after block")
    for edge in edges:
        if edge is not None and edge.guard is not None:
            _check_guard_names(index, report, info, (handler_name, owner), edge, site)


def _known_target(report: Reporter, call: ast.Call, model: MachineModel, target: str) -> bool:
    """A literal target must be a declared state that some edge enters."""
    written = _as_written(call.args[-1], target)
    if not model.has_state(target):
        fix = suggest(target, model.states)
        report.error(call.args[-1], f"transition(_, {written}): {written} is not a state of machine "
                     f"'{model.name}'{did_you_mean(fix)}", "invalid_transition",
                     f"declared states: [{', '.join(model.states)}]", fix)
        return False
    if not model.entering(target):
        report.error(call.args[-1], f"transition(_, {written}): no edge of machine '{model.name}' enters "
                     f"{written}", "invalid_transition", f"declare an edge `<state> -> {target}`")
        return False
    return True


def _as_written(expr: ast.Expr, state: str) -> str:
    """A state argument as the program spells it: `"paid"`, or a bare variant `Paid`."""
    return state if isinstance(expr, ast.Name) else f'"{state}"'



def _known_edge(report: Reporter, call: ast.Call, info: CellInfo, model: MachineModel, source: str,
                target: str) -> bool:
    """The 3-argument form names an edge that exists (wildcards count)."""
    if not model.has_state(source):
        fix = suggest(source, model.states)
        said = did_you_mean(fix, quote='"')
        report.error(call.args[1], f"transition() from \"{source}\"{said}: \"{source}\" "
                     f"is not a state of machine '{model.name}'", "invalid_transition",
                     f"declared states: [{', '.join(model.states)}]", fix)
        return False
    if not model.has_edge(source, target):
        leaving = ", ".join(model.targets(source))
        report.error(call, f"cell '{info.name}' declares no edge {source} -> {target}; edges leaving "
                     f"'{source}': [{leaving}]", "invalid_transition",
                     f"declare `{source} -> {target}` or move along a declared edge")
        return False
    return True


def _check_guard_names(index: ProgramIndex, report: Reporter, info: CellInfo, caller: tuple, edge, site) -> None:
    """Every variable the guard reads must be bound where the handler calls transition()
    (`caller` = the handler's name and node)."""
    handler, owner = caller
    for name_node in names_in(edge.guard):
        name = name_node.id
        if name in site.visible or name in info.slots or name in GUARD_CONTEXT or name in index.variants:
            continue
        if index.is_builtin(name) or name in index.handler_owners:
            continue
        report.error(site.call, f"the guard on {edge.src} -> {edge.dst} reads '{name}', but handler "
                     f"'{handler}' {_binding_gap(owner, name, site.call)}", "guard_binding",
                     f"bind '{name}' (a parameter, or a `let` before the call, not inside a branch) — guards "
                     "read the calling handler's variables")


def _binding_gap(owner: ast.Node, name: str, call: ast.Call) -> str:
    """Why `name` is not bound at `call`: bound only later, only in a block
    that does not hold the call, or not at all."""
    lets = [node for node in iter_tree(owner) if isinstance(node, ast.Let) and node.name == name]
    if lets and all(let.span.start > call.span.start for let in lets):
        return f"binds '{name}' only after this transition()"
    if lets:
        return f"binds '{name}' only inside a block that does not hold this transition()"
    return f"does not bind '{name}' before this transition()"
