"""What `pip install soma-kernel` and `pip install soma-jupyterlab` get: built here with hatchling (as pip
would, without the network), the wheels and the sdist are opened and checked.

- the kernel wheel is lean: the package and its kernelspec, nothing else (no tests, caches, notebooks);
- the runtime dependencies are exactly what the kernel and the command line import (plus the DOT renderer
  and the Lab extension package), each with a lower bound; pytest and nbval are extras;
- LICENSE (MIT) is in the repository, the sdist and both wheels; the classifiers and project URLs are there;
- soma-jupyterlab's wheel holds the prebuilt extension as shared data, and nothing of the kernel.
"""

from __future__ import annotations

import ast
import email
import importlib.metadata
import py_compile
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import script_module

REPO = Path(__file__).resolve().parents[1]
EXTENSION = REPO / "labextension"
PREBUILT = EXTENSION / "prebuilt"
KERNELSPEC_FILES = {"kernel.json", "logo-32x32.png", "logo-64x64.png", "logo-svg.svg"}
REQUIRED_CLASSIFIERS = {
    "Framework :: Jupyter",
    "Framework :: Jupyter :: JupyterLab :: Extensions :: Prebuilt",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
}
# Needed at run time without being imported: the `dot` program of graphviz-pure, the Lab extension's files.
NOT_IMPORTED = {"graphviz-pure", "soma-jupyterlab"}


