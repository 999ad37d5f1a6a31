"""Hashing builtins: sha256, hmac_sha256, secure_eq, random_token."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from ...core.diagnostics import SomaError
from ..values import display
from .checks import expect_int
from .registry import builtin

GROUP = "io"

# The most random bytes random_token() will draw in one call.
MAX_TOKEN_BYTES = 1_000_000


def _bytes(v) -> bytes:
    """The UTF-8 bytes of a value's display text."""
    return (v if type(v) is str else display(v)).encode("utf-8")


@builtin(GROUP, "sha256(s: String) -> String", "Hex SHA-256 digest of the string's UTF-8 bytes.")
def sha256(s):
    """sha256("") = "e3b0c442…"."""
    return hashlib.sha256(_bytes(s)).hexdigest()


@builtin(GROUP, "hmac_sha256(key: String, message: String) -> String", "Hex HMAC-SHA256 of message under key.")
def hmac_sha256(key, message):
    """hmac_sha256("k", "msg")."""
    return hmac.new(_bytes(key), _bytes(message), hashlib.sha256).hexdigest()


@builtin(GROUP, "secure_eq(a: String, b: String) -> Bool", "Constant-time string comparison.")
def secure_eq(a, b):
    """secure_eq("x", "x") = true."""
    return hmac.compare_digest(_bytes(a), _bytes(b))


@builtin(GROUP, "random_token(bytes?: Int) -> String", "Random hex token (default 32 bytes).", pure=False)
def random_token(size=32):
    """random_token(16) has 32 hex characters."""
    count = expect_int("random_token", size)
    if not 0 <= count <= MAX_TOKEN_BYTES:
        raise SomaError("range", f"random_token(): size must be between 0 and {MAX_TOKEN_BYTES} bytes, got {count}")
    return secrets.token_hex(count)
