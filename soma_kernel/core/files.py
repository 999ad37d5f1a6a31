"""Reading a file with a size limit: every file the kernel reads for the user goes through here.

A file from elsewhere is data, and a `%load /dev/zero`, a 5 GB CSV or a
cassette that never ends must fail fast with a message instead of filling
memory. The limit is `SOMA_MAX_FILE_BYTES` (bytes; a `K`, `M` or `G` suffix
multiplies by 1024, 1024² or 1024³), default 32 MiB. Reading stops one byte
past the limit, so a device or a pipe that never ends costs at most that.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from typing import Optional

LIMIT_VARIABLE = "SOMA_MAX_FILE_BYTES"
DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024
_SUFFIXES = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
_CHUNK = 1024 * 1024


class FileTooLarge(OSError):
    """A file is larger than the read limit (an OSError, so `except OSError` callers word it too).

    `strerror` is the whole reason, ready to follow `path: `; `limit` is the
    limit in bytes.
    """

    def __init__(self, path: str, limit: int):
        reason = (f"larger than the {describe_size(limit)} read limit "
                  f"(set {LIMIT_VARIABLE} to read bigger files)")
        super().__init__(errno.EFBIG, reason, path)
        self.limit = limit


class BadLimit(ValueError):
    """`SOMA_MAX_FILE_BYTES` holds something that is not a size."""


def describe_size(count: int) -> str:
    """A byte count as people read it: `32 MiB`, `1.5 KiB`, `900 bytes`."""
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if count >= size:
            value = count / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{count} bytes"


def parse_size(text: str) -> int:
    """`"1048576"`, `"64M"`, `"2g"` as bytes; BadLimit when it is not a positive size."""
    word = text.strip()
    factor = _SUFFIXES.get(word[-1:].upper(), 1) if word else 1
    digits = word[:-1] if factor != 1 else word
    if not digits.isdigit() or int(digits) <= 0:
        raise BadLimit(f"{LIMIT_VARIABLE}={text!r} is not a size in bytes (for example 1000000, 64M or 1G)")
    return int(digits) * factor


def max_file_bytes() -> int:
    """The read limit in force: `SOMA_MAX_FILE_BYTES`, else the default (BadLimit when unreadable)."""
    text = os.environ.get(LIMIT_VARIABLE)
    return parse_size(text) if text else DEFAULT_MAX_FILE_BYTES


def read_bytes_bounded(path: str, limit: Optional[int] = None) -> bytes:
    """The bytes of `path`, or FileTooLarge once more than `limit` (default: the read limit) arrive.

    Other failures are the OSError `open` raises (FileNotFoundError,
    IsADirectoryError, PermissionError …); a FIFO is refused rather than
    waited on. A BadLimit is reported as an OSError naming the variable.
    """
    if limit is None:
        try:
            limit = max_file_bytes()
        except BadLimit as err:
            raise OSError(errno.EINVAL, str(err), path) from None
    if stat.S_ISFIFO(_mode(path)):
        raise OSError(errno.EINVAL, "a named pipe, not a file", path)
    chunks = []
    total = 0
    with open(path, "rb") as handle:
        while total <= limit:
            chunk = handle.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
    raise FileTooLarge(path, limit)


def read_text_bounded(path: str, encoding: str = "utf-8", newline: Optional[str] = None,
                      limit: Optional[int] = None) -> str:
    """The text of `path` as `open(path, encoding=…, newline=…).read()` gives it, within the read limit.

    Raises what `read_bytes_bounded` raises, and UnicodeDecodeError for
    bytes that are not `encoding`.
    """
    data = read_bytes_bounded(path, limit)
    with io.TextIOWrapper(io.BytesIO(data), encoding=encoding, newline=newline) as text:
        return text.read()


def _mode(path: str) -> int:
    """The file type bits of `path` (0 when it cannot be stat'ed: `open` then says why)."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return 0
