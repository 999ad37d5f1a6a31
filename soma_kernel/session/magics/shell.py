"""IPython habits: %cd, %pwd, %env, %time / %%time, %timeit / %%timeit, %who, %history, %lsmagic.

Paths of `%load`, `%store`, `%save` and `%cassette` are relative to the
session's folder, which `%cd` moves (with the process's working folder, so
`read_file` follows). `%env` never shows a secret: the value of a variable
whose name says it holds one (KEY, TOKEN, SECRET, PASSW, CREDENTIAL, AUTH,
COOKIE, in any case) is `***`.
Timed code runs exactly as a cell line would (atomic statements, errors
with carets); `%timeit` parses it once and times the runs only.
"""

from __future__ import annotations

import math
import os
import re
import time

from ...runtime.llm.redact import MASK
from ...runtime.values import display, type_of
from .base import Magic, MagicError, split_args

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)
TIMEIT_TARGET_SECONDS = 0.2
TIMEIT_REPEAT = 7
WHO_VALUE_WIDTH = 60


# ---------------------------------------------------------------- folders

def pwd_magic(session, run, args: str, body) -> None:
    """%pwd: the session's folder (where relative paths of the magics and file builtins start)."""
    if args.strip():
        raise MagicError("usage: %pwd", at_name=True)
    run.out(session.directory)


def cd_magic(session, run, args: str, body) -> None:
    """%cd [DIR]: move the session's folder (and the process's) to DIR, `~` and `-` (the previous one) allowed.

    Without DIR it goes home. The soma.toml already read stays until `%%toml` or `%load` replace it.
    """
    words = split_args(args, "%cd [DIR]")
    if len(words) > 1:
        raise MagicError("usage: %cd [DIR]", at_name=True)
    target = words[0] if words else "~"
    if target == "-":
        target = session.previous_directory or session.directory
    path = os.path.normpath(os.path.join(session.directory, os.path.expanduser(target)))
    if not os.path.isdir(path):
        raise MagicError(f"%cd: no folder {path}", words[0] if words else None)
    try:
        os.chdir(path)
    except OSError as err:
        raise MagicError(f"%cd: cannot enter {path}: {err.strerror}", words[0] if words else None) from None
    session.change_directory(path)
    run.out(path)


# ---------------------------------------------------------------- environment

def env_magic(session, run, args: str, body) -> None:
    """%env [NAME | NAME=VALUE | NAME VALUE]: list the environment, show one variable, or set one.

    Values of variables whose name says they hold a secret (`SECRET_NAME`) show as ***.
    """
    text = args.strip()
    if not text:
        for name in sorted(os.environ):
            run.out(f"{name}={_shown_env(name, os.environ[name])}")
        return
    name, value = _env_assignment(text)
    if value is None:
        if name not in os.environ:
            raise MagicError(f"%env: {name} is not set", name)
        run.out(_shown_env(name, os.environ[name]))
        return
    os.environ[name] = value
    run.out(f"env: {name}={_shown_env(name, value)}")


def _env_assignment(text: str) -> tuple[str, object]:
    """(NAME, VALUE) of `NAME=VALUE` or `NAME VALUE`, (NAME, None) of a lone NAME."""
    match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*|\s+)(.*)", text, re.S)
    if match:
        return match.group(1), match.group(2)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        return text, None
    raise MagicError("usage: %env [NAME | NAME=VALUE | NAME VALUE]", text.split()[0])


def _shown_env(name: str, value: str) -> str:
    """A variable's value as shown: *** for a secret's."""
    return MASK if value and SECRET_NAME.search(name) else value


# ---------------------------------------------------------------- timing

def time_magic(session, run, args: str, body) -> None:
    """%time STATEMENT / %%time: run the statement (or the cell below) once and print its CPU and wall time."""
    code = _timed_code(run, args, body, "%time STATEMENT")
    cpu, wall = time.process_time(), time.perf_counter()
    session.run_soma(run, code, run.origin)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    run.out(f"CPU time: {format_seconds(cpu)}\nWall time: {format_seconds(wall)}")


