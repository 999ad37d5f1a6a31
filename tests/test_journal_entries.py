"""The undo journal's Map entries and the invariants written out at a slot write."""

from __future__ import annotations

import gc

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.memory import MISSING, Journal
from soma_kernel.syntax.parser import parse


def test_map_entries_and_closures_roll_back_to_each_savepoint_newest_first():
    journal, data, log = Journal(), {"a": 1}, []
    journal.record_entry(data, "a", 1)
    data["a"] = 2
    mark = journal.savepoint()
    journal.record(lambda: log.append("closure undone"))
    journal.record_entry(data, "b", MISSING)
    data["b"] = 3
    journal.record_entry(data, "a", 2)
    data["a"] = 4
    journal.rollback(mark)
    assert (data, log) == ({"a": 2}, ["closure undone"])
    journal.rollback(0)
    assert data == {"a": 1} and journal.entries == []


def test_a_map_entry_leaves_no_object_for_the_cyclic_collector():
    journal, data = Journal(), {}
    keys = [f"k{i}" for i in range(1000)]
    gc.disable()
    try:
        before = len(gc.get_objects())
        for key in keys:
            journal.record_entry(data, key, MISSING)
        assert len(gc.get_objects()) - before < 10   # a tuple per entry made it 1000
    finally:
        gc.enable()


PROGRAM = """
cell Ledger {
    memory {
        totals: Map<String, Int>
        rates: Map<String, Float>
        names: Map<String, String>
        invariant totals >= 0 && totals <= 100
        invariant rates != 0.5 && value != 0.75
        invariant names != "root"
    }
    on put(k: String, v: Int) { totals.set(k, v) return v }
    on fill(n: Int) {
        for i in range(0, n) { put("k{i % 3}", i) }
        return totals.get("k0")
    }
    on rate(k: String, v: Float) { rates.set(k, v) return v }
    on name(k: String, v: String) { names.set(k, v) return v }
    on guarded(k: String, v: Int) {
        let r = try { totals.set(k, v) }
        return r.kind ?? "ok"
    }
}
"""


@pytest.fixture
def rt():
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(parse(PROGRAM, origin="ledger.cell"))
    return runtime


@pytest.mark.parametrize("handler, key, value, broken", [
    ("put", "a", -1, "totals >= 0 && totals <= 100"),
    ("put", "a", 101, "totals >= 0 && totals <= 100"),
    ("rate", "r", 0.5, "rates != 0.5 && value != 0.75"),
    ("rate", "r", 0.75, "rates != 0.5 && value != 0.75"),
    ("name", "n", "root", 'names != "root"'),
])
def test_a_written_out_invariant_refuses_as_the_slot_does(rt, handler, key, value, broken):
    with pytest.raises(SomaError) as err:
        rt.call(handler, [key, value])
    assert err.value.kind == "invariant" and broken in err.value.detail
    assert rt.cells["Ledger"].slots[{"put": "totals", "rate": "rates", "name": "names"}[handler]].data == {}


def test_written_out_invariants_accept_what_holds_and_a_loop_of_writes_rolls_back_whole(rt):
    assert rt.call("fill", [90]) == 87
    assert rt.call("rate", ["r", 0.25]) == 0.25
    with pytest.raises(SomaError):
        rt.call("fill", [200])          # the 101st round breaks the invariant: every write of the call goes
    assert rt.cells["Ledger"].slots["totals"].data == {"k0": 87, "k1": 88, "k2": 89}
    assert rt.call("guarded", ["z", 500]) == "invariant"
    assert "z" not in rt.cells["Ledger"].slots["totals"].data
