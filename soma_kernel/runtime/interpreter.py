"""The Soma runtime: definitions, dispatch, atomic invocations.

A `Runtime` holds the program's definitions (cells, sum types, test cells),
each cell's live state (slots, machine instances, counters), the agent
(mocks, budget) and the undo journal. Everything a user runs — a CLI call, a
test rule, a notebook statement — goes through `invoke`, which makes it
atomic: if it raises, every write, delete and transition it made is undone.

Handlers are compiled (runtime.compiler: generated Python source, closures
for the rare constructs) the first time they are called, and again after
definitions change. A runtime with a SlotStore (runtime.store) runs each
top-level invocation in one store transaction: it starts from every commit
of other processes and writes what it changed only when it succeeds.
"""

from __future__ import annotations

import sys
from typing import Callable, Iterable, Optional

from ..core.diagnostics import MissingName, SomaError, locating
from ..syntax import ast
from ..syntax.dangling import keyword_name_problem
from ..syntax.invariant_terms import reads_size
from ..syntax.machines import build_model
from ..syntax.render import render_expr
from .agent import Agent
from .builtins import BUILTINS, Builtin, BuiltinCall, argument_error, call_builtin, takes
from .builtins.context import MACHINE_READS
from .codegen import HandlerSource
from .compiler import RETURN, Compiler, Scope
from .dispatch import AMBIGUOUS, HANDLER, OWN, dispatch_bare_call
from .horde import Hordes
from .machines import MachineInstances, Transitions
from .memory import CompiledInvariant, Journal, Slot, listed_entries
from .types import UNCHECKED_RETURNS, identity, return_checker, value_checker
from .values import Variant, display, display_inner, equals, map_key, type_of
from .workers import Gate

RECURSION_LIMIT = 8000


class CellState:
    """One cell's declaration and live state."""

    def __init__(self, decl: ast.CellDecl, runtime: "Runtime"):
        self.decl = decl
        self.name = decl.name
        self.rt = runtime
        self.handler_decls: dict[str, list[ast.Handler]] = {}
        self.signal_params: dict[str, list[ast.Param]] = {}
        if decl.face is not None:
            for signal in decl.face.signals:
                self.signal_params[signal.name] = signal.params
        for handler in decl.handlers:
            self.add_handler(handler)
        self.slot_decls: dict[str, ast.Slot] = {s.name: s for s in (decl.memory.slots if decl.memory else [])}
        self.invariants = self.compile_invariants()
        self.slots: dict[str, Slot] = {name: self.new_slot(d) for name, d in self.slot_decls.items()}
        self.model = build_model(decl.name, decl.machine) if decl.machine is not None else None
        self.machines = MachineInstances(self.model, runtime.journal) if self.model else None
        self.compiled: dict[tuple[str, int], Callable] = {}
        self.counter = 0
        self.memory: dict[str, object] = {}
        self.on_remember: Optional[Callable[[str], None]] = None  # a bound store's watcher

    def add_handler(self, handler: ast.Handler) -> None:
        """Register a handler body (from the cell or its flesh)."""
        self.handler_decls.setdefault(handler.name, []).append(handler)

    def new_slot(self, decl: ast.Slot) -> Slot:
        """An empty slot with its invariants and element type check."""
        element = decl.type.args[-1] if decl.type.args else None
        check = value_checker(element, self.rt) if element is not None else None
        return Slot(decl, self.rt.journal, self.invariants, check)

    def slot(self, name: str) -> Slot:
        """The live slot `name`."""
        return self.slots[name]

    def compile_invariants(self) -> list[CompiledInvariant]:
        """Compile each `invariant` line of the memory section."""
        if self.decl.memory is None:
            return []
        result = []
        for inv in self.decl.memory.invariants:
            mentioned = {n.id for n in walk_names(inv.expr)} & set(self.slot_decls)
            evaluate = self.rt.invariant_evaluator(self, inv.expr)
            result.append(CompiledInvariant(inv, render_expr(inv.expr), mentioned, evaluate,
                                            reads_size(inv.expr, self.slot_decls)))
        return result

    def declared_return(self, name: str, nargs: int) -> Optional[ast.TypeRef]:
        """The `-> T` the face declares for the signal `name` taking `nargs`, if any.

        A tool's `-> T` is not held at run time: the reference's runtime reads
        the return type of its face's signals only (a tool's is what the model
        is told); `soma check` warns about a tool that visibly breaks it."""
        face = self.decl.face
        for declared in face.signals if face is not None else []:
            if declared.name == name and len(declared.params) == nargs:
                return declared.returns
        return None

    def handler(self, name: str, nargs: int) -> Optional[ast.Handler]:
        """The handler `name` taking `nargs` arguments (a trailing Map may be omitted)."""
        for decl in self.handler_decls.get(name, []):
            params = self.params_of(decl)
            if len(params) == nargs:
                return decl
            if len(params) == nargs + 1 and params[-1].type is not None and params[-1].type.name == "Map":
                return decl
        return None

    def params_of(self, decl: ast.Handler) -> list[ast.Param]:
        """Handler parameters, typed from the skeleton signal for flesh bodies."""
        signal = self.signal_params.get(decl.name)
        if signal is not None and len(signal) == len(decl.params):
            return [ast.Param(p.name, p.type or s.type, span=p.span) for p, s in zip(decl.params, signal)]
        return decl.params


