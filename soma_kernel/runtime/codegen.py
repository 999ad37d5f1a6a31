"""Generate each handler as one Python function (the fast path of the runtime).

`HandlerSource` writes a handler's body as Python source — Int arithmetic and
comparisons inlined behind `type(x) is int` tests, slot methods and resolved
calls made directly — and compiles it with `compile()`. It shares the frame
layout and scopes of the closure compiler (runtime.compiler), which it calls
for any node it does not generate, so both always agree on semantics.
"""

from __future__ import annotations

from typing import Callable

from ..core.diagnostics import SomaError, locating
from ..syntax import ast
from . import ops
from .compiler import (SLOW_OPS, Compiler, ControlSignal, Scope, get_field, get_index, is_int_literal,
                       iterate, raise_at, set_in)
from .values import display, type_of


FAST_INT_SYMBOLS = {"+": "+", "-": "-", "*": "*", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
                    "==": "==", "!=": "!="}
COMPARISON_SYMBOLS = frozenset({"<", ">", "<=", ">=", "==", "!="})
EQUALITY_FAST_TYPES = frozenset({int, str, bool})
DIRECT_SLOT_METHODS = {("set", 2): "write", ("get", 1): "read_key", ("push", 1): "push",
                       ("append", 1): "push", ("delete", 1): "delete"}
MAX_INLINE_DEPTH = 40   # Python's parser refuses ~200 nested parentheses
MAX_BLOCK_DEPTH = 60    # and 100 levels of indentation
MAX_PYTHON_BLOCKS = 18  # and 20 statically nested for/while/try blocks
EXACT_PARAM_TYPES = {"Int": "int", "String": "str", "Bool": "bool", "Float": "float"}


def bad_condition(value, node):
    """Raise the error for a non-Bool condition."""
    raise_at(node, "type", f"a condition must be a Bool, got {type_of(value)}")


def bad_bool(value, node, name):
    """Raise the error for a non-Bool operand of &&, || or !."""
    raise_at(node, "type", f"'{name}' needs Bool operands, got {type_of(value)}")


def loop_bound_exceeded(node, bound, what):
    """Raise the error for a loop that ran past its loop_bound."""
    raise_at(node, "loop_bound", f"{what}-loop ran past its loop_bound({bound})")


def is_bool_expr(node) -> bool:
    """True when `node` always evaluates to a Python bool (or raises)."""
    if isinstance(node, ast.Binary):
        return node.op in COMPARISON_SYMBOLS or node.op in ("&&", "||")
    if isinstance(node, ast.Unary):
        return node.op == "!"
    return isinstance(node, ast.Literal) and isinstance(node.value, bool)



