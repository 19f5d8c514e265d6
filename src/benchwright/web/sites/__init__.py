"""The sites a web run browses: where they live and their control (see README.md)."""
