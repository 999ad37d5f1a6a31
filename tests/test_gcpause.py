"""The cyclic collector is paused around whole-program passes and comes back as it was."""

from __future__ import annotations

import argparse
import gc

import pytest

from soma_kernel.commands import check, verify
from soma_kernel.core.gcpause import paused_gc

CHAIN = """cell Big {
    face {
        signal step(id: String) -> String
    }
    state big {
        initial: s0
        s0 -> s1
        s1 -> s2
    }
    on step(id: String) {
        transition(id, "s1")
        return "ok"
    }
}
"""


def test_pauses_nest_and_restore_the_collector():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.parametrize("command", [check, verify])
def test_a_command_leaves_the_collector_as_it_found_it_and_no_cycles_behind(command, tmp_path, capsys):
    path = tmp_path / "big.cell"
    path.write_text(CHAIN, encoding="utf-8")
    args = argparse.Namespace(file=str(path), strict=False, unfair=False, json=False)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage to be looked at
    try:
        assert command.run(args) == 0
        assert gc.isenabled()
        gc.collect()
        ours = [o for o in gc.garbage if type(o).__module__.startswith("soma_kernel")]
        assert ours == []  # the program and its report were freed by reference counting
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    gc.disable()
    try:
        assert command.run(args) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    out = capsys.readouterr().out
    assert out.count("✓ All checks passed.") == 2 if command is check else out.count("VERIFY OK") == 2
