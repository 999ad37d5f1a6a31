"""The Soma abstract syntax tree.

Every node is a dataclass carrying the `Span` of the source text it came from.
Nodes are built once by the parser and then only read: analyses keep derived
facts in side tables keyed by node identity (`id(node)`), never on the node.

Conventions shared by every phase:
- A *block* is a `Block` (a list of statements); its value, where a block is
  used as an expression (match arms, `try`, `if` expressions, lambdas), is the
  value of its last statement when that statement is an `ExprStmt`, else `()`.
- Names starting with an uppercase letter (`Approve`, `Deny`) are `Name` nodes
  too; the runtime resolves them to unit variants when no local binds them.
- `a ?? b` is a `Binary` with op `"??"`; `x |> f(a)` is a `Pipe`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from ..core.spans import NO_SPAN, Span


@dataclass
class Node:
    """Base class of every AST node."""

    span: Span = field(default=NO_SPAN, kw_only=True, compare=False, repr=False)


# ---------------------------------------------------------------- types


@dataclass
class TypeRef(Node):
    """A written type: `Int`, `Map<String, Int>`, `List<Map>`."""

    name: str
    args: list[TypeRef] = field(default_factory=list)

    def render(self) -> str:
        """The type as Soma source text, e.g. `Map<String, Map>`."""
        if not self.args:
            return self.name
        return f"{self.name}<{', '.join(a.render() for a in self.args)}>"


@dataclass
class Param(Node):
    """A handler/signal parameter; `type` is None for untyped flesh parameters."""

    name: str
    type: Optional[TypeRef] = None


# ---------------------------------------------------------------- expressions


@dataclass
class Literal(Node):
    """An Int, Float, plain String, Bool or unit `()` literal.

    `value` is the Python value: int, float, str, bool, or None for `()`.
    Duration literals (`5s`) are Int literals in milliseconds.
    """

    value: object


@dataclass
class InterpString(Node):
    """A string literal with at least one evaluated `{expr}` segment.

    `parts` alternates literal text (str) and expressions, in source order;
    literal segments (`{"a": 1}`, `{4}`, `{{`) are already folded into the
    text parts. `triple` tells whether it was written with triple quotes.
    """

    parts: list[Union[str, Expr]]
    triple: bool = False


@dataclass
class Name(Node):
    """A bare identifier: a local, parameter, slot, or (uppercase) unit variant."""

    id: str


@dataclass
class ListLit(Node):
    """`[a, b, c]`."""

    items: list[Expr]


@dataclass
class RecordLit(Node):
    """`Type { f: e, … }`: a struct variant when `type_name` is a declared
    variant, otherwise a record (a Map carrying `_type`)."""

    type_name: str
    fields: list[tuple[str, Expr]]


@dataclass
class Call(Node):
    """A call by name: `f(args)` (`cell` is None) or `Cell.f(args)`.

    An uppercase `func` with no cell is a tuple-variant construction
    (`Declined("x")`) when such a variant exists.
    """

    func: str
    args: list[Expr]
    cell: Optional[str] = None


@dataclass
class MethodCall(Node):
    """`receiver.method(args)`: a slot method, or UFCS `method(receiver, args)`."""

    receiver: Expr
    method: str
    args: list[Expr]


@dataclass
class Field(Node):
    """`obj.name`: a map key, a record/variant field or a pseudo-field (`.len`)."""

    obj: Expr
    name: str


@dataclass
class Index(Node):
    """`obj[index]`."""

    obj: Expr
    index: Expr


@dataclass
class Unary(Node):
    """`!x` (op `"!"`) or `-x` (op `"-"`)."""

    op: str
    operand: Expr


@dataclass
class Binary(Node):
    """A binary operator: `|| && ?? == != < > <= >= + - * / %`."""

    op: str
    left: Expr
    right: Expr


@dataclass
class Pipe(Node):
    """`value |> target`: `target` is a `Call` (value becomes its first
    argument) or a `Name` (a handler or lambda applied to value)."""

    value: Expr
    target: Expr


@dataclass
class Lambda(Node):
    """`x => expr` or `x => { stmts }` (body is then a Block)."""

    param: str
    body: Union[Expr, Block]


@dataclass
class If(Node):
    """`if cond { } [else { } | else if …]` as statement or expression.

    `orelse` is None, a Block, or another If (for `else if`).
    """

    cond: Expr
    then: Block
    orelse: Union[Block, If, None] = None


@dataclass
class MatchArm(Node):
    """One `pattern [if guard] -> body` arm; body is an expression or a Block."""

    pattern: Pattern
    guard: Optional[Expr]
    body: Union[Expr, Block]


@dataclass
class Match(Node):
    """`match subject { arms }`."""

    subject: Expr
    arms: list[MatchArm]


@dataclass
class Try(Node):
    """`try { block }`: evaluates to a Map {value, error, kind, detail}."""

    body: Block


@dataclass
class Propagate(Node):
    """`expr?`: re-raise a failed try-result, else yield its value."""

    expr: Expr


Expr = Union[
    Literal, InterpString, Name, ListLit, RecordLit, Call, MethodCall, Field, Index,
    Unary, Binary, Pipe, Lambda, If, Match, Try, Propagate,
]


# ---------------------------------------------------------------- patterns


@dataclass
class PWildcard(Node):
    """`_`."""


@dataclass
class PLiteral(Node):
    """A literal pattern (string, number, bool, `()`); value as in Literal."""

    value: object


@dataclass
class PBind(Node):
    """A lowercase name: binds the subject."""

    name: str


@dataclass
class PRange(Node):
    """`lo..hi`, inclusive."""

    lo: object
    hi: object


@dataclass
class POr(Node):
    """`p1 || p2 || …`."""

    alternatives: list[Pattern]


@dataclass
class PVariant(Node):
    """A variant pattern: `Approve`, `Deny { reason }`, `Deny { reason: "x" }`,
    `Declined(msg)`.

    `fields` (struct form) maps a field name to a sub-pattern, or to None for
    shorthand binding of the field's name; `items` is the tuple form.
    Both are None for the unit form.
    """

    name: str
    fields: Optional[list[tuple[str, Optional[Pattern]]]] = None
    items: Optional[list[Pattern]] = None


@dataclass
class PStringPrefix(Node):
    """`"/api/" + rest`: the subject starts with prefix; rest is bound."""

    prefix: str
    rest: str


@dataclass
class PMap(Node):
    """`{method: "GET", path}`: named keys must exist; None binds the key's name."""

    entries: list[tuple[str, Optional[Pattern]]]


