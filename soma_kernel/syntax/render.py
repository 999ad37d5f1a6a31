"""Soma source text of expressions and patterns, with minimal parentheses.

A child is parenthesised only when its precedence is lower than its
parent's, or equal on the right of a left-associative operator (both sides
for the non-associative comparisons). Block bodies (`if`, `match`, `try`,
block lambdas) are shown as `{ … }`. Rendering is bottom-up over an explicit
stack, so deep expressions need no recursion.
"""

from __future__ import annotations

from . import ast

# Precedence levels of §7.2, low → high.
LAMBDA, OR, AND, COALESCE, COMPARE, PIPE, ADD, MUL, UNARY, POSTFIX, PRIMARY = range(11)

BINARY_PRECEDENCE = {
    "||": OR, "&&": AND, "??": COALESCE,
    "==": COMPARE, "!=": COMPARE, "<": COMPARE, ">": COMPARE, "<=": COMPARE, ">=": COMPARE,
    "+": ADD, "-": ADD, "*": MUL, "/": MUL, "%": MUL,
}

ELLIPSIS_BLOCK = "{ … }"

# `{` and `}` are doubled: a single one would start (or end) an interpolation when the text is read back.
_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0",
                   "{": "{{", "}": "}}"}


def render_expr(expr) -> str:
    """The Soma source text of an expression."""
    rendered: dict[int, tuple[str, int]] = {}
    stack: list[tuple[object, bool]] = [(expr, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            rendered[id(node)] = _render_node(node, rendered)
        elif id(node) not in rendered:
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
    return rendered[id(expr)][0]


def render_pattern(pattern) -> str:
    """The Soma source text of a match pattern."""
    rendered: dict[int, str] = {}
    stack: list[tuple[object, bool]] = [(pattern, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            rendered[id(node)] = _render_pattern_node(node, rendered)
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in _pattern_children(node))
    return rendered[id(pattern)]


def render_literal(value) -> str:
    """A literal value as Soma source (`"s"`, `3`, `1.5`, `true`, `()`)."""
    if value is None:
        return "()"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return '"' + "".join(_STRING_ESCAPES.get(c) or _escaped_control(c) for c in value) + '"'
    return repr(value)


def _escaped_control(char: str) -> str:
    """A character as it stands in a string literal: itself, or `\\u{…}` for a control or format character."""
    return f"\\u{{{ord(char):x}}}" if not char.isprintable() and char != " " else char


def render_data(value) -> str:
    """Python data (None, bool, int, float, str, and lists and dicts of them) as a Soma expression for it.

    None is `()`, a list `[…]`, a dict `map(key, value, …)` (Soma has no map
    literal; `map()` is the empty one). Raises ValueError for what Soma cannot
    write: an infinite or NaN float, or any other kind of value.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return render_literal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} has no Soma literal (a Float is finite)")
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_data(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map(" + ", ".join(f"{render_data(key)}, {render_data(item)}" for key, item in value.items()) + ")"
    raise ValueError(f"a {type(value).__name__} ({value!r}) has no Soma literal")


# ---------------------------------------------------------------- expressions


def _children(node) -> list:
    """The sub-expressions a node's text is made of."""
    if isinstance(node, ast.Binary):
        return [node.left, node.right]
    if isinstance(node, ast.Unary):
        return [node.operand]
    if isinstance(node, ast.Pipe):
        return [node.value, node.target]
    if isinstance(node, (ast.Call, ast.MethodCall)):
        receiver = [node.receiver] if isinstance(node, ast.MethodCall) else []
        return receiver + list(node.args)
    if isinstance(node, (ast.Field, ast.Index)):
        return [node.obj] + ([node.index] if isinstance(node, ast.Index) else [])
    if isinstance(node, ast.Propagate):
        return [node.expr]
    if isinstance(node, ast.ListLit):
        return list(node.items)
    if isinstance(node, ast.RecordLit):
        return [value for _, value in node.fields]
    if isinstance(node, ast.InterpString):
        return [part for part in node.parts if not isinstance(part, str)]
    if isinstance(node, ast.If):
        return [node.cond] + ([node.orelse] if isinstance(node.orelse, ast.If) else [])
    if isinstance(node, ast.Match):
        return [node.subject]
    if isinstance(node, ast.Lambda) and not isinstance(node.body, ast.Block):
        return [node.body]
    return []


def _text(rendered: dict, node, minimum: int) -> str:
    """A child's text, parenthesised when its precedence is below `minimum`."""
    text, precedence = rendered[id(node)]
    return f"({text})" if precedence < minimum else text


def _render_node(node, rendered: dict) -> tuple[str, int]:
    """One node's (text, precedence), its children already rendered."""
    if isinstance(node, ast.Binary):
        level = BINARY_PRECEDENCE[node.op]
        left_min = level + 1 if level == COMPARE else level
        return (f"{_text(rendered, node.left, left_min)} {node.op} "
                f"{_text(rendered, node.right, level + 1)}", level)
    if isinstance(node, ast.Pipe):
        return f"{_text(rendered, node.value, PIPE)} |> {_text(rendered, node.target, PIPE + 1)}", PIPE
    if isinstance(node, ast.Unary):
        return f"{node.op}{_text(rendered, node.operand, UNARY)}", UNARY
    if isinstance(node, ast.Literal):
        negative = isinstance(node.value, (int, float)) and not isinstance(node.value, bool) and node.value < 0
        return render_literal(node.value), UNARY if negative else PRIMARY
    return _render_postfix_or_primary(node, rendered)


def _args(rendered: dict, args: list) -> str:
    """Comma-separated argument texts."""
    return ", ".join(rendered[id(a)][0] for a in args)


def _render_postfix_or_primary(node, rendered: dict) -> tuple[str, int]:
    """Calls, member access and the primary forms."""
    if isinstance(node, ast.Call):
        prefix = f"{node.cell}." if node.cell else ""
        return f"{prefix}{node.func}({_args(rendered, node.args)})", POSTFIX
    if isinstance(node, ast.MethodCall):
        return f"{_text(rendered, node.receiver, POSTFIX)}.{node.method}({_args(rendered, node.args)})", POSTFIX
    if isinstance(node, ast.Field):
        return f"{_text(rendered, node.obj, POSTFIX)}.{node.name}", POSTFIX
    if isinstance(node, ast.Index):
        return f"{_text(rendered, node.obj, POSTFIX)}[{rendered[id(node.index)][0]}]", POSTFIX
    if isinstance(node, ast.Propagate):
        return f"{_text(rendered, node.expr, POSTFIX)}?", POSTFIX
    if isinstance(node, ast.Lambda):
        body = ELLIPSIS_BLOCK if isinstance(node.body, ast.Block) else rendered[id(node.body)][0]
        return f"{node.param} => {body}", LAMBDA
    return _render_primary(node, rendered), PRIMARY


def _render_primary(node, rendered: dict) -> str:
    """Names, collections, strings and the block forms."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.ListLit):
        return f"[{_args(rendered, node.items)}]"
    if isinstance(node, ast.RecordLit):
        fields = ", ".join(f"{name}: {rendered[id(value)][0]}" for name, value in node.fields)
        return f"{node.type_name} {{ {fields} }}" if fields else f"{node.type_name} {{}}"
    if isinstance(node, ast.InterpString):
        return _render_interp(node, rendered)
    if isinstance(node, ast.If):
        text = f"if {rendered[id(node.cond)][0]} {ELLIPSIS_BLOCK}"
        if isinstance(node.orelse, ast.If):
            return f"{text} else {rendered[id(node.orelse)][0]}"
        return f"{text} else {ELLIPSIS_BLOCK}" if node.orelse is not None else text
    if isinstance(node, ast.Match):
        return f"match {rendered[id(node.subject)][0]} {ELLIPSIS_BLOCK}"
    if isinstance(node, ast.Try):
        return f"try {ELLIPSIS_BLOCK}"
    raise TypeError(f"not an expression: {type(node).__name__}")


def _render_interp(node: ast.InterpString, rendered: dict) -> str:
    """`"text {expr} text"` (triple-quoted strings keep their raw text)."""
    pieces = []
    for part in node.parts:
        if isinstance(part, str):
            text = part if node.triple else "".join(_STRING_ESCAPES.get(c, c) for c in part)
            pieces.append(text.replace("{", "{{").replace("}", "}}"))
        else:
            segment = rendered[id(part)][0]
            if not node.triple:
                segment = segment.replace("\\", "\\\\").replace('"', '\\"')
            pieces.append("{" + segment + "}")
    quote = '"""' if node.triple else '"'
    return quote + "".join(pieces) + quote


# ---------------------------------------------------------------- patterns


def _pattern_children(node) -> list:
    """The sub-patterns of a pattern."""
    if isinstance(node, ast.POr):
        return list(node.alternatives)
    if isinstance(node, ast.PVariant):
        items = list(node.items or [])
        return items + [p for _, p in node.fields or [] if p is not None]
    if isinstance(node, ast.PMap):
        return [p for _, p in node.entries if p is not None]
    return []


def _render_entries(entries, rendered: dict) -> str:
    """`a, b: "x"` — shorthand bindings and keyed sub-patterns."""
    return ", ".join(name if p is None else f"{name}: {rendered[id(p)]}" for name, p in entries)


def _render_pattern_node(node, rendered: dict) -> str:
    """One pattern's text, its sub-patterns already rendered."""
    if isinstance(node, ast.PWildcard):
        return "_"
    if isinstance(node, ast.PLiteral):
        return render_literal(node.value)
    if isinstance(node, ast.PBind):
        return node.name
    if isinstance(node, ast.PRange):
        return f"{render_literal(node.lo)}..{render_literal(node.hi)}"
    if isinstance(node, ast.POr):
        return " || ".join(rendered[id(p)] for p in node.alternatives)
    if isinstance(node, ast.PStringPrefix):
        return f"{render_literal(node.prefix)} + {node.rest}"
    if isinstance(node, ast.PMap):
        return "{" + _render_entries(node.entries, rendered) + "}"
    if isinstance(node, ast.PVariant):
        if node.fields is not None:
            return f"{node.name} {{ {_render_entries(node.fields, rendered)} }}"
        if node.items is not None:
            return f"{node.name}({', '.join(rendered[id(p)] for p in node.items)})"
        return node.name
    raise TypeError(f"not a pattern: {type(node).__name__}")
