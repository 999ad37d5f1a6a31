"""Files and settings: %load FILE.cell, %save FILE.cell, %cassette FILE and the %%toml cell magic."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

from ...core.diagnostics import SomaError
from ...project.loader import read_source
from ...project.settings import load_project, parse_project_text, unknown_model
from ...runtime.llm.config import cassette_mode
from ...runtime.llm.redact import shown_url
from .base import Magic, MagicError, split_args


def _path(session, args: str, usage: str) -> str:
    """The one FILE argument, relative to the session's folder."""
    words = split_args(args, usage)
    if len(words) != 1:
        raise MagicError(f"usage: {usage}", at_name=True)
    return os.path.join(session.directory, os.path.expanduser(words[0]))


def load_magic(session, run, args: str, body) -> None:
    """%load FILE.cell: run a program file in this cell (its definitions belong to this cell).

    A soma.toml beside the file becomes the session's soma.toml.
    """
    path = _path(session, args, "%load FILE.cell")
    text = read_source(path)
    shown = os.path.relpath(path, session.directory)
    project = load_project(os.path.dirname(os.path.abspath(path)))
    if project is not None:
        session.set_project(project)
        run.out(f"using {os.path.relpath(project.path, session.directory)}")
    before = set(session.definitions)
    session.program_path = path
    session.run_soma(run, text, shown)
    added = [key for key in session.definitions if key not in before or session.definitions[key].origin == shown]
    run.out(f"loaded {len(added)} definition(s) from {shown}: {', '.join(name for _, name in added) or 'none'}")


SAVE_USAGE = "%save FILE.cell [--force]"


def save_magic(session, run, args: str, body) -> None:
    """%save FILE.cell [--force]: write every definition of the session as one program. An existing
    file, or a symbolic link, is never replaced or written through without --force."""
    words = split_args(args, SAVE_USAGE)
    force = "--force" in words
    words = [word for word in words if word != "--force"]
    if len(words) != 1:
        raise MagicError(f"usage: {SAVE_USAGE}", at_name=True)
    path = os.path.join(session.directory, os.path.expanduser(words[0]))
    shown = os.path.relpath(path, session.directory)
    if not session.definitions:
        raise MagicError("nothing is defined yet: there is nothing to save")
    text = session.program_text()
    if force:
        written, how = _replace(path, text), ""
        if os.path.islink(path):
            how = f" (through the symbolic link, to {written})"
    else:
        _create(path, shown, text)
        how = ""
    run.out(f"saved {len(session.definitions)} definition(s) to {shown}{how}")


def _create(path: str, shown: str, text: str) -> None:
    """Write text to a new file at path; an existing file or a symbolic link there is refused, untouched."""
    try:
        with open(path, "x", encoding="utf-8") as handle:  # O_EXCL: fails on any existing name, links included
            handle.write(text)
    except FileExistsError:
        if os.path.islink(path):
            raise MagicError(f"{shown} is a symbolic link (to {os.readlink(path)}): %save does not write "
                             f"through it; `%save {shown} --force` writes to where it points", shown) from None
        raise MagicError(f"{shown} exists: %save never replaces a file; `%save {shown} --force` "
                         "overwrites it", shown) from None
    except OSError as err:
        raise MagicError(f"cannot write {path}: {err.strerror}", path) from None


def _replace(path: str, text: str) -> str:
    """Write text over the file path names (through a symbolic link), whole or not at all; that file's path."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".soma-save-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            if os.path.exists(target):
                shutil.copymode(target, temporary)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as err:
        raise MagicError(f"cannot write {target}: {err.strerror}", path) from None
    return target


def toml_magic(session, run, args: str, body) -> None:
    """%%toml: the cell body replaces the session's soma.toml (an empty body removes it)."""
    if args.strip():
        raise MagicError("usage: %%toml on the first line, the soma.toml text below it", at_name=True)
    if not body.strip():
        session.set_project(None)
        run.out("soma.toml removed: no [agent] or [verify] settings")
        return
    lines_above = run.code.count("\n") - body.count("\n")
    project = parse_project_text("\n" * lines_above + body, run.origin)  # errors at the cell's own lines
    for definition in session.definitions.values():
        problem = unknown_model(project, definition.item)
        if problem is not None:
            raise MagicError(f"{problem[0]}: the session's soma.toml is unchanged\n  hint: {problem[1]}",
                             at_name=True)
    session.set_project(project)
    run.out("soma.toml replaced: " + _summary(project))


CASSETTE_USAGE = "%cassette FILE [--mode once|replay|record|new] | %cassette off"


def cassette_magic(session, run, args: str, body) -> None:
    """%cassette FILE [--mode M]: record / replay this session's model exchanges; %cassette off: neither."""
    words = split_args(args, CASSETTE_USAGE)
    models = session.runtime.agent.models
    if words == ["off"]:
        models.cassette_choice = False
        run.out("cassette off: think() calls go to the provider and nothing is recorded")
        return
    if len(words) not in (1, 3) or (len(words) == 3 and words[1] != "--mode"):
        raise MagicError(f"usage: {CASSETTE_USAGE}", at_name=True)
    try:
        mode = cassette_mode(words[2] if len(words) == 3 else os.environ.get("SOMA_LLM_CASSETTE_MODE"))
    except SomaError as err:
        raise MagicError(err.detail, words[2] if len(words) == 3 else None) from None
    path = os.path.join(session.directory, os.path.expanduser(words[0]))
    from ...runtime.llm.cassette import Cassette  # lazy: the cassette and provider modules load only here

    try:  # the whole file is checked now, before the magic says what it holds
        cassette = Cassette(path, mode)
    except SomaError as err:
        raise MagicError(err.text, words[0]) from None
    models.cassettes[(path, mode)] = cassette
    models.cassette_choice = (path, mode)
    run.out(f"cassette {words[0]} (mode {mode}): {_cassette_plan(cassette)}")


def _cassette_plan(cassette) -> str:
    """What a checked cassette will do, in words."""
    held = f"{cassette.size} recorded exchange{'' if cassette.size == 1 else 's'}"
    if cassette.mode == "record":
        return "calls the provider and appends every exchange"
    if cassette.mode == "new":
        return f"replays its {held}, records the others"
    if cassette.records:
        return "records every exchange (the file does not exist yet)"
    return f"replays its {held} and calls no provider; a request it does not hold is an error"


def _summary(project) -> str:
    """One line naming what the soma.toml sets."""
    parts = []
    if project.agent.get("mock"):
        parts.append(f"[agent] mock = {project.agent['mock']!r}")
    elif project.agent.get("provider") or project.agent.get("url"):
        where = f" at {shown_url(project.agent['url'])}" if project.agent.get("url") else ""
        parts.append(f"[agent] provider = {project.agent.get('provider', 'openai')!r}{where}")
    if project.verify.has_properties or project.verify.cells:
        parts.append("[verify] properties")
    if project.package:
        parts.append("[package]")
    return ", ".join(parts) or "no [agent] or [verify] settings"


MAGICS = (
    Magic("load", "%load FILE.cell", "run a program file in this cell (and use the soma.toml beside it)",
          load_magic),
    Magic("save", SAVE_USAGE, "write the session's definitions as one program (never over a file without --force)",
          save_magic),
    Magic("cassette", CASSETTE_USAGE, "record model exchanges to FILE, or replay them from it (off: neither)",
          cassette_magic),
    Magic("toml", "%%toml", "replace the session's soma.toml with the cell's text", toml_magic, cell=True),
)
