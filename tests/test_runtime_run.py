"""`soma-kernel run` and [persistent] slots kept in SQLite between runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from soma_kernel.commands.cli import main
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.store import SlotStore, default_store_path
from soma_kernel.syntax.parser import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """
cell type Level {
    variants {
        Low
        High { by: Int }
    }
}

cell Tally {
    memory {
        counts: Map<String, Int> [persistent]
        levels: Map<String, Level> [persistent]
        scratch: Map<String, Int>
        invariant counts <= 100
    }
    state job {
        initial: queued
        queued -> done
    }
    on bump(name: String, by: Int) {
        counts.set(name, (counts.get(name) ?? 0) + by)
        scratch.set(name, (scratch.get(name) ?? 0) + 1)
        return map("count", counts.get(name), "scratch", scratch.get(name), "id", next_id())
    }
    on level(name: String, by: Int) {
        levels.set(name, if by > 5 { High { by: by } } else { Low })
        return levels.get(name)
    }
    on finish(id: Int) { transition(id, "done") }
    on status(id: Int) { get_status(id) }
    on total(xs: List<Int>, opts: Map) { return sum(xs) + (opts.extra ?? 0) }
    on flag(yes: Bool, ratio: Float) { return [yes, ratio] }
    on nothing() { return () }
    on learn(k: String, v: Int) { remember(k, v) }
    on known(k: String) { return recall(k) ?? "unknown" }
    on gate(what: String) { return approve(what) }
}
"""


@pytest.fixture
def program(tmp_path):
    """The program written to a temporary folder."""
    path = tmp_path / "tally.cell"
    path.write_text(PROGRAM, encoding="utf-8")
    return str(path)


def run(capsys, *argv) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one `soma-kernel run`."""
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_persistent_slots_survive_between_runs(program, capsys):
    assert run(capsys, program, "bump", "a", "5") == (0, '{"count":5,"scratch":1,"id":1}\n', "")
    assert run(capsys, program, "bump", "a", "5") == (0, '{"count":10,"scratch":1,"id":2}\n', "")


def test_refused_write_is_not_persisted(program, capsys):
    run(capsys, program, "bump", "a", "90")
    code, out, err = run(capsys, program, "bump", "a", "20")
    assert code == 1 and out == ""
    assert "invariant: counts[\"a\"] = 110 violates invariant counts <= 100" in err
    assert run(capsys, program, "bump", "a", "1")[1] == '{"count":91,"scratch":1,"id":2}\n'


def test_variants_and_machine_instances_persist(program, capsys):
    assert run(capsys, program, "level", "x", "9")[1] == '{"_type":"Level","_variant":"High","by":9}\n'
    assert run(capsys, program, "finish", "7")[1] == '{"id":7,"from":"queued","to":"done"}\n'
    assert run(capsys, program, "status", "7")[1] == '"done"\n'
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(parse(PROGRAM))
    runtime.attach_store(SlotStore(default_store_path(program)))
    assert runtime.cells["Tally"].slots["levels"].data["x"].name == "High"


def test_remembered_values_persist(program, capsys):
    assert run(capsys, program, "learn", "pi", "3") == (0, "", "")
    assert run(capsys, program, "known", "pi")[1] == "3\n"
    assert run(capsys, program, "known", "e")[1] == '"unknown"\n'


def test_fresh_starts_over(program, capsys):
    run(capsys, program, "bump", "a", "5")
    assert run(capsys, program, "bump", "a", "1", "--fresh")[1] == '{"count":1,"scratch":1,"id":1}\n'


def test_arguments_parse_by_declared_type(program, capsys):
    assert run(capsys, program, "total", "[1, 2, 3]")[1] == "6\n"
    assert run(capsys, program, "total", "[1]", '{"extra": 4}')[1] == "5\n"
    assert run(capsys, program, "flag", "true", "2")[1] == "[true,2.0]\n"
    code, out, err = run(capsys, program, "bump", "a", "five")
    assert code == 1 and "argument by: 'five' is not an Int" in err


def test_unit_prints_nothing(program, capsys):
    assert run(capsys, program, "nothing") == (0, "", "")


