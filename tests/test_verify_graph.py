"""Graph and temporal-property tests on hand-built machine models."""

from soma_kernel.syntax.machines import build_model
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
    r = results(machine(*FLOW), '[verify]\nnever = ["paid", "ghost_free"]\n')
    assert r["never(state == 'paid')"].counter_example == ["new", "authorized", "paid"]
    assert not r["never(state == 'paid')"].passed
    assert "unknown state 'ghost_free'" in r["never(state == 'ghost_free')"].message


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