def _build(project: Path, target: str, out: Path) -> Path:
    """Build `target` (wheel or sdist) of `project` into `out` with the installed hatchling; return the file."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", target, "-d", str(out)], cwd=project,
                   check=True, capture_output=True, timeout=300)
    (built,) = out.iterdir()
    return built


@pytest.fixture(scope="module")
def kernel_wheel(tmp_path_factory):
    # A cache beside the sources, as running the tests leaves one: the wheel must not pick it up.
    py_compile.compile(str(REPO / "soma_kernel" / "core" / "spans.py"), doraise=True)
    assert list((REPO / "soma_kernel" / "core" / "__pycache__").glob("spans*.pyc"))
    return _build(REPO, "wheel", tmp_path_factory.mktemp("kernel-wheel"))


@pytest.fixture(scope="module")
def extension_wheel(tmp_path_factory):
    return _build(EXTENSION, "wheel", tmp_path_factory.mktemp("extension-wheel"))


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_the_kernel_wheel_holds_the_package_and_its_kernelspec_only(kernel_wheel):
    with zipfile.ZipFile(kernel_wheel) as archive:
        names = archive.namelist()
    dist_info, data = "soma_kernel-0.1.0.dist-info/", "soma_kernel-0.1.0.data/data/share/jupyter/kernels/soma/"
    others = [n for n in names if not n.startswith(("soma_kernel/", dist_info, data))]
    assert others == []
    assert {n[len(data):] for n in names if n.startswith(data)} == KERNELSPEC_FILES
    caches = [n for n in names if re.search(r"(__pycache__|\.pyc$|\.pickle$|\.sqlite$|\.hypothesis|\.lark_cache)", n)]
    assert caches == []
    assert not [n for n in names if "/tests/" in n or n.startswith("tests/") or n.endswith(".ipynb")]
    assert f"{dist_info}licenses/LICENSE" in names
    sources = {p.relative_to(REPO).as_posix() for p in (REPO / "soma_kernel").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert {n for n in names if n.startswith("soma_kernel/")} == sources


# Parts of soma_kernel whose imports belong to an extra, not to the runtime dependencies: the language
# server (`soma-kernel lsp`, pip install 'soma-kernel[lsp]'), and what only papermill imports.
OPTIONAL_PARTS = {"lsp": "lsp", "kernel/papermill.py": "papermill", "kernel/papermill_engine.py": "papermill"}


def _third_party_imports(root: Path, skip: tuple[str, ...] = ()) -> set[str]:
    """The distributions whose modules the code under `root` (a folder or a file) imports (lazily or not),
    leaving out the parts named in `skip` (paths relative to `root`)."""
    modules = set()
    for path in root.rglob("*.py") if root.is_dir() else [root]:
        relative = path.relative_to(root).as_posix()
        if any(relative == part or relative.startswith(part + "/") for part in skip):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split(".")[0])
    modules -= set(sys.stdlib_module_names) | {"soma_kernel"}
    owners = importlib.metadata.packages_distributions()
    return {_normal(owners[module][0]) for module in modules}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_runtime_dependencies_are_what_the_code_imports(kernel_wheel):
    requires = _metadata(kernel_wheel).get_all("Requires-Dist")
    runtime = [r for r in requires if "extra ==" not in r]
    names = {_normal(re.match(r"[A-Za-z0-9._-]+", r).group()) for r in runtime}
    assert names == _third_party_imports(REPO / "soma_kernel", tuple(OPTIONAL_PARTS)) | NOT_IMPORTED
    assert all(re.search(r">=\s*\d", r) for r in runtime), runtime  # each floor is what scripts/test_floor.sh tests
    assert "graphviz-pure<0.3,>=0.2.2" in runtime  # a tested range, not one version
    extras = {(_normal(re.match(r"[A-Za-z0-9._-]+", r).group()), re.search(r"extra == .(\w+)", r).group(1))
              for r in requires if "extra ==" in r}
    assert {("pytest", "nbval"), ("nbval", "nbval"), ("papermill", "papermill")} <= extras
    assert not [r for r in requires if re.match(r"graphviz\b(?!-)", r)]
    for part, extra in OPTIONAL_PARTS.items():
        offered = {name for name, of in extras if of == extra}
        brought = offered | {_normal(re.match(r"[A-Za-z0-9._-]+", r).group())
                             for name in offered for r in importlib.metadata.requires(name) or ()}
        assert _third_party_imports(REPO / "soma_kernel" / part) - names <= brought, part


def test_the_kernel_metadata_has_license_classifiers_and_urls(kernel_wheel):
    metadata = _metadata(kernel_wheel)
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    classifiers = set(metadata.get_all("Classifier"))
    assert REQUIRED_CLASSIFIERS <= classifiers
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert {"Homepage", "Source", "Issues", "Documentation"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())


def test_the_license_is_mit_and_the_sdist_carries_it(tmp_path):
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert (EXTENSION / "LICENSE").read_text(encoding="utf-8") == text
    sdist = _build(REPO, "sdist", tmp_path)
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        license_file = archive.extractfile("soma_kernel-0.1.0/LICENSE").read().decode()
    assert license_file == text
    assert not [n for n in names if re.search(r"(__pycache__|node_modules|test-artifacts|\.hypothesis)", n)]


def test_the_extension_wheel_is_the_prebuilt_extension(extension_wheel):
    with zipfile.ZipFile(extension_wheel) as archive:
        names = set(archive.namelist())
        license_file = archive.read("soma_jupyterlab-0.1.0.dist-info/licenses/LICENSE").decode()
    data = "soma_jupyterlab-0.1.0.data/data/share/jupyter/labextensions/soma-jupyterlab/"
    shipped = {n[len(data):] for n in names if n.startswith(data)}
    prebuilt = {p.relative_to(PREBUILT).as_posix() for p in PREBUILT.rglob("*") if p.is_file()}
    assert shipped == prebuilt | {"install.json"}
    assert {n for n in names if not n.startswith(data) and ".dist-info/" not in n} == {"soma_jupyterlab/__init__.py"}
    assert license_file == (REPO / "LICENSE").read_text(encoding="utf-8")
    metadata = _metadata(extension_wheel)
    assert "Framework :: Jupyter :: JupyterLab :: Extensions :: Prebuilt" in metadata.get_all("Classifier")
    assert metadata.get_all("Requires-Dist") is None  # Lab's environment gets nothing else


def test_the_readme_image_is_an_absolute_link_to_a_file_of_the_repository():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert images, "the README shows no image"
    prefix = "https://raw.githubusercontent.com/soma-dev-lang/soma-kernel/main/"
    for link in images:
        assert link.startswith(prefix), link
        assert (REPO / link[len(prefix):]).is_file(), link


def test_the_floor_environment_pins_every_runtime_dependency_to_its_lower_bound():
    floor = script_module("floor")
    pins = dict(line.split("==") for line in floor.floor_constraints())
    assert {"ipykernel": "6.29", "jupyter_client": "8", "ipywidgets": "8.1", "lark": "1.1.9"}.items() <= pins.items()
    assert pins["graphviz-pure"] == "0.2.2"
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert len(pins) == len(declared) - 1  # all but soma-jupyterlab, installed from labextension/


def test_a_dependency_without_a_lower_bound_has_no_floor_to_test():
    floor = script_module("floor")
    assert floor.floor_pin("graphviz-pure>=0.2.2,<0.3") == "graphviz-pure==0.2.2"
    assert floor.floor_pin("lark[regex] == 1.1.9 ; python_version >= '3.11'") == "lark==1.1.9"
    assert floor.floor_pin("pytest~=8.1") == "pytest==8.1"
    for unbounded in ("pytest", "pytest<9", "pytest!=8.0"):
        with pytest.raises(ValueError, match="has no lower bound"):
            floor.floor_pin(unbounded)


def test_the_extension_sdist_builds_the_same_wheel_away_from_the_repository(tmp_path, extension_wheel):
    """Built from its sdist (no scripts/ beside it, no Node), soma-jupyterlab packages the prebuilt/ it carries."""
    sdist = _build(EXTENSION, "sdist", tmp_path / "sdist")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (source,) = (tmp_path / "unpacked").iterdir()
    assert (source / "LICENSE").read_text(encoding="utf-8") == (REPO / "LICENSE").read_text(encoding="utf-8")
    rebuilt = _build(source, "wheel", tmp_path / "wheel")
    with zipfile.ZipFile(rebuilt) as again, zipfile.ZipFile(extension_wheel) as first:
        assert {i.filename: i.CRC for i in again.infolist()} == {i.filename: i.CRC for i in first.infolist()}
