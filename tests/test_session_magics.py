"""Magics of the live session, in-process."""

from __future__ import annotations

import os

import pytest

from soma_kernel.session.complete import complete
from soma_kernel.session.inspect import inspect
from soma_kernel.session.magics import split_cell
from soma_kernel.session.session import Session

from test_session import COUNTER, GREETER

SEEDS = os.path.join(os.path.dirname(__file__), "seeds")


@pytest.fixture
def session(tmp_path):
    """A session with the Counter cell defined, in a temporary folder."""
    fresh = Session(directory=str(tmp_path))
    assert fresh.execute(COUNTER, "counter").ok
    return fresh


def test_split_cell_blanks_magic_lines_to_keep_line_numbers():
    parts = split_cell("%check\n?bump\nlet x = 1")
    assert parts.steps == [("magic", ("check", "", 1)), ("magic", ("?", "bump", 2)), ("code", "\n\nlet x = 1")]
    assert parts.cell_magic is None and parts.code == "\n\nlet x = 1"
    parts = split_cell("\n%%toml\n[agent]\nmock = \"echo\"")
    assert parts.cell_magic == ("toml", "", "[agent]\nmock = \"echo\"") and parts.steps == []


def test_split_cell_runs_magics_between_code_in_order():
    parts = split_cell('mock think "x"\n%mocks\nlet y = 10 %\n  3')
    assert parts.steps == [("code", 'mock think "x"\n\n\n'), ("magic", ("mocks", "", 2)),
                           ("code", '\n\nlet y = 10 %\n  3')]


def test_a_magic_after_code_sees_what_the_code_did(session):
    result = session.execute('mock think "x"\nmock think "y"\n%mocks')
    assert result.ok
    assert result.stream_text() == 'mock think "x"  // queued by cell[2]\nmock think "y"  // queued by cell[2]\n'




def test_check_reports_on_the_session(session):
    result = session.execute("%check")
    assert result.ok and result.stream_text() == "✓ All checks passed.\n"


def test_unknown_magic_names_the_known_ones(session):
    result = session.execute("%frobnicate now")
    assert result.error_name == "MagicError"
    assert result.error_value.startswith("unknown magic %frobnicate — known magics: %check, %verify")
    assert result.error.startswith("error: cell[")
    assert result.error.split("\n")[1:] == ["1 | %frobnicate now", "  | ^^^^^^^^^^^"]


def test_a_magic_error_points_at_its_line_and_argument(session):
    result = session.execute("bump(1)\n\n  %test Nope", count=7)
    assert result.error_name == "MagicError"
    assert result.error.split("\n") == [
        "error: cell[7]:3:9: no test cell named Nope (defined: none)",
        "3 |   %test Nope",
        "  |         ^^^^",
    ]
    missing = session.execute("%load missing.cell", count=8)
    assert missing.error_name == "UserError" and missing.error_value.endswith("missing.cell: no such file")
    assert missing.error.split("\n")[0].startswith("error: cell[8]:1:7: ")
    assert missing.error.split("\n")[2] == "  |       " + "^" * len("missing.cell")
    assert session.execute("bump(1)").result["text/plain"] == "2"  # the line before the magic ran


def test_a_bad_soma_toml_beside_a_loaded_file_keeps_its_place_and_names_the_magic(session, tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "prog.cell").write_text(GREETER)
    (tmp_path / "lib" / "soma.toml").write_text("[agent\n")
    result = session.execute("%load lib/prog.cell", count=4)
    assert result.error_name == "UserError"
    lines = result.error.split("\n")
    assert lines[0].startswith("error: ") and "soma.toml:1:7: invalid TOML" in lines[0]
    assert lines[1:3] == ["1 | [agent", "  |       ^"]
    assert lines[-1] == "  (met by the magic at cell[4]:1)"


