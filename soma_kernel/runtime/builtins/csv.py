"""CSV builtins: from_csv, read_csv, write_csv (RFC 4180 with a header row).

Unquoted cells are typed Int/Float/String (a leading-zero id such as 007
stays a String); a quoted cell stays a String; a short row is padded with
"", extra fields are dropped. `map("raw", true)` keeps every cell as text.
`write_csv` quotes any cell that reading back would split, trim or re-type."""

from __future__ import annotations

import re

from ...core.diagnostics import SomaError
from ...core.files import read_text_bounded
from ..capabilities import require_file
from ..values import display, to_json
from .checks import expect_list, expect_map, expect_str
from .registry import builtin

GROUP = "csv"
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def split_records(text: str) -> list[list[tuple[str, bool]]]:
    """The records of a CSV text: each a list of (cell text, was quoted)."""
    records, record, cell, quoted, i = [], [], [], False, 0
    in_quotes, n = False, len(text)
    while i < n:
        c = text[i]
        if in_quotes:
            if c == '"' and i + 1 < n and text[i + 1] == '"':
                cell.append('"')
                i += 1
            elif c == '"':
                in_quotes = False
            else:
                cell.append(c)
        elif c == '"' and not cell:
            in_quotes, quoted = True, True
        elif c == ",":
            record.append(("".join(cell), quoted))
            cell, quoted = [], False
        elif c in "\r\n":
            if c == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            record.append(("".join(cell), quoted))
            records.append(record)
            record, cell, quoted = [], [], False
        else:
            cell.append(c)
        i += 1
    if in_quotes:
        raise SomaError("csv", "unterminated quoted cell")
    if cell or record or quoted:
        record.append(("".join(cell), quoted))
        records.append(record)
    return [r for r in records if r != [("", False)]]


def typed_cell(text: str, quoted: bool, raw: bool):
    """A cell's value: a number when unquoted text reads as one, else the text."""
    if quoted or raw:
        return text
    stripped = text.strip()
    if NUMBER.fullmatch(stripped) and not re.match(r"-?0[0-9]", stripped):
        return float(stripped) if any(c in stripped for c in ".eE") else int(stripped)
    return stripped


def rows_of(text: str, options: dict) -> list[dict]:
    """CSV text with a header row as a list of Maps."""
    records = split_records(text)
    if not records:
        return []
    raw = options.get("raw") is True
    header = [name for name, _ in records[0]]
    rows = []
    for record in records[1:]:
        cells = record[: len(header)] + [("", True)] * (len(header) - len(record))
        rows.append({name: typed_cell(cell, quoted, raw) for name, (cell, quoted) in zip(header, cells)})
    return rows


@builtin(GROUP, "from_csv(text: String, opts?: Map) -> List<Map>", "Parse CSV text with a header row into maps.")
def from_csv(text, options=None):
    """from_csv("a,b\\n1,x") = [{a: 1, b: "x"}]."""
    return rows_of(expect_str("from_csv", text), expect_map("from_csv", options) if options is not None else {})


@builtin(GROUP, "read_csv(path: String, opts?: Map) -> List<Map> | {error}",
         "Read a CSV file with a header row into maps; {error} on failure.", pure=False)
def read_csv(path, options=None):
    """read_csv("orders.csv")."""
    opts = expect_map("read_csv", options) if options is not None else {}
    require_file("read_csv", expect_str("read_csv", path), "read")
    try:
        text = read_text_bounded(path, encoding="utf-8-sig", newline="")
    except (OSError, UnicodeDecodeError) as err:
        return {"error": f"{path}: {err.strerror if isinstance(err, OSError) and err.strerror else err}"}
    return rows_of(text, opts)


def cell_text(value) -> str:
    """A value as one CSV cell, quoted when reading it back would change it."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        text = to_json(value)
    else:
        text = display(value)
    needs_quotes = (any(c in text for c in ',"\r\n') or text != text.strip()
                    or (isinstance(value, str) and typed_cell(text, False, False) != text))
    return '"' + text.replace('"', '""') + '"' if needs_quotes else text


@builtin(GROUP, "write_csv(path: String, rows: List<Map>) -> Bool | {error}",
         "Write rows as CSV with the first row's keys as the header.", pure=False)
def write_csv(path, rows):
    """write_csv("out.csv", rows)."""
    require_file("write_csv", expect_str("write_csv", path), "write")
    rows = expect_list("write_csv", rows)
    header = [k for k in (rows[0] if rows and isinstance(rows[0], dict) else {}) if not str(k).startswith("_")]
    lines = [",".join(cell_text(h) for h in header)]
    for row in rows:
        row = expect_map("write_csv", row)
        lines.append(",".join(cell_text(row.get(h)) for h in header))
    try:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write("\r\n".join(lines) + "\r\n")
    except OSError as err:
        return {"error": f"{path}: {err.strerror}"}
    return True

