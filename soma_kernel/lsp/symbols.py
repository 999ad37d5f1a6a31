"""Where each name of a document is declared and used: the index behind definition, references, hover and symbols.

A name is known by its key `(kind, owner, name)`: `("cell", "", "Orders")`,
`("handler", "Orders", "place")` (a face's `signal place` declares the same
key as `on place`), `("slot", "Orders", "items")`, `("state", "Orders",
"paid")`, `("machine", "Orders", "order")`, `("type", "", "Pay")`,
`("variant", "", "Card")`, `("test", "", "T")`, `("model", "", "fast")` (a
soma.toml model named in `[model: …]`) and `("builtin", "", "len")`. A use
whose owner cannot be told here (a bare handler call defined in another
file) has owner `*`, which matches every owner.

The AST gives each node's span; a name's own place inside it is the first
word token equal to the name from where it must stand (after `on`, after the
cell in `Cell.h`), so strings and comments are never mistaken for names.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import NamedTuple, Optional

from ..analysis.context import CellInfo
from ..analysis.walk import iter_tree
from ..syntax import ast
from ..syntax.keywords import TYPES
from .document import Analysis

Key = tuple[str, str, str]
ANY_OWNER = "*"
NOT_WORDS = frozenset(("comment", "string", "escape", "interpolation", "number", "duration", "operator", "arrow",
                       "wildcard", "bracket", "punctuation"))
STATE_BUILTINS = ("transition",)


class Place(NamedTuple):
    """One occurrence of a name: its key, its [start, end) offsets and whether it declares the name."""

    key: Key
    start: int
    end: int
    declares: bool


class Symbol(NamedTuple):
    """A declared name: its key, what it is (`agent`, `signal`, `slot` …), the name's offsets, the whole
    declaration node and the symbol it sits in (its index in `SymbolIndex.symbols`, or -1)."""

    key: Key
    kind: str
    start: int
    end: int
    node: ast.Node
    parent: int


class SymbolIndex:
    """Every declaration and use of a name in one analysed document."""

    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.code = analysis.source.code
        self.tokens = analysis.tokens
        self._token_starts = [t.start for t in self.tokens]
        self.places: list[Place] = []
        self.symbols: list[Symbol] = []
        self._build()
        self.places.sort(key=lambda p: p.start)
        self._place_starts = [p.start for p in self.places]

    # ------------------------------------------------------------ queries

    def at(self, offset: int) -> Optional[Place]:
        """The occurrence under `offset` (its end counts: the cursor just after a name is on it)."""
        position = bisect_right(self._place_starts, offset) - 1
        if position >= 0 and offset <= self.places[position].end:
            return self.places[position]
        return None

    def declarations(self, key: Key) -> list[Symbol]:
        """The symbols declaring `key` (an `*` owner matches any owner)."""
        return [s for s in self.symbols if matches(s.key, key)]

    def occurrences(self, key: Key) -> list[Place]:
        """Every occurrence of `key`, declarations included, in source order."""
        return [p for p in self.places if matches(p.key, key)]

    # ------------------------------------------------------------ names in the text

    def word(self, name: str, start: int, end: Optional[int] = None) -> Optional[tuple[int, int]]:
        """The offsets of the first word token `name` in [start, end), or None."""
        end = len(self.code) if end is None else end
        position = bisect_left(self._token_starts, start)
        code = self.code
        width = len(name)
        while position < len(self.tokens):
            token = self.tokens[position]
            if token.start >= end:
                return None
            if token.kind not in NOT_WORDS and token.end - token.start == width \
                    and code.startswith(name, token.start):
                return token.start, token.end
            position += 1
        return None

    def _use(self, key: Key, name: str, start: int, end: Optional[int] = None) -> Optional[tuple[int, int]]:
        """Record a use of `key` at the word `name` found from `start`; its offsets."""
        found = self.word(name, start, end)
        if found is not None:
            self.places.append(Place(key, found[0], found[1], False))
        return found

    def _declare(self, key: Key, kind: str, name: str, node: ast.Node, parent: int, start: Optional[int] = None) -> int:
        """Record a declaration of `key` (the word `name` inside `node`); the new symbol's index."""
        found = self.word(name, node.span.start if start is None else start, node.span.end)
        if found is None:
            return parent
        self.places.append(Place(key, found[0], found[1], True))
        self.symbols.append(Symbol(key, kind, found[0], found[1], node, parent))
        return len(self.symbols) - 1

    # ------------------------------------------------------------ the walk

    def _build(self) -> None:
        """Index every top-level item, then a notebook's statements."""
        for item in self.analysis.program.items:
            if isinstance(item, ast.CellDecl):
                self._cell(item)
            elif isinstance(item, ast.TypeDecl):
                self._type(item)
            elif isinstance(item, ast.Flesh):
                self._use(("cell", "", item.name), item.name, item.span.start)
                info = self.analysis.index.cells.get(item.name)
                for handler in item.handlers:
                    self._handler(handler, info, item.name, -1)
            elif isinstance(item, ast.TestCell):
                self._test(item)
        for statement in self.analysis.parsed.statements:
            self._expressions(statement, None)

    def _cell(self, decl: ast.CellDecl) -> None:
        """A cell: its name, model option, face, memory, machines, handlers and scheduled blocks."""
        cell = self._declare(("cell", "", decl.name), decl.kind, decl.name,
                             decl, -1)
        info = self.analysis.index.cells.get(decl.name)
        if info is not None and info.decl is not decl:
            info = None
        model = decl.options.get("model")
        if model:
            body = self.code.find("{", decl.span.start, decl.span.end)
            self._use(("model", "", model), model, decl.span.start, body if body >= 0 else None)
        if decl.face is not None:
            for member in list(decl.face.signals) + list(decl.face.tools):
                kind = "signal" if isinstance(member, ast.Signal) else "tool"
                self._declare(("handler", decl.name, member.name), kind, member.name, member, cell)
                self._types_of(member.params, member.returns)
                if isinstance(member, ast.Signal) and member.frame is not None:
                    self._frame(member.frame, decl.name)
        if decl.memory is not None:
            for slot in decl.memory.slots:
                self._declare(("slot", decl.name, slot.name), "slot", slot.name, slot, cell)
                self._type_refs(slot.type)
            for invariant in decl.memory.invariants:
                self._expressions(invariant.expr, info)
        for machine in decl.machines:
            self._machine(machine, decl.name, info, cell)
        for handler in decl.handlers:
            self._handler(handler, info, decl.name, cell)
        for block in decl.scheduled:
            self._expressions(block.body, info, self.analysis.index.facts(block) if info else None)

    def _type(self, decl: ast.TypeDecl) -> None:
        """A sum type and its variants."""
        parent = self._declare(("type", "", decl.name), "type", decl.name, decl, -1)
        for variant in decl.variants:
            self._declare(("variant", "", variant.name), "variant", variant.name, variant, parent)
            for _, type_ref in variant.fields or []:
                self._type_refs(type_ref)
            for type_ref in variant.items or []:
                self._type_refs(type_ref)

    def _test(self, test: ast.TestCell) -> None:
        """A test cell, its helper handlers and its rules."""
        parent = self._declare(("test", "", test.name), "test", test.name, test, -1)
        for handler in test.handlers:
            self._handler(handler, None, test.name, parent)
        for rule in test.rules:
            if isinstance(rule, ast.RuleMock):
                self._mock_target(rule)
            self._expressions(rule, None)

    def _handler(self, handler: ast.Handler, info: Optional[CellInfo], owner: str, parent: int) -> None:
        """`on name(params)`: the name, its parameter types, its body."""
        on = self.word("on", handler.span.start, handler.span.end)
        self._declare(("handler", owner, handler.name), "handler", handler.name, handler, parent,
                      on[1] if on else None)
        self._types_of(handler.params, None)
        facts = self.analysis.index.facts(handler) if info is not None else None
        self._expressions(handler.body, info, facts)

    def _machine(self, machine: ast.StateMachine, cell: str, info: Optional[CellInfo], parent: int) -> None:
        """`state name [: Type] { initial: s  edges }`: the machine, its states (first mention declares), guards."""
        keyword = self.word("state", machine.span.start, machine.span.end)
        index = self._declare(("machine", cell, machine.name), "machine", machine.name, machine, parent,
                              keyword[1] if keyword else None)
        if machine.type_name:
            self._use(("type", "", machine.type_name), machine.type_name, machine.span.start, machine.span.end)
        declared: set[str] = set()

        def mention(state: str, start: int, end: int, node: ast.Node) -> int:
            """Record a state's mention found from `start` (its first one declares it); where it ends."""
            key = ("state", cell, state)
            if state == "*" or state in declared:
                found = self._use(key, state, start, end) if state != "*" else None
                return found[1] if found else start
            declared.add(state)
            before = len(self.symbols)
            self._declare(key, "state", state, node, index, start)
            return self.symbols[-1].end if len(self.symbols) > before else start

        if machine.initial:
            initial = self.word("initial", machine.span.start, machine.span.end)
            if initial is not None:
                mention(machine.initial, initial[1], machine.span.end, machine)
        for edge in machine.edges:
            after = mention(edge.src, edge.span.start, edge.span.end, edge)
            arrow = self.code.find("->", after, edge.span.end)
            after = mention(edge.dst, arrow + 2 if arrow >= 0 else after, edge.span.end, edge)
            for state in edge.excepts:
                after = mention(state, after, edge.span.end, edge)
            if edge.guard is not None:
                self._expressions(edge.guard, info)

    def _frame(self, frame: ast.Frame, cell: str) -> None:
        """A skeleton signal's frame: the slots it writes and reads, what it calls, the edges it moves."""
        for slot in frame.writes + frame.reads:
            self._use(("slot", cell, slot), slot, frame.span.start, frame.span.end)
        for callee in frame.calls:
            owner, _, name = callee.rpartition(".")
            self._use(("handler", owner or cell, name), name, frame.span.start, frame.span.end)
        for src, dst in frame.moves:
            for state in (src, dst):
                if state != "*":
                    self._use(("state", cell, state), state, frame.span.start, frame.span.end)

    def _mock_target(self, rule: ast.RuleMock) -> None:
        """`mock Cell.handler …` / `mock handler …`: a use of that handler."""
        owner, _, name = rule.target.rpartition(".")
        if name in self.analysis.index.handler_owners or owner:
            self._use(("handler", owner or self._owner_of(name, None), name), name, rule.span.start, rule.span.end)

    def _types_of(self, params: list[ast.Param], returns: Optional[ast.TypeRef]) -> None:
        """The user types written in parameters and a return type."""
        for param in params:
            if param.type is not None:
                self._type_refs(param.type)
        if returns is not None:
            self._type_refs(returns)

    def _type_refs(self, type_ref: ast.TypeRef) -> None:
        """A written type and its arguments: each user type name is a use."""
        stack = [type_ref]
        while stack:
            current = stack.pop()
            if current.name not in TYPES:
                self._use(("type", "", current.name), current.name, current.span.start, current.span.end)
            stack.extend(current.args)

    def _owner_of(self, name: str, info: Optional[CellInfo]) -> str:
        """The cell a bare handler name means: the caller's own, else the only cell defining it, else `*`."""
        if info is not None and (info.handler(name) is not None or name in info.signals):
            return info.name
        owners = self.analysis.index.handler_owners.get(name, [])
        return owners[0] if len(owners) == 1 else ANY_OWNER

    def _expressions(self, root: ast.Node, info: Optional[CellInfo], facts=None) -> None:
        """The names used under `root`, read in the cell `info` (None at top level); locals are skipped."""
        index = self.analysis.index
        local = {id(use.node) for use in facts.names if use.local} if facts is not None else set()
        for node in iter_tree(root):
            if isinstance(node, ast.Name):
                if id(node) not in local:
                    self._name(node, info)
            elif isinstance(node, ast.Call):
                self._call(node, info)
            elif isinstance(node, ast.MethodCall):
                dot = self.code.find(".", node.receiver.span.end, node.span.end)
                if node.method in index.handler_owners:
                    self._use(("handler", self._owner_of(node.method, info), node.method), node.method, dot)
                elif index.is_builtin(node.method):
                    self._use(("builtin", "", node.method), node.method, dot)
            elif isinstance(node, ast.Field) and isinstance(node.obj, ast.Name) and node.obj.id in index.cells:
                member = index.cells[node.obj.id]
                kind = "slot" if node.name in member.slots else "handler"
                self._use((kind, member.name, node.name), node.name, node.obj.span.end, node.span.end)
            elif isinstance(node, ast.RecordLit) and node.type_name in index.variants:
                self._use(("variant", "", node.type_name), node.type_name, node.span.start)
            elif isinstance(node, ast.PVariant):
                self._use(("variant", "", node.name), node.name, node.span.start)
            elif isinstance(node, ast.Param) and node.type is not None:
                self._type_refs(node.type)

    def _name(self, node: ast.Name, info: Optional[CellInfo]) -> None:
        """A bare name: a slot of the cell, a variant, a cell, a handler, or a builtin used as a value."""
        index = self.analysis.index
        name = node.id
        if info is not None and name in info.slots:
            key = ("slot", info.name, name)
        elif name in index.variants:
            key = ("variant", "", name)
        elif name in index.cells:
            key = ("cell", "", name)
        elif name in index.handler_owners:
            key = ("handler", self._owner_of(name, info), name)
        else:
            return
        self.places.append(Place(key, node.span.start, node.span.end, False))

    def _call(self, call: ast.Call, info: Optional[CellInfo]) -> None:
        """A call by name: `Cell.h(…)`, a tuple variant, a handler or a builtin (and transition()'s states)."""
        index = self.analysis.index
        start = call.span.start
        if call.cell is not None:
            found = self._use(("cell", "", call.cell), call.cell, start)
            self._use(("handler", call.cell, call.func), call.func, found[1] if found else start)
            return
        if call.func in index.variants:
            self._use(("variant", "", call.func), call.func, start)
        elif call.func in index.handler_owners and not (info is None and index.is_builtin(call.func)):
            self._use(("handler", self._owner_of(call.func, info), call.func), call.func, start)
        elif index.is_builtin(call.func):
            self._use(("builtin", "", call.func), call.func, start)
            if call.func in STATE_BUILTINS:
                self._states_of(call, info)

    def _states_of(self, call: ast.Call, info: Optional[CellInfo]) -> None:
        """The state names a transition() call writes as strings (or bare variants of a typed machine)."""
        model = info.model if info is not None and info.model is not None else self.analysis.index.only_machine()
        if model is None:
            return
        owner = info.name if info is not None and info.model is not None else \
            next(c.name for c in self.analysis.index.cells.values() if c.model is model)
        for argument in call.args[1:]:
            if isinstance(argument, ast.Literal) and isinstance(argument.value, str) \
                    and model.has_state(argument.value):
                self.places.append(Place(("state", owner, argument.value), argument.span.start + 1,
                                         argument.span.end - 1, False))


def matches(key: Key, wanted: Key) -> bool:
    """True when `key` is `wanted`, an `*` owner on either side matching any owner."""
    return key[0] == wanted[0] and key[2] == wanted[2] and (
        key[1] == wanted[1] or ANY_OWNER in (key[1], wanted[1]))
