"""papermill with the Soma kernel: `-p`/`-y` parameters become `let` lines of Soma literals.

The translator is registered through the `papermill.engine` entry point (papermill 2.7 has no translator
group; importing papermill imports every engine entry point): the plain papermill CLI is run here on a
parameterised notebook, and every kind of value (strings with quotes, braces, escapes and control
characters, ints, floats, booleans, None, lists, maps, nested) is read back by the interpreter as it was.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from helpers import kernelspec_installed
from hypothesis import given, settings
from hypothesis import strategies as st

from soma_kernel.kernel.papermill import SomaTranslator
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.syntax.parser import parse_fragment
from soma_kernel.syntax.render import render_data

REPO = Path(__file__).resolve().parents[1]


def _value_of(source: str):
    """What the interpreter makes of the expression `source`."""
    rt, env = Runtime(note=lambda text: None, under_test=True), {}
    for statement in parse_fragment(f"let v__ = {source}", origin="cell[1]"):
        rt.execute(statement, env)
    return env["v__"]


json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(json_like)
def test_every_json_value_reads_back_as_itself(value):
    assert _value_of(render_data(value)) == value


@pytest.mark.parametrize("text", ['say "hi"', "a {b} c", "{{x}}", "}{", "back\\slash\\n", "tab\there\nline",
                                  "nul\0bell\a", "é ü → 🚀", "\u200b zero width", ""])
def test_strings_with_quotes_braces_escapes_and_controls_read_back(text):
    assert _value_of(SomaTranslator.translate(text)) == text


def test_the_injected_cell_is_let_lines_of_soma_literals():
    parameters = {"limit": 250, "who": 'O"Brien {x}', "ratio": 0.25, "big": 1e100, "enabled": True,
                  "strict": False, "nothing": None, "tags": ["a", "b"], "limits": {"daily": 3, "names": ["x"]},
                  "empty_map": {}, "empty_list": []}
    assert SomaTranslator.codify(parameters) == (
        "// Parameters\n"
        "let limit = 250\n"
        'let who = "O\\"Brien {{x}}"\n'
        "let ratio = 0.25\n"
        "let big = 1e+100\n"
        "let enabled = true\n"
        "let strict = false\n"
        "let nothing = ()\n"
        'let tags = ["a", "b"]\n'
        'let limits = map("daily", 3, "names", ["x"])\n'
        "let empty_map = map()\n"
        "let empty_list = []\n")


@pytest.mark.parametrize("name", ["Limit", "on", "cell", "my-limit", "2x", "ünits", ""])
def test_a_name_soma_cannot_bind_is_refused_naming_it(name):
    with pytest.raises(ValueError, match=f"papermill parameter {name!r} cannot be a Soma variable"):
        SomaTranslator.assign(name, "1")


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, {1, 2}, b"bytes"])
def test_a_value_soma_cannot_write_is_refused(value):
    with pytest.raises(ValueError, match="has no Soma literal"):
        SomaTranslator.translate(value)


def test_help_notebook_lists_the_let_lines_of_the_parameters_cell():
    cell = nbformat.v4.new_code_cell('let limit = 100 // how many refunds a day\n'
                                     'let url = "http://x//y" // where to send\n'
                                     'let rate: Float = 2\n'
                                     'let tags = ["a"]\nlet m = map("a", 1)\nlet nothing = ()\nlet f = fn_call()\n'
                                     'print(limit)  // not a parameter\n')
    found = [tuple(p) for p in SomaTranslator.inspect(cell)]
    assert found == [("limit", "Int", "100", "how many refunds a day"), ("url", "String", '"http://x//y"', "where to send"),
                     ("rate", "Float", "2", ""), ("tags", "List", '["a"]', ""), ("m", "Map", 'map("a", 1)', ""),
                     ("nothing", "Unit", "()", ""), ("f", "None", "fn_call()", "")]


def test_the_engine_entry_point_is_declared_and_registers_the_translator():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["papermill.engine"] == {"soma": "soma_kernel.kernel.papermill_engine:SomaEngine"}
    probe = ("import papermill; from papermill.translators import papermill_translators as t; "
             "print(t.find_translator('soma', 'soma').__name__, t.find_translator('another-name', 'soma').__name__)")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert found.stdout == "SomaTranslator SomaTranslator\n", found.stderr


def _notebook(path: Path, *cells) -> Path:
    notebook = nbformat.v4.new_notebook(cells=list(cells))
    notebook.metadata["kernelspec"] = {"name": "soma", "display_name": "Soma", "language": "soma"}
    notebook.metadata["language_info"] = {"name": "soma"}
    nbformat.write(notebook, path)
    return path


def _parameters_cell(source: str):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    return cell


def _papermill(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "papermill", *args, "--no-progress-bar"], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_papermill_cli_runs_a_parameterised_notebook(tmp_path):
    source = _notebook(
        tmp_path / "report.ipynb",
        _parameters_cell('let limit = 100 // refunds a day\nlet who = "nobody"\nlet ratio = 1.0\nlet enabled = false\n'
                         'let nothing = 1\nlet tags = []\nlet limits = map()'),
        nbformat.v4.new_code_cell('print(limit + 1)\nprint(who)\nprint(ratio * 2)\nprint(enabled)\n'
                                  'print(nothing == ())\nprint(len(tags))\nprint(limits["daily"] + 1)'))
    yaml = 'tags: [a, "b c"]\nlimits: {daily: 3, names: [x]}'
    with kernelspec_installed(str(tmp_path / "prefix")):
        done = _papermill(str(source), "out.ipynb", "-p", "limit", "250", "-p", "who", 'O"Brien {x}\tend',
                          "-p", "ratio", "0.25", "-p", "enabled", "True", "-p", "nothing", "None", "-y", yaml,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    injected = result.cells[1]
    assert injected.metadata.tags == ["injected-parameters"]
    assert injected.source == ('// Parameters\nlet tags = ["a", "b c"]\nlet limits = map("daily", 3, "names", ["x"])\n'
                               'let limit = 250\nlet who = "O\\"Brien {{x}}\\tend"\nlet ratio = 0.25\n'
                               'let enabled = true\nlet nothing = ()\n')
    printed = "".join(o.get("text", "") for o in result.cells[2].outputs)
    assert [o.output_type for o in result.cells[2].outputs] == ["stream"] * len(result.cells[2].outputs)
    assert printed == '251\nO"Brien {x}\tend\n0.5\ntrue\ntrue\n2\n4\n'
    assert result.metadata.papermill.parameters["limit"] == 250


def test_papermill_help_notebook_shows_the_soma_parameters(tmp_path):
    source = _notebook(tmp_path / "p.ipynb", _parameters_cell('let limit = 100 // refunds a day\nlet who = "x"'))
    done = _papermill("--help-notebook", str(source), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "limit: Int (default 100)" in done.stdout and "refunds a day" in done.stdout
    assert 'who: String (default "x")' in done.stdout


def test_papermill_fails_a_notebook_whose_error_cell_is_tagged_raises_exception(tmp_path):
    """papermill 2.7 counts every error output, tagged or not (README, "papermill"): pinned so the README stays true."""
    failing = nbformat.v4.new_code_cell("1 / 0")
    failing.metadata["tags"] = ["raises-exception"]
    source = _notebook(tmp_path / "e.ipynb", failing, nbformat.v4.new_code_cell('print("after")'))
    with kernelspec_installed(str(tmp_path / "prefix")):
        done = _papermill(str(source), "out.ipynb", cwd=tmp_path)
    assert done.returncode != 0 and "PapermillExecutionError" in done.stderr
    result = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    ran = [c for c in result.cells if c.cell_type == "code"]
    assert [o.text for o in ran[1].outputs] == ["after\n"]  # the cells after it still ran
