"""How a Soma value shows in a notebook.

A cell whose last statement is an expression shows its value:

- text/plain is the Soma display form, exactly what `print` would write;
- a Map also gets an HTML key/value table, and a List whose items are all
  Maps gets one table with a column per key (keys in order of first
  appearance), like a small data frame;
- Unit `()` has no bundle here: the session shows `()` itself, except
  after a call made for its effect (`print(…)`, `remember(…)` …).

Tables are deterministic (value order, no ids) and every cell is
HTML-escaped; at most MAX_TABLE_ROWS rows are drawn.
"""

from __future__ import annotations

import html
from typing import Any, Optional

from ..runtime.values import display

MAX_TABLE_ROWS = 1000


def value_bundle(value: Any) -> Optional[dict]:
    """The mime bundle of a value, or None for Unit."""
    if value is None:
        return None
    bundle = {"text/plain": display(value)}
    table = value_table_html(value)
    if table is not None:
        bundle["text/html"] = table
    return bundle


def value_table_html(value: Any) -> Optional[str]:
    """An HTML table for a non-empty Map or List of Maps, else None."""
    if isinstance(value, dict) and value:
        return _map_table(value)
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return _rows_table(value)
    return None


def _cell(value: Any) -> str:
    """A value as the escaped text of one table cell."""
    return html.escape(display(value))


def _map_table(mapping: dict) -> str:
    """Key/value rows of one Map."""
    rows = [f"<tr><th>{_cell(key)}</th><td>{_cell(item)}</td></tr>"
            for key, item in list(mapping.items())[:MAX_TABLE_ROWS]]
    head = "<thead><tr><th>key</th><th>value</th></tr></thead>"
    return _table(head, rows, len(mapping))


def _rows_table(items: list) -> str:
    """One row per Map, one column per key seen in any of them."""
    columns: dict[Any, None] = {}
    for item in items:
        columns.update(dict.fromkeys(item))
    head = "<thead><tr>" + "".join(f"<th>{_cell(c)}</th>" for c in columns) + "</tr></thead>"
    rows = ["<tr>" + "".join(f"<td>{_cell(item[c]) if c in item else ''}</td>" for c in columns) + "</tr>"
            for item in items[:MAX_TABLE_ROWS]]
    return _table(head, rows, len(items))


def _table(head: str, rows: list[str], total: int) -> str:
    """Wrap header and rows, noting rows left out."""
    parts = ['<table class="soma-value">', head, "<tbody>", *rows, "</tbody>", "</table>"]
    if total > len(rows):
        parts.append(f"<p>… {total - len(rows)} more rows</p>")
    return "\n".join(parts) + "\n"
