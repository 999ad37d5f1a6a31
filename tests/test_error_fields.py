"""Errors carry where they point as fields: a magic's caret comes from the
MagicError's `word` / `at_name`, a UserError's place from `file` / `line`,
never from reading the message text back."""

from __future__ import annotations

import pytest

from soma_kernel.core.errors import UserError
from soma_kernel.project.loader import load
from soma_kernel.session.magics import REGISTRY, MagicError, magic_span
from soma_kernel.session.magics.base import Magic
from soma_kernel.session.session import Session


def test_the_caret_follows_the_fields_not_the_words_of_the_message():
    line = "%diagram Counter typo"
    assert magic_span(line, 1, "Counter typo", word="typo").col == 18
    assert (magic_span(line, 1, "Counter typo", at_name=True).col,
            magic_span(line, 1, "Counter typo", at_name=True).end_col) == (1, 9)
    everything = magic_span(line, 1, "Counter typo")
    assert (everything.col, everything.end_col) == (10, 22)


def test_a_message_naming_an_argument_does_not_move_the_caret(tmp_path, monkeypatch):
    session = Session(directory=str(tmp_path))
    def probe(session, run, args, body):
        raise MagicError(f"bad {args}")

    monkeypatch.setitem(REGISTRY, "probe", Magic("probe", "%probe WORDS", "fails naming its arguments", probe))
    result = session.execute("%probe one two", "a", count=1)
    assert result.error == "error: cell[1]:1:8: bad one two\n1 | %probe one two\n  |        ^^^^^^^"


def test_a_user_error_says_which_file_and_line_it_points_at(tmp_path):
    missing = str(tmp_path / "nowhere.cell")
    with pytest.raises(UserError) as err:
        load(missing)
    assert (err.value.headline, err.value.file, err.value.line) == (f"{missing}: no such file", missing, 0)
    broken = tmp_path / "broken.cell"
    broken.write_text("cell A {\n    on f( {\n}\n", encoding="utf-8")
    with pytest.raises(UserError) as err:
        load(str(broken))
    assert (err.value.file, err.value.line) == (str(broken), 2)
    assert str(err.value).startswith(f"error: {err.value.headline}\n")


def test_a_load_error_in_a_notebook_is_shown_at_the_magic_with_its_headline(tmp_path):
    session = Session(directory=str(tmp_path))
    result = session.execute("%load nowhere.cell", "a", count=2)
    assert result.error_name == "UserError"
    headline = result.error_value.removeprefix("error: ")
    assert result.error == f"error: cell[2]:1:7: {headline}\n1 | %load nowhere.cell\n  |       ^^^^^^^^^^^^"


def test_assigning_to_an_undefined_name_carries_the_missing_name(tmp_path):
    session = Session(directory=str(tmp_path))
    session.execute("cell Tally {\n    memory {\n        seen: Map<String, Int>\n    }\n}", "a")
    result = session.execute("Tally += 1", "b", count=2)
    assert result.error == (
        "error: cell[2]:1:1: undefined_variable: undefined variable 'Tally'\n"
        "1 | Tally += 1\n"
        "  | ^^^^^\n"
        "  hint: `Tally` is a cell, not a value: its memory slots (`seen`) are read by their bare name inside "
        "its handlers, or at top level when no other cell has a slot of that name; `%memory Tally` shows them all")
