"""The builtin registry: `BUILTINS` (name -> Builtin), the `@builtin` decorator
the group modules register with, and `call_builtin`.

Every builtin is here, once: its name, arity, signature, doc and
implementation, read by dispatch, `soma check`, completion, `%help` and
`?name`. Each group module of this package imports `builtin` from here;
importing the package (`runtime.builtins`) imports every group, which fills
`BUILTINS`. A pure builtin is called as `fn(*args)`; one that needs the
running program (think, transition, now… in context.py) as
`fn(call, *args)` with the call's `BuiltinCall`. The interpreter calls a
builtin through `call_builtin(name, args)` (arity checked, Python errors
turned into SomaErrors) or, having checked the arity itself, through
`BUILTINS[name].fn`.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

from ...core.diagnostics import SomaError
from ...core.records import Record
from ..values import type_of


class Builtin(Record, frozen=True):
    """One builtin function: its Python implementation, arity range
    (max_args None = variadic), group, signature text, a one-line doc, and
    whether it is pure (no I/O, deterministic, no effect on the program).
    `needs_runtime`: called as `fn(call, *args)` (see BuiltinCall); `usage`
    names the arguments in an arity error ("prompt, [system], [opts]"); `options` the keys of its
    options Map, each with what it does (what help lists)."""

    name: str
    fn: Callable[..., Any]
    min_args: int
    max_args: Optional[int]
    group: str
    signature: str
    doc: str
    pure: bool = True
    needs_runtime: bool = False
    usage: str = ""
    options: tuple[tuple[str, str], ...] = ()

    @property
    def returns_nothing(self) -> bool:
        """True when the signature says `-> ()`: the builtin is called for its effect (print, remember…)."""
        return self.signature.replace(" ", "").endswith("->()")


class BuiltinCall:
    """Where a builtin that needs the running program is called: the runtime,
    the calling cell (None at test or session level) and the call node.
    `OUTSIDE_PROGRAM` stands for a call with no program (`call_builtin`)."""

    def __init__(self, runtime, cell, node):
        self.runtime, self.cell, self.node = runtime, cell, node

    @property
    def rt(self):
        """The runtime; a builtin that needs it refuses to run without one."""
        if self.runtime is None:
            raise SomaError("type", "this builtin needs a running program")
        return self.runtime


BUILTINS: dict[str, Builtin] = {}


def _arity_of(fn: Callable) -> tuple[int, Optional[int]]:
    """(min, max) positional arity of a Python function (max None when it
    takes *args); read once, at registration."""
    low, high = 0, 0
    for param in inspect.signature(fn).parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            return low, None
        high += 1
        if param.default is param.empty:
            low += 1
    return low, high


def builtin(group: str, signature: str, doc: str, *, name: Optional[str] = None,
            aliases: tuple[str, ...] = (), pure: bool = True, needs_runtime: bool = False, usage: str = "",
            min_args: Optional[int] = None, max_args: Optional[int] = -1,
            options: Optional[dict[str, str]] = None) -> Callable:
    """Decorator registering a Python function as a Soma builtin.

    The Soma name defaults to the text of `signature` before "(". Arity is
    read from the Python signature (less the `call` of a builtin that
    `needs_runtime`) unless `min_args`/`max_args` are given (max_args None =
    variadic). `aliases` register the same function under other names; `options` names the keys of
    its options Map and what each does.
    A name registered twice is a mistake in the builtin groups, refused at
    import (a later group would silently replace an earlier one's builtin).
    """

    def register(fn: Callable) -> Callable:
        soma_name = name or signature.split("(", 1)[0].strip()
        low, high = _arity_of(fn)
        if needs_runtime:
            low, high = low - 1, None if high is None else high - 1
        low = low if min_args is None else min_args
        high = high if max_args == -1 else max_args
        for each in (soma_name, *aliases):
            if each in BUILTINS:
                raise RuntimeError(f"builtin {each!r} of group {group!r} is already registered by group "
                                   f"{BUILTINS[each].group!r}")
            BUILTINS[each] = Builtin(each, fn, low, high, group, signature, doc, pure, needs_runtime, usage,
                                     tuple((options or {}).items()))
        return fn

    return register


def arity_text(entry: Builtin) -> str:
    """How many arguments a builtin takes, in words ("2", "1 to 3", "at least 1")."""
    if entry.max_args is None:
        return f"at least {entry.min_args}"
    if entry.max_args == entry.min_args:
        return str(entry.min_args)
    return f"{entry.min_args} to {entry.max_args}"


def arity_error(entry: Builtin, got: int) -> SomaError:
    """The error for a call with the wrong number of arguments."""
    count = arity_text(entry)
    noun = "argument" if count == "1" else "arguments"
    usage = f" ({entry.usage})" if entry.usage else ""
    return SomaError("type", f"{entry.name}() takes {count} {noun}{usage}, got {got}")


def takes(entry: Builtin, count: int) -> bool:
    """True when `count` arguments fit the builtin's arity."""
    return entry.min_args <= count and (entry.max_args is None or count <= entry.max_args)


def argument_error(name: str, args: tuple | list) -> SomaError:
    """The error for arguments of types a builtin does not accept."""
    kinds = ", ".join(type_of(a) for a in args)
    return SomaError("type", f"{name}() does not accept arguments ({kinds})")


OUTSIDE_PROGRAM = BuiltinCall(None, None, None)


def call_builtin(name: str, args: list | tuple) -> Any:
    """Call the builtin `name` with Soma values: checks the arity, turns a
    Python-level failure on bad arguments into a SomaError kind "type"."""
    entry = BUILTINS.get(name)
    if entry is None:
        raise SomaError("undefined_variable", f"unknown function {name}()")
    if not takes(entry, len(args)):
        raise arity_error(entry, len(args))
    if entry.needs_runtime:
        return entry.fn(OUTSIDE_PROGRAM, *args)
    try:
        return entry.fn(*args)
    except SomaError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as err:
        raise argument_error(name, args) from err
    except OverflowError:
        raise SomaError("range", f"{name}(): number out of range") from None
    except RecursionError:
        raise SomaError("stack_overflow", f"{name}(): value nested too deeply") from None
