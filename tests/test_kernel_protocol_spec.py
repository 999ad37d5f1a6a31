"""Kernelspec, installer, launcher wiring and the Pygments lexer."""

from __future__ import annotations

import json
import os

import pygments.lexers
from pygments.token import Error, Keyword, Name, String

from soma_kernel.commands.cli import main
from soma_kernel.kernel.install import KERNEL_SPEC, kernel_spec, logo_png

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC_DIR = os.path.join(REPO, "kernelspec", "soma")


def test_repository_kernelspec_is_what_the_installer_writes():
    with open(os.path.join(SPEC_DIR, "kernel.json"), encoding="utf-8") as handle:
        assert json.load(handle) == kernel_spec("python") == KERNEL_SPEC
    for size in (32, 64):
        with open(os.path.join(SPEC_DIR, f"logo-{size}x{size}.png"), "rb") as handle:
            assert handle.read() == logo_png(size)


def test_logo_is_a_png_of_the_right_size():
    data = logo_png(32)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(data[16:20], "big") == 32 and int.from_bytes(data[20:24], "big") == 32


def test_install_into_a_prefix_is_found_through_jupyter_path(tmp_path, monkeypatch, capsys):
    from jupyter_client.kernelspec import KernelSpecManager

    assert main(["install", "--prefix", str(tmp_path)]) == 0
    target = tmp_path / "share" / "jupyter" / "kernels" / "soma"
    assert "installed kernelspec soma in" in capsys.readouterr().out
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    spec = KernelSpecManager().get_kernel_spec("soma")
    assert os.path.samefile(spec.resource_dir, target)
    assert spec.argv[1:3] == ["-m", "soma_kernel.kernel"] and spec.language == "soma"


def test_lexer_is_registered_and_highlights_soma():
    lexer = pygments.lexers.get_lexer_by_name("soma")
    with open(os.path.join(REPO, "tests", "seeds", "triage_agent", "triage_agent.cell"), encoding="utf-8") as handle:
        tokens = list(lexer.get_tokens(handle.read()))
    assert not [t for t in tokens if t[0] is Error]
    assert (Keyword.Declaration, "skeleton") in tokens
    assert (Name.Function, "classify") in tokens
    assert any(kind in String and "urgent" in text for kind, text in tokens)
    assert pygments.lexers.get_lexer_for_filename("x.cell").name == "Soma"


def test_nbconvert_html_export_highlights_soma_code():
    import nbformat
    from nbconvert import HTMLExporter

    notebook = nbformat.read(os.path.join(REPO, "notebooks", "01_tour.ipynb"), as_version=4)
    assert notebook.metadata["language_info"]["pygments_lexer"] == "soma"
    body, _ = HTMLExporter().from_notebook_node(notebook)
    assert '<span class="kd">cell</span>' in body
    assert '<span class="kd">invariant</span>' in body


def test_uninstall_removes_what_install_wrote_and_only_that(tmp_path, monkeypatch, capsys):
    from jupyter_client.kernelspec import KernelSpecManager

    keep, drop = tmp_path / "keep", tmp_path / "drop"
    assert main(["install", "--prefix", str(keep)]) == 0
    assert main(["install", "--prefix", str(drop), "--name", "soma-b"]) == 0
    capsys.readouterr()
    assert main(["uninstall", "--prefix", str(drop), "--name", "soma-b"]) == 0
    assert capsys.readouterr().out == f"removed kernelspec soma-b from {drop}/share/jupyter/kernels/soma-b\n"
    assert not (drop / "share" / "jupyter" / "kernels" / "soma-b").exists()
    assert (drop / "share" / "jupyter" / "kernels").is_dir()  # only the spec's own folder goes
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join([str(keep / "share" / "jupyter"),
                                                        str(drop / "share" / "jupyter")]))
    specs = KernelSpecManager().find_kernel_specs()
    assert "soma-b" not in specs and os.path.samefile(specs["soma"], keep / "share" / "jupyter" / "kernels" / "soma")


def test_uninstall_with_nothing_there_says_where_it_looked_and_where_jupyter_finds_one(tmp_path, monkeypatch, capsys):
    installed, empty = tmp_path / "installed", tmp_path / "empty"
    assert main(["install", "--prefix", str(installed)]) == 0
    monkeypatch.setenv("JUPYTER_PATH", str(installed / "share" / "jupyter"))
    capsys.readouterr()
    assert main(["uninstall", "--prefix", str(empty)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"soma-kernel uninstall: no kernelspec soma in {empty}/share/jupyter/kernels/soma"
    assert err[1].startswith(f"  Jupyter finds soma in {installed}/share/jupyter/kernels/soma: remove it with "
                             "`jupyter kernelspec uninstall soma`")
    assert (installed / "share" / "jupyter" / "kernels" / "soma" / "kernel.json").is_file()


def test_install_user_inside_a_venv_warns_that_the_venvs_own_spec_wins(tmp_path, monkeypatch, capsys):
    import jupyter_core.paths

    from soma_kernel.kernel import install as installer

    venv, home = tmp_path / "venv", tmp_path / "home"
    installer.write_spec_dir(str(venv / "share" / "jupyter" / "kernels" / "soma"), "venv-python")
    monkeypatch.setattr(installer.sys, "prefix", str(venv))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(home))
    monkeypatch.setattr(jupyter_core.paths, "prefer_environment_over_user", lambda: True)
    assert main(["install", "--user"]) == 0
    out, err = capsys.readouterr()
    assert out == f"installed kernelspec soma in {home}/kernels/soma\n"
    assert err.startswith(f"warning: this environment ({venv}) has its own kernelspec soma in "
                          f"{venv}/share/jupyter/kernels/soma, and Jupyter started from this environment reads it "
                          "first: the spec just installed for your user is used only by Jupyter outside it.")
    assert main(["install", "--user", "--name", "soma-user"]) == 0  # no environment spec of that name: no warning
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(jupyter_core.paths, "prefer_environment_over_user", lambda: False)  # not a venv
    assert main(["install", "--user"]) == 0
    assert capsys.readouterr().err == ""


def test_uninstall_refuses_a_name_that_is_a_path_and_removes_nothing(tmp_path, capsys):
    assert main(["install", "--prefix", str(tmp_path)]) == 0
    capsys.readouterr()
    for name in ("..", ".", "../kernels", "soma/..", ""):
        assert main(["uninstall", "--prefix", str(tmp_path), "--name", name]) == 2
        assert capsys.readouterr().err == f"soma-kernel uninstall: {name!r} is no kernel name (letters, digits, " \
                                          "'.', '_' and '-')\n"
    assert (tmp_path / "share" / "jupyter" / "kernels" / "soma" / "kernel.json").is_file()
