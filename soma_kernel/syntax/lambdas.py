"""What may not appear in a lambda body: control flow that would leave it.

A lambda's value is its body's last expression. `return` inside one (at any
depth, nested lambdas included) would have to leave the lambda *and* the
builtin that called it (`map`, `filter`…), so it is refused — by `soma check`
and, for code that was never checked, by the runtime when it compiles the
lambda. So is a `break`/`continue` that is not inside a loop of the lambda's
own body. Both places use `lambda_escape` and `LAMBDA_RETURN_FIX`, so they
refuse the same programs with the same words.
"""

from __future__ import annotations

from typing import Optional

from . import ast

LAMBDA_RETURN_MESSAGE = "`return` inside a lambda"
LAMBDA_RETURN_FIX = ("a lambda's value is its last expression: write `v => v * 10`, or end the block "
                     "with the value and no `return`; to leave the handler early, use a `for` loop")


def lambda_escape(node: ast.Lambda) -> Optional[ast.Node]:
    """The first `return` in `node`'s body, or `break`/`continue` outside a loop of
    that body; None when control can only leave the lambda by its value."""
    stack: list[tuple[object, bool]] = [(node.body, False)]
    while stack:
        current, in_loop = stack.pop()
        if isinstance(current, (list, tuple)):
            stack.extend((item, in_loop) for item in reversed(current))
            continue
        if not isinstance(current, ast.Node):
            continue
        if isinstance(current, ast.Return):
            return current
        if isinstance(current, (ast.Break, ast.Continue)) and not in_loop:
            return current
        inner = in_loop or isinstance(current, (ast.For, ast.While))
        if isinstance(current, ast.Lambda):
            inner = False
        fields = [getattr(current, name) for name in current.FIELDS]
        stack.extend((value, inner) for value in reversed(fields))
    return None


def escape_message(node: ast.Node) -> str:
    """The error text for an escaping statement found by `lambda_escape`."""
    if isinstance(node, ast.Return):
        return LAMBDA_RETURN_MESSAGE
    return f"`{_word(node)}` inside a lambda, outside any loop of the lambda"


def escape_fix(node: ast.Node) -> str:
    """What to write instead of an escaping statement."""
    if isinstance(node, ast.Return):
        return LAMBDA_RETURN_FIX
    return (f"`{_word(node)}` only works in a `for` or `while` of the same body; a lambda cannot stop "
            "the builtin that calls it — use a `for` loop instead")


def _word(node: ast.Node) -> str:
    """`break` or `continue`."""
    return "break" if isinstance(node, ast.Break) else "continue"
