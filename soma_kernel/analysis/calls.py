"""Call checks: every called name exists, with an argument count it accepts.

`resolve(index, info, name, argc)` applies the dispatch rule of a bare call
(runtime.dispatch, shared with the runtime): a handler taking that many
arguments (own cell first, else the program's only one) wins over a builtin
of the same name. The cost and frame analyses use it too. Checked here: undefined functions (did-you-mean),
arity against handler/builtin/context builtin, `Cell.handler` targets,
ambiguous bare calls, literal `delegate()` targets, tuple-variant arity,
unknown UFCS methods (reserved handler names are refused by the parser).
"""

from __future__ import annotations

from typing import Optional

from ..core.records import Record
from ..runtime.builtins.context import MACHINE_READS
from ..syntax import ast
from ..runtime.dispatch import AMBIGUOUS, BUILTIN, HANDLER, OWN, dispatch_bare_call
from .context import CellInfo, ProgramIndex, Reporter, did_you_mean, suggest
from .scopes import BodyFacts
from .walk import iter_tree

SLOT_METHODS = ("get", "set", "delete", "has", "keys", "values", "entries", "len", "size", "push", "append",
                "last")


class Target(Record):
    """What a call reaches: a handler (with its cell) or a builtin."""

    kind: str
    name: str
    cell: Optional[str] = None
    handler: Optional[ast.Handler] = None


def handler_arity(handler: ast.Handler) -> tuple[int, int]:
    """(min, max) arguments of a handler: a trailing Map parameter is optional."""
    count = len(handler.params)
    last = handler.params[-1] if handler.params else None
    optional = last is not None and last.type is not None and last.type.name == "Map"
    return (count - 1 if optional else count), count


def accepts(arity: tuple[int, Optional[int]], argc: int) -> bool:
    """True when `argc` arguments fit an arity range."""
    low, high = arity
    return argc >= low and (high is None or argc <= high)


def resolve(index: ProgramIndex, info: Optional[CellInfo], name: str, argc: int) -> Optional[Target]:
    """Where a bare call `name(argc args)` made from `info` goes, or None (runtime.dispatch's rule).

    When no handler takes `argc` arguments and there is no builtin, the
    handler of that name (own cell first) is returned so its arity is reported.
    """
    own = info.handler(name) if info is not None else None
    fitting = [c for c in index.handler_owners.get(name, [])
               if (info is None or c != info.name) and accepts(handler_arity(index.cells[c].handler(name)), argc)]
    choice = dispatch_bare_call(own is not None and accepts(handler_arity(own), argc), fitting,
                                index.is_builtin(name))
    if choice.kind == OWN:
        return Target("handler", name, info.name, own)
    if choice.kind == HANDLER:
        return Target("handler", name, choice.owner, index.cells[choice.owner].handler(name))
    if choice.kind == BUILTIN:
        return Target("builtin", name)
    if choice.kind == AMBIGUOUS:
        return None
    if own is not None:
        return Target("handler", name, info.name, own)
    owners = [c for c in index.handler_owners.get(name, []) if info is None or c != info.name]
    if len(owners) == 1:
        return Target("handler", name, owners[0], index.cells[owners[0]].handler(name))
    return None


