"""The documents the server knows: the open ones, and the `.cell` files beside a `.cell` file.

Go to definition, find references and workspace symbols reach across the
`.cell` files of a folder: an open file is read from the editor, a closed one
from disk (at most `MAX_FILE_BYTES`, re-read only when its modification time
changes, parsed but not checked). A notebook is one document: its cells see
each other and nothing else.
"""

from __future__ import annotations

import os
from typing import Iterator, Optional
from urllib.parse import quote

from .document import Analysis, analyse
from .source import CELL_FILE_SUFFIX
from .symbols import SymbolIndex

MAX_FILE_BYTES = 2_000_000
MAX_FOLDER_FILES = 200


class Entry:
    """One document: its URI, path, analysis and (made on first use) symbol index."""

    def __init__(self, uri: str, path: str, analysis: Analysis):
        self.uri = uri
        self.path = path
        self.analysis = analysis
        self._symbols: Optional[SymbolIndex] = None

    @property
    def symbols(self) -> SymbolIndex:
        """The document's symbol index."""
        if self._symbols is None:
            self._symbols = SymbolIndex(self.analysis)
        return self._symbols


class Workspace:
    """Open documents by URI, and closed `.cell` files by path (cached by modification time)."""

    def __init__(self):
        self.open: dict[str, Entry] = {}
        self._closed: dict[str, tuple[float, Entry]] = {}
        self.roots: list[str] = []

    def put(self, uri: str, path: str, analysis: Analysis) -> Entry:
        """Record the newest analysis of an open document."""
        entry = Entry(uri, path, analysis)
        self.open[uri] = entry
        return entry

    def close(self, uri: str) -> None:
        """Forget an open document (a closed `.cell` file is read from disk again when needed)."""
        self.open.pop(uri, None)

    def neighbours(self, entry: Entry) -> Iterator[Entry]:
        """The other `.cell` files of the entry's folder (none for a notebook)."""
        if not entry.path.endswith(CELL_FILE_SUFFIX):
            return
        yield from self._folder(os.path.dirname(entry.path), skip=entry.path)

    def everything(self) -> Iterator[Entry]:
        """Every open document, then the closed `.cell` files of the workspace roots and open files' folders."""
        seen = set()
        for entry in list(self.open.values()):
            seen.add(entry.path)
            yield entry
        folders = dict.fromkeys(self.roots + [os.path.dirname(e.path) for e in list(self.open.values())
                                               if e.path.endswith(CELL_FILE_SUFFIX)])
        for folder in folders:
            for entry in self._folder(folder, skip=None):
                if entry.path not in seen:
                    seen.add(entry.path)
                    yield entry

    def _folder(self, folder: str, skip: Optional[str]) -> Iterator[Entry]:
        """The `.cell` files of one folder: open ones as the editor has them, the others from disk."""
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(CELL_FILE_SUFFIX))[:MAX_FOLDER_FILES]
        except OSError:
            return
        open_by_path = {e.path: e for e in list(self.open.values())}
        for name in names:
            path = os.path.join(folder, name)
            if path == skip:
                continue
            entry = open_by_path.get(path) or self._from_disk(path)
            if entry is not None:
                yield entry

    def _from_disk(self, path: str) -> Optional[Entry]:
        """A closed file's entry, read again only when it changed; None when it cannot be read as text."""
        try:
            status = os.stat(path)
        except OSError:
            return None
        cached = self._closed.get(path)
        if cached is not None and cached[0] == status.st_mtime:
            return cached[1]
        if status.st_size > MAX_FILE_BYTES:
            return None
        try:
            with open(path, encoding="utf-8-sig") as handle:
                text = handle.read(MAX_FILE_BYTES)
        except (OSError, UnicodeDecodeError):
            return None
        entry = Entry(file_uri(path), path, analyse(text, path, path, check=False))
        self._closed[path] = (status.st_mtime, entry)
        return entry


def file_uri(path: str) -> str:
    """The file: URI of an absolute path."""
    return "file://" + quote(os.path.abspath(path))
