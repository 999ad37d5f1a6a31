"""The invariant prover: `<Cell>/invariants:` groups (spec §12.3).

For every `invariant` of a cell's memory, every write to a slot it guards
(`set`, `push`, `slot[k] = v`, `delete`) in every handler and scheduled block
is checked by interval arithmetic:
- an invariant guards the slots it names, or every slot of its memory when
  it names none (then it speaks of `value`);
- names mean what the runtime gives them (syntax.invariant_terms): a slot's
  name and `value` are the value written, `size`/`S.size`/`S.len` the entry
  count after the write, `len(S)` the written value's length;
- an interval conjunct is `S op literal` (or `literal op S`) with S a
  guarded slot or `value`; a size conjunct `size op literal` is proven for a
  handler's one adding write (not in a loop or lambda, no called handler
  adding too) after a `require len(S) < K` whose K accounts for the write;
  a length conjunct `len(S) op literal` is decided for literal values; any
  other conjunct (two slots, fields, `status`) stays runtime-checked;
- the written value's interval comes from literals, `+ - *`, exact `/` by a
  constant, `clamp/min/max/abs`, `if`/`match` arms (join), `??` (join),
  reads of a slot with an interval invariant (the induction hypothesis: that
  slot's own invariant), sibling handlers' return values, once-bound locals,
  and numeric parameters narrowed by `require`/`if` facts that dominate the
  write; anything else is unbounded, with a reason;
- bounds past 2^53 are treated as unknown.

Lines: `✓ … — no handler writes to guarded slots`; per writer `✓ … — writer
'h' proven [by induction] (writes E)`, `✓ … — writer 'h' only deletes from
'S' …`, `✓ … — writer 'h' can never commit E to 'S': …` (statically out of
range inside a try), `✗ … statically violated`; and one `⚠ … —
runtime-checked (computed values): <tags> because <reasons>` for the rest.
"""

from __future__ import annotations

from typing import Optional

from ...core.records import Record, fresh
from ...syntax import ast
from ...syntax.invariant_terms import is_size_term, written_length_subject
from ...syntax.render import render_expr
from ..context import CellInfo, ProgramIndex
from ..walk import iter_tree
from .guards import conjuncts
from .report import FAIL, INFO, PASS, WARN, CheckGroup, CheckLine
from .sites import find_sites

LIMIT = 2 ** 53
COMPARE = {"<", "<=", ">", ">="}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
NUMERIC_TYPES = {"Int", "Float"}
WRITE_METHODS = {"set", "push", "append", "delete"}
MAX_CALL_DEPTH = 32


class Interval(Record, frozen=True):
    """A closed numeric interval; None is an infinite bound."""

    lo: Optional[float] = None
    hi: Optional[float] = None

    def within(self, other: "Interval") -> bool:
        """True when self ⊆ other."""
        return (other.lo is None or (self.lo is not None and self.lo >= other.lo)) and \
            (other.hi is None or (self.hi is not None and self.hi <= other.hi))

    def disjoint(self, other: "Interval") -> bool:
        """True when no value lies in both."""
        return (self.hi is not None and other.lo is not None and self.hi < other.lo) or \
            (self.lo is not None and other.hi is not None and self.lo > other.hi)

    def join(self, other: "Interval") -> "Interval":
        """The smallest interval holding both."""
        lo = None if self.lo is None or other.lo is None else min(self.lo, other.lo)
        hi = None if self.hi is None or other.hi is None else max(self.hi, other.hi)
        return Interval(lo, hi)

    def meet(self, other: "Interval") -> "Interval":
        """The intersection (may be empty: lo > hi)."""
        lo = other.lo if self.lo is None else self.lo if other.lo is None else max(self.lo, other.lo)
        hi = other.hi if self.hi is None else self.hi if other.hi is None else min(self.hi, other.hi)
        return Interval(lo, hi)

    def text(self) -> str:
        """The interval as the prover prints it, e.g. `[0, +∞]`."""
        return f"[{_bound_text(self.lo, '-∞')}, {_bound_text(self.hi, '+∞')}]"


