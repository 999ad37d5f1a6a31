"""%verify and %test of a big program: a summary (counts, first lines, every failure shortened,
first states and edges), the whole report on demand (`--full`) and in a file; progress while it runs.
Small reports are left whole (the notebooks' saved outputs pin them)."""

from __future__ import annotations

import os
import tempfile

import pytest

from soma_kernel.session.reports import SUMMARY_ABOVE_LINES
from soma_kernel.session.session import Session


def chain(states: int, trap: bool = False) -> str:
    """A cell whose machine is a chain of `states` states (a ⚠ line per unreached edge); with `trap`,
    s1 also leads to `done` and the chain's end loops back, so `eventually done` has a long counter-example."""
    edges = "\n".join(f"        s{i} -> s{i + 1}" for i in range(states - 1))
    loop = f"\n        s{states - 1} -> s{states - 2}\n        s1 -> done" if trap else ""
    return ("cell Big {\n    face {\n        signal step(id: String) -> String\n    }\n"
            f"    state big {{\n        initial: s0\n{edges}{loop}\n    }}\n"
            "    on step(id: String) {\n        transition(id, \"s1\")\n        return \"ok\"\n    }\n}\n")


@pytest.fixture(autouse=True)
def saved_reports_in(tmp_path, monkeypatch):
    """The whole reports a summary saves go to the test's own folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def displays(result) -> list[dict]:
    return [o.bundle for o in result.outputs if o.kind == "display"]


def streamed(result) -> str:
    return "".join(o.text for o in result.outputs if o.kind == "stream")


@pytest.fixture
def big(tmp_path):
    session = Session(directory=str(tmp_path))
    assert not session.execute(chain(3000)).error
    return session


def test_a_big_verify_report_is_a_summary_with_the_whole_text_in_a_file(big):
    bundle, = displays(big.execute("%verify"))
    text = bundle["text/plain"]
    whole, = displays(big.execute("%verify --full"))
    assert len(whole["text/plain"]) > 100 * len(text)
    assert len(text) + len(bundle["text/html"]) < 20_000
    lines = text.splitlines()
    assert lines[0] == whole["text/plain"].rstrip().splitlines()[-1]       # the verdict first
    assert lines[2] == "big  ✓ 8  ⚠ 2998  ✗ 0"                            # the whole section's counts
    assert "  · states (3000): s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, …" in lines
    assert "  … and 2,987 more lines (1 ·, 2,985 ⚠, 1 ✓)" in lines
    path = lines[-1].rpartition("its text is in ")[2]
    assert os.path.dirname(path) == big.directory
    with open(path, encoding="utf-8") as saved:
        assert saved.read() == whole["text/plain"]


def test_a_failure_and_its_counter_example_are_in_the_summary_shortened(tmp_path):
    session = Session(directory=str(tmp_path))
    session.execute(chain(3000, trap=True))
    session.execute('%%toml\n[verify]\neventually = ["done"]\n')
    text = displays(session.execute("%verify"))[0]["text/plain"]
    failure = [line for line in text.splitlines() if line.startswith("  ✗ eventually")]
    assert failure and "counter-example: s0 → s1 → s2" in text
    assert max(len(line) for line in text.splitlines()) < 400
    assert "more characters)" in text


def test_a_report_at_the_limit_is_whole_and_small_reports_show_no_progress(tmp_path):
    session = Session(directory=str(tmp_path))
    session.execute(chain(SUMMARY_ABOVE_LINES - 20))
    result = session.execute("%verify")
    text = displays(result)[0]["text/plain"]
    assert "summary of a report" not in text and text == displays(session.execute("%verify --full"))[0]["text/plain"]
    assert streamed(result) == ""


def test_a_big_verify_shows_its_progress_as_one_line_redrawn(big):
    progress = streamed(big.execute("%verify"))
    steps = progress.split("\r")[1:]
    assert [step.split(" (")[0] for step in steps] == ["verify ■□□ checking and model-checking",
                                                        "verify ■■□ writing the report", "verify ■■■ done"]
    assert progress.endswith("(2,999 edge lines)\n")


def test_a_big_test_report_is_summarised_and_whole_with_full(tmp_path):
    session = Session(directory=str(tmp_path))
    rules = "\n".join(f"        assert {i} + 1 == {i + 1}" for i in range(600)) + "\n        assert 1 == 2"
    session.execute(f"cell Tiny {{\n    on ping() {{ return 1 }}\n}}\ncell test Many {{\n    rules {{\n{rules}\n    }}\n}}\n")
    text = displays(session.execute("%test"))[0]["text/plain"]
    assert "test Many  ✓ 600  ⚠ 0  ✗ 1" in text and "  ✗ cell[1]:606  assert 1 == 2 — FAILED" in text.splitlines()
    assert "… and 580 more lines (580 ✓)" in text
    whole = displays(session.execute("%test Many --full"))[0]["text/plain"]
    assert "summary of a report" not in whole and whole.count("✓") >= 600


def test_an_unknown_flag_names_the_usage_with_full(big):
    result = big.execute("%verify --fast")
    assert "%verify [--strict] [--unfair] [--full]" in str(result.error)
