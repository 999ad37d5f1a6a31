"""`soma-kernel run FILE [handler] [args…] [--fresh]`: call one handler.

Arguments are parsed by the handler's declared parameter types (Int, Float,
Bool, String; JSON for Map, List and sum types); the result is printed with
the JSON writer (`()` prints nothing); `approve()` asks y/N at a terminal.
Without a handler name: `main` or
`run`, else the only public handler, else the only handler taking that many
arguments; with none of those, the error lists every handler and what it
takes. `[persistent]` slots (and always machine instances, `next_id`
counters) live in `.soma_data/<program>.sqlite` beside the program; the other
slots start empty on every run, and a guard that fails after instances came
back says so. `--fresh` starts from empty state. An `approve()` with nobody
to answer fails closed and says how to answer (SOMA_APPROVE, a terminal).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional

from ..core.diagnostics import SomaError
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
    restored: list[str] = []
    try:
        store = open_store(default_store_path(args.file))
        if args.fresh:
            store.wipe()
        runtime.attach_store(store)
        restored = [state.name for state in runtime.cells.values() if state.machines and state.machines.current]
        cell, handler = choose_handler(runtime, args.handler, args.args)
        decl = runtime.cells[cell].handler(handler, len(args.args))
        params = runtime.cells[cell].params_of(decl)
        values = [parse_argument(text, param) for text, param in zip(args.args, params)]
        result = runtime.call(handler, values, cell=cell)
    except SomaError as err:
        print(f"error: {args.file}:{err.span.line}:{err.span.col}: {err.text}" if err.span.line
              else f"error: {args.file}: {err.text}", file=sys.stderr)
        for hint in guard_hints(runtime, restored) if err.kind == "guard_failed" else []:
            print(hint, file=sys.stderr)
        return 1
    if result is not None:
        print(to_json(result))
    return 0


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


def choose_handler(runtime, name: Optional[str], args: list[str]) -> tuple[str, str]:
    """(cell, handler) to call: the named one, or the obvious default."""
    candidates = [(state.name, handler) for state in runtime.cells.values()
                  for handler in state.handler_decls if state.handler(handler, len(args)) is not None]
    if name is not None:
        cell_name, _, handler = name.rpartition(".")
        found = [c for c in candidates if c[1] == handler and (not cell_name or c[0] == cell_name)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise SomaError("undefined_variable", f"no handler '{name}' takes {len(args)} argument"
                            f"{'' if len(args) == 1 else 's'}{listing(candidates)}")
        raise SomaError("type", f"'{name}' is a handler of several cells — qualify it: "
                        + ", ".join(f"{c}.{h}" for c, h in found))
    for default in ("main", "run"):
        found = [c for c in candidates if c[1] == default]
        if len(found) == 1:
            return found[0]
    public = [c for c in candidates if not c[1].startswith("_")]
    if len(public) == 1:
        return public[0]
    raise SomaError("type", f"name the handler to run{every_handler(runtime)}")


def every_handler(runtime) -> str:
    """` — handlers: Cell.h(a, b), …`: every handler and what it takes (or that there is none)."""
    every = [f"{state.name}.{decl.name}({', '.join(p.name for p in decl.params)})"
             for state in runtime.cells.values() for decl in state.decl.handlers]
    return f" — handlers: {', '.join(every)}" if every else " — the program defines no handler"


def listing(candidates: list[tuple[str, str]]) -> str:
    """` — candidates: Cell.h, …` (or nothing)."""
    if not candidates:
        return ""
    return " — candidates: " + ", ".join(f"{c}.{h}" for c, h in candidates)


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
