"""When a List or Map may be changed in place: the one rule behind every in-place update.

Soma values are values: `push` returns a new list, `ys = xs` then
`ys[0] = 9` leaves xs alone, a slot, a record field, a captured lambda or a
caller's argument never sees a change made through another name. Copying on
every change makes the everyday `xs = push(xs, x)` or `m[k] = v` loop
quadratic. So a change is made in place exactly when the List or Map being
changed has no holder but the place it is changed through (the variable, or
the container it sits in): no other local, session variable, slot, record,
list element, map value, captured frame, argument list or journal entry
refers to it. Then changing it is indistinguishable from building a new
value — the same reasoning as CPython's in-place `s += t` on an unshared
string. Python's reference count tells us exactly that: any other holder is
one more reference. Otherwise the container is first replaced, in that
place, by a shallow copy (its elements then have two holders, so a change
further down a path copies them in turn).

The count a lone value has depends on the code that looks at it, so each
shape of test is probed once at import against a value with one holder and
with two; if the probe does not tell them apart (another interpreter), the
in-place paths are switched off and every change copies, as before.

Three shapes use the rule: the generated code's test on a local
(`generated_owned_test`), `unshared(holder, key)` for a value held in a
frame, a session's variables or a container, and on top of it the
rebuilds (`extend_unshared`: `xs = push(xs, …)`, `xs = xs + […]`) and path
assignments (`write_path`: `m[k] = v`, `r.items[0] = v`).
"""

from __future__ import annotations

import sys

from ..core.diagnostics import SomaError
from ..syntax import ast
from .builtins.collections import push as push_builtin
from .intlocals import binds, walk
from .matrices import is_numeric_matrix
from .values import Variant, map_key, type_of

_refcount = sys.getrefcount

OWNED_NAME = "_own"  # the generated code's one temporary for the List or Map it may change in place
CONTAINER_TYPES_NAME = "_containers"  # the generated code's name for CONTAINER_TYPES
CONTAINER_TYPES = frozenset({list, dict})


def generated_owned_test(slot: str, count, kinds: str = "list") -> str:
    """Generated-code text: True when the list (`kinds="list"`) or the List or Map (`kinds="any"`)
    in `slot` (e.g. `f[3]`, `_v3`) has no holder but that slot.

    It leaves the value in the local OWNED_NAME for the in-place change.
    """
    kind_test = "is list" if kinds == "list" else f"in {CONTAINER_TYPES_NAME}"
    return f"type({OWNED_NAME} := {slot}) {kind_test} and _refcount({OWNED_NAME}) == {count}"


def _tells_apart(test, kinds=(list, dict)) -> bool:
    """True when `test(holder)` accepts a value of each of `kinds` held by `holder[1]` alone and refuses
    one with a second holder, for a list and a dict as the holder."""
    for kind in kinds:
        for holder in ([None, kind()], {0: None, 1: kind()}):
            alone = test(holder)
            other_holder = holder[1]
            shared = test(holder)
            if not (alone is True and shared is False and other_holder is holder[1]):
                return False
    return True


def _probe_generated() -> int:
    """The count at which generated_owned_test tells a lone value in a frame from a shared one (-1: none does)."""
    for count in range(1, MAX_PROBED_COUNT):
        if all(_tells_apart(_generated_probe(f"def probe(f):\n    return {{test}}\n", "f[1]", count, kinds),
                            (list,) if kinds == "list" else (list, dict))
               for kinds in ("list", "any")):
            return count
    return -1


def _probe_local() -> int:
    """The count at which generated_owned_test tells a lone value in a Python local from a shared one."""
    template = "def probe(holder):\n    _v1 = holder.pop(1)\n    return {test}\n"
    for count in range(1, MAX_PROBED_COUNT):
        if all(_tells_apart_local(_generated_probe(template, "_v1", count, kinds),
                                  (list,) if kinds == "list" else (list, dict))
               for kinds in ("list", "any")):
            return count
    return -1


def _generated_probe(template: str, slot: str, count: int, kinds: str):
    """The probe function written from `template` around generated_owned_test."""
    namespace = {"_refcount": _refcount, CONTAINER_TYPES_NAME: CONTAINER_TYPES}
    source = template.format(test=generated_owned_test(slot, count, kinds))
    exec(compile(source, "<soma in-place probe>", "exec"), namespace)
    return namespace["probe"]


def _tells_apart_local(probe, kinds) -> bool:
    """True when `probe` accepts a value of each of `kinds` it alone holds and refuses one held elsewhere too."""
    for kind in kinds:
        other_holder = kind()
        if not (probe({1: kind()}) is True and probe({1: other_holder}) is False):
            return False
    return True


def unshared(holder, key) -> bool:
    """True when the value at `holder[key]` has no holder but that place.

    `holder` is a frame (list), the session variables (dict) or a List or
    Map; the caller must not hold the value itself (not even in a local).
    """
    return _refcount(holder[key]) == _helper_unshared


def _probe_helper() -> int:
    """The count at which `unshared` (and extend_unshared, which makes the same test in its own
    frame) tells a lone value from a shared one (-1: none does)."""
    global _helper_unshared
    for count in range(1, MAX_PROBED_COUNT):
        _helper_unshared = count
        if (_tells_apart(lambda holder: unshared(holder, 1))
                and _tells_apart(lambda holder: extend_unshared(holder, 1, []), (list,))):
            return count
    return -1


