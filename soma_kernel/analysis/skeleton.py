"""`soma skeleton FILE Cell.signal`: one signal's frame and what its body does.

The text shows the signal as the skeleton declares it, its frame clause by
clause (`none` for a kind it does not declare), then the flesh body's line
range and every call, write, read and move the body makes, each with its
line; a use outside the frame is marked `✗ outside the frame`.
"""

from __future__ import annotations

from ..core.records import Record
from ..syntax import ast
from .context import ProgramIndex, did_you_mean, suggest
from .describe import LineWords, plain_line_words, signal_text
from .frames import FrameUsage, Use, body_usage, frame_of, violations

KINDS = ("calls", "writes", "reads", "moves")


class SkeletonError(Exception):
    """An unknown cell or signal, worded for the user (`hint` is the fix, if any)."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


class Source(Record, frozen=True):
    """What the program was read from, as messages name it: `this file`, and the command that describes a cell
    (`{cell}` stands for the cell's name)."""

    name: str = "this file"
    describe: str = "`soma-kernel describe FILE --faces`"


def skeleton_text(program: ast.Program, target: str, line_words: LineWords = plain_line_words,
                  source: Source = Source()) -> str:
    """The frame report of `Cell.signal`; SkeletonError when it does not exist.

    `line_words(first, last=None)` names source lines (`line N` / `lines A–B` unless given);
    `source` names where the program came from in the messages (a file, or a notebook's session).
    """
    cell_name, dot, signal_name = target.partition(".")
    if not dot or not cell_name or not signal_name:
        raise SkeletonError(f"expected Cell.signal, got '{target}'")
    index = ProgramIndex(program)
    skeletons = [c.name for c in index.cells.values() if c.decl.kind == "skeleton"]
    info = index.cells.get(cell_name)
    if info is None or info.decl.kind != "skeleton":
        known = (f"skeleton agents here: {', '.join(skeletons)}" if skeletons
                 else f"{source.name} declares no skeleton agent")
        what = "is not a skeleton agent" if info is not None else "is not declared"
        hint = (f"only a skeleton agent's signals have frames; {source.describe.format(cell=cell_name)} "
                "lists this cell's contract") if info is not None else ""
        raise SkeletonError(f"cell '{cell_name}' {what}{did_you_mean(suggest(cell_name, skeletons))} ({known})", hint)
    signal = info.signals.get(signal_name)
    if signal is None:
        raise SkeletonError(f"skeleton agent '{cell_name}' has no signal '{signal_name}'"
                            f"{did_you_mean(suggest(signal_name, info.signals))} (signals: {', '.join(info.signals)})")
    heading = f"skeleton agent {cell_name} — signal {signal_text(signal)} ({line_words(signal.span.line)})"
    lines = [heading, "  frame:"]
    frame = frame_of(signal)
    declared = {"calls": frame.calls, "writes": frame.writes, "reads": frame.reads,
                "moves": [f"{a} -> {b}" for a, b in frame.moves]}
    lines += [f"    {kind:<7}{', '.join(declared[kind]) or 'none'}" for kind in KINDS]
    handler = info.handler(signal_name)
    if handler is None:
        lines.append(f"  flesh body: none (no `on {signal_name}` in flesh {cell_name})")
        return "\n".join(lines) + "\n"
    lines.extend(_body_lines(signal, handler, body_usage(index, info, handler), line_words))
    return "\n".join(lines) + "\n"


def _body_lines(signal: ast.Signal, handler: ast.Handler, usage: FrameUsage, line_words: LineWords) -> list[str]:
    """The body's line range, its uses by kind, and the verdict."""
    span = handler.span
    lines = [f"  flesh body: on {handler.name} ({line_words(span.line, span.end_line)})"]
    outside = {id(v.use) for v in violations(signal, usage)}
    for kind in KINDS:
        uses = getattr(usage, kind)
        lines.append(f"    {kind:<7}{_uses_text(kind, uses, outside, line_words) if uses else 'none'}")
    if outside:
        lines.append(f"  ✗ {len(outside)} use(s) outside the frame: soma check refuses this body")
    else:
        lines.append("  ✓ the body stays inside its frame")
    return lines


def _uses_text(kind: str, uses: list[Use], outside: set[int], line_words: LineWords) -> str:
    """`classify() (line 53), think() (line 47) ✗ outside the frame`."""
    parts = []
    for use in uses:
        what = _use_label(kind, use.what)
        mark = " ✗ outside the frame" if id(use) in outside else ""
        parts.append(f"{what} ({line_words(use.node.span.line)}){mark}")
    return ", ".join(parts)


def _use_label(kind: str, what: str) -> str:
    """`think()` for a call, `(any) -> done` for a 2-argument move, else as is."""
    if kind == "calls":
        return f"{what}()"
    if kind == "moves" and what.startswith("-> "):
        return f"(any) {what}"
    return what
