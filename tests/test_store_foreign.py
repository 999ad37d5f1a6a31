"""A store file from elsewhere is data, checked before it is served (runtime/store/checks.py,
declarations.py, database.py): rows that break their slot's declaration are refused with an
error naming the file, the slot and the key; a refused open leaves the file byte for byte as
it was; a notebook cell cannot write past the invariant the program declared; a read-only
file can be read; a closed store leaves no -wal or -shm file beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.store import SlotStore, default_store_path
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse

PAY = """
cell type Pay {
    variants {
        Card { last4: String }
        Cash
    }
}
"""

COUNTER = PAY + """
cell Counter {
    memory {
        counts: Map<String, Int> [persistent]
        names: List<String> [persistent]
        pays: Map<String, Pay> [persistent]
        invariant counts >= 0
        invariant names.size <= 20
    }
    state ticket {
        initial: open
        open -> closed
    }
    on add(key: String, n: Int) { counts.set(key, (counts.get(key) ?? 0) + n) }
    on name(text: String) { names.push(text) }
    on get(key: String) { return counts.get(key) ?? 0 }
    on close(id: Int) { transition(id, "closed") }
    on ticket() { return next_id() }
}
"""


@pytest.fixture
def program(tmp_path):
    """COUNTER in a folder, with a store holding counts a=1, names ["x"], an instance and next_id 1."""
    path = tmp_path / "counter.cell"
    path.write_text(COUNTER, encoding="utf-8")
    runtime = bound(str(path))
    runtime.call("add", ["a", 1])
    runtime.call("name", ["x"])
    runtime.call("close", [7])
    runtime.call("ticket", [])
    runtime.detach_store()
    return str(path)


def bound(program: str) -> Runtime:
    """A runtime of COUNTER bound to the program's store."""
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(parse(COUNTER))
    store = SlotStore(default_store_path(program))
    store.origin_of = lambda cell: "counter.cell"  # as `soma-kernel run counter.cell` binds it
    runtime.attach_store(store)
    return runtime


def tamper(program: str, sql: str, *params) -> bytes:
    """Run sql on the program's store behind the runtime's back; the file's bytes after."""
    path = default_store_path(program)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(sql, params)
    db.execute("PRAGMA journal_mode = DELETE")  # everything in the file itself
    db.close()
    with open(path, "rb") as handle:
        return handle.read()


def file_bytes(program: str) -> bytes:
    """The store file's bytes."""
    with open(default_store_path(program), "rb") as handle:
        return handle.read()


def leftovers(path: str) -> list[str]:
    """The -wal / -shm / -journal files beside a store."""
    return sorted(name for name in os.listdir(os.path.dirname(path))
                  if name.startswith(os.path.basename(path) + "-"))


# ---------------------------------------------------------------- rows that break their declaration

