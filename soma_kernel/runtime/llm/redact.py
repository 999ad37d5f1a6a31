"""Keeping keys out of what is shown: error texts, retry lines, cassettes.

`shown_url` hides the credentials a url may carry (a password in the
user-info part, every query value); `redact` replaces each known secret in
a text by `***`. Every message that names an endpoint goes through both.
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
