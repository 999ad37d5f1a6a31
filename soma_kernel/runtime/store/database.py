"""The SQLite side of the slot store: opening a file, transactions, reading and writing entries.

`Database(path)` opens (creating, or migrating, when needed) a store file.
Opening only reads: the file is checked (its stamp, and an older file's
blobs) before anything is written, so a file that is refused is left exactly
as it was. The first write switches it to WAL mode with `synchronous=FULL`,
so a commit survives a killed process and a power cut alike. A file (or
folder) that cannot be written is opened read-only: it can be read, and a
write is refused with an error (a WAL-mode file in a read-only folder is
read as an immutable snapshot: nobody can write it there). `close()`
checkpoints the WAL, so once the last connection closes no `-wal` or `-shm`
file is left beside the store and the `.sqlite` file alone holds everything.
Every SQLite failure becomes a SomaError of kind `store` that names the
file; the file itself is never rewritten or removed to get past an error.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from typing import Callable, Iterable, Optional

from ...core.diagnostics import SomaError
from . import schema

DEFAULT_TIMEOUT = 30.0
BUSY_SLICE = 0.05  # seconds SQLite itself waits for a lock before our (interruptible) loop tries again
KEPT_GENERATIONS = 1000
TIMEOUT_VARIABLE = "SOMA_STORE_TIMEOUT"


def is_lock_error(err: sqlite3.Error) -> bool:
    """True when SQLite refused because another connection holds the file."""
    text = str(err) if isinstance(err, sqlite3.OperationalError) else ""
    return "locked" in text or "busy" in text


def waiting_for_lock() -> None:
    """One pause between two tries for a lock: where an interrupt is taken (a signal during the sleep)."""
    time.sleep(0.01)


def store_error(path: str, detail: str) -> SomaError:
    """The error for a store file that cannot be used (never caught by `try`)."""
    return SomaError("store", f"slot store {path}: {detail}", catchable=False)


class Database:
    """One connection to a store file; at most one transaction at a time."""

    def __init__(self, path: str, timeout: Optional[float] = None):
        self.path = path
        self.timeout = timeout if timeout is not None else float(os.environ.get(TIMEOUT_VARIABLE, DEFAULT_TIMEOUT))
        self.read_only = _read_only(path)
        self.in_wal = False
        if not self.read_only:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            except OSError as err:
                raise store_error(path, f"cannot create its folder ({err.strerror})") from None
        with self.errors():
            target = _read_only_uri(path) if self.read_only else path
            self.db = sqlite3.connect(target, timeout=min(self.timeout, BUSY_SLICE), isolation_level=None,
                                      check_same_thread=False, uri=self.read_only)
        try:
            self._retrying(self._prepare_once)
        except BaseException:
            self.db.close()
            raise

    # ------------------------------------------------------------ opening

    def _retrying(self, step: Callable[[], None]) -> None:
        """step(), tried again while another process holds the file (up to the timeout).

        Switching a new file to WAL and SQLite's recovery of another process's WAL can answer
        "locked" at once, without waiting through the busy timeout.
        """
        deadline = time.monotonic() + self.timeout
        pause = 0.01
        while True:
            try:
                return step()
            except sqlite3.Error as err:
                if not is_lock_error(err) or time.monotonic() + pause > deadline:
                    with self.errors():
                        raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def _prepare_once(self) -> None:
        """Check the file is ours, reading only; an older file's blobs are checked too. A new or
        older file is then created or migrated (the first write, so the switch to WAL comes first).

        The first look is one read snapshot: read statement by statement, a file another
        process creates meanwhile could show its tables without its stamp and be refused.
        """
        with self.transaction(write=False):
            kind = self._classify()
            if kind == "v0":
                self._check(schema.v0_problem(self.db))
        if kind == "current":
            return
        if self.read_only:
            if kind == "v0":
                raise store_error(self.path, "it is in the older one-blob-per-slot format and cannot be "
                                             "migrated: the file or its folder is read-only")
            return  # a new, empty file that cannot be created: it reads as empty
        with self.transaction():
            kind = self._classify()  # another process may have created it meanwhile
            if kind == "empty":
                schema.create(self.db)
            elif kind == "v0":
                self._check(schema.v0_problem(self.db))
                schema.migrate_v0(self.db)

    def _switch_to_wal(self) -> None:
        """Before the first write: WAL journal, synchronous=FULL."""
        if self.in_wal or self.read_only:
            return
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.in_wal = True

    def _check(self, problem: Optional[str]) -> None:
        """Refuse the file, naming what is wrong in it, when there is a problem."""
        if problem is not None:
            raise store_error(self.path, f"{problem}; the file was left untouched")

    def _classify(self) -> str:
        """schema.classify, its refusal turned into the store error."""
        try:
            return schema.classify(self.db)
        except schema.SchemaProblem as problem:
            raise store_error(self.path, f"{problem}; the file was left untouched") from None

    @contextlib.contextmanager
    def errors(self):
        """Turn SQLite failures inside the block into store errors naming the file."""
        try:
            yield
        except sqlite3.OperationalError as err:
            text = str(err)
            if is_lock_error(err):
                raise store_error(self.path, f"locked by another process (waited {self.timeout:g} s; "
                                             f"set {TIMEOUT_VARIABLE} to wait longer); nothing was written") from None
            raise store_error(self.path, f"{text}; nothing was written") from None
        except sqlite3.DatabaseError as err:
            raise store_error(self.path, f"the file is damaged or not a SQLite database ({err}); "
                                         "it was left as it is") from None

    # ------------------------------------------------------------ transactions

    @contextlib.contextmanager
    def transaction(self, write: bool = True):
        """BEGIN IMMEDIATE (a writer, waiting up to the timeout) or a read snapshot; COMMIT, or ROLLBACK on error."""
        if write:
            self.begin()
        else:
            with self.errors():
                self.db.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def begin(self) -> None:
        """Take the write lock for one invocation, waiting for other writers up to the timeout;
        a read snapshot when the file is read-only (a write is then refused at commit).

        The wait is a Python loop over short SQLite waits (BUSY_SLICE), not one
        long wait inside SQLite: an interrupt (SIGINT, KeyboardInterrupt) is
        seen between two tries — within a fraction of a second — instead of at
        the end of the timeout.
        """
        if self.read_only:
            with self.errors():
                self.db.execute("BEGIN")
            return
        if not self.in_wal:
            self._retrying(self._switch_to_wal)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.Error as err:
                if not is_lock_error(err) or time.monotonic() >= deadline:
                    with self.errors():
                        raise
            waiting_for_lock()

    def commit(self) -> None:
        """Make the open transaction durable."""
        with self.errors():
            self.db.execute("COMMIT")

    def rollback(self) -> None:
        """Abandon the open transaction (nothing it wrote stays)."""
        if self.db.in_transaction:
            with self.errors():
                self.db.execute("ROLLBACK")

    # ------------------------------------------------------------ reading

    def meta(self, name: str) -> int:
        """A counter of the meta table (`generation`, `pruned_below`)."""
        with self.errors():
            return self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()[0]

    def cell_slots(self, cell: str) -> list[tuple]:
        """(space, JSON array of the keys, JSON array of the values) of each stored slot of one cell, in key order.

        SQLite joins them itself: a 50 000-entry map arrives as two strings
        for two json.loads, not as 50 000 rows made into Python objects one by one.
        """
        with self.errors():
            return self.db.execute(
                "SELECT space, json_group_array(key), '[' || group_concat(value, ',') || ']' "
                "FROM (SELECT space, key, value FROM entries WHERE cell = ? "
                "AND (space LIKE 'map:%' OR space LIKE 'list:%') ORDER BY space, key) GROUP BY space",
                (cell,)).fetchall()

    def cell_others(self, cell: str) -> list[tuple]:
        """Every (space, key, value) of one cell that is not a slot entry: instances, remembered values, next_id."""
        with self.errors():
            return self.db.execute("SELECT space, key, value FROM entries WHERE cell = ? "
                                   "AND space NOT LIKE 'map:%' AND space NOT LIKE 'list:%'", (cell,)).fetchall()

    def changed_since(self, generation: int) -> list[tuple]:
        """(cell, space, key, value or None) of each entry committed after `generation` (None: deleted)."""
        with self.errors():
            return self.db.execute(
                "SELECT c.cell, c.space, c.key, e.value FROM "
                "(SELECT DISTINCT cell, space, key FROM changes WHERE generation > ?) AS c "
                "LEFT JOIN entries AS e ON e.cell = c.cell AND e.space = c.space AND e.key = c.key",
                (generation,)).fetchall()

    def holds(self, cell: str) -> bool:
        """Whether the file holds any entry of the cell."""
        with self.errors():
            return self.db.execute("SELECT 1 FROM entries WHERE cell = ? LIMIT 1", (cell,)).fetchone() is not None

    def first_unreadable(self, cell: str, limit: int) -> Optional[tuple]:
        """(space, key, value) of the first entry of the cell whose value is not text or is longer
        than limit characters (its value then cut to limit + 1), or None."""
        with self.errors():
            return self.db.execute(
                "SELECT space, key, substr(value, 1, ? + 1) FROM entries WHERE cell = ? "
                "AND (typeof(value) != 'text' OR length(value) > ?) LIMIT 1", (limit, cell, limit)).fetchone()

    def entries_of(self, cell: str, space: str) -> list[tuple]:
        """(key, value) of every entry of one space of a cell, in key order."""
        with self.errors():
            return self.db.execute("SELECT key, value FROM entries WHERE cell = ? AND space = ? ORDER BY key",
                                   (cell, space)).fetchall()

    def list_length(self, cell: str, space: str) -> tuple[int, int]:
        """(its last position + 1, how many positions it has) of a stored list: equal when it has no gap."""
        with self.errors():
            last, count = self.db.execute("SELECT max(key), count(*) FROM entries WHERE cell = ? AND space = ?",
                                          (cell, space)).fetchone()
        return (0 if last is None else last + 1), count

    def list_positions(self, cell: str, space: str) -> list:
        """Every position a stored list has, in order."""
        with self.errors():
            return [row[0] for row in self.db.execute(
                "SELECT key FROM entries WHERE cell = ? AND space = ? ORDER BY key", (cell, space))]

    def summary(self) -> list[tuple]:
        """(cell, space, number of entries) of the whole file."""
        with self.errors():
            return self.db.execute("SELECT cell, space, count(*) FROM entries GROUP BY cell, space "
                                   "ORDER BY cell, space").fetchall()

    # ------------------------------------------------------------ writing

    def write(self, generation: int, upserts: Iterable[tuple], deletes: Iterable[tuple]) -> None:
        """Write one commit's entries (cell, space, key[, value]), log them under `generation`, prune the log."""
        upserts, deletes = list(upserts), list(deletes)
        with self.errors():
            db = self.db
            db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)", upserts)
            db.executemany("DELETE FROM entries WHERE cell = ? AND space = ? AND key = ?", deletes)
            db.executemany("INSERT INTO changes VALUES (?, ?, ?, ?)",
                           [(generation, *entry[:3]) for entry in upserts + deletes])
            self._advance(generation, generation - KEPT_GENERATIONS)

    def wipe(self, generation: int, cell: Optional[str] = None) -> None:
        """Delete every entry (of one cell); every other process reloads in full at its next invocation."""
        with self.errors():
            if cell is None:
                self.db.execute("DELETE FROM entries")
            else:
                self.db.execute("DELETE FROM entries WHERE cell = ?", (cell,))
            self._advance(generation, generation)

    def _advance(self, generation: int, pruned_below: int) -> None:
        """Set the generation and drop log rows older than `pruned_below` (never moving it back)."""
        db = self.db
        db.execute("UPDATE meta SET value = ? WHERE name = 'generation'", (generation,))
        if pruned_below > self.meta("pruned_below"):
            db.execute("DELETE FROM changes WHERE generation <= ?", (pruned_below,))
            db.execute("UPDATE meta SET value = ? WHERE name = 'pruned_below'", (pruned_below,))

    def close(self) -> None:
        """Close the connection (an open transaction is abandoned). The WAL is checkpointed into the
        file first, so the `.sqlite` file alone holds every commit and SQLite removes `-wal` and
        `-shm` as the last connection closes."""
        with contextlib.suppress(sqlite3.Error):
            self.rollback()
        if self.in_wal:
            with contextlib.suppress(sqlite3.Error):  # another process still has it open: the last one does it
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()  # the last connection of a WAL file removes -wal and -shm


def _uri_path(path: str) -> str:
    """path as the path of an SQLite `file:` URI (its three special characters escaped)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def _read_only_uri(path: str) -> str:
    """The URI that opens path read-only. A WAL-mode file in a folder that cannot be written has no
    `-shm` to share and no writer (a writer needs the folder for its `-wal`): it is opened immutable."""
    uri = f"file:{_uri_path(os.path.abspath(path))}?mode=ro"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.access(folder, os.W_OK) and not os.path.exists(path + "-wal") and _is_wal_file(path):
        uri += "&immutable=1"
    return uri


def _is_wal_file(path: str) -> bool:
    """Whether the SQLite file's header says WAL mode (its read and write versions are 2)."""
    try:
        with open(path, "rb") as file:
            header = file.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2


def _read_only(path: str) -> bool:
    """Whether the store must be opened read-only: the file, or the folder it needs for its
    journal, exists and cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.exists(path):
        return not (os.access(path, os.W_OK) and os.access(folder, os.W_OK | os.X_OK))
    return os.path.isdir(folder) and not os.access(folder, os.W_OK | os.X_OK)
