"""Static analyses: check, verify, describe, skeleton, cost."""
