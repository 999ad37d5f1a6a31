"""Issue 21, "Wrong answers": each rule is tested on several members of its class,
through the session (a notebook's view) and the command line where it applies."""

from __future__ import annotations

import pytest

from helpers import value
from soma_kernel.session.session import Session


@pytest.fixture
def session(tmp_path):
    """A fresh session in a temporary directory (no soma.toml)."""
    return Session(directory=str(tmp_path))


# ---------------------------------------------------------------- failing asserts fail their cell

@pytest.mark.parametrize("rule, printed, message", [
    ("assert 1 + 1 == 3", "  ✗ cell[4]:2  assert 1 + 1 == 3 — FAILED\n         left:  2\n         right: 3\n",
     "assert failed"),
    ('assert len("ab") / 0 == 1', '  ✗ cell[4]:2  assert len("ab") / 0 == 1 — ERROR: division_by_zero: division by zero\n',
     "assert raised an error: division_by_zero: division by zero"),
    ("assert 7", "  ✗ cell[4]:2  assert 7 — ERROR: assert needs a Bool, got 7\n", "assert failed"),
    ("assert_fails 1 + 1", "  ✗ cell[4]:2  assert_fails 1 + 1 — FAILED: expected a runtime error, but it succeeded "
     "with 2\n", "assert_fails failed"),
    ('property "small" forall n: Int in 1..5 ensures n < 3',
     '  ✗ property "small" — FAILED with counter-example n = 3\n', "property failed"),
])
def test_a_failing_top_level_rule_prints_its_line_then_fails_the_cell(session, rule, printed, message):
    result = session.execute(f'print("before")\n{rule}\nprint("after")', count=4)
    assert result.stream_text() == "before\n" + printed
    assert result.error_name == "AssertionError" and result.error_value == message
    assert result.error.split("\n")[0] == f"error: cell[4]:2:1: {message}"
    assert result.error.split("\n")[1] == f"2 | {rule}"
    assert "raises-exception" in result.error.split("\n")[-1]


@pytest.mark.parametrize("rule", ["assert 1 + 1 == 2", "assert_fails 1 / 0",
                                  'property "p" forall n: Int in 1..4 ensures n < 9', "assert true"])
def test_a_passing_rule_leaves_the_cell_ok_and_the_cell_goes_on(session, rule):
    result = session.execute(f"{rule}\n40 + 2")
    assert value(result) == "42"
    assert result.stream_text().startswith("  ✓ ")


# ---------------------------------------------------------------- () results are shown

@pytest.mark.parametrize("code", ['parse_int("x")', "nth([1, 2], 7)", "[1, 2].nth(7)", '"x".parse_int()',
                                  "find([1, 2], v => v > 5)", 'parse_float("nope")', 'let m = map("a", 1)\nm.b'])
def test_a_pure_call_that_returns_nothing_shows_unit(session, code):
    assert value(session.execute(code)) == "()"


@pytest.mark.parametrize("code", ["print(1)", "clear_trace()", "clear_context()", "sleep(0)"])
def test_a_call_made_for_its_effect_shows_nothing(session, code):
    result = session.execute(code)
    assert result.ok and result.result is None


def test_a_handler_named_like_an_effect_builtin_shows_its_unit(session):
    session.execute("cell Q {\n    on print(x: Int) {\n        let y = x\n    }\n}", "a")
    assert value(session.execute("Q.print(1)", "b")) == "()"


# ---------------------------------------------------------------- declared return types: the reference's rule

RETURNS = """cell type Pay { variants { Cash  Card { last4: String } } }
cell R {
    face {
        signal maybe_pay(n: Int) -> Pay
        signal request(path: String) -> Map
        signal listed() -> Map
    }
    on maybe_pay(n: Int) {
        if n > 0 { return Cash }
        return ()
    }
    on request(path: String) {
        if path == "/list" { return [1, 2] }
        if path == "/text" { return "hello" }
        return map("ok", true)
    }
    on listed() { return top([map("a", 1), map("a", 2)], 1) }
}"""


@pytest.mark.parametrize("call, shown", [("maybe_pay(1)", "Cash"), ("maybe_pay(0)", "()"),
                                         ('request("/list")', "[1, 2]"), ('request("/text")', 'hello'),
                                         ('request("/")', '{"ok": true}')])
