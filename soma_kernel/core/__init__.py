"""The bottom layer: spans, diagnostics, user errors, bounded file reads, spelling, the version and the gc pause;
imports nothing of soma_kernel above it."""