def test_state_of_an_id_that_never_moved_is_the_initial_state():
    fresh = Session()
    assert fresh.execute('cell A {\n state s { initial: a\n a -> b }\n on f(id: Int) { transition(id, "b")\n return 1 }\n}').ok
    assert fresh.execute("f(5)").ok
    assert fresh.execute("%state A 5").stream_text() == "A 5: b\n  history: a → b\n  next: none (terminal)\n"
    assert fresh.execute("%state A x").stream_text() == (
        "A x: a (never moved: an id that has not transitioned is in the initial state)\n  next: b\n")
    assert "data:image/svg+xml;base64," in fresh.execute("%diagram A 5").displays[0]["text/html"]


def test_state_and_memory_show_live_values(session):
    session.execute('open_door("d1")\nbump(3)')
    state = session.execute("%state Counter d1")
    assert state.stream_text() == "Counter d1: open\n  history: closed → open\n  next: closed\n"
    memory = session.execute("%memory Counter").displays[0]
    assert "count" in memory["text/plain"] and "<table" in memory["text/html"]


def test_mocks_lists_queued_replies_with_the_cell_that_queued_each(session):
    session.execute('mock think "a"\nmock approve true', count=7)
    session.execute('mock think "b"\nmock Counter.bump 5', count=8)
    assert session.execute("%mocks").stream_text() == ('mock think "a"  // queued by cell[7]\n'
                                                       'mock think "b"  // queued by cell[8]\n'
                                                       'mock approve true  // queued by cell[7]\n'
                                                       'mock Counter.bump 5  // queued by cell[8]\n')
    session.execute('think("x")\nthink("y")\napprove("z")')
    assert session.execute("%mocks").stream_text() == "mock Counter.bump 5  // queued by cell[8]\n"


def test_mocks_clear_drops_the_queue_and_keeps_everything_else(session):
    session.execute('bump(4)\nlet kept = 1\nmock think ["a", "b"]\nmock approve false\nmock now 1000')
    assert session.execute("%mocks clear").stream_text() == "dropped 3 queued mock(s)\n"
    assert session.execute("%mocks").stream_text() == "no mocks queued\n"
    assert session.execute("%mocks clear").stream_text() == "no mocks queued\n"
    after = session.execute('[count.get("n"), kept, now()]')   # memory, lets and the scripted clock stay
    assert after.result["text/plain"] == "[4, 1, 1000]"


@pytest.mark.parametrize("args", ["clear all", "flush", "--clear"])
def test_mocks_takes_only_clear(session, args):
    result = session.execute(f"%mocks {args}")
    assert result.error_value == "usage: %mocks [clear]"


def test_diagram_highlights_an_instance(session):
    session.execute('open_door("d1")')
    bundle = session.execute("%diagram Counter d1").displays[0]
    assert bundle["text/html"].startswith('<img class="soma-diagram" alt="state machine door: ')
    assert "; highlighted path closed → open\" src=" in bundle["text/html"]
    assert "closed" in bundle["text/plain"]


def test_diagram_of_an_unknown_machine_or_instance_is_an_error_with_did_you_mean(session):
    session.execute('open_door("d1")')
    typo = session.execute("%diagram Counter dor", count=4)
    assert typo.error == (
        "error: cell[4]:1:18: Counter has no machine or instance dor (machines: door; instances: d1)"
        " — did you mean door?\n"
        "1 | %diagram Counter dor\n"
        "  |                  ^^^")
    unknown = session.execute("%diagram Counter door d11", count=5)
    assert unknown.error == (
        "error: cell[5]:1:23: Counter has no instance d11 (instances: d1; an id only becomes one when it first "
        "transitions) — did you mean d1?\n"
        "1 | %diagram Counter door d11\n"
        "  |                       ^^^")
    machine = session.execute("%diagram Counter dorr d1", count=6)
    assert machine.error.split("\n")[0] == (
        "error: cell[6]:1:18: cell Counter has no machine dorr (it has: door) — did you mean door?")
    cell = session.execute("%diagram Countr", count=7)
    assert cell.error.split("\n")[0] == (
        "error: cell[7]:1:10: no cell named Countr (defined: Counter) — did you mean Counter?")


