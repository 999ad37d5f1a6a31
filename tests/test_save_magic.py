"""%save FILE [--force]: it writes a new file, and never replaces an existing one or writes through a
symbolic link unless told to with --force (then whole or not at all)."""

from __future__ import annotations

import os

import pytest

from soma_kernel.session.session import Session

PROGRAM = "cell A {\n    on f() { return 1 }\n}"


@pytest.fixture
def session(tmp_path):
    """A session in tmp_path with one definition."""
    session = Session(str(tmp_path))
    assert session.execute(PROGRAM).ok
    return session


def test_save_writes_a_new_file(session, tmp_path):
    result = session.execute("%save new.cell")
    assert result.stream_text() == "saved 1 definition(s) to new.cell\n"
    assert "cell A" in (tmp_path / "new.cell").read_text()


@pytest.mark.parametrize("existing", ["a hand-written file", "an empty file", "a read-only file", "a folder"])
def test_save_never_replaces_an_existing_name(session, tmp_path, existing):
    target = tmp_path / "prog.cell"
    if existing == "a folder":
        target.mkdir()
    else:
        target.write_text("" if existing == "an empty file" else "// my notes, written by hand\n")
        if existing == "a read-only file":
            target.chmod(0o444)
    before = None if existing == "a folder" else target.read_bytes()
    result = session.execute("%save prog.cell")
    assert not result.ok
    assert result.error_value == ("prog.cell exists: %save never replaces a file; "
                                  "`%save prog.cell --force` overwrites it")
    assert before is None or target.read_bytes() == before


@pytest.mark.parametrize("pointing_at", ["an unrelated file", "a missing file", "a file elsewhere"])
def test_save_never_writes_through_a_symbolic_link(session, tmp_path, pointing_at):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = {"an unrelated file": tmp_path / "unrelated.txt", "a missing file": tmp_path / "missing.txt",
              "a file elsewhere": elsewhere / "other.cell"}[pointing_at]
    if pointing_at != "a missing file":
        target.write_text("precious\n")
    os.symlink(target, tmp_path / "link.cell")
    result = session.execute("%save link.cell")
    assert result.error_value == (f"link.cell is a symbolic link (to {target}): %save does not write through it; "
                                  "`%save link.cell --force` writes to where it points")
    assert (target.read_text() == "precious\n") if pointing_at != "a missing file" else not target.exists()
    assert os.path.islink(tmp_path / "link.cell")


def test_save_force_overwrites_and_keeps_the_files_mode(session, tmp_path):
    target = tmp_path / "prog.cell"
    target.write_text("old\n")
    target.chmod(0o640)
    assert session.execute("%save prog.cell --force").stream_text() == "saved 1 definition(s) to prog.cell\n"
    assert "cell A" in target.read_text() and (target.stat().st_mode & 0o777) == 0o640


def test_save_force_writes_where_a_link_points_and_says_so(session, tmp_path):
    target = tmp_path / "real.cell"
    target.write_text("old\n")
    os.symlink(target, tmp_path / "link.cell")
    result = session.execute("%save --force link.cell")
    assert result.stream_text() == f"saved 1 definition(s) to link.cell (through the symbolic link, to {target})\n"
    assert "cell A" in target.read_text() and os.path.islink(tmp_path / "link.cell")