Pattern = Union[PWildcard, PLiteral, PBind, PRange, POr, PVariant, PStringPrefix, PMap]


# ---------------------------------------------------------------- statements


@dataclass
class Block(Node):
    """A `{ … }` sequence of statements."""

    stmts: list[Stmt]


@dataclass
class Let(Node):
    """`let name = value`."""

    name: str
    value: Expr


@dataclass
class Assign(Node):
    """`target op value` with op one of `= += -= *= /=`; target is a Name,
    Index or Field (nested)."""

    target: Expr
    op: str
    value: Expr


@dataclass
class While(Node):
    """`while [loop_bound(N)] cond { body }`."""

    cond: Expr
    body: Block
    bound: Optional[int] = None


@dataclass
class For(Node):
    """`for [loop_bound(N)] var in iterable { body }`."""

    var: str
    iterable: Expr
    body: Block
    bound: Optional[int] = None


@dataclass
class Break(Node):
    """`break`."""


@dataclass
class Continue(Node):
    """`continue`."""


@dataclass
class Return(Node):
    """`return [value]`."""

    value: Optional[Expr] = None


@dataclass
class Require(Node):
    """`require cond else Tag ["detail"]`."""

    cond: Expr
    tag: str
    detail: Optional[Expr] = None


@dataclass
class Ensure(Node):
    """`ensure cond`."""

    cond: Expr


@dataclass
class Emit(Node):
    """`emit name(args)`."""

    name: str
    args: list[Expr]


@dataclass
class ExprStmt(Node):
    """An expression used as a statement (calls, `if`, `match`, last values)."""

    expr: Expr


Stmt = Union[Let, Assign, While, For, Break, Continue, Return, Require, Ensure, Emit, ExprStmt]


# ---------------------------------------------------------------- cell sections


@dataclass
class Frame(Node):
    """A skeleton signal's frame: what its body may call, write, read and move."""

    calls: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Signal(Node):
    """`signal name(params) [-> Ret]` in a face, with its frame in skeletons."""

    name: str
    params: list[Param]
    returns: Optional[TypeRef] = None
    frame: Optional[Frame] = None


@dataclass
class Tool(Node):
    """`tool name(params) -> Ret [capability: "…"] "description"` in an agent face."""

    name: str
    params: list[Param]
    returns: Optional[TypeRef] = None
    description: Optional[str] = None
    capability: Optional[str] = None


@dataclass
class Face(Node):
    """The `face { }` section."""

    signals: list[Signal] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)
    promises: list[str] = field(default_factory=list)


@dataclass
class SlotProp(Node):
    """A slot property: `persistent`, `capacity(100)`, `ttl(5s)`…; arg is the
    literal argument or None."""

    name: str
    arg: object = None


@dataclass
class Slot(Node):
    """`name: Type [props]` in a memory section."""

    name: str
    type: TypeRef
    props: list[SlotProp] = field(default_factory=list)


@dataclass
class Invariant(Node):
    """`invariant expr`."""

    expr: Expr


@dataclass
class Memory(Node):
    """The `memory { }` section."""

    slots: list[Slot] = field(default_factory=list)
    invariants: list[Invariant] = field(default_factory=list)


@dataclass
class Edge(Node):
    """`src -> dst [{ guard { expr } }]`; src is `"*"` for a wildcard, whose
    `excepts` lists the states kept out of it."""

    src: str
    dst: str
    guard: Optional[Expr] = None
    excepts: list[str] = field(default_factory=list)


