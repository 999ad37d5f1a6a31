"""`mock think tool f(arg: v, …)`: the model asking for a tool, scripted offline.

The scripted turn goes through the tool rounds a real provider goes through:
the real handler answers, `tools_allowed` and the argument types are
checked with the providers' `tool error: …` texts, a failing tool is rolled
back, `max_rounds` holds, and the trace and the budget record each round.
Session level and `soma-kernel test` level."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import value
from soma_kernel.session.session import Session

WEATHER = '''cell agent Weather {
    face {
        tool lookup(city: String) -> String "The temperature in a city"
        tool forget(city: String) -> String "Forget a city"
        signal ask(q: String) -> String
    }
    memory {
        asked: Map<String, Int>
    }
    on lookup(city: String) {
        asked.set(city, (asked.get(city) ?? 0) + 1)
        if city == "Nowhere" {
            asked.set("broken", 1)
            return 1 / 0
        }
        return "12C in {city}"
    }
    on forget(city: String) {
        asked.set("forgotten", 1)
        return "forgotten {city}"
    }
    on ask(q: String) {
        return think(q)
    }
    on ask_lookup_only(q: String) {
        return think(q, map("tools_allowed", ["lookup"]))
    }
    on ask_in_one_round(q: String) {
        return think(q, map("max_rounds", 1))
    }
}'''


@pytest.fixture
def session(tmp_path):
    """A session with the Weather agent defined."""
    live = Session(directory=str(tmp_path))
    assert live.execute(WEATHER, "agent").ok
    return live


def test_the_real_handler_answers_and_the_model_then_gives_its_final_text(session):
    queued = session.execute('mock think tool lookup(city: "Oslo")\nmock think "It is 12C in Oslo"\n%mocks', "a")
    assert queued.stream_text() == ('mock think tool lookup(city: "Oslo")  // queued by cell[2]\n'
                                    'mock think "It is 12C in Oslo"  // queued by cell[2]\n')
    assert value(session.execute('ask("weather in Oslo?")', "b")) == "It is 12C in Oslo"
    assert value(session.execute('asked.get("Oslo")', "c")) == "1"
    calls = value(session.execute('trace() |> filter(r => r._type == "ToolCall")', "d"))
    assert calls == '[{"_type": "ToolCall", "name": "lookup", "args": "{\\"city\\":\\"Oslo\\"}", "result": "12C in Oslo"}]'
    rounds = value(session.execute('trace() |> filter(r => r._type == "Think") |> map(r => [r.iteration, r.reply])', "e"))
    assert rounds == '[[1, ""], [2, "It is 12C in Oslo"]]'
    charged = value(session.execute('(trace() |> filter(r => r._type == "Think") |> map(r => r.tokens) |> sum())'
                                    ' == tokens_used()', "f"))
    assert charged == "true"
    assert session.execute("%mocks", "g").stream_text() == "no mocks queued\n"


def test_a_tool_outside_tools_allowed_is_refused_with_the_providers_text(session):
    session.execute('mock think tool forget(city: "Oslo")\nmock think "could not"', "a")
    assert value(session.execute('ask_lookup_only("forget Oslo")', "b")) == "could not"
    result = value(session.execute('trace() |> filter(r => r._type == "ToolCall") |> map(r => r.result)', "c"))
    assert result == '["tool error: \'forget\' is not allowed in this step (tools_allowed: [\\"lookup\\"])"]'
    assert value(session.execute('[asked.get("forgotten")]', "d")) == "[()]"


@pytest.mark.parametrize("line, refusal", [
    ('mock think tool lookup(city: 3)', "tool error: lookup(): expected String for city, got Int"),
    ('mock think tool lookup(town: "Oslo")', "tool error: 'lookup' needs the argument 'city'"),
    ('mock think tool weather(city: "Oslo")', "tool error: 'weather' is not a tool of this agent"),
])
def test_bad_arguments_go_back_to_the_model_as_a_tool_error(session, line, refusal):
    assert session.execute(FORECAST, "other").ok  # `weather` is a tool, of another agent
    session.execute(f'{line}\nmock think "sorry"', "a")
    assert value(session.execute('ask("q")', "b")) == "sorry"
    results = value(session.execute('trace() |> filter(r => r._type == "ToolCall") |> map(r => r.result)', "c"))
    assert results == f'["{refusal}"]'
    assert value(session.execute("len(asked.keys())", "d")) == "0"


def test_a_failing_tool_is_rolled_back_and_its_error_goes_to_the_model(session):
    session.execute('mock think tool lookup(city: "Nowhere")\nmock think "no data"', "a")
    assert value(session.execute('ask("q")', "b")) == "no data"
    assert value(session.execute('[asked.get("Nowhere"), asked.get("broken")]', "c")) == "[(), ()]"
    results = value(session.execute('trace() |> filter(r => r._type == "ToolCall") |> map(r => r.result)', "d"))
    assert results == '["tool error: division_by_zero: division by zero"]'


def test_max_rounds_holds_for_a_scripted_tool_call(session):
    session.execute('mock think tool lookup(city: "Oslo")\nmock think "never read"', "a")
    result = session.execute('ask_in_one_round("q")', "b")
    assert result.error_value == ("think() exceeded max rounds (1) of tool calls — raise "
                                  "map(\"max_rounds\", N) (≤ 10) or give the model fewer steps")
    assert value(session.execute('[asked.get("Oslo")]', "c")) == "[()]"
    listed = session.execute("%mocks", "d").stream_text()
    assert listed == 'mock think "never read"  // queued by cell[2]\n'   # the tool turn was the model's: consumed


def test_a_failed_statement_keeps_the_scripted_turns_it_consumed_and_their_trace(session):
    session.execute('mock think tool lookup(city: "Oslo")\nmock think "12C"', "a")
    failed = session.execute('ask("q") + 1', "b")
    assert failed.error_value == "type: cannot add String and Int"
    assert session.execute("%mocks", "c").stream_text() == "no mocks queued\n"
    kept = value(session.execute('[asked.get("Oslo"), trace() |> map(r => r._type), tokens_used()]', "d"))
    assert kept == '[(), ["Think", "ToolCall", "Think"], ' + str(sum_of_think_tokens(session)) + "]"


def sum_of_think_tokens(session) -> int:
    """What the trace's Think records charged."""
    return int(value(session.execute('trace() |> filter(r => r._type == "Think") |> map(r => r.tokens) |> sum()')))


