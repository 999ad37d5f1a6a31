"""soma-kernel: the Soma agent language, its toolchain and a Jupyter kernel."""

__version__ = "0.1.0"
