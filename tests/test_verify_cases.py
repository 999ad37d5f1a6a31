"""`soma-kernel verify` on the programs of tests/verify_cases: whole outputs,
--strict, --json, exit codes, refused programs and bad manifests."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from soma_kernel.analysis.verify.checks import verify_program
from soma_kernel.analysis.verify.report import render_json, render_text
from soma_kernel.syntax.parser import parse

CASES = os.path.join(os.path.dirname(__file__), "verify_cases")


def verify(folder, *args):
    name = os.path.basename(folder)
    return subprocess.run([sys.executable, "-m", "soma_kernel", "verify", f"{name}.cell", *args],
                           cwd=folder, capture_output=True, text=True, encoding="utf-8")


def expected(case, suffix=""):
    with open(os.path.join(CASES, case, f"expected_verify{suffix}.txt"), encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize("case,code", [("loops", 1), ("desk", 1), ("vault", 0), ("counts", 1)])
def test_whole_output(case, code):
    run = verify(os.path.join(CASES, case))
    assert run.stdout == expected(case)
    assert run.returncode == code


@pytest.mark.parametrize("case", ["loops", "desk", "vault", "counts"])
def test_strict_output(case):
    run = verify(os.path.join(CASES, case), "--strict")
    assert run.stdout == expected(case, "_strict")
    assert run.returncode == 1


def test_vault_line_kinds():
    text = expected("vault")
    assert "  · guarded edges kept in the model" in text
    assert "✓ guard" not in text and "proven in `release`; runtime-checked in `sweep`" in text
    assert "writer 'bump' proven by induction (writes min(balances.get(id) ?? 0, 999) + 1)" in text
    assert "writer 'close' can never commit 5000 to 'balances'" in text
    assert "writer 'forget' only deletes from 'balances'" in text
    assert "because `cents` is a parameter (narrow it: `require (cents * 2) >= 0 && (cents * 2) <= 1000 else …`)" in text
    assert text.endswith("14 passed, 2 warnings, 0 failures\n\n  Temporal properties for 'box':\n"
                         "  ✓ deadlock_free — no deadlocks in any reachable state\nTemporal: 1 passed, 0 failed\n"
                         "VERIFY OK\n")
    strict = expected("vault", "_strict")
    assert strict.endswith("VERIFY FAILED — 2 warnings under --strict\n")
    assert strict.count("  ⚠ guard `cents <= 500`") == 2


def test_loops_temporal_counter_examples():
    text = expected("loops")
    assert "  ✗ unreachable states: [orphan]\n" in text
    # fair runs: the parked/waiting loop can still leave for `cancelled`, but never reach `closed`
    assert ("  ✓ eventually(state in [closed, cancelled]) — all paths eventually satisfy the predicate (assuming "
            "fairness: a run looping parked -> waiting -> parked takes the loop's exit; --unfair reports it)\n") in text
    assert ("  ✗ after('parked', eventually state in [closed]) — after reaching 'parked', a path never satisfies "
            "the predicate\n"
            "    counter-example: fresh → triaged → parked → waiting → ... cycle back to 'parked'\n"
            "      fresh --open,route?--> triaged --route?--> parked --route?--> waiting --route?--> parked\n") in text
    assert "    counter-example: fresh → triaged → closed\n      fresh --open,route?--> triaged --route--> closed\n" in text
    assert "✗ invariant scores >= 0 && scores <= 10 — writer 'spin' writes 42 to 'scores': statically violated" in text
    assert "⚠ handler `spin`: while-loop without provable termination bound" in text
    assert "count_down" not in text.split("termination")[1].split("\n")[0]
    assert "⚠ `* -> cancelled` also adds closed -> cancelled — so closed is not final." in text
    assert "soma.toml: 8 user-defined properties loaded\nTemporal: 5 passed, 4 failed\n" in text


def test_desk_liveness_trace_and_reactive_machine():
    text = expected("desk")
    assert "  ✗ liveness violation: states [stuck, spinning] cannot reach any terminal state\n" \
           "    trace: stuck → spinning → stuck\n" in text
    assert "⚠ dynamic transition targets: handler `ask` computes its transition() target" in text
    assert "✓ effects: handler `ask` calls think() at 1 site (the cost line counts loop rounds) — can dispatch [lookup]" in text
    assert "✓ no terminal states — reactive machine: every reachable state can return to 'red'" in text
    assert "✓ refinement: handler `go` ⟶ {red → green}" in text


def test_json_report_is_structured():
    run = verify(os.path.join(CASES, "loops"), "--json")
    data = json.loads(run.stdout)
    assert run.returncode == 1 and data["passed"] is False
    machine = data["state_machines"][0]
    assert machine["name"] == "ticket" and machine["initial"] == "fresh"
    assert {"status": "fail", "message": "unreachable states: [orphan]", "check": "reachability"} in machine["checks"]
    props = {p["property"]: p for p in data["temporal"][0]["properties"]}
    lasso = props["after('parked', eventually state in [closed])"]
    assert lasso["counter_example"] == ["fresh", "triaged", "parked", "waiting", "parked"]
    assert lasso["loop_start"] == 2
    assert lasso["steps"][0] == {"from": "fresh", "to": "triaged", "handlers": ["open", "route?"]}
    assert data["summary"] == {"passed": 9, "warnings": 7, "failures": 2}


def test_check_failure_refuses_to_verify(tmp_path):
    (tmp_path / "bad.cell").write_text(
        'cell C {\n    face {\n        signal go(id: String) -> String\n    }\n'
        '    state m {\n        initial: a\n        a -> b\n    }\n'
        '    on go(id: String) {\n        transition(id, "zzz")\n        return "x"\n    }\n}\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", "bad.cell"], cwd=tmp_path,
                         capture_output=True, text=True, encoding="utf-8")
    assert run.returncode == 1
    assert run.stdout.startswith("Verifying bad.cell...\nerror: bad.cell:10:")
    assert run.stdout.endswith("VERIFY FAILED — soma check failed\n")


def test_undeclared_targets_are_failures_in_the_report():
    source = ('cell C {\n    state m {\n        initial: a\n        a -> b\n    }\n'
              '    on go(id: String) {\n        if id == "x" { transition(id, "zzz") }\n'
              '        transition(id, "b", "a")\n    }\n}\n')
    report = verify_program(parse(source, "c.cell"), None, "c.cell")
    text = render_text(report)
    assert ('  ✗ refinement: handler `go` calls transition(_, "zzz") but "zzz" is not in state machine `m`  '
            '[if id == "x"]\n') in text
    assert '✗ refinement: handler `go` calls transition(_, "b", "a") but `b → a` is not a transition' in text
    assert report.verdict == "VERIFY FAILED — 2 check failures"
    assert json.loads(render_json(report))["passed"] is False


def test_bad_manifest_is_a_positioned_error(tmp_path):
    (tmp_path / "p.cell").write_text("cell C {\n    on go() { return 1 }\n}\n", encoding="utf-8")
    (tmp_path / "soma.toml").write_text('[verify.after.a]\nnever = []\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", "p.cell"], cwd=tmp_path,
                         capture_output=True, text=True, encoding="utf-8")
    assert run.returncode == 1
    assert "soma.toml:2:1: 'verify.after.a.never' is an empty list" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_state_the_listed_machine_lacks_is_a_configuration_error(tmp_path):
    (tmp_path / "p.cell").write_text(
        'cell C {\n    face {\n        signal go(id: String) -> String\n    }\n'
        '    state m {\n        initial: a\n        a -> b\n    }\n'
        '    on go(id: String) {\n        transition(id, "b")\n        return "x"\n    }\n}\n', encoding="utf-8")
    (tmp_path / "soma.toml").write_text('[verify]\ncells = ["C", "Elsewhere"]\nnever = ["ghost"]\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", "p.cell"], cwd=tmp_path,
                         capture_output=True, text=True, encoding="utf-8")
    assert "note: soma.toml [verify] cells names 'Elsewhere', which this file does not define" in run.stdout
    assert ("error: soma.toml [verify] property never(state == 'ghost') names state 'ghost', which machine 'm' "
            "does not have (its states: [a, b])") in run.stdout
    assert "never(state == 'ghost') —" not in run.stdout
    assert run.stdout.endswith("VERIFY FAILED — soma.toml [verify] settings are wrong\n")
    assert run.returncode == 1


def test_a_missing_state_names_the_machine_as_its_heading_does(tmp_path):
    machine = '    state w {\n        initial: idle\n        idle -> done\n    }\n'
    (tmp_path / "p.cell").write_text(f"cell A {{\n{machine}}}\ncell B {{\n{machine}}}\n", encoding="utf-8")
    (tmp_path / "soma.toml").write_text('[verify]\ncells = ["A", "B"]\nnever = ["ghost"]\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", "p.cell"], cwd=tmp_path,
                         capture_output=True, text=True, encoding="utf-8")
    assert "  Temporal properties for 'B.w':\n" in run.stdout
    assert "names state 'ghost', which machine 'B.w' does not have (its states: [done, idle])" in run.stdout
    assert "machine 'w' does" not in run.stdout


def test_near_miss_cell_name_is_an_error(tmp_path):
    (tmp_path / "p.cell").write_text(
        'cell Payments {\n    state m {\n        initial: a\n        a -> b\n    }\n}\n', encoding="utf-8")
    (tmp_path / "soma.toml").write_text('[verify]\ncells = ["Payment"]\nnever = ["b"]\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "soma_kernel", "verify", "p.cell"], cwd=tmp_path,
                         capture_output=True, text=True, encoding="utf-8")
    assert "did you mean 'Payments'?" in run.stdout
    assert run.returncode == 1


def test_mutual_recursion_warns_and_decreasing_recursion_passes():
    source = ('cell C {\n    state m {\n        initial: a\n        a -> b\n    }\n'
              '    on ping(n: Int) { return pong(n) }\n'
              '    on pong(n: Int) { return ping(n) }\n'
              '    on down(n: Int) {\n        if n <= 0 { return 0 }\n        return down(n - 1)\n    }\n'
              '    on go(id: String) { transition(id, "b") }\n}\n')
    text = render_text(verify_program(parse(source, "c.cell"), None, "c.cell"))
    assert "⚠ handler `ping`: recursive call without provable decreasing argument" in text
    assert "⚠ handler `pong`: recursive call without provable decreasing argument" in text
    assert "handler `down`" not in text


def test_api_render_matches_cli_for_seed():
    folder = os.path.join(os.path.dirname(__file__), "seeds", "triage_agent")
    with open(os.path.join(folder, "triage_agent.cell"), encoding="utf-8") as handle:
        program = parse(handle.read(), "triage_agent.cell")
    report = verify_program(program, None, "triage_agent.cell")
    with open(os.path.join(folder, "expected", "verify.txt"), encoding="utf-8") as handle:
        assert render_text(report) == handle.read()
    assert report.machines[0].temporal[0].property == "deadlock_free"
    assert report.tallies == (11, 0, 0)


def test_fair_runs_leave_a_retry_loop():
    """A loop with an exit towards the target does not refute `eventually`;
    an empty top-level `never = []` states no property."""
    run = verify(os.path.join(CASES, "retry"), "--strict")
    assert run.stdout == expected("retry")
    assert ("  ✓ eventually(state in [printed, jammed]) — all paths eventually satisfy the predicate (assuming "
            "fairness: a run looping printing -> waiting -> printing takes the loop's exit; --unfair reports it)\n"
            ) in run.stdout
    assert run.stdout.endswith("Temporal: 3 passed, 0 failed\nVERIFY OK\n")
    assert run.returncode == 0


def test_unfair_reading_reports_the_retry_loop_as_a_lasso(tmp_path):
    """--unfair, and soma.toml `[verify] fair = false`, drop the fairness assumption."""
    run = verify(os.path.join(CASES, "retry"), "--unfair")
    assert run.stdout == expected("retry", "_unfair")
    assert "    counter-example: queued → printing → waiting → ... cycle back to 'printing'\n" in run.stdout
    assert run.returncode == 1
    folder = tmp_path / "retry"
    shutil.copytree(os.path.join(CASES, "retry"), folder)
    toml = folder / "soma.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("[verify]\n", "[verify]\nfair = false\n"),
                    encoding="utf-8")
    assert verify(str(folder)).stdout == run.stdout


def test_a_loop_without_an_exit_to_the_target_fails_in_both_readings(tmp_path):
    tmp_path = tmp_path / "spin"
    tmp_path.mkdir()
    (tmp_path / "spin.cell").write_text(
        "cell Spin {\n    state s {\n        initial: a\n        a -> b\n        b -> a\n        a -> done\n"
        "        b -> stuck\n        stuck -> stuck2\n        stuck2 -> stuck\n    }\n"
        "    on go(id: String) {\n        transition(id, \"b\")\n        return 1\n    }\n}\n", encoding="utf-8")
    (tmp_path / "soma.toml").write_text('[verify]\neventually = ["done"]\n', encoding="utf-8")
    for flags in ((), ("--unfair",)):
        run = verify(str(tmp_path), *flags)
        assert "  ✗ eventually(state in [done]) — exists a path that never satisfies the predicate\n" in run.stdout


def test_status_invariant_is_a_note_not_a_warning():
    run = verify(os.path.join(CASES, "retry"), "--strict")
    assert ("  · invariant status != \"printed\" || (tries ?? 0) <= 5 reads `status`: checked at run time on every "
            "write to tries and on every transition()\n") in run.stdout
    assert run.stdout.count("invariant status") == 1  # not in the Printer/invariants group
    assert "✓ invariant tries >= 0 && tries <= 5 — writer 'retry' proven by induction" in run.stdout


def test_typed_machine_variant_targets_are_literal():
    run = verify(os.path.join(CASES, "typed"))
    assert run.stdout == expected("typed")
    assert "handler `load` ⟶ {Empty → Loaded}" in run.stdout
    assert "handler `collect` ⟶ {Collected}" in run.stdout
    assert "handler `move` ⟶ <dynamic>" in run.stdout
    assert run.returncode == 0


def test_for_loops_over_non_collections_are_unbounded():
    run = verify(os.path.join(CASES, "iterators"))
    assert run.stdout == expected("iterators")
    warnings = [line for line in run.stdout.splitlines() if line.startswith("  ⚠ handler `count`")]
    assert warnings == [
        "  ⚠ handler `count`: for-loop with unbounded iterator (write `for [loop_bound(N)] x in xs` or use "
        "range(0, N) with literal N)",
        "  ⚠ handler `count`: `for [loop_bound(2)]` over a literal list of 3 items — the bound is too small "
        "(it raises loop_bound at run time)"]
    assert run.returncode == 0
