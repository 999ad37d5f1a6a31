"""Amortized O(1) list rebuilds: `xs = push(xs, x)` and `xs = xs + ys` in place when nobody else holds xs.

Soma lists are values: `push` returns a new list and every other name for
the old one keeps seeing it unchanged. Copying on every round makes the
everyday `xs = push(xs, x)` loop quadratic. When the statement assigns the
rebuilt list back to the very variable it was built from, and that list has
no holder but the variable (no other local, session variable, slot, record,
list element, captured frame or journal entry refers to it), appending in
place is indistinguishable from building a new list — the same reasoning as
CPython's in-place `s += t` on an unshared string. Python's reference count
tells us exactly that: any other holder is one more reference.

The count a lone list has depends on the code that looks at it, so each
shape of test is probed once at import against a list with one holder and
with two; if the probe does not tell them apart (another interpreter), the
in-place path is switched off and every rebuild copies, as before.
"""

from __future__ import annotations

import sys

from ..syntax import ast
from .builtins.collections import push as push_builtin

_refcount = sys.getrefcount

OWNED_NAME = "_own"  # the generated code's one temporary for the list it may extend


def generated_owned_test(slot: str, count) -> str:
    """Generated-code text: True when the list in `slot` (e.g. `f[3]`) has no holder but that slot.

    It leaves the list in the local OWNED_NAME for the in-place append.
    """
    return f"type({OWNED_NAME} := {slot}) is list and _refcount({OWNED_NAME}) == {count}"


def _tells_apart(test) -> bool:
    """True when `test(frame)` accepts a list held by `frame[1]` alone and refuses one with a second holder."""
    frame = [None, []]
    alone = test(frame)
    other_holder = frame[1]
    shared = test(frame)
    return alone is True and shared is False and other_holder is frame[1]


def _probe_generated() -> int:
    """The count at which generated_owned_test tells a lone list from a shared one (-1: none does)."""
    for count in range(1, MAX_PROBED_COUNT):
        namespace = {"_refcount": _refcount}
        source = f"def probe(f):\n    return {generated_owned_test('f[1]', count)}\n"
        exec(compile(source, "<soma in-place probe>", "exec"), namespace)
        if _tells_apart(namespace["probe"]):
            return count
    return -1


def _probe_local() -> int:
    """The count at which generated_owned_test tells a lone list in a Python local from a shared one."""
    for count in range(1, MAX_PROBED_COUNT):
        namespace = {"_refcount": _refcount}
        source = f"def probe(holder):\n    _v1 = holder.pop()\n    return {generated_owned_test('_v1', count)}\n"
        exec(compile(source, "<soma in-place probe>", "exec"), namespace)
        other_holder: list = []
        alone, shared = namespace["probe"]([[]]), namespace["probe"]([other_holder])
        if alone is True and shared is False:
            return count
    return -1


def extend_unshared(holder, key, items: list) -> bool:
    """Extend the list `holder[key]` by `items` in place when nothing else holds it; False otherwise.

    `holder` is a frame (list) or the session variables (dict); the caller
    must not hold the list itself, and `items` must not be it.
    """
    current = holder[key]
    if type(current) is list and _refcount(current) == _helper_unshared:
        current += items
        return True
    return False


def _probe_helper() -> int:
    """The count at which extend_unshared tells a lone list from a shared one (-1: none does)."""
    global _helper_unshared
    for count in range(1, MAX_PROBED_COUNT):
        _helper_unshared = count
        if _tells_apart(lambda frame: extend_unshared(frame, 1, [])):
            return count
    return -1


MAX_PROBED_COUNT = 8
GENERATED_UNSHARED = _probe_generated()
LOCAL_UNSHARED = _probe_local()
_helper_unshared = -1
_helper_unshared = _probe_helper()


def is_push_target(target) -> bool:
    """True when a resolved call target is the `push` builtin (not a handler or lambda named push)."""
    return getattr(target, "builtin", None) is push_builtin


def extends_itself(node: ast.Assign) -> str:
    """What kind of self-rebuild `node` is: "push" (`x = push(x, …)`), "concat" (`x = x + e`, `x += e`) or ""."""
    target = node.target
    if not isinstance(target, ast.Name):
        return ""
    value = node.value
    if node.op == "+=":
        return "concat" if not contains_block(value) else ""
    if node.op != "=":
        return ""
    if (isinstance(value, ast.Call) and value.func == "push" and value.cell is None and len(value.args) >= 2
            and _is_name(value.args[0], target.id) and not any(contains_block(a) for a in value.args[1:])):
        return "push"
    if (isinstance(value, ast.Binary) and value.op == "+" and _is_name(value.left, target.id)
            and not contains_block(value.right)):
        return "concat"
    return ""


def _is_name(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def contains_block(expr) -> bool:
    """True when `expr` holds a block (the only place an expression can assign a variable)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Block):
            return True
        if isinstance(node, ast.Node):
            stack.extend(v for v in vars(node).values() if isinstance(v, (ast.Node, list, tuple)))
        elif isinstance(node, (list, tuple)):
            stack.extend(v for v in node if isinstance(v, (ast.Node, list, tuple)))
    return False


def concat_extends(current, items) -> bool:
    """True when `current + items` is a concatenation (not the element-wise sum of equal-length numeric lists)."""
    return type(items) is list and (not current or len(current) != len(items))