class HandlerSource:
    """Generates one handler as Python source; rare constructs stay closures.

    Locals still live in the frame list `f` at the indices the closure
    compiler would use (both share one Scope), so any node this generator
    does not handle is compiled by `Compiler` and called as `_eN(f)` /
    `_sN(f)`. Integer arithmetic and comparisons are inlined with a
    `type(x) is int` test; everything else goes through runtime.ops.
    """

    def __init__(self, closures: Compiler):
        self.closures = closures
        self.constants: dict[str, object] = {}
        self.lines: list[str] = []
        self.temps = 0
        self.loops = 0
        self.nesting = 0
        self.blocks = 1  # the handler's own try

    # ------------------------------------------------------------ helpers

    def constant(self, value, prefix: str = "k") -> str:
        """A name under which the generated code sees `value`."""
        name = f"_{prefix}{len(self.constants)}"
        self.constants[name] = value
        return name

    def temp(self) -> str:
        """A fresh local for walrus temporaries."""
        self.temps += 1
        return f"_t{self.temps}"

    def emit(self, depth: int, text: str) -> None:
        """One line of source at indentation `depth`."""
        self.lines.append("    " * depth + text)

    # ------------------------------------------------------------ the handler

    def handler(self, decl: ast.Handler, params, checks, scope: Scope, mock_name: str) -> Callable:
        """The handler's `invoke(args) -> value` function."""
        rt = self.closures.rt
        indices = [scope.declare(p.name) for p in params]
        body_lines_start = len(self.lines)
        self.block_stmts(decl.body.stmts, scope.child(), 2)
        body = self.lines[body_lines_start:]
        self.lines = self.lines[:body_lines_start]
        implicit = bool(decl.body.stmts) and isinstance(decl.body.stmts[-1], ast.ExprStmt)
        slots = ["None"] * scope.size
        for position, (index, check, param) in enumerate(zip(indices, checks, params)):
            slots[index] = self.argument(position, check, param)
        mocks = self.constant(rt.mocks, "mocks")
        mocked = self.constant(rt.mocked_handler, "mocked")
        overflow = self.constant(lambda: SomaError(
            "stack_overflow", f"recursion too deep in {decl.name} (the call stack is exhausted)",
            decl.span, catchable=False), "overflow")
        signal = self.constant(ControlSignal, "signal")
        self.emit(0, "def invoke(args):")
        self.emit(1, f"if {mocks}.handlers:")
        self.emit(2, f"mocked = {mocked}({mock_name!r}, {decl.name!r}, {self.constant(decl.span, 'span')})")
        self.emit(2, "if mocked is not None:")
        self.emit(3, "return mocked()")
        if params and params[-1].type is not None and params[-1].type.name == "Map":
            self.emit(1, f"if len(args) < {len(params)}:")
            self.emit(2, "args = [*args, {}]")
        self.emit(1, f"f = [{', '.join(slots)}]")
        self.emit(1, "try:")
        self.lines += body
        self.emit(2, "return f[0]" if implicit else "return None")
        self.emit(1, f"except {signal} as control:")
        self.emit(2, "if control.kind != 'return':")
        self.emit(3, "raise")
        self.emit(2, "return control.value")
        self.emit(1, "except RecursionError:")
        self.emit(2, f"raise {overflow}() from None")
        namespace = dict(self.constants)
        code = compile("\n".join(self.lines) + "\n", f"<soma handler {mock_name}>", "exec")
        exec(code, namespace)
        return namespace["invoke"]

    def invariant_function(self, expr, scope: Scope, state, indices: dict, mentioned: set) -> Callable:
        """An invariant as a generated `evaluate(slot, value, key, size, status=None) -> value`.

        The written slot's name and `value` bind the candidate; `key`,
        `size`, `status` their values; another slot named in the invariant
        reads its stored value at the same key.
        """
        text = self.expr(expr, scope)
        cell = self.constant(state, "cell")
        positions = self.constant(indices, "positions")
        lines = ["def evaluate(slot_name, value, key, size, status=None):",
                 f"    f = [None] * {scope.size}",
                 f"    f[{positions}[slot_name]] = value",
                 f"    f[{indices['value']}] = value",
                 f"    f[{indices['key']}] = key",
                 f"    f[{indices['size']}] = size",
                 f"    f[{indices['__writing__']}] = slot_name"]
        others = [name for name in state.slot_decls if name in mentioned]
        if others:
            lines.append("    if key is not None:")
            for name in others:
                lines.append(f"        if slot_name != {name!r}:")
                lines.append(f"            f[{indices[name]}] = {cell}.slots[{name!r}].read_key(key)")
        if "status" in mentioned:
            lines.append(f"    if status is None and {cell}.machines is not None and key is not None:")
            lines.append(f"        status = {cell}.machines.status(key)")
            lines.append(f"    f[{indices['status']}] = status")
        lines.append(f"    return {text}")
        namespace = dict(self.constants)
        exec(compile("\n".join(lines) + "\n", f"<soma invariant of {state.name}>", "exec"), namespace)
        return namespace["evaluate"]

    def argument(self, position: int, check, param) -> str:
        """The text storing argument `position` in the frame, checked against its type."""
        if check is None:
            return f"args[{position}]"
        checker = self.constant(locating(param, check), "chk")
        exact = EXACT_PARAM_TYPES.get(param.type.name) if param.type is not None else None
        if exact is None:
            return f"{checker}(args[{position}])"
        value = self.temp()
        return f"({value} if type({value} := args[{position}]) is {exact} else {checker}({value}))"

    # ------------------------------------------------------------ statements

    def block_stmts(self, stmts, scope: Scope, depth: int) -> None:
        """Statements of one block (already in their own scope)."""
        if not stmts:
            self.emit(depth, "pass")
            return
        for stmt in stmts:
            self.stmt(stmt, scope, depth)

    def block(self, block: ast.Block, scope: Scope, depth: int) -> None:
        """A nested block in a child scope."""
        self.block_stmts(block.stmts, scope.child(), depth)

    def stmt(self, node, scope: Scope, depth: int) -> None:
        """One statement; unknown kinds (and blocks nested past MAX_BLOCK_DEPTH) run as a closure."""
        if depth > MAX_BLOCK_DEPTH:
            return self.fallback_stmt(node, scope, depth)
        if isinstance(node, ast.ExprStmt):
            if isinstance(node.expr, ast.If):
                return self.if_stmt(node.expr, scope, depth)
            if isinstance(node.expr, ast.Match):
                return self.fallback_stmt(node, scope, depth)
            return self.emit(depth, f"f[0] = {self.expr(node.expr, scope)}")
        if isinstance(node, ast.Let) and not (scope.is_root and scope.dynamic):
            value = self.expr(node.value, scope)
            return self.emit(depth, f"f[{scope.declare(node.name)}] = {value}")
        if isinstance(node, ast.Return):
            value = self.expr(node.value, scope) if node.value is not None else "None"
            return self.emit(depth, f"return {value}")
        if isinstance(node, ast.If):
            return self.if_stmt(node, scope, depth)
        if isinstance(node, (ast.Break, ast.Continue)) and self.loops:
            return self.emit(depth, "break" if isinstance(node, ast.Break) else "continue")
        if isinstance(node, (ast.While, ast.For)) and self.blocks + 2 > MAX_PYTHON_BLOCKS:
            return self.fallback_stmt(node, scope, depth)
        if isinstance(node, ast.While):
            return self.while_stmt(node, scope, depth)
        if isinstance(node, ast.For):
            return self.for_stmt(node, scope, depth)
        if isinstance(node, ast.Assign) and (self.local_assign(node, scope, depth)
                                             or self.local_index_assign(node, scope, depth)):
            return None
        return self.fallback_stmt(node, scope, depth)

    def fallback_stmt(self, node, scope: Scope, depth: int) -> None:
        """Run a statement compiled to a closure, honouring the control it returns."""
        run = self.constant(self.closures.stmt(node, scope), "s")
        control = self.temp()
        self.emit(depth, f"{control} = {run}(f)")
        self.emit(depth, f"if {control} is not None:")
        self.emit(depth + 1, f"if {control} == 'return':")
        self.emit(depth + 2, "return f[0]")
        if self.loops:
            self.emit(depth + 1, f"if {control} == 'break':")
            self.emit(depth + 2, "break")
            self.emit(depth + 1, "continue")

    def local_assign(self, node: ast.Assign, scope: Scope, depth: int) -> bool:
        """`x = v` / `x op= v` on a local; False when the target is something else."""
        target = node.target
        if not isinstance(target, ast.Name):
            return False
        index = scope.lookup(target.id)
        if index is None:
            return False
        if node.op == "=":
            self.emit(depth, f"f[{index}] = {self.expr(node.value, scope)}")
            return True
        symbol = node.op[0]
        value = self.binary_text(symbol, f"f[{index}]", self.expr(node.value, scope), node,
                                 left_int=False, right_int=is_int_literal(node.value))
        self.emit(depth, f"f[{index}] = {value}")
        return True

    def local_index_assign(self, node: ast.Assign, scope: Scope, depth: int) -> bool:
        """`m[k] = v` on a local Map (in place); False for anything else."""
        target = node.target
        if node.op != "=" or not isinstance(target, ast.Index) or not isinstance(target.obj, ast.Name):
            return False
        index = scope.lookup(target.obj.id)
        if index is None:
            return False
        key, value, container = self.temp(), self.temp(), self.temp()
        update = self.constant(set_in, "setin")
        where = self.constant(node, "n")
        self.emit(depth, f"{key} = {self.expr(target.index, scope)}")
        self.emit(depth, f"{value} = {self.expr(node.value, scope)}")
        self.emit(depth, f"if type({container} := f[{index}]) is dict and type({key}) is str:")
        self.emit(depth + 1, f"{container}[{key}] = {value}")
        self.emit(depth, "else:")
        self.emit(depth + 1, f"f[{index}] = {update}({container}, [{key}], {value}, None, {where})")
        return True

    def if_stmt(self, node: ast.If, scope: Scope, depth: int) -> None:
        """if / else if / else chains as Python if / elif / else."""
        keyword = "if"
        current = node
        while True:
            self.emit(depth, f"{keyword} {self.condition(current.cond, scope)}:")
            self.block(current.then, scope, depth + 1)
            orelse = current.orelse
            if isinstance(orelse, ast.If):
                keyword, current = "elif", orelse
                continue
            if orelse is not None:
                self.emit(depth, "else:")
                self.block(orelse, scope, depth + 1)
            return

    def loop_body(self, body: ast.Block, scope: Scope, depth: int) -> None:
        """A loop body: break/continue crossing an expression arrive as ControlSignal."""
        signal = self.constant(ControlSignal, "signal")
        caught = self.temp()
        self.emit(depth, "try:")
        self.loops += 1
        self.blocks += 2
        self.block(body, scope, depth + 1)
        self.blocks -= 2
        self.loops -= 1
        self.emit(depth, f"except {signal} as {caught}:")
        self.emit(depth + 1, f"if {caught}.kind == 'return':")
        self.emit(depth + 2, "raise")
        self.emit(depth + 1, f"if {caught}.kind == 'break':")
        self.emit(depth + 2, "break")

    def bound_counter(self, node, depth: int, what: str):
        """Emit the loop_bound counter initialisation; the per-round check text."""
        if node.bound is None:
            return None
        rounds = self.temp()
        self.emit(depth, f"{rounds} = 0")
        fail = self.constant(lambda: loop_bound_exceeded(node, node.bound, what), "bound")
        return rounds, f"if {rounds} > {node.bound}: {fail}()"

    def while_stmt(self, node: ast.While, scope: Scope, depth: int) -> None:
        """`while cond { }`."""
        bound = self.bound_counter(node, depth, "while")
        self.emit(depth, f"while {self.condition(node.cond, scope)}:")
        if bound is not None:
            self.emit(depth + 1, f"{bound[0]} += 1")
            self.emit(depth + 1, bound[1])
        self.loop_body(node.body, scope, depth + 1)

    def for_stmt(self, node: ast.For, scope: Scope, depth: int) -> None:
        """`for x in value { }` (`range(a, b)` iterated lazily)."""
        lazy = self.closures.lazy_range(node.iterable, scope)
        iterable = f"{self.constant(lazy, 'range')}(f)" if lazy is not None else self.expr(node.iterable, scope)
        inner = scope.child()
        index = inner.declare(node.var)
        bound = self.bound_counter(node, depth, "for")
        walk = self.constant(iterate, "iterate")
        where = self.constant(node, "n")
        self.emit(depth, f"for f[{index}] in {walk}({iterable}, {where}):")
        if bound is not None:
            self.emit(depth + 1, f"{bound[0]} += 1")
            self.emit(depth + 1, bound[1])
        self.loop_body(node.body, inner, depth + 1)

    # ------------------------------------------------------------ expressions

    def condition(self, node, scope: Scope) -> str:
        """A condition as a Python expression that is a bool or raises."""
        text = self.expr(node, scope)
        if is_bool_expr(node):
            return text
        value = self.temp()
        fail = self.constant(bad_condition, "badcond")
        where = self.constant(node, "n")
        return (f"(({value} := {text}) is True or ({value} is not False and {value} is not None "
                f"and {fail}({value}, {where})))")

    def expr(self, node, scope: Scope) -> str:
        """One expression as Python source text (a closure call past MAX_INLINE_DEPTH)."""
        method = getattr(self, "x_" + type(node).__name__, None)
        self.nesting += 1
        try:
            text = method(node, scope) if method is not None and self.nesting <= MAX_INLINE_DEPTH else None
        finally:
            self.nesting -= 1
        if text is None:
            return f"{self.constant(self.closures.expr(node, scope), 'e')}(f)"
        return text

    def x_Literal(self, node: ast.Literal, scope: Scope):
        value = node.value
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        return self.constant(value)

    def x_Name(self, node: ast.Name, scope: Scope):
        index = scope.lookup(node.id)
        return f"f[{index}]" if index is not None else None

    def x_ListLit(self, node: ast.ListLit, scope: Scope):
        return "[" + ", ".join(self.expr(item, scope) for item in node.items) + "]"

    def x_InterpString(self, node: ast.InterpString, scope: Scope):
        show = self.constant(display, "display")
        parts = [repr(p) if isinstance(p, str) else f"{show}({self.expr(p, scope)})" for p in node.parts]
        return "(" + " + ".join(parts) + ")" if parts else "''"

    def x_Unary(self, node: ast.Unary, scope: Scope):
        operand = self.expr(node.operand, scope)
        value = self.temp()
        where = self.constant(node, "n")
        if node.op == "!":
            if is_bool_expr(node.operand):
                return f"(not {operand})"
            fail = self.constant(bad_bool, "badbool")
            return (f"(False if ({value} := {operand}) is True else (True if {value} is False "
                    f"else {fail}({value}, {where}, '!')))")
        negate = self.constant(locating(node, ops.neg), "neg")
        return f"(-{value} if type({value} := {operand}) is int else {negate}({value}))"

    def x_Binary(self, node: ast.Binary, scope: Scope):
        op = node.op
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        if op in ("&&", "||"):
            return self.logical(node, left, right)
        if op == "??":
            value = self.temp()
            return f"({right} if ({value} := {left}) is None else {value})"
        return self.binary_text(op, left, right, node, is_int_literal(node.left), is_int_literal(node.right))

    def binary_text(self, op: str, left: str, right: str, node, left_int: bool, right_int: bool) -> str:
        """An arithmetic/comparison operator with an inline Int fast path."""
        slow = self.constant(locating(node, SLOW_OPS[op]), "op")
        if op == "%" and right_int and not left_int and node.right.value > 0:
            # Python's floored % equals Soma's truncated % for a non-negative dividend.
            a = self.temp()
            return f"({a} % {right} if type({a} := {left}) is int and {a} >= 0 else {slow}({a}, {right}))"
        symbol = FAST_INT_SYMBOLS.get(op)
        if symbol is None:
            return f"{slow}({left}, {right})"
        if left_int and right_int:
            return f"{slow}({left}, {right})"
        if left_int:
            b = self.temp()
            return f"({left} {symbol} {b} if type({b} := {right}) is int else {slow}({left}, {b}))"
        if right_int:
            a = self.temp()
            return f"({a} {symbol} {right} if type({a} := {left}) is int else {slow}({a}, {right}))"
        a, b = self.temp(), self.temp()
        if op in ("==", "!="):
            fast_types = self.constant(EQUALITY_FAST_TYPES, "eqtypes")
            return (f"({a} {symbol} {b} if type({a} := {left}) is type({b} := {right}) in {fast_types} "
                    f"else {slow}({a}, {b}))")
        return f"({a} {symbol} {b} if type({a} := {left}) is type({b} := {right}) is int else {slow}({a}, {b}))"

    def logical(self, node: ast.Binary, left: str, right: str) -> str:
        """Short-circuit && / || over Bools."""
        name = node.op
        fail = self.constant(bad_bool, "badbool")
        where = self.constant(node, "n")

        def checked(text, operand):
            if is_bool_expr(operand):
                return text
            value = self.temp()
            return (f"({value} if ({value} := {text}) is True or {value} is False "
                    f"else {fail}({value}, {where}, {name!r}))")

        first, second = checked(left, node.left), checked(right, node.right)
        if name == "&&":
            return f"({second} if {first} else False)"
        return f"(True if {first} else {second})"

    def x_Call(self, node: ast.Call, scope: Scope):
        if node.cell is None and (scope.lookup(node.func) is not None or node.func == "transition"):
            return None
        args = [self.expr(a, scope) for a in node.args]
        rt, cell, nargs = self.closures.rt, self.closures.cell, len(node.args)
        cache = [-1, None]

        def resolve():
            cache[1] = rt.resolve_call(node, cell, nargs)
            cache[0] = rt.generation
            return cache[1]

        cached, refresh = self.constant(cache, "cache"), self.constant(resolve, "resolve")
        runtime = self.constant(rt, "rt")
        return (f"({cached}[1] if {cached}[0] == {runtime}.generation else {refresh}())"
                f"([{', '.join(args)}])")

    def x_MethodCall(self, node: ast.MethodCall, scope: Scope):
        receiver, cell = node.receiver, self.closures.cell
        if not (isinstance(receiver, ast.Name) and cell is not None and receiver.id in cell.slot_decls
                and scope.lookup(receiver.id) is None):
            return None
        method = DIRECT_SLOT_METHODS.get((node.method, len(node.args)))
        if method is None:
            return None
        slots = self.constant(cell.slots, "slots")
        args = [self.expr(a, scope) for a in node.args] + [self.constant(node, "n")]
        return f"{slots}[{receiver.id!r}].{method}({', '.join(args)})"

    def x_Field(self, node: ast.Field, scope: Scope):
        obj = node.obj
        if isinstance(obj, ast.Name) and self.closures.is_slot_name(obj.id, scope):
            return None
        read = self.constant(get_field, "field")
        return f"{read}({self.expr(obj, scope)}, {node.name!r}, {self.constant(node, 'n')})"

    def x_Index(self, node: ast.Index, scope: Scope):
        obj = node.obj
        if isinstance(obj, ast.Name) and self.closures.is_slot_name(obj.id, scope):
            return None
        read = self.constant(get_index, "index")
        return f"{read}({self.expr(obj, scope)}, {self.expr(node.index, scope)}, {self.constant(node, 'n')})"
