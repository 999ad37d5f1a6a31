"""Value checks decidable from the expression alone: variant literals
(unknown or missing struct fields, braces on a unit or tuple variant); Bool
operators and conditions given a value that is never a Bool (a parameter
declared Int/Float/String/List/Map and never rebound, a builtin whose
signature returns such a type like `len()`, or — as a warning — a literal);
and `emit` without a listener or with an argument count no listener takes.
(Tuple-variant payload counts are call arity, checked in `calls`.)"""

from __future__ import annotations

from typing import Optional

from ..runtime.builtins import builtin_entry
from ..syntax import ast
from .calls import accepts, handler_arity
from .context import ProgramIndex, Reporter
from .walk import iter_tree

# Return types that are never a Bool, as builtin signatures spell them.
_NON_BOOL_TYPES = {"Int", "Float", "String", "List", "Map"}


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report value problems in every handler and scheduled block."""
    for _info, owner in index.bodies():
        typed = _fixed_parameter_types(owner)
        for node in iter_tree(owner.body):
            if isinstance(node, ast.RecordLit):
                _record_literal(index, report, node)
            elif isinstance(node, ast.Emit):
                _emit(index, report, node)
            _bool_operands(index, report, node, typed)


# ------------------------------------------------------------ variant literals

def _record_literal(index: ProgramIndex, report: Reporter, node: ast.RecordLit) -> None:
    """`Variant { f: e }` must name exactly the fields of a struct variant."""
    found = index.variants.get(node.type_name)
    if found is None:
        return
    type_decl, variant = found
    if variant.fields is None:
        shape = "a tuple variant: write " + f"{variant.name}(…)" if variant.items is not None \
            else "a unit variant: write " + variant.name
        report.error(node, f"variant '{variant.name}' of {type_decl.name} has no fields — it is {shape}",
                     "variant_literal", "match the variant's declaration")
        return
    declared = [name for name, _type in variant.fields]
    for name, value in node.fields:
        if name not in declared:
            report.error(value, f"variant '{variant.name}' has no field '{name}' (fields: {', '.join(declared)})",
                         "variant_literal", "use the declared field names")
    given = {name for name, _value in node.fields}
    missing = [name for name in declared if name not in given]
    if missing:
        report.error(node, f"variant '{variant.name}' literal is missing field(s) {', '.join(missing)}",
                     "variant_literal", f"give every field: {variant.name} {{ "
                     + ", ".join(f"{name}: …" for name in declared) + " }")


# ------------------------------------------------------------ Bool operands

def _fixed_parameter_types(owner: ast.Node) -> dict[str, str]:
    """Parameters declared with a non-Bool type that the body never rebinds."""
    declared = {p.name: p.type.name for p in getattr(owner, "params", [])
                if p.type is not None and p.type.name in _NON_BOOL_TYPES}
    for node in iter_tree(owner.body):
        if isinstance(node, ast.Let):
            declared.pop(node.name, None)
        elif isinstance(node, ast.Assign) and isinstance(node.target, ast.Name):
            declared.pop(node.target.id, None)
        elif isinstance(node, ast.For):
            declared.pop(node.var, None)
        elif isinstance(node, ast.Lambda):
            declared.pop(node.param, None)
    return declared


def _bool_operands(index: ProgramIndex, report: Reporter, node: ast.Node, typed: dict[str, str]) -> None:
    """Operands of `!`, `&&`, `||` and the conditions of if/while/require/ensure."""
    if isinstance(node, ast.Unary) and node.op == "!":
        _expect_bool(index, report, node.operand, "the operand of `!`", typed)
    elif isinstance(node, ast.Binary) and node.op in ("&&", "||"):
        _expect_bool(index, report, node.left, f"the left operand of `{node.op}`", typed)
        _expect_bool(index, report, node.right, f"the right operand of `{node.op}`", typed)
    elif isinstance(node, (ast.If, ast.While)):
        word = "if" if isinstance(node, ast.If) else "while"
        _expect_bool(index, report, node.cond, f"the `{word}` condition", typed)
    elif isinstance(node, (ast.Require, ast.Ensure)):
        word = "require" if isinstance(node, ast.Require) else "ensure"
        _expect_bool(index, report, node.cond, f"the `{word}` condition", typed)


def _expect_bool(index: ProgramIndex, report: Reporter, expr: ast.Expr, where: str, typed: dict[str, str]) -> None:
    """Report `expr` when it can never be a Bool."""
    if isinstance(expr, ast.Name) and expr.id in typed:
        report.error(expr, f"{where} must be a Bool, but `{expr.id}` is declared {typed[expr.id]}", "non_bool",
                     "compare it (`len(xs) > 0`, `n != 0`, `s != \"\"`) to get a Bool")
        return
    what = _non_bool(index, expr)
    if what is None:
        return
    message = f"{where} must be a Bool, but it is {what}"
    fix = "compare it (`len(xs) > 0`, `n != 0`, `s != \"\"`) to get a Bool"
    if _is_literal(expr):
        # a literal operand is plain to see and refused when the line runs
        # (kind "type"): a warning, as for other literal slips
        report.warning(expr, message, "non_bool", fix)
    else:
        report.error(expr, message, "non_bool", fix)


def _is_literal(expr: ast.Expr) -> bool:
    """A number, string or list written out in the source."""
    return isinstance(expr, (ast.Literal, ast.InterpString, ast.ListLit))


def _non_bool(index: ProgramIndex, expr: ast.Expr) -> Optional[str]:
    """How `expr` is known not to be a Bool, or None when it may be one."""
    if isinstance(expr, ast.Literal) and not isinstance(expr.value, bool):
        kinds = {int: "an Int literal", float: "a Float literal", str: "a String literal"}
        return kinds.get(type(expr.value))
    if isinstance(expr, ast.InterpString):
        return "a String"
    if isinstance(expr, ast.ListLit):
        return "a List literal"
    if isinstance(expr, ast.Call) and expr.cell is None and expr.func not in index.handler_owners:
        returns = _builtin_return(expr.func)
        if returns is not None:
            return f"the {returns} that {expr.func}() returns"
    return None


def _builtin_return(name: str) -> Optional[str]:
    """The return type of a builtin when its signature names only non-Bool types."""
    entry = builtin_entry(name)
    signature = getattr(entry, "signature", None) or ""
    if "->" not in signature:
        return None
    returns = signature.rsplit("->", 1)[1].strip()
    if returns and all(part.strip() in _NON_BOOL_TYPES for part in returns.split("|")):
        return returns
    return None


# ------------------------------------------------------------ emit

def _emit(index: ProgramIndex, report: Reporter, node: ast.Emit) -> None:
    """An emitted signal needs a listener (`on name(…)`) taking its arguments."""
    listeners = [(owner, info.handler(node.name)) for owner in index.handler_owners.get(node.name, [])
                 for info in [index.cells[owner]]]
    if not listeners:
        report.warning(node, f"emit {node.name}(): no cell has a handler `on {node.name}(…)` — nothing receives it",
                       "emit_listener", f"add `on {node.name}(…)` to the cell that should react, or fix the name")
        return
    for owner, handler in listeners:
        if handler is not None and not accepts(handler_arity(handler), len(node.args)):
            low, high = handler_arity(handler)
            wanted = str(low) if low == high else f"{low} to {high}"
            report.error(node, f"emit {node.name}() passes {len(node.args)} argument(s), but the listener "
                         f"'{node.name}' of cell '{owner}' takes {wanted}", "emit_listener",
                         "pass what the listener declares")
