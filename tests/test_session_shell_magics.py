"""IPython habits in the Soma session: %cd, %pwd, %env, %time, %timeit, %who, %history, %lsmagic, `?`, exit."""

from __future__ import annotations

import os
import re

import pytest

from soma_kernel.session.session import Session

from test_session import COUNTER


@pytest.fixture
def session(tmp_path, monkeypatch):
    """A fresh session in a temporary folder (the process's folder is restored after the test)."""
    monkeypatch.chdir(tmp_path)
    return Session(directory=str(tmp_path))


def out(result) -> str:
    """What a cell printed on stdout."""
    return result.stream_text()


def test_cd_moves_the_folder_that_load_save_and_read_file_start_from(session, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.txt").write_text("inside sub")
    (tmp_path / "sub" / "prog.cell").write_text("cell Hello {\n  on hi() { return \"hello\" }\n}\n")
    result = session.execute("%cd sub")
    assert result.ok and out(result).strip() == str(tmp_path / "sub")
    assert out(session.execute("%pwd")).strip() == str(tmp_path / "sub")
    assert session.execute("%load prog.cell").ok
    assert session.execute('read_file("data.txt")').result["text/plain"] == "inside sub"
    assert session.execute("%save copy.cell").ok
    assert (tmp_path / "sub" / "copy.cell").exists()
    assert out(session.execute("%cd -")).strip() == str(tmp_path)
    assert out(session.execute("%cd ..\n%pwd")).split("\n")[1] == str(tmp_path.parent)


@pytest.mark.parametrize("target", ["no/such/folder", "file.txt"])
def test_cd_to_something_that_is_no_folder_is_an_error_and_stays(session, tmp_path, target):
    (tmp_path / "file.txt").write_text("x")
    result = session.execute(f"%cd {target}")
    assert not result.ok and result.error_name == "MagicError" and "no folder" in result.error_value
    assert "^" in result.error and session.directory == str(tmp_path)


@pytest.mark.parametrize("name", ["MY_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "CLIENT_SECRET", "SOMA_LLM_KEY"])
def test_env_never_shows_a_secret(session, monkeypatch, name):
    monkeypatch.setenv(name, "sk-very-secret-value")
    assert out(session.execute(f"%env {name}")).strip() == "***"
    listing = out(session.execute("%env"))
    assert f"{name}=***" in listing and "sk-very-secret-value" not in listing
    assert "sk-other" not in out(session.execute(f"%env {name}=sk-other"))
    assert os.environ[name] == "sk-other"


def test_env_shows_and_sets_ordinary_variables(session, monkeypatch):
    monkeypatch.delenv("SOMA_PLAIN", raising=False)
    assert out(session.execute("%env SOMA_PLAIN=one two")).strip() == "env: SOMA_PLAIN=one two"
    assert os.environ["SOMA_PLAIN"] == "one two"
    assert out(session.execute("%env SOMA_PLAIN three")).strip() == "env: SOMA_PLAIN=three"
    assert out(session.execute("%env SOMA_PLAIN")).strip() == "three"
    missing = session.execute("%env SOMA_NOT_SET_ANYWHERE")
    assert not missing.ok and "is not set" in missing.error_value


def test_time_runs_the_statement_as_a_cell_line_and_prints_times(session):
    result = session.execute("let a = 20\n%time a * 2 + 2")
    assert result.ok and result.result["text/plain"] == "42"
    assert re.fullmatch(r"CPU time: [\d.]+ (s|ms|µs|ns)\nWall time: [\d.]+ (s|ms|µs|ns)\n", out(result))
    cell = session.execute("%%time\nlet b = 2\nb * 21")
    assert cell.ok and cell.result["text/plain"] == "42" and "Wall time" in out(cell)


def test_an_error_in_timed_code_has_its_caret_on_the_magic_line(session):
    result = session.execute("let a = 1\n%time a + missing_name")
    assert not result.ok
    lines = result.error.split("\n")
    assert lines[0].startswith("error: cell[1]:2:11: undefined_variable")
    source = next(line for line in lines if line.endswith("a + missing_name"))
    caret = lines[lines.index(source) + 1]
    assert caret.index("^") == source.index("missing_name")
    failed = session.execute("%%time\nlet ok = 1\nnope + 1")
    assert not failed.ok and failed.error.startswith("error: cell[2]:3:1:")


def test_timeit_times_statements_with_loops_and_repeats(session):
    assert session.execute(COUNTER).ok
    result = session.execute("%timeit -n 3 -r 4 Counter.bump(1)")
    assert result.ok and result.result is None
    assert re.fullmatch(r"[\d.]+ (s|ms|µs|ns) ± [\d.]+ (s|ms|µs|ns) per loop "
                        r"\(mean ± std\. dev\. of 4 runs, 3 loops each\)\n", out(result))
    assert session.execute("Counter.bump(1)").result["text/plain"] == "13"  # 12 timed runs, each a real call
    automatic = session.execute("%%timeit -r 1\nlet x = 1\nx + 1")
    assert automatic.ok and re.search(r"of 1 run, \d+ loops? each", out(automatic))


@pytest.mark.parametrize("code, message", [
    ("%timeit", "usage"), ("%timeit -n 0 1 + 1", "whole number"), ("%timeit -r x 1", "whole number"),
    ("%timeit cell A { }", "only statements"), ("%%timeit\n", "nothing to time"), ("%time", "usage"),
])
def test_timeit_misuse_is_a_clear_error(session, code, message):
    result = session.execute(code)
    assert not result.ok and message in result.error


def test_who_lists_top_level_names_types_and_definitions(session):
    assert out(session.execute("%who")).strip() == "nothing is defined yet"
    session.execute('let items = [1, 2, 3]\nlet who = "soma"\ncell Zed {\n  on z() { return 1 }\n}')
    lines = out(session.execute("%who")).splitlines()
    assert lines == ["items  List      [1, 2, 3]", 'who    String    soma', "definitions: Zed"]


def test_history_lists_this_session_and_searches(session):
    for code in ("1 + 1", "let q = 7", "q * 6"):
        session.execute(code)
    assert out(session.execute("%history")) == "1 + 1\nlet q = 7\nq * 6\n%history\n"
    assert out(session.execute("%history -n")) == ("     1: 1 + 1\n     2: let q = 7\n     3: q * 6\n     4: %history\n"
                                                    "     5: %history -n\n")
    assert out(session.execute("%history -g q")).splitlines() == ["let q = 7", "q * 6", "%history -g q"]
    assert out(session.execute("%history -n -l 1")).strip() == "0/7: %history -n -l 1"
    assert not session.execute("%history -l x").ok


def test_lsmagic_lists_line_and_cell_magics(session):
    text = out(session.execute("%lsmagic"))
    line_part, cell_part = text.split("Available cell magics:")
    for name in ("%cd", "%pwd", "%env", "%time", "%timeit", "%who", "%history", "%verify", "%load"):
        assert name in line_part.split()
    assert {"%%toml", "%%time", "%%timeit"} <= set(cell_part.split())


@pytest.mark.parametrize("code", ["?", "  ?  ", "?\n"])
def test_a_bare_question_mark_lists_the_help(session, code):
    result = session.execute(code)
    assert result.ok
    shown = result.displays[0]["text/plain"] if result.displays else out(result)
    assert "%verify" in shown and "?name" in shown


@pytest.mark.parametrize("code", ["exit", "quit", "exit()", " quit() \n"])
def test_exit_or_quit_alone_asks_the_console_to_end(session, code):
    result = session.execute(code)
    assert result.ok and result.payloads == [{"source": "ask_exit", "keepkernel": False}]


def test_exit_is_a_name_like_any_other_once_defined(session):
    session.execute("let exit = 5")
    result = session.execute("exit")
    assert result.payloads == [] and result.result["text/plain"] == "5"
    session.execute('cell Door {\n  on quit() { return "bye" }\n}')
    assert session.execute("quit()").payloads == []
