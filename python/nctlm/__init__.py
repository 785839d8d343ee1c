"""nctlm from Python (placeholder; the API follows)."""
