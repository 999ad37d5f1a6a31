"""Input/output builtins: print, write_str, read_file, write_file (files within a running tool's capability).

`print` writes to `sys.stdout` as it is at call time, so the Jupyter kernel
and the test runner can capture it by swapping sys.stdout."""

from __future__ import annotations

import sys

from ...core.files import read_text_bounded
from ..capabilities import require_file
from ..values import display
from .checks import expect_str
from .registry import builtin

GROUP = "io"


@builtin(GROUP, "print(args...) -> ()", "Print arguments space-separated, then a newline.",
         min_args=0, max_args=None, pure=False)
def print_(*args):
    """print("a", 1) writes "a 1\\n"."""
    sys.stdout.write(" ".join(display(a) for a in args) + "\n")


@builtin(GROUP, "write_str(s: String) -> Int", "Write s to stdout without a newline; returns the byte count.", pure=False)
def write_str(s):
    """write_str("hi") writes "hi" and answers 2."""
    text = display(s)
    sys.stdout.write(text)
    return len(text.encode("utf-8"))


@builtin(GROUP, "read_file(path: String) -> String | {error}", "Read a file as a string; {error} on failure.", pure=False)
def read_file(path):
    """read_file("notes.txt")."""
    require_file("read_file", expect_str("read_file", path), "read")
    try:
        return read_text_bounded(path)
    except (OSError, UnicodeDecodeError) as err:
        return {"error": f"{path}: {err.strerror if isinstance(err, OSError) and err.strerror else err}"}


@builtin(GROUP, "write_file(path: String, content) -> Bool | {error}",
         "Write content (stringified) to a file; true on success.", pure=False)
def write_file(path, content):
    """write_file("out.txt", "hi") = true."""
    require_file("write_file", expect_str("write_file", path), "write")
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(display(content))
        return True
    except OSError as err:
        return {"error": f"{path}: {err.strerror or err}"}
