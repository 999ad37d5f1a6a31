"""Generate each handler as one Python function (the fast path of the runtime).

`HandlerSource` writes a handler's body as Python source — Int arithmetic and
comparisons inlined behind `type(x) is int` tests, slot methods and resolved
calls made directly — and compiles it with `compile()`. It shares the frame
layout and scopes of the closure compiler (runtime.compiler), which it calls
for any node it does not generate, so both always agree on semantics.
"""

from __future__ import annotations

import re
import sys
from typing import Callable

from ..core.diagnostics import SomaError, locating
from ..syntax import ast
from . import ops
from .builtins.collections import range_object
from .compiler import (SLOW_OPS, Compiler, ControlSignal, Scope, get_field, get_index, is_int_literal,
                       iterate, raise_at)
from .intlocals import int_locals, is_int_expr, walk as walk_nodes
from .limits import MAX_VALUE_LENGTH, interpolated
from .inplace import (CONTAINER_TYPES, CONTAINER_TYPES_NAME, GENERATED_UNSHARED, LOCAL_UNSHARED, OWNED_NAME,
                      changed_only, concat_extends, contains_block, extends_itself, generated_owned_test, is_push_target,
                      write_into, written_copy)
from .memory import MAP_ENTRY, MISSING
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
LOCAL_MARK = "\x00"     # around a local's index in generated text (repr() never writes a raw NUL)
UNSHARED_MARK = "\x01"  # where the in-place rebuild's probed reference count goes
_LOCAL_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
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


INLINE_INVARIANT_NODES = (ast.Name, ast.Literal, ast.Binary, ast.Unary)


