"""The Jupyter kernelspec: what `soma-kernel install` writes, and where.

`pip install .` already registers the kernelspec (the wheel carries
`share/jupyter/kernels/soma`); this command is for other places: a user's
Jupyter data folder, another prefix, a test's temporary prefix. The spec it
writes is the one in the repository's `kernelspec/soma/`, except that argv[0]
is this interpreter, so the kernel runs where soma-kernel is installed.
The logos are drawn here (`logo_png`), so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import sys
import tempfile
import zlib

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_core import paths as jupyter_paths

KERNEL_NAME = "soma"
KERNEL_NAME_RULE = re.compile(r"^[a-z0-9._\-]+$", re.IGNORECASE)  # jupyter_client's rule for kernel names

KERNEL_SPEC = {
    "argv": ["python", "-m", "soma_kernel.kernel", "-f", "{connection_file}"],
    "display_name": "Soma",
    "language": "soma",
    "interrupt_mode": "signal",
    "metadata": {"debugger": False},
}

LOGO_SIZES = (32, 64)


def kernel_spec(executable: str = "python") -> dict:
    """The kernel.json content, with `executable` as argv[0]."""
    spec = json.loads(json.dumps(KERNEL_SPEC))
    spec["argv"][0] = executable
    if sys.platform == "win32":
        spec["interrupt_mode"] = "message"
    return spec


def logo_png(size: int) -> bytes:
    """A `size`×`size` RGBA PNG: a teal cell body (disc) with a darker nucleus."""
    center = (size - 1) / 2
    outer, nucleus = size * 0.46, size * 0.18
    rows = []
    for y in range(size):
        row = bytearray([0])  # filter type 0 for this scanline
        for x in range(size):
            distance = ((x - center) ** 2 + (y - center) ** 2) ** 0.5
            if distance <= nucleus:
                row += bytes((18, 78, 92, 255))
            elif distance <= outer:
                row += bytes((38, 166, 154, 255))
            else:
                row += bytes((0, 0, 0, 0))
        rows.append(bytes(row))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_spec_dir(directory: str, executable: str = "python") -> str:
    """Write kernel.json and the logos into `directory` (created if needed)."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "kernel.json"), "w", encoding="utf-8") as handle:
        json.dump(kernel_spec(executable), handle, indent=2)
        handle.write("\n")
    for size in LOGO_SIZES:
        with open(os.path.join(directory, f"logo-{size}x{size}.png"), "wb") as handle:
            handle.write(logo_png(size))
    return directory


def install(user: bool = False, prefix: str | None = None, name: str = KERNEL_NAME) -> str:
    """Install the kernelspec and return the folder Jupyter will read it from."""
    with tempfile.TemporaryDirectory() as scratch:
        source = write_spec_dir(os.path.join(scratch, name), sys.executable)
        return KernelSpecManager().install_kernel_spec(source, kernel_name=name, user=user, prefix=prefix)


def spec_dir(user: bool = False, prefix: str | None = None, name: str = KERNEL_NAME) -> str:
    """The folder `install(user, prefix, name)` writes: the user's Jupyter data folder or PREFIX/share/jupyter."""
    root = jupyter_paths.jupyter_data_dir() if user else os.path.join(prefix or sys.prefix, "share", "jupyter")
    return os.path.join(root, "kernels", name)


def valid_name(name: str) -> bool:
    """A kernel name Jupyter accepts (letters, digits, `.`, `_`, `-`), and a folder name: not `.` or `..`."""
    return bool(KERNEL_NAME_RULE.match(name)) and name.strip(".") != ""


def uninstall(user: bool = False, prefix: str | None = None, name: str = KERNEL_NAME) -> str | None:
    """Remove the kernelspec `install(user, prefix, name)` would write; its folder, or None if none was there."""
    if not valid_name(name):
        raise ValueError(f"{name!r} is no kernel name (letters, digits, '.', '_' and '-')")
    folder = spec_dir(user, prefix, name)
    if not os.path.isfile(os.path.join(folder, "kernel.json")):
        return None
    shutil.rmtree(folder)
    return folder


def environment_spec_that_wins(name: str = KERNEL_NAME) -> str | None:
    """In a virtual or conda environment, the environment's own spec `name` if it has one.

    Jupyter run from such an environment reads its data folder before the
    user's (jupyter_core's `prefer_environment_over_user`), so a `--user` spec
    of the same name is seen only by Jupyter outside the environment.
    """
    folder = spec_dir(prefix=sys.prefix, name=name)
    if jupyter_paths.prefer_environment_over_user() and os.path.isfile(os.path.join(folder, "kernel.json")):
        return folder
    return None
