"""`soma-kernel run FILE [handler] [args…] [--fresh]`: call one handler.

Arguments are parsed by the handler's declared parameter types (Int, Float,
Bool, String; JSON for Map, List and sum types); the result is printed with
the JSON writer (`()` prints nothing); `approve()` asks y/N at a terminal.
Without a handler name: `main` or
`run`, else the only public handler, else the only handler taking that many
arguments. `[persistent]` slots (and machine instances, `next_id` counters)
live in `.soma_data/<program>.sqlite` beside the program; `--fresh` starts
from empty state.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional

from ..core.diagnostics import SomaError
from ..runtime.interpreter import Runtime
from ..runtime.store import default_store_path, open_store
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
    try:
        store = open_store(default_store_path(args.file))
        if args.fresh:
            store.wipe()
        runtime.attach_store(store)
        cell, handler = choose_handler(runtime, args.handler, args.args)
        decl = runtime.cells[cell].handler(handler, len(args.args))
        params = runtime.cells[cell].params_of(decl)
        values = [parse_argument(text, param) for text, param in zip(args.args, params)]
        result = runtime.call(handler, values, cell=cell)
    except SomaError as err:
        print(f"error: {args.file}:{err.span.line}:{err.span.col}: {err.text}" if err.span.line
              else f"error: {args.file}: {err.text}", file=sys.stderr)
        return 1
    if result is not None:
        print(to_json(result))
    return 0


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
    raise SomaError("type", f"name the handler to run{listing(candidates)}")


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
