"""Skeleton frames (§2.6): a signal's flesh body stays inside its frame.

A frame lists what the body may call (effectful builtins and handlers),
write, read (a write implies a read) and which edges it may move along.
Pure builtins need no declaration; `transition()` is governed by `moves`
(a 2-argument call's literal target must be the target of a declared move;
a 3-argument call must name a declared move); `get_status()` only reads the
machine. `body_usage` says what a body does, `violations` what exceeds the
frame; `soma skeleton` prints both.
"""

from __future__ import annotations

from typing import Optional

from ..core.records import Record, fresh
from ..syntax import ast
from ..syntax.machines import MachineModel
from . import calls as call_rules
from .context import CellInfo, ProgramIndex, Reporter, did_you_mean, suggest
from .machines import literal_state
from .walk import iter_tree

SLOT_WRITERS = ("set", "delete", "push", "append")
FRAME_FREE_BUILTINS = ("transition", "get_status")


class Use(Record):
    """One thing a body does: `what` is a callee, slot or move text; `node` where."""

    what: str
    node: ast.Node


class FrameUsage(Record):
    """What a body calls, writes, reads and moves, in source order."""

    calls: list[Use] = fresh(list)
    writes: list[Use] = fresh(list)
    reads: list[Use] = fresh(list)
    moves: list[Use] = fresh(list)


class Violation(Record):
    """A use outside the frame, with the message check reports."""

    kind: str
    use: Use
    message: str


def frame_of(signal: ast.Signal) -> ast.Frame:
    """A signal's frame (an absent frame allows nothing)."""
    return signal.frame if signal.frame is not None else ast.Frame()


def body_usage(index: ProgramIndex, info: CellInfo, handler: ast.Handler) -> FrameUsage:
    """What one handler body calls, writes, reads and moves."""
    facts = index.facts(handler)
    usage = FrameUsage()
    written_roots: set[int] = set()
    for use in facts.methods:
        if not use.local and use.root in info.slots and use.node.method in SLOT_WRITERS:
            usage.writes.append(Use(use.root, use.node))
            written_roots.add(id(_root_node(use.node.receiver)))
    for use in facts.assigns:
        if not use.local and use.root in info.slots and not isinstance(use.node.target, ast.Name):
            usage.writes.append(Use(use.root, use.node))
            written_roots.add(id(_root_node(use.node.target)))
    for use in facts.names:
        if not use.local and use.node.id in info.slots and id(use.node) not in written_roots:
            usage.reads.append(Use(use.node.id, use.node))
    for use in facts.calls:
        callee = _frame_callee(index, info, use.node, use.local)
        if callee is not None:
            usage.calls.append(Use(callee, use.node))
    for node in iter_tree(handler.body):
        if isinstance(node, ast.Call) and node.cell is not None:
            usage.calls.append(Use(f"{node.cell}.{node.func}", node))
    usage.calls.sort(key=lambda u: (u.node.span.start, u.what))
    for site in facts.transitions:
        usage.moves.append(Use(_move_text(site.call, info.model), site.call))
    return usage


def _root_node(expr: ast.Node) -> ast.Node:
    """The Name an `a.b[c]` chain starts from."""
    current = expr
    while isinstance(current, (ast.Field, ast.Index)):
        current = current.obj
    return current


def _frame_callee(index: ProgramIndex, info: CellInfo, call: ast.Call, local: bool) -> Optional[str]:
    """The name a frame must declare for a bare call, or None (pure / free)."""
    if local or call.func in FRAME_FREE_BUILTINS:
        return None
    target = call_rules.resolve(index, info, call.func, len(call.args))
    if target is None or (target.kind == "builtin" and index.is_pure_builtin(call.func)):
        return None
    return call.func


def _move_text(call: ast.Call, model: Optional[MachineModel]) -> str:
    """`a -> b` for a 3-argument transition, `-> b` for 2, `-> ?` when computed."""
    states = [literal_state(arg, model) if model else None for arg in call.args[1:]]
    target = states[-1] if states else None
    if len(states) == 2 and states[0] is not None and target is not None:
        return f"{states[0]} -> {target}"
    return f"-> {target if target is not None else '?'}"