class Runtime:
    """A live Soma program: definitions, state, mocks, and the ways to run code."""

    def __init__(self, *, agent_mock: Optional[str] = None, under_test: bool = False,
                 note: Optional[Callable[[str], None]] = None, project_dir: str = ".", project=None):
        self.note = note or (lambda text: print(text, file=sys.stderr, flush=True))
        if sys.getrecursionlimit() < RECURSION_LIMIT:
            sys.setrecursionlimit(RECURSION_LIMIT)
        self.under_test = under_test
        self.journal = Journal()
        self.agent = Agent(agent_mock, self.note, project_dir)
        self.agent.host, self.agent.project = self, project
        self.mocks = self.agent.mocks
        self.machines = Transitions(self)
        self.cells: dict[str, CellState] = {}
        self.cell_decls: dict[str, ast.CellDecl] = {}
        self.fleshes: dict[str, ast.Flesh] = {}
        self.types: dict[str, ast.TypeDecl] = {}
        self.variants: dict[str, tuple[str, ast.VariantDecl]] = {}
        self.test_cells: dict[str, ast.TestCell] = {}
        self.test_states: dict[str, CellState] = {}
        self.generation = 0
        self.call_targets: dict[tuple, Callable] = {}  # (handler, arity, cell) -> run(*args); cleared by refresh
        self.store = None
        self.guard_cache: dict[tuple, Callable] = {}
        self.hordes = Hordes(self)
        self.gate = Gate(self)  # who runs Soma code when a horde's workers share the runtime

    # ------------------------------------------------------------ definitions

    def define(self, items: Iterable) -> list[str]:
        """Add or replace definitions by name; returns one line per reset of live state."""
        messages: list[str] = []
        items = list(items)
        for item in items:
            if isinstance(item, ast.TypeDecl):
                self.types[item.name] = item
        self.rebuild_variants()
        for item in items:
            if isinstance(item, ast.CellDecl):
                self.cell_decls[item.name] = item
            elif isinstance(item, ast.Flesh):
                self.fleshes[item.name] = item
            elif isinstance(item, ast.TestCell):
                self.test_cells[item.name] = item
        touched = {i.name for i in items if isinstance(i, (ast.CellDecl, ast.Flesh))}
        for name in touched:
            if name in self.cell_decls:
                messages += self.rebuild_cell(name)
        self.refresh()
        return messages

    def undefine(self, names: Iterable[str]) -> None:
        """Drop definitions by name (cells, types, fleshes, test cells)."""
        for name in names:
            self.cell_decls.pop(name, None)
            self.cells.pop(name, None)
            self.fleshes.pop(name, None)
            self.types.pop(name, None)
            self.test_cells.pop(name, None)
        self.rebuild_variants()
        self.refresh()

    def rebuild_variants(self) -> None:
        """Index every declared variant by name."""
        self.variants = {v.name: (t.name, v) for t in self.types.values() for v in t.variants}

    def variant_kinds(self) -> dict:
        """Variant name -> (sum type, "unit"|"struct"|"tuple"), for rebuilding variants from JSON."""
        return {name: (type_name, "struct" if v.fields is not None else "tuple" if v.items is not None else "unit")
                for name, (type_name, v) in self.variants.items()}

    def rebuild_cell(self, name: str) -> list[str]:
        """(Re)create a cell's state, keeping slots and instances that still fit."""
        old = self.cells.get(name)
        state = CellState(self.cell_decls[name], self)
        flesh = self.fleshes.get(name)
        for handler in flesh.handlers if flesh else []:
            state.add_handler(handler)
        self.cells[name] = state
        messages = carry_over(old, state) if old is not None else []
        if self.store is not None:
            self.store.bind([state], self.variant_kinds())
        return messages + breach_messages(state)

    def invariant_breaches(self) -> list[tuple[str, str, list[str]]]:
        """(cell, invariant text, entries shown) for every invariant that values already in
        memory break (data kept from before the invariant was tightened, or read from a store)."""
        return [(state.name, invariant.text, shown) for state in self.cells.values()
                for slot in state.slots.values() for invariant, shown in slot.breaches()]

    def attach_store(self, store):
        """Keep `[persistent]` slots (and instances, counters) in `store` (runtime.store.SlotStore).
        The cells keep their values where the file holds none of theirs; the result (store.Bound)
        says which in-memory values the stored ones replaced, and its `breaches` has one line per
        invariant that values read from it break (kept: written before the invariant was
        tightened). Nothing changes when it fails."""
        bound = store.bind(list(self.cells.values()), self.variant_kinds())
        self.store = store
        bound.breaches = [line for state in self.cells.values() for line in breach_messages(state)]
        return bound

    def detach_store(self) -> None:
        """Back to memory only: the stored parts keep their current values, the file is closed."""
        store, self.store = self.store, None
        if store is not None:
            store.close()

    def refresh(self) -> None:
        """Invalidate compiled code and call caches after definitions changed."""
        self.generation += 1
        self.call_targets.clear()
        for state in self.cells.values():
            state.compiled.clear()
        self.test_states = {}
        for name, test in self.test_cells.items():
            pseudo = ast.CellDecl(name, "test", handlers=list(test.handlers), span=test.span)
            self.test_states[name] = CellState(pseudo, self)

    def reset(self, cell: Optional[str] = None) -> None:
        """Fresh state for one cell, or for everything (slots, instances, mocks, counters)."""
        names = [cell] if cell else list(self.cell_decls)
        for name in names:
            self.cells.pop(name, None)
            self.rebuild_cell(name)
        if cell is None:
            self.mocks.clear()
            self.agent.trace.clear()
            self.agent.reset_budget()
            self.agent.forget_conversations()
            self.hordes.reset()
            self.agent.noted_echo = self.agent.noted_echo and self.under_test
        self.refresh()

    def load_program(self, program: ast.Program) -> None:
        """Define every item of a parsed program."""
        self.define(program.items)

    # ------------------------------------------------------------ running code

    def invoke(self, run: Callable[..., object], *args):
        """Run `run(*args)` as one atomic top-level invocation.

        Every change it makes is undone if it raises; a Python stack
        exhausted by deep Soma recursion becomes kind `stack_overflow`.
        """
        return self.invoke_with(run, args)

    def invoke_with(self, run: Callable[..., object], args):
        """`invoke(run, *args)` with the arguments as a list or tuple (one Python call less)."""
        entries = self.journal.entries
        if entries:
            entries.clear()
        store = self.store if self.store is not None and not self.store.active else None
        if store is not None:
            store.begin()
        try:
            value = run(*args)
            if store is not None:
                store.commit()
        except RecursionError:
            self.undo_invocation(store)
            raise SomaError("stack_overflow", "recursion too deep (the call stack is exhausted)",
                            catchable=False) from None
        except BaseException:
            self.undo_invocation(store)
            raise
        if entries:
            entries.clear()
        if self.hordes.pending:
            self.hordes.drain()
        return value

    def undo_invocation(self, store) -> None:
        """A failed invocation: memory as it was before it, and nothing of it in the store."""
        self.journal.rollback(0)
        if store is not None and store.active:
            store.abort()

    def call(self, handler: str, args: list, cell: Optional[str] = None):
        """Call a handler (never a builtin of the same name) as a top-level invocation (`soma run`, the kernel)."""
        run = self.call_targets.get((handler, len(args), cell))
        if run is None:
            run = self.call_target(handler, cell, len(args))
        return self.invoke_with(run, args)

    def call_target(self, handler: str, cell: Optional[str], nargs: int) -> Callable:
        """What `call` runs for `handler`, taking the arguments in place; cached until definitions change."""
        target = self.handler_target(handler, cell, nargs)
        run = getattr(target, "direct", None)  # a generated handler takes its arguments in place
        if run is None:
            def run(*args, target=target):
                return target(list(args))
        self.call_targets[(handler, nargs, cell)] = run
        return run

    def handler_target(self, handler: str, cell: Optional[str], nargs: int):
        """The handler `handler` (of `cell`, or the unique one of that name) taking `nargs` arguments."""
        node = ast.Call(handler, [], cell=cell)
        if cell is not None:
            return self.qualified_target(node, nargs)
        owner = self.unique_handler_owner(handler, nargs, node)
        if owner is None:
            return self.undefined_function(handler, nargs, node)
        return self.bound_handler(owner, owner.handler(handler, nargs))

    def compile_statement(self, stmt: ast.Stmt, env: dict):
        """A session/test statement compiled against the session variables."""
        scope = Scope(dynamic=True)
        run = compiled_within_stack(lambda: Compiler(self, None, env).stmt(stmt, scope), stmt)
        size = scope.size

        def execute():
            frame = [None] * size
            control = run(frame)
            if isinstance(stmt, ast.ExprStmt) or control == RETURN:
                return frame[0]
            return None

        return execute

    def evaluate(self, expr: ast.Expr, env: dict):
        """Evaluate one expression at session/test level, atomically."""
        return self.invoke(self.compile_expression(expr, env))

    def compile_expression(self, expr: ast.Expr, env: dict):
        """A session/test expression as a no-argument function."""
        scope = Scope(dynamic=True)
        ev = compiled_within_stack(lambda: Compiler(self, None, env).expr(expr, scope), expr)
        size = scope.size
        return lambda: ev([None] * size)

    def execute(self, node, env: dict):
        """Run one session statement atomically; the value of an expression statement is returned.

        Test-rule forms (mock, assert…) never come here: the session hands them
        to the test runner's `run_rule`.

        Session variables are restored too when it fails (a failed statement leaves
        nothing behind; the snapshot also keeps an in-place rebuild, runtime.inplace,
        away from a list it holds).
        """
        execute = self.compile_statement(node, env)
        before = dict(env)
        try:
            return self.invoke(execute)
        except BaseException:
            env.clear()
            env.update(before)
            raise

    # ------------------------------------------------------------ handlers

    def handler_function(self, state: CellState, decl: ast.Handler) -> Callable[[list], object]:
        """The compiled, callable form of a handler (cached per definition generation)."""
        key = (decl.name, id(decl))
        compiled = state.compiled.get(key)
        if compiled is None:
            compiled = self.compile_handler(state, decl)
            state.compiled[key] = compiled
        return compiled

    def compile_handler(self, state: CellState, decl: ast.Handler) -> Callable[[list], object]:
        """Compile a handler body into `invoke(args) -> value` (generated Python source)."""
        params = state.params_of(decl)
        checks = [value_checker(p.type, self, param=f"{decl.name}({p.name})") if p.type else None for p in params]
        checks = [None if check is identity else check for check in checks]
        source = HandlerSource(Compiler(self, state, own_handler=decl))
        invoke = compiled_within_stack(
            lambda: source.handler(decl, params, checks, Scope(), f"{state.name}.{decl.name}"), decl)
        return self.returning_declared_type(state, decl, len(params), invoke)

    def returning_declared_type(self, state: CellState, decl: ast.Handler, nargs: int, invoke: Callable):
        """`invoke`, checking each returned value (a scripted `mock` answer included)
        against the face's `-> T` for this handler by types.return_checker's rule;
        unchanged when the face promises nothing (or Any), so undeclared handlers pay nothing."""
        declared = state.declared_return(decl.name, nargs)
        check = identity if decl.name in UNCHECKED_RETURNS else return_checker(declared, self.types)
        if check is identity:
            return invoke
        label, promise, span = f"{state.name}.{decl.name}()", declared.render(), decl.span
        direct = invoke.direct

        def checked_direct(*args):
            value = direct(*args)
            try:
                return check(value)
            except SomaError as err:
                raise SomaError("type", f"{label} returned {type_of(value)} ({err.detail}), but its face "
                                f"declares -> {promise}", span) from None

        def checked(args):
            return checked_direct(*args)

        checked.direct = checked_direct
        checked.unchecked, checked.handler_decl = invoke, decl
        return checked

    def mocked_handler(self, qualified: str, bare: str, span: ast.Span = ast.NO_SPAN):
        """A scripted result for a handler mocked with `mock Cell.h …` / `mock h …` (errors located at `span`)."""
        queue = self.mocks.handlers.get(qualified) or self.mocks.handlers.get(bare)
        if not queue:
            return None
        kind, value, _ = queue.popleft()
        if kind == "error":
            text = display(value)
            error_kind = text.split(": ", 1)[0] if ": " in text else "error"
            detail = text.split(": ", 1)[1] if ": " in text else text

            def fail():
                raise SomaError(error_kind, detail, span, text=text)

            return fail
        return lambda: value

    # ------------------------------------------------------------ resolution

    def resolve_call(self, node: ast.Call, cell: Optional[CellState], nargs: int,
                     caller: Optional[ast.Handler] = None) -> Callable[[list], object]:
        """What a bare or qualified call runs; a bare call follows runtime.dispatch's rule.

        `caller` is the handler whose own body (outside any lambda) makes the
        call: a call that resolves to that very handler — its direct recursion —
        runs without the face's return check, as the reference's does (its
        interpreter re-enters the running handler without the call boundary;
        the outermost call is still checked)."""
        target = self.resolve_call_target(node, cell, nargs)
        if caller is not None and getattr(target, "handler_decl", None) is caller:
            return target.unchecked
        return target

    def resolve_call_target(self, node: ast.Call, cell: Optional[CellState], nargs: int) -> Callable[[list], object]:
        """What a bare or qualified call runs, whoever calls it."""
        name = node.func
        if node.cell is not None:
            return self.qualified_target(node, nargs)
        own = cell.handler(name, nargs) if cell is not None else None
        others = [s for s in self.handler_states() if s is not cell and s.handler(name, nargs) is not None]
        entry = BUILTINS.get(name)
        choice = dispatch_bare_call(own is not None, others, entry is not None)
        if choice.kind == OWN:
            return self.bound_handler(cell, own)
        if choice.kind == HANDLER:
            return self.bound_handler(choice.owner, choice.owner.handler(name, nargs))
        if choice.kind == AMBIGUOUS:
            raise ambiguous_handler(name, choice.owners, node)
        if entry is not None and entry.needs_runtime:
            return self.runtime_builtin(entry, cell, node, nargs)
        if entry is not None:
            return builtin_target(name, nargs, node)
        if name in self.variants:
            return lambda values: self.construct_tuple(name, values, node)
        return self.undefined_function(name, nargs, node)

    def handler_states(self) -> list[CellState]:
        """Every cell and test cell, the owners an unqualified call may reach."""
        return list(self.cells.values()) + list(self.test_states.values())

    def bound_handler(self, state: CellState, decl: ast.Handler):
        """A handler of `state`, compiled on first resolution."""
        return self.handler_function(state, decl)

    def qualified_target(self, node: ast.Call, nargs: int):
        """`Cell.handler(args)`, or `Cell.get_status(id)` & co. on that cell's machine."""
        state = self.cells.get(node.cell) or self.test_states.get(node.cell)
        if state is None:
            raise SomaError("undefined_variable", f"no cell named '{node.cell}'", node.span,
                            missing=MissingName("cell", node.cell))
        decl = state.handler(node.func, nargs)
        if decl is None and node.func in MACHINE_READS:
            return self.machine_read(state, node, nargs)
        if decl is None:
            role = "handler" if node.func in state.handler_decls else "function"
            raise SomaError("undefined_variable",
                            f"cell '{node.cell}' has no handler '{node.func}' taking {nargs} argument"
                            f"{'' if nargs == 1 else 's'}", node.span,
                            missing=MissingName(role, node.func, node.cell, nargs))
        return self.bound_handler(state, decl)

    def no_such_handler(self, cell: str, name: str, node):
        """`Cell.name` where the cell has no handler `name` (a reference for horde(), vote()…): raise when it runs."""
        error = SomaError("undefined_variable", f"cell '{cell}' has no handler '{name}'", node.span,
                          missing=MissingName("function", name, cell))

        def fail(frame):
            raise error

        return fail

    def no_such_cell(self, cell: str, node):
        """`Cell.member` naming no cell: raise when it runs."""
        error = SomaError("undefined_variable", f"no cell named '{cell}'", node.obj.span,
                          missing=MissingName("cell", cell))

        def fail(frame):
            raise error

        return fail

    def unique_handler_owner(self, name: str, nargs: int, node) -> Optional[CellState]:
        """The one cell (or test cell) with handler `name`; ambiguity is an error."""
        owners = [s for s in self.handler_states() if s.handler(name, nargs) is not None]
        if len(owners) > 1:
            raise ambiguous_handler(name, owners, node)
        return owners[0] if owners else None

    def undefined_function(self, name: str, nargs: int, node):
        """A call of nothing known: raise when (and only if) it runs."""
        known = [h for s in self.cells.values() for h in s.handler_decls if h == name]
        detail = (f"no handler '{name}' takes {nargs} argument{'' if nargs == 1 else 's'}" if known
                  else f"undefined function '{name}'")

        missing = MissingName("handler" if known else "function", name, None, nargs)

        def fail(values):
            raise SomaError("undefined_variable", detail, node.span, missing=missing)

        return fail

    def resolve_method(self, node: ast.MethodCall, cell: Optional[CellState], nargs: int):
        """`value.method(args)`: UFCS over handlers and builtins, plus map/list helpers."""
        call = ast.Call(node.method, [], span=node.span)
        if cell is not None and cell.handler(node.method, nargs) is not None:
            return self.resolve_call(call, cell, nargs)
        if node.method in BUILTINS:
            return self.resolve_call(call, cell, nargs)
        helper = VALUE_METHODS.get(node.method)
        if helper is not None:
            return lambda values: helper(*values)
        return self.resolve_call(call, cell, nargs)

    def resolve_global_name(self, name: str, node: ast.Name, cell: Optional[CellState] = None):
        """A name that is no local: a unit variant, or an undefined variable."""
        if name in self.variants:
            type_name, variant = self.variants[name]
            if variant.fields is None and variant.items is None:
                return Variant(type_name, name)
            raise SomaError("type", f"variant {name} needs its fields: {name} {{ … }}", node.span)
        keyword = keyword_name_problem(node)
        if keyword is not None:
            if keyword.incomplete:  # a syntax error found late: worded as the parser words it
                raise SomaError("parse", keyword.message, keyword.span, text=keyword.message, hint=keyword.hint)
            raise SomaError("undefined_variable", keyword.message, keyword.span, hint=keyword.hint)
        raise SomaError("undefined_variable", f"undefined variable '{name}'", node.span,
                        missing=MissingName("variable", name))

    def unique_slot_owner(self, name: str) -> Optional[CellState]:
        """At test/session level: the one cell with a slot `name`."""
        owners = [s for s in self.cells.values() if name in s.slot_decls]
        return owners[0] if len(owners) == 1 else None

    def machine_read(self, state: CellState, node: ast.Call, nargs: int):
        """`Cell.get_status(id)` / `.has_state` / `.valid_transitions`: that cell's machine,
        wherever the call is (the way to choose when several cells own one)."""
        if state.machines is None:
            raise SomaError("type", f"cell '{state.name}' has no state machine, so {state.name}.{node.func}() "
                            "has nothing to read", node.span)
        return self.runtime_builtin(BUILTINS[node.func], state, node, nargs)

    def runtime_builtin(self, entry: Builtin, cell: Optional[CellState], node, nargs: int):
        """A builtin that needs the running program, called from `cell` at `node`: arity checked once,
        errors located at the call."""
        if not takes(entry, nargs):
            return locating(node, lambda values: call_builtin(entry.name, values))
        call, function = BuiltinCall(self, cell, node), entry.fn
        return locating(node, lambda values: function(call, *values))

    def machine_owner(self, cell: Optional[CellState], node) -> CellState:
        """The cell whose machine a transition()/get_status() addresses."""
        if cell is not None and cell.machines is not None:
            return cell
        owners = [s for s in self.cells.values() if s.machines is not None]
        if len(owners) == 1:
            return owners[0]
        if not owners:
            raise SomaError("type", "no state machine is declared: add a `state name { … }` section",
                            node.span)
        names = sorted(s.name for s in owners)
        func = getattr(node, "func", "get_status")
        raise SomaError("type", f"several cells have a state machine ({', '.join(names)}) — say whose: "
                        f"{names[0]}.{func}(…), or call it from a handler of that cell", node.span)

    def ask_instance(self, cell: Optional[CellState], node, instance_id, question: Callable):
        """`question(machines)` about one instance (get_status, has_state, valid_transitions).

        Inside a cell with a machine it asks that machine; elsewhere (a notebook line, a
        test cell) the only machine, else the one machine that knows the id. An id two
        machines know is ambiguous; so is one no machine knows when their answers differ."""
        if cell is not None and cell.machines is not None:
            return question(cell.machines)
        owners = [s for s in self.cells.values() if s.machines is not None]
        if len(owners) <= 1:
            return question(self.machine_owner(cell, node).machines)
        knowers = [s for s in owners if s.machines.has_state(instance_id)]
        if len(knowers) == 1:
            return question(knowers[0].machines)
        answers = [question(s.machines) for s in owners]
        if not knowers and all(answer == answers[0] for answer in answers):
            return answers[0]
        names = sorted(s.name for s in (knowers or owners))
        func = getattr(node, "func", "get_status")
        why = (f"instance {display_inner(instance_id)} is known to the state machines of {', '.join(names)}"
               if knowers else f"no state machine knows instance {display_inner(instance_id)} yet, and those of "
               f"{', '.join(names)} answer differently")
        raise SomaError("type", f"{why} — say whose: {names[0]}.{func}(…)", node.span)

    # ------------------------------------------------------------ values

    def construct(self, type_name: str, fields: dict, node):
        """`Name { f: v }`: a struct variant, or a record (a Map with `_type`)."""
        if type_name in self.variants:
            sum_type, variant = self.variants[type_name]
            if variant.fields is None:
                raise SomaError("type", f"variant {type_name} has no fields", node.span)
            declared = dict(variant.fields)
            unknown = [f for f in fields if f not in declared]
            missing = [f for f in declared if f not in fields]
            if unknown or missing:
                what = f"unknown field '{unknown[0]}'" if unknown else f"missing field '{missing[0]}'"
                raise SomaError("type", f"{type_name}: {what}", node.span)
            checked = {f: value_checker(declared[f], self, param=f"{type_name}.{f}")(v) for f, v in fields.items()}
            return Variant(sum_type, type_name, checked)
        return {"_type": type_name, **fields}

    def construct_tuple(self, name: str, values: list, node):
        """`Declined("x")`: a tuple variant."""
        sum_type, variant = self.variants[name]
        if variant.items is None or len(variant.items) != len(values):
            raise SomaError("type", f"variant {name} takes {len(variant.items or [])} value(s)", node.span)
        return Variant(sum_type, name, None, tuple(values))

    # ------------------------------------------------------------ guards & invariants

    def evaluate_in(self, owner: CellState, expr: ast.Expr, bindings: dict):
        """Evaluate a guard with the calling handler's locals bound by name."""
        names = tuple(sorted(bindings))
        key = (id(expr), owner.name, names, self.generation)
        ev = self.guard_cache.get(key)
        if ev is None:
            scope = Scope()
            indices = [scope.declare(n) for n in names]
            body = Compiler(self, owner).expr(expr, scope)
            size = scope.size

            def ev(values: dict, indices=indices, body=body, size=size):
                frame = [None] * size
                for index, name in zip(indices, names):
                    frame[index] = values[name]
                return body(frame)

            self.guard_cache[key] = ev
        return ev(bindings)

    def invariant_evaluator(self, state: CellState, expr: ast.Expr):
        """Compile an invariant into `evaluate(slot, value, key, size, status=None)` (see HandlerSource)."""
        names = list(state.slot_decls) + ["value", "key", "size", "status", "__writing__"]
        scope = Scope()
        indices = {n: scope.declare(n) for n in names}
        compiler = Compiler(self, state)
        compiler.invariant_mode = True
        mentioned = {n.id for n in walk_names(expr)}
        return HandlerSource(compiler).invariant_function(expr, scope, state, indices, mentioned)

    def check_status_invariants(self, owner: CellState, instance_id, target: str, node) -> None:
        """Invariants reading `status` are re-checked when an instance moves."""
        for invariant in owner.invariants:
            if "status" not in {n.id for n in walk_names(invariant.node.expr)}:
                continue
            for slot in owner.slots.values():
                if not invariant.applies_to(slot.name) or slot.is_list:
                    continue
                key = display(instance_id) if not isinstance(instance_id, str) else instance_id
                if key not in slot.data:
                    continue
                value = slot.data[key]
                result = invariant.evaluate(slot.name, value, key, len(slot.data), target)
                if result is not True:
                    raise SomaError("invariant", f"moving '{key}' to {target} breaks invariant {invariant.text}",
                                    node.span)

    # ------------------------------------------------------------ events

    def emit(self, name: str, args: list, node) -> None:
        """`emit name(args)`: run every listener of that name, in cell order."""
        for state in list(self.cells.values()):
            decl = state.handler(name, len(args))
            if decl is not None:
                self.handler_function(state, decl)(list(args))

    def trace_event(self, kind: str, fields: dict) -> None:
        """Append the record of a write (a Transition) to the agent trace; undone with the write."""
        self.agent.trace_write(kind, fields)