UNBOUNDED = Interval()


def _bound_text(value: Optional[float], infinite: str) -> str:
    if value is None:
        return infinite
    return str(int(value)) if float(value).is_integer() else str(value)


def _clip(interval: Interval) -> Interval:
    """Bounds past 2^53 become unknown."""
    lo = interval.lo if interval.lo is None or abs(interval.lo) <= LIMIT else None
    hi = interval.hi if interval.hi is None or abs(interval.hi) <= LIMIT else None
    return Interval(lo, hi)


class Value(Record):
    """What the prover knows of an expression: its interval, whether it read a
    guarded slot (induction), and why it is not bounded."""

    interval: Interval = UNBOUNDED
    induction: bool = False
    reasons: set = fresh(set)


class Conjunct(Record):
    """One `&&` part of an invariant: an interval bound on the written value,
    a size bound, or something only the runtime checks."""

    expr: ast.Expr
    kind: str
    interval: Interval = UNBOUNDED
    op: str = ""
    literal: str = ""
    slot_on_left: bool = True


class Write(Record):
    """A write site: the body, the slot, the written expression (None for delete);
    `node` is the writing call or assignment, `repeated` true inside a loop or lambda."""

    handler: str
    slot: str
    value: Optional[ast.Expr]
    facts: tuple
    in_try: bool
    body: ast.Node
    field_write: bool = False
    node: Optional[ast.Node] = None
    repeated: bool = False


def invariant_groups(index: ProgramIndex) -> list[CheckGroup]:
    """One `<Cell>/invariants` group per cell declaring invariants to prove
    (an invariant reading a machine's `status` is a note of the machine)."""
    groups = []
    for info in index.cells.values():
        memory = info.decl.memory
        provable = [inv for inv in (memory.invariants if memory else []) if not reads_status(info, inv)]
        if not provable:
            continue
        prover = Prover(info)
        lines = [line for inv in provable for line in prover.lines_for(inv)]
        groups.append(CheckGroup(f"{info.name}/invariants", lines))
    return groups


def reads_status(info: CellInfo, inv: ast.Invariant) -> bool:
    """True when the invariant reads the instance's machine state (`status`)
    in a cell with a machine and no slot of that name."""
    if info.model is None or "status" in info.slots:
        return False
    return any(isinstance(n, ast.Name) and n.id == "status" for n in iter_tree(inv.expr))


def status_invariant_notes(info: CellInfo) -> list[CheckLine]:
    """`·` notes for invariants over `status`: the runtime checks them on every
    write to their slots and on every transition(); the prover does not."""
    memory = info.decl.memory
    notes = []
    for inv in (memory.invariants if memory else []):
        if reads_status(info, inv):
            named = [n.id for n in iter_tree(inv.expr) if isinstance(n, ast.Name) and n.id in info.slots]
            slots = ", ".join(dict.fromkeys(named)) or ", ".join(info.slots)
            notes.append(CheckLine(INFO, f"invariant {render_expr(inv.expr)} reads `status`: checked at run time "
                                         f"on every write to {slots} and on every transition()",
                                   kind="invariant"))
    return notes