def test_what_the_reference_returns_unchecked_runs(session, call, shown):
    assert session.execute(RETURNS, "a").ok
    assert value(session.execute(call)) == shown


def test_a_list_for_a_declared_map_is_refused_as_the_reference_refuses_it(session):
    assert session.execute(RETURNS, "a").ok
    result = session.execute("listed()")
    assert not result.ok and "R.listed() returned List (expected Map, got List)" in result.error


def test_check_accepts_the_router_returning_anything():
    from soma_kernel.analysis.check import check_program
    from soma_kernel.syntax.parser import parse
    report = check_program(parse(RETURNS.replace("return [1, 2]", 'return [1, 2]\n        return 7'), "r.cell"))
    assert [d.message for d in report.errors] == []


# ---------------------------------------------------------------- [verify]: typos are errors, strays are warnings

from soma_kernel.analysis.verify import verify_program  # noqa: E402
from soma_kernel.analysis.verify.report import render_text  # noqa: E402
from soma_kernel.project.settings import parse_project_text  # noqa: E402
from soma_kernel.syntax.parser import parse  # noqa: E402

TWO_MACHINES = """cell Gate {
    state gate { initial: open  open -> closed  closed -> broken  closed -> open }
}
cell Lamp {
    state lamp { initial: idle  idle -> done }
}
"""
NO_MACHINE = "cell Plain {\n    on go() { return 1 }\n}\n"


def verified(source: str, toml: str, strict: bool = False):
    """The verify report of a program under a soma.toml text, and its rendered text."""
    report = verify_program(parse(source, "p.cell"), parse_project_text(toml, "soma.toml"), "p.cell", strict=strict)
    return report, render_text(report)


@pytest.mark.parametrize("written", ["Gaet", "gate", "Gatee", "Gat", "GATE"])
def test_a_near_miss_of_a_cell_in_verify_cells_is_an_error(written):
    report, text = verified(TWO_MACHINES, f'[verify]\ncells = ["{written}"]\nnever = ["broken"]\n')
    assert f"error: soma.toml [verify] cells names '{written}', which this file does not define — did you " \
           "mean 'Gate'?" in text
    assert not report.passed and text.endswith("VERIFY FAILED — soma.toml [verify] settings are wrong\n")


@pytest.mark.parametrize("toml, reason", [
    ('[verify]\ncells = ["Payments"]\nnever = ["paid"]\n', "soma.toml [verify] cells names no cell of this file"),
    ('[verify]\nnever = ["elsewhere"]\n', "soma.toml [verify] properties apply to nothing in this file"),
    ('[verify]\neventually = ["open", "done"]\n', "soma.toml [verify] properties apply to nothing in this file"),
    ('[verify]\nnever = ["broken"]\neventually = ["done"]\n',
     "soma.toml [verify] properties apply to nothing in this file"),
])
def test_a_verify_section_that_applies_to_nothing_warns_and_fails_strict(toml, reason):
    loose, _ = verified(TWO_MACHINES, toml)
    strict, text = verified(TWO_MACHINES, toml, strict=True)
    assert loose.passed
    assert not strict.passed and reason in text.splitlines()[-1]


def test_properties_of_a_file_without_machines_fail_strict_only():
    assert verified(NO_MACHINE, '[verify]\nnever = ["x"]\n')[0].passed
    strict, text = verified(NO_MACHINE, '[verify]\nnever = ["x"]\n', strict=True)
    assert text.endswith("VERIFY FAILED — soma.toml [verify] properties apply to nothing in this file\n")


@pytest.mark.parametrize("toml, message", [
    ('[verify]\ncells = ["Gate"]\nnever = ["idle"]\n',
     "property never(state == 'idle') names state 'idle', which machine 'gate' does not have (its states: "
     "[broken, closed, open])"),
    ('[verify]\ncells = ["Gate"]\neventually = ["brokn"]\n',
     "property eventually(state in [brokn]) names state 'brokn', which machine 'gate' does not have — did you "
     "mean 'broken'?"),
    ('[verify]\nnever = ["clsoed"]\n',
     "property never(state == 'clsoed') names state 'clsoed', which no state machine of this file has — did "
     "you mean 'closed'? (machine 'gate')"),
    ('[verify.after.opne]\nnever = ["broken"]\n',
     "names state 'opne', which no state machine of this file has — did you mean 'open'?"),
])
def test_a_property_naming_a_missing_state_is_a_configuration_error(toml, message):
    report, text = verified(TWO_MACHINES, toml)
    assert message in text
    assert text.endswith("VERIFY FAILED — soma.toml [verify] settings are wrong\n")
    assert "temporal property violated" not in text


