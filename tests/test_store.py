"""The slot store under real use: concurrent processes, killed processes, bad files, old files.

Concurrent writers are forked children calling `soma-kernel run`'s own entry
point (the parent imports the runtime once, so 80 processes start in
milliseconds), plus a few real `python -m soma_kernel run` processes; each
child has its own SQLite connection, exactly as separate commands do.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import soma_kernel.commands.run  # noqa: F401  (imported before forking: children start warm)
from soma_kernel.commands.cli import main
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.store import SlotStore, default_store_path, schema
from soma_kernel.runtime.store import database as store_database
from soma_kernel.syntax.parser import parse

BOOK = """
cell Book {
    memory {
        entries: Map<String, Int> [persistent]
        log: List<String> [persistent]
        totals: Map<String, Int> [persistent]
        scratch: Map<String, Int>
        invariant entries <= 100
    }
    state order {
        initial: open
        open -> paid
        paid -> shipped
    }
    on put(key: String, value: Int) { entries.set(key, value) }
    on drop(key: String) { entries.delete(key) }
    on bump() { totals.set("n", (totals.get("n") ?? 0) + 1) }
    on note(text: String) { log.push(text) }
    on forget(index: Int) { log.delete(index) }
    on rewrite(index: Int, text: String) { log[index] = text }
    on pay(id: Int) { transition(id, "paid") }
    on learn(k: String, v: Int) { remember(k, v) }
    on ticket() { return next_id() }
    on fill(n: Int) {
        for i in range(0, n) { entries.set("tmp{i}", 1) }
        let spin = 0
        for i in range(0, 1000000000) { spin += 1 }
        return spin
    }
}
"""


@pytest.fixture
def program(tmp_path):
    """BOOK written to a temporary folder; its store is `.soma_data/book.sqlite` there."""
    path = tmp_path / "book.cell"
    path.write_text(BOOK, encoding="utf-8")
    parse(BOOK)  # the parser is built before any fork
    return str(path)


def soma_run(argv: list[str]) -> int:
    """`soma-kernel run ARGV` in this process; its exit code."""
    return cli_main(["run", *argv])


def forked_run(*argv: str) -> int:
    """Start `soma-kernel run ARGV` in a forked child; its pid."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            with open(os.devnull, "w") as quiet:
                sys.stdout = quiet  # stderr stays: a failing child says why under pytest
                code = main(["run", *argv])
        finally:
            os._exit(code)
    return pid


def exit_codes(pids: list[int]) -> list[int]:
    """Wait for every child; their exit codes."""
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]


