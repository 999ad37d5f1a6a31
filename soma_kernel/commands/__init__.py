"""The command line: one argparse CLI (cli.py) and one module per command, sharing one way to load a program."""
