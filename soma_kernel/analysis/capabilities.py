"""Tool capability clauses: `soma check` refuses one the runtime cannot enforce.

A `[capability: "…"]` is a promise about what the tool body may reach; a
scope of an unknown form (`smtp:…`, `db:read`, a `*` in the middle) would be
silently unenforced, so it is an error here, worded by
runtime.capabilities.parse_clause (the runtime's own reading).
"""

from __future__ import annotations

from .context import ProgramIndex, Reporter


def check(index: ProgramIndex, report: Reporter, project: object) -> None:
    """Report every tool whose capability clause cannot be enforced."""
    for info in index.cells.values():
        face = info.decl.face
        for tool in face.tools if face is not None else ():
            if tool.capability is None:
                continue
            from ..runtime.capabilities import ClauseError, parse_clause  # lazy: few programs declare a clause

            try:
                parse_clause(tool.capability, tool=tool.name)
            except ClauseError as err:
                report.error(tool, f"tool '{tool.name}': {err}", "capability",
                             "scopes are separated by spaces: \"https://api.example.com/* fs:read:data/\"")
