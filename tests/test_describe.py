"""`soma describe`: the card paragraphs on both seeds (exact), JSON, --faces."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from soma_kernel.analysis.describe import describe_card, describe_cell, describe_json, english_list
from soma_kernel.syntax.parser import parse

SEEDS = Path(__file__).parent / "seeds"


def seed_program(seed: str):
    """Parse a seed program."""
    path = SEEDS / seed / f"{seed}.cell"
    return parse(path.read_text(encoding="utf-8"), f"{seed}.cell")


def run_describe(seed: str, *args: str) -> subprocess.CompletedProcess:
    """Run the CLI from the seed's folder."""
    return subprocess.run([sys.executable, "-m", "soma_kernel", "describe", f"{seed}.cell", *args],
                          cwd=SEEDS / seed, capture_output=True, text=True, encoding="utf-8")


@pytest.mark.parametrize("seed", ["refund_agent", "triage_agent"])
def test_card_paragraphs_match_the_reference(seed):
    expected = (SEEDS / seed / "expected" / "describe.txt").read_text(encoding="utf-8")
    assert describe_card(seed_program(seed), tools=False) == expected  # the reference's card has no tool sentence


@pytest.mark.parametrize("seed, header", [
    ("refund_agent", "refund_agent.cell: 161 lines, cells Decision, RefundAgent, RefundTests"),
    ("triage_agent", "triage_agent.cell: 97 lines, cells Triage, TriageTests"),
])
def test_cli_prints_a_header_then_the_paragraphs(seed, header):
    result = run_describe(seed)
    expected = (SEEDS / seed / "expected" / "describe.txt").read_text(encoding="utf-8")
    tools = ". Tool in its face, offered to the model: lookup_order(order_id: String) -> Map (Order amount and days " \
            "since delivery)."
    if seed == "refund_agent":  # the reference's card, and the sentence on the tool the notebook's %describe has
        expected = expected.replace("Private helpers: _pay and _parse.", "Private helpers: _pay and _parse" + tools)
    assert result.returncode == 0
    assert result.stdout == f"{header}\n\n{expected}"


TOOLED = """cell agent Desk {
    face {
        signal ask(q: String) -> String
        tool lookup(order: String) -> Int "The order's amount"
        tool refund(order: String, cents: Int) -> Bool
    }
    on ask(q: String) { return think(q) }
    on lookup(order: String) { return 3 }
    on refund(order: String, cents: Int) { return true }
}
cell agent Hotels {
    face {
        tool hotel_price(city: String) -> Int "nightly price"
    }
    on hotel_price(city: String) { return 90 }
}
cell Plain {
    on go() { return 1 }
}
"""


def test_the_cli_prints_the_paragraphs_percent_describe_prints(tmp_path):
    from soma_kernel.session.session import Session

    (tmp_path / "desk.cell").write_text(TOOLED, encoding="utf-8")
    cli = subprocess.run([sys.executable, "-m", "soma_kernel", "describe", "desk.cell"], cwd=tmp_path,
                         capture_output=True, text=True, encoding="utf-8").stdout
    session = Session(directory=str(tmp_path))
    assert session.execute("%load desk.cell", "load").ok
    notebook = session.execute("%describe", "describe").stream_text()
    assert cli.split("\n\n", 1)[1] == notebook.replace("desk.cell:", "line ")
    assert "Tools in its face, offered to the model: lookup(order: String) -> Int (The order's amount) and " \
           "refund(order: String, cents: Int) -> Bool." in cli
    assert "Tool in its face, offered to the model: hotel_price(city: String) -> Int (nightly price)." in cli
    assert cli.count("offered to the model") == 2


def test_describe_cell_gives_one_paragraph_and_refuses_unknown_cells():
    program = seed_program("triage_agent")
    assert describe_cell(program, "Triage").startswith("The cell Triage declares 5 signals in its face")
    with pytest.raises(LookupError, match="did you mean 'Triage'"):
        describe_cell(program, "Triag")