def reads_only_the_value(expr, slot_name: str) -> bool:
    """True when an invariant is made of literals, operators and the value being written only
    (the slot's name or `value`): its text can be written out where the write is."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if not isinstance(node, INLINE_INVARIANT_NODES):
            return False
        if isinstance(node, ast.Name) and node.id not in (slot_name, "value"):
            return False
        if isinstance(node, ast.Literal) and type(node.value) not in (int, float, str, bool):
            return False
        if isinstance(node, ast.Binary):
            stack += [node.left, node.right]
        elif isinstance(node, ast.Unary):
            stack.append(node.operand)
    return True


def is_bool_expr(node, ints=frozenset()) -> bool:
    """True when `node` always evaluates to a Python bool (or raises), given
    that the names in `ints` hold Ints."""
    if isinstance(node, ast.Binary):
        if node.op in COMPARISON_SYMBOLS:
            return not _may_be_mask(node, ints)
        return node.op in ("&&", "||")
    if isinstance(node, ast.Unary):
        return node.op == "!"
    return isinstance(node, ast.Literal) and isinstance(node.value, bool)


def _may_be_mask(node: ast.Binary, ints) -> bool:
    """True unless the comparison surely is not a numeric list against a number
    (which gives a 0/1 mask, ops.compare_mask, not a Bool)."""
    left, right = node.left, node.right
    if is_int_expr(left, ints) or isinstance(left, (ast.Literal, ast.InterpString)):
        return False
    if isinstance(right, ast.InterpString) or isinstance(right, ast.ListLit):
        return False
    return not (isinstance(right, ast.Literal) and type(right.value) not in (int, float))



class HandlerSource:
    """Generates one handler as Python source; rare constructs stay closures.

    Locals still live in the frame list `f` at the indices the closure
    compiler would use (both share one Scope), so any node this generator
    does not handle is compiled by `Compiler` and called as `_eN(f)` /
    `_sN(f)`. Integer arithmetic and comparisons are inlined with a
    `type(x) is int` test; everything else goes through runtime.ops.
    `x_<Node>` writes the Python expression of an AST node of that class.
    """

    def __init__(self, closures: Compiler):
        self.closures = closures
        self.constants: dict[str, object] = {}
        self.lines: list[str] = []
        self.temps = 0
        self.loops = 0
        self.nesting = 0
        self.blocks = 1  # the handler's own try
        self.ints: frozenset[str] = frozenset()  # locals that always hold an Int (runtime.intlocals)
        self.frame_needed = False  # some closure reads the locals from the frame list `f`
        self.value_temps: list[str] = []   # temporaries that may keep a list alive (see release_line)
        self.release_sites = 0
        self.owned_flags: dict[tuple, str] = {}  # (local, way) a loop keeps unshared -> its flag (see loop_owned)
        self.namespace: dict = {}  # the generated code's globals (a call site rebinds its name on first call)

    # ------------------------------------------------------------ helpers

    def constant(self, value, prefix: str = "k") -> str:
        """A name under which the generated code sees `value`."""
        name = f"_{prefix}{len(self.constants)}"
        self.constants[name] = value
        return name

    def temp(self, holds_value: bool = False) -> str:
        """A fresh local for walrus temporaries; `holds_value` when it may keep a List or Map alive."""
        self.temps += 1
        name = f"_t{self.temps}"
        if holds_value:
            self.value_temps.append(name)
        return name

    def release_marker(self, depth: int, keep: list[str]) -> None:
        """A placeholder, filled in by release_line, before an in-place rebuild's reference count."""
        self.release_sites += 1
        self.emit(depth, f"#release {' '.join(keep)}")

    def release_line(self, line: str) -> str:
        """A release placeholder as the statement dropping every value temporary but `keep`.

        A temporary still holding a list from an earlier expression would count
        as a second holder and make the rebuild copy (correct, but quadratic).
        """
        indent, _, keep = line.partition("#release")
        dropped = [name for name in self.value_temps if name not in keep.split()]
        return f"{indent}{' = '.join(dropped)} = None" if dropped else f"{indent}pass"

    def local(self, index: int) -> str:
        """A placeholder for local `index`, resolved by resolved_locals once the whole handler is written."""
        return f"{LOCAL_MARK}{index}{LOCAL_MARK}"

    def frame_call(self, function: str) -> str:
        """`function(f)`: a closure reading the locals from the frame list (so the handler keeps one)."""
        self.frame_needed = True
        return f"{function}(f)"

    def resolved_locals(self, source: str) -> str:
        """Locals as Python locals `_vN` (fast) when no closure needs the frame, else as `f[N]`.

        The in-place rebuild's reference count is the one probed for that shape (runtime.inplace).
        """
        if self.frame_needed:
            source = _LOCAL_PLACEHOLDER.sub(lambda m: f"f[{m.group(1)}]", source)
            return source.replace(UNSHARED_MARK, str(GENERATED_UNSHARED))
        source = _LOCAL_PLACEHOLDER.sub(lambda m: f"_v{m.group(1)}", source)
        return source.replace(UNSHARED_MARK, str(LOCAL_UNSHARED))

    def emit(self, depth: int, text: str) -> None:
        """One line of source at indentation `depth`."""
        self.lines.append("    " * depth + text)

    # ------------------------------------------------------------ the handler

    def handler(self, decl: ast.Handler, params, checks, scope: Scope, mock_name: str) -> Callable:
        """The handler's `invoke(args) -> value` function."""
        rt, cell = self.closures.rt, self.closures.cell
        self.ints = int_locals(decl, params, cell.slot_decls, cell.handler_decls)
        indices = [scope.declare(p.name) for p in params]
        body_lines_start = len(self.lines)
        self.block_stmts(decl.body.stmts, scope.child(), 2)
        body = self.lines[body_lines_start:]
        self.lines = self.lines[:body_lines_start]
        implicit = bool(decl.body.stmts) and isinstance(decl.body.stmts[-1], ast.ExprStmt)
        names = [f"_a{position}" if self.frame_needed else self.local(index) for position, index in enumerate(indices)]
        optional_map = bool(params) and params[-1].type is not None and params[-1].type.name == "Map"
        signature = names[:-1] + [f"{names[-1]}={self.constant(MISSING, 'missing')}"] if optional_map else names
        self.emit(0, f"def direct({', '.join(signature)}):")
        self.mock_check(decl, mock_name)
        if optional_map:
            self.emit(1, f"if {names[-1]} is {signature[-1].partition('=')[2]}:")
            self.emit(2, f"{names[-1]} = {{}}")
        for name, check, param in zip(names, checks, params):
            self.argument(name, check, param)
        slots = ["None"] * scope.size
        for name, index in zip(names, indices):
            slots[index] = name
        if self.frame_needed:
            self.emit(1, f"f = [{', '.join(slots)}]")
        else:
            for index, text in enumerate(slots):
                if index not in indices:
                    self.emit(1, f"{self.local(index)} = None")
        overflow = self.constant(lambda: SomaError(
            "stack_overflow", f"recursion too deep in {decl.name} (the call stack is exhausted)",
            decl.span, catchable=False), "overflow")
        signal = self.constant(ControlSignal, "signal")
        self.emit(1, "try:")
        self.lines += body
        self.emit(2, f"return {self.local(0)}" if implicit else "return None")
        self.emit(1, f"except {signal} as control:")
        self.emit(2, "if control.kind != 'return':")
        self.emit(3, "raise")
        self.emit(2, "return control.value")
        self.emit(1, "except RecursionError:")
        self.emit(2, f"raise {overflow}() from None")
        self.emit(0, "def invoke(args):")
        self.emit(1, "return direct(*args)")
        self.emit(0, "invoke.direct = direct")
        if self.release_sites:
            self.lines = [self.release_line(line) if line.lstrip().startswith("#release") else line
                          for line in self.lines]
        namespace = self.namespace
        namespace.update(self.constants)
        namespace["_refcount"] = sys.getrefcount
        namespace[CONTAINER_TYPES_NAME] = CONTAINER_TYPES
        code = compile(self.resolved_locals("\n".join(self.lines) + "\n"), f"<soma handler {mock_name}>", "exec")
        exec(code, namespace)
        return namespace["invoke"]

    def mock_check(self, decl: ast.Handler, mock_name: str) -> None:
        """The handler's first lines: a scripted result (`mock Cell.h …`) is returned instead of running it."""
        mocks = self.constant(self.closures.rt.mocks, "mocks")
        mocked = self.constant(self.closures.rt.mocked_handler, "mocked")
        self.emit(1, f"if {mocks}.handlers:")
        self.emit(2, f"mocked = {mocked}({mock_name!r}, {decl.name!r}, {self.constant(decl.span, 'span')})")
        self.emit(2, "if mocked is not None:")
        self.emit(3, "return mocked()")

    def invariant_function(self, expr, scope: Scope, state, indices: dict, mentioned: set) -> Callable:
        """An invariant as a generated `evaluate(slot, value, key, size, status=None) -> value`.

        The written slot's name and `value` bind the candidate; `key`,
        `size`, `status` their values; another slot named in the invariant
        reads its stored value at the same key.
        """
        text = self.expr(expr, scope)
        cell = self.constant(state, "cell")
        lines = ["def evaluate(slot_name, value, key, size, status=None):"]
        others = [name for name in state.slot_decls if name in mentioned]
        if self.frame_needed:  # a closure reads the names from the frame list
            positions = self.constant(indices, "positions")
            lines += [f"    f = [None] * {scope.size}", f"    f[{positions}[slot_name]] = value"]
        for name in others if not self.frame_needed else []:
            lines += [f"    if slot_name == {name!r}:", f"        {self.local(indices[name])} = value",
                      "    else:", f"        {self.local(indices[name])} = None"]
        # A closure (frame mode) may read `size` and the written slot's name without naming them;
        # generated text reads only the names the invariant mentions.
        bound = {"value": "value", "key": "key", "size": "size", "__writing__": "slot_name"}
        lines += [f"    {self.local(indices[name])} = {parameter}" for name, parameter in bound.items()
                  if self.frame_needed or name in mentioned]
        if others:
            lines.append("    if key is not None:")
            for name in others:
                lines.append(f"        if slot_name != {name!r}:")
                lines.append(f"            {self.local(indices[name])} = {cell}.slots[{name!r}].read_key(key)")
        if "status" in mentioned:
            lines.append(f"    if status is None and {cell}.machines is not None and key is not None:")
            lines.append(f"        status = {cell}.machines.status(key)")
            lines.append(f"    {self.local(indices['status'])} = status")
        lines.append(f"    return {text}")
        namespace = self.namespace
        namespace.update(self.constants)
        source = self.resolved_locals("\n".join(lines) + "\n")
        exec(compile(source, f"<soma invariant of {state.name}>", "exec"), namespace)
        return namespace["evaluate"]

    def argument(self, name: str, check, param) -> None:
        """Check (and convert) the argument in parameter `name` against its declared type."""
        if check is None:
            return
        checker = self.constant(locating(param, check), "chk")
        exact = EXACT_PARAM_TYPES.get(param.type.name) if param.type is not None else None
        if exact is None:
            self.emit(1, f"{name} = {checker}({name})")
        else:
            self.emit(1, f"if type({name}) is not {exact}:")
            self.emit(2, f"{name} = {checker}({name})")

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
            if self.slot_set_stmt(node.expr, scope, depth):
                return None
            return self.emit(depth, f"{self.local(0)} = {self.expr(node.expr, scope)}")
        if isinstance(node, ast.Let) and not (scope.is_root and scope.dynamic):
            value = self.expr(node.value, scope)
            return self.emit(depth, f"{self.local(scope.declare(node.name))} = {value}")
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
        if isinstance(node, ast.Assign) and (self.self_rebuild(node, scope, depth)
                                             or self.local_assign(node, scope, depth)
                                             or self.local_path_assign(node, scope, depth)):
            return None
        return self.fallback_stmt(node, scope, depth)

    def slot_set_stmt(self, call, scope: Scope, depth: int) -> bool:
        """`slot.set(k, v)` as a statement on a Map slot: the common write inline, the rest through Slot.write.

        Inline only when the key is a String, the value has the slot's exact
        element type and every invariant accepts it; then it journals and
        writes exactly as Slot.write would. Any other case calls Slot.write,
        which checks, converts and refuses as always.
        """
        cell = self.closures.cell
        if not (isinstance(call, ast.MethodCall) and call.method == "set" and len(call.args) == 2
                and isinstance(call.receiver, ast.Name) and cell is not None
                and call.receiver.id in cell.slot_decls and scope.lookup(call.receiver.id) is None):
            return False
        slot = cell.slots[call.receiver.id]
        element = slot.decl.type.args[-1] if slot.decl.type.args else None
        exact = EXACT_PARAM_TYPES.get(element.name) if element is not None and not element.args else None
        if slot.is_list or (element is not None and exact is None):
            return False
        name, where = self.constant(slot, "slot"), self.constant(call, "n")
        key, value = (self.operand_value(arg, scope, depth) for arg in call.args)
        data, old = self.temp(holds_value=True), self.temp(holds_value=True)
        missing, journal = self.constant(MISSING, "missing"), self.constant(slot.journal.entries, "journal")
        entry_end = self.constant(MAP_ENTRY, "entry")
        ok = self.temp()
        known_exact = exact == "int" and is_int_expr(call.args[1], self.ints)
        typed = f" and type({value}) is {exact}" if exact is not None and not known_exact else ""
        self.emit(depth, f"if type({key}) is str{typed}:")
        self.emit(depth + 1, f"{old} = ({data} := {name}.data).get({key}, {missing})")
        size = f"len({data}) + ({old} is {missing})" if any(i.reads_size for i in slot.invariants) else "None"
        self.invariants_accept(slot, ok, key, value, size, depth + 1, scope, value_is_int=exact == "int")
        self.emit(depth, "else:")
        self.emit(depth + 1, f"{ok} = False")
        self.emit(depth, f"if {ok}:")
        self.emit(depth + 1, f"{journal}.extend(({data}, {key}, {old}, {entry_end}))  # Journal.record_entry")
        self.emit(depth + 1, f"{data}[{key}] = {value}")
        self.emit(depth + 1, f"if {name}.on_change is not None:")
        self.emit(depth + 2, f"{name}.on_change({name}, {key})")
        self.emit(depth + 1, f"{self.local(0)} = None")
        self.emit(depth, "else:")
        self.emit(depth + 1, f"{self.local(0)} = {name}.write({key}, {value}, {where})")
        return True

    def operand_value(self, arg, scope: Scope, depth: int) -> str:
        """The text reading `arg` more than once: the local itself for a local, else a fresh value temporary
        holding it (evaluated here, in order)."""
        if isinstance(arg, ast.Name) and scope.lookup(arg.id) is not None:
            return self.expr(arg, scope)
        name = self.temp(holds_value=True)
        self.emit(depth, f"{name} = {self.expr(arg, scope)}")
        return name

    def invariants_accept(self, slot, ok: str, key: str, value: str, size: str, depth: int, scope: Scope,
                          value_is_int: bool = False) -> None:
        """`ok = True` when every invariant of `slot` holds on the candidate Map write (the quick yes
        of Slot.accepted, each invariant's generated function called directly); False otherwise."""
        if not slot.invariants:
            self.emit(depth, f"{ok} = True")
            return
        if self.blocks + 1 > MAX_PYTHON_BLOCKS:
            self.emit(depth, f"{ok} = {self.constant(slot, 'slot')}.accepted({key}, {value}, {size})")
            return
        size_name = size
        if size != "None":
            size_name = self.temp()
            self.emit(depth, f"{size_name} = {size}")
        tests = " and ".join(self.invariant_test(invariant, slot, value, key, size_name, depth, scope, value_is_int)
                             for invariant in slot.invariants)
        self.emit(depth, "try:")
        self.emit(depth + 1, f"{ok} = {tests}")
        self.emit(depth, f"except {self.constant(SomaError, 'error')}:")
        self.emit(depth + 1, f"{ok} = False")

    def invariant_test(self, invariant, slot, value: str, key: str, size: str, depth: int, scope: Scope,
                       value_is_int: bool) -> str:
        """The text that is True when `invariant` holds on the candidate `value`: the invariant's
        expression written out here when it reads only the value being written (the slot's name or
        `value`) with literals and operators, else a call of its generated function."""
        expr = invariant.node.expr
        if not reads_only_the_value(expr, slot.name):
            return f"{self.constant(invariant.evaluate, 'inv')}({slot.name!r}, {value}, {key}, {size}) is True"
        inner = scope.child()
        names = {n.id for n in walk_nodes(expr) if isinstance(n, ast.Name)}
        for name in sorted(names):
            self.emit(depth, f"{self.local(inner.declare(name))} = {value}")
        saved = self.ints
        # the branch this test is in checked the value's type: an Int is known to be one
        self.ints = (saved | names) if value_is_int else (saved - names)
        try:
            return f"({self.expr(expr, inner)}) is True"
        finally:
            self.ints = saved

    def fallback_stmt(self, node, scope: Scope, depth: int) -> None:
        """Run a statement compiled to a closure, honouring the control it returns."""
        run = self.constant(self.closures.stmt(node, scope), "s")
        control = self.temp()
        self.emit(depth, f"{control} = {self.frame_call(run)}")
        self.emit(depth, f"if {control} is not None:")
        self.emit(depth + 1, f"if {control} == 'return':")
        self.emit(depth + 2, f"return {self.local(0)}")
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
            self.emit(depth, f"{self.local(index)} = {self.expr(node.value, scope)}")
            return True
        symbol = node.op[0]
        value = self.binary_text(symbol, self.local(index), self.expr(node.value, scope), node,
                                 left_int=target.id in self.ints, right_int=is_int_expr(node.value, self.ints),
                                 right_node=node.value)
        self.emit(depth, f"{self.local(index)} = {value}")
        return True

    def self_rebuild(self, node: ast.Assign, scope: Scope, depth: int) -> bool:
        """`x = push(x, …)`, `x = x + [e…]`, `x += [e…]` on a local: in place when x's list is unshared."""
        kind = extends_itself(node) if GENERATED_UNSHARED > 0 and LOCAL_UNSHARED > 0 else ""
        index = scope.lookup(node.target.id) if kind else None
        if index is None:
            return False
        if kind == "push" and scope.lookup("push") is None:
            self.push_in_place(node, node.value, index, scope, depth)
            return True
        items = node.value if node.op == "+=" else node.value.right
        if kind == "concat" and isinstance(items, ast.ListLit) and items.items:
            self.concat_in_place(node, items, index, scope, depth)
            return True
        return False

    def push_in_place(self, node: ast.Assign, call: ast.Call, index: int, scope: Scope, depth: int) -> None:
        """`x = push(x, a…)`: append to x's list when nobody else holds it and push is the builtin.

        Whether `push` is the builtin is resolved at the first run (a flag in the generated
        code's globals); the arguments are read after the ownership test when that cannot
        change what they are (see unaliased_argument), else first, into temporaries.
        """
        rt, cell, nargs, namespace = self.closures.rt, self.closures.cell, len(call.args), self.namespace
        flag = f"_ispush{len(self.constants)}"

        def resolve():
            namespace[flag] = is_push_target(rt.resolve_call(call, cell, nargs))
            return namespace[flag]

        self.constants[flag] = None
        refresh = self.constant(resolve, "resolve")
        items = [self.unaliased_argument(arg, node.target.id, scope) for arg in call.args[1:]]
        if None in items:
            items = self.arguments_in_temps(call.args[1:], scope, depth)
        self.release_marker(depth, [item for item in items if item in self.value_temps])
        is_push = f"({flag} or ({flag} is None and {refresh}()))"
        target, owned = self.local(index), self.owned_flags.get((node.target.id, "push"))
        keyword = "if"
        if owned is not None:
            self.emit(depth, f"if {owned}:")
            self.emit_extend(depth + 1, items, target)
            keyword = "elif"
        self.emit(depth, f"{keyword} {is_push} and {generated_owned_test(target, UNSHARED_MARK)}:")
        self.emit_extend(depth + 1, items)
        if owned is not None:
            self.emit(depth + 1, f"{owned} = True")
        self.emit(depth, "else:")
        self.emit(depth + 1, f"{target} = {self.call_site(call, nargs)}({target}, {', '.join(items)})")
        if owned is not None:
            self.emit(depth + 1, f"{owned} = {flag}  # push's result is a fresh list")

    def unaliased_argument(self, arg, target: str, scope: Scope):
        """The text of a pushed argument that may be read after the ownership test (None: it may not).

        A scalar literal, an Int expression over Int locals, or another local: none of them can be
        the target's list (another local holding that list would count as a second holder).
        """
        if isinstance(arg, ast.Literal) and (arg.value is None or type(arg.value) in (bool, int, str)):
            return self.expr(arg, scope)
        if isinstance(arg, ast.Name) and arg.id != target and scope.lookup(arg.id) is not None:
            return self.expr(arg, scope)
        if is_int_expr(arg, self.ints):
            return self.expr(arg, scope)
        return None

    def concat_in_place(self, node: ast.Assign, items: ast.ListLit, index: int, scope: Scope, depth: int) -> None:
        """`x = x + [a…]` / `x += [a…]`: extend x's list when nobody else holds it (else `+` as usual)."""
        located_node = node if node.op == "+=" else node.value
        add = self.constant(locating(located_node, SLOW_OPS["+"]), "op")
        values = self.arguments_in_temps(items.items, scope, depth)
        self.release_marker(depth, values)
        test = generated_owned_test(self.local(index), UNSHARED_MARK)
        # `+` of numeric lists of one length, or of two numeric matrices, is not an append.
        extends = self.constant(concat_extends, "extends")
        self.emit(depth, f"if {test} and {extends}({OWNED_NAME}, [{', '.join(values)}]):")
        self.emit_extend(depth + 1, values)
        self.emit(depth, "else:")
        self.emit(depth + 1, f"{self.local(index)} = {add}({self.local(index)}, [{', '.join(values)}])")

    def arguments_in_temps(self, args, scope: Scope, depth: int) -> list[str]:
        """Evaluate `args` left to right into fresh value temporaries; their names."""
        names = []
        for arg in args:
            name = self.temp(holds_value=True)
            self.emit(depth, f"{name} = {self.expr(arg, scope)}")
            names.append(name)
        return names

    def emit_extend(self, depth: int, items: list[str], owner: str = OWNED_NAME) -> None:
        """Append `items` to the list in `owner` (by default the one the ownership test left in OWNED_NAME)."""
        if len(items) == 1:
            self.emit(depth, f"{owner}.append({items[0]})")
        else:
            self.emit(depth, f"{owner} += ({', '.join(items)},)")

    def local_path_assign(self, node: ast.Assign, scope: Scope, depth: int) -> bool:
        """`m[k] = v`, `r.f = v`, `r.items[0] = v` on a local; False for anything else.

        In place when the local's List or Map has no other holder (runtime.inplace's
        rule, each container down the path checked in turn), else on a copy.
        """
        target = node.target
        if node.op != "=" or not isinstance(target, (ast.Index, ast.Field)):
            return False
        path, root = [], target
        while isinstance(root, (ast.Index, ast.Field)):
            path.append(root)
            root = root.obj
        index = scope.lookup(root.id) if isinstance(root, ast.Name) else None
        if index is None or GENERATED_UNSHARED <= 0 or LOCAL_UNSHARED <= 0:
            return False
        keys = []
        for step in reversed(path):
            if isinstance(step, ast.Field):
                keys.append(repr(step.name))
            else:
                keys.append(self.temp(True))
                self.emit(depth, f"{keys[-1]} = {self.expr(step.index, scope)}")
        value = self.temp(True)
        self.emit(depth, f"{value} = {self.expr(node.value, scope)}")
        self.release_marker(depth, [*keys, value])
        where = self.constant(node, "n")
        copy = self.constant(written_copy, "copy")
        path_list = f"[{', '.join(keys)}]"
        local, owned = self.local(index), self.owned_flags.get((root.id, "write")) if len(keys) == 1 else None
        keyword = "if"
        if owned is not None:  # a loop keeps this local unshared (loop_owned)
            self.emit(depth, f"if {owned}:")
            self.emit_write(depth + 1, local, keys, value, where)
            keyword = "elif"
        self.emit(depth, f"{keyword} {generated_owned_test(local, UNSHARED_MARK, kinds='any')}:")
        self.emit_write(depth + 1, OWNED_NAME, keys, value, where)
        if owned is not None:
            self.emit(depth + 1, f"{owned} = True")
        self.emit(depth, "else:")
        self.emit(depth + 1, f"{local} = {copy}({local}, {path_list}, {value}, {where})")
        if owned is not None:  # the copy is fresh; a record or variant is changed by copying, always
            self.emit(depth + 1, f"{owned} = type({local}) in {CONTAINER_TYPES_NAME}")
        return True

    def emit_write(self, depth: int, owner: str, keys: list[str], value: str, where: str) -> None:
        """Write `value` at path `keys` into the unshared List or Map in `owner`."""
        into = self.constant(write_into, "into")
        owned_write = f"{into}({owner}, type({owner}), [{', '.join(keys)}], {value}, None, {where})"
        if len(keys) == 1:  # the common `m[k] = v` on a Map with a String key: one Python store
            self.emit(depth, f"if type({owner}) is dict and type({keys[0]}) is str:")
            self.emit(depth + 1, f"{owner}[{keys[0]}] = {value}")
            self.emit(depth, "else:")
            self.emit(depth + 1, owned_write)
        else:
            self.emit(depth, owned_write)

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

    def loop_owned(self, loop, scope: Scope, depth: int) -> dict[tuple, str]:
        """Flags for the locals `loop` changes only one way (runtime.inplace.changed_only), set
        False before it: once a round has changed the local's List or Map in place or replaced it
        by a fresh one, it has no other holder, so later rounds change it without testing its
        reference count."""
        if GENERATED_UNSHARED <= 0 or LOCAL_UNSHARED <= 0:
            return {}
        flags = {}
        for name, way in sorted(changed_only(loop).items()):
            if scope.lookup(name) is not None and (way != "push" or scope.lookup("push") is None):
                flags[(name, way)] = self.temp()
                self.emit(depth, f"{flags[(name, way)]} = False")
        return flags

    def loop_body(self, body: ast.Block, scope: Scope, depth: int, owned: dict[tuple, str]) -> None:
        """A loop body: break/continue crossing an expression arrive as ControlSignal."""
        signal = self.constant(ControlSignal, "signal")
        caught = self.temp()
        self.emit(depth, "try:")
        self.loops += 1
        self.blocks += 2
        outer_flags, self.owned_flags = self.owned_flags, {**self.owned_flags, **owned}
        self.block(body, scope, depth + 1)
        self.owned_flags = outer_flags
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
        owned = self.loop_owned(node, scope, depth)
        self.emit(depth, f"while {self.condition(node.cond, scope)}:")
        if bound is not None:
            self.emit(depth + 1, f"{bound[0]} += 1")
            self.emit(depth + 1, bound[1])
        self.loop_body(node.body, scope, depth + 1, owned)

    def for_stmt(self, node: ast.For, scope: Scope, depth: int) -> None:
        """`for x in value { }` (`range(a, b)` iterated lazily)."""
        lazy = self.closures.lazy_range(node.iterable, scope)
        if lazy is not None:
            bounds = ", ".join(self.expr(a, scope) for a in node.iterable.args)
            iterable = f"{self.constant(locating(node.iterable, range_object), 'range')}({bounds})"
        else:
            iterable = self.expr(node.iterable, scope)
        inner = scope.child()
        index = inner.declare(node.var)
        bound = self.bound_counter(node, depth, "for")
        owned = self.loop_owned(node, scope, depth)
        walk = self.constant(iterate, "iterate")
        where = self.constant(node, "n")
        self.emit(depth, f"for {self.local(index)} in {walk}({iterable}, {where}):")
        if bound is not None:
            self.emit(depth + 1, f"{bound[0]} += 1")
            self.emit(depth + 1, bound[1])
        self.loop_body(node.body, inner, depth + 1, owned)

    # ------------------------------------------------------------ expressions

    def condition(self, node, scope: Scope) -> str:
        """A condition as a Python expression that is a bool or raises."""
        text = self.expr(node, scope)
        if is_bool_expr(node, self.ints):
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
            return self.frame_call(self.constant(self.closures.expr(node, scope), 'e'))
        return text

    def x_Literal(self, node: ast.Literal, scope: Scope):
        value = node.value
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        return self.constant(value)

    def x_Name(self, node: ast.Name, scope: Scope):
        index = scope.lookup(node.id)
        return self.local(index) if index is not None else None

    def x_ListLit(self, node: ast.ListLit, scope: Scope):
        return "[" + ", ".join(self.expr(item, scope) for item in node.items) + "]"

    def x_InterpString(self, node: ast.InterpString, scope: Scope):
        show = self.constant(display, "display")
        parts = [repr(p) if isinstance(p, str) else self.shown(p, show, scope) for p in node.parts]
        if not parts:
            return "''"
        text, refuse = self.temp(), self.constant(interpolated, "interpolated")
        return f"({text} if len({text} := {' + '.join(parts)}) <= {MAX_VALUE_LENGTH} else {refuse}({text}))"

    def shown(self, part, show: str, scope: Scope) -> str:
        """One interpolated value as text: an expression always an Int through str() (what
        display does for an Int, without its Python call), anything else through display."""
        text = self.expr(part, scope)
        return f"str({text})" if is_int_expr(part, self.ints) else f"{show}({text})"

    def x_Unary(self, node: ast.Unary, scope: Scope):
        operand = self.expr(node.operand, scope)
        value = self.temp()
        where = self.constant(node, "n")
        if node.op == "!":
            if is_bool_expr(node.operand, self.ints):
                return f"(not {operand})"
            fail = self.constant(bad_bool, "badbool")
            return (f"(False if ({value} := {operand}) is True else (True if {value} is False "
                    f"else {fail}({value}, {where}, '!')))")
        value = self.temp(holds_value=True)
        negate = self.constant(locating(node, ops.neg), "neg")
        return f"(-{value} if type({value} := {operand}) is int else {negate}({value}))"

    def x_Binary(self, node: ast.Binary, scope: Scope):
        op = node.op
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        if op in ("&&", "||"):
            return self.logical(node, left, right)
        if op == "??":
            value = self.temp(holds_value=True)
            return f"({right} if ({value} := {left}) is None else {value})"
        return self.binary_text(op, left, right, node, is_int_expr(node.left, self.ints),
                                is_int_expr(node.right, self.ints), node.right)

    def binary_text(self, op: str, left: str, right: str, node, left_int: bool, right_int: bool,
                    right_node=None) -> str:
        """An arithmetic/comparison operator with an inline Int fast path.

        A plain local is read where it is used instead of through a temporary,
        unless the right operand (`right_node`) holds a block that could assign it.
        """
        slow = self.constant(locating(node, SLOW_OPS[op]), "op")
        if left_int and right_int and op in FAST_INT_SYMBOLS:
            return f"({left} {FAST_INT_SYMBOLS[op]} {right})"
        right_pure = right_node is None or not contains_block(right_node)
        left_direct = _LOCAL_PLACEHOLDER.fullmatch(left) is not None and right_pure
        if not right_pure and not (isinstance(node, ast.Binary) and is_int_literal(node.left)):
            left_int = False  # read left first, before a block on the right could assign it
        right_direct = _LOCAL_PLACEHOLDER.fullmatch(right) is not None
        positive_literal = isinstance(node, ast.Binary) and is_int_literal(node.right) and node.right.value > 0
        if op == "%" and positive_literal:
            # Python's floored % equals Soma's truncated % for a non-negative dividend.
            a, bind = self.operand(left, left_direct)
            if left_int:
                return f"({a} % {right} if ({bind}) >= 0 else {slow}({a}, {right}))"
            return f"({a} % {right} if type({bind}) is int and {a} >= 0 else {slow}({a}, {right}))"
        symbol = FAST_INT_SYMBOLS.get(op)
        if symbol is None or (left_int and right_int):
            return f"{slow}({left}, {right})"
        if left_int:
            b, bind = self.operand(right, right_direct)
            return f"({left} {symbol} {b} if type({bind}) is int else {slow}({left}, {b}))"
        if right_int:
            a, bind = self.operand(left, left_direct)
            return f"({a} {symbol} {right} if type({bind}) is int else {slow}({a}, {right}))"
        (a, bind_a), (b, bind_b) = self.operand(left, left_direct), self.operand(right, right_direct)
        if op in ("==", "!="):
            fast_types = self.constant(EQUALITY_FAST_TYPES, "eqtypes")
            return (f"({a} {symbol} {b} if type({bind_a}) is type({bind_b}) in {fast_types} "
                    f"else {slow}({a}, {b}))")
        return f"({a} {symbol} {b} if type({bind_a}) is type({bind_b}) is int else {slow}({a}, {b}))"

    def operand(self, text: str, direct: bool) -> tuple[str, str]:
        """(how the operand is used, how it is first evaluated): itself, or a walrus temporary."""
        if direct:
            return text, text
        name = self.temp(holds_value=True)
        return name, f"{name} := {text}"

    def logical(self, node: ast.Binary, left: str, right: str) -> str:
        """Short-circuit && / || over Bools."""
        name = node.op
        fail = self.constant(bad_bool, "badbool")
        where = self.constant(node, "n")

        def checked(text, operand):
            if is_bool_expr(operand, self.ints):
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
        nargs = len(node.args)
        if self.closures.invariant_mode:
            return f"{self.call_target_checked(node, nargs)}([{', '.join(args)}])"
        return f"{self.call_site(node, nargs)}({', '.join(args)})"

    def call_site(self, node: ast.Call, nargs: int) -> str:
        """The name the generated code calls `node`'s target by, with positional arguments.

        A handler's code is dropped whenever definitions change (Runtime.refresh), so
        the target is resolved once, at the first call, which rebinds the name to it:
        a generated handler's `direct` function, else a wrapper passing the argument list.
        """
        rt, cell, namespace = self.closures.rt, self.closures.cell, self.namespace
        name, caller = f"_call{len(self.constants)}", self.closures.self_caller(node)

        def first_call(*values):
            target = rt.resolve_call(node, cell, nargs, caller)
            direct = getattr(target, "direct", None)
            if direct is None:
                def direct(*values, target=target):
                    return target(list(values))
            namespace[name] = direct
            return direct(*values)

        self.constants[name] = first_call
        return name

    def call_target_checked(self, node: ast.Call, nargs: int) -> str:
        """A call target re-resolved when definitions change (invariants outlive a refresh)."""
        rt, cell = self.closures.rt, self.closures.cell
        cache = [-1, None]

        def resolve():
            cache[1] = rt.resolve_call(node, cell, nargs)
            cache[0] = rt.generation
            return cache[1]

        cached, refresh = self.constant(cache, "cache"), self.constant(resolve, "resolve")
        runtime = self.constant(rt, "rt")
        return f"({cached}[1] if {cached}[0] == {runtime}.generation else {refresh}())"

    def x_MethodCall(self, node: ast.MethodCall, scope: Scope):
        receiver, cell = node.receiver, self.closures.cell
        if not (isinstance(receiver, ast.Name) and cell is not None and receiver.id in cell.slot_decls
                and scope.lookup(receiver.id) is None):
            return None
        method = DIRECT_SLOT_METHODS.get((node.method, len(node.args)))
        if method is None:
            return None
        slot = self.constant(cell.slots[receiver.id], "slot")  # a cell state keeps its Slot objects
        args = [self.expr(a, scope) for a in node.args] + [self.constant(node, "n")]
        if method == "read_key" and not cell.slots[receiver.id].is_list:
            return self.map_slot_read(slot, args[0], args[1])
        return f"{slot}.{method}({', '.join(args)})"

    def map_slot_read(self, slot: str, key: str, where: str) -> str:
        """`slot.get(k)` on a Map slot: a String key's scalar value read inline; anything else
        (another key, a List or Map value, which is copied) through Slot.read_key."""
        key_name, value = self.temp(holds_value=True), self.temp(holds_value=True)
        containers = CONTAINER_TYPES_NAME
        return (f"({value} if type({key_name} := {key}) is str and type({value} := {slot}.data.get({key_name})) "
                f"not in {containers} else {slot}.read_key({key_name}, {where}))")

    def x_Field(self, node: ast.Field, scope: Scope):
        obj = node.obj
        if isinstance(obj, ast.Name) and self.closures.is_slot_name(obj.id, scope):
            return None
        if self.closures.is_cell_name(obj, scope) or self.closures.is_unknown_cell_name(obj, scope):
            return None
        read = self.constant(get_field, "field")
        return f"{read}({self.expr(obj, scope)}, {node.name!r}, {self.constant(node, 'n')})"

    def x_Index(self, node: ast.Index, scope: Scope):
        obj = node.obj
        if isinstance(obj, ast.Name) and self.closures.is_slot_name(obj.id, scope):
            return None
        read = self.constant(get_index, "index")
        return f"{read}({self.expr(obj, scope)}, {self.expr(node.index, scope)}, {self.constant(node, 'n')})"
