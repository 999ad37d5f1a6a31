"""The pure builtin library of Soma (spec §9), one module per group.

The registry (`BUILTINS`, `@builtin`, `call_builtin`) is in registry.py;
this package only assembles it: importing it imports every group module,
and each registers its functions there.
"""

from __future__ import annotations

from . import (  # the group modules register themselves on import
    collections,
    crypto,
    csv,
    dates,
    io,
    jsonlib,
    lambdas,
    linalg,
    math,
    pipeline,
    strings,
    types,
    web,
)
from .registry import BUILTINS, Builtin, argument_error, arity_error, arity_text, builtin, call_builtin

__all__ = ["BUILTINS", "Builtin", "builtin", "call_builtin", "arity_error", "arity_text", "argument_error",
           "collections", "crypto", "csv", "dates", "io", "jsonlib", "lambdas", "math", "pipeline",
           "strings", "types", "web"]
