"""Proven ⇒ never refused: what `soma verify` proves of an invariant, the runtime
never contradicts.

For each program below (our own, one per kind of invariant term: intervals,
induction, `value`, entry counts, the written value's length, deletes, a
write inside `try`), the prover's verdicts are taken per write site; then
hypothesis drives random sequences of handler calls with random arguments
through the runtime, and any invariant refusal raised AT a write the prover
proved for that invariant fails the test. Refusals elsewhere (runtime-checked
writes, `require` failures) are the program working as written.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soma_kernel.analysis.context import ProgramIndex
from soma_kernel.analysis.verify.invariants import Prover
from soma_kernel.analysis.verify.report import PASS, CheckLine
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse
from soma_kernel.syntax.render import render_expr

LEDGER = """
cell Ledger {
    memory {
        balances: Map<String, Int>
        hits: Map<String, Int>
        invariant balances >= 0 && balances <= 1000
        invariant hits >= 0
    }
    on deposit(who: String, amount: Int) {
        require amount >= 0 && amount <= 100 else BadAmount
        let now = balances.get(who) ?? 0
        balances.set(who, min(now + amount, 1000))
        return balances.get(who)
    }
    on withdraw(who: String, amount: Int) {
        let now = balances.get(who) ?? 0
        balances.set(who, clamp(now - amount, 0, 1000))
        return balances.get(who)
    }
    on overdraw(who: String, amount: Int) {
        balances.set(who, (balances.get(who) ?? 0) - amount)
        return balances.get(who)
    }
    on hit(who: String) {
        hits.set(who, (hits.get(who) ?? 0) + 1)
        return hits.get(who)
    }
    on zero(who: String) {
        balances.set(who, 0)
        hits.delete(who)
        return 0
    }
}
"""

SHELF = """
cell Shelf {
    memory {
        rows: List<Int>
        items: Map<String, String>
        invariant rows.size <= 3
        invariant items.size < 3
        invariant size >= 0
    }
    on add(x: Int) {
        require len(rows) < 3 else Full
        rows.push(x)
        return len(rows)
    }
    on add_loose(x: Int) {
        require len(rows) < 4 else Full
        rows.push(x)
        return len(rows)
    }
    on add_twice(x: Int) {
        require len(rows) < 2 else Full
        rows.push(x)
        rows.push(x)
        return len(rows)
    }
    on add_each(xs: List<Int>) {
        require len(rows) < 3 else Full
        for x in xs {
            rows.push(x)
        }
        return len(rows)
    }
    on put(k: String, v: String) {
        require len(items) < 2 else Full
        items.set(k, v)
        return len(items)
    }
    on put_strict(k: String, v: String) {
        require len(items) < 3 else Full
        items.set(k, v)
        return len(items)
    }
    on take(i: Int) {
        rows.delete(i)
        return len(rows)
    }
}
"""

LABELS = """
cell Labels {
    memory {
        codes: Map<String, String>
        notes: Map<String, String>
        invariant len(codes) == 2
        invariant len(notes) < 3
    }
    on code(k: String, wide: Bool) {
        if wide {
            codes.set(k, "ab")
        } else {
            codes.set(k, "cd")
        }
        return len(codes)
    }
    on bad_code(k: String) {
        let r = try { codes.set(k, "abc") }
        return r.error ?? "stored"
    }
    on note(k: String, text: String) {
        require len(notes) < 3 else Full
        notes.set(k, text)
        return len(notes)
    }
}
"""

SCORES = """
cell Scores {
    memory {
        scores: Map<String, Float>
        invariant value >= 0.0 && value <= 10.0
    }
    on rate(who: String, x: Float) {
        if x >= 0.0 && x <= 10.0 {
            scores.set(who, x)
        }
        return scores.get(who) ?? 0.0
    }
    on halve(who: String) {
        scores.set(who, (scores.get(who) ?? 0.0) / 2)
        return scores.get(who)
    }
    on capped(who: String, n: Int) {
        scores.set(who, clamp(n, 0, 10))
        return scores.get(who)
    }
    on raw(who: String, x: Float) {
        scores.set(who, x)
        return x
    }
}
"""

PROGRAMS = {"ledger": LEDGER, "shelf": SHELF, "labels": LABELS, "scores": SCORES}

KEYS = st.sampled_from(["a", "b", "c", "d"]) | st.text(alphabet="abxyz", max_size=6)
ARGUMENTS = {
    "Int": st.integers(min_value=-1500, max_value=1500) | st.sampled_from([0, 1, 100, 101, 1000, 1001, -1]),
    "Float": st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, 10.0, 10.5, -0.5]),
    "String": KEYS,
    "Bool": st.booleans(),
    "List": st.lists(st.integers(min_value=-5, max_value=5), max_size=4),
}


def proven_sites(program):
    """{(line, col) of a write: the invariant texts proven for that write}, per cell."""
    index = ProgramIndex(program)
    sites: dict[str, dict[tuple[int, int], set[str]]] = {}
    for info in index.cells.values():
        prover = Prover(info)
        per_site = sites.setdefault(info.name, {})
        for inv in info.decl.memory.invariants:
            text = render_expr(inv.expr)
            for write, outcome in prover.judgements(inv):
                if isinstance(outcome, CheckLine) and outcome.mark == PASS:
                    where = (write.node.span.line, write.node.span.col)
                    per_site.setdefault(where, set()).add(text)
    return sites


def handler_calls(program):
    """A strategy of one call: (cell, handler, arguments drawn by parameter type)."""
    options = []
    for decl in program.cells:
        for handler in decl.handlers:
            arguments = [ARGUMENTS[p.type.name] for p in handler.params]
            options.append(st.tuples(st.just(decl.name), st.just(handler.name), st.tuples(*arguments)))
    return st.one_of(options)


def refused_invariant(err: SomaError, texts: set[str]):
    """The invariant text of `texts` that refused this write, if any."""
    for text in texts:
        if err.detail.endswith(f"violates invariant {text}") or f"fails invariant {text}: " in err.detail:
            return text
    return None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_program_has_proven_writes_to_test(name):
    """The family is not vacuous: every program has proven writes, and the
    writes the runtime can refuse are not among them."""
    sites = proven_sites(parse(PROGRAMS[name], f"{name}.cell"))
    assert sum(len(texts) for cell in sites.values() for texts in cell.values()) >= 2


def _run_calls(name, calls):
    program = parse(PROGRAMS[name], f"{name}.cell")
    proven = proven_sites(program)
    runtime = Runtime(under_test=True, note=lambda text: None)
    runtime.load_program(program)
    for cell, handler, args in calls:
        try:
            runtime.call(handler, list(args), cell)
        except SomaError as err:
            if err.kind != "invariant":
                continue
            texts = proven[cell].get((err.span.line, err.span.col), set())
            broken = refused_invariant(err, texts)
            assert broken is None, (f"{cell}.{handler}{args}: verify proved `{broken}` for the write at "
                                    f"{err.span.line}:{err.span.col}, the runtime refused it: {err.text}")


def _family(name):
    program = parse(PROGRAMS[name], f"{name}.cell")

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(handler_calls(program), min_size=1, max_size=14))
    def check(calls):
        _run_calls(name, calls)

    return check


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_proven_invariants_are_never_refused_at_run_time(name):
    Runtime(note=lambda text: None)  # raises the recursion limit before hypothesis watches it
    _family(name)()


def test_the_issue_program_is_not_proven_and_the_runtime_agrees():
    """`invariant len(items) < 3` reads the written value's length: the prover must not
    call a write of a parameter proven, and the runtime refuses a 5-character value."""
    source = ("cell Box {\n    memory {\n        items: Map<String, String>\n        invariant len(items) < 3\n"
              "    }\n    on put(k: String, v: String) {\n        require len(items) < 3 else Full\n"
              "        items.set(k, v)\n        return len(items)\n    }\n}\n")
    program = parse(source, "box.cell")
    assert proven_sites(program) == {"Box": {}}
    runtime = Runtime(under_test=True, note=lambda text: None)
    runtime.load_program(program)
    assert runtime.call("put", ["a", "hi"], "Box") == 1
    with pytest.raises(SomaError) as err:
        runtime.call("put", ["b", "hello"], "Box")
    assert err.value.detail.startswith('items["b"] = ') and err.value.detail.endswith("violates invariant len(items) < 3")
