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


def test_binding_replaces_in_memory_values_and_says_so(folder):
    session = Session(str(folder))
    session.execute("%load ledger.cell")
    session.execute('Ledger.deposit("mem", 1)')
    result = session.execute("%store")
    assert result.stream_text("stderr") == ("note: the in-memory values of Ledger.balances, Ledger.history "
                                            "were replaced by the stored ones\n")
    assert session.execute('Ledger.balance("mem")').result == {"text/plain": "0"}


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
