"""benchwright: run AI agents through checkpointed benchmarks and grade them offline."""

__version__ = "0.1.0"
