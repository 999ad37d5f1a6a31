"""DOT -> SVG, in a subprocess, with a time limit.

The renderer is `graphviz-pure` (a pip-installed, static build of Graphviz
16.1.0 that needs no system graphviz); a system `dot` is used only when it is
missing. Layout of a densely linked machine can take minutes in any Graphviz,
so every call runs in a child process killed after `timeout` seconds.

The SVG is sanitized for notebooks: the XML prolog, DOCTYPE and comments
(which name the renderer and its version) are removed, so the output is the
same bytes on every machine and run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Optional

DEFAULT_TIMEOUT = 5.0
RENDERER_NAMES = ("graphviz-pure", "dot")


class RenderError(Exception):
    """The DOT source could not be turned into SVG (no renderer, bad DOT, crash)."""


class RenderTimeout(RenderError):
    """Layout took longer than the time limit; the renderer was killed."""


def find_renderer() -> Optional[str]:
    """Path of the DOT renderer executable, or None when none is installed.

    graphviz-pure is looked up next to the running interpreter first (the
    venv's scripts folder, which avoids slow launcher shims), then on PATH;
    a system `dot` comes last.
    """
    for name in RENDERER_NAMES:
        for folder in _script_folders():
            candidate = folder / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        found = shutil.which(name)
        if found:
            return found
    return None


def _script_folders() -> list[Path]:
    """Folders where pip puts console scripts for this interpreter."""
    folders = [Path(sysconfig.get_path("scripts")), Path(sys.executable).parent]
    return list(dict.fromkeys(folders))


def render_svg(dot_source: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """Lay out `dot_source` and return the sanitized SVG text.

    Raises RenderTimeout after `timeout` seconds and RenderError when no
    renderer is installed or it rejects the source.
    """
    exe = find_renderer()
    if exe is None:
        raise RenderError("no DOT renderer found (pip install graphviz-pure)")
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot_source.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise RenderTimeout(f"layout took longer than {timeout:g} s") from exc
    except OSError as exc:
        raise RenderError(f"cannot run {exe}: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RenderError(message[-1] if message else f"renderer exited with {done.returncode}")
    return sanitize_svg(done.stdout.decode("utf-8"))


_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*")
_DOCTYPE = re.compile(r"<!DOCTYPE[^>]*>\s*")
_COMMENT = re.compile(r"<!--.*?-->\s*", re.S)


def sanitize_svg(svg: str) -> str:
    """Drop the XML prolog, DOCTYPE and comments, keeping only `<svg>…</svg>`."""
    svg = _PROLOG.sub("", svg)
    svg = _DOCTYPE.sub("", svg)
    svg = _COMMENT.sub("", svg)
    return svg.strip() + "\n"