def compiled_within_stack(build: Callable[[], Callable], node: ast.Node) -> Callable:
    """`build()`, the compiled form of `node`; a clean kind `stack_overflow` error at `node` when
    its code nests too deeply for the compiler's Python stack (thousands of chained calls,
    fields, indexes or pipes, or nested lambdas: operator chains are compiled in a loop and
    never get here)."""
    try:
        return build()
    except RecursionError:
        raise SomaError("stack_overflow", "this code nests too deeply to compile (thousands of chained "
                        "calls, fields, indexes or pipes, or nested lambdas) — split it with `let`", node.span,
                        catchable=False) from None


def ambiguous_handler(name: str, owners: Iterable[CellState], node) -> SomaError:
    """The error of an unqualified call that several cells' handlers answer."""
    names = ", ".join(sorted(f"{s.name}.{name}" for s in owners))
    return SomaError("type", f"'{name}' is a handler of several cells — qualify it: {names}", node.span)


BUILTIN_FAILURES = (SomaError, TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError)


def builtin_target(name: str, nargs: int, node):
    """A pure builtin as a call target: arity checked once, errors located at the call.

    Its `direct` form takes the arguments in place (what generated code calls);
    for one or two arguments it is written out, as Python calls a function with
    plain positional arguments faster than one unpacking `*values`.
    """
    entry = BUILTINS[name]
    if not takes(entry, nargs):
        return locating(node, lambda values: call_builtin(name, values))
    function = entry.fn

    def direct(*values):
        try:
            return function(*values)
        except BUILTIN_FAILURES as error:
            raise builtin_failure(error, name, list(values), node) from None

    def direct_one(a):
        try:
            return function(a)
        except BUILTIN_FAILURES as error:
            raise builtin_failure(error, name, [a], node) from None

    def direct_two(a, b):
        try:
            return function(a, b)
        except BUILTIN_FAILURES as error:
            raise builtin_failure(error, name, [a, b], node) from None

    direct = {1: direct_one, 2: direct_two}.get(nargs, direct)

    def run(values):
        return direct(*values)

    run.builtin = function  # lets codegen recognise a builtin it can specialise (runtime.inplace)
    run.direct = direct  # what generated code calls, with the arguments in place
    return run


