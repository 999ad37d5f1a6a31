"""Text a program made, shown to a person who must decide on it (`approve? <action> [y/N]`).

What the person reads must be what the program wrote: a character that moves,
hides or reorders the text around it (C0 and C1 controls, DEL, the
bidirectional overrides and isolates U+202A–202E / U+2066–2069, U+200E/F,
U+061C, zero-width and other format characters, line and paragraph
separators) is shown as its escape, `\\u202e`; and a very long action is cut,
with a marker saying how much was left out, so it cannot push the question
off the screen. The program still receives, and the trace still records,
the action as it was written.
"""

from __future__ import annotations

import unicodedata

MAX_SHOWN_ACTION = 500
"""The most characters of an action the approval question shows."""

_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def needs_escape(char: str) -> bool:
    """True for a character that is invisible or changes how the text around it is displayed."""
    return unicodedata.category(char) in _HIDDEN_CATEGORIES


def escape_char(char: str) -> str:
    """`\\n`, `\\x7f`, `\\u202e` or `\\U000e0001`: the escape a reader can type back."""
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown_action(text: str, limit: int = MAX_SHOWN_ACTION) -> str:
    """`text` safe to show: hidden characters escaped (a backslash doubled when any is), cut at `limit`.

    A cut action keeps whole escapes and ends with `… (N more characters)`,
    N counted in the escaped text.
    """
    if not any(needs_escape(c) for c in text):
        return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"
    pieces = [escape_char(c) if needs_escape(c) else "\\\\" if c == "\\" else c for c in text]
    total = sum(len(p) for p in pieces)
    kept, width = [], 0
    for piece in pieces:
        if width + len(piece) > limit:
            return f"{''.join(kept)}… ({total - width} more characters)"
        kept.append(piece)
        width += len(piece)
    return "".join(kept)
