"""The web track's report (see README.md)."""