def timeit_magic(session, run, args: str, body) -> None:
    """%timeit [-n N] [-r R] STATEMENT / %%timeit [-n N] [-r R]: time the statements over many runs.

    Without -n the loop count grows 1, 10, 100… until one repeat takes 0.2 s; -r repeats (default 7).
    Each run is a real invocation: writes it makes are kept, as in a cell.
    """
    loops, repeat, statement = _timeit_options(args, body)
    code = _timed_code(run, statement, body, "%timeit [-n N] [-r R] STATEMENT")
    nodes = session.parse_statements(code, run.origin)
    shown = run.result.result

    def once(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            session.run_statements(run, nodes, code, run.origin)
        return time.perf_counter() - start

    if loops is None:
        loops = 1
        while once(loops) < TIMEIT_TARGET_SECONDS and loops < 10 ** 9:
            loops *= 10
    times = [once(loops) / loops for _ in range(repeat)]
    run.result.result = shown
    run.out(timeit_summary(times, loops))


def _timeit_options(args: str, body):
    """(loops or None, repeats, the statement text) of %timeit's arguments."""
    words = args.split()
    loops, repeat = None, TIMEIT_REPEAT
    while words and words[0] in ("-n", "-r"):
        if len(words) < 2 or not words[1].isdigit() or int(words[1]) < 1:
            raise MagicError(f"%timeit: {words[0]} takes a whole number ≥ 1", words[0])
        if words[0] == "-n":
            loops = int(words[1])
        else:
            repeat = int(words[1])
        words = words[2:]
    statement = args[args.find(words[0]):] if words else ""
    return loops, repeat, statement


def _timed_code(run, statement: str, body, usage: str) -> str:
    """The Soma text to time, placed at its own line and column of the cell (so carets point into it)."""
    if body is not None:
        if statement.strip() and not statement.strip().startswith("-"):
            raise MagicError(f"usage: %{usage.lstrip('%')} on the first line, the code below it", at_name=True)
        if not body.strip():
            raise MagicError("nothing to time: write the code below the magic's line", at_name=True)
        first = len(run.code[:len(run.code) - len(run.code.lstrip())].split("\n"))
        return "\n" * first + body
    if not statement.strip():
        raise MagicError(f"usage: {usage}", at_name=True)
    line = run.magic_line or 1
    source_line = run.code.split("\n")[line - 1]
    column = max(len(source_line.rstrip()) - len(statement.rstrip()), 0)
    return "\n" * (line - 1) + " " * column + statement


def format_seconds(seconds: float) -> str:
    """A duration with three significant digits in s, ms, µs or ns (as IPython prints them)."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    for unit, scale in (("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
        if seconds * scale >= 1 or unit == "ns":
            return f"{seconds * scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def timeit_summary(times: list[float], loops: int) -> str:
    """`mean ± std per loop (mean ± std. dev. of R runs, N loops each)`."""
    mean = sum(times) / len(times)
    spread = math.sqrt(sum((t - mean) ** 2 for t in times) / len(times))
    runs = f"{len(times)} run{'s' if len(times) != 1 else ''}"
    each = f"{loops} loop{'s' if loops != 1 else ''} each"
    return f"{format_seconds(mean)} ± {format_seconds(spread)} per loop (mean ± std. dev. of {runs}, {each})"


# ---------------------------------------------------------------- what is defined

def who_magic(session, run, args: str, body) -> None:
    """%who: the top-level names (`let`) with their type and value, then the cells defined."""
    if args.strip():
        raise MagicError("usage: %who", at_name=True)
    variables = session.variables
    if not variables and not session.definitions:
        run.out("nothing is defined yet")
        return
    width = max((len(name) for name in variables), default=0)
    for name in sorted(variables):
        value = display(variables[name])
        if len(value) > WHO_VALUE_WIDTH:
            value = value[:WHO_VALUE_WIDTH - 1] + "…"
        run.out(f"{name:<{width}}  {type_of(variables[name]):<8}  {value}")
    cells = sorted({name for (kind, name) in session.definitions})
    if cells:
        run.out("definitions: " + ", ".join(cells))


def history_magic(session, run, args: str, body) -> None:
    """%history [-n] [-l N] [-g PATTERN]: this session's inputs (this one last); -l the last N of every
    session, -g a search.

    -n numbers each input (`session/line:` with -l and -g, which reach earlier kernel sessions).
    """
    words = split_args(args, "%history [-n] [-l N] [-g PATTERN]")
    numbered = "-n" in words
    words = [w for w in words if w != "-n"]
    history = session.history
    if words[:1] == ["-g"] and len(words) == 2:
        entries, across = history.search(f"*{words[1]}*"), True
    elif words[:1] == ["-l"] and len(words) == 2 and words[1].isdigit():
        entries, across = history.tail(int(words[1])), True
    elif not words:
        entries, across = history.range(0), False
    else:
        raise MagicError("usage: %history [-n] [-l N] [-g PATTERN]", at_name=True)
    for number, line, source in entries:
        label = f"{number}/{line}" if across else str(line)
        run.out(f"{label:>6}: {source}" if numbered else source)


def lsmagic_magic(session, run, args: str, body) -> None:
    """%lsmagic: every line magic and cell magic by name."""
    magics = [m for m in session.magics.values() if not m.name.startswith("?")]
    line = sorted(f"%{m.name}" for m in magics if not m.cell)
    cell = sorted(f"%%{m.name}" for m in magics if m.cell or m.also_cell)
    run.out("Available line magics:\n" + "  ".join(line) + "\n\nAvailable cell magics:\n" + "  ".join(cell)
            + "\n\n%help NAME explains one; ?name is help on a Soma name.")


MAGICS = (
    Magic("cd", "%cd [DIR]", "move the session's folder (relative paths start there)", cd_magic),
    Magic("pwd", "%pwd", "the session's folder", pwd_magic),
    Magic("env", "%env [NAME[=VALUE]]", "show or set environment variables (secrets shown as ***)", env_magic),
    Magic("time", "%time STATEMENT / %%time", "run once and print CPU and wall time", time_magic, also_cell=True),
    Magic("timeit", "%timeit [-n N] [-r R] STATEMENT / %%timeit", "time over many runs (mean ± std. dev.)",
          timeit_magic, also_cell=True),
    Magic("who", "%who", "top-level names with type and value, and the definitions", who_magic),
    Magic("history", "%history [-n] [-l N] [-g PATTERN]", "inputs of this session (or of every session)",
          history_magic),
    Magic("lsmagic", "%lsmagic", "every magic by name", lsmagic_magic),
)