class Prover:
    """Proves one cell's invariants against its write sites."""

    def __init__(self, info: CellInfo):
        self.render = render_expr
        self.info = info
        self.slots = set(info.slots)
        self.bodies = [(h.name, h) for h in info.handlers] + \
            [(f"{b.kind}@{b.interval_ms}ms", b) for b in info.decl.scheduled]
        self.writes = [w for name, node in self.bodies for w in self._writes_in(name, node)]
        self.slot_bounds = self._slot_bounds()
        self.return_cache: dict[str, Value] = {}

    # ------------------------------------------------------------ invariant shape

    def guarded_slots(self, inv: ast.Invariant) -> list[str]:
        """Slots the invariant names, or every slot when it names none."""
        named = [n.id for n in iter_tree(inv.expr) if isinstance(n, ast.Name) and n.id in self.slots]
        return list(dict.fromkeys(named)) or list(self.info.slots)

    def shape(self, inv: ast.Invariant, guarded: list[str]) -> list[Conjunct]:
        """Classify every conjunct of an invariant."""
        subjects = set(guarded) | {"value"}
        result = []
        for part in conjuncts(inv.expr):
            result.append(self._classify(part, subjects))
        return result

    def _classify(self, part: ast.Expr, subjects: set) -> Conjunct:
        if isinstance(part, ast.Binary) and part.op == "==":
            for side, other in ((part.left, part.right), (part.right, part.left)):
                number = _number(other)
                if written_length_subject(side, subjects) is not None and number is not None:
                    return Conjunct(part, "length", Interval(number, number), "==", self.render(other),
                                    side is part.left)
        if isinstance(part, ast.Binary) and part.op in COMPARE:
            for side, other, op, on_left in ((part.left, part.right, part.op, True),
                                             (part.right, part.left, FLIP.get(part.op, ""), False)):
                number = _number(other)
                if isinstance(side, ast.Name) and side.id in subjects and number is not None:
                    bound = _bound_interval(op, number)
                    return Conjunct(part, "interval", bound, part.op, self.render(other), on_left)
                if is_size_term(side, self.slots) and number is not None:
                    return Conjunct(part, "size", _bound_interval(op, number), part.op, self.render(other), on_left)
                if written_length_subject(side, subjects) is not None and number is not None:
                    return Conjunct(part, "length", _bound_interval(op, number), part.op, self.render(other),
                                    on_left)
        return Conjunct(part, "runtime")

    def _slot_bounds(self) -> dict[str, Interval]:
        """Each slot's interval from the interval conjuncts of invariants naming it alone."""
        bounds: dict[str, Interval] = {}
        memory = self.info.decl.memory
        for inv in (memory.invariants if memory else []):
            guarded = self.guarded_slots(inv)
            if len(guarded) != 1:
                continue
            for part in self.shape(inv, guarded):
                if part.kind == "interval":
                    slot = guarded[0]
                    bounds[slot] = bounds.get(slot, UNBOUNDED).meet(part.interval)
        return bounds

    # ------------------------------------------------------------ write sites

    def _writes_in(self, name: str, node: ast.Node) -> list[Write]:
        def is_write(n: ast.Node) -> bool:
            if isinstance(n, ast.MethodCall):
                return isinstance(n.receiver, ast.Name) and n.receiver.id in self.slots and n.method in WRITE_METHODS
            return isinstance(n, ast.Assign) and _assigned_slot(n, self.slots) is not None

        in_lambda = {id(n) for lam in iter_tree(node.body) if isinstance(lam, ast.Lambda) for n in iter_tree(lam)}
        writes = []
        for site in find_sites(node.body, is_write):
            write = self._write_of(name, site, node)
            write.node = site.call
            write.repeated = id(site.call) in in_lambda or any(
                step == "(in for loop)" or step.startswith("while ") for step in site.path)
            writes.append(write)
        return writes

    def _write_of(self, name: str, site, node: ast.Node) -> Write:
        target = site.call
        if isinstance(target, ast.MethodCall):
            slot = target.receiver.id
            if target.method == "delete":
                value = None
            elif target.method == "set":
                value = target.args[1] if len(target.args) > 1 else None
            else:
                value = target.args[0] if target.args else None
            return Write(name, slot, value, site.conditions, site.in_try, node)
        slot = _assigned_slot(target, self.slots)
        value = target.value
        if target.op != "=" and isinstance(target.target, ast.Index):
            value = ast.Binary(target.op[0], target.target, target.value, span=target.span)
        field_write = isinstance(target.target, ast.Field) or isinstance(target.target.obj, (ast.Field, ast.Index))
        return Write(name, slot, value, site.conditions, site.in_try, node, field_write)

    # ------------------------------------------------------------ lines

    def judgements(self, inv: ast.Invariant) -> list[tuple[Write, object]]:
        """Every write to a slot `inv` guards, with the verdict on it: a CheckLine
        (PASS: this write can never break `inv`; FAIL: it always does) or
        (tag, reasons) for a write left to the runtime."""
        guarded = self.guarded_slots(inv)
        shape = self.shape(inv, guarded)
        return [(write, self._judge(write, shape)) for write in self.writes if write.slot in guarded]

    def lines_for(self, inv: ast.Invariant) -> list[CheckLine]:
        """The check lines of one invariant."""
        text = self.render(inv.expr)
        judged = self.judgements(inv)
        if not judged:
            return [CheckLine(PASS, f"invariant {text} — no handler writes to guarded slots", kind="invariant")]
        lines, open_tags, reasons = [], [], set()
        for write, outcome in judged:
            if isinstance(outcome, CheckLine):
                outcome.text = f"invariant {text} — {outcome.text}"
                if all(outcome.text != line.text for line in lines):
                    lines.append(outcome)
            else:
                tag, why = outcome
                if tag not in open_tags:
                    open_tags.append(tag)
                reasons |= why
        if open_tags:
            because = f" because {'; '.join(sorted(reasons))}" if reasons else ""
            lines.append(CheckLine(WARN, f"invariant {text} — runtime-checked (computed values): "
                                         f"{', '.join(open_tags)}{because}", kind="invariant"))
        return lines

    def _judge(self, write: Write, shape: list[Conjunct]):
        """A CheckLine for a decided write, or (tag, reasons) for an open one."""
        if write.value is None:
            return self._judge_delete(write, shape)
        expr_text = self.render(write.value)
        if write.field_write:
            return f"{write.handler} → {write.slot}", {"a field write is checked at run time"}
        value = self.evaluate(write.value, write, 0)
        wanted = UNBOUNDED
        for part in shape:
            if part.kind == "interval":
                wanted = wanted.meet(part.interval)
        length = _literal_length(write.value)
        too_long = length is not None and any(
            p.kind == "length" and Interval(length, length).disjoint(p.interval) for p in shape)
        if (value.interval.disjoint(wanted) and value.interval != UNBOUNDED) or too_long:
            if write.in_try:
                return CheckLine(PASS, f"writer '{write.handler}' can never commit {expr_text} to '{write.slot}': "
                                       "the write is always rejected (and the handler catches it)", kind="invariant")
            return CheckLine(FAIL, f"writer '{write.handler}' writes {expr_text} to '{write.slot}': statically "
                                   "violated", kind="invariant")
        open_parts, reasons = [], set()
        for part in shape:
            if part.kind == "interval":
                if not value.interval.within(part.interval):
                    open_parts.append(part)
            elif part.kind == "size":
                if not self._size_proven(write, part):
                    open_parts.append(part)
                    reasons.add(f"the slot may grow past {_size_limit(part)} entries — put `require "
                                f"len({write.slot}) < {_size_limit(part)}` before the handler's one write that "
                                "adds to it (not in a loop)")
            elif part.kind == "length":
                if length is None or not Interval(length, length).within(part.interval):
                    open_parts.append(part)
                    reasons.add(f"`{self.render(part.expr.left if part.slot_on_left else part.expr.right)}` is "
                                f"the length of the value written, known at run time (the slot's entry count is "
                                f"`{write.slot}.size`)")
            else:
                open_parts.append(part)
                reasons.add(f"`{self.render(part.expr)}` is checked at run time (it reads more than the written "
                            "value)")
        if not open_parts:
            how = "proven by induction" if value.induction else "proven"
            return CheckLine(PASS, f"writer '{write.handler}' {how} (writes {expr_text})", kind="invariant")
        interval_open = [p for p in open_parts if p.kind == "interval"]
        if interval_open:
            reasons |= self._interval_reasons(value, interval_open, expr_text)
        tag = f"{write.handler} → {write.slot}"
        if len(open_parts) < len(shape):
            tag += f" [{' && '.join(self.render(p.expr) for p in open_parts)}]"
        return tag, reasons

    def _interval_reasons(self, value: Value, parts: list[Conjunct], expr_text: str) -> set:
        reasons = set()
        narrowing = " && ".join(_replace_subject(p, expr_text) for p in parts)
        for kind, name in value.reasons:
            if kind == "param":
                reasons.add(f"`{name}` is a parameter (narrow it: `require {narrowing} else …`)")
            else:
                reasons.add(name)
        if not value.reasons:
            reasons.add(f"`{expr_text}` is only known to lie in {value.interval.text()} — narrow it: "
                        f"`require {narrowing} else …`")
        return reasons

    def _judge_delete(self, write: Write, shape: list[Conjunct]):
        """A delete: value conjuncts held when the entry was written; a size
        lower bound above 0 can break (the count drops by one)."""
        shrinking = [p for p in shape if p.kind == "size" and p.interval.lo is not None and p.interval.lo > 0]
        if not shrinking:
            what = "a value invariant" if not any(p.kind == "size" for p in shape) else "it"
            return CheckLine(PASS, f"writer '{write.handler}' only deletes from '{write.slot}' ({what} "
                                   "cannot break on a delete)", kind="invariant")
        tag = f"{write.handler} → {write.slot} [{' && '.join(self.render(p.expr) for p in shrinking)}]"
        return tag, {f"a delete from '{write.slot}' lowers its entry count"}

    def _size_proven(self, write: Write, part: Conjunct) -> bool:
        """`size op K` after this write: it adds at most one entry (the handler's one
        adding write, outside loops and lambdas, no called handler adding to the slot),
        so it holds when a fact before it bounds the count by one less."""
        lo, hi = part.interval.lo, part.interval.hi
        if lo is not None and lo > 1:
            return False
        if hi is None:
            return True
        if not self._only_adding_write(write):
            return False
        before = [bound for bound in (_count_bound(fact, write.slot, self.render) for fact in write.facts)
                  if bound is not None]
        return bool(before) and min(before) + 1 <= hi

    def _only_adding_write(self, write: Write) -> bool:
        """True when `write` is the one write adding to its slot that its body can run."""
        adding = [w for w in self.writes if w.handler == write.handler and w.slot == write.slot
                  and w.value is not None]
        if len({id(w.node) for w in adding}) != 1 or write.repeated:
            return False
        return not any(w.slot == write.slot and w.value is not None
                       for callee in self._callees(write.body) for w in self.writes if w.handler == callee)

    def _callees(self, body: ast.Node) -> set[str]:
        """The handlers of this cell `body` may run (called or emitted to), transitively."""
        own = {h.name: h for h in self.info.handlers}
        found: set[str] = set()
        pending = [body]
        while pending:
            node = pending.pop()
            for item in iter_tree(node):
                name = item.func if isinstance(item, ast.Call) and item.cell in (None, self.info.name) else \
                    item.name if isinstance(item, ast.Emit) else None
                if name in own and name not in found and own[name] is not body:
                    found.add(name)
                    pending.append(own[name])
        return found

    # ------------------------------------------------------------ evaluation

    def evaluate(self, expr: ast.Expr, write: Write, depth: int) -> Value:
        """The interval of `expr` at a write site (depth bounds handler-call chains)."""
        if depth > MAX_CALL_DEPTH:
            return Value(reasons={("text", f"`{self.render(expr)}` — call chain too deep to bound")})
        number = _number(expr)
        if number is not None:
            return Value(Interval(number, number))
        if isinstance(expr, ast.Name):
            return self._name(expr, write, depth)
        if isinstance(expr, ast.Unary) and expr.op == "-":
            inner = self.evaluate(expr.operand, write, depth)
            i = inner.interval
            return Value(Interval(_neg(i.hi), _neg(i.lo)), inner.induction, inner.reasons)
        if isinstance(expr, ast.Binary):
            return self._binary(expr, write, depth)
        if isinstance(expr, (ast.MethodCall, ast.Index)):
            return self._slot_read(expr)
        if isinstance(expr, ast.Call):
            return self._call(expr, write, depth)
        if isinstance(expr, ast.If):
            return self._join([self._block_value(expr.then, write, depth),
                               self._block_value(expr.orelse, write, depth)])
        if isinstance(expr, ast.Match):
            return self._join([self._block_value(arm.body, write, depth) for arm in expr.arms])
        return Value(reasons={("text", f"`{self.render(expr)}` — not bounded")})

    def _block_value(self, node, write: Write, depth: int) -> Value:
        if isinstance(node, ast.If):
            return self.evaluate(node, write, depth)
        if isinstance(node, ast.Block):
            last = node.stmts[-1] if node.stmts else None
            if isinstance(last, ast.ExprStmt):
                return self.evaluate(last.expr, write, depth)
            return Value(reasons={("text", "a branch without a value — not bounded")})
        if node is None:
            return Value(reasons={("text", "an `if` without `else` — not bounded")})
        return self.evaluate(node, write, depth)

    @staticmethod
    def _join(values: list[Value]) -> Value:
        result = values[0]
        for other in values[1:]:
            result = Value(result.interval.join(other.interval), result.induction or other.induction,
                           result.reasons | other.reasons)
        return result

    def _binary(self, expr: ast.Binary, write: Write, depth: int) -> Value:
        if expr.op == "??":
            return self._join([self.evaluate(expr.left, write, depth), self.evaluate(expr.right, write, depth)])
        if expr.op not in ("+", "-", "*", "/"):
            return Value(reasons={("text", f"`{self.render(expr)}` — not bounded")})
        left, right = self.evaluate(expr.left, write, depth), self.evaluate(expr.right, write, depth)
        a, b = left.interval, right.interval
        if expr.op == "+":
            interval = Interval(_add(a.lo, b.lo), _add(a.hi, b.hi))
        elif expr.op == "-":
            interval = Interval(_add(a.lo, _neg(b.hi)), _add(a.hi, _neg(b.lo)))
        elif expr.op == "*":
            interval = _multiply(a, b)
        else:
            interval = _divide(a, b)
        return Value(_clip(interval), left.induction or right.induction, left.reasons | right.reasons)

    def _name(self, expr: ast.Name, write: Write, depth: int) -> Value:
        facts = self._facts_about(expr.id, write)
        bindings = _bindings(write.body)
        params = {p.name: p for p in getattr(write.body, "params", [])}
        if expr.id in bindings:
            values, assigned = bindings[expr.id]
            if assigned or len(values) != 1:
                times = assigned + len(values)
                return Value(facts or UNBOUNDED, reasons={("text", f"`{expr.id}` is reassigned {times} times (a loop "
                                                                   "accumulator?) — bind it once, or read the slot")})
            bound = self.evaluate(values[0], write, depth + 1)
            reasons = {_local_reason(expr.id, values[0], r) for r in bound.reasons}
            return Value(bound.interval.meet(facts) if facts else bound.interval, bound.induction, reasons)
        if expr.id in params:
            if facts and facts.lo is not None and facts.hi is not None:
                return Value(facts)
            param_type = params[expr.id].type
            if param_type is not None and param_type.name in NUMERIC_TYPES:
                return Value(facts or UNBOUNDED, reasons={("param", expr.id)})
            return Value(facts or UNBOUNDED, reasons={("text", f"`{expr.id}` has no known range")})
        return Value(facts or UNBOUNDED, reasons={("text", f"`{expr.id}` has no known range")})

    def _facts_about(self, name: str, write: Write) -> Optional[Interval]:
        """The interval the dominating facts give a name (None when they say nothing)."""
        result = None
        for fact in write.facts:
            for part in conjuncts(fact):
                if not isinstance(part, ast.Binary) or part.op not in COMPARE:
                    continue
                for side, other, op in ((part.left, part.right, part.op), (part.right, part.left, FLIP[part.op])):
                    number = _number(other)
                    if isinstance(side, ast.Name) and side.id == name and number is not None:
                        bound = _bound_interval(op, number)
                        result = bound if result is None else result.meet(bound)
        return result

    def _slot_read(self, expr) -> Value:
        slot = _read_slot(expr, self.slots)
        if slot is None:
            return Value(reasons={("text", f"`{self.render(expr)}` — not bounded")})
        if slot in self.slot_bounds:
            return Value(self.slot_bounds[slot], induction=True)
        return Value(reasons={("slot", f"`{self.render(expr)}` reads a slot with no interval invariant")})

    def _call(self, call: ast.Call, write: Write, depth: int) -> Value:
        args = [self.evaluate(a, write, depth) for a in call.args]
        if call.cell is None and call.func in ("min", "max", "abs", "clamp"):
            return _math(call.func, args) or Value(reasons={("text", f"`{self.render(call)}` — not bounded")})
        handler = self.info.handler(call.func) if call.cell in (None, self.info.name) else None
        if handler is not None:
            return self._returns(handler, depth)
        return Value(reasons={("builtin", f"`{self.render(call)}` — a builtin the prover does not bound")})

    def _returns(self, handler: ast.Handler, depth: int) -> Value:
        """The join of a sibling handler's return values (its parameters unbounded)."""
        if handler.name in self.return_cache:
            return self.return_cache[handler.name]
        self.return_cache[handler.name] = Value(reasons={("text", f"`{handler.name}()` is recursive — not bounded")})
        probe = Write(handler.name, "", None, (), False, handler)
        values = [self.evaluate(n.value, probe, depth + 1) for n in iter_tree(handler.body)
                  if isinstance(n, ast.Return) and n.value is not None]
        last = handler.body.stmts[-1] if handler.body.stmts else None
        if isinstance(last, ast.ExprStmt):
            values.append(self.evaluate(last.expr, probe, depth + 1))
        result = self._join(values) if values else Value(reasons={("text", f"`{handler.name}()` returns no value")})
        self.return_cache[handler.name] = result
        return result


