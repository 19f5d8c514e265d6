"""Web scoring offline by the official evaluator (see README.md)."""
