"""Keeping keys out of what is shown: error texts, retry lines, cassettes.

`shown_url` hides the credentials a url may carry (a password in the
user-info part, every query value); `redact` replaces each known secret in
a text by `***`. Every message that names an endpoint goes through both, and
a text that is cut short is masked before it is cut (`redacted_prefix`).
"""

from __future__ import annotations

from typing import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"


def shown_url(url: str) -> str:
    """The url as it may be printed: no user-info, no query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc.rpartition("@")[2]
    if "@" in parts.netloc:
        netloc = f"{MASK}@{netloc}"
    query = urlencode([(name, MASK) for name, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret (longest first) replaced by `***`."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def redacted_prefix(text: str, limit: int, secrets: Iterable[str]) -> str:
    """The first `limit` characters of `text` once every secret in it is masked: masking comes
    first, so a cut can never leave the start of a key behind."""
    return redact(text, secrets)[:limit]


def url_secrets(url: str) -> list[str]:
    """The credential parts of a url (password, query values), to redact from provider texts."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = [value for _, value in parse_qsl(parts.query) if len(value) >= 4]
    if parts.password:
        found.append(parts.password)
    return found


def redact_data(value, secrets: Iterable[str]):
    """A JSON value with every secret in its string values replaced by `***`. Its structure and
    its field names are kept whatever the secret is (replacing text in the JSON could break both)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [redact_data(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: redact_data(item, secrets) for key, item in value.items()}
    return value
