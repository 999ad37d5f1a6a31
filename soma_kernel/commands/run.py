"""`soma-kernel run FILE [handler] [args…] [--fresh]`: call one handler.

Arguments are parsed by the handler's declared parameter types (Int, Float,
Bool, String; JSON for Map, List and sum types); the result is printed with
the JSON writer (`()` prints nothing); `approve()` follows SOMA_APPROVE, else
asks y/N at a terminal. Without a handler name: `main` or `run`, else the
only public handler taking that many arguments; with none of those, the
error says to name one and lists the handlers with their signatures. An
unknown handler is named as such (with did-you-mean from the program's
handler names); a handler called with the wrong number of arguments shows
its signature and the command line that calls it. `[persistent]` slots (and
always machine instances, `next_id` counters) live in
`.soma_data/<program>.sqlite` beside the program; the other slots start
empty on every run, and a guard that fails after instances came back says
so. `--fresh` starts from empty state. An `approve()` with nobody to answer
fails closed and says how to answer (SOMA_APPROVE, a terminal). With no
model key and no mock, think() notes so once and raises kind `llm`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import sys
from typing import Optional

from ..core.diagnostics import SomaError
from ..core.errors import UserError
from ..runtime.interpreter import Runtime
from ..runtime.store import default_store_path, is_persistent, open_store
from ..runtime.values import to_json
from .program import load_program


def run(args: argparse.Namespace) -> int:
    """Run the handler; exit 1 on a Soma error (printed as file:line:col: kind: message)."""
    loaded = load_program(args.file)
    if loaded is None:
        return 1
    agent = (loaded.project.agent if loaded.project is not None else {}) or {}
    runtime = Runtime(agent_mock=agent.get("mock"), project_dir=os.path.dirname(os.path.abspath(args.file)),
                      project=loaded.project)
    runtime.load_program(loaded.program)
    if sys.stdin.isatty():
        runtime.agent.ask = ask_at_terminal
    runtime.agent.approval_remedy = APPROVAL_REMEDY
    runtime.agent.echo_without_model = False  # outside tests, think() with no key and no mock raises (§8.2)
    try:
        return _run_bound(args, runtime)
    finally:
        runtime.detach_store()  # checkpointed and closed: the .sqlite file alone holds the data


def _run_bound(args: argparse.Namespace, runtime: Runtime) -> int:
    """Bind the program's store, call the handler, print the result; exit code."""
    restored: list[str] = []
    try:
        for line in attach_program_store(runtime, args).breaches:
            print(line, file=sys.stderr)
        restored = [state.name for state in runtime.cells.values() if state.machines and state.machines.current]
        cell, handler = choose_handler(runtime, args.handler, args.args, args.file)
        decl = runtime.cells[cell].handler(handler, len(args.args))
        params = runtime.cells[cell].params_of(decl)
        values = [parse_argument(text, param) for text, param in zip(args.args, params)]
        result = runtime.call(handler, values, cell=cell)
        shown = to_json(result) if result is not None else None  # a value too long to write is a range error
    except SomaError as err:
        print(f"error: {args.file}:{err.span.line}:{err.span.col}: {err.text}" if err.span.line
              else f"error: {args.file}: {err.text}", file=sys.stderr)
        for hint in guard_hints(runtime, restored) if err.kind == "guard_failed" else []:
            print(hint, file=sys.stderr)
        if err.hint:
            print(f"  hint: {err.hint}", file=sys.stderr)
        return 1
    except UserError as err:
        print(err, file=sys.stderr)
        return 1
    if shown is not None:
        print(shown)
    return 0


def attach_program_store(runtime: Runtime, args: argparse.Namespace):
    """Bind the program's `.soma_data` store (wiped first with --fresh); closed again when binding fails.
    What binding did (runtime.store.Bound)."""
    store = open_store(default_store_path(args.file))
    store.origin_of = lambda cell: os.path.basename(args.file)
    try:
        if args.fresh:
            store.wipe()
        return runtime.attach_store(store)
    except BaseException:
        store.close()
        raise


APPROVAL_REMEDY = "set SOMA_APPROVE=always|never, or run it at a terminal to answer y/N"


def guard_hints(runtime, restored: list[str]) -> list[str]:
    """Why a guard may fail on a later run: the instances came back from the store, these slots did not."""
    hints = []
    for name in restored:
        empty = [slot for slot, state in runtime.cells[name].slots.items() if not is_persistent(state.decl)]
        if empty:
            hints.append(f"  hint: {name}'s machine instances persist between runs, but these slots start empty "
                         f"on every run (they are not [persistent]): {', '.join(empty)}; "
                         "mark what the guard reads [persistent], or start over with --fresh")
    return hints


def ask_at_terminal(action: str) -> bool:
    """approve() under `soma run` at a terminal: a y/N question."""
    try:
        reply = input(f"[agent] approve? {action} [y/N] ")
    except EOFError:
        return False
    return reply.strip().lower() in ("y", "yes")


