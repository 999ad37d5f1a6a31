"""The session itself: %reset [Cell], %help, `?name` (help in the cell) and `??name` (help and source, paged)."""

from __future__ import annotations

import inspect

from ..inspect import help_text
from .base import Magic, MagicError, split_args
from .store import bound_store, reset_store_data, shown_path

USAGE = "%reset [--store] [Cell]"


def reset_magic(session, run, args: str, body) -> None:
    """%reset [--store] [Cell]: fresh memory, machine instances and mocks (of one cell, or all); definitions stay.

    A session bound to a store (`%store`) is reset only with `--store`, which wipes the stored data too.
    """
    words = split_args(args, USAGE)
    wipe = "--store" in words
    words = [word for word in words if word != "--store"]
    if len(words) > 1 or any(word.startswith("-") for word in words):
        raise MagicError(f"usage: {USAGE}", at_name=True)
    runtime = session.runtime
    if words and words[0] not in runtime.cells:
        raise MagicError(f"no cell named {words[0]} (defined: {', '.join(sorted(runtime.cells)) or 'none'})",
                         words[0])
    if wipe:
        reset_store_data(session, run, words[0] if words else None)
        return
    store = bound_store(session)
    if store is not None:
        raise MagicError(f"the session is bound to {shown_path(session, store.path)}: `%reset --store` "
                         "wipes its stored data too (or `%store off` first to reset memory only)", at_name=True)
    if words:
        runtime.reset(words[0])
        run.out(f"reset {words[0]}: memory and machine instances are fresh")
        return
    runtime.reset()
    session.variables.clear()
    run.out("reset: memory, machine instances, mocks and top-level lets are fresh; definitions are kept")


def help_magic(session, run, args: str, body) -> None:
    """%help [magic]: the magics and how to ask about a name, or one magic in full."""
    words = split_args(args, "%help [magic]")
    if words:
        magic = session.magics.get(words[0].lstrip("%"))
        if magic is None or len(words) > 1:
            raise MagicError(f"usage: %help [magic] — no magic named {words[0]!r}; %help lists them", words[0])
        run.out(f"{magic.usage}\n\n{inspect.cleandoc(magic.run.__doc__ or magic.doc)}")
        return
    magics = [m for m in session.magics.values() if not m.name.startswith("?")]
    width = max(len(m.usage) for m in magics)
    lines = ["Soma kernel magics (a line of their own, run in order with the code; %%toml takes the whole cell):"]
    lines += [f"  {m.usage:<{width}}  {m.doc}" for m in magics]
    lines += [
        f"  {'?name':<{width}}  help on a cell, handler, slot, type, builtin or keyword",
        f"  {'??name':<{width}}  the same help and the definition's source, in the pager",
        "",
        "Anything else is Soma: declarations (cell, cell type, cell test, flesh) are kept and",
        "replaced when their notebook cell runs again; statements run one by one, atomically;",
        "the last expression's value is shown. `mock think \"…\"` scripts the model, `assert` checks.",
    ]
    run.out("\n".join(lines))


def _help_or_error(session, name: str, usage: str) -> str:
    """The help text on `name`, or a MagicError saying what is missing."""
    if not name:
        raise MagicError(f"usage: {usage} (a cell, Cell.handler, slot, type, builtin or keyword)", at_name=True)
    text = help_text(session, name)
    if text is None:
        raise MagicError(f"nothing is known about {name!r}", name)
    return text


def question_magic(session, run, args: str, body) -> None:
    """?name: help on a name (the same text as the inspector's), shown in the cell; a bare `?` lists the help."""
    if not args.strip():
        help_magic(session, run, "", None)
        return
    run.show({"text/plain": _help_or_error(session, args.strip(), "?name")})


def definition_source(session, name: str) -> list[str]:
    """The source `??name` shows: the handlers called so (`handler` or `Cell.handler`), else the
    definitions called `name` (the cell before `.`), each under its cell label."""
    handlers = handler_source(session, name)
    if handlers:
        return handlers
    head = name.split(".", 1)[0]
    return [f"{kind} {defined} — {definition.origin}:{definition.item.span.line}\n{definition.text}"
            for (kind, defined), definition in session.definitions.items() if defined == head]


def handler_source(session, name: str) -> list[str]:
    """The source of each handler `name` (of any cell) or `Cell.name`, with the cell and line it is at."""
    cell, _, handler = name.rpartition(".")
    found = []
    for (kind, defined), definition in session.definitions.items():
        if kind not in ("cell", "flesh") or (cell and defined != cell):
            continue
        for decl in definition.item.handlers:
            if decl.name == handler:
                text = definition.source[decl.span.start:decl.span.end]
                found.append(f"on {handler} of {kind} {defined} — {definition.origin}:{decl.span.line}\n{text}")
    return found


def page_magic(session, run, args: str, body) -> None:
    """??name: help on a name and the source of its definition, sent to the pager."""
    name = args.strip()
    parts = [_help_or_error(session, name, "??name")] + definition_source(session, name)
    run.page({"text/plain": "\n\n".join(parts) + "\n"})


MAGICS = (
    Magic("reset", USAGE, "fresh memory, instances and mocks (definitions stay; --store also wipes the bound store)",
          reset_magic),
    Magic("help", "%help [magic]", "this list, or one magic in full (%help verify)", help_magic),
    Magic("?", "?name", "help on a name", question_magic),
    Magic("??", "??name", "help on a name and its definition's source, paged", page_magic),
)
