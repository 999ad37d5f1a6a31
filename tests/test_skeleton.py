"""`soma skeleton FILE Cell.signal`: the frame and what the flesh body does."""

import subprocess
import sys
from pathlib import Path

import pytest

from soma_kernel.analysis.skeleton import SkeletonError, skeleton_text
from soma_kernel.syntax.parser import parse

HERE = Path(__file__).parent
TRIAGE = HERE / "seeds" / "triage_agent"
CASES = HERE / "check_cases"


def program(path: Path):
    """Parse a program file."""
    return parse(path.read_text(encoding="utf-8"), path.name)


def test_label_frame_and_body():
    assert skeleton_text(program(TRIAGE / "triage_agent.cell"), "Triage.label") == (
        "skeleton agent Triage — signal label(id: String, text: String) -> String (line 33)\n"
        "  frame:\n"
        "    calls  classify\n"
        "    writes labels, seen\n"
        "    reads  none\n"
        "    moves  inbox -> urgent, inbox -> routine\n"
        "  flesh body: on label (lines 52–62)\n"
        "    calls  classify() (line 53)\n"
        "    writes labels (line 54), seen (line 55)\n"
        "    reads  seen (line 55)\n"
        "    moves  inbox -> urgent (line 57), inbox -> routine (line 59)\n"
        "  ✓ the body stays inside its frame\n")


def test_two_argument_move_is_shown_from_any_state():
    text = skeleton_text(program(TRIAGE / "triage_agent.cell"), "Triage.finish")
    assert "    moves  urgent -> done, routine -> done\n" in text
    assert "    moves  (any) -> done (line 65)\n" in text


def test_uses_outside_the_frame_are_marked():
    text = skeleton_text(program(CASES / "frames_bad.cell"), "Desk.count")
    assert "    calls  think() (line 29) ✗ outside the frame\n" in text
    assert "    reads  hits (line 30)\n" in text
    assert text.endswith("  ✗ 1 use(s) outside the frame: soma check refuses this body\n")


@pytest.mark.parametrize("target, message", [
    ("Triage.lable", "skeleton agent 'Triage' has no signal 'lable' (did you mean 'label'?)"),
    ("Triag.label", "cell 'Triag' is not declared (did you mean 'Triage'?)"),
    ("label", "expected Cell.signal, got 'label'"),
])
def test_unknown_targets_are_refused(target, message):
    with pytest.raises(SkeletonError) as caught:
        skeleton_text(program(TRIAGE / "triage_agent.cell"), target)
    assert str(caught.value).startswith(message)


def test_cli_exit_codes():
    ok = subprocess.run([sys.executable, "-m", "soma_kernel", "skeleton", "triage_agent.cell", "Triage.stats"],
                        cwd=TRIAGE, capture_output=True, text=True, encoding="utf-8")
    assert ok.returncode == 0
    assert ok.stdout.startswith("skeleton agent Triage — signal stats() -> Int (line 39)\n")
    bad = subprocess.run([sys.executable, "-m", "soma_kernel", "skeleton", "triage_agent.cell", "Triage.nope"],
                         cwd=TRIAGE, capture_output=True, text=True, encoding="utf-8")
    assert bad.returncode == 1
    assert bad.stderr.startswith("error: triage_agent.cell: skeleton agent 'Triage' has no signal 'nope'")
    assert "Traceback" not in bad.stderr


def test_a_plain_cell_is_refused_with_a_pointer_to_its_contract(tmp_path):
    (tmp_path / "plain.cell").write_text("cell Pure {\n    face {\n        signal one() -> Int\n    }\n"
                                         "    on one() { return 1 }\n}\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "skeleton", "plain.cell", "Pure.one"],
                         cwd=tmp_path, capture_output=True, text=True, encoding="utf-8")
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "error: plain.cell: cell 'Pure' is not a skeleton agent (this file declares no skeleton agent)",
        "  hint: only a skeleton agent's signals have frames; `soma-kernel describe plain.cell --faces` "
        "lists this cell's contract"]
