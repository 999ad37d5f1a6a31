"""soma.toml: the project settings read beside a program.

`load_project(directory)` finds and validates the manifest; the kernel's
`%%toml` cell magic validates text with `parse_project_text`. A bad manifest
is fatal for every command, so every problem is a `UserError` worded
`error: <path>:<line>:<col>: <message>` with the offending line and a caret.

Validation rules: unknown top-level sections, unknown keys in `[agent]`,
`[verify]`, `[verify.after.X]` and `[verify.before.X]`, values of the wrong
type, a negative count, an unknown `provider` or `mock` mode (with did you
mean) and empty state lists are errors. `[verify] cells = []` is allowed (it
means every cell of the file).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from ..core.diagnostics import caret_lines
from ..core.errors import UserError
from ..core.files import read_text_bounded
from ..core.records import Record, fresh
from ..core.spelling import near_miss
from ..syntax.ast import Span

MANIFEST_NAME = "soma.toml"

KNOWN_SECTIONS = (
    "package", "dependencies", "peers", "bus", "agent", "models", "verify", "compute", "cluster",
)
AGENT_STRING_KEYS = ("mock", "key", "provider", "model", "url", "cassette")
AGENT_INT_KEYS = ("retries", "rpm", "tpm")
AGENT_KEYS = AGENT_STRING_KEYS + AGENT_INT_KEYS + ("capabilities",)
PROVIDERS = ("openai", "anthropic", "ollama")
MOCK_MODES = ("echo", "fixed:TEXT", "rules:FILE.json")
VERIFY_LIST_KEYS = ("eventually", "never", "always")
VERIFY_KEYS = ("cells", "deadlock_free", "fair") + VERIFY_LIST_KEYS + ("after", "before")
AFTER_KEYS = ("eventually", "never")
BEFORE_KEYS = ("requires", "requires_all")


class VerifySettings(Record):
    """The `[verify]` section: temporal properties over state names.

    `after` maps a state X to `{"eventually": [...], "never": [...]}` (keys
    present only when written); `before` maps a state T to `{"requires":
    [...], "requires_all": [...]}`. Empty lists mean "not given".
    """

    cells: list[str] = fresh(list)
    eventually: list[str] = fresh(list)
    never: list[str] = fresh(list)
    always: list[str] = fresh(list)
    after: dict[str, dict[str, list[str]]] = fresh(dict)
    before: dict[str, dict[str, list[str]]] = fresh(dict)
    fair: bool = True  # `fair = false`: liveness without the fairness assumption (as --unfair)

    @property
    def has_properties(self) -> bool:
        """True when at least one user-defined temporal property is written."""
        return bool(self.eventually or self.never or self.always or self.after or self.before)


class ProjectConfig(Record):
    """A validated soma.toml: where it is, `[package]`, `[agent]` and `[verify]`."""

    path: str
    package: dict = fresh(dict)
    agent: dict = fresh(dict)
    verify: VerifySettings = fresh(VerifySettings)
    models: dict = fresh(dict)
    text: str = ""

    @property
    def entry(self) -> Optional[str]:
        """`[package] entry`, the project's main program, when written."""
        value = self.package.get("entry")
        return value if isinstance(value, str) else None


def unknown_model(project: Optional[ProjectConfig], cell) -> Optional[tuple[str, str]]:
    """(message, hint) when `cell agent X [model: NAME]` names a model the soma.toml does not
    define as `[models.NAME]` (such a cell would silently talk to the defaults), else None."""
    name = (getattr(cell, "options", None) or {}).get("model")
    models = project.models if project is not None else {}
    if name is None or name in models:
        return None
    if project is None:
        where = "there is no soma.toml"
    elif not models:
        where = "it defines no [models] table"
    else:
        where = f"it defines [models.{'], [models.'.join(models)}]"
    slip = near_miss(name, models)
    hint = (f"did you mean '{slip}'?" if slip
            else f"add a [models.{name}] table to the soma.toml, or remove `model: {name}`")
    return f"cell {cell.name} names model '{name}', which the soma.toml does not define ({where})", hint


