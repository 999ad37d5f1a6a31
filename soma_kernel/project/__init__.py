"""Files and settings: reading a program from disk (loader) and its soma.toml (settings)."""
