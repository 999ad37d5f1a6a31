"""Graph and temporal-property tests on hand-built machine models."""

from soma_kernel.syntax.machines import build_model
from soma_kernel.syntax.parser import parse
from soma_kernel.analysis.verify.checks import verify_program
from soma_kernel.analysis.verify.refinement import EdgeTakers, cell_bodies
from soma_kernel.analysis.verify.graph import (
    Graph, cyclic_states, find_lasso, reachable, shortest_path, strongly_connected,
)
from soma_kernel.analysis.verify.temporal import check_machine, user_properties
from soma_kernel.project.settings import parse_project_text
from soma_kernel.syntax import ast


def machine(initial, *edges):
    lines = []
    for edge in edges:
        src, dst = edge.split("->")
        src, dst = src.strip(), dst.strip()
        if " except " in dst:
            dst, excepts = dst.split(" except ")
            lines.append(ast.Edge(src, dst.strip(), excepts=excepts.split(",")))
        else:
            lines.append(ast.Edge(src, dst))
    return Graph(build_model("C", ast.StateMachine("m", initial, lines)))


def test_reachability_and_backward_liveness():
    g = machine("a", "a -> b", "b -> c", "d -> c")
    assert g.names(i for i, ok in enumerate(reachable(g, [g.initial])) if ok) == ["a", "b", "c"]
    back = reachable(g, [g.index["c"]], backward=True)
    assert all(back)


def test_shortest_path_is_bfs_shortest():
    g = machine("a", "a -> b", "b -> c", "c -> d", "a -> d")
    assert g.names(shortest_path(g, g.initial, g.mask(["d"]))) == ["a", "d"]


def test_scc_and_cycles():
    g = machine("a", "a -> b", "b -> c", "c -> b", "c -> d", "d -> d")
    comp = strongly_connected(g)
    assert comp[g.index["b"]] == comp[g.index["c"]] != comp[g.index["a"]]
    assert g.names(i for i, ok in enumerate(cyclic_states(g)) if ok) == ["b", "c", "d"]


def test_lasso_loops_back():
    g = machine("a", "a -> b", "b -> c", "c -> b", "c -> done")
    allowed = [s != "done" for s in g.states]
    lasso = find_lasso(g, g.initial, allowed)
    assert g.names(lasso.path) == ["a", "b", "c", "b"]
    assert lasso.loop_start == 1


def test_lasso_ending_in_terminal():
    g = machine("a", "a -> x", "a -> y")
    lasso = find_lasso(g, g.initial, [s != "y" for s in g.states])
    assert g.names(lasso.path) == ["a", "x"] and lasso.loop_start is None


def test_long_chain_has_no_recursion_limit():
    n = 50_000
    g = machine("s0", *[f"s{i} -> s{i + 1}" for i in range(n)])
    assert all(reachable(g, [g.initial]))
    assert len(shortest_path(g, g.initial, g.mask([f"s{n}"]))) == n + 1
    assert not any(cyclic_states(g))


def props(text):
    return user_properties(parse_project_text(text, "soma.toml").verify)


def results(g, text):
    return {r.property: r for r in check_machine(g, props(text))}


def test_property_count_rule_on_seed_shape():
    text = ('[verify]\neventually = ["paid", "rejected"]\n[verify.before.paid]\nrequires = ["authorized"]\n'
            '[verify.after.rejected]\nnever = ["paid", "authorized", "signed_off"]\n'
            '[verify.after.paid]\nnever = ["rejected"]\n')
    assert len(props(text)) == 6


FLOW = ("new", "new -> authorized", "authorized -> paid", "new -> rejected", "paid -> refunded",
        "refunded -> paid")


def test_never_gives_shortest_counter_example():
    r = results(machine(*FLOW), '[verify]\nnever = ["paid"]\n')
    assert r["never(state == 'paid')"].counter_example == ["new", "authorized", "paid"]
    assert not r["never(state == 'paid')"].passed


def test_eventually_lasso():
    r = results(machine(*FLOW), '[verify]\neventually = ["rejected"]\n')
    res = r["eventually(state in [rejected])"]
    assert not res.passed
    assert res.counter_example == ["new", "authorized", "paid", "refunded", "paid"]
    assert res.loop_start == 2


