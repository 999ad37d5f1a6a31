"""Compile the AST into Python closures.

Walking the tree on every evaluation is the slow way (50-100x plain Python).
Two compilers share one frame layout: `Compiler` (here) turns each
expression into a closure `ev(frame) -> value` and each statement into a
closure `ex(frame) -> control` (session and test code, guards, rare
constructs); `codegen.HandlerSource` writes each handler as one Python
function and falls back to these closures for any node it does not
generate — about 5-10x plain Python instead of 30-150x. Locals
live in a flat Python list (the frame) at indices fixed at compile time, with
block scoping resolved while compiling (a `let` inside a branch gets its own
index, so it is invisible after the branch).

Statement closures return None to continue, or BREAK / CONTINUE / RETURN;
the value being returned (and the last expression statement's value, for
implicit returns) waits in `frame[0]`. Control flow that has to cross an
expression (a `return` inside a block-bodied match arm used as a value) is
carried by the `ControlSignal` exception instead.

Names resolve, in order: a local of the enclosing scopes; a slot of the
calling cell; (at session/test level) a session variable; an uppercase name
as a unit variant. Calls resolve lazily at first use (and again after the
runtime's definitions change): a local lambda, an own-cell handler with the
right arity, an interpreter builtin, a pure builtin, the unique handler of
another cell, a tuple variant.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..core.diagnostics import MissingName, SomaError
from ..syntax import ast
from ..syntax.lambdas import escape_fix, escape_message, lambda_escape
from ..syntax.render import render_expr
from . import ops
from .builtins import BUILTINS, arity_error, takes
from .builtins.collections import range_object
from .limits import interpolated
from .matrices import matrix_field
from .inplace import concat_extends, extend_unshared, extends_itself, is_push_target, write_path
from .patterns import compile_pattern
from .values import Variant, display, map_key, type_of

BREAK = "break"
CONTINUE = "continue"
RETURN = "return"
FOLD_CHAIN_AT = 16  # a left-leaning operator chain this long is evaluated in a loop, not by nested closures

Eval = Callable[[list], object]
Exec = Callable[[list], Optional[str]]


class ControlSignal(Exception):
    """A break/continue/return crossing an expression boundary."""

    def __init__(self, kind: str, value: object = None):
        super().__init__(kind)
        self.kind = kind
        self.value = value


class Scope:
    """Compile-time name → frame-index map, chained for nested blocks.

    All scopes of one function share one counter, so every local of a
    handler (and of the lambdas inside it) has its own index. A scope made
    with `dynamic=True` is a session/test root: names it cannot find are read
    from, and `let`s at its level are written to, the session's variables.
    """

    def __init__(self, parent: Optional["Scope"] = None, dynamic: bool = False):
        self.parent = parent
        self.names: dict[str, int] = {}
        self.counter = parent.counter if parent else [1]  # index 0 holds the return value
        self.dynamic = dynamic if parent is None else parent.dynamic
        self.is_root = parent is None

    def child(self) -> "Scope":
        """A nested block scope."""
        return Scope(self)

    def declare(self, name: str) -> Optional[int]:
        """Allocate an index for `name` (None: a session variable at the root)."""
        if self.is_root and self.dynamic:
            return None
        index = self.counter[0]
        self.counter[0] += 1
        self.names[name] = index
        return index

    def lookup(self, name: str) -> Optional[int]:
        """The index of the innermost visible `name`, or None."""
        scope: Optional[Scope] = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def visible(self) -> dict[str, int]:
        """Every visible name with its index (inner names win)."""
        chain = []
        scope: Optional[Scope] = self
        while scope is not None:
            chain.append(scope.names)
            scope = scope.parent
        merged: dict[str, int] = {}
        for names in reversed(chain):
            merged.update(names)
        return merged

    @property
    def size(self) -> int:
        """Frame size needed by the function."""
        return self.counter[0]


class Lambda:
    """A Soma function value: a compiled one-parameter lambda with its captured frame."""

    __slots__ = ("param_index", "body", "captured", "display_name")

    def __init__(self, param: str, param_index: int, body: Eval, captured: list):
        self.param_index = param_index
        self.body = body
        self.captured = captured
        self.display_name = f"<lambda({param})>"

    def __call__(self, *args):
        frame = list(self.captured)
        frame[self.param_index] = args[0] if args else None
        return self.body(frame)

    def __repr__(self) -> str:
        return self.display_name


def raise_at(node: ast.Node, kind: str, detail: str, text: Optional[str] = None,
             missing: Optional[MissingName] = None):
    """Raise a SomaError located at `node` (with the MissingName of a name lookup that failed)."""
    raise SomaError(kind, detail, node.span, text=text, missing=missing)


class Compiler:
    """Compiles the bodies of one context: a cell's handlers, or session/test code.

    `cell` is the runtime CellState whose slots and handlers names may
    resolve to (None at session/test level); `env` the session variables
    used by dynamic scopes; `own_handler` the handler whose body this is,
    when it is one (its direct calls to itself, outside lambdas, see
    Runtime.resolve_call). `s_<Node>` compiles a statement node of that AST
    class, `e_<Node>` an expression node, each into a closure.
    """

    def __init__(self, runtime, cell=None, env: Optional[dict] = None, own_handler=None):
        self.rt = runtime
        self.cell = cell
        self.env = env if env is not None else {}
        self.invariant_mode = False
        self.own_handler = own_handler
        self.lambda_depth = 0

    def self_caller(self, node: ast.Call):
        """The handler this call is a direct recursion of (a bare call of the
        handler's own name in its body, outside any lambda), else None."""
        own = self.own_handler
        if own is None or self.lambda_depth or node.cell is not None or node.func != own.name:
            return None
        return own

    # ------------------------------------------------------------ blocks

    def block(self, block: ast.Block, scope: Scope) -> Exec:
        """A statement block as one Exec."""
        inner = scope.child()
        steps = [self.stmt(s, inner) for s in block.stmts]
        if not steps:
            return lambda f: None
        if len(steps) == 1:
            return steps[0]

        def run(f, steps=tuple(steps)):
            for step in steps:
                control = step(f)
                if control is not None:
                    return control
            return None

        return run

    def block_value(self, block: ast.Block, scope: Scope) -> Eval:
        """A block used as a value: the value of its last expression statement."""
        inner = scope.child()
        stmts = block.stmts
        if stmts and isinstance(stmts[-1], ast.ExprStmt):
            head = [self.stmt(s, inner) for s in stmts[:-1]]
            last = self.expr(stmts[-1].expr, inner)
        else:
            head = [self.stmt(s, inner) for s in stmts]
            last = None

        def run(f, head=tuple(head), last=last):
            for step in head:
                control = step(f)
                if control is not None:
                    raise ControlSignal(control, f[0])
            return last(f) if last is not None else None

        return run

    def body_value(self, body, scope: Scope) -> Eval:
        """An arm/lambda body: an expression or a block."""
        if isinstance(body, ast.Block):
            return self.block_value(body, scope)
        return self.expr(body, scope)

    # ------------------------------------------------------------ statements

    def stmt(self, node: ast.Stmt, scope: Scope) -> Exec:
        """Compile one statement."""
        method = getattr(self, "s_" + type(node).__name__, None)
        if method is None:
            raise_at(node, "internal", f"cannot run a {type(node).__name__} here")
        return method(node, scope)

    def s_ExprStmt(self, node: ast.ExprStmt, scope: Scope) -> Exec:
        expr = node.expr
        if isinstance(expr, ast.If):
            return self.if_stmt(expr, scope)
        if isinstance(expr, ast.Match):
            return self.match_stmt(expr, scope)
        ev = self.expr(expr, scope)

        def run(f):
            f[0] = ev(f)
            return None

        return run

    def s_Let(self, node: ast.Let, scope: Scope) -> Exec:
        ev = self.expr(node.value, scope)
        index = scope.declare(node.name)
        if index is None:
            env, name = self.env, node.name

            def run_env(f):
                env[name] = ev(f)

            return run_env

        def run(f):
            f[index] = ev(f)

        return run

    def s_Return(self, node: ast.Return, scope: Scope) -> Exec:
        if node.value is None:
            def run_unit(f):
                f[0] = None
                return RETURN

            return run_unit
        ev = self.expr(node.value, scope)

        def run(f):
            f[0] = ev(f)
            return RETURN

        return run

    def s_Break(self, node, scope):
        return lambda f: BREAK

    def s_Continue(self, node, scope):
        return lambda f: CONTINUE

    def s_If(self, node: ast.If, scope: Scope) -> Exec:
        return self.if_stmt(node, scope)

    def if_stmt(self, node: ast.If, scope: Scope) -> Exec:
        """`if` in statement position: branches are statement blocks."""
        cond = self.condition(node.cond, scope)
        then = self.block(node.then, scope)
        if node.orelse is None:
            def run(f):
                if cond(f):
                    return then(f)
                return None

            return run
        if isinstance(node.orelse, ast.If):
            orelse = self.if_stmt(node.orelse, scope)
        else:
            orelse = self.block(node.orelse, scope)

        def run_else(f):
            if cond(f):
                return then(f)
            return orelse(f)

        return run_else

    def condition(self, expr: ast.Expr, scope: Scope) -> Eval:
        """A condition: must be a Bool; `()` counts as false."""
        ev = self.expr(expr, scope)

        def test(f):
            value = ev(f)
            if value is True:
                return True
            if value is False or value is None:
                return False
            raise_at(expr, "type", f"a condition must be a Bool, got {type_of(value)}")

        return test

    def s_While(self, node: ast.While, scope: Scope) -> Exec:
        cond = self.condition(node.cond, scope)
        body = self.block(node.body, scope)
        bound = node.bound

        def run(f):
            rounds = 0
            while cond(f):
                rounds += 1
                if bound is not None and rounds > bound:
                    raise_at(node, "loop_bound", f"while-loop ran past its loop_bound({bound})")
                control = loop_body(body, f)
                if control == BREAK:
                    break
                if control == RETURN:
                    return control
            return None

        return run

    def lazy_range(self, expr, scope: Scope) -> Optional[Eval]:
        """`range(a, b[, step])` as the iterable of a for-loop: a lazy Python range (no 10^7 cap)."""
        if not (isinstance(expr, ast.Call) and expr.func == "range" and expr.cell is None
                and 2 <= len(expr.args) <= 3 and scope.lookup("range") is None
                and not (self.cell is not None and self.cell.handler("range", len(expr.args)) is not None)):
            return None
        args = tuple(self.expr(a, scope) for a in expr.args)

        def make(f):
            try:
                return range_object(*[a(f) for a in args])
            except SomaError as err:
                raise err.located(expr)

        return make

    def s_For(self, node: ast.For, scope: Scope) -> Exec:
        iterable = self.lazy_range(node.iterable, scope) or self.expr(node.iterable, scope)
        inner = scope.child()
        index = inner.declare(node.var)
        body = self.block(node.body, inner)
        bound = node.bound

        def run(f):
            rounds = 0
            for item in iterate(iterable(f), node):
                rounds += 1
                if bound is not None and rounds > bound:
                    raise_at(node, "loop_bound", f"for-loop ran past its loop_bound({bound})")
                f[index] = item
                control = loop_body(body, f)
                if control == BREAK:
                    break
                if control == RETURN:
                    return control
            return None

        return run

    def s_Require(self, node: ast.Require, scope: Scope) -> Exec:
        cond = self.condition(node.cond, scope)
        detail = self.expr(node.detail, scope) if node.detail is not None else None
        tag = node.tag

        def run(f):
            if not cond(f):
                text = display(detail(f)) if detail is not None else ""
                raise SomaError(tag, text, node.span)

        return run

    def s_Ensure(self, node: ast.Ensure, scope: Scope) -> Exec:
        cond = self.condition(node.cond, scope)
        text = render_expr(node.cond)

        def run(f):
            if not cond(f):
                raise SomaError("ensure", f"ensure {text} does not hold", node.span)

        return run

    def s_Emit(self, node: ast.Emit, scope: Scope) -> Exec:
        args = [self.expr(a, scope) for a in node.args]
        rt, name = self.rt, node.name

        def run(f):
            rt.emit(name, [a(f) for a in args], node)

        return run

    def s_Assign(self, node: ast.Assign, scope: Scope) -> Exec:
        value = self.expr(node.value, scope)
        op = None if node.op == "=" else COMPOUND_OPS[node.op]
        target = node.target
        if isinstance(target, ast.Name):
            assign = self.assign_name(target, op, value, scope, node)
            assign = self.self_rebuild(node, scope, assign) or assign
        elif isinstance(target, (ast.Index, ast.Field)):
            assign = self.assign_path(target, op, value, scope, node)
        else:
            raise_at(node, "type", "only a name, an index or a field can be assigned")
        if op is None:
            return assign

        def run(f):
            try:
                return assign(f)
            except SomaError as err:
                raise err.located(node)

        return run

    def assign_name(self, target: ast.Name, op, value: Eval, scope: Scope, node) -> Exec:
        """`x = v` / `x += v` on a local or session variable."""
        index = scope.lookup(target.id)
        if index is None:
            if self.cell is not None and target.id in self.cell.slot_decls:
                raise_at(node, "type", f"cannot assign the whole slot '{target.id}' — "
                         f"use {target.id}.set(key, value) or {target.id}.push(value)")
            if not scope.dynamic:
                raise_at(target, "undefined_variable", f"undefined variable '{target.id}'",
                         missing=MissingName("variable", target.id))
            env, name = self.env, target.id

            def run_env(f):
                new = value(f)
                if op is not None:
                    if name not in env:
                        raise_at(target, "undefined_variable", f"undefined variable '{name}'",
                                 missing=MissingName("variable", name))
                    new = op(env[name], new)
                env[name] = new

            return run_env

        def run(f):
            new = value(f)
            f[index] = new if op is None else op(f[index], new)

        return run

    def self_rebuild(self, node: ast.Assign, scope: Scope, assign: Exec) -> Optional[Exec]:
        """`x = push(x, …)`, `x = x + [e…]`, `x += [e…]`: extend x's list in place when nobody else holds it.

        `assign` is the ordinary statement, run whenever x is not a variable
        holding an unshared list (see runtime.inplace); None when `node` is no such rebuild.
        """
        kind = extends_itself(node)
        name = node.target.id
        index = scope.lookup(name)
        if not kind or (index is None and not scope.dynamic):
            return None
        if kind == "push" and scope.lookup("push") is None and not (scope.dynamic and "push" in self.env):
            call = node.value
            extra = tuple(self.expr(a, scope) for a in call.args[1:])
            return self.rebuild_closure(index, name, assign, extra, self.push_rebuild(call))
        items = node.value if node.op == "+=" else node.value.right
        if kind == "concat" and isinstance(items, ast.ListLit) and items.items:
            extra = tuple(self.expr(a, scope) for a in items.items)
            return self.rebuild_closure(index, name, assign, extra, self.concat_rebuild(node))
        return None

    def rebuild_closure(self, index: Optional[int], name: str, assign: Exec, extra, rebuild) -> Exec:
        """Run a self-rebuild on frame slot `index` (None: session variable `name`)."""
        env = self.env

        def run(f):
            holder, key = (f, index) if index is not None else (env, name)
            if index is None and name not in env:
                return assign(f)
            items = [a(f) for a in extra]
            rebuild(holder, key, items)
            return None

        return run

    def push_rebuild(self, call: ast.Call):
        """`holder[key] = push(holder[key], *items)`, in place when push is the builtin and the list unshared."""
        rt, cell, nargs = self.rt, self.cell, len(call.args)
        cache = [-1, None, False]

        def rebuild(holder, key, items):
            if cache[0] != rt.generation:
                cache[1] = rt.resolve_call(call, cell, nargs)
                cache[2] = is_push_target(cache[1])
                cache[0] = rt.generation
            if cache[2] and extend_unshared(holder, key, items):
                return
            try:
                holder[key] = cache[1]([holder[key], *items])
            except SomaError as err:
                raise err.located(call)

        return rebuild

    def concat_rebuild(self, node: ast.Assign):
        """`holder[key] = holder[key] + items` (a List literal), in place when that is a concatenation of an unshared list."""
        where = node if node.op == "+=" else node.value

        def rebuild(holder, key, items):
            if concat_extends(holder[key], items) and extend_unshared(holder, key, items):
                return
            try:
                holder[key] = ops.add(holder[key], items)
            except SomaError as err:
                raise err.located(where)

        return rebuild

    def assign_path(self, target, op, value: Eval, scope: Scope, node) -> Exec:
        """`a[i] = v`, `a.f += v`, nested: the value at the path replaced, value semantics kept.

        The root is a local, a session variable, or a slot (then the write
        goes through the slot's set, so invariants and the journal apply).
        Each List or Map on the path is changed in place only when nothing
        else holds it (runtime.inplace.write_path).
        """
        path = []
        root = target
        while isinstance(root, (ast.Index, ast.Field)):
            path.append(root)
            root = root.obj
        path.reverse()
        keys = [self.expr(p.index, scope) if isinstance(p, ast.Index) else (lambda f, n=p.name: n) for p in path]
        if not isinstance(root, ast.Name):
            raise_at(node, "type", "assignment target must start with a name")
        slot_write = self.slot_path_writer(root, scope)
        if slot_write is not None:
            def run_slot(f):
                key_values = [k(f) for k in keys]
                slot_write(f, key_values, value(f), op, node)

            return run_slot
        index = scope.lookup(root.id)
        if index is not None:
            def run_local(f):
                key_values = [k(f) for k in keys]
                write_path(f, index, key_values, value(f), op, node)

            return run_local
        read_root, env, name = self.expr(root, scope), self.env, root.id

        def run_env(f):
            key_values = [k(f) for k in keys]
            new = value(f)
            if name in env:
                write_path(env, name, key_values, new, op, node)
            else:  # no session variable: a unit variant (which refuses the write), or the undefined-name error
                write_path([read_root(f)], 0, key_values, new, op, node)

        return run_env

    def slot_path_writer(self, root: ast.Name, scope: Scope):
        """For a slot root (of this cell, or at session level the one cell that has it), a writer
        that sets `slot[k0]` to the updated value."""
        if not self.is_slot_name(root.id, scope):
            return None
        owner, name = self.slot_cell, root.id

        def write(f, key_values, new, op, node):
            slot = owner(name).slot(name)
            first = key_values[0]
            if len(key_values) == 1:
                current = slot.read_key(first, node) if op is not None else None
                slot.write(first, new if op is None else op(current, new), node)
                return
            copy = [slot.read_key(first, node)]  # a fresh copy, changed in place
            write_path(copy, 0, key_values[1:], new, op, node)
            slot.write(first, copy[0], node)

        return write

    # ------------------------------------------------------------ expressions

    def expr(self, node: ast.Expr, scope: Scope) -> Eval:
        """Compile one expression."""
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            raise_at(node, "internal", f"cannot evaluate a {type(node).__name__}")
        return method(node, scope)

    def e_Literal(self, node: ast.Literal, scope: Scope) -> Eval:
        value = node.value
        return lambda f: value

    def e_InterpString(self, node: ast.InterpString, scope: Scope) -> Eval:
        parts = []
        for part in node.parts:
            if isinstance(part, str):
                parts.append(lambda f, text=part: text)
            else:
                ev = self.expr(part, scope)
                parts.append(lambda f, ev=ev: display(ev(f)))
        parts = tuple(parts)
        return lambda f: interpolated("".join(p(f) for p in parts))

    def e_Name(self, node: ast.Name, scope: Scope) -> Eval:
        name = node.id
        index = scope.lookup(name)
        if index is not None:
            return lambda f: f[index]
        if self.cell is not None and name in self.cell.slot_decls:
            cell = self.cell
            return lambda f: cell.slot(name).whole()
        rt = self.rt
        if scope.dynamic:
            env = self.env

            def read_dynamic(f):
                if name in env:
                    return env[name]
                return rt.resolve_global_name(name, node)

            return read_dynamic
        return lambda f: rt.resolve_global_name(name, node, self.cell)

    def e_ListLit(self, node: ast.ListLit, scope: Scope) -> Eval:
        items = tuple(self.expr(i, scope) for i in node.items)
        return lambda f: [i(f) for i in items]

    def e_RecordLit(self, node: ast.RecordLit, scope: Scope) -> Eval:
        names = [n for n, _ in node.fields]
        values = tuple(self.expr(e, scope) for _, e in node.fields)
        rt, type_name = self.rt, node.type_name

        def build(f):
            return rt.construct(type_name, dict(zip(names, (v(f) for v in values))), node)

        return build

    def e_Unary(self, node: ast.Unary, scope: Scope) -> Eval:
        operand = self.expr(node.operand, scope)
        if node.op == "!":
            def negate(f):
                value = operand(f)
                if value is True:
                    return False
                if value is False:
                    return True
                raise_at(node, "type", f"'!' needs a Bool, got {type_of(value)}")

            return negate

        def minus(f):
            value = operand(f)
            if type(value) is int or type(value) is float:
                return -value
            try:
                return ops.neg(value)
            except SomaError as err:
                raise err.located(node)

        return minus

    def e_Binary(self, node: ast.Binary, scope: Scope) -> Eval:
        spine = left_spine(node)
        if len(spine) >= FOLD_CHAIN_AT:
            return self.folded_chain(spine, scope)
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        op = node.op
        if op == "&&":
            return self.logical(node, left, right, True)
        if op == "||":
            return self.logical(node, left, right, False)
        if op == "??":
            def coalesce(f):
                value = left(f)
                return right(f) if value is None else value

            return coalesce
        fast = FAST_OPS.get(op)
        slow = SLOW_OPS[op]
        fields = self.field_sides(node, scope)
        if fast is not None and is_int_literal(node.right):
            constant = node.right.value

            def binary_constant(f):
                a = left(f)
                if type(a) is int:
                    return fast(a, constant)
                try:
                    return slow(a, constant)
                except SomaError as err:
                    raise missing_field_error(err, fields, (a, constant), f).located(node)

            return binary_constant

        def binary(f):
            a = left(f)
            b = right(f)
            if type(a) is int and type(b) is int and fast is not None:
                return fast(a, b)
            try:
                return slow(a, b)
            except SomaError as err:
                raise missing_field_error(err, fields, (a, b), f).located(node)

        return binary

    def folded_chain(self, spine: list, scope: Scope) -> Eval:
        """`a + b - c * d …` (a Binary chain leaning left, innermost first) evaluated in one loop.

        Compiling and evaluating a chain by recursion costs Python stack per
        operator: 4 000 terms exhausted it. Here each step applies its operator
        to the value so far and its right operand, with the same semantics as
        `e_Binary` (short-circuit `&&`/`||`/`??`, errors located at the step).
        """
        first = self.expr(spine[0].left, scope)
        steps = tuple((n, n.op, FAST_OPS.get(n.op), SLOW_OPS.get(n.op), self.expr(n.right, scope),
                       self.field_sides(n, scope)) for n in spine)

        def chain(f):
            a = first(f)
            for node, op, fast, slow, right, fields in steps:
                if op == "&&" or op == "||":
                    if need_logical(node, op, a) is (op == "||"):
                        continue
                    a = need_logical(node, op, right(f))
                elif op == "??":
                    if a is None:
                        a = right(f)
                else:
                    b = right(f)
                    if fast is not None and type(a) is int and type(b) is int:
                        a = fast(a, b)
                        continue
                    try:
                        a = slow(a, b)
                    except SomaError as err:
                        raise missing_field_error(err, fields, (a, b), f).located(node)
            return a

        return chain

    def field_sides(self, node: ast.Binary, scope: Scope) -> list:
        """The sides of a binary operation that read `path.field` of a plain name path, as
        (0 left / 1 right, the Field, an Eval of the path): a failed operation on a field
        that came back () then names the missing field. The path is read again only
        on that error, and reading a name path has no effect."""
        return [(index, side, self.expr(side.obj, scope)) for index, side in enumerate((node.left, node.right))
                if isinstance(side, ast.Field) and is_name_path(side.obj)]

    def logical(self, node, left: Eval, right: Eval, is_and: bool) -> Eval:
        """Short-circuit `&&` / `||` over Bools."""
        name = "&&" if is_and else "||"

        def need_bool(value):
            if value is True or value is False:
                return value
            raise_at(node, "type", f"'{name}' needs Bool operands, got {type_of(value)}")

        if is_and:
            return lambda f: need_bool(left(f)) and need_bool(right(f))
        return lambda f: need_bool(left(f)) or need_bool(right(f))

    def e_Field(self, node: ast.Field, scope: Scope) -> Eval:
        obj = node.obj
        if isinstance(obj, ast.Name) and self.is_slot_name(obj.id, scope):
            reader = self.slot_pseudo_field(obj.id, node, scope)
            if reader is not None:
                return reader
        if self.is_handler_reference(obj, node.name, scope):
            reference = f"{obj.id}.{node.name}"
            return lambda f: reference
        if self.is_cell_name(obj, scope):
            return self.rt.no_such_handler(obj.id, node.name, node)
        if self.is_unknown_cell_name(obj, scope):
            return self.rt.no_such_cell(obj.id, node)
        target = self.expr(obj, scope)
        name = node.name
        return lambda f: get_field(target(f), name, node)

    def is_handler_reference(self, obj: ast.Expr, member: str, scope: Scope) -> bool:
        """True for `Cell.handler` written without a call: a reference (horde(), vote())."""
        return self.is_cell_name(obj, scope) and any(
            handler.name == member for handler in self.rt.cell_decls[obj.id].handlers)

    def is_cell_name(self, obj: ast.Expr, scope: Scope) -> bool:
        """True for a bare name that means a cell here (no local or session variable hides it)."""
        if not isinstance(obj, ast.Name) or obj.id not in self.rt.cell_decls or scope.lookup(obj.id) is not None:
            return False
        return not (scope.dynamic and obj.id in self.env)

    def is_unknown_cell_name(self, obj: ast.Expr, scope: Scope) -> bool:
        """True for an uppercase bare name before `.member` that nothing defines: a cell that does not exist."""
        if not isinstance(obj, ast.Name) or not obj.id[:1].isupper() or scope.lookup(obj.id) is not None:
            return False
        if obj.id in self.rt.variants or obj.id in self.rt.cell_decls or (scope.dynamic and obj.id in self.env):
            return False
        return not (self.cell is not None and obj.id in self.cell.slot_decls)

    def is_slot_name(self, name: str, scope: Scope) -> bool:
        """True when `name` is a slot (not hidden by a local).

        Inside an invariant the slot's name is bound to the value being
        written, but `slot.get(k)` / `slot.size` still read the stored slot.
        """
        if self.invariant_mode and self.cell is not None and name in self.cell.slot_decls:
            return True
        if scope.lookup(name) is not None:
            return False
        if self.cell is not None:
            return name in self.cell.slot_decls
        if scope.dynamic and name in self.env:
            return False
        return self.rt.unique_slot_owner(name) is not None

    def slot_cell(self, name: str):
        """The cell owning slot `name` in this context."""
        if self.cell is not None:
            return self.cell
        return self.rt.unique_slot_owner(name)

    def slot_pseudo_field(self, name: str, node: ast.Field, scope: Scope):
        """`slot.len`, `.size`, `.keys`, `.values`, `.entries`, `.last`, `.all` (the whole value)."""
        if node.name not in SLOT_PSEUDO_FIELDS:
            return None
        method = node.name
        owner = self.slot_cell
        if self.invariant_mode and method in ("len", "size"):
            writing, size = scope.lookup("__writing__"), scope.lookup("size")

            def size_after_write(f):
                if f[writing] == name:
                    return f[size]
                return len(owner(name).slot(name).data)

            return size_after_write

        def read(f):
            return owner(name).slot(name).call(method, [], node)

        return read

    def e_Index(self, node: ast.Index, scope: Scope) -> Eval:
        obj = self.expr(node.obj, scope)
        index = self.expr(node.index, scope)
        if isinstance(node.obj, ast.Name) and self.is_slot_name(node.obj.id, scope):
            name, owner = node.obj.id, self.slot_cell

            def read_slot(f):
                return owner(name).slot(name).read_key(index(f), node)

            return read_slot
        return lambda f: get_index(obj(f), index(f), node)

    def e_Call(self, node: ast.Call, scope: Scope) -> Eval:
        args = tuple(self.expr(a, scope) for a in node.args)
        if node.cell is None:
            index = scope.lookup(node.func)
            if index is not None:
                return self.call_local(node, index, args)
            if scope.dynamic:
                env_call = self.call_env_function(node, args)
                if env_call is not None:
                    return env_call
        if node.func in ("transition",) and node.cell is None:
            return self.call_transition(node, args, scope)
        return self.call_resolved(node, args)

    def call_local(self, node: ast.Call, index: int, args) -> Eval:
        """Call a lambda held in a local."""
        def run(f):
            fn = f[index]
            if not callable(fn):
                raise_at(node, "type", f"'{node.func}' is a {type_of(fn)}, not a function")
            return fn(*[a(f) for a in args])

        return run

    def call_env_function(self, node: ast.Call, args):
        """At session level, a call of a session variable holding a lambda."""
        env, name = self.env, node.func
        fallback = self.call_resolved(node, args)

        def run(f):
            fn = env.get(name)
            if fn is not None and callable(fn):
                return fn(*[a(f) for a in args])
            return fallback(f)

        return run

    def call_resolved(self, node: ast.Call, args) -> Eval:
        """A call whose target the runtime resolves (and caches per generation)."""
        rt, cell, caller = self.rt, self.cell, self.self_caller(node)
        cache = [-1, None]

        def run(f):
            if cache[0] != rt.generation:
                cache[1] = rt.resolve_call(node, cell, len(args), caller)
                cache[0] = rt.generation
            values = [a(f) for a in args]
            try:
                return cache[1](values)
            except SomaError as err:
                raise err.located(node)

        return run

    def call_transition(self, node: ast.Call, args, scope: Scope) -> Eval:
        """transition(): the guard is evaluated in this handler's locals."""
        visible = scope.visible()
        rt, cell, env = self.rt, self.cell, self.env
        entry = BUILTINS["transition"]
        fits = takes(entry, len(args))

        def run(f):
            values = [a(f) for a in args]
            if not fits:
                raise arity_error(entry, len(values)).located(node)
            locals_view = {name: f[i] for name, i in visible.items()}
            if scope.dynamic:
                locals_view = {**env, **locals_view}
            return rt.machines.transition(cell, values, locals_view, node)

        return run

    def e_MethodCall(self, node: ast.MethodCall, scope: Scope) -> Eval:
        args = tuple(self.expr(a, scope) for a in node.args)
        receiver = node.receiver
        if isinstance(receiver, ast.Name) and self.is_slot_name(receiver.id, scope):
            name, owner, method = receiver.id, self.slot_cell, node.method

            def slot_call(f):
                return owner(name).slot(name).call(method, [a(f) for a in args], node)

            return slot_call
        if isinstance(receiver, ast.Name) and receiver.id[:1].isupper() and scope.lookup(receiver.id) is None \
                and not (scope.dynamic and receiver.id in self.env):
            qualified = ast.Call(node.method, list(node.args), cell=receiver.id, span=node.span)
            return self.call_resolved(qualified, args)
        target = self.expr(receiver, scope)
        rt, cell, method = self.rt, self.cell, node.method
        cache = [-1, None]

        def ufcs(f):
            value = target(f)
            values = [value] + [a(f) for a in args]
            if cache[0] != rt.generation:
                cache[1] = rt.resolve_method(node, cell, len(values))
                cache[0] = rt.generation
            try:
                return cache[1](values)
            except SomaError as err:
                raise err.located(node)

        return ufcs

    def e_Pipe(self, node: ast.Pipe, scope: Scope) -> Eval:
        value = self.expr(node.value, scope)
        target = node.target
        if isinstance(target, ast.Call):
            call = ast.Call(target.func, [node.value] + list(target.args), cell=target.cell, span=node.span)
            return self.e_Call(call, scope)
        if isinstance(target, ast.Name):
            call = ast.Call(target.id, [node.value], span=node.span)
            return self.e_Call(call, scope)
        fn = self.expr(target, scope)

        def apply(f):
            function = fn(f)
            if not callable(function):
                raise_at(node, "type", "the right side of |> must be a function or a call")
            return function(value(f))

        return apply

    def e_Lambda(self, node: ast.Lambda, scope: Scope) -> Eval:
        escape = lambda_escape(node)
        if escape is not None:  # what `soma check` refuses, refused the same way in unchecked code
            raise SomaError("type", f"{escape_message(escape)} — {escape_fix(escape)}", escape.span)
        inner = scope.child()
        param_index = inner.declare(node.param)
        if param_index is None:  # a lambda at session level still needs a frame slot
            inner = Scope(Scope(dynamic=False))
            inner.dynamic = scope.dynamic
            param_index = inner.declare(node.param)
        self.lambda_depth += 1
        try:
            body = self.body_value(node.body, inner)
        finally:
            self.lambda_depth -= 1
        counter = inner.counter
        param = node.param

        def make(f):
            size = counter[0]
            captured = list(f) + [None] * (size - len(f)) if len(f) < size else list(f)
            return Lambda(param, param_index, body, captured)

        return make

    def e_If(self, node: ast.If, scope: Scope) -> Eval:
        cond = self.condition(node.cond, scope)
        then = self.block_value(node.then, scope)
        if node.orelse is None:
            orelse = lambda f: None
        elif isinstance(node.orelse, ast.If):
            orelse = self.e_If(node.orelse, scope)
        else:
            orelse = self.block_value(node.orelse, scope)
        return lambda f: then(f) if cond(f) else orelse(f)

    def e_Match(self, node: ast.Match, scope: Scope) -> Eval:
        return self.match(node, scope, as_value=True)

    def match_stmt(self, node: ast.Match, scope: Scope) -> Exec:
        """`match` in statement position: block arms may break/continue/return."""
        return self.match(node, scope, as_value=False)

    def match(self, node: ast.Match, scope: Scope, as_value: bool):
        """Run the first arm whose pattern and guard accept the subject (none: kind `match`)."""
        subject = self.expr(node.subject, scope)
        arms = [self.arm(arm, scope, as_value) for arm in node.arms]

        def run(f):
            value = subject(f)
            for matches, guard, body in arms:
                if matches(value, f) and (guard is None or guard(f)):
                    return body(f)
            raise_at(node, "match", f"no match arm fits {display(value)}")

        return run

    def arm(self, arm: ast.MatchArm, scope: Scope, as_value: bool):
        """(matcher, guard, body) for one arm, in its own scope."""
        inner = scope.child()
        matches = compile_pattern(arm.pattern, inner, self.rt)
        guard = self.condition(arm.guard, inner) if arm.guard is not None else None
        if as_value:
            body = self.body_value(arm.body, inner)
        elif isinstance(arm.body, ast.Block):
            body = self.block(arm.body, inner)
        else:
            value = self.expr(arm.body, inner)

            def body(f, value=value):
                f[0] = value(f)
                return None

        return matches, guard, body

    def e_Try(self, node: ast.Try, scope: Scope) -> Eval:
        body = self.block_value(node.body, scope)
        rt = self.rt

        def run(f):
            savepoint = rt.journal.savepoint()
            try:
                value = body(f)
            except SomaError as err:
                if not err.catchable:
                    raise
                rt.journal.rollback(savepoint)
                return {"value": None, "error": err.text, "kind": err.kind, "detail": err.detail}
            return {"value": value, "error": None, "kind": None, "detail": None}

        return run

    def e_Propagate(self, node: ast.Propagate, scope: Scope) -> Eval:
        inner = self.expr(node.expr, scope)

        def run(f):
            result = inner(f)
            if isinstance(result, dict) and "error" in result and "value" in result:
                if result["error"] is not None:
                    raise SomaError(result.get("kind") or "error", result.get("detail") or "",
                                    node.span, text=result["error"])
                return result["value"]
            return result

        return run


def loop_body(body: Exec, f: list) -> Optional[str]:
    """One round of a loop body; a break/continue that crossed an expression arrives as a signal."""
    try:
        return body(f)
    except ControlSignal as signal:
        if signal.kind == RETURN:
            raise
        return signal.kind


def iterate(value, node):
    """What `for x in value` walks: list items, map entries, string lines, nothing for ()."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return [{"key": k, "value": v} for k, v in value.items()]
    if isinstance(value, str):
        return [line for line in value.splitlines() if line]
    if value is None:
        return []
    if isinstance(value, range):
        return value
    raise_at(node, "type", f"cannot iterate over {type_of(value)}")


def left_spine(node: ast.Binary) -> list:
    """The Binary nodes down `node`'s left side, innermost first (`node` last)."""
    spine = [node]
    while isinstance(spine[-1].left, ast.Binary):
        spine.append(spine[-1].left)
    spine.reverse()
    return spine


def need_logical(node: ast.Binary, op: str, value):
    """`value` when it is a Bool, else the type error of `&&` / `||` at `node`."""
    if value is True or value is False:
        return value
    raise_at(node, "type", f"'{op}' needs Bool operands, got {type_of(value)}")


SLOT_PSEUDO_FIELDS = frozenset({"len", "size", "keys", "values", "entries", "last", "all"})


def is_name_path(expr) -> bool:
    """True for `a` or `a.b.c`: a read with no effect, safe to evaluate again."""
    while isinstance(expr, ast.Field):
        expr = expr.obj
    return isinstance(expr, ast.Name)


def missing_field_error(err: SomaError, fields: list, values: tuple, f) -> SomaError:
    """`err`, or, when an operand was a map's field that does not exist, an error naming it."""
    for index, side, path in fields:
        if values[index] is not None:
            continue
        container = path(f)
        if isinstance(container, dict) and side.name not in container:
            known = ", ".join(k for k in container if not k.startswith("_")) or "none"
            return SomaError(err.kind, f"{render_expr(side)} is (): the map has no field '{side.name}' "
                                       f"(its fields: {known}), so {err.detail}", side.span)
    return err


def get_field(value, name: str, node):
    """`value.name`: map key, variant field, or pseudo-field."""
    if isinstance(value, dict):
        if name in value:
            return value[name]
        if name in ("len", "size"):
            return len(value)
        if name == "keys":
            return list(value.keys())
        if name == "values":
            return list(value.values())
        return None
    if isinstance(value, Variant):
        if value.fields is not None and name in value.fields:
            return value.fields[name]
        raise_at(node, "type", f"variant {value.name} has no field '{name}'")
    if isinstance(value, list):
        if name in ("len", "size"):
            return len(value)
        if name == "last":
            return value[-1] if value else None
        found = matrix_field(value, name)
        if found is not None:
            return found
    if isinstance(value, str) and name in ("len", "size"):
        return len(value)
    raise_at(node, "type", f"cannot read field '{name}' of {type_of(value)}")


def get_index(value, index, node):
    """`value[index]` for lists (negative from the end), maps and strings."""
    if isinstance(value, list) or isinstance(value, str):
        if type(index) is not int:
            raise_at(node, "type", f"a list index must be an Int, got {type_of(index)}")
        try:
            return value[index]
        except IndexError:
            raise_at(node, "index", f"index {index} out of range for length {len(value)}")
    if isinstance(value, dict):
        return value.get(index if type(index) is str else map_key(index))
    if value is None:
        raise_at(node, "type", "cannot index ()")
    raise_at(node, "type", f"cannot index {type_of(value)}")


FAST_OPS = {
    "+": int.__add__,
    "-": int.__sub__,
    "*": int.__mul__,
    "<": int.__lt__,
    ">": int.__gt__,
    "<=": int.__le__,
    ">=": int.__ge__,
    "==": int.__eq__,
    "!=": int.__ne__,
}

SLOT_OPS_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod_", "<": "lt", ">": "gt",
                  "<=": "le", ">=": "ge", "==": "eq", "!=": "ne"}
SLOW_OPS = {symbol: getattr(ops, name) for symbol, name in SLOT_OPS_NAMES.items()}
COMPOUND_OPS = {"+=": ops.add, "-=": ops.sub, "*=": ops.mul, "/=": ops.div}

def is_int_literal(node) -> bool:
    """True for an Int literal (not a Bool)."""
    return isinstance(node, ast.Literal) and type(node.value) is int