def test_json_lists_handlers_machines_and_flesh_parameter_types():
    data = describe_json(seed_program("triage_agent"), "triage_agent.cell")
    cell = data["cells"][0]
    assert cell["name"] == "Triage" and cell["kind"] == "agent"
    assert cell["handlers"][1] == {"name": "label", "params": [{"name": "id", "type": "String"},
                                                                {"name": "text", "type": "String"}],
                                   "is_public": True, "line": 52}
    machine = cell["state_machines"][0]
    assert machine["states"] == ["done", "inbox", "routine", "urgent"]
    assert machine["transitions"][0] == {"from": "inbox", "to": "urgent", "has_guard": False}
    assert cell["face"]["signals"][0]["frame"]["calls"] == ["think", "set_budget"]


def test_json_cli_and_wildcard_except_kept():
    result = run_describe("refund_agent", "--json")
    data = json.loads(result.stdout)
    wildcard = data["cells"][0]["state_machines"][0]["transitions"][-1]
    assert wildcard == {"from": "*", "to": "failed", "has_guard": False, "except": ["paid", "denied", "escalated"]}
    assert data["cells"][0]["face"]["tools"][0]["description"] == "Order amount and days since delivery"


def test_faces_lists_contracts_only():
    result = run_describe("refund_agent", "--faces")
    lines = result.stdout.splitlines()
    assert lines[0] == "# refund_agent.cell — contracts only (no handler bodies)"
    assert "type Decision = Approve | Deny { reason: String } | Escalate { reason: String }" in lines
    assert lines[2:4] == ["", "agent RefundAgent"]
    assert any(line.startswith("  state request (initial received): received -> decided, ") for line in lines)
    assert "  tool lookup_order(order_id: String) -> Map — Order amount and days since delivery" in lines
    assert "  invariant paid_by_day >= 0 && paid_by_day <= 100000" in lines
    assert not any("on decide" in line for line in lines)


def test_card_wording_for_singular_and_missing_parts():
    program = parse("cell Counter {\n    face {\n        signal bump() -> Int\n    }\n"
                    "    memory {\n        n: Map<String, Int>\n    }\n"
                    "    state s {\n        initial: a\n        a -> b\n    }\n"
                    "    on bump() { return 1 }\n}\n"
                    "cell test T {\n    rules {\n        assert bump() == 1\n    }\n}\n", "c.cell")
    assert describe_card(program) == (
        "The cell Counter declares 1 signal in its face: bump() -> Int; keeps 1 memory slot: "
        "n (Map<String, Int>). Its state machine s starts in a and allows 1 transition: a -> b. "
        "b is terminal. Handler: bump (line 12).\n\n"
        "The file also holds 1 test cell (T) with 1 assertion, run by soma test.\n")


def test_english_list():
    assert [english_list([]), english_list(["a"]), english_list(["a", "b"]), english_list(["a", "b", "c"])] == [
        "", "a", "a and b", "a, b and c"]


def test_missing_file_exits_1_without_traceback():
    result = subprocess.run([sys.executable, "-m", "soma_kernel", "describe", "nope.cell"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip() == "error: nope.cell: no such file"


SEVERAL_CELLS = (
    "cell type Light {\n    variants {\n        Red\n        Green { secs: Int }\n        Blink(Int)\n    }\n}\n"
    "cell Empty {\n}\n"
    "cell Lamp {\n    state lamp {\n        initial: off\n        off -> on\n        on -> off\n    }\n"
    "    on flip(id: String) { transition(id, \"on\") }\n}\n")


def test_card_of_several_cells_without_face_memory_or_tests():
    assert describe_card(parse(SEVERAL_CELLS, "s.cell")) == (
        "The cell Empty has no face, no memory and no handlers.\n\n"
        "The cell Lamp has no face and no memory. Its state machine lamp starts in off and allows "
        "2 transitions: off -> on and on -> off. No state is terminal. Handler: flip (line 16).\n")


def test_faces_list_variant_fields():
    from soma_kernel.analysis.describe import faces_text

    text = faces_text(parse(SEVERAL_CELLS, "s.cell"), "s.cell")
    assert text.endswith("type Light = Red | Green { secs: Int } | Blink(Int)\n\ncell Empty\n\ncell Lamp\n"
                         "  state lamp (initial off): off -> on, on -> off\n  on flip(id: String)\n")