def builtin_failure(error: Exception, name: str, values: list, node) -> SomaError:
    """The SomaError a pure builtin's failure becomes at the call `node`: its own error located
    there, a number out of range (kind `range`), or arguments of types it does not accept."""
    if isinstance(error, SomaError):
        return error.located(node)
    if isinstance(error, OverflowError):
        return SomaError("range", f"{name}(): number out of range", node.span)
    return argument_error(name, values).located(node)


def _map_get(container, key, default=None):
    """`m.get(k)` / `xs.get(i)` on a local value: `()` (or `default`) when absent."""
    if isinstance(container, dict):
        value = container.get(map_key(key))
        return default if value is None else value
    if isinstance(container, list) and type(key) is int:
        return container[key] if -len(container) <= key < len(container) else default
    raise SomaError("type", f".get() needs a Map or a List, got {type_of(container)}")


def _map_has(container, key):
    """`m.has(k)` (a key) / `xs.has(x)` (an element) on a local value."""
    if isinstance(container, dict):
        return map_key(key) in container
    if isinstance(container, list):
        return any(equals(item, key) for item in container)
    raise SomaError("type", f".has() needs a Map or a List, got {type_of(container)}")


VALUE_METHODS = {
    "get": _map_get,
    "has": _map_has,
}


def walk_names(expr) -> list[ast.Name]:
    """Every Name node inside an expression (iterative walk)."""
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            found.append(node)
        if isinstance(node, ast.Node):
            for value in vars(node).values():
                if isinstance(value, ast.Node):
                    stack.append(value)
                elif isinstance(value, (list, tuple)):
                    stack.extend(v for v in value if isinstance(v, (ast.Node, list, tuple)))
        elif isinstance(node, (list, tuple)):
            stack.extend(v for v in node if isinstance(v, (ast.Node, list, tuple)))
    return found