BAD_ROWS = {
    # (SQL, what the error names, why)
    "a String in Map<String, Int>": (
        "UPDATE entries SET value = '\"lots\"' WHERE space = 'map:counts' AND key = 'a'",
        'Counter.counts["a"]', "Int"),
    "-999 under counts >= 0": (
        "UPDATE entries SET value = '-999' WHERE space = 'map:counts' AND key = 'a'",
        'Counter.counts["a"]', "invariant counts >= 0"),
    "a Float in Map<String, Int>": (
        "INSERT INTO entries VALUES ('Counter', 'map:counts', 'b', '2.5')", 'Counter.counts["b"]', "Int"),
    "a row that is not JSON": (
        "UPDATE entries SET value = '{oops' WHERE space = 'map:counts' AND key = 'a'",
        'Counter.counts["a"]', "JSON"),
    "two rows that make JSON only together": (
        "UPDATE entries SET value = '1,2' WHERE space = 'map:counts' AND key = 'a'",
        'Counter.counts["a"]', "JSON"),
    "an Int in List<String>": (
        "UPDATE entries SET value = '5' WHERE space = 'list:names' AND key = 0", "Counter.names[0]", "String"),
    "a list with a gap": (
        "INSERT INTO entries VALUES ('Counter', 'list:names', 3, '\"y\"')", "Counter.names", "positions"),
    "a list past its invariant": (
        "INSERT INTO entries SELECT 'Counter', 'list:names', value, '\"n\"' FROM json_each(?)",
        "Counter.names", "invariant names.size <= 20"),
    "a variant of no type": (
        "INSERT INTO entries VALUES ('Counter', 'map:pays', 'p', '{\"_type\":\"Pay\",\"_variant\":\"Cheque\"}')",
        'Counter.pays["p"]', "Pay"),
    "a number as a map key": (
        "INSERT INTO entries VALUES ('Counter', 'map:counts', 5, '1')", "Counter.counts[5]", "text"),
    "an instance that is not [state, history]": (
        "UPDATE entries SET value = '\"closed\"' WHERE space = 'instance'", "Counter.instance[7]", "[state"),
    "a next_id that is not a number": (
        "UPDATE entries SET value = 'many' WHERE space = 'next_id'", 'Counter.next_id[""]', "whole number"),
    "a next_id that is text": (
        "UPDATE entries SET value = '\"7\"' WHERE space = 'next_id'", 'Counter.next_id[""]', "whole number"),
    "a negative next_id": (
        "UPDATE entries SET value = '-3' WHERE space = 'next_id'", 'Counter.next_id[""]', "not negative"),
    "a blob value": (
        "UPDATE entries SET value = x'00ff' WHERE space = 'map:counts' AND key = 'a'",
        'Counter.counts["a"]', "not JSON text"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_a_row_that_breaks_its_declaration_is_refused_naming_file_slot_and_key(program, case):
    sql, where, why = BAD_ROWS[case]
    params = (json.dumps(list(range(1, 25))),) if "?" in sql else ()
    before = tamper(program, sql, *params)
    with pytest.raises(SomaError) as refused:
        bound(program)
    text = refused.value.text
    assert text.startswith(f"store: slot store {default_store_path(program)}: the row {where}"), text
    assert why in text and "is refused" in text and "%reset --store Counter" in text
    assert file_bytes(program) == before


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_a_bad_row_written_by_another_process_is_never_served(program, case):
    runtime = bound(program)
    sql, where, why = BAD_ROWS[case]
    params = (json.dumps(list(range(1, 25))),) if "?" in sql else ()
    db = sqlite3.connect(default_store_path(program), isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.execute(sql, params)
    db.execute("UPDATE meta SET value = value + 1 WHERE name = 'generation'")
    db.execute("INSERT INTO changes SELECT (SELECT value FROM meta WHERE name = 'generation'), cell, space, key "
               "FROM entries")
    db.execute("COMMIT")
    db.close()
    with pytest.raises(SomaError) as refused:
        runtime.call("get", ["a"])
    assert refused.value.kind == "store" and "is refused" in refused.value.text
    assert runtime.cells["Counter"].slots["counts"].data == {"a": 1}
    assert runtime.cells["Counter"].slots["names"].data == ["x"]


@pytest.mark.parametrize("limit,size", [("1000", 5000), ("1K", 1025), ("2K", 1 << 20)])
def test_an_oversized_value_is_refused_without_being_served(program, monkeypatch, limit, size):
    monkeypatch.setenv("SOMA_MAX_FILE_BYTES", limit)
    tamper(program, "UPDATE entries SET value = ? WHERE space = 'list:names'", json.dumps("y" * size))
    with pytest.raises(SomaError) as refused:
        bound(program)
    allowed = 1000 if limit == "1000" else int(limit[:-1]) * 1024
    assert (f"the row Counter.names[0] is refused (its value is longer than {allowed} characters, the most a "
            "stored value holds (set SOMA_MAX_FILE_BYTES to change it))") in refused.value.text
    monkeypatch.setenv("SOMA_MAX_FILE_BYTES", str(size + 10))
    assert bound(program).cells["Counter"].slots["names"].data == ["y" * size]


def test_a_good_file_still_loads_whole(program):
    runtime = bound(program)
    state = runtime.cells["Counter"]
    assert state.slots["counts"].data == {"a": 1} and state.slots["names"].data == ["x"]
    assert state.machines.current == {7: "closed"} and runtime.call("ticket", []) == 2


# ---------------------------------------------------------------- a refused open changes nothing

V0 = """
CREATE TABLE slots (cell TEXT, slot TEXT, data TEXT, PRIMARY KEY (cell, slot));
CREATE TABLE cells (cell TEXT PRIMARY KEY, counter INTEGER, machines TEXT, memory TEXT);
"""


@pytest.mark.parametrize("blob", ["not json at all", '{"a": 1', "[1, 2", "42", "null"])
def test_an_old_format_blob_that_is_not_json_is_refused_and_the_file_kept(tmp_path, blob):
    path = tmp_path / "counter.cell"
    path.write_text(COUNTER, encoding="utf-8")
    store = default_store_path(str(path))
    os.makedirs(os.path.dirname(store))
    with sqlite3.connect(store) as db:
        db.executescript(V0)
        db.execute("INSERT INTO slots VALUES ('Counter', 'counts', ?)", (blob,))
    before = file_bytes(str(path))
    with pytest.raises(SomaError) as refused:
        bound(str(path))
    assert f"slot store {store}: the older-format blob of Counter.counts is not a JSON list or object" \
           in refused.value.text
    assert "the file was left untouched" in refused.value.text
    assert file_bytes(str(path)) == before and leftovers(store) == []


@pytest.mark.parametrize("case", ["a refused row", "a foreign database", "a newer schema"])
def test_a_refused_open_leaves_the_journal_mode_and_every_byte(program, case):
    store = default_store_path(program)
    if case == "a refused row":
        tamper(program, "UPDATE entries SET value = '-5' WHERE space = 'map:counts'")
    elif case == "a foreign database":
        os.remove(store)
        with sqlite3.connect(store) as db:
            db.execute("CREATE TABLE users (name TEXT)")
    else:
        tamper(program, "PRAGMA user_version = 9")
    before = file_bytes(program)
    with pytest.raises(SomaError):
        bound(program)
    assert file_bytes(program) == before and leftovers(store) == []
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


# ---------------------------------------------------------------- declarations: a notebook cannot weaken them

WEAK = """
cell Counter {
    memory {
        counts: Map<String, Int> [persistent]
        names: List<String> [persistent]
        pays: Map<String, Pay> [persistent]
        invariant names.size <= 20
    }
    on add(key: String, n: Int) { counts.set(key, (counts.get(key) ?? 0) + n) }
    on name(text: String) { names.push(text) }
    on get(key: String) { return counts.get(key) ?? 0 }
}
"""


def notebook_on(program: str, cell_text: str) -> Session:
    """A notebook session whose own cell (not the program file) declares Counter, bound to the program's store."""
    session = Session(os.path.dirname(program))
    assert session.execute(PAY).ok
    assert session.execute(cell_text).ok
    result = session.execute(f"%store {default_store_path(program)}")
    assert result.ok, result.error_value
    return session


@pytest.mark.parametrize("write", ['Counter.add("a", -999)', 'counts.set("b", -1)', 'Counter.add("z", -1)'])
def test_a_notebook_cell_without_the_invariant_cannot_write_past_it(program, write):
    session = notebook_on(program, WEAK)
    statement = write if write.startswith("Counter") else f"Counter.add(\"b\", -1)"
    result = session.execute(statement)
    assert not result.ok
    assert result.error_value.startswith(
        f"store: slot store {default_store_path(program)}: Counter.counts is declared in this store by counter.cell as "
        "`counts: Map<String, Int>; invariant counts >= 0`; this notebook cell declares it without "
        "`invariant counts >= 0`, so its writes to the store are refused")
    assert bound(program).cells["Counter"].slots["counts"].data == {"a": 1}
    assert session.execute('Counter.get("a")').result == {"text/plain": "1"}


def test_a_notebook_cell_may_read_and_write_the_slots_it_declares_as_strictly(program):
    session = notebook_on(program, WEAK)
    assert session.execute('Counter.name("y")').ok  # names keeps its invariant: writable
    stricter = WEAK.replace("invariant names.size <= 20", "invariant names.size <= 20\n        invariant counts >= 0"
                                                          "\n        invariant counts <= 100")
    session = notebook_on(program, stricter)
    assert session.execute('Counter.add("a", 4)').ok
    assert bound(program).cells["Counter"].slots["counts"].data == {"a": 5}
    assert bound(program).cells["Counter"].slots["names"].data == ["x", "y"]


def test_a_notebook_cell_with_another_type_cannot_write(program):
    session = notebook_on(program, WEAK.replace("counts: Map<String, Int>", "counts: Map<String, Float>")
                          .replace("(counts.get(key) ?? 0) + n", "0.5"))
    result = session.execute('Counter.add("a", 1)')
    assert "this notebook cell declares it as Map<String, Float>" in result.error_value


def test_the_program_file_may_change_its_own_declaration(program, tmp_path):
    relaxed = tmp_path / "counter.cell"
    relaxed.write_text(COUNTER.replace("invariant counts >= 0", "invariant counts >= -10"), encoding="utf-8")
    session = Session(str(tmp_path))
    assert session.execute("%load counter.cell").ok and session.execute("%store").ok
    assert session.execute('Counter.add("a", -5)').ok
    assert session.execute('Counter.get("a")').result == {"text/plain": "-4"}


# ---------------------------------------------------------------- read-only files


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READ = ("import sys; from soma_kernel.runtime.interpreter import Runtime; "
        "from soma_kernel.runtime.store import SlotStore; from soma_kernel.syntax.parser import parse; "
        "from soma_kernel.core.diagnostics import SomaError; "
        "r = Runtime(note=lambda t: None); r.load_program(parse(open(sys.argv[1]).read())); "
        "r.attach_store(SlotStore(sys.argv[2])); print(r.call('get', ['a']), r.cells['Counter'].slots['names'].data)\n"
        "try:\n    r.call('add', ['a', 1])\nexcept SomaError as e:\n    print(e.text)\n"
        "print(r.call('get', ['a'])); r.detach_store()")


def run_read_only(made_read_only: list, program: str, store) -> subprocess.CompletedProcess:
    """READ in a process that cannot write the paths in made_read_only: by their permissions, or
    (root ignores permissions) through read-only bind mounts in a mount namespace of its own."""
    command = [sys.executable, "-c", READ, program, str(store)]
    if os.geteuid() != 0:
        for path in made_read_only:
            os.chmod(path, 0o555 if os.path.isdir(path) else 0o444)
        return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": REPO})
    mounts = " && ".join(f"mount --bind -o ro {path} {path}" for path in made_read_only)
    return subprocess.run(["unshare", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh", *command],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": REPO})


@pytest.mark.parametrize("how", ["a read-only file", "a read-only folder", "both"])
def test_a_read_only_store_can_be_read_and_refuses_writes_clearly(program, tmp_path, how):
    folder = tmp_path / "shared"
    folder.mkdir()
    store = folder / "counter.sqlite"
    shutil.copy(default_store_path(program), store)
    before = store.read_bytes()
    made = {"a read-only file": [store], "a read-only folder": [folder], "both": [store, folder]}[how]
    try:
        done = run_read_only(made, program, store)
    finally:
        os.chmod(folder, 0o755)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "1 ['x']"
    assert lines[1] == (f"store: slot store {store}: the file is read-only, so Counter.counts cannot be written; "
                        "nothing was written")
    assert lines[2] == "1"
    assert store.read_bytes() == before
    # SQLite's WAL readers share a -shm beside the file; in a folder it may write, a reader that may not
    # write the file cannot checkpoint, so it leaves -wal and -shm there (empty of data)
    assert leftovers(str(store)) == ([] if how != "a read-only file" else ["counter.sqlite-shm", "counter.sqlite-wal"])


# ---------------------------------------------------------------- closing


def test_a_closed_store_leaves_no_wal_and_the_sqlite_file_alone_holds_everything(program, tmp_path):
    runtime = bound(program)
    runtime.call("add", ["b", 2])
    store = default_store_path(program)
    assert leftovers(store) != []  # open: WAL mode at work
    runtime.detach_store()
    assert leftovers(store) == []
    copy = tmp_path / "copy" / ".soma_data"
    copy.mkdir(parents=True)
    shutil.copy(store, copy / "counter.sqlite")
    assert bound(str(tmp_path / "copy" / "counter.cell")).cells["Counter"].slots["counts"].data == {"a": 1, "b": 2}


@pytest.mark.parametrize("argv,expected", [
    (["add", "b", "2"], {"a": 1, "b": 2}),
    (["add", "b", "-5"], {"a": 1}),  # refused by the invariant: the run fails
    (["get", "a"], {"a": 1}),
    (["add", "c", "3", "--fresh"], {"c": 3}),
])
def test_soma_kernel_run_leaves_the_sqlite_file_alone_and_whole(program, tmp_path, argv, expected):
    done = subprocess.run([sys.executable, "-m", "soma_kernel", "run", program, *argv], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": REPO}, timeout=120)
    assert done.returncode == (1 if "-5" in argv else 0), done.stderr
    store = default_store_path(program)
    assert leftovers(store) == []
    copy = tmp_path / "copy"
    (copy / ".soma_data").mkdir(parents=True)
    shutil.copy(store, copy / ".soma_data" / "counter.sqlite")
    assert bound(str(copy / "counter.cell")).cells["Counter"].slots["counts"].data == expected


def test_values_stored_before_the_program_tightened_an_invariant_are_kept_and_named_on_every_run(program):
    run = [sys.executable, "-m", "soma_kernel", "run", program]
    env = {**os.environ, "PYTHONPATH": REPO}
    assert subprocess.run(run + ["add", "a", "49"], env=env, capture_output=True).returncode == 0
    with open(program, "w", encoding="utf-8") as handle:
        handle.write(COUNTER.replace("invariant counts >= 0", "invariant counts >= 0\n        invariant counts <= 10"))
    for _ in range(2):  # the old declaration stays on record while stored values break the new one
        done = subprocess.run(run + ["get", "a"], env=env, capture_output=True, text=True)
        assert (done.returncode, done.stdout) == (0, "50\n"), done.stderr
        assert done.stderr.startswith('Counter: 1 value(s) in memory break invariant counts <= 10: counts["a"] = 50')
    tamper(program, "UPDATE entries SET value = '-1' WHERE space = 'map:counts' AND key = 'a'")
    done = subprocess.run(run + ["get", "a"], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and 'the row Counter.counts["a"] is refused' in done.stderr
    assert "invariant counts >= 0" in done.stderr
