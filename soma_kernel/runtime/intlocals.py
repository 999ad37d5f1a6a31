"""Which locals of a handler always hold an Int, so generated arithmetic on them needs no type test.

A name qualifies when every place that binds or assigns it gives an Int: a
parameter declared `Int` (checked on entry), `let`/assignment of an Int
literal or of `+ - *` over Ints (Python ints grow past 64 bits exactly as
Soma's do), `%` by a positive literal, unary minus, `+=`/`-=`/`*=` by an
Int, or the variable of a `for` over `range(…)` (range yields Ints). A name
bound anywhere else (a lambda or match pattern, a loop over a list, any other
value) does not, nor does a name that is also a slot (a use outside the
`let`'s block would read the slot). The judgement is by name over the whole
handler, so block shadowing can only make it more cautious.
"""

from __future__ import annotations

from ..syntax import ast

INT_ARITHMETIC = frozenset({"+", "-", "*"})
INT_COMPOUND = frozenset({"+=", "-=", "*="})


def int_locals(handler: ast.Handler, params: list[ast.Param], slots, own_handlers) -> frozenset[str]:
    """The names of `handler` that hold an Int wherever they are bound or assigned.

    `slots` and `own_handlers` are the names of the cell's slots and handlers
    (a handler named `range` makes `for x in range(…)` call it instead).
    """
    bindings: dict[str, list] = {}
    refused: set[str] = set(slots)
    for param in params:
        typed = param.type is not None and param.type.name == "Int" and not param.type.args
        bindings.setdefault(param.name, []).append("int" if typed else None)
    nodes = list(walk(handler.body))
    range_is_builtin = "range" not in own_handlers and not any(binds(node, "range") for node in nodes)
    for node in nodes:
        _note_binding(node, bindings, refused, range_is_builtin)
    candidates = {name for name, values in bindings.items() if name not in refused and None not in values}
    while True:
        kept = {name for name in candidates
                if all(value == "int" or is_int_expr(value, candidates) for value in bindings[name])}
        if kept == candidates:
            return frozenset(kept)
        candidates = kept


def binds(node, name: str) -> bool:
    """True when `node` binds or assigns `name`."""
    bound = {ast.Let: "name", ast.For: "var", ast.Lambda: "param", ast.PBind: "name", ast.PStringPrefix: "rest"}
    field = bound.get(type(node))
    return getattr(node, field) == name if field else False


def _note_binding(node, bindings: dict, refused: set, range_is_builtin: bool) -> None:
    """Record what `node` binds or assigns (None: something that is not known to be an Int)."""
    if isinstance(node, ast.Let):
        bindings.setdefault(node.name, []).append(node.value)
    elif isinstance(node, ast.Assign) and isinstance(node.target, ast.Name):
        name = node.target.id
        if node.op == "=":
            bindings.setdefault(name, []).append(node.value)
        elif node.op in INT_COMPOUND:
            bindings.setdefault(name, []).append(ast.Binary(op=node.op[0], left=node.target, right=node.value))
        else:
            refused.add(name)
    elif isinstance(node, ast.For):
        iterable = node.iterable
        ranged = (range_is_builtin and isinstance(iterable, ast.Call) and iterable.func == "range"
                  and iterable.cell is None)
        bindings.setdefault(node.var, []).append("int" if ranged else None)
    elif isinstance(node, ast.Lambda):
        refused.add(node.param)
    elif isinstance(node, ast.PBind):
        refused.add(node.name)
    elif isinstance(node, ast.PStringPrefix):
        refused.add(node.rest)


def is_int_expr(node, ints) -> bool:
    """True when `node` always evaluates to an Int, given that the names in `ints` hold Ints.

    Iterative: an operator chain of 100 000 terms is one expression here.
    """
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Literal):
            if type(node.value) is not int:
                return False
        elif isinstance(node, ast.Name):
            if node.id not in ints:
                return False
        elif isinstance(node, ast.Unary) and node.op == "-":
            pending.append(node.operand)
        elif isinstance(node, ast.Binary) and node.op in INT_ARITHMETIC:
            pending.append(node.right)
            pending.append(node.left)
        elif isinstance(node, ast.Binary) and node.op == "%" and isinstance(node.right, ast.Literal) \
                and type(node.right.value) is int and node.right.value > 0:
            pending.append(node.left)
        else:
            return False
    return True


def walk(root):
    """Every AST node under `root` (iterative)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Node):
            yield node
            stack.extend(v for v in vars(node).values() if isinstance(v, (ast.Node, list, tuple)))
        elif isinstance(node, (list, tuple)):
            stack.extend(v for v in node if isinstance(v, (ast.Node, list, tuple)))