def breach_messages(state: CellState) -> list[str]:
    """One line per invariant that values kept in a cell's slots break: they stay as they
    are (nothing is changed without being asked), and the next write of such a value is refused."""
    messages = []
    for slot in state.slots.values():
        for invariant, shown in slot.breaches():
            messages.append(f"{state.name}: {len(shown)} value(s) in memory break invariant {invariant.text}: "
                            f"{listed_entries(shown)} — kept as they are: fix them or the invariant "
                            "(it holds for new writes only)")
    return messages


def carry_over(old: CellState, new: CellState) -> list[str]:
    """Keep the old cell's slots and instances that fit the new declaration.

    Returns one line per kind of state lost: slots whose type changed (reset),
    slots no longer declared (dropped), instances whose state is gone.
    """
    changed = []
    for name, slot in new.slots.items():
        previous = old.slots.get(name)
        if previous is not None and previous.decl.type.render() == slot.decl.type.render():
            slot.data = previous.data
        elif previous is not None:
            changed.append(name)
    removed = [n for n in old.slots if n not in new.slots]
    messages = []
    if new.machines is not None and old.machines is not None:
        states = set(new.model.states)
        fitting = {k: v for k, v in old.machines.current.items() if v in states}
        dropped = len(old.machines.current) - len(fitting)
        new.machines.current.update(fitting)
        new.machines.history.update({k: v for k, v in old.machines.history.items() if k in fitting})
        if dropped:
            messages.append(f"{new.name}: {dropped} instance(s) reset (their state is no longer declared)")
    elif old.machines is not None and old.machines.current:
        messages.append(f"{new.name}: {len(old.machines.current)} instance(s) dropped (no state machine now)")
    if changed:
        messages.append(f"{new.name}: reset slot(s) {', '.join(changed)} (declaration changed)")
    if removed:
        messages.append(f"{new.name}: dropped slot(s) {', '.join(removed)} (no longer declared)")
    new.counter, new.memory = old.counter, old.memory
    return messages
