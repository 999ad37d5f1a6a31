"""The folder tree is the architecture: import-linter's contracts (pyproject.toml) hold,
a wrong-way import breaks them, and no import hides inside a function without saying why."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "soma_kernel"
LINT_IMPORTS = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
                "--no-cache"]


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    """`lint-imports` run on the package and pyproject.toml found under `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(LINT_IMPORTS, cwd=tree, env=env, capture_output=True, text=True, timeout=300)


def test_the_layer_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout or "broken" not in result.stdout


def copy_of_the_tree(tmp_path: Path) -> Path:
    """The package and pyproject.toml copied under `tmp_path` (the real tree is never touched)."""
    shutil.copytree(PACKAGE, tmp_path / "soma_kernel", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(module: Path, line: str) -> None:
    """Append a module-level import line to `module`."""
    module.write_text(module.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_an_upward_import_breaks_the_layers_and_is_named(tmp_path):
    tree = copy_of_the_tree(tmp_path)
    add_import(tree / "soma_kernel" / "core" / "spans.py", "from ..runtime import values  # wrong way")
    result = lint_imports(tree)
    assert result.returncode == 1
    assert "Layers import only downward BROKEN" in result.stdout
    assert "soma_kernel.core.spans -> soma_kernel.runtime.values" in result.stdout


def test_a_cycle_inside_a_layer_is_named(tmp_path):
    tree = copy_of_the_tree(tmp_path)
    add_import(tree / "soma_kernel" / "analysis" / "walk.py", "from . import check  # makes a cycle")
    result = lint_imports(tree)
    assert result.returncode == 1
    assert "No import cycles between the modules of a package BROKEN" in result.stdout
    assert ".walk -> .check" in result.stdout


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, source line) of every import inside a function or class of `path`."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found.add((inner.lineno, lines[inner.lineno - 1]))
    return sorted(found)


def says_why_it_is_lazy(path: Path, line: int) -> bool:
    """True when the import on `line`, or a comment just above it, says it is a lazy import."""
    lines = path.read_text(encoding="utf-8").splitlines()
    window = lines[max(line - 3, 0):line]
    return any("lazy" in text.split("#", 1)[1].lower() for text in window if "#" in text)


def test_no_import_hides_in_a_function_without_saying_why():
    unexplained = [f"{path.relative_to(ROOT)}:{line}: {text.strip()}"
                   for path in sorted(PACKAGE.rglob("*.py"))
                   for line, text in function_level_imports(path) if not says_why_it_is_lazy(path, line)]
    assert unexplained == []
