"""`python -m soma_kernel …` runs the command-line interface."""

from .cli import main

raise SystemExit(main())
