"""Files and settings: %load FILE.cell, %save FILE.cell and the %%toml cell magic."""

from __future__ import annotations

import os

from ...session import MagicError
from . import Magic, split_args


def _path(session, args: str, usage: str) -> str:
    """The one FILE argument, relative to the session's folder."""
    words = split_args(args, usage)
    if len(words) != 1:
        raise MagicError(f"usage: {usage}")
    return os.path.join(session.directory, os.path.expanduser(words[0]))


def load_magic(session, run, args: str, body) -> None:
    """%load FILE.cell: run a program file in this cell (its definitions belong to this cell).

    A soma.toml beside the file becomes the session's soma.toml.
    """
    from ...loader import read_source
    from ...project import load_project

    path = _path(session, args, "%load FILE.cell")
    text = read_source(path)
    shown = os.path.relpath(path, session.directory)
    project = load_project(os.path.dirname(os.path.abspath(path)))
    if project is not None:
        session.set_project(project)
        run.out(f"using {os.path.relpath(project.path, session.directory)}")
    before = set(session.definitions)
    session.run_soma(run, text, shown)
    added = [key for key in session.definitions if key not in before or session.definitions[key].origin == shown]
    run.out(f"loaded {len(added)} definition(s) from {shown}: {', '.join(name for _, name in added) or 'none'}")


def save_magic(session, run, args: str, body) -> None:
    """%save FILE.cell: write every definition of the session as one program."""
    path = _path(session, args, "%save FILE.cell")
    if not session.definitions:
        raise MagicError("nothing is defined yet: there is nothing to save")
    text = session.program_text()
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise MagicError(f"cannot write {path}: {err.strerror}") from None
    run.out(f"saved {len(session.definitions)} definition(s) to {os.path.relpath(path, session.directory)}")


def toml_magic(session, run, args: str, body) -> None:
    """%%toml: the cell body replaces the session's soma.toml (an empty body removes it)."""
    from ...project import parse_project_text

    if args.strip():
        raise MagicError("usage: %%toml on the first line, the soma.toml text below it")
    if not body.strip():
        session.set_project(None)
        run.out("soma.toml removed: no [agent] or [verify] settings")
        return
    lines_above = run.code.count("\n") - body.count("\n")
    project = parse_project_text("\n" * lines_above + body, run.origin)  # errors at the cell's own lines
    session.set_project(project)
    run.out("soma.toml replaced: " + _summary(project))


def _summary(project) -> str:
    """One line naming what the soma.toml sets."""
    parts = []
    if project.agent.get("mock"):
        parts.append(f"[agent] mock = {project.agent['mock']!r}")
    if project.verify.has_properties or project.verify.cells:
        parts.append("[verify] properties")
    if project.package:
        parts.append("[package]")
    return ", ".join(parts) or "no [agent] or [verify] settings"


MAGICS = (
    Magic("load", "%load FILE.cell", "run a program file in this cell (and use the soma.toml beside it)",
          load_magic),
    Magic("save", "%save FILE.cell", "write the session's definitions as one program", save_magic),
    Magic("toml", "%%toml", "replace the session's soma.toml with the cell's text", toml_magic, cell=True),
)
