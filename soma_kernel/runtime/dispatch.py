"""The dispatch rule of an unqualified call `f(args)`: which handler or builtin it reaches.

One rule for every place a bare call resolves — handler bodies, test rules,
session cells, and `check` — so that what check accepts is what runs:

1. the calling cell's own handler `f` when it takes that many arguments;
2. else the program's one handler `f` (of any cell, test cells included)
   that takes that many arguments;
3. else the builtin `f`, when there is one;
4. else, when several cells have a handler `f` of that arity, the call is
   ambiguous (it must be qualified: `Cell.f(…)`);
5. else nothing answers with that arity; the caller reports it (arity error,
   tuple variant, undefined function).

So a handler shadows a builtin of the same name only at the handler's own
arity: with `on count(text)` in a program, `count("a b")` calls the handler
and `count(xs, pred)` still reaches the builtin. The builtin's arity is never
used to refuse a call that a handler answers.
"""

from __future__ import annotations

from typing import Generic, Optional, Sequence, TypeVar

from ..core.records import Record

Owner = TypeVar("Owner")

OWN = "own"
HANDLER = "handler"
BUILTIN = "builtin"
AMBIGUOUS = "ambiguous"
NONE = "none"


class Dispatch(Record, Generic[Owner], frozen=True):
    """Where a bare call goes: `kind` is one of OWN, HANDLER, BUILTIN, AMBIGUOUS, NONE.

    `owners` holds the chosen owner (HANDLER) or all candidates (AMBIGUOUS).
    """

    kind: str
    owners: tuple = ()

    @property
    def owner(self) -> Optional[Owner]:
        """The one owner a HANDLER dispatch reaches."""
        return self.owners[0] if self.kind == HANDLER else None


def dispatch_bare_call(own_fits: bool, fitting_owners: Sequence[Owner], is_builtin: bool) -> Dispatch[Owner]:
    """Apply the rule above.

    `own_fits`: the calling cell has a handler of that name taking that many
    arguments; `fitting_owners`: the other cells (and test cells) that do;
    `is_builtin`: a builtin (pure or runtime) has that name.
    """
    if own_fits:
        return Dispatch(OWN)
    if len(fitting_owners) == 1:
        return Dispatch(HANDLER, (fitting_owners[0],))
    if is_builtin:
        return Dispatch(BUILTIN)
    if len(fitting_owners) > 1:
        return Dispatch(AMBIGUOUS, tuple(fitting_owners))
    return Dispatch(NONE)