def test_eventually_passes():
    g = machine("a", "a -> b", "a -> c", "b -> d", "c -> d")
    assert results(g, '[verify]\neventually = ["d"]\n')["eventually(state in [d])"].passed


def test_always():
    r = results(machine(*FLOW), '[verify]\nalways = ["new", "authorized", "paid", "refunded"]\n')
    res = next(iter(v for k, v in r.items() if k.startswith("always")))
    assert not res.passed and res.counter_example == ["new", "rejected"]


def test_after_never_and_eventually():
    r = results(machine(*FLOW), '[verify.after.paid]\nnever = ["rejected", "refunded"]\neventually = ["rejected"]\n')
    assert r["after('paid', never state == 'rejected')"].passed
    bad = r["after('paid', never state == 'refunded')"]
    assert bad.counter_example == ["new", "authorized", "paid", "refunded"]
    ev = r["after('paid', eventually state in [rejected])"]
    assert not ev.passed and ev.loop_start is not None


def test_after_unreachable_is_vacuous():
    g = machine("a", "a -> b", "c -> b")
    r = results(g, '[verify.after.c]\nnever = ["b"]\n')
    assert "vacuously true" in r["after('c', never state == 'b')"].message


def test_before_requires_and_requires_all():
    g = machine(*FLOW)
    r = results(g, '[verify.before.paid]\nrequires = ["authorized"]\n')
    assert r["before('paid', requires one of [authorized])"].passed
    g2 = machine("new", "new -> authorized", "authorized -> paid", "new -> signed", "signed -> paid")
    r2 = results(g2, '[verify.before.paid]\nrequires = ["authorized"]\nrequires_all = ["authorized", "signed"]\n')
    assert r2["before('paid', requires one of [authorized])"].counter_example == ["new", "signed", "paid"]
    assert not r2["before('paid', requires all of [authorized, signed])"].passed


def test_deadlock_free_always_first():
    out = check_machine(machine("a", "a -> b"), [])
    assert out[0].property == "deadlock_free" and out[0].passed


def test_repeated_lines_and_self_loops_in_the_model():
    g = machine("a", "a -> b", "a -> b", "b -> b", "b -> c", "c -> c")
    model = g.model
    assert len(model.edges) == 5 and model.successors == {"a": ["b"], "b": ["b", "c"], "c": ["c"]}
    assert model.edge("a", "b") is model.edges[0]
    assert model.terminal_states == ["c"]
    assert model.has_state("b") and not model.has_state("*") and not model.has_state("zz")
    assert model.entering("b") == model.edges[:3] and model.entering("a") == [] and model.entering("zz") == []
    assert g.succ == [[1], [1, 2], [2]] and g.pred == [[], [0, 1], [1, 2]]


def test_a_state_named_like_a_keyword_is_kept_in_order():
    g = machine("start", "b -> a", "* -> start except [a]", "a -> c")
    assert g.states == ["start", "b", "a", "c"]


DESK = """cell Desk {
    face {
        signal go(id: String) -> String
    }
    state ticket {
        initial: a
        a -> b
        a -> b
        b -> c
        * -> a except [c]
        * -> z except [a, b, c]
        c -> c
    }
    on go(id: String) {
        transition(id, "b", "a")
        transition(id, "c")
        return "ok"
    }
}
"""


def test_dead_lines_are_judged_per_declared_line():
    report = verify_program(parse(DESK, origin="desk.cell"), None, "desk.cell")
    dead = [line.text for line in report.machines[0].lines if "never reached" in line.text]
    # both `a -> b` lines are dead; `* -> a` is taken (b → a), `* -> z` expands to no edge, `c -> c` is taken
    assert dead == ["refinement: declared transition `a → b` is never reached by any handler — spec may be "
                    "aspirational or stale"] * 2


def test_edge_takers_are_asked_per_edge():
    cell = parse(DESK, origin="desk.cell").cells[0]
    takers = EdgeTakers(build_model("Desk", cell.machine), cell_bodies(cell.handlers, cell.scheduled),
                        with_dynamic=True)
    assert takers.get(("b", "a")) == ["go"] and takers.get(("b", "c")) == ["go"]
    assert takers.get(("a", "b")) == [] and takers.get(("a", "z")) == []