def test_a_tool_call_with_no_turn_after_it_is_an_llm_error(session):
    session.execute('mock think tool lookup(city: "Oslo")', "a")
    result = session.execute('ask("q")', "b")
    assert result.error_value == ("think(): the model's scripted turns ran out after a tool call — queue "
                                  "its next turn (`mock think \"final text\"`, or another `mock think tool …`)")


def test_a_positional_argument_is_a_syntax_error_that_says_to_name_it(session):
    result = session.execute('mock think tool lookup("Oslo")', "a", count=3)
    assert result.error_name == "SyntaxError"
    assert result.error == ("error: cell[3]:1:24: unexpected '\"Oslo\"'\n"
                            "1 | mock think tool lookup(\"Oslo\")\n"
                            "  |                        ^^^^^^\n"
                            "  hint: name each argument as a model sends it: `mock think tool f(param: value, …)`")
    assert session.execute("%mocks", "b").stream_text() == "no mocks queued\n"


FORECAST = '''cell agent Forecast {
    face {
        tool weather(city: String) -> String "Tomorrow's weather"
    }
    on weather(city: String) { return "sun in {city}" }
}'''


@pytest.mark.parametrize("line, hint", [
    ('mock think tool no_such_tool(city: "Oslo")',
     "the face tools: lookup (Weather), forget (Weather); nothing was queued"),
    ('mock think tool lokup(city: "Oslo")', "did you mean `lookup`? nothing was queued"),
    ('mock think tool ask(q: "x")', "'ask' is a handler of Weather but no face tool: declare `tool ask(…) -> T \"…\"` "
                                    "in its face to offer it to the model; nothing was queued"),
])
def test_a_tool_no_cell_declares_stops_the_cell_and_queues_nothing(session, line, hint):
    result = session.execute(f'{line}\nprint("not reached")', "a", count=4)
    name = line.split("tool ")[1].split("(")[0]
    assert result.error == (
        f"error: cell[4]:1:1: mock: mock think tool {name}(…): no cell declares a face tool '{name}'\n"
        f"1 | {line}\n"
        f"  | {'^' * len(line)}\n"
        f"  hint: {hint}")
    assert "not reached" not in result.stream_text()
    assert session.execute("%mocks", "b").stream_text() == "no mocks queued\n"


def test_with_no_face_tool_at_all_the_hint_says_so(tmp_path):
    bare = Session(directory=str(tmp_path))
    result = bare.execute('mock think tool lookup(city: "Oslo")', "a")
    assert result.error.endswith("hint: no cell declares a face `tool` yet; nothing was queued")


def test_check_and_soma_test_refuse_a_tool_no_cell_declares(tmp_path):
    (tmp_path / "w.cell").write_text(WEATHER + '''

cell test T {
    rules {
        mock think tool lokup(city: "Oslo")
        mock think "x"
        assert ask("q") == "x"
    }
}
''', encoding="utf-8")
    check = subprocess.run([sys.executable, "-m", "soma_kernel", "check", "w.cell"], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert "mock think tool lokup(…): no cell declares a face tool 'lokup' (did you mean 'lookup'?)" in check.stdout
    assert check.returncode == 1
    test = subprocess.run([sys.executable, "-m", "soma_kernel", "test", "w.cell"], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert "error: w.cell:35:9: mock think tool lokup(…): no cell declares a face tool 'lokup'" in test.stdout
    assert test.returncode == 1


def test_only_the_model_asks_for_a_tool(session):
    result = session.execute('mock approve tool lookup(city: "Oslo")', "a")
    assert result.error_name == "SyntaxError" and "only the model asks for tools" in result.error


TESTED = WEATHER + '''

cell test WeatherTests {
    rules {
        mock think tool lookup(city: "Oslo")
        mock think "It is 12C"
        assert ask("weather?") == "It is 12C"
        assert asked.get("Oslo") == 1
        mock think tool lookup(city: "Nowhere")
        mock think "no data"
        assert ask("q") == "no data"
        assert asked.get("broken") == ()
        mock think tool forget(city: "Oslo")
        mock think "refused"
        assert ask_lookup_only("q") == "refused"
        assert asked.get("forgotten") == ()
    }
}
'''


def test_soma_kernel_test_runs_scripted_tool_calls(tmp_path):
    (tmp_path / "weather.cell").write_text(TESTED, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "soma_kernel", "test", "weather.cell"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert result.stdout == ("test WeatherTests ...\n"
                             "  ✓ assert ask(\"weather?\") == \"It is 12C\"\n"
                             "  ✓ assert asked.get(\"Oslo\") == 1\n"
                             "  ✓ assert ask(\"q\") == \"no data\"\n"
                             "  ✓ assert asked.get(\"broken\") == ()\n"
                             "  ✓ assert ask_lookup_only(\"q\") == \"refused\"\n"
                             "  ✓ assert asked.get(\"forgotten\") == ()\n"
                             "\n"
                             "6 tests: 6 passed, 0 failed\n")
    assert result.returncode == 0