def test_reset_one_cell_keeps_definitions(session):
    session.execute("bump(5)")
    assert session.execute("%reset Counter").stream_text() == (
        "reset Counter: memory and machine instances are fresh\n")
    assert session.execute("bump(0)").result["text/plain"] == "0"


def test_save_writes_a_program_that_check_accepts(session, tmp_path):
    session.execute(GREETER, "greeter")
    assert session.execute("%save all.cell").stream_text() == "saved 2 definition(s) to all.cell\n"
    text = (tmp_path / "all.cell").read_text()
    from soma_kernel.analysis.check import check_program
    from soma_kernel.syntax.parser import parse

    assert check_program(parse(text, "all.cell")).passed
    fresh = Session(directory=str(tmp_path))
    loaded = fresh.execute("%load all.cell", "x")
    assert loaded.ok and "loaded 2 definition(s) from all.cell" in loaded.stream_text()
    assert fresh.execute('greet("bo")').result["text/plain"] == "hello bo"


def test_load_a_seed_with_its_soma_toml_and_test_it(tmp_path):
    fresh = Session(directory=SEEDS)
    result = fresh.execute("%load refund_agent/refund_agent.cell")
    assert result.ok, result.error
    assert "using refund_agent/soma.toml" in result.stream_text()
    assert fresh.project is not None and fresh.project.agent.get("mock") == "echo"


def test_toml_cell_magic_replaces_the_project(session):
    result = session.execute('%%toml\n[agent]\nmock = "echo"\n')
    assert result.stream_text() == "soma.toml replaced: [agent] mock = 'echo'\n"
    assert session.project.agent["mock"] == "echo"
    bad = session.execute("%%toml\n[nonsense]\n")
    assert bad.error_name == "UserError" and "unknown section [nonsense]" in bad.error


def test_toml_errors_point_at_the_notebook_cell_line(session):
    broken = session.execute("\n%%toml\n[agent\nmock = 'x'\n", count=5)
    assert broken.error.split("\n")[:3] == [
        "error: cell[5]:3:7: invalid TOML: Expected ']' at the end of a table declaration",
        "3 | [agent",
        "  |       ^",
    ]
    unknown = session.execute("%%toml\n[agent]\nmok = 'x'\n", count=6)
    assert unknown.error.split("\n")[0].startswith("error: cell[6]:3:1: unknown key 'mok' in [agent]")
    assert unknown.error.split("\n")[2] == "  | ^^^"


def test_toml_below_the_first_line_says_it_must_be_the_first_line(session):
    result = session.execute('let z = 1\n%%toml\n[agent]\nmock = "echo"\n', count=3)
    assert result.error == (
        "error: cell[3]:2:1: %%toml must be the cell's first line (the rest of the cell is its body); "
        "put it in a cell of its own: %%toml\n"
        "2 | %%toml\n"
        "  | ^^^^^^")
    assert session.project is None or "mock" not in session.project.agent


def test_question_mark_and_inspect_share_the_help_text(session):
    shown = session.execute("?Counter").displays[0]["text/plain"]
    assert "signal bump(n: Int) -> Int" in shown
    reply = inspect(session, "x = Counter.bump(1)", 14)
    assert reply["found"] and reply["data"]["text/plain"].startswith("Counter.bump\n  signal bump(n: Int) -> Int\n")
    assert "think(prompt: String" in session.execute("?think").displays[0]["text/plain"]


def help_at(session, code, cursor_pos=None):
    """The inspector's text at `cursor_pos` (default: the end), or None when nothing is found."""
    reply = inspect(session, code, len(code) if cursor_pos is None else cursor_pos)
    return reply["data"]["text/plain"] if reply["found"] else None