def test_an_unknown_handler_says_it_does_not_exist_with_related_names_only(program, capsys):
    assert run(capsys, program, "nothin") == (1, "", f"error: {program}: there is no handler 'nothin'\n"
                                                     "  hint: did you mean `nothing`?\n")
    assert run(capsys, program, "Tally.bunp", "a", "1") == (
        1, "", f"error: {program}: cell 'Tally' has no handler 'bunp'\n  hint: did you mean `Tally.bump`?\n")
    assert run(capsys, program, "Taly.bump", "a", "1") == (
        1, "", f"error: {program}: there is no cell 'Taly'\n  hint: did you mean `Tally`?\n")
    # nothing close: the handlers are listed as such, never offered as candidates because they take 0 arguments
    code, out, err = run(capsys, program, "zzz")
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {program}: there is no handler 'zzz'\n  hint: the program's handlers: "
                          "Tally.bump(name: String, by: Int), Tally.level(name: String, by: Int), ")
    assert "candidate" not in err and "type:" not in err


def test_a_wrong_number_of_arguments_shows_the_signature_and_the_command(program, capsys):
    for argv, given in ((["bump", "a"], "1 argument"), (["bump"], "0 arguments"), (["Tally.bump", "a", "1", "2"],
                                                                                    "3 arguments")):
        name = argv[0]
        assert run(capsys, program, *argv) == (1, "", (
            f"error: {program}: '{name}' takes other arguments than the {given} given: "
            "Tally.bump(name: String, by: Int)\n"
            f"  hint: call it as `soma-kernel run {program} Tally.bump NAME BY`\n"))


def test_store_file_lives_beside_the_program(program, capsys):
    run(capsys, program, "bump", "b", "1")
    store = default_store_path(program)
    assert store.endswith("/.soma_data/tally.sqlite")
    rows = SlotStore(store).database.db.execute("SELECT cell, space, key, value FROM entries").fetchall()
    assert ("Tally", "map:counts", "b", "1") in rows
    assert all(space != "map:scratch" for _, space, _, _ in rows)


def test_approve_asks_the_person_at_the_terminal(program, capsys, monkeypatch):
    monkeypatch.delenv("SOMA_APPROVE", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "y" if "ship it" in prompt else "n")
    assert run(capsys, program, "gate", "ship it")[1] == "true\n"
    assert run(capsys, program, "gate", "drop it")[1] == "false\n"


