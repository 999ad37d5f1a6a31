"""`python -m soma_kernel.kernel -f CONNECTION_FILE` starts the kernel."""

import sys

from .launch import main

raise SystemExit(main(sys.argv[1:]))
