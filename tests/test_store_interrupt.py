"""An interrupt while a statement waits for a locked store takes effect between two tries for the lock,
not at the end of SOMA_STORE_TIMEOUT (issue 20 §5). No timings: the wait's pause is where the interrupt lands."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import types

import pytest

from soma_kernel.runtime.store import database
from soma_kernel.session.session import Session

LEDGER = """
cell Ledger {
    memory {
        balances: Map<String, Int> [persistent]
    }
    on deposit(who: String, amount: Int) {
        balances.set(who, (balances.get(who) ?? 0) + amount)
        return balances.get(who)
    }
}
"""

INTERRUPTED = ("KeyboardInterrupt: interrupted — the running statement was rolled back (or the magic stopped); "
               "the session is intact")


@pytest.fixture
def bound(tmp_path, monkeypatch):
    """(a session bound to ledger's store with a 60 s lock timeout, the store's path)."""
    monkeypatch.setenv("SOMA_STORE_TIMEOUT", "60")
    (tmp_path / "ledger.cell").write_text(LEDGER, encoding="utf-8")
    session = Session(str(tmp_path))
    assert session.execute("%load ledger.cell").ok
    assert session.execute("%store").ok
    assert session.execute('deposit("ann", 5)').result["text/plain"] == "5"
    return session, str(tmp_path / ".soma_data" / "ledger.sqlite")


def locked(path: str) -> sqlite3.Connection:
    """Another connection holding the store's write lock."""
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_an_interrupt_during_the_wait_stops_the_statement_and_keeps_the_session(bound, monkeypatch):
    session, path = bound
    other = locked(path)

    def interrupted(seconds):
        raise KeyboardInterrupt  # what SIGINT does to a sleeping main thread

    monkeypatch.setattr(database, "time", types.SimpleNamespace(monotonic=database.time.monotonic,
                                                                sleep=interrupted))
    result = session.execute('deposit("ann", 1)')
    assert (result.error_name, result.error) == ("KeyboardInterrupt", INTERRUPTED)
    other.rollback()
    other.close()
    monkeypatch.undo()
    assert session.execute('deposit("ann", 2)').result["text/plain"] == "7"  # 5 + 2: the interrupted 1 never landed


def test_a_real_sigint_reaches_the_statement_waiting_for_the_lock(bound, monkeypatch):
    session, path = bound
    other = locked(path)
    waiting = threading.Event()
    pause = database.waiting_for_lock

    def noted_pause():
        waiting.set()
        pause()

    monkeypatch.setattr(database, "waiting_for_lock", noted_pause)
    sender = threading.Thread(target=lambda: waiting.wait(120) and os.kill(os.getpid(), signal.SIGINT))
    sender.start()
    result = session.execute('deposit("ann", 1)')
    sender.join()
    other.rollback()
    other.close()
    assert (result.error_name, result.error) == ("KeyboardInterrupt", INTERRUPTED)
    assert session.execute('deposit("ann", 2)').result["text/plain"] == "7"


def test_without_an_interrupt_the_wait_still_ends_at_the_timeout_with_the_store_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SOMA_STORE_TIMEOUT", "0.2")
    (tmp_path / "ledger.cell").write_text(LEDGER, encoding="utf-8")
    session = Session(str(tmp_path))
    assert session.execute("%load ledger.cell").ok and session.execute("%store").ok
    other = locked(str(tmp_path / ".soma_data" / "ledger.sqlite"))
    result = session.execute('deposit("bob", 1)')
    other.rollback()
    other.close()
    assert result.error_value.endswith("locked by another process (waited 0.2 s; set SOMA_STORE_TIMEOUT to wait "
                                       "longer); nothing was written")
