"""Iterative traversal of AST nodes, shared by the static analyses.

A node's children are the fields holding nodes, lists of
nodes, or tuples (`RecordLit.fields`, `PVariant.fields`) holding nodes, among its `FIELDS`. Walks
use an explicit stack, so deeply nested user programs cannot exhaust Python's
recursion limit.
"""

from __future__ import annotations

from typing import Iterator

from ..syntax import ast


def children(node: ast.Node) -> list[ast.Node]:
    """The direct child nodes of `node`, in field (source) order."""
    found: list[ast.Node] = []
    for name in node.FIELDS:
        _collect(getattr(node, name), found)
    return found


def _collect(value: object, found: list[ast.Node]) -> None:
    """Append the nodes held by a field value (a node, or a list/tuple of them)."""
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Node):
            found.append(current)
        elif isinstance(current, (list, tuple)):
            pending.extend(reversed(current))


def iter_tree(root: ast.Node) -> Iterator[ast.Node]:
    """Every node under `root` (root included), in pre-order."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def calls_in(root: ast.Node) -> list[ast.Call]:
    """Every by-name call under `root`, in source order."""
    return [n for n in iter_tree(root) if isinstance(n, ast.Call)]


def names_in(root: ast.Node) -> list[ast.Name]:
    """Every bare name under `root`, in source order."""
    return [n for n in iter_tree(root) if isinstance(n, ast.Name)]
