"""Name checks in handler bodies: undefined variables (block-scoped, with
did-you-mean, inside interpolation and `require … else Tag "{x}"` too),
another cell's slots, `break`/`continue` outside loops, `return` inside a
lambda, slot methods on locals, whole-slot assignment and a `let` hiding a slot."""

from __future__ import annotations

from typing import Callable, Optional

from ..syntax import ast
from ..syntax.dangling import KeywordProblem, keyword_name_problem
from ..syntax.lambdas import LAMBDA_RETURN_FIX, LAMBDA_RETURN_MESSAGE, lambda_escape
from .context import CellInfo, ProgramIndex, Reporter, did_you_mean, suggest
from .walk import calls_in, iter_tree

SLOT_WRITERS = ("set", "delete", "push", "append")


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report name problems in every handler and scheduled block."""
    for info, owner in index.bodies():
        facts = index.facts(owner)
        _undefined_names(index, report, info, facts, _typed_state_arguments(index, info, owner),
                         _written_roots(owner))
        for escape in facts.loop_escapes:
            word = "break" if isinstance(escape, ast.Break) else "continue"
            report.error(escape, f"`{word}` outside a loop", "loop_escape",
                         f"`{word}` only works inside `for` or `while`; use `return` to leave a handler")
        _lambda_returns(report, owner)
        _slot_misuse(report, info, facts)


def dangling_keyword(statements: list, known: Callable[[str], bool]) -> Optional[KeywordProblem]:
    """The first keyword read as a name after an operator ending its line (`x +`, then `assert …`)
    that nothing defines: neither `known` (session variables, globals) nor a binding among `statements`.

    Top-level statements run one by one; this finds the incomplete expression
    before the first of them runs, as a syntax error would.
    """
    suspects, bound = [], set()
    for statement in statements:
        for node in iter_tree(statement):
            if isinstance(node, ast.Name) and node.after_operator is not None:
                suspects.append(node)
            elif isinstance(node, (ast.Let, ast.RuleLet, ast.PBind)):
                bound.add(node.name)
            elif isinstance(node, (ast.For, ast.RuleProperty)):
                bound.add(node.var)
            elif isinstance(node, ast.Lambda):
                bound.add(node.param)
    for node in suspects:
        if node.id not in bound and not known(node.id):
            return keyword_name_problem(node)
    return None


def _lambda_returns(report: Reporter, owner: ast.Node) -> None:
    """A `return` inside a lambda (once, however deep the lambdas nest): the
    runtime refuses it with the same words (syntax.lambdas)."""
    seen: set[int] = set()
    for node in iter_tree(owner):
        if not isinstance(node, ast.Lambda):
            continue
        escape = lambda_escape(node)
        if isinstance(escape, ast.Return) and id(escape) not in seen:
            seen.add(id(escape))
            report.error(escape, LAMBDA_RETURN_MESSAGE, "lambda_return", LAMBDA_RETURN_FIX)


def known_global(index: ProgramIndex, info: CellInfo, name: str) -> bool:
    """True when a non-local name means something in `info`'s handlers: a
    slot, variant, handler, builtin, or a cell (`Shopper.decide` passes a
    handler as a value); another cell's slot does not, even when a builtin
    shares its name."""
    if name not in info.slots and _foreign_slot_owner(index, info, name) is not None:
        return False
    return (name in info.slots or name in index.variants or name in index.handler_owners
            or name in index.cells or index.is_builtin(name))


def _typed_state_arguments(index: ProgramIndex, info: CellInfo, owner: ast.Node) -> set[int]:
    """ids of the bare names given as states to transition() when the machine
    is typed: the machine check reports an unknown one (with the declared
    states), so the name check stays quiet about it."""
    model = info.model if info.model is not None else index.only_machine()
    if model is None or model.node is None or not model.node.type_name:
        return set()
    return {id(arg) for call in calls_in(owner.body) if call.func == "transition" and call.cell is None
            for arg in call.args[1:] if isinstance(arg, ast.Name) and arg.id[:1].isupper()}


def _written_roots(owner: ast.Node) -> set[int]:
    """ids of the bare names a body writes through: `x.set(…)`-style writers and
    `x[k] = …` / `x.f = …` assignments (so a foreign slot use can say "writes")."""
    written = set()
    for node in iter_tree(owner):
        if isinstance(node, ast.MethodCall) and node.method in SLOT_WRITERS:
            root = node.receiver
        elif isinstance(node, ast.Assign) and isinstance(node.target, (ast.Index, ast.Field)):
            root = node.target
            while isinstance(root, (ast.Index, ast.Field)):
                root = root.obj
        else:
            continue
        if isinstance(root, ast.Name):
            written.add(id(root))
    return written


def _undefined_names(index: ProgramIndex, report: Reporter, info: CellInfo, facts, states: set[int],
                     written: set[int]) -> None:
    """Names that no local, slot, variant, handler or builtin defines."""
    for use in facts.names:
        name = use.node.id
        if use.local or known_global(index, info, name) or id(use.node) in states:
            continue
        owner = _foreign_slot_owner(index, info, name)
        if owner is not None:
            if id(use.node) in written:
                verb, fix = "writes", f"add a handler to '{owner}' that makes this write, and call {owner}.<handler>()"
            else:
                verb, fix = "reads", f"add a handler to '{owner}' that returns what you need, and call {owner}.<handler>()"
            report.error(use.node, f"cell '{info.name}' {verb} memory slot '{name}' of cell '{owner}': "
                         "another cell's slot is private", "foreign_slot", fix)
            continue
        problem = keyword_name_problem(use.node)
        if problem is not None:
            report.error(problem, problem.message, "parse" if problem.incomplete else "undefined_name", problem.hint)
            continue
        candidates = set(use.visible) | set(info.slots) | set(index.variants)
        if name[:1].isupper():
            what, fix = "variant or name", "declare the variant in a `cell type`, or fix the spelling"
        else:
            what, fix = "variable", f"bind it first (`let {name} = …`) or fix the spelling"
        spelling = suggest(name, candidates)
        report.error(use.node, f"undefined {what} '{name}'{did_you_mean(spelling)}", "undefined_name", fix,
                     spelling)


def _foreign_slot_owner(index: ProgramIndex, info: CellInfo, name: str):
    """The other cell whose memory declares `name`, or None."""
    for other in index.cells.values():
        if other is not info and name in other.slots:
            return other.name
    return None


def _slot_misuse(report: Reporter, info: CellInfo, facts) -> None:
    """Slot methods on locals, whole-slot assignment, `let` hiding a slot."""
    for use in facts.methods:
        method = use.node.method
        discarded = id(use.node) in facts.discarded  # `out = out.push(x)` keeps the new list: fine
        if use.local and discarded and method in SLOT_WRITERS and isinstance(use.node.receiver, ast.Name):
            report.error(use.node, f"`.{method}()` on the local '{use.root}': slot methods write memory slots, "
                         "not local values — the result is thrown away", "local_slot_method",
                         _local_fix(use.root, method))
    for use in facts.assigns:
        if not use.local and use.root in info.slots and isinstance(use.node.target, ast.Name):
            report.error(use.node, f"whole-slot assignment to memory slot '{use.root}' is not allowed",
                         "slot_assignment", f"write entries: `{use.root}.set(key, value)` (Map) or "
                         f"`{use.root}.push(value)` (List)")
    for let in facts.lets:
        if let.name in info.slots:
            report.warning(let, f"`let {let.name}` hides the memory slot '{let.name}' of cell '{info.name}'",
                           "let_hides_slot", "rename the local")


def _local_fix(name: str, method: str) -> str:
    """How to write a local collection instead of calling a slot method on it."""
    if method in ("push", "append"):
        return f"use `{name} = push({name}, x)`"
    if method == "delete":
        return f"use `{name} = without({name}, key)`"
    return f"use `{name}[key] = value`"