def _bindings(body_owner: ast.Node) -> dict[str, tuple[list[ast.Expr], int]]:
    """Per local name: the values it is `let`-bound to, and how many assignments it gets."""
    lets: dict[str, list[ast.Expr]] = {}
    assigned: dict[str, int] = {}
    for node in iter_tree(body_owner.body):
        if isinstance(node, ast.Let):
            lets.setdefault(node.name, []).append(node.value)
        elif isinstance(node, ast.Assign) and isinstance(node.target, ast.Name):
            assigned[node.target.id] = assigned.get(node.target.id, 0) + 1
        elif isinstance(node, ast.For):
            lets.setdefault(node.var, []).extend([node.iterable, node.iterable])
    return {name: (values, assigned.get(name, 0)) for name, values in lets.items()} | \
        {name: ([], count) for name, count in assigned.items() if name not in lets}


def _local_reason(name: str, value: ast.Expr, reason: tuple) -> tuple:
    """Re-word a reason found in a local's value so that it names the local."""
    kind, _ = reason
    if kind == "builtin" and isinstance(value, ast.Call):
        return "text", f"`{name}` = {value.func}() — a builtin the prover does not bound"
    if kind == "slot":
        return "text", f"`{name}` reads a slot with no interval invariant"
    return reason


def _assigned_slot(node: ast.Assign, slots: set) -> Optional[str]:
    """The slot an index/field assignment writes into (`s[k] = v`, `s[k].f = v`)."""
    target = node.target
    if not isinstance(target, (ast.Index, ast.Field)):
        return None
    while isinstance(target, (ast.Index, ast.Field)):
        target = target.obj
    return target.id if isinstance(target, ast.Name) and target.id in slots else None


