"""One checkpoint graded by pytest in the sandbox (see README.md)."""
