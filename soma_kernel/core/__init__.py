"""The bottom layer: spans, diagnostics, user errors and the gc pause; imports nothing of soma_kernel above it."""
