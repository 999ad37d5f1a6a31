"""The kind `llm` error, worded as the reference words it.

Texts starting `think()` are shown as they are; a text written `llm: …`
keeps that prefix as its kind. Either way the error is catchable with `try`
and carries no traceback.
"""

from __future__ import annotations

from ...core.diagnostics import SomaError


def llm_error(text: str) -> SomaError:
    """A catchable kind `llm` error whose shown text is exactly `text`."""
    detail = text[len("llm: "):] if text.startswith("llm: ") else text
    return SomaError("llm", detail, text=text)
