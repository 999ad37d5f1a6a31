"""A notebook session bound to a slot store: %store, %memory, %reset --store, statements as transactions.

The last test does it through a real kernel: bind, write through a handler,
restart the kernel, bind again, read the value back.
"""

from __future__ import annotations

import sqlite3

import pytest
from helpers import running_kernel
from test_kernel_protocol import of_type, run

from soma_kernel.session.session import Session

LEDGER = """
cell Ledger {
    memory {
        balances: Map<String, Int> [persistent]
        history: List<String> [persistent]
        notes: Map<String, String>
        invariant balances >= 0
    }
    state account {
        initial: open
        open -> frozen
    }
    on deposit(who: String, amount: Int) {
        balances.set(who, (balances.get(who) ?? 0) + amount)
        history.push("{who}+{amount}")
        return balances.get(who)
    }
    on freeze(who: String) { transition(who, "frozen") }
    on deposit_then_fail(who: String) {
        balances.set(who, 999)
        history.push("never")
        fail("refused", "changed my mind")
    }
    on balance(who: String) { return balances.get(who) ?? 0 }
}
"""


@pytest.fixture
def folder(tmp_path):
    """A folder holding ledger.cell."""
    (tmp_path / "ledger.cell").write_text(LEDGER, encoding="utf-8")
    return tmp_path


def bound_session(folder) -> Session:
    """A session that %load-ed ledger.cell and bound its default store."""
    session = Session(str(folder))
    assert session.execute("%load ledger.cell").ok
    assert session.execute("%store").ok
    return session


def rows(folder) -> list[str]:
    """Every row of the ledger's store file, as SQL (entries, change log, generation)."""
    with sqlite3.connect(folder / ".soma_data" / "ledger.sqlite") as db:
        return list(db.iterdump())


def test_store_binds_the_default_file_of_the_loaded_program(folder):
    session = Session(str(folder))
    session.execute("%load ledger.cell")
    result = session.execute("%store")
    assert result.stream_text() == "bound to .soma_data/ledger.sqlite\n  Ledger: balances (0 entries), history (0 entries)\n"
    assert session.execute('Ledger.deposit("ada", 5)').result == {"text/plain": "5"}
    again = Session(str(folder))
    again.execute("%load ledger.cell")
    assert again.execute("%store").stream_text() == (
        "bound to .soma_data/ledger.sqlite\n  Ledger: balances (1 entry), history (1 entry)\n")
    assert again.execute('Ledger.balance("ada")').result == {"text/plain": "5"}


def test_a_rolled_back_statement_leaves_the_store_unchanged(folder):
    session = bound_session(folder)
    session.execute('Ledger.deposit("ada", 5)')
    before = rows(folder)
    failed = session.execute('Ledger.deposit_then_fail("ada")')
    assert failed.error_name == "SomaError" and "refused: changed my mind" in failed.error
    refused = session.execute('Ledger.deposit("ada", -50)')
    assert "violates invariant balances >= 0" in refused.error
    assert rows(folder) == before
    state = session.runtime.cells["Ledger"]
    assert state.slots["balances"].data == {"ada": 5} and state.slots["history"].data == ["ada+5"]


def test_memory_reads_what_other_processes_committed(folder):
    session, other = bound_session(folder), bound_session(folder)
    other.execute('Ledger.deposit("bob", 7)')
    other.execute('Ledger.freeze("bob")')
    shown = session.execute("%memory Ledger")
    assert shown.stream_text() == "balances, history: stored in .soma_data/ledger.sqlite\n"
    assert '"bob": 7' in shown.displays[0]["text/plain"]
    assert session.execute("%memory").stream_text() == (
        ".soma_data/ledger.sqlite holds:\n"
        "  Ledger: machine instances: 1 row\n"
        "  Ledger: list slot history: 1 row\n"
        "  Ledger: map slot balances: 1 row\n")


