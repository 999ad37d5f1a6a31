"""Input history kept across kernel sessions in SQLite, and a history file that is not usable."""

from __future__ import annotations

import os
import sqlite3

import pytest

from soma_kernel.session.history import History, default_history_path
from soma_kernel.session.session import Session


def _session_with(path, *inputs):
    """A finished session that ran `inputs` with its history in `path`."""
    session = Session(history=History(str(path)))
    for code in inputs:
        session.execute(code)
    session.history.close()
    return session


def test_a_new_session_finds_the_inputs_of_earlier_ones(tmp_path):
    path = tmp_path / "history.sqlite"
    first = _session_with(path, "1 + 1", "let a = 2")
    second = Session(history=History(str(path)))
    second.execute("3 * 3")
    assert second.history.session == first.history.session + 1
    assert [code for _, _, code in second.history.tail(3)] == ["1 + 1", "let a = 2", "3 * 3"]
    assert second.history.tail(2) == [(first.history.session, 2, "let a = 2"), (second.history.session, 1, "3 * 3")]
    assert [code for _, _, code in second.history.search("*1*")] == ["1 + 1"]
    assert second.history.range(-1) == [(first.history.session, 1, "1 + 1"), (first.history.session, 2, "let a = 2")]
    assert second.history.range(0) == [(second.history.session, 1, "3 * 3")]


def test_search_unique_keeps_the_last_of_each_source(tmp_path):
    path = tmp_path / "history.sqlite"
    _session_with(path, "1 + 1", "2 + 2")
    later = Session(history=History(str(path)))
    later.execute("1 + 1")
    found = later.history.search("*+*", unique=True)
    assert [(code, number) for number, _, code in found] == [("2 + 2", later.history.session - 1),
                                                             ("1 + 1", later.history.session)]
    assert len(later.history.search("*+*", n=1)) == 1


@pytest.mark.parametrize("content", [b"this is not a database at all" * 10, b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_damaged_file_turns_the_file_off_and_keeps_memory(tmp_path, capfd, content):
    path = tmp_path / "history.sqlite"
    path.write_bytes(content)
    session = Session(history=History(str(path)))
    assert session.execute("1 + 1").ok
    assert session.execute("2 + 2").ok
    assert [code for _, _, code in session.history.tail(5)] == ["1 + 1", "2 + 2"]
    err = capfd.readouterr().err
    assert err.count("input history file") == 1 and "kept in memory only" in err
    assert path.read_bytes() == content  # never rewritten


def test_a_foreign_database_with_other_tables_is_not_trusted(tmp_path, capfd):
    path = tmp_path / "history.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE history (a, b)")  # same table name, another shape
    db.commit()
    db.close()
    session = Session(history=History(str(path)))
    assert session.execute("40 + 2").ok
    assert [code for _, _, code in session.history.tail(3)] == ["40 + 2"]
    assert "input history file" in capfd.readouterr().err


def test_a_read_only_folder_keeps_history_in_memory(tmp_path, capfd):
    if os.geteuid() == 0:
        path = "/proc/soma-history/history.sqlite"  # root can write anywhere else: a folder nobody can create
    else:
        folder = tmp_path / "ro"
        folder.mkdir(mode=0o500)
        path = str(folder / "history.sqlite")
    session = Session(history=History(path))
    assert session.execute("1 + 1").ok
    assert session.history.tail(1)[0][2] == "1 + 1"
    assert "input history file" in capfd.readouterr().err


def test_the_history_file_is_chosen_by_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SOMA_KERNEL_HISTORY", str(tmp_path / "h.sqlite"))
    assert default_history_path() == str(tmp_path / "h.sqlite")
    for off in ("off", "", "none"):
        monkeypatch.setenv("SOMA_KERNEL_HISTORY", off)
        assert default_history_path() is None
    monkeypatch.delenv("SOMA_KERNEL_HISTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_history_path() == str(tmp_path / "soma-kernel" / "history.sqlite")


def test_without_a_file_history_is_this_session_only():
    history = History()
    history.record(1, "a")
    history.record(2, "b")
    assert history.tail(1) == [(0, 2, "b")] and history.range(-1) == []


def test_the_file_can_be_closed_from_another_thread(tmp_path, capfd):
    """The kernel closes the history from its control thread at shutdown; the shell thread wrote to it."""
    import threading

    history = History(str(tmp_path / "history.sqlite"))
    history.record(1, "1 + 1")
    closer = threading.Thread(target=history.close)
    closer.start()
    closer.join()
    assert history._db is None and "not usable" not in capfd.readouterr().err
    again = History(str(tmp_path / "history.sqlite"))
    assert [code for _, _, code in again.tail(5)] == ["1 + 1"]