def extend_unshared(holder, key, items: list) -> bool:
    """Extend the list `holder[key]` by `items` in place when nothing else holds it; False otherwise.

    The caller must not hold the list itself, and `items` must not be it.
    """
    if type(holder[key]) is list and _refcount(holder[key]) == _helper_unshared:  # unshared(), inline
        holder[key] += items
        return True
    return False


MAX_PROBED_COUNT = 8
GENERATED_UNSHARED = _probe_generated()
LOCAL_UNSHARED = _probe_local()
_helper_unshared = -1
_helper_unshared = _probe_helper()


def owned_part(holder, key, node):
    """The List or Map at `holder[key]` made that place's own, and its type.

    A value something else holds is first replaced there by a shallow copy.
    A struct variant (immutable) is replaced by a new one with a copy of its
    fields, which is returned (with the type Variant). Anything else cannot
    be assigned into (kind `type`, at `node`).
    """
    kind = type(holder.get(key) if type(holder) is dict else holder[key])
    if kind is list or kind is dict:
        if not unshared(holder, key):
            holder[key] = kind(holder[key])
        return holder[key], kind
    if kind is Variant and holder[key].fields is not None:
        variant = holder[key]
        fields = dict(variant.fields)
        holder[key] = Variant(variant.type_name, variant.name, fields, None)
        return fields, Variant
    part = holder.get(key) if type(holder) is dict else holder[key]
    raise SomaError("type", f"cannot assign into {type_of(part)}", node.span)


def write_path(holder, key, keys: list, new, op, node) -> None:
    """`holder[key]` with the value at path `keys` replaced by `new` (or combined with it by `op`).

    Every List or Map on the path is changed in place when nothing else
    holds it and copied first otherwise (see owned_part), so no other
    holder of any of them sees the change. Errors are located at `node`.
    """
    container, kind = owned_part(holder, key, node)
    write_into(container, kind, keys, new, op, node)


def write_into(container, kind, keys: list, new, op, node) -> None:
    """Like write_path, into a `container` of type `kind` the caller already owns."""
    last = len(keys) - 1
    for position, step in enumerate(keys):
        if kind is list:
            if type(step) is not int:
                raise SomaError("type", f"a list index must be an Int, got {type_of(step)}", node.span)
            if not -len(container) <= step < len(container):
                raise SomaError("index", f"index {step} out of range for length {len(container)}", node.span)
        elif kind is dict:
            step = map_key(step)
        if position == last:
            break
        container, kind = owned_part(container, step, node)
    if op is None:
        container[step] = new
        return
    current = container[step] if kind is list else container.get(step)
    if current is None and kind is not Variant:
        raise SomaError("type", "cannot combine () with a value — default it first: (m.get(k) ?? 0)", node.span)
    container[step] = op(current, new)


def written_copy(root, keys: list, new, node):
    """A new value: `root` (which the caller's variable still holds) with the value at path `keys` set."""
    box = [root]
    write_path(box, 0, keys, new, None, node)
    return box[0]


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


def changed_only(loop) -> dict[str, str]:
    """The names a `for` or `while` loop's rounds (body, and a while's condition) mention only to
    change them one way, with that way: "push" for `x = push(x, a…)` statements, "write" for
    one-step writes `x[k] = v` / `x.f = v`, in both cases with nothing else in the statement
    mentioning x (and the rounds never bind x; nor is x a `for` loop's own variable).

    Nothing in such a round can give x's List or Map a second holder: once a round has changed
    it in place, or replaced it by a fresh copy, it stays unshared for the rounds after.
    """
    # name -> [way of its first change, its changes, mentions a change that way makes]: the mentions
    # add up to changes × mentions only when every change is that way (a push makes 2, a write 1)
    changes: dict[str, list] = {}
    mentions: dict[str, int] = {}
    nodes = list(walk([loop.body, getattr(loop, "cond", None)]))
    for node in nodes:
        change = _one_way_change(node)
        if change is not None:
            way, name, mentioned = change
            changes.setdefault(name, [way, 0, mentioned])[1] += 1
        elif isinstance(node, ast.Name):
            mentions[node.id] = mentions.get(node.id, 0) + 1
    own_variable = getattr(loop, "var", None)
    return {name: way for name, (way, count, each) in changes.items()
            if mentions.get(name) == count * each and name != own_variable
            and not any(binds(node, name) for node in nodes)}


def _one_way_change(node):
    """(way, name, the mentions of name the statement makes) when node is a push rebuild or a
    one-step write of a local (see changed_only); else None."""
    if not isinstance(node, ast.Assign):
        return None
    if extends_itself(node) == "push":
        return "push", node.target.id, 2
    target = node.target
    if node.op == "=" and isinstance(target, (ast.Index, ast.Field)) and isinstance(target.obj, ast.Name):
        return "write", target.obj.id, 1
    return None


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
    """True when `current + items` is a concatenation: not the element-wise sum of
    equal-length numeric lists, nor `+` of two numeric matrices (element-wise, or
    the shape error when their row counts differ — never a join of their rows)."""
    if type(items) is not list:
        return False
    if not current:
        return True
    if len(current) == len(items):
        return False
    return not (is_numeric_matrix(items) and is_numeric_matrix(current))