def test_reset_asks_for_reset_store_before_wiping(folder):
    session = bound_session(folder)
    session.execute('Ledger.deposit("ada", 5)')
    refused = session.execute("%reset")
    assert refused.error_value == ("the session is bound to .soma_data/ledger.sqlite: `%reset --store` wipes its "
                                   "stored data too (or `%store off` first to reset memory only)")
    assert session.execute('Ledger.balance("ada")').result == {"text/plain": "5"}
    wiped = session.execute("%reset --store")
    assert wiped.stream_text() == ("reset: memory, machine instances, mocks and top-level lets are fresh, and "
                                   ".soma_data/ledger.sqlite is wiped; definitions are kept\n")
    assert session.execute("%memory").stream_text() == ".soma_data/ledger.sqlite is empty\n"
    assert session.execute('Ledger.balance("ada")').result == {"text/plain": "0"}


def test_store_off_returns_to_memory_and_the_file_keeps_its_data(folder):
    session = bound_session(folder)
    session.execute('Ledger.deposit("ada", 5)')
    assert session.execute("%store off").ok
    session.execute('Ledger.deposit("ada", 1)')
    assert session.execute('Ledger.balance("ada")').result == {"text/plain": "6"}
    assert bound_session(folder).execute('Ledger.balance("ada")').result == {"text/plain": "5"}
    assert session.execute("%reset").ok


def session_with_values(folder) -> Session:
    """A session that %load-ed ledger.cell and holds values in memory: two balances, history, an instance."""
    session = Session(str(folder))
    session.execute("%load ledger.cell")
    for who, amount in (("ann", 2), ("bob", 5)):
        assert session.execute(f'Ledger.deposit("{who}", {amount})').ok
    assert session.execute('Ledger.freeze("ann")').ok
    return session


def stored_rows(path) -> dict:
    """{(space, key): value} of every entry in a store file, read straight from it."""
    with sqlite3.connect(path) as db:
        return {(space, key): value for space, key, value in db.execute("SELECT space, key, value FROM entries")}


SESSION_ROWS = {("map:balances", "ann"): "2", ("map:balances", "bob"): "5", ("list:history", 0): '"ann+2"',
                ("list:history", 1): '"bob+5"', ("instance", "ann"): '["frozen",["open","frozen"]]'}


@pytest.mark.parametrize("target", ["new.sqlite", "deep/new/folder/data.sqlite", "", "empty.sqlite",
                                    "other-cells.sqlite"])
def test_binding_a_store_without_the_cells_data_keeps_the_sessions_values_and_writes_them_at_once(folder, target):
    path = folder / (target or ".soma_data/ledger.sqlite")
    if target == "empty.sqlite":
        with sqlite3.connect(path):
            pass
    elif target == "other-cells.sqlite":  # a store that holds another program's cell
        other = Session(str(folder))
        assert other.execute("cell Other {\n memory { n: Map<String, Int> [persistent] }\n on put() { n.set(\"k\", 1) }\n}").ok
        assert other.execute(f"%store {target}").ok and other.execute("Other.put()").ok
        other.execute("%store off")
    session = session_with_values(folder)
    result = session.execute(f"%store {target}".strip())
    assert result.ok, result.error_value
    shown = target or ".soma_data/ledger.sqlite"
    assert result.stream_text() == (
        f"bound to {shown}\n  Ledger: balances (2 entries), history (2 entries), 1 machine instance\n"
        f"kept the session's values of Ledger.balances, Ledger.history, Ledger.machine instances "
        f"and wrote them to {shown}\n")
    assert result.stream_text("stderr") == ""
    rows = stored_rows(path)  # at once: no statement ran since %store
    assert {key: value for key, value in rows.items() if key[0] != "map:n"} == SESSION_ROWS
    assert session.execute('Ledger.balance("bob")').result == {"text/plain": "5"}


def test_binding_a_store_that_holds_data_names_each_in_memory_value_it_replaces(folder):
    writer = bound_session(folder)
    assert writer.execute('Ledger.deposit("ann", 2)').ok and writer.execute('Ledger.deposit("cy", 9)').ok
    writer.execute("%store off")
    session = session_with_values(folder)
    result = session.execute("%store")
    assert result.stream_text("stderr") == (
        'note: the stored data replaced these in-memory values: Ledger.balances ("bob"); '
        "Ledger.history (1); Ledger.machine instances (\"ann\")\n")
    assert "kept the session's values" not in result.stream_text()
    assert session.execute('Ledger.balance("bob")').result == {"text/plain": "0"}
    assert session.execute('Ledger.balance("cy")').result == {"text/plain": "9"}


