"""Every file the kernel reads for the user is read within SOMA_MAX_FILE_BYTES (core/files.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from soma_kernel.core.files import (DEFAULT_MAX_FILE_BYTES, FileTooLarge, describe_size, max_file_bytes,
                                    parse_size, read_text_bounded)
from soma_kernel.session.session import Session

from helpers import call

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def small_limit(monkeypatch):
    """A read limit of 1 KiB for the test."""
    monkeypatch.setenv("SOMA_MAX_FILE_BYTES", "1K")


def test_sizes_are_read_with_suffixes_and_bad_ones_refused(monkeypatch):
    assert [parse_size(t) for t in ("1000", "64K", "2m", " 1G ")] == [1000, 65536, 2 * 1024 ** 2, 1024 ** 3]
    for bad in ("", "0", "-5", "12X", "1.5M", "M", "ten"):
        with pytest.raises(ValueError, match="SOMA_MAX_FILE_BYTES="):
            parse_size(bad)
    monkeypatch.delenv("SOMA_MAX_FILE_BYTES", raising=False)
    assert max_file_bytes() == DEFAULT_MAX_FILE_BYTES == 32 * 1024 ** 2
    assert [describe_size(n) for n in (900, 1024, 1536, 32 * 1024 ** 2, 3 * 1024 ** 3)] == [
        "900 bytes", "1 KiB", "1.5 KiB", "32 MiB", "3 GiB"]


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"a\r\nb" + b"x" * 96)
    assert read_text_bounded(str(path), limit=100) == "a\nb" + "x" * 96  # newlines as open() gives them
    assert read_text_bounded(str(path), newline="", limit=100) == "a\r\nb" + "x" * 96
    with pytest.raises(FileTooLarge) as err:
        read_text_bounded(str(path), limit=99)
    assert err.value.strerror == "larger than the 99 bytes read limit (set SOMA_MAX_FILE_BYTES to read bigger files)"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_that_never_ends_stops_at_the_limit(device):
    with pytest.raises(FileTooLarge):
        read_text_bounded(device, limit=4096)


def test_a_named_pipe_is_refused_instead_of_waited_on(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as err:
        read_text_bounded(str(fifo))
    assert err.value.strerror == "a named pipe, not a file"


def test_read_file_and_read_csv_answer_an_error_past_the_limit(tmp_path, small_limit):
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "1,2\n" * 400)
    for name in ("read_file", "read_csv"):
        answer = call(name, str(big))
        assert answer == {"error": f"{big}: larger than the 1 KiB read limit "
                                   "(set SOMA_MAX_FILE_BYTES to read bigger files)"}, name
    small = tmp_path / "small.csv"
    small.write_text("a,b\n1,2\n")
    assert call("read_csv", str(small)) == [{"a": 1, "b": 2}]
    assert call("read_file", "/dev/zero") == {
        "error": "/dev/zero: larger than the 1 KiB read limit (set SOMA_MAX_FILE_BYTES to read bigger files)"}


def test_a_bad_limit_is_named_in_the_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SOMA_MAX_FILE_BYTES", "lots")
    path = tmp_path / "x.txt"
    path.write_text("hi")
    assert call("read_file", str(path)) == {
        "error": f"{path}: SOMA_MAX_FILE_BYTES='lots' is not a size in bytes (for example 1000000, 64M or 1G)"}


def test_load_of_a_too_large_program_is_a_user_error(tmp_path, small_limit):
    (tmp_path / "big.cell").write_text("// filler\n" * 200)
    session = Session(directory=str(tmp_path))
    result = session.execute("%load big.cell", count=3)
    assert result.error_name == "UserError"
    assert result.error_value.endswith("big.cell: larger than the 1 KiB read limit "
                                       "(set SOMA_MAX_FILE_BYTES to read bigger files)")
    assert session.execute("1 + 1").result["text/plain"] == "2"


def test_a_too_large_soma_toml_and_mock_rules_are_refused(tmp_path, small_limit):
    from soma_kernel.core.errors import UserError
    from soma_kernel.project.settings import load_project

    (tmp_path / "soma.toml").write_text("# filler\n" * 200)
    with pytest.raises(UserError) as err:
        load_project(str(tmp_path))
    assert str(err.value) == (f"error: {tmp_path}/soma.toml: cannot read soma.toml (larger than the 1 KiB read "
                              "limit (set SOMA_MAX_FILE_BYTES to read bigger files))")


def test_load_dev_zero_fails_fast_in_a_memory_capped_process(tmp_path):
    """`%load /dev/zero` under a 1 GiB address-space cap: an error, not a MemoryError or a kill."""
    script = textwrap.dedent("""
        import resource, sys
        from soma_kernel.session.session import Session
        session = Session()
        cap = 1024 ** 3
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        result = session.execute("%load /dev/zero")
        print(result.error_name)
        print(result.error_value)
        print(session.execute("40 + 2").result["text/plain"])
    """)
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("SOMA_MAX_FILE_BYTES", None)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "UserError",
        "/dev/zero: larger than the 32 MiB read limit (set SOMA_MAX_FILE_BYTES to read bigger files)",
        "42"]


def test_a_too_large_skill_file_is_noted_once_and_the_default_prompt_used(tmp_path, small_limit):
    from soma_kernel.runtime.agent import DEFAULT_SYSTEM

    (tmp_path / "style.md").write_text("Be terse.\n" * 200)
    notes = []
    session = Session(directory=str(tmp_path))
    assert session.execute('cell agent Styled [skill: "style.md"] {\n    on ask(q: String) { return think(q) }\n}').ok
    agent = session.runtime.agent
    agent.note = notes.append
    assert agent.system_prompt("Styled") == DEFAULT_SYSTEM
    assert agent.system_prompt("Styled") == DEFAULT_SYSTEM
    assert notes == ["[agent] skill file style.md: larger than the 1 KiB read limit (set SOMA_MAX_FILE_BYTES to read "
                     "bigger files) — the default system prompt is used"]