def violations(signal: ast.Signal, usage: FrameUsage) -> list[Violation]:
    """Every use of `usage` that `signal`'s frame does not allow."""
    frame = frame_of(signal)
    found = []
    name = signal.name
    for use in usage.calls:
        short = use.what.split(".")[-1]
        if use.what not in frame.calls and short not in frame.calls:
            found.append(Violation("calls", use, f"frame: signal '{name}' calls {use.what}() but its frame "
                                   f"does not declare `calls {short}`"))
    for use in usage.writes:
        if use.what not in frame.writes:
            found.append(Violation("writes", use, f"frame: signal '{name}' writes slot '{use.what}' but its "
                                   f"frame does not declare `writes {use.what}`"))
    for use in usage.reads:
        if use.what not in frame.reads and use.what not in frame.writes:
            found.append(Violation("reads", use, f"frame: signal '{name}' reads slot '{use.what}' but its "
                                   f"frame does not declare `reads {use.what}`"))
    moves = [f"{a} -> {b}" for a, b in frame.moves]
    targets = {b for _, b in frame.moves}
    for use in usage.moves:
        message = _move_violation(name, use.what, moves, targets)
        if message:
            found.append(Violation("moves", use, message))
    return found


def _move_violation(name: str, move: str, moves: list[str], targets: set[str]) -> Optional[str]:
    """Why a move is outside the frame, or None when it is allowed."""
    if move == "-> ?":
        return (f"frame: signal '{name}' calls transition() with a computed target, so its frame's `moves` "
                "cannot be checked")
    if move.startswith("-> "):
        target = move[3:]
        if target in targets:
            return None
        return f"frame: signal '{name}' moves to '{target}' but its frame declares no move into '{target}'"
    if move in moves:
        return None
    return f"frame: signal '{name}' moves {move} but its frame does not declare `moves {move}`"


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Check every skeleton signal's frame and its flesh body against it."""
    for info in index.cells.values():
        if info.decl.kind != "skeleton":
            continue
        for signal in info.signals.values():
            _check_frame_names(index, report, info, signal)
            handler = info.handler(signal.name)
            if handler is None:
                continue
            for violation in violations(signal, body_usage(index, info, handler)):
                report.error(violation.use.node, violation.message, "frame", _fix(signal, violation))


def _fix(signal: ast.Signal, violation: Violation) -> str:
    """How to resolve a frame violation."""
    what = violation.use.what
    if violation.kind == "moves":
        edge = f"<from> {what}" if what.startswith("-> ") else what
        return f"add `moves {edge}` to signal '{signal.name}', or remove the transition from its body"
    return f"add `{violation.kind} {what.split('.')[-1]}` to signal '{signal.name}', or remove the " \
           f"{violation.kind[:-1]} from its body"


def _check_frame_names(index: ProgramIndex, report: Reporter, info: CellInfo, signal: ast.Signal) -> None:
    """A frame names slots, callables and edges that exist."""
    frame = frame_of(signal)
    for slot in frame.writes + frame.reads:
        if slot not in info.slots:
            fix = suggest(slot, info.slots)
            report.error(frame, f"frame of signal '{signal.name}' names slot '{slot}', which cell '{info.name}' "
                         f"does not declare{did_you_mean(fix)}", "frame", "name a memory slot", fix)
    for callee in frame.calls:
        short = callee.split(".")[-1]
        if not index.is_builtin(short) and short not in index.handler_owners:
            fix = suggest(short, info.handler_names())
            report.error(frame, f"frame of signal '{signal.name}' declares `calls {callee}`, which is neither a "
                         f"builtin nor a handler{did_you_mean(fix)}", "frame",
                         "name an effectful builtin (think, set_budget, approve, …) or a handler", fix)
    for src, dst in frame.moves:
        if info.model is None or not info.model.has_edge(src, dst):
            report.error(frame, f"frame of signal '{signal.name}' declares `moves {src} -> {dst}`, which is not "
                         f"an edge of the cell's state machine", "frame", "name a declared edge")