def test_binding_a_store_that_holds_the_same_values_replaces_nothing(folder):
    session = session_with_values(folder)
    assert session.execute("%store same.sqlite").ok
    session.execute("%store off")
    result = session.execute("%store same.sqlite")
    assert result.ok and result.stream_text("stderr") == "" and "kept" not in result.stream_text()


def test_a_store_that_cannot_be_bound_leaves_the_session_bound_where_it_was(folder):
    session = bound_session(folder)
    assert session.execute('Ledger.deposit("ada", 5)').ok
    (folder / "bad.sqlite").write_bytes(b"not sqlite\n" * 100)
    result = session.execute("%store bad.sqlite")
    assert result.error_value.endswith("(the session stays bound to .soma_data/ledger.sqlite)")
    assert session.execute('Ledger.deposit("ada", 1)').ok
    assert stored_rows(folder / ".soma_data" / "ledger.sqlite")[("map:balances", "ada")] == "6"


def test_store_needs_a_path_without_a_loaded_program(folder):
    session = Session(str(folder))
    result = session.execute("%store")
    assert result.error_value == ("no program was %load-ed, so there is no default store: "
                                  "name the file (`%store data.sqlite`)")


def test_a_damaged_store_file_is_named_and_the_session_stays_in_memory(folder):
    (folder / "bad.sqlite").write_bytes(b"not sqlite\n" * 100)
    session = Session(str(folder))
    session.execute("%load ledger.cell")
    result = session.execute("%store bad.sqlite")
    assert result.error_name == "MagicError"
    assert f"slot store {folder / 'bad.sqlite'}: the file is damaged or not a SQLite database" in result.error_value
    assert session.runtime.store is None
    assert session.execute('Ledger.deposit("ada", 5)').ok
    assert (folder / "bad.sqlite").read_bytes() == b"not sqlite\n" * 100


def test_redefining_a_bound_cell_keeps_its_stored_data(folder):
    session = bound_session(folder)
    session.execute('Ledger.deposit("ada", 5)')
    assert session.execute(LEDGER.replace("on balance", "on extra() { return 1 }\n    on balance"),
                           cell_key="again").ok
    assert session.execute('Ledger.balance("ada")').result == {"text/plain": "5"}


def test_a_kernel_restart_reads_back_what_a_handler_stored(folder):
    with running_kernel(str(folder / "prefix"), str(folder)) as (manager, client):
        assert run(client, "%load ledger.cell")[0]["status"] == "ok"
        reply, messages = run(client, "%store")
        assert reply["status"] == "ok"
        assert "bound to .soma_data/ledger.sqlite" in "".join(c["text"] for c in of_type(messages, "stream"))
        assert run(client, 'Ledger.deposit("ada", 12)')[0]["status"] == "ok"
        manager.restart_kernel(now=True)
        client.wait_for_ready(timeout=60)
        assert run(client, "%load ledger.cell")[0]["status"] == "ok"
        assert run(client, "%store")[0]["status"] == "ok"
        reply, messages = run(client, 'Ledger.balance("ada")')
        assert reply["status"] == "ok"
        assert [c["data"]["text/plain"] for c in of_type(messages, "execute_result")] == ["12"]


def test_a_kernel_shut_down_leaves_the_store_file_whole_and_alone(folder, tmp_path):
    store = folder / ".soma_data" / "ledger.sqlite"
    with running_kernel(str(folder / "prefix"), str(folder)) as (manager, client):
        assert run(client, "%load ledger.cell")[0]["status"] == "ok"
        assert run(client, "%store")[0]["status"] == "ok"
        assert run(client, 'Ledger.deposit("ada", 12)')[0]["status"] == "ok"
        assert sorted(p.name for p in store.parent.iterdir()) != ["ledger.sqlite"]  # open: WAL at work
        manager.shutdown_kernel(now=False)
        assert sorted(p.name for p in store.parent.iterdir()) == ["ledger.sqlite"]
    copy = tmp_path / "copy"
    (copy / ".soma_data").mkdir(parents=True)
    (copy / "ledger.cell").write_text(LEDGER, encoding="utf-8")
    (copy / ".soma_data" / "ledger.sqlite").write_bytes(store.read_bytes())
    assert bound_session(copy).execute('Ledger.balance("ada")').result == {"text/plain": "12"}