def _read_slot(expr, slots: set) -> Optional[str]:
    """The slot read by `s.get(k)` or `s[k]`, else None."""
    if isinstance(expr, ast.MethodCall) and expr.method == "get" and isinstance(expr.receiver, ast.Name):
        return expr.receiver.id if expr.receiver.id in slots else None
    if isinstance(expr, ast.Index) and isinstance(expr.obj, ast.Name):
        return expr.obj.id if expr.obj.id in slots else None
    return None


def _size_limit(part: Conjunct) -> str:
    """K such that `require len(S) < K` before one add keeps `size op literal` true."""
    hi = part.interval.hi
    return _bound_text(hi, "∞") if hi is not None else part.literal


def _count_bound(fact: ast.Expr, slot: str, render) -> Optional[float]:
    """The largest entry count of `slot` a fact allows (`len(S) < 3` → 2), or None."""
    if not isinstance(fact, ast.Binary) or fact.op not in COMPARE:
        return None
    counts = {f"len({slot})", f"{slot}.size", f"{slot}.len", f"size({slot})"}
    for side, other, op in ((fact.left, fact.right, fact.op), (fact.right, fact.left, FLIP[fact.op])):
        number = _number(other)
        if number is not None and render(side) in counts and op in ("<", "<="):
            return _bound_interval(op, number).hi
    return None