def test_inspection_inside_a_call_shows_the_callee(session):
    assert help_at(session, "Counter.bump(").startswith("Counter.bump\n  signal bump(n: Int) -> Int")
    assert help_at(session, "len(undefined_thing, ", 5).startswith("len(x: String|List|Map) -> Int")
    assert help_at(session, "len(1 + (2 * 3), ").startswith("len(")
    assert help_at(session, "cell A {\n  on f() {\n    ") is None


def test_inspection_of_the_cell_part_of_a_member_and_of_a_magic(session):
    assert help_at(session, "Counter.bump(1)", 3).startswith("cell Counter  (defined in cell[1])")
    assert help_at(session, "Counter.bump(1)", 9).startswith("Counter.bump\n")
    assert help_at(session, "bump(1)\n%diagram Counter", 12).startswith("%diagram Cell [machine] [instance-id]")
    assert help_at(session, "count").startswith("Counter.count\n  memory slot count: Map<String, Int>")


def test_completion_offers_session_names_and_builtins(session):
    reply = complete(session, "let c = Cou", 11)
    assert reply["matches"] == ["Counter"] and reply["cursor_start"] == 8
    kinds = {t["text"]: t["type"] for t in complete(session, "op", 2)["metadata"]["_jupyter_types_experimental"]}
    assert kinds["open"] == "state" and kinds["open_door"] == "handler"
    assert complete(session, "%st", 3)["matches"] == ["state", "store"]


def matches(session, code):
    """Completion matches with the cursor at the end of `code`."""
    return complete(session, code, len(code))["matches"]


def test_completion_of_magics_on_any_line_and_of_the_cell_magic_on_the_first(session):
    assert matches(session, "bump(1)\n  %dia") == ["diagram"]
    assert matches(session, "%%to") == ["toml"]
    assert "toml" not in matches(session, "%t")


def test_completion_after_a_slot_offers_slot_methods(session):
    assert matches(session, "cell N {\n  memory { things: Map<String, Int> }\n  on f() {\n    things.se") == ["set"]
    assert "push" in matches(session, "count.") and "uppercase" not in matches(session, "count.")
    assert "uppercase" in matches(session, 'let s = "a"\ns.')


def test_completion_offers_names_written_in_the_cell_being_edited(session):
    code = "cell N {\n  memory { things: Map<String, Int> }\n  on f() {\n    let running_total = 1\n    return runn"
    assert matches(session, code) == ["running_total"]
    assert "things" in matches(session, code[:code.index("let")] + "thi")


def test_no_completion_inside_string_text_but_inside_interpolation(session):
    assert matches(session, 'print("bu') == []
    assert matches(session, 'print("n = {bu') == ["bump"]
    assert matches(session, 'print("{len("x")} bu') == []
    assert matches(session, 'let s = """one\nbu') == []
    assert matches(session, '// a "quote\nbu') == ["bump"]


def test_describe_and_help(session):
    describe = session.execute("%describe Counter").stream_text()
    assert describe.startswith("The cell Counter declares 1 signal in its face")
    assert "%verify [--strict]" in session.execute("%help").stream_text()


def test_describe_names_handler_lines_in_their_notebook_cells(session):
    session.execute("// the greeter\n\n" + GREETER, "greeter", count=9)
    text = session.execute("%describe Greeter").stream_text()
    assert text.endswith("Handler: greet (cell[9]:7).\n")
    assert "Handlers: bump (cell[1]:14) and open_door (cell[1]:18)." in session.execute("%describe").stream_text()


def test_describe_lists_the_face_tools(session):
    session.execute('cell Hotels {\n    face {\n        signal plan(city: String) -> Int\n'
                    '        tool hotel_price(city: String) -> Int "nightly price"\n    }\n'
                    '    on plan(city: String) { return hotel_price(city) }\n'
                    '    on hotel_price(city: String) { return 90 }\n}', "hotels", count=3)
    assert session.execute("%describe Hotels").stream_text() == (
        "The cell Hotels declares 1 signal in its face: plan(city: String) -> Int. "
        "Handlers: plan (cell[3]:6) and hotel_price (cell[3]:7). "
        "Tool in its face, offered to the model: hotel_price(city: String) -> Int (nightly price).\n")


