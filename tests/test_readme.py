"""The README's promises about the command line match the CLI itself."""

from __future__ import annotations

import pathlib
import re

from soma_kernel.commands.cli import COMMANDS

README = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
USER_COMMANDS = [name for name in COMMANDS if name != "kernel"]  # `kernel` is started by the kernelspec


def test_the_command_line_block_lists_every_command():
    block = README.split("## Command line", 1)[1].split("```")[1]
    listed = re.findall(r"^soma-kernel (\w+)", block, flags=re.MULTILINE)
    assert listed == USER_COMMANDS


def test_the_opening_names_every_toolchain_command():
    toolchain = re.search(r"`soma-kernel ([a-z |\n]+)`", README).group(1)
    assert toolchain.replace("\n", " ").split(" | ") == [n for n in USER_COMMANDS if n not in ("install", "uninstall")]