def _literal_length(expr: Optional[ast.Expr]) -> Optional[int]:
    """The length of a written String or List literal (what `len(S)` reads), else None."""
    if isinstance(expr, ast.Literal) and isinstance(expr.value, str):
        return len(expr.value)
    if isinstance(expr, ast.ListLit):
        return len(expr.items)
    return None


def _replace_subject(part: Conjunct, expr_text: str) -> str:
    """An interval conjunct with the slot replaced by `(<expr>)`."""
    if part.slot_on_left:
        return f"({expr_text}) {part.op} {part.literal}"
    return f"{part.literal} {part.op} ({expr_text})"


def _number(expr) -> Optional[float]:
    if isinstance(expr, ast.Literal) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Unary) and expr.op == "-":
        inner = _number(expr.operand) if isinstance(expr.operand, ast.Literal) else None
        return -inner if inner is not None else None
    return None


def _bound_interval(op: str, number: float) -> Interval:
    """The values v with `v op number` (strict bounds on Ints tighten by one)."""
    whole = isinstance(number, int)
    if op == ">=":
        return Interval(number, None)
    if op == ">":
        return Interval(number + 1 if whole else number, None)
    if op == "<=":
        return Interval(None, number)
    return Interval(None, number - 1 if whole else number)


def _neg(value: Optional[float]) -> Optional[float]:
    return None if value is None else -value