def test_test_magic_runs_test_cells_and_shows_the_runner_text(session):
    session.execute("cell test CounterTests {\n    rules {\n        assert bump(2) == 2\n    }\n}", "tests")
    bundle = session.execute("%test CounterTests").displays[0]
    assert bundle["text/plain"] == "test CounterTests ...\n  ✓ assert bump(2) == 2\n\n1 tests: 1 passed, 0 failed\n"
    assert session.execute("%test Nope").error_value == "no test cell named Nope (defined: CounterTests)"


def test_skeleton_magic_on_the_triage_seed_and_on_a_plain_cell(session):
    fresh = Session(directory=SEEDS)
    assert fresh.execute("%load triage_agent/triage_agent.cell").ok
    assert "label" in fresh.execute("%skeleton Triage.label").stream_text()
    refused = session.execute("%skeleton Counter.bump", count=9)
    assert refused.error_name == "MagicError"
    assert refused.error == (
        "error: cell[9]:1:11: cell 'Counter' is not a skeleton agent (this session declares no skeleton agent)\n"
        "1 | %skeleton Counter.bump\n"
        "  |           ^^^^^^^^^^^^\n"
        "  hint: only a skeleton agent's signals have frames; `%describe Counter` lists this cell's contract")
    unknown = session.execute("%skeleton Nobody.go").error
    assert "cell 'Nobody' is not declared (this session declares no skeleton agent)" in unknown
    assert "this file" not in unknown
    assert "skeleton agents here: Triage" in fresh.execute("%skeleton Counter.bump").error


def test_test_magic_failures_point_at_the_notebook_cell_of_the_rule(session):
    rules = ('cell test T {\n    rules {\n        assert bump(1) == 1\n        mock think "x"\n'
             '        assert bump(-5) == 3\n        assert bump(0) == 9\n    }\n}')
    assert session.execute(rules, "tests", count=2).ok
    text = session.execute("%test", count=3).displays[0]["text/plain"]
    assert text == (
        "test T ...\n"
        "  ✓ assert bump(1) == 1\n"
        "  ✗ cell[2]:5  assert bump(-5) == 3 — ERROR: invariant: count[\"n\"] = -4 violates invariant count >= 0\n"
        "note: cell[2]:5: discarded 1 unused mock(s) after the rule raised: mock think \"x\"\n"
        "  ✗ cell[2]:6  assert bump(0) == 9 — FAILED\n"
        "         left:  1\n"
        "         right: 9\n"
        "\n"
        "3 tests: 1 passed, 2 failed\n")


def test_verify_refuses_on_check_errors_shown_at_their_notebook_cell(tmp_path):
    fresh = Session(directory=str(tmp_path))
    assert fresh.execute(GREETER, "greeter", count=1).ok
    user = 'cell User {\n    on hello() {\n        return Greeter.greet("ann")\n    }\n}'
    assert fresh.execute(user, "user", count=2).ok
    assert fresh.execute(GREETER.replace("greet", "wave"), "greeter", count=3).ok
    text = fresh.execute("%verify").displays[0]["text/plain"]
    assert text == (
        "Verifying session.cell...\n"
        "error: cell[2]:3:16: cell 'Greeter' has no handler 'greet'\n"
        "3 |         return Greeter.greet(\"ann\")\n"
        "  |                ^^^^^^^^^^^^^^^^^^^^\n"
        "  hint: declare `on greet(…)` in cell 'Greeter' or fix the name\n"
        "VERIFY FAILED — soma check failed\n")


