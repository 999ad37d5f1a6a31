"""`soma-kernel --version` and `soma_kernel.__version__` say pyproject.toml's version, their one source."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from soma_kernel.commands.cli import main
from soma_kernel.core import version

PYPROJECT_VERSION = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(
    encoding="utf-8"))["project"]["version"]


def test_version_flag_prints_the_pyproject_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"soma-kernel {PYPROJECT_VERSION}\n"
    result = subprocess.run([sys.executable, "-m", "soma_kernel", "--version"], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"soma-kernel {PYPROJECT_VERSION}\n", "")


def test_the_package_attribute_and_the_kernel_say_the_same_version():
    import soma_kernel
    from soma_kernel.kernel.kernel import SomaKernel

    assert soma_kernel.__version__ == PYPROJECT_VERSION
    assert SomaKernel.implementation_version == PYPROJECT_VERSION


def test_without_a_pyproject_beside_the_package_the_installed_metadata_answers(monkeypatch):
    from importlib import metadata

    version.package_version.cache_clear()
    monkeypatch.setattr(version, "_checkout_version", lambda: None)
    monkeypatch.setattr(metadata, "version", lambda name: "9.8.7" if name == "soma-kernel" else "")
    try:
        assert version.package_version() == "9.8.7"

        def missing(name):
            raise metadata.PackageNotFoundError(name)

        version.package_version.cache_clear()
        monkeypatch.setattr(metadata, "version", missing)
        assert version.package_version() == "unknown"
    finally:
        version.package_version.cache_clear()