@dataclass
class StateMachine(Node):
    """`state name [: Type] { initial: s  edges… }`."""

    name: str
    initial: Optional[str]
    edges: list[Edge] = field(default_factory=list)
    type_name: Optional[str] = None


@dataclass
class CostEntry(Node):
    """One `axis: value` line of a `cost { }` block (value is a literal)."""

    axis: str
    value: object


@dataclass
class Handler(Node):
    """`on name(params) [annotations] { body }`.

    `annotations` holds `[native]`, `[loop_bound(3)]`… as (name, arg) pairs.
    `flesh` is True for handlers written in a `flesh` block.
    """

    name: str
    params: list[Param]
    body: Block
    annotations: list[tuple[str, object]] = field(default_factory=list)
    flesh: bool = False

    @property
    def is_private(self) -> bool:
        """Private helpers are named with a leading underscore."""
        return self.name.startswith("_")


@dataclass
class Scheduled(Node):
    """`every DURATION { body }` or `after DURATION { body }` (kind says which)."""

    kind: str
    interval_ms: int
    body: Block


@dataclass
class CellDecl(Node):
    """`cell`, `cell agent` or `skeleton agent` with its sections.

    kind is "cell", "agent" or "skeleton". A cell holds at most one machine,
    but every `state` section is kept so that check can report extras.
    """

    name: str
    kind: str
    face: Optional[Face] = None
    memory: Optional[Memory] = None
    machines: list[StateMachine] = field(default_factory=list)
    handlers: list[Handler] = field(default_factory=list)
    cost: list[CostEntry] = field(default_factory=list)
    scheduled: list[Scheduled] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)  # `[model: fast, skill: "x.md"]`

    @property
    def machine(self) -> Optional[StateMachine]:
        """The cell's state machine (the first one declared), if any."""
        return self.machines[0] if self.machines else None


@dataclass
class VariantDecl(Node):
    """One variant of a sum type: unit (`fields` and `items` None), struct
    (`fields` = [(name, type)]), or tuple (`items` = [type])."""

    name: str
    fields: Optional[list[tuple[str, TypeRef]]] = None
    items: Optional[list[TypeRef]] = None


@dataclass
class TypeDecl(Node):
    """`cell type Name { variants { … } }`."""

    name: str
    variants: list[VariantDecl]


@dataclass
class Flesh(Node):
    """`flesh Name { on … }`: the bodies of a skeleton agent's signals."""

    name: str
    handlers: list[Handler]


# ---------------------------------------------------------------- tests


@dataclass
class RuleLet(Node):
    """`let name = expr` inside `rules`."""

    name: str
    value: Expr


@dataclass
class RuleAssert(Node):
    """`assert expr`; `source` is the expression's source text as the test
    runner prints it (whitespace runs collapsed)."""

    expr: Expr
    source: str


@dataclass
class RuleAssertFails(Node):
    """`assert_fails expr [matching "text"]`."""

    expr: Expr
    source: str
    matching: Optional[str] = None


@dataclass
class RuleMock(Node):
    """`mock TARGET [error] value`.

    target is "think", "approve", "now", "now_ms", "http_get"… or a handler
    name, possibly qualified (`Cell.handler`). `is_error` marks `mock X error
    "msg"`; then value is the message expression. `mock think tool
    NAME(arg: e, …)` scripts the model asking for the tool NAME: `tool` is
    NAME, `tool_args` the argument names and value the ListLit of their
    expressions, in order.
    """

    target: str
    value: Expr
    is_error: bool = False
    tool: Optional[str] = None
    tool_args: tuple[str, ...] = ()


@dataclass
class RuleProperty(Node):
    """`property "name" forall var: Type in lo..hi ensures expr`."""

    name: str
    var: str
    var_type: Optional[TypeRef]
    lo: Expr
    hi: Expr
    ensures: Expr
    source: str = ""


Rule = Union[RuleLet, RuleAssert, RuleAssertFails, RuleMock, RuleProperty]


@dataclass
class TestCell(Node):
    """`cell test Name { rules { … } }` with optional helper handlers."""

    name: str
    rules: list[Rule]
    handlers: list[Handler] = field(default_factory=list)


@dataclass
class Use(Node):
    """`use lib::module` (path parts joined with "/")."""

    path: str


TopItem = Union[CellDecl, TypeDecl, Flesh, TestCell, Use]


@dataclass
class Program(Node):
    """A parsed source file: its items in order, the text and where it came from."""

    items: list[TopItem]
    source: str = ""
    origin: str = "<input>"

    @property
    def cells(self) -> list[CellDecl]:
        """Plain, agent and skeleton cells, in file order."""
        return [i for i in self.items if isinstance(i, CellDecl)]

    @property
    def types(self) -> list[TypeDecl]:
        """Sum-type declarations, in file order."""
        return [i for i in self.items if isinstance(i, TypeDecl)]

    @property
    def tests(self) -> list[TestCell]:
        """Test cells, in file order."""
        return [i for i in self.items if isinstance(i, TestCell)]

    @property
    def fleshes(self) -> list[Flesh]:
        """`flesh` blocks, in file order."""
        return [i for i in self.items if isinstance(i, Flesh)]
