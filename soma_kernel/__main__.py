"""`python -m soma_kernel …` runs the command-line interface."""

from .commands.cli import entry

entry()