def load_project(directory: str) -> Optional[ProjectConfig]:
    """The soma.toml of `directory`, validated; None when there is none."""
    path = os.path.join(directory, MANIFEST_NAME)
    if not os.path.isfile(path):
        return None
    try:
        text = read_text_bounded(path, encoding="utf-8-sig")
    except OSError as err:
        raise UserError(f"{path}: cannot read soma.toml ({err.strerror or err})", path) from None
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: cannot read soma.toml ({err})", path) from None
    return parse_project_text(text, path)


def parse_project_text(text: str, path: str) -> ProjectConfig:
    """Validate soma.toml text (`path` names it in messages) into a ProjectConfig."""
    import tomllib  # lazy: only a folder with a soma.toml needs the TOML parser

    locator = _KeyLocator(text, path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise locator.syntax_error(str(err)) from None
    for section in data:
        if section not in KNOWN_SECTIONS:
            known = ", ".join(f"[{s}]" for s in KNOWN_SECTIONS)
            raise locator.error((), section, f"unknown section [{section}] (known: {known})",
                                _rename_hint(section, KNOWN_SECTIONS, "section"))
    package = _table(data, "package", (), locator)
    agent = _agent_section(_table(data, "agent", (), locator), locator)
    verify = _verify_section(_table(data, "verify", (), locator), locator)
    models = _table(data, "models", (), locator)
    for name, settings in models.items():
        if not isinstance(settings, dict):
            raise locator.error(("models",), name, f"[models.{name}] must be a table")
        _agent_section(settings, locator, ("models", name))
    return ProjectConfig(path, dict(package), agent, verify, dict(models), text)


def _table(data: dict, key: str, where: tuple, locator: "_KeyLocator") -> dict:
    """The sub-table `key` of `data` ({} when absent), or an error when not a table."""
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise locator.error(where, key, f"'{_dotted(where + (key,))}' must be a table, found {_toml_type(value)}")
    return value


def _agent_section(table: dict, locator: "_KeyLocator", where: tuple = ("agent",)) -> dict:
    """Validate `[agent]` (or `[models.NAME]`): known keys with the right types."""
    section = _dotted(where)
    for key, value in table.items():
        if key in AGENT_STRING_KEYS:
            _expect(isinstance(value, str), locator, where, key, "a string", value)
            _check_agent_word(key, value, locator, where)
        elif key in AGENT_INT_KEYS:
            _expect(isinstance(value, int) and not isinstance(value, bool), locator, where, key, "an integer", value)
            if value < 0:
                raise locator.error(where, key, f"'{_dotted(where + (key,))}' is {value}: it must be 0 or more")
        elif key == "capabilities":
            _expect_string_list(value, locator, where, key, allow_empty=True)
        else:
            raise locator.error(where, key, f"unknown key '{key}' in [{section}] (known: {', '.join(AGENT_KEYS)})",
                                _rename_hint(key, AGENT_KEYS))
    return dict(table)


def _check_agent_word(key: str, value: str, locator: "_KeyLocator", where: tuple) -> None:
    """`provider` must name a provider this implementation speaks, `mock` a mock mode (§8.2):
    anything else is an error here rather than a wrong wire format or a failure at the first think()."""
    name = _dotted(where + (key,))
    if key == "provider" and value.lower() not in PROVIDERS:
        raise locator.error(where, key, f"'{name}' is '{value}', which is no provider this implementation speaks "
                            f"(providers: {', '.join(PROVIDERS)})",
                            _value_hint(value.lower(), PROVIDERS, "or use `openai` with a `url` for any "
                                        "OpenAI-compatible server"))
    if key == "mock" and value != "echo" and not value.startswith(("fixed:", "rules:")):
        raise locator.error(where, key, f"'{name}' is '{value}', which is no mock mode "
                            f"(modes: {', '.join(MOCK_MODES)})", _mock_hint(value))


def _mock_hint(value: str) -> str:
    """The mode a wrong `mock` value was probably meant to be (`ecko` → echo, `rule:x.json` →
    rules:x.json, `fixed` → fixed:TEXT), else how to write one."""
    head, colon, rest = value.partition(":")
    word = head if head in ("echo", "fixed", "rules") else near_miss(head, ("echo", "fixed", "rules"))
    if word == "echo" and not colon:
        return "did you mean 'echo'?"
    if word in ("fixed", "rules"):
        return f"did you mean '{word}:{rest or ('TEXT' if word == 'fixed' else 'FILE.json')}'?"
    return "write one of the modes, or remove the key"


def _value_hint(value: str, known: tuple, otherwise: str) -> str:
    """`did you mean 'x'?` for a near miss of a known value, else `otherwise`."""
    slip = near_miss(value, known)
    return f"did you mean '{slip}'?" if slip else otherwise


def _verify_section(table: dict, locator: "_KeyLocator") -> VerifySettings:
    """Validate `[verify]` and its `after`/`before` sub-tables."""
    where = ("verify",)
    settings = VerifySettings()
    for key, value in table.items():
        if key == "cells":
            settings.cells = _expect_string_list(value, locator, where, key, allow_empty=True)
        elif key == "deadlock_free":
            _expect(isinstance(value, bool), locator, where, key, "a boolean", value)
        elif key == "fair":
            _expect(isinstance(value, bool), locator, where, key, "a boolean", value)
            settings.fair = value
        elif key in VERIFY_LIST_KEYS:
            # An empty top-level list states no property (the reference's manifest
            # defaults these keys to []); only `before`/`after` lists must name a state.
            setattr(settings, key, _expect_string_list(value, locator, where, key, allow_empty=True))
        elif key in ("after", "before"):
            allowed = AFTER_KEYS if key == "after" else BEFORE_KEYS
            parsed = _anchored_tables(value, locator, key, allowed)
            setattr(settings, key, parsed)
        else:
            raise locator.error(where, key, f"unknown key '{key}' in [verify] (known: {', '.join(VERIFY_KEYS)})",
                                _rename_hint(key, VERIFY_KEYS))
    return settings


def _anchored_tables(value: object, locator: "_KeyLocator", kind: str, allowed: tuple) -> dict:
    """Validate `[verify.after.X]` / `[verify.before.T]` tables keyed by state."""
    where = ("verify",)
    if not isinstance(value, dict):
        raise locator.error(where, kind, f"'verify.{kind}' must hold tables such as [verify.{kind}.STATE]")
    result: dict[str, dict[str, list[str]]] = {}
    for state, table in value.items():
        inner = ("verify", kind, state)
        if not isinstance(table, dict):
            raise locator.error(("verify", kind), state, f"[verify.{kind}.{state}] must be a table")
        if not table:
            raise locator.error(("verify", kind), state, f"[verify.{kind}.{state}] is empty: give {' or '.join(allowed)}")
        entry: dict[str, list[str]] = {}
        for key, items in table.items():
            if key not in allowed:
                raise locator.error(inner, key, f"unknown key '{key}' in [verify.{kind}.{state}] (known: {', '.join(allowed)})",
                                    _rename_hint(key, allowed))
            entry[key] = _expect_string_list(items, locator, inner, key)
        result[state] = entry
    return result


def _expect(ok: bool, locator: "_KeyLocator", where: tuple, key: str, wanted: str, value: object) -> None:
    """Raise a type error for `key` unless `ok`."""
    if not ok:
        raise locator.error(where, key, f"'{_dotted(where + (key,))}' must be {wanted}, found {_toml_type(value)}")


def _expect_string_list(value: object, locator: "_KeyLocator", where: tuple, key: str,
                        allow_empty: bool = False) -> list[str]:
    """A list of strings (non-empty unless allowed), or a positioned error."""
    name = _dotted(where + (key,))
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise locator.error(where, key, f"'{name}' must be a list of strings, found {_toml_type(value)}")
    if not value and not allow_empty:
        raise locator.error(where, key, f"'{name}' is an empty list: name at least one state, or remove the key")
    return list(value)


def _rename_hint(name: str, known: tuple, what: str = "key") -> str:
    """The fix for an unknown key or section: the closest known name, or removal."""
    import difflib  # lazy: spelling suggestions are only made for a mistake

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'? rename the {what}"
    return f"remove the {what}, or use one of the known names"


def _dotted(parts: tuple) -> str:
    """`("verify", "after", "paid")` → `verify.after.paid`."""
    return ".".join(str(p) for p in parts)


def _toml_type(value: object) -> str:
    """The TOML word for a parsed value's type, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array" if not value or not all(isinstance(v, str) for v in value) else "an array of strings"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


# Patterns, compiled when a soma.toml is read (through `re`'s cache) rather than by every command at import.
_HEADER = r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$"
_KEY = r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.\-"' ]+?)\s*="""
_TOML_POSITION = r"\(at line (\d+), column (\d+)\)"


class _KeyLocator:
    """Finds where a key or table header sits in the manifest text, for carets."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.entries: list[tuple[tuple, str, int, int]] = []
        self._index()

    def _index(self) -> None:
        """Record (table, key, line, col) for every key line and table header."""
        table: tuple = ()
        header_line, key_line = re.compile(_HEADER), re.compile(_KEY)
        for number, line in enumerate(self.text.splitlines(), start=1):
            header = header_line.match(line)
            if header:
                parts = tuple(_unquote(p) for p in header.group(1).split("."))
                col = line.index(header.group(1)) + 1
                for depth in range(1, len(parts) + 1):
                    self.entries.append((parts[:depth - 1], parts[depth - 1], number, col))
                table = parts
                continue
            key = key_line.match(line)
            if key:
                parts = tuple(_unquote(p) for p in key.group(1).split("."))
                col = line.index(key.group(1).strip()) + 1
                for depth in range(1, len(parts) + 1):
                    self.entries.append((table + parts[:depth - 1], parts[depth - 1], number, col))

    def position(self, where: tuple, key: str) -> tuple[int, int, int]:
        """(line, col, width) of `key` written in table `where`; (0, 0, 0) if not found."""
        for table, name, line, col in self.entries:
            if table == tuple(where) and name == key:
                return line, col, len(key)
        return 0, 0, 0

    def error(self, where: tuple, key: str, message: str, hint: Optional[str] = None) -> UserError:
        """A UserError pointing at `key` of table `where` (with an optional fix)."""
        line, col, width = self.position(where, key)
        return self._located(line, col, width, message, hint)

    def syntax_error(self, message: str) -> UserError:
        """A UserError from a TOML syntax error, at the position tomllib reports."""
        found = re.search(_TOML_POSITION, message)
        line, col = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
        text = re.sub(_TOML_POSITION, "", message).strip()
        return self._located(line, col, 1, f"invalid TOML: {text}")

    def _located(self, line: int, col: int, width: int, message: str, hint: Optional[str] = None) -> UserError:
        """Format `error: path:line:col: message` with the source line, a caret and the fix."""
        notes = (f"  hint: {hint}",) if hint else ()
        if line <= 0:
            return UserError(f"{self.path}: {message}", self.path, 0, notes)
        span = Span(line, col, line, col + max(width, 1), 0, 0)
        headline = f"{self.path}:{line}:{col}: {message}"
        shown = "\n".join([f"error: {headline}", *caret_lines(self.text, span), *notes])
        return UserError(headline, self.path, line, notes, shown)


def _unquote(part: str) -> str:
    """A TOML key part without surrounding quotes or spaces."""
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'":
        return part[1:-1]
    return part