def cli(program: str, *argv: str, timeout_env: str | None = None) -> subprocess.Popen:
    """A real `python -m soma_kernel run PROGRAM ARGV` process."""
    env = dict(os.environ)
    if timeout_env is not None:
        env["SOMA_STORE_TIMEOUT"] = timeout_env
    return subprocess.Popen([sys.executable, "-m", "soma_kernel", "run", program, *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stored(program: str, space: str) -> dict:
    """{key: decoded value} of one space of the program's store, read straight from the file."""
    with sqlite3.connect(default_store_path(program)) as db:
        rows = db.execute("SELECT key, value FROM entries WHERE cell = 'Book' AND space = ?", (space,)).fetchall()
    return {key: json.loads(value) for key, value in rows}


def runtime_on(program: str) -> Runtime:
    """A runtime of BOOK bound to the program's store (a second process, in effect)."""
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(parse(BOOK))
    runtime.attach_store(SlotStore(default_store_path(program)))
    return runtime


def test_80_concurrent_runs_of_distinct_keys_keep_80_keys(program):
    pids = [forked_run(program, "put", f"k{i}", "1") for i in range(80)]
    assert exit_codes(pids) == [0] * 80
    assert stored(program, "map:entries") == {f"k{i}": 1 for i in range(80)}


def test_concurrent_increments_of_one_counter_sum_exactly(program):
    real = [cli(program, "bump") for _ in range(3)]
    pids = [forked_run(program, "bump") for _ in range(27)]
    assert exit_codes(pids) == [0] * 27
    assert [process.wait(60) for process in real] == [0, 0, 0]
    assert stored(program, "map:totals") == {"n": 30}


def test_next_id_and_instances_from_concurrent_processes_never_repeat(program):
    pids = [forked_run(program, "ticket") for _ in range(20)] + [forked_run(program, "pay", str(i)) for i in range(10)]
    assert exit_codes(pids) == [0] * 30
    assert stored(program, "next_id") == {"": 20}
    assert stored(program, "instance") == {i: ["paid", ["open", "paid"]] for i in range(10)}


def test_sigkill_in_the_middle_of_a_long_invocation_leaves_none_of_it(program):
    assert exit_codes([forked_run(program, "put", "kept", "7")]) == [0]
    before = stored(program, "map:entries")
    process = cli(program, "fill", "500")
    probe = sqlite3.connect(default_store_path(program), timeout=0, isolation_level=None)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the invocation holds the write lock
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            time.sleep(0.05)
        except sqlite3.OperationalError:
            break
    time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    probe.close()
    assert stored(program, "map:entries") == before == {"kept": 7}
    assert exit_codes([forked_run(program, "put", "after", "1")]) == [0]
    assert stored(program, "map:entries") == {"kept": 7, "after": 1}


def test_a_refused_invocation_leaves_the_file_unchanged(program, capsys):
    main(["run", program, "put", "a", "5"])
    before = dump(program)
    assert main(["run", program, "put", "a", "500"]) == 1
    assert "violates invariant entries <= 100" in capsys.readouterr().err
    assert dump(program) == before
    assert stored(program, "map:entries") == {"a": 5}


def dump(program: str) -> list[str]:
    """Every row of the program's store file (entries, change log, generation), as SQL."""
    with sqlite3.connect(default_store_path(program)) as db:
        return list(db.iterdump())


def test_two_live_runtimes_see_each_others_commits(program):
    first, second = runtime_on(program), runtime_on(program)
    first.call("put", ["a", 1])
    first.call("note", ["x"])
    first.call("note", ["y"])
    second.call("note", ["z"])
    second.call("forget", [0])
    first.call("rewrite", [0, "Y"])
    second.call("pay", [4])
    first.call("learn", ["pi", 3])
    assert second.call("ticket", []) == 1
    assert first.call("ticket", []) == 2
    second.call("drop", ["a"])
    third = runtime_on(program)
    for runtime in (first, second, third):
        runtime.call("bump", [])  # an invocation: each catches up first
        book = runtime.cells["Book"]
        assert book.slots["entries"].data == {}
        assert book.slots["log"].data == ["Y", "z"]
        assert book.machines.current == {4: "paid"}
        assert book.memory == {"pi": 3}
        assert book.counter == 2
    assert third.cells["Book"].slots["totals"].data == {"n": 3}


def test_a_process_behind_the_pruned_log_reloads_in_full(program, monkeypatch):
    monkeypatch.setattr(store_database, "KEPT_GENERATIONS", 2)
    behind, busy = runtime_on(program), runtime_on(program)
    for index in range(6):
        busy.call("put", [f"k{index}", index])
    busy.call("note", ["only"])
    behind.call("bump", [])
    assert behind.cells["Book"].slots["entries"].data == {f"k{i}": i for i in range(6)}
    assert behind.cells["Book"].slots["log"].data == ["only"]
    with sqlite3.connect(default_store_path(program)) as db:
        assert db.execute("SELECT min(generation) FROM changes").fetchone()[0] > 1


def test_non_persistent_slots_stay_out_of_the_file(program):
    runtime = runtime_on(program)
    runtime.cells["Book"].slots["scratch"].write("s", 1)
    runtime.call("put", ["a", 1])
    with sqlite3.connect(default_store_path(program)) as db:
        spaces = {row[0] for row in db.execute("SELECT DISTINCT space FROM entries")}
    assert spaces == {"map:entries"}


def test_fresh_wipes_the_stored_data_under_the_lock(program, capsys):
    main(["run", program, "put", "a", "5"])
    main(["run", program, "put", "b", "6", "--fresh"])
    assert stored(program, "map:entries") == {"b": 6}


# ---------------------------------------------------------------- bad and old files

def run_error(program: str, capsys) -> str:
    """The stderr of a `soma-kernel run … put k 1` expected to fail."""
    assert main(["run", program, "put", "k", "1"]) == 1
    return capsys.readouterr().err


def write_file(path: str, data: bytes) -> bytes:
    """Write `data` at `path` (creating the folder); returns it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
    return data


def read_bytes(path: str) -> bytes:
    """The file's bytes."""
    with open(path, "rb") as handle:
        return handle.read()


def test_a_corrupt_file_is_named_and_kept(program, capsys):
    path = default_store_path(program)
    garbage = write_file(path, b"this is not a database at all\n" * 200)
    err = run_error(program, capsys)
    assert err.startswith(f"error: {program}: store: slot store {path}: the file is damaged or not a SQLite database")
    assert "it was left as it is" in err
    assert read_bytes(path) == garbage


def test_a_foreign_database_is_named_and_untouched(program, capsys):
    path = default_store_path(program)
    os.makedirs(os.path.dirname(path))
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (name TEXT)")
        db.execute("INSERT INTO users VALUES ('ada')")
    before = read_bytes(path)
    err = run_error(program, capsys)
    assert f"slot store {path}: it is not a soma slot store (it holds the tables users); " \
           "the file was left untouched" in err
    assert read_bytes(path) == before


def test_a_newer_schema_is_refused(program, capsys):
    path = default_store_path(program)
    os.makedirs(os.path.dirname(path))
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
        db.execute("PRAGMA user_version = 9")
        db.execute("CREATE TABLE entries (x)")
    err = run_error(program, capsys)
    assert "it was written by a newer soma-kernel (store schema 9; this one reads up to 1)" in err


def test_a_locked_file_times_out_with_a_clear_error(program, capsys):
    main(["run", program, "put", "a", "1"])
    capsys.readouterr()
    holder = sqlite3.connect(default_store_path(program), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        process = cli(program, "put", "b", "2", timeout_env="0.3")
        out, err = process.communicate(timeout=60)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert process.returncode == 1 and out == ""
    assert f"slot store {default_store_path(program)}: locked by another process (waited 0.3 s; " \
           "set SOMA_STORE_TIMEOUT to wait longer); nothing was written" in err
    assert stored(program, "map:entries") == {"a": 1}


V0_TABLES = """
CREATE TABLE IF NOT EXISTS slots (cell TEXT, slot TEXT, data TEXT, PRIMARY KEY (cell, slot));
CREATE TABLE IF NOT EXISTS cells (cell TEXT PRIMARY KEY, counter INTEGER, machines TEXT, memory TEXT);
"""


def test_a_file_of_the_json_blob_format_is_migrated(program):
    """The layout persistence.py wrote before entries: a blob per slot, a row per cell."""
    path = default_store_path(program)
    os.makedirs(os.path.dirname(path))
    with sqlite3.connect(path) as db:
        db.executescript(V0_TABLES)
        db.execute("INSERT INTO slots VALUES ('Book', 'entries', ?)", (json.dumps({"a": 1, "b": 2}),))
        db.execute("INSERT INTO slots VALUES ('Book', 'log', ?)", (json.dumps(["x", "y"]),))
        machines = json.dumps({"current": [[3, "paid"], ["w", "shipped"]],
                               "history": [[3, ["open", "paid"]], ["w", ["open", "paid", "shipped"]]]})
        db.execute("INSERT INTO cells VALUES ('Book', 5, ?, ?)", (machines, json.dumps({"pi": 3})))
    runtime = runtime_on(program)
    book = runtime.cells["Book"]
    assert book.slots["entries"].data == {"a": 1, "b": 2}
    assert book.slots["log"].data == ["x", "y"]
    assert book.machines.current == {3: "paid", "w": "shipped"}
    assert book.machines.history == {3: ["open", "paid"], "w": ["open", "paid", "shipped"]}
    assert book.memory == {"pi": 3}
    assert runtime.call("ticket", []) == 6
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"entries", "changes", "meta", "declarations"}
