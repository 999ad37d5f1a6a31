"""`[persistent]` slots, machine instances, `next_id` and `remember()` state kept in a SQLite file.

- `schema`: the file format (per-entry rows, a change log, a version) and
  the migration of the older one-JSON-blob-per-slot files;
- `database`: opening the file (WAL, clear errors naming it), transactions,
  reading and writing entries;
- `changes`: what one invocation touched, fed by the runtime's change sites;
- `binding`: `SlotStore`, a runtime's bound cells and the transaction that
  wraps each top-level invocation.
"""

from .binding import SlotStore, default_store_path, is_persistent

__all__ = ["SlotStore", "default_store_path", "is_persistent", "open_store"]


def open_store(path: str) -> SlotStore:
    """The store file at `path` (created, or migrated from the older format, when needed)."""
    return SlotStore(path)