@pytest.mark.parametrize("toml, gate, lamp", [
    ('[verify]\nnever = ["broken"]\n', ["deadlock_free", "never(state == 'broken')"], ["deadlock_free"]),
    ('[verify]\neventually = ["done"]\n', ["deadlock_free"], ["deadlock_free", "eventually(state in [done])"]),
    ('[verify]\nnever = ["broken"]\n[verify.after.closed]\neventually = ["open"]\n',
     ["deadlock_free", "never(state == 'broken')", "after('closed', eventually state in [open])"], ["deadlock_free"]),
])
def test_without_cells_properties_apply_to_the_machines_that_have_their_states(toml, gate, lamp):
    report, _ = verified(TWO_MACHINES, toml)
    by_machine = {m.title: [r.property for r in m.temporal] for m in report.machines}
    assert by_machine == {"gate": gate, "lamp": lamp}


def test_properties_spread_over_two_machines_warn_as_checked_nowhere():
    _, text = verified(TWO_MACHINES, '[verify]\nnever = ["broken"]\neventually = ["done"]\n')
    assert ("warning: soma.toml [verify] properties apply to no state machine of this file: none has every state "
            "they name (their states are spread over several machines) — they are checked nowhere here") in text
    assert text.endswith("VERIFY OK\n")


# ---------------------------------------------------------------- soma-kernel run: no key, no mock → kind llm

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

LLM_ENV = ("SOMA_LLM_KEY", "SOMA_LLM_MOCK", "SOMA_LLM_URL", "SOMA_LLM_CASSETTE", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
BOT = """cell agent Bot {
    on plain(q: String) { return think(q) }
    on twice(q: String) {
        let a = try { think(q) }
        let b = try { think(q) }
        return "{a.error != ()} {b.error != ()} {b.kind}"
    }
}
"""


def run_cli(folder, *args, **env):
    """`soma-kernel ARGS` in `folder` with no LLM key or mock in the environment."""
    environ = {k: v for k, v in os.environ.items() if k not in LLM_ENV}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "soma_kernel", *args], cwd=folder, env=environ,
                          capture_output=True, text=True, timeout=120)


NOTE = 'note: think() has no LLM key — every call raises kind "llm".'


@pytest.mark.parametrize("handler, out, code", [
    ("plain", "", 1),
    ("twice", '"true true llm"\n', 0),
])
def test_run_without_a_key_or_a_mock_notes_once_and_think_raises_llm(tmp_path, handler, out, code):
    (tmp_path / "bot.cell").write_text(BOT, encoding="utf-8")
    run = run_cli(tmp_path, "run", "bot.cell", handler, "hello")
    assert run.returncode == code and run.stdout == out
    assert run.stderr.count(NOTE) == 1
    if code:
        assert "error: bot.cell:2:34: llm: think() has no LLM key and no mock" in run.stderr


@pytest.mark.parametrize("toml, env, answer", [
    ('[agent]\nmock = "echo"\n', {}, '"hello"\n'),
    ('[agent]\nmock = "fixed:yes"\n', {}, '"yes"\n'),
    ("", {"SOMA_LLM_MOCK": "echo"}, '"hello"\n'),
])
def test_run_with_a_mock_answers_with_it(tmp_path, toml, env, answer):
    (tmp_path / "bot.cell").write_text(BOT, encoding="utf-8")
    if toml:
        (tmp_path / "soma.toml").write_text(toml, encoding="utf-8")
    run = run_cli(tmp_path, "run", "bot.cell", "plain", "hello", **env)
    assert (run.returncode, run.stdout, run.stderr) == (0, answer, "")


def test_tests_and_notebooks_keep_the_echo_default(tmp_path, session):
    (tmp_path / "bot.cell").write_text(BOT + 'cell test T {\n    rules {\n        assert plain("hi") == "hi"\n'
                                       '    }\n}\n', encoding="utf-8")
    assert run_cli(tmp_path, "test", "bot.cell").returncode == 0
    session.execute(BOT, "a")
    assert value(session.execute('plain("hi")', "b")) == "hi"


