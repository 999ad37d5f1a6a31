"""Start the Soma kernel: `soma-kernel kernel -f CONNECTION_FILE` or
`python -m soma_kernel.kernel -f CONNECTION_FILE` (what kernel.json runs)."""

from __future__ import annotations

from ipykernel.kernelapp import IPKernelApp

from .kernel import SomaKernel


def main(argv: list[str] | None = None) -> int:
    """Launch the kernel application with SomaKernel; returns when it stops."""
    IPKernelApp.launch_instance(argv=argv, kernel_class=SomaKernel)
    return 0
