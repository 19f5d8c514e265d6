"""The SCBench-shaped files of a coding run folder, derived from our records (see README.md)."""