def test_approve_without_a_terminal_fails_closed(program, capsys, monkeypatch):
    monkeypatch.delenv("SOMA_APPROVE", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, _, err = run(capsys, program, "gate", "ship it")
    assert code == 1 and "approval_required" in err


def test_default_handler_is_main_or_run(tmp_path, capsys):
    path = tmp_path / "app.cell"
    path.write_text("cell App { on run() { return 1 } on other() { return 2 } }", encoding="utf-8")
    assert run(capsys, str(path))[1] == "1\n"


def test_run_refuses_a_value_the_face_does_not_promise(tmp_path, capsys):
    program = tmp_path / "face.cell"
    program.write_text("cell R {\n    face {\n        signal pick(xs: List) -> List<Int>\n    }\n"
                       "    on pick(xs: List) { return xs }\n}\n", encoding="utf-8")
    code, _out, err = run(capsys, str(program), "pick", '[1, "a"]')
    assert code == 1
    assert "R.pick() returned List (element 1: expected Int, got String), but its face declares -> List<Int>" in err


PIPED = """cell Noisy {
    on many() {
        for i in range(0, 20000) { print("line {i}") }
        return 1
    }
    on big() {
        return range(0, 300000)
    }
}
"""


@pytest.mark.parametrize("handler,first", [("many", b"line 0\n"), ("big", b"[0,")])
def test_reader_closing_the_pipe_early_stops_the_run_quietly(tmp_path, handler, first):
    (tmp_path / "noisy.cell").write_text(PIPED, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    process = subprocess.Popen([sys.executable, "-m", "soma_kernel", "run", "noisy.cell", handler], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    head = process.stdout.read(len(first))
    process.stdout.close()  # the reader goes away, as `| head -1` does
    errors = process.stderr.read()
    assert process.wait(timeout=120) == 141
    assert head == first
    assert errors == b""



def test_approve_without_a_terminal_says_how_to_answer_under_run(program, capsys, monkeypatch):
    monkeypatch.delenv("SOMA_APPROVE", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, out, err = run(capsys, program, "gate", "ship it")
    assert (code, out) == (1, "")
    assert err == (f"error: {program}:36:36: approval_required: approve(\"ship it\") has no one to answer it — "
                   "set SOMA_APPROVE=always|never, or run it at a terminal to answer y/N\n")


def test_no_handler_named_and_no_default_lists_every_handler(tmp_path, capsys):
    path = tmp_path / "two.cell"
    path.write_text("cell Two {\n    on add(a: Int, b: Int) { return a + b }\n    on neg(a: Int) { return 0 - a }\n}\n",
                    encoding="utf-8")
    code, out, err = run(capsys, str(path))
    assert (code, out) == (1, "")
    assert err == (f"error: {path}: no handler named, and there is no `main` or `run` handler to call by default\n"
                   f"  hint: name one: `soma-kernel run {path} HANDLER [ARGS…]`; "
                   "the program's handlers: Two.add(a: Int, b: Int), Two.neg(a: Int)\n")


def test_a_handler_or_default_of_several_cells_asks_to_name_one(tmp_path, capsys):
    path = tmp_path / "pair.cell"
    path.write_text("cell A {\n    on main() { return 1 }\n    on ping(x: Int) { return x }\n}\n"
                    "cell B {\n    on main() { return 2 }\n    on ping(y: Int) { return y }\n}\n", encoding="utf-8")
    assert run(capsys, str(path)) == (1, "", f"error: {path}: several cells have a `main` handler\n"
                                              f"  hint: name one: `soma-kernel run {path} A.main` or "
                                              f"`soma-kernel run {path} B.main`\n")
    assert run(capsys, str(path), "ping", "3") == (1, "", f"error: {path}: 'ping' is a handler of several cells\n"
                                                          f"  hint: name one: `soma-kernel run {path} A.ping X` or "
                                                          f"`soma-kernel run {path} B.ping Y`\n")
    assert run(capsys, str(path), "B.ping", "3")[1] == "3\n"
    empty = tmp_path / "empty.cell"
    empty.write_text("cell E {\n    memory {\n        n: Int\n    }\n}\n", encoding="utf-8")
    assert run(capsys, str(empty)) == (1, "", f"error: {empty}: the program defines no handler to run\n")


GUARDED = """cell Door {
    memory {
        keys: Map<String, Bool>
        opened: Map<String, Int> [persistent]
    }
    state door {
        initial: shut
        shut -> ajar
        ajar -> open { guard { keys.get("k") ?? false } }
    }
    on prepare(id: Int) {
        keys.set("k", true)
        transition(id, "ajar")
    }
    on open_it(id: Int) { transition(id, "open") }
}
"""


def test_a_failed_guard_after_instances_came_back_says_the_slots_started_empty(tmp_path, capsys):
    path = tmp_path / "door.cell"
    path.write_text(GUARDED, encoding="utf-8")
    program = str(path)
    assert run(capsys, program, "open_it", "1")[2] == (
        f"error: {program}:15:27: invalid transition: shut → open. Valid targets: [ajar]\n")
    assert run(capsys, program, "prepare", "1")[0] == 0
    code, out, err = run(capsys, program, "open_it", "1")
    assert (code, out) == (1, "")
    assert err == (
        f"error: {program}:15:27: guard failed: ajar → open requires keys.get(\"k\") ?? false\n"
        "  hint: Door's machine instances persist between runs, but these slots start empty on every run "
        "(they are not [persistent]): keys; mark what the guard reads [persistent], or start over with --fresh\n")


def test_flesh_handlers_of_a_skeleton_are_found_and_shown_with_their_signal_types(tmp_path, capsys):
    seed = os.path.join(ROOT, "tests", "seeds", "triage_agent", "triage_agent.cell")
    path = tmp_path / "triage.cell"
    path.write_text(open(seed, encoding="utf-8").read(), encoding="utf-8")
    assert run(capsys, str(path), "stats") == (0, "0\n", "")
    assert run(capsys, str(path), "stat") == (1, "", f"error: {path}: there is no handler 'stat'\n"
                                                     "  hint: did you mean `stats`?\n")
    assert run(capsys, str(path), "label", "t1") == (
        1, "", f"error: {path}: 'label' takes other arguments than the 1 argument given: "
               "Triage.label(id: String, text: String)\n"
               f"  hint: call it as `soma-kernel run {path} Triage.label ID TEXT`\n")
