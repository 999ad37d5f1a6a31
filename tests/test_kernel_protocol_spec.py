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
