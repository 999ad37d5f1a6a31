"""Input history: this session's cells, and every earlier kernel session's in one SQLite file.

Jupyter asks for history by `history_request` (tail, search, range), as
IPython keeps it: entries are (session, line, source), numbered sessions
in one SQLite file, so a restarted kernel still finds yesterday's input.
A `History` without a file (a Session made by code or tests) keeps this
session only. The file is data, never trusted: a locked, read-only,
damaged or foreign file turns the file off with one note on stderr and the
session goes on with its memory.

Where: `SOMA_KERNEL_HISTORY` (a path, or `off`), else
`$XDG_DATA_HOME/soma-kernel/history.sqlite` (`~/.local/share/…`).
"""

from __future__ import annotations

import fnmatch
import os
import sys
from typing import Optional

Entry = tuple[int, int, str]  # (session number, line = execution count, source)

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (session INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT);
CREATE TABLE IF NOT EXISTS history (session INTEGER, line INTEGER, source TEXT, PRIMARY KEY (session, line));
"""


def default_history_path() -> Optional[str]:
    """The kernel's history file: `SOMA_KERNEL_HISTORY`, else the XDG data folder; None when turned `off`."""
    chosen = os.environ.get("SOMA_KERNEL_HISTORY")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "none") else os.path.expanduser(chosen)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "soma-kernel", "history.sqlite")


class History:
    """This session's inputs in memory, and all sessions' in a SQLite file when one is given."""

    def __init__(self, path: Optional[str] = None):
        self.path = path
        self.entries: list[tuple[int, str]] = []
        self.session = 0
        self._db = None
        self._opened = path is None

    # ------------------------------------------------------------ writing

    def record(self, line: int, source: str) -> None:
        """Keep one input (in memory, and in the file when there is one)."""
        self.entries.append((line, source))
        db = self._database()
        if db is not None:
            self._guard(lambda: self._insert(db, line, source))

    def _insert(self, db, line: int, source: str) -> None:
        """One row, committed at once (a killed kernel keeps what it ran)."""
        with db:
            db.execute("INSERT OR REPLACE INTO history VALUES (?, ?, ?)", (self.session, line, source))

    def close(self) -> None:
        """Close the file (the kernel does at shutdown)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    # ------------------------------------------------------------ reading

    def tail(self, n: int) -> list[Entry]:
        """The last `n` inputs, this session's and earlier ones', oldest first."""
        if n <= 0:
            return []
        rows = self._query("SELECT session, line, source FROM history ORDER BY session DESC, line DESC LIMIT ?", (n,))
        if rows is None:
            return [(self.session, line, source) for line, source in self.entries[-n:]]
        return list(reversed(rows))

    def search(self, pattern: str = "*", n: Optional[int] = None, unique: bool = False) -> list[Entry]:
        """Inputs matching a glob `pattern` (oldest first), at most the last `n`; `unique` keeps a source's last."""
        rows = self._query("SELECT session, line, source FROM history ORDER BY session, line", ())
        if rows is None:
            rows = [(self.session, line, source) for line, source in self.entries]
        found = [row for row in rows if fnmatch.fnmatchcase(row[2], pattern)]
        if unique:
            seen: set[str] = set()
            kept = []
            for row in reversed(found):
                if row[2] not in seen:
                    seen.add(row[2])
                    kept.append(row)
            found = list(reversed(kept))
        return found[-n:] if n else found

    def range(self, session: int = 0, start: int = 0, stop: Optional[int] = None) -> list[Entry]:
        """Inputs of one session (0: this one, -1: the one before…) whose line is in [start, stop)."""
        number = self.session + session if session <= 0 else session
        if number == self.session:
            rows = [(self.session, line, source) for line, source in self.entries]
        else:
            rows = self._query("SELECT session, line, source FROM history WHERE session = ? ORDER BY line",
                               (number,)) or []
        return [row for row in rows if row[1] >= start and (stop is None or row[1] < stop)]

    # ------------------------------------------------------------ the file

    def _database(self):
        """The open file, opened (and this session numbered) on first use; None without one."""
        if not self._opened:
            self._opened = True
            self._guard(self._open)
        return self._db

    def _open(self) -> None:
        """Open the file, create its tables, and start a new numbered session in it."""
        import sqlite3  # lazy: only a kernel with history on opens the file, at its first cell

        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        # the kernel closes it from its control thread at shutdown; the shell thread alone writes
        db = sqlite3.connect(self.path, timeout=2.0, check_same_thread=False)
        try:
            with db:
                db.executescript(SCHEMA)
                self.session = db.execute("INSERT INTO sessions (started) VALUES (datetime('now'))").lastrowid
        except BaseException:
            db.close()
            raise
        self._db = db

    def _query(self, sql: str, params: tuple) -> Optional[list[Entry]]:
        """Rows of a query on the file, or None when there is no usable file."""
        db = self._database()
        if db is None:
            return None
        rows = self._guard(lambda: [(int(s), int(n), str(src)) for s, n, src in db.execute(sql, params)])
        return rows if self._db is not None else None

    def _guard(self, action):
        """Run a file action; any failure turns the file off with one note (the memory history goes on)."""
        try:
            return action()
        except Exception as err:  # sqlite3.Error, OSError, a foreign schema's odd values: the file is data
            sys.stderr.write(f"note: input history file {self.path} is not usable ({err}); "
                             "this session's history is kept in memory only\n")
            self.close()
            return None
