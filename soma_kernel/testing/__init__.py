"""The `cell test` runner."""
