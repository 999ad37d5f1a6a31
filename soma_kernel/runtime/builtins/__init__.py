"""The builtin library of Soma (spec §9), one module per group.

The registry (`Builtin`, `@builtin`, `call_builtin`) is in registry.py;
this package only assembles it. The builtins that need the running program
(context.py: think, transition, now…) are registered when the package is
imported; the pure groups, whose modules are slow to import (~70 ms), when
`BUILTINS` is first read. `builtin_entry(name)` finds a runtime builtin
without loading them, so `soma check` of a program that calls only those
(a big state machine under `soma-kernel verify`) never pays for them.
"""

from __future__ import annotations

import importlib

from . import context, registry  # context registers the builtins that need the program on import
from .registry import Builtin, BuiltinCall, argument_error, arity_error, arity_text, builtin, takes

GROUPS = ("collections", "crypto", "csv", "dates", "http", "io", "jsonlib", "lambdas", "linalg", "math",
          "pipeline", "risk", "strings", "types", "web")

__all__ = ["BUILTINS", "Builtin", "BuiltinCall", "builtin", "builtin_entry", "call_builtin", "arity_error",
           "arity_text", "argument_error", "takes", "context", "registry", *GROUPS]


_loaded: list[bool] = []


def all_builtins() -> dict[str, Builtin]:
    """Every builtin by name, the pure groups imported (and so registered) at the first call."""
    if not _loaded:
        for group in GROUPS:
            importlib.import_module(f"{__name__}.{group}")  # lazy: each group registers its builtins on import
        _loaded.append(True)
    return registry.BUILTINS


def builtin_entry(name: str):
    """The registry entry of `name`, or None; the pure groups are loaded only for a name that needs them."""
    return registry.BUILTINS.get(name) or all_builtins().get(name)


def call_builtin(name: str, args: list | tuple):
    """`registry.call_builtin` over every builtin (see there)."""
    all_builtins()
    return registry.call_builtin(name, args)


def __getattr__(name: str):
    """`BUILTINS` (every builtin) and the group modules, loaded on first use."""
    if name == "BUILTINS":
        return all_builtins()
    if name in GROUPS:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
