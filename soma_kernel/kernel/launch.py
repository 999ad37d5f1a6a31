"""Start the Soma kernel: `soma-kernel kernel -f CONNECTION_FILE` or
`python -m soma_kernel.kernel -f CONNECTION_FILE` (what kernel.json runs)."""

from __future__ import annotations

import os

# ipykernel before 6.30 imports debugpy when it starts, and debugpy then warns on stderr that frozen modules
# may make it miss breakpoints; Soma offers no debugger, so the check (and its four lines) is switched off.
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")

from ipykernel.kernelapp import IPKernelApp  # noqa: E402 (after the variable debugpy reads at import)

from .kernel import SomaKernel  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Launch the kernel application with SomaKernel; returns when it stops."""
    IPKernelApp.launch_instance(argv=argv, kernel_class=SomaKernel)
    return 0
