"""`web package`: a run as the official submission package (see README.md)."""
