"""One diagnostic type for the parser, checker, verifier and runtime.

A `Diagnostic` knows where it happened (origin + Span) and renders two ways:
`render()` gives the people's form (file:line:col, the source line, a caret
under the span, a hint), `to_json()` the machine form used by `--json`.
"""

from __future__ import annotations

from typing import Callable, Optional

from .records import Record
from .spans import NO_SPAN, Span


class Suggestion(Record, frozen=True):
    """A spelling fix a diagnostic offers: the name as `written` in the source and the known name it is
    probably `meant` to be (what "did you mean …?" says, kept apart so an editor can apply it)."""

    written: str
    meant: str


class Diagnostic(Record):
    """A message about a place in a source text.

    severity is "error", "warning" or "note"; kind is a stable machine name
    (`parse`, `undefined_name`, `invalid_transition`…); hint is an optional
    fix shown under the caret; suggestion the did-you-mean spelling fix the
    message names, if any (the written name lies inside the span).
    """

    severity: str
    message: str
    span: Span = NO_SPAN
    origin: str = "<input>"
    kind: str = "error"
    hint: Optional[str] = None
    suggestion: Optional[Suggestion] = None

    def location(self) -> str:
        """`origin:line:col`, or just the origin when the place is unknown."""
        if self.span.line <= 0:
            return self.origin
        return f"{self.origin}:{self.span.line}:{self.span.col}"

    def render(self, source: Optional[str] = None) -> str:
        """The diagnostic for people: header, source line, caret, hint."""
        lines = [f"{self.severity}: {self.location()}: {self.message}"]
        if source is not None and self.span.line > 0:
            lines.extend(caret_lines(source, self.span))
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The diagnostic as a JSON-ready dict."""
        return {
            "level": self.severity,
            "kind": self.kind,
            "message": self.message,
            "file": self.origin,
            "line": self.span.line,
            "col": self.span.col,
            "fix": self.hint,
        }


def caret_lines(source: str, span: Span) -> list[str]:
    """The source line of `span` with a gutter, and a caret line under it.

    The caret covers the span on its first line (at least one character).
    """
    text_lines = source.splitlines()
    text = text_lines[span.line - 1].expandtabs(1) if 0 < span.line <= len(text_lines) else ""
    gutter = f"{span.line} | "
    width = 1
    if span.end_line == span.line and span.end_col > span.col:
        width = span.end_col - span.col
    width = max(1, min(width, max(1, len(text) - span.col + 2)))
    caret = " " * (len(gutter) - 2) + "| " + " " * max(span.col - 1, 0) + "^" * width
    return [gutter + text, caret]


class MissingName(Record, frozen=True):
    """What a name lookup did not find, for hints built from fields, not text.

    role is `cell`, `handler` (a handler of that name exists, with another
    number of arguments), `function`, `variable` or `model` (think() found no
    model and no scripted turn to answer it); owner the cell asked
    (`Cell.name(…)`), nargs the number of arguments of the call.
    """

    role: str
    name: str
    owner: Optional[str] = None
    nargs: Optional[int] = None


class SomaError(Exception):
    """A Soma runtime error: what `try` catches and `assert_fails` expects.

    kind is the error kind (`invariant`, `guard_failed`, `llm`, a `require`
    tag…), detail the message alone; `str(err)` is the error text
    `"<kind>: <detail>"` (or the message as the runtime phrases it when
    `text` is given). `missing` names what a failed lookup did not find;
    `hint` is the fix, when the place that raises it knows it best.
    """

    def __init__(self, kind: str, detail: str = "", span: Span = NO_SPAN,
                 text: Optional[str] = None, catchable: bool = True, missing: Optional[MissingName] = None,
                 hint: Optional[str] = None):
        self.kind = kind
        self.detail = detail
        self.span = span
        self.text = text if text is not None else (f"{kind}: {detail}" if detail else kind)
        self.catchable = catchable
        self.missing = missing
        self.hint = hint
        super().__init__(self.text)

    def __str__(self) -> str:
        return self.text

    def located(self, node, replace: bool = False) -> "SomaError":
        """This error, given the span of `node` (anything with a `.span`) when it has none.

        The one place a runtime error gets its position: the node that was
        running when a span-less error (from a builtin, an operator, a type
        check) went through it. `replace` moves an error that has a span to
        `node` (an invariant refusal points at the write, not at the rule).
        """
        if node is not None and (replace or self.span.line == 0):
            self.span = node.span
        return self


def locating(node, function: Callable) -> Callable:
    """`function`, whose span-less SomaErrors get `node`'s span (see `SomaError.located`)."""
    def run(*args):
        try:
            return function(*args)
        except SomaError as err:
            raise err.located(node)

    return run


class SomaSyntaxError(Exception):
    """Raised by the parser; carries the Diagnostic and whether more input
    could complete the text (`incomplete`, for the kernel's is_complete)."""

    def __init__(self, diagnostic: Diagnostic, incomplete: bool = False):
        self.diagnostic = diagnostic
        self.incomplete = incomplete
        super().__init__(diagnostic.message)