# ---------------------------------------------------------------- [agent] is validated when read

@pytest.mark.parametrize("line, message, hint", [
    ('provider = "gemini"', "'agent.provider' is 'gemini', which is no provider this implementation speaks "
     "(providers: openai, anthropic, ollama)", "or use `openai` with a `url` for any OpenAI-compatible server"),
    ('provider = "antropic"', "'agent.provider' is 'antropic', which is no provider", "did you mean 'anthropic'?"),
    ('mock = "banana"', "'agent.mock' is 'banana', which is no mock mode (modes: echo, fixed:TEXT, rules:FILE.json)",
     "write one of the modes, or remove the key"),
    ('mock = "ecko"', "'agent.mock' is 'ecko', which is no mock mode", "did you mean 'echo'?"),
    ('mock = "fixed"', "'agent.mock' is 'fixed', which is no mock mode", "did you mean 'fixed:TEXT'?"),
    ('mock = "rule:r.json"', "'agent.mock' is 'rule:r.json', which is no mock mode", "did you mean 'rules:r.json'?"),
    ("retries = -2", "'agent.retries' is -2: it must be 0 or more", None),
    ('retries = "3"', "'agent.retries' must be an integer, found a string", None),
])
def test_a_bad_agent_section_is_an_error_at_its_toml_cell(session, line, message, hint):
    assert session.execute('%%toml\n[agent]\nmock = "fixed:kept"\n', "t0").ok
    result = session.execute(f"%%toml\n[agent]\n{line}\n", "t1", count=7)
    assert not result.ok and result.error.startswith(f"error: cell[7]:3:1: {message}")
    assert result.error.split("\n")[1] == f"3 | {line}"
    if hint:
        assert result.error.endswith(f"hint: {hint}")
    assert session.project.agent == {"mock": "fixed:kept"}


@pytest.mark.parametrize("section", ["[agent]", "[models.fast]"])
def test_a_bad_agent_section_is_an_error_at_load_for_every_command(tmp_path, section):
    (tmp_path / "bot.cell").write_text(BOT, encoding="utf-8")
    (tmp_path / "soma.toml").write_text(f'{section}\nprovider = "gemini"\n', encoding="utf-8")
    for command in (["run", "bot.cell", "plain", "x"], ["check", "bot.cell"], ["test", "bot.cell"],
                    ["verify", "bot.cell"]):
        run = run_cli(tmp_path, *command)
        assert run.returncode == 1 and "soma.toml:2:1: " in run.stderr + run.stdout, command
        assert "is 'gemini', which is no provider" in run.stderr + run.stdout


MODEL_BOT = 'cell agent Bot [model: {name}] {{\n    on plain(q: String) {{ return think(q) }}\n}}\n'


@pytest.mark.parametrize("toml, name, message, hint", [
    ("", "fast", "there is no soma.toml", "add a [models.fast] table to the soma.toml, or remove `model: fast`"),
    ('[agent]\nmock = "echo"\n', "fast", "it defines no [models] table", "add a [models.fast] table"),
    ('[models.fast]\nmock = "echo"\n', "fsat", "it defines [models.fast]", "did you mean 'fast'?"),
])
def test_a_cell_bound_to_an_undefined_model_is_refused(tmp_path, session, toml, name, message, hint):
    (tmp_path / "m.cell").write_text(MODEL_BOT.format(name=name), encoding="utf-8")
    if toml:
        (tmp_path / "soma.toml").write_text(toml, encoding="utf-8")
        assert session.execute(f"%%toml\n{toml}", "t").ok
    expected = f"cell Bot names model '{name}', which the soma.toml does not define ({message})"
    run = run_cli(tmp_path, "run", "m.cell", "plain", "x")
    assert run.returncode == 1 and run.stderr.startswith(f"error: m.cell:1:1: {expected}") and hint in run.stderr
    defined = session.execute(MODEL_BOT.format(name=name), "c")
    assert defined.error_name == "CheckError" and expected in defined.error and hint in defined.error


def test_a_toml_cell_that_drops_a_model_in_use_is_refused(session):
    assert session.execute('%%toml\n[models.fast]\nmock = "fixed:F"\n', "t").ok
    assert session.execute(MODEL_BOT.format(name="fast"), "c").ok
    dropped = session.execute('%%toml\n[agent]\nmock = "echo"\n', "t2")
    assert dropped.error_name == "MagicError"
    assert "cell Bot names model 'fast', which the soma.toml does not define" in dropped.error
    assert value(session.execute('plain("x")', "d")) == "F"