def test_source_map_places_combined_lines_in_their_cells(session):
    session.execute(GREETER, "greeter", count=5)
    _, source_map = session.program()
    greeter_start = source_map.text.index("cell Greeter")
    line = source_map.text.count("\n", 0, greeter_start) + 1
    assert source_map.place(line + 5, 16) == "cell[5]:6:16"
    assert source_map.place(3, 4) == "cell[1]:3:4"
    assert source_map.line_words(line + 1) == "cell[5]:2"
    assert source_map.line_words(line + 1, line + 6) == "cell[5]:2–7"


def test_double_question_mark_on_a_handler_pages_its_source(session):
    for name in ("bump", "Counter.bump"):
        text = session.execute(f"??{name}", count=4).payloads[0]["data"]["text/plain"]
        assert text.split("\n\n", 1)[1] == (
            "on bump of cell Counter — cell[1]:14\n"
            "on bump(n: Int) {\n"
            "        count.set(\"n\", (count.get(\"n\") ?? 0) + n)\n"
            "        return count.get(\"n\") ?? 0\n"
            "    }\n")


def test_double_question_mark_pages_instead_of_showing(session):
    paged = session.execute("??Counter", count=4)
    assert paged.ok and paged.displays == [] and paged.stream_text() == ""
    text = paged.payloads[0]["data"]["text/plain"]
    assert "signal bump(n: Int) -> Int" in text and "cell Counter — cell[1]:1\ncell Counter {" in text
    unknown = session.execute("??nowhere", count=5)
    assert unknown.error.split("\n") == ["error: cell[5]:1:3: nothing is known about 'nowhere'",
                                        "1 | ??nowhere", "  |   ^^^^^^^"]
    assert "%??" not in session.execute("%nonsense").error


def test_question_mark_knows_every_keyword_of_the_keyword_table(session):
    from soma_kernel.syntax.keyword_help import KEYWORD_HELP
    from soma_kernel.syntax.keywords import KEYWORDS

    from soma_kernel.syntax.keyword_help import SLOT_PROPERTY_HELP, TYPE_HELP
    from soma_kernel.syntax.keywords import SLOT_PROPERTIES, TYPES

    assert (set(KEYWORD_HELP), set(TYPE_HELP), set(SLOT_PROPERTY_HELP)) == (set(KEYWORDS), set(TYPES),
                                                                          set(SLOT_PROPERTIES))
    for table in (KEYWORD_HELP, TYPE_HELP, SLOT_PROPERTY_HELP):
        for word, text in table.items():
            result = session.execute(f"?{word}")
            assert result.ok, (word, result.error)
            assert text in result.displays[0]["text/plain"]
            assert word in text


def test_question_mark_says_the_truth_about_invariants_and_lists_horde_options(session):
    from soma_kernel.runtime.horde import HORDE_OPTIONS

    invariant = session.execute("?invariant").displays[0]["text/plain"]
    assert "before each write" in invariant and "after every invocation" not in invariant
    horde = session.execute("?horde").displays[0]["text/plain"].split("\n")
    assert horde[2] == "  options:"
    assert [line.split(":")[0].strip() for line in horde[3:]] == list(HORDE_OPTIONS)
    assert "concurrency: tasks run at once, 1 to 1000 (default 8" in horde[3]


def test_verify_in_a_notebook_speaks_of_this_session_not_this_file(session):
    session.execute("%%toml\n[verify]\ncells = [\"Payments\"]\nnever = [\"closed\"]\n", "toml")
    text = session.execute("%verify", "v").displays[0]["text/plain"]
    assert "note: soma.toml [verify] cells names 'Payments', which this session does not define" in text
    assert ("NONE applies to this session ([verify] cells = [\"Payments\"] names no cell of it)") in text
    assert "this file" not in text
    session.execute("%%toml\n[verify]\nnever = [\"nowhere\"]\n", "toml")
    strict = session.execute("%verify --strict", "v").displays[0]["text/plain"]
    assert "apply to no state machine of this session" in strict and "this file" not in strict