def _add(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a + b


def _multiply(a: Interval, b: Interval) -> Interval:
    if None in (a.lo, a.hi, b.lo, b.hi):
        return UNBOUNDED
    products = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return Interval(min(products), max(products))


def _divide(a: Interval, b: Interval) -> Interval:
    """Exact division by a non-zero constant only."""
    if b.lo is None or b.lo != b.hi or b.lo == 0 or None in (a.lo, a.hi):
        return UNBOUNDED
    ends = [a.lo / b.lo, a.hi / b.lo]
    return Interval(min(ends), max(ends))


def _math(name: str, args: list[Value]) -> Optional[Value]:
    """Intervals of min/max/abs/clamp over argument intervals."""
    induction = any(a.induction for a in args)
    reasons = set().union(*(a.reasons for a in args)) if args else set()
    iv = [a.interval for a in args]
    if name == "abs" and len(iv) == 1:
        x = iv[0]
        if x.lo is not None and x.lo >= 0:
            return Value(x, induction, reasons)
        hi = None if x.lo is None or x.hi is None else max(abs(x.lo), abs(x.hi))
        return Value(Interval(0, hi), induction, reasons)
    if name == "clamp" and len(iv) == 3:
        kept = (args[1].reasons if iv[1].lo is None else set()) | (args[2].reasons if iv[2].hi is None else set())
        return Value(Interval(iv[1].lo, iv[2].hi), induction, kept)
    if name in ("min", "max") and len(iv) == 2:
        x, y = iv
        if name == "min":
            lo = None if x.lo is None or y.lo is None else min(x.lo, y.lo)
            hi = y.hi if x.hi is None else x.hi if y.hi is None else min(x.hi, y.hi)
        else:
            lo = y.lo if x.lo is None else x.lo if y.lo is None else max(x.lo, y.lo)
            hi = None if x.hi is None or y.hi is None else max(x.hi, y.hi)
        kept = reasons if (lo is None or hi is None) else set()
        return Value(Interval(lo, hi), induction, kept)
    return None