# ---------------------------------------------------------------- clear_context() at top level

TWO_AGENTS = """cell agent Desk {
    on ask(q: String) { return think(q) }
    on forget() { clear_context() }
}
cell agent Help {
    on ask(q: String) { return think(q) }
}
"""


@pytest.fixture
def model_session(tmp_path, monkeypatch):
    """A session whose soma.toml points at the loopback model server (openai wire), and the server."""
    from llm_server import LoopbackModel

    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with LoopbackModel() as server:
        live = Session(directory=str(tmp_path))
        toml = f'%%toml\n[agent]\nprovider = "openai"\nurl = "{server.url("openai")}"\nkey = "k-test"\n'
        assert live.execute(toml, "toml").ok
        assert live.execute(TWO_AGENTS, "cells").ok
        yield live, server


def sent(server, index: int) -> list[str]:
    """The user/assistant texts of request `index` (the system prompt left out)."""
    return [m["content"] for m in server.requests[index]["body"]["messages"][1:]]


@pytest.mark.parametrize("clear", ["clear_context()", "let n = 1\nclear_context()"])
def test_clear_context_at_top_level_forgets_every_agents_conversation(model_session, clear):
    live, server = model_session
    server.text("d1").text("h1").text("d2").text("h2")
    live.execute('Desk.ask("one")')
    live.execute('Help.ask("uno")')
    assert live.execute(clear).ok
    live.execute('Desk.ask("two")')
    live.execute('Help.ask("dos")')
    assert (sent(server, 2), sent(server, 3)) == (["two"], ["dos"])


def test_clear_context_in_a_handler_forgets_only_its_cell(model_session):
    live, server = model_session
    server.text("d1").text("h1").text("d2").text("h2")
    live.execute('Desk.ask("one")')
    live.execute('Help.ask("uno")')
    live.execute("Desk.forget()")
    live.execute('Desk.ask("two")')
    live.execute('Help.ask("dos")')
    assert (sent(server, 2), sent(server, 3)) == (["two"], ["uno", "h1", "dos"])


def test_a_failed_statement_gives_the_cleared_conversations_back(model_session):
    live, server = model_session
    server.text("d1").text("d2")
    live.execute('Desk.ask("one")')
    failed = live.execute('clear_context() + 1')
    assert not failed.ok
    live.execute('Desk.ask("two")')
    assert sent(server, 1) == ["one", "d1", "two"]


# ---------------------------------------------------------------- a tightened invariant meets the data in memory

SHOP = """cell Shop {{
    memory {{
        stock: Map<String, Int>
        log: List<Int>
        invariant stock >= 0
        {extra}
    }}
    on put(k: String, n: Int) {{
        require n >= 0 else Bad
        require n <= 5 else Bad
        stock.set(k, n)
    }}
    on load(k: String, n: Int) {{ stock.set(k, n) }}
    on note(n: Int) {{ log.push(n) }}
}}"""


@pytest.mark.parametrize("extra, breach", [
    ("invariant stock <= 10", 'Shop: 2 value(s) in memory break invariant stock <= 10: stock["apples"] = 50, '
                              'stock["pears"] = 80 — kept as they are: fix them or the invariant (it holds for '
                              'new writes only)\n'),
    ("invariant log <= 3", "Shop: 2 value(s) in memory break invariant log <= 3: log[1] = 5, log[2] = 9 — kept as "
                           "they are: fix them or the invariant (it holds for new writes only)\n"),
    ("invariant stock.size <= 2", "Shop: 3 value(s) in memory break invariant stock.size <= 2: "),
])
def test_a_tightened_invariant_names_the_values_in_memory_that_break_it(session, extra, breach):
    assert session.execute(SHOP.format(extra=""), "shop").ok
    session.execute('Shop.load("apples", 50)\nShop.load("pears", 80)\nShop.load("figs", 3)\n'
                    "Shop.note(1)\nShop.note(5)\nShop.note(9)", "data")
    tightened = session.execute(SHOP.format(extra=extra), "shop")
    assert tightened.ok and tightened.stream_text("stderr").startswith(breach)


