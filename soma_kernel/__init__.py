"""soma-kernel: the Soma agent language, its toolchain and a Jupyter kernel."""


def __getattr__(name: str) -> str:
    """`__version__`, read from pyproject.toml (core.version) when first asked for."""
    if name == "__version__":
        from .core.version import package_version  # lazy: reading the version costs start-up time

        return package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
