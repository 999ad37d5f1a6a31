"""The kind `llm` error, worded as the reference words it.

Texts starting `think()` are shown as they are; a text written `llm: …`
keeps that prefix as its kind. Either way the error is catchable with `try`
and carries no traceback.
"""

from __future__ import annotations

from ...core.diagnostics import SomaError
from ..mocks import NO_MODEL


def llm_error(text: str) -> SomaError:
    """A catchable kind `llm` error whose shown text is exactly `text`."""
    detail = text[len("llm: "):] if text.startswith("llm: ") else text
    return SomaError("llm", detail, text=text)


def no_model_error(text: str) -> SomaError:
    """A kind `llm` error for a think() that no model answers (no key, no scripted turn left): `missing` says so."""
    error = llm_error(text)
    error.missing = NO_MODEL
    return error



class ProviderAnswerError(SomaError):
    """A kind `llm` error that is the provider's answer itself (a refusing status, an error
    body, a body that is no JSON), as opposed to no answer (a timeout, a refused
    connection): what a cassette records, and replays as the same error."""


def answer_error(text: str) -> ProviderAnswerError:
    """The ProviderAnswerError whose shown text is exactly `text` (worded as `llm_error`)."""
    detail = text[len("llm: "):] if text.startswith("llm: ") else text
    return ProviderAnswerError("llm", detail, text=text)