def choose_handler(runtime, name: Optional[str], args: list[str], file: str) -> tuple[str, str]:
    """(cell, handler) to call: the named one, or the obvious default; a UserError saying why not."""
    handlers = sorted(((state.name, decl) for state in runtime.cells.values()  # flesh bodies included
                       for decls in state.handler_decls.values() for decl in decls),
                      key=lambda pair: pair[1].span.start)  # source order (the cells' order may vary)
    if name is None:
        return _default_handler(runtime, handlers, args, file)
    cell_name, _, handler = name.rpartition(".")
    if cell_name and cell_name not in runtime.cells:
        raise _choice_error(file, f"there is no cell '{cell_name}'",
                            _did_you_mean(cell_name, list(runtime.cells)) or _all_handlers(runtime, handlers))
    named = [(cell, decl) for cell, decl in handlers if decl.name == handler and (not cell_name or cell == cell_name)]
    if not named:
        where = f"cell '{cell_name}' has no handler '{handler}'" if cell_name else f"there is no handler '{name}'"
        asked = [(cell, decl) for cell, decl in handlers if not cell_name or cell == cell_name]
        raise _choice_error(file, where, _did_you_mean(handler, [decl.name for _, decl in asked], cell_name)
                            or _all_handlers(runtime, asked, f"{cell_name}'s handlers" if cell_name else "the program's handlers"))
    fitting = [(cell, decl) for cell, decl in named if runtime.cells[cell].handler(decl.name, len(args))]
    if len(fitting) == 1:
        return fitting[0][0], handler
    if fitting:
        raise _choice_error(file, f"'{name}' is a handler of several cells", _name_one(runtime, file, fitting))
    given = f"{len(args)} argument{'' if len(args) == 1 else 's'}"
    shapes = " or ".join(f"{cell}.{signature(runtime, cell, decl)}" for cell, decl in named)
    raise _choice_error(file, f"'{name}' takes other arguments than the {given} given: {shapes}",
                        "call it as " + " or ".join(f"`{usage(runtime, file, cell, decl)}`" for cell, decl in named))


def _default_handler(runtime, handlers: list, args: list[str], file: str) -> tuple[str, str]:
    """`main` or `run`, else the only public handler taking `args`; a UserError naming the choice otherwise."""
    fitting = [(cell, decl) for cell, decl in handlers if runtime.cells[cell].handler(decl.name, len(args))]
    for default in ("main", "run"):
        found = [(cell, decl) for cell, decl in fitting if decl.name == default]
        if len(found) == 1:
            return found[0][0], default
        if found:
            raise _choice_error(file, f"several cells have a `{default}` handler", _name_one(runtime, file, found))
    public = [(cell, decl) for cell, decl in fitting if not decl.name.startswith("_")]
    if len(public) == 1:
        return public[0][0], public[0][1].name
    if not handlers:
        raise _choice_error(file, "the program defines no handler to run", None)
    raise _choice_error(file, "no handler named, and there is no `main` or `run` handler to call by default",
                        f"name one: `soma-kernel run {file_arg(file)} HANDLER [ARGS…]`; {_all_handlers(runtime, handlers)}")


def _name_one(runtime, file: str, choices: list) -> str:
    """`name one: `soma-kernel run F A.h X` or `… B.h X``."""
    return "name one: " + " or ".join(f"`{usage(runtime, file, cell, decl)}`" for cell, decl in choices)


def _choice_error(file: str, message: str, hint: Optional[str]):
    """The error of a handler that cannot be chosen: `FILE: message`, and its hint."""
    return UserError(f"{file}: {message}", file, notes=(f"  hint: {hint}",) if hint else ())


def _did_you_mean(wanted: str, known: list[str], cell: str = "") -> Optional[str]:
    """`did you mean X?` for the names close to `wanted`, shown as `cell.X` when a cell is given (None when none is)."""
    close = difflib.get_close_matches(wanted, sorted(set(known)), n=3, cutoff=0.6)
    shown = [f"`{cell}.{c}`" if cell else f"`{c}`" for c in close]
    return f"did you mean {' or '.join(shown)}?" if close else None


def _all_handlers(runtime, handlers: list, label: str = "the program's handlers", limit: int = 12) -> str:
    """`the program's handlers: Cell.h(a: Int), …` (the first `limit` of them)."""
    if not handlers:
        return f"{label}: none"
    shown = [f"{cell}.{signature(runtime, cell, decl)}" for cell, decl in handlers[:limit]]
    more = f", … ({len(handlers) - limit} more)" if len(handlers) > limit else ""
    return f"{label}: " + ", ".join(shown) + more


def signature(runtime, cell: str, decl) -> str:
    """`bump(name: String, by: Int)`: a handler as the kernel shows it."""
    return f"{decl.name}({_params(runtime.cells[cell].params_of(decl))})"


def _params(params) -> str:
    """`a: Int, b` (an untyped parameter stays bare)."""
    return ", ".join(f"{p.name}: {p.type.render()}" if p.type is not None else p.name for p in params)


def usage(runtime, file: str, cell: str, decl) -> str:
    """`soma-kernel run FILE Cell.h NAME BY`: the command line that calls the handler."""
    params = " ".join(p.name.upper() for p in runtime.cells[cell].params_of(decl))
    return f"soma-kernel run {file_arg(file)} {cell}.{decl.name}" + (f" {params}" if params else "")


def file_arg(file: str) -> str:
    """The program's path as the user typed it, quoted for a shell when it needs to be."""
    return shlex.quote(file)


def parse_argument(text: str, param):
    """A command-line argument as the value its declared type asks for."""
    type_name = param.type.name if param.type is not None else "Any"
    try:
        if type_name == "Int":
            return int(text)
        if type_name == "Float":
            return float(text)
        if type_name == "Bool":
            if text not in ("true", "false"):
                raise ValueError(text)
            return text == "true"
        if type_name == "String":
            return text
        return json.loads(text)
    except ValueError:
        if type_name in ("Any", "T"):
            return text
        article = "an" if type_name[:1] in "AEIOU" else "a"
        raise SomaError("type", f"argument {param.name}: '{text}' is not {article} {type_name}") from None