def resolve_qualified(index: ProgramIndex, cell: str, name: str) -> Optional[Target]:
    """The handler a `Cell.name(...)` call reaches, or None."""
    info = index.cells.get(cell)
    handler = info.handler(name) if info is not None else None
    return Target("handler", name, cell, handler) if handler is not None else None


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report call problems in every handler and scheduled block."""
    for info, owner in index.bodies():
        check_calls(index, report, info, index.facts(owner), owner.body)


def check_calls(index: ProgramIndex, report: Reporter, info: Optional[CellInfo], facts: BodyFacts,
                root: ast.Node, helpers: Optional[list[ast.Handler]] = None) -> None:
    """Check every call under `root` (a body or a test rule) whose scope facts are `facts`.

    `info` is the calling cell (None for test rules); `helpers` are a test
    cell's own handlers.
    """
    piped = {id(n.target) for n in iter_tree(root) if isinstance(n, ast.Pipe)}
    for use in facts.calls:
        if use.local:
            continue
        call = use.node
        argc = len(call.args) + (1 if id(call) in piped else 0)
        _check_bare_call(index, report, info, call, argc, helpers or [])
    locals_ = {id(use.node) for use in facts.names if use.local}
    for node in iter_tree(root):
        if isinstance(node, ast.Call) and node.cell is not None:
            _check_qualified(index, report, node, node.cell, node.func, len(node.args))
        elif isinstance(node, ast.MethodCall):
            _check_method(index, report, info, node)
        elif isinstance(node, ast.Field) and isinstance(node.obj, ast.Name) and id(node.obj) not in locals_:
            _check_handler_reference(index, report, node)


def _check_handler_reference(index: ProgramIndex, report: Reporter, node: ast.Field) -> None:
    """`Cell.member` without a call is a handler reference (horde(), vote()…): the cell must have that handler."""
    info = index.cells.get(node.obj.id)
    if info is None or resolve_qualified(index, info.name, node.name) is not None:
        return
    fix = suggest(node.name, info.handler_names())
    hint = (f"'{node.name}' is a memory slot of '{info.name}': a cell's slots are read by their bare name "
            "inside its own handlers" if node.name in info.slots
            else f"`{info.name}.handler` without a call names one of its handlers (for horde(), vote())")
    report.error(node, f"cell '{info.name}' has no handler '{node.name}'{did_you_mean(fix)}", "undefined_handler",
                 hint, fix)


def _check_bare_call(index: ProgramIndex, report: Reporter, info: Optional[CellInfo], call: ast.Call,
                     argc: int, helpers: list[ast.Handler]) -> None:
    """One bare call: exists, unambiguous, right argument count."""
    name = call.func
    helper = next((h for h in helpers if h.name == name), None)
    if helper is not None:
        _check_arity(report, call, f"handler '{name}'", handler_arity(helper), argc)
        return
    if name[:1].isupper() and name in index.variants:
        _check_variant_call(report, index, call, argc)
        return
    target = resolve(index, info, name, argc)
    if target is None:
        _report_unresolved(index, report, info, call)
        return
    if target.kind == "builtin":
        if name != "transition":  # machines.py words transition()'s arity
            _check_arity(report, call, f"builtin {name}()", index.builtin_arity(name), argc)
        own = info.handler(name) if info is not None else None
        if own is not None:
            report.warning(call, f"{name}() with {argc} argument(s) calls the builtin, not the handler "
                           f"'{name}' of cell '{info.name}' (it takes {len(own.params)})", "confusing_call",
                           f"pass {len(own.params)} argument(s) to call the handler, or rename it")
        if name == "delegate":
            _check_delegate(index, report, call)
        return
    _check_arity(report, call, f"handler '{name}'", handler_arity(target.handler), argc)


def _report_unresolved(index: ProgramIndex, report: Reporter, info: Optional[CellInfo], call: ast.Call) -> None:
    """An unknown or ambiguous bare call."""
    name = call.func
    owners = index.handler_owners.get(name, [])
    if len(owners) > 1:
        report.error(call, f"ambiguous call {name}(): cells {', '.join(repr(o) for o in owners)} all define "
                     f"a handler '{name}'", "ambiguous_call", f"qualify it: `{owners[0]}.{name}(…)`")
        return
    candidates = list(index.handler_owners) + index.builtin_names()
    fix = suggest(name, candidates)
    report.error(call, f"undefined function {name}(){did_you_mean(fix, '()')}", "undefined_function",
                 "define a handler with that name or fix the spelling", fix)


def _check_arity(report: Reporter, call: ast.Node, what: str, arity: tuple[int, Optional[int]], argc: int) -> None:
    """Report a call whose argument count the callee does not accept."""
    if accepts(arity, argc):
        return
    low, high = arity
    if high is None:
        wanted = f"at least {low}"
    elif low == high:
        wanted = str(low)
    else:
        wanted = f"{low} to {high}"
    report.error(call, f"{what} takes {wanted} argument(s), but the call passes {argc}", "arity",
                 "match the declared parameters")


def _check_variant_call(report: Reporter, index: ProgramIndex, call: ast.Call, argc: int) -> None:
    """A tuple-variant construction `V(a, b)`."""
    type_decl, variant = index.variants[call.func]
    if variant.items is None:
        report.error(call, f"variant {call.func} of type {type_decl.name} is not a tuple variant",
                     "variant", f"write `{call.func}` (unit) or `{call.func} {{ field: … }}` (struct)")
    elif len(variant.items) != argc:
        _check_arity(report, call, f"variant {call.func}", (len(variant.items), len(variant.items)), argc)


def _check_qualified(index: ProgramIndex, report: Reporter, node: ast.Node, cell: str, name: str, argc: int) -> None:
    """`Cell.handler(args)`: the cell and handler exist; the count fits."""
    info = index.cells.get(cell)
    if info is None:
        fix = suggest(cell, index.cells)
        report.error(node, f"unknown cell '{cell}' in {cell}.{name}(){did_you_mean(fix)}",
                     "undefined_cell", "call a cell that is declared (or fix the spelling)", fix)
        return
    target = resolve_qualified(index, cell, name)
    if target is None and name in MACHINE_READS:
        _check_machine_read(report, node, info, name, argc)
        return
    if target is None:
        fix = suggest(name, info.handler_names())
        report.error(node, f"cell '{cell}' has no handler '{name}'{did_you_mean(fix)}",
                     "undefined_handler", f"declare `on {name}(…)` in cell '{cell}' or fix the name", fix)
        return
    _check_arity(report, node, f"handler '{cell}.{name}'", handler_arity(target.handler), argc)


def _check_machine_read(report: Reporter, node: ast.Node, info: CellInfo, name: str, argc: int) -> None:
    """`Cell.get_status(id)` & co.: the cell owns a machine; one argument (the instance id)."""
    if info.model is None:
        report.error(node, f"cell '{info.name}' has no state machine, so {info.name}.{name}() has nothing to read",
                     "no_machine", f"qualify {name}() with the cell that declares the `state` section")
        return
    _check_arity(report, node, f"{info.name}.{name}", (1, 1), argc)


def _check_delegate(index: ProgramIndex, report: Reporter, call: ast.Call) -> None:
    """`delegate("Cell", "handler", args…)` with literal names must reach a handler."""
    if len(call.args) < 2:
        return
    cell, name = call.args[0], call.args[1]
    if _is_text(cell) and _is_text(name):
        _check_qualified(index, report, call, cell.value, name.value, len(call.args) - 2)


def _is_text(expr: ast.Expr) -> bool:
    """True for a plain string literal."""
    return isinstance(expr, ast.Literal) and isinstance(expr.value, str)


def _check_method(index: ProgramIndex, report: Reporter, info: Optional[CellInfo], node: ast.MethodCall) -> None:
    """`x.m(args)`: a slot method, or UFCS onto a builtin or handler."""
    method = node.method
    if method in SLOT_METHODS:
        return
    if index.is_builtin(method):
        _check_arity(report, node, f"builtin {method}()", index.builtin_arity(method), len(node.args) + 1)
        return
    target = resolve(index, info, method, len(node.args) + 1)
    if target is not None:
        return
    candidates = list(SLOT_METHODS) + index.builtin_names() + list(index.handler_owners)
    fix = suggest(method, candidates)
    report.error(node, f"unknown method .{method}(){did_you_mean(fix, '()')}", "undefined_method",
                 f"`x.{method}(a)` means `{method}(x, a)`: no builtin or handler has that name", fix)