def test_verify_does_not_call_an_invariant_proven_over_values_that_break_it(session):
    session.execute(SHOP.format(extra=""), "shop")
    session.execute('Shop.load("apples", 50)\nShop.load("pears", 80)', "data")
    session.execute(SHOP.format(extra="invariant stock <= 10"), "shop")
    text = session.execute("%verify", "v").displays[0]["text/plain"]
    assert ('  ✗ invariant stock <= 10 — broken by 2 value(s) already in memory: stock["apples"] = 50, '
            'stock["pears"] = 80 (the proof covers new writes only: fix the data or the invariant)\n') in text
    assert text.endswith("VERIFY FAILED — 1 check failure\n")
    session.execute('Shop.load("apples", 5)\nShop.load("pears", 8)', "fix")
    assert session.execute("%verify", "v").displays[0]["text/plain"].endswith("VERIFY OK\n")


PERSISTED = """cell Shop {{
    memory {{
        stock: Map<String, Int> [persistent]
        {extra}
    }}
    on load(k: String, n: Int) {{ stock.set(k, n) }}
    on count() {{ return len(stock.keys()) }}
}}
"""


def test_run_names_stored_values_a_new_invariant_breaks(tmp_path):
    (tmp_path / "shop.cell").write_text(PERSISTED.format(extra=""), encoding="utf-8")
    assert run_cli(tmp_path, "run", "shop.cell", "load", "apples", "50").returncode == 0
    (tmp_path / "shop.cell").write_text(PERSISTED.format(extra="invariant stock <= 10"), encoding="utf-8")
    counted = run_cli(tmp_path, "run", "shop.cell", "count")
    assert (counted.returncode, counted.stdout) == (0, "1\n")
    assert counted.stderr.startswith('Shop: 1 value(s) in memory break invariant stock <= 10: stock["apples"] = 50')


# ---------------------------------------------------------------- an instance id known to one machine resolves to it

MACHINES = """cell Orders {
    state order { initial: new  new -> paid  paid -> shipped }
    on pay(id: String) { transition(id, "paid") }
}
cell Tickets {
    state ticket { initial: open  open -> closed  closed -> open }
    on close(id: String) { transition(id, "closed") }
}
"""


@pytest.mark.parametrize("query, answer", [
    ('get_status("o1")', "paid"), ('get_status("t1")', "closed"),
    ('has_state("o1")', "true"), ('has_state("t1")', "true"), ('has_state("nobody")', "false"),
    ('valid_transitions("o1")', '["shipped"]'), ('valid_transitions("t1")', '["open"]'),
])
def test_an_id_one_machine_knows_resolves_to_it_at_top_level(session, query, answer):
    session.execute(MACHINES, "m")
    session.execute('Orders.pay("o1")\nTickets.close("t1")', "data")
    assert value(session.execute(query)) == answer


@pytest.mark.parametrize("query, message", [
    ('get_status("both")', 'instance "both" is known to the state machines of Orders, Tickets — say whose: '
                           "Orders.get_status(…)"),
    ('valid_transitions("both")', 'instance "both" is known to the state machines of Orders, Tickets — say whose: '
                                  "Orders.valid_transitions(…)"),
    ('get_status("nobody")', 'no state machine knows instance "nobody" yet, and those of Orders, Tickets answer '
                             "differently — say whose: Orders.get_status(…)"),
])
def test_only_an_id_two_machines_know_or_none_can_answer_is_ambiguous(session, query, message):
    session.execute(MACHINES, "m")
    session.execute('Orders.pay("both")\nTickets.close("both")', "data")
    result = session.execute(query)
    assert not result.ok and f"type: {message}" in result.error


def test_a_test_cell_resolves_an_id_one_machine_knows():
    from soma_kernel.testing.runner import Output, run_tests
    rules = ('cell test T {\n    rules {\n        assert Orders.pay("o1").to == "paid"\n'
             '        assert Tickets.close("t1").to == "closed"\n        assert get_status("o1") == "paid"\n'
             '        assert has_state("t1")\n        assert valid_transitions("t1") == ["open"]\n'
             '        assert_fails get_status("zz")\n    }\n}\n')
    report = run_tests(parse(MACHINES + rules, "m.cell"), output=Output(out=lambda line: None, err=lambda line: None))
    assert (report.passed, report.failed) == (6, 0)
